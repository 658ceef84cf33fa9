"""The index-set search for float weights: the m x m Gram system instead of the d² x m one.

``G = (W_downᵀ W_down) ⊙ (W_up W_upᵀ)`` and ``r_j = a_jᵀ T b_j``. When Cholesky succeeds, ``G`` is
nonsingular and the least-squares solution ``c`` is unique: ``S`` exists iff ``c`` is a 0/1 vector
with zero residual. The residual ``‖T‖² − cᵀr`` is the least-squares distance, a lower bound on
``min_S ‖W_down[:,S] W_up[S,:] − T‖_F``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["FloatSearch", "Nondegeneracy", "float_nondegeneracy", "float_search"]

#: Relative residual below which a rounded 0/1 vector is accepted (stated in every report).
ACCEPT_RTOL = 1e-9
#: Cosine above which two rows of W_up count as collinear (stated in every report).
COLLINEAR_COS = 1 - 1e-9


@dataclass(frozen=True)
class FloatSearch:
    found: bool | None
    index_set: tuple[int, ...]
    proof: str
    distance: float
    relative_distance: float
    method: str
    recheck_residual: float | None = None


@dataclass(frozen=True)
class Nondegeneracy:
    holds: bool
    reason: str
    worst_pair: tuple[int, int] | None
    worst_cos: float
    min_row_norm: float
    min_col_norm: float


def float_nondegeneracy(w_up: Any, w_down: Any) -> Nondegeneracy:
    import numpy as np

    rows = np.linalg.norm(w_up, axis=1)
    cols = np.linalg.norm(w_down, axis=0)
    if (rows == 0).any():
        j = int(np.argmin(rows))
        return Nondegeneracy(False, f"row {j} of W_up is zero", None, 1.0, float(rows.min()), float(cols.min()))
    if (cols == 0).any():
        j = int(np.argmin(cols))
        return Nondegeneracy(False, f"column {j} of W_down is zero", None, 0.0, float(rows.min()), float(cols.min()))
    unit = w_up / rows[:, None]
    cos = np.abs(unit @ unit.T)
    np.fill_diagonal(cos, 0.0)
    i, j = (int(x) for x in np.unravel_index(int(np.argmax(cos)), cos.shape))
    worst = float(cos[i, j])
    pair = (min(i, j), max(i, j))
    if worst > COLLINEAR_COS:
        return Nondegeneracy(False, f"rows {pair[0]} and {pair[1]} of W_up are collinear (|cos| = {worst:.12f})",
                             pair, worst, float(rows.min()), float(cols.min()))
    return Nondegeneracy(True, f"rows of W_up nonzero (min norm {rows.min():.3g}) and pairwise non-collinear (largest "
                         f"|cos| = {worst:.6f} for rows {pair[0]}, {pair[1]}, below 1 - 1e-9 far beyond float64 "
                         f"error); columns of W_down nonzero (min norm {cols.min():.3g})", pair, worst,
                         float(rows.min()), float(cols.min()))


def float_search(w_up: Any, w_down: Any, target: Any) -> FloatSearch:
    import numpy as np

    t_norm = float(np.linalg.norm(target))
    gram = (w_down.T @ w_down) * (w_up @ w_up.T)
    rhs = np.einsum("jk,jk->j", w_down.T @ target, w_up)
    try:
        chol = np.linalg.cholesky(gram)
        y = np.linalg.solve(chol, rhs)
        c = np.linalg.solve(chol.T, y)
        method = "float64 Gram system, Cholesky"
        singular = False
    except np.linalg.LinAlgError:
        c, *_ = np.linalg.lstsq(gram, rhs, rcond=None)
        method = "float64 Gram system (singular: minimum-norm least squares)"
        singular = True
    res2 = max(t_norm**2 - float(c @ rhs), 0.0)
    distance = res2**0.5
    rel = distance / t_norm if t_norm else 0.0
    rounded = (c > 0.5).astype(float)
    s = tuple(int(j) for j in np.flatnonzero(rounded))
    recheck = float(np.linalg.norm(w_down[:, list(s)] @ w_up[list(s), :] - target)) if s else t_norm
    if recheck <= ACCEPT_RTOL * max(t_norm, 1.0):
        return FloatSearch(True, s, f"rounding the least-squares solution gives S with |S| = {len(s)}; recheck "
                           f"‖W_down[:,S] W_up[S,:] − T‖_F = {recheck:.3e} (accepted below {ACCEPT_RTOL:g}·‖T‖)",
                           distance, rel, method, recheck)
    if not singular:
        return FloatSearch(False, (), f"G is positive definite, so the least-squares solution is unique; it is not a "
                           f"0/1 vector (max |c_j − round(c_j)| = {float(np.max(np.abs(c - np.round(c)))):.3g}) and "
                           f"its residual is {distance:.6g}, so no index set exists", distance, rel, method, recheck)
    found = milp_candidate(gram, rhs, scale=max(float(np.abs(gram).max()), 1.0))
    if found is not None:
        s = found
        recheck = float(np.linalg.norm(w_down[:, list(s)] @ w_up[list(s), :] - target)) if s else t_norm
        if recheck <= ACCEPT_RTOL * max(t_norm, 1.0):
            return FloatSearch(True, s, f"G is singular; a mixed-integer program (HiGHS) over the 0/1 points of the "
                               f"Gram system gives S with |S| = {len(s)}; recheck ‖W_down[:,S] W_up[S,:] − T‖_F = "
                               f"{recheck:.3e}", distance, rel, method + " + MILP", recheck)
    return FloatSearch(None, (), "G is singular and neither rounding nor a mixed-integer search found an index set; "
                       "with a singular G that is not a proof that none exists", distance, rel, method, recheck)


def milp_candidate(gram: Any, rhs: Any, scale: float, max_units: int = 2000) -> tuple[int, ...] | None:
    """A 0/1 vector c with G c ≈ r from scipy's MILP (HiGHS), or None (no scipy, too big, none found)."""
    if gram.shape[0] > max_units:
        return None
    try:
        import numpy as np
        from scipy.optimize import Bounds, LinearConstraint, milp
    except ImportError:
        return None
    m = gram.shape[0]
    tol = 1e-7 * scale
    result = milp(c=np.zeros(m), integrality=np.ones(m), bounds=Bounds(0, 1),
                  constraints=LinearConstraint(gram, rhs - tol, rhs + tol), options={"time_limit": 60})
    if result.x is None:
        return None
    return tuple(int(j) for j in np.flatnonzero(result.x > 0.5))
