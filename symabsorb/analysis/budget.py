"""Time budgets: a fact that cannot be decided in time is ``unknown`` (reason ``timeout``)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["DEFAULT_BUDGET", "Timeout", "time_budget"]

DEFAULT_BUDGET = 5.0


class Timeout(Exception):
    """Raised inside a computation whose budget ran out."""


@contextmanager
def time_budget(seconds: float | None) -> Iterator[None]:
    """Interrupt the body with :class:`Timeout` after ``seconds`` (main thread only; elsewhere
    the body runs without a limit). Inside a running budget, the outer one governs."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return
    remaining, _ = signal.getitimer(signal.ITIMER_REAL)
    if remaining:
        yield  # an outer budget is already running and governs
        return
    previous_handler = signal.getsignal(signal.SIGALRM)

    def _raise(signum: int, frame: object) -> None:
        raise Timeout(f"exceeded {seconds:g} s")

    signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous_handler)
