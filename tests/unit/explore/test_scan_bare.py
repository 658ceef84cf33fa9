"""Issue 28 row 6 (as used *and* bare): `scan` decides, beside each layer as the model uses it, the bare
bias-free block of the paper's question on the same tensors, records it (JSON, certificates re-checked
by `verify`) and shows it in every table with the columns defined; a failed layer's reason is said
once (on its `skipped` line, with its hint)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from symabsorb.report.scantable import LEGEND, render_scan_table, scan_table
from tests.helpers import require_module, run_cli
from tests.unit.explore.test_scan import D, M, _mat, _write


def _scan(folder: Path, tmp: Path, *extra: str) -> tuple[int, list[dict[str, Any]], str, str]:
    code, out, err, _ = run_cli("scan", str(folder), "--in-process", "--json", str(tmp / "s.json"), *extra)
    data = json.loads((tmp / "s.json").read_text(encoding="utf-8")) if (tmp / "s.json").exists() else {}
    return code, data.get("layers", []), out, err


def _bare_verdict(folder: Path, record: dict[str, Any]) -> str:
    """The bare block of ``record``'s layer decided on its own, as a user would write it."""
    from symabsorb.answer import Session
    from symabsorb.model import resolve_text
    from symabsorb.theory.library import library_with

    text = (f'block b {{ activation: gelu weights: "model.safetensors" prefix: "{record["layer"]}" '
            'up: "intermediate.dense.weight" down: "output.dense.weight" }\n')
    spec = resolve_text(text, str(folder / "bare.absorb"))
    return str(Session(library_with(())).decide_file(spec.blocks[0], str(folder)).derivation.verdict.value)


def test_a_post_ln_layer_is_decided_bare_too(tmp_path: Path) -> None:
    folder = _write(tmp_path / "ckpt", "bert")
    code, layers, out, err = _scan(folder, tmp_path, "-o", str(tmp_path / "t.md"))
    assert code == 0, out + err
    assert len(layers) == 2
    for r in layers:
        bare = r["bare"]
        assert bare["status"] == "done" and "bias" not in bare["block"] and "norm" not in bare["block"], bare
        assert "up_bias" in r["block"] and "norm: post-ln" in r["block"]  # the layer as used is unchanged
        assert bare["verdict"] == _bare_verdict(folder, r)
        if bare["verdict"] == "not-absorbable":
            assert bare["certificate"]["distance_lower_bound"] > 0
    header = out.splitlines()[0].split()
    assert header[-3:] == ["bare", "bare", "dist."], out
    rows = out.splitlines()[2:4]
    assert all(line.split()[-2] == r["bare"]["verdict"] for line, r in zip(rows, layers, strict=True)), out
    assert "bare:" in " ".join(out.split())  # the legend defines the columns
    md = (tmp_path / "t.md").read_text(encoding="utf-8")
    table = [line for line in md.splitlines() if line.startswith("|")]
    cells = [c.strip() for c in table[0].strip("|").split("|")]
    assert {"bare verdict", "bare decided by", "bare distance ≥"} <= set(cells), table[0]
    for line, r in zip(table[2:], layers, strict=True):
        row = dict(zip(cells, (c.strip() for c in line.strip("|").split("|")), strict=True))
        assert row["bare verdict"] == r["bare"]["verdict"] and row["verdict"] == r["verdict"]
    # verify re-checks the bare blocks' certificates too
    code, vout, verr, _ = run_cli("verify", str(tmp_path / "s.json"), "--allow-outside")
    assert code == 0 and "4 of 4 certificates" in vout, vout + verr
    assert "model_encoder_layer_0_bare" in vout


