"""Issue 28 leftovers: a report's JSON says which library proved it (the results, the ids that are
the user's, a SHA-256 of every result's file), and a --theorems lemma is `source: user` in the
references and the graph whatever its file claims (the README keeps "library" for results proved in
symabsorb's docs)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from symabsorb.report.jsonout import schema
from tests.helpers import ROOT, require_module, run_cli

SPEC = "block b { activation: identity dim: 4 width: 2 }\nabsorb b\n"


def _lemma(tmp_path: Path, source: str, marker: str = "") -> Path:
    text = (ROOT / "theorems" / "L-linear.toml").read_text(encoding="utf-8")
    text = text.replace('id = "L-linear"', 'id = "X-linear"').replace("priority = 5", "priority = 1")
    text = re.sub(r'(?m)^source = .*$', f'source = "{source}"', text) + marker
    folder = tmp_path / f"lemmas{len(marker)}"
    folder.mkdir()
    (folder / "X-linear.toml").write_text(text, encoding="utf-8")
    return folder


def _report(tmp_path: Path, *argv: str) -> dict:
    spec = tmp_path / "lin.absorb"
    spec.write_text(SPEC, encoding="utf-8")
    out = tmp_path / "r.json"
    code, _out, err, _ = run_cli("prove", str(spec), *argv, "-o", str(out))
    assert code == 0, err
    data: dict = json.loads(out.read_text(encoding="utf-8"))
    return data


def test_a_user_lemma_claiming_library_is_the_users_in_json(tmp_path: Path) -> None:
    data = _report(tmp_path, "--theorems", str(_lemma(tmp_path, "library")))
    refs = {r["id"]: r["source"] for r in data["references"]}
    assert refs.get("X-linear") == "user", refs
    nodes = {n["id"]: n["source"] for n in data["graph"]["nodes"]}
    assert nodes["X-linear"] == "user" and nodes["L-linear"] != "user"
    assert data["tool"]["library"]["user_results"] == ["X-linear"]
    jsonschema = require_module("jsonschema", "test")
    jsonschema.Draft202012Validator(schema()).validate(data)


def test_the_library_in_force_is_fingerprinted(tmp_path: Path) -> None:
    builtin = _report(tmp_path)["tool"]["library"]
    assert builtin["user_results"] == [] and builtin["results"] > 20 and re.fullmatch(r"[0-9a-f]{64}", builtin["sha256"])
    assert _report(tmp_path)["tool"]["library"] == builtin  # the same library: the same fingerprint
    one = _report(tmp_path, "--theorems", str(_lemma(tmp_path, "user")))["tool"]["library"]
    other = _report(tmp_path, "--theorems", str(_lemma(tmp_path, "user", "\n# edited\n")))["tool"]["library"]
    assert one["results"] == builtin["results"] + 1 == other["results"]
    assert len({builtin["sha256"], one["sha256"], other["sha256"]}) == 3  # a lemma's bytes change the hash


def test_graph_json_shows_a_user_lemma_as_the_users(tmp_path: Path) -> None:
    code, out, err, _ = run_cli("graph", "--theorems", str(_lemma(tmp_path, "library")), "--format", "json")
    assert code == 0, err
    nodes = {n["id"]: n["source"] for n in json.loads(out)["nodes"]}
    assert nodes["X-linear"] == "user" and nodes["L-linear"] == "library"
