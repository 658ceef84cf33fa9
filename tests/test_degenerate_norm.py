"""Theorem D under a normalisation after the residual sum (referee of issue 30: F1-F7).

Theorem D decides the *reduced* block of Lemma PN (skip ``PM``, output weights ``P·W_down``, ``P = I − 11ᵀ/d``),
never the untransformed one. Independent oracle for the block ``n1`` of the referee's ``wln.absorb`` (ReLU,
``W_up = I``, ``W_down = [[1, 1], [1, 1]]``, ``M = I``, post-LN): ``P·W_down = 0``, so ``P(Mx + B(x)) = Px =
((x₁ − x₂)/2)(1, −1)``, a nonzero linear map, and LN(u) = LN(v) iff ``Pu = Pv`` (ε > 0). One unit ``b·relu(uᵀx)``
is never a nonzero linear function (it vanishes on a half-space), so width 1 fails; ``relu(t) − relu(−t) = t``
gives width 2: ``w* = 2`` (the untransformed block has ``w* = 4``).
"""

from __future__ import annotations

import random
from fractions import Fraction

import symabsorb
from symabsorb.theory.library import default_library
from symabsorb.weights.concrete import decide
from symabsorb.weights.width import width_witness

F = Fraction

WLN = """block n1 { activation: relu
  W_up: [[1, 0], [0, 1]]
  W_down: [[1, 1], [1, 1]]
  norm: post-ln }
absorb n1
width n1
"""


def _relu(t: Fraction) -> Fraction:
    return t if t > 0 else F(0)


def _centre(v: list[Fraction]) -> list[Fraction]:
    mean = sum(v, F(0)) / len(v)
    return [x - mean for x in v]


def test_post_ln_width_uses_the_reduced_block() -> None:
    rep = symabsorb.prove(symabsorb.load(WLN))
    absorb, width = rep.results
    assert width.verdict == "absorbable" and width.decided_by == "Theorem D"
    assert width.condition == "w* = 2"  # was w* = 4: Theorem D on the untransformed W_down
    block = symabsorb.load(WLN).resolved.blocks[0]
    base = decide(block, default_library())
    witness, why = width_witness(block, base, 2)
    assert witness is not None, why
    up = [[F(str(x)) for x in witness.w_up.tolist()[i]] for i in range(witness.w_up.rows)]
    down = [[F(str(x)) for x in witness.w_down.tolist()[i]] for i in range(witness.w_down.rows)]
    assert len(up) == 2
    rng = random.Random(7)
    for _ in range(50):  # P·B'(x) == P·(x + B(x)) exactly: the same LayerNorm output
        x = [F(rng.randint(-50, 50), rng.randint(1, 9)) for _ in range(2)]
        h = [_relu(sum((r[j] * x[j] for j in range(2)), F(0))) for r in up]
        b_prime = [sum((down[i][j] * h[j] for j in range(len(h))), F(0)) for i in range(2)]
        target = [x[i] + _relu(x[0]) + _relu(x[1]) for i in range(2)]
        assert _centre(b_prime) == _centre(target)
    assert absorb.verdict == "absorbable"


def test_post_rms_width_uses_the_block_without_the_norm() -> None:
    # degenerate (collinear rows of W_up): Theorem D decides both; the post-RMSNorm reduction is the block
    # without the norm, so the two width answers agree
    spec = WLN.replace("[[1, 0], [0, 1]]", "[[1, 0], [2, 0]]")
    normed = symabsorb.prove(symabsorb.load(spec.replace("post-ln", "post-rms"))).results[1]
    plain = symabsorb.prove(symabsorb.load(spec.replace("\n  norm: post-ln", ""))).results[1]
    assert plain.decided_by == normed.decided_by == "Theorem D"
    assert normed.condition == plain.condition
