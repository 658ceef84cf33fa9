"""What a program built on :mod:`symabsorb.api` needs from below it, in one public module: the error
types, one command's run (its CPU budget, the ``--limit`` size limits, the cache policy, the ledger
of files it read), atomic writes that never replace an input, replay of a stored command output,
and terminal-safe text. The command line (:mod:`symabsorb.cli`) reaches the layers only through
:mod:`symabsorb.api` and this module.

Names are loaded on first use, so importing this module costs nothing (``symabsorb --help``
imports no renderer and no SymPy).

Budget words: ``Budget.seconds`` (``--budget``) is the CPU seconds of the whole command; each fact
gets ``Budget.per_fact()`` of it (a twentieth, at least 5 s). The API's ``budget=`` argument is
CPU seconds per fact, under the command's budget; ``None`` means no per-fact limit of its own (the
command's share then governs), which is what the command line passes.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: public name -> (module, attribute) it comes from (loaded on first access)
_LAZY: dict[str, tuple[str, str]] = {
    # errors: the one exception tree
    "SymabsorbError": ("errors", "SymabsorbError"),
    "SpecError": ("errors", "SpecError"),
    "ArgumentError": ("errors", "ArgumentError"),
    "Span": ("errors", "Span"),
    # the run: CPU budget, size limits, the context every layer reads
    "Budget": ("budget", "Budget"),
    "Limits": ("budget", "Limits"),
    "LIMIT_HELP": ("budget", "LIMIT_HELP"),
    "DEFAULT_COMMAND_SECONDS": ("budget", "DEFAULT_COMMAND_SECONDS"),
    "parse_budget": ("budget", "parse_budget"),
    "parse_limit": ("budget", "parse_limit"),
    "enforced": ("budget", "enforced"),
    "current": ("budget", "current"),
    "Ledger": ("context", "Ledger"),
    "Run": ("context", "Run"),
    "running": ("context", "running"),
    # files: reading a spec's source, writing an output atomically (never over an input)
    "read_source": ("dsl.loader", "read_source"),
    "write_output": ("paths", "write_output"),
    # replay of a stored command output (symabsorb.replay), and a stream never recorded
    "replay": ("replay", ""),
    "unrecorded": ("replay", "unrecorded"),
    # text shown in a terminal or printed as JSON
    "json_safe": ("report.escape", "json_safe"),
    "terminal_text": ("report.escape", "terminal_text"),
    # explore's and scan's progress lines on standard error
    "PhaseProgress": ("explore.progress", "PhaseProgress"),
}

__all__ = [
    "DEFAULT_COMMAND_SECONDS",
    "LIMIT_HELP",
    "ArgumentError",
    "Budget",
    "Ledger",
    "Limits",
    "PhaseProgress",
    "Run",
    "Span",
    "SpecError",
    "SymabsorbError",
    "current",
    "enforced",
    "json_safe",
    "parse_budget",
    "parse_limit",
    "read_source",
    "replay",
    "running",
    "terminal_text",
    "unrecorded",
    "write_output",
]

if TYPE_CHECKING:
    from . import replay
    from .budget import (
        DEFAULT_COMMAND_SECONDS,
        LIMIT_HELP,
        Budget,
        Limits,
        current,
        enforced,
        parse_budget,
        parse_limit,
    )
    from .context import Ledger, Run, running
    from .dsl.loader import read_source
    from .errors import ArgumentError, Span, SpecError, SymabsorbError
    from .explore.progress import PhaseProgress
    from .paths import write_output
    from .replay import unrecorded
    from .report.escape import json_safe, terminal_text


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
