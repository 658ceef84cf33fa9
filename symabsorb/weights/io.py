"""Loading weights from files: .npz, .safetensors, PyTorch state dicts — untrusted input.

Every file is opened through :func:`symabsorb.paths.open_regular` (regular files only, a size cap),
and every format is validated **before anything is allocated**: the shape times the item size of a
tensor must match the bytes the file really holds for it and stay under :data:`MAX_TENSOR_BYTES`.
Only floating-point tensors are accepted (float16, bfloat16, float32, float64; each converts to
float64 exactly), uniformly across formats: complex, bool, integer, string and object tensors are
refused, and so are sparse and meta tensors. Only the tensors a block names are read. Nothing from
the file is executed (no pickle for .npz, our own parser for .safetensors, ``torch.load(weights_only=
True)`` for PyTorch). Every failure is a positioned :class:`~symabsorb.dsl.errors.SpecError` (the
``weights:`` entry of the spec) saying what was found, what was expected, and what to do.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import struct
import zipfile
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ..budget import BudgetExhausted
from ..dsl.errors import Span, SpecError, SpecValueError, did_you_mean
from ..dsl.syntax import WeightsDecl

__all__ = ["CHUNK", "MAX_FILE_BYTES", "MAX_TENSOR_BYTES", "Chunk", "LoadedWeights", "checked_matrix", "chunk_of",
           "load_block_weights", "pinned_weights", "read_tensors"]


def _env_bytes(name: str, default: int) -> int:
    try:
        value = int(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value > 0 else default


#: Largest weights file read (bytes); env ``SYMABSORB_MAX_WEIGHTS_BYTES``.
MAX_FILE_BYTES = _env_bytes("SYMABSORB_MAX_WEIGHTS_BYTES", 8 << 30)
#: Largest tensor allocated (bytes, as float64); env ``SYMABSORB_MAX_TENSOR_BYTES``.
MAX_TENSOR_BYTES = _env_bytes("SYMABSORB_MAX_TENSOR_BYTES", 2 << 30)
#: Largest header (.npy or .safetensors JSON) parsed.
MAX_HEADER_BYTES = 100 << 20

_FLOAT_HINT = "store W_up and W_down as float32 or float64 (integers convert exactly: W.astype('float64'))"
_REEXPORT = "re-export the weights; symabsorb never executes code from weight files"


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
    sha256: str = ""  # SHA-256 of the very bytes these arrays were read from (one read: :func:`load_block_weights`)


class _Bad(Exception):
    """A problem found while parsing: (summary, found, expected, hint)."""

    def __init__(self, summary: str, found: str, expected: str, hint: str = _REEXPORT) -> None:
        super().__init__(summary)
        self.summary, self.found, self.expected, self.hint = summary, found, expected, hint


def _np() -> Any:
    try:
        import numpy
    except ImportError:
        raise SpecError("loading weight files needs numpy", None, None, None,
                        "pip install 'symabsorb[weights]'") from None
    return numpy


def _clip(text: str, n: int = 60) -> str:
    text = text.replace("\n", " ")
    return text if len(text) <= n else text[: n - 1] + "…"


def _check_size(name: str, shape: tuple[int, ...], itemsize: int, total: list[int] | None = None) -> int:
    """Bytes of the tensor in the file; refuses shapes whose float64 copy would exceed the cap, and
    (with ``total``, the float64 bytes of the tensors already read from this file) a set of
    tensors that together would: checked from the declared shape, before anything is inflated."""
    if any((not isinstance(s, int)) or s < 0 for s in shape):
        raise _Bad(f"tensor `{_clip(name)}` has an invalid shape", _clip(str(shape)), "non-negative integer dimensions")
    count = math.prod(shape)
    if count * 8 > MAX_TENSOR_BYTES:
        raise _Bad(f"tensor `{_clip(name)}` is too large ({count} elements)", f"shape {_clip(str(shape))}",
                   f"at most {MAX_TENSOR_BYTES // 8} elements",
                   "raise the cap with the environment variable SYMABSORB_MAX_TENSOR_BYTES")
    if total is not None:
        total[0] += count * 8
        if total[0] > MAX_TENSOR_BYTES * _TENSORS_PER_READ:
            raise _Bad(f"the tensors read with `{_clip(name)}` are too large together ({total[0] // 8} elements)",
                       f"{total[0] // 8} elements", f"at most {MAX_TENSOR_BYTES * _TENSORS_PER_READ // 8} for one block",
                       "raise the cap with the environment variable SYMABSORB_MAX_TENSOR_BYTES")
    return count * itemsize


#: One read (a block's W_up, W_down, W_gate) inflates at most this many times the tensor cap.
_TENSORS_PER_READ = 3


# ---- .npz ---------------------------------------------------------------------------------------------

_NPY_FLOATS = {"f2", "f4", "f8"}


def _npy_dtype_ok(np: Any, dtype: Any, name: str) -> None:
    if dtype.kind != "f" or dtype.str[1:] not in _NPY_FLOATS or dtype.fields is not None:
        raise _Bad(f"tensor `{_clip(name)}` has dtype {dtype}", str(dtype),
                   "a floating-point tensor (float16, float32 or float64)", _FLOAT_HINT)


def _read_npz(np: Any, fh: BinaryIO, size: int, keys: list[str] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    total = [0]
    with zipfile.ZipFile(fh) as zf:
        infos = [i for i in zf.infolist() if not i.is_dir()]
        names = {i.filename[:-4] if i.filename.endswith(".npy") else i.filename: i for i in infos}
        wanted = names if keys is None else {k: names[k] for k in keys if k in names}
        for key, info in wanted.items():
            if not info.filename.endswith(".npy"):
                raise _Bad(f"member `{_clip(info.filename)}` of the archive is not an array", "another file",
                           "only .npy members (numpy.savez)")
            with zf.open(info) as f:
                try:
                    major, _minor = np.lib.format.read_magic(f)
                    reader = {1: np.lib.format.read_array_header_1_0, 2: np.lib.format.read_array_header_2_0}.get(major)
                    if reader is None:
                        raise _Bad(f"tensor `{_clip(key)}` has an unsupported .npy version {major}", str(major), "1 or 2")
                    shape, fortran, dtype = reader(f, max_header_size=10_000)
                except _Bad:
                    raise
                except (ValueError, SyntaxError, EOFError, TypeError) as err:
                    raise _Bad(f"tensor `{_clip(key)}` has a corrupt .npy header", _clip(str(err)),
                               "a valid .npy header") from None
                _npy_dtype_ok(np, dtype, key)
                nbytes = _check_size(key, tuple(shape), dtype.itemsize, total)
                if info.file_size < nbytes:
                    raise _Bad(f"tensor `{_clip(key)}` is truncated", f"{info.file_size} bytes stored",
                               f"at least {nbytes} bytes for shape {tuple(shape)}")
                data = f.read(nbytes)
                if len(data) != nbytes:
                    raise _Bad(f"tensor `{_clip(key)}` is truncated", f"{len(data)} bytes", f"{nbytes} bytes")
                array = np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")
                out[key] = array
        for key in names:
            out.setdefault(key, None)  # known names (for "did you mean"), not read
    return out


# ---- .safetensors ---------------------------------------------------------------------------------------

_ST_FLOATS = {"F16": ("<f2", 2), "BF16": ("<u2", 2), "F32": ("<f4", 4), "F64": ("<f8", 8)}


def _read_safetensors(np: Any, fh: BinaryIO, size: int, keys: list[str] | None,
                      dtypes: dict[str, str]) -> dict[str, Any]:
    head = fh.read(8)
    if len(head) != 8:
        raise _Bad("the file is too short for a .safetensors header", f"{size} bytes", "at least 8 bytes")
    (n,) = struct.unpack("<Q", head)
    if n > size - 8 or n > MAX_HEADER_BYTES:
        raise _Bad("the .safetensors header length is impossible", f"{n} bytes claimed, {size - 8} available",
                   "a header inside the file")
    try:
        header = json.loads(fh.read(n).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise _Bad("the .safetensors header is not valid JSON", _clip(type(err).__name__), "a JSON object") from None
    if not isinstance(header, dict):
        raise _Bad("the .safetensors header is not a JSON object", type(header).__name__, "a JSON object")
    data_size = size - 8 - n
    out: dict[str, Any] = {}
    total = [0]
    for key, meta in header.items():
        if key == "__metadata__":
            continue
        out[key] = None
        if keys is not None and key not in keys:
            continue
        if not isinstance(meta, dict) or not isinstance(meta.get("shape"), list) or not isinstance(
                meta.get("data_offsets"), list) or len(meta["data_offsets"]) != 2:
            raise _Bad(f"tensor `{_clip(key)}` has a corrupt entry in the header", _clip(str(meta)),
                       "dtype, shape and data_offsets")
        dtype = meta.get("dtype")
        if dtype not in _ST_FLOATS:
            raise _Bad(f"tensor `{_clip(key)}` has dtype {_clip(str(dtype))}", _clip(str(dtype)),
                       "a floating-point tensor (F16, BF16, F32 or F64)", _FLOAT_HINT)
        code, itemsize = _ST_FLOATS[dtype]
        shape = tuple(meta["shape"])
        if any(isinstance(s, bool) for s in shape):
            raise _Bad(f"tensor `{_clip(key)}` has an invalid shape", _clip(str(shape)), "integer dimensions")
        nbytes = _check_size(key, shape, itemsize, total)  # type: ignore[arg-type]
        begin, end = meta["data_offsets"]
        if not (isinstance(begin, int) and isinstance(end, int)) or isinstance(begin, bool) or isinstance(end, bool) \
                or not 0 <= begin <= end <= data_size:
            raise _Bad(f"tensor `{_clip(key)}` has offsets outside the file", _clip(f"[{begin}, {end}]"),
                       f"offsets within the {data_size} data bytes")
        if end - begin != nbytes:
            raise _Bad(f"tensor `{_clip(key)}` has {end - begin} data bytes", f"{end - begin} bytes",
                       f"{nbytes} bytes for shape {shape} and dtype {dtype}")
        fh.seek(8 + n + begin)
        raw = fh.read(nbytes)
        if len(raw) != nbytes:
            raise _Bad(f"tensor `{_clip(key)}` is truncated", f"{len(raw)} bytes", f"{nbytes} bytes")
        array = np.frombuffer(raw, dtype=code).reshape(shape)
        if dtype == "BF16":  # bfloat16 is the top half of a float32: exact
            array = (array.astype(np.uint32) << 16).view(np.float32)
        dtypes[key] = {"F16": "float16", "BF16": "bfloat16", "F32": "float32", "F64": "float64"}[dtype]
        out[key] = array
    return out


# ---- PyTorch ------------------------------------------------------------------------------------------

#: The oldest torch whose ``torch.load(weights_only=True)`` runs no code from the file (the
#: ``torch`` extra of pyproject.toml declares the same bound).
TORCH_MINIMUM = "2.6"


def _version_tuple(version: str) -> tuple[int, ...]:
    """``"2.13.0+cpu"`` -> ``(2, 13, 0)``; a part that is not a number ends the tuple."""
    out = []
    for part in version.split("+")[0].split("."):
        digits = "".join(ch for ch in part if ch.isdigit()) if part[:1].isdigit() else ""
        if not digits:
            break
        out.append(int(digits))
        if not part.isdigit():
            break
    return tuple(out)


def _read_torch(np: Any, path: Path, fh: BinaryIO, size: int, keys: list[str] | None,
                dtypes: dict[str, str]) -> dict[str, Any]:
    try:
        import torch
    except ImportError:
        raise SpecError("reading PyTorch state dicts needs torch", None, None, None,
                        f"pip install 'symabsorb[torch]' (torch >= {TORCH_MINIMUM}), or convert the file to "
                        ".safetensors") from None
    if _version_tuple(getattr(torch, "__version__", "0")) < _version_tuple(TORCH_MINIMUM):
        raise SpecError(f"torch {torch.__version__} is too old to read PyTorch files safely", None,
                        f"torch {torch.__version__}", f"torch >= {TORCH_MINIMUM}",
                        f"its weights_only loader can run code from the file (CVE-2025-32434); pip install "
                        f"'torch>={TORCH_MINIMUM}', or convert the file to .safetensors")
    head = fh.read(4)
    fh.seek(0)
    if head == b"PK\x03\x04":  # the zip format: check the stored sizes before torch reads anything
        with zipfile.ZipFile(fh) as zf:
            total = sum(i.file_size for i in zf.infolist())
            if total > MAX_TENSOR_BYTES + (64 << 20):
                raise _Bad("the archive expands to too many bytes", f"{total} bytes", f"at most {MAX_TENSOR_BYTES}",
                           "raise the cap with SYMABSORB_MAX_TENSOR_BYTES")
        fh.seek(0)
    try:
        state = torch.load(fh, map_location="cpu", weights_only=True)
    except BudgetExhausted:
        raise  # the command's budget, not a bad file
    except Exception as err:
        kind = type(err).__name__
        refused = "Unpickl" in kind or "weights_only" in str(err)
        raise _Bad("the PyTorch file was refused" if refused else "cannot read the PyTorch file", kind,
                   "a state dict of tensors saved with torch.save (loaded with weights_only=True)",
                   "the file holds Python objects that are not tensors; save only the state dict "
                   "(torch.save(model.state_dict(), ...)) or convert to .safetensors" if refused else _REEXPORT) from None
    if not isinstance(state, dict):
        raise _Bad(f"`{path.name}` is not a state dict", type(state).__name__, "a dict of tensors")
    out: dict[str, Any] = {}
    accepted = {torch.float16, torch.bfloat16, torch.float32, torch.float64}
    for key, value in state.items():
        if not isinstance(key, str) or not isinstance(value, torch.Tensor):
            continue
        out[key] = None
        if keys is not None and key not in keys:
            continue
        if value.layout != torch.strided:
            raise _Bad(f"tensor `{_clip(key)}` is sparse ({value.layout})", str(value.layout), "a dense tensor",
                       "convert it with tensor.to_dense() before saving")
        if value.device.type == "meta":
            raise _Bad(f"tensor `{_clip(key)}` is a meta tensor (it has no values)", "device meta",
                       "a tensor with values", "save the materialized weights")
        if value.dtype not in accepted:
            raise _Bad(f"tensor `{_clip(key)}` has dtype {value.dtype}", str(value.dtype).replace("torch.", ""),
                       "a floating-point tensor (float16, bfloat16, float32 or float64)", _FLOAT_HINT)
        _check_size(key, tuple(value.shape), value.element_size())
        dtypes[key] = str(value.dtype).replace("torch.", "")
        out[key] = value.detach().to(torch.float64).contiguous().numpy()
    return out


# ---- the reader -----------------------------------------------------------------------------------------

#: A slice of a fused tensor, as PyTorch's ``Tensor.chunk`` names it: ``NAME.chunk(N)[I]`` is the ``I``-th
#: (from 0) of ``N`` equal parts of tensor ``NAME`` along dimension 0 (the output axis of an ``nn.Linear``
#: weight: Phi-3's ``gate_up_proj.weight.chunk(2)[0]`` is the gate, ``[1]`` the up projection), and
#: ``NAME.chunk(N, dim=D)[I]`` along dimension ``D`` (``dim=1`` for a fused tensor stored in x out).
CHUNK = re.compile(r"(?P<base>.+)\.chunk\((?P<n>[1-9][0-9]{0,3})(?:, ?dim ?= ?(?P<dim>[01]))?\)\[(?P<i>[0-9]{1,4})\]")


@dataclass(frozen=True)
class Chunk:
    """A part of a fused tensor named by :data:`CHUNK`: tensor ``base``, part ``index`` of ``parts`` along ``dim``."""

    base: str
    parts: int
    index: int
    dim: int = 0


def chunk_of(name: str) -> Chunk | None:
    """The chunk a tensor name selects (``mlp.gate_up_proj.weight.chunk(2)[1]``), or None for a plain name."""
    m = CHUNK.fullmatch(name)
    if m is None:
        return None
    return Chunk(m.group("base"), int(m.group("n")), int(m.group("i")), int(m.group("dim") or 0))


def _take_chunk(name: str, chunk: Chunk, array: Any) -> Any:
    """Part ``chunk.index`` of ``array``; a :class:`_Bad` when the name does not fit the tensor's shape."""
    if chunk.index >= chunk.parts:
        raise _Bad(f"`{_clip(name)}` selects part {chunk.index} of {chunk.parts}", f"part {chunk.index}",
                   f"a part from 0 to {chunk.parts - 1}", "parts are numbered from 0, as Tensor.chunk's")
    if chunk.dim >= array.ndim:
        raise _Bad(f"`{_clip(name)}` splits dimension {chunk.dim} of a {array.ndim}-d tensor",
                   f"shape {tuple(array.shape)}", f"a tensor with a dimension {chunk.dim}")
    size = array.shape[chunk.dim]
    if size % chunk.parts:
        raise _Bad(f"`{_clip(name)}`: tensor `{_clip(chunk.base)}` has {size} entries along dimension {chunk.dim}, "
                   f"not a multiple of {chunk.parts}", f"shape {tuple(array.shape)}",
                   f"a size along dimension {chunk.dim} divisible by {chunk.parts}",
                   "name the fused tensor's parts with the number of parts it holds")
    step = size // chunk.parts
    part = array[chunk.index * step:(chunk.index + 1) * step] if chunk.dim == 0 else \
        array[:, chunk.index * step:(chunk.index + 1) * step]
    return part.copy()


