"""Replay: a command whose output is fixed by its inputs is answered from the cache the second time.

The command line is deterministic: the same arguments, the same input files and the same code give
byte-identical output. So after a command has run to the end, its output (standard output and
standard error in their order, the files it wrote with ``-o``, the exit code) is stored under a
key made of everything that can change it:

* the command's arguments as parsed (``vars(args)``), the working directory, the spec list after
  glob expansion;
* the code: a digest of every file of the installed ``symabsorb`` package (sources, grammar,
  catalog, theorem files), the Python version, each dependency's ``__init__`` file (content and
  modification time) and the list of installed distributions (``sympy-1.14.0.dist-info``);
* the terminal: whether standard output and error are terminals, their encodings, the width, and
  the environment variables that rendering reads (``COLUMNS``, ``NO_COLOR``, ``TERM``, locale,
  ``SYMABSORB_*``);
* which optional packages are importable (a missing one changes formats and warnings).

The files the command *read* (the spec, its imports, its weight files) are recorded with a SHA-256
of their content when they are read (:func:`symabsorb.paths.observe`) and checked again before any
replay: an edited import or weights file is a miss, never a stale answer.

Nothing is stored when the command failed (exit code 2 or 3), ran out of any time budget (a fact
that became ``unknown (timeout)`` depends on the machine, not on the input), read standard input,
or was given ``--theorems`` (a directory whose listing is not tracked). ``--no-cache`` or
``SYMABSORB_NO_CACHE=1`` turns replay off together with the facts cache; ``SYMABSORB_NO_REPLAY=1``
turns off only replay (the test suite does, so that a monkeypatched run is never answered from
an earlier one). Entries are JSON files in
``replay/`` under the user's cache directory (:mod:`symabsorb.userdirs`), written atomically;
deleting them is always safe.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from .budget import timeouts
from .paths import observe, write_output
from .userdirs import cache_dir, cache_enabled, write_atomically

__all__ = ["COMMANDS", "Recording", "key_for", "lookup", "record", "replay", "store"]

FORMAT = 1
#: The commands whose output is a function of their arguments, input files and code.
COMMANDS = frozenset({"classify", "catalog", "facts", "graph", "prove"})
#: Dependencies whose version can change an answer or a rendering.
_DEPENDENCIES = ("sympy", "flint", "mpmath", "lark", "networkx", "numpy", "scipy", "safetensors", "rich",
                 "matplotlib", "latex2mathml", "torch", "threadpoolctl")
#: Environment variables that renderers or the engine read.
_ENVIRONMENT = ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TERM", "COLORTERM", "TERM_PROGRAM", "CLICOLOR",
                "CLICOLOR_FORCE", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "JUPYTER_COLUMNS", "JUPYTER_LINES",
                "PYTHONIOENCODING", "LANG", "LC_ALL", "LC_CTYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                "MKL_NUM_THREADS")
#: Outputs larger than this are not stored (the run is still correct, just not replayed).
MAX_ENTRY_BYTES = 32 * 2**20


#: Data packages that a source checkout keeps outside ``symabsorb/`` (pyproject's package-dir).
_DATA_PACKAGES = ("symabsorb.theorems", "symabsorb.grammar")


def _code_folders() -> list[Path]:
    root = Path(__file__).resolve().parent
    folders = [root]
    for name in _DATA_PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        for location in (spec.submodule_search_locations or []) if spec is not None else []:
            folder = Path(location).resolve()
            if root not in folder.parents and folder != root:
                folders.append(folder)
    return folders


@functools.cache
def _code_digest() -> str:
    """Every file of the package: sources, grammar, catalog, theorem files, schema."""
    h = hashlib.sha256()
    for folder in _code_folders():
        h.update(str(folder.name).encode() + b"\0")
        for path in sorted(folder.rglob("*")):
            if "__pycache__" in path.parts or not path.is_file():
                continue
            h.update(str(path.relative_to(folder)).encode())
            h.update(b"\0")
            h.update(path.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


def _dependencies() -> list[object]:
    out: list[object] = []
    places: set[str] = set()
    for name in _DEPENDENCIES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        origin = spec.origin if spec is not None else None
        if origin is None or not os.path.isfile(origin):
            out.append([name, None])
            continue
        info = os.stat(origin)
        with open(origin, "rb") as fh:
            content = hashlib.sha256(fh.read()).hexdigest()
        out.append([name, origin, info.st_mtime_ns, info.st_size, content])
        where = Path(origin).parent
        places.add(str(where.parent if Path(origin).name.startswith("__init__.") else where))
    # the installed distributions' names and versions (`sympy-1.14.0.dist-info`), wherever they live
    for place in sorted(places):
        try:
            out.append([place, sorted(n for n in os.listdir(place) if n.endswith((".dist-info", ".egg-info")))])
        except OSError:
            out.append([place, None])
    return out


def _stream_is_tty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def key_for(command: str, args: dict[str, Any], specs: Sequence[str] = ()) -> str | None:
    """The replay key of one command, or ``None`` when this run must not be replayed or stored."""
    if not cache_enabled() or os.environ.get("SYMABSORB_NO_REPLAY") or command not in COMMANDS:
        return None
    if args.get("theorems") or "-" in specs or args.get("spec") == "-":
        return None
    import shutil

    from . import __version__

    described = {
        "format": FORMAT,
        "version": __version__,
        "code": _code_digest(),
        "python": sys.version,
        "dependencies": _dependencies(),
        "command": command,
        "args": sorted((k, repr(v)) for k, v in args.items() if k not in {"func", "no_cache"}),
        "specs": list(specs),
        "cwd": os.getcwd(),
        "tty": [_stream_is_tty(sys.stdout), _stream_is_tty(sys.stderr)],
        "encoding": [getattr(sys.stdout, "encoding", None), getattr(sys.stderr, "encoding", None)],
        "size": list(shutil.get_terminal_size((100, 24))),
        "environment": sorted((k, v) for k, v in os.environ.items()
                              if k in _ENVIRONMENT or (k.startswith("SYMABSORB_") and k != "SYMABSORB_CACHE_DIR")),
    }
    text = json.dumps(described, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _entry_path(key: str) -> Path:
    return cache_dir() / "replay" / key[:2] / f"{key}.json"


def _sha256_of(path: str) -> str | None:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    return h.hexdigest()


@dataclass
class Recording:
    """What one command printed, read and wrote, in order."""

    chunks: list[tuple[int, str]] = field(default_factory=list)  # (1 stdout | 2 stderr, text)
    reads: dict[str, str | None] = field(default_factory=dict)  # absolute path -> SHA-256 when read
    writes: list[str] = field(default_factory=list)  # output paths as given (relative to the cwd)
    timeouts_before: int = field(default_factory=timeouts)  # any time budget that runs out: not stored

    def on_file(self, event: str, path: Path) -> None:
        if event == "read":
            name = str(path.absolute())
            self.reads.setdefault(name, _sha256_of(name))
        elif event == "write" and str(path) not in self.writes:
            self.writes.append(str(path))


class _Tee:
    """A text stream that passes everything through and keeps a copy (terminal checks delegate)."""

    def __init__(self, inner: TextIO, number: int, recording: Recording) -> None:
        self._inner, self._number, self._recording = inner, number, recording

    def write(self, text: str) -> int:
        self._recording.chunks.append((self._number, text))
        return self._inner.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@contextmanager
def record() -> Iterator[Recording]:
    """Run the body with standard output and error copied into a :class:`Recording`."""
    recording = Recording()
    out, err = sys.stdout, sys.stderr
    sys.stdout = _Tee(out, 1, recording)  # type: ignore[assignment]
    sys.stderr = _Tee(err, 2, recording)  # type: ignore[assignment]
    try:
        with observe(recording.on_file):
            yield recording
    finally:
        sys.stdout, sys.stderr = out, err


def store(key: str, recording: Recording, exit_code: int) -> None:
    """Keep a finished command's output for replay (only complete, load-independent runs)."""
    if exit_code not in (0, 1) or timeouts() != recording.timeouts_before:
        return
    if any(v is None or _sha256_of(k) != v for k, v in recording.reads.items()):
        return  # a file changed while the command ran
    files = []
    total = sum(len(t) for _, t in recording.chunks)
    for name in recording.writes:
        try:
            data = Path(name).read_bytes()
        except OSError:
            return
        total += len(data)
        files.append([name, data.decode("latin-1")])
    if total > MAX_ENTRY_BYTES:
        return
    entry = {"format": FORMAT, "exit": exit_code, "chunks": recording.chunks, "reads": recording.reads,
             "files": files}
    write_atomically(_entry_path(key), json.dumps(entry, ensure_ascii=True).encode("ascii"))


@dataclass(frozen=True)
class Replay:
    exit: int
    chunks: tuple[tuple[int, str], ...]
    reads: tuple[str, ...]
    files: tuple[tuple[str, bytes], ...]


def lookup(key: str) -> Replay | None:
    """The stored run for ``key`` if every file it read still has the same content."""
    try:
        entry = json.loads(_entry_path(key).read_bytes())
        if entry.get("format") != FORMAT:
            return None
        reads = entry["reads"]
        for name, digest in reads.items():
            if _sha256_of(name) != digest:
                return None
        return Replay(int(entry["exit"]), tuple((int(n), str(t)) for n, t in entry["chunks"]), tuple(reads),
                      tuple((str(n), str(d).encode("latin-1")) for n, d in entry["files"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # missing, damaged or from another version: run the command


def replay(entry: Replay) -> int:
    """Write the stored output again: files first (with the same protections), then the streams."""
    for name, data in entry.files:
        write_output(Path(name), data, protect=[Path(p) for p in entry.reads])
    for number, text in entry.chunks:
        (sys.stdout if number == 1 else sys.stderr).write(text)
    return entry.exit
