"""Structural predicates decided by walking the expression: cheap, exact, conservative.

Each returns True only when the property follows from the shape of the expression; False means
"not shown", never "refuted".
"""

from __future__ import annotations

import sympy as sp

from ..model.functions import Z
from .identity import exact_sign

__all__ = ["NONSMOOTH", "analytic_at", "analytic_on_reals", "is_smooth", "locally_bounded", "value_at"]

#: Node types that create kinks, jumps or cases: removed by the piecewise normal form.
NONSMOOTH = (sp.Max, sp.Min, sp.Abs, sp.sign, sp.Piecewise, sp.Heaviside)
_ENTIRE = (sp.exp, sp.sin, sp.cos, sp.sinh, sp.cosh, sp.erf, sp.erfc)
_REAL_ANALYTIC = (sp.tanh, sp.atan)  # analytic on the whole real line


def is_smooth(e: sp.Basic) -> bool:
    """No max/min/abs/sign/if nodes anywhere."""
    return not e.has(*NONSMOOTH)


def value_at(e: sp.Expr, point: sp.Expr) -> sp.Expr:
    return e.xreplace({Z: point})


def _positive(e: sp.Expr, point: sp.Expr | None) -> bool:
    """``e > 0`` at ``point`` (``None``: at every real ``z``), decided by SymPy."""
    if point is None:
        return bool(e.is_positive)
    v = value_at(e, point)
    return bool(v.is_positive) or exact_sign(v) == 1


def _nonzero(e: sp.Expr, point: sp.Expr | None) -> bool:
    """``e ≠ 0`` at ``point`` (``None``: at every real ``z``), decided by SymPy."""
    if point is None:
        return bool(e.is_nonzero) or bool(e.is_positive)
    v = value_at(e, point)
    return bool(v.is_nonzero) or exact_sign(v) in (-1, 1)


def _analytic(e: sp.Expr, point: sp.Expr | None) -> bool:
    """``e`` is real-analytic near ``point`` (``None``: on all of R)."""
    if e.is_Number or e.is_NumberSymbol or not e.has(Z):
        return bool(e.is_finite) or e.is_Number
    if e == Z:
        return True
    if isinstance(e, (sp.Add, sp.Mul)):
        return all(_analytic(a, point) for a in e.args)
    if isinstance(e, sp.Pow):
        base, exp = e.args
        if exp.has(Z):
            return _analytic(exp, point) and _analytic(base, point) and _positive(base, point)
        if not _analytic(base, point):
            return False
        if exp.is_Integer and exp >= 0:
            return True
        if exp.is_Integer:
            return _nonzero(base, point)
        return _positive(base, point)
    if isinstance(e, _ENTIRE + _REAL_ANALYTIC):
        return _analytic(e.args[0], point)
    if isinstance(e, sp.log):
        return _analytic(e.args[0], point) and _positive(e.args[0], point)
    if isinstance(e, sp.Abs):
        return _analytic(e.args[0], point) and _nonzero(e.args[0], point)
    return False


def analytic_at(e: sp.Expr, point: sp.Expr = sp.S.Zero) -> bool:
    """``e`` is real-analytic in a neighbourhood of ``point``."""
    return _analytic(e, point)


def analytic_on_reals(e: sp.Expr) -> bool:
    """``e`` is real-analytic on all of R (so it is determined by its values on any interval)."""
    return _analytic(e, None)


def _positive_everywhere(e: sp.Expr) -> bool:
    return bool(e.is_positive)


def locally_bounded(e: sp.Expr) -> bool:
    """``e`` is bounded on every bounded set of reals (continuous, or with finitely many jumps)."""
    if not e.has(Z):
        return bool(e.is_finite) or e.is_Number
    if e == Z:
        return True
    if isinstance(e, (sp.Add, sp.Mul, sp.Max, sp.Min)):
        return all(locally_bounded(a) for a in e.args)
    if isinstance(e, (sp.Abs, *_ENTIRE, *_REAL_ANALYTIC)):
        return locally_bounded(e.args[0])
    if isinstance(e, (sp.sign, sp.Heaviside)):
        return True
    if isinstance(e, sp.Piecewise):
        return all(locally_bounded(branch) for branch, _ in e.args)
    if isinstance(e, sp.Pow):
        base, exp = e.args
        if exp.has(Z):
            return locally_bounded(exp) and locally_bounded(base) and _positive_everywhere(base)
        if not locally_bounded(base):
            return False
        if exp.is_nonnegative:
            return True
        return _positive_everywhere(base) and bool((1 / base).is_finite) and _bounded_away_from_zero(base)
    if isinstance(e, sp.log):
        return locally_bounded(e.args[0]) and _bounded_away_from_zero(e.args[0])
    return False


def _bounded_away_from_zero(e: sp.Expr) -> bool:
    """Conservative: ``c + (nonnegative terms)`` with ``c > 0``, e.g. ``1 + exp(z)``, ``1 + |z|``."""
    if not isinstance(e, sp.Add):
        return bool(e.is_positive) and not e.has(Z)
    const = sum((a for a in e.args if not a.has(Z)), sp.S.Zero)
    rest = [a for a in e.args if a.has(Z)]
    return bool(const.is_positive) and all(bool(a.is_nonnegative) for a in rest)
