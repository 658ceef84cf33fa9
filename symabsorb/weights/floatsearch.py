"""Float64 candidates for the index-set search: the m x m Gram system instead of the d² x m one.

``G = (W_downᵀ W_down) ⊙ (W_up W_upᵀ)`` and ``r_j = a_jᵀ T b_j``. The least-squares solution ``c*``
of ``G c = r`` suggests an index set (round ``c*``) and a separating direction (the residual
``T − Σ_j c*_j a_j b_jᵀ``). **Nothing here proves anything**: Cholesky can succeed on a singular
Gram matrix, and every float is rounded. :mod:`symabsorb.weights.certify` checks every candidate
exactly; only that check decides.

Performance: BLAS runs single-threaded unless ``SYMABSORB_BLAS_THREADS`` says otherwise (two
threads on a shared 2-core machine were 1.5–10× slower); the lower triangle of the Gram matrix is
built a block of rows at a time, a blocked Cholesky factorization overwrites it in place, and the
solves are blocked triangular ones: one m x m float64 array plus blocks of rows, numpy only (scipy,
30 MB and 0.3 s to import, is needed only for the MILP of a singular Gram matrix).
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

__all__ = ["FloatSearch", "Nondegeneracy", "blas_threads", "correction", "float_nondegeneracy", "float_search",
           "limited_threads", "milp_candidate", "progress_to", "separating_direction", "stage_progress"]

#: A layer with at least this many units reports its long stages (Gram matrix, Cholesky factor, exact
#: certificate: minutes each at m = 11008 on a loaded machine) to the callbacks of :func:`progress_to`.
PROGRESS_UNITS = 8192
_PROGRESS: list[Callable[[str, int, int], None]] = []
_BIG_LAYERS = itertools.count(1)
_LAYER = [0]  # the number of the big layer whose float search ran last (its certificate reports under it)


@contextlib.contextmanager
def progress_to(callback: Callable[[str, int, int], None]) -> Iterator[None]:
    """Within the body, big layers call ``callback(stage, done, total)`` (a ``PhaseProgress``, say)."""
    _PROGRESS.append(callback)
    try:
        yield
    finally:
        _PROGRESS.remove(callback)


def stage_progress(m: int, new_layer: bool = True) -> Callable[[str, int, int], None] | None:
    """A ``(stage, done, total)`` reporter for one layer of ``m`` units, or None (small layer, nobody
    listening). Stage names carry a layer number: each layer's stages are new phases (their own ETA);
    ``new_layer=False``: the layer of the last float search (its certificate)."""
    if m < PROGRESS_UNITS or not _PROGRESS:
        return None
    if new_layer or not _LAYER[0]:
        _LAYER[0] = next(_BIG_LAYERS)
    layer = _LAYER[0]

    def report(stage: str, done: int, total: int) -> None:
        for callback in list(_PROGRESS):
            callback(f"big layer {layer} (m = {m}): {stage}", done, total)

    return report


@dataclass(frozen=True)
class FloatSearch:
    """Float candidates. Units are normalized (``â_j = a_j/α_j``, ``b̂_j = b_j/β_j``) so that huge or tiny
    weights cannot overflow the Gram matrix; zero units are left out (they add nothing to any sum)."""

    coefficients: Any  # c* in the original units, length m (0 for zero units)
    index_set: tuple[int, ...]  # c* rounded (or a MILP point when G is singular)
    factor: Any | None  # lower Cholesky factor L (Ĝ = LLᵀ, lower triangle) of the normalized Gram matrix (None: singular)
    active: Any  # indices of the nonzero units
    unit_scale: Any  # α_j β_j for the active units
    a_hat: Any  # d x k columns a_j of W_down (active units), normalized unless unit_weight says otherwise
    b_hat: Any  # k x d rows b_j of W_up (active units), idem
    c_hat: Any  # the least-squares solution in normalized units
    distance: float  # float estimate of the least-squares distance (not certified)
    relative_distance: float
    method: str
    recheck: float  # float ‖W_down[:,S] W_up[S,:] − T‖_F for the candidate S
    #: w_j with â_j b̂_jᵀ = w_j a_j b_jᵀ for the arrays above: 1/(α_j β_j) when they are the weights themselves
    #: (no entry extreme: no normalized copies), None when they are normalized copies (w_j = 1)
    unit_weight: Any = None

    def units(self, coefficients: Any, block: int = 256, add_to: Any = None) -> Any:
        """``Σ_j x_j â_j b̂_jᵀ`` (d x d) for coefficients ``x`` in normalized units, ``block`` rows of the
        result at a time: the scaled copy of ``Â`` is block x m, not a second d x m array, and the rows
        are written in place (no d x d temporary; 0.4 + 0.15 m² floats at d = 4096, m = 11008, while
        the m x m factor is alive). ``add_to``: a d x d array the sum is added to (and returned)."""
        import numpy as np

        x = coefficients if self.unit_weight is None else coefficients * self.unit_weight
        d = self.a_hat.shape[0]
        out = np.empty((d, self.b_hat.shape[1])) if add_to is None else add_to
        for r0 in range(0, d, block):
            part = (self.a_hat[r0:r0 + block] * x[None, :]) @ self.b_hat
            if add_to is None:
                out[r0:r0 + block] = part
            else:
                out[r0:r0 + block] += part
        return out

    def released(self) -> FloatSearch:
        """The same summary without the m x m factor and the normalized units (``factor``, ``a_hat``,
        ``b_hat`` become None): for keeping a result after the decision, which alone needs them."""
        return replace(self, factor=None, a_hat=None, b_hat=None)


@dataclass(frozen=True)
class Nondegeneracy:
    """Float summary for display (the exact check is in :mod:`symabsorb.weights.certify`).

    The largest ``|cos|`` between rows of W_up costs an m x m x d product (as much as the Gram matrix)
    and no verdict reads it: it is computed when first asked for (``worst_pair``, ``worst_cos``)."""

    holds: bool
    reason: str
    min_row_norm: float
    min_col_norm: float
    w_up: Any = field(default=None, repr=False, compare=False)

    @cached_property
    def _worst(self) -> tuple[tuple[int, int] | None, float]:
        return (None, 0.0) if self.w_up is None or self.w_up.shape[0] < 2 else _worst_cosine(self.w_up)

    @property
    def worst_pair(self) -> tuple[int, int] | None:
        return self._worst[0]

    @property
    def worst_cos(self) -> float:
        return self._worst[1]


def blas_threads() -> int:
    """BLAS threads for the float path (env ``SYMABSORB_BLAS_THREADS``, default 1)."""
    try:
        return max(1, int(os.environ.get("SYMABSORB_BLAS_THREADS", "1")))
    except ValueError:
        return 1


_CONTROLLERS: dict[bool, Any] = {}


def _controller() -> Any | None:
    """A cached threadpoolctl controller (creating one scans the loaded libraries, ~5 ms); made again
    once scipy's own BLAS has been loaded, so that it is controlled too."""
    import sys

    key = "scipy.linalg" in sys.modules
    if key not in _CONTROLLERS:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            _CONTROLLERS[key] = None
        else:
            _CONTROLLERS[key] = ThreadpoolController()
    return _CONTROLLERS[key]


