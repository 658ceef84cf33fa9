"""Real layers from weight files: biases and LayerNorm scales read from the file, the post-LN
question decided exactly (Lemma PN: P·W_S = −P, i.e. W_S = −I + 1rᵀ), certificates re-checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.helpers import require_module, run_cli

SPEC = '''block ln {{
    activation: gelu
    weights: "layer.safetensors"
    prefix: "encoder.layer.0."
    up: "intermediate.dense.weight"
    down: "output.dense.weight"
    up_bias: "intermediate.dense.bias"
    down_bias: "output.dense.bias"
    ln_gamma: "output.LayerNorm.weight"
    norm: post-ln
    eps: 1e-12
}}
block bare {{
    activation: gelu
    weights: "layer.safetensors"
    prefix: "encoder.layer.0."
    up: "intermediate.dense.weight"
    down: "output.dense.weight"
}}
absorb ln
absorb bare
{extra}'''


def planted(tmp: Path, d: int = 6, m: int = 14, gamma_first: float = 1.0, seed: int = 0) -> Path:
    """A BERT-named post-LN layer whose units 0..d-1 have W_S = −I + 1rᵀ ≠ −I (r ≠ 0)."""
    np = require_module("numpy", "weights")
    st = require_module("safetensors.numpy", "weights")
    rng = np.random.default_rng(seed)
    up, down = np.zeros((m, d)), np.zeros((d, m))
    r = np.arange(1, d + 1) % 3 + 1  # nonzero: W_S is not −I
    for j in range(d):
        up[j, j] = 1.0
        down[:, j] = -np.eye(d)[:, j] + r[j]
    up[d:] = rng.integers(-8, 9, size=(m - d, d)) / 8
    down[:, d:] = rng.integers(-8, 9, size=(d, m - d)) / 8
    gamma = np.ones(d)
    gamma[0] = gamma_first
    p = "encoder.layer.0."
    st.save_file({p + "intermediate.dense.weight": up.astype(np.float32),
                  p + "intermediate.dense.bias": (rng.integers(-8, 9, size=m) / 16).astype(np.float32),
                  p + "output.dense.weight": down.astype(np.float32),
                  p + "output.dense.bias": (rng.integers(-8, 9, size=d) / 16).astype(np.float32),
                  p + "output.LayerNorm.weight": gamma.astype(np.float32),
                  p + "output.LayerNorm.bias": np.zeros(d, dtype=np.float32),
                  "embeddings.position_ids": np.arange(10, dtype=np.int64)}, str(tmp / "layer.safetensors"))
    spec = tmp / "spec.absorb"
    spec.write_text(SPEC.format(extra=""), encoding="utf-8")
    return spec


def test_planted_post_ln_layer_is_absorbable_and_its_bare_block_is_not(tmp_path: Path) -> None:
    spec = planted(tmp_path)
    report = tmp_path / "report.json"
    code, _, err, _ = run_cli("prove", str(spec), "--format", "json", "-o", str(report))
    assert code == 0, err
    data = json.loads(report.read_text(encoding="utf-8"))
    by = {q["query"]: q["derivation"] for q in data["queries"]}
    ln, bare = by["absorb ln"], by["absorb bare"]
    assert ln["verdict"] == "absorbable" and ln["decided_by"] == "R-aff-1"
    assert "L-post-ln" in ln["cited"]
    assert ln["certificate"]["projector"] == "centering"
    assert ln["certificate"]["index_set"] == [0, 1, 2, 3, 4, 5]
    assert bare["verdict"] == "not-absorbable"  # W_S = −I + 1rᵀ ≠ −I: the bare question differs
    code, out, err, _ = run_cli("verify", str(report))
    assert code == 0, out + err
    assert "2 of 2 certificates" in out


def test_a_tampered_projector_fails_verify(tmp_path: Path) -> None:
    spec = planted(tmp_path)
    report = tmp_path / "report.json"
    assert run_cli("prove", str(spec), "--format", "json", "-o", str(report))[0] == 0
    data = json.loads(report.read_text(encoding="utf-8"))
    for q in data["queries"]:
        cert = q["derivation"].get("certificate")
        if cert and cert.get("projector"):
            del cert["projector"]  # claim the bare condition W_S = −I for the post-LN layer
    report.write_text(json.dumps(data), encoding="utf-8")
    code, out, _, _ = run_cli("verify", str(report))
    assert code != 0
    assert "projector" in out


def test_a_zero_layernorm_scale_leaves_the_post_ln_question_open(tmp_path: Path) -> None:
    spec = planted(tmp_path, gamma_first=0.0)
    report = tmp_path / "report.json"
    assert run_cli("prove", str(spec), "--format", "json", "-o", str(report))[0] in (0, 1)
    by = {q["query"]: q["derivation"] for q in json.loads(report.read_text(encoding="utf-8"))["queries"]}
    assert by["absorb ln"]["verdict"] == "open"


def test_bias_tensor_of_the_wrong_length_is_a_positioned_error(tmp_path: Path) -> None:
    spec = planted(tmp_path)
    text = spec.read_text(encoding="utf-8").replace('down_bias: "output.dense.bias"',
                                                    'down_bias: "intermediate.dense.bias"')
    spec.write_text(text, encoding="utf-8")
    code, _, err, _ = run_cli("prove", str(spec))
    assert code == 2
    assert "has shape (14,)" in err and "a vector of length 6" in err


def test_witness_export_keeps_names_dtype_and_biases_and_absorbs(tmp_path: Path) -> None:
    import math

    np = require_module("numpy", "weights")
    st = require_module("safetensors.numpy", "weights")
    spec = planted(tmp_path)
    out = tmp_path / "witness.safetensors"
    code, text, err, _ = run_cli("absorb", str(spec), "--block", "ln", "-o", str(out))
    assert code == 0, text + err
    w = st.load_file(str(out))
    p = "encoder.layer.0."
    for name in ("intermediate.dense.weight", "intermediate.dense.bias", "output.dense.weight", "output.dense.bias"):
        assert p + name in w, sorted(w)
    assert w[p + "intermediate.dense.weight"].dtype == np.float32  # the checkpoint's dtype (exact here)
    orig = st.load_file(str(tmp_path / "layer.safetensors"))
    gelu = np.vectorize(lambda s: 0.5 * s * (1 + math.erf(s / math.sqrt(2))))

    def ln(u):  # type: ignore[no-untyped-def]
        c = u - u.mean(axis=1, keepdims=True)
        return c / np.sqrt((c * c).mean(axis=1, keepdims=True) + 1e-12)

    x = np.random.default_rng(3).standard_normal((50, 6))

    def block(t):  # type: ignore[no-untyped-def]
        hidden = gelu(x @ t[p + "intermediate.dense.weight"].astype(np.float64).T + t[p + "intermediate.dense.bias"])
        return hidden @ t[p + "output.dense.weight"].astype(np.float64).T + t[p + "output.dense.bias"]

    assert np.abs(ln(x + block(orig)) - ln(block(w))).max() < 1e-5


def _forged(tmp: Path, edit_spec: tuple[str, str], edit_cert: Any = None) -> tuple[int, str]:
    """The planted post-LN report with its spec text edited (and, for a consistent forgery, the
    certificate's record of the layer edited to match); verify's exit code and output."""
    tmp.mkdir()
    spec = planted(tmp)
    report = tmp / "report.json"
    assert run_cli("prove", str(spec), "--format", "json", "-o", str(report))[0] == 0
    data = json.loads(report.read_text(encoding="utf-8"))
    old, new = edit_spec
    assert old in data["spec"]["text"]
    data["spec"]["text"] = data["spec"]["text"].replace(old, new, 1)
    for q in data["queries"]:
        cert = q["derivation"].get("certificate")
        if cert and cert.get("projector") and edit_cert is not None:
            edit_cert(cert["weights"])
    report.write_text(json.dumps(data), encoding="utf-8")
    code, out, err, _ = run_cli("verify", str(report))
    return code, out + err


def test_the_certificate_records_the_layer_it_was_made_for(tmp_path: Path) -> None:
    spec = planted(tmp_path)
    report = tmp_path / "report.json"
    assert run_cli("prove", str(spec), "--format", "json", "-o", str(report))[0] == 0
    by = {q["query"]: q["derivation"] for q in json.loads(report.read_text(encoding="utf-8"))["queries"]}
    info = by["absorb ln"]["certificate"]["weights"]
    assert info["norm"] == "post-ln" and info["eps"] == "1/1000000000000"
    assert info["tensors"]["ln_gamma"] == "encoder.layer.0.output.LayerNorm.weight"
    assert "eps" not in by["absorb bare"]["certificate"]["weights"]


def test_verify_rejects_a_forged_epsilon(tmp_path: Path) -> None:
    # ε changed in the spec: the certificate was made for another ε
    for i, new in enumerate(("eps: 1e-5", "eps: 0")):
        code, out = _forged(tmp_path / str(i), ("eps: 1e-12", new))
        assert code == 1 and "FAILED absorb ln" in out and "ε" in out, out
    # ε = 0 in the spec and in the certificate's record: Lemma PN needs ε > 0, checked again exactly
    code, out = _forged(tmp_path / "c", ("eps: 1e-12", "eps: 0"), lambda w: w.update(eps="0"))
    assert code == 1 and "FAILED absorb ln" in out, out


def test_verify_rejects_a_forged_layernorm_scale(tmp_path: Path) -> None:
    gamma = 'ln_gamma: "output.LayerNorm.weight"'
    zero = 'ln_gamma: "output.LayerNorm.bias"'  # a tensor of zeros: γ_k = 0 breaks the reduction
    for i, edit in enumerate(((gamma, zero), (gamma + "\n", ""))):  # another tensor; no scale at all
        code, out = _forged(tmp_path / str(i), edit)
        assert code == 1 and "FAILED absorb ln" in out and "scale tensors" in out, out
    # consistent forgery: the certificate's record names the zero tensor too; verify reads γ from the
    # file and finds γ_k = 0 exactly, so the question is not the one the certificate answers
    code, out = _forged(tmp_path / "c", (gamma, zero),
                        lambda w: w["tensors"].update(ln_gamma="encoder.layer.0.output.LayerNorm.bias"))
    assert code == 1 and "FAILED absorb ln" in out, out
