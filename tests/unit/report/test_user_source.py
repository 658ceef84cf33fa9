"""Issue 28 row 10: `source = "user"` in a user's lemma file is accepted (paper | library | user) and
the result is shown as the user's; another source is still refused with the choices."""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers import ROOT, run_cli


def _lemma(tmp_path: Path, source: str) -> Path:
    text = (ROOT / "theorems" / "L-linear.toml").read_text(encoding="utf-8")
    text = text.replace('id = "L-linear"', 'id = "X-linear"').replace("priority = 5", "priority = 1")
    text = re.sub(r'(?m)^source = .*$', f'source = "{source}"', text)
    folder = tmp_path / "lemmas"
    folder.mkdir()
    (folder / "X-linear.toml").write_text(text, encoding="utf-8")
    return folder


def test_source_user_is_accepted_and_shown(tmp_path: Path) -> None:
    folder = _lemma(tmp_path, "user")
    code, out, err, _ = run_cli("graph", "--theorems", str(folder), "--format", "blueprint")
    assert code == 0, err
    assert "% status: user\n" in out


def test_an_unknown_source_names_the_three(tmp_path: Path) -> None:
    folder = _lemma(tmp_path, "mine")
    code, _out, err, _ = run_cli("graph", "--theorems", str(folder), "--format", "json")
    assert code == 2 and "user" in err and "library" in err and "paper" in err, err


def test_a_report_citing_a_user_source_lemma_validates(tmp_path: Path) -> None:
    import json

    from symabsorb.report.jsonout import schema
    from tests.helpers import require_module

    jsonschema = require_module("jsonschema", "test")
    folder = _lemma(tmp_path, "user")
    spec = tmp_path / "lin.absorb"
    spec.write_text("block b { activation: identity dim: 4 width: 2 }\nabsorb b\n", encoding="utf-8")
    code, _out, err, _ = run_cli("prove", str(spec), "--theorems", str(folder), "-o", str(tmp_path / "r.json"))
    assert code == 0, err
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert any(r["source"] == "user" for r in data["references"]), data["references"]
    jsonschema.Draft202012Validator(schema()).validate(data)
