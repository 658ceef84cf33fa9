"""Numerical search for absorbing weights (evidence, never proof).

For a residual block ``R(x) = x + B(x)`` with random small-integer weights, look for a residual-free
block ``B'`` of the same kind and width with ``B'(x) = R(x)`` at sample points: least squares over
the hidden-layer weights (``scipy.optimize.least_squares``) with the output weights eliminated
(variable projection: for fixed hidden weights they solve a linear least-squares problem), from many
starts. The best relative residual is the evidence; a residual at rounding level is a *candidate*
witness, which :mod:`.verify` may turn into a proof.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sympy as sp

__all__ = ["BlockProblem", "SearchOutcome", "hidden_layer", "make_problem", "refit", "search_block", "search_stack"]

WITNESS_TOLERANCE = 1e-9
_BAD = 1e3
_HUGE = 1e8  # hidden values beyond this make the least-squares problem meaningless in float64


@dataclass(frozen=True)
class BlockProblem:
    """A residual block with integer weights: ``w_up`` m x d, ``w_down`` d x m, ``w_gate`` m x d."""

    d: int
    m: int
    w_up: Any
    w_down: Any
    w_gate: Any | None


@dataclass(frozen=True)
class SearchOutcome:
    starts: int
    best_residual: float
    hidden: Any = None  # the best hidden weights: V (m x d), or (G, U) for gated units
    output: Any = None  # the best output weights (d x m)
    x: Any = None  # the sample points and targets, to refit after rounding
    y: Any = None

    @property
    def candidate(self) -> bool:
        return self.best_residual <= WITNESS_TOLERANCE


def _np() -> Any:
    import numpy as np

    return np


def _nondegenerate(np: Any, w: Any) -> bool:
    if (np.abs(w).sum(axis=1) == 0).any():
        return False
    return all(np.linalg.matrix_rank(np.stack([w[i], w[j]]).astype(float)) == 2
               for i in range(len(w)) for j in range(i))


def make_problem(rng: Any, d: int, m: int, gated: bool) -> BlockProblem:
    """Random weights in {-2..2}: rows of W_up (and W_gate) nonzero and pairwise non-collinear,
    columns of W_down nonzero (the nondegenerate case of the paper)."""
    np = _np()
    while True:
        up = rng.integers(-2, 3, size=(m, d))
        down = rng.integers(-2, 3, size=(d, m))
        gate = rng.integers(-2, 3, size=(m, d)) if gated else None
        if (np.abs(down).sum(axis=0) == 0).any() or not _nondegenerate(np, up):
            continue
        if gate is not None and not _nondegenerate(np, gate):
            continue
        return BlockProblem(d, m, up, down, gate)


def _evaluate(expr: sp.Expr, a: Any) -> Any:
    from ..analysis.numeric import evaluate_array

    np = _np()
    with np.errstate(all="ignore"):
        return evaluate_array(expr, a)


def _block_out(expr: sp.Expr, x: Any, up: Any, down: Any, gate: Any | None) -> Any:
    pre = x @ up.T
    h = _evaluate(expr, x @ gate.T) * pre if gate is not None else _evaluate(expr, pre)
    return h @ down.T


def _points(rng: Any, n: int, d: int) -> Any:
    return rng.standard_normal((n, d)) * 0.8


def _usable(np: Any, h: Any) -> bool:
    return bool(np.isfinite(h).all()) and float(np.abs(h).max(initial=0.0)) < _HUGE


def hidden_layer(expr: sp.Expr, x: Any, p: Any, m: int, d: int, gated: bool) -> Any:
    """The hidden activations of a residual-free block with flat hidden weights ``p`` at points ``x``."""
    np = _np()
    with np.errstate(all="ignore"):
        if gated:
            g, u = p[: m * d].reshape(m, d), p[m * d:].reshape(m, d)
            return _evaluate(expr, x @ g.T) * (x @ u.T)
        return _evaluate(expr, x @ p.reshape(m, d).T)


def refit(expr: sp.Expr, outcome: SearchOutcome, p: Any, m: int, d: int, gated: bool) -> tuple[float, Any]:
    """Relative residual and output weights (d x m) for fixed hidden weights ``p``, at the search's points."""
    np = _np()
    h = hidden_layer(expr, outcome.x, p, m, d, gated)
    if not _usable(np, h):
        return float("inf"), None
    try:
        out, *_ = np.linalg.lstsq(h, outcome.y, rcond=None)
    except np.linalg.LinAlgError:
        return float("inf"), None
    r = float(np.linalg.norm(outcome.y - h @ out) / (np.linalg.norm(outcome.y) or 1.0))
    return r, out.T


