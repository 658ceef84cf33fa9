"""Hypotheses of Theorem G (gated blocks decided by ``Sym(g)``, docs/theorems.md#gated): the gate's symmetry
remainders and gated nondegeneracy (gate rows nonzero and pairwise non-collinear, up rows and
output columns nonzero)."""

from __future__ import annotations

from typing import Any

import sympy as sp

from .checks import Param, Subject, registrar, simple
from .derivation import HypothesisCheck, HypStatus

__all__ = ["CHECKERS", "gated_nondegeneracy"]

CHECKERS, hypothesis = registrar()

_KINDS = {
    "constant-flip": "remainders $\\{0, K\\}$ with $K \\ne 0$ a constant",
    "vanishing": "every remainder $\\rho$ with $\\rho(0) = 0$",
}


def _sym_latex(kept: tuple[Any, ...]) -> str:
    parts = []
    for c in kept:
        if getattr(c, "family_kappa", None) is not None:
            sign = ">" if c.mu == "mu>0" else "<"
            parts.append(f"(\\mu, {sp.latex(c.family_kappa)})_{{\\mu {sign} 0}}")
        elif c.mu == "mu>0":
            parts.append("(\\lambda, \\lambda)_{\\lambda > 0}")
        elif c.mu == "mu<0":
            parts.append("(\\lambda, |\\lambda|)_{\\lambda < 0}" if c.kappa == 1 else
                         "(\\lambda, -|\\lambda|)_{\\lambda < 0}")
        else:
            parts.append(f"({c.mu}, {sp.latex(c.kappa)})")
    return "\\{" + ", ".join(parts) + "\\}"


@hypothesis("gate_sym",
            "the gate `g` is not a polynomial and `Sym(g)` is proved exactly, with remainders of one of the kinds "
            "`constant-flip` or `vanishing` (Theorem G)",
            params={"kinds": Param("strings", "the admitted kinds of remainders", required=True,
                                   choices=tuple(_KINDS))},
            binds=("K", "c"))
def _gate_sym(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    """``Sym(g)`` proved exactly (so g is continuous-checked elsewhere and proved non-polynomial),
    with remainders of the named kind."""
    kinds = tuple(p.get("kinds", ()))
    statement = ("$g$ is not a polynomial and $\\mathrm{Sym}(g)$ is proved exactly, with "
                 + " or ".join(_KINDS[k] for k in kinds))
    if not s.the_block.gated:
        return simple("gate_sym", HypStatus.REFUTED, statement, "the block is ungated")
    sym = s.facts().symmetry
    ev = sym.evidence
    if not ev.proved:
        return simple("gate_sym", HypStatus.UNKNOWN, statement, f"Sym(g) not decided: {ev.reason}",
                      evidence=(("Sym(g)", ev),))
    rems = ", ".join(sp.latex(r) for r in sym.remainders())
    statement += f" (here $\\mathrm{{Sym}}(g) = {_sym_latex(sym.kept)}$, remainders ${rems}$)"
    kind = sym.gate_kind
    if kind not in kinds:
        return simple("gate_sym", HypStatus.REFUTED, statement,
                      f"the remainders of Sym(g) are of kind {kind or 'another shape'}", evidence=(("Sym(g)", ev),))
    bindings: dict[str, Any] = {}
    if kind == "constant-flip":
        k = sym.gate_flip_constant
        assert k is not None
        bindings = {"K": k, "c": k / 2}
    return simple("gate_sym", HypStatus.PROVED, statement, bindings=bindings, evidence=(("Sym(g)", ev),))


@hypothesis("gate_continuous", "the gate `g` is continuous on R")
def _gate_continuous(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    statement = "$g$ is continuous on $\\mathbb{R}$"
    if not s.the_block.gated:
        return simple("gate_continuous", HypStatus.REFUTED, statement, "the block is ungated")
    ev = s.facts().continuity.evidence
    status = HypStatus.PROVED if ev.proved else HypStatus.REFUTED if ev.refuted else HypStatus.UNKNOWN
    reason = "" if ev.proved else ("g is not continuous" if ev.refuted else ev.reason)
    return simple("gate_continuous", status, statement, reason, evidence=(("continuity", ev),))


def gated_nondegeneracy(w_gate: sp.MatrixBase, w_up: sp.MatrixBase, w_down: sp.MatrixBase) -> tuple[bool, str]:
    """Exact check of gated N1: rows of W_gate nonzero and pairwise non-collinear, rows of W_up and
    columns of W_down nonzero."""
    from .hyp_sizes import nondegeneracy

    ok, reason = nondegeneracy(w_gate, w_down)
    if not ok:
        return False, reason.replace("W_up", "W_gate")
    for i in range(w_up.rows):
        if all(x == 0 for x in w_up.row(i)):
            return False, f"row {i} of W_up is zero"
    return True, ("rows of W_gate are nonzero and pairwise non-collinear; rows of W_up and columns of W_down are "
                  "nonzero (exact)")


@hypothesis("gated_nondegenerate",
            "gated-N1: rows of `W_gate` nonzero and pairwise non-collinear, rows of `W_up` and columns of `W_down` "
            "nonzero (exact for given weights; an assumption otherwise)")
def _gated_nondegenerate(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    b = s.the_block
    statement = ("the gated block is nondegenerate: rows of $W_{\\mathrm{gate}}$ nonzero and pairwise "
                 "non-collinear, rows of $W_{\\mathrm{up}}$ and columns of $W_{\\mathrm{down}}$ nonzero")
    if not b.gated:
        return simple("gated_nondegenerate", HypStatus.REFUTED, statement, "the block is ungated")
    if b.w_up is not None and b.w_down is not None and b.w_gate is not None:
        ok, reason = gated_nondegeneracy(b.w_gate, b.w_up, b.w_down)
        return simple("gated_nondegenerate", HypStatus.PROVED if ok else HypStatus.REFUTED, statement,
                      "" if ok else reason)
    return simple("gated_nondegenerate", HypStatus.ASSUMED, statement,
                  assumption="nondegenerate gated weights (rows of W_gate nonzero and pairwise non-collinear, rows of "
                             "W_up and columns of W_down nonzero) — needed for the 'only if'")
