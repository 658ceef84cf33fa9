"""One classification case: an activation (gated or not) through the existing prover, as a JSON record.

Records are plain JSON-able dicts (one line each in the results file). Everything in a record is
deterministic except ``cpu_s``, the CPU seconds the case took.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import sympy as sp

from ..answer import Session
from ..model.activation import Activation, GatedActivation, Parameter
from ..model.block import M_WIDTH, Block, D, Skip
from ..model.spectext import spec_expr
from .budget import run_with_cpu_budget
from .wire import from_wire

__all__ = ["RECORD_VERSION", "SETTING_HYPOTHESES", "ClassifyTask", "case_id", "classify_task"]

RECORD_VERSION = 1

_KNOWN_SETTING = frozenset({
    "skip_none", "skip_nonzero", "skip_invertible", "skip_product_nonzero", "skip_rank_exceeds_width", "ungated",
    "gated", "dim_at_least", "dim_equals", "width_at_least", "width_at_least_dim", "width_below_dim", "nondegenerate",
    "depth_at_least"})


def _setting_hypotheses() -> frozenset[str]:
    """Hypotheses about the setting (skip, kind of unit, sizes, weights), not about the activation: a
    result failing one of them is simply not about this case, so it never makes the frontier. Taken
    from the theory layer's tables for skips and sizes where they exist, plus the kind of unit."""
    names = set(_KNOWN_SETTING)
    try:
        from ..theory import hyp_sizes, hyp_skips

        names |= set(getattr(hyp_sizes, "CHECKERS", {})) | set(getattr(hyp_skips, "CHECKERS", {}))
    except ImportError:
        pass
    return frozenset(names)


SETTING_HYPOTHESES = _setting_hypotheses()


def case_id(*parts: Any) -> str:
    """A stable id: a hash of the parts and the record version."""
    text = json.dumps([RECORD_VERSION, *parts], sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class ClassifyTask:
    """Classify ``expr`` (σ, or the gate g when ``gated``) for a block with identity skip and generic
    weights. ``kind`` is ``classify`` (an enumerated expression), ``grid`` (a family at a parameter
    point) or ``cell`` (a family with symbolic parameters on one sign cell)."""

    id: str
    kind: str
    space: str
    label: str
    expr: Any  # the expression in wire form (:mod:`.wire`), never a pickled SymPy object
    gated: bool
    budget: float | None
    params: tuple[tuple[str, str], ...] = ()  # grid: name -> exact value; cell: name -> "<0" / "=0" / ">0"
    term: Any = None  # the enumerated term (JSON), for classify cases
    theorems: tuple[str, ...] = ()  # the --theorems directories of the library in force (built-in only: none)


def _outcomes(act: Activation | GatedActivation, session: Session) -> list[dict[str, Any]]:
    """For every candidate result: the hypotheses that do not hold, each checked (no early stop)."""
    block = Block(act.name, act, D, M_WIDTH, Skip("identity"))
    out = []
    for a in session.attempts(block, stop_at_failure=False):
        blockers = [{"hypothesis": c.name, "status": c.status.value, "reason": c.reason or c.statement}
                    for c in a.checks if not c.status.holds]
        setting = any(b["hypothesis"] in SETTING_HYPOTHESES for b in blockers)
        out.append({"result": a.result.id, "verdict": a.result.conclusion.verdict, "setting": setting,
                    "blockers": blockers})
    return out


def _cell_parameters(task: ClassifyTask) -> tuple[Parameter, ...]:
    """A sign cell's parameters, symbols carrying their sign (as :func:`.family.cell_tasks` made them)."""
    if task.kind != "cell":
        return ()
    out = []
    for name, sign in task.params:
        if sign == ">0":
            sym = sp.Symbol(name, positive=True)
            out.append(Parameter(sym, sp.Gt(sym, 0)))
        elif sign == "<0":
            sym = sp.Symbol(name, negative=True)
            out.append(Parameter(sym, sp.Lt(sym, 0)))
    return tuple(out)


def _classify(task: ClassifyTask) -> dict[str, Any]:
    from ..theory.library import library_with

    session = Session(library_with(task.theorems), budget=None)
    sigma = Activation(task.label, from_wire(task.expr), _cell_parameters(task))
    act: Activation | GatedActivation = GatedActivation(f"gated {task.label}", sigma) if task.gated else sigma
    d = session.classify(act)
    record: dict[str, Any] = {"verdict": d.verdict.value, "decided_by": d.decided_by, "source": d.source,
                              "condition": d.condition_plain, "scope": d.scope}
    if d.verdict.value == "open":
        record["outcomes"] = _outcomes(act, session)
    return record


def _where(err: BaseException) -> str:
    """`` (module.py:LINE: message)`` of the innermost frame, so a report can point at the bug."""
    import traceback

    frames = traceback.extract_tb(err.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" ({last.filename.rsplit('/', 1)[-1]}:{last.lineno}: {str(err)[:120]})"


def classify_task(task: ClassifyTask) -> dict[str, Any]:
    """Run one case under its CPU budget; a case out of budget is recorded as open, reason ``budget``."""
    head: dict[str, Any] = {"id": task.id, "kind": task.kind, "space": task.space, "label": task.label,
                            "expr": spec_expr(from_wire(task.expr)), "gated": task.gated}  # as a spec writes it
    if task.params:
        head["params"] = dict(task.params)
    if task.term is not None:
        head["term"] = task.term
    try:
        outcome = run_with_cpu_budget(lambda: _classify(task), task.budget)
    except (RecursionError, ArithmeticError, ValueError, TypeError, NotImplementedError, AttributeError) as err:
        # SymPy gave up in a way the engine does not catch: the case stays open, with the reason.
        return {**head, "status": "error", "verdict": "open", "error": f"{type(err).__name__} in the engine"
                + _where(err), "cpu_s": 0.0}
    if outcome.exceeded or outcome.value is None:
        return {**head, "status": "budget", "verdict": "open",
                "error": f"CPU budget of {task.budget:g} s exhausted", "cpu_s": round(outcome.cpu_seconds, 3)}
    return {**head, "status": "done", **outcome.value, "cpu_s": round(outcome.cpu_seconds, 3)}
