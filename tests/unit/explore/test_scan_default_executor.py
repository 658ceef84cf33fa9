"""scan runs in this process unless a cluster is asked for (issue 29): a local Dask cluster on the
same cores only added start-up and pickling (2.7x the CPU of --in-process on MiniLM)."""

from __future__ import annotations

import pytest

from symabsorb import cli
from symabsorb.explore.executors import InProcessExecutor, LazyExecutor, dask_available


def _executor(*argv: str, local: bool) -> object:
    args = cli.build_parser().parse_args(list(argv))
    runner = cli._executor(args, local=local)
    runner.close()
    return runner


def test_scan_without_options_runs_in_this_process() -> None:
    assert isinstance(_executor("scan", ".", local=True), InProcessExecutor)


@pytest.mark.skipif(not dask_available(), reason="needs dask.distributed (pip install 'symabsorb[explore]')")
def test_scan_uses_a_cluster_only_when_asked() -> None:
    assert isinstance(_executor("scan", ".", "--workers", "1", local=True), LazyExecutor)  # started lazily
    assert isinstance(_executor("scan", ".", "--in-process", local=True), InProcessExecutor)


@pytest.mark.skipif(not dask_available(), reason="needs dask.distributed (pip install 'symabsorb[explore]')")
def test_explore_keeps_its_local_cluster_default() -> None:
    runner = _executor("explore", "x.absorb", local=False)
    assert isinstance(runner, LazyExecutor) and "2 workers" in runner.name
