"""Hypotheses of the Part II ridge results: dilate independence (Theorem SDI, docs/theorems.md#sdi)."""

from __future__ import annotations

from typing import Any

from ..analysis.dilates import dilate_fact
from .checks import Subject, registrar, simple
from .derivation import HypothesisCheck, HypStatus

__all__ = ["CHECKERS"]

CHECKERS, hypothesis = registrar()


@hypothesis("dilate_independent",
            "distinct dilates of σ are independent modulo polynomials (so `Sym(σ) = {(1,1)}`, remainder 0)")
def _dilate_independent(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    statement = ("inequivalent dilates of $\\sigma$ are independent modulo polynomials, every symmetry having "
                 "remainder $0$: for pairwise inequivalent $\\mu_k \\ne 0$, $\\sum_k C_k\\,\\sigma(\\mu_k t)$ a "
                 "polynomial forces every $C_k = 0$")
    if s.the_block.gated:
        return simple("dilate_independent", HypStatus.REFUTED, statement, "the block is gated")
    ev = dilate_fact(s.the_block.activation.expr).evidence
    if ev.proved:
        return simple("dilate_independent", HypStatus.PROVED, statement, evidence=(("dilates", ev),))
    return simple("dilate_independent", HypStatus.UNKNOWN, statement, ev.reason, evidence=(("dilates", ev),))


def r_pos_form(expr: Any) -> tuple[Any, int, Any, Any] | None:
    """``(c, k, A, B)`` with σ = c·z + A·z^k on z > 0 and c·z + B·z^k on z < 0 (polynomial rays,
    integer ``k ≥ 2``, ``c ≠ 0``, ``A ≠ B`` so that σ is not a polynomial), every coefficient decided
    exactly; None otherwise."""
    import sympy as sp

    from ..analysis.identity import exact_sign
    from ..analysis.piecewise import piecewise_form
    from ..model.functions import Z

    form = piecewise_form(expr)
    if form is None:
        return None
    rays = [form.restricted(sp.S.Zero, sp.oo), form.restricted(-sp.oo, sp.S.Zero)]
    if any(len(r) != 1 for r in rays) or not all(r[0].expr.is_polynomial(Z) for r in rays):
        return None
    if exact_sign(expr.xreplace({Z: sp.S.Zero})) != 0:
        return None
    polys = [sp.Poly(sp.expand(r[0].expr), Z) for r in rays]
    if any(p.free_symbols - {Z} for p in polys):
        return None
    c_plus, c_minus = (p.coeff_monomial(Z) for p in polys)
    if exact_sign(c_plus - c_minus) != 0 or exact_sign(c_plus) in (0, None):
        return None
    degrees = {m[0] for p in polys for m, coeff in p.terms() if m[0] != 1 and exact_sign(coeff) != 0}
    if any(exact_sign(coeff) is None for p in polys for _, coeff in p.terms()) or len(degrees) != 1:
        return None
    (k,) = degrees
    if k < 2:
        return None
    a, b = (p.coeff_monomial(Z**k) for p in polys)
    if exact_sign(a - b) in (0, None):
        return None
    return c_plus, int(k), a, b


@hypothesis("r_pos_form",
            "`σ = cz + q`, `c ≠ 0`, `q = Az^k` (z > 0), `Bz^k` (z < 0), integer `k ≥ 2`, `A ≠ B` (Cor. R-pos)",
            binds=("c_rpos", "k", "A", "B", "AB", "Ncond", "Nplain"))
def _r_pos_form(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    import sympy as sp

    statement = ("$\\sigma(z) = c\\,z + q(z)$ with $c \\ne 0$, $q(z) = A z^k$ ($z > 0$), $B z^k$ ($z < 0$), integer "
                 "$k \\ge 2$, $A \\ne B$ ($q$ not a polynomial)")
    if s.the_block.gated:
        return simple("r_pos_form", HypStatus.REFUTED, statement, "the block is gated")
    found = r_pos_form(s.the_block.activation.expr)
    if found is None:
        return simple("r_pos_form", HypStatus.UNKNOWN, statement,
                      "σ is not shown to be c·z plus A·z^k, B·z^k on the two rays with A ≠ B")
    c, k, a, b = found
    inside = "<" if k % 2 == 1 else ">"
    return simple("r_pos_form", HypStatus.PROVED,
                  statement + f" (here $c = {sp.latex(c)}$, $k = {k}$, $A = {sp.latex(a)}$, $B = {sp.latex(b)}$)",
                  bindings={"c_rpos": c, "k": sp.Integer(k), "A": a, "B": b, "AB": a + b,
                            "Ncond": f"D_{{ii}} {inside} -1", "Nplain": f"D_ii {inside} -1"})
