"""Issue 20, depth (MATH §12): Theorem D1 on concrete stacks, (H) certified exactly (norm route or the 2^m
determinants), Lemma S and Lemma T stated in the open deep case. Every "not absorbable" has a test
that would make it false: a singular piece, a wide first block, a gated or leaky block, biases."""

from __future__ import annotations

import itertools
import random

import pytest
import sympy as sp

from symabsorb.model import resolve_text
from symabsorb.theory.derivation import HypStatus, Verdict
from symabsorb.theory.hyp_depth import certify_h
from tests.helpers import prove

SPEC = """
activation leaky(z) = max(z, z/2)
block r1 { activation: relu dim: 2 width: 3 skip: [[4, 0], [0, 4]]
    W_up: [[1, 0], [0, 1], [1, 1]] W_down: [[1, 0, 1/2], [0, 1, -1/2]] }
block r2 { activation: relu dim: 2 width: 2 W_up: [[1, 1], [1, -1]] W_down: [[1/4, 0], [0, 1/4]] }
block g1 { activation: gelu dim: 2 width: 3 skip: [[4, 0], [0, 4]]
    W_up: [[1, 0], [0, 1], [1, 1]] W_down: [[1, 0, 1/2], [0, 1, -1/2]] }
block s1 { activation: silu dim: 2 width: 3 skip: [[4, 0], [0, 4]]
    W_up: [[1, 0], [0, 1], [1, 1]] W_down: [[1, 0, 1/2], [0, 1, -1/2]] }
block wide { activation: relu dim: 2 width: 4 W_up: [[1, 0], [0, 1], [1, 1], [1, -1]] W_down: [[1/9, 0, 0, 0], [0, 1/9, 0, 0]] }
block sing { activation: relu dim: 2 width: 2 W_up: [[1, 0], [0, 1]] W_down: [[-1, 0], [0, 1]] }
block exact { activation: relu dim: 2 width: 2 W_up: [[1, 0], [0, 1]] W_down: [[1, 0], [0, 1]] }
block lk { activation: leaky dim: 2 width: 3 skip: [[4, 0], [0, 4]]
    W_up: [[1, 0], [0, 1], [1, 1]] W_down: [[1, 0, 1/2], [0, 1, -1/2]] }
block sw { activation: swiglu dim: 2 width: 3
    W_gate: [[1, 0], [0, 1], [1, 1]]
    W_up: [[1, 0], [0, 1], [1, 1]] W_down: [[1/9, 0, 0], [0, 1/9, 0]] }
block zero { activation: relu dim: 2 width: 3 skip: [[1, 2], [0, 1]]
    W_up: [[0, 0], [0, 0], [0, 0]] W_down: [[0, 0, 0], [0, 0, 0]] }
block biased { activation: relu dim: 2 width: 3 bias: true skip: [[4, 0], [0, 4]]
    W_up: [[1, 0], [0, 1], [1, 1]] W_down: [[1, 0, 1/2], [0, 1, -1/2]] }
stack s = [r1, r2]
stack sg = [g1, r2]
stack ssilu = [s1, r2]
stack srep = r1 ^ 3
stack sw2 = [wide, r2]
stack ss = [r1, sing]
stack se = [exact, r2]
stack sl = [lk, r2]
stack sgate = [sw, r2]
stack sz = [zero, r2]
stack sb = [biased, r2]
block relu_sym { activation: relu }
stack deep = relu_sym ^ L
"""


def _stacks():  # type: ignore[no-untyped-def]
    return {s.name: s for s in resolve_text(SPEC).stacks}


@pytest.fixture(scope="module")
def stacks():  # type: ignore[no-untyped-def]
    return _stacks()


@pytest.mark.parametrize("name", ["s", "sg", "ssilu", "srep", "se", "sz"])
def test_d1_decides_narrow_stacks_with_certified_h(stacks, name: str) -> None:  # type: ignore[no-untyped-def]
    d = prove(stacks[name])
    assert (d.verdict, d.decided_by, d.scope) == (Verdict.NOT_ABSORBABLE, "thm-D1", "these weights")


@pytest.mark.parametrize("name", ["sw2", "ss", "sl", "sgate", "sb", "deep"])
def test_d1_does_not_apply_outside_its_hypotheses(stacks, name: str) -> None:  # type: ignore[no-untyped-def]
    d = prove(stacks[name])
    assert d.decided_by != "thm-D1"
    assert d.verdict is not Verdict.NOT_ABSORBABLE


