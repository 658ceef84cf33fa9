"""The value of σ at 0, one-sided derivatives there, and differentiability.

Piecewise activations are decided from the pieces on each side of 0, never from ``series``
(which silently returns a one-sided expansion for ``Max``, ``Abs`` and ``Piecewise``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import sympy as sp

from ..model.functions import Z
from .facts import Evidence, Stage, Step, label, proved, refuted, unknown
from .identity import exact_sign, prove_zero, simplified
from .piecewise import piecewise_form
from .structure import analytic_at

__all__ = ["AtZeroFact", "at_zero_fact"]


@dataclass(frozen=True)
class AtZeroFact:
    """``evidence`` is about differentiability at 0."""

    evidence: Evidence
    value: sp.Expr | None
    differentiable: bool | None
    derivative: sp.Expr | None
    left_derivative: sp.Expr | None
    right_derivative: sp.Expr | None
    continuous: bool | None


def _d0(e: sp.Expr) -> sp.Expr:
    return simplified(sp.diff(e, Z).xreplace({Z: sp.S.Zero}))


@functools.lru_cache(maxsize=512)
def at_zero_fact(expr: sp.Expr) -> AtZeroFact:
    value = simplified(expr.xreplace({Z: sp.S.Zero}))
    if value.has(sp.zoo, sp.nan, sp.oo, -sp.oo) or not value.is_finite:
        return AtZeroFact(refuted(Stage.STRUCTURAL, Step("σ(0) is not a finite number", value)),
                          None, False, None, None, None, False)
    value_step = Step("value at 0", sp.Eq(label("σ(0)", r"\sigma(0)"), value, evaluate=False))
    form = piecewise_form(expr)
    if form is None:
        return AtZeroFact(unknown("the case splits of σ could not be decided exactly", value_step),
                          value, None, None, None, None, None)
    piece = form.piece_at(sp.S.Zero)
    if piece is not None:
        if not analytic_at(piece.expr, sp.S.Zero):
            return AtZeroFact(unknown("σ is not shown analytic near 0", value_step), value, None, None, None, None, None)
        d = _d0(piece.expr)
        where = "σ" if form.is_single else f"the piece σ(z) = {sp.sstr(piece.expr)} on ({piece.lo}, {piece.hi})"
        return AtZeroFact(proved(Stage.STRUCTURAL, value_step,
                                 Step(f"{where} is built from functions analytic at 0, so σ is differentiable there",
                                      sp.Eq(label("σ'(0)", r"\sigma'(0)"), d, evaluate=False))),
                          value, True, d, d, d, True)
    left, right = form.left_of(sp.S.Zero), form.right_of(sp.S.Zero)
    if not (analytic_at(left.expr, sp.S.Zero) and analytic_at(right.expr, sp.S.Zero)):
        return AtZeroFact(unknown("a piece next to 0 is not shown analytic at 0", value_step),
                          value, None, None, None, None, None)
    steps = [value_step,
             Step("0 is a breakpoint; left of it σ(z) equals", left.expr),
             Step("right of it σ(z) equals", right.expr)]
    jumps = [simplified(p.expr.xreplace({Z: sp.S.Zero}) - value) for p in (left, right)]
    signs = [exact_sign(j) for j in jumps]
    if any(s not in (0, None) for s in signs):
        steps.append(Step("σ jumps at 0 (a one-sided limit differs from σ(0)), so it is not differentiable there",
                          sp.Tuple(*jumps)))
        return AtZeroFact(refuted(Stage.STRUCTURAL, *steps), value, False, None, None, None, False)
    if any(s is None for s in signs):
        return AtZeroFact(unknown("continuity at 0 could not be decided", *steps), value, None, None, None, None, None)
    dl, dr = _d0(left.expr), _d0(right.expr)
    steps.append(Step("one-sided derivatives at 0 (left, right)", sp.Tuple(dl, dr)))
    if prove_zero(dl - dr):
        steps.append(Step("they agree and σ is continuous at 0, so σ is differentiable there",
                          sp.Eq(label("σ'(0)", r"\sigma'(0)"), dl, evaluate=False)))
        return AtZeroFact(proved(Stage.SYMBOLIC, *steps), value, True, dl, dl, dr, True)
    if exact_sign(dl - dr) not in (0, None):
        steps.append(Step("they differ, so σ is not differentiable at 0", sp.Ne(dl, dr)))
        return AtZeroFact(refuted(Stage.SYMBOLIC, *steps), value, False, None, dl, dr, True)
    return AtZeroFact(unknown("the one-sided derivatives could not be compared", *steps),
                      value, None, None, dl, dr, True)
