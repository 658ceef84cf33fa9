"""Facts as plain data (the JSON of ``symabsorb facts --json``; schema in docs/facts-json.md)."""

from __future__ import annotations

from typing import Any

import sympy as sp

from .engine import ActivationFacts
from .facts import Evidence, Stage, Status, Step

__all__ = ["evidence_to_dict", "expr_text", "facts_to_dict", "method", "step_to_dict"]


def expr_text(e: sp.Basic | None) -> str | None:
    """SymPy's own printing (``1/2``, ``101/200``), or None."""
    return None if e is None else sp.sstr(e)


def step_to_dict(step: Step) -> dict[str, Any]:
    return {"text": step.text, "claim": expr_text(step.claim), "latex": sp.latex(step.claim) if step.claim is not None
            else None}


def method(ev: Evidence) -> str | None:
    """How the status is known: ``exact`` (exact algebra, exact series, exact signs) or
    ``enclosure`` (a rigorous ball that excludes the claimed value); None for unknown facts."""
    if ev.status is Status.UNKNOWN:
        return None
    return "enclosure" if ev.decided_by is Stage.NUMERIC_REFUTATION else "exact"


def evidence_to_dict(ev: Evidence) -> dict[str, Any]:
    return {"status": ev.status.value, "decided_by": ev.decided_by.value, "method": method(ev),
            "reason": ev.reason or None, "steps": [step_to_dict(s) for s in ev.steps]}


def facts_to_dict(facts: ActivationFacts, activation: str | None = None, expression: str | None = None) -> dict[str, Any]:
    p, z0, se, h, g, po, gate = (facts.parity, facts.at_zero, facts.series, facts.homogeneity, facts.growth,
                                 facts.polynomial, facts.gate)
    out: dict[str, Any] = {
        "activation": activation or facts.name,
        "expression": expression or sp.sstr(facts.expr),
        "gated": facts.gated,
        "facts": {
            "parity": {**evidence_to_dict(p.evidence), "even_part": expr_text(p.even_part),
                       "odd_part": expr_text(p.odd_part), "odd_linear_constant": expr_text(p.odd_linear_constant),
                       "symmetry": p.symmetry, "symmetry_status": p.symmetry_evidence.status.value},
            "at_zero": {**evidence_to_dict(z0.evidence), "value": expr_text(z0.value),
                        "differentiable": z0.differentiable, "derivative": expr_text(z0.derivative),
                        "left_derivative": expr_text(z0.left_derivative),
                        "right_derivative": expr_text(z0.right_derivative)},
            "series": {**evidence_to_dict(se.evidence), "analytic_at_0": se.analytic_at_0, "order": se.order,
                       "coefficients": [sp.sstr(c) for c in se.coefficients]},
            "homogeneity": {**evidence_to_dict(h.evidence), "degree": expr_text(h.degree)},
            "growth": {**evidence_to_dict(g.evidence), "plus_infinity": g.plus_infinity,
                       "minus_infinity": g.minus_infinity, "class": g.growth_class,
                       "locally_bounded": g.locally_bounded},
            "polynomial": {**evidence_to_dict(po.evidence), "value": po.value},
            "continuity": evidence_to_dict(facts.continuity.evidence),
            "gate": None if gate is None else {**evidence_to_dict(gate.evidence), "value_at_0": expr_text(gate.value_at_0),
                                               "differentiable_at_0": gate.differentiable_at_0,
                                               "flip_symmetric": gate.flip_symmetric},
        },
    }
    return out