def test_the_exact_route_certifies_where_the_norm_route_cannot(stacks) -> None:  # type: ignore[no-untyped-def]
    block = stacks["se"].blocks[0]  # M = I, W = U = I: ‖W‖‖U‖ = 1 = σ_min(M); pieces I + D are invertible
    status, how = certify_h(block, sp.Integer(1), [10_000])
    assert status is HypStatus.PROVED and "determinants" in how
    assert certify_h(block, sp.Integer(1), [1])[0] is HypStatus.UNKNOWN  # over the work cap: undecided


def test_a_singular_piece_refutes_h(stacks) -> None:  # type: ignore[no-untyped-def]
    status, how = certify_h(stacks["ss"].blocks[1], sp.Integer(1), [10_000])
    assert status is HypStatus.REFUTED and "pattern" in how


def test_the_deep_open_problem_states_lemma_s_and_lemma_t(stacks) -> None:  # type: ignore[no-untyped-def]
    d = prove(stacks["deep"])
    assert d.verdict is Verdict.OPEN and d.decided_by == "open-deep"
    text = " ".join(s.text for s in d.steps)
    assert "[lemma-S]" in text and "[lemma-T]" in text and "semialgebraic" in text


def test_h_fails_whenever_the_first_block_is_flip_absorbable() -> None:
    """Consistency of D1 with Theorem 8: a ReLU block with W_S = −M is absorbable (σ(−z) = σ(z) − z), and
    then the piece M + W D_S U = M + W_S = 0 is singular, so (H) never certifies such a block."""
    from symabsorb.model import activation_from_text
    from symabsorb.model.block import Block, Skip

    rng = random.Random(11)
    relu = activation_from_text("max(0, z)")
    for _ in range(30):
        d, m = 2, rng.randint(2, 3)
        u = sp.Matrix(m, d, lambda i, j: sp.Rational(rng.randint(-3, 3), rng.randint(1, 3)))
        w = sp.Matrix(d, m, lambda i, j: sp.Rational(rng.randint(-3, 3), rng.randint(1, 3)))
        size = rng.randint(1, m)
        s_set = rng.sample(range(m), size)
        w_s = sum((w[:, i] * u[i, :] for i in s_set), sp.zeros(d, d))
        block = Block("b", relu, d, m, Skip("matrix", matrix=sp.ImmutableMatrix(-w_s)), sp.ImmutableMatrix(u),
                      sp.ImmutableMatrix(w))
        status, _ = certify_h(block, sp.Integer(1), [10_000])
        assert status is not HypStatus.PROVED


def test_the_norm_route_is_a_rigorous_bound() -> None:
    """Whenever the norm route certifies, every one of the 2^m pieces is invertible (exact determinants)."""
    from symabsorb.model import activation_from_text
    from symabsorb.model.block import Block, Skip
    from symabsorb.theory.hyp_depth import _norm_route

    rng = random.Random(3)
    relu = activation_from_text("max(0, z)")
    certified = 0
    for _ in range(40):
        d, m = 2, 3
        u = sp.Matrix(m, d, lambda i, j: sp.Rational(rng.randint(-4, 4), 4))
        w = sp.Matrix(d, m, lambda i, j: sp.Rational(rng.randint(-4, 4), 8))
        mm = sp.Matrix(d, d, lambda i, j: sp.Rational(rng.randint(-6, 6), 2))
        if not _norm_route(mm, w, u, sp.Integer(1)):
            continue
        certified += 1
        for bits in itertools.product((0, 1), repeat=m):
            assert (mm + w * sp.diag(*bits) * u).det() != 0
        block = Block("b", relu, d, m, Skip("matrix", matrix=sp.ImmutableMatrix(mm)), sp.ImmutableMatrix(u),
                      sp.ImmutableMatrix(w))
        assert certify_h(block, sp.Integer(1), [0])[0] is HypStatus.PROVED
    assert certified >= 3


def test_a_hyper_connection_stack_is_not_decided_by_d1() -> None:
    spec = """
block h { activation: relu dim: 1 width: 1 skip: hyper(n: 2, mix: [[1, 1], [0, 1]]) W_up: [[1, 0]] W_down: [[1], [0]] }
block h2 { activation: relu dim: 1 width: 1 skip: hyper(n: 2, mix: [[2, 0], [0, 2]]) W_up: [[0, 1]] W_down: [[0], [1]] }
stack hs = [h, h2]
"""
    (stack,) = resolve_text(spec).stacks
    d = prove(stack)
    assert d.decided_by != "thm-D1"
