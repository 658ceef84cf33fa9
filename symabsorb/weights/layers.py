"""Witnesses of real layers: the flip with biases (Cor. R-aff-1) and its numeric check, for inline
(exact) weights and for float weights from a file, with the normalisation where the model has it.

``σ(−u) = σ(u) − 2c·u`` gives, for the units ``S`` flipped together with their hidden biases,
``B'(x) = B(x) − 2c W_S x − 2c W_down[:,S] b_S``; the output bias ``c' = c + 2c W_down[:,S] b_S``
absorbs the constant (MATH.md §8). A post-LN layer compares ``LN(·)`` of both sides, which depends
only on the centred vector ``P u``; the checks here compare ``P(B'(x) − R(x))``.
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import mpmath
import sympy as sp

from ..analysis.numeric import evaluate
from ..model.block import Block
from ..theory.skips import skip_matrix

__all__ = ["biased_flip", "exact_max_error", "float_biases_of_flip"]


def _col(v: sp.MatrixBase | None, n: int) -> sp.Matrix:
    return sp.Matrix(v) if v is not None else sp.zeros(n, 1)


def biased_flip(block: Block, index_set: tuple[int, ...], c: sp.Expr) -> tuple[sp.ImmutableMatrix, sp.ImmutableMatrix,
                                                                             sp.ImmutableMatrix, sp.ImmutableMatrix]:
    """Ungated block with inline weights: rows and hidden biases ``S`` negated, ``W_down`` kept, the
    output bias ``b_down + 2c W_down[:,S] b_S``. Returns ``(W'_up, W'_down, b'_up, b'_down)``."""
    assert block.w_up is not None and block.w_down is not None
    m = block.w_up.rows
    w_up = sp.Matrix(block.w_up)
    b_up = _col(block.b_up, m)
    b_down = _col(block.b_down, block.w_down.rows)
    for j in index_set:
        w_up[j, :] = -w_up[j, :]
        b_down += 2 * c * sp.Matrix(block.w_down[:, j]) * b_up[j]
        b_up[j] = -b_up[j]
    return sp.ImmutableMatrix(w_up), sp.ImmutableMatrix(block.w_down), sp.ImmutableMatrix(b_up), \
        sp.ImmutableMatrix(b_down)


def _mp(q: Any) -> Any:
    r = sp.Rational(q)
    return mpmath.mpf(int(r.p)) / int(r.q)


def _output(block: Block, w_up: Any, w_down: Any, b_up: Any, b_down: Any, xs: list[Any], digits: int) -> list[Any]:
    act = block.ungated_activation
    assert act is not None
    m, d = w_up.shape
    hidden = []
    for j in range(m):
        pre = mpmath.fsum(_mp(w_up[j, k]) * xs[k] for k in range(d)) + (_mp(b_up[j]) if b_up is not None else 0)
        hidden.append(evaluate(act.expr, pre, digits))
    return [mpmath.fsum(_mp(w_down[i, j]) * hidden[j] for j in range(m)) + (_mp(b_down[i]) if b_down is not None
                                                                           else 0) for i in range(w_down.rows)]


def exact_max_error(block: Block, w_up: Any, w_down: Any, b_up: Any, b_down: Any, points: int = 200,
                    seed: int = 0, digits: int = 40) -> float:
    """max over random rational x of ‖B'(x) − R(x)‖ / max(‖R(x)‖, 1) at ``digits`` digits, biases included
    (``block`` is the block of the ordinary question: for post-LN, the reduced one)."""
    rng = random.Random(seed)
    assert block.w_up is not None and block.w_down is not None
    d = block.w_up.cols
    skip = skip_matrix(block)
    assert skip is not None
    worst = 0.0
    with mpmath.workdps(digits):
        for _ in range(points):
            xs = [mpmath.mpf(rng.randint(-3000, 3000)) / 1000 for _ in range(d)]
            r = _output(block, block.w_up, block.w_down, block.b_up, block.b_down, xs, digits)
            r = [v + mpmath.fsum(_mp(skip[i, k]) * xs[k] for k in range(d)) for i, v in enumerate(r)]
            b = _output(block, w_up, w_down, b_up, b_down, xs, digits)
            num = max(abs(u - v) for u, v in zip(r, b, strict=True))
            worst = max(worst, float(num / max(max(abs(u) for u in r), 1)))
    return worst


def float_biases_of_flip(w_down: Any, b_up: Any, b_down: Any, index_set: tuple[int, ...], c: Fraction
                         ) -> tuple[Any, Any, bool]:
    """Float weights: the witness's hidden and output biases (``b_S`` negated, ``b_down + 2c W_down[:,S] b_S``),
    and whether the output bias is exactly representable in float64 (computed exactly, then rounded)."""
    import numpy as np

    m = w_down.shape[1]
    up = np.zeros(m) if b_up is None else np.array(b_up, dtype=np.float64, copy=True)
    down = np.zeros(w_down.shape[0]) if b_down is None else np.array(b_down, dtype=np.float64, copy=True)
    s = list(index_set)
    exact = True
    if s and b_up is not None:
        shift = [Fraction(0)] * w_down.shape[0]
        two_c = 2 * c
        for j in s:
            bj = Fraction(float(up[j]))
            if bj:
                col = w_down[:, j]
                for i in range(w_down.shape[0]):
                    if col[i]:
                        shift[i] += two_c * Fraction(float(col[i])) * bj
        for i in range(w_down.shape[0]):
            total = Fraction(float(down[i])) + shift[i]
            down[i] = float(total)
            exact = exact and Fraction(float(down[i])) == total
        up[s] = -up[s]
    return up, down, exact
