"""Scan layouts are data (explore/scan.py): a new family is one :class:`Layout` declaration registered with
:func:`register_layout`, here from a test module; no layout name is special-cased in the code."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from symabsorb.explore import scan
from symabsorb.explore.scan import Layout, find_layers, read_config, register_layout, unregister_layout
from tests.helpers import require_module, run_cli

D, M = 4, 8
FAMILY = Layout("test-ffn", "A test family (pre-LN, biases, ReLU)", "ffn.w_in.weight", "ffn.w_out.weight",
                up_bias="ffn.w_in.bias", down_bias="ffn.w_out.bias", activation="relu", norm="pre-ln",
                norm_tensor="ffn.norm.weight", model_types=("testfam",),
                norm_by_config=(("test_norm_after", True, "post-ln"),))


@pytest.fixture
def family() -> Iterator[Layout]:
    register_layout(FAMILY, before="symabsorb")
    try:
        yield FAMILY
    finally:
        unregister_layout(FAMILY.name)


def _names(count: int = 2) -> list[str]:
    return [f"layers.{i}.{t}" for i in range(count)
            for t in ("ffn.w_in.weight", "ffn.w_in.bias", "ffn.w_out.weight", "ffn.w_out.bias", "ffn.norm.weight")]


def test_no_layout_name_is_special_cased_in_the_code() -> None:
    tree = ast.parse(Path(scan.__file__).read_text(encoding="utf-8"))
    compared = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Compare)
                and any(isinstance(side, ast.Attribute) and side.attr == "name"
                        for side in (node.left, *node.comparators))
                and any(isinstance(side, ast.Constant) for side in (node.left, *node.comparators))]
    assert compared == []


def test_a_registered_layout_is_found(family: Layout, tmp_path: Path) -> None:
    weights = tmp_path / "w.npz"
    weights.write_bytes(b"not read: only hashed")
    tasks, missing = find_layers(weights, _names(), None, None, directory=tmp_path)
    assert missing == []
    assert [(t.prefix, t.pattern, t.norm, t.activation) for t in tasks] == [
        ("layers.0.", "test-ffn", "pre-ln", "relu"), ("layers.1.", "test-ffn", "pre-ln", "relu")]
    assert 'up_bias: "ffn.w_in.bias"' in tasks[0].block_text
    # the layout's norm_by_config key is read from config.json and moves the normalisation
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "testfam", "test_norm_after": True}),
                                          encoding="utf-8")
    config, problem = read_config(tmp_path)
    assert problem is None and config["test_norm_after"] is True
    tasks, _ = find_layers(weights, _names(1), None, None, directory=tmp_path, config=config)
    assert [t.norm for t in tasks] == ["post-ln"] and 'ln_gamma: "ffn.norm.weight"' in tasks[0].block_text


def test_unregistered_the_names_match_no_layout(tmp_path: Path) -> None:
    weights = tmp_path / "w.npz"
    weights.write_bytes(b"x")
    tasks, missing = find_layers(weights, _names(1), None, None, directory=tmp_path)
    assert tasks == [] and missing == ["layers.0."]


def test_registration_refuses_a_duplicate_and_an_unknown_anchor() -> None:
    with pytest.raises(ValueError, match="already registered"):
        register_layout(Layout("llama", "again", "a", "b"))
    with pytest.raises(ValueError, match="no scan layout `nope`"):
        register_layout(Layout("test-other", "x", "a", "b"), before="nope")


def test_scan_cli_decides_the_registered_family(family: Layout, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    np = require_module("numpy", "weights")
    rng = np.random.default_rng(0)
    tensors: dict[str, Any] = {}
    for name in _names():
        shape = (M, D) if name.endswith("w_in.weight") else (D, M) if name.endswith("w_out.weight") else \
            (M,) if name.endswith("w_in.bias") else (D,)
        tensors[name] = (rng.integers(-8, 9, size=shape) / 8).astype(np.float32)
    folder = tmp_path / "ckpt"
    folder.mkdir()
    np.savez(folder / "model.npz", **tensors)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "scan.json"
    code, text, err, _ = run_cli("scan", str(folder), "--in-process", "--json", str(out))
    layers = json.loads(out.read_text(encoding="utf-8"))["layers"]
    assert code == 0, text + err
    assert len(layers) == 2 and all(r["status"] == "done" and r["norm"] == "pre-ln" for r in layers), layers
    assert all(r["decided_by"] == "L-pre-norm" for r in layers), layers
