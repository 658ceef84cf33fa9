"""Affine symmetries ``Sym_aff(σ)`` (MATH.md §8): Lemma A with exact asymptotes, and the kink route.

``Sym_aff(σ) = {(μ, ν, κ) : μ, κ ≠ 0, s ↦ σ(μs + ν) − κσ(s) a polynomial}``, remainders
``r(s) = σ(s) − σ(μs + ν)/κ``. Never the bias-free ``Sym(σ)`` reused as it is: the two differ
(``t + sin t``). Two exact routes, nothing else:

* **Lemma A.** With asymptotes ``σ(s) − (α_± s + β_±) → 0`` at ``±∞`` (exact, :func:`.tropical.asymptote_at_infinity`)
  and ``α₊ ≠ α₋``, every element has ``κ = |μ|`` and ``ν = (1 − μ)s*``, ``s* = (β₋ − β₊)/(α₊ − α₋)``;
  for ``s* = 0`` the elements are ``(μ, 0, |μ|)`` with ``(μ, |μ|) ∈ Sym(σ)``, decided by :mod:`.symmetry`.
* **The non-analytic point.** σ piecewise analytic, not analytic at exactly one point ``k₀`` (every
  breakpoint proved non-analytic, one breakpoint): ``σ(μs + ν) = κσ(s) + p(s)`` maps it to itself,
  ``ν = (1 − μ)k₀``; with Lemma A and ``k₀ ≠ s*`` that leaves ``μ = 1``: ``Sym_aff(σ) = {(1, 0, 1)}``.

Anything else (no exact asymptotes, ``α₊ = α₋``, a family of ``κ`` from the Euler-type analysis,
``s* ≠ 0`` without the kink route) is ``unknown``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import sympy as sp

from ..model.functions import Z
from .facts import Evidence, Stage, Step, proved, unknown
from .identity import exact_sign
from .piecewise import piecewise_form
from .structure import analytic_on_reals

__all__ = ["AffineElement", "AffineSymmetry", "affine_symmetry"]

#: Derivatives compared at a breakpoint to prove σ is not analytic there.
_ORDERS = 6


@dataclass(frozen=True)
class AffineElement:
    """``(μ, ν, κ)`` (``mu`` as in :class:`.symmetry.SymCandidate`: ``"1"``, ``"-1"``, ``"mu>0"``,
    ``"mu<0"``; ``κ = |μ|``) with its remainder ``r(s) = σ(s) − σ(μs + ν)/κ``."""

    mu: str
    nu: sp.Expr
    remainder: sp.Expr

    def describe(self) -> str:
        mu = {"mu>0": "μ > 0", "mu<0": "μ < 0"}.get(self.mu)
        if mu is not None:
            return f"(μ, {sp.sstr(self.nu)}, |μ|) for every {mu}"
        return f"({self.mu}, {sp.sstr(self.nu)}, 1)"


@dataclass(frozen=True)
class AffineSymmetry:
    """``evidence`` is proved when ``Sym_aff(σ)`` is exactly ``elements``."""

    evidence: Evidence
    elements: tuple[AffineElement, ...]
    hinge: sp.Expr | None  # s* of Lemma A

    @property
    def constant_remainders(self) -> bool:
        """Every remainder is a constant (the trivial ``{(1, 0, 1)}`` among them)."""
        return self.evidence.proved and all(not sp.expand(e.remainder).has(Z) for e in self.elements)


def _non_analytic_points(expr: sp.Expr) -> tuple[list[sp.Expr], str] | None:
    """The exact set of points where σ is not analytic, when every piece is analytic on R and every
    breakpoint is proved non-analytic (a one-sided derivative of order ≤ 6, or the value, differs
    exactly); None otherwise (a breakpoint that may be a removable one leaves the set undecided)."""
    form = piecewise_form(expr)
    if form is None or not all(analytic_on_reals(p.expr) for p in form.pieces):
        return None
    points = []
    for b in form.breakpoints:
        left, right = form.left_of(b), form.right_of(b)
        value = form.original.xreplace({Z: b})
        dl, dr = [left.expr], [right.expr]
        for _ in range(_ORDERS):
            dl.append(sp.diff(dl[-1], Z))
            dr.append(sp.diff(dr[-1], Z))
        at_l = [d.xreplace({Z: b}) for d in dl]
        at_r = [d.xreplace({Z: b}) for d in dr]
        differs = exact_sign(at_l[0] - value) not in (0, None) or exact_sign(at_r[0] - value) not in (0, None) or \
            any(exact_sign(x - y) not in (0, None) for x, y in zip(at_l, at_r, strict=True))
        if not differs:
            return None
        points.append(b)
    return points, (f"σ is piecewise analytic, and not analytic exactly at {sp.sstr(sp.FiniteSet(*points))} (its "
                    f"one-sided derivatives of order ≤ {_ORDERS} differ there, exactly)")


@functools.lru_cache(maxsize=256)
def affine_symmetry(expr: sp.Expr) -> AffineSymmetry:
    """``Sym_aff(σ)`` by Lemma A (and the non-analytic point when ``s* ≠ 0``), or unknown with why."""
    from .symmetry import symmetry_fact
    from .tropical import asymptote_at_infinity

    plus, minus = asymptote_at_infinity(expr, 1), asymptote_at_infinity(expr, -1)
    for a in (plus, minus):
        if a.slope is None or a.intercept is None:
            return AffineSymmetry(unknown(f"Lemma A needs exact asymptotes: {a.how}"), (), None)
    assert plus.slope is not None and minus.slope is not None and plus.intercept is not None
    assert minus.intercept is not None
    if exact_sign(plus.slope - minus.slope) in (0, None):
        return AffineSymmetry(unknown(f"Lemma A needs α₊ ≠ α₋ (here α₊ = {sp.sstr(plus.slope)}, α₋ = "
                                      f"{sp.sstr(minus.slope)})"), (), None)
    hinge = sp.simplify((minus.intercept - plus.intercept) / (plus.slope - minus.slope))
    steps = [Step(f"asymptotes: {plus.how}; {minus.how}"),
             Step(f"Lemma A: every (μ, ν, κ) ∈ Sym_aff(σ) has κ = |μ| and ν = (1 − μ)s*, s* = (β₋ − β₊)/(α₊ − α₋) "
                  f"= {sp.sstr(hinge)}", hinge)]
    side = exact_sign(hinge)
    if side is None:
        return AffineSymmetry(unknown("the sign of s* is not decided exactly", *steps), (), hinge)
    if side != 0:
        found = _non_analytic_points(expr)
        if found is None or len(found[0]) != 1:
            return AffineSymmetry(unknown(f"s* = {sp.sstr(hinge)} ≠ 0, and σ does not have exactly one non-analytic "
                                          "point (proved) to fix ν", *steps), (), hinge)
        (k0,), why = found
        if exact_sign(k0 - hinge) in (0, None):
            return AffineSymmetry(unknown(f"the non-analytic point {sp.sstr(k0)} is not proved different from s*",
                                          *steps), (), hinge)
        steps.append(Step(why + f"; σ(μs + ν) = κσ(s) + p(s) is not analytic exactly at (k₀ − ν)/μ, so ν = (1 − μ)·"
                          f"{sp.sstr(k0)}; with ν = (1 − μ)s* and k₀ ≠ s*: μ = 1, κ = 1, ν = 0"))
        steps.append(Step("so Sym_aff(σ) = {(1, 0, 1)}, remainder 0"))
        return AffineSymmetry(proved(Stage.SERIES, *steps), (AffineElement("1", sp.S.Zero, sp.S.Zero),), hinge)
    sym = symmetry_fact(expr)
    if not sym.evidence.proved:
        return AffineSymmetry(unknown(f"s* = 0, and Sym(σ) is not decided: {sym.evidence.reason}", *steps), (), hinge)
    elements = []
    for c in sym.kept:
        if c.family_kappa is not None:
            return AffineSymmetry(unknown("s* = 0, and Sym(σ) has a family of scales κ(μ) this module does not "
                                          "carry over", *steps), (), hinge)
        if c.mu in ("-1", "mu<0") and c.kappa != 1:
            continue  # κ = −|μ|: excluded by Lemma A
        assert c.remainder is not None
        elements.append(AffineElement(c.mu, sp.S.Zero, sp.expand(c.remainder)))
    steps.append(Step("s* = 0: (μ, 0, |μ|) ∈ Sym_aff(σ) iff (μ, |μ|) ∈ Sym(σ), and Sym(σ) is proved: "
                      + "; ".join(s.text for s in sym.evidence.steps[-1:])))
    steps.append(Step("so Sym_aff(σ) = {" + ", ".join(e.describe() for e in elements) + "}"))
    return AffineSymmetry(proved(Stage.SERIES, *steps), tuple(elements), hinge)

