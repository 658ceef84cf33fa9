"""A persistent cache of activation facts, so a second run of anything is near the import floor.

One file per (canonical expression, gated, Taylor order) in the user's cache directory
(``$SYMABSORB_CACHE_DIR``, else ``$XDG_CACHE_HOME/symabsorb``, else ``~/.cache/symabsorb``). The
key also holds the versions of symabsorb, SymPy and python-flint, a digest of the code that
computes facts and a format number, so neither an upgrade nor an edited checkout reads stale
facts. Parameters enter through ``srepr``, which spells out each symbol's assumptions
(``a > 0`` and ``a >= 0`` give different keys).

Facts that ran out of time are never stored (a budget is not a property of the expression), so a
cached answer is exactly the answer a fresh run with enough time gives. Writes are atomic (a
temporary file in the same directory, then ``os.replace``); a damaged or unreadable entry is
ignored and recomputed. Deleting the directory is always safe. ``--no-cache`` or
``SYMABSORB_NO_CACHE=1`` turns it off.

Entries are data, never code: JSON in which every expression is rebuilt from a tree of
whitelisted SymPy classes (the symbol ``z`` is this process's own, numbers from integers, symbols
from their names and assumptions), every fact from a whitelisted dataclass, every status from its
enum; nothing is unpickled. An entry is written only when it rebuilds to exactly what was computed,
and read only through :mod:`symabsorb.userdirs` (a private directory, an HMAC under the user's key
binding the entry to its key: an entry swapped for another expression's is a miss).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import json
from pathlib import Path
from typing import Any, cast

import sympy as sp

from ..userdirs import cache_dir, cache_enabled, disable_cache, read_entry, seal, unseal, write_atomically

__all__ = ["cache_dir", "decode", "disable", "enabled", "encode", "load", "store"]

FORMAT = 2
_PURPOSE = "facts"


def disable() -> None:
    """Turn the cache off for this process (``--no-cache``)."""
    disable_cache()


def enabled() -> bool:
    return cache_enabled()


@functools.cache
def _code_digest() -> str:
    """A digest of the code that computes facts (``analysis/``, ``model/``), so that an edited
    checkout never reads facts computed by different code under the same version number."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for folder in ("analysis", "model"):
        for path in sorted((root / folder).glob("*.py")):
            h.update(path.name.encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


@functools.cache
def _versions() -> str:
    from .. import __version__

    try:
        import flint

        flint_version = str(flint.__version__)
    except ImportError:  # pragma: no cover
        flint_version = "none"
    return f"{FORMAT}|{__version__}|{_code_digest()}|{sp.__version__}|{flint_version}"


def key(expr: sp.Basic, *extra: object) -> str:
    text = "\n".join([_versions(), sp.srepr(expr), *map(repr, extra)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _path(k: str) -> Path:
    return cache_dir() / k[:2] / f"{k}.facts.json"


def load(k: str) -> Any | None:
    """The facts stored under key ``k``, or ``None`` (missing, damaged, forged, from another
    version or another user: recomputed)."""
    if not enabled():
        return None
    try:
        payload = unseal(_PURPOSE, k, read_entry(_path(k)))
        if payload is None:
            return None
        entry = json.loads(payload)
        if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != k:
            return None
        return decode(entry["facts"])
    except Exception:  # damaged, truncated or from an incompatible run: recompute
        return None


def store(k: str, value: Any) -> None:
    if not enabled():
        return
    try:
        data = encode(value)
        if encode(decode(data)) != data:
            return  # would not rebuild exactly: only slower
        payload = json.dumps({"format": FORMAT, "key": k, "facts": data}, sort_keys=True, ensure_ascii=True,
                             allow_nan=False, separators=(",", ":")).encode("ascii")
    except (TypeError, ValueError, KeyError, AttributeError, RecursionError):
        return  # a cache that cannot be written is only slower
    write_atomically(_path(k), seal(_PURPOSE, k, payload))


# ---- the codec ------------------------------------------------------------------------------------

@functools.cache
def _dataclasses() -> dict[str, type]:
    from .at_zero import AtZeroFact
    from .continuity import ContinuityFact
    from .facts import Evidence, Step
    from .gate import GateFact
    from .growth import GrowthFact
    from .homogeneity import HomogeneityFact
    from .parity import EvenPart, ParityFact, ParitySplit, Segment
    from .polynomial import PolynomialFact
    from .series import SeriesFact
    from .symmetry import SymCandidate, SymmetryFact

    classes: list[type] = [AtZeroFact, ContinuityFact, Evidence, Step, GateFact, GrowthFact, HomogeneityFact,
                           EvenPart, ParityFact, ParitySplit, Segment, PolynomialFact, SeriesFact, SymCandidate,
                           SymmetryFact]
    return {c.__name__: c for c in classes}


@functools.cache
def _enums() -> dict[str, type[enum.Enum]]:
    from .facts import Stage, Status

    return {"Stage": Stage, "Status": Status}


@functools.cache
def _sympy_classes() -> dict[str, type]:
    """The SymPy node classes an entry may name (the functions of the spec whitelist and the
    containers, relations and orders facts are built of)."""
    names = ("Add", "Mul", "Pow", "exp", "log", "erf", "erfc", "tanh", "sinh", "cosh", "sin", "cos", "tan",
             "atan", "asinh", "atanh", "Abs", "sign", "Max", "Min", "Heaviside", "floor", "ceiling", "sqrt",
             "StrictLessThan", "LessThan", "StrictGreaterThan", "GreaterThan", "Equality", "Unequality",
             "And", "Or", "Not", "Piecewise", "ExprCondPair", "Tuple", "FiniteSet", "Interval", "Order")
    out: dict[str, type] = {}
    for name in names:
        cls = getattr(sp, name, None)
        if isinstance(cls, type) and issubclass(cls, sp.Basic):
            out[name] = cls
    from sympy.functions.elementary.piecewise import ExprCondPair

    out["Equality"], out["Unequality"], out["ExprCondPair"] = sp.Equality, sp.Unequality, ExprCondPair
    return out


_SINGLETONS: dict[str, Any] = {"pi": sp.pi, "E": sp.E, "oo": sp.oo, "-oo": sp.S.NegativeInfinity,
                               "zoo": sp.zoo, "nan": sp.nan, "I": sp.I, "true": sp.true, "false": sp.false,
                               "EulerGamma": sp.EulerGamma}


def encode(value: Any) -> Any:
    """``value`` (facts: dataclasses, enums, SymPy expressions, tuples, plain values) as JSON data;
    ``TypeError`` for anything outside the whitelist."""
    if isinstance(value, enum.Enum):  # first: a StrEnum is also a str
        name = type(value).__name__
        if _enums().get(name) is not type(value):
            raise TypeError(f"enum {name}")
        return {"enum": name, "value": value.value}
    if value is None or type(value) in (bool, str, int):
        return value
    if isinstance(value, tuple):
        return {"tuple": [encode(v) for v in value]}
    if isinstance(value, sp.Basic):
        return {"sympy": _encode_expr(value)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = type(value).__name__
        if _dataclasses().get(name) is not type(value):
            raise TypeError(f"dataclass {name}")
        return {"dataclass": name, "fields": {f.name: encode(getattr(value, f.name))
                                              for f in dataclasses.fields(value) if f.init}}
    raise TypeError(f"cannot store a {type(value).__name__}")


def _encode_expr(e: Any) -> Any:
    from ..model.functions import Z
    from .facts import Label

    if e is Z:
        return ["z"]
    for name, value in _SINGLETONS.items():
        if e is value:
            return ["K", name]
    if isinstance(e, sp.Integer):
        return ["N", str(int(e.p))]
    if isinstance(e, sp.Rational):
        return ["Q", str(int(e.p)), str(int(e.q))]
    if isinstance(e, sp.Float):
        return ["F", *(str(int(x)) for x in e._mpf_), str(int(e._prec))]
    if type(e) is Label:
        return ["L", e.name, Label._LATEX.get(e.name)]
    if type(e) is sp.Symbol:
        orig = getattr(e, "_assumptions_orig", None) or e.assumptions0
        return ["S", e.name, sorted([str(k), bool(v)] for k, v in orig.items() if v is not None)]
    name = type(e).__name__
    if _sympy_classes().get(name) is not type(e):
        raise TypeError(f"SymPy class {name}")
    args: tuple[Any, ...] = cast(sp.Basic, e).args
    return [name, *(_encode_expr(a) for a in args)]


def decode(data: Any) -> Any:
    """The value :func:`encode` encoded, rebuilt through the whitelists (``ValueError``,
    ``KeyError`` or ``TypeError`` for anything else)."""
    if data is None or isinstance(data, (bool, str, int)):
        return data
    if not isinstance(data, dict) or len(data) not in (1, 2):
        raise ValueError("damaged entry")
    if "tuple" in data:
        return tuple(decode(v) for v in data["tuple"])
    if "enum" in data:
        return _enums()[str(data["enum"])](data["value"])
    if "sympy" in data:
        return _decode_expr(data["sympy"])
    cls = _dataclasses()[str(data["dataclass"])]
    fields = data["fields"]
    if not isinstance(fields, dict):
        raise ValueError("damaged entry")
    allowed = {f.name for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    if set(fields) - allowed:
        raise ValueError("unknown field")
    return cls(**{k: decode(v) for k, v in fields.items()})


def _decode_expr(data: Any) -> Any:
    from ..model.functions import Z
    from .facts import Label

    if not isinstance(data, list) or not data or not isinstance(data[0], str):
        raise ValueError("damaged expression")
    tag = data[0]
    if tag == "z":
        return Z
    if tag == "K":
        return _SINGLETONS[str(data[1])]
    if tag == "N":
        return sp.Integer(int(str(data[1])))
    if tag == "Q":
        return sp.Rational(int(str(data[1])), int(str(data[2])))
    if tag == "F":
        sign, man, exp_, bc, prec = (int(str(x)) for x in data[1:6])
        return sp.Float._new((sign, man, exp_, bc), prec)
    if tag == "L":
        return Label(str(data[1]), None if data[2] is None else str(data[2]))
    if tag == "S":
        return sp.Symbol(str(data[1]), **{str(k): bool(v) for k, v in data[2]})
    cls = _sympy_classes()[tag]
    args = [_decode_expr(a) for a in data[1:]]
    try:
        return cls(*args, evaluate=False)
    except TypeError:
        return cls(*args)
