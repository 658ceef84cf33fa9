"""One budget per command: CPU seconds for everything it does, size limits checked before work,
and where input files may come from. A base module: every layer reads the budget in force.

The command line creates one :class:`Budget` at the command's entry, as part of the command's run
(:mod:`symabsorb.context`), and enforces it (:func:`enforced`; :func:`installed` does both for a
block); the parser, the resolver, the fact engine and the searches all run under it.
Time is *CPU* time of the process (``ITIMER_PROF``, ``time.process_time``), never wall-clock, so an
answer does not depend on how busy the machine is.

When the command's budget runs out, :class:`BudgetExhausted` is raised inside whatever runs (a
fact then becomes ``unknown (budget)``; elsewhere the command stops with a clean error), and it is
raised again every :data:`REFIRE_SECONDS` of CPU until the command ends, so code that swallows
exceptions cannot run on unbounded.
"""

from __future__ import annotations

import math
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .context import changed
from .context import current as run_context
from .errors import SymabsorbError

__all__ = [
    "DEFAULT_COMMAND_SECONDS",
    "DEFAULT_FACT_SECONDS",
    "LIMIT_HELP",
    "REFIRE_SECONDS",
    "Budget",
    "BudgetExhausted",
    "Limits",
    "Timeout",
    "current",
    "deadline",
    "enforced",
    "installed",
    "note_machine_dependent",
    "parse_budget",
    "parse_limit",
    "timeouts",
]

#: CPU seconds a whole command may use unless ``--budget`` says otherwise.
DEFAULT_COMMAND_SECONDS = 100.0
#: CPU seconds one fact may use by default: a twentieth of the command's budget, at least this
#: (and never more than the command's budget).
DEFAULT_FACT_SECONDS = 5.0
#: After the command's budget ran out, :class:`BudgetExhausted` is raised again this often (CPU s).
REFIRE_SECONDS = 0.05


class Timeout(Exception):
    """Raised inside a computation whose time ran out; ``reason`` says which budget."""

    def __init__(self, reason: str = "timeout") -> None:
        super().__init__(reason)
        self.reason = reason
        note_machine_dependent()


def timeouts() -> int:
    """How many :class:`Timeout` exceptions (and other machine-dependent outcomes, see
    :func:`note_machine_dependent`) the run in force has seen so far (an answer given after one
    depends on the machine's speed, so it is not replayed: see symabsorb/replay.py)."""
    return run_context().ledger.machine_dependent


def note_machine_dependent() -> None:
    """Record an outcome that depends on the machine, not the input (a ``MemoryError`` made a fact
    ``unknown``): like a timeout, the answer is then not replayed."""
    run_context().ledger.machine_dependent += 1


class BudgetExhausted(Timeout, SymabsorbError):
    """The command's whole CPU budget is spent."""

    def __str__(self) -> str:
        return (f"error: {self.reason}\n  hint: raise it with `--budget SECONDS` (CPU seconds for the whole "
                "command)")


@dataclass(frozen=True)
class Limits:
    """Sizes checked before any work; each is raised on the command line with ``--limit NAME=N``."""

    input_bytes: int = 1_000_000
    depth: int = 100
    digits: int = 4000
    exponent: int = 4096
    tokens: int = 100_000
    files: int = 100

    def name_of(self, attr: str) -> str:
        return attr.replace("_", "-")

    def hint(self, attr: str) -> str:
        return f"the limit `{self.name_of(attr)}` is {getattr(self, attr)}; raise it with `--limit {self.name_of(attr)}=N`"


#: What each limit bounds (help text and docs are derived from this one table).
LIMIT_HELP = {
    "input-bytes": "bytes of one spec or imported file",
    "depth": "nesting depth of brackets, `if`s, calls and powers in one expression",
    "digits": "decimal digits of a number, written or computed exactly (Python refuses > 4300)",
    "exponent": "size of an exponent applied to a number",
    "tokens": "names, numbers and operators in one file or expression (parsing is linear in them)",
    "files": "files a spec may import, transitively",
}


