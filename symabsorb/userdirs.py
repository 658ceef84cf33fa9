"""The user's cache directory, shared by the facts cache and the parser cache.

``$SYMABSORB_CACHE_DIR``, else ``$XDG_CACHE_HOME/symabsorb``, else ``~/.cache/symabsorb``. Turned
off by ``--no-cache`` for one command (:func:`cache_off`), for the process (:func:`disable_cache`)
or by ``SYMABSORB_NO_CACHE=1``. Only files this user's own runs wrote are read from it; deleting it
is always safe.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["cache_dir", "cache_enabled", "cache_off", "disable_cache", "write_atomically"]

_state = {"enabled": True}


def disable_cache() -> None:
    _state["enabled"] = False


@contextlib.contextmanager
def cache_off(off: bool = True) -> Iterator[None]:
    """The cache turned off (if ``off``) for the body only (``--no-cache`` of one command)."""
    before = _state["enabled"]
    if off:
        _state["enabled"] = False
    try:
        yield
    finally:
        _state["enabled"] = before


def cache_enabled() -> bool:
    return _state["enabled"] and not os.environ.get("SYMABSORB_NO_CACHE")


def cache_dir() -> Path:
    explicit = os.environ.get("SYMABSORB_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "symabsorb"


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory and ``os.replace``;
    a cache that cannot be written is only slower, so OS errors are swallowed."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:16]}.", suffix=".symabsorb-tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError:
        return
