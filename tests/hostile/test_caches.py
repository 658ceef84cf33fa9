"""Hostile input, round 2 (issue 22): caches are data, private to the user, authenticated and
bound to what they answer. Each test is one example of the issue's table with its safe outcome."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import stat
import threading
import time
from pathlib import Path

import pytest

from symabsorb import userdirs
from symabsorb.analysis import engine
from tests.helpers import ROOT, reseal, run_cli, sealed_payload


class _Planted:
    """Unpickling this creates ``marker`` (a stand-in for running the attacker's command)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh private cache directory for in-process runs (facts recomputed, not from memory)."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("SYMABSORB_CACHE_DIR", str(directory))
    monkeypatch.delenv("SYMABSORB_NO_CACHE", raising=False)
    engine.analyze_expr.cache_clear()
    yield directory
    engine.analyze_expr.cache_clear()


def _classify(name: str, *extra: str) -> tuple[int, str, str]:
    engine.analyze_expr.cache_clear()
    code, out, err, _cpu = run_cli("classify", name, "--json", *extra)
    return code, out, err


def _facts_entries(cache: Path) -> list[Path]:
    return sorted(cache.rglob("*.facts.json"))


def test_a_planted_pickle_in_the_facts_cache_is_never_run(cache: Path, tmp_path: Path) -> None:
    code, fresh, _ = _classify("relu")
    assert code == 0
    marker = tmp_path / "pwned"
    payload = pickle.dumps(_Planted(marker))
    for entry in _facts_entries(cache):
        entry.write_bytes(payload)  # in place of the entry
        (entry.parent / entry.name.replace(".facts.json", ".facts")).write_bytes(payload)  # the old name
        reseal(entry, payload, "facts", entry.name.split(".")[0], cache)  # even with a valid HMAC
    again = _classify("relu")
    assert again[:2] == (0, fresh) and not marker.exists()


def test_a_facts_entry_swapped_for_another_activations_is_recomputed(cache: Path) -> None:
    relu = _classify("relu")[1]
    before = set(_facts_entries(cache))
    tanh = _classify("tanh")[1]
    (tanh_entry,) = set(_facts_entries(cache)) - before
    for entry in before:  # relu's entry now holds tanh's facts (its HMAC binds it to tanh's key)
        shutil.copyfile(tanh_entry, entry)
    assert _classify("relu")[1] == relu != tanh
    # an edited verdict inside a genuine entry's JSON fails its HMAC as well
    for entry in before:
        entry.write_bytes(sealed_payload(tanh_entry).replace(b"proved", b"refuted"))
    assert _classify("relu")[1] == relu


def test_damaged_facts_entries_are_recomputed(cache: Path) -> None:
    relu = _classify("relu")[1]
    for damage in (b"", b"{", b"0" * 64 + b"\n" + b"[" * 50_000, os.urandom(300)):
        for entry in _facts_entries(cache):
            entry.write_bytes(damage)
        assert _classify("relu")[1] == relu
    # sealed with the user's key but not facts: validated, recomputed
    for entry in _facts_entries(cache):
        k = entry.name.split(".")[0]
        for bad in ({"format": 2, "key": k, "facts": {"dataclass": "os.system", "fields": {}}},
                    {"format": 2, "key": k, "facts": {"sympy": ["__import__", ["S", "os", []]]}},
                    {"format": 2, "key": "another", "facts": None}):
            reseal(entry, json.dumps(bad).encode(), "facts", k, cache)
            assert _classify("relu")[1] == relu


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_in_place_of_a_cache_entry_does_not_hang(cache: Path) -> None:
    relu = _classify("relu")[1]
    for entry in _facts_entries(cache):
        entry.unlink()
        os.mkfifo(entry)
    result: list[tuple[int, str, str]] = []
    worker = threading.Thread(target=lambda: result.append(_classify("relu")), daemon=True)
    worker.start()
    worker.join(120)
    assert result and result[0][1] == relu


@pytest.mark.parametrize("how", ["world-writable", "group-writable", "symlink", "another user"])
def test_a_cache_directory_others_can_write_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        how: str) -> None:
    real = tmp_path / "shared"
    real.mkdir()
    directory = real
    if how == "world-writable":
        real.chmod(0o777)
    elif how == "group-writable":
        real.chmod(0o770)
    elif how == "symlink":
        directory = tmp_path / "link"
        directory.symlink_to(real)
    else:
        if not hasattr(os, "geteuid") or os.geteuid() != 0:
            pytest.skip("needs root to give a directory to another user")
        os.chown(real, 65534, 65534)
    monkeypatch.setenv("SYMABSORB_CACHE_DIR", str(directory))
    monkeypatch.delenv("SYMABSORB_NO_CACHE", raising=False)
    marker = tmp_path / "pwned"
    (real / "key").write_bytes(b"k" * 32)
    code, out, err = _classify("relu")
    assert code == 0 and json.loads(out)["verdict"] == "conditional"
    assert err.count("warning: not using the cache directory") == 1, err
    assert sorted(p.name for p in real.iterdir()) == ["key"] and not marker.exists()  # nothing written
    again = _classify("tanh")
    assert "warning" not in again[2]  # one warning per process


