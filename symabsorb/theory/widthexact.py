"""Theorem W on concrete weights (MATH §11): the exact minimal width by enumerating the ``3^m``
labellings, the bounds for large ``m``, the invertibility certificate, and the witness of the upper
bound.

Everything that proves is exact: ranks over Q (python-flint ``fmpq_mat``), ranks modulo a prime as
*lower* bounds of ranks over Q (a nonzero minor mod p is a nonzero minor over Q), sums of squares of
dyadic rationals computed exactly, comparisons of rationals. Floats only build a file block's
witness, which is then checked numerically like every file witness.

A labelling puts each unit ``i`` of ``B`` in ``S`` (flipped: one unit ``a_i σ(−w_i·x)``), in ``J`` (two
units on its line: any linear term ``β_i w_iᵀ``) or in neither (the unit kept); the linear part left,
``N_S Π_J`` with ``N_S = M + 2c W_S``, costs two units per rank. Width: ``m + |J| + 2 rank(N_S Π_J)``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

__all__ = ["WORK_CAP", "Labelling", "certify_invertible", "construct", "enumerate_width", "exact_rank_q",
           "labelling_width", "min_rank_over_s", "modular_rank_lower", "squared_frobenius_upper"]

#: The work (labellings × d² × (d + m)) above which the exact enumeration is not run: a count, not a time,
#: so the answer does not depend on the machine.
WORK_CAP = 20_000_000
#: The prime of the modular ranks (< 2^31 so that products of residues fit in 64 bits).
PRIME = 2147483629

Matrix = list[list[Fraction]]


@dataclass(frozen=True)
class Labelling:
    """``flipped`` = S, ``doubled`` = J (disjoint), ``extra`` = rank((M + 2c W_S) Π_J)."""

    flipped: tuple[int, ...]
    doubled: tuple[int, ...]
    extra: int

    def width(self, m: int) -> int:
        return m + len(self.doubled) + 2 * self.extra


def _fmpq_mat(rows: Sequence[Sequence[Fraction]], ncols: int) -> Any:
    import flint

    return flint.fmpq_mat(len(rows), ncols, [flint.fmpq(x.numerator, x.denominator) for r in rows for x in r])


def _to_fractions(m: Any) -> Matrix:
    return [[Fraction(int(x.p), int(x.q)) for x in row] for row in m.tolist()]


def exact_rank_q(rows: Sequence[Sequence[Fraction]], ncols: int) -> int:
    if not rows:
        return 0
    return int(_fmpq_mat(rows, ncols).rank())


def _outer(a: Sequence[Fraction], b: Sequence[Fraction]) -> Matrix:
    return [[x * y for y in b] for x in a]


def _add(x: Matrix, y: Matrix, scale: Fraction = Fraction(1)) -> Matrix:
    return [[p + scale * q for p, q in zip(rx, ry, strict=True)] for rx, ry in zip(x, y, strict=True)]


def _columns(w_down: Matrix) -> list[list[Fraction]]:
    return [list(col) for col in zip(*w_down, strict=True)]


def _n_s(w_up: Matrix, w_down: Matrix, skip: Matrix, c: Fraction, s: Sequence[int]) -> Matrix:
    cols = _columns(w_down)
    n = [list(r) for r in skip]
    for i in s:
        n = _add(n, _outer(cols[i], w_up[i]), 2 * c)
    return n


def labelling_width(w_up: Matrix, w_down: Matrix, skip: Matrix, c: Fraction, s: Sequence[int],
                    j: Sequence[int]) -> Labelling:
    """The labelling ``(S, J)`` with its exact ``rank(N_S Π_J) = rank([W_J; N_S]) − rank W_J``."""
    d = len(skip)
    n = _n_s(w_up, w_down, skip, c, s)
    wj = [w_up[i] for i in j]
    extra = exact_rank_q(wj + n, d) - exact_rank_q(wj, d)
    return Labelling(tuple(s), tuple(j), extra)


def enumeration_work(m: int, d: int) -> int:
    return 3 ** m * d * d * (d + m)


def enumerate_width(w_up: Matrix, w_down: Matrix, skip: Matrix, c: Fraction,
                    cap: int = WORK_CAP) -> tuple[Labelling, int] | None:
    """The best labelling (least width; ties: fewest flips, then fewest doubled lines, then the first in
    the enumeration order) and ``min_S rank N_S``; None when the work exceeds ``cap``."""
    import flint

    m, d = len(w_up), len(skip)
    if enumeration_work(m, d) > cap:
        return None
    cols = _columns(w_down)
    terms = [_fmpq_mat(_outer(cols[i], w_up[i]), d) for i in range(m)]
    base = _fmpq_mat(skip, d)
    two_c = flint.fmpq(2 * c.numerator, c.denominator)
    j_rank: dict[tuple[int, ...], tuple[Any, int]] = {(): (None, 0)}
    for size in range(1, m + 1):
        for j in itertools.combinations(range(m), size):
            stacked = _fmpq_mat([w_up[i] for i in j], d)
            j_rank[j] = (stacked, int(stacked.rank()))
    best: tuple[tuple[int, int, int], Labelling] | None = None
    min_rank_n = d
    for size_s in range(m + 1):
        for s in itertools.combinations(range(m), size_s):
            n = base
            for i in s:
                n = n + two_c * terms[i]
            rank_n = int(n.rank())
            min_rank_n = min(min_rank_n, rank_n)
            rest = [i for i in range(m) if i not in s]
            for size_j in range(len(rest) + 1):
                if best is not None and size_j > best[0][0]:
                    break
                for j in itertools.combinations(rest, size_j):
                    stacked, rank_j = j_rank[j]
                    if stacked is None:
                        extra = rank_n
                    elif rank_j < len(j):
                        continue  # a dependent row of J changes nothing but costs a unit: never optimal
                    else:
                        extra = int(_stack(stacked, n).rank()) - rank_j
                    key = (size_j + 2 * extra, size_s, size_j)
                    if best is None or key < best[0]:
                        best = (key, Labelling(s, j, extra))
    assert best is not None
    return best[1], min_rank_n


def _stack(top: Any, bottom: Any) -> Any:
    import flint

    rows = top.nrows() + bottom.nrows()
    entries = [top[i, k] for i in range(top.nrows()) for k in range(top.ncols())] + \
        [bottom[i, k] for i in range(bottom.nrows()) for k in range(bottom.ncols())]
    return flint.fmpq_mat(rows, top.ncols(), entries)


def min_rank_over_s(w_up: Matrix, w_down: Matrix, skip: Matrix, c: Fraction, cap: int = WORK_CAP) -> int | None:
    """``min_S rank(M + 2c W_S)`` over all ``2^m`` sets (None above ``cap``)."""
    import flint

    m, d = len(w_up), len(skip)
    if 2 ** m * d ** 3 > cap:
        return None
    cols = _columns(w_down)
    terms = [_fmpq_mat(_outer(cols[i], w_up[i]), d) for i in range(m)]
    two_c = flint.fmpq(2 * c.numerator, c.denominator)
    best = d
    for size in range(m + 1):
        for s in itertools.combinations(range(m), size):
            n = _fmpq_mat(skip, d)
            for i in s:
                n = n + two_c * terms[i]
            best = min(best, int(n.rank()))
            if best == 0:
                return 0
    return best


def construct(w_up: Matrix, w_down: Matrix, skip: Matrix, c: Fraction, lab: Labelling) -> tuple[Matrix, Matrix]:
    """The residual-free weights ``(W_up', W_down')`` of width ``lab.width(m)`` (exact rationals).

    Units ``i ∉ S``: row ``w_i``; ``i ∈ S``: row ``−w_i`` (``a_i σ(−t) = a_i σ(t) − 2c a_i t``). For ``J`` (rows
    independent): ``β = N W_Jᵀ (W_J W_Jᵀ)⁻¹`` so that ``N − β W_J = N Π_J``; unit ``i ∈ J`` gets the column
    ``a_i + β_i/(2c)`` and a second unit (row ``−w_i``, column ``−β_i/(2c)``). ``N Π_J = C R`` (pivot columns
    times the rref rows) adds the pairs ``±(C_k/2c) σ(±R_k x)``."""
    m, d = len(w_up), len(skip)
    two_c = 2 * c
    n = _n_s(w_up, w_down, skip, c, lab.flipped)
    cols = _columns(w_down)
    rows = [[-x for x in w_up[i]] if i in lab.flipped else list(w_up[i]) for i in range(m)]
    out_cols = [list(col) for col in cols]
    j = list(lab.doubled)
    if j:
        wj = _fmpq_mat([w_up[i] for i in j], d)
        gram_inv = (wj * wj.transpose()).inv()
        beta = _fmpq_mat(n, d) * wj.transpose() * gram_inv
        beta_f = _to_fractions(beta)
        residual = _to_fractions(_fmpq_mat(n, d) - beta * wj)
        for k, i in enumerate(j):
            b = [beta_f[r][k] / two_c for r in range(d)]
            out_cols[i] = [x + y for x, y in zip(out_cols[i], b, strict=True)]
            rows.append([-x for x in w_up[i]])
            out_cols.append([-y for y in b])
    else:
        residual = n
    rref, rank = _fmpq_mat(residual, d).rref()
    r_rows = _to_fractions(rref)[:rank]
    pivots = [next(k for k, x in enumerate(row) if x != 0) for row in r_rows]
    for k in range(rank):
        u = [residual[r][pivots[k]] / two_c for r in range(d)]
        rows.append(list(r_rows[k]))
        out_cols.append(u)
        rows.append([-x for x in r_rows[k]])
        out_cols.append([-x for x in u])
    assert len(rows) == lab.width(m)
    w_down_new = [[out_cols[k][r] for k in range(len(out_cols))] for r in range(d)]
    return rows, w_down_new


# ---- rigorous numbers for large blocks --------------------------------------------------------------


def _dyadic_parts(x: Any) -> tuple[Any, Any]:
    """Integer mantissas and exponents with ``x = mant · 2^exp`` exactly (float arrays)."""
    import numpy as np

    arr = np.asarray(x, dtype=np.float64)
    mant, expo = np.frexp(arr)
    ints = np.ldexp(mant, 53).astype(np.int64)  # exact: a float64 mantissa has 53 bits
    return ints, expo.astype(np.int64) - 53


def modular_rank_lower(x: Any, prime: int = PRIME) -> int:
    """A lower bound of ``rank x`` over Q (x a float or Fraction matrix): the rank of the exact integer
    multiple of ``x`` modulo ``prime``."""
    import flint
    import numpy as np

    if isinstance(x, list):
        den = math.lcm(*[v.denominator for row in x for v in row]) if x and x[0] else 1
        ints = [[int(v * den) % prime for v in row] for row in x]
        nrows, ncols = len(ints), len(ints[0]) if ints else 0
        flat = [v for row in ints for v in row]
    else:
        mant, expo = _dyadic_parts(x)
        nrows, ncols = mant.shape
        nonzero = mant != 0
        low = int(expo[nonzero].min()) if nonzero.any() else 0
        shift = np.where(nonzero, expo - low, 0)
        top = int(shift.max()) if shift.size else 0
        pow2 = np.array([pow(2, k, prime) for k in range(top + 1)], dtype=np.uint64)
        residues = (np.mod(mant, prime).astype(np.uint64) * pow2[shift]) % np.uint64(prime)
        flat = [int(v) for v in residues.ravel()]
    if not nrows or not ncols:
        return 0
    return int(flint.nmod_mat(nrows, ncols, flat, prime).rank())


def squared_frobenius_upper(x: Any) -> Fraction:
    """An upper bound (exact: the value itself) of ``‖x‖_F²`` for a float or Fraction matrix."""
    import numpy as np

    if isinstance(x, list):
        return sum((v * v for row in x for v in row), Fraction(0))
    arr = np.asarray(x, dtype=np.float64)
    mant, expo = _dyadic_parts(arr)
    odd = mant.copy()
    nz = odd != 0
    while True:  # strip the trailing zero bits: the significant bits of each mantissa
        even = nz & (odd % 2 == 0)
        if not even.any():
            break
        odd[even] //= 2
    tiny = np.abs(arr[nz]).min() if nz.any() else 1.0
    huge = np.abs(arr).max() if arr.size else 0.0
    if (np.abs(odd) < 2 ** 26).all() and tiny > 2.0 ** -400 and huge < 2.0 ** 400:
        # every square is exact in float64 (≤ 52 significant bits, no under/overflow); fsum is correctly
        # rounded, so the next float up is an upper bound of the exact sum
        total = math.fsum((arr * arr).ravel().tolist())
        return Fraction(math.nextafter(total, math.inf))
    total = 0
    low = int(expo.min()) if expo.size else 0
    for m_, e_ in zip(mant.ravel().tolist(), expo.ravel().tolist(), strict=True):
        if m_:
            total += (m_ * m_) << (2 * (e_ - low))
    return Fraction(total) * Fraction(2) ** (2 * low)


def certify_invertible(w_up: Any, w_down: Any, c: Fraction, sigma_min_sq_lower: Fraction) -> tuple[bool, str]:
    """Whether ``4c² ‖W_down‖_F² ‖W_up‖_F² < σ_min(M)²`` (then every ``N_S`` is invertible, by Weyl:
    ``‖2c W_S‖_2 ≤ 2|c| ‖W_down‖_2 ‖W_up‖_2 ≤ 2|c| ‖W_down‖_F ‖W_up‖_F``), compared exactly."""
    up, down = squared_frobenius_upper(w_up), squared_frobenius_upper(w_down)
    lhs = 4 * c * c * up * down
    ok = lhs < sigma_min_sq_lower
    text = (f"4c²‖W_down‖_F²‖W_up‖_F² = {float(lhs):.6g} {'<' if ok else '≥'} {float(sigma_min_sq_lower):.6g}, a "
            "lower bound of σ_min(M)² (compared as exact rationals)")
    return ok, text


def sigma_min_sq_lower(skip: Matrix) -> Fraction:
    """A lower bound of ``σ_min(M)²``: exact for a diagonal M (``min M_ii²``), else ``1/‖M⁻¹‖_F²`` (0 when M
    is singular), exact rationals."""
    d = len(skip)
    if all(skip[i][k] == 0 for i in range(d) for k in range(d) if i != k):
        return min((skip[i][i] ** 2 for i in range(d)), default=Fraction(0))
    mat = _fmpq_mat(skip, d)
    if int(mat.rank()) < d:
        return Fraction(0)
    inv = _to_fractions(mat.inv())
    return 1 / squared_frobenius_upper(inv)
