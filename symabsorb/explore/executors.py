"""Where cases run: in this process (tests, no Dask), or on a Dask cluster (``dask.distributed``).

Both take the same list of ``(function, task)`` pairs and call ``on_result`` with each record as
soon as it is ready, in completion order (the atlas sorts, so the order never shows). Dask is
imported only here and only when used.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["DaskExecutor", "Executor", "InProcessExecutor", "LazyExecutor", "dask_available", "error_record"]

Job = tuple[Callable[[Any], dict[str, Any]], Any]


class Executor(Protocol):
    name: str

    def run(self, jobs: Sequence[Job], on_result: Callable[[dict[str, Any]], None]) -> None: ...

    def close(self) -> None: ...


def dask_available() -> bool:
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


def error_record(task: Any, err: BaseException) -> dict[str, Any]:
    """The record of a task that raised (or whose worker died): open, with the reason."""
    return {"id": task.id, "kind": task.kind, "label": getattr(task, "label", ""), "space": getattr(task, "space", None),
            "gated": getattr(task, "gated", None), "status": "error", "verdict": "open",
            "error": f"{type(err).__name__} while running the case", "cpu_s": 0.0,
            **({"of": task.of} if hasattr(task, "of") else {})}


@dataclass
class InProcessExecutor:
    name: str = "in-process"

    def run(self, jobs: Sequence[Job], on_result: Callable[[dict[str, Any]], None]) -> None:
        from ..budget import BudgetExhausted

        for fn, task in jobs:
            try:
                record = fn(task)
            except BudgetExhausted:
                raise  # the command's budget ends the command: no error record is stored for the case
            except Exception as err:  # same contract as the Dask path: record it, keep going
                record = error_record(task, err)
            on_result(record)

    def close(self) -> None:
        pass


class DaskExecutor:
    """A ``distributed.Client``: on a local cluster of ``workers`` single-threaded processes, or
    connected to the scheduler at ``address``. Every worker needs symabsorb importable."""

    def __init__(self, address: str | None = None, workers: int = 2) -> None:
        from distributed import Client, LocalCluster

        self.cluster = None
        self.address = address
        if address is None:
            self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                        dashboard_address=":0", silence_logs=logging.ERROR)
            self.client = Client(self.cluster)
            self.name = f"dask local cluster ({workers} worker processes)"
        else:
            from ..budget import current
            from ..errors import SymabsorbError

            wait = max(1.0, min(10.0, current().seconds))  # the connection waits in wall time, within the budget
            try:
                self.client = Client(address, timeout=wait)
            except (OSError, TimeoutError, ValueError, TypeError) as err:
                raise SymabsorbError(f"error: cannot reach the Dask scheduler at `{address}` within {wait:g} s "
                                     f"({type(err).__name__}); start it, or drop --scheduler for a local "
                                     "cluster") from None
            self.name = f"dask scheduler {address}"

    def _workers(self) -> int:
        try:
            return len(self.client.scheduler_info().get("workers", {}))
        except Exception:  # the scheduler went away: as good as no worker
            return 0

    def _no_workers(self, grace: float) -> Exception:
        from ..errors import SymabsorbError

        where = self.address or "the local cluster"
        return SymabsorbError(f"error: the Dask scheduler at `{where}` has no workers (none joined within {grace:g} s "
                              "of wall time), so no case can run; start workers (dask worker ADDRESS), or drop "
                              "--scheduler for a local cluster")

    def run(self, jobs: Sequence[Job], on_result: Callable[[dict[str, Any]], None]) -> None:
        """Every job's record, as each finishes. Waiting is bounded in **wall** time: a scheduler that
        has had no worker for ``min(10 s, budget)`` ends the command (a clean error naming it), and no
        wait outlasts the command's budget in wall seconds (the CPU timer cannot see a process that
        only waits)."""
        import time

        from distributed import wait

        from ..budget import BudgetExhausted, current

        if not jobs:
            return
        seconds = current().seconds
        grace = max(1.0, min(10.0, seconds))
        deadline = time.monotonic() + seconds
        if self._workers() == 0:
            try:
                self.client.wait_for_workers(1, timeout=grace)
            except Exception:
                raise self._no_workers(grace) from None
        futures = [self.client.submit(fn, task, key=f"symabsorb-{getattr(task, 'id', i)}-{i}", pure=False)
                   for i, (fn, task) in enumerate(jobs)]
        by_key = {f.key: task for f, (_, task) in zip(futures, jobs, strict=True)}
        pending = set(futures)
        idle_since: float | None = None
        try:
            while pending:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise BudgetExhausted(f"budget: no result from the Dask cluster within {seconds:g} s of wall "
                                          f"time ({len(pending)} cases still waiting)")
                try:
                    done, not_done = wait(list(pending), timeout=min(1.0, remaining), return_when="FIRST_COMPLETED")
                except TimeoutError:
                    done, not_done = set(), pending
                pending = set(not_done)
                for future in sorted(done, key=lambda f: str(f.key)):
                    try:
                        record = future.result()
                    except Exception as err:  # a worker died or the task raised: record it, keep going
                        record = error_record(by_key[future.key], err)
                    on_result(record)
                    future.release()
                if done:
                    idle_since = None
                elif self._workers() == 0:
                    idle_since = idle_since if idle_since is not None else time.monotonic()
                    if time.monotonic() - idle_since >= grace:
                        raise self._no_workers(grace)
                else:
                    idle_since = None
        except BaseException:
            for future in pending:
                future.cancel()
            raise

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


class LazyExecutor:
    """Starts the real executor (a Dask cluster takes seconds) only when there is work: a resumed
    run with nothing left to do rebuilds the atlas without it."""

    def __init__(self, name: str, make: Callable[[], Executor]) -> None:
        self.name = name
        self._make = make
        self._inner: Executor | None = None

    def run(self, jobs: Sequence[Job], on_result: Callable[[dict[str, Any]], None]) -> None:
        if not jobs:
            return
        if self._inner is None:
            self._inner = self._make()
            self.name = self._inner.name
        self._inner.run(jobs, on_result)

    def close(self) -> None:
        if self._inner is not None:
            self._inner.close()