def test_a_bare_layer_is_decided_once(tmp_path: Path) -> None:
    np = require_module("numpy", "weights")
    st = require_module("safetensors.numpy", "weights")
    folder = tmp_path / "ckpt"
    folder.mkdir()
    st.save_file({"W_up": _mat(M, D), "W_down": np.ascontiguousarray(_mat(D, M))}, str(folder / "w.safetensors"))
    code, layers, out, err = _scan(folder, tmp_path)
    assert code == 0, out + err
    assert len(layers) == 1 and "bare" not in layers[0]
    assert out.splitlines()[2].split()[-2:] == ["=", "="], out  # `=`: the layer as used is the bare block
    assert "(=: the layer as used is bare)" in LEGEND


def test_the_bare_block_out_of_budget_keeps_the_layer_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from symabsorb.explore import scan as scan_module
    from symabsorb.explore.budget import CpuBudgetExceeded

    def spent(task: Any) -> dict[str, Any]:
        raise CpuBudgetExceeded()

    monkeypatch.setattr(scan_module, "_decide_bare", spent)
    folder = _write(tmp_path / "ckpt", "bert")
    code, layers, out, err = _scan(folder, tmp_path)
    assert code == 0, out + err
    for r in layers:
        assert r["status"] == "done" and r["decided_by"] == "R-aff-1", r
        assert r["bare"]["status"] == "budget" and r["bare"]["verdict"] == "open", r
    assert "bare block not decided: CPU budget" in out


def _failing(folder: Path) -> Path:
    """A BERT checkpoint whose layer 1 has an output bias of the wrong length."""
    np = require_module("numpy", "weights")
    st = require_module("safetensors.numpy", "weights")
    _write(folder, "bert")
    tensors = dict(st.load_file(str(folder / "model.safetensors")))
    tensors["encoder.layer.1.output.dense.bias"] = np.ones(D + 3, dtype=np.float32)
    st.save_file(tensors, str(folder / "model.safetensors"))
    return folder


def test_a_failed_layer_reason_is_said_once(tmp_path: Path) -> None:
    folder = _failing(tmp_path / "ckpt")
    code, layers, out, err = _scan(folder, tmp_path, "-o", str(tmp_path / "t.csv"))
    failed = [r for r in layers if r["status"] != "done"]
    assert code == 1 and len(failed) == 1, out + err
    reason = failed[0]["error"]
    assert reason and out.count(reason) == 1, out  # on its `skipped` line only
    (line,) = [x for x in out.splitlines() if reason in x]
    assert line.startswith("skipped ") and "hint" in line, line
    assert "not decided: the reason is on its `skipped` line" in out
    rows = list(csv.reader(io.StringIO((tmp_path / "t.csv").read_text(encoding="utf-8"))))
    assert sum(reason in cell for row in rows for cell in row) == 0  # the file's row points to the skip


def test_an_exhausted_layer_gets_a_hint_once() -> None:
    record = {"label": "m.safetensors:h.0.", "file": "/d/m.safetensors", "layer": "h.0.", "status": "budget",
              "verdict": "open", "error": "CPU budget of 1 s exhausted"}
    from symabsorb.explore.scan import failed_layer

    skipped = [failed_layer(record)]
    assert skipped[0] is not None and "--case-budget" in skipped[0][1]
    text = scan_table([record], [s for s in skipped if s is not None], 200)
    assert text.count("CPU budget of 1 s exhausted") == 1 and "--case-budget" in text
    md = render_scan_table([record], [s for s in skipped if s is not None], "md")
    assert md.count("CPU budget of 1 s exhausted") == 1


def test_the_command_budget_spent_on_a_bare_block_ends_the_scan(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The command's budget (``BudgetExhausted``) running out inside a bare block ends the command, as
    anywhere else: it is never recorded as one bare block's error."""
    import symabsorb
    from symabsorb.budget import BudgetExhausted
    from symabsorb.explore import scan as scan_module

    real = scan_module._decide_block

    def spent(text: str, *args: Any) -> Any:
        if "_bare {" in text:
            raise BudgetExhausted("budget: the command's budget ran out")
        return real(text, *args)

    monkeypatch.setattr(scan_module, "_decide_block", spent)
    folder = _write(tmp_path / "ckpt", "bert")
    with pytest.raises(BudgetExhausted):
        symabsorb.scan(folder)
