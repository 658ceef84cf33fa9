"""Approximate evaluation of activations (mpmath, numpy): for plots and witness cross-checks.

Nothing here proves or refutes a fact: fixed-precision numbers lie under cancellation. Claims
are refuted only by rigorous enclosures (:mod:`.enclosure`). This module walks the SymPy tree
itself: no code generation, no ``lambdify``.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import mpmath
import sympy as sp

from ..model.functions import Z
from .enclosure import PRECISIONS, NotNumeric, enclose

__all__ = ["APPROX_DIGITS", "NotNumeric", "evaluate", "evaluate_array", "evaluator", "plot_values"]

#: Default working precision of approximations (digits).
APPROX_DIGITS = 30
_IMAG_TOLERANCE = mpmath.mpf(10) ** -20

_UNARY: dict[type, Callable[[Any], Any]] = {
    sp.exp: mpmath.exp, sp.log: mpmath.log, sp.erf: mpmath.erf, sp.erfc: mpmath.erfc,
    sp.tanh: mpmath.tanh, sp.sinh: mpmath.sinh, sp.cosh: mpmath.cosh, sp.sin: mpmath.sin,
    sp.cos: mpmath.cos, sp.atan: mpmath.atan, sp.Abs: abs,
}


def _sign(x: Any) -> Any:
    return mpmath.mpf(1) if x > 0 else (mpmath.mpf(-1) if x < 0 else mpmath.mpf(0))


def _ev(e: sp.Basic, x: Any) -> Any:
    if e == Z:
        return x
    if e.is_Number:
        if e.is_Rational:
            return mpmath.mpf(int(e.p)) / int(e.q)  # type: ignore[attr-defined]
        return mpmath.mpf(sp.Float(e, mpmath.mp.dps + 5)._mpf_)
    if e is sp.pi:
        return +mpmath.pi
    if e is sp.E:
        return mpmath.e + 0
    if isinstance(e, sp.Add):
        return mpmath.fsum(_ev(a, x) for a in e.args)
    if isinstance(e, sp.Mul):
        out = mpmath.mpf(1)
        for a in e.args:
            out *= _ev(a, x)
        return out
    if isinstance(e, sp.Pow):
        base, exp = e.args
        b = _ev(base, x)
        if exp.is_Integer:
            return b ** int(exp)
        if exp == sp.S.Half:
            return mpmath.sqrt(b)
        return b ** _ev(exp, x)
    f = type(e)
    if f in _UNARY:
        return _UNARY[f](_ev(e.args[0], x))
    if isinstance(e, sp.sign):
        return _sign(_ev(e.args[0], x))
    if isinstance(e, sp.Heaviside):
        v = _ev(e.args[0], x)
        return mpmath.mpf(1) if v > 0 else (mpmath.mpf(0) if v < 0 else mpmath.mpf(1) / 2)
    if isinstance(e, sp.Max):
        return max(_ev(a, x) for a in e.args)
    if isinstance(e, sp.Min):
        return min(_ev(a, x) for a in e.args)
    if isinstance(e, sp.Piecewise):
        for branch, cond in e.args:
            if _truth(cond, x):
                return _ev(branch, x)
        raise NotNumeric("no branch of a Piecewise applies")
    raise NotNumeric(f"cannot evaluate {type(e).__name__}")


def _truth(c: sp.Basic, x: Any) -> bool:
    if c is sp.true:
        return True
    if c is sp.false:
        return False
    if isinstance(c, sp.And):
        return all(_truth(a, x) for a in c.args)
    if isinstance(c, sp.Or):
        return any(_truth(a, x) for a in c.args)
    if isinstance(c, sp.Not):
        return not _truth(c.args[0], x)
    if isinstance(c, sp.core.relational.Relational):
        lhs, rhs = _ev(c.lhs, x), _ev(c.rhs, x)
        return bool({"<": lhs < rhs, "<=": lhs <= rhs, ">": lhs > rhs, ">=": lhs >= rhs,
                     "==": lhs == rhs, "!=": lhs != rhs}[c.rel_op])
    raise NotNumeric(f"cannot evaluate condition {type(c).__name__}")


def evaluate(expr: sp.Basic, x: Fraction | int | float | Any, digits: int = APPROX_DIGITS) -> Any:
    """``expr`` at ``z = x`` approximated with mpmath at ``digits`` digits (not rigorous)."""
    with mpmath.workdps(digits):
        if isinstance(x, Fraction):
            xv = mpmath.mpf(x.numerator) / x.denominator
        else:
            xv = mpmath.mpf(x)
        if expr.free_symbols - {Z}:
            raise NotNumeric("free parameters: " + ", ".join(sorted(str(s) for s in expr.free_symbols - {Z})))
        try:
            value = _ev(expr, xv)
        except (ZeroDivisionError, ValueError, OverflowError) as err:
            raise NotNumeric(str(err)) from None
        if isinstance(value, mpmath.mpc):
            if abs(value.imag) > _IMAG_TOLERANCE:
                raise NotNumeric("complex value")
            value = value.real
        return +value


def evaluator(expr: sp.Basic, digits: int = 30) -> Callable[[float], float]:
    """A float function evaluating ``expr`` at ``digits`` digits (for plots and cross-checks)."""

    def f(x: float) -> float:
        return float(evaluate(expr, x, digits))

    return f


def evaluate_array(expr: sp.Basic, xs: Any) -> Any:
    """``expr`` at every entry of the float64 array ``xs`` (numpy; walks the tree, no codegen).

    For witness checks on float weights only; proofs never use it.
    """
    import math

    import numpy as np

    try:
        from scipy.special import erf as _erf
        from scipy.special import erfc as _erfc
    except ImportError:  # pragma: no cover - scipy is part of the weights extra
        _erf = np.vectorize(math.erf)
        _erfc = np.vectorize(math.erfc)
    unary = {sp.exp: np.exp, sp.log: np.log, sp.erf: _erf, sp.erfc: _erfc, sp.tanh: np.tanh, sp.sinh: np.sinh,
             sp.cosh: np.cosh, sp.sin: np.sin, sp.cos: np.cos, sp.atan: np.arctan, sp.Abs: np.abs, sp.sign: np.sign}

    def ev(e: sp.Basic) -> Any:
        if e == Z:
            return xs
        if e.is_Number or e.is_NumberSymbol:
            return np.full(xs.shape, float(e))
        if isinstance(e, sp.Add):
            return sum((ev(a) for a in e.args), np.zeros(xs.shape))
        if isinstance(e, sp.Mul):
            out = np.ones(xs.shape)
            for a in e.args:
                out = out * ev(a)
            return out
        if isinstance(e, sp.Pow):
            return np.power(ev(e.args[0]), ev(e.args[1]))
        if type(e) in unary:
            return unary[type(e)](ev(e.args[0]))
        if isinstance(e, sp.Max):
            return np.maximum.reduce([ev(a) for a in e.args])
        if isinstance(e, sp.Min):
            return np.minimum.reduce([ev(a) for a in e.args])
        if isinstance(e, sp.Heaviside):
            return np.heaviside(ev(e.args[0]), 0.5)
        if isinstance(e, sp.Piecewise):
            out = np.full(xs.shape, np.nan)
            done = np.zeros(xs.shape, dtype=bool)
            for branch, cond in e.args:
                mask = truth(cond) & ~done
                out = np.where(mask, ev(branch), out)
                done |= mask
            return out
        raise NotNumeric(f"cannot evaluate {type(e).__name__}")

    def truth(c: sp.Basic) -> Any:
        if c is sp.true:
            return np.ones(xs.shape, dtype=bool)
        if c is sp.false:
            return np.zeros(xs.shape, dtype=bool)
        if isinstance(c, sp.And):
            return np.logical_and.reduce([truth(a) for a in c.args])
        if isinstance(c, sp.Or):
            return np.logical_or.reduce([truth(a) for a in c.args])
        if isinstance(c, sp.core.relational.Relational):
            lhs, rhs = ev(c.lhs), ev(c.rhs)
            return {"<": lhs < rhs, "<=": lhs <= rhs, ">": lhs > rhs, ">=": lhs >= rhs, "==": lhs == rhs,
                    "!=": lhs != rhs}[c.rel_op]
        raise NotNumeric(f"cannot evaluate condition {type(c).__name__}")

    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return ev(expr)


def plot_values(expr: sp.Basic, points: list[Fraction], rel: float = 1e-9) -> list[float]:
    """Values to draw at exact ``points``: the midpoint of a rigorous enclosure, at the first
    precision whose radius is below ``rel * max(1, |mid|)``. Cancellation (``cosh(40z)^2 -
    sinh(40z)^2``) therefore cannot draw a wrong curve, as fixed-precision evaluation did; ``nan``
    where σ has no finite value or no precision is fine enough. Still only a picture."""
    out: list[float] = []
    for point in points:
        value = float("nan")
        for prec in PRECISIONS:
            try:
                ball = enclose(expr, point, prec)
            except NotNumeric:
                break
            mid, rad = float(ball.value.mid()), float(ball.value.rad())
            if rad <= rel * max(1.0, abs(mid)):
                value = mid
                break
        out.append(value)
    return out