@dataclass(frozen=True)
class Budget:
    """CPU seconds for one command, the limits, and the directory tree inputs must come from."""

    seconds: float = DEFAULT_COMMAND_SECONDS
    limits: Limits = field(default_factory=Limits)
    allow_outside: bool = False

    def per_fact(self) -> float:
        """The budget of one fact: a twentieth of the command's, at least 5 s, at most all of it."""
        return min(max(DEFAULT_FACT_SECONDS, self.seconds / 20), self.seconds)


def current() -> Budget:
    """The budget of the run in force (library use without :func:`installed`: default limits, no
    time limit); see :mod:`symabsorb.context`."""
    return run_context().budget


def parse_budget(text: str) -> float:
    """``--budget``: a finite number of CPU seconds > 0. There is no "unlimited": pass a large number."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"--budget={text!r} is not a number; give CPU seconds, e.g. --budget 30") from None
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"--budget={text} is not finite; give CPU seconds, e.g. --budget 3600 for an hour")
    if value <= 0:
        raise ValueError(f"--budget={text} must be > 0 (0 is not 'unlimited'); give CPU seconds, e.g. --budget 30")
    if value > 1e7:
        raise ValueError(f"--budget={text} is more than 10^7 CPU seconds; give at most 10000000")
    return value


def parse_limit(text: str, limits: Limits) -> Limits:
    """``--limit NAME=N``: ``limits`` with one limit changed."""
    name, sep, raw = text.partition("=")
    names = {f.name.replace("_", "-"): f.name for f in fields(Limits)}
    if not sep or name.strip() not in names:
        raise ValueError(f"--limit {text!r}: expected NAME=N with NAME one of " + ", ".join(sorted(names)))
    try:
        value = int(raw.strip())
    except ValueError:
        raise ValueError(f"--limit {text!r}: N must be a whole number") from None
    if value < 1 or value > 10**12:
        raise ValueError(f"--limit {text!r}: N must be between 1 and 10^12")
    printable = sys.get_int_max_str_digits()
    if names[name.strip()] == "digits" and printable and value > printable:
        # A larger exact number could be parsed or computed but never printed (a ValueError deep in
        # a renderer, exit 3): the interpreter's own limit is the largest honest one.
        raise ValueError(f"--limit {text!r}: N must be at most {printable} for digits (Python converts no larger "
                         "integer to text; PYTHONINTMAXSTRDIGITS raises that)")
    return replace(limits, **{names[name.strip()]: value})


# ---- the CPU timer: one ITIMER_PROF shared by nested deadlines ---------------------------------

@dataclass(eq=False)
class _Deadline:
    at: float  # process_time() at which it expires
    make: Callable[[], Timeout]
    command: bool  # the whole command's budget (keeps firing once spent)


_stack: list[_Deadline] = []
# True while the stack is being changed: the handler then only re-arms, so an exception can never
# land in the middle of the bookkeeping (and leave a stale deadline behind).
_busy = False


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _arm() -> None:
    if not _stack:
        signal.setitimer(signal.ITIMER_PROF, 0)
        return
    now = time.process_time()
    delay = min(d.at for d in _stack) - now
    if math.isinf(delay):
        signal.setitimer(signal.ITIMER_PROF, 0)
        return
    signal.setitimer(signal.ITIMER_PROF, max(delay, 1e-4))


#: CPU seconds to wait before trying again when the timer fires inside an ``import``.
IMPORT_RETRY_SECONDS = 0.01


def _callback_codes() -> set[Any]:
    """The code objects of the garbage collector's callbacks (``gc.callbacks``: Hypothesis and
    Dask's worker register some). An exception raised inside one is printed as "Exception ignored
    in ..." and lost: a time limit raised there would never stop the work."""
    import gc

    codes = set()
    for callback in gc.callbacks:
        function = getattr(callback, "__func__", callback)
        code = getattr(function, "__code__", None)
        if code is not None:
            codes.add(code)
    return codes


