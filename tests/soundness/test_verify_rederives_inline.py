"""``verify`` decides again an inline block whose answer carries no witness: a verdict flipped to absorbable (the
affine referee's report, not flagged before), a dropped witness, or a changed scope FAILS; a decided verdict
that matches is re-derived exactly; an undecided one is not re-checkable."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import proved_json, verify_report

pytest.importorskip("numpy", reason="numpy (verify reads reports with the weights extra)")

SPEC = """
activation af(z) = z + 2
block no  { activation: af dim: 2 width: 2 W_up: [[1, 0], [0, 1]] W_down: [[1, -1], [1, -1]] skip: [[1, 0], [0, 2]] }
block yes { activation: relu dim: 2 width: 3 W_up: [[1, 0], [0, 1], [1, 1]] W_down: [[-1, 0, 1/2], [0, -1, 1/3]] }
block gen { activation: relu W_up: [[1, 2], [3, -1], [1, 1]] W_down: [[1, 0, 2], [-1, 1, 1]] }
absorb no
absorb yes
absorb gen
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return proved_json(SPEC, tmp_path_factory.mktemp("spec"), "inline.absorb")


def _verify(tmp_path: Path, data: dict[str, Any]) -> dict[str, Any]:
    out = tmp_path / "report.json"
    out.write_text(json.dumps(data))
    return {c.query.removeprefix("absorb "): c for c in verify_report(out)}


def _derivation(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(q for q in data["queries"] if q["query"] == f"absorb {name}")["derivation"]  # type: ignore[no-any-return]


def test_decided_verdicts_without_a_witness_are_re_derived(report: dict[str, Any], tmp_path: Path) -> None:
    assert _derivation(report, "no")["verdict"] == "not-absorbable"
    assert _derivation(report, "gen")["verdict"] == "not-absorbable"
    checked = _verify(tmp_path, report)
    assert all(c.ok for c in checked.values()), checked
    assert "re-derived exactly from the spec: not-absorbable" in checked["no"].detail


@pytest.mark.parametrize(("name", "change", "why"), [
    ("no", lambda d: d.update(verdict="absorbable"), "re-derived from the spec: not-absorbable"),
    ("gen", lambda d: d.update(verdict="absorbable", witness=None), "re-derived from the spec: not-absorbable"),
    ("no", lambda d: d.update(scope="all weights"), "re-derived from the spec"),
    ("yes", lambda d: d.update(witness=None), "needs its witness"),
])
def test_a_forged_answer_without_a_witness_fails(report: dict[str, Any], tmp_path: Path, name: str, change: Any,
                                                 why: str) -> None:
    data = copy.deepcopy(report)
    data["queries"] = [q for q in data["queries"] if q["query"] == f"absorb {name}"]
    change(data["queries"][0]["derivation"])
    (c,) = _verify(tmp_path, data).values()
    assert not c.ok and why in c.detail, c.detail


def test_a_missing_report_gets_a_hint_about_reports_not_spec_files(tmp_path: Path) -> None:
    """The hint said 'paths are relative to the spec file' (verify has no spec file)."""
    from tests.helpers import run_cli

    code, _, err, _ = run_cli("verify", str(tmp_path / "missing.json"))
    assert code == 2 and "spec file" not in err and "symabsorb prove SPEC -o REPORT.json" in err