@contextlib.contextmanager
def limited_threads() -> Iterator[None]:
    """BLAS limited to :func:`blas_threads` threads for the body (nothing happens without threadpoolctl)."""
    controller = _controller()
    if controller is None:
        yield
        return
    with controller.limit(limits=blas_threads(), user_api="blas"):
        yield


def float_nondegeneracy(w_up: Any, w_down: Any) -> Nondegeneracy:
    """Float screen: rows of W_up and columns of W_down nonzero (display only; decided exactly elsewhere);
    the largest |cos| between rows of W_up on demand."""
    import numpy as np

    with limited_threads(), np.errstate(over="ignore", under="ignore", invalid="ignore"):
        rows = _unit_scales(w_up, 1)
        cols = _unit_scales(w_down, 0)
        rows = np.where((w_up != 0).any(axis=1), rows, 0.0)
        cols = np.where((w_down != 0).any(axis=0), cols, 0.0)
    if w_up.shape[0] < 2:
        return Nondegeneracy(True, "one unit", float(rows.min(initial=0)), float(cols.min(initial=0)), w_up)
    return Nondegeneracy(bool((rows > 0).all() and (cols > 0).all()), "", float(rows.min()), float(cols.min()), w_up)


def _worst_cosine(w_up: Any) -> tuple[tuple[int, int], float]:
    """The pair of rows of W_up with the largest |cos| (float), 512 x m blocks at a time (no m x m array)."""
    import numpy as np

    with limited_threads(), np.errstate(over="ignore", under="ignore", invalid="ignore"):
        unit, _ = _normalized(w_up, 1)
        worst, i, j = -1.0, 0, 1
        for start in range(0, unit.shape[0], 512):
            cos = unit[start:start + 512] @ unit.T
            np.abs(cos, out=cos)
            for r in range(cos.shape[0]):
                cos[r, start + r] = 0.0
            flat = int(np.argmax(cos))
            bi, bj = divmod(flat, cos.shape[1])
            if float(cos[bi, bj]) > worst:
                worst, i, j = float(cos[bi, bj]), start + bi, bj
    return (min(i, j), max(i, j)), worst


