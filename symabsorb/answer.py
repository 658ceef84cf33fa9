"""The answer layer: one query of a spec, turned into the answer for this query and these weights.

``answer(query, library, context) -> QueryAnswer`` is the one place that orchestrates a query: the
prover (:mod:`symabsorb.theory`) proves once (a weights file's shapes are read first, so the block is
proved with the sizes the file gives), the concrete-weights layer (:mod:`symabsorb.weights.concrete`)
refines that one derivation for the block's weights, the width query builds on that; facts queries
go to the analysis. :func:`build_report` answers every query of a spec. :mod:`symabsorb.report` only
renders what this layer returns (it imports neither the prover nor the weights' decisions).

What a query's answer depends on besides the query and the library is its :class:`AnswerContext`:
where the spec's weight files are and the CPU seconds one fact may take. The command-wide state (its
CPU budget, size limits, cache policy and the ledger of files read) is the run in force
(:func:`symabsorb.context.current`), which every layer below reads; it is not passed again here.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from .analysis.budget import DEFAULT_BUDGET
from .analysis.engine import analyze
from .model.activation import GatedActivation
from .model.block import Block, ResolvedSpec, SpecQuery, Stack
from .report.model import QueryAnswer, Report
from .theory.library import Library, default_library
from .theory.prover import classify
from .weights.concrete import decide

__all__ = ["AnswerContext", "answer", "build_report"]


@dataclass(frozen=True)
class AnswerContext:
    """What one query's answer depends on besides the query and the library.

    ``base_dir``: the directory a block's ``weights:`` file is read from (the spec's); None: file
    weights are not read (the block is answered for arbitrary weights). ``budget``: CPU seconds per
    fact (None: unlimited), under the run's command budget.
    """

    base_dir: str | None = None
    budget: float | None = DEFAULT_BUDGET


def answer(q: SpecQuery, library: Library, context: AnswerContext | None = None) -> QueryAnswer:
    """The answer to ``q``: a derivation (absorb, width, classify) or the activation's facts."""
    context = context or AnswerContext()
    budget, base_dir = context.budget, context.base_dir
    target = q.target
    if q.kind == "absorb":
        assert isinstance(target, (Block, Stack))
        return QueryAnswer(q.text, "absorb", derivation=decide(target, library, base_dir, q.text, budget))
    if q.kind == "width":
        from .weights.width import width_derivation

        assert isinstance(target, Block)
        base = decide(target, library, base_dir, f"absorb {target.name}", budget)
        return QueryAnswer(q.text, "width", derivation=width_derivation(target, base, q.text, budget, library,
                                                                                   base_dir))
    assert not isinstance(target, (Block, Stack))
    if q.kind == "classify":
        return QueryAnswer(q.text, "classify", derivation=classify(target, library, budget), activation=target)
    order = q.order if q.kind == "series" and q.order is not None else 8
    act = target.gate if isinstance(target, GatedActivation) and q.kind != "facts" else target
    return QueryAnswer(q.text, q.kind, facts=analyze(act, order=order, budget=budget), activation=act, order=order)


def build_report(spec: ResolvedSpec, text: str, library: Library | None = None, budget: float | None = DEFAULT_BUDGET,
                 progress: Callable[[int, int, str], None] | None = None) -> Report:
    """Every query of ``spec`` answered (weight files read next to the spec), as a :class:`Report`."""
    library = library or default_library()
    answers = []
    total = len(spec.queries)
    context = AnswerContext(os.path.dirname(spec.path) or ".", budget)
    for i, q in enumerate(spec.queries):
        if progress is not None:
            progress(i, total, q.text)
        answers.append(answer(q, library, context))
    if progress is not None:
        progress(total, total, "")
    name = os.path.basename(spec.path)
    return Report(f"symabsorb report: {name}", spec.path, text, tuple(answers), library)
