"""Is σ a polynomial? Ridge-function uniqueness (cited by Thms. 8/10) needs "not a polynomial".

Proofs that σ is *not* a polynomial: (a) two adjacent pieces that are real-analytic on all of R
and differ (a polynomial is one analytic function); (b) a growth bound ``|σ(z)| ≤ C|z|^k`` at both
ends forces a polynomial to have degree ≤ k, while a nonzero Taylor coefficient of a higher order
exists.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import sympy as sp

from ..model.functions import Z
from .continuity import jump_at
from .facts import Evidence, Stage, Step, proved, refuted, unknown
from .growth import growth_fact
from .identity import exact_polynomial, find_nonzero_point, proved_nonzero, simplified
from .piecewise import piecewise_form
from .series import series_fact
from .structure import analytic_on_reals

__all__ = ["PolynomialFact", "polynomial_fact"]


@dataclass(frozen=True)
class PolynomialFact:
    evidence: Evidence  # of "σ is a polynomial"
    value: bool | None
    degree: int | None


@functools.lru_cache(maxsize=512)
def polynomial_fact(expr: sp.Expr) -> PolynomialFact:
    form = piecewise_form(expr)
    if form is None:
        return PolynomialFact(unknown("the case splits of σ could not be decided exactly"), None, None)
    if form.is_single:
        # The refutations first: they are cheap, and when one holds σ is no polynomial, so
        # ``simplify`` (an identity) cannot turn it into one; it is only tried when none holds.
        refutation = _refutation(expr)
        if refutation is not None:
            return refutation
        e = simplified(form.pieces[0].expr)
        if e.is_polynomial(Z):
            coefficients = exact_polynomial(e)  # the degree counts coefficients proved nonzero only
            deg = None if coefficients is None else max(coefficients, default=0)
            return PolynomialFact(proved(Stage.STRUCTURAL, Step("σ simplifies to a polynomial", sp.expand(e))),
                                  True, deg)
        return _NEITHER
    else:
        for b in form.breakpoints:
            state, left, value, right = jump_at(form, b)
            if state == 1:
                return PolynomialFact(refuted(Stage.SYMBOLIC, Step(
                    f"σ is not continuous at z = {b} (left value, σ({b}), right value)", sp.Tuple(left, value, right)),
                    Step("a polynomial is continuous")), False, None)
        for a, b in zip(form.pieces, form.pieces[1:], strict=False):
            if analytic_on_reals(a.expr) and analytic_on_reals(b.expr):
                w = find_nonzero_point(a.expr - b.expr)
                if w is not None:
                    return PolynomialFact(refuted(Stage.NUMERIC_REFUTATION, Step(
                        f"the pieces {sp.sstr(a.expr)} and {sp.sstr(b.expr)} meeting at {a.hi} are analytic on R and "
                        f"differ (at z = {w[0]}); a polynomial is a single analytic function")), False, None)
    return _refutation(expr) or _NEITHER


_NEITHER = PolynomialFact(unknown("neither a polynomial form nor a growth/Taylor contradiction was found"), None, None)


def _refutation(expr: sp.Expr) -> PolynomialFact | None:
    """A proof that σ is not a polynomial from its growth (finite differences, Taylor coefficients)."""
    growth = growth_fact(expr)
    if growth.degree_bound is not None:
        # A polynomial with |p(z)| <= C|z| at both ends has degree <= 1 (<= 0 when o(|z|)), so its
        # second (first) finite differences vanish; a point where they do not refutes.
        bound = 0 if growth.growth_class in ("bounded", "sublinear") else 1
        h = sp.Rational(1, 2)
        diff = (expr.xreplace({Z: Z + h}) - 2 * expr + expr.xreplace({Z: Z - h})) if bound == 1 else \
            (expr.xreplace({Z: Z + h}) - expr)
        w = find_nonzero_point(diff)
        if w is not None:
            what = "second" if bound == 1 else "first"
            return PolynomialFact(refuted(Stage.NUMERIC_REFUTATION,
                                          Step(f"σ is {growth.growth_class} at ±∞, so a polynomial σ would have degree "
                                               f"≤ {bound}"),
                                          Step(f"but its {what} difference with step 1/2 is nonzero at z = {w[0]}")),
                                  False, None)
    series = series_fact(expr, 8)
    if growth.degree_bound is not None and series.analytic_at_0:
        bound = growth.degree_bound
        for k, c in enumerate(series.coefficients):
            if k > bound and proved_nonzero(c):
                return PolynomialFact(refuted(Stage.SERIES,
                                              Step(f"σ grows at most like |z|^{bound}, so a polynomial σ would have "
                                                   f"degree ≤ {bound}"),
                                              Step(f"but the z^{k} Taylor coefficient at 0 is nonzero", c)),
                                      False, None)
    return None
