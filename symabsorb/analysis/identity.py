"""Deciding ``f ≡ 0`` and ``f ≡ const``: SymPy simplification proves, mpmath only refutes.

``Expr.equals`` is randomized in SymPy and is never used as a proof here.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import sympy as sp

from ..model.functions import Z
from .numeric import NotNumeric, evaluate, is_clearly_nonzero, sample_points

__all__ = [
    "exact_sign",
    "find_nonconstant_points",
    "find_nonzero_point",
    "is_free_of_z",
    "prove_zero",
    "simplified",
]


@functools.lru_cache(maxsize=4096)
def simplified(e: sp.Expr) -> sp.Expr:
    """A simpler equal expression (``simplify`` after cheap normalisations)."""
    if e.is_Number or e.is_Symbol:
        return e
    cheap = sp.expand(e)
    if cheap == 0 or (not cheap.has(Z) and cheap.is_Number):
        return cheap
    out = sp.simplify(e)
    if out != 0 and out.has(sp.exp, sp.log):
        alt = sp.simplify(sp.expand_log(sp.powsimp(out), force=False))
        if sp.count_ops(alt) < sp.count_ops(out):
            out = alt
    return out


def is_free_of_z(e: sp.Expr) -> bool:
    return Z not in e.free_symbols


def prove_zero(e: sp.Expr) -> bool:
    """True only when ``e`` simplifies to exactly 0 (a proof); False means "not shown"."""
    if e == 0:
        return True
    return bool(simplified(e) == 0)


def find_nonzero_point(e: sp.Expr, points: tuple[Fraction, ...] | None = None,
                       lo: sp.Expr | None = None, hi: sp.Expr | None = None) -> tuple[Fraction, object] | None:
    """A rational point (in ``(lo, hi)`` when given) where ``e`` is clearly nonzero, else None."""
    for p in points or tuple(sample_points()):
        if lo is not None and lo != -sp.oo and not bool(sp.Rational(p.numerator, p.denominator) > lo):
            continue
        if hi is not None and hi != sp.oo and not bool(sp.Rational(p.numerator, p.denominator) < hi):
            continue
        try:
            v = evaluate(e, p)
        except NotNumeric:
            return None
        if is_clearly_nonzero(v):
            return p, v
    return None


def find_nonconstant_points(e: sp.Expr, lo: sp.Expr | None = None,
                            hi: sp.Expr | None = None) -> tuple[Fraction, Fraction, object, object] | None:
    """Two points in ``(lo, hi)`` where ``e`` clearly takes different values, else None."""
    pts = [p for p in sample_points()
           if (lo is None or lo == -sp.oo or bool(sp.Rational(p.numerator, p.denominator) > lo))
           and (hi is None or hi == sp.oo or bool(sp.Rational(p.numerator, p.denominator) < hi))]
    values = []
    for p in pts:
        try:
            values.append((p, evaluate(e, p)))
        except NotNumeric:
            return None
    for i in range(len(values)):
        for j in range(i + 1, len(values)):
            if is_clearly_nonzero(values[i][1] - values[j][1]):
                return values[i][0], values[j][0], values[i][1], values[j][1]
    return None


def exact_sign(e: sp.Expr) -> int | None:
    """The sign of a constant expression, decided by SymPy, or None."""
    if e.is_zero:
        return 0
    if e.is_positive:
        return 1
    if e.is_negative:
        return -1
    s = sp.simplify(e)
    if s.is_zero:
        return 0
    if s.is_positive:
        return 1
    if s.is_negative:
        return -1
    return None
