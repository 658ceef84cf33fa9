"""The index-set search: is there ``S`` with ``W_down[:,S] W_up[S,:] = T``?

With ``a_j = W_down[:,j]`` and ``b_j = W_up[j,:]`` the question is whether the linear system
``Σ_j c_j vec(a_j b_jᵀ) = vec(T)`` has a 0/1 solution ``c``. Exact weights are solved over the
rationals (python-flint when installed, else SymPy's ``DomainMatrix``; never ``Matrix.rank``).
The real least-squares residual is a certified lower bound on ``min_S ‖W_down[:,S]W_up[S,:] − T‖_F``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp
from sympy.polys.domains import QQ
from sympy.polys.matrices import DomainMatrix

__all__ = ["SearchResult", "exact_search", "MAX_ENUMERATION"]

#: Free variables enumerated exhaustively when the solution space is not a single point.
MAX_ENUMERATION = 22


@dataclass(frozen=True)
class SearchResult:
    """``index_set`` when found; otherwise ``proof`` says why none exists (or why undecided)."""

    found: bool | None  # True: S found; False: proved none; None: undecided
    index_set: tuple[int, ...]
    proof: str
    residual_squared: Fraction  # least-squares residual², exact
    target_norm_squared: Fraction
    method: str

    @property
    def distance(self) -> float:
        """The certified lower bound on ``min_S ‖W_down[:,S]W_up[S,:] − T‖_F``."""
        return float(self.residual_squared) ** 0.5

    @property
    def relative_distance(self) -> float:
        norm = float(self.target_norm_squared) ** 0.5
        return self.distance / norm if norm else float("inf") if self.distance else 0.0


def _q(x: sp.Expr) -> Fraction:
    r = sp.Rational(x)
    return Fraction(int(r.p), int(r.q))


def _system(w_up: sp.MatrixBase, w_down: sp.MatrixBase, target: sp.MatrixBase) -> tuple[list[list[Fraction]], list[Fraction]]:
    d, m = w_down.shape
    a = [[_q(w_down[i, j]) for i in range(d)] for j in range(m)]
    b = [[_q(w_up[j, k]) for k in range(d)] for j in range(m)]
    rows = [[a[j][i] * b[j][k] for j in range(m)] for i in range(d) for k in range(d)]
    rhs = [_q(target[i, k]) for i in range(d) for k in range(d)]
    return rows, rhs


def _rref(rows: list[list[Fraction]], rhs: list[Fraction]) -> tuple[list[list[Fraction]], list[int], str]:
    """Reduced row echelon form of ``[A | t]`` over Q, with the pivot columns."""
    m = len(rows[0]) if rows else 0
    aug = [r + [t] for r, t in zip(rows, rhs, strict=True)]
    try:
        import flint

        mat = flint.fmpq_mat([[flint.fmpq(x.numerator, x.denominator) for x in r] for r in aug])
        rref, rank = mat.rref()
        out = [[Fraction(int(rref[i, j].p), int(rref[i, j].q)) for j in range(m + 1)] for i in range(rank)]
        method = "python-flint fmpq_mat"
    except ImportError:
        dm = DomainMatrix([[QQ(x.numerator, x.denominator) for x in r] for r in aug], (len(aug), m + 1), QQ)
        rref, _ = dm.rref()
        out = [[Fraction(int(QQ.numer(x)), int(QQ.denom(x))) for x in r] for r in rref.to_list()]
        out = [r for r in out if any(r)]
        method = "SymPy DomainMatrix over QQ"
    pivots = []
    for r in out:
        pivots.append(next(j for j, x in enumerate(r) if x != 0))
    return out, pivots, method


def _least_squares_residual(rows: list[list[Fraction]], rhs: list[Fraction]) -> Fraction:
    """‖A c* − t‖² for a least-squares solution c*, exactly (normal equations over Q)."""
    m = len(rows[0]) if rows else 0
    gram = [[sum((r[i] * r[j] for r in rows), Fraction(0)) for j in range(m)] for i in range(m)]
    atb = [sum((r[i] * t for r, t in zip(rows, rhs, strict=True)), Fraction(0)) for i in range(m)]
    red, pivots, _ = _rref(gram, atb)
    c = [Fraction(0)] * m
    for r, p in zip(red, pivots, strict=True):
        if p < m:
            c[p] = r[m]
    res = Fraction(0)
    for r, t in zip(rows, rhs, strict=True):
        v = sum((x * y for x, y in zip(r, c, strict=True)), Fraction(0)) - t
        res += v * v
    return res


def exact_search(w_up: sp.MatrixBase, w_down: sp.MatrixBase, target: sp.MatrixBase) -> SearchResult:
    """Decide exactly whether some index set ``S`` has ``W_down[:,S] W_up[S,:] = target``."""
    rows, rhs = _system(w_up, w_down, target)
    m = w_up.rows
    norm2 = sum((t * t for t in rhs), Fraction(0))
    red, pivots, method = _rref(rows, rhs)
    residual = _least_squares_residual(rows, rhs)
    if m in pivots:
        return SearchResult(False, (), "the linear system Σ c_j vec(a_j b_jᵀ) = vec(T) has no real solution "
                            "(exact row reduction is inconsistent), so no 0/1 solution exists", residual, norm2, method)
    free = [j for j in range(m) if j not in pivots]
    if len(free) > MAX_ENUMERATION:
        return SearchResult(None, (), f"the solutions form an affine space with {len(free)} free coordinates; "
                            f"enumerating their 0/1 values (2^{len(free)}) is beyond the exact search limit "
                            f"(2^{MAX_ENUMERATION})", residual, norm2, method)
    for values in itertools.product((0, 1), repeat=len(free)):
        c = [Fraction(0)] * m
        for j, v in zip(free, values, strict=True):
            c[j] = Fraction(v)
        ok = True
        for r, p in zip(red, pivots, strict=True):
            val = r[m] - sum((r[j] * c[j] for j in free), Fraction(0))
            if val not in (0, 1):
                ok = False
                break
            c[p] = val
        if ok:
            s = tuple(j for j in range(m) if c[j] == 1)
            how = "the unique solution" if not free else f"one of the 2^{len(free)} 0/1 points of the solution space"
            return SearchResult(True, s, f"{how} is the 0/1 vector of S = {{{', '.join(map(str, s))}}} (exact)",
                                residual, norm2, method)
    if not free:
        return SearchResult(False, (), "the system has a unique real solution and it is not a 0/1 vector (exact)",
                            residual, norm2, method)
    return SearchResult(False, (), f"none of the 2^{len(free)} 0/1 assignments of the free coordinates gives a 0/1 "
                        "solution (exhaustive, exact)", residual, norm2, method)
