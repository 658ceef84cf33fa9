"""The round-2 attack harness as a property test (issue 22), over the classes it attacked: caches,
lemma files, results directories, scan directories and reports. Hypothesis mutates each input;
every run must end with its safe outcome: the genuine answer (a damaged input recomputed), a clean
error (exit 2, no traceback), escaped text, and no file written that the command did not name."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symabsorb.analysis import engine
from tests.helpers import ROOT, require_module, run_cli

FAST = settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
NASTY = st.lists(st.sampled_from([*'\x00\x1b\x07\x9b\u202e\u2066"\'<>&\\{}[]`#$%|\n ', "ab", "x"]),
                 max_size=20).map("".join)


def _mutate(data: bytes, edits: list[tuple[int, int]]) -> bytes:
    out = bytearray(data)
    for pos, value in edits:
        if out:
            out[pos % len(out)] = value
    return bytes(out)


# ---- caches -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def genuine_cache(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SYMABSORB_CACHE_DIR", str(cache))
        mp.delenv("SYMABSORB_NO_CACHE", raising=False)
        engine.analyze_expr.cache_clear()
        code, out, err, _ = run_cli("classify", "relu", "--json")
        engine.analyze_expr.cache_clear()
    assert code == 0, err
    return cache, out


@FAST
@given(edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=8),
       truncate=st.integers(0, 400))
def test_mutated_cache_entries_never_change_an_answer(genuine_cache: tuple[Path, str], edits: list[tuple[int, int]],
                                                      truncate: int) -> None:
    source, expected = genuine_cache
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        cache = Path(tmp) / "cache"
        shutil.copytree(source, cache)
        for entry in sorted(cache.rglob("*.facts.json")):
            data = _mutate(entry.read_bytes(), edits)
            entry.write_bytes(data[: len(data) - truncate] if truncate < len(data) else data)
        mp.setenv("SYMABSORB_CACHE_DIR", str(cache))
        mp.delenv("SYMABSORB_NO_CACHE", raising=False)
        engine.analyze_expr.cache_clear()
        code, out, err, _ = run_cli("classify", "relu", "--json")
        engine.analyze_expr.cache_clear()
    assert (code, out) == (0, expected), err


# ---- lemma files --------------------------------------------------------------------------------

_DOT_ATTRIBUTE = re.compile(r'\s*(\w+)=("(?:[^"\\]|\\.)*"|[\w.]+)\s*,?')


@FAST
@given(label=NASTY, title=NASTY, citation=NASTY)
def test_lemma_strings_are_refused_or_escaped(label: str, title: str, citation: str) -> None:
    text = (ROOT / "theorems" / "L-linear.toml").read_text(encoding="utf-8").replace('id = "L-linear"', 'id = "X-lin"')
    for key, value in (("label", label), ("title", title), ("citation", citation)):
        text = re.sub(rf"(?m)^{key} = .*$", lambda _m, k=key, v=value: f"{k} = {json.dumps(v)}", text, count=1)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "x.toml").write_text(text, encoding="utf-8")
        code, out, err, _ = run_cli("graph", "--theorems", tmp, "--format", "dot")
    assert "Traceback" not in err and not any(c in out + err for c in "\x00\x1b\x07\x9b\u202e\u2066")
    if code == 2:
        assert re.search(r"x\.toml:\d+:\d+: error: ", err), err
        return
    assert code == 0, err
    (line,) = [ln for ln in out.splitlines() if ln.strip().startswith("n_X_lin [")]
    body = line[line.index("[") + 1: line.rindex("]")]
    names, pos = [], 0
    while pos < len(body):
        m = _DOT_ATTRIBUTE.match(body, pos)
        assert m is not None, body[pos:]
        names.append(m.group(1))
        pos = m.end()
    assert set(names) == {"label", "color", "fillcolor", "style", "penwidth", "tooltip"}


# ---- results directories -------------------------------------------------------------------------

SPACE = "space tiny = { primitives: [tanh, abs], constants: [2], operators: [+], size: 2 }\n"


@pytest.fixture(scope="module")
def genuine_results(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    require_module("numpy", "explore")
    work = tmp_path_factory.mktemp("explore")
    (work / "s.absorb").write_text(SPACE)
    code, _out, err, _ = run_cli("explore", str(work / "s.absorb"), "--results", str(work / "out"), "--in-process",
                                 "--no-evidence", "--no-stacks")
    assert code == 0, err
    return work / "s.absorb", work / "out", json.loads((work / "out" / "atlas.json").read_text())


def _counts(atlas: dict[str, Any]) -> Any:
    return [(s["cases"], [(c["verdict"], c["count"], c["decided_by"]) for c in s["counts"]]) for s in atlas["spaces"]]


@FAST
@given(field=st.sampled_from(["verdict", "decided_by", "label", "id", "mac", "kind"]),
       value=st.one_of(NASTY, st.integers(), st.none()), which=st.integers(0, 100))
def test_forged_records_are_never_counted(genuine_results: tuple[Path, Path, dict[str, Any]], field: str,
                                          value: object, which: int) -> None:
    spec, source, atlas = genuine_results
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        shutil.copytree(source, out)
        lines = (out / "cases.jsonl").read_text(encoding="utf-8").splitlines()
        record = json.loads(lines[which % len(lines)])
        record[field] = value
        lines[which % len(lines)] = json.dumps(record)
        (out / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        code, _o, err, _ = run_cli("explore", str(spec), "--results", str(out), "--in-process", "--no-evidence",
                                   "--no-stacks")
        assert code == 0, err
        again = json.loads((out / "atlas.json").read_text())
    assert _counts(again) == _counts(atlas)


# ---- scan directories ----------------------------------------------------------------------------

@FAST
@given(data=st.binary(max_size=600), suffix=st.sampled_from([".npz", ".safetensors", ".pt"]))
def test_scan_of_arbitrary_bytes_ends_cleanly(data: bytes, suffix: str) -> None:
    require_module("numpy", "explore")
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "m"
        directory.mkdir()
        (directory / f"w{suffix}").write_bytes(data)
        code, out, err, _ = run_cli("scan", str(directory), "--results", str(Path(tmp) / "r"), "--in-process")
    assert code in (0, 1, 2) and "Traceback" not in out + err, err
    assert not any(c in out for c in "\x1b\x9b\u202e")


# ---- reports -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def genuine_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    np = require_module("numpy", "weights")
    work = tmp_path_factory.mktemp("report")
    rng = np.random.default_rng(4)
    np.savez(work / "r.npz", W_up=rng.standard_normal((8, 3)), W_down=rng.standard_normal((3, 8)))
    (work / "s.absorb").write_text('block b { activation: gelu weights: "r.npz" }\nabsorb b\n')
    code, _out, err, _ = run_cli("prove", str(work / "s.absorb"), "--format", "json", "-o", str(work / "r.json"))
    assert code == 0, err
    return work, json.loads((work / "r.json").read_text())


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:4]):
            out += _paths(v, (*prefix, i))
    return out


@FAST
@given(which=st.integers(0, 10**6), value=st.one_of(NASTY, st.integers(-2, 10**9), st.none(), st.booleans(),
                                                    st.lists(st.integers(0, 9), max_size=3)))
def test_a_mutated_certificate_never_passes(genuine_report: tuple[Path, dict[str, Any]], which: int,
                                            value: object) -> None:
    work, data = genuine_report
    cert = data["queries"][0]["derivation"]["certificate"]
    places = [p for p in _paths(cert) if p and p[-1] not in ("method", "proof", "claim", "dtype", "d", "m")]
    place = places[which % len(places)]
    forged = json.loads(json.dumps(data))
    target: Any = forged["queries"][0]["derivation"]["certificate"]
    for key in place[:-1]:
        target = target[key]
    if target[place[-1]] == value:
        return
    target[place[-1]] = value
    (work / "forged.json").write_text(json.dumps(forged))
    code, out, err, _ = run_cli("verify", str(work / "forged.json"))
    assert "Traceback" not in out + err
    assert code in (1, 2) or "OK " in out, (place, value, out, err)
    if code == 0:  # a change that does not matter to the proof (a harmless field) still proves it
        assert "FAILED" not in out
