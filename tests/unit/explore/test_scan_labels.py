"""Issue 26's referee, N3: scan labels come from a stranger's checkpoint (folder names, file names,
tensor names). Two that differ only by a carriage return, U+2028, a zero-width character or Unicode
composition must never print the same in the scan table (terminal, md, tex, csv) or its skipped
lines; and a failed layer's reason cites the weights file, never the ``scan.absorb`` the scan
generated in memory."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from symabsorb.errors import Span, SpecShapeError
from symabsorb.explore.scan import _layer_error
from symabsorb.report.scantable import render_scan_table, scan_table
from symabsorb.untrusted import nfc_twins, visible
from tests.helpers import require_module, run_cli

LAYER = "model.layers.0.mlp."
#: names a checkpoint may carry that a plain print shows alike
ALIKE = ["ckpt/model.safetensors", "ckpt\r/model.safetensors", "ckpt\u2028/model.safetensors",
         "ckpt\u200b/model.safetensors", "ckpt\u00a0x/model.safetensors", "ckpt x/model.safetensors",
         "caf\u00e9/model.safetensors", "cafe\u0301/model.safetensors"]


def _record(path: str, layer: str = LAYER) -> dict[str, Any]:
    return {"label": f"{path}:{layer}", "layer": layer, "activation": "silu", "norm": "pre-rms", "d": 4, "m": 8,
            "verdict": "not-absorbable", "decided_by": None, "cpu_s": 0.5}


def _first_cells(lines: list[str], sep: str) -> list[str]:
    return [line.split(sep)[0] for line in lines]


def test_visible_escapes_what_a_reader_cannot_see() -> None:
    assert visible("a\rb") == "a\\rb" and visible("a\u2028b") == "a\\u2028b" and visible("a\u200bb") == "a\\u200bb"
    assert visible("a\u00a0b") == "a\\u00a0b" and visible("plain name/é") == "plain name/é"
    assert visible("x\udcff") == "x\\udcff"  # an undecodable byte of a file name: printable, never a crash
    assert visible("a\\b") == "a\\b" and visible("a\\b\u200b") == "a\\\\b\\u200b"  # a backslash doubled once escaping
    # ascii_only tells composed from decomposed, and is one-to-one (backslashes always doubled)
    assert visible("caf\u00e9", True) == "caf\\u00e9" and visible("cafe\u0301", True) == "cafe\\u0301"
    assert visible("a\\u200bb", True) != visible("a\u200bb", True)
    assert nfc_twins(["caf\u00e9", "cafe\u0301", "x", "x"]) == [[0, 1]]
    assert nfc_twins(["a\\u200bb", "a\u200bb"]) == [[0, 1]]  # read alike once shown: twins too


def test_terminal_rows_never_read_the_same() -> None:
    text = scan_table([_record(p) for p in ALIKE], [], 250)
    rows = [line for line in text.splitlines() if " silu " in line]
    labels = [row.split(" silu")[0].rstrip() for row in rows]
    assert len(labels) == len(ALIKE) and len(set(labels)) == len(ALIKE), labels
    assert "ckpt\\r/" in text and "ckpt\\u2028/" in text and "ckpt\\u200b/" in text and "ckpt\\u00a0x/" in text
    assert "caf\\u00e9/" in text and "cafe\\u0301/" in text  # the composed and decomposed é told apart...
    assert text.count("equal after Unicode NFC normalisation") == 2  # ...and said to read alike
    assert "\r" not in text and "\u2028" not in text and "\u200b" not in text


def test_file_tables_never_read_the_same() -> None:
    records = [_record(p) for p in ALIKE]
    md = render_scan_table(records, [], "md")
    cells = [line.split(" | ")[0] for line in md.splitlines()[2:2 + len(ALIKE)]]
    assert len(set(cells)) == len(ALIKE), cells
    tex = render_scan_table(records, [], "tex")
    body = tex.split("\\midrule\n")[1].split("\\bottomrule")[0].splitlines()
    assert len(set(_first_cells(body, " & "))) == len(ALIKE), body
    assert "?" not in "".join(_first_cells(body, " & "))  # no character turned into a `?` (two would collide)
    rows = list(csv.reader(io.StringIO(render_scan_table(records, [], "csv"))))[1:]
    assert len({row[0] for row in rows}) == len(ALIKE), rows


def test_skipped_lines_never_read_the_same() -> None:
    skipped = [(p, "no tensor names matched an MLP layer layout") for p in ALIKE]
    for text in (scan_table([], skipped, 200), render_scan_table([], skipped, "md"),
                 render_scan_table([], skipped, "tex")):
        lines = [line for line in text.splitlines() if "skipped" in line]
        assert len(set(lines)) == len(ALIKE), lines
    why = scan_table([], [("m.safetensors", "tensor group `a\u2028b` matches no MLP layout")], 200)
    assert "a\\u2028b" in why and "\u2028" not in why


def test_a_layer_error_cites_no_generated_file() -> None:
    err = SpecShapeError("tensor `w` in `model.safetensors` has shape (4, 9)", Span("/d/scan.absorb", 3, 5, 3, 9),
                         hint="set `transpose: true` for in x out layouts")
    text = _layer_error(err)
    assert "scan.absorb" not in text and text.startswith("tensor `w`") and "hint: set `transpose: true`" in text
    assert _layer_error(ValueError("/d/scan.absorb:2:1: bad thing")) == "bad thing"


def test_scan_of_a_broken_layer_names_the_weights_file(tmp_path: Path) -> None:
    np = require_module("numpy", "weights")
    st = require_module("safetensors.numpy", "weights")
    folder = tmp_path / "ckpt"
    folder.mkdir()
    rng = np.random.default_rng(0)
    st.save_file({"encoder.layer.0.intermediate.dense.weight": (rng.integers(-8, 9, (8, 4)) / 8).astype(np.float32),
                  "encoder.layer.0.output.dense.weight": (rng.integers(-8, 9, (4, 9)) / 8).astype(np.float32)},
                 str(folder / "model.safetensors"))
    code, out, err, _ = run_cli("scan", str(tmp_path), "--in-process")
    assert code == 1, err
    skipped = [line for line in out.splitlines() if line.startswith("skipped")]
    assert skipped and all("scan.absorb" not in line for line in skipped), out
    assert "model.safetensors" in skipped[0] and "has shape (4, 9)" in skipped[0], out
