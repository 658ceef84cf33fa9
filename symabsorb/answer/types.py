"""What a report holds: the spec, and one answer per query, still as data.

No renderer is imported here: the answer layer builds these, :mod:`symabsorb.report` renders them."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..analysis.engine import ActivationFacts
from ..model.activation import AnyActivation
from ..theory.derivation import Derivation, NodeState, Verdict
from ..theory.library import Library

__all__ = ["WIDTH_VERDICTS", "QueryAnswer", "Report", "width_verdict"]

#: The verdict words of a ``width`` answer that found a width (its own words, never "absorbable", which
#: answers the same-width question): ``minimal-width`` (the smallest width ``w*`` is proved: the upper
#: bound meets the lower one), ``width-bounds`` (a width is proved to absorb; ``w*`` is bounded, not pinned).
#: A width answer with no width keeps ``impossible`` (no width absorbs the block) or ``open``.
WIDTH_VERDICTS = ("minimal-width", "width-bounds")


def width_verdict(d: Derivation) -> str:
    """The verdict word of a derivation as its answer states it: a ``width`` answer's own word
    (:data:`WIDTH_VERDICTS`) where it proved a width, else the derivation's verdict."""
    if d.width is None or d.verdict is not Verdict.ABSORBABLE:
        return d.verdict.value
    upper, lower, never, _scope = d.width
    if never or not upper:
        return d.verdict.value
    return "minimal-width" if lower and upper == lower else "width-bounds"


@dataclass(frozen=True)
class QueryAnswer:
    """The answer to one query of a spec (or of ``classify``)."""

    query: str
    kind: str  # "absorb" | "classify" | "series" | "parity" | "facts"
    derivation: Derivation | None = None
    facts: ActivationFacts | None = None
    activation: AnyActivation | None = None
    order: int | None = None

    @property
    def verdict(self) -> str | None:
        """The verdict word (a ``width`` answer's own, :func:`width_verdict`); None for facts."""
        return None if self.derivation is None else width_verdict(self.derivation)

    @property
    def anchor(self) -> str:
        return "q-" + "".join(ch if ch.isalnum() else "-" for ch in self.query).strip("-").lower()


@dataclass(frozen=True)
class Report:
    title: str
    spec_path: str
    spec_text: str
    answers: tuple[QueryAnswer, ...]
    library: Library = field(compare=False, repr=False)

    def cited(self) -> list[str]:
        """Every result a derivation cites or lists as a candidate, in library order."""
        ids: dict[str, None] = {}
        for a in self.answers:
            if a.derivation is not None:
                for s in a.derivation.steps:
                    for rid in s.cites:
                        ids[rid] = None
                for rid in a.derivation.cited:
                    ids[rid] = None
                for c in a.derivation.candidates:
                    ids[c.id] = None
        return [rid for rid in sorted(self.library.results) if rid in ids]

    def node_states(self) -> dict[str, NodeState]:
        """Per result, the most significant state it reached over all queries."""
        rank = [NodeState.NOT_TRIED, NodeState.CITED, NodeState.UNDECIDED, NodeState.FAILED, NodeState.APPLICABLE,
                NodeState.APPLIED]
        states: dict[str, NodeState] = {}
        for a in self.answers:
            if a.derivation is None:
                continue
            for rid, st in a.derivation.node_states().items():
                if rank.index(st) > rank.index(states.get(rid, NodeState.NOT_TRIED)):
                    states[rid] = st
        return states
