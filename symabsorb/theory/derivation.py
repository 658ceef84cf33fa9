"""Derivations as data: a verdict, its scope and condition, assumptions, and ordered steps.

Nothing here is formatted for a reader; renderers in :mod:`symabsorb.report` do that.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import sympy as sp

from ..analysis.facts import Evidence

__all__ = [
    "CandidateOutcome",
    "Derivation",
    "DerivationStep",
    "HypStatus",
    "HypothesisCheck",
    "NodeState",
    "Scope",
    "Verdict",
    "Witness",
]


class Verdict(StrEnum):
    IMPOSSIBLE = "impossible"
    CONDITIONAL = "conditional"
    ABSORBABLE = "absorbable"
    NOT_ABSORBABLE = "not-absorbable"
    OPEN = "open"


class Scope(StrEnum):
    """For which weights a verdict holds."""

    ALL = "all weights"
    NONDEGENERATE = "nondegenerate weights"  # rows of W_up nonzero, pairwise non-collinear; columns of W_down nonzero
    GENERIC = "generic weights"
    THESE = "these weights"
    #: Theorem FD's certificate (MATH §14.3): "almost every weight near these is not absorbable; these weights are
    #: not decided". Its verdict stays ``open``: it is never counted or rendered as not-absorbable.
    NEAR = "almost every weight near these"


class HypStatus(StrEnum):
    PROVED = "proved"
    ASSUMED = "assumed"  # a stated assumption of the verdict (d >= 2, nondegenerate weights, ...)
    REFUTED = "refuted"
    UNKNOWN = "unknown"

    @property
    def holds(self) -> bool:
        return self in (HypStatus.PROVED, HypStatus.ASSUMED)


class NodeState(StrEnum):
    """The state of a result in the lemma graph after a query."""

    APPLIED = "applied"
    APPLICABLE = "applicable"  # every hypothesis holds, but an earlier result decided
    FAILED = "hypothesis failed"
    UNDECIDED = "hypothesis undecided"
    CITED = "cited"
    NOT_TRIED = "not tried"


@dataclass(frozen=True)
class HypothesisCheck:
    """One hypothesis of one result, checked against one block or stack."""

    name: str
    status: HypStatus
    statement: str  # what is claimed, LaTeX in $...$
    evidence: tuple[tuple[str, Evidence], ...] = ()
    bindings: tuple[tuple[str, Any], ...] = ()
    assumption: str | None = None
    reason: str = ""

    def binding(self, key: str) -> Any:
        return dict(self.bindings).get(key)


@dataclass(frozen=True)
class DerivationStep:
    """A statement (LaTeX in ``$...$``), the results it cites, the facts it rests on."""

    text: str
    cites: tuple[str, ...] = ()
    evidence: tuple[tuple[str, Evidence], ...] = ()
    kind: str = "argument"  # "setting" | "hypothesis" | "argument" | "conclusion" | "remark"
    claim: sp.Basic | None = None


@dataclass(frozen=True)
class CandidateOutcome:
    id: str
    state: NodeState
    reason: str


@dataclass(frozen=True)
class Witness:
    """Residual-free weights that absorb the block (or stack), with how they were verified."""

    index_set: tuple[int, ...]
    w_up: Any
    w_down: Any
    w_gate: Any = None
    verified: str = ""
    layers: tuple[Witness, ...] = ()
    # biases of the residual-free block (None: it has none): hidden (width), output (dim), gate (width)
    b_up: Any = None
    b_down: Any = None
    b_gate: Any = None
    # a file block's witness: the checkpoint's tensor names by role (W_up, W_down, W_gate, b_up, b_down),
    # whether the file stores in x out (transpose) and its dtype, so the export loads back into the model
    names: tuple[tuple[str, str], ...] = ()
    transpose: bool = False
    dtype: str | None = None
    #: how to read a witness that is not a flip (a deep stack's residual-free blocks, MATH §14): the renderers print
    #: it instead of index sets
    description: str = ""


@dataclass(frozen=True)
class Derivation:
    query: str
    target: str
    target_kind: str  # "block" | "stack" | "activation"
    verdict: Verdict
    scope: str
    decided_by: str | None
    source: str | None
    activation: str = ""
    activation_expr: sp.Expr | None = None
    gated: bool = False
    condition: str | None = None  # LaTeX
    condition_plain: str | None = None
    condition_constant: sp.Expr | None = None
    sufficient: str | None = None
    necessary: str | None = None
    assumptions: tuple[str, ...] = ()
    steps: tuple[DerivationStep, ...] = ()
    candidates: tuple[CandidateOutcome, ...] = ()
    cited: tuple[str, ...] = ()
    witness: Witness | None = None
    notes: tuple[str, ...] = field(default=())
    #: For concrete (file) weights: the exactly checkable certificate of the index-set decision
    #: (a ``symabsorb.weights.certify.Certificate``), re-checked by ``symabsorb verify``.
    certificate: Any = field(default=None, compare=False)
    degenerate: str | None = None  # scope "nondegenerate weights": what is known for degenerate weights
    width: tuple[str | None, str | None, bool, str | None] | None = None  # `width` query: upper, lower, never, scope
    #: Theorem FD's certificate of a concrete deep stack (a ``symabsorb.weights.deep.FDCertificate``), re-checked by
    #: ``symabsorb verify`` (it recomputes the rank)
    depth_certificate: Any = field(default=None, compare=False)

    def node_states(self) -> dict[str, NodeState]:
        states = {c.id: c.state for c in self.candidates}
        for rid in self.cited:
            states.setdefault(rid, NodeState.CITED)
        return states