def read_tensors(path: Path, span: Span | None = None, keys: list[str] | None = None,
                 dtypes: dict[str, str] | None = None) -> dict[str, Any]:
    """Tensors of the file as numpy arrays (those in ``keys`` only, when given; other names map to None).
    ``dtypes``, when given, receives the dtype each tensor has *in the file* (bfloat16 arrives as float32).
    A key ``NAME.chunk(N)[I]`` (:data:`CHUNK`) is a part of the fused tensor ``NAME``, read once."""
    chunks = {k: c for k in keys or () if (c := chunk_of(k)) is not None}
    if not chunks:
        return _read_tensors(path, span, keys, dtypes)
    dtypes = {} if dtypes is None else dtypes
    assert keys is not None
    plain = [k for k in keys if k not in chunks]
    tensors = _read_tensors(path, span, sorted({*plain, *(c.base for c in chunks.values())}), dtypes)
    out = {k: tensors[k] for k in plain if k in tensors}
    for key, chunk in chunks.items():
        base = tensors.get(chunk.base)
        if base is None:
            continue  # missing: the caller's error names the key (and the fused tensor through did-you-mean)
        try:
            out[key] = _take_chunk(key, chunk, base)
        except _Bad as bad:
            raise SpecValueError(f"weights file `{path.name}`: {bad.summary}", span, bad.found, bad.expected,
                                 bad.hint) from None
        if chunk.base in dtypes:
            dtypes[key] = dtypes[chunk.base]
    return out


