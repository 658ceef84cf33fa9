"""Hypotheses about every block of a stack, built from the single-block checkers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..analysis.facts import Evidence
from ..analysis.identity import exact_zero
from .checks import Subject, registrar, simple
from .derivation import HypothesisCheck, HypStatus
from .hyp_activation import CHECKERS as ACTIVATION

__all__ = ["CHECKERS"]

CHECKERS, hypothesis = registrar()


# ---- every block of a stack -------------------------------------------------------------------------


def _each(name: str, s: Subject, statement: str,
          one: Callable[[Subject], list[HypothesisCheck]]) -> HypothesisCheck:
    evidence: list[tuple[str, Evidence]] = []
    assumptions: list[str] = []
    worst = HypStatus.PROVED
    reason = ""
    for block in s.blocks():
        sub = Subject(block=block, budget=s.budget)
        for c in one(sub):
            evidence.extend((f"{block.name}: {label}", ev) for label, ev in c.evidence)
            if c.assumption:
                assumptions.append(c.assumption)
            if c.status is HypStatus.REFUTED:
                return simple(name, HypStatus.REFUTED, statement, f"block {block.name}: {c.reason or c.statement}",
                               evidence=tuple(evidence))
            if c.status is HypStatus.UNKNOWN:
                worst = HypStatus.UNKNOWN
                reason = f"block {block.name}: {c.reason or 'undecided'}"
            elif c.status is HypStatus.ASSUMED and worst is HypStatus.PROVED:
                worst = HypStatus.ASSUMED
    return HypothesisCheck(name, worst, statement, tuple(evidence), (),
                           "; ".join(dict.fromkeys(assumptions)) or None, reason)


def _flat_unit(sub: Subject) -> list[HypothesisCheck]:
    """Prop. 5 with k > 1, or Prop. 6: the residual-free unit vanishes to first order at 0."""
    homog = ACTIVATION["unit_homogeneous"](sub, {"min_exclusive": 1})
    if homog.status is HypStatus.PROVED:
        return [homog]
    if sub.the_block.gated:
        return [ACTIVATION["gate_value_at_0_zero"](sub, {}), ACTIVATION["gate_differentiable_at_0"](sub, {})]
    return [homog]


@hypothesis("each_unit_flat_at_0", '(stacks) every block satisfies Prop. 5 with `k > 1` or Prop. 6', subject="stack")
def _each_flat_unit(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    return _each("each_unit_flat_at_0", s, "every block satisfies Prop. 5 with $k > 1$ or Prop. 6", _flat_unit)


@hypothesis("each_flat_activation", "(stacks) every block is ungated with `σ(0) = 0`, `σ'(0) = 0`", subject="stack")
def _each_flat_activation(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    def one(sub: Subject) -> list[HypothesisCheck]:
        f = sub.facts()
        v = f.at_zero.value
        at0 = None if v is None else exact_zero(v)
        zero = simple("value_at_0_zero", HypStatus.PROVED if at0 is True else
                      (HypStatus.REFUTED if at0 is False else HypStatus.UNKNOWN),
                      "$\\sigma(0) = 0$", "" if at0 is True else "σ(0) ≠ 0" if at0 is False else "σ(0) = 0 undecided")
        return [ACTIVATION["ungated"](sub, {}), zero, ACTIVATION["differentiable_at_0"](sub, {}),
                ACTIVATION["derivative_at_0_zero"](sub, {})]

    return _each("each_flat_activation", s, "every block is ungated with $\\sigma(0) = 0$ and $\\sigma'(0) = 0$", one)


@hypothesis("each_sublinear", '(stacks) every block is ungated with a locally bounded `σ = o(|z|)`', subject="stack")
def _each_sublinear(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    def one(sub: Subject) -> list[HypothesisCheck]:
        return [ACTIVATION["ungated"](sub, {}), ACTIVATION["locally_bounded"](sub, {}),
                ACTIVATION["sublinear_growth"](sub, {})]

    return _each("each_sublinear", s, "every block is ungated with a locally bounded $\\sigma = o(|z|)$", one)


@hypothesis("each_relu_or_gelu", '(stacks) every block is ReLU or GELU', subject="stack")
def _each_relu_or_gelu(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    def one(sub: Subject) -> list[HypothesisCheck]:
        relu = ACTIVATION["same_function"](sub, {"reference": "relu"})
        if relu.status is HypStatus.PROVED:
            return [relu]
        return [ACTIVATION["same_function"](sub, {"reference": "gelu"})]

    return _each("each_relu_or_gelu", s, "every block is a ReLU or GELU block", one)