#: Largest number of units handed to the MILP (singular Gram matrices only).
MILP_MAX_UNITS = 2000
#: Rows (or columns) per block in the Gram products, the blocked Cholesky factorization and the solves.
BLOCK = 384
#: Columns per block of the Cholesky factorization (128 was fastest at m = 1536 and m = 4096).
CHOLESKY_BLOCK = 128


def _gram(b_hat: Any, a_hat: Any, lower_only: bool = False, block: int = BLOCK, weight: Any = None,
          progress: Callable[[str, int, int], None] | None = None) -> Any:
    """``Ĝ = (ÂᵀÂ) ⊙ (B̂B̂ᵀ)`` in one m x m array, a block of rows at a time (one block x m
    temporary, never a second m x m array). ``lower_only``: only the lower triangle
    (all the Cholesky factorization reads; half the flops); the upper triangle is then garbage.
    ``weight``: unit weights ``w`` (``Ĝ_jk = w_j w_k (a_jᵀa_k)(b_jᵀb_k)``), None for normalized units."""
    import numpy as np

    m = a_hat.shape[1]
    gram = (np.zeros if lower_only else np.empty)((m, m))  # zeros: the unused triangle stays finite
    for r0 in range(0, m, block):
        r1 = min(m, r0 + block)
        c1 = r1 if lower_only else m
        rows = gram[r0:r1, :c1]
        np.matmul(a_hat[:, r0:r1].T, a_hat[:, :c1], out=rows)  # BLAS writes into the rows (no temporary)
        rows *= b_hat[r0:r1] @ b_hat[:c1].T
        if weight is not None:
            rows *= weight[r0:r1, None]
            rows *= weight[None, :c1]
        if progress is not None:  # rows of the lower triangle cost in proportion to their length
            progress("Gram matrix", r1 * (r1 if lower_only else m), m * m)
    return gram