def _read_tensors(path: Path, span: Span | None = None, keys: list[str] | None = None,
                  dtypes: dict[str, str] | None = None) -> dict[str, Any]:
    dtypes = {} if dtypes is None else dtypes
    from ..paths import open_regular

    np = _np()
    suffix = path.suffix.lower()
    if suffix == ".npy":
        raise SpecValueError(f"`{path.name}` holds a single array", span, "a .npy file",
                             "a file with several named tensors (.npz or .safetensors)",
                             "save W_up and W_down together: numpy.savez('layer.npz', W_up=..., W_down=...)")
    if suffix not in (".npz", ".safetensors", ".pt", ".pth", ".bin"):
        raise SpecValueError(f"unsupported weights file `{path.name}`", span, suffix or "no extension",
                             ".npz, .safetensors, .pt, .pth or .bin")
    try:
        with open_regular(path, span, "weights file", max_bytes=MAX_FILE_BYTES,
                          hint="paths are relative to the spec file") as (fh, size):
            if suffix == ".npz":
                return _read_npz(np, fh, size, keys)
            if suffix == ".safetensors":
                return _read_safetensors(np, fh, size, keys, dtypes)
            return _read_torch(np, path, fh, size, keys, dtypes)
    except SpecError:
        raise
    except _Bad as bad:
        raise SpecValueError(f"weights file `{path.name}`: {bad.summary}", span, bad.found, bad.expected,
                             bad.hint) from None
    except (OSError, ValueError, zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, RuntimeError, KeyError,
            NotImplementedError, OverflowError, MemoryError, struct.error, TypeError, IndexError) as err:
        raise SpecValueError(f"cannot read weights file `{path.name}`: {type(err).__name__}", span,
                             f"a corrupt or truncated file ({type(err).__name__})", f"a valid {suffix} file",
                             _REEXPORT) from None


