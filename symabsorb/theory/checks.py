"""The common ground of the hypothesis checkers: the subject of a query, the checker type, and
the constructors of a :class:`~symabsorb.theory.derivation.HypothesisCheck`.

Checkers live by concern in ``hyp_skips``, ``hyp_activation``, ``hyp_sizes`` and ``hyp_stacks``;
each module builds its own table with :func:`registrar`, and :mod:`.hypotheses` merges the tables.
A checker never proves by numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sympy as sp

from ..analysis.engine import ActivationFacts, analyze
from ..analysis.facts import Evidence, Status
from ..model.block import Block, Stack
from ..model.functions import Phi, Z
from .derivation import HypothesisCheck, HypStatus
from .hypdecl import Declaration, Param

if TYPE_CHECKING:
    from .library import Library

__all__ = ["REFERENCES", "Checker", "Declaration", "Param", "Subject", "as_expr", "from_evidence",
           "registrar", "simple"]

#: Activations that results name exactly (Thms. 8 and 10), as expressions in z.
REFERENCES: dict[str, tuple[str, sp.Expr]] = {
    "relu": ("ReLU", sp.Max(0, Z)),
    "gelu": ("GELU", Z * Phi(Z)),
}


@dataclass(frozen=True)
class Subject:
    """What a query is about: one block, or a stack of blocks; ``library``: the library in force (a
    checker that cites another result looks it up there; the prover sets it)."""

    block: Block | None = None
    stack: Stack | None = None
    budget: float | None = 5.0
    library: Library | None = None

    @property
    def kind(self) -> str:
        return "stack" if self.stack is not None else "block"

    def blocks(self) -> tuple[Block, ...]:
        if self.stack is not None:
            seen: dict[str, Block] = {}
            for b in self.stack.blocks:
                seen.setdefault(b.name, b)
            return tuple(seen.values())
        assert self.block is not None
        return (self.block,)

    @property
    def the_block(self) -> Block:
        assert self.block is not None
        return self.block

    def facts(self, block: Block | None = None) -> ActivationFacts:
        return analyze((block or self.the_block).activation, budget=self.budget)


Checker = Callable[[Subject, dict[str, Any]], HypothesisCheck]


def registrar() -> tuple[dict[str, Declaration], Callable[..., Callable[[Checker], Checker]]]:
    """A fresh table of declarations and the decorator that declares a hypothesis and registers its
    checker on the declaration: ``@hypothesis("name", "holds when ...", params={...}, binds=("c",))``
    (the keywords are those of :class:`~.hypdecl.Declaration`)."""
    table: dict[str, Declaration] = {}

    def hypothesis(name: str, holds: str, *, params: dict[str, Param] | None = None, binds: tuple[str, ...] = (),
                   subject: str = "block", require_any: tuple[str, ...] = ()) -> Callable[[Checker], Checker]:
        def register(fn: Checker) -> Checker:
            if name in table:
                raise RuntimeError(f"hypothesis `{name}` is declared twice")
            table[name] = Declaration(name, holds, params or {}, binds, subject, require_any, fn)
            return fn

        return register

    return table, hypothesis


def from_evidence(name: str, statement: str, label: str, ev: Evidence, bindings: dict[str, Any] | None = None,
                   holds: bool | None = None, refuted_reason: str = "") -> HypothesisCheck:
    """A check whose status follows one fact's evidence (``holds`` overrides "proved")."""
    if ev.status is Status.PROVED and holds is not False:
        status = HypStatus.PROVED
    elif ev.status is Status.REFUTED or holds is False:
        status = HypStatus.REFUTED
    else:
        status = HypStatus.UNKNOWN
    reason = ev.reason if status is HypStatus.UNKNOWN else (refuted_reason if status is HypStatus.REFUTED else "")
    return HypothesisCheck(name, status, statement, ((label, ev),), tuple((bindings or {}).items()),
                           reason=reason)


def simple(name: str, status: HypStatus, statement: str, reason: str = "", assumption: str | None = None,
            bindings: dict[str, Any] | None = None, evidence: tuple[tuple[str, Evidence], ...] = ()) -> HypothesisCheck:
    return HypothesisCheck(name, status, statement, evidence, tuple((bindings or {}).items()), assumption, reason)


def _sigma(subject: Subject) -> str:
    return "g" if subject.the_block.gated else r"\sigma"




def as_expr(v: int | sp.Expr) -> sp.Expr:
    return sp.Integer(v) if isinstance(v, int) else v