def search_block(expr: sp.Expr, problem: BlockProblem, starts: int, rng: Any) -> SearchOutcome:
    """Best residual of ``min ‖B'(x) − x − B(x)‖ / ‖x + B(x)‖`` over ``starts`` starts."""
    np = _np()
    from scipy.optimize import least_squares

    d, m, gated = problem.d, problem.m, problem.w_gate is not None
    x = _points(rng, 32 + 12 * d * m, d)
    with np.errstate(all="ignore"):
        y = x + _block_out(expr, x, problem.w_up.astype(float), problem.w_down.astype(float),
                           None if problem.w_gate is None else problem.w_gate.astype(float))
    keep = np.isfinite(y).all(axis=1) & (np.abs(y).max(axis=1) < _HUGE)
    x, y = x[keep], y[keep]
    if len(x) < 4 * d * m:
        return SearchOutcome(0, float("inf"))
    scale = float(np.linalg.norm(y)) or 1.0

    def hidden(p: Any) -> Any:
        return hidden_layer(expr, x, p, m, d, gated)

    def residual(p: Any) -> Any:
        h = hidden(p)
        if not _usable(np, h):
            return np.full(y.size, _BAD)
        try:
            out, *_ = np.linalg.lstsq(h, y, rcond=None)
        except np.linalg.LinAlgError:
            return np.full(y.size, _BAD)
        return ((y - h @ out) / scale).ravel()

    best: tuple[float, Any, Any] = (float("inf"), None, None)
    for k in range(starts):
        if k % 2 == 0:  # near the block's own lines, with random signs and scales (where Theorem R puts witnesses)
            signs = rng.choice([-1.0, 1.0], size=(m, 1)) if k else -np.ones((m, 1))
            scales = rng.uniform(0.5, 2.0, size=(m, 1)) if k > 2 else np.ones((m, 1))
            base = problem.w_gate if gated else problem.w_up
            p0 = (signs * scales * base + 0.02 * rng.standard_normal((m, d))).ravel()
            if gated:
                p0 = np.concatenate([p0, (problem.w_up + 0.02 * rng.standard_normal((m, d))).ravel()])
        else:
            p0 = rng.standard_normal(m * d * (2 if gated else 1))
        try:
            sol = least_squares(residual, p0, method="lm", xtol=1e-15, ftol=1e-15, gtol=1e-15,
                                max_nfev=40 * (len(p0) + 1))
        except (ValueError, np.linalg.LinAlgError):
            continue
        r = float(np.linalg.norm(residual(sol.x)))
        if r < best[0] and _usable(np, hidden(sol.x)):
            h = hidden(sol.x)
            out, *_ = np.linalg.lstsq(h, y, rcond=None)
            hid = (sol.x[: m * d].reshape(m, d), sol.x[m * d:].reshape(m, d)) if gated else sol.x.reshape(m, d)
            best = (r, hid, out.T)
    return SearchOutcome(starts, best[0], best[1], best[2], x, y)


def search_stack(expr: sp.Expr, blocks: tuple[BlockProblem, BlockProblem], starts: int, rng: Any) -> SearchOutcome:
    """Depth 2: best residual of ``‖B'_2(B'_1(x)) − R_2(R_1(x))‖ / ‖R_2(R_1(x))‖`` (ungated units)."""
    np = _np()
    from scipy.optimize import least_squares

    b1, b2 = blocks
    d, m = b1.d, b1.m
    x = _points(rng, 32 + 12 * d * m, d)
    with np.errstate(all="ignore"):
        r1 = x + _block_out(expr, x, b1.w_up.astype(float), b1.w_down.astype(float), None)
        y = r1 + _block_out(expr, r1, b2.w_up.astype(float), b2.w_down.astype(float), None)
    scale = float(np.linalg.norm(y)) or 1.0
    n1 = m * d

    def residual(p: Any) -> Any:
        v1, o1, v2 = p[:n1].reshape(m, d), p[n1:2 * n1].reshape(d, m), p[2 * n1:].reshape(m, d)
        with np.errstate(all="ignore"):
            h = _evaluate(expr, (_evaluate(expr, x @ v1.T) @ o1.T) @ v2.T)
        if not _usable(np, h):
            return np.full(y.size, _BAD)
        try:
            out, *_ = np.linalg.lstsq(h, y, rcond=None)
        except np.linalg.LinAlgError:
            return np.full(y.size, _BAD)
        return ((y - h @ out) / scale).ravel()

    best = float("inf")
    for k in range(starts):
        if k % 2 == 0:
            s1 = rng.choice([-1.0, 1.0], size=(m, 1)) if k else -np.ones((m, 1))
            s2 = rng.choice([-1.0, 1.0], size=(m, 1)) if k else -np.ones((m, 1))
            p0 = np.concatenate([(s1 * b1.w_up).ravel(), b1.w_down.astype(float).ravel(), (s2 * b2.w_up).ravel()])
            p0 = p0 + 0.02 * rng.standard_normal(p0.shape)
        else:
            p0 = rng.standard_normal(3 * n1)
        try:
            sol = least_squares(residual, p0, method="lm", xtol=1e-15, ftol=1e-15, gtol=1e-15,
                                max_nfev=30 * (len(p0) + 1))
        except (ValueError, np.linalg.LinAlgError):
            continue
        best = min(best, float(np.linalg.norm(residual(sol.x))))
    return SearchOutcome(starts, best)
