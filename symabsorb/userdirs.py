"""The user's cache directory and what may be trusted in it (a base module: every layer may use it).

``$SYMABSORB_CACHE_DIR``, else ``$XDG_CACHE_HOME/symabsorb``, else ``~/.cache/symabsorb``. Turned
off by ``--no-cache`` for one command (:func:`cache_off`), for the process (:func:`disable_cache`)
or by ``SYMABSORB_NO_CACHE=1``. Deleting it is always safe.

What a file system hands in is data, never code, and is believed only when this user's own runs
wrote it:

* **The directory is used only when it is private**, as ssh treats ``~/.ssh``: it (created
  ``0700`` when missing) is a real directory, not a symbolic link, owned by this user and not
  writable by group or others, and no directory above it is writable by others unless it is
  sticky (``/tmp``). Otherwise the command runs uncached, with one warning (:func:`cache_enabled`).
* **Entries are authenticated**: :func:`seal` puts an HMAC-SHA256 under a per-user secret key
  (``key`` in the directory, 32 random bytes, ``0600``) over a purpose, the entry's own key and its
  content; :func:`unseal` returns the content only when the HMAC matches, so an entry edited,
  copied from another user or swapped for another key's entry is a miss and is recomputed. Without
  a usable directory the key lives only in this process (nothing written earlier is believed).
* **Entries are read like inputs** (:func:`read_entry`): opened without following a symbolic
  link, non-blocking (a FIFO cannot hang a lookup), regular files owned by this user and not
  writable by others, at most a size cap.
* Entries are JSON (:func:`to_plain` / :func:`from_plain` keep tuples and integer keys); nothing
  read from the directory is ever unpickled.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["cache_dir", "cache_enabled", "cache_off", "disable_cache", "dumps", "from_plain", "read_entry", "seal",
           "secret_key", "to_plain", "trust_problem", "unseal", "write_atomically"]

# Memos only (the directories found usable, the keys read); whether the cache is on belongs to the
# run in force (symabsorb.context.Run.cache).
_state: dict[str, Any] = {"checked": {}, "key": {}}

#: Entries larger than this are never read (the largest a run writes is far below it).
MAX_ENTRY_BYTES = 64 * 2**20


def disable_cache() -> None:
    """The cache off for the whole process (every run)."""
    from .context import disable_process_cache

    disable_process_cache()


@contextlib.contextmanager
def cache_off(off: bool = True) -> Iterator[None]:
    """The cache turned off (if ``off``) for the body only (``--no-cache`` of one command)."""
    from .context import changed

    if not off:
        yield
        return
    with changed(cache=False):
        yield


def cache_dir() -> Path:
    explicit = os.environ.get("SYMABSORB_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "symabsorb"


def _uid() -> int | None:
    getuid = getattr(os, "getuid", None)
    return None if getuid is None else int(getuid())


def _private(info: os.stat_result) -> bool:
    uid = _uid()
    return (uid is None or info.st_uid == uid) and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def trust_problem(directory: Path) -> str | None:
    """Why ``directory`` may not hold this user's cache (``None``: it may). Creates it ``0700``
    when it is missing."""
    path = Path(os.path.abspath(directory))
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
            info = os.lstat(path)
        except OSError as err:
            return f"it cannot be created ({err.strerror or err})"
    except OSError as err:
        return f"it cannot be read ({err.strerror or err})"
    if stat.S_ISLNK(info.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a directory"
    uid = _uid()
    if uid is not None and info.st_uid != uid:
        return f"it belongs to another user (uid {info.st_uid})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        who = "others" if info.st_mode & stat.S_IWOTH else "its group"
        return f"it is writable by {who} (mode {stat.S_IMODE(info.st_mode):o})"
    for parent in path.parents:
        try:
            pinfo = os.stat(parent)
        except OSError:
            return f"`{parent}` cannot be read"
        if pinfo.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not pinfo.st_mode & stat.S_ISVTX:
            return f"`{parent}` above it is writable by others and not sticky"
        if uid is not None and pinfo.st_uid not in (0, uid):
            return f"`{parent}` above it belongs to another user (uid {pinfo.st_uid})"
    return None


def _usable() -> bool:
    """Whether the cache directory may be used; checked once per directory and process, with one
    warning on standard error when it may not."""
    directory = str(cache_dir())
    checked: dict[str, bool] = _state["checked"]
    if directory not in checked:
        problem = trust_problem(Path(directory))
        checked[directory] = problem is None
        if problem is not None:
            print(f"warning: not using the cache directory `{_printable(directory)}`: {problem}; running "
                  "without the cache (point SYMABSORB_CACHE_DIR at a directory only you can write)", file=sys.stderr)
    return checked[directory]


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"
                   for c in text)


def cache_enabled() -> bool:
    """The cache is on and its directory may be trusted (see :func:`trust_problem`)."""
    from .context import current, process_default

    return current().cache and process_default().cache and not os.environ.get("SYMABSORB_NO_CACHE") and _usable()


def secret_key() -> bytes:
    """This user's secret key: the ``key`` file of a usable cache directory (created on first use),
    else a key that lives only in this process."""
    directory = str(cache_dir()) if cache_enabled() else ""
    keys: dict[str, bytes] = _state["key"]
    if directory not in keys:
        keys[directory] = (_key_file(Path(directory)) if directory else None) or secrets.token_bytes(32)
    return keys[directory]


def _key_file(directory: Path) -> bytes | None:
    path = directory / "key"
    data = read_entry(path, 64)
    if data is not None and len(data) == 32:
        return data
    fresh = secrets.token_bytes(32)
    with contextlib.suppress(OSError):
        os.unlink(path)  # damaged, or of another size: replaced
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:
        return None
    try:
        os.write(fd, fresh)
    finally:
        os.close(fd)
    return fresh


def _mac(purpose: str, key: str, payload: bytes) -> str:
    message = purpose.encode() + b"\0" + key.encode() + b"\0" + payload
    return hmac.new(secret_key(), message, hashlib.sha256).hexdigest()


def seal(purpose: str, key: str, payload: bytes) -> bytes:
    """``payload`` with an HMAC binding it to ``purpose`` and ``key`` under :func:`secret_key`."""
    return _mac(purpose, key, payload).encode("ascii") + b"\n" + payload


def unseal(purpose: str, key: str, data: bytes | None) -> bytes | None:
    """The payload of :func:`seal`'s output if its HMAC holds for ``purpose`` and ``key``, else ``None``."""
    if data is None:
        return None
    mac, sep, payload = data.partition(b"\n")
    if not sep or len(mac) != 64:
        return None
    try:
        expected = _mac(purpose, key, payload).encode("ascii")
    except (OSError, ValueError):
        return None
    return payload if hmac.compare_digest(mac, expected) else None


