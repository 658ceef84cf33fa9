"""σ = az + b (a linear-plus-constant activation) on concrete weights: L-affine (bias-free residual-free
block) and L-affine (biases). The block is the affine map x ↦ Ax + k; the answer was `open` (L-odd-linear's
sufficient index-set condition) where the exact criterion decides it."""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy as sp

import symabsorb


def _spec(act: str, w_up: str, w_down: str, extra: str = "", skip: str = "") -> str:
    return (f"activation act(z) = {act}\n"
            f"block b {{ activation: act {skip} W_up: {w_up} W_down: {w_down} {extra} }}\nabsorb b\n")


def _answer(text: str) -> symabsorb.Result:
    (result,) = symabsorb.prove(symabsorb.load(text)).results
    return result


def _check_witness(result: symabsorb.Result, a: Fraction, b: Fraction, text: str) -> None:
    """Independently of the procedure: B'(x) = Mx + B(x) at rational points, exactly (biases included)."""
    block = symabsorb.load(text).resolved.blocks[0]
    from symabsorb.theory.skips import skip_matrix

    w = result.witness
    assert w is not None and w.w_gate is None
    m_skip = sp.Matrix(skip_matrix(block))
    d = m_skip.rows
    width = int(block.width)
    ones = sp.ones(width, 1)
    b_up = sp.Matrix(block.b_up) if block.b_up is not None else sp.zeros(width, 1)
    b_down = sp.Matrix(block.b_down) if block.b_down is not None else sp.zeros(d, 1)
    for x in ([1, 2, -3][:d], [sp.Rational(1, 7), 5, 11][:d], [0, 0, 0][:d]):
        xv = sp.Matrix(x)
        residual = m_skip * xv + sp.Matrix(block.w_down) * (a * (sp.Matrix(block.w_up) * xv + b_up) + b * ones) + b_down
        w_up, w_down = sp.Matrix(w.w_up), sp.Matrix(w.w_down)
        wb_up = sp.Matrix(w.b_up) if w.b_up is not None else sp.zeros(w_up.rows, 1)
        wb_down = sp.Matrix(w.b_down) if w.b_down is not None else sp.zeros(d, 1)
        assert w_up.rows == width  # the same width
        free = w_down * (a * (w_up * xv + wb_up) + b * sp.ones(w_up.rows, 1)) + wb_down
        assert (free - residual).is_zero_matrix


# width 3 > rank: always absorbable by a bias-free block
WIDE = ("[[1, 0], [0, 1], [1, 1]]", "[[-1, 0, 1], [0, -1, 1]]")


@pytest.mark.parametrize(("act", "a", "b"), [("z + 2", 1, 2), ("2*z - 3", 2, -3), ("-z + 1/3", -1, Fraction(1, 3))])
def test_affine_sigma_wide_block_is_absorbable(act: str, a: int, b: Fraction) -> None:
    text = _spec(act, *WIDE)
    r = _answer(text)
    assert (r.verdict, r.decided_by) == ("absorbable", "L-affine"), r.derivation.steps[-1].text
    _check_witness(r, Fraction(a), Fraction(b), text)


@pytest.mark.parametrize(("act", "a", "b", "w_down"), [
    ("z + 2", 1, 2, "[[1, -1], [1, -1]]"),        # A = I + W_down: rank 2 = m, k = 2 W_down 1 = 0
    ("2*z - 3", 2, -3, "[[1, -1], [2, -2]]"),     # A = I + 2 W_down, det −1; k = 0
    ("-z + 1/3", -1, Fraction(1, 3), "[[3, -3], [1, -1]]"),  # A = I − W_down, det −1; k = 0
])
def test_affine_sigma_constant_zero_at_full_rank_is_not_absorbable(act: str, a: int, b: Fraction, w_down: str) -> None:
    """rank A = m and k = R(0) = 0: a bias-free residual-free block's constant b W'_down 1 is a nonzero vector."""
    r = _answer(_spec(act, "[[1, 0], [0, 1]]", w_down))
    assert (r.verdict, r.decided_by) == ("not-absorbable", "L-affine")
    # the same weights, asked as used with a biased residual-free block: rank A = 2 <= m, absorbable
    text = _spec(act, "[[1, 0], [0, 1]]", w_down, "absorber_bias: true")
    r = _answer(text)
    assert (r.verdict, r.decided_by) == ("absorbable", "L-affine (biases)")
    _check_witness(r, Fraction(a), Fraction(b), text)


