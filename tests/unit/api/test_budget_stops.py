"""A CPU budget always stops the work (issue 21 item 13): a limit that fires inside a garbage-collector
callback (Hypothesis and Dask's workers register some) used to be printed as "Exception ignored in
..." and lost, so a fact's deadline, which fires once, let the work run on; the exploration
watchdog fired once as well."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator

import pytest

from symabsorb.budget import Budget, BudgetExhausted, Timeout, deadline, installed


def _spin(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


@pytest.fixture
def slow_gc_callback() -> Iterator[list[str]]:
    """A garbage-collector callback that spends 0.3 s of CPU at the start of each collection."""
    ran: list[str] = []

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            _spin(0.3)
            ran.append(phase)

    gc.callbacks.append(callback)
    try:
        yield ran
    finally:
        gc.callbacks.remove(callback)


@pytest.mark.slow  # burns a budget on purpose (the fast tier's budget: make test-fast <= 60 s)
def test_a_fact_deadline_that_fires_in_a_gc_callback_still_stops_the_work(slow_gc_callback: list[str]) -> None:
    start = time.process_time()
    with pytest.raises(Timeout), deadline(0.1):
        gc.collect()  # the deadline passes inside the callback: it must wait, not be lost...
        assert slow_gc_callback
        _spin(5)  # ...and stop this
    assert time.process_time() - start < 3


@pytest.mark.slow  # burns a budget on purpose (the fast tier's budget: make test-fast <= 60 s)
def test_a_command_budget_that_fires_in_a_gc_callback_still_stops_the_work(slow_gc_callback: list[str]) -> None:
    start = time.process_time()
    with installed(Budget(0.1)), pytest.raises(BudgetExhausted):
        gc.collect()
        assert slow_gc_callback
        _spin(5)
    assert time.process_time() - start < 3


def test_an_exploration_case_budget_is_raised_again_when_swallowed() -> None:
    from symabsorb.explore.budget import cpu_clock_available, run_with_cpu_budget

    if not cpu_clock_available():
        pytest.skip("no per-thread CPU clock on this platform")
    swallowed: list[bool] = []

    def stubborn() -> str:
        end = time.thread_time() + 5
        while time.thread_time() < end:
            try:
                while time.thread_time() < end:
                    pass
            except BaseException:  # code that swallows everything, once
                if swallowed:
                    raise
                swallowed.append(True)
        return "ran to the end"

    outcome = run_with_cpu_budget(stubborn, 0.2)
    assert swallowed and outcome.exceeded and outcome.value is None and outcome.cpu_seconds < 3


@pytest.mark.slow  # an exploration run, seconds of CPU (the fast tier's budget: make test-fast <= 60 s)
def test_an_exploration_case_budget_is_not_lost_in_a_gc_callback(slow_gc_callback: list[str]) -> None:
    from symabsorb.explore.budget import cpu_clock_available, run_with_cpu_budget

    if not cpu_clock_available():
        pytest.skip("no per-thread CPU clock on this platform")

    def work() -> str:
        for _ in range(3):
            gc.collect()
        _spin(5)
        return "ran to the end"

    outcome = run_with_cpu_budget(work, 0.1)
    assert outcome.exceeded and outcome.value is None and outcome.cpu_seconds < 4