def _tensor(tensors: dict[str, Any], key: str, path: Path, span: Span | None, role: str) -> Any:
    if key not in tensors:
        raise SpecValueError(f"`{path.name}` has no tensor `{_clip(key)}` (for {role})", span, f"`{_clip(key)}` missing",
                             f"one of {len(tensors)} tensors in the file",
                             did_you_mean(key, tensors) or f"use `{role.split()[0]}:` to name the tensor")
    return tensors[key]


def checked_matrix(array: Any, key: str, path: Path, span: Span | None) -> Any:
    """A finite float matrix as float64 (exact conversion), or a positioned error."""
    np = _np()
    if array.dtype.kind != "f":
        raise SpecValueError(f"tensor `{_clip(key)}` in `{path.name}` has dtype {array.dtype}", span, str(array.dtype),
                             "a floating-point tensor", _FLOAT_HINT)
    if array.ndim != 2:
        raise SpecValueError(f"tensor `{_clip(key)}` in `{path.name}` has shape {tuple(array.shape)}", span,
                             f"{array.ndim} dimensions", "a matrix (2 dimensions)")
    if 0 in array.shape:
        raise SpecValueError(f"tensor `{_clip(key)}` in `{path.name}` is empty (shape {tuple(array.shape)})", span,
                             "no entries", "a matrix with at least one row and one column")
    a = np.ascontiguousarray(array, dtype=np.float64)
    bad = ~np.isfinite(a)
    if bad.any():
        i, j = (int(x) for x in np.argwhere(bad)[0])
        raise SpecValueError(f"tensor `{_clip(key)}` in `{path.name}` has a non-finite entry at [{i}, {j}]", span,
                             str(a[i, j]), "finite numbers", f"{int(bad.sum())} entries are NaN or infinite")
    return a


