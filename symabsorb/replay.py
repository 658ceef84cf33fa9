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
  warning filters, SymPy's and matplotlib's settings, ``SYMABSORB_*``), and the content of any
  ``matplotlibrc`` matplotlib would read;
* which optional packages are importable (a missing one changes formats and warnings).

Everything the command depended on in the file system is recorded as it happens
(:func:`symabsorb.paths.observe`) and checked again before any replay: each file it read (its
SHA-256 taken from the very descriptor it read, with its size and kind), each file whose existence
it checked (a declared weights file), and where each name it confined to the spec's tree led (a
re-pointed link is a miss, and the fresh run confines it again). Lookups open files like the
command does (non-blocking, regular files only, the size compared before hashing), so a FIFO or a
device in place of an input cannot hang them. The bytes of an ``-o`` file are taken from the
command's own temporary file before it replaces the target; a stored output whose target may no
longer be written (it became an input, a link to one, a directory) is a miss, so the fresh run
refuses in its own words.

Nothing is stored when the command failed (exit code 2 or 3), ran out of any time budget (a fact
that became ``unknown (timeout)`` depends on the machine, not on the input), saw an input change
while it ran, read standard input, or was given ``--theorems`` (a directory whose listing is not
tracked). ``--no-cache`` or ``SYMABSORB_NO_CACHE=1`` turns replay off together with the facts
cache; ``SYMABSORB_NO_REPLAY=1`` turns off only replay (the test suite does, so that a
monkeypatched run is never answered from an earlier one). Entries are JSON files in ``replay/``
under the user's cache directory (:mod:`symabsorb.userdirs`: a private directory only), written
atomically and sealed with an HMAC under the user's secret key over the replay key and the entry;
deleting them is always safe; a damaged, edited or foreign one is a miss. A replay writes only the
files this command names (``-o``): an entry whose list of files differs is a miss, so no entry can
choose a path to write.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import stat
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from .budget import timeouts
from .paths import check_output, observe, write_output
from .userdirs import cache_dir, cache_enabled, read_entry, seal, unseal, write_atomically

__all__ = ["COMMANDS", "Recording", "key_for", "lookup", "record", "replay", "store", "unrecorded"]

FORMAT = 3
_PURPOSE = "replay"
#: The commands whose output is a function of their arguments, input files and code.
COMMANDS = frozenset({"classify", "catalog", "facts", "graph", "prove"})
#: Dependencies whose version can change an answer or a rendering.
_DEPENDENCIES = ("sympy", "flint", "mpmath", "lark", "networkx", "numpy", "scipy", "safetensors", "rich",
                 "matplotlib", "latex2mathml", "torch", "threadpoolctl")
#: Environment variables that renderers or the engine read.
_ENVIRONMENT = ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TERM", "COLORTERM", "TERM_PROGRAM", "CLICOLOR",
                "CLICOLOR_FORCE", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "JUPYTER_COLUMNS", "JUPYTER_LINES",
                "PYTHONIOENCODING", "LANG", "LC_ALL", "LC_CTYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                "MKL_NUM_THREADS", "PYTHONWARNINGS", "SYMPY_GROUND_TYPES", "SYMPY_USE_CACHE", "SYMPY_DEBUG",
                "MPLCONFIGDIR", "MATPLOTLIBRC", "MPLBACKEND", "XDG_CONFIG_HOME", "HOME")


