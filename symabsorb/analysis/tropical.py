"""The tropical limit of σ (Lemma T): slopes ``α₊``, ``α₋`` with ``σ(s) = α_± s + o(|s|)`` at ``±∞``.

Exact steps only. The slope at an end is read off an outer piece that is a polynomial of degree
at most 1, or proposed from a rigorous enclosure of ``σ(s)/s`` far out (python-flint ``arb``) and
then **proved**: ``σ(s) − α s = o(s)`` by the bound calculus of :mod:`.growth` on the same function
written with the exact identities ``erf u = 1 − erfc u``, ``tanh u = 1 − 2/(1 + e^{2u})`` and
``log(1 + e^u) = u + log(1 + e^{−u})`` (the
calculus cannot cancel ``z − z·erf(z)`` itself). A proposal that is not proved is ``unknown``;
numbers never decide.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from ..model.functions import Z
from .growth import size_at_infinity
from .piecewise import piecewise_form
from .realness import not_proved_real

__all__ = ["Asymptote", "Slope", "asymptote_at_infinity", "slope_at_infinity"]

#: Far-out points (powers of two) at which σ(s)/s is enclosed to propose a slope.
_FAR = (2**40, 2**80)
#: Largest denominator of a proposed slope.
_MAX_DENOMINATOR = 10_000


@dataclass(frozen=True)
class Slope:
    """``σ(s) = value·s + o(|s|)`` as ``s → direction·∞`` (``value`` None: not proved), and how."""

    direction: int
    value: sp.Rational | None
    how: str


def _rewrites(e: sp.Expr) -> list[sp.Expr]:
    """``e`` and exact rewritings of it that the bound calculus can cancel in."""
    out = [e]
    alt = e.replace(sp.erf, lambda u: 1 - sp.erfc(u)).replace(sp.tanh, lambda u: 1 - 2 / (1 + sp.exp(2 * u)))
    alt = alt.xreplace({node: _flip_log1p_exp(node) for node in alt.atoms(sp.log) if _is_log1p_exp(node)})
    for form in (alt, sp.expand(alt), sp.together(alt), sp.expand(sp.together(alt))):
        if form not in out:
            out.append(form)
    return out


def _is_log1p_exp(node: sp.Basic) -> bool:
    if not isinstance(node, sp.log) or not isinstance(node.args[0], sp.Add):
        return False
    terms = node.args[0].args
    return len(terms) == 2 and sp.Integer(1) in terms and any(isinstance(x, sp.exp) for x in terms)


def _flip_log1p_exp(node: sp.Basic) -> sp.Expr:
    """``log(1 + e^u) = u + log(1 + e^{−u})`` for every real ``u``."""
    u = next(x for x in node.args[0].args if isinstance(x, sp.exp)).args[0]
    return u + sp.log(1 + sp.exp(-u))


def _sublinear(e: sp.Expr) -> bool:
    """``e = o(z)`` as ``z → +∞``, proved by the bound calculus on ``e`` or an exact rewriting of it."""
    for form in _rewrites(e):
        try:
            size = size_at_infinity(form)
        except (TypeError, ValueError, RecursionError, ZeroDivisionError):
            continue
        if size is not None and size.up is not None and size.up < (Fraction(1), Fraction(0)):
            return True
    return False


def _proposal(g: sp.Expr) -> sp.Rational | None:
    """A rational near ``lim g(t)/t`` from enclosures at two far points (None: no clear proposal)."""
    from .enclosure import NotNumeric, enclose

    mids = []
    for t in _FAR:
        try:
            ball = enclose(g / Z, t, 256)
        except (NotNumeric, ValueError, ZeroDivisionError, OverflowError):
            return None
        if not ball.value.is_finite() or float(ball.value.rad()) > 1e-9:
            return None
        mids.append(Fraction(float(ball.value.mid())))  # a proposal only: rounding is allowed here
    if abs(mids[0] - mids[1]) > Fraction(1, 10**6):
        return None
    q = mids[1].limit_denominator(_MAX_DENOMINATOR)
    return sp.Rational(q.numerator, q.denominator)


@functools.lru_cache(maxsize=512)
def slope_at_infinity(expr: sp.Expr, direction: int) -> Slope:
    """The slope of σ at ``direction·∞`` (``direction`` is +1 or −1), proved exactly, or None with why."""
    end = "+∞" if direction > 0 else "−∞"
    why = not_proved_real(expr)
    if why is not None:
        return Slope(direction, None, f"σ is not proved real-valued and finite on R: {why}")
    form = piecewise_form(expr)
    if form is None:
        return Slope(direction, None, "the case splits of σ could not be decided exactly")
    piece = form.pieces[-1].expr if direction > 0 else form.pieces[0].expr
    g = sp.expand(piece.xreplace({Z: direction * Z}))  # g(t) = σ(direction·t), t → +∞
    if g.is_polynomial(Z) and sp.Poly(g, Z).degree() <= 1 and not (g.free_symbols - {Z}):
        beta = sp.Poly(g, Z).coeff_monomial(Z)
        if beta.is_Rational:
            alpha = beta * direction
            return Slope(direction, alpha, f"σ is the polynomial {sp.sstr(piece)} near {end}: slope {alpha}")
    if g.free_symbols - {Z}:
        return Slope(direction, None, "σ has free parameters")
    beta = _proposal(g)
    if beta is None:
        return Slope(direction, None, f"no slope at {end} is suggested by enclosures of σ(s)/s")
    if not _sublinear(g - beta * Z):
        return Slope(direction, None, f"σ(s) − {sp.sstr(beta * direction)}·s = o(|s|) at {end} is not proved by the "
                     "bound rules")
    alpha = beta * direction
    return Slope(direction, alpha, f"σ(s) − {sp.sstr(alpha)}·s = o(|s|) at {end}, proved by the bound rules "
                 "(after exact rewritings: erf = 1 − erfc, tanh u = 1 − 2/(1 + exp(2u)), log(1 + exp u) = u + log(1 + exp(−u)))")


@dataclass(frozen=True)
class Asymptote:
    """``σ(s) − (slope·s + intercept) → 0`` as ``s → direction·∞`` (both exact; None: not proved), and how."""

    direction: int
    slope: sp.Expr | None
    intercept: sp.Expr | None
    how: str


def _vanishing(e: sp.Expr) -> bool:
    """``e → 0`` as ``z → +∞`` (``e = o(1)``), proved by the bound calculus."""
    try:
        size = size_at_infinity(e)
    except (TypeError, ValueError, RecursionError, ZeroDivisionError):
        return False
    return size is not None and size.up is not None and size.up < (Fraction(0), Fraction(0))


@functools.lru_cache(maxsize=512)
def asymptote_at_infinity(expr: sp.Expr, direction: int) -> Asymptote:
    """The asymptote of σ at ``direction·∞``: the slope of :func:`slope_at_infinity` and an exact
    intercept ``β``, proved by writing ``σ(d·t) − α·d·t`` (or an exact rewriting of it) as a constant
    ``β`` plus terms whose sum the bound calculus proves ``o(1)``. Numbers never decide."""
    end = "+∞" if direction > 0 else "−∞"
    slope = slope_at_infinity(expr, direction)
    if slope.value is None:
        return Asymptote(direction, None, None, slope.how)
    form = piecewise_form(expr)
    assert form is not None  # slope_at_infinity has read it
    piece = form.pieces[-1].expr if direction > 0 else form.pieces[0].expr
    g = sp.expand(piece.xreplace({Z: direction * Z}) - slope.value * direction * Z)  # σ(d·t) − α·d·t
    for e in _rewrites(g):
        terms = sp.Add.make_args(sp.expand(e))
        beta = sp.Add(*(t for t in terms if not t.has(Z)))
        rest = sp.Add(*(t for t in terms if t.has(Z)))
        if beta.free_symbols or not (rest == 0 or _vanishing(rest)):
            continue
        return Asymptote(direction, slope.value, beta, f"σ(s) − ({sp.sstr(slope.value)}·s + {sp.sstr(beta)}) → 0 at "
                         f"{end} (the remainder {sp.sstr(rest)} of σ(s) − {sp.sstr(slope.value)}·s is o(1) by the bound "
                         "rules)" if rest != 0 else f"σ is {sp.sstr(piece)} near {end}")
    return Asymptote(direction, slope.value, None, f"no exact intercept of σ at {end}: σ(s) − {sp.sstr(slope.value)}·s "
                     "is not proved to be a constant plus o(1)")
