"""Hypotheses of Theorem W (exact minimal width, docs/theorems.md#width): dilate independence for positive dilates
(DI) and the line-module property (LM)."""

from __future__ import annotations

from typing import Any

import sympy as sp

from ..analysis.identity import exact_zero
from ..analysis.posdilates import positive_dilate_fact
from .checks import Subject, registrar, simple
from .derivation import HypothesisCheck, HypStatus

__all__ = ["CHECKERS", "line_module"]

CHECKERS, hypothesis = registrar()

_DI = ("distinct positive dilates of $\\sigma$ are independent modulo polynomials: for distinct $\\mu_k > 0$, "
       "$\\sum_k C_k\\,\\sigma(\\mu_k t)$ a polynomial forces every $C_k = 0$")


@hypothesis("positive_dilates_independent",
            "dilate independence (DI): for distinct `μ_k > 0`, `Σ C_k σ(μ_k t)` a polynomial forces every `C_k = 0`")
def _positive_dilates(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    if s.the_block.gated:
        return simple("positive_dilates_independent", HypStatus.REFUTED, _DI, "the block is gated")
    fact = positive_dilate_fact(s.the_block.activation.expr)
    ev = fact.evidence
    status = HypStatus.PROVED if ev.proved else HypStatus.UNKNOWN
    return simple("positive_dilates_independent", status, _DI, "" if ev.proved else ev.reason,
                  evidence=(("dilates", ev),))


def line_module(s: Subject) -> tuple[HypStatus, str, sp.Expr | None, str]:
    """``(status, clause or reason, c, DI text)``: LM's clause ("homogeneous" or "dilates") when proved."""
    if s.the_block.gated:
        return HypStatus.REFUTED, "the block is gated", None, ""
    facts = s.facts()
    sym = facts.symmetry
    if sym.kind != "linear-odd":
        if facts.parity.odd_linear_constant is not None and \
                exact_zero(facts.parity.odd_linear_constant) is True:
            return HypStatus.REFUTED, "the odd part of σ is 0 (c = 0)", None, ""
        return HypStatus.UNKNOWN, ("Sym(σ) is not proved to have the remainders {0, 2c·t} with c ≠ 0"
                                   + (f" ({sym.evidence.reason})" if sym.evidence.reason else "")), None, ""
    c = sym.flip_constant
    homog = facts.homogeneity
    if homog.evidence.proved and homog.degree is not None and homog.degree == 1:
        return HypStatus.PROVED, "homogeneous", c, ""
    kept = {(k.mu, sp.sstr(k.kappa)) for k in sym.kept}
    if kept != {("1", "1"), ("-1", "1")}:
        return HypStatus.UNKNOWN, "Sym(σ) is neither a degree-1 homogeneous family nor {(±1, 1)}", c, ""
    di = positive_dilate_fact(s.the_block.activation.expr)
    if not di.evidence.proved:
        return HypStatus.UNKNOWN, "DI is not proved: " + di.evidence.reason, c, ""
    return HypStatus.PROVED, "dilates", c, di.evidence.steps[0].text


@hypothesis("line_module",
            "line-module property (LM): σ positively homogeneous of degree 1 with `σ(t) − σ(−t) = 2ct`, `c ≠ 0`; or "
            "`Sym(σ) = {(±1, 1)}` with remainder `2ct`, `c ≠ 0`, and DI",
            binds=("c",))
def _line_module(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    statement = ("the line-module property: on a line $\\mathbb{R}w$ the $\\sigma$-units give exactly "
                 "$\\alpha\\,\\sigma(w^\\top x) + \\beta\\,w^\\top x$ ($\\sigma$ positively homogeneous of degree 1 with "
                 "$\\sigma(t) - \\sigma(-t) = 2c\\,t$, $c \\ne 0$; or $\\mathrm{Sym}(\\sigma) = \\{(\\pm 1, 1)\\}$ with "
                 "remainder $2c\\,t$, $c \\ne 0$, and " + _DI + ")")
    status, clause, c, di = line_module(s)
    sym = s.facts().symmetry.evidence if not s.the_block.gated else None
    evidence = (("symmetry", sym),) if sym is not None else ()
    if status is not HypStatus.PROVED:
        return simple("line_module", status, statement, clause, evidence=evidence)
    assert c is not None
    how = ("σ is positively homogeneous of degree 1 (proved)" if clause == "homogeneous"
           else "Sym(σ) = {(1, 1), (−1, 1)} (proved) and DI: " + di)
    return simple("line_module", HypStatus.PROVED, statement + f" (here $c = {sp.latex(c)}$; {how})",
                  bindings={"c": c}, evidence=evidence)
