"""Replay (symabsorb/replay.py): a second run of the same command prints exactly what the first
printed, without recomputing; anything the output depends on (an input file, the arguments, the
terminal, a timeout, a failure) makes it run again or keeps it from being stored."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from symabsorb import cli, replay
from tests.helpers import require_module, reseal, sealed_payload

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


@pytest.mark.slow  # three cold CLI processes (the fast tier's budget: make test-fast <= 60 s)
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


@pytest.mark.slow  # three cold CLI processes (the fast tier's budget: make test-fast <= 60 s)
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


@pytest.mark.slow  # three cold CLI processes (the fast tier's budget: make test-fast <= 60 s)
def test_damaged_entry_is_recomputed(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _run(["classify", "gelu"], cache)
    [entry] = _entries(cache)
    entry.write_text("{not json")
    second = _run(["classify", "gelu"], cache)
    assert second.stdout == first.stdout
    forged = json.dumps({"format": replay.FORMAT, "exit": 0, "chunks": [[1, "impossible\n"]], "inputs": {},
                         "resolved": {}, "files": []})
    entry.write_text("0" * 64 + "\n" + forged)  # an edited entry: its HMAC fails, the command runs
    assert _run(["classify", "gelu"], cache).stdout == first.stdout
    # sealed with the user's own key, it is the user's own cache; but a changed key never reads
    # it: another terminal width is another entry
    reseal(entry, forged.encode(), "replay", entry.stem, cache)
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
    monkeypatch.setitem(sys.modules, "networkx", None)  # a package becomes unavailable (core: always there)
    assert replay.key_for("classify", {"expr": "relu", "budget": 100.0}) != base


def test_the_code_digest_covers_theorems_and_grammar() -> None:
    # a source checkout keeps them outside symabsorb/ (pyproject's package-dir)
    import symabsorb.grammar
    import symabsorb.theorems

    for package in (symabsorb.theorems, symabsorb.grammar):
        where = Path(next(iter(package.__path__))).resolve()
        assert any(folder == where or folder in where.parents for folder in replay._code_folders()), where


# ---- found by an adversarial review ------------------------------------------------------------


def test_the_output_stored_is_the_bytes_this_run_wrote(replaying: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    # another process rewrote -o's file between the write and the store: the other report was
    # stored under this run's key
    (tmp_path / "s.absorb").write_text("classify relu\n")
    out = tmp_path / "r.md"
    real_store = replay.store

    def another_writer_first(*args: object) -> None:
        out.write_text("# somebody else's report\n")
        real_store(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(replay, "store", another_writer_first)
    assert cli.main(["prove", str(tmp_path / "s.absorb"), "-o", str(out)]) == 0
    monkeypatch.setattr(replay, "store", real_store)
    out.unlink()
    assert cli.main(["prove", str(tmp_path / "s.absorb"), "-o", str(out)]) == 0
    assert "relu" in out.read_text() and "somebody" not in out.read_text()


def test_what_is_hashed_is_what_was_read(tmp_path: Path) -> None:
    # the file swapped by name between the open and the hash: the hash must be the read content's
    spec = tmp_path / "s.absorb"
    spec.write_text("classify relu\n")
    recording = replay.Recording()
    with open(spec, "rb") as fh:
        (tmp_path / "new").write_text("classify tanh\n")
        os.replace(tmp_path / "new", spec)
        recording.on_file("read", spec, fh.fileno())
        assert fh.read() == b"classify relu\n"
    assert not replay._unchanged(recording.inputs, recording.resolved)  # so it is never stored


def _weights_spec(work: Path) -> None:
    np = require_module("numpy", "weights")
    np.savez(work / "w.npz", W_up=np.array([[1.0, 0], [0, 1], [1, 1]]), W_down=np.array([[1.0, 0, 2], [0, 1, 1]]))
    np.savez(work / "w2.npz", W_up=np.array([[1.0, 0], [0, 1], [1, 1]]), W_down=np.array([[1.0, 0, 2], [0, 1, 1]]))
    (work / "s.absorb").write_text('block a { activation: relu weights: "w.npz" }\n'
                                   'block b { activation: relu weights: "w2.npz" }\nabsorb a\n')


@pytest.mark.slow  # cold CLI processes (the fast tier's budget: make test-fast <= 60 s)
def test_a_weights_file_only_checked_for_existence_is_tracked(tmp_path: Path) -> None:
    cache, work = tmp_path / "cache", tmp_path / "work"
    work.mkdir()
    _weights_spec(work)
    first = _run(["prove", "s.absorb"], cache, cwd=work)
    assert first.returncode == 0, first.stderr
    (work / "w2.npz").rename(work / "w2.bak")  # not read by `absorb a`, but checked
    again = _run(["prove", "s.absorb"], cache, cwd=work)
    assert again.returncode == 2 and "w2.npz" in again.stderr


def test_a_repointed_link_is_confined_again(tmp_path: Path) -> None:
    cache, work, outside = tmp_path / "cache", tmp_path / "proj", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    (work / "real.absorb").write_text("activation mine(z) = max(0, z)\n")
    (outside / "lib.absorb").write_text("activation mine(z) = max(0, z)\n")  # the same content
    (work / "lib.absorb").symlink_to("real.absorb")
    (work / "s.absorb").write_text('import "lib.absorb"\nclassify mine\n')
    assert _run(["prove", "proj/s.absorb"], cache, cwd=tmp_path).returncode == 0
    (work / "lib.absorb").unlink()
    (work / "lib.absorb").symlink_to("../outside/lib.absorb")
    again = _run(["prove", "proj/s.absorb"], cache, cwd=tmp_path)
    assert again.returncode == 2 and "outside the spec's directory" in again.stderr


@pytest.mark.slow  # cold CLI processes (the fast tier's budget: make test-fast <= 60 s)
def test_an_input_that_became_a_fifo_does_not_hang_the_lookup(tmp_path: Path) -> None:
    cache, work = tmp_path / "cache", tmp_path / "proj"
    work.mkdir()
    (work / "lib.absorb").write_text("activation mine(z) = max(0, z)\n")
    (work / "s.absorb").write_text('import "lib.absorb"\nclassify mine\n')
    assert _run(["prove", "s.absorb"], cache, cwd=work).returncode == 0
    (work / "lib.absorb").unlink()
    os.mkfifo(work / "lib.absorb")
    full = {**os.environ, "SYMABSORB_CACHE_DIR": str(cache)}
    full.pop("SYMABSORB_NO_REPLAY", None)
    again = subprocess.run([sys.executable, "-c", CODE, "prove", "s.absorb"], capture_output=True, text=True,
                           env=full, cwd=work, timeout=60, check=False)
    assert again.returncode == 2 and "named pipe" in again.stderr


def test_a_deleted_working_directory_is_not_a_crash(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    code = ("import os, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); "
            "from symabsorb.cli import main; sys.exit(main(['classify', 'relu']))")
    full = {**os.environ, "SYMABSORB_CACHE_DIR": str(tmp_path / "cache")}
    full.pop("SYMABSORB_NO_REPLAY", None)
    out = subprocess.run([sys.executable, "-c", code, str(gone)], capture_output=True, text=True, env=full,
                         cwd=tmp_path, check=False)
    assert out.returncode == 0, out.stderr


@pytest.fixture(scope="module")
def relu_replayed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One cold ``classify relu`` and the cache it stored its replay entry in (copied by each user)."""
    cache = tmp_path_factory.mktemp("replayed") / "cache"
    first = _run(["classify", "relu"], cache)
    assert first.returncode == 0, first.stderr
    return cache, first