def load_block_weights(decl: WeightsDecl, spec_dir: Path, gated: bool) -> LoadedWeights:
    """W_up, W_down (and W_gate) of one block, checked and in symabsorb's layout."""
    np = _np()
    path = spec_dir / decl.file
    prefix = decl.prefix or ""
    keys = (prefix + (decl.up_key or "W_up"), prefix + (decl.down_key or "W_down"),
            prefix + (decl.gate_key or "W_gate") if gated else None)
    file_dtypes: dict[str, str] = {}
    data, digest = read_weights_once(path, decl.span)
    with pinned_weights(path, data, digest):  # the tensors come from the bytes hashed, whatever the file holds by now
        tensors = read_tensors(path, decl.span, [k for k in keys if k is not None], file_dtypes)
    up_raw = _tensor(tensors, keys[0], path, decl.span, "up: W_up")
    up = checked_matrix(up_raw, keys[0], path, decl.span)
    down = checked_matrix(_tensor(tensors, keys[1], path, decl.span, "down: W_down"), keys[1], path, decl.span)
    gate = None
    if keys[2] is not None:
        gate = checked_matrix(_tensor(tensors, keys[2], path, decl.span, "gate: W_gate"), keys[2], path, decl.span)
    dtype = file_dtypes.get(keys[0], str(up_raw.dtype))
    if decl.transpose:
        up, down = np.ascontiguousarray(up.T), np.ascontiguousarray(down.T)
        gate = np.ascontiguousarray(gate.T) if gate is not None else None
    m, d = up.shape
    if down.shape != (d, m):
        raise SpecValueError(f"tensor `{_clip(keys[1])}` in `{path.name}` has shape {down.shape}", decl.span,
                             f"{down.shape[0]} x {down.shape[1]}", f"{d} x {m} (dim x width, from `{_clip(keys[0])}`: "
                             f"{m} x {d})", "set `transpose: true` for in x out layouts")
    if gate is not None and gate.shape != up.shape:
        raise SpecValueError(f"tensor `{_clip(str(keys[2]))}` in `{path.name}` has shape {gate.shape}", decl.span,
                             str(gate.shape), str(up.shape))
    biases = tuple(sorted(k for k in tensors
                          if k.endswith("bias") and any(k[:-4] == key[: -len("weight")] for key in keys if key
                                                        and key.endswith("weight"))))
    return LoadedWeights(str(path), up, down, gate, biases, keys, dtype, digest)