def read_entry(path: Path, max_bytes: int = MAX_ENTRY_BYTES, private: bool = True) -> bytes | None:
    """The bytes of one cache entry, or ``None`` when it is missing or may not be believed: not a
    regular file, a symbolic link, (if ``private``) owned by someone else or writable by others,
    or larger than ``max_bytes``. Opened non-blocking, so a FIFO never blocks."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or (private and not _private(info)) or info.st_size > max_bytes:
            return None
        chunks: list[bytes] = []
        total = 0
        while True:
            block = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not block:
                break
            chunks.append(block)
            total += len(block)
            if total > max_bytes:
                return None
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` (``0600``) through a temporary file in the same directory and
    ``os.replace``; a cache that cannot be written is only slower, so OS errors are swallowed."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
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


# ---- plain data: JSON that keeps tuples and non-string dictionary keys ---------------------------

def to_plain(value: Any) -> Any:
    """``value`` (None, bool, int, str, float, list, tuple, dict) as JSON-able data; tuples and
    dictionaries are tagged so :func:`from_plain` rebuilds them exactly."""
    if value is None or isinstance(value, (bool, int, str, float)):
        return value
    if isinstance(value, tuple):
        return {"t": [to_plain(v) for v in value]}
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {"d": [[to_plain(k), to_plain(v)] for k, v in value.items()]}
    raise TypeError(f"not plain data: {type(value).__name__}")


def from_plain(data: Any) -> Any:
    if data is None or isinstance(data, (bool, int, str, float)):
        return data
    if isinstance(data, list):
        return [from_plain(v) for v in data]
    if isinstance(data, dict) and set(data) == {"t"} and isinstance(data["t"], list):
        return tuple(from_plain(v) for v in data["t"])
    if isinstance(data, dict) and set(data) == {"d"} and isinstance(data["d"], list):
        out: dict[Any, Any] = {}
        for pair in data["d"]:
            if not (isinstance(pair, list) and len(pair) == 2):
                raise ValueError("a damaged dictionary")
            k = from_plain(pair[0])
            if isinstance(k, (list, dict)):
                raise ValueError("an unhashable key")
            out[k] = from_plain(pair[1])
        return out
    raise ValueError("not plain data")


def dumps(value: Any) -> bytes:
    return json.dumps(to_plain(value), sort_keys=True, ensure_ascii=True, allow_nan=False,
                      separators=(",", ":")).encode("ascii")
