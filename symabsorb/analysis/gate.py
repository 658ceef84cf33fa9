"""Facts about the gate ``g`` of a gated unit ``g(w_gate·x)·(w_up·x)``."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import sympy as sp

from ..model.functions import Z
from .at_zero import at_zero_fact
from .facts import Evidence, Stage, Step, label, proved, refuted, unknown
from .identity import find_nonzero_point, prove_zero
from .parity import parity_split

__all__ = ["GateFact", "gate_fact"]


@dataclass(frozen=True)
class GateFact:
    """``evidence`` is about flip symmetry ``g(z) + g(−z) = 2 g(0)``."""

    evidence: Evidence
    value_at_0: sp.Expr | None
    differentiable_at_0: bool | None
    flip_symmetric: bool | None


@functools.lru_cache(maxsize=512)
def gate_fact(expr: sp.Expr) -> GateFact:
    at0 = at_zero_fact(expr)
    g0 = at0.value
    if g0 is None:
        return GateFact(unknown("g(0) is not finite"), None, at0.differentiable, None)
    # The enclosure first: it is cheap, and where it refutes no simplification can prove.
    w = find_nonzero_point(expr + expr.xreplace({Z: -Z}) - 2 * g0)
    if w is not None:
        return GateFact(refuted(Stage.NUMERIC_REFUTATION,
                                Step(f"g(z) + g(−z) − 2g(0) ∈ {w[1]} at z = {w[0]} (a rigorous enclosure excluding 0)")),
                        g0, at0.differentiable, False)
    split = parity_split(expr)
    if split is not None:
        if all(prove_zero(s.even - g0) for s in split.segments) and all(prove_zero(e - g0) for _, e, _ in split.points):
            return GateFact(proved(Stage.SYMBOLIC, Step("(g(z) + g(−z))/2 simplifies to the constant g(0)",
                                                        sp.Eq(label("g(z) + g(-z)", "g(z) + g(-z)"), 2 * g0, evaluate=False))),
                            g0, at0.differentiable, True)
    return GateFact(unknown("g(z) + g(−z) − 2g(0) neither simplified to 0 nor was refuted"),
                    g0, at0.differentiable, None)
