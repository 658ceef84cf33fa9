"""Issue 29's cheaper paths keep every answer: the certificate's cheaper encoding still reads old
reports, the vectorised scale checks decide exactly as the SymPy sign decision did."""

from __future__ import annotations

import base64
import zlib

import pytest

np = pytest.importorskip("numpy", reason="needs numpy (pip install 'symabsorb[weights]')")

from symabsorb.weights import certify  # noqa: E402


def test_limbs_written_at_any_zlib_level_read_back() -> None:
    limb = np.arange(-600, 600, dtype=np.int64).reshape(30, 40) * 4099
    new = certify._pack(limb)
    old = {**new, "data": base64.b64encode(zlib.compress(limb.astype("<i4").tobytes(), 9)).decode("ascii")}
    assert new["encoding"] == old["encoding"] == "zlib+base64"
    for packed in (new, old):
        assert (certify._unpack(packed) == limb).all()


def test_a_tampered_limb_is_still_refused() -> None:
    limb = np.ones((4, 4), dtype=np.int64)
    packed = certify._pack(limb)
    short = {**packed, "data": base64.b64encode(zlib.compress(b"\0" * 60, 1)).decode("ascii")}
    with pytest.raises(certify.CertificateError):
        certify._unpack(short)


@pytest.mark.parametrize(("gamma", "decided"), [("[1e-90, -2, 3]", True), ("[1e-90, -2, 0]", False),
                                                ("[0, 1/3, -1e90]", False), ("[-1/7, 1/3, -1e90]", True)])
def test_scales_are_decided_by_their_exact_sign(gamma: str, decided: bool) -> None:
    # the numerator's sign of a Rational scale: a zero anywhere (first or last) is refuted, a tiny or
    # negative one is nonzero
    from symabsorb.model import resolve_text
    from symabsorb.theory.derivation import Verdict
    from tests.helpers import prove

    spec = resolve_text(f"block b {{ activation: tanh dim: 3 norm: post-ln eps: 1/100 ln_gamma: {gamma} }}")
    verdict = prove(spec.blocks[0]).verdict
    assert verdict is (Verdict.IMPOSSIBLE if decided else Verdict.OPEN)


def test_flint_rank_is_the_rank_over_q() -> None:
    # exact: rows scaled by their denominators' lcm keep the rank; deficient, zero and empty matrices too
    pytest.importorskip("flint", reason="needs python-flint (pip install 'symabsorb[all]')")
    import random

    import sympy as sp

    from symabsorb.theory.hyp_sizes import _flint_rank

    rng = random.Random(7)
    for _ in range(40):
        rows, cols = rng.randint(1, 7), rng.randint(1, 7)
        m = sp.Matrix(rows, cols, lambda i, j: sp.Rational(rng.randint(-3, 3), rng.randint(1, 4)))
        if rows > 1 and rng.random() < 0.5:  # a dependent row: rank deficient over Q, not over a bad prime
            m[rows - 1, :] = m[0, :] * sp.Rational(rng.randint(-5, 5), 7) + m[rows - 2, :] / 3
        assert _flint_rank(m) == m.rank()
    assert _flint_rank(sp.zeros(3, 4)) == 0
    assert _flint_rank(sp.Matrix(0, 3, [])) == 0
    assert _flint_rank(sp.Matrix([[sp.sqrt(2), 1]])) is None  # not a Rational: the caller's other path


def test_units_in_blocks_equal_the_whole_product() -> None:
    # FloatSearch.units sums a block of units at a time (memory): the same d x d matrix up to rounding
    from symabsorb.weights.floatsearch import float_search

    rng = np.random.default_rng(3)
    w_up, w_down = rng.standard_normal((40, 5)), rng.standard_normal((5, 40))
    fs = float_search(w_up, w_down, -np.eye(5))
    x = rng.standard_normal(fs.a_hat.shape[1])
    whole = fs.units(x, block=10_000)
    for block in (1, 3, 7, 39):
        assert np.allclose(fs.units(x, block=block), whole, rtol=1e-12, atol=1e-12)
        base = rng.standard_normal(whole.shape)
        added = fs.units(x, block=block, add_to=base.copy())
        assert np.allclose(added, base + whole, rtol=1e-12, atol=1e-12)


def test_a_big_layer_reports_its_long_stages(monkeypatch: pytest.MonkeyPatch) -> None:
    # progress shown for a LLaMA-size layer: Gram matrix, Cholesky factor, exact certificate, each to its end
    from fractions import Fraction

    from symabsorb.weights import floatsearch
    from symabsorb.weights.certify import Target, decide_exactly

    monkeypatch.setattr(floatsearch, "PROGRESS_UNITS", 16)
    seen: dict[str, list[tuple[int, int]]] = {}
    rng = np.random.default_rng(5)
    w_up, w_down = rng.standard_normal((30, 6)), rng.standard_normal((6, 30))  # m < d²: a regular Gram matrix
    with floatsearch.progress_to(lambda stage, done, total: seen.setdefault(stage, []).append((done, total))):
        result = decide_exactly(w_up, w_down, Target(6, tuple((i, i, Fraction(-1)) for i in range(6))))
    assert result.found is False
    stages = {name.split(": ", 1)[1] for name in seen}
    assert {"Gram matrix", "Cholesky factor", "exact certificate"} <= stages
    assert len({name.split(": ", 1)[0] for name in seen}) == 1  # one layer, numbered once
    for calls in seen.values():
        assert calls[-1][0] == calls[-1][1] and all(0 < d <= t for d, t in calls)
    monkeypatch.setattr(floatsearch, "PROGRESS_UNITS", 10**9)
    with floatsearch.progress_to(lambda *a: pytest.fail("a small layer reports nothing")):
        floatsearch.float_search(w_up, w_down, -np.eye(6))


def test_exact_search_finds_s_when_no_float_guess_can_be_made() -> None:
    # W_up huge and W_down tiny: the float Gram system overflows, neither float guess is made, and the
    # exact elimination finds S; a failed guess (random weights) is not made twice and the answer stays
    import sympy as sp

    from symabsorb.weights.search import _UNTRIED, _quick_planted, exact_search

    big = sp.Integer(10) ** 200
    w_up = sp.Matrix([[1, 0], [0, 1], [1, 1]]) * big
    w_down = sp.Matrix([[-1, 0, 0], [0, -1, 0]]) / big
    assert _quick_planted(w_up, w_down, -sp.eye(2)) == _UNTRIED
    found = exact_search(w_up, w_down, -sp.eye(2))
    assert found.found and list(found.index_set) == [0, 1]
    w_up2, w_down2 = sp.Matrix([[1, 2], [3, -1], [2, 5]]), sp.Matrix([[1, 0, 2], [0, 1, -1]])
    assert _quick_planted(w_up2, w_down2, -sp.eye(2)) is None  # made, failed its exact check
    assert exact_search(w_up2, w_down2, -sp.eye(2)).found is False
