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

The cache holds pickles written by this user's own runs; it is read from no other place.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
from pathlib import Path
from typing import Any

import sympy as sp

from ..userdirs import cache_dir, cache_enabled, disable_cache, write_atomically

__all__ = ["cache_dir", "disable", "enabled", "load", "store"]

FORMAT = 1


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


def load(k: str) -> Any | None:
    if not enabled():
        return None
    path = cache_dir() / k[:2] / f"{k}.facts"
    try:
        with path.open("rb") as fh:
            return pickle.load(fh)
    except FileNotFoundError:
        return None
    except Exception:  # damaged, truncated or from an incompatible run: recompute
        return None


def store(k: str, value: Any) -> None:
    if not enabled():
        return
    try:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return  # a cache that cannot be written is only slower
    write_atomically(cache_dir() / k[:2] / f"{k}.facts", data)
