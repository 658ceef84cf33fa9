"""Concrete weights for L-poly-rescale: an exact linear-feasibility check that finds ``D`` with
``c W_down D W_up = M`` (``D_ii ≠ −1`` for even ``k``, ``D_ii > −1`` for odd ``k``), builds the rescaling
witness and verifies it as a polynomial identity in exact arithmetic.

Floats only propose a point (the strict inequalities of odd ``k``); every claim is checked over Q.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import sympy as sp
from sympy.polys.domains import QQ
from sympy.polys.matrices import DomainMatrix

__all__ = ["RescaleResult", "rescale_witness"]


@dataclass(frozen=True)
class RescaleResult:
    """``found``: True (witness verified), False (the linear system has no solution: the sufficient
    condition fails), None (solutions exist but no admissible point was found)."""

    found: bool | None
    diagonal: tuple[sp.Expr, ...] = ()
    w_up: sp.ImmutableMatrix | None = None
    w_down: sp.ImmutableMatrix | None = None
    how: str = ""


def _solve(g: sp.Matrix, rhs: sp.Matrix) -> tuple[list[sp.Rational], list[list[sp.Rational]]] | None:
    """A particular solution and a nullspace basis of ``g·y = rhs`` over Q, or None if inconsistent."""
    aug = DomainMatrix.from_Matrix(sp.Matrix.hstack(g, rhs)).convert_to(QQ)
    red, pivots = aug.rref()
    red_m = red.to_Matrix()
    n = g.cols
    if n in pivots:
        return None
    particular = [sp.Rational(0)] * n
    for row, p in enumerate(pivots):
        particular[p] = red_m[row, n]
    free = [j for j in range(n) if j not in pivots]
    basis = []
    for f in free:
        v = [sp.Rational(0)] * n
        v[f] = sp.Rational(1)
        for row, p in enumerate(pivots):
            v[p] = -red_m[row, f]
        basis.append(v)
    return particular, basis


def solve_diagonal(w_up: sp.Matrix, w_down: sp.Matrix, skip: sp.Matrix,
                   c: sp.Expr) -> tuple[list[sp.Rational], list[list[sp.Rational]]] | None:
    """The diagonals ``D`` with ``c W_down D W_up = M``: ``d²`` linear equations in the ``m`` entries of ``D``
    (column ``i`` is ``c a_i b_iᵀ`` flattened), solved exactly by :func:`_solve`."""
    m, d = w_up.rows, w_up.cols
    g = sp.zeros(d * d, m)
    for i in range(m):
        outer = c * sp.Matrix(w_down[:, i]) * sp.Matrix(w_up[i, :])
        for r in range(d):
            for s in range(d):
                g[r * d + s, i] = outer[r, s]
    rhs = sp.Matrix([skip[r, s] for r in range(d) for s in range(d)])
    return _solve(g, rhs)


def _point(particular: list[sp.Rational], basis: list[list[sp.Rational]], t: list[sp.Rational]) -> list[sp.Rational]:
    return [particular[i] + sum((t[j] * basis[j][i] for j in range(len(basis))), sp.S.Zero)
            for i in range(len(particular))]


def _admissible(diag: list[sp.Rational], odd_k: bool) -> bool:
    return all((x > -1) if odd_k else (x != -1) for x in diag)


def _candidates(particular: list[sp.Rational], basis: list[list[sp.Rational]], odd_k: bool) -> list[list[sp.Rational]]:
    f = len(basis)
    out: list[list[sp.Rational]] = [[sp.Rational(0)] * f]
    if f == 0:
        return out
    if not odd_k:  # each hyperplane D_i = −1 meets a line in at most one point (or contains it)
        for direction in ([sp.Integer(2) ** j for j in range(f)], [sp.Integer(j + 1) for j in range(f)],
                          [sp.Integer(3) ** j for j in range(f)]):
            out.extend([[p * v for v in direction] for p in range(1, len(particular) + 3)])
        return out
    import numpy as np
    from scipy.optimize import linprog

    n = len(particular)
    # maximize s subject to D0_i + (N t)_i >= -1 + s, s <= 1, |t| <= 1e6
    a_ub = np.zeros((n, f + 1))
    b_ub = np.zeros(n)
    for i in range(n):
        for j in range(f):
            a_ub[i, j] = -float(basis[j][i])
        a_ub[i, f] = 1.0
        b_ub[i] = float(particular[i]) + 1.0
    cost = np.zeros(f + 1)
    cost[f] = -1.0
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, bounds=[(-1e6, 1e6)] * f + [(None, 1.0)], method="highs")
    if res.status == 0:
        for denom in (1, 10, 1000, 10**6):
            out.append([sp.Rational(Fraction(float(v)).limit_denominator(denom)) for v in res.x[:f]])
    return out


def rescale_witness(w_up: sp.MatrixBase, w_down: sp.MatrixBase, skip: sp.MatrixBase, c: sp.Expr, k: int,
                    q_coeff: sp.Expr) -> RescaleResult:
    """Decide ``c W_down D W_up = M`` exactly and build and verify the rescaling witness."""
    if not all(x.is_Rational for x in (*w_up, *w_down, *skip)) or not c.is_Rational:
        return RescaleResult(None, how="the weights, the skip or c are not all rational")
    m, d = w_up.rows, w_up.cols
    solved = solve_diagonal(w_up, w_down, skip, c)
    if solved is None:
        return RescaleResult(False, how=f"the linear system c W_down D W_up = M ({d * d} equations, {m} unknowns) is "
                                        "inconsistent over Q (reduced echelon form)")
    particular, basis = solved
    odd_k = k % 2 == 1
    for t in _candidates(particular, basis, odd_k):
        diag = _point(particular, basis, t)
        if not _admissible(diag, odd_k):
            continue
        lam = []
        for x in diag:
            y = 1 + x  # λ^(1−k) = y
            lam.append(sp.real_root(1 / y, k - 1) if not odd_k else (1 / y) ** sp.Rational(1, k - 1))
        new_up = sp.ImmutableMatrix(sp.diag(*lam) * sp.Matrix(w_up))
        new_down = sp.ImmutableMatrix(sp.Matrix(w_down) * sp.diag(*[v ** (-k) for v in lam]))
        if _verify(w_up, w_down, new_up, new_down, skip, c, k, q_coeff):
            cond = "D_ii > −1" if odd_k else "D_ii ≠ −1"
            return RescaleResult(True, tuple(diag), new_up, new_down,
                                 f"D = diag({', '.join(sp.sstr(x) for x in diag)}) solves c W_down D W_up = M exactly "
                                 f"with {cond}; λ_i = (1 + D_ii)^(1/(1−k)); B'(x) − Mx − B(x) expands to 0 exactly")
    return RescaleResult(None, how="the solutions of the linear system were searched at finitely many points and none "
                                   "was admissible")


def _verify(w_up: sp.MatrixBase, w_down: sp.MatrixBase, new_up: sp.MatrixBase, new_down: sp.MatrixBase,
            skip: sp.MatrixBase, c: sp.Expr, k: int, q_coeff: sp.Expr) -> bool:
    xs = sp.Matrix(sp.symbols(f"x0:{w_up.cols}"))

    def block(up: sp.MatrixBase, down: sp.MatrixBase) -> sp.Matrix:
        pre = sp.Matrix(up) * xs
        return sp.Matrix(down) * pre.applyfunc(lambda u: c * u + q_coeff * u**k)

    diff = block(new_up, new_down) - sp.Matrix(skip) * xs - block(w_up, w_down)
    return all(sp.expand(e) == 0 for e in diff)
