"""Exact Taylor coefficients at 0 by truncated power-series arithmetic over the expression tree.

Sums and products of truncated series are exact; a function ``f`` applied to a series
``a₀ + u(z)`` (``u(0) = 0``) is ``Σ_k f⁽ᵏ⁾(a₀)/k! · u^k``, with the derivatives of ``f`` taken
symbolically and evaluated at the exact constant ``a₀``. So the coefficients are exact
expressions in the constants of σ (``√2``, ``π``, ``log 2``…), never rounded.

This replaces SymPy's ``series`` on the smooth pieces of an activation: ``series`` spent minutes
on ``(cosh² z − sinh² z − 1)/(1 + z²)`` and seconds on Mish, where the truncated arithmetic takes
milliseconds (the hidden zero cancels coefficient by coefficient, in rationals). It applies only
where every node is analytic at the expansion point, which the caller has already proved
(:func:`.structure.analytic_at`); a node it does not know gives ``None`` and the caller falls
back to ``series``.
"""

from __future__ import annotations

import functools

import sympy as sp

from ..model.functions import Z
from .identity import exact_sign

__all__ = ["normal_coefficient", "taylor"]

Series = tuple[sp.Expr, ...]

_X = sp.Dummy("x")
_FUNCTIONS = (sp.exp, sp.log, sp.sin, sp.cos, sp.sinh, sp.cosh, sp.tanh, sp.atan, sp.erf, sp.erfc)


class _Unsupported(Exception):
    pass


def normal_coefficient(c: sp.Expr) -> sp.Expr:
    """A cheap exact normal form of a constant: hyperbolic functions of logarithms become
    rationals (``tanh(log 2) = 3/5``), then ``expand`` and ``cancel``. Every step is an identity."""
    if c.is_Rational:
        return c
    if c.has(sp.tanh, sp.sinh, sp.cosh):
        hyper = [a for a in c.atoms(sp.tanh, sp.sinh, sp.cosh) if a.args[0].has(sp.log)]
        if hyper:
            c = c.xreplace({a: a.rewrite(sp.exp) for a in hyper})
    out = sp.expand(c)
    if out.is_Add or out.is_Mul or out.is_Pow:
        out = sp.expand(sp.cancel(out))
    return out


def _add(a: Series, b: Series) -> Series:
    return tuple(x + y for x, y in zip(a, b, strict=True))


def _mul(a: Series, b: Series) -> Series:
    n = len(a)
    out = []
    for k in range(n):
        terms = [a[i] * b[k - i] for i in range(k + 1) if a[i] != 0 and b[k - i] != 0]
        out.append(sp.expand(sp.Add(*terms)) if terms else sp.S.Zero)
    return tuple(out)


def _const(c: sp.Expr, n: int) -> Series:
    return (c,) + (sp.S.Zero,) * (n - 1)


@functools.lru_cache(maxsize=1024)
def _derivative(f: type, k: int) -> sp.Expr:
    return sp.diff(f(_X), _X, k) if k else f(_X)


def _compose(f: type, s: Series) -> Series:
    """``f(s)`` for a series ``s`` with constant term ``a₀`` where ``f`` is analytic."""
    n = len(s)
    a0 = s[0]
    if f is sp.log and exact_sign(a0) != 1:
        raise _Unsupported("log at a point not known to be positive")
    u = (sp.S.Zero, *s[1:])
    out = _const(sp.S.Zero, n)
    power = _const(sp.S.One, n)
    for k in range(n):
        coeff = normal_coefficient(_derivative(f, k).xreplace({_X: a0}) / sp.factorial(k))
        if coeff.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
            raise _Unsupported("a derivative is not finite at the point")
        if coeff != 0:
            out = _add(out, tuple(coeff * p for p in power))
        power = _mul(power, u)
    return out


def _power(s: Series, r: sp.Rational) -> Series:
    n = len(s)
    if r.is_Integer and r >= 0:
        out = _const(sp.S.One, n)
        base = s
        e = int(r)
        while e:
            if e & 1:
                out = _mul(out, base)
            e >>= 1
            if e:
                base = _mul(base, base)
        return out
    a0 = s[0]
    sign = exact_sign(a0)
    if sign is None or sign == 0 or (not r.is_Integer and sign < 0):
        raise _Unsupported("a power at a base not known to be nonzero (positive)")
    # (a0 + u)^r = a0^r (1 + u/a0)^r = a0^r Σ binom(r, k) (u/a0)^k
    u = tuple(c / a0 for c in (sp.S.Zero, *s[1:]))
    out = _const(sp.S.Zero, n)
    power = _const(sp.S.One, n)
    for k in range(n):
        out = _add(out, tuple(sp.binomial(r, k) * p for p in power))
        power = _mul(power, u)
    lead = normal_coefficient(a0 ** r)
    return tuple(sp.expand(lead * c) for c in out)


def _series(e: sp.Expr, n: int) -> Series:
    if not e.has(Z):
        return _const(e, n)
    if e == Z:
        return (sp.S.Zero, sp.S.One) + (sp.S.Zero,) * (n - 2) if n > 1 else (sp.S.Zero,)
    if isinstance(e, sp.Add):
        out = _const(sp.S.Zero, n)
        for a in e.args:
            out = _add(out, _series(a, n))
        return out
    if isinstance(e, sp.Mul):
        out = _const(sp.S.One, n)
        for a in e.args:
            out = _mul(out, _series(a, n))
        return out
    if isinstance(e, sp.Pow):
        base, exp = e.args
        if exp.has(Z):
            return _series(sp.exp(exp * sp.log(base)), n)
        if not exp.is_Rational:
            raise _Unsupported("a power with an irrational exponent")
        return _power(_series(base, n), exp)
    if isinstance(e, _FUNCTIONS):
        return _compose(type(e), _series(e.args[0], n))
    raise _Unsupported(type(e).__name__)


@functools.lru_cache(maxsize=512)
def taylor(expr: sp.Expr, order: int) -> Series | None:
    """The coefficients of ``z^0 … z^order`` of ``expr`` at 0 (exact), or None when a node is not
    covered. The caller must have proved ``expr`` analytic at 0."""
    try:
        raw = _series(expr, order + 1)
    except (_Unsupported, RecursionError):
        return None
    return tuple(normal_coefficient(c) for c in raw)
