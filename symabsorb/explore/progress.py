"""Progress of the phases of ``explore`` and ``scan``: counts and an honest ETA.

The ETA counts only the cases this run has finished, over the time since its first one started: the
cases resumed from the results file cost nothing and would make a rate of "cases per second" look
far better than the work left (rich's own estimate saw a phase resume 900 cases in its first sample).
Before the first case of a phase finishes there is no estimate, and none is shown.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

__all__ = ["PhaseProgress", "eta_text"]


def eta_text(ran: int, left: int, elapsed: float) -> str:
    """``ETA 3m20s`` from ``ran`` cases finished in ``elapsed`` seconds, ``left`` to go; ``ETA —``
    before the first one, ``done`` when nothing is left."""
    if left <= 0:
        return "done"
    if ran <= 0 or elapsed <= 0:
        return "ETA —"
    seconds = round(elapsed / ran * left)
    if seconds < 60:
        return f"ETA {seconds}s"
    minutes, s = divmod(seconds, 60)
    if minutes < 60:
        return f"ETA {minutes}m{s:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"ETA {hours}h{minutes:02d}m"


@dataclass
class _Phase:
    start: float
    resumed: int
    task: Any = None
    last_printed: int = -1


class PhaseProgress:
    """A ``(phase, done, total)`` callback: rich bars on a terminal (description, bar, ``done/total``,
    ETA, elapsed), else a line every tenth of a phase. :meth:`close` stops the live display."""

    def __init__(self, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic,
                 live: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.clock = clock
        self.phases: dict[str, _Phase] = {}
        self.bars: Any = None
        if live if live is not None else self.stream.isatty():
            try:
                from rich.console import Console
                from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

                self.bars = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                     TextColumn("{task.fields[eta]}"), TimeElapsedColumn(),
                                     console=Console(file=self.stream), transient=False)
                self.bars.start()
            except ImportError:
                self.bars = None

    def eta(self, phase: str, done: int, total: int) -> str:
        p = self.phases[phase]
        return eta_text(done - p.resumed, total - done, self.clock() - p.start)

    def __call__(self, phase: str, done: int, total: int) -> None:
        if phase not in self.phases:
            self.phases[phase] = _Phase(self.clock(), done)  # what is already done was resumed
        p = self.phases[phase]
        eta = self.eta(phase, done, total)
        if self.bars is not None:
            if p.task is None:
                p.task = self.bars.add_task(phase, total=max(total, 1), completed=done, eta=eta)
            self.bars.update(p.task, completed=done, total=max(total, 1), eta=eta)
            return
        step = max(1, total // 10)
        if done == total or (total >= 20 and done % step == 0) or p.last_printed < 0:
            if p.last_printed != done:
                resumed = f", {p.resumed} resumed" if p.resumed else ""
                print(f"{phase}: {done}/{total}{resumed}, {eta}", file=self.stream, flush=True)
                p.last_printed = done

    def close(self) -> None:
        if self.bars is not None:
            self.bars.stop()
            self.bars = None
