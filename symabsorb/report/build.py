"""Answer every query of a spec: the bridge from a resolved spec to a :class:`Report`."""

from __future__ import annotations

from collections.abc import Callable

from ..analysis.budget import DEFAULT_BUDGET
from ..analysis.engine import analyze
from ..model.activation import GatedActivation
from ..model.block import Block, ResolvedSpec, SpecQuery, Stack
from ..theory.library import Library, default_library
from ..theory.prover import classify, prove
from ..weights.decide import decide_concrete
from .model import QueryAnswer, Report

__all__ = ["answer", "build_report"]


def answer(q: SpecQuery, library: Library, budget: float | None = DEFAULT_BUDGET,
           base_dir: str | None = None) -> QueryAnswer:
    target = q.target
    if q.kind == "absorb":
        assert isinstance(target, (Block, Stack))
        derivation = prove(target, q.text, library, budget)
        derivation = decide_concrete(target, derivation, library, base_dir)
        return QueryAnswer(q.text, "absorb", derivation=derivation)
    if q.kind == "width":
        from ..theory.width import width_derivation

        assert isinstance(target, Block)
        base = decide_concrete(target, prove(target, f"absorb {target.name}", library, budget), library, base_dir)
        return QueryAnswer(q.text, "width", derivation=width_derivation(target, base, q.text, budget, library))
    assert not isinstance(target, (Block, Stack))
    if q.kind == "classify":
        return QueryAnswer(q.text, "classify", derivation=classify(target, library, budget), activation=target)
    order = q.order if q.kind == "series" and q.order is not None else 8
    act = target.gate if isinstance(target, GatedActivation) and q.kind != "facts" else target
    return QueryAnswer(q.text, q.kind, facts=analyze(act, order=order, budget=budget), activation=act, order=order)


def build_report(spec: ResolvedSpec, text: str, library: Library | None = None, budget: float | None = DEFAULT_BUDGET,
                 progress: Callable[[int, int, str], None] | None = None) -> Report:
    library = library or default_library()
    answers = []
    total = len(spec.queries)
    import os

    base_dir = os.path.dirname(spec.path) or "."
    for i, q in enumerate(spec.queries):
        if progress is not None:
            progress(i, total, q.text)
        answers.append(answer(q, library, budget, base_dir))
    if progress is not None:
        progress(total, total, "")
    name = os.path.basename(spec.path)
    return Report(f"symabsorb report: {name}", spec.path, text, tuple(answers), library)
