"""A `width` answer's verdict is its own word in the API and the JSON report (`minimal-width`,
`width-bounds`), never `absorbable` (which answers the same-width question); JSON schema 1.2; `verify`
reads 1.2 reports and 1.1 ones (which wrote `absorbable`)."""

from __future__ import annotations

import json
from pathlib import Path

import symabsorb
from symabsorb.report.jsonout import SCHEMA_VERSION, schema

SPEC = """activation act(z) = z + z^2
block lin { activation: identity dim: 3 width: 1 W_up: [[1, 0, 0]] W_down: [[1], [0], [0]] }
block flip { activation: relu W_up: [[1, 0], [0, 1], [1, 1]] W_down: [[-1, 0, 0], [0, -1, 0]] }
block sym { activation: act W_up: [[1, 0], [0, 1], [1, 1]] W_down: [[-1, 0, 1], [0, -1, 1]] }
width lin
width sym
absorb flip
"""


def test_width_answers_have_their_own_verdict_word() -> None:
    report = symabsorb.prove(symabsorb.load(SPEC))
    verdicts = report.verdicts
    assert verdicts["width lin"] == "minimal-width"  # w* = rank(M + c W_down W_up) exactly
    assert verdicts["width sym"] == "width-bounds"   # an upper bound (m + d, rank W_up = d), w* not pinned
    assert verdicts["absorb flip"] == "absorbable"
    data = json.loads(report.render("json"))
    assert data["schema_version"] == SCHEMA_VERSION == "1.2"
    words = {q["query"]: q["derivation"]["verdict"] for q in data["queries"]}
    assert words == {"width lin": "minimal-width", "width sym": "width-bounds", "absorb flip": "absorbable"}
    import jsonschema

    jsonschema.validate(data, schema())


def test_verify_reads_new_and_old_width_reports(tmp_path: Path) -> None:
    (tmp_path / "w.absorb").write_text(SPEC, encoding="utf-8")
    report = symabsorb.prove(tmp_path / "w.absorb")
    new = tmp_path / "new.json"
    new.write_text(report.render("json"), encoding="utf-8")
    checked = symabsorb.verify(new)
    assert checked.ok and [c.query for c in checked.checks] == ["absorb flip"]
    old_data = json.loads(new.read_text(encoding="utf-8"))
    old_data["schema_version"] = "1.1"
    for q in old_data["queries"]:
        if q["kind"] == "width":
            q["derivation"]["verdict"] = "absorbable"  # what a 1.1 report wrote
    old = tmp_path / "old.json"
    old.write_text(json.dumps(old_data), encoding="utf-8")
    again = symabsorb.verify(old)
    assert again.ok and [c.query for c in again.checks] == ["absorb flip"] and again.unchecked == checked.unchecked
