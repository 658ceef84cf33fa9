"""One run context per command (a base module: every layer reads the run in force).

What a command's answer may depend on, besides its arguments and input files, is held in one
:class:`Run`: the budget (CPU seconds, size limits, where inputs may come from), the cache policy,
and a :class:`Ledger` of what happened during the run — the files it read (no output may replace
one), who is told about each input and output (replay records through it), and how many outcomes
depended on the machine rather than the input (a timeout, a memory failure: such a run is neither
replayed nor cached). The command line installs one run per command; library use without it runs
in the process's default run (no time limit, default limits, the cache on).

The run is a :class:`~contextvars.ContextVar`, so threads and asyncio tasks do not share it by
accident. A run is immutable; :func:`changed` installs a copy with some fields changed for a block
(``--no-cache`` for one command), sharing the ledger, so a nested scope still counts toward the
command. The interrupt source is the process's CPU timer (one ``ITIMER_PROF``, see
:mod:`symabsorb.budget`): signals belong to the process, not to a run; each run's budget is a
deadline on it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .budget import Budget

__all__ = ["Ledger", "Run", "changed", "current", "disable_process_cache", "process_default", "running"]

Observer = Callable[[str, Path, object], None]


@dataclass(eq=False)
class Ledger:
    """What a run did so far (mutable; shared by the nested scopes of one command)."""

    #: Files read, by (device, inode) -> the name they were read under; ``None``: not tracked.
    inputs: dict[tuple[int, int], str] | None = None
    #: Called with ``(event, path, detail)`` for every input and output (see :mod:`symabsorb.paths`).
    observers: list[Observer] = field(default_factory=list)
    #: Outcomes that depend on the machine, not the input (timeouts, memory failures).
    machine_dependent: int = 0


@dataclass(frozen=True)
class Run:
    """The context of one command: its budget, its cache policy and its ledger."""

    budget: Budget
    cache: bool = True
    ledger: Ledger = field(default_factory=Ledger)


def _process_default() -> Run:
    import math

    from .budget import Budget

    return Run(Budget(seconds=math.inf))


_DEFAULT: list[Run] = []  # created on first use (budget.py imports this module)
_current: ContextVar[Run | None] = ContextVar("symabsorb_run", default=None)


def current() -> Run:
    """The run in force: the command's, or the process's default run."""
    run = _current.get()
    return run if run is not None else process_default()


@contextmanager
def running(run: Run) -> Iterator[Run]:
    """Install ``run`` for the body (the command line: one per command)."""
    token = _current.set(run)
    try:
        yield run
    finally:
        _current.reset(token)


@contextmanager
def changed(**fields: Any) -> Iterator[Run]:
    """The current run with ``fields`` changed, for the body; the ledger is shared unless given."""
    with running(replace(current(), **fields)) as run:
        yield run


def process_default() -> Run:
    """The run of library use outside any command (also the process-wide cache switch)."""
    if not _DEFAULT:
        _DEFAULT.append(_process_default())
    return _DEFAULT[0]


def disable_process_cache() -> None:
    """Turn the cache off for the whole process, every run included (:func:`symabsorb.userdirs.disable_cache`)."""
    _DEFAULT[0:1] = [replace(process_default(), cache=False)]