def test_an_entry_owned_or_writable_by_others_is_not_believed(cache: Path) -> None:
    relu = _classify("relu")[1]
    for entry in _facts_entries(cache):
        data = sealed_payload(entry)
        entry.chmod(0o666)  # its content may be anyone's
        assert userdirs.read_entry(entry) is None
        reseal(entry, data.replace(b"proved", b"refuted"), "facts", entry.name.split(".")[0], cache)
        entry.chmod(0o646)
    assert _classify("relu")[1] == relu


def test_the_key_file_is_private(cache: Path) -> None:
    # an activation no other test analyses, so its facts are computed (and written) in this process
    # whatever an earlier test on the same worker left in memory
    _classify("z*tanh(z) + z^3/1717")
    info = os.stat(cache / "key")
    assert stat.S_IMODE(info.st_mode) == 0o600 and info.st_size == 32
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700


def test_the_parser_cache_is_data_never_a_pickle(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from symabsorb.dsl import lalr_tables, parser

    monkeypatch.setattr(lalr_tables, "KEY", "from another lark release")
    parser.get_parser.cache_clear()
    marker = tmp_path / "pwned"
    try:
        first = parser.get_parser()
        (tables,) = sorted(cache.glob("parser-*.json"))
        # a planted pickle under the name Lark.save would use, and in place of the tables
        (cache / tables.name.replace(".json", ".lark")).write_bytes(pickle.dumps(_Planted(marker)))
        tables.write_bytes(pickle.dumps(_Planted(marker)))
        parser.get_parser.cache_clear()
        assert parser.get_parser().parse("z*2", start="expr") == first.parse("z*2", start="expr")
        assert not marker.exists()
        # the authentic JSON tables are read back without building the grammar
        parser.get_parser.cache_clear()

        def no_build(*args: object, **kwargs: object) -> None:
            raise AssertionError("the tables were built again")

        monkeypatch.setattr(parser, "Lark", type("NoBuild", (), {"__new__": no_build,
                                                                 "_load_from_dict": parser.Lark._load_from_dict}))
        assert parser.get_parser().parse("z*2", start="expr") == first.parse("z*2", start="expr")
    finally:
        parser.get_parser.cache_clear()


@pytest.mark.slow  # parses every module of the package (the fast tier's budget: make test-fast <= 60 s)
def test_no_module_unpickles_or_lark_loads() -> None:
    import ast

    root = ROOT / "symabsorb"
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                if any(n.split(".")[0] in ("pickle", "marshal", "shelve", "dill", "cloudpickle") for n in names):
                    found.append(f"{path.name}:{node.lineno}")
            if isinstance(node, ast.Attribute) and node.attr == "load" and isinstance(node.value, ast.Name) \
                    and node.value.id == "Lark":
                found.append(f"{path.name}:{node.lineno} Lark.load")
    assert found == []


# ---- replay ---------------------------------------------------------------------------------------

@pytest.fixture
def replaying(cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("SYMABSORB_NO_REPLAY", raising=False)
    return cache


def _replay_entries(cache: Path) -> list[Path]:
    return sorted((cache / "replay").rglob("*.json"))


def test_an_edited_replay_entry_is_not_printed(replaying: Path) -> None:
    first = _classify("relu")
    (entry,) = _replay_entries(replaying)
    stored = json.loads(sealed_payload(entry))
    stored["chunks"] = [[1, json.dumps({"verdict": "impossible"})]]
    entry.write_bytes(b"0" * 64 + b"\n" + json.dumps(stored).encode())
    assert _classify("relu") == first


def test_a_replay_entry_never_chooses_a_path_to_write(replaying: Path, tmp_path: Path) -> None:
    first = _classify("relu")
    (entry,) = _replay_entries(replaying)
    victim = tmp_path / "victim.txt"
    stored = json.loads(sealed_payload(entry))
    stored["files"] = [[str(victim), "written by the entry"]]
    # even sealed with the user's own key: the command named no output, so none is written
    reseal(entry, json.dumps(stored).encode(), "replay", entry.stem, replaying)
    assert _classify("relu") == first and not victim.exists()


def test_prove_output_replays_only_to_the_named_file(replaying: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.absorb").write_text("classify relu\n")
    code, _out, err, _ = run_cli("prove", "s.absorb", "-o", "r.md")
    assert code == 0, err
    report = (tmp_path / "r.md").read_bytes()
    (entry,) = _replay_entries(replaying)
    stored = json.loads(sealed_payload(entry))
    stored["files"] = [["elsewhere.md", "x"]]
    reseal(entry, json.dumps(stored).encode(), "replay", entry.stem, replaying)
    (tmp_path / "r.md").unlink()
    assert run_cli("prove", "s.absorb", "-o", "r.md")[0] == 0
    assert (tmp_path / "r.md").read_bytes() == report and not (tmp_path / "elsewhere.md").exists()


def test_a_fifo_in_place_of_a_replay_entry_does_not_hang(replaying: Path) -> None:
    first = _classify("relu")
    (entry,) = _replay_entries(replaying)
    entry.unlink()
    os.mkfifo(entry)
    start = time.monotonic()
    result: list[tuple[int, str, str]] = []
    worker = threading.Thread(target=lambda: result.append(_classify("relu")), daemon=True)
    worker.start()
    worker.join(120)
    assert result == [first], time.monotonic() - start
