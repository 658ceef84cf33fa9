"""Hypotheses of docs/theorems.md#deep-stacks: deep bias-free ReLU stacks.

Every check is exact: sizes are compared as SymPy expressions in the symbolic dimension ``d`` (positive
integer) and decided only when SymPy's assumptions prove the comparison; skips are decided by the
project's exact sign decision (:func:`symabsorb.analysis.identity.exact_sign`), never by ``== 0`` on a
SymPy value. A stack is the list of its blocks repeated ``repeat`` times; a symbolic repeat (``b ^ L``)
is treated as "every block may come first or later" with ``L ≥ 2`` stated by the depth hypothesis.

:func:`d_free` is Lemma F's bound in its general form (``r_k = min(d, m_k, m_{k+1})``), never the
shortcut ``(2d−1)Σm_k − (L−1)d²``, which is too small when some ``m_k < d``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import sympy as sp

from ..model.block import Block, Stack
from .checks import Param, Subject, as_expr, registrar, simple
from .derivation import HypothesisCheck, HypStatus
from .hyp_activation import CHECKERS as ACTIVATION
from .skips import is_stream_skip

__all__ = ["CHECKERS", "d_free", "d_res", "profile", "shortcut_d_free"]

CHECKERS, hypothesis = registrar()


def d_free(d: int, widths: Sequence[int]) -> int:
    """Lemma F: ``m_1(d−1) + Σ_{k<L} [r_k(m_k + m_{k+1} − r_k) − m_{k+1}] + d·m_L``, ``r_k = min(d, m_k, m_{k+1})``."""
    ms = list(widths)
    total = ms[0] * (d - 1) + d * ms[-1]
    for a, b in itertools.pairwise(ms):
        r = min(d, a, b)
        total += r * (a + b - r) - b
    return total


def shortcut_d_free(d: int, widths: Sequence[int]) -> int:
    """The shortcut ``(2d−1)Σm_k − (L−1)d²``: equal to :func:`d_free` only when every ``m_k ≥ d`` (kept for tests
    and docs, never used to certify)."""
    return (2 * d - 1) * sum(widths) - (len(widths) - 1) * d * d


def d_res(d: int, widths: Sequence[int]) -> int:
    """``(2d−1)Σm_k``: the dimension of the residual stacks' function family (docs/theorems.md#lemma-f)."""
    return (2 * d - 1) * sum(widths)


def profile(stack: Stack) -> tuple[list[Block], bool]:
    """The blocks in order (the repeat unrolled when it is a number) and whether the repeat is symbolic."""
    blocks = list(stack.blocks)
    if isinstance(stack.repeat, int) or getattr(stack.repeat, "is_Integer", False):
        return blocks * int(stack.repeat), False
    return blocks, True


def _truth(e: sp.Expr) -> bool | None:
    """Whether ``e ≥ 0`` is proved (True), refuted (False), or undecided (None) by SymPy's assumptions."""
    for form in _forms(e):
        if form.is_nonnegative:
            return True
        if form.is_negative:
            return False
    return None


def _forms(e: sp.Expr) -> Iterator[sp.Expr]:
    """``e`` as written, expanded, then factored when it is a polynomial (sizes: ``L·d − d = d(L − 1)``),
    else simplified: SymPy's assumptions read each form; simplify (and the import of its first call) only
    past a polynomial."""
    yield e
    expanded = sp.expand(e)
    yield expanded
    yield sp.factor(expanded) if expanded.is_polynomial() else sp.simplify(e)


def _ge(a: Any, b: Any) -> bool | None:
    return _truth(as_expr(a) - as_expr(b))


def _eq(a: Any, b: Any) -> bool | None:
    """Whether two sizes are equal, by the exact sign decision on each form of their difference."""
    from ..analysis.identity import exact_zero

    for diff in _forms(as_expr(a) - as_expr(b)):
        decided = exact_zero(diff)
        if decided is not None:
            return decided
    return None


def _stream_dim(stack: Stack) -> Any:
    return stack.blocks[0].stream_dim


def _no_stack(name: str, statement: str) -> HypothesisCheck:
    return simple(name, HypStatus.REFUTED, statement, "not a stack")


@hypothesis("each_bias_free_relu",
            "(stacks) every block is an ungated ReLU block (`σ = max(z, 0)` exactly), bias-free, without "
            "normalisation, with a `d × d` skip (no Hyper-Connection)", subject="stack")
