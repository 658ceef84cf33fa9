"""Hostile input, round 2 (issue 22): `explore` and `scan` results directories cannot lie. A record
that fails its HMAC is recomputed and never counted; files in the directory are opened without
following links and never block; a results path that is a file (the spec) is a clean error."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from tests.helpers import require_module, run_cli

SPACE = "space tiny = { primitives: [tanh, abs], constants: [2], operators: [+], size: 2 }\n"
EXPLORE = ("--in-process", "--no-evidence", "--no-stacks", "--case-budget", "30")


def _explore(spec: Path, results: Path, *extra: str) -> tuple[int, str, str]:
    code, out, err, _ = run_cli("explore", str(spec), "--results", str(results), *EXPLORE, *extra)
    return code, out, err


def _untimed(value: object) -> object:
    """An atlas without its timings (CPU and wall seconds differ between runs)."""
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k not in ("cpu_s", "seconds", "wall_s")}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture
def explored(tmp_path: Path) -> tuple[Path, Path, str]:
    require_module("numpy", "explore")
    spec = tmp_path / "s.absorb"
    spec.write_text(SPACE)
    results = tmp_path / "out"
    code, _out, err = _explore(spec, results)
    assert code == 0, err
    return spec, results, (results / "atlas.json").read_text(encoding="utf-8")


def test_forged_and_edited_records_are_recomputed_never_counted(explored: tuple[Path, Path, str]) -> None:
    spec, results, atlas = explored
    cases = results / "cases.jsonl"
    records = _lines(cases)
    forged = []
    for r in records:
        r = dict(r)
        r["verdict"] = "impossible" if r.get("verdict") != "impossible" else "absorbable"
        r["label"] = '<script>alert(1)</script>'
        forged.append(r)  # the genuine HMAC no longer matches the edited record
    invented = dict(records[0], id="f" * 16, verdict="absorbable", mac="0" * 64)
    cases.write_text("".join(json.dumps(r) + "\n" for r in [*forged, invented]), encoding="utf-8")
    code, _out, err = _explore(spec, results)
    assert code == 0, err
    assert len(_lines(cases)) == 2 * len(records) + 1  # every forged case recomputed and appended
    again = json.loads((results / "atlas.json").read_text(encoding="utf-8"))
    fresh = json.loads(atlas)
    assert _untimed(again["spaces"]) == _untimed(fresh["spaces"])  # the same counts as the fresh run: nothing forged counted
    assert "<script>alert" not in (results / "atlas.html").read_text(encoding="utf-8")
    assert "<script>alert" not in (results / "atlas.md").read_text(encoding="utf-8")


def test_a_second_run_resumes_from_its_own_records(explored: tuple[Path, Path, str]) -> None:
    spec, results, atlas = explored
    before = len(_lines(results / "cases.jsonl"))
    assert _explore(spec, results)[0] == 0
    assert len(_lines(results / "cases.jsonl")) == before  # nothing recomputed
    assert _untimed(json.loads((results / "atlas.json").read_text())["spaces"]) == _untimed(json.loads(atlas)["spaces"])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_as_the_results_file_is_a_clean_error(tmp_path: Path) -> None:
    spec = tmp_path / "s.absorb"
    spec.write_text(SPACE)
    (tmp_path / "out").mkdir()
    os.mkfifo(tmp_path / "out" / "cases.jsonl")
    got: list[tuple[int, str, str]] = []
    worker = threading.Thread(target=lambda: got.append(_explore(spec, tmp_path / "out")), daemon=True)
    worker.start()
    worker.join(120)
    assert got and got[0][0] == 2 and "cases.jsonl" in got[0][2] and "Traceback" not in got[0][2]


def test_a_results_file_that_is_a_link_out_is_refused(tmp_path: Path) -> None:
    spec = tmp_path / "s.absorb"
    spec.write_text(SPACE)
    private = tmp_path / "private.txt"
    private.write_text("secret\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "cases.jsonl").symlink_to(private)
    code, _out, err = _explore(spec, tmp_path / "out")
    assert code == 2 and "symbolic link" in err and private.read_text() == "secret\n"


def test_results_naming_the_spec_is_a_clean_error(tmp_path: Path) -> None:
    spec = tmp_path / "s.absorb"
    spec.write_text(SPACE)
    code, _out, err = _explore(spec, spec)
    assert code == 2 and "not a directory" in err and spec.read_text() == SPACE


def test_forged_scan_records_are_not_in_the_summary(tmp_path: Path) -> None:
    np = require_module("numpy", "explore")
    require_module("scipy", "explore")
    rng = np.random.default_rng(0)
    weights = tmp_path / "model"
    weights.mkdir()
    np.savez(weights / "m.npz", **{"encoder.layer.0.intermediate.dense.weight": rng.standard_normal((6, 3)),
                                   "encoder.layer.0.output.dense.weight": rng.standard_normal((3, 6))})
    results = tmp_path / "scan"
    code, first, err, _ = run_cli("scan", str(weights), "--results", str(results), "--in-process",
                                  "--activation", "relu")
    assert code == 0, err
    cases = results / "cases.jsonl"
    records = _lines(cases)
    assert records, first
    for r in records:
        r["verdict"] = "absorbable" if r.get("verdict") != "absorbable" else "not-absorbable"
        r["label"] = "\x1b]0;pwned\x07forged"
    cases.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    code, again, err, _ = run_cli("scan", str(weights), "--results", str(results), "--in-process",
                                  "--activation", "relu")
    assert code == 0, err
    assert again == first and "\x1b" not in again


# ---- outputs never replace an input of the command, transitively --------------------------------

def test_prove_output_onto_a_transitively_imported_spec_is_refused(tmp_path: Path) -> None:
    (tmp_path / "c.absorb").write_text("activation mine(z) = max(0, z)\n")
    (tmp_path / "b.absorb").write_text('import "c.absorb"\n')
    (tmp_path / "a.absorb").write_text('import "b.absorb"\nclassify mine\n')
    os.link(tmp_path / "c.absorb", tmp_path / "hard.md")
    for target in ("c.absorb", "hard.md", "b.absorb"):
        code, _out, err, _ = run_cli("prove", str(tmp_path / "a.absorb"), "--format", "md", "-o", str(tmp_path / target))
        assert code == 2 and "refusing to overwrite" in err, (target, err)
    assert (tmp_path / "c.absorb").read_text() == "activation mine(z) = max(0, z)\n"


def test_explore_output_onto_an_import_and_results_holding_the_spec_are_refused(tmp_path: Path) -> None:
    require_module("numpy", "explore")
    (tmp_path / "lib.absorb").write_text(SPACE)
    (tmp_path / "s.absorb").write_text('import "lib.absorb"\n')
    os.link(tmp_path / "lib.absorb", tmp_path / "atlas.md")  # another name of the import
    code, _out, err = _explore(tmp_path / "s.absorb", tmp_path / "out", "-o", str(tmp_path / "atlas.md"))
    assert code == 2 and "refusing to overwrite" in err, err
    assert (tmp_path / "lib.absorb").read_text() == SPACE
    results = tmp_path / "res"
    results.mkdir()
    (results / "atlas.md").write_text(SPACE)  # the spec lives where the atlas is written
    code, _out, err = _explore(results / "atlas.md", results)
    assert code == 2 and "refusing to overwrite" in err, err
    assert (results / "atlas.md").read_text() == SPACE


def test_scan_json_onto_the_scanned_weights_is_refused(tmp_path: Path) -> None:
    np = require_module("numpy", "explore")
    require_module("scipy", "explore")
    rng = np.random.default_rng(0)
    weights = tmp_path / "model"
    weights.mkdir()
    target = weights / "m.npz"
    np.savez(target, **{"encoder.layer.0.intermediate.dense.weight": rng.standard_normal((6, 3)),
                        "encoder.layer.0.output.dense.weight": rng.standard_normal((3, 6))})
    before = target.read_bytes()
    code, _out, err, _ = run_cli("scan", str(weights), "--results", str(tmp_path / "r"), "--in-process",
                                 "--json", str(target))
    assert code == 2 and "refusing to overwrite" in err, err
    assert target.read_bytes() == before
