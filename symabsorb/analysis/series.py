"""Taylor coefficients at 0, for activations analytic there; a proof of non-analyticity otherwise."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import sympy as sp

from ..model.functions import Z
from .continuity import jump_at
from .facts import Evidence, Stage, Step, proved, refuted, unknown
from .identity import exact_sign, simplified
from .piecewise import piecewise_form
from .structure import analytic_at
from .taylor import taylor

__all__ = ["SeriesFact", "series_fact", "taylor_coefficients"]


@dataclass(frozen=True)
class SeriesFact:
    """``evidence`` is about analyticity at 0; ``coefficients[k]`` multiplies ``z^k``."""

    evidence: Evidence
    analytic_at_0: bool | None
    coefficients: tuple[sp.Expr, ...]
    order: int


@functools.lru_cache(maxsize=512)
def taylor_coefficients(expr: sp.Expr, order: int) -> tuple[sp.Expr, ...]:
    """Coefficients of ``z^0 .. z^order`` of an expression analytic at 0 (exact truncated series
    arithmetic, :mod:`.taylor`; SymPy's ``series`` only for nodes it does not cover)."""
    fast = taylor(expr, order)
    if fast is not None:
        return fast
    poly = sp.series(expr, Z, 0, order + 1).removeO()
    poly = sp.expand(poly)
    return tuple(simplified(poly.coeff(Z, k))
                 for k in range(order + 1))


def _beyond_digits(coeffs: tuple[sp.Expr, ...]) -> str | None:
    """Why exact coefficients cannot be shown: one holds a number beyond the `digits` limit (Python
    cannot even print it: ``exp(10^3000 z)`` has ``10^24000/8!`` at order 8), else None."""
    from ..budget import current

    limit = current().limits.digits
    for k, c in enumerate(coeffs):
        for number in c.atoms(sp.Rational):
            bits = max(abs(number.p).bit_length(), number.q.bit_length())
            if bits > limit * 3.3219280948873626:
                return (f"the coefficient of z^{k} has about {int(bits / 3.3219280948873626)} digits, beyond the "
                        f"`digits` limit ({limit}; raise it with `--limit digits=N`)")
    return None


@functools.lru_cache(maxsize=512)
def series_fact(expr: sp.Expr, order: int = 8) -> SeriesFact:
    form = piecewise_form(expr)
    if form is None:
        return SeriesFact(unknown("the case splits of σ could not be decided exactly"), None, (), order)
    piece = form.piece_at(sp.S.Zero)
    if piece is not None:
        if not analytic_at(piece.expr, sp.S.Zero):
            return SeriesFact(unknown("σ is not shown analytic at 0"), None, (), order)
        coeffs = taylor_coefficients(piece.expr, order)
        too_large = _beyond_digits(coeffs)
        if too_large is not None:
            return SeriesFact(unknown(too_large), None, (), order)
        poly = sum((c * Z**k for k, c in enumerate(coeffs)), sp.S.Zero)
        where = "σ" if form.is_single else f"near 0, σ(z) = {sp.sstr(piece.expr)}, which"
        return SeriesFact(proved(Stage.SERIES,
                                 Step(f"{where} is built from functions analytic at 0"),
                                 Step(f"Taylor polynomial to order {order}", poly + sp.O(Z ** (order + 1)))),
                          True, coeffs, order)
    state, lv, v0, rv = jump_at(form, sp.S.Zero)
    if state == 1:
        return SeriesFact(refuted(Stage.SYMBOLIC, Step("σ is not continuous at 0 (left value, σ(0), right value)",
                                                        sp.Tuple(lv, v0, rv))), False, (), order)
    left, right = form.left_of(sp.S.Zero), form.right_of(sp.S.Zero)
    if analytic_at(left.expr, sp.S.Zero) and analytic_at(right.expr, sp.S.Zero):
        cl = taylor_coefficients(left.expr, order)
        cr = taylor_coefficients(right.expr, order)
        for k, (a, b) in enumerate(zip(cl, cr, strict=True)):
            if exact_sign(a - b) not in (0, None):
                return SeriesFact(refuted(Stage.SERIES,
                                          Step("0 is a breakpoint between the pieces", sp.Tuple(left.expr, right.expr)),
                                          Step(f"their z^{k} coefficients at 0 differ, so no single power series "
                                               "represents σ near 0", sp.Ne(a, b))),
                                  False, (), order)
        return SeriesFact(unknown(f"the pieces at 0 agree up to order {order}; analyticity is not decided"),
                          None, (), order)
    return SeriesFact(unknown("a piece next to 0 is not shown analytic at 0"), None, (), order)
