"""Issue 28 row 10/6: a result of the user's (`--theorems`) that decides a scanned layer is shown in the scan
table by the label `prove` uses, with "user" as its source — never by its id; the record carries them
(the built-in library cannot name a user's result)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from symabsorb.explore.scan import _decision_fields
from symabsorb.report.scantable import render_scan_table, scan_rows, scan_table
from tests.helpers import USER_LEMMA


def _record(**extra: Any) -> dict[str, Any]:
    base = {"label": "m/model.safetensors:mlp.", "layer": "mlp.", "activation": "tanh", "norm": "none", "d": 4,
            "m": 16, "verdict": "impossible", "decided_by": "my-bounded", "decided_by_label": "My lemma",
            "decided_by_source": "user", "cpu_s": 0.1}
    return {**base, **extra}


def test_a_user_result_shows_by_its_label_and_source() -> None:
    record = _record(bare={"verdict": "impossible", "decided_by": "my-bounded", "decided_by_label": "My lemma",
                           "decided_by_source": "user", "status": "done"})
    row = scan_rows([record])[0]
    assert row["decided by"] == "My lemma (user)" and row["bare by"] == "My lemma (user)"
    for text in (scan_table([record], [], 80), render_scan_table([record], [], "md"),
                 render_scan_table([record], [], "csv")):
        assert "My lemma" in text and "user" in text and "my-bounded" not in text


def test_built_in_results_keep_their_labels() -> None:
    row = scan_rows([_record(decided_by="L-pre-norm", decided_by_label=None, decided_by_source=None)])[0]
    assert row["decided by"] != "L-pre-norm" and "user" not in row["decided by"]


def test_the_scan_record_carries_the_user_result_s_label(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text(USER_LEMMA, encoding="utf-8")
    derivation = SimpleNamespace(verdict=SimpleNamespace(value="impossible"), decided_by="my-bounded",
                                 scope="all weights", condition_plain=None)
    decision = SimpleNamespace(derivation=derivation, search=None, certificate=None)
    fields = _decision_fields(decision, (str(tmp_path),))
    assert fields["decided_by_label"] == "My lemma" and fields["decided_by_source"] == "user"
    builtin = SimpleNamespace(derivation=SimpleNamespace(**{**vars(derivation), "decided_by": "L-growth"}),
                              search=None, certificate=None)
    assert "decided_by_label" not in _decision_fields(builtin, (str(tmp_path),))
