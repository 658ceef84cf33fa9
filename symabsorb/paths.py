"""Files as untrusted input and as protected output (a base module: every layer may use it).

* :func:`confine` resolves a path named *inside a spec* (an ``import``, a ``weights:`` file) or
  listed by ``scan``: it must stay in the spec's directory tree (symbolic links followed) unless the
  command was given ``--allow-outside``. One kind of link out is the tree's own: a Hugging Face
  cache snapshot (``models--org--name/snapshots/<rev>/x -> ../../blobs/<sha>``) may name the blobs
  of its own repository (:func:`hub_repository`).
* :func:`open_regular` / :func:`read_input` read only regular files (never a FIFO, a device, nor a
  file of a pseudo-filesystem: ``/proc``, ``/sys``, ``/dev``, or any mount of proc, sysfs,
  debugfs, ... — "regular" files of size 0 whose reads may block forever), up to a size cap, and
  never put the file's content in an error message. In the main thread the body of
  :func:`open_regular` is bounded in **wall** time by the command's budget (a read that blocks is
  interrupted: :class:`InputError`).
* :func:`pinned` makes the names of files already open resolve to those descriptors: ``scan`` and
  ``verify`` hash, list and decide the very bytes they opened once, whatever the name points to by
  the time the decision reads it.
* :func:`write_output` replaces a file atomically: never a protected input (the spec, its
  imports, its weights files) nor, inside :func:`tracking_inputs` (the CLI wraps every command in
  it), any file the command has read so far, transitively (imports of imports, scanned weights,
  a spec inside ``--results``), compared by device and inode so no other name or link to it
  helps; never anything but a regular file; the temporary file is named
  ``.NAME.symabsorb-partial-PID`` and removed on every signal that can be caught; the replaced
  file's permission bits are kept; ``OSError`` becomes a clean :class:`OutputError`.
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import math
import os
import re
import signal
import stat
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

from .budget import current
from .context import current as run_context
from .errors import Span, SpecError, SpecImportError, SymabsorbError

__all__ = [
    "PARTIAL_MARK",
    "InputError",
    "OutputError",
    "check_output",
    "confine",
    "confine_descriptor",
    "hub_repository",
    "note_checked",
    "observe",
    "open_regular",
    "pinned",
    "pinned_bytes",
    "pseudo_file_problem",
    "read_input",
    "read_once",
    "read_whole",
    "tracking_inputs",
    "wall_limit",
    "write_output",
]

#: Part of every temporary file name, so a leftover (after ``kill -9``) is obvious.
PARTIAL_MARK = ".symabsorb-partial-"


#: Told about every input a command depends on; :mod:`symabsorb.replay` listens while it records a
#: command. Events: ``("resolve", name, resolved path)`` when :func:`confine` follows a name,
#: ``("check", path, None)`` when a file's existence and kind were checked, ``("read", path, fd)``
#: when a file is opened for reading (the open descriptor: what is read is what is hashed) and
#: ``("write", path, temporary path)`` just before an output replaces ``path``.
#: (The observers and the files read belong to the run in force: :class:`symabsorb.context.Ledger`.)


@contextlib.contextmanager
def observe(callback: Callable[[str, Path, object], None]) -> Iterator[None]:
    """Call ``callback(event, path, detail)`` for each input and output inside the ``with``."""
    observers = run_context().ledger.observers
    observers.append(callback)
    try:
        yield
    finally:
        observers.remove(callback)


def _notify(event: str, path: Path, detail: object = None) -> None:
    for callback in list(run_context().ledger.observers):
        callback(event, path, detail)


@contextlib.contextmanager
def tracking_inputs() -> Iterator[None]:
    """Within the body, every file read through :func:`open_regular` is an input no output may
    replace (:func:`check_output`). (The command line's run tracks them from its start.)"""
    ledger = run_context().ledger
    before = ledger.inputs
    ledger.inputs = {}
    try:
        yield
    finally:
        ledger.inputs = before


def _read_so_far() -> dict[tuple[int, int], str] | None:
    """Files read by the run in force, by (device, inode) -> the name it was read under."""
    return run_context().ledger.inputs


def _track(path: Path, info: os.stat_result) -> None:
    inputs = _read_so_far()
    if inputs is not None:
        inputs.setdefault((info.st_dev, info.st_ino), str(path))


def note_checked(path: Path) -> None:
    """Tell observers that an answer depends on ``path``'s existence and kind (not its content)."""
    _notify("check", path)


class InputError(SpecError):
    """An input file that may not or cannot be read."""


class OutputError(SymabsorbError):
    """An output file that may not or cannot be written."""

    def __str__(self) -> str:
        return f"error: {self.args[0] if self.args else 'cannot write the output'}"


def _describe_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def confine(base: Path, name: str, root: Path | None, span: Span | None, what: str) -> Path:
    """``base / name`` resolved, checked to lie inside ``root`` (the spec's directory tree).

    ``root=None`` or ``--allow-outside`` (the installed budget's ``allow_outside``) lifts the check.
    The error shows the name as written, never anything read from the file.
    """
    target = (base / name)
    try:
        resolved = target.resolve()
    except (OSError, RuntimeError) as err:  # a symlink loop
        raise InputError(f"cannot follow {what} `{name}`", span, f"`{name}`", "a readable file",
                         str(getattr(err, "strerror", None) or "a symbolic-link loop")) from None
    _notify("resolve", target, resolved)
    if root is None or current().allow_outside:
        return resolved
    root = root.resolve()
    if resolved != root and root not in resolved.parents and not _same_hub_blob(root, resolved):
        raise InputError(f"{what} `{name}` is outside the spec's directory", span, f"`{name}`",
                         "a file in the spec's directory or below it",
                         "inputs are confined to the spec's directory tree; pass --allow-outside to lift this")
    return resolved


#: A Hugging Face cache repository directory (``models--org--name``, ``datasets--…``, ``spaces--…``).
_HUB_REPO = re.compile(r"(?:models|datasets|spaces)--[^/]+")


def hub_repository(path: Path) -> Path | None:
    """The Hugging Face cache repository (``…/models--org--name``) whose ``snapshots`` tree holds
    ``path`` (a resolved directory or file), or ``None``. A snapshot is made of relative links
    ``snapshots/<rev>/x -> ../../blobs/<sha>``; the blobs are the repository's own content."""
    parts = path.parts
    for i in range(len(parts) - 1, 0, -1):
        if parts[i] == "snapshots" and _HUB_REPO.fullmatch(parts[i - 1]):
            return Path(*parts[:i])
    return None


def confine_descriptor(fd: int, root: Path, name: str, what: str = "file", span: Span | None = None) -> None:
    """The file open as ``fd`` (opened by ``name``) lies in ``root`` — judged by where the system says
    the descriptor is (``/proc/self/fd``), not by the name, so a link swapped between :func:`confine`
    and the open is caught — or is a blob of the Hugging Face repository ``root`` is a snapshot of;
    ``--allow-outside`` lifts it. Where the system does not tell, :func:`confine`'s check stands."""
    if current().allow_outside:
        return
    try:
        actual = Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return
    root = root.resolve()
    if actual == root or root in actual.parents or _same_hub_blob(root, actual):
        return
    raise InputError(f"{what} `{name}` was opened outside the directory (a link changed while it was read)", span,
                     f"`{name}`", "a file in the directory or below it",
                     "inputs are confined to the directory tree; pass --allow-outside to lift this")


def _same_hub_blob(root: Path, resolved: Path) -> bool:
    """``resolved`` is a blob (a file directly in ``blobs/``) of the cache repository whose
    snapshot tree ``root`` lies in."""
    repo = hub_repository(root)
    return repo is not None and resolved.parent == repo / "blobs"


#: Names (absolute, links not followed) -> an open descriptor, or the bytes already read, to read
#: instead (:func:`pinned`).
_PINS: contextvars.ContextVar[Mapping[str, int | bytes] | None] = contextvars.ContextVar("symabsorb_pins",
                                                                                         default=None)


def _pin_key(path: Path) -> str:
    return os.path.abspath(os.fspath(path))


@contextlib.contextmanager
def pinned(files: Mapping[Path, int | bytes]) -> Iterator[None]:
    """Within the body, :func:`open_regular` of any of these names (taken as absolute paths, links
    not followed) reads the given open descriptor (a duplicate, from its start) or the given bytes
    (read once by :func:`read_once`) instead of looking the name up again: what was listed and
    hashed is what is decided, even if the name is swapped for another file or link meanwhile. A
    descriptor can still be rewritten in place; bytes cannot: pin bytes where a hash binds a
    decision. The caller keeps the descriptors open for the body."""
    merged = dict(_PINS.get() or {})
    merged.update({_pin_key(path): fd for path, fd in files.items()})
    token = _PINS.set(merged)
    try:
        yield
    finally:
        _PINS.reset(token)


def pinned_bytes(path: Path) -> bytes | None:
    """The bytes :func:`pinned` in force for ``path``, if any (None for a descriptor or no pin)."""
    pins = _PINS.get()
    pin = pins.get(_pin_key(path)) if pins else None
    return pin if isinstance(pin, bytes) else None


def read_once(path: Path, span: Span | None = None, what: str = "file", max_bytes: int | None = None,
              hint: str = "paths are relative to the spec file",
              check: Callable[[int], None] | None = None) -> bytes:
    """The whole content of ``path`` read in one pass through one descriptor (:func:`open_regular`:
    regular files only, ``max_bytes`` cap, wall-time bound), ``check(fd)`` called on that
    descriptor first (e.g. :func:`confine_descriptor`). Bytes already :func:`pinned` for the name
    are returned as they are. Hash and decide on the returned buffer (pinned): a file rewritten in
    place meanwhile cannot make the verdict and the hash describe different bytes."""
    held = pinned_bytes(path)
    if held is not None:
        return held
    with open_regular(path, span, what, max_bytes, hint=hint) as (fh, _size):
        if check is not None:
            check(fh.fileno())
        return read_whole(fh, path, span, what, max_bytes)


def read_whole(fh: BinaryIO, path: Path, span: Span | None = None, what: str = "file",
               max_bytes: int | None = None) -> bytes:
    """The rest of the open file ``fh`` (of :func:`open_regular`) in one buffer, at most ``max_bytes``."""
    cap = current().limits.input_bytes if max_bytes is None else max_bytes
    try:
        size = os.fstat(fh.fileno()).st_size
    except (OSError, AttributeError, io.UnsupportedOperation):
        size = cap
    want = min(cap, size) + 1  # never a buffer of the cap's size for a small file
    try:
        data = fh.read(want)
        if len(data) == want:  # longer than its size said: read on, in chunks, up to one byte past the cap
            parts, total = [data], len(data)
            while total <= cap:
                part = fh.read(min(1 << 20, cap + 1 - total))
                if not part:
                    break
                parts.append(part)
                total += len(part)
            data = b"".join(parts)
    except OSError as err:
        raise InputError(f"cannot read {what} `{path}`: {err.strerror}", span) from None
    if len(data) > cap:  # it grew while we read
        raise InputError(f"{what} `{path}` is too large", span, f"more than {cap} bytes", f"at most {cap} bytes",
                         "raise the limit with `--limit input-bytes=N`")
    return data


# ---- pseudo-filesystems -------------------------------------------------------------------------------

#: File systems whose "regular" files are kernel interfaces (size 0, reads that may block or never end).
PSEUDO_FILESYSTEMS = frozenset({
    "proc", "sysfs", "devtmpfs", "devpts", "debugfs", "tracefs", "securityfs", "cgroup", "cgroup2", "configfs",
    "pstore", "bpf", "efivarfs", "fusectl", "mqueue", "binfmt_misc", "autofs", "rpc_pipefs", "nsfs", "hugetlbfs",
    "selinuxfs", "nfsd", "sockfs", "pipefs", "anon_inodefs"})
#: Directories whose files are never input (whatever file system is mounted there).
PSEUDO_ROOTS = ("/proc", "/sys", "/dev")

_pseudo_devices: frozenset[int] | None = None


def _pseudo_device_ids() -> frozenset[int]:
    """Device ids (``st_dev``) of the mounted pseudo-filesystems, from ``/proc/self/mountinfo``
    (read once per process; elsewhere: the devices of ``/proc`` and ``/sys`` themselves)."""
    global _pseudo_devices
    if _pseudo_devices is not None:
        return _pseudo_devices
    found: set[int] = set()
    try:
        fd = os.open("/proc/self/mountinfo", os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            chunks: list[bytes] = []
            while len(chunks) < 4096:  # at most 256 MB: a kernel table, never that large
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(fd)
        for line in b"".join(chunks).decode("utf-8", "replace").splitlines():
            fields = line.split()
            if " - " not in line or len(fields) < 3:
                continue
            fstype = line.split(" - ", 1)[1].split()[0] if line.split(" - ", 1)[1].split() else ""
            if fstype in PSEUDO_FILESYSTEMS:
                major, _, minor = fields[2].partition(":")
                if major.isdigit() and minor.isdigit():
                    found.add(os.makedev(int(major), int(minor)))
    except (OSError, ValueError):
        pass
    for where in ("/proc", "/sys"):
        with contextlib.suppress(OSError):
            found.add(os.stat(where).st_dev)
    _pseudo_devices = frozenset(found)
    return _pseudo_devices


def _under(path: str, roots: Sequence[str]) -> str | None:
    for r in roots:
        if path == r or path.startswith(r + "/"):
            return r
    return None


def pseudo_file_problem(fd: int, path: Path) -> str | None:
    """Why the open descriptor ``fd`` (opened as ``path``) is a pseudo-filesystem file, or ``None``:
    under ``/proc``, ``/sys`` or ``/dev`` (by the name it resolves to, and by the descriptor's own
    path where the system tells it), or on a mounted proc, sysfs, debugfs, ... file system."""
    names = [os.path.realpath(os.fspath(path))]
    with contextlib.suppress(OSError):
        names.append(os.readlink(f"/proc/self/fd/{fd}"))
    for name in names:
        root = _under(name, PSEUDO_ROOTS)
        if root is not None:
            return f"a file under {root} (a kernel interface, not data)"
    try:
        dev = os.fstat(fd).st_dev
    except OSError:
        return None
    if dev in _pseudo_device_ids():
        return "a file of a pseudo-filesystem (proc, sysfs, debugfs, ...: a kernel interface, not data)"
    return None


# ---- wall time --------------------------------------------------------------------------------------

_wall_armed = threading.local()


@contextlib.contextmanager
def wall_limit(seconds: float | None, what: str) -> Iterator[None]:
    """Interrupt the body with :class:`InputError` after ``seconds`` of **wall** time (a read that
    blocks: a network file system, a FUSE file, a kernel file). Only in the main thread (signals
    reach no other) and only when no one else uses ``SIGALRM`` there; nested calls keep the outer
    limit. ``None``, infinite or huge limits: no limit."""
    if (seconds is None or math.isnan(seconds) or math.isinf(seconds) or seconds <= 0 or seconds > 1e8
            or not _is_main_thread() or getattr(_wall_armed, "on", False) or not hasattr(signal, "setitimer")):
        yield
        return
    try:
        previous = signal.getsignal(signal.SIGALRM)
    except (ValueError, OSError):
        yield
        return
    if previous not in (signal.SIG_DFL, signal.SIG_IGN, None):
        yield  # SIGALRM is someone else's (an output being written, a test harness)
        return
    started = time.monotonic()

    def on_alarm(signum: int, frame: object) -> None:
        waited = time.monotonic() - started
        raise InputError(f"{what}: no answer within {seconds:g} s of wall time (waited {waited:.1f} s)", None,
                         "a read that blocks", "a file that can be read",
                         "a network or kernel file that does not answer; copy the file to a local disk")

    signal.signal(signal.SIGALRM, on_alarm)
    _wall_armed.on = True
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _wall_armed.on = False
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def open_regular(path: Path, span: Span | None = None, what: str = "file",
                 max_bytes: int | None = None, expected: str | None = None,
                 hint: str = "paths are relative to the spec file",
                 wall: bool = True) -> Iterator[tuple[BinaryIO, int]]:
    """Open ``path`` for reading if it is a regular file of at most ``max_bytes`` (default: the
    installed ``input-bytes`` limit) and of no pseudo-filesystem; yields ``(binary file, size)``.
    Opened non-blocking, so a FIFO cannot hang the open; checked on the open descriptor, so a swap
    after the check does not help. A name :func:`pinned` in force is not looked up again: its
    descriptor is read. The body runs under :func:`wall_limit` of the command's budget unless
    ``wall=False`` (a descriptor held open for :func:`pinned` around work that is not reading: the
    reads inside, through their own :func:`open_regular`, are bounded each)."""
    budget = current()
    limits = budget.limits
    cap = limits.input_bytes if max_bytes is None else max_bytes
    shown = f"`{path}`"
    pins = _PINS.get()
    pin = pins.get(_pin_key(path)) if pins else None
    if isinstance(pin, bytes):  # read once already (tracked and observed then): served from memory
        if len(pin) > cap:
            raise InputError(f"{what} {shown} is too large ({len(pin)} bytes)", span or Span(str(path), 1, 1, 1, 1),
                             f"{len(pin)} bytes", f"at most {cap} bytes",
                             f"the limit `input-bytes` is {cap}; raise it with `--limit input-bytes=N`")
        with io.BytesIO(pin) as buffer:
            yield buffer, len(pin)
        return
    try:
        if pin is not None:
            fd = os.dup(pin)
            os.lseek(fd, 0, os.SEEK_SET)
        else:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise SpecImportError(f"cannot find {shown}", span, shown, expected or f"an existing {what}", hint) from None
    except IsADirectoryError:
        raise InputError(f"{what} {shown} is a directory", span, "a directory", f"a {what}") from None
    except OSError as err:
        raise InputError(f"cannot read {what} {shown}: {err.strerror}", span, shown, f"a readable {what}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"{what} {shown} is {_describe_kind(info.st_mode)}", span, _describe_kind(info.st_mode),
                             f"a regular {what}", "only regular files are read")
        pseudo = pseudo_file_problem(fd, path)
        if pseudo is not None:
            raise InputError(f"{what} {shown} is {pseudo}", span, pseudo, f"a regular {what} on a disk",
                             "files of /proc, /sys, /dev and other kernel file systems are never read")
        if info.st_size > cap:
            name = "input-bytes"
            raise InputError(f"{what} {shown} is too large ({info.st_size} bytes)",
                             span or Span(str(path), 1, 1, 1, 1), f"{info.st_size} bytes",
                             f"at most {cap} bytes", f"the limit `{name}` is {cap}; raise it with `--limit {name}=N`")
        os.set_blocking(fd, True)
        fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    _track(path, info)
    _notify("read", path, fh.fileno())
    with fh, wall_limit(budget.seconds if wall else None, f"reading {what} {shown}"):
        yield fh, info.st_size


def read_input(path: Path, span: Span | None = None, what: str = "file", max_bytes: int | None = None,
               expected: str | None = None, hint: str = "paths are relative to the spec file") -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (see :func:`open_regular`)."""
    with open_regular(path, span, what, max_bytes, expected, hint) as (fh, _size):
        cap = current().limits.input_bytes if max_bytes is None else max_bytes
        try:
            data = fh.read(cap + 1)
        except OSError as err:
            raise InputError(f"cannot read {what} `{path}`: {err.strerror}", span) from None
        if len(data) > cap:  # it grew while we read
            raise InputError(f"{what} `{path}` is too large", span, f"more than {cap} bytes", f"at most {cap} bytes",
                             "raise the limit with `--limit input-bytes=N`")
        return data


# ---- outputs ------------------------------------------------------------------------------------

_CAUGHT_SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP", "SIGQUIT", "SIGPIPE", "SIGXCPU",
                                                       "SIGXFSZ", "SIGUSR1", "SIGUSR2", "SIGALRM")
                        if hasattr(signal, n))


class _Signalled(BaseException):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def check_output(path: Path, protect: Sequence[Path] = (), rewrites_input: bool = False) -> os.stat_result | None:
    """Refuse an output path that is a protected input, a file this command read (unless
    ``rewrites_input``: ``fmt`` rewriting its own file) or not a regular file; the existing file's
    status (``None`` if it does not exist)."""
    try:
        existing = os.stat(path)
    except FileNotFoundError:
        existing = None
    except OSError as err:
        raise OutputError(f"cannot write `{path}`: {err.strerror}") from None
    if existing is not None:
        if not stat.S_ISREG(existing.st_mode):
            raise OutputError(f"refusing to write `{path}`: it is {_describe_kind(existing.st_mode)}, not a regular "
                              "file; choose another -o FILE")
        for i, p in enumerate(protect):
            try:
                if _same_file(existing, os.stat(p)):
                    what = "the spec" if i == 0 else "the input"
                    raise OutputError(f"refusing to overwrite {what} `{p}` with the output; choose another -o FILE")
            except OSError:
                continue
        inputs = _read_so_far()
        read = inputs.get((existing.st_dev, existing.st_ino)) if inputs is not None and not rewrites_input else None
        if read is not None:
            raise OutputError(f"refusing to overwrite `{path}`: it is `{read}`, an input this command read; choose "
                              "another output")
    directory = path.absolute().parent
    if not directory.is_dir():
        raise OutputError(f"cannot write `{path}`: the directory `{directory}` does not exist (create it first)")
    return existing


def write_output(path: Path, write: Callable[[Path], None] | bytes | str, protect: Sequence[Path] = (),
                 rewrites_input: bool = False) -> None:
    """Replace ``path`` atomically with ``write`` (bytes, text, or a function writing to the temporary path).

    Refuses protected inputs and non-regular targets (see :func:`check_output`); keeps the
    permission bits of a replaced file (new files: ``0666 & ~umask``); removes the temporary file
    on any exception and on every catchable signal (then dies of that signal as it would have).
    """
    existing = check_output(path, protect, rewrites_input)
    directory = path.absolute().parent
    # `.report.symabsorb-partial-123.html`: hidden, obviously ours, and the suffix kept for writers
    # that choose the format from it.
    tmp = directory / f".{path.stem}{PARTIAL_MARK}{os.getpid()}{path.suffix}"
    previous: dict[int, object] = {}

    def on_signal(signum: int, frame: object) -> None:
        raise _Signalled(signum)

    in_main = _is_main_thread()
    try:
        if in_main:
            for sig in _CAUGHT_SIGNALS:
                previous[sig] = signal.signal(sig, on_signal)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.close(fd)
            if callable(write):
                write(tmp)
            else:
                data = write.encode("utf-8") if isinstance(write, str) else write
                with open(tmp, "wb") as fh:
                    fh.write(data)
            if existing is not None:
                mode = stat.S_IMODE(existing.st_mode)
            else:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
            os.chmod(tmp, mode)
            # Checked again just before the swap: the target may have become something else.
            check_output(path, protect, rewrites_input)
            _notify("write", path, tmp)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except _Signalled as sig:
        for s, h in previous.items():
            signal.signal(s, h)  # type: ignore[arg-type]
        previous.clear()
        os.kill(os.getpid(), sig.signum)
        raise OutputError(f"interrupted by signal {sig.signum} while writing `{path}`; nothing was written") from None
    except OSError as err:
        raise OutputError(f"cannot write `{path}`: {err.strerror or err}") from None
    finally:
        for s, h in previous.items():
            signal.signal(s, h)  # type: ignore[arg-type]


def _is_main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()
