"""Whether σ is proved real-valued and finite on all of R (conservative, structural, cheap).

Every result of the library is about functions ``σ : R → R``. A verdict may rest on a fact only
when σ is proved real and finite at every real ``z``: the imaginary unit anywhere (``sqrt(-4)``
is ``2i``; ``tanh(z) + i·erf(i·z)`` is real but nothing here proves it), a logarithm or a
fractional power of an argument not proved positive / nonnegative, or a negative power of a
base not proved nonzero (``sin(z)/cos(z)`` has poles) leaves the question undecided. A rational
polynomial is proved positive / nonzero by exact real-root isolation (``1/(z^2 + z + 1)`` is real),
and a real root of a divisor is named (``z/(z^2 - 2)``: 0 at ``z = -sqrt(2)``). A walk
over the tree with SymPy's assumptions (``z`` is a real symbol); no simplification.
"""

from __future__ import annotations

import functools

import sympy as sp

from ..model.domain import first_real_root, proved_nonzero_on_reals, proved_positive_on_reals
from ..model.functions import Z

__all__ = ["not_proved_real"]

#: Functions real and finite at every real argument.
_REAL_TOTAL = (sp.exp, sp.sin, sp.cos, sp.sinh, sp.cosh, sp.erf, sp.erfc, sp.tanh, sp.atan, sp.Abs, sp.sign,
               sp.Heaviside)


@functools.lru_cache(maxsize=1024)
def not_proved_real(expr: sp.Expr) -> str | None:
    """None when σ is proved real-valued and finite on R; otherwise why not (σ may still be real).

    Checked on the whole expression, else piece by piece on the piecewise normal form (on a piece
    inside ``z > 0`` the variable is known positive, so ``if z > 0 then z*log(z) else ...`` is real)
    with the exact value at every breakpoint."""
    if expr.has(sp.I):
        return "σ contains the imaginary unit i (e.g. from the square root of a negative number)"
    whole = _reason(expr, Z)
    if whole is None or not expr.has(Z):
        return whole
    from .piecewise import piecewise_form

    form = piecewise_form(expr)
    if form is None or form.is_single:
        return whole
    for piece in form.pieces:
        if piece.lo.is_extended_nonnegative is True:
            var, e = _POS, piece.expr.xreplace({Z: _POS})
        elif piece.hi.is_extended_nonpositive is True:
            var, e = _POS, piece.expr.xreplace({Z: -_POS})
        else:
            var, e = Z, piece.expr
        why = _reason(e, var)
        if why is not None:
            return why.replace(_POS.name, "|z|")
    for b in form.breakpoints:
        v = expr.xreplace({Z: b})
        if not (isinstance(v, sp.Expr) and v.is_extended_real is True and v.is_finite is True):
            return f"the value of σ at the breakpoint z = {sp.sstr(b)} is not proved real and finite"
    return None


#: A positive variable standing for z on a piece inside z > 0 (or for −z on one inside z < 0).
_POS = sp.Symbol("z_pos", positive=True)


def _reason(e: sp.Basic, z: sp.Symbol) -> str | None:
    if e.has(sp.I):
        return "σ contains the imaginary unit i (e.g. from the square root of a negative number)"
    if not e.has(z):
        if isinstance(e, sp.Expr) and e.is_extended_real is True and e.is_finite is True:
            return None
        return f"the constant {sp.sstr(e)} is not proved real and finite"
    if e == z:
        return None
    if isinstance(e, (sp.Add, sp.Mul, sp.Max, sp.Min)):
        return _first(e.args, z)
    if isinstance(e, sp.Piecewise):
        return _first([branch for branch, _ in e.args], z)
    if isinstance(e, _REAL_TOTAL):
        return _first(e.args, z)
    if isinstance(e, sp.log):
        return _first(e.args, z) or (None if _positive(e.args[0], z) else
                                  f"the argument of {sp.sstr(e)} is not proved positive on R")
    if isinstance(e, sp.Pow):
        base, exp = e.args
        inner = _first((base, exp), z)
        if inner is not None:
            return inner
        if exp.has(z):
            return None if _positive(base, z) else f"the base of {sp.sstr(e)} is not proved positive on R"
        if exp.is_Integer and exp >= 0:
            return None
        if exp.is_Integer:
            if not base.has(z):  # a constant base: the exact sign decision (a hidden zero is 0: a pole)
                from .identity import exact_zero

                zero = exact_zero(base)
                if zero is False:
                    return None
                if zero is True:
                    return f"{sp.sstr(base)} is 0 (exactly): σ has a pole"
                return f"{sp.sstr(base)} is not proved nonzero: σ may have a pole"
            if base.is_nonzero is True or (z is Z and proved_nonzero_on_reals(base)):
                return None
            root = first_real_root(base) if z is Z else None
            if root is not None:
                return f"{sp.sstr(base)} is 0 at z = {sp.sstr(root)} (exactly): σ may have a pole there"
            return f"{sp.sstr(base)} is not proved nonzero on R: σ may have a pole"
        if exp.is_Rational and exp > 0:
            return None if base.is_nonnegative is True or _positive(base, z) else (
                f"the base of {sp.sstr(e)} is not proved nonnegative on R")
        return None if _positive(base, z) else f"the base of {sp.sstr(e)} is not proved positive on R"
    return f"{type(e).__name__} is not known to be real and finite on R"


def _positive(e: sp.Expr, z: sp.Symbol) -> bool:
    """``e > 0`` on R, proved (SymPy's deductive sign; for ``z`` itself also exact real-root isolation of a
    rational polynomial: ``z^2 + z + 1``)."""
    return e.is_positive is True or (z is Z and proved_positive_on_reals(e))


def _first(args: object, z: sp.Symbol) -> str | None:
    for a in args:  # type: ignore[attr-defined]
        r = _reason(a, z)
        if r is not None:
            return r
    return None