def _importing(frame: Any) -> bool:
    """Whether the interrupted code is executing an ``import`` (a module's body included), or a
    finalizer (``__del__``, a weak-reference callback, a garbage-collector callback), where an
    exception is either lost ("Exception ignored in ...") or leaves a half-done cleanup behind."""
    callbacks = _callback_codes()
    while frame is not None:
        code = frame.f_code
        if (code.co_filename.startswith("<frozen importlib") or code.co_name == "__del__"
                or code.co_filename.endswith("weakref.py") or code in callbacks):
            return True
        frame = frame.f_back
    return False


def _on_timer(signum: int, frame: Any) -> None:
    if _busy:
        return  # the bookkeeping re-arms the timer when it is done
    if _importing(frame):
        # An exception in the middle of an import leaves a half-initialised module behind (numpy
        # lost `np.matrix` for the rest of the process), one in a finalizer is lost: let it finish.
        signal.setitimer(signal.ITIMER_PROF, IMPORT_RETRY_SECONDS)
        return
    now = time.process_time()
    expired = next((d for d in _stack if now >= d.at - 1e-3), None)
    if expired is None:
        _arm()
        return
    # The command's budget fires again soon, so that a swallowed exception cannot let work run
    # on; a fact's deadline fires once (its `with` is being left).
    expired.at = now + REFIRE_SECONDS if expired.command else math.inf
    _arm()
    raise expired.make()


@contextmanager
def _push(entry: _Deadline) -> Iterator[None]:
    global _busy
    if not _main_thread():
        yield  # signals reach the main thread only; elsewhere only cooperative checks apply
        return
    _busy = True
    try:
        previous = signal.signal(signal.SIGPROF, _on_timer) if not _stack else None
        _stack.append(entry)
        spent = time.process_time() >= entry.at
    finally:
        _busy = False
    try:
        if spent:
            raise entry.make()
        _arm()
        yield
    finally:
        _busy = True
        try:
            _stack.remove(entry)
            if not _stack:
                signal.setitimer(signal.ITIMER_PROF, 0)
                # Our handler stays when there was none: a SIGPROF still pending must not kill the process.
                if callable(previous) and previous is not _on_timer:
                    signal.signal(signal.SIGPROF, previous)
            else:
                _arm()
        finally:
            _busy = False


@contextmanager
def installed(budget: Budget) -> Iterator[Budget]:
    """Run the body under ``budget``: the run in force with this budget (its limits are
    :func:`current`), and its CPU seconds enforced."""
    with changed(budget=budget), enforced(budget):
        yield budget


@contextmanager
def enforced(budget: Budget) -> Iterator[Budget]:
    """Stop the body with :class:`BudgetExhausted` once it has used ``budget.seconds`` of CPU (the
    command line: around the command's whole run)."""
    if math.isinf(budget.seconds):
        yield budget
        return
    start = time.process_time()
    seconds = budget.seconds

    def spent() -> Timeout:
        used = time.process_time() - start
        return BudgetExhausted(f"budget: the command's budget of {seconds:g} CPU seconds ran out "
                               f"(used {used:.1f} s)")

    with _push(_Deadline(start + seconds, spent, command=True)):
        yield budget


@contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Interrupt the body with :class:`Timeout` after ``seconds`` of CPU (``None``: no own limit;
    an enclosing command budget still applies). Nested deadlines: the earliest governs."""
    if seconds is None or math.isinf(seconds):
        yield
        return
    if seconds <= 0 or math.isnan(seconds):
        raise ValueError(f"a time budget must be > 0 seconds, not {seconds}")
    limit = seconds

    def timeout() -> Timeout:
        return Timeout(f"timeout: not decided within {limit:g} CPU seconds")

    with _push(_Deadline(time.process_time() + seconds, timeout, command=False)):
        yield


def check() -> None:
    """Cooperative check for work off the main thread (where the timer cannot interrupt)."""
    for d in _stack:
        if d.command and time.process_time() >= d.at:
            raise d.make()


def input_root(path: str | Path) -> Path:
    """The directory tree a spec's inputs must come from: the spec's own directory."""
    return Path(path).absolute().parent.resolve()
