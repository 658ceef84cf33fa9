"""`symabsorb scan` on checkpoints as the families store them (tensor names, layouts, Conv1D,
config.json), each layer decided as the model uses it; nothing written into the scanned tree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import require_module, run_cli

D, M = 4, 8


def _rng() -> Any:
    np = require_module("numpy", "weights")
    return np.random.default_rng(0)


def _mat(rows: int, cols: int) -> Any:
    np = require_module("numpy", "weights")
    return (_rng().integers(-8, 9, size=(rows, cols)) / 8).astype(np.float32)


def _vec(n: int, value: float = 0.125) -> Any:
    np = require_module("numpy", "weights")
    return np.full(n, value, dtype=np.float32)


def _layers(prefix: str, names: dict[str, tuple[int, ...]], count: int = 2) -> dict[str, Any]:
    out = {}
    for i in range(count):
        for name, shape in names.items():
            key = prefix.format(i=i) + name
            out[key] = _mat(*shape) if len(shape) == 2 else _vec(shape[0], 1.0)
    return out


LAYOUTS: dict[str, tuple[str, dict[str, tuple[int, ...]], dict[str, Any] | None, str]] = {
    # name: (layer prefix, tensors relative to it, config.json, the result that decides it)
    "bert": ("encoder.layer.{i}.", {"intermediate.dense.weight": (M, D), "intermediate.dense.bias": (M,),
                                    "output.dense.weight": (D, M), "output.dense.bias": (D,),
                                    "output.LayerNorm.weight": (D,), "output.LayerNorm.bias": (D,),
                                    "attention.output.dense.weight": (D, D)},
             {"model_type": "bert", "hidden_act": "gelu", "layer_norm_eps": 1e-12}, "R-aff-1"),
    "gpt2": ("h.{i}.", {"mlp.c_fc.weight": (D, M), "mlp.c_fc.bias": (M,), "mlp.c_proj.weight": (M, D),
                        "mlp.c_proj.bias": (D,), "ln_2.weight": (D,)},
             {"model_type": "gpt2", "activation_function": "gelu_new"}, "L-pre-norm"),
    "gpt-neox": ("gpt_neox.layers.{i}.", {"mlp.dense_h_to_4h.weight": (M, D), "mlp.dense_h_to_4h.bias": (M,),
                                          "mlp.dense_4h_to_h.weight": (D, M), "mlp.dense_4h_to_h.bias": (D,),
                                          "post_attention_layernorm.weight": (D,)}, None, "L-pre-norm"),
    "opt": ("model.decoder.layers.{i}.", {"fc1.weight": (M, D), "fc1.bias": (M,), "fc2.weight": (D, M),
                                          "fc2.bias": (D,), "final_layer_norm.weight": (D,)},
            {"model_type": "opt", "activation_function": "relu", "do_layer_norm_before": True}, "L-pre-norm"),
    "vit": ("vit.encoder.layer.{i}.", {"intermediate.dense.weight": (M, D), "intermediate.dense.bias": (M,),
                                       "output.dense.weight": (D, M), "output.dense.bias": (D,),
                                       "layernorm_after.weight": (D,), "layernorm_before.weight": (D,)},
            {"model_type": "vit", "hidden_act": "gelu"}, "L-pre-norm"),
    "t5": ("encoder.block.{i}.layer.1.", {"DenseReluDense.wi.weight": (M, D), "DenseReluDense.wo.weight": (D, M),
                                          "layer_norm.weight": (D,)}, {"model_type": "t5",
                                                                       "feed_forward_proj": "relu"}, "L-pre-norm"),
    "flan-t5": ("encoder.block.{i}.layer.1.", {"DenseReluDense.wi_0.weight": (M, D),
                                               "DenseReluDense.wi_1.weight": (M, D),
                                               "DenseReluDense.wo.weight": (D, M), "layer_norm.weight": (D,)},
                {"model_type": "t5", "feed_forward_proj": "gated-gelu"}, "L-pre-norm"),
    "llama": ("model.layers.{i}.", {"mlp.gate_proj.weight": (M, D), "mlp.up_proj.weight": (M, D),
                                    "mlp.down_proj.weight": (D, M), "post_attention_layernorm.weight": (D,)},
              {"model_type": "llama", "hidden_act": "silu", "rms_norm_eps": 1e-6}, "L-pre-norm"),
    "gemma": ("model.layers.{i}.", {"mlp.gate_proj.weight": (M, D), "mlp.up_proj.weight": (M, D),
                                    "mlp.down_proj.weight": (D, M)},
              {"model_type": "gemma", "hidden_activation": "gelu_pytorch_tanh"}, "L-pre-norm"),
}


def _write(folder: Path, layout: str, fmt: str = "safetensors") -> Path:
    np = require_module("numpy", "weights")
    prefix, names, config, _ = LAYOUTS[layout]
    folder.mkdir(parents=True, exist_ok=True)
    tensors = _layers(prefix, names)
    tensors["embeddings.position_ids"] = np.arange(16, dtype=np.int64).reshape(1, 16)  # unused: never a reason to skip
    if fmt == "safetensors":
        st = require_module("safetensors.numpy", "weights")
        st.save_file(tensors, str(folder / "model.safetensors"))
    else:
        torch = require_module("torch", "torch")
        torch.save({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in tensors.items()},
                   str(folder / "pytorch_model.bin"))
    if config is not None:
        (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def _scan(folder: Path, tmp: Path) -> tuple[int, dict[str, Any], str]:
    out = tmp / "scan.json"
    before = sorted(p.name for p in folder.iterdir())
    code, text, err, _ = run_cli("scan", str(folder), "--in-process", "--json", str(out))
    assert sorted(p.name for p in folder.iterdir()) == before  # nothing written into the scanned tree
    return code, json.loads(out.read_text(encoding="utf-8")), text + err


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_layout_is_scanned_with_no_layer_dropped(layout: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    folder = _write(tmp_path / "ckpt", layout)
    code, data, text = _scan(folder, tmp_path)
    layers = data["layers"]
    assert len(layers) == 2, text
    assert code == 0, text
    expected = LAYOUTS[layout][3]
    for r in layers:
        assert r["status"] == "done", r
        assert r["decided_by"] == expected, (layout, r)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt", "scan.json"]  # nothing in the cwd either
    if layout == "gpt2":
        assert all(r["activation"] == "gelu_tanh" for r in layers)  # gelu_new is tanh-GELU, not GELU
        assert all(r["verdict"] == "impossible" for r in layers)
    if layout in ("flan-t5", "gemma"):
        assert all(r["gated"] and r["activation"] == "gelu_tanh (gated)" for r in layers)
    if layout == "bert":
        assert all(r["norm"] == "post-ln" and r["verdict"] in ("absorbable", "not-absorbable") for r in layers)
        assert all("certificate" in r for r in layers)
    # the table says where each layer's normalisation sits (the question answered depends on it)
    header, _, *rows = text.splitlines()
    assert header.split()[:3] == ["file:layer", "act", "norm"]
    norms = {r["label"]: r["norm"] for r in layers}
    start = header.index("norm")
    assert all(any(line.startswith(label[:48]) and line[start:start + 8].strip() == norm for line in rows)
               for label, norm in norms.items())


def test_bert_scan_is_verified(tmp_path: Path) -> None:
    folder = _write(tmp_path / "ckpt", "bert")
    code, _, text = _scan(folder, tmp_path)
    assert code == 0, text
    code, out, err, _ = run_cli("verify", str(tmp_path / "scan.json"), "--allow-outside")
    assert code == 0, out + err
    assert "4 of 4 certificates" in out  # and the bare blocks' (tests/unit/explore/test_scan_bare.py)


def test_the_bin_form_is_scanned_too(tmp_path: Path) -> None:
    folder = _write(tmp_path / "ckpt", "bert", fmt="bin")
    code, data, text = _scan(folder, tmp_path)
    assert code == 0, text
    assert [r["decided_by"] for r in data["layers"]] == ["R-aff-1", "R-aff-1"]


def test_without_config_the_assumptions_are_stated(tmp_path: Path) -> None:
    folder = _write(tmp_path / "ckpt", "gpt-neox")
    code, data, _ = _scan(folder, tmp_path)
    assert code == 0
    for r in data["layers"]:
        assert any("assumed" in a for a in r["assumptions"]), r


def test_a_hostile_config_is_input_not_code(tmp_path: Path) -> None:
    folder = _write(tmp_path / "ckpt", "bert")
    (folder / "config.json").write_text('{"hidden_act": ["__import__(\'os\')"], "layer_norm_eps": "1e-12", '
                                        '"model_type": 7}', encoding="utf-8")
    code, data, _ = _scan(folder, tmp_path)
    assert code == 0
    assert all(r["status"] == "done" and any("assumed" in a for a in r["assumptions"]) for r in data["layers"])
    (folder / "config.json").write_text("{not json", encoding="utf-8")
    code, data, _ = _scan(folder, tmp_path)
    assert all(any("config.json" in a for a in r["assumptions"]) for r in data["layers"])


def test_an_unmatched_layer_group_is_listed_and_exits_1(tmp_path: Path) -> None:
    np = require_module("numpy", "weights")
    folder = _write(tmp_path / "ckpt", "bert")
    st = require_module("safetensors.numpy", "weights")
    st.save_file({"transformer.h.0.ffn.lin1.weight": np.ones((M, D), dtype=np.float32),
                  "transformer.h.0.ffn.lin2.weight": np.ones((D, M), dtype=np.float32)}, str(folder / "other.safetensors"))
    code, data, text = _scan(folder, tmp_path)
    assert code == 1
    assert any("transformer.h.0." in why or "no tensor names matched" in why for _, why in data["skipped"]), text


def test_an_assumed_activation_is_the_one_decided(tmp_path: Path) -> None:
    """A Gemma config naming no activation: the layer is decided with Gemma's gelu_tanh, and the assumption it
    states names that activation (it named the LLaMA family's silu while deciding gelu_tanh)."""
    folder = _write(tmp_path / "ckpt", "gemma")
    (folder / "config.json").write_text(json.dumps({"model_type": "gemma"}), encoding="utf-8")
    code, data, text = _scan(folder, tmp_path)
    assert code == 0, text
    for r in data["layers"]:
        assert r["activation"] == "gelu_tanh (gated)", r
        stated = [a for a in r["assumptions"] if a.startswith("activation ")]
        assert stated and all(a.startswith("activation gelu_tanh assumed") for a in stated), r["assumptions"]


@pytest.mark.parametrize("up, down, group", [
    ("encoder.stage.3.mlp.up_proj.weight", "encoder.stage.3.mlp.down_proj.weight", "encoder.stage.3.mlp."),
    ("blk-0-W_up", "blk-0-W_down", "blk-0-"), ("y.W_UP", "y.W_DOWN", "y."), ("x.W_up ", "x.W_down ", "x.")])
def test_a_projection_no_layout_takes_is_listed_and_exits_1(up: str, down: str, group: str, tmp_path: Path) -> None:
    """Tensors named like an up and a down projection that no layout takes, outside any `layers.N.` group: one
    skipped line and exit 1 (they were silently dropped, exit 0: 'every layer group was decided')."""
    np = require_module("numpy", "weights")
    st = require_module("safetensors.numpy", "weights")
    folder = tmp_path / "ckpt"
    folder.mkdir()
    st.save_file({"ok.W_up": np.ones((M, D), dtype=np.float32), "ok.W_down": np.ones((D, M), dtype=np.float32),
                  up: np.ones((M, D), dtype=np.float32), down: np.ones((D, M), dtype=np.float32),
                  "model.lookup": np.ones((2,), dtype=np.float32)}, str(folder / "model.safetensors"))
    code, data, text = _scan(folder, tmp_path)
    assert code == 1, text
    assert [r["label"].rsplit(":", 1)[-1] for r in data["layers"]] == ["ok."]
    assert any(f"`{group}`" in why for _, why in data["skipped"]), (group, data["skipped"])
    assert not any("lookup" in why for _, why in data["skipped"])
