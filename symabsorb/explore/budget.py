"""A CPU-time budget for one exploration case, in any thread (a Dask worker runs tasks in threads).

The analysis layer's own budget uses ``SIGALRM``, which only works in the main thread and counts
wall-clock time. Here a watchdog thread reads the task thread's CPU clock
(``pthread_getcpuclockid``) and, once the budget is spent, raises :class:`CpuBudgetExceeded` in the
task thread with ``PyThreadState_SetAsyncExc``. The exception derives from ``BaseException`` so
that no ``except Exception`` inside SymPy swallows it. It is delivered between bytecodes: a single
long call into C (a huge FLINT product) finishes first, and never inside an ``import`` (the
watchdog waits for it to finish: a half-imported module would break every later case).
"""

from __future__ import annotations

import ctypes
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["BudgetOutcome", "CpuBudgetExceeded", "cpu_clock_available", "run_with_cpu_budget"]

T = TypeVar("T")
_POLL = 0.05
#: CPU seconds of the case's thread after which a budget exception that did not stop it is raised again.
_REFIRE = 0.25


class CpuBudgetExceeded(BaseException):
    """Raised inside a case whose CPU budget ran out."""


@dataclass(frozen=True)
class BudgetOutcome(Generic[T]):
    value: T | None
    exceeded: bool
    cpu_seconds: float


def cpu_clock_available() -> bool:
    return hasattr(time, "pthread_getcpuclockid")


def _set_async_exc(ident: int, exc: type[BaseException] | None) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(exc) if exc else None)


def _importing(ident: int) -> bool:
    """Whether the thread is inside an import (interrupting one would leave a half-initialised
    module behind: ``module 'networkx' has no attribute ...`` in every later case) or a finalizer
    (``__del__``, a weak-reference or garbage-collector callback: Dask's workers register one),
    where the exception would be lost ("Exception ignored in ..."). The watchdog waits."""
    from ..budget import _importing as in_import_or_finalizer

    return in_import_or_finalizer(sys._current_frames().get(ident))


class _Watchdog(threading.Thread):
    def __init__(self, ident: int, clock: int, seconds: float) -> None:
        super().__init__(name="symabsorb-cpu-budget", daemon=True)
        self.ident_target = ident
        self.clock = clock
        self.limit = time.clock_gettime(clock) + seconds
        self.lock = threading.Lock()
        self.armed = True
        self.fired = False
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(_POLL):
            with self.lock:
                if not self.armed:
                    return
                try:
                    spent = time.clock_gettime(self.clock)
                except OSError:  # the thread is gone
                    return
                if spent >= self.limit and not _importing(self.ident_target):
                    # Fired again every REFIRE seconds of the thread's CPU until the case ends: an
                    # exception can still be swallowed (a broad `except BaseException`, a finalizer
                    # entered after the check), and a budget must always stop the work.
                    self.fired = True
                    self.limit = spent + _REFIRE
                    _set_async_exc(self.ident_target, CpuBudgetExceeded)

    def disarm(self) -> None:
        with self.lock:
            self.armed = False
        self.done.set()


def run_with_cpu_budget(compute: Callable[[], T], seconds: float | None) -> BudgetOutcome[T]:
    """Run ``compute()`` in this thread; stop it with :class:`CpuBudgetExceeded` after ``seconds``
    of this thread's CPU time (``None`` or 0: no limit)."""
    start = time.thread_time()
    if not seconds or not cpu_clock_available():
        value = compute()
        return BudgetOutcome(value, False, time.thread_time() - start)
    ident = threading.get_ident()
    dog = _Watchdog(ident, time.pthread_getcpuclockid(ident), seconds)
    try:
        try:
            _start_shielded(dog)  # inside: the case's own budget may already strike while it starts
            value = compute()
        finally:
            while True:  # a re-fired exception may land in here: disarming must still happen
                try:
                    dog.disarm()
                    break
                except CpuBudgetExceeded:
                    continue
            if dog.fired:
                _set_async_exc(ident, None)  # clear an exception not yet delivered
    except CpuBudgetExceeded:
        _finish(dog, ident)
        return BudgetOutcome(None, True, time.thread_time() - start)
    _finish(dog, ident)
    if dog.fired:
        return BudgetOutcome(None, True, time.thread_time() - start)
    return BudgetOutcome(value, False, time.thread_time() - start)


def _start_shielded(dog: threading.Thread) -> None:
    """Start the watchdog with the command's CPU-timer signal held back: a budget exception raised
    inside ``Thread.start`` (after the thread exists, inside its ``try``) made ``threading`` forget
    the thread twice ("Exception ignored in thread ... KeyError"). The signal is delivered just after."""
    import signal

    held = {signal.SIGPROF} if hasattr(signal, "pthread_sigmask") and hasattr(signal, "SIGPROF") else set()
    if held:
        signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        dog.start()
    finally:
        if held:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, held)


def _finish(dog: threading.Thread, ident: int) -> None:
    """Wait for the (disarmed) watchdog to end, then clear any exception it set: once it has ended
    nothing can set one again, so none is delivered after the case (inside the caller's code)."""
    for _ in range(10_000):
        try:
            if dog.ident is None:
                break  # never started: nothing to wait for
            dog.join()
            break
        except CpuBudgetExceeded:
            continue
        except RuntimeError:  # started, but not yet marked so: wait for it
            time.sleep(0.001)
    _set_async_exc(ident, None)
