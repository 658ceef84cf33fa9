"""``symabsorb absorb``: decide one block (or stack) with concrete weights and write the witness."""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..dsl.errors import SpecNameError, SymabsorbError, did_you_mean
from ..model.block import Block, Stack
from ..theory.derivation import Derivation, Verdict, Witness

__all__ = ["absorb_command", "witness_arrays", "write_witness"]


def _array(m: Any) -> Any:
    import numpy as np

    if m is None:
        return None
    if hasattr(m, "tolist") and not isinstance(m, np.ndarray):
        return np.array([[float(x) for x in row] for row in m.tolist()], dtype=np.float64)
    return np.asarray(m, dtype=np.float64)


def witness_arrays(witness: Witness) -> dict[str, Any]:
    """Named float64 arrays of a witness (``layers.i.`` prefixes for a stack)."""
    import numpy as np

    out: dict[str, Any] = {}
    if witness.layers:
        for i, layer in enumerate(witness.layers):
            for key, value in witness_arrays(layer).items():
                out[f"layers.{i}.{key}"] = value
        return out
    out["W_up"] = _array(witness.w_up)
    out["W_down"] = _array(witness.w_down)
    if witness.w_gate is not None:
        out["W_gate"] = _array(witness.w_gate)
    out["index_set"] = np.array(witness.index_set, dtype=np.int64)
    return out


def write_witness(path: Path, witness: Witness) -> None:
    """Write atomically as .npz or .safetensors."""
    import numpy as np

    arrays = witness_arrays(witness)
    suffix = path.suffix.lower()
    if suffix not in (".npz", ".safetensors"):
        raise SymabsorbError(f"cannot write `{path}`: use a .npz or .safetensors file name")
    directory = path.absolute().parent
    if not directory.is_dir():
        raise SymabsorbError(f"cannot write `{path}`: the directory `{directory}` does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=directory)
    os.close(fd)
    try:
        if suffix == ".npz":
            with open(tmp, "wb") as fh:
                np.savez(fh, **arrays)
        else:
            from safetensors.numpy import save_file

            save_file({k: np.ascontiguousarray(v) for k, v in arrays.items()}, tmp,
                      metadata={"producer": "symabsorb", "verified": witness.verified or "per layer"})
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def absorb_command(args: argparse.Namespace, read_spec: Callable[[str], Any], library: Callable[[Any], Any],
                   write: Callable[..., None]) -> int:
    from ..report.markdown import render_derivation_markdown
    from ..theory.prover import prove
    from .decide import decide_concrete

    spec, _ = read_spec(args.spec)
    lib = library(args)
    targets: dict[str, Block | Stack] = {b.name: b for b in spec.blocks}
    targets.update({s.name: s for s in spec.stacks})
    if args.block not in targets:
        raise SpecNameError(f"no block or stack `{args.block}` in {args.spec}", None, f"`{args.block}`",
                            "the name of a block or stack of the spec",
                            did_you_mean(args.block, targets) or "see `symabsorb check SPEC` for the names")
    target = targets[args.block]
    derivation: Derivation = prove(target, f"absorb {target.name}", lib, args.budget)
    derivation = decide_concrete(target, derivation, lib, os.path.dirname(args.spec) or ".")
    print(render_derivation_markdown(derivation, lib), end="")
    if derivation.verdict is not Verdict.ABSORBABLE or derivation.witness is None:
        print(f"\nno witness: the verdict for `{target.name}` is {derivation.verdict.value}")
        return 1
    if args.output:
        write_witness(Path(args.output), derivation.witness)
        print(f"\nwrote the residual-free weights to {args.output}")
    return 0
