"""Hostile input, round 2 (issue 22): every resource is bounded before it is spent. Archive members
are checked against their declared size before inflating, scan lists names without reading
tensors, worker counts are capped by the machine, an unreachable scheduler is a clean error."""

from __future__ import annotations

import tracemalloc
import zipfile
from pathlib import Path

import pytest

from tests.helpers import require_module, run_cli

np = require_module("numpy", "weights")


def _npz_of_zeros(path: Path, members: dict[str, int]) -> None:
    """An .npz whose members are deflated float32 zeros of the given lengths (tiny on disk)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, n in members.items():
            header = np.lib.format.header_data_from_array_1_0(np.zeros(1, dtype="<f4"))
            header["shape"] = (n,)
            with zf.open(f"{name}.npy", "w", force_zip64=True) as fh:
                np.lib.format.write_array_header_1_0(fh, header)
                block = bytes(1 << 20)
                left = 4 * n
                while left:
                    fh.write(block[: min(left, len(block))])
                    left -= min(left, len(block))


def test_scan_lists_names_without_inflating_tensors(tmp_path: Path) -> None:
    require_module("scipy", "explore")
    weights = tmp_path / "model"
    weights.mkdir()
    # four 10M-entry members (40 MB each inflated, ~40 kB each on disk) that are no MLP layer
    _npz_of_zeros(weights / "big.npz", {f"embeddings.table{i}": 10_000_000 for i in range(4)})
    assert (weights / "big.npz").stat().st_size < 2_000_000
    warm = tmp_path / "warm"
    warm.mkdir()
    _npz_of_zeros(warm / "small.npz", {"embeddings.table": 10})
    assert run_cli("scan", str(warm), "--results", str(tmp_path / "r0"), "--in-process")[0] == 1  # imports done
    tracemalloc.start()
    try:
        code, out, err, _ = run_cli("scan", str(weights), "--results", str(tmp_path / "r"), "--in-process")
        _size, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert code == 1, err  # a file was skipped (no MLP layer): exit 1 (issue 19)
    assert "no tensor names matched" in out
    assert peak < 30_000_000  # not one 40 MB member was inflated


def test_members_are_checked_against_their_declared_size_before_inflating(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from symabsorb.dsl.errors import SymabsorbError
    from symabsorb.weights import io

    path = tmp_path / "w.npz"
    _npz_of_zeros(path, {"W_up": 3_000_000, "W_down": 3_000_000, "W_gate": 3_000_000, "extra": 3_000_000})
    monkeypatch.setattr(io, "MAX_TENSOR_BYTES", 8 * 3_000_000)  # each member fits, four together do not
    with pytest.raises(SymabsorbError, match="too large together") as caught:
        io.read_tensors(path)
    assert "`extra`" in str(caught.value)  # the fourth member, refused from its header
    monkeypatch.setattr(io, "MAX_TENSOR_BYTES", 8 * 3_000_000 - 8)
    with pytest.raises(SymabsorbError, match="too large"):
        io.read_tensors(path, keys=["W_up"])
    assert set(io.read_tensors(path, keys=[])) == {"W_up", "W_down", "W_gate", "extra"}  # names only


def test_workers_are_capped_by_the_machine(tmp_path: Path) -> None:
    import os

    spec = tmp_path / "s.absorb"
    spec.write_text("space tiny = { primitives: [tanh], constants: [2], operators: [+], size: 2 }\n")
    code, _out, err, _ = run_cli("explore", str(spec), "--results", str(tmp_path / "r"), "--workers", "1000")
    if "dask.distributed is not installed" in err:
        pytest.skip("needs dask.distributed")
    assert code == 2 and f"this machine has {os.cpu_count()} CPUs" in err


def test_an_unreachable_scheduler_is_a_clean_error_naming_it(tmp_path: Path) -> None:
    require_module("distributed", "explore")
    spec = tmp_path / "s.absorb"
    spec.write_text("space tiny = { primitives: [tanh], constants: [2], operators: [+], size: 2 }\n")
    code, _out, err, _ = run_cli("explore", str(spec), "--results", str(tmp_path / "r"), "--scheduler",
                                 "tcp://127.0.0.1:9", "--budget", "1", "--no-evidence", "--no-stacks")
    assert code == 2 and "tcp://127.0.0.1:9" in err and "Traceback" not in err, err


def test_a_huge_render_width_is_refused() -> None:
    import symabsorb
    from symabsorb.errors import SymabsorbError

    report = symabsorb.prove(symabsorb.load("classify relu\n"))
    with pytest.raises(SymabsorbError, match="width"):
        report.render("md", width=10**9)


@pytest.mark.slow
def test_a_budget_running_out_during_explore_leaves_no_thread_errors(tmp_path: Path) -> None:
    """A 101-point grid with tiny case budgets and a small command budget: a clean budget error (or
    a finished run), never "Exception ignored in thread ... KeyError" or a late CpuBudgetExceeded."""
    import os
    import subprocess
    import sys

    spec = tmp_path / "grid.absorb"
    spec.write_text("space fam = {\n    family: a*z + b*abs(z)\n    range a: [-1, 1]\n    range b: [0, 1]\n"
                    "    grid: 101\n}\n")
    env = {**os.environ, "SYMABSORB_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-m", "symabsorb", "explore", str(spec), "--results", str(tmp_path / "r"),
                          "--in-process", "--case-budget", "0.01", "--no-evidence", "--no-stacks", "--budget", "3"],
                         capture_output=True, text=True, env=env, check=False, timeout=600)
    assert out.returncode in (0, 2), out.stderr
    assert "Traceback" not in out.stderr and "Exception ignored" not in out.stderr, out.stderr[-3000:]


def test_non_utf8_standard_input_is_a_positioned_error() -> None:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "symabsorb", "check", "-"], input=b"classify relu\n\xff\xfe x\n",
                         capture_output=True, check=False, timeout=300)
    assert out.returncode == 2 and b"<stdin>:2:1" in out.stderr and b"not UTF-8" in out.stderr, out.stderr
