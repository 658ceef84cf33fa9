"""What the prover hands on: one candidate result checked against a subject (:class:`Attempt`), and one
proof of a target (:class:`Proof`), the data the concrete-weights procedures refine. Data only: the
prover (:mod:`.prover`) makes them, and only the answer layer calls the prover."""

from __future__ import annotations

from dataclasses import dataclass

from ..model.block import Block
from .derivation import Derivation, HypothesisCheck
from .library import Result

__all__ = ["SIZES_NOTE", "Attempt", "Proof"]

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
