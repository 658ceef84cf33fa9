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
import math

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


# Closed forms of f⁽ᵏ⁾(x): SymPy's ``diff(tanh(x), x, k)`` builds an unexpanded product tree that
# grows with k, and every new node asks the assumptions system about itself (0.17 s for tanh up
# to k = 8, 0.1 s for erf). Here the derivatives are integer polynomials in one atom, each from the
# previous one by exact integer arithmetic:
#   tanh⁽ᵏ⁾ = P_k(tanh x),            P_0 = t,  P_{k+1} = P_k'(t)·(1 − t²)
#   erf⁽ᵏ⁾ = 2/√π · H_k(x) · e^{−x²},  H_1 = 1,  H_{k+1} = H_k' − 2x·H_k   (erfc = 1 − erf)
#   log⁽ᵏ⁾ = (−1)^{k−1} (k−1)! x^{−k};  exp, sin, cos, sinh, cosh cycle.
# tests/unit/analysis/test_taylor_derivatives.py checks each against ``diff`` (their difference expands to 0).
Poly = tuple[int, ...]  # integer coefficients, constant term first


def _poly_derivative(p: Poly) -> Poly:
    return tuple(i * c for i, c in enumerate(p))[1:] or (0,)


def _poly_mul(p: Poly, q: Poly) -> Poly:
    out = [0] * (len(p) + len(q) - 1)
    for i, a in enumerate(p):
        if a:
            for j, b in enumerate(q):
                out[i + j] += a * b
    return tuple(out)


def _poly_add(p: Poly, q: Poly) -> Poly:
    n = max(len(p), len(q))
    return tuple((p[i] if i < len(p) else 0) + (q[i] if i < len(q) else 0) for i in range(n))


@functools.lru_cache(maxsize=256)
def _tanh_poly(k: int) -> Poly:
    return (0, 1) if k == 0 else _poly_mul(_poly_derivative(_tanh_poly(k - 1)), (1, 0, -1))


@functools.lru_cache(maxsize=256)
def _erf_poly(k: int) -> Poly:
    if k == 1:
        return (1,)
    prev = _erf_poly(k - 1)
    return _poly_add(_poly_derivative(prev), _poly_mul((0, -2), prev))


def _in(p: Poly, atom: sp.Expr) -> sp.Expr:
    return sp.Add(*[c * atom**i for i, c in enumerate(p) if c])


_CYCLES = {sp.exp: (sp.exp,), sp.sin: (sp.sin, sp.cos, lambda x: -sp.sin(x), lambda x: -sp.cos(x)),
           sp.cos: (sp.cos, lambda x: -sp.sin(x), lambda x: -sp.cos(x), sp.sin),
           sp.sinh: (sp.sinh, sp.cosh), sp.cosh: (sp.cosh, sp.sinh)}


@functools.lru_cache(maxsize=1024)
def _derivative(f: type, k: int) -> sp.Expr:
    """The k-th derivative of ``f`` at the dummy ``_X`` (the same function as ``diff(f(x), x, k)``)."""
    if not k:
        return f(_X)
    if f in _CYCLES:
        cycle = _CYCLES[f]
        return cycle[k % len(cycle)](_X)
    if f is sp.tanh:
        return _in(_tanh_poly(k), sp.tanh(_X))
    if f is sp.log:
        return sp.Integer((-1) ** (k - 1) * math.factorial(k - 1)) * _X ** (-k)
    if f is sp.erf or f is sp.erfc:
        sign = 1 if f is sp.erf else -1
        return sign * 2 / sp.sqrt(sp.pi) * _in(_erf_poly(k), _X) * sp.exp(-_X**2)
    return sp.diff(f(_X), _X, k)


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
