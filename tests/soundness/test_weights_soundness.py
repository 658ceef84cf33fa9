"""Float weights are exact rationals: planted and near-miss files, exact arithmetic, certificates, and
weight files as hostile input (every failure a positioned SpecError, never a traceback)."""

from __future__ import annotations

import base64
import functools
import importlib.util
import io
import json
import os
import struct
import zipfile
import zlib
from contextlib import redirect_stderr, redirect_stdout
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import require_module

np = require_module("numpy", "weights")
require_module("scipy", "weights")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from symabsorb.cli import main  # noqa: E402
from symabsorb.errors import SpecError  # noqa: E402
from symabsorb.weights.certify import (  # noqa: E402
    Target,
    certificate_from_dict,
    check_certificate,
    decide_exactly,
    exact_nondegeneracy,
)
from symabsorb.weights.exact import (  # noqa: E402
    bilinear_diagonal,
    dyadic,
    exact_product,
    integer_only,
    primitive_row_keys,
)


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def minus_identity(d: int) -> Target:
    return Target(d, tuple((i, i, Fraction(-1)) for i in range(d)))


def plant(rng: Any, w_up: Any, w_down: Any, s: list[int]) -> None:
    """``W_down[:,S] W_up[S,:] = -I`` exactly in floating point (unimodular integer block times powers of 2)."""
    d = len(s)
    lower = np.tril(rng.integers(-2, 3, (d, d)), -1) + np.eye(d)
    upper = np.triu(rng.integers(-2, 3, (d, d)), 1) + np.eye(d)
    b = (lower @ upper) * (2.0 ** rng.integers(-3, 4, d))[:, None]
    inv = np.round(np.linalg.inv(b) * 2.0**8) / 2.0**8
    assert (inv @ b == np.eye(d)).all()
    w_up[s] = b
    w_down[:, s] = -inv


def frac(x: Any) -> list[list[Fraction]]:
    return [[Fraction(float(v)) for v in row] for row in np.asarray(x).tolist()]


def spec_for(tmp_path: Path, file: str, activation: str = "relu", extra: str = "") -> Path:
    spec = tmp_path / "w.absorb"
    spec.write_text(f'block b {{ activation: {activation} weights: "{file}" {extra} }}\nabsorb b\n')
    return spec


def prove_json(spec: Path) -> dict[str, Any]:
    code, out, err = run("prove", str(spec), "--format", "json")
    assert code == 0, err
    derivation: dict[str, Any] = json.loads(out)["queries"][0]["derivation"]
    return derivation


# ---- exact arithmetic ------------------------------------------------------------------------------


@st.composite
def float_matrices(draw: Any, rows: int, cols: int) -> Any:
    mant = draw(st.lists(st.floats(-2, 2, allow_nan=False, allow_infinity=False, width=64), min_size=rows * cols,
                         max_size=rows * cols))
    exps = draw(st.lists(st.integers(-300, 300), min_size=rows * cols, max_size=rows * cols))
    return (np.array(mant) * 2.0 ** np.array(exps, dtype=float)).reshape(rows, cols)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_exact_arithmetic_matches_fractions(data: Any) -> None:
    d = data.draw(st.integers(1, 4))
    m = data.draw(st.integers(1, 5))
    w_down = data.draw(float_matrices(d, m))
    w_up = data.draw(float_matrices(m, d))
    limbs = [(data.draw(st.integers(-60, 60)), np.array(data.draw(st.lists(st.integers(-(2**20), 2**20),
                                                                            min_size=d * d, max_size=d * d))).reshape(d, d))
             for _ in range(data.draw(st.integers(1, 2)))]
    a, b = frac(w_down), frac(w_up)
    y = [[sum((Fraction(int(limb[i, k])) * Fraction(2) ** e for e, limb in limbs), Fraction(0)) for k in range(d)]
         for i in range(d)]
    want = [sum((a[i][j] * y[i][k] * b[j][k] for i in range(d) for k in range(d)), Fraction(0)) for j in range(m)]
    assert bilinear_diagonal(w_down, w_up, limbs) == want
    with integer_only():  # the same, with int64 products instead of float64 BLAS
        assert bilinear_diagonal(w_down, w_up, limbs) == want
    s = tuple(sorted(set(data.draw(st.lists(st.integers(0, m - 1), max_size=m)))))
    x, e = exact_product(w_down, w_up, s)
    with integer_only():
        assert (exact_product(w_down, w_up, s)[0] == x).all()
    for i in range(d):
        for k in range(d):
            assert Fraction(int(x[i, k])) * Fraction(2) ** e == sum((a[i][j] * b[j][k] for j in s), Fraction(0))
    dy = dyadic(w_down, data.draw(st.integers(3, 30)))
    ints = dy.integers()
    assert all(Fraction(int(ints[i, j])) * Fraction(2) ** dy.exp == a[i][j] for i in range(d) for j in range(m))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(-4, 4), min_size=3, max_size=3), min_size=2, max_size=6),
       st.lists(st.sampled_from([1.0, -1.0, 2.0**-700, 3.0, -0.5, 2.0**600, 1 / 3]), min_size=6, max_size=6))
