"""Concrete weights for Cor. R-pos: the exact criterion decided by enumerating the set ``N`` of
flipped units and an exact linear-feasibility check per ``N`` (MATH §13).

For each ``N``: the degree-``k`` condition ``(A + B)·Σ_{i∈N} a_i (w_i·x)^k ≡ 0`` is expanded exactly;
the solutions of ``c W_down D W_up = M`` form an affine space over Q (reduced echelon form); a point
with the strict sign conditions is searched (the particular solution, then a float LP's max-slack
point, rounded, re-checked exactly). ``not-absorbable`` only when every ``N`` is refuted exactly (the
degree condition fails, the system is inconsistent, or its unique solution violates a bound).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy as sp

from .polyrescale import _point, solve_diagonal

__all__ = ["MAX_RPOS_WIDTH", "WITNESS_CHECK", "RPosResult", "checked_residual", "max_residual", "rpos_decide"]

#: Widths up to which the 2^m sets N are enumerated.
MAX_RPOS_WIDTH = 10


@dataclass(frozen=True)
class RPosResult:
    found: bool | None  # True: witness; False: every N refuted exactly; None: undecided
    flipped: tuple[int, ...] = ()
    diagonal: tuple[sp.Expr, ...] = ()
    scales: tuple[sp.Expr, ...] = ()
    how: str = ""


def _admissible(diag: list[sp.Expr], flipped: set[int], odd_k: bool) -> bool:
    return all((x < -1) if (i in flipped and odd_k) else (x > -1) for i, x in enumerate(diag))


def _lp_candidates(particular: list[sp.Rational], basis: list[list[sp.Rational]], flipped: set[int],
                   odd_k: bool) -> list[list[sp.Rational]]:
    f = len(basis)
    out: list[list[sp.Rational]] = [[sp.Rational(0)] * f]
    if f == 0:
        return out
    import numpy as np
    from scipy.optimize import linprog

    n = len(particular)
    # maximise s with sgn_i·(D_i + 1) >= s (sgn_i = −1 for flipped units with odd k), s <= 1
    a_ub = np.zeros((n, f + 1))
    b_ub = np.zeros(n)
    for i in range(n):
        sgn = -1.0 if (i in flipped and odd_k) else 1.0
        for j in range(f):
            a_ub[i, j] = -sgn * float(basis[j][i])
        a_ub[i, f] = 1.0
        b_ub[i] = sgn * (float(particular[i]) + 1.0)
    cost = np.zeros(f + 1)
    cost[f] = -1.0
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, bounds=[(-1e6, 1e6)] * f + [(None, 1.0)], method="highs")
    if res.status == 0:
        for denom in (1, 10, 1000, 10**6):
            out.append([sp.Rational(Fraction(float(v)).limit_denominator(denom)) for v in res.x[:f]])
    return out


def _scale(x: sp.Expr, flipped: bool, k: int) -> sp.Expr:
    """μ with the remainder's D-value x: μ^(1−k) = 1 + x (unflipped), |μ|^(1−k) = 1 + x (flipped, k
    even) or −1 − x (flipped, k odd), μ < 0 when flipped."""
    base = (-1 - x) if (flipped and k % 2 == 1) else (1 + x)
    mag = base ** sp.Rational(1, 1 - k)
    return -mag if flipped else mag


def rpos_decide(w_up: sp.MatrixBase, w_down: sp.MatrixBase, skip: sp.MatrixBase, c: sp.Expr, k: int,
                a_plus_b: sp.Expr) -> RPosResult:
    if not all(x.is_Rational for x in (*w_up, *w_down, *skip)) or not c.is_Rational or not a_plus_b.is_Rational:
        return RPosResult(None, how="the weights, the skip or the coefficients are not all rational")
    m, d = w_up.rows, w_up.cols
    if m > MAX_RPOS_WIDTH:
        return RPosResult(None, how=f"width {m} > {MAX_RPOS_WIDTH}: the 2^m sets N are not enumerated")
    solved = solve_diagonal(w_up, w_down, skip, c)
    if solved is None:
        return RPosResult(False, how=f"c W_down D W_up = M ({d * d} equations, {m} unknowns) is inconsistent over Q")
    particular, basis = solved
    xs = sp.Matrix(sp.symbols(f"x0:{d}"))
    odd_k = k % 2 == 1
    undecided = False
    for size in range(m + 1):
        for subset in itertools.combinations(range(m), size):
            flipped = set(subset)
            if a_plus_b != 0 and flipped:
                deg = sum((sp.Matrix(w_down[:, i]) * (sp.Matrix(w_up[i, :]) * xs)[0] ** k for i in flipped),
                          sp.zeros(d, 1))
                if any(sp.expand(e) != 0 for e in deg):
                    continue  # the degree-k condition fails exactly
            for t in _lp_candidates(particular, basis, flipped, odd_k):
                diag = _point(particular, basis, t)
                if _admissible(diag, flipped, odd_k):
                    scales = tuple(_scale(x, i in flipped, k) for i, x in enumerate(diag))
                    return RPosResult(True, tuple(sorted(flipped)), tuple(diag), scales,
                                      f"N = {{{', '.join(str(i) for i in sorted(flipped))}}}, D = diag("
                                      f"{', '.join(sp.sstr(x) for x in diag)}) solves c W_down D W_up = M exactly "
                                      "with the sign conditions" + ("" if a_plus_b == 0 or not flipped else
                                                                    " and the degree-k condition"))
            if basis:
                undecided = True  # a solution space with no admissible point found: not a proof
            # unique solution violating a bound: this N is refuted exactly
    if undecided:
        return RPosResult(None, how="some solution spaces were searched at finitely many points, none admissible")
    return RPosResult(False, how="for every set N of flipped units the degree-k condition fails exactly or the unique "
                                 "solution D of c W_down D W_up = M violates a sign condition")


def max_residual(block: Any, new_up: sp.MatrixBase, new_down: sp.MatrixBase, m_skip: sp.MatrixBase) -> float | None:
    """The largest |B'(x) − Mx − B(x)| over a few rational points, by rigorous enclosures (None: not enclosed)."""
    from ..analysis.enclosure import NotNumeric, enclose_constant
    from ..model.activation import Activation
    from ..model.functions import Z

    expr = block.activation.expr
    assert isinstance(block.activation, Activation) and block.w_up is not None and block.w_down is not None
    worst = 0.0
    d = block.w_up.cols
    for n in range(6):
        x = sp.Matrix([sp.Rational((7 * n + 3 * j) % 11 - 5, 3 + j) for j in range(d)])

        def out(up: sp.MatrixBase, down: sp.MatrixBase, x: sp.Matrix) -> sp.Matrix:
            pre = sp.Matrix(up) * x
            return sp.Matrix(down) * pre.applyfunc(lambda u: expr.xreplace({Z: u}))

        diff = out(new_up, new_down, x) - sp.Matrix(m_skip) * x - out(block.w_up, block.w_down, x)
        for e in diff:
            try:
                ball = enclose_constant(e, 256)
            except NotNumeric:
                return None
            worst = max(worst, float(abs(ball.value).upper()))
    return worst


#: A rescaling witness proved exactly (the exact solution D and the proved symmetry identity) is also
#: evaluated by enclosures; a residual above this is a bug, and the verdict is then withheld. This is a
#: check after the proof, never the proof.
WITNESS_CHECK = 1e-20


def checked_residual(block: Any, new_up: sp.MatrixBase, new_down: sp.MatrixBase, m_skip: sp.MatrixBase) -> float | None:
    """:func:`max_residual` when it is at most :data:`WITNESS_CHECK`, else None (decide nothing)."""
    err = max_residual(block, new_up, new_down, m_skip)
    return None if err is None or err > WITNESS_CHECK else err
