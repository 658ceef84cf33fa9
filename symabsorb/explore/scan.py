"""``symabsorb scan DIR``: every MLP layer of every weight file under a directory, one task per layer.

Layers are found by tensor-name patterns (LLaMA, BERT, GPT-2, ViT/OPT, T5, and symabsorb's own
``W_up``/``W_down``/``W_gate``); each is decided by the concrete-weights decision of the weights
layer (``weights.filedecide.decide_file_block``), with an identity skip.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .budget import run_with_cpu_budget
from .classify import case_id

__all__ = ["PATTERNS", "WEIGHT_SUFFIXES", "LayerPattern", "ScanTask", "find_layers", "scan_task", "weight_files"]

WEIGHT_SUFFIXES = (".safetensors", ".npz", ".pt", ".pth", ".bin")


@dataclass(frozen=True)
class LayerPattern:
    name: str
    up: str
    down: str
    gate: str | None
    transpose: bool  # stored in x out (GPT-2's Conv1D)
    activation: str  # the usual activation of this family; --activation overrides it


PATTERNS: tuple[LayerPattern, ...] = (
    LayerPattern("llama", "mlp.up_proj.weight", "mlp.down_proj.weight", "mlp.gate_proj.weight", False, "swiglu"),
    LayerPattern("bert", "intermediate.dense.weight", "output.dense.weight", None, False, "gelu"),
    LayerPattern("gpt2", "mlp.c_fc.weight", "mlp.c_proj.weight", None, True, "gelu"),
    LayerPattern("vit", "mlp.fc1.weight", "mlp.fc2.weight", None, False, "gelu"),
    LayerPattern("opt", "fc1.weight", "fc2.weight", None, False, "relu"),
    LayerPattern("t5", "DenseReluDense.wi.weight", "DenseReluDense.wo.weight", None, False, "relu"),
    LayerPattern("symabsorb", "W_up", "W_down", "W_gate", False, "gelu"),
)


@dataclass(frozen=True)
class ScanTask:
    id: str
    file: str
    prefix: str
    pattern: str
    up: str
    down: str
    gate: str | None
    transpose: bool
    activation: str
    budget: float | None
    kind: str = "scan"

    @property
    def label(self) -> str:
        return f"{Path(self.file).name}:{self.prefix or '(top level)'}"


def weight_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.is_file() and p.suffix.lower() in WEIGHT_SUFFIXES)


def find_layers(path: Path, names: Sequence[str], activation: str | None, budget: float | None) -> list[ScanTask]:
    """One task per MLP layer whose tensor names match a pattern (first matching pattern wins)."""
    keys = set(names)
    tasks: list[ScanTask] = []
    taken: set[str] = set()
    stat = path.stat()
    for p in PATTERNS:
        for key in sorted(keys):
            if not key.endswith(p.up) or key in taken:
                continue
            prefix = key[: -len(p.up)]
            if prefix and not prefix.endswith((".", "_", "/")):
                continue  # `xfc1.weight` is not `fc1.weight`
            down = prefix + p.down
            if down not in keys:
                continue
            gate = p.gate if p.gate is not None and prefix + p.gate in keys else None
            act = activation or (p.activation if gate is not None or p.gate is None else "gelu")
            taken.update({key, down})
            tid = case_id("scan", str(path.resolve()), stat.st_size, stat.st_mtime_ns, prefix, p.name, act, budget)
            tasks.append(ScanTask(tid, str(path.resolve()), prefix, p.name, p.up, p.down, gate, p.transpose, act,
                                  budget))
    return tasks


def _decide(task: ScanTask) -> dict[str, Any]:
    from ..dsl.syntax import WeightsDecl
    from ..model.block import M_WIDTH, Block, D, Skip
    from ..model.resolve import activation_from_text
    from ..theory.library import default_library
    from ..weights.filedecide import decide_file_block

    act = activation_from_text(task.activation)
    path = Path(task.file)
    decl = WeightsDecl(path.name, task.prefix or None, task.up, task.down, task.gate, task.transpose)
    block = Block(task.label, act, D, M_WIDTH, Skip("identity"), weights=decl)
    decision = decide_file_block(block, path.parent, default_library())
    d = decision.derivation
    w = decision.weights
    out: dict[str, Any] = {"verdict": d.verdict.value, "decided_by": d.decided_by, "scope": d.scope,
                           "d": int(w.w_up.shape[1]), "m": int(w.w_up.shape[0]), "gated": task.gate is not None,
                           "nondegenerate": bool(getattr(decision.nondegeneracy, "holds", False))}
    search = decision.search
    if search is not None:
        for name in ("distance", "relative_distance"):
            value = getattr(search, name, None)
            if isinstance(value, (int, float)):
                out[name] = float(f"{float(value):.6g}")
    certificate = getattr(decision, "certificate", None)
    if certificate is not None:
        out["certificate"] = str(getattr(certificate, "summary", certificate))[:500]
    return out


def scan_task(task: ScanTask) -> dict[str, Any]:
    head = {"id": task.id, "kind": "scan", "label": task.label, "file": task.file, "layer": task.prefix,
            "pattern": task.pattern, "activation": task.activation}
    try:
        outcome = run_with_cpu_budget(lambda: _decide(task), task.budget)
    except Exception as err:  # a bad file is one failed layer, not a failed scan
        message = str(err).splitlines()[0] if str(err) else type(err).__name__
        return {**head, "status": "error", "verdict": "open", "error": message[:300], "cpu_s": 0.0}
    if outcome.exceeded or outcome.value is None:
        return {**head, "status": "budget", "verdict": "open", "error": f"CPU budget of {task.budget:g} s exhausted",
                "cpu_s": round(outcome.cpu_seconds, 3)}
    return {**head, "status": "done", **outcome.value, "cpu_s": round(outcome.cpu_seconds, 3)}


def scan(directory: Path, store: Any, executor: Any, activation: str | None = None, budget: float | None = 300.0,
         progress: Any = None) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """Decide every layer found under ``directory``; returns the layer records (sorted) and the files
    that could not be read or held no MLP layer, with the reason."""
    from ..dsl.errors import SymabsorbError
    from ..weights.io import read_tensors

    tasks: list[ScanTask] = []
    skipped: list[tuple[str, str]] = []
    for path in weight_files(directory):
        try:
            names = list(read_tensors(path, keys=[]))  # the names only: no tensor is inflated here
        except SymabsorbError as err:
            skipped.append((str(path), str(err).splitlines()[0]))
            continue
        found = find_layers(path, names, activation, budget)
        if not found:
            skipped.append((str(path), "no tensor names matched an MLP layer pattern"))
        tasks.extend(found)
    pending = [(scan_task, t) for t in tasks if t.id not in store]
    done = len(tasks) - len(pending)
    if progress is not None:
        progress("scan", done, len(tasks))

    def record(r: dict[str, Any]) -> None:
        nonlocal done
        store.add(r)
        done += 1
        if progress is not None:
            progress("scan", done, len(tasks))

    executor.run(pending, record)
    ids = {t.id for t in tasks}
    records = sorted((r for r in store.records.values() if r.get("id") in ids), key=lambda r: (r["file"], r["layer"]))
    return records, skipped