def test_collinearity_is_exact(base: list[list[int]], scales: list[float]) -> None:
    rows = np.array([[v * scales[i] for v in r] for i, r in enumerate(base)], dtype=float)
    keys = primitive_row_keys(rows)
    f = frac(rows)
    for i in range(len(f)):
        for j in range(len(f)):
            if not any(f[i]) or not any(f[j]):
                continue
            collinear = all(f[i][k] * f[j][l] == f[i][l] * f[j][k] for k in range(3) for l in range(3))
            assert (keys[i] == keys[j]) == collinear


def test_nondegeneracy_is_exact_for_huge_entries() -> None:
    rng = np.random.default_rng(7)
    w_up = rng.standard_normal((6, 3)) * 1e200
    w_down = rng.standard_normal((3, 6))
    assert exact_nondegeneracy(w_up, w_down)["holds"]
    w_up[5] = w_up[2] * 2.0**-900  # exactly collinear, 1e-71 against 1e200: cosines overflow in float64
    result = exact_nondegeneracy(w_up, w_down)
    assert not result["holds"] and result["pair"] == [2, 5]
    w_up[5, 0] = np.nextafter(w_up[5, 0], 0)  # one ulp off: no longer collinear as rationals
    assert exact_nondegeneracy(w_up, w_down)["holds"]


# ---- planted and near-miss weights ------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(40))
def test_singular_gram_with_flip_units_is_absorbable(seed: int) -> None:
    """d = 2, m = 5 (the Gram matrix has rank <= 4): units 0 and 1 are e_k / -e_k, so S = {0, 1}
    absorbs; Cholesky may 'succeed' on such a Gram matrix, which must not matter."""
    rng = np.random.default_rng(seed)
    w_up = rng.standard_normal((5, 2))
    w_down = rng.standard_normal((2, 5))
    w_up[0], w_up[1] = [1.0, 0.0], [0.0, 1.0]
    w_down[:, 0], w_down[:, 1] = [-1.0, 0.0], [0.0, -1.0]
    result = decide_exactly(w_up, w_down, minus_identity(2))
    assert result.found is True and result.certificate is not None
    check_certificate(result.certificate, w_up, w_down)
    chosen = list(result.certificate.index_set)
    assert (w_down[:, chosen] @ w_up[chosen] == -np.eye(2)).all()


