"""Flip witnesses: the residual-free weights that absorb a block, and their verification."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import mpmath
import sympy as sp

from ..analysis.numeric import evaluate
from ..model.activation import GatedActivation
from ..model.block import Block
from ..theory.derivation import Witness
from ..theory.skips import skip_matrix

__all__ = ["block_output", "flip_witness", "max_relative_error"]


def flip_witness(block: Block, index_set: tuple[int, ...]) -> tuple[sp.ImmutableMatrix, sp.ImmutableMatrix,
                                                                     sp.ImmutableMatrix | None]:
    """Ungated: negate the rows ``S`` of ``W_up``. Gated: negate the rows ``S`` of ``W_gate`` and
    the columns ``S`` of ``W_down``."""
    assert block.w_up is not None and block.w_down is not None
    w_up, w_down = sp.Matrix(block.w_up), sp.Matrix(block.w_down)
    w_gate = sp.Matrix(block.w_gate) if block.w_gate is not None else None
    for j in index_set:
        if isinstance(block.activation, GatedActivation):
            assert w_gate is not None
            w_gate[j, :] = -w_gate[j, :]
            w_down[:, j] = -w_down[:, j]
        else:
            w_up[j, :] = -w_up[j, :]
    return (sp.ImmutableMatrix(w_up), sp.ImmutableMatrix(w_down),
            sp.ImmutableMatrix(w_gate) if w_gate is not None else None)


def block_output(block: Block, w_up: sp.MatrixBase, w_down: sp.MatrixBase, w_gate: sp.MatrixBase | None,
                 x: list[Fraction], residual: bool, digits: int = 40) -> list[Any]:
    """``B(x)`` (or ``Mx + B(x)``) at a rational point, evaluated with mpmath at ``digits``."""
    with mpmath.workdps(digits):
        xs = [mpmath.mpf(v.numerator) / v.denominator for v in x]
        m, d = w_up.shape
        hidden = []
        act = block.activation
        for j in range(m):
            pre = mpmath.fsum(mpmath.mpf(int(sp.Rational(w_up[j, k]).p)) / int(sp.Rational(w_up[j, k]).q) * xs[k]
                              for k in range(d))
            if isinstance(act, GatedActivation):
                assert w_gate is not None
                g_in = mpmath.fsum(mpmath.mpf(int(sp.Rational(w_gate[j, k]).p)) / int(sp.Rational(w_gate[j, k]).q)
                                   * xs[k] for k in range(d))
                hidden.append(evaluate(act.gate.expr, g_in, digits) * pre)
            else:
                hidden.append(evaluate(act.expr, pre, digits))
        out = []
        skip = skip_matrix(block) if residual else None
        for i in range(d):
            v = mpmath.fsum(mpmath.mpf(int(sp.Rational(w_down[i, j]).p)) / int(sp.Rational(w_down[i, j]).q) * hidden[j]
                            for j in range(m))
            if skip is not None:
                v += mpmath.fsum(mpmath.mpf(int(sp.Rational(skip[i, k]).p)) / int(sp.Rational(skip[i, k]).q) * xs[k]
                                 for k in range(d))
            out.append(v)
        return out


def max_relative_error(block: Block, witness: Witness, points: int = 200, seed: int = 0) -> float:
    """max over random points of ‖B'(x) − R(x)‖ / max(‖R(x)‖, 1) with exact rational inputs."""
    rng = random.Random(seed)
    assert block.w_up is not None
    d = block.w_up.cols
    worst = 0.0
    for _ in range(points):
        x = [Fraction(rng.randint(-3000, 3000), 1000) for _ in range(d)]
        r = block_output(block, block.w_up, block.w_down, block.w_gate, x, residual=True)  # type: ignore[arg-type]
        b = block_output(block, witness.w_up, witness.w_down, witness.w_gate, x, residual=False)
        num = max(abs(u - v) for u, v in zip(r, b, strict=True))
        den = max(max(abs(u) for u in r), 1)
        worst = max(worst, float(num / den))
    return worst
