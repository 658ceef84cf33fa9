"""Hypotheses about sizes and weights: dimension, width, depth, nondegeneracy of concrete weights."""

from __future__ import annotations

from typing import Any

import sympy as sp

from .checks import Subject, as_expr, registrar, simple
from .derivation import HypothesisCheck, HypStatus

__all__ = ["CHECKERS", "nondegeneracy"]

CHECKERS, hypothesis = registrar()


# ---- sizes and weights -------------------------------------------------------------------------


@hypothesis("dim_at_least")
def _dim_at_least(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    n = int(p.get("n", 2))
    dim = s.the_block.stream_dim
    statement = f"$d \\ge {n}$"
    if isinstance(dim, int) or getattr(dim, "is_Integer", False):
        ok = int(dim) >= n
        return simple("dim_at_least", HypStatus.PROVED if ok else HypStatus.REFUTED, f"$d = {dim} \\ge {n}$",
                       "" if ok else f"d = {dim} < {n}")
    if sp.Ge(dim, n) is sp.true:
        return simple("dim_at_least", HypStatus.PROVED, statement)
    return simple("dim_at_least", HypStatus.ASSUMED, statement, assumption=f"d ≥ {n}")


@hypothesis("width_at_least_dim")
def _width_at_least_dim(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    b = s.the_block
    dim, width = b.stream_dim, b.width
    gap = as_expr(width) - as_expr(dim)
    if gap.is_nonnegative:
        return simple("width_at_least_dim", HypStatus.PROVED, f"$m = {sp.latex(width)} \\ge d = {sp.latex(dim)}$")
    if gap.is_negative:
        return simple("width_at_least_dim", HypStatus.REFUTED, "$m \\ge d$", f"m = {width} < d = {dim}")
    return simple("width_at_least_dim", HypStatus.ASSUMED, "$m \\ge d$", assumption="m ≥ d")


def nondegeneracy(w_up: sp.MatrixBase, w_down: sp.MatrixBase) -> tuple[bool, str]:
    """Exact check of the hypothesis of Thms. 8/10: rows of W_up nonzero and pairwise non-collinear,
    columns of W_down nonzero. Returns (holds, reason naming the offending rows/columns)."""
    rows = [w_up.row(i) for i in range(w_up.rows)]
    for i, r in enumerate(rows):
        if all(x == 0 for x in r):
            return False, f"row {i} of W_up is zero"
    for j in range(w_down.cols):
        if all(x == 0 for x in w_down.col(j)):
            return False, f"column {j} of W_down is zero"
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            if sp.Matrix.vstack(rows[i], rows[j]).rank() < 2:
                return False, f"rows {i} and {j} of W_up are collinear"
    return True, "rows of W_up are nonzero and pairwise non-collinear; columns of W_down are nonzero (exact)"


@hypothesis("nondegenerate")
def _nondegenerate(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    b = s.the_block
    statement = ("the block is nondegenerate: rows of $W_{\\mathrm{up}}$ nonzero and pairwise non-collinear, "
                 "columns of $W_{\\mathrm{down}}$ nonzero")
    if b.w_up is not None and b.w_down is not None:
        ok, reason = nondegeneracy(b.w_up, b.w_down)
        return simple("nondegenerate", HypStatus.PROVED if ok else HypStatus.REFUTED, statement,
                       "" if ok else reason)
    return simple("nondegenerate", HypStatus.ASSUMED, statement,
                   assumption="nondegenerate weights (rows of W_up nonzero and pairwise non-collinear, columns of "
                              "W_down nonzero) — needed for the 'only if'")


@hypothesis("depth_at_least")
def _depth_at_least(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    n = int(p.get("n", 2))
    assert s.stack is not None
    depth = s.stack.depth
    if isinstance(depth, int) or getattr(depth, "is_Integer", False):
        ok = int(depth) >= n
        return simple("depth_at_least", HypStatus.PROVED if ok else HypStatus.REFUTED, f"depth $L = {depth} \\ge {n}$",
                       "" if ok else f"depth {depth} < {n}")
    return simple("depth_at_least", HypStatus.ASSUMED, f"depth $L \\ge {n}$", assumption=f"L ≥ {n}")
