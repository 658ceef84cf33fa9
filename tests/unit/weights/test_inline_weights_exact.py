"""Inline weights at the speed of the mathematics: nondegeneracy by primitive integer directions
(against pairwise ranks), the witness check in exact rational arithmetic (cancelling equal units,
fmpq_mat products) or rigorous enclosures, and a d = 16, m = 64 block end to end. No timing asserted
(benchmarks/run.py measures the ratios)."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
import sympy as sp

import symabsorb
from symabsorb.model import activation_from_text
from symabsorb.model.block import Block, Skip
from symabsorb.theory.derivation import Witness
from symabsorb.theory.hyp_sizes import exact_rank, nondegeneracy
from symabsorb.weights.witness import check_witness, flip_witness


def _rank_nondegeneracy(w_up: sp.Matrix, w_down: sp.Matrix) -> bool:
    rows = [w_up.row(i) for i in range(w_up.rows)]
    if any(all(x == 0 for x in r) for r in rows) or any(all(x == 0 for x in w_down.col(j)) for j in range(w_down.cols)):
        return False
    return all(sp.Matrix.vstack(rows[i], rows[j]).rank() == 2 for i in range(len(rows)) for j in range(i + 1, len(rows)))


@pytest.mark.parametrize("seed", range(40))
def test_primitive_directions_agree_with_pairwise_ranks(seed: int) -> None:
    rng = random.Random(seed)
    m, d = rng.randint(2, 7), rng.randint(1, 4)
    w_up = sp.Matrix(m, d, lambda i, j: sp.Rational(rng.randint(-2, 2), rng.randint(1, 3)))
    if rng.random() < 0.6:  # a scaled copy of another row: negative, fractional factors
        i, j = rng.sample(range(m), 2)
        w_up[j, :] = w_up[i, :] * sp.Rational(rng.choice([-3, -1, 2, 5]), rng.choice([1, 2, 7]))
    w_down = sp.Matrix(d, m, lambda i, j: rng.randint(-1, 1))
    for immutable in (False, True):
        up, down = (sp.ImmutableMatrix(w_up), sp.ImmutableMatrix(w_down)) if immutable else (w_up, w_down)
        ok, reason = nondegeneracy(up, down)
        assert ok == _rank_nondegeneracy(w_up, w_down), reason


def test_nondegeneracy_names_the_pair_and_keeps_irrational_entries_exact() -> None:
    w_down = sp.ones(2, 3)
    assert nondegeneracy(sp.Matrix([[1, 2], [3, 1], [sp.Rational(-1, 2), -1]]), w_down) == (
        False, "rows 0 and 2 of W_up are collinear")
    r2 = sp.sqrt(2)
    assert nondegeneracy(sp.Matrix([[1, 2], [3, 1], [r2, 2 * r2]]), w_down)[0] is False  # collinear over R
    assert nondegeneracy(sp.Matrix([[1, 2], [3, 1], [r2, 2]]), w_down)[0] is True
    assert nondegeneracy(sp.Matrix([[1, 2], [0, 0], [1, 1]]), w_down) == (False, "row 1 of W_up is zero")
    assert nondegeneracy(sp.Matrix([[1, 2], [2, 1], [1, 1]]), sp.Matrix([[1, 0, 1], [1, 0, 1]])) == (
        False, "column 1 of W_down is zero")
    assert exact_rank(sp.ImmutableMatrix([[1, 2], [2, 4]])) == 1 and exact_rank(sp.Matrix([[r2, 1], [1, 1]])) is None


def _planted(act: str, d: int, m: int, seed: int, gated: bool = False) -> tuple[Block, tuple[int, ...]]:
    rng = random.Random(seed)
    w_up = sp.Matrix(m, d, lambda i, j: rng.randint(-3, 3))
    w_down = sp.Matrix(d, m, lambda i, j: sp.Rational(rng.randint(-3, 3), rng.randint(1, 2)))
    s = tuple(sorted(rng.sample(range(m), d)))
    perm = list(range(d))
    rng.shuffle(perm)
    for r, j in enumerate(s):
        entry = rng.choice([-1, 1]) * sp.Rational(2) ** rng.randint(-2, 2)
        w_up[j, :] = sp.Matrix([[entry if k == perm[r] else 0 for k in range(d)]])
        w_down[:, j] = sp.Matrix([-1 / entry if i == perm[r] else 0 for i in range(d)])
    w_gate = sp.ImmutableMatrix(m, d, lambda i, j: rng.randint(-2, 2)) if gated else None
    block = Block("b", activation_from_text(act, gated=gated), d, m, Skip("identity"), sp.ImmutableMatrix(w_up),
                  sp.ImmutableMatrix(w_down), w_gate)
    return block, s


@pytest.mark.parametrize("act", ["relu", "leaky_relu", "hardtanh"])
def test_exact_witness_check_for_piecewise_linear_activations(act: str) -> None:
    block, s = _planted("relu", 4, 12, seed=3)
    block = Block("b", activation_from_text(act), 4, 12, Skip("identity"), block.w_up, block.w_down)
    witness = Witness(s, *flip_witness(block, s))
    check = check_witness(block, witness, points=50)
    assert check.exact and check.cancelled == 12 - len(s)
    if act == "relu":  # relu(t) - relu(-t) = t: the flip witness is exact, the error exactly 0
        assert check.error == 0.0 and "exact rational arithmetic" in check.text()
    else:  # leaky ReLU's odd part is 0.99 t / 2 and hardtanh's is bounded: this S does not absorb
        assert check.error > 1e-3


def test_a_wrong_witness_fails_the_exact_check() -> None:
    block, s = _planted("relu", 4, 12, seed=4)
    w_up, w_down, _ = flip_witness(block, s)
    bad_down = sp.ImmutableMatrix(w_down.as_mutable() + sp.Matrix(4, 12, lambda i, j: sp.Rational(1, 10**6)
                                                                  if (i, j) == (2, s[1]) else 0))
    assert check_witness(block, Witness(s, w_up, bad_down)).error > 0
    assert check_witness(block, Witness(s[1:], *flip_witness(block, s[1:]))).error > 1e-3  # one unit short


def test_shared_units_cancel_and_duplicates_merge() -> None:
    block, s = _planted("relu", 3, 8, seed=5)
    w_up, w_down, _ = flip_witness(block, s)
    # the witness with one of its unflipped units split in two halves (same row, half the column each)
    j = next(k for k in range(8) if k not in s)
    up2 = sp.ImmutableMatrix(sp.Matrix.vstack(w_up, w_up[j, :]))
    down2 = w_down.as_mutable()
    down2[:, j] = down2[:, j] / 2
    down2 = sp.ImmutableMatrix(sp.Matrix.hstack(down2, down2[:, j]))
    check = check_witness(block, Witness(s, up2, down2))
    assert check.exact and check.error == 0.0


def test_smooth_and_gated_activations_use_rigorous_enclosures() -> None:
    block, s = _planted("gelu", 3, 9, seed=6)
    check = check_witness(block, Witness(s, *flip_witness(block, s)), points=30)
    assert not check.exact and check.error < 1e-12 and "enclosures" in check.text()
    gated, s = _planted("sigmoid", 3, 9, seed=7, gated=True)
    # gated flip: negate rows S of W_gate and columns S of W_down; sigmoid(t) + sigmoid(-t) = 1 = 2c, c = 1/2,
    # so W_down[:,S] W_up[S,:] = -I/(2c) = -I is what absorbs, which the planted weights satisfy
    check = check_witness(gated, Witness(s, *flip_witness(gated, s)), points=30)
    assert not check.exact and check.error < 1e-12


def _inline_spec(d: int, m: int, planted: bool) -> str:
    rng = random.Random(1)
    w_up = [[rng.randint(-3, 3) for _ in range(d)] for _ in range(m)]
    w_down = [[Fraction(rng.randint(-3, 3), rng.randint(1, 2)) for _ in range(m)] for _ in range(d)]
    if planted:
        perm = list(range(d))
        rng.shuffle(perm)
        for r, j in enumerate(sorted(rng.sample(range(m), d))):
            entry = rng.choice([-1, 1]) * Fraction(2) ** rng.randint(-3, 3)
            w_up[j] = [entry if k == perm[r] else 0 for k in range(d)]
            for i in range(d):
                w_down[i][j] = -1 / entry if i == perm[r] else Fraction(0)

    def mat(rows: list[list[Fraction]] | list[list[int]]) -> str:
        return "[" + ", ".join("[" + ", ".join(str(x) for x in row) + "]" for row in rows) + "]"

    return (f"block b {{ activation: relu  dim: {d}  width: {m}\n W_up: {mat(w_up)}\n W_down: {mat(w_down)} }}\n"
            "absorb b\n")


@pytest.mark.parametrize("planted", [True, False])
def test_inline_block_d16_m64_end_to_end(planted: bool) -> None:
    report = symabsorb.prove(_inline_spec(16, 64, planted))
    verdict = report.verdicts["absorb b"]
    assert verdict == ("absorbable" if planted else "not-absorbable")
    text = report.render("md")
    assert "pairwise non-collinear" in text
    if planted:
        assert "exact rational arithmetic" in text and "max relative error 0.00e+00 at 200 random rational points" in text