def _cholesky_in_place(gram: Any, block: int = CHOLESKY_BLOCK,
                       progress: Callable[[str, int, int], None] | None = None) -> bool:
    """Overwrite the lower triangle of ``gram`` (read only there) with its lower Cholesky factor ``L``
    (``Ĝ = LLᵀ``): blocked and left-looking (one GEMM per block column, then a small factorization and
    a GEMM with the inverse of the diagonal block), numpy only: no scipy import (30 MB) on this path, no
    second m x m array. False when a pivot is not clearly positive (numerically singular or indefinite;
    ``gram`` is then partly overwritten). A candidate generator only: nothing is proved here."""
    import numpy as np

    m = gram.shape[0]
    # diagonal entries of Ĝ are 1 (normalized units): a pivot below this is rounding noise
    tiny = max(m, 16) * float(np.finfo(np.float64).eps)
    for k0 in range(0, m, block):
        k1 = min(m, k0 + block)
        if k0:  # A[k0:, k0:k1] -= L[k0:, :k0] L[k0:k1, :k0]ᵀ
            gram[k0:, k0:k1] -= gram[k0:, :k0] @ gram[k0:k1, :k0].T
        try:
            l11 = np.linalg.cholesky(np.tril(gram[k0:k1, k0:k1]))
        except np.linalg.LinAlgError:
            return False
        diag = np.diagonal(l11)
        if not (np.isfinite(l11).all() and (diag * diag > tiny).all()):
            return False
        gram[k0:k1, k0:k1] = l11
        if k1 < m:
            gram[k1:, k0:k1] = gram[k1:, k0:k1] @ np.linalg.inv(l11).T  # L21 = A21 L11⁻ᵀ
        if progress is not None:  # left-looking: column k costs ~ k (m - k), so the work up to k is 3mk² - 2k³ of m³
            progress("Cholesky factor", 3 * m * k1 * k1 - 2 * k1**3, m**3)
    return True


def _cho_solve(factor: Any, rhs: Any, block: int = BLOCK) -> Any:
    """``x`` with ``L Lᵀ x = rhs`` for the lower factor of :func:`_cholesky_in_place` (upper triangle
    ignored): blocked forward and back substitution."""
    import numpy as np

    m = factor.shape[0]
    x = np.array(rhs, dtype=np.float64)
    diagonal = [np.tril(factor[k0:k0 + block, k0:k0 + block]) for k0 in range(0, m, block)]
    for b, k0 in enumerate(range(0, m, block)):  # L y = rhs
        k1 = min(m, k0 + block)
        if k0:
            x[k0:k1] -= factor[k0:k1, :k0] @ x[:k0]
        x[k0:k1] = np.linalg.solve(diagonal[b], x[k0:k1])
    for b in range(len(diagonal) - 1, -1, -1):  # Lᵀ x = y
        k0 = b * block
        k1 = min(m, k0 + block)
        if k1 < m:
            x[k0:k1] -= factor[k1:, k0:k1].T @ x[k1:]
        x[k0:k1] = np.linalg.solve(diagonal[b].T, x[k0:k1])
    return x


def _unit_rhs(a_hat: Any, b_hat: Any, target: Any, block: int = 256, weight: Any = None) -> Any:
    """``r_j = w_j a_jᵀ T b_j`` (``w_j = 1`` for normalized units); a sparse ``T`` (a scaled identity,
    say) costs O(nnz · m), not O(d² m)."""
    import numpy as np

    rows, cols = np.nonzero(target)
    d = target.shape[0]
    if len(rows) > d:
        out = np.einsum("jk,jk->j", a_hat.T @ target, b_hat)
    else:
        values = target[rows, cols]
        out = np.zeros(a_hat.shape[1])
        for s in range(0, len(rows), block):
            i, k, v = rows[s:s + block], cols[s:s + block], values[s:s + block]
            out += v @ (a_hat[i, :] * b_hat[:, k].T)
    return out if weight is None else out * weight


#: Weights whose every unit has α_j, β_j in [2^-MODERATE_EXP, 2^MODERATE_EXP] are used as they are (Gram
#: products below 2^(4·MODERATE_EXP)·d², far from overflow and underflow); others are normalized copies.
MODERATE_EXP = 100


