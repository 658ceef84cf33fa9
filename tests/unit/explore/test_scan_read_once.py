"""A scan in this process reads and hashes each weights file once for all its layers (issue 29):
MiniLM's six layers share one file, which was read seven times and hashed thirty-one (the listing;
each layer's read; the layer and its bare block, twice each when loaded); the buffer is held only
while the scan runs."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import require_module

D, M, LAYERS = 4, 8, 3


def _checkpoint(folder: Path) -> Path:
    np = require_module("numpy", "weights")
    st = require_module("safetensors.numpy", "weights")
    rng = np.random.default_rng(3)
    tensors: dict[str, Any] = {}
    for i in range(LAYERS):  # BERT's names: post-LN with biases, so each layer has a bare block too
        p = f"encoder.layer.{i}."
        tensors[p + "intermediate.dense.weight"] = (rng.integers(-8, 9, (M, D)) / 8).astype(np.float32)
        tensors[p + "intermediate.dense.bias"] = np.full(M, 0.125, dtype=np.float32)
        tensors[p + "output.dense.weight"] = (rng.integers(-8, 9, (D, M)) / 8).astype(np.float32)
        tensors[p + "output.dense.bias"] = np.full(D, 0.125, dtype=np.float32)
        tensors[p + "output.LayerNorm.weight"] = np.ones(D, dtype=np.float32)
        tensors[p + "output.LayerNorm.bias"] = np.zeros(D, dtype=np.float32)
        tensors[p + "attention.output.dense.weight"] = np.eye(D, dtype=np.float32)
    folder.mkdir()
    st.save_file(tensors, str(folder / "model.safetensors"))
    (folder / "config.json").write_text('{"model_type": "bert", "hidden_act": "gelu"}', encoding="utf-8")
    return folder / "model.safetensors"


def test_each_file_is_read_and_hashed_once_for_all_its_layers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import symabsorb.paths as paths
    from symabsorb.explore import scan as scan_module
    from symabsorb.explore.executors import InProcessExecutor
    from symabsorb.explore.store import ResultStore

    weights = _checkpoint(tmp_path / "ck")
    content = weights.read_bytes()
    reads: list[str] = []
    hashes: list[int] = []
    real_read, real_sha = paths.read_whole, hashlib.sha256

    def read_whole(fh: Any, path: Path, *args: Any, **kwargs: Any) -> bytes:
        reads.append(Path(path).name)
        return real_read(fh, path, *args, **kwargs)

    def sha256(data: Any = b"", *args: Any, **kwargs: Any) -> Any:
        if len(data) == len(content):
            hashes.append(len(data))
        return real_sha(data, *args, **kwargs)

    monkeypatch.setattr(paths, "read_whole", read_whole)
    monkeypatch.setattr(hashlib, "sha256", sha256)
    store = ResultStore(tmp_path / "results")
    records, skipped = scan_module.scan(tmp_path / "ck", store, InProcessExecutor(), None, 120.0)
    store.close()
    assert not skipped, skipped
    assert len(records) == LAYERS and all(r["status"] == "done" for r in records), records
    assert all(r["bare"]["status"] == "done" for r in records), records
    # one read and one hash to list the layers, one of each for all the decisions (before: one
    # read per layer, and a hash per layer, per bare block and per placement decided)
    assert reads.count("model.safetensors") == 2, reads
    assert len(hashes) == 2, hashes
    assert scan_module._BUFFERS.held is None  # the file's bytes are not kept once the scan is over


def test_outside_a_scan_no_buffer_is_kept(tmp_path: Path) -> None:
    from symabsorb.explore import scan as scan_module

    buffers = scan_module._FileBuffer()
    buffers.keep("f", "d", b"x")
    assert buffers.held is None and buffers.get("f", "d") is None
    buffers.open()
    buffers.keep("f", "d", b"x")
    assert buffers.get("f", "d") == b"x"
    assert buffers.get("g", "d") is None
    assert buffers.held is None  # asked for another file: the one held is dropped before it is read
    buffers.keep("f", "d", b"x")
    assert buffers.get("f", "other digest") is None and buffers.held is None
    buffers.close()
    assert buffers.held is None


def test_the_listing_buffer_is_not_held_while_layers_are_decided(tmp_path: Path) -> None:
    """A file's bytes read to list its layers are dropped before the decisions start (a LLaMA-size
    layer's float32 file is 0.4 m² of memory: it was held twice at the peak)."""
    import tracemalloc

    np = require_module("numpy", "weights")
    st = require_module("safetensors.numpy", "weights")
    from symabsorb.explore.executors import InProcessExecutor
    from symabsorb.explore.scan import scan
    from symabsorb.explore.store import ResultStore

    folder = tmp_path / "ck"
    folder.mkdir()
    rng = np.random.default_rng(0)
    st.save_file({"layers.0.W_up": rng.standard_normal((M, D)).astype(np.float32),
                  "layers.0.W_down": rng.standard_normal((D, M)).astype(np.float32),
                  "embed.weight": np.zeros((2048, 1024), dtype=np.float32)}, str(folder / "model.safetensors"))
    size = (folder / "model.safetensors").stat().st_size
    held: list[int] = []

    class Measuring(InProcessExecutor):
        def run(self, jobs: Any, on_result: Any) -> None:
            held.append(tracemalloc.get_traced_memory()[0])
            super().run(jobs, on_result)

    store = ResultStore(tmp_path / "results")
    tracemalloc.start()
    try:
        records, _ = scan(folder, store, Measuring(), None, 120.0)
    finally:
        tracemalloc.stop()
        store.close()
    assert [r["status"] for r in records] == ["done"]
    assert held and held[0] < size // 2, (held, size)


def test_the_next_file_is_read_with_the_previous_one_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two files (a sharded checkpoint): the second is read once the first is no longer held."""
    np = require_module("numpy", "weights")
    st = require_module("safetensors.numpy", "weights")
    import symabsorb.paths as paths
    from symabsorb.explore import scan as scan_module
    from symabsorb.explore.executors import InProcessExecutor
    from symabsorb.explore.store import ResultStore

    folder = tmp_path / "ck"
    folder.mkdir()
    rng = np.random.default_rng(1)
    for shard in ("a", "b"):
        st.save_file({f"layers.{shard}.W_up": rng.standard_normal((M, D)).astype(np.float32),
                      f"layers.{shard}.W_down": rng.standard_normal((D, M)).astype(np.float32)},
                     str(folder / f"{shard}.safetensors"))
    held_at_read: list[tuple[str, str | None]] = []
    real_read = paths.read_whole

    def read_whole(fh: Any, path: Path, *args: Any, **kwargs: Any) -> bytes:
        held_at_read.append((Path(path).name, scan_module._BUFFERS.held))
        return real_read(fh, path, *args, **kwargs)

    monkeypatch.setattr(paths, "read_whole", read_whole)
    store = ResultStore(tmp_path / "results")
    records, _ = scan_module.scan(folder, store, InProcessExecutor(), None, 120.0)
    store.close()
    assert [r["status"] for r in records] == ["done", "done"]
    decisions = held_at_read[2:]  # after the listing's two reads
    assert [name for name, _ in decisions] == ["a.safetensors", "b.safetensors"], held_at_read
    assert all(held is None for _, held in decisions), held_at_read