#: The SHA-256 of a buffer already hashed by whoever pinned it (:func:`pinned_weights`): that very
#: ``bytes`` object (immutable, compared by identity, kept alive by the context) and its digest.
_HASHED: ContextVar[tuple[bytes, str] | None] = ContextVar("symabsorb_weights_hashed", default=None)


def _sha256(data: bytes) -> str:
    """The SHA-256 of ``data``: the one computed by :func:`pinned_weights` for this very object, else
    computed now (a weights file of a GB costs ~0.5 s to hash: once per read, not once per use)."""
    known = _HASHED.get()
    if known is not None and known[0] is data:
        return known[1]
    import hashlib

    return hashlib.sha256(data).hexdigest()


@contextlib.contextmanager
def pinned_weights(path: Path, data: bytes, digest: str) -> Iterator[None]:
    """Within the body, every read of ``path`` is served from ``data`` (:func:`symabsorb.paths.pinned`)
    and its SHA-256 is ``digest``, which the caller computed from ``data`` itself (from
    :func:`read_weights_once`): what is decided and what is hashed are the same bytes, hashed once."""
    from ..paths import pinned

    token = _HASHED.set((data, digest))
    try:
        with pinned({path: data}):
            yield
    finally:
        _HASHED.reset(token)


def read_weights_once(path: Path, span: Span | None = None, check: Any = None) -> tuple[bytes, str]:
    """The weights file's bytes, read once (the buffer already pinned for the name, if any), and
    their SHA-256: pin the bytes (:func:`pinned_weights`) around every read that the hash binds, so
    the decision and the hash describe the same bytes."""
    from ..paths import read_once

    data = read_once(path, span, "weights file", MAX_FILE_BYTES, check=check)
    return data, _sha256(data)


def weights_digest(path: Path) -> str:
    """SHA-256 of the weights file: of the bytes pinned for the name when there are (what the
    decision reads), else of the file as it is now."""
    from ..paths import pinned_bytes

    held = pinned_bytes(path)
    if held is not None:
        return _sha256(held)
    from .certify import file_digest

    return file_digest(str(path))
