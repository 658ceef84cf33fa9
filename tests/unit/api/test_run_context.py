"""One run context per command (issue 18): budget, limits, cache policy, the files read and the
machine-dependent outcomes live in symabsorb.context.Run, not in module globals."""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest

from symabsorb import budget, context, paths, userdirs
from symabsorb.budget import Budget, Limits, Timeout, deadline
from tests.helpers import run_cli


def test_a_command_runs_in_its_own_context(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = tmp_path / "one.absorb"
    spec.write_text("classify tanh\n", encoding="utf-8")
    seen: list[context.Run] = []
    import symabsorb.api as api

    real = api.prove

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(context.current())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(api, "prove", spy)
    before = context.current()
    code, _, err, _ = run_cli("prove", str(spec), "--budget", "77", "--limit", "depth=55", "--no-cache")
    assert code == 0, err
    (run,) = seen
    assert run is not before and run.budget.seconds == 77 and run.budget.limits.depth == 55 and not run.cache
    assert run.ledger.inputs is not None and str(spec) in run.ledger.inputs.values()  # the files it read
    assert budget.current() is not run.budget and context.current() is before  # nothing left behind
    assert before.ledger.inputs is None


def test_timeouts_are_counted_on_the_run_they_happen_in() -> None:
    outside = budget.timeouts()
    run = context.Run(Budget(math.inf), ledger=context.Ledger())
    with context.running(run):
        with pytest.raises(Timeout), deadline(0.05):
            end = time.process_time() + 5
            while time.process_time() < end:
                pass
        assert budget.timeouts() == 1 == run.ledger.machine_dependent
    assert budget.timeouts() == outside


def test_cache_policy_and_limits_belong_to_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMABSORB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SYMABSORB_NO_CACHE", raising=False)
    assert userdirs.cache_enabled()
    with userdirs.cache_off():
        assert not userdirs.cache_enabled() and not context.current().cache
    assert userdirs.cache_enabled()
    with budget.installed(Budget(30, Limits(depth=7))):
        assert budget.current().limits.depth == 7 == context.current().budget.limits.depth
    assert budget.current().limits.depth == Limits().depth


def test_files_read_are_tracked_per_run(tmp_path: Path) -> None:
    data = tmp_path / "input.txt"
    data.write_text("x", encoding="utf-8")
    with context.running(context.Run(Budget(math.inf), ledger=context.Ledger(inputs={}))) as run:
        paths.read_input(data, None, "input", max_bytes=10, expected="text")
        assert list(run.ledger.inputs.values()) == [str(data)]  # type: ignore[union-attr]
        with pytest.raises(paths.OutputError, match="an input this command read"):
            paths.write_output(data, "y")
    assert context.current().ledger.inputs is None
    paths.write_output(data, "y")  # outside the run, nothing was read
