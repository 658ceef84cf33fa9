"""The least-squares floor of the exact index-set search is a rigorous lower bound, exact or by balls."""

from __future__ import annotations

import random
from fractions import Fraction

import sympy as sp

from symabsorb.weights import search


def _case(big: bool) -> tuple[sp.Matrix, sp.Matrix, sp.Matrix]:
    rng = random.Random(3)
    den = (lambda: 10**40 + rng.randrange(10**30)) if big else (lambda: rng.randrange(1, 9))
    up = sp.Matrix(2, 3, lambda i, j: sp.Rational(rng.randrange(1, 9), den()))
    down = sp.Matrix(3, 2, lambda i, j: sp.Rational(rng.randrange(1, 9), den()))
    return up, down, sp.Matrix([[1, 2, 0], [3, -4, 1], [0, 0, 5]])  # 9 equations, 2 unknowns


def test_a_huge_denominator_floor_is_a_lower_bound_of_the_exact_one(monkeypatch) -> None:
    up, down, target = _case(big=True)
    balls = search.exact_search(up, down, target)
    assert balls.found is False
    monkeypatch.setattr(search, "EXACT_RESIDUAL_BITS", 10**9)  # force the exact normal equations
    exact = search.exact_search(up, down, target)
    assert exact.residual_squared > 0
    assert 0 < balls.residual_squared <= exact.residual_squared
    assert balls.residual_squared >= exact.residual_squared * (1 - Fraction(1, 10**20))


def test_small_denominators_keep_the_exact_floor() -> None:
    up, down, target = _case(big=False)
    result = search.exact_search(up, down, target)
    assert result.found is False and result.residual_squared > 0
    a = sp.Matrix([[down[i, j] * up[j, k] for j in range(2)] for i in range(3) for k in range(3)])
    t = sp.Matrix([target[i, k] for i in range(3) for k in range(3)])
    c = (a.T * a).pinv() * a.T * t
    assert result.residual_squared == Fraction(str((t - a * c).dot(t - a * c)))
