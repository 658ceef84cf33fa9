"""What a program built on :mod:`symabsorb.api` needs from below it, in one public module: the error
types, one command's run (its CPU budget, the ``--limit`` size limits, the cache policy, the ledger
of files it read), atomic writes that never replace an input, replay of a stored command output,
and terminal-safe text. The command line (:mod:`symabsorb.cli`) reaches the layers only through
:mod:`symabsorb.api` and this module.

Names are loaded on first use, so importing this module costs nothing (``symabsorb --help``
imports no renderer and no SymPy). It holds only what the command line needs and the API does not
offer: one command's run is built and installed by :func:`command_run` (from ``--budget``,
``--limit`` and ``--no-cache``), so the run's parts (``Budget``, ``Run``, ``Ledger``, the enforcing
timer) stay in :mod:`symabsorb.budget` and :mod:`symabsorb.context`.

Budget words: ``Budget.seconds`` (``--budget``) is the CPU seconds of the whole command; each fact
gets ``Budget.per_fact()`` of it (a twentieth, at least 5 s). The API's ``fact_budget=`` argument is
CPU seconds per fact, under the command's budget; ``None`` means no per-fact limit of its own (the
command's share then governs), which is what the command line passes.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

#: public name -> (module, attribute) it comes from (loaded on first access)
_LAZY: dict[str, tuple[str, str]] = {
    # errors: the one exception tree
    "SymabsorbError": ("errors", "SymabsorbError"),
    "SpecError": ("errors", "SpecError"),
    "ArgumentError": ("errors", "ArgumentError"),
    "Span": ("errors", "Span"),
    # the run: its defaults and parsers for the options (the run itself: command_run below)
    "Limits": ("budget", "Limits"),
    "LIMIT_HELP": ("budget", "LIMIT_HELP"),
    "DEFAULT_COMMAND_SECONDS": ("budget", "DEFAULT_COMMAND_SECONDS"),
    "parse_budget": ("budget", "parse_budget"),
    "current": ("budget", "current"),
    # files: reading a spec's source, writing an output atomically (never over an input)
    "read_source": ("dsl.loader", "read_source"),
    "write_output": ("paths", "write_output"),
    # replay of a stored command output (symabsorb.replay), and a stream never recorded
    "replay": ("replay", ""),
    "unrecorded": ("replay", "unrecorded"),
    # text shown in a terminal
    "terminal_text": ("report.escape", "terminal_text"),
    # explore's and scan's progress lines on standard error
    "PhaseProgress": ("explore.progress", "PhaseProgress"),
}

__all__ = [
    "DEFAULT_COMMAND_SECONDS",
    "LIMIT_HELP",
    "ArgumentError",
    "Limits",
    "PhaseProgress",
    "Span",
    "SpecError",
    "SymabsorbError",
    "command_run",
    "current",
    "parse_budget",
    "parse_limits",
    "read_source",
    "replay",
    "terminal_text",
    "unrecorded",
    "write_output",
]

if TYPE_CHECKING:
    from . import replay
    from .budget import DEFAULT_COMMAND_SECONDS, LIMIT_HELP, Limits, current, parse_budget
    from .context import Run
    from .dsl.loader import read_source
    from .errors import ArgumentError, Span, SpecError, SymabsorbError
    from .explore.progress import PhaseProgress
    from .paths import write_output
    from .replay import unrecorded
    from .report.escape import terminal_text


def parse_limits(texts: Iterable[str]) -> Limits:
    """The default size limits with every ``--limit NAME=N`` applied in order (``ValueError`` naming the
    bad one)."""
    from .budget import Limits, parse_limit

    limits = Limits()
    for text in texts:
        limits = parse_limit(text, limits)
    return limits


@contextmanager
def command_run(seconds: float | None, limits: Limits | None = None, *, allow_outside: bool = False,
                cache: bool = True) -> Iterator[Run]:
    """One command's run, installed and enforced for the body: ``seconds`` CPU seconds for the whole command
    (``--budget``; None: the default), the size ``limits`` (``--limit``), inputs outside the working
    directory allowed or not, the cache on or off (``--no-cache``), and a ledger of the files it reads (no
    output may replace one), of who is told about them (replay), of its timeouts."""
    from .budget import Budget, Limits, enforced
    from .context import Ledger, Run, running

    budget = Budget(seconds or Budget().seconds, limits or Limits(), allow_outside)
    run = Run(budget, cache=cache, ledger=Ledger(inputs={}))
    with running(run), enforced(budget):
        yield run


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'symabsorb.runtime' has no attribute {name!r}")
    module = importlib.import_module(f"symabsorb.{where[0]}")
    value = getattr(module, where[1]) if where[1] else module
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
