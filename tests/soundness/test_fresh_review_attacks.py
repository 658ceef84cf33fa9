"""Round 3 of the adversarial review (docs/referee-attacks.md, "Round 3 (fresh review)"): one
regression test per finding, each checked to fail on the code before its fix, plus the two
examples of issue 22 that had no reproducing test (a checkpoint of thousands of layers sharing one
storage; a report with a number nested thousands deep). CPU time is measured with
``time.process_time`` (``run_cli`` runs in-process), never the wall clock."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import pytest

from tests.helpers import ROOT, require_module, run_cli


def _np():  # type: ignore[no-untyped-def]
    return require_module("numpy", "weights")


# ---- F1: a scan record is bound to the file's bytes, not to its size and mtime ---------------------------

def test_scan_does_not_resume_a_record_for_other_bytes_of_the_same_size_and_mtime(tmp_path: Path) -> None:
    np = _np()
    ck = tmp_path / "ck"
    ck.mkdir()
    f = ck / "w.npz"
    np.savez(f, W_up=np.array([[1.0, 0], [0, 1], [1, 1]]), W_down=np.array([[-1.0, 0, 0.5], [0, -1, 1 / 3]]))
    res = str(tmp_path / "res")
    code, out, _, _ = run_cli("scan", str(ck), "--in-process", "--results", res, "--activation", "relu")
    assert code == 0 and " absorbable " in out
    before = os.stat(f)
    # other weights (no index set works), the same number of bytes, the old mtime put back
    np.savez(f, W_up=np.array([[1.0, 2], [3, -1], [1, 1]]), W_down=np.array([[1.0, 0, 2], [-1, 1, 1]]))
    assert os.stat(f).st_size == before.st_size
    os.utime(f, ns=(before.st_atime_ns, before.st_mtime_ns))
    code, out, _, _ = run_cli("scan", str(ck), "--in-process", "--results", res, "--activation", "relu")
    assert "not-absorbable" in out, out


# ---- F2, F6: decide's exact and float arguments are checked before the searches see them ---------------

def test_decide_refuses_exact_entries_out_of_the_search_range() -> None:
    from fractions import Fraction

    import symabsorb

    for up in ([[10**5000]], [[Fraction(1, 10**400)]]):
        with pytest.raises(symabsorb.ArgumentError, match="out of the range"):
            symabsorb.decide("relu", up, [[1]])  # was OverflowError from the float guess


def test_decide_refuses_a_float_array_beyond_the_tensor_cap_before_copying_it() -> None:
    import time

    import symabsorb

    np = _np()
    huge = np.broadcast_to(1.0, (60000, 60000))  # 29 GB as float64: no memory is used until copied
    start = time.process_time()
    with pytest.raises(symabsorb.ArgumentError, match="entries"):
        symabsorb.decide("relu", huge, huge)
    assert time.process_time() - start < 5


# ---- F3, F4, F5: numbers and nesting past what Python can print or recurse are clean errors --------------

def test_facts_whose_taylor_coefficients_exceed_the_digits_limit_are_unknown_not_a_crash() -> None:
    code, out, err, _ = run_cli("facts", "exp(" + "9" * 3000 + "*z)", "--budget", "20", "--no-cache", "--json")
    assert code == 0, err
    series = json.loads(out)["facts"]["series"]
    assert series["status"] == "unknown" and "digits" in series["reason"]


def test_a_digits_limit_python_cannot_print_is_refused_at_the_command_line() -> None:
    code, _, err, _ = run_cli("facts", "z", "--limit", "digits=100000")
    assert code == 2 and "at most" in err and "Traceback" not in err


def test_a_raised_depth_limit_that_python_cannot_recurse_is_a_clean_error() -> None:
    code, _, err, _ = run_cli("classify", "^".join(["z"] * 3000), "--limit", "depth=10000000",
                              "--limit", "exponent=100000000", "--budget", "20")
    assert code == 2, err
    assert "internal error" not in err and "recursion" in err


# ---- issue 22's two examples without a test: shared storage, a deeply nested number ---------------------

@pytest.mark.slow  # torch builds and loads 9,000 tensors, then the scan runs to its budget
def test_scan_of_3000_layers_sharing_one_storage_is_bounded(tmp_path: Path) -> None:
    torch = require_module("torch", "torch")
    ck = tmp_path / "ck"
    ck.mkdir()
    base = torch.zeros(1 << 22, dtype=torch.float32)  # 16 MB, one storage for every tensor
    sd = {}
    for i in range(3000):
        sd[f"model.layers.{i}.mlp.up_proj.weight"] = base[:8].view(4, 2)
        sd[f"model.layers.{i}.mlp.down_proj.weight"] = base[8:16].view(2, 4)
        sd[f"model.layers.{i}.mlp.gate_proj.weight"] = base[16:24].view(4, 2)
    torch.save(sd, ck / "model.pt")
    code, _, err, cpu = run_cli("scan", str(ck), "--in-process", "--budget", "8", "--case-budget", "5")
    assert code in (0, 1, 2), err
    assert "Traceback" not in err and "internal error" not in err
    assert cpu < 8 + 5  # the command's budget bounds it (80+ CPU s before the fix, F8)


@pytest.mark.slow  # a scan of 3,000 layers (the fast tier's budget: make test-fast <= 60 s)
def test_scan_of_3000_safetensors_layers_sharing_one_byte_range_is_bounded(tmp_path: Path) -> None:
    _np()
    ck = tmp_path / "ck"
    ck.mkdir()
    header: dict[str, object] = {}
    for i in range(3000):
        header[f"model.layers.{i}.mlp.up_proj.weight"] = {"dtype": "F32", "shape": [4, 2], "data_offsets": [0, 32]}
        header[f"model.layers.{i}.mlp.down_proj.weight"] = {"dtype": "F32", "shape": [2, 4], "data_offsets": [0, 32]}
    raw = json.dumps(header).encode()
    (ck / "m.safetensors").write_bytes(struct.pack("<Q", len(raw)) + raw + struct.pack("<8f", 1, 0, 0, 1, 1, 1, 2, 3))
    code, _, err, cpu = run_cli("scan", str(ck), "--in-process", "--budget", "20", "--case-budget", "5")
    assert code in (0, 1, 2), err
    assert "Traceback" not in err and "internal error" not in err
    assert cpu < 20 + 5


def _report(tmp_path: Path) -> dict[str, object]:
    np = _np()
    np.savez(tmp_path / "w.npz", W_up=np.array([[1.0, 0], [0, 1], [1, 1]]),
             W_down=np.array([[-1.0, 0, 0.5], [0, -1, 1 / 3]]))
    (tmp_path / "s.absorb").write_text('block b { activation: relu weights: "w.npz" }\nabsorb b\n')
    code, _, err, _ = run_cli("prove", str(tmp_path / "s.absorb"), "-o", str(tmp_path / "r.json"))
    assert code == 0, err
    data: dict[str, object] = json.loads((tmp_path / "r.json").read_text())
    return data


@pytest.mark.parametrize("depth", [900, 3000, 100_000])
@pytest.mark.parametrize("where", ["distance_lower_bound", "index_set", "target", "verdict"])
def test_verify_of_a_report_with_a_number_nested_thousands_deep_is_a_clean_outcome(
        tmp_path: Path, depth: int, where: str) -> None:
    data = _report(tmp_path)
    derivation = data["queries"][0]["derivation"]  # type: ignore[index]
    holder = derivation if where == "verdict" else derivation["certificate"]
    holder[where] = "__DEEP__"
    text = json.dumps(data).replace('"__DEEP__"', "[" * depth + "1" + "]" * depth)
    (tmp_path / "r.json").write_text(text)
    code, out, err, cpu = run_cli("verify", str(tmp_path / "r.json"), "--budget", "10")
    assert code in (1, 2), (code, out, err)
    assert "Traceback" not in err and "internal error" not in err
    assert cpu < 10 + 5


# ---- F8: a notebook's LaTeX view of a result carries no lemma-file TeX -------------------------------------

def test_repr_latex_escapes_a_lemma_files_label(tmp_path: Path) -> None:
    import symabsorb

    root = ROOT
    text = (root / "theorems" / "L-linear.toml").read_text().replace('"L-linear"', '"X-evil"', 1)
    text = text.replace('label = "X-evil"', 'label = "\\\\input{/etc/passwd}"').replace("priority = 5", "priority = 1")
    (tmp_path / "th").mkdir()
    (tmp_path / "th" / "x.toml").write_text(text)
    report = symabsorb.prove("activation lin(z) = 3*z\nblock b { activation: lin dim: 2 width: 3 }\nabsorb b\n",
                             theorems=[tmp_path / "th"])
    latex = report.results[0]._repr_latex_()
    assert report.results[0].decided_by == "\\input{/etc/passwd}" or "X-evil" in str(report.results[0].derivation)
    assert "\\input" not in latex, latex


def test_verify_of_a_report_with_a_5000_digit_integer_is_a_clean_error(tmp_path: Path) -> None:
    data = _report(tmp_path)
    data["queries"][0]["derivation"]["certificate"]["distance_lower_bound"] = "__BIG__"  # type: ignore[index]
    (tmp_path / "r.json").write_text(json.dumps(data).replace('"__BIG__"', "1" + "0" * 5000))
    code, _, err, _ = run_cli("verify", str(tmp_path / "r.json"), "--budget", "10")
    assert code == 2 and "internal error" not in err, err


# ---- Findings left at the deadline of the round, fixed after it ----------------------------------


def test_a_spec_file_name_with_control_characters_never_reaches_the_terminal(tmp_path: Path) -> None:
    spec = tmp_path / "b\x1b[31m\u009bx\u202e.absorb"
    spec.write_text("classify relu\n", encoding="utf-8")
    code, out, err, _ = run_cli("prove", str(spec))
    assert code in (0, 1), err
    assert not any(ch in out for ch in ("\x1b", "\u009b", "\u202e"))


def test_json_outputs_escape_c1_and_bidi_characters() -> None:
    import json as _json

    from symabsorb.report.escape import json_safe

    value = {"name": "up\u202e.weight\u009b[2J\x7f", "ok": "≥ ✓"}
    text = json_safe(_json.dumps(value, ensure_ascii=False))
    assert not any(ch in text for ch in ("\u202e", "\u009b", "\x7f"))
    assert "≥ ✓" in text and _json.loads(text) == value
