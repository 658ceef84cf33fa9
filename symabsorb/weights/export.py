"""Witness weights as files: .npz or .safetensors, written atomically."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from ..dsl.errors import SymabsorbError
from ..theory.derivation import Witness

__all__ = ["witness_arrays", "write_witness"]


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
