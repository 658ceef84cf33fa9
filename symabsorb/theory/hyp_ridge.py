"""Hypotheses of the Part II ridge results: dilate independence (Theorem SDI, MATH §11)."""

from __future__ import annotations

from typing import Any

from ..analysis.dilates import dilate_fact
from .checks import Subject, registrar, simple
from .derivation import HypothesisCheck, HypStatus

__all__ = ["CHECKERS"]

CHECKERS, hypothesis = registrar()


@hypothesis("dilate_independent")
def _dilate_independent(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    statement = ("distinct dilates of $\\sigma$ are independent modulo polynomials: for distinct $\\mu_k \\ne 0$, "
                 "$\\sum_k C_k\\,\\sigma(\\mu_k t)$ a polynomial forces every $C_k = 0$ (so $\\mathrm{Sym}(\\sigma) = "
                 "\\{(1,1)\\}$ with remainder $0$)")
    if s.the_block.gated:
        return simple("dilate_independent", HypStatus.REFUTED, statement, "the block is gated")
    ev = dilate_fact(s.the_block.activation.expr).evidence
    if ev.proved:
        return simple("dilate_independent", HypStatus.PROVED, statement, evidence=(("dilates", ev),))
    return simple("dilate_independent", HypStatus.UNKNOWN, statement, ev.reason, evidence=(("dilates", ev),))