def test_singular_gram_file_is_absorbable_and_verifies(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    w_up = rng.standard_normal((5, 2))
    w_down = rng.standard_normal((2, 5))
    w_up[0], w_up[1] = [1.0, 0.0], [0.0, 1.0]
    w_down[:, 0], w_down[:, 1] = [-1.0, 0.0], [0.0, -1.0]
    np.savez(tmp_path / "s.npz", W_up=w_up, W_down=w_down)
    d = prove_json(spec_for(tmp_path, "s.npz"))
    assert d["verdict"] == "absorbable" and d["certificate"]["kind"] == "index-set"


def _planted(seed: int, d: int = 6, m: int = 20) -> tuple[Any, Any, list[int]]:
    rng = np.random.default_rng(seed)
    w_up = rng.standard_normal((m, d))
    w_down = rng.standard_normal((d, m))
    s = sorted(rng.choice(m, d, replace=False).tolist())
    plant(rng, w_up, w_down, s)
    return w_up, w_down, s


def test_near_miss_by_1e12_is_not_absorbable_with_a_checked_certificate(tmp_path: Path) -> None:
    w_up, w_down, s = _planted(11)
    np.savez(tmp_path / "planted.npz", W_up=w_up, W_down=w_down)
    assert prove_json(spec_for(tmp_path, "planted.npz"))["verdict"] == "absorbable"
    w_down[2, s[1]] += 1e-12  # these float64 numbers are exact rationals: the condition fails
    np.savez(tmp_path / "near.npz", W_up=w_up, W_down=w_down)
    spec = spec_for(tmp_path, "near.npz")
    d = prove_json(spec)
    assert d["verdict"] == "not-absorbable"
    cert = d["certificate"]
    assert cert["kind"] == "separating" and cert["nondegenerate"]["holds"]
    moved = float(np.linalg.norm(w_down[:, s] @ w_up[s] + np.eye(6)))  # the planted S misses by this much
    assert 0 < cert["distance_lower_bound"] <= moved * (1 + 1e-9)  # a true lower bound on the distance
    check_certificate(certificate_from_dict(cert), w_up, w_down)
    code, out, err = run("prove", str(spec), "--format", "json", "-o", str(tmp_path / "r.json"))
    assert code == 0, err
    code, out, _ = run("verify", str(tmp_path / "r.json"))
    assert code == 0 and "1 of 1 certificates and witnesses checked exactly" in out


def test_one_ulp_off_is_not_absorbable() -> None:
    w_up, w_down, s = _planted(5)
    w_up[s[0], 1] = np.nextafter(w_up[s[0], 1], np.inf)
    result = decide_exactly(w_up, w_down, minus_identity(6))
    assert result.found is False and result.certificate is not None
    check_certificate(result.certificate, w_up, w_down)


def test_huge_entries_planted_and_perturbed() -> None:
    w_up, w_down, s = _planted(9)
    w_up *= 2.0**650  # ~1e195; W_down scaled down exactly: the products are unchanged
    w_down *= 2.0**-650
    result = decide_exactly(w_up, w_down, minus_identity(6))
    assert result.found is True
    w_down[0, s[0]] *= 1 + 2.0**-40
    result = decide_exactly(w_up, w_down, minus_identity(6))
    assert result.found is False and result.certificate is not None
    check_certificate(result.certificate, w_up, w_down)
    rng = np.random.default_rng(1)
    big_up, big_down = rng.standard_normal((20, 6)) * 1e200, rng.standard_normal((6, 20))
    result = decide_exactly(big_up, big_down, minus_identity(6))
    assert result.found is False and result.certificate is not None and result.certificate.distance > 0
    check_certificate(result.certificate, big_up, big_down)


def test_real_solution_not_0_1_is_not_absorbable() -> None:
    """m = d²: T is in the span, the unique real solution has entries outside {0, 1}."""
    rng = np.random.default_rng(2)
    w_up, w_down = rng.standard_normal((4, 2)), rng.standard_normal((2, 4))
    result = decide_exactly(w_up, w_down, minus_identity(2))
    assert result.found is False and result.certificate is not None
    check_certificate(result.certificate, w_up, w_down)


def test_float_planted_by_rounded_inverse_is_not_exactly_absorbable() -> None:
    rng = np.random.default_rng(0)
    w_up, w_down = rng.standard_normal((12, 3)), rng.standard_normal((3, 12))
    w_down[:, [1, 5, 9]] = -np.linalg.inv(w_up[[1, 5, 9]])  # rounded: the product is -I only up to ~1e-16
    if (w_down[:, [1, 5, 9]] @ w_up[[1, 5, 9]] == -np.eye(3)).all():
        pytest.skip("this inverse happens to be exact")
    result = decide_exactly(w_up, w_down, minus_identity(3))
    assert result.found is False and result.certificate is not None
    assert result.certificate.distance < 1e-12


# ---- certificates cannot be forged -------------------------------------------------------------------


def test_tampered_certificates_fail(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    w_up, w_down = rng.standard_normal((12, 4)), rng.standard_normal((4, 12))
    np.savez(tmp_path / "r.npz", W_up=w_up, W_down=w_down)
    spec = spec_for(tmp_path, "r.npz", "gelu")
    report = tmp_path / "r.json"
    assert run("prove", str(spec), "--format", "json", "-o", str(report))[0] == 0
    assert run("verify", str(report))[0] == 0
    data = json.loads(report.read_text())
    assert data["queries"][0]["derivation"]["certificate"]["kind"] == "separating"

    def verify_with(mutate: Any) -> tuple[int, str]:
        copy = json.loads(json.dumps(data))
        mutate(copy["queries"][0]["derivation"])
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(copy))
        code, out, err = run("verify", str(bad))
        return code, out + err

    def zero_y(d: dict[str, Any]) -> None:
        zero = np.zeros((4, 4), dtype="<i4").tobytes()
        d["certificate"]["Y"] = {"sum_of": [{"exp": 0, "shape": [4, 4], "dtype": "int32-le", "encoding": "zlib+base64",
                                             "data": base64.b64encode(zlib.compress(zero)).decode()}]}

    assert verify_with(zero_y)[0] == 1
    assert verify_with(lambda d: d.update(verdict="absorbable"))[0] == 1
    assert verify_with(lambda d: d["certificate"].update(distance_lower_bound=1e9))[0] == 1
    assert verify_with(lambda d: d["certificate"].update(inner="12345"))[0] == 1
    assert verify_with(lambda d: d["certificate"].update(kind="index-set", index_set=[0, 1, 2, 3]))[0] == 1
    code, text = verify_with(lambda d: d["certificate"].update(Y={"sum_of": [{"exp": 0, "shape": [4, 4],
                                                                              "dtype": "int32-le",
                                                                              "encoding": "zlib+base64",
                                                                              "data": "!!!"}]}))
    assert code == 1 and "Traceback" not in text
    # the certificate must answer the question the spec asks (found by the second adversarial review)
    assert verify_with(lambda d: d["certificate"].update(kind="nondegenerate"))[0] == 1  # GELU needs an index set
    assert verify_with(lambda d: d["certificate"].update(nondegenerate=None))[0] == 1
    assert verify_with(lambda d: d.update(verdict="impossible"))[0] == 1
    assert verify_with(lambda d: d.pop("certificate"))[0] == 1  # a verdict on file weights without one

    def other_target(d: dict[str, Any]) -> None:
        d["certificate"]["target"] = {**d["certificate"]["target"], "nonzero": [[i, i, "-1/2"] for i in range(4)]}

    code, text = verify_with(other_target)
    assert code == 1 and "−M/(2c)" in text, text
    w_down[0, 0] += 1.0  # the weights changed after the report
    np.savez(tmp_path / "r.npz", W_up=w_up, W_down=w_down)
    code, out, _ = run("verify", str(report))
    assert code == 1 and "changed" in out


def test_failing_witness_check_is_an_internal_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from symabsorb.weights import filedecide

    w_up, w_down, _ = _planted(3)
    np.savez(tmp_path / "p.npz", W_up=w_up, W_down=w_down)
    monkeypatch.setattr(filedecide, "float_max_relative_error", lambda *a, **k: 0.5)
    code, out, err = run("prove", str(spec_for(tmp_path, "p.npz")), "--format", "json")
    assert code == 3 and "internal error" in err and "absorbable" not in out


# ---- hostile weight files ------------------------------------------------------------------------------


def _good_arrays() -> dict[str, Any]:
    rng = np.random.default_rng(0)
    return {"W_up": rng.standard_normal((5, 3)), "W_down": rng.standard_normal((3, 5))}


def _safetensors_bytes(tensors: dict[str, tuple[str, list[int], bytes]], header_extra: str = "") -> bytes:
    header: dict[str, Any] = {}
    blob = b""
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(blob), len(blob) + len(data)]}
        blob += data
    text = json.dumps(header).encode() + header_extra.encode()
    return struct.pack("<Q", len(text)) + text + blob


