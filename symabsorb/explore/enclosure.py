"""Rigorous enclosures of an activation's values: python-flint ``arb`` balls, walking the SymPy tree.

A ball certainly contains the true value, so two functions whose balls at one point are disjoint
are certainly different there. Overlapping balls prove nothing (that needs an exact identity).
Anything this walker cannot enclose (an unknown function, a piecewise condition the balls cannot
decide, a pole) raises :class:`NotEnclosable`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import sympy as sp

from ..model.functions import Z

__all__ = ["NotEnclosable", "disjoint", "enclose", "enclose_many", "flint_available"]


class NotEnclosable(Exception):
    """The expression could not be enclosed at this point."""


def flint_available() -> bool:
    try:
        import flint  # noqa: F401
    except ImportError:
        return False
    return True


def _arb() -> Any:
    from flint import arb

    return arb


_UNARY: dict[type, Callable[[Any], Any]] = {
    sp.exp: lambda a: a.exp(),
    sp.log: lambda a: a.log(),
    sp.erf: lambda a: a.erf(),
    sp.erfc: lambda a: a.erfc(),
    sp.tanh: lambda a: a.tanh(),
    sp.sinh: lambda a: a.sinh(),
    sp.cosh: lambda a: a.cosh(),
    sp.sin: lambda a: a.sin(),
    sp.cos: lambda a: a.cos(),
    sp.atan: lambda a: a.atan(),
    sp.Abs: lambda a: abs(a),
    sp.sign: lambda a: a.sgn(),
}


def _positive(ball: Any) -> bool | None:
    """True / False when the ball lies strictly on one side of 0, else None."""
    if ball > 0:
        return True
    if ball <= 0:
        return False
    return None


def _cond(c: sp.Basic, at: Any) -> bool:
    if c is sp.true:
        return True
    if c is sp.false:
        return False
    if isinstance(c, sp.And):
        return all(_cond(a, at) for a in c.args)
    if isinstance(c, sp.Or):
        return any(_cond(a, at) for a in c.args)
    if isinstance(c, (sp.StrictLessThan, sp.LessThan, sp.StrictGreaterThan, sp.GreaterThan)):
        diff = _walk(c.lhs - c.rhs, at)
        if isinstance(c, (sp.StrictLessThan, sp.LessThan)):
            diff = -diff
        strict = isinstance(c, (sp.StrictLessThan, sp.StrictGreaterThan))
        if diff > 0:
            return True
        if diff < 0:
            return False
        if diff.is_exact() and diff == 0:
            return not strict
        raise NotEnclosable("a piecewise condition is too close to call")
    raise NotEnclosable(f"condition {type(c).__name__}")


def _walk(e: sp.Basic, at: Any) -> Any:
    arb = _arb()
    if e == Z:
        return at
    if e.is_Rational:
        return arb(int(e.p)) / int(e.q)
    if e is sp.pi:
        return arb.pi()
    if e is sp.E:
        return arb(1).exp()
    if isinstance(e, sp.Float):
        raise NotEnclosable("a float constant")  # never produced by the resolver
    if isinstance(e, sp.Add):
        total = arb(0)
        for a in e.args:
            total += _walk(a, at)
        return total
    if isinstance(e, sp.Mul):
        prod = arb(1)
        for a in e.args:
            prod *= _walk(a, at)
        return prod
    if isinstance(e, sp.Pow):
        base = _walk(e.base, at)
        ex = e.exp
        if ex.is_Integer:
            n = int(ex)
            if n < 0:
                if base.contains(0):
                    raise NotEnclosable("division by a ball containing 0")
                return 1 / base ** (-n)
            return base**n
        if ex.is_Rational:
            if not base > 0:
                raise NotEnclosable("a fractional power of a value not provably positive")
            return (base.log() * (arb(int(ex.p)) / int(ex.q))).exp()
        exponent = _walk(ex, at)
        if not base > 0:
            raise NotEnclosable("a real power of a value not provably positive")
        return (base.log() * exponent).exp()
    if isinstance(e, (sp.Max, sp.Min)):
        vals = [_walk(a, at) for a in e.args]
        out = vals[0]
        for v in vals[1:]:
            out = out.max(v) if isinstance(e, sp.Max) else out.min(v)
        return out
    if isinstance(e, sp.Piecewise):
        for expr, cond in e.args:
            if _cond(cond, at):
                return _walk(expr, at)
        raise NotEnclosable("no piece applies")
    if isinstance(e, sp.Heaviside):
        arg = _walk(e.args[0], at)
        side = _positive(arg)
        if side is None:
            raise NotEnclosable("Heaviside at a ball containing 0")
        return arb(1 if side else 0)
    fn = _UNARY.get(type(e)) or next((f for cls, f in _UNARY.items() if isinstance(e, cls)), None)
    if fn is not None and len(e.args) == 1:
        arg = _walk(e.args[0], at)
        if isinstance(e, sp.log) and not arg > 0:
            raise NotEnclosable("log of a value not provably positive")
        return fn(arg)
    raise NotEnclosable(f"no enclosure for {type(e).__name__}")


def enclose(expr: sp.Expr, point: Fraction) -> Any:
    """An ``arb`` ball containing ``expr`` at ``z = point`` (raises :class:`NotEnclosable`)."""
    arb = _arb()
    at = arb(point.numerator) / point.denominator
    try:
        ball = _walk(expr, at)
    except (ZeroDivisionError, ValueError, OverflowError) as err:
        raise NotEnclosable(type(err).__name__) from None
    if not ball.is_finite():
        raise NotEnclosable("not finite")
    return ball


def enclose_many(expr: sp.Expr, points: Sequence[Fraction]) -> tuple[Any, ...]:
    return tuple(enclose(expr, p) for p in points)


def disjoint(a: Any, b: Any) -> bool:
    """Whether two balls certainly hold different numbers."""
    return not a.overlaps(b)
