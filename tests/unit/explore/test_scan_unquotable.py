"""A layer whose tensor names a spec cannot quote is listed as skipped, never dropped (issue 26 §2 F4)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import require_module, run_cli

np = require_module("numpy", "weights")


def test_a_layer_a_spec_cannot_name_is_skipped_with_exit_1(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    d = tmp_path / "d"
    d.mkdir()
    np.savez(d / "m.npz", **{"a\\b.W_up": rng.standard_normal((6, 4)), "a\\b.W_down": rng.standard_normal((4, 6)),
                             "ok.W_up": rng.standard_normal((6, 4)), "ok.W_down": rng.standard_normal((4, 6)),
                             'q"\nlayers.1.W_up': rng.standard_normal((6, 4)),
                             'q"\nlayers.1.W_down': rng.standard_normal((4, 6))})
    code, out, err, _ = run_cli("scan", str(d), "--in-process", "--no-cache", "--results", str(tmp_path / "rr"),
                                "--json", str(tmp_path / "rr.json"))
    assert code == 1, out + err
    assert "Traceback" not in out + err
    data = json.loads((tmp_path / "rr.json").read_text(encoding="utf-8"))
    reasons = [reason for _file, reason in data["skipped"]]
    assert any("layer `a\\\\b.` not decided" in r for r in reasons), reasons  # escaped: a\\b.
    assert any('layer `q\\"\\nlayers.1.` not decided' in r for r in reasons), reasons
    assert all("\n" not in r for r in reasons)
    assert "a\\\\b." in out + err  # shown escaped on the terminal too
    assert "\nlayers.1." not in out + err  # the line break never reaches the terminal raw
    assert [r["layer"] for r in data["layers"]] == ["ok."]
