"""The exact search proves "no S" for an inconsistent system from the m x m normal equations (Gram
matrices' Hadamard product, issue 29), never forming the d² x m system: the same exact residual and
the same answer as the row reduction of the full system."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest
import sympy as sp

from symabsorb.weights import search

pytest.importorskip("flint")


def _block(d: int, m: int, seed: int, rank_up: int | None = None) -> tuple[sp.Matrix, sp.Matrix, sp.Matrix]:
    rng = random.Random(seed)
    up = sp.Matrix(m, d, lambda i, j: sp.Rational(rng.randint(-3, 3), rng.randint(1, 2)))
    if rank_up is not None:  # dependent rows: the system's columns are dependent too
        for j in range(rank_up, m):
            up[j, :] = up[j % rank_up, :] * rng.choice([1, 2, -1])
    down = sp.Matrix(d, m, lambda i, j: sp.Rational(rng.randint(-3, 3), rng.randint(1, 3)))
    target = sp.Matrix(d, d, lambda i, j: sp.Rational(rng.randint(-2, 2), rng.randint(1, 4)))
    return up, down, target


def _full_system(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search, "_normal_residual", lambda *args, **kwargs: Fraction(0))  # as before


@pytest.mark.parametrize(("d", "m", "seed", "rank_up"), [(3, 4, 1, None), (4, 16, 2, None), (4, 16, 3, 5),
                                                         (2, 6, 4, 2), (5, 8, 5, None)])
def test_the_answer_and_residual_are_those_of_the_full_system(d: int, m: int, seed: int, rank_up: int | None,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    up, down, target = _block(d, m, seed, rank_up)
    fast = search.exact_search(up, down, target)
    with monkeypatch.context() as patch:
        _full_system(patch)
        full = search.exact_search(up, down, target)
    assert fast == full
    if full.found is False and full.residual_squared > 0:
        a = sp.Matrix([[down[i, j] * up[j, k] for j in range(m)] for i in range(d) for k in range(d)])
        t = sp.Matrix([target[i, k] for i in range(d) for k in range(d)])
        c = a.pinv() * t
        assert fast.residual_squared == Fraction(str(sp.nsimplify((t - a * c).dot(t - a * c))))


def test_an_inconsistent_system_is_never_formed(monkeypatch: pytest.MonkeyPatch) -> None:
    up, down, target = _block(8, 32, 7)

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the d² x m system was formed")

    monkeypatch.setattr(search._Flint, "outer_system", refused)
    monkeypatch.setattr(search, "_quick_planted", lambda *args: None)
    result = search.exact_search(up, down, target)
    assert result.found is False and result.residual_squared > 0


def test_a_consistent_system_still_takes_the_full_reduction() -> None:
    up, down, _ = _block(3, 6, 9)
    s = (0, 2, 5)
    target = sp.Matrix(3, 3, lambda i, k: sum((down[i, j] * up[j, k] for j in s), sp.Integer(0)))
    result = search.exact_search(up, down, target)
    assert result.found is True
    got = sp.Matrix(3, 3, lambda i, k: sum((down[i, j] * up[j, k] for j in result.index_set), sp.Integer(0)))
    assert got == target
