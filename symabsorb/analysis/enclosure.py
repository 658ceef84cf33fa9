"""Rigorous enclosures: ball arithmetic (python-flint ``arb``) over the SymPy tree.

An enclosure is an interval that certainly contains the exact value. It may *refute* a claim
("σ(7/5) ≠ 0": the ball excludes 0) and decide the sign of a nonzero constant, because the ball's
radius accounts for every rounding error. It never proves that something *is* zero: a ball
around 0 only says "not refuted". Precision is raised until the ball is decisive or the ladder
ends (:data:`PRECISIONS`); cancellation then widens the ball instead of producing a false
nonzero, which is what fixed-precision numbers did here (``cosh(40z)^2 − sinh(40z)^2 − 1`` is 0,
and 60 mpmath digits called it nonzero).

The tree is walked directly: no code generation, no ``lambdify``. Conditions of a ``Piecewise``
are decided by the ball when it is decisive, otherwise exactly at rational points (so a value
held at a single breakpoint, ``if z >= a and z <= a then v else f``, is evaluated correctly), and
otherwise the enclosure is the union of every branch that might apply.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy as sp

from ..model.functions import Z

__all__ = [
    "PRECISIONS",
    "Ball",
    "NotNumeric",
    "constant_sign",
    "enclose",
    "enclose_constant",
    "nonzero_enclosure",
]

#: Working precisions (bits) tried in turn until an enclosure is decisive.
PRECISIONS = (64, 256, 1024, 4096)


class NotNumeric(Exception):
    """The expression has a free parameter, a node we do not enclose, or no finite value here."""


@dataclass(frozen=True)
class Ball:
    """A rigorous enclosure ``[mid ± rad]`` of an exact real number, and the point it was taken at."""

    value: Any  # flint.arb
    prec: int

    @property
    def excludes_zero(self) -> bool:
        return bool(self.value.is_finite()) and not self.value.contains(0)

    @property
    def sign(self) -> int | None:
        """The sign of the exact value when the ball decides it."""
        if not self.excludes_zero:
            return None
        return 1 if self.value > 0 else -1

    def text(self, digits: int = 12) -> str:
        """``[1.40000000000 +/- 1.3e-19]`` (flint's notation)."""
        return str(self.value.str(digits))

    def __str__(self) -> str:
        return self.text()


def _flint() -> Any:
    try:
        import flint
    except ImportError as err:  # pragma: no cover - python-flint is a core dependency
        raise NotNumeric("python-flint is not installed: no rigorous enclosure available") from err
    return flint


@contextmanager
def _precision(bits: int) -> Iterator[Any]:
    flint = _flint()
    old = flint.ctx.prec
    flint.ctx.prec = bits
    try:
        yield flint
    finally:
        flint.ctx.prec = old


def _rational(flint: Any, q: Any) -> Any:
    if isinstance(q, Fraction):
        return flint.arb(flint.fmpq(q.numerator, q.denominator))
    if isinstance(q, int):
        return flint.arb(q)
    if isinstance(q, sp.Rational):
        return flint.arb(flint.fmpq(int(q.p), int(q.q)))
    raise NotNumeric(f"not an exact point: {q!r}")


def _sympy_rational(q: Fraction | int | sp.Rational) -> sp.Rational:
    if isinstance(q, Fraction):
        return sp.Rational(q.numerator, q.denominator)
    return sp.Rational(q)


class _Walker:
    """Encloses one expression at one exact point at one precision."""

    def __init__(self, flint: Any, point: sp.Rational | None) -> None:
        self.flint = flint
        self.arb = flint.arb
        self.point = point
        self.z = None if point is None else _rational(flint, point)

    def ev(self, e: sp.Basic) -> Any:
        arb = self.arb
        if e == Z:
            if self.z is None:
                raise NotNumeric("the expression depends on z")
            return self.z
        if e.is_Rational:
            return _rational(self.flint, e)
        if e.is_Float:
            mpf = e._mpf_  # type: ignore[attr-defined]
            sign, man, exp, _ = mpf
            if man == 0:
                return arb(0)
            return arb(self.flint.fmpz((-1) ** sign * man)) * arb(2) ** exp
        if e is sp.pi:
            return arb.pi()
        if e is sp.E:
            return arb.const_e()
        if e.is_Symbol:
            raise NotNumeric(f"free parameter {e}")
        if isinstance(e, sp.Add):
            out = arb(0)
            for a in e.args:
                out += self.ev(a)
            return out
        if isinstance(e, sp.Mul):
            out = arb(1)
            for a in e.args:
                out *= self.ev(a)
            return out
        if isinstance(e, sp.Pow):
            return self._pow(e)
        f = type(e)
        if f in _UNARY:
            return _UNARY[f](self.ev(e.args[0]))
        if isinstance(e, sp.Abs):
            v = self.ev(e.args[0])
            return abs(v)
        if isinstance(e, sp.sign):
            return self._sign(e.args[0])
        if isinstance(e, sp.Heaviside):
            s = self._sign(e.args[0])
            h0 = self.ev(e.args[1]) if len(e.args) > 1 else arb(1) / 2
            if s.is_exact() and s == 0:
                return h0
            if not s.contains(0):
                return (s + 1) / 2
            return arb(0).union(arb(1)).union(h0)
        if isinstance(e, sp.Max):
            vals = [self.ev(a) for a in e.args]
            out = vals[0]
            for v in vals[1:]:
                out = out.max(v)
            return out
        if isinstance(e, sp.Min):
            vals = [self.ev(a) for a in e.args]
            out = vals[0]
            for v in vals[1:]:
                out = out.min(v)
            return out
        if isinstance(e, sp.Piecewise):
            return self._piecewise(e)
        raise NotNumeric(f"cannot enclose {type(e).__name__}")

    def _pow(self, e: sp.Pow) -> Any:
        base, exp = e.args
        b = self.ev(base)
        if exp.is_Integer:
            n = int(exp)
            if abs(n) > 10**6:
                raise NotNumeric("exponent too large to enclose")
            if n < 0 and b.contains(0):
                raise NotNumeric("division by a ball containing 0")
            return b ** self.flint.fmpz(n)
        if exp == sp.S.Half:
            if not b >= 0:
                raise NotNumeric("square root of a ball not known to be nonnegative")
            return b.sqrt()
        x = self.ev(exp)
        if not b > 0:
            raise NotNumeric("real power of a base not known to be positive")
        return (x * b.log()).exp()

    def _sign(self, arg: sp.Basic) -> Any:
        v = self.ev(arg)
        if not v.contains(0):
            return self.arb(1) if v > 0 else self.arb(-1)
        if v.is_exact() and v == 0:
            return self.arb(0)
        exact = self._exact_sign_at_point(arg)
        if exact is not None:
            return self.arb(exact)
        return v.sgn()

    def _exact_sign_at_point(self, e: sp.Basic) -> int | None:
        """Sign of ``e`` at the (rational) point when ``e`` is a small rational polynomial in z."""
        if self.point is None or not isinstance(e, sp.Expr):
            return None
        if e.free_symbols - {Z}:
            return None
        try:
            poly = sp.Poly(e, Z)
        except sp.PolynomialError:
            return None
        if poly.degree() > 64 or not all(c.is_Rational for c in poly.all_coeffs()):
            return None
        value = sp.S.Zero
        for c in poly.all_coeffs():  # Horner, in exact rationals
            value = value * self.point + c
        return int(sp.sign(value))

    def _truth(self, c: sp.Basic) -> bool | None:
        if c is sp.true:
            return True
        if c is sp.false:
            return False
        if isinstance(c, sp.And):
            parts = [self._truth(a) for a in c.args]
            if any(p is False for p in parts):
                return False
            return True if all(p is True for p in parts) else None
        if isinstance(c, sp.Or):
            parts = [self._truth(a) for a in c.args]
            if any(p is True for p in parts):
                return True
            return False if all(p is False for p in parts) else None
        if isinstance(c, sp.Not):
            inner = self._truth(c.args[0])
            return None if inner is None else not inner
        if isinstance(c, sp.core.relational.Relational):
            diff = c.lhs - c.rhs
            v = self.ev(diff)
            s: int | None
            if not v.contains(0):
                s = 1 if v > 0 else -1
            elif v.is_exact() and v == 0:
                s = 0
            else:
                s = self._exact_sign_at_point(diff)
            if s is None:
                return None
            return {"<": s < 0, "<=": s <= 0, ">": s > 0, ">=": s >= 0, "==": s == 0, "!=": s != 0}[c.rel_op]
        raise NotNumeric(f"cannot decide condition {type(c).__name__}")

    def _piecewise(self, e: sp.Piecewise) -> Any:
        out = None
        for branch, cond in e.args:
            truth = self._truth(cond)
            if truth is False:
                continue
            v = self.ev(branch)
            out = v if out is None else out.union(v)
            if truth is True:
                return out
        if out is None:
            raise NotNumeric("no branch of a Piecewise applies")
        raise NotNumeric("the branch of a Piecewise could not be decided")


def _unary() -> dict[type, Any]:
    return {
        sp.exp: lambda v: v.exp(), sp.log: _log, sp.erf: lambda v: v.erf(), sp.erfc: lambda v: v.erfc(),
        sp.tanh: lambda v: v.tanh(), sp.sinh: lambda v: v.sinh(), sp.cosh: lambda v: v.cosh(),
        sp.sin: lambda v: v.sin(), sp.cos: lambda v: v.cos(), sp.atan: lambda v: v.atan(),
    }


def _log(v: Any) -> Any:
    if not v > 0:
        raise NotNumeric("log of a ball not known to be positive")
    return v.log()


_UNARY = _unary()


def _enclose(expr: sp.Basic, point: sp.Rational | None, prec: int) -> Ball:
    with _precision(prec) as flint:
        try:
            value = _Walker(flint, point).ev(expr)
        except (ZeroDivisionError, ValueError, OverflowError) as err:
            raise NotNumeric(str(err) or type(err).__name__) from None
        if value.is_nan():
            raise NotNumeric("no finite value (nan)")
        return Ball(value, prec)


def enclose(expr: sp.Basic, point: Fraction | int | sp.Rational, prec: int = PRECISIONS[0]) -> Ball:
    """A rigorous enclosure of ``expr`` at ``z = point`` (an exact rational) at ``prec`` bits."""
    if expr.free_symbols - {Z}:
        raise NotNumeric("free parameters: " + ", ".join(sorted(str(s) for s in expr.free_symbols - {Z})))
    return _enclose(expr, _sympy_rational(point), prec)


def enclose_constant(expr: sp.Basic, prec: int = PRECISIONS[0]) -> Ball:
    """A rigorous enclosure of a constant (no ``z``, no parameters)."""
    if expr.free_symbols:
        raise NotNumeric("free symbols: " + ", ".join(sorted(str(s) for s in expr.free_symbols)))
    return _enclose(expr, None, prec)


def nonzero_enclosure(expr: sp.Basic, point: Fraction | int | sp.Rational | None = None) -> Ball | None:
    """An enclosure of ``expr`` (at ``point``, or of a constant) that excludes 0, raising the
    precision along :data:`PRECISIONS`; None when no precision excludes 0 (the value may be 0)."""
    for prec in PRECISIONS:
        try:
            ball = enclose_constant(expr, prec) if point is None else enclose(expr, point, prec)
        except NotNumeric:
            return None
        if ball.excludes_zero:
            return ball
        if ball.value.is_exact():
            return None  # exactly 0
    return None


def constant_sign(expr: sp.Basic) -> int | None:
    """The sign of a real constant when an enclosure decides it (exact zero: 0), else None."""
    if expr.is_Rational:
        return int(sp.sign(expr))
    for prec in PRECISIONS:
        try:
            ball = enclose_constant(expr, prec)
        except NotNumeric:
            return None
        if ball.excludes_zero:
            return ball.sign
        if ball.value.is_exact() and ball.value == 0:
            return 0
    return None