def test_affine_sigma_full_rank_nonzero_constant_is_absorbable() -> None:
    """rank A = m with 0 ≠ k ∈ col A: the witness U = P T with T 1 = y."""
    text = _spec("-z + 1/3", "[[1, 0], [0, 1]]", "[[2, 0], [0, 3]]")
    r = _answer(text)
    assert (r.verdict, r.decided_by) == ("absorbable", "L-affine")
    _check_witness(r, Fraction(-1), Fraction(1, 3), text)


def test_affine_sigma_block_biases_move_the_constant() -> None:
    """A hidden bias makes k ≠ 0 where the bias-free block had k = 0 (2z − 3, A invertible)."""
    text = _spec("2*z - 3", "[[1, 0], [0, 1]]", "[[1, -1], [2, -2]]", "b_up: [1, 0] absorber_bias: false")
    r = _answer(text)
    assert (r.verdict, r.decided_by) == ("absorbable", "L-affine")
    _check_witness(r, Fraction(2), Fraction(-3), text)


def test_affine_sigma_constant_outside_the_column_space() -> None:
    """d = 3, m = 2, rank A = 2 = m, k = b (1, 1, 1) ∉ col A: not absorbable bias-free; absorbable with biases."""
    skip = "skip: [[0, -1, 0], [0, 0, 0], [0, 0, 0]]"
    up, down = "[[0, 1, 0], [0, 0, 1]]", "[[1, 0], [1, 0], [0, 1]]"
    assert _answer(_spec("z + 2", up, down, skip=skip)).verdict == "not-absorbable"
    text = _spec("z + 2", up, down, "absorber_bias: true", skip=skip)
    r = _answer(text)
    assert r.verdict == "absorbable"
    _check_witness(r, Fraction(1), Fraction(2), text)


def test_affine_sigma_rank_above_width_is_not_absorbable() -> None:
    skip = "skip: [[1, 0, 0], [0, 0, 0], [0, 0, 0]]"
    text = _spec("z + 2", "[[0, 1, 0], [0, 0, 1]]", "[[0, 0], [1, 0], [0, 1]]", "absorber_bias: true", skip=skip)
    assert _answer(text).verdict == "not-absorbable"  # A = I_3: rank 3 > m = 2, whatever the biases


def test_linear_sigma_keeps_l_linear() -> None:
    r = _answer(_spec("2*z", *WIDE))
    assert (r.verdict, r.decided_by) == ("absorbable", "L-linear")


@pytest.mark.parametrize(("act", "w_down", "extra", "a", "b", "w_star"), [
    ("z + 2", "[[1, -1], [1, -1]]", "", 1, 2, 3),                       # rank A = 2, k = 0: r + 1
    ("z + 2", "[[1, -1], [1, -1]]", "absorber_bias: true", 1, 2, 2),    # biased residual-free block: rank A
    ("-z + 1/3", "[[2, 0], [0, 3]]", "", -1, Fraction(1, 3), 2),        # 0 != k in col A: rank A
])
def test_affine_width_is_exact(act: str, w_down: str, extra: str, a: int, b: Fraction, w_star: int) -> None:
    text = _spec(act, "[[1, 0], [0, 1]]", w_down, extra).replace("absorb b", "width b")
    (r,) = symabsorb.prove(symabsorb.load(text)).results
    assert r.verdict == "minimal-width" and r.condition == f"w* = {w_star}", (r.verdict, r.condition)
    w = symabsorb.absorb_width(text, "b", w_star).witness  # `absorb --width W*`
    assert w is not None and sp.Matrix(w.w_up).rows == w_star
    block = symabsorb.load(text).resolved.blocks[0]
    for x in ([1, 2], [sp.Rational(-3, 7), 5]):
        xv = sp.Matrix(x)
        residual = xv + sp.Matrix(block.w_down) * (a * sp.Matrix(block.w_up) * xv + b * sp.ones(2, 1))
        wb_up = sp.Matrix(w.b_up) if w.b_up is not None else sp.zeros(w_star, 1)
        wb_down = sp.Matrix(w.b_down) if w.b_down is not None else sp.zeros(2, 1)
        free = sp.Matrix(w.w_down) * (a * (sp.Matrix(w.w_up) * xv + wb_up) + b * sp.ones(w_star, 1)) + wb_down
        assert (free - residual).is_zero_matrix
