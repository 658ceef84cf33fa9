"""What the prover hands on: one candidate result checked against a subject (:class:`Attempt`), and one
proof of a target (:class:`Proof`), the data the concrete-weights procedures refine. Data only: the
prover (:mod:`.prover`) makes them, and only the answer layer calls the prover."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..model.block import Block
from .derivation import Derivation, HypothesisCheck
from .library import Result

__all__ = ["SIZES_NOTE", "WIDTH_HYPOTHESES", "Attempt", "Proof", "WidthProof"]

#: The hypotheses the width constructions use besides the deciding result's (the rank rule's linear units,
#: the results providing ``width-pairs`` and ``width-lines``), checked by the prover for a width query.
WIDTH_HYPOTHESES = ("linear_block", "odd_linear", "ungated", "continuous", "nondegenerate")

#: The last assumption of a derivation for symbolic sizes (not a hypothesis of the result).
SIZES_NOTE = "the derivation holds for every size satisfying the stated assumptions"


@dataclass(frozen=True)
class Attempt:
    """One candidate result, checked against one subject."""

    result: Result
    checks: tuple[HypothesisCheck, ...]

    @property
    def holds(self) -> bool:
        return all(c.status.holds for c in self.checks) and len(self.checks) == len(self.result.hypotheses)

    @property
    def failure(self) -> HypothesisCheck | None:
        for c in self.checks:
            if not c.status.holds:
                return c
        return None

    def bindings(self) -> dict[str, object]:
        out: dict[str, object] = {}
        for c in self.checks:
            out.update({k: v for k, v in c.bindings if v is not None})
        return out


@dataclass(frozen=True)
class Proof:
    """One proof of a target: the derivation, and what the concrete-weights procedures
    (:mod:`symabsorb.weights.concrete`, called by the answer layer) refine it with: the attempt that
    decided (its hypothesis checks and bindings) and the block that attempt was checked on (a post-norm question's reduced block).
    ``attempt`` is None when no result decided, ``block`` when the target is not one block."""

    derivation: Derivation
    attempt: Attempt | None = None
    block: Block | None = None


@dataclass(frozen=True)
class WidthProof:
    """What the width procedures (:mod:`symabsorb.weights.width`) refine: the block's decision ``base`` (after
    its weights were decided), the hypotheses its constructions use (:data:`WIDTH_HYPOTHESES`, by name), and the
    attempt of the result providing ``width-exact`` (Theorem W: every hypothesis but nondegeneracy, None when
    the result does not cover the block's setting), all checked by the prover's one checker; ``subject``:
    what they were checked on (its facts say whether σ is a polynomial). The width procedures never check a
    hypothesis."""

    base: Derivation
    checks: Mapping[str, HypothesisCheck] = field(default_factory=dict)
    exact: Attempt | None = None
    subject: Any = None

    def facts(self) -> Any:
        """The activation's facts (computed once per activation by the analysis cache)."""
        return self.subject.facts()

    def check(self, name: str) -> HypothesisCheck | None:
        """The check of ``name`` (one of :data:`WIDTH_HYPOTHESES`), or None when it was not asked."""
        return self.checks.get(name)
