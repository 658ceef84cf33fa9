"""The exact certificate evaluation on per-unit grids (weights/exact.py): every path against Fractions.

``bilinear_diagonal`` puts each unit on its own power-of-two grid, takes the few entries far below a
column's largest as an exact remainder, and falls back to one common exponent when a row of W_up spans
more bits than a grid holds. A wrong bit anywhere would make a separating certificate false: each test
here compares the value with the definition, ``a_jᵀ Y b_j`` summed in Fractions.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from tests.helpers import require_module

np = require_module("numpy", "weights")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from symabsorb.weights import exact  # noqa: E402
from symabsorb.weights.exact import bilinear_diagonal, integer_only  # noqa: E402


def reference(w_down: Any, w_up: Any, limbs: list[tuple[int, Any]]) -> list[Fraction]:
    """The definition, in Python integers: each float is an exact dyadic rational."""
    d, m = w_down.shape
    a = [[Fraction(float(v)) for v in row] for row in w_down.tolist()]
    b = [[Fraction(float(v)) for v in row] for row in w_up.tolist()]
    y = [[sum((Fraction(int(limb[i, k])) * Fraction(2) ** e for e, limb in limbs), Fraction(0)) for k in range(d)]
         for i in range(d)]
    out = []
    for j in range(m):
        yb = [sum((y[i][k] * b[j][k] for k in range(d)), Fraction(0)) for i in range(d)]
        out.append(sum((a[i][j] * yb[i] for i in range(d)), Fraction(0)))
    return out


def both(w_down: Any, w_up: Any, limbs: list[tuple[int, Any]], chunk: int = 256) -> list[Fraction]:
    """The value with float64 BLAS and with int64 products: they must agree (and are returned)."""
    fast = bilinear_diagonal(w_down, w_up, limbs, chunk=chunk)
    with integer_only():
        assert bilinear_diagonal(w_down, w_up, limbs, chunk=chunk) == fast
    return fast


def float32_layer(d: int, m: int, seed: int) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    up = (rng.standard_normal((m, d)) / np.sqrt(d)).astype(np.float32).astype(np.float64)
    down = (rng.standard_normal((d, m)) / np.sqrt(m)).astype(np.float32).astype(np.float64)
    return down, up


def test_sparse_remainder_of_tiny_entries_is_exact() -> None:
    # float32 columns with entries 2^-60 below their largest: those land in the exact remainder
    down, up = float32_layer(12, 30, 0)
    down[3, 4] = np.float32(2.0**-70)
    down[0, 7] = -np.float32(3 * 2.0**-64)
    up[5, 2] = np.float32(2.0**-50)
    rng = np.random.default_rng(1)
    limbs = [(-19, rng.integers(-(2**20) + 1, 2**20, (12, 12))), (-40, rng.integers(-(2**20) + 1, 2**20, (12, 12)))]
    _, _, rest = exact._down_grid(down, exact._limb_bits(12, 20, exact.FLOAT_EXACT_BITS))
    assert rest[3, 4] != 0 and rest[0, 7] != 0  # the test exercises the remainder path
    assert both(down, up, limbs, chunk=7) == reference(down, up, limbs)


def test_wide_rows_fall_back_to_one_exponent() -> None:
    # a row of W_up spanning ~2000 bits (2^-1000 next to 2^1000) has no grid: the common-exponent path
    rng = np.random.default_rng(2)
    up, down = rng.standard_normal((6, 4)), rng.standard_normal((4, 6))
    up[2, 1], up[2, 3] = 2.0**-1000, 2.0**1000
    down[1, 4], down[0, 4] = 5e-324, 2.0**900  # a subnormal and a huge entry in one column
    limbs = [(-7, rng.integers(-(2**20), 2**20, (4, 4)))]
    assert exact._bilinear_grid_chunk(down, up, [exact._YLimb(-7, limbs[0][1], None, 21)]) is None
    assert both(down, up, limbs, chunk=3) == reference(down, up, limbs)


def test_wide_y_limbs_and_float64_weights() -> None:
    # |Y| near 2^31 (a centred last row) leaves 8-bit limbs at d = 40: more limbs, the same value
    rng = np.random.default_rng(3)
    down, up = rng.standard_normal((40, 25)), rng.standard_normal((25, 40))  # float64: 53-bit mantissas
    y = rng.integers(-(2**20), 2**20, (40, 40))
    y[-1] = rng.integers(-(2**31) + 1, 2**31, 40)
    assert both(down, up, [(5, y)], chunk=9) == reference(down, up, [(5, y)])


def test_zero_units_and_zero_limbs() -> None:
    down, up = float32_layer(5, 8, 4)
    down[:, 2] = 0.0
    up[6] = 0.0
    y = np.random.default_rng(5).integers(-100, 100, (5, 5))
    got = both(down, up, [(0, y), (3, np.zeros((5, 5), dtype=np.int64))])
    assert got == reference(down, up, [(0, y)]) and got[2] == 0 and got[6] == 0


@st.composite
def spread_matrices(draw: Any, rows: int, cols: int) -> Any:
    """Mantissas of float32 or float64 width at exponents spread over a chosen range (tiny entries
    among ordinary ones: the remainder; huge spreads: the fallback)."""
    spread = draw(st.sampled_from([0, 8, 40, 200, 1100]))
    mant = draw(st.lists(st.floats(-2, 2, allow_nan=False, width=draw(st.sampled_from([32, 64]))),
                         min_size=rows * cols, max_size=rows * cols))
    exps = draw(st.lists(st.integers(-spread, 0), min_size=rows * cols, max_size=rows * cols))
    return (np.array(mant, dtype=np.float64) * 2.0 ** np.array(exps, dtype=float)).reshape(rows, cols)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_grid_evaluation_matches_fractions(data: Any) -> None:
    d = data.draw(st.integers(1, 6))
    m = data.draw(st.integers(1, 9))
    w_down, w_up = data.draw(spread_matrices(d, m)), data.draw(spread_matrices(m, d))
    bound = data.draw(st.sampled_from([2**4, 2**20, 2**31 - 1]))
    limbs = [(data.draw(st.integers(-60, 60)), np.array(data.draw(st.lists(st.integers(-bound, bound), min_size=d * d,
                                                                             max_size=d * d))).reshape(d, d))
             for _ in range(data.draw(st.integers(1, 3)))]
    assert both(w_down, w_up, limbs, chunk=data.draw(st.integers(1, 4))) == reference(w_down, w_up, limbs)


@pytest.mark.parametrize("seed", [0, 1])
def test_incremental_refinement_equals_a_fresh_evaluation(seed: int) -> None:
    # a refinement evaluates only its new limb of Y (the value is linear in Y): the same numbers as from scratch
    from symabsorb.weights.certify import Target, _evaluate

    down, up = float32_layer(6, 14, seed)
    rng = np.random.default_rng(seed + 10)
    limbs = [(-19, rng.integers(-(2**20), 2**20, (6, 6))), (-39, rng.integers(-(2**20), 2**20, (6, 6)))]
    target = Target(6, tuple((i, i, Fraction(-1)) for i in range(6)))
    first = _evaluate(up, down, target, limbs[:1])
    assert _evaluate(up, down, target, limbs, first) == _evaluate(up, down, target, limbs)


def test_float_nondegeneracy_screen_computes_the_worst_pair_on_demand() -> None:
    # display only, and no longer paid by every decision: the same pair and cosine when asked for
    from symabsorb.weights.floatsearch import float_nondegeneracy

    up = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 0.01, 0.0], [0.0, 0.0, 2.0]])
    nd = float_nondegeneracy(up, np.ones((3, 4)))
    assert nd.holds and nd.worst_pair == (0, 2) and nd.worst_cos == pytest.approx(1 / np.sqrt(1.0001))
    assert float_nondegeneracy(up[:1], np.ones((3, 1))).worst_pair is None
