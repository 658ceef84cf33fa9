"""``symabsorb explore``: enumerate, classify, search for evidence, and build the atlas, resumably.

Phases: (1) enumerate each space (cached) and classify every survivor, gated and ungated, or every
grid point and sign cell of a family; (2) search for absorbing weights for every open case;
(3) depth-2 ReLU/GELU stacks (the paper's open problem) with a planted control. Every case is one
task for the executor and one line in the results file; cases already there are not run again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..model.block import ResolvedSpec
from ..model.space import Space
from ..theory.library import results_digest
from .classify import ClassifyTask, case_id, classify_task
from .enumerate import enumerate_space
from .evidence import DEFAULT_SIZES, DEFAULT_STARTS, EvidenceTask, StackTask, evidence_task, stack_task
from .executors import Executor, Job
from .family import cell_tasks, grid_tasks
from .store import ResultStore
from .terms import term_from_json
from .wire import to_wire

__all__ = ["ExploreSettings", "PhaseStats", "RunResult", "explore", "select_spaces"]

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class ExploreSettings:
    budget: float | None = 60.0  # CPU seconds per classification case
    evidence_budget: float | None = 120.0  # CPU seconds per evidence search (all sizes of one case)
    sizes: tuple[tuple[int, int], ...] = DEFAULT_SIZES
    starts: int = DEFAULT_STARTS
    evidence: bool = True
    stacks: bool = True
    stack_sizes: tuple[tuple[int, int], ...] = ((2, 2), (2, 3), (2, 4))
    theorems: tuple[str, ...] = ()  # result directories besides the built-in library (--theorems)


@dataclass(frozen=True)
class PhaseStats:
    phase: str
    total: int
    resumed: int  # already in the results file
    ran: int
    wall_s: float


@dataclass(frozen=True)
class RunResult:
    store: ResultStore
    spaces: tuple[Space, ...]
    enumerations: dict[str, dict[str, Any]]
    phases: tuple[PhaseStats, ...]
    executor: str


def select_spaces(spec: ResolvedSpec, names: Sequence[str] | None) -> tuple[Space, ...]:
    if not names:
        return spec.spaces
    by_name = {s.name: s for s in spec.spaces}
    return tuple(by_name[n] for n in names)


#: Bumped whenever enumeration or term labels change, so an old cache is not reused.
ENUMERATION_VERSION = 2


def _enumeration(space: Space, store: ResultStore) -> tuple[dict[str, Any], bool]:
    key = f"v{ENUMERATION_VERSION}\n{space.source}"
    cached = store.load_enumeration(space.name, key)
    if cached is not None:
        return cached, True
    start = time.perf_counter()
    e = enumerate_space(space)
    data = {"key": key, "space": space.name, "size": e.size, "generated": e.generated,
            "constant": e.constant, "structural": e.structural, "proved": e.proved,
            "survivors": [{"label": s.text, "term": s.term.to_json()} for s in e.survivors],
            "merges": [list(p) for p in e.merges], "unresolved": [list(p) for p in e.unresolved],
            "per_size": [list(p) for p in e.per_size], "seconds": round(time.perf_counter() - start, 2)}
    store.save_enumeration(space.name, data)
    return data, False


def _classify_jobs(space: Space, enum: dict[str, Any] | None, settings: ExploreSettings,
                   store: ResultStore) -> tuple[int, list[Job]]:
    jobs: list[Job] = []
    total = 0
    theorems = settings.theorems
    digest = results_digest(theorems) if theorems else ""  # a user's results: their own cache entries

    def own(task: ClassifyTask) -> ClassifyTask:
        return replace(task, theorems=theorems, id=case_id(task.id, digest)) if theorems else task

    if space.parametric:
        for task in map(own, grid_tasks(space, settings.budget) + cell_tasks(space, settings.budget)):
            total += 1
            if task.id not in store:
                jobs.append((classify_task, task))
        return total, jobs
    assert enum is not None
    for s in enum["survivors"]:
        for gated in (False, True):
            total += 1
            cid = case_id("classify", space.name, s["label"], gated, settings.budget, *([digest] if digest else []))
            if cid in store:
                continue
            term = term_from_json(s["term"])
            jobs.append((classify_task, ClassifyTask(cid, "classify", space.name, s["label"], to_wire(term.build(space)),
                                                     gated, settings.budget, term=s["term"], theorems=theorems)))
    return total, jobs


def _evidence_jobs(spaces: tuple[Space, ...], settings: ExploreSettings, store: ResultStore) -> tuple[int, list[Job]]:
    jobs: list[Job] = []
    total = 0
    for space in spaces:
        if space.parametric:
            continue
        for r in store.of_kind("classify", space.name):
            if r.get("verdict") != "open" or r.get("status") != "done" or "term" not in r:
                continue
            total += 1
            eid = case_id("evidence", r["id"], settings.sizes, settings.starts, settings.evidence_budget)
            if eid in store:
                continue
            expr = to_wire(term_from_json(r["term"]).build(space))
            jobs.append((evidence_task, EvidenceTask(eid, r["id"], space.name, r["label"], expr, bool(r["gated"]),
                                                     settings.sizes, settings.starts, settings.evidence_budget)))
    return total, jobs


def _stack_jobs(settings: ExploreSettings, store: ResultStore) -> tuple[int, list[Job]]:
    from ..model.activation import Activation
    from ..model.resolve import activation_from_text

    jobs: list[Job] = []
    total = 0
    for name in ("relu", "gelu"):
        act = activation_from_text(name)
        assert isinstance(act, Activation)
        for planted in (False, True):
            total += 1
            sid = case_id("stack", name, planted, settings.stack_sizes, settings.starts, settings.evidence_budget)
            if sid not in store:
                jobs.append((stack_task, StackTask(sid, name, to_wire(act.expr), settings.stack_sizes, settings.starts,
                                                   settings.evidence_budget, planted)))
    return total, jobs


def _run_phase(name: str, total: int, jobs: list[Job], executor: Executor, store: ResultStore,
               progress: Progress | None) -> PhaseStats:
    start = time.perf_counter()
    done = total - len(jobs)
    if progress is not None:
        progress(name, done, total)

    def record(r: dict[str, Any]) -> None:
        nonlocal done
        store.add(r)
        done += 1
        if progress is not None:
            progress(name, done, total)

    executor.run(jobs, record)
    return PhaseStats(name, total, total - len(jobs), len(jobs), round(time.perf_counter() - start, 2))


def explore(spec: ResolvedSpec, outdir: Path, executor: Executor, settings: ExploreSettings | None = None,
            spaces: Sequence[str] | None = None, progress: Progress | None = None) -> RunResult:
    """Run (or resume) the exploration of ``spec``'s spaces; results go to ``outdir``."""
    settings = settings or ExploreSettings()
    chosen = select_spaces(spec, spaces)
    store = ResultStore(outdir)
    phases: list[PhaseStats] = []
    enumerations: dict[str, dict[str, Any]] = {}
    start = time.perf_counter()
    cached = 0
    for space in chosen:
        if not space.parametric:
            if progress is not None:
                progress(f"enumerate {space.name}", 0, 1)
            enumerations[space.name], hit = _enumeration(space, store)
            cached += hit
            if progress is not None:
                progress(f"enumerate {space.name}", 1, 1)
    phases.append(PhaseStats("enumerate", len(enumerations), cached, len(enumerations) - cached,
                             round(time.perf_counter() - start, 2)))
    total, jobs = 0, []
    for space in chosen:
        t, j = _classify_jobs(space, enumerations.get(space.name), settings, store)
        total += t
        jobs += j
    phases.append(_run_phase("classify", total, jobs, executor, store, progress))
    if settings.evidence:
        total, jobs = _evidence_jobs(chosen, settings, store)
        phases.append(_run_phase("evidence", total, jobs, executor, store, progress))
    if settings.stacks:
        total, jobs = _stack_jobs(settings, store)
        phases.append(_run_phase("depth-2 stacks", total, jobs, executor, store, progress))
    return RunResult(store, chosen, enumerations, tuple(phases), executor.name)
