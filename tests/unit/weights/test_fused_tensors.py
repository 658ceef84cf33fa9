"""A part of a fused tensor named in a spec (`NAME.chunk(N)[I]`, as PyTorch's Tensor.chunk) and the Phi-3
scan layout (fused `gate_up_proj`: the gate its first half, up its second) on a small Phi-3-shaped
checkpoint (issue 28 row 7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import symabsorb
from symabsorb.dsl.errors import SpecError
from tests.helpers import require_module

np = require_module("numpy", "weights")
st = require_module("safetensors.numpy", "weights")

D, M = 4, 6


def _phi3(tmp_path: Path, layers: int = 2) -> dict[str, object]:
    rng = np.random.default_rng(0)
    tensors, parts = {}, {}
    for i in range(layers):
        gate, up = rng.standard_normal((M, D)).astype(np.float32), rng.standard_normal((M, D)).astype(np.float32)
        down = rng.standard_normal((D, M)).astype(np.float32)
        p = f"model.layers.{i}."
        tensors[p + "mlp.gate_up_proj.weight"] = np.concatenate([gate, up])  # Phi3MLP: gate, up = chunk(2)
        tensors[p + "mlp.down_proj.weight"] = down
        tensors[p + "post_attention_layernorm.weight"] = np.ones(D, dtype=np.float32)
        parts[i] = (gate, up, down)
    st.save_file(tensors, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "phi3", "hidden_act": "silu",
                                                      "rms_norm_eps": 1e-5}), encoding="utf-8")
    return parts


def test_scan_finds_every_phi3_layer(tmp_path: Path) -> None:
    _phi3(tmp_path)
    scan = symabsorb.scan(tmp_path)
    assert scan.skipped == ()
    assert [(r["layer"], r["pattern"].split()[0], r["norm"], r["activation"]) for r in scan.layers] == \
        [(f"model.layers.{i}.", "phi3", "pre-rms", "silu (gated)") for i in range(2)]
    assert 'gate: "mlp.gate_up_proj.weight.chunk(2)[0]"' in scan.layers[0]["block"]


def test_chunks_read_the_halves_of_the_fused_tensor(tmp_path: Path) -> None:
    parts = _phi3(tmp_path, layers=1)
    from symabsorb.dsl.syntax import WeightsDecl
    from symabsorb.weights.io import load_block_weights

    decl = WeightsDecl("model.safetensors", "model.layers.0.mlp.", "gate_up_proj.weight.chunk(2)[1]",
                       "down_proj.weight", "gate_up_proj.weight.chunk(2)[0]")
    w = load_block_weights(decl, tmp_path, gated=True)
    gate, up, down = parts[0]
    assert np.array_equal(w.w_gate, gate) and np.array_equal(w.w_up, up) and np.array_equal(w.w_down, down)
    # the same block with the parts stored apart is answered the same
    np.savez(tmp_path / "parts.npz", g=gate, u=up, dn=down)
    spec = tmp_path / "p.absorb"
    spec.write_text('block fused { activation: swiglu weights: "model.safetensors" prefix: "model.layers.0.mlp." '
                    'gate: "gate_up_proj.weight.chunk(2)[0]" up: "gate_up_proj.weight.chunk(2)[1]" '
                    'down: "down_proj.weight" }\n'
                    'block parts { activation: swiglu weights: "parts.npz" gate: "g" up: "u" down: "dn" }\n'
                    "absorb fused\nabsorb parts\n", encoding="utf-8")
    fused, apart = symabsorb.prove(spec).results
    assert (fused.verdict, fused.decided_by) == (apart.verdict, apart.decided_by)


def test_chunk_along_dim_1_for_in_x_out_tensors(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    up, down = rng.standard_normal((M, D)), rng.standard_normal((D, M))
    np.savez(tmp_path / "c.npz", fused=np.concatenate([up.T, up.T * 2], axis=1), down=down.T)  # Conv1D: in x out
    from symabsorb.dsl.syntax import WeightsDecl
    from symabsorb.weights.io import load_block_weights

    w = load_block_weights(WeightsDecl("c.npz", None, "fused.chunk(2, dim=1)[0]", "down", None, True), tmp_path, False)
    assert np.array_equal(w.w_up, up) and np.array_equal(w.w_down, down)


@pytest.mark.parametrize(("name", "says"), [("gate_up_proj.weight.chunk(5)[0]", "not a multiple of 5"),
                                            ("gate_up_proj.weight.chunk(2)[2]", "part 2 of 2"),
                                            ("gate_up.chunk(2)[0]", "no tensor")])
def test_a_chunk_that_does_not_fit_is_a_positioned_error(tmp_path: Path, name: str, says: str) -> None:
    _phi3(tmp_path, layers=1)
    spec = tmp_path / "b.absorb"
    spec.write_text(f'block b {{ activation: swiglu weights: "model.safetensors" prefix: "model.layers.0.mlp." '
                    f'gate: "{name}" up: "gate_up_proj.weight.chunk(2)[1]" down: "down_proj.weight" }}\nabsorb b\n',
                    encoding="utf-8")
    with pytest.raises(SpecError) as info:
        symabsorb.prove(spec)
    assert says in str(info.value) and "b.absorb:1:" in str(info.value)


def test_a_witness_joins_the_parts_back_into_the_fused_tensor() -> None:
    import sympy as sp

    from symabsorb.theory.derivation import Witness
    from symabsorb.weights.export import witness_arrays

    up = sp.ImmutableMatrix([[1, 0], [0, 1], [1, 1]])
    gate = sp.ImmutableMatrix([[2, 0], [0, 2], [2, 2]])
    down = sp.ImmutableMatrix([[1, 0, 0], [0, 1, 0]])
    names = (("W_up", "l.gate_up.chunk(2)[1]"), ("W_gate", "l.gate_up.chunk(2)[0]"), ("W_down", "l.down"))
    arrays = witness_arrays(Witness((), up, down, gate, "exact", names=names), index_set=False)
    assert sorted(arrays) == ["l.down", "l.gate_up"]
    assert np.array_equal(arrays["l.gate_up"], np.vstack([np.array(gate, dtype=float), np.array(up, dtype=float)]))


def test_a_witness_that_is_not_a_flip_records_its_construction_not_an_index_set(tmp_path: Path) -> None:
    """Theorem D's witness wrote index_set '[]' (no unit flipped) where it is no flip at all; read_index_set
    crashed on a str path."""
    from safetensors import safe_open

    from symabsorb.weights.export import read_index_set
    from tests.helpers import ROOT, run_cli

    out = tmp_path / "wit.safetensors"
    code, _, err, _ = run_cli("absorb", str(ROOT / "examples" / "weights.absorb"), "--block", "silu_skip", "-o", str(out))
    assert code == 0, err
    with safe_open(str(out), framework="numpy") as fh:
        meta = fh.metadata()
    assert "index_set" not in meta and "Theorem D" in meta["construction"]
    assert read_index_set(str(out)) is None