def _unit_scales(x: Any, axis: int, block: int = 512) -> Any:
    """The norms of the rows (axis 1) or columns (axis 0) of ``x``, overflow-safe, a block at a time
    (no copy of ``x``); 0 for a zero unit."""
    import numpy as np

    n = x.shape[0] if axis == 1 else x.shape[1]
    out = np.zeros(n)
    for s0 in range(0, n, block):
        part = x[s0:s0 + block] if axis == 1 else x[:, s0:s0 + block]
        out[s0:s0 + block] = _normalized(part, axis)[1]
    return out


def _normalized(x: Any, axis: int) -> tuple[Any, Any]:
    """(x with unit-norm rows/columns, the norms), overflow-safe."""
    import numpy as np

    big = np.abs(x).max(axis=axis)
    safe = np.where(big > 0, big, 1.0)
    y = x / (safe[:, None] if axis == 1 else safe[None, :])
    norms = np.sqrt(np.einsum("ij,ij->i", y, y) if axis == 1 else np.einsum("ij,ij->j", y, y))
    norms = np.where(big > 0, norms, 1.0)
    y /= norms[:, None] if axis == 1 else norms[None, :]
    return y, big * norms


def float_search(w_up: Any, w_down: Any, target: Any) -> FloatSearch:
    """Least squares on the (normalized) Gram system, then a rounded (or MILP) candidate index set."""
    import numpy as np

    w_up = np.asarray(w_up, dtype=np.float64)
    w_down = np.asarray(w_down, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    m = w_up.shape[0]
    with limited_threads(), np.errstate(over="ignore", under="ignore"):
        beta = _unit_scales(w_up, 1)
        alpha = _unit_scales(w_down, 0)
        active = np.flatnonzero((beta > 0) & (alpha > 0))
        scale_units = alpha[active] * beta[active]
        low, high = 2.0 ** -MODERATE_EXP, 2.0 ** MODERATE_EXP
        weight = None
        if all(((v >= low) & (v <= high)).all() for v in (alpha[active], beta[active])):
            # the usual case: the weights themselves, each unit weighted by 1/(α_j β_j); no copies
            weight = 1.0 / scale_units
            if len(active) == m:
                b_hat, a_hat = w_up, w_down
            else:
                b_hat, a_hat = np.ascontiguousarray(w_up[active]), np.ascontiguousarray(w_down[:, active])
        else:  # extreme entries: normalized copies
            b_hat = _normalized(w_up[active], 1)[0]
            a_hat = np.ascontiguousarray(_normalized(w_down[:, active], 0)[0])
        t_norm = float(np.linalg.norm(target))
        rhs = _unit_rhs(a_hat, b_hat, target, weight=weight)
        factor = None
        method = ""
        c_hat = np.zeros(len(active))
        if len(active):
            progress = stage_progress(len(active))
            chol = _gram(b_hat, a_hat, lower_only=True, weight=weight, progress=progress)
            if _cholesky_in_place(chol, progress=progress):
                factor = chol
                c_hat = _cho_solve(factor, rhs)
                method = "float64 Gram system, Cholesky + triangular solves"
            del chol
            if factor is None:
                gram = _gram(b_hat, a_hat, weight=weight)
                c_hat, *_ = np.linalg.lstsq(gram, rhs, rcond=None)
                method = "float64 Gram system (numerically singular: minimum-norm least squares)"
        else:
            method = "no nonzero unit"
        res2 = max(t_norm**2 - float(c_hat @ rhs), 0.0)
        coefficients = np.zeros(m)
        with np.errstate(all="ignore"):  # a scale that underflowed to 0 gives inf: only a candidate
            coefficients[active] = c_hat / scale_units
        s = tuple(int(j) for j in np.flatnonzero(coefficients > 0.5))
        recheck = _recheck(w_up, w_down, target, s)
        if factor is None and 0 < len(active) <= MILP_MAX_UNITS and recheck > 1e-9 * max(t_norm, 1.0):
            # MILP in the normalized variables c_hat_j = c_j α_j β_j ∈ {0, α_j β_j} is awkward; use the raw
            # system when it is representable, else skip (a candidate only)
            with np.errstate(all="ignore"):
                raw = gram * np.outer(scale_units, scale_units)
                raw_rhs = rhs * scale_units
            if np.isfinite(raw).all() and np.isfinite(raw_rhs).all():
                found = milp_candidate(raw, raw_rhs, scale=max(float(np.abs(raw).max(initial=0.0)), 1.0))
                if found is not None:
                    found = tuple(int(active[j]) for j in found)
                    again = _recheck(w_up, w_down, target, found)
                    if again < recheck:
                        s, recheck, method = found, again, method + " + MILP candidate"
    distance = res2**0.5
    return FloatSearch(coefficients, s, factor, active, scale_units, a_hat, b_hat, c_hat, distance,
                       distance / t_norm if t_norm else 0.0, method, recheck, weight)


def separating_direction(fs: FloatSearch, target: Any, mode: str = "box-slack") -> tuple[Any, Any]:
    """A float candidate ``Y`` for the separation certificate and the targets ``ŵ`` of ``â_jᵀ Y b̂_j``.

    ``Y = R + Σ_j λ_j â_j b̂_jᵀ`` with ``R = T − Σ ĉ_j â_j b̂_jᵀ`` (orthogonal to every unit) and
    ``Ĝ λ = ŵ``: then ``a_jᵀ Y b_j = α_j β_j ŵ_j`` and ``⟨Y, T⟩ = ‖R‖² + ŵᵀĉ``. ``ŵ_j = +1`` where
    ``c*_j > 1`` and ``−1`` where ``c*_j < 0`` (each adds a positive amount to the margin
    ``⟨Y,T⟩ − Σ_j max(0, a_jᵀYb_j)``), and a small ``−δ`` elsewhere, so that rounding errors cannot
    push those terms above 0 (δ costs at most half of the float estimate of the margin). ``mode``:
    ``"residual"`` (ŵ = 0: ``Y = R``, the best distance bound), ``"box"`` (δ = 0, for near misses whose
    margin estimate is unreliable) or ``"box-slack"``.
    """
    import numpy as np

    with limited_threads():
        residual = fs.units(fs.c_hat)
        np.subtract(np.asarray(target, dtype=np.float64), residual, out=residual)  # T − Σ ĉ_j â_j b̂_jᵀ, in place
        w_hat = np.zeros(len(fs.c_hat))
        if fs.factor is not None and len(w_hat) and mode != "residual":
            above = fs.c_hat > fs.unit_scale
            below = fs.c_hat < 0
            inside = ~(above | below)
            gain = float(np.sum(residual * residual)) + float(np.sum(fs.c_hat[above] - fs.unit_scale[above])) \
                - float(np.sum(fs.c_hat[below]))
            spend = float(np.sum(fs.c_hat[inside]))
            delta = 0.0 if mode == "box" else 1.0 if spend <= 0 else min(1.0, gain / (2 * spend))
            w_hat[above] = 1.0
            w_hat[below] = -1.0
            w_hat[inside] = -delta
        if w_hat.any() and fs.factor is not None:
            lam = _cho_solve(fs.factor, w_hat)
            fs.units(lam, add_to=residual)
    return residual, w_hat


def correction(fs: FloatSearch, error_hat: Any) -> Any | None:
    """``−Σ_j λ_j â_j b̂_jᵀ`` with ``Ĝ λ = error``: removes a known error of ``â_jᵀ Y b̂_j`` (None: no factor)."""
    if fs.factor is None:
        return None
    with limited_threads():
        lam = _cho_solve(fs.factor, error_hat)
        return -fs.units(lam)


def _recheck(w_up: Any, w_down: Any, target: Any, s: tuple[int, ...]) -> float:
    import numpy as np

    if not s:
        return float(np.linalg.norm(target))
    idx = list(s)
    return float(np.linalg.norm(w_down[:, idx] @ w_up[idx, :] - target))


def milp_candidate(gram: Any, rhs: Any, scale: float, max_units: int = MILP_MAX_UNITS) -> tuple[int, ...] | None:
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