def _each_bias_free_relu(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    name = "each_bias_free_relu"
    statement = "every block is a bias-free ReLU block without normalisation"
    if s.stack is None:
        return _no_stack(name, statement)
    for block in s.blocks():
        if block.gated:
            return simple(name, HypStatus.REFUTED, statement, f"block {block.name} is gated")
        if not block.question.bare:
            return simple(name, HypStatus.REFUTED, statement,
                          f"block {block.name} has biases or a normalisation (Part III is about bias-free stacks)")
        if is_stream_skip(block.skip):
            return simple(name, HypStatus.REFUTED, statement, f"block {block.name} has a Hyper-Connection skip")
        relu = ACTIVATION["same_function"](Subject(block=block, budget=s.budget), {"reference": "relu"})
        if relu.status is not HypStatus.PROVED:
            status = HypStatus.REFUTED if relu.status is HypStatus.REFUTED else HypStatus.UNKNOWN
            return simple(name, status, statement, f"block {block.name}: σ is not shown to be ReLU "
                          "(GELU-type σ: only Lemma T's transferred statements, never Part III's absorptions)")
    return simple(name, HypStatus.PROVED, statement)


@hypothesis("stack_dim_equals", "(stacks) the stream dimension is `d = n` (a symbolic `d` asks about every dimension: fails)",
            params={"n": Param("integer", "the dimension", default=1)}, subject="stack")
def _stack_dim_equals(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    n = int(p.get("n", 1))
    statement = f"$d = {n}$"
    if s.stack is None:
        return _no_stack("stack_dim_equals", statement)
    dims = {b.stream_dim for b in s.stack.blocks}
    if len(dims) != 1:
        return simple("stack_dim_equals", HypStatus.REFUTED, statement, "the blocks have different dimensions")
    same = _eq(next(iter(dims)), n)
    if same is None:  # a symbolic d asks about every dimension: a result for d = n alone does not answer it
        return simple("stack_dim_equals", HypStatus.REFUTED, statement,
                      f"the dimension is symbolic (the result is about `dim: {n}` only)")
    return simple("stack_dim_equals", HypStatus.PROVED if same else HypStatus.REFUTED, statement,
                  "" if same else f"d = {next(iter(dims))} ≠ {n}")


@hypothesis("stack_dim_at_least", "(stacks) the stream dimension is `d ≥ n` (symbolic `d`: a stated assumption)",
            params={"n": Param("integer", "the least dimension", default=2)}, subject="stack")
def _stack_dim_at_least(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    n = int(p.get("n", 2))
    statement = f"$d \\ge {n}$"
    if s.stack is None:
        return _no_stack("stack_dim_at_least", statement)
    dim = _stream_dim(s.stack)
    ok = _ge(dim, n)
    if ok is None:
        return simple("stack_dim_at_least", HypStatus.ASSUMED, statement, assumption=f"d ≥ {n}")
    return simple("stack_dim_at_least", HypStatus.PROVED if ok else HypStatus.REFUTED, statement,
                  "" if ok else f"d = {dim} < {n}")


@hypothesis("dim_not_below",
            "(stacks) the stream dimension is not a number below `n` (a symbolic `d` passes: the statement it guards "
            "says `d ≥ n` itself)", params={"n": Param("integer", "the least dimension", default=2)}, subject="stack")
def _dim_not_below(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    n = int(p.get("n", 2))
    statement = f"$d$ is not a number below ${n}$"
    if s.stack is None:
        return _no_stack("dim_not_below", statement)
    ok = _ge(_stream_dim(s.stack), n)
    return simple("dim_not_below", HypStatus.REFUTED if ok is False else HypStatus.PROVED, statement,
                  f"d < {n}" if ok is False else "")


def _skip_det_sign(block: Block) -> int | None:
    from ..analysis.identity import exact_sign
    from .skips import kind_of, skip_matrix

    scale = kind_of(block.skip).scale(block.skip)  # M = s·I_d: det M = s^d
    if scale is not None and scale == 1:
        return 1
    m = skip_matrix(block)
    if m is None:
        return exact_sign(sp.Abs(scale)) if scale is not None else None
    return exact_sign(sp.Abs(sp.Matrix(m).det()))


@hypothesis("each_skip_invertible", "(stacks) every skip `M_k` is invertible (`det M_k ≠ 0`, exact sign decision)",
            subject="stack")
def _each_skip_invertible(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    statement = "every skip $M_k$ is invertible"
    if s.stack is None:
        return _no_stack("each_skip_invertible", statement)
    for block in s.blocks():
        if is_stream_skip(block.skip):
            return simple("each_skip_invertible", HypStatus.REFUTED, statement,
                          f"block {block.name}: a Hyper-Connection skip (not covered)")
        sign = _skip_det_sign(block)
        if sign is None:
            return simple("each_skip_invertible", HypStatus.UNKNOWN, statement,
                          f"block {block.name}: det M is neither proved zero nor proved nonzero")
        if sign == 0:
            return simple("each_skip_invertible", HypStatus.REFUTED, statement, f"block {block.name}: det M = 0")
    return simple("each_skip_invertible", HypStatus.PROVED, statement)


def _widths(s: Subject) -> tuple[list[Any], bool]:
    assert s.stack is not None
    blocks, symbolic = profile(s.stack)
    return [b.width for b in blocks], symbolic


@hypothesis("width_profile_1d",
            "(stacks) the width profile is Theorem 1D's case `case`: `first-one` (`m_1 = 1`), `all-wide` (every "
            "`m_k ≥ 2`), `wide-then-one` (`m_1 ≥ 2` and some later `m_k = 1`); symbolic widths: decided only when "
            "SymPy proves the comparisons", params={"case": Param("string", "the case of Theorem 1D", required=True,
                                                                  choices=("first-one", "all-wide", "wide-then-one"))},
            subject="stack")
def _width_profile_1d(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    case = str(p.get("case"))
    statement = {"first-one": "the first block has width $m_1 = 1$",
                 "all-wide": "every block has width $m_k \\ge 2$",
                 "wide-then-one": "$m_1 \\ge 2$ and some later block has width $m_k = 1$"}[case]
    name = "width_profile_1d"
    if s.stack is None:
        return _no_stack(name, statement)
    widths, symbolic = _widths(s)
    wide = [_ge(w, 2) for w in widths]
    one = [_eq(w, 1) for w in widths]
    later = range(len(widths)) if symbolic else range(1, len(widths))
    if case == "first-one":
        status = one[0]
    elif case == "all-wide":
        status = False if False in wide else (None if None in wide else True)
    else:
        later_one = [one[k] for k in later]
        some = True if True in later_one else (None if None in later_one else False)
        status = False if (wide[0] is False or some is False) else (None if None in (wide[0], some) else True)
    if status is None:
        return simple(name, HypStatus.UNKNOWN, statement, "the widths are symbolic and the comparison is not proved")
    shown = ", ".join(sp.sstr(w) for w in widths) + (" (repeated)" if symbolic else "")
    return simple(name, HypStatus.PROVED if status else HypStatus.REFUTED, statement + f" (widths {shown})",
                  "" if status else f"the widths are ({shown})")


@hypothesis("widening_profile",
            "(stacks) Theorem FA's profile: `m_1 ≥ 2d`, every `m_k ≥ 2d`, and some later `m_k ≥ m_1 + d` "
            "(proved from the size expressions)", subject="stack")
def _widening_profile(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    name = "widening_profile"
    statement = "$m_1 \\ge 2d$, every $m_k \\ge 2d$ and some later $m_k \\ge m_1 + d$"
    if s.stack is None:
        return _no_stack(name, statement)
    widths, symbolic = _widths(s)
    d = _stream_dim(s.stack)
    shown = ", ".join(sp.sstr(w) for w in widths) + (" (repeated)" if symbolic else "")
    every = [_ge(w, 2 * as_expr(d)) for w in widths]
    later = range(len(widths)) if symbolic else range(1, len(widths))
    wider = [_ge(widths[k], as_expr(widths[0]) + as_expr(d)) for k in later]
    if False in every:
        return simple(name, HypStatus.REFUTED, statement, f"some width is below 2d (widths {shown}, d = {d})")
    if not wider or all(w is False for w in wider):
        return simple(name, HypStatus.REFUTED, statement,
                      f"no later block is d units wider than the first (widths {shown}, d = {d})")
    if None in every or True not in wider:
        return simple(name, HypStatus.UNKNOWN, statement, f"not proved from the size expressions (widths {shown})")
    widths_tex = ", ".join(sp.latex(w) for w in widths) + (" \\text{ (repeated)}" if symbolic else "")
    where = "" if isinstance(d, sp.Symbol) else f", $d = {sp.latex(d)}$"
    return simple(name, HypStatus.PROVED, statement + f" (widths $({widths_tex})${where})")


@hypothesis("equal_widths", "(stacks) every block has the same width (proved from the size expressions)",
            subject="stack")
def _equal_widths(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    statement = "every block has the same width"
    if s.stack is None:
        return _no_stack("equal_widths", statement)
    widths, _ = _widths(s)
    same = [_eq(w, widths[0]) for w in widths]
    if False in same:
        return simple("equal_widths", HypStatus.REFUTED, statement, "the widths differ")
    if None in same:
        return simple("equal_widths", HypStatus.UNKNOWN, statement, "not proved from the size expressions")
    return simple("equal_widths", HypStatus.PROVED, statement)


@hypothesis("stack_profile_is",
            "(stacks) the stream dimension is exactly `dim` and the width profile is exactly `widths` (a number per "
            "block, the repeat unrolled)",
            params={"dim": Param("integer", "the dimension", required=True),
                    "widths": Param("strings", "the widths, in order", required=True)}, subject="stack")
def _stack_profile_is(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    dim = int(p["dim"])
    want = [sp.Integer(int(w)) for w in p["widths"]]
    statement = f"$d = {dim}$ and widths $({', '.join(map(str, want))})$"
    if s.stack is None:
        return _no_stack("stack_profile_is", statement)
    widths, symbolic = _widths(s)
    if symbolic or len(widths) != len(want):
        return simple("stack_profile_is", HypStatus.REFUTED, statement, "another depth")
    checks = [_eq(_stream_dim(s.stack), dim), *(_eq(a, b) for a, b in zip(widths, want, strict=True))]
    if False in checks:
        return simple("stack_profile_is", HypStatus.REFUTED, statement, "another profile")
    if None in checks:
        return simple("stack_profile_is", HypStatus.UNKNOWN, statement, "symbolic sizes")
    return simple("stack_profile_is", HypStatus.PROVED, statement)
