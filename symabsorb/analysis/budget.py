"""Time budgets for facts: a fact that cannot be decided in time is ``unknown`` (reason ``timeout``,
or ``budget`` when the whole command's budget ran out). Time is CPU time; see :mod:`symabsorb.budget`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..budget import DEFAULT_FACT_SECONDS, BudgetExhausted, Timeout, current, deadline

__all__ = ["DEFAULT_BUDGET", "BudgetExhausted", "Timeout", "fact_budget", "time_budget"]

#: CPU seconds one fact may take by default.
DEFAULT_BUDGET = DEFAULT_FACT_SECONDS


@contextmanager
def time_budget(seconds: float | None) -> Iterator[None]:
    """Interrupt the body with :class:`Timeout` after ``seconds`` of CPU time (``None`` or ``0``:
    no limit of its own). Inside the command's budget, whichever ends first governs. Works in the
    main thread only; elsewhere the body runs without its own limit."""
    with deadline(seconds or None):
        yield


def fact_budget(seconds: float | None) -> float | None:
    """The CPU seconds of one fact: ``seconds``, never more than the installed budget's per-fact share."""
    cap = current().per_fact()
    if seconds is None or seconds <= 0:
        return cap if cap != float("inf") else None
    return min(seconds, cap)