# each case is a cold CLI process: an out-of-range exit and the deep nesting in the fast tier, the rest slow
@pytest.mark.parametrize("entry", [
    {"exit": 1e400}, *(pytest.param(e, marks=pytest.mark.slow) for e in (
        {"exit": 2}, {"exit": -5}, {"chunks": [[3, "x"]]}, {"files": [["a\0b", ""]]}, {"inputs": {"a\0b": {}}})),
    "nested",
])
def test_damaged_entries_are_recomputed(tmp_path: Path, entry: object,
                                        relu_replayed: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    template, first = relu_replayed
    cache = tmp_path / "cache"
    shutil.copytree(template, cache)  # the first run's cache (its key and entry), damaged below
    [path] = _entries(cache)
    if entry == "nested":
        reseal(path, b"[" * 100_000 + b"]" * 100_000, "replay", path.stem, cache)
    else:
        stored = json.loads(sealed_payload(path))
        stored.update(entry)  # type: ignore[call-overload]
        reseal(path, json.dumps(stored).encode(), "replay", path.stem, cache)  # past the HMAC: validated
    again = _run(["classify", "relu"], cache)
    assert (again.returncode, again.stdout) == (0, first.stdout), again.stderr


def test_matplotlib_settings_are_in_the_key(replaying: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    base = replay.key_for("prove", {"spec": ["s.absorb"]}, ["s.absorb"])
    (tmp_path / "matplotlibrc").write_text("axes.facecolor: ff0000\n")
    assert replay.key_for("prove", {"spec": ["s.absorb"]}, ["s.absorb"]) != base
