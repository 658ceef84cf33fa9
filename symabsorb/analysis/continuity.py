"""Continuity of σ on all of R, read from the piecewise normal form.

Proved when every piece is built from functions analytic on all of R and, at every breakpoint
``b``, both neighbouring pieces take exactly the value ``σ(b)``; refuted when at some breakpoint
a neighbouring piece's value provably differs from ``σ(b)`` (a jump, or a value held at a single
point). Lemma R and Theorem R need continuity; Prop. 6 in its continuous form needs it at 0.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import sympy as sp

from ..model.functions import Z
from .facts import Evidence, Stage, Status, Step, proved, refuted, unknown
from .identity import exact_sign, prove_zero, simplified
from .piecewise import PiecewiseForm, piecewise_form
from .structure import analytic_on_reals

__all__ = ["ContinuityFact", "continuity_fact", "jump_at", "undefined_point"]


@dataclass(frozen=True)
class ContinuityFact:
    evidence: Evidence  # of "σ is continuous on R"
    breakpoints: tuple[sp.Expr, ...]
    discontinuities: tuple[sp.Expr, ...]  # breakpoints where a jump is proved


def jump_at(form: PiecewiseForm, b: sp.Expr) -> tuple[int | None, sp.Expr, sp.Expr, sp.Expr]:
    """Whether σ jumps at breakpoint ``b``: (1 proved jump, 0 proved continuous, None undecided),
    with the left value, ``σ(b)`` and the right value."""
    value = simplified(form.original.xreplace({Z: b}))
    left = simplified(form.left_of(b).expr.xreplace({Z: b}))
    right = simplified(form.right_of(b).expr.xreplace({Z: b}))
    if any(v.has(sp.nan, sp.zoo, sp.oo, -sp.oo) for v in (value, left, right)):
        return None, left, value, right
    signs = [exact_sign(left - value), exact_sign(right - value)]
    if any(s not in (0, None) for s in signs):
        return 1, left, value, right
    if prove_zero(left - value) and prove_zero(right - value):
        return 0, left, value, right
    return None, left, value, right


@functools.lru_cache(maxsize=512)
def continuity_fact(expr: sp.Expr) -> ContinuityFact:
    fact = _continuity_fact(expr)
    if fact.evidence.status is not Status.UNKNOWN:
        return fact
    from .euler import euler_form

    form = euler_form(expr)  # t log|t|, |t|^(3/2): pieces not analytic at 0, limits known in closed form
    if form is None:
        return fact
    return ContinuityFact(proved(Stage.STRUCTURAL, Step(
        "σ is of Euler type, σ(t) = " + form.describe() + " with σ(0) = p(0): every term is continuous on each "
        "open ray, and s^e → 0, s^k log s → 0 as s → 0+ (e > 0, k ≥ 1), so σ is continuous on R")),
        fact.breakpoints, ())


def _continuity_fact(expr: sp.Expr) -> ContinuityFact:
    form = piecewise_form(expr)
    if form is None:
        return ContinuityFact(unknown("the case splits of σ could not be decided exactly"), (), ())
    bps = form.breakpoints
    jumps = []
    undecided = []
    for b in bps:
        state, left, value, right = jump_at(form, b)
        if state == 1:
            jumps.append((b, left, value, right))
        elif state is None:
            undecided.append(b)
    if jumps:
        b, left, value, right = jumps[0]
        return ContinuityFact(refuted(Stage.SYMBOLIC, Step(
            f"at z = {b} the left value, σ({b}) and the right value are not all equal", sp.Tuple(left, value, right))),
            bps, tuple(j[0] for j in jumps))
    if undecided:
        return ContinuityFact(unknown(f"continuity at z = {undecided[0]} could not be decided"), bps, ())
    if not all(analytic_on_reals(p.expr) for p in form.pieces):
        return ContinuityFact(unknown("a piece is not shown to be built from functions analytic on R"), bps, ())
    where = ("σ is built from functions analytic on R" if form.is_single else
             f"every piece is analytic on R and σ takes both neighbouring values at each breakpoint {list(bps)}")
    return ContinuityFact(proved(Stage.STRUCTURAL, Step(where + ", so σ is continuous on R")), bps, ())


def _candidate_singularities(expr: sp.Expr) -> list[sp.Expr]:
    """0, the real roots of polynomial denominators and logarithm arguments with rational
    coefficients, and (for roots and logarithms) points of both signs: where an expression built
    from our functions can fail to have a real value."""
    out: list[sp.Expr] = [sp.S.Zero]
    if any(isinstance(n, sp.log) or (isinstance(n, sp.Pow) and n.exp.is_Rational and not n.exp.is_Integer)
           for n in sp.preorder_traversal(expr)):
        from .identity import sample_points

        out.extend(sp.Rational(q.numerator, q.denominator) for q in sample_points())  # negative arguments
    for node in sp.preorder_traversal(expr):
        base = None
        if isinstance(node, sp.Pow) and node.exp.is_number and node.exp.is_negative:
            base = node.base
        elif isinstance(node, sp.Pow) and node.exp.is_Rational and not node.exp.is_Integer:
            base = node.base
        elif isinstance(node, sp.log):
            base = node.args[0]
        if base is None or not base.has(Z) or base.free_symbols - {Z}:
            continue
        try:
            poly = sp.Poly(base, Z)
        except sp.PolynomialError:
            continue
        if 1 <= poly.degree() <= 8 and all(c.is_Rational for c in poly.all_coeffs()):
            out.extend(r for r in sp.Poly(base, Z, domain="QQ").real_roots() if r.is_Rational)
    return list(dict.fromkeys(out))


@functools.lru_cache(maxsize=512)
def undefined_point(expr: sp.Expr) -> sp.Expr | None:
    """A real point where ``σ`` provably has no finite real value (``sin(z)/z`` at 0,
    ``(z²−1)/(z−1)`` at 1, ``log(z²)`` at 0), else None. A None is not a proof that σ is defined
    everywhere: only these candidate points are checked, exactly."""
    for p in _candidate_singularities(expr):
        try:
            value = expr.xreplace({Z: p})
        except (ZeroDivisionError, ValueError, TypeError):
            return p
        if value.has(sp.nan, sp.zoo, sp.oo, -sp.oo) or value is sp.nan or (value.is_number and value.is_real is False):
            return p
    return None
