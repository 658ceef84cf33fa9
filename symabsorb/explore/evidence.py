"""Conjectures with evidence: the numerical search run on one open case (or on the deep open problem).

A record says what was searched (sizes, starts, seed) and the best relative residual found. A
candidate witness becomes an ``absorbable`` *instance* (these sampled weights) only after exact
verification; the activation's verdict stays ``open`` whatever the search finds: evidence is never
proof, and no conjecture is counted as decided.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from .budget import run_with_cpu_budget
from .search import WITNESS_TOLERANCE
from .wire import from_wire

__all__ = ["DEFAULT_SIZES", "DEFAULT_STARTS", "INCONCLUSIVE_RESIDUAL", "EvidenceTask", "StackTask", "evidence_task", "stack_task"]

DEFAULT_SIZES: tuple[tuple[int, int], ...] = tuple((d, m) for d in (2, 3) for m in range(d, 2 * d + 1))
DEFAULT_STARTS = 6
#: A best residual below this (and above :data:`~.search.WITNESS_TOLERANCE`, where a candidate is
#: verified) is inconclusive: one size at 1.8e-8 while the others sat at 1e-2 is no evidence against
#: absorption, only a search that stopped short.
INCONCLUSIVE_RESIDUAL = 1e-5


@dataclass(frozen=True)
class EvidenceTask:
    id: str
    of: str  # the id of the open classification case
    space: str
    label: str
    expr: Any  # wire form (:mod:`.wire`)
    gated: bool
    sizes: tuple[tuple[int, int], ...]
    starts: int
    budget: float | None
    kind: str = "evidence"


@dataclass(frozen=True)
class StackTask:
    """Depth-2 stacks of one ungated activation (the paper's open problem for ReLU and GELU)."""

    id: str
    label: str
    expr: Any  # wire form (:mod:`.wire`)
    sizes: tuple[tuple[int, int], ...]
    starts: int
    budget: float | None
    planted: bool = False  # a control: each block satisfies the flip condition, so a witness exists
    kind: str = "stack"


def _seed(*parts: Any) -> int:
    return int(hashlib.sha256(repr(parts).encode()).hexdigest()[:8], 16)


def _round(r: float) -> float | None:
    """Four significant digits (records stay comparable across machines); None when nothing fitted."""
    return None if r != r or r == float("inf") else float(f"{r:.4g}")


def _fmt(r: float | None) -> str:
    return "no fit" if r is None else f"{r:.3g}"


def _best(rows: list[dict[str, Any]]) -> float | None:
    values = [r["best_residual"] for r in rows if r["best_residual"] is not None]
    return min(values) if values else None


def _evidence(task: EvidenceTask, done: list[dict[str, Any]]) -> None:
    import numpy as np

    from .search import make_problem, search_block
    from .verify import verify_candidate

    expr = from_wire(task.expr)
    for d, m in task.sizes:
        rng = np.random.default_rng(_seed(task.label, task.gated, d, m))
        problem = make_problem(rng, d, m, task.gated)
        try:
            outcome = search_block(expr, problem, task.starts, rng)
        except (ArithmeticError, ValueError, np.linalg.LinAlgError) as err:
            done.append({"d": d, "m": m, "starts": 0, "best_residual": None, "error": type(err).__name__})
            continue
        row: dict[str, Any] = {"d": d, "m": m, "starts": outcome.starts, "best_residual": _round(outcome.best_residual),
                               "weights": {"W_up": problem.w_up.tolist(), "W_down": problem.w_down.tolist(),
                                           "W_gate": None if problem.w_gate is None else problem.w_gate.tolist()}}
        if outcome.candidate:
            witness = verify_candidate(expr, problem, outcome)
            row["candidate"] = True
            if witness is not None:
                row["witness"] = {"W_up": witness.w_up, "W_down": witness.w_down, "W_gate": witness.w_gate,
                                  "proof": witness.proof}
        done.append(row)


def _conjecture(rows: list[dict[str, Any]], complete: bool, starts: int) -> tuple[str, str]:
    verified = [r for r in rows if "witness" in r]
    candidates = [r for r in rows if r.get("candidate") and "witness" not in r]
    if not rows:
        return "none", "the CPU budget ran out before the first size was searched"
    scope = "" if complete else f" (budget: {len(rows)} sizes searched)"
    sizes = ", ".join(f"d={r['d']} m={r['m']}: {_fmt(r['best_residual'])}" for r in rows)
    if verified and len(verified) == len(rows):
        return ("absorbable-instances", f"absorbing weights found and verified exactly at every size searched{scope}; "
                "conjecture: absorbable for generic weights")
    if verified or candidates:
        at = ", ".join(f"d={r['d']} m={r['m']}" for r in verified + candidates)
        kind = "verified exactly" if verified else "not verified exactly"
        return ("mixed", f"candidate witnesses ({kind}) at {at}; elsewhere best relative residuals {sizes}{scope}")
    best = min(rows, key=lambda r: float("inf") if r["best_residual"] is None else r["best_residual"])
    if best["best_residual"] is not None and best["best_residual"] < INCONCLUSIVE_RESIDUAL:
        # Far below the other sizes' residuals but above the witness tolerance: the optimiser may
        # have been converging to absorbing weights it did not reach; it rules nothing out.
        return ("inconclusive", f"inconclusive: best relative residual {_fmt(best['best_residual'])} at "
                f"d={best['d']}, m={best['m']} over {starts} starts is small (below {INCONCLUSIVE_RESIDUAL:g}) but "
                f"above the witness tolerance {WITNESS_TOLERANCE:g}: neither a witness nor evidence against one; "
                f"per size {sizes}{scope}")
    return ("no-witness", f"no absorbing weights found: best relative residual {_fmt(best['best_residual'])} over "
            f"{starts} starts (d={best['d']}, m={best['m']}); per size {sizes}{scope}; conjecture: not absorbable "
            "for generic weights")


def evidence_task(task: EvidenceTask) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    outcome = run_with_cpu_budget(lambda: _evidence(task, rows), task.budget)
    complete = not outcome.exceeded
    kind, text = _conjecture(rows, complete, task.starts)
    return {"id": task.id, "kind": "evidence", "of": task.of, "space": task.space, "label": task.label,
            "gated": task.gated, "status": "done" if complete else "budget", "conjecture": kind, "statement": text,
            "sizes": rows, "best_residual": _best(rows),
            "instance_verdict": "absorbable" if any("witness" in r for r in rows) else None,
            "cpu_s": round(outcome.cpu_seconds, 3)}


def _planted(rng: Any, d: int, m: int) -> Any:
    """A block whose first ``d`` units satisfy W_down[:,S] W_up[S,:] = -I (ReLU/GELU: c = 1/2)."""
    import numpy as np

    from .search import BlockProblem, make_problem

    while True:
        p = make_problem(rng, d, m, False)
        head = p.w_up[:d].astype(float)
        if abs(np.linalg.det(head)) > 0.5:
            down = p.w_down.astype(float)
            down[:, :d] = -np.linalg.inv(head)
            return BlockProblem(d, m, p.w_up, down, None)


def _stack(task: StackTask, done: list[dict[str, Any]]) -> None:
    import numpy as np

    from .search import make_problem, search_stack

    for d, m in task.sizes:
        rng = np.random.default_rng(_seed("stack", task.label, task.planted, d, m))
        pair = [_planted(rng, d, m) if task.planted else make_problem(rng, d, m, False) for _ in range(2)]
        blocks = (pair[0], pair[1])
        outcome = search_stack(from_wire(task.expr), blocks, task.starts, rng)
        done.append({"d": d, "m": m, "starts": outcome.starts, "best_residual": _round(outcome.best_residual)})


def stack_task(task: StackTask) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    outcome = run_with_cpu_budget(lambda: _stack(task, rows), task.budget)
    best = _best(rows)
    what = ("control: both blocks satisfy the flip condition, so the stack is absorbable (compose the witnesses)"
            if task.planted else "random integer weights (generic case: the paper's open problem)")
    return {"id": task.id, "kind": "stack", "label": task.label, "planted": task.planted, "description": what,
            "status": "budget" if outcome.exceeded else "done", "sizes": rows, "best_residual": best,
            "starts": task.starts, "cpu_s": round(outcome.cpu_seconds, 3),
            "statement": ("evidence about an open problem, not a result: " if not task.planted else "search check: ")
            + (f"best relative residual {_fmt(best)} over {task.starts} starts per size" if best is not None
               else "no size searched within the budget")}
