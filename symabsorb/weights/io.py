"""Loading weights from files: .npz, .safetensors, PyTorch state dicts (weights_only) — untrusted input.

Every failure is a :class:`~symabsorb.dsl.errors.SpecError` naming the file and the tensor; nothing
from the file is executed (``allow_pickle=False``, ``torch.load(weights_only=True)``).
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..dsl.errors import Span, SpecError, SpecValueError, did_you_mean
from ..dsl.syntax import WeightsDecl

__all__ = ["LoadedWeights", "load_block_weights", "read_tensors"]


@dataclass(frozen=True)
class LoadedWeights:
    """Float64 arrays in symabsorb's layout: ``w_up`` is m x d, ``w_down`` is d x m."""

    file: str
    w_up: Any
    w_down: Any
    w_gate: Any | None
    biases: tuple[str, ...]  # names of bias tensors found next to the weights
    keys: tuple[str, str, str | None]
    dtype: str


def _np() -> Any:
    try:
        import numpy
    except ImportError:
        raise SpecError("loading weight files needs numpy", None, None, None,
                        "pip install 'symabsorb[weights]'") from None
    return numpy


def read_tensors(path: Path, span: Span | None = None) -> dict[str, Any]:
    """Every tensor in the file, as numpy arrays (not yet converted)."""
    np = _np()
    suffix = path.suffix.lower()
    if not path.is_file():
        raise SpecValueError(f"weights file `{path}` not found", span, f"`{path}`", "an existing file")
    try:
        if suffix == ".npz":
            with np.load(path, allow_pickle=False) as data:
                return {k: data[k] for k in data.files}
        if suffix == ".npy":
            raise SpecValueError(f"`{path.name}` holds a single array", span, "a .npy file",
                                 "a file with several named tensors (.npz or .safetensors)",
                                 "save W_up and W_down together: numpy.savez('layer.npz', W_up=..., W_down=...)")
        if suffix == ".safetensors":
            try:
                from safetensors.numpy import load_file
            except ImportError:
                raise SpecError("reading .safetensors needs the `safetensors` package", span, None, None,
                                "pip install 'symabsorb[weights]'") from None
            return dict(load_file(str(path)))
        if suffix in (".pt", ".pth", ".bin"):
            try:
                import torch
            except ImportError:
                raise SpecError("reading PyTorch state dicts needs torch", span, None, None,
                                "pip install torch==2.13.0, or convert the file to .safetensors") from None
            state = torch.load(str(path), map_location="cpu", weights_only=True)
            if not isinstance(state, dict):
                raise SpecValueError(f"`{path.name}` is not a state dict", span, type(state).__name__, "a dict of tensors")
            return {k: v.detach().to(torch.float64).numpy() for k, v in state.items() if hasattr(v, "detach")}
    except SpecError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, EOFError, RuntimeError, KeyError) as err:
        raise SpecValueError(f"cannot read weights file `{path}`: {type(err).__name__}: {err}".rstrip(": "), span,
                             "a corrupt or truncated file", f"a valid {suffix} file",
                             "re-export the weights; symabsorb never executes code from weight files") from None
    raise SpecValueError(f"unsupported weights file `{path}`", span, suffix, ".npz, .safetensors, .pt, .pth or .bin")


def _tensor(tensors: dict[str, Any], key: str, path: Path, span: Span | None, role: str) -> Any:
    if key not in tensors:
        raise SpecValueError(f"`{path.name}` has no tensor `{key}` (for {role})", span, f"`{key}` missing",
                             f"one of {len(tensors)} tensors in the file",
                             did_you_mean(key, tensors) or f"use `{role.split()[0]}:` to name the tensor")
    return tensors[key]


def _checked(np: Any, array: Any, key: str, path: Path, span: Span | None) -> Any:
    if array.dtype.kind not in "fiu":
        raise SpecValueError(f"tensor `{key}` in `{path.name}` has dtype {array.dtype}", span, str(array.dtype),
                             "a floating-point or integer tensor")
    if array.ndim != 2:
        raise SpecValueError(f"tensor `{key}` in `{path.name}` has shape {tuple(array.shape)}", span,
                             f"{array.ndim} dimensions", "a matrix (2 dimensions)")
    a = array.astype(np.float64)
    bad = ~np.isfinite(a)
    if bad.any():
        i, j = (int(x) for x in np.argwhere(bad)[0])
        raise SpecValueError(f"tensor `{key}` in `{path.name}` has a non-finite entry at [{i}, {j}]", span,
                             str(a[i, j]), "finite numbers", f"{int(bad.sum())} entries are NaN or infinite")
    return a


def load_block_weights(decl: WeightsDecl, spec_dir: Path, gated: bool) -> LoadedWeights:
    """W_up, W_down (and W_gate) of one block, checked and in symabsorb's layout."""
    np = _np()
    path = spec_dir / decl.file
    tensors = read_tensors(path, decl.span)
    prefix = decl.prefix or ""
    keys = (prefix + (decl.up_key or "W_up"), prefix + (decl.down_key or "W_down"),
            prefix + (decl.gate_key or "W_gate") if gated else None)
    up = _checked(np, _tensor(tensors, keys[0], path, decl.span, "up: W_up"), keys[0], path, decl.span)
    down = _checked(np, _tensor(tensors, keys[1], path, decl.span, "down: W_down"), keys[1], path, decl.span)
    gate = None
    if keys[2] is not None:
        gate = _checked(np, _tensor(tensors, keys[2], path, decl.span, "gate: W_gate"), keys[2], path, decl.span)
    dtype = str(tensors[keys[0]].dtype)
    if decl.transpose:
        up, down = up.T.copy(), down.T.copy()
        gate = gate.T.copy() if gate is not None else None
    m, d = up.shape
    if down.shape != (d, m):
        raise SpecValueError(f"tensor `{keys[1]}` in `{path.name}` has shape {down.shape}", decl.span,
                             f"{down.shape[0]} x {down.shape[1]}", f"{d} x {m} (dim x width, from `{keys[0]}`: {m} x {d})",
                             "set `transpose: true` for in x out layouts")
    if gate is not None and gate.shape != up.shape:
        raise SpecValueError(f"tensor `{keys[2]}` in `{path.name}` has shape {gate.shape}", decl.span,
                             str(gate.shape), str(up.shape))
    biases = tuple(sorted(k for k in tensors
                          if k.endswith("bias") and any(k[:-4] == key[: -len("weight")] for key in keys if key
                                                        and key.endswith("weight"))))
    return LoadedWeights(str(path), up, down, gate, biases, keys, dtype)
