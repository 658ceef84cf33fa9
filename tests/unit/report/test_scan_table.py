"""Issue 28 row 6: the scan table names each model and layer in full (a long path is shortened in its
middle only, never its layer, never so that two rows read the same), activations untruncated, the
labels `prove` uses, a defined distance column, and `scan -o table.md|.tex|.csv` with every user
string escaped for the format."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from symabsorb.report.scantable import LEGEND, render_scan_table, scan_table
from tests.helpers import run_cli
from tests.unit.explore.test_scan import _write


def _record(path: str, layer: str, **extra: Any) -> dict[str, Any]:
    base = {"label": f"{path}:{layer}", "layer": layer, "activation": "gelu_tanh (gated)", "norm": "pre-rms",
            "d": 4096, "m": 11008, "verdict": "not-absorbable", "decided_by": "L-pre-norm", "cpu_s": 1.5,
            "certificate": {"distance_lower_bound": 64.0}}
    return {**base, **extra}


MODELS = [f"models--org--very-long-model-name-{i}/snapshots/0123456789abcdef0123456789abcdef/model.safetensors"
          for i in range(5)]


def test_rows_stay_distinct_and_layers_whole_at_any_width() -> None:
    records = [_record(p, "model.layers.31.mlp.") for p in MODELS]
    for width in (60, 100, 250):
        text = scan_table(records, [], width)
        rows = text.splitlines()[2:7]
        assert len(set(r.split()[0] for r in rows)) == 5, text  # five models, five different rows
        assert all(":model.layers.31.mlp." in r for r in rows)  # the layer is never cut
        assert all("gelu_tanh (gated)" in r for r in rows)  # the activation is never cut
        assert all("Lemma" in r or "Lem" in r or "L-pre-norm" not in r for r in rows)
        assert all(r.startswith("models--org--very-long-model-name-") for r in rows)  # no name cut
    assert LEGEND.split()[:4] == text.splitlines()[7].split()[:4] and "dist/√d" in text.splitlines()[0]
    wide = scan_table(records, [], 250)
    assert all(m in wide for m in MODELS)  # room enough: nothing shortened
    assert "L-pre-norm" not in wide  # the label prove uses, not the id


def test_the_label_prove_uses() -> None:
    from symabsorb.theory.library import default_library

    label = default_library().results["L-pre-norm"].label
    assert label != "L-pre-norm"
    assert label in scan_table([_record("a/model.safetensors", "h.0.")], [], 200)


HOSTILE = "=cmd|' /C calc'!A0 *x* | $\\input{/etc/passwd}$ <b>"


def test_files_escape_every_user_string() -> None:
    records = [_record(HOSTILE + "/m.safetensors", "h.0."), _record("-2+3/m.safetensors", "@SUM(1)")]
    md = render_scan_table(records, [("@bad|file", "why *not*")], "md")
    table = [line for line in md.splitlines() if line.startswith("|")]
    assert all(line.count(" | ") == 12 for line in table[2:]), table  # a | in a name splits no cell
    assert "<b>" not in md and "*x*" not in md and "$\\input" not in md
    tex = render_scan_table(records, [], "tex")
    assert "\\input{" not in tex and "\\textbackslash{}input" in tex and "?" not in tex.split("\\toprule")[1][:200]
    rows = list(csv.reader(io.StringIO(render_scan_table(records, [], "csv"))))
    assert rows[0][0] == "model / file" and len(rows) == 3
    for row in rows[1:]:
        assert all(cell[:1] not in "=+-@" or cell == "" for cell in row), row
    assert rows[1][0].startswith("'=") and rows[2][1] == "'@SUM(1)" and rows[2][0].startswith("'-2")


def test_scan_writes_the_table(tmp_path: Path) -> None:
    _write(tmp_path / "bert-base" / "ckpt", "bert")
    for suffix in ("md", "tex", "csv"):
        out = tmp_path / f"table.{suffix}"
        code, text, err, _ = run_cli("scan", str(tmp_path), "--in-process", "-o", str(out), "--json",
                                     str(tmp_path / "s.json"))
        assert code == 0, err
        body = out.read_text(encoding="utf-8")
        layers = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["layers"]
        assert all(r["layer"] in body for r in layers) and "bert-base" in body
        assert all(f":{r['layer']}" in text for r in layers) and "bert-base" in text, text
    code, _, err, _ = run_cli("scan", str(tmp_path), "--in-process", "-o", str(tmp_path / "t.xlsx"))
    assert code == 2 and ".md, .tex or .csv" in err


def test_the_legend_defines_the_post_ln_distance_as_the_reduced_question() -> None:
    """A post-LN layer's certificate bounds ‖P W_S − T‖ (Lemma PN), not the bare ‖W_S − T‖ (a new user's
    report: the legend named only the bare quantity)."""
    from symabsorb.report.scantable import LEGEND

    assert "post-LN" in LEGEND and "‖P W_down[:,S] W_up[S,:] − T‖_F" in LEGEND
