"""Hypotheses about sizes and weights: dimension, width, depth, nondegeneracy of concrete weights."""

from __future__ import annotations

import math
from typing import Any

import sympy as sp

from .checks import Param, Subject, as_expr, registrar, simple
from .derivation import HypothesisCheck, HypStatus
from .skips import dim_name, is_stream_skip, skip_rank

__all__ = ["CHECKERS", "exact_rank", "n2_nondegeneracy", "nondegeneracy"]

CHECKERS, hypothesis = registrar()


# ---- sizes and weights -------------------------------------------------------------------------


@hypothesis("dim_at_least", '`d ≥ n` (symbolic: a stated assumption)',
            params={"n": Param("integer", "the least dimension", default=2)})
def _dim_at_least(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    n = int(p.get("n", 2))
    dim, d = s.the_block.stream_dim, dim_name(s.the_block)
    statement = f"${d} \\ge {n}$"
    if isinstance(dim, int) or getattr(dim, "is_Integer", False):
        ok = int(dim) >= n
        return simple("dim_at_least", HypStatus.PROVED if ok else HypStatus.REFUTED, f"${d} = {dim} \\ge {n}$",
                       "" if ok else f"{d} = {dim} < {n}")
    if sp.Ge(dim, n) is sp.true:
        return simple("dim_at_least", HypStatus.PROVED, statement)
    return simple("dim_at_least", HypStatus.ASSUMED, statement, assumption=f"{d} ≥ {n}")


@hypothesis("width_at_least_dim", '`m ≥ d` (symbolic: a stated assumption)')
def _width_at_least_dim(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    b = s.the_block
    dim, width, d = b.stream_dim, b.width, dim_name(b)
    gap = as_expr(width) - as_expr(dim)
    if gap.is_nonnegative:
        return simple("width_at_least_dim", HypStatus.PROVED, f"$m = {sp.latex(width)} \\ge {d} = {sp.latex(dim)}$")
    if gap.is_negative:
        return simple("width_at_least_dim", HypStatus.REFUTED, f"$m \\ge {d}$", f"m = {width} < {d} = {dim}")
    return simple("width_at_least_dim", HypStatus.ASSUMED, f"$m \\ge {d}$", assumption=f"m ≥ {d}")


def _primitive_rows(w_up: sp.MatrixBase) -> list[tuple[int, ...]] | None:
    """Each row of a rational ``w_up`` as its primitive integer direction (scaled to integers exactly,
    divided by the gcd, first nonzero entry positive): two nonzero rows are collinear iff these are
    equal. None when an entry is not rational."""
    from fractions import Fraction

    from sympy import QQ
    from sympy.polys.matrices import DomainMatrix

    from .directions import line_key

    rep = getattr(w_up, "_rep", None)  # the matrix's own DomainMatrix, not a rebuilt one
    dm = rep if isinstance(rep, DomainMatrix) else DomainMatrix.from_Matrix(sp.Matrix(w_up))
    if dm.domain != QQ:
        if not dm.domain.is_ZZ and not all(v.is_Rational for v in w_up):
            return None
        dm = dm.convert_to(QQ)
    return [line_key([Fraction(int(v.numerator), int(v.denominator)) for v in row]) for row in dm.to_list()]


def nondegeneracy(w_up: sp.MatrixBase, w_down: sp.MatrixBase) -> tuple[bool, str]:
    """Exact check of the hypothesis of Thms. 8/10: rows of W_up nonzero and pairwise non-collinear,
    columns of W_down nonzero. Returns (holds, reason naming the offending rows/columns).

    Rational weights: collinearity is equality of primitive integer directions (one pass, a dict);
    other exact entries (``sqrt(2)``): pairwise ranks."""
    from sympy.polys.matrices import DomainMatrix

    def entries(m: sp.MatrixBase) -> list[list[Any]]:
        rep = getattr(m, "_rep", None)  # the matrix's own DomainMatrix: its zeros are exact zeros
        return rep.to_list() if isinstance(rep, DomainMatrix) else m.tolist()

    for i, r in enumerate(entries(w_up)):
        if all(x == 0 for x in r):
            return False, f"row {i} of W_up is zero"
    for j, c in enumerate(zip(*entries(w_down), strict=True)):
        if all(x == 0 for x in c):
            return False, f"column {j} of W_down is zero"
    keys = _primitive_rows(w_up)
    if keys is not None:
        seen: dict[tuple[int, ...], int] = {}
        for j, key in enumerate(keys):
            if key in seen:
                return False, f"rows {seen[key]} and {j} of W_up are collinear"
            seen[key] = j
        return True, "rows of W_up are nonzero and pairwise non-collinear; columns of W_down are nonzero (exact)"
    rows = [w_up.row(i) for i in range(w_up.rows)]
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            if sp.Matrix.vstack(rows[i], rows[j]).rank() < 2:
                return False, f"rows {i} and {j} of W_up are collinear"
    return True, "rows of W_up are nonzero and pairwise non-collinear; columns of W_down are nonzero (exact)"


@hypothesis("nondegenerate",
            "rows of `W_up` nonzero and pairwise non-collinear, columns of `W_down` nonzero (exact for given "
            "weights; an assumption otherwise)")
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


def n2_nondegeneracy(w_up: sp.MatrixBase, b_up: sp.MatrixBase | None, w_down: sp.MatrixBase) -> tuple[bool, str]:
    """Exact check of N2 (docs/theorems.md#n2, units on parallel hyperplanes): rows of W_up nonzero (no constant
    unit), columns of W_down nonzero, and the pairs ``(w_i, b_i)`` pairwise non-collinear in R^{d+1}
    (no bias: ``b = 0``). Rational weights: primitive integer vectors; other exact entries: pairwise ranks."""
    m = w_up.rows
    for i in range(m):
        if all(x == 0 for x in w_up.row(i)):
            return False, f"row {i} of W_up is zero (a constant unit)"
    for j in range(w_down.cols):
        if all(x == 0 for x in w_down.col(j)):
            return False, f"column {j} of W_down is zero"
    bias = sp.Matrix(b_up) if b_up is not None else sp.zeros(m, 1)
    pairs = sp.Matrix.hstack(sp.Matrix(w_up), bias)
    ok = "rows of W_up nonzero, pairs (w_i, b_i) pairwise non-collinear, columns of W_down nonzero (exact)"
    keys = _primitive_rows(pairs)
    if keys is not None:
        seen: dict[tuple[int, ...], int] = {}
        for j, key in enumerate(keys):
            if key in seen:
                return False, f"units {seen[key]} and {j} have collinear (w, b): the same hyperplane"
            seen[key] = j
        return True, ok
    for i in range(m):
        for j in range(i + 1, m):
            if sp.Matrix.vstack(pairs.row(i), pairs.row(j)).rank() < 2:
                return False, f"units {i} and {j} have collinear (w, b): the same hyperplane"
    return True, ok


@hypothesis("n2_nondegenerate",
            "N2: rows of `W_up` nonzero, the pairs `(w_i, b_i)` pairwise non-collinear, columns of `W_down` nonzero "
            "(exact for given weights; an assumption otherwise)")
def _n2_nondegenerate(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    b = s.the_block
    statement = ("the block satisfies N2: rows of $W_{\\mathrm{up}}$ nonzero, the pairs $(w_i, b_i)$ pairwise "
                 "non-collinear in $\\mathbb{R}^{d+1}$, columns of $W_{\\mathrm{down}}$ nonzero")
    if b.gated:
        return simple("n2_nondegenerate", HypStatus.REFUTED, statement, "the block is gated")
    if b.w_up is not None and b.w_down is not None:
        if b.b_up is None and b.bias:
            # symbolic hidden biases: N2 holds for every bias only when N1 does (distinct directions)
            ok, reason = nondegeneracy(b.w_up, b.w_down)
            if not ok:
                return simple("n2_nondegenerate", HypStatus.UNKNOWN, statement,
                              f"{reason}, and the hidden biases are symbolic: N2 depends on them")
        else:
            ok, reason = n2_nondegeneracy(b.w_up, b.b_up, b.w_down)
        return simple("n2_nondegenerate", HypStatus.PROVED if ok else HypStatus.REFUTED, statement,
                      "" if ok else reason)
    return simple("n2_nondegenerate", HypStatus.ASSUMED, statement,
                  assumption="nondegenerate weights in the sense N2 (rows of W_up nonzero, pairs (w_i, b_i) pairwise "
                             "non-collinear, columns of W_down nonzero) — needed for the 'only if'")


@hypothesis("depth_at_least", '(stacks) depth `L ≥ n` (symbolic: a stated assumption)',
            params={"n": Param("integer", "the least depth", default=2)}, subject="stack")
def _depth_at_least(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    n = int(p.get("n", 2))
    assert s.stack is not None
    depth = s.stack.depth
    if isinstance(depth, int) or getattr(depth, "is_Integer", False):
        ok = int(depth) >= n
        return simple("depth_at_least", HypStatus.PROVED if ok else HypStatus.REFUTED, f"depth $L = {depth} \\ge {n}$",
                       "" if ok else f"depth {depth} < {n}")
    return simple("depth_at_least", HypStatus.ASSUMED, f"depth $L \\ge {n}$", assumption=f"L ≥ {n}")


def _int_or_none(v: Any) -> int | None:
    if isinstance(v, int):
        return v
    if getattr(v, "is_Integer", False):
        return int(v)
    return None


@hypothesis("dim_equals", '`d = n` (symbolic sizes: undecided)',
            params={"n": Param("integer", "the dimension", default=1)})
def _dim_equals(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    n = int(p.get("n", 1))
    dim, d = _int_or_none(s.the_block.stream_dim), dim_name(s.the_block)
    statement = f"${d} = {n}$"
    if dim is None:
        return simple("dim_equals", HypStatus.UNKNOWN, statement, "the dimension is symbolic")
    return simple("dim_equals", HypStatus.PROVED if dim == n else HypStatus.REFUTED, statement,
                  "" if dim == n else f"{d} = {dim} ≠ {n}")


@hypothesis("width_at_least", '`m ≥ n` (symbolic sizes: undecided)',
            params={"n": Param("integer", "the least width", default=1)})
def _width_at_least(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    n = int(p.get("n", 1))
    width = s.the_block.width
    statement = f"$m \\ge {n}$"
    w = _int_or_none(width)
    if w is not None:
        return simple("width_at_least", HypStatus.PROVED if w >= n else HypStatus.REFUTED, f"$m = {w} \\ge {n}$",
                      "" if w >= n else f"m = {w} < {n}")
    if sp.Ge(width, n) is sp.true:
        return simple("width_at_least", HypStatus.PROVED, statement)
    return simple("width_at_least", HypStatus.UNKNOWN, statement, "the width is symbolic")


@hypothesis("width_below_dim", '`m < d` (symbolic sizes: undecided)')
def _width_below_dim(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    b = s.the_block
    gap, d = as_expr(b.stream_dim) - as_expr(b.width), dim_name(b)
    if gap.is_positive:
        return simple("width_below_dim", HypStatus.PROVED, f"$m = {sp.latex(b.width)} < {d} = {sp.latex(b.stream_dim)}$")
    if gap.is_nonpositive:
        return simple("width_below_dim", HypStatus.REFUTED, f"$m < {d}$", f"m = {b.width} ≥ {d} = {b.stream_dim}")
    return simple("width_below_dim", HypStatus.UNKNOWN, f"$m < {d}$", f"m < {d} is not decided for symbolic sizes")


def _flint_rank(m: sp.MatrixBase) -> int | None:
    """The rank over Q of a matrix of Rationals by python-flint, exactly: each row times the lcm of its
    denominators (a nonzero factor: the rank is unchanged) is an integer row, and ``fmpz_mat.rank`` is
    exact fraction-free elimination over Z (0.03 s for 64 x 256, where SymPy's DomainMatrix took 1.8 s).
    None without python-flint or for an entry that is not a Rational."""
    try:
        import flint
    except ImportError:
        return None
    rows = []
    for row in m.tolist():
        if not all(isinstance(x, sp.Rational) for x in row):
            return None
        den = math.lcm(*(int(x.q) for x in row)) if row else 1
        rows.append([int(x.p) * (den // int(x.q)) for x in row])
    if not rows or not rows[0]:
        return 0
    return int(flint.fmpz_mat(rows).rank())


def exact_rank(m: sp.MatrixBase) -> int | None:
    """The rank of a matrix with rational entries, computed over Q (None for other entries)."""
    from sympy.polys.domains import QQ
    from sympy.polys.matrices import DomainMatrix

    rep = getattr(m, "_rep", None)  # the matrix's own DomainMatrix (rebuilding one cost 1 s at m = 128)
    fast = _flint_rank(m)
    if fast is not None:
        return fast
    if isinstance(rep, DomainMatrix) and (rep.domain == QQ or rep.domain.is_ZZ):
        return int(rep.convert_to(QQ).rank())
    if not all(x.is_Rational for x in m):
        return None
    return int(DomainMatrix.from_Matrix(sp.Matrix(m)).convert_to(QQ).rank())


@hypothesis("skip_rank_exceeds_width",
            '`rank M > min(m, rank W_down, rank W_up)` (exact ranks over Q; the weight ranks only for concrete weights)')
def _skip_rank_exceeds_width(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    b = s.the_block
    rank, how = skip_rank(b)
    statement = ("$\\operatorname{rank} M > \\min(m, \\operatorname{rank} W_{\\mathrm{down}}, "
                 "\\operatorname{rank} W_{\\mathrm{up}})$")
    if rank is None:
        return simple("skip_rank_exceeds_width", HypStatus.UNKNOWN, statement, f"rank M undecided ({how})")
    bounds: list[tuple[str, Any]] = [("m", b.width)]
    if b.w_up is not None and b.w_down is not None:
        for name, w in (("\\operatorname{rank} W_{\\mathrm{down}}", b.w_down),
                        ("\\operatorname{rank} W_{\\mathrm{up}}", b.w_up)):
            r = exact_rank(w)
            if r is not None:
                bounds.append((name, r))
    for name, bound in bounds:
        gt = sp.Gt(rank, bound)
        if gt is sp.true:
            return simple("skip_rank_exceeds_width", HypStatus.PROVED,
                          f"$\\operatorname{{rank}} M = {sp.latex(rank)} > {name} = {sp.latex(bound)}$"
                          f" ({how})")
    if all(sp.Gt(rank, bound) is sp.false for _, bound in bounds):
        return simple("skip_rank_exceeds_width", HypStatus.REFUTED, statement,
                      f"rank M = {rank} ≤ the width and the ranks of the weights ("
                      + ", ".join(str(v) for _, v in bounds) + ")")
    return simple("skip_rank_exceeds_width", HypStatus.UNKNOWN, statement,
                  f"rank M = {rank} is not compared with m = {b.width} for symbolic sizes")


@hypothesis("hyper_down_rank_within_dim",
            "the skip is a Hyper-Connection mix `A ⊗ I_d` and `rank W_down ≤ d` (exact, concrete weights only)")
def _hyper_down_rank_within_dim(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    b = s.the_block
    statement = "$M = A \\otimes I_d$ and $\\operatorname{rank} W_{\\mathrm{down}} \\le d$"
    if not is_stream_skip(b.skip):
        return simple("hyper_down_rank_within_dim", HypStatus.REFUTED, statement, "the skip is not A ⊗ I_d")
    if b.w_down is None or not isinstance(b.dim, int):
        return simple("hyper_down_rank_within_dim", HypStatus.UNKNOWN, statement, "needs concrete weights")
    r = exact_rank(b.w_down)
    if r is None:
        return simple("hyper_down_rank_within_dim", HypStatus.UNKNOWN, statement, "W_down has irrational entries")
    ok = r <= b.dim
    return simple("hyper_down_rank_within_dim", HypStatus.PROVED if ok else HypStatus.REFUTED, statement,
                  "" if ok else f"rank W_down = {r} > d = {b.dim}")
