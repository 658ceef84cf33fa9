"""Replay (symabsorb/replay.py): a second run of the same command prints exactly what the first
printed, without recomputing; anything the output depends on (an input file, the arguments, the
terminal, a timeout, a failure) makes it run again or keeps it from being stored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from symabsorb import cli, replay

CODE = "import sys; from symabsorb.cli import main; sys.exit(main(sys.argv[1:]))"


def _run(args: list[str], cache: Path, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "SYMABSORB_CACHE_DIR": str(cache), **env}
    full.pop("SYMABSORB_NO_REPLAY", None)
    full.pop("SYMABSORB_NO_CACHE", None)
    return subprocess.run([sys.executable, "-c", CODE, *args], capture_output=True, text=True, env=full, cwd=cwd,
                          check=False)


def _entries(cache: Path) -> list[Path]:
    return sorted((cache / "replay").rglob("*.json"))


@pytest.fixture
def replaying(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Replay on, in this process, with a fresh cache directory."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("SYMABSORB_CACHE_DIR", str(cache))
    monkeypatch.delenv("SYMABSORB_NO_REPLAY", raising=False)
    monkeypatch.delenv("SYMABSORB_NO_CACHE", raising=False)
    return cache


def test_second_run_is_byte_identical_and_recomputes_nothing(replaying: Path, capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli.main(["classify", "relu"]) == 0
    first = capsys.readouterr()
    assert len(_entries(replaying)) == 1
    from symabsorb import api

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("recomputed although nothing changed")

    monkeypatch.setattr(api, "classify", fail)
    assert cli.main(["classify", "relu"]) == 0
    second = capsys.readouterr()
    assert (second.out, second.err) == (first.out, first.err)
    # another argument is another key: this one runs (and hits the patched function: exit 3)
    assert cli.main(["classify", "relu", "--json"]) == 3
    assert "recomputed" in capsys.readouterr().err


def test_no_cache_and_no_replay_turn_it_off(replaying: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli.main(["classify", "relu", "--no-cache"]) == 0
    assert not _entries(replaying)
    monkeypatch.setenv("SYMABSORB_NO_REPLAY", "1")
    assert cli.main(["classify", "relu"]) == 0
    assert not _entries(replaying)


def test_a_timed_out_fact_is_not_stored(replaying: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from symabsorb import budget
    from symabsorb.analysis import engine

    real = engine.parity_fact

    def slow(expr: object) -> object:
        budget.Timeout("timeout")  # what a fact's deadline raises; the fact becomes unknown
        return real(expr)  # type: ignore[arg-type]

    before = budget.timeouts()
    assert cli.main(["classify", "z*sigmoid(z) + z/9"]) == 0
    assert budget.timeouts() == before and len(_entries(replaying)) == 1
    monkeypatch.setattr(engine, "parity_fact", slow)
    assert cli.main(["classify", "z*sigmoid(z) + z/11"]) == 0
    assert len(_entries(replaying)) == 1  # the run in which a budget ran out was not stored


def test_failures_are_not_stored(replaying: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["classify", "z +* 2"]) == 2
    assert cli.main(["facts", "nosuchname"]) == 2
    assert not _entries(replaying)


def test_stdin_and_theorem_directories_are_never_replayed(tmp_path: Path) -> None:
    assert replay.key_for("prove", {"spec": ["-"]}, ["-"]) is None
    assert replay.key_for("classify", {"expr": "relu", "theorems": [str(tmp_path)]}) is None
    assert replay.key_for("check", {"spec": ["a.absorb"]}, ["a.absorb"]) is None  # not a replayable command


def test_edited_import_is_a_miss(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    work = tmp_path / "work"
    work.mkdir()
    (work / "acts.absorb").write_text("activation mine(z) = max(0, z)\n")
    (work / "main.absorb").write_text('import "acts.absorb"\nclassify mine\n')
    first = _run(["prove", "main.absorb", "--format", "md"], cache, cwd=work)
    assert first.returncode == 0, first.stderr
    assert "max" in first.stdout
    again = _run(["prove", "main.absorb", "--format", "md"], cache, cwd=work)
    assert again.stdout == first.stdout
    (work / "acts.absorb").write_text("activation mine(z) = z^2\n")  # same size, other content
    edited = _run(["prove", "main.absorb", "--format", "md"], cache, cwd=work)
    assert edited.returncode == 0, edited.stderr
    assert edited.stdout != first.stdout
    assert "z^{2}" in edited.stdout or "z^2" in edited.stdout or "z²" in edited.stdout


def test_output_file_is_written_again_and_inputs_stay_protected(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    work = tmp_path / "work"
    work.mkdir()
    (work / "s.absorb").write_text("classify relu\n")
    first = _run(["prove", "s.absorb", "-o", "r.md"], cache, cwd=work)
    assert first.returncode == 0, first.stderr
    report = (work / "r.md").read_bytes()
    (work / "r.md").unlink()
    second = _run(["prove", "s.absorb", "-o", "r.md"], cache, cwd=work)
    assert second.returncode == 0 and second.stdout == first.stdout
    assert (work / "r.md").read_bytes() == report
    # the spec replaced by a link to the stored output path: replay must not write through it
    (work / "r.md").unlink()
    (work / "r.md").symlink_to(work / "s.absorb")
    third = _run(["prove", "s.absorb", "-o", "r.md"], cache, cwd=work)
    assert third.returncode == 2
    assert (work / "s.absorb").read_text() == "classify relu\n"


def test_damaged_entry_is_recomputed(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _run(["classify", "gelu"], cache)
    [entry] = _entries(cache)
    entry.write_text("{not json")
    second = _run(["classify", "gelu"], cache)
    assert second.stdout == first.stdout
    entry.write_text(json.dumps({"format": replay.FORMAT, "exit": 0, "chunks": [[1, "forged"]], "reads": {},
                                 "files": []}))
    # an entry is the user's own cache; what it holds is printed (like any cache), but a changed
    # key never reads it: another terminal width is another entry
    third = _run(["classify", "gelu"], cache, COLUMNS="71")
    assert third.stdout == first.stdout


def test_key_depends_on_what_the_output_depends_on(replaying: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = replay.key_for("classify", {"expr": "relu", "budget": 100.0})
    assert base is not None
    assert replay.key_for("classify", {"expr": "relu", "budget": 100.0}) == base
    assert replay.key_for("classify", {"expr": "relu", "budget": 50.0}) != base
    assert replay.key_for("classify", {"expr": "gelu", "budget": 100.0}) != base
    for variable in ("NO_COLOR", "LC_ALL", "COLORTERM", "SYMABSORB_REQUIRE_EXTRAS"):
        with monkeypatch.context() as patch:
            patch.setenv(variable, "replay-test")
            assert replay.key_for("classify", {"expr": "relu", "budget": 100.0}) != base, variable
    assert replay.key_for("classify", {"expr": "relu", "budget": 100.0}) == base
    monkeypatch.setitem(sys.modules, "rich", None)  # an optional package becomes unavailable
    assert replay.key_for("classify", {"expr": "relu", "budget": 100.0}) != base


def test_the_code_digest_covers_theorems_and_grammar() -> None:
    # a source checkout keeps them outside symabsorb/ (pyproject's package-dir)
    import symabsorb.grammar
    import symabsorb.theorems

    for package in (symabsorb.theorems, symabsorb.grammar):
        where = Path(next(iter(package.__path__))).resolve()
        assert any(folder == where or folder in where.parents for folder in replay._code_folders()), where