def _load(tmp_path: Path, name: str, payload: bytes, extra: str = "") -> tuple[int, str]:
    (tmp_path / name).write_bytes(payload)
    code, _out, err = run("prove", str(spec_for(tmp_path, name, extra=extra)), "--format", "json")
    assert "Traceback" not in err
    return code, err


def _npy_member(header: str, data: bytes = b"") -> bytes:
    h = header.encode("latin1")
    pad = 64 - (10 + len(h) + 1) % 64
    h = h + b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + data


def test_npy_header_claiming_1e12_elements_is_refused_before_allocating(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("W_up.npy", _npy_member("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }"))
        zf.writestr("W_down.npy", _npy_member("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 5), }",
                                              b"\0" * 120))
    code, err = _load(tmp_path, "huge.npz", buf.getvalue())
    assert code == 2 and "too large" in err and "w.absorb:1:" in err


def test_npz_zip_bomb_member_is_not_expanded(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("W_up.npy", _npy_member("{'descr': '<f8', 'fortran_order': False, 'shape': (5, 3), }",
                                            b"\0" * (50 << 20)))  # 50 MB of zeros, compresses to ~50 KB
        zf.writestr("W_down.npy", _npy_member("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 5), }",
                                              b"\0" * 120))
    (tmp_path / "bomb.npz").write_bytes(buf.getvalue())
    import tracemalloc

    from symabsorb.weights.io import read_tensors

    tracemalloc.start()
    try:
        got = read_tensors(tmp_path / "bomb.npz", None, ["W_up", "W_down"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got["W_up"].shape == (5, 3) and peak < 10 << 20  # 120 bytes read, never the 50 MB of the member


@pytest.mark.parametrize("dtype", ["complex128", "bool", "int64", "U3", "object"])
def test_npz_non_float_dtypes_are_refused(tmp_path: Path, dtype: str) -> None:
    arrays = _good_arrays()
    if dtype == "object":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("W_up.npy", _npy_member("{'descr': '|O', 'fortran_order': False, 'shape': (5, 3), }",
                                                b"\0" * 120))
            zf.writestr("W_down.npy", _npy_member("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 5), }",
                                                  b"\0" * 120))
        payload = buf.getvalue()
    else:
        buf = io.BytesIO()
        np.savez(buf, W_up=arrays["W_up"].astype(dtype), W_down=arrays["W_down"])
        payload = buf.getvalue()
    code, err = _load(tmp_path, "t.npz", payload)
    assert code == 2 and ("dtype" in err or "corrupt" in err)


@pytest.mark.parametrize("case", ["bad_length", "not_json", "huge_shape", "past_end", "bool", "complex", "int",
                                  "wrong_bytes", "negative_shape", "empty"])
def test_corrupt_safetensors(tmp_path: Path, case: str) -> None:
    good = _good_arrays()
    up = ("F64", [5, 3], good["W_up"].astype("<f8").tobytes())
    down = ("F64", [3, 5], good["W_down"].astype("<f8").tobytes())
    tensors = {"W_up": up, "W_down": down}
    if case == "bad_length":
        payload = struct.pack("<Q", 1 << 60) + b"{}"
    elif case == "not_json":
        payload = struct.pack("<Q", 5) + b"{{{{{"
    elif case == "huge_shape":
        tensors["W_up"] = ("F64", [10**6, 10**6], up[2])
        payload = _safetensors_bytes(tensors)
    elif case == "past_end":
        raw = _safetensors_bytes(tensors)
        payload = raw[: len(raw) - 40]
    elif case in ("bool", "complex", "int"):
        tensors["W_up"] = ({"bool": "BOOL", "complex": "C64", "int": "I64"}[case], [5, 3], up[2])
        payload = _safetensors_bytes(tensors)
    elif case == "wrong_bytes":
        tensors["W_up"] = ("F64", [5, 4], up[2])
        payload = _safetensors_bytes(tensors)
    elif case == "negative_shape":
        tensors["W_up"] = ("F64", [-5, 3], up[2])
        payload = _safetensors_bytes(tensors)
    else:
        tensors["W_up"] = ("F64", [0, 3], b"")
        payload = _safetensors_bytes(tensors)
    code, err = _load(tmp_path, "c.safetensors", payload)
    assert code == 2 and "w.absorb:1:" in err and "expected" in err


def test_bf16_and_f16_safetensors_are_exact(tmp_path: Path) -> None:
    w_up, w_down, _ = _planted(8, d=3, m=8)
    up16 = w_up.astype(np.float32).view(np.uint32) >> 16  # bf16: the top halves
    w_up_bf = (up16.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    tensors = {"W_up": ("BF16", [8, 3], up16.astype("<u2").tobytes()),
               "W_down": ("F16", [3, 8], w_down.astype("<f2").tobytes())}
    (tmp_path / "h.safetensors").write_bytes(_safetensors_bytes(tensors))
    from symabsorb.weights.io import read_tensors

    dtypes: dict[str, str] = {}
    got = read_tensors(tmp_path / "h.safetensors", None, None, dtypes)
    assert dtypes == {"W_up": "bfloat16", "W_down": "float16"}
    assert (got["W_up"].astype(np.float64) == w_up_bf).all()
    assert (got["W_down"].astype(np.float64) == w_down.astype(np.float16).astype(np.float64)).all()


def test_torch_files(tmp_path: Path) -> None:
    torch = require_module("torch", "torch")
    good = {k: torch.tensor(v) for k, v in _good_arrays().items()}
    cases = {
        "complex": {**good, "W_up": good["W_up"].to(torch.complex128)},
        "bool": {**good, "W_up": good["W_up"] > 0},
        "int": {**good, "W_up": good["W_up"].to(torch.int64)},
        "sparse": {**good, "W_up": good["W_up"].to_sparse()},
        "meta": {**good, "W_up": torch.empty(5, 3, device="meta")},
    }
    for name, state in cases.items():
        torch.save(state, tmp_path / f"{name}.pt")
        code, _out, err = run("prove", str(spec_for(tmp_path, f"{name}.pt")), "--format", "json")
        assert code == 2 and "Traceback" not in err and "w.absorb:1:" in err, (name, err)
    torch.save({**good, "W_up": good["W_up"].to(torch.bfloat16)}, tmp_path / "bf16.pt")
    assert run("prove", str(spec_for(tmp_path, "bf16.pt")), "--format", "json")[0] == 0

    class Evil:
        def __reduce__(self) -> tuple[Any, ...]:
            return (os.getcwd, ())

    torch.save({"W_up": good["W_up"], "W_down": good["W_down"], "x": Evil()}, tmp_path / "evil.pt")
    code, _out, err = run("prove", str(spec_for(tmp_path, "evil.pt")), "--format", "json")
    assert code == 2 and "refused" in err and "Traceback" not in err


def test_only_regular_files_are_read(tmp_path: Path) -> None:
    from symabsorb.weights.io import read_tensors

    fifo = tmp_path / "pipe.npz"
    os.mkfifo(fifo)
    with pytest.raises(SpecError, match=r"named pipe|not a regular"):
        read_tensors(fifo)
    with pytest.raises(SpecError):
        read_tensors(Path("/dev/zero.npz"))


@functools.cache
def _valid_payloads() -> dict[str, bytes]:
    arrays = _good_arrays()
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    out = {"npz": buf.getvalue(),
           "safetensors": _safetensors_bytes({"W_up": ("F64", [5, 3], arrays["W_up"].astype("<f8").tobytes()),
                                              "W_down": ("F64", [3, 5], arrays["W_down"].astype("<f8").tobytes())})}
    try:
        import torch
    except ImportError:
        return out
    tb = io.BytesIO()
    torch.save({k: torch.tensor(v) for k, v in arrays.items()}, tb)
    out["pt"] = tb.getvalue()
    return out


#: The formats fuzzed; the payloads are built on first use (importing torch at collection cost every
#: xdist worker about 2 s of CPU).
KINDS = ("npz", "pt", "safetensors") if importlib.util.find_spec("torch") is not None else ("npz", "safetensors")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(st.sampled_from(KINDS), st.data())
def test_fuzz_corrupt_weight_files(tmp_path: Path, kind: str, data: Any) -> None:
    """Truncations, byte flips and insertions in valid files of every format: a result or a clean
    positioned SpecError, never another exception."""
    from symabsorb.dsl.syntax import WeightsDecl
    from symabsorb.weights.io import load_block_weights

    payload = bytearray(_valid_payloads()[kind])
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(["truncate", "flip", "insert", "set"]))
        pos = data.draw(st.integers(0, max(len(payload) - 1, 0)))
        if op == "truncate":
            del payload[pos:]
        elif op == "flip" and payload:
            payload[pos] ^= data.draw(st.integers(1, 255))
        elif op == "insert":
            payload[pos:pos] = data.draw(st.binary(min_size=1, max_size=16))
        elif payload:
            payload[pos: pos + 8] = struct.pack("<Q", data.draw(st.sampled_from([0, 1, 2**31, 2**62, 2**64 - 1])))
    path = tmp_path / f"f.{kind}"
    path.write_bytes(bytes(payload))
    try:
        load_block_weights(WeightsDecl(path.name), tmp_path, gated=False)
    except SpecError as err:
        assert (err.summary and err.expected is not None) or err.hint is not None


def test_nondegenerate_scope_results_check_file_weights_exactly(tmp_path: Path) -> None:
    """An R-no-flip activation (impossible for nondegenerate weights; Mish is now thm-SDI, every
    weight): the file's nondegeneracy is checked exactly, and degenerate weights leave the question
    open instead of inheriting the generic verdict."""
    def nf_spec() -> Path:
        spec = spec_for(tmp_path, "g.npz", "nf")
        spec.write_text("activation nf(z) = z*log(1 + z^2) + z\n" + spec.read_text())
        return spec

    rng = np.random.default_rng(6)
    w_up, w_down = rng.standard_normal((8, 3)), rng.standard_normal((3, 8))
    np.savez(tmp_path / "g.npz", W_up=w_up, W_down=w_down)
    d = prove_json(nf_spec())
    assert d["verdict"] == "not-absorbable" and d["scope"] == "these weights"
    assert not any(a.startswith("nondegenerate") for a in d["assumptions"])
    assert d["certificate"]["kind"] == "nondegenerate" and d["certificate"]["nondegenerate"]["holds"]
    report = tmp_path / "m.json"
    assert run("prove", str(nf_spec()), "--format", "json", "-o", str(report))[0] == 0
    assert run("verify", str(report))[0] == 0
    w_up[5] = -4.0 * w_up[2]
    np.savez(tmp_path / "g.npz", W_up=w_up, W_down=w_down)
    d = prove_json(nf_spec())
    assert d["verdict"] == "open" and any("rows 2 and 5 of W_up are collinear" in n for n in d["notes"])


def test_targets_for_every_skip_kind(tmp_path: Path) -> None:
    """T = -M/(2c) built exactly for scaled, matrix and hyper skips (planted exactly, so absorbable)."""
    rng = np.random.default_rng(0)
    w_up, w_down = rng.standard_normal((8, 2)), rng.standard_normal((2, 8))
    b = np.diag([2.0, -1.0])[[1, 0]]
    w_up[[1, 4]] = b
    cases = {"scaled(1/2)": np.eye(2) / 2, "[[2, 1], [0, 1]]": np.array([[2.0, 1.0], [0.0, 1.0]]),
             "hyper(n: 2, mix: [[1, 1], [0, 1]])": np.array([[1.0, 1.0], [0.0, 1.0]])}
    for i, (skip, m_skip) in enumerate(cases.items()):
        down = w_down.copy()
        down[:, [1, 4]] = -m_skip @ np.linalg.inv(b)  # relu/gelu: c = 1/2, T = -M
        np.savez(tmp_path / f"k{i}.npz", W_up=w_up, W_down=down)
        dim = "dim: 1" if skip.startswith("hyper") else "dim: 2"
        d = prove_json(spec_for(tmp_path, f"k{i}.npz", "gelu", f"{dim} skip: {skip}"))
        assert d["verdict"] == "absorbable" and d["certificate"]["index_set"] == [1, 4], skip
        down[1, 4] = np.nextafter(down[1, 4], 9.0)
        np.savez(tmp_path / f"k{i}.npz", W_up=w_up, W_down=down)
        d = prove_json(spec_for(tmp_path, f"k{i}.npz", "gelu", f"{dim} skip: {skip}"))
        assert d["verdict"] in ("not-absorbable", "open") and d["certificate"]["kind"] != "index-set", skip


def test_verify_without_certificates_and_on_bad_input(tmp_path: Path) -> None:
    spec = tmp_path / "c.absorb"
    spec.write_text("classify gelu\n")
    report = tmp_path / "c.json"
    assert run("prove", str(spec), "--format", "json", "-o", str(report))[0] == 0
    code, out, _ = run("verify", str(report))
    assert code == 1 and "nothing to check" in out  # exit 1: nothing was re-checked
    (tmp_path / "bad.json").write_text("{not json")
    code, _, err = run("verify", str(tmp_path / "bad.json"))
    assert code == 2 and "not a JSON report" in err and "Traceback" not in err
    code, _, err = run("verify", str(tmp_path / "missing.json"))
    assert code == 2 and "Traceback" not in err


def test_numeric_witness_check_scales_and_still_catches_wrong_witnesses(tmp_path: Path) -> None:
    """Huge exactly planted weights (~1e195) are absorbable without a false alarm (points are scaled and
    errors measured against the size of the terms); a wrong witness is still caught."""
    from symabsorb.model import load_spec
    from symabsorb.theory.derivation import Witness
    from symabsorb.weights.filedecide import float_max_relative_error
    from symabsorb.weights.io import load_block_weights

    w_up, w_down, s = _planted(12)
    w_up *= 2.0**650
    w_down *= 2.0**-650
    np.savez(tmp_path / "h.npz", W_up=w_up, W_down=w_down)
    spec = spec_for(tmp_path, "h.npz", "gelu")
    d = prove_json(spec)
    assert d["verdict"] == "absorbable" and d["certificate"]["index_set"] == s
    block = load_spec(spec).blocks[0]
    assert block.weights is not None
    w = load_block_weights(block.weights, tmp_path, False)
    wrong_up = w.w_up.copy()
    wrong_up[[j for j in range(20) if j not in s][:2]] *= -1  # flips units outside S
    assert float_max_relative_error(block, w, Witness(tuple(s), wrong_up, w.w_down)) > 1e-3
    right_up = w.w_up.copy()
    right_up[s] *= -1
    assert float_max_relative_error(block, w, Witness(tuple(s), right_up, w.w_down)) < 1e-12


def test_extreme_scales_neither_hang_nor_crash(tmp_path: Path) -> None:
    """Found by the second review: at 2^±1000 and 1e300 the float Gram over/underflows; the float
    guess must step aside (LAPACK hung on NaN, SVD failed) and the exact path decide."""
    s = 2.0 ** -1000
    up = np.array([[s, s], [0, s], [0.05 * s, 1.07 * s], [-0.33 * s, 0.42 * s]])
    down = np.array([[-1 / s, 1 / s, 0.26 * s, -0.31 * s], [0, -1 / s, -0.015 * s, 0.43 * s]])
    np.savez(tmp_path / "h.npz", W_up=up, W_down=down)
    d = prove_json(spec_for(tmp_path, "h.npz", "relu", "dim: 2"))
    assert d["verdict"] == "absorbable" and d["witness"]["index_set"] == [0, 1]
    rng = np.random.default_rng(3)
    np.savez(tmp_path / "c.npz", W_up=rng.standard_normal((5, 2)) * 1e300, W_down=rng.standard_normal((2, 5)))
    code, _, err = run("prove", str(spec_for(tmp_path, "c.npz", "relu", "dim: 2")), "--format", "json")
    assert code == 0 and "internal error" not in err, err


def test_printed_distances_are_rounded_down() -> None:
    from fractions import Fraction

    from symabsorb.weights.search import floor_text, sqrt_lower

    assert floor_text(2.4691354999999997) == "2.46913"
    assert float(floor_text(1.9999999999)) <= 1.9999999999
    for q in (Fraction(2), Fraction(1, 3), Fraction(10**40 + 1, 7)):
        x = sqrt_lower(q)
        assert Fraction(x) ** 2 <= q