def _settings_files() -> list[object]:
    """Configuration files that change a rendering (matplotlib's, for the plots): content hashes."""
    home = Path(os.environ.get("HOME") or "~").expanduser()
    config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    candidates = [Path("matplotlibrc"), config / "matplotlib" / "matplotlibrc", home / ".matplotlib" / "matplotlibrc"]
    for variable in ("MATPLOTLIBRC", "MPLCONFIGDIR"):
        if os.environ.get(variable):
            where = Path(os.environ[variable])
            candidates += [where, where / "matplotlibrc"]
    out: list[object] = []
    for path in candidates:
        state = _state_of(str(path), content=True) if path.is_file() else None
        out.append([str(path), state])
    return out
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

    try:
        cwd = os.getcwd()
    except OSError:  # the working directory was deleted: relative paths mean nothing to a key
        return None
    described = {
        "format": FORMAT,
        "version": __version__,
        "code": _code_digest(),
        "python": sys.version,
        "dependencies": _dependencies(),
        "command": command,
        "args": sorted((k, repr(v)) for k, v in args.items() if k not in {"func", "no_cache"}),
        "specs": list(specs),
        "cwd": cwd,
        "warnings": list(sys.warnoptions),
        "settings": _settings_files(),
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


def _sha256_of_fd(fd: int) -> str:
    """SHA-256 of an open file's whole content, read with ``pread`` (the file offset is untouched)."""
    h = hashlib.sha256()
    offset = 0
    while True:
        block = os.pread(fd, 1 << 20, offset)
        if not block:
            return h.hexdigest()
        h.update(block)
        offset += len(block)


def _kind(mode: int) -> str:
    return "file" if stat.S_ISREG(mode) else "directory" if stat.S_ISDIR(mode) else "other"


def _state_of(name: str, content: bool) -> dict[str, object]:
    """What a replay depends on about one input now: where its name leads, its kind and, for a
    regular file read by the command, its size and SHA-256 (opened like :func:`open_regular`:
    non-blocking, regular files only, so a FIFO or a device can never hang a lookup)."""
    state: dict[str, object] = {"real": os.path.realpath(name)}
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        state["kind"] = "missing"
        return state
    except OSError:
        state["kind"] = "unreadable"
        return state
    try:
        info = os.fstat(fd)
        state["kind"] = _kind(info.st_mode)
        if content and state["kind"] == "file":
            state["size"] = info.st_size
            state["sha256"] = _sha256_of_fd(fd)
    finally:
        os.close(fd)
    return state


def _same_state(name: str, recorded: dict[str, object]) -> bool:
    now = _state_of(name, content=False)
    if now != {k: recorded.get(k) for k in now}:
        return False
    if "sha256" not in recorded:
        return True
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size != recorded.get("size"):
            return False  # checked before hashing: a grown file is never read in full
        return _sha256_of_fd(fd) == recorded["sha256"]
    finally:
        os.close(fd)


@dataclass
class Recording:
    """What one command printed, depended on and wrote, in order."""

    chunks: list[tuple[int, str]] = field(default_factory=list)  # (1 stdout | 2 stderr, text)
    inputs: dict[str, dict[str, object]] = field(default_factory=dict)  # absolute name -> its state
    resolved: dict[str, str] = field(default_factory=dict)  # a name followed by `confine` -> where it led
    outputs: list[tuple[str, bytes]] = field(default_factory=list)  # (-o path as given, the bytes written)
    unstable: bool = False  # an input read twice with different content
    timeouts_before: int = field(default_factory=timeouts)  # any time budget that runs out: not stored

    def on_file(self, event: str, path: Path, detail: object) -> None:
        name = str(path.absolute())
        if event == "read" and isinstance(detail, int):
            info = os.fstat(detail)  # the descriptor the command reads: what is hashed is what is read
            state = {"real": os.path.realpath(name), "kind": _kind(info.st_mode), "size": info.st_size,
                     "sha256": _sha256_of_fd(detail)}
            if self.inputs.get(name, state).get("sha256", state["sha256"]) != state["sha256"]:
                self.unstable = True
            self.inputs[name] = state
        elif event == "check":
            self.inputs.setdefault(name, _state_of(name, content=False))
        elif event == "resolve":
            self.resolved.setdefault(name, str(detail))
        elif event == "write" and isinstance(detail, Path):
            self.outputs = [(n, d) for n, d in self.outputs if n != str(path)]
            self.outputs.append((str(path), detail.read_bytes()))  # our own temporary file, before the swap


class _Tee:
    """A text stream that passes everything through and keeps a copy (terminal checks delegate)."""

    def __init__(self, inner: TextIO, number: int, recording: Recording) -> None:
        self.inner, self._number, self._recording = inner, number, recording

    def write(self, text: str) -> int:
        self._recording.chunks.append((self._number, text))
        return self.inner.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def unrecorded(stream: TextIO) -> TextIO:
    """The stream itself, not its recorded copy: for what must not be replayed (progress bars)."""
    return stream.inner if isinstance(stream, _Tee) else stream


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


def _unchanged(inputs: dict[str, dict[str, object]], resolved: dict[str, str]) -> bool:
    for name, target in resolved.items():
        try:
            if str(Path(name).resolve()) != target:
                return False
        except (OSError, RuntimeError):
            return False
    return all(_same_state(name, state) for name, state in inputs.items())


def store(key: str, recording: Recording, exit_code: int) -> None:
    """Keep a finished command's output for replay (only complete, load-independent runs)."""
    if exit_code not in (0, 1) or timeouts() != recording.timeouts_before or recording.unstable:
        return
    if not _unchanged(recording.inputs, recording.resolved):
        return  # an input changed while the command ran
    total = sum(len(t) for _, t in recording.chunks) + sum(len(d) for _, d in recording.outputs)
    if total > MAX_ENTRY_BYTES:
        return
    entry = {"format": FORMAT, "exit": exit_code, "chunks": recording.chunks, "inputs": recording.inputs,
             "resolved": recording.resolved, "files": [[n, d.decode("latin-1")] for n, d in recording.outputs]}
    payload = json.dumps(entry, ensure_ascii=True).encode("ascii")
    write_atomically(_entry_path(key), seal(_PURPOSE, key, payload))


@dataclass(frozen=True)
class Replay:
    exit: int
    chunks: tuple[tuple[int, str], ...]
    protect: tuple[Path, ...]  # every input: an output may never replace one
    files: tuple[tuple[str, bytes], ...]


def _valid_entry(entry: object) -> bool:
    if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("exit") not in (0, 1):
        return False
    chunks, files = entry.get("chunks"), entry.get("files")
    inputs, resolved = entry.get("inputs"), entry.get("resolved")
    return (isinstance(chunks, list) and all(isinstance(c, list) and len(c) == 2 and c[0] in (1, 2)
                                             and isinstance(c[1], str) for c in chunks)
            and isinstance(files, list) and all(isinstance(f, list) and len(f) == 2 and isinstance(f[0], str)
                                                and isinstance(f[1], str) and f[0] and "\0" not in f[0]
                                                for f in files)
            and isinstance(inputs, dict) and all(isinstance(v, dict) and "\0" not in k for k, v in inputs.items())
            and isinstance(resolved, dict) and all(isinstance(v, str) and "\0" not in k + v
                                                   for k, v in resolved.items()))


def lookup(key: str, outputs: Sequence[str | Path] = ()) -> Replay | None:
    """The stored run for ``key`` if its HMAC holds (:func:`symabsorb.userdirs.unseal`), every
    input it depended on is as it was, the files it wrote are exactly ``outputs`` (the ``-o`` names
    of this command: an entry never chooses a path) and each may still be written; otherwise
    ``None`` (the command runs, and a fresh run gives any refusal in its own words)."""
    try:
        payload = unseal(_PURPOSE, key, read_entry(_entry_path(key), MAX_ENTRY_BYTES * 8))
        if payload is None:
            return None
        entry = json.loads(payload)
        if not _valid_entry(entry) or not _unchanged(entry["inputs"], entry["resolved"]):
            return None
        protect = tuple(Path(p) for p in [*entry["inputs"], *entry["resolved"]])
        files = tuple((str(n), str(d).encode("latin-1")) for n, d in entry["files"])
        named = sorted(str(Path(o)) for o in outputs)
        if sorted(str(Path(n)) for n, _data in files) != named:
            return None
        for name, _data in files:
            check_output(Path(name), protect)
        return Replay(entry["exit"], tuple((n, t) for n, t in entry["chunks"]), protect, files)
    except Exception:  # missing, damaged, from another version, or an output now refused: run the command
        return None


def replay(entry: Replay) -> int:
    """Write the stored output again: files first (with the same protections), then the streams."""
    for name, data in entry.files:
        write_output(Path(name), data, protect=entry.protect)
    for number, text in entry.chunks:
        (sys.stdout if number == 1 else sys.stderr).write(text)
    return entry.exit


# Not covered (documented limits): an edit inside an installed dependency that changes neither its
# ``__init__`` file nor its distribution version; the machine itself (a cache directory shared
# between different machines over a network file system). Progress bars are not recorded.
