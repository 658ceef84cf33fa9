"""Hypotheses about the skip ``x ↦ Mx``: zero, nonzero, invertible, products along a stack, rank."""

from __future__ import annotations

from typing import Any

from ..model.block import hc_structure_rank
from .checks import Subject, registrar, simple
from .derivation import HypothesisCheck, HypStatus
from .skips import is_stream_skip, kind_of, skip_invertible, skip_is_zero, skip_latex, stack_skip_product_nonzero

__all__ = ["CHECKERS"]

CHECKERS, hypothesis = registrar()


# ---- skips -------------------------------------------------------------------------------------


@hypothesis("skip_none", '`M = 0` (every block of a stack, too)', subject="any")
def _skip_none(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    zero = all(skip_is_zero(b.skip) for b in s.blocks())
    return simple("skip_none", HypStatus.PROVED if zero else HypStatus.REFUTED, "$M = 0$ (no skip connection)",
                   "" if zero else "the skip is nonzero")


@hypothesis("skip_nonzero", '`M ≠ 0`', binds=('M',))
def _skip_nonzero(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    z = skip_is_zero(s.the_block.skip)
    m = skip_latex(s.the_block.skip)
    if z is False:
        return simple("skip_nonzero", HypStatus.PROVED, f"$M = {m} \\ne 0$", bindings={"M": m})
    if z is True:
        return simple("skip_nonzero", HypStatus.REFUTED, "$M \\ne 0$", "the skip is zero")
    return simple("skip_nonzero", HypStatus.UNKNOWN, "$M \\ne 0$", "could not decide whether the skip is zero")


@hypothesis("skip_invertible", '`M` invertible (exact determinant)', binds=('M',))
def _skip_invertible(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    skip = s.the_block.skip
    inv = skip_invertible(skip)
    m = skip_latex(skip)
    how = kind_of(skip).invertible_how
    if inv is True:
        return simple("skip_invertible", HypStatus.PROVED, f"$M = {m}$ is invertible ({how})", bindings={"M": m})
    if inv is False:
        return simple("skip_invertible", HypStatus.REFUTED, f"$M = {m}$ is invertible", "the skip is singular")
    return simple("skip_invertible", HypStatus.UNKNOWN, f"$M = {m}$ is invertible", "invertibility undecided")


@hypothesis("skip_hyper_invertible", "the skip is a Hyper-Connection mix `A ⊗ I_d` of `n ≥ 2` streams, `A` invertible")
def _skip_hyper_invertible(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    skip = s.the_block.skip
    statement = "$M = A \\otimes I_d$ with $n \\ge 2$ streams and $A$ invertible"
    if not is_stream_skip(skip) or skip.matrix is None or skip.matrix.rows < 2:
        return simple("skip_hyper_invertible", HypStatus.REFUTED, statement, "the skip is not A ⊗ I_d with n ≥ 2")
    inv = skip_invertible(skip)
    status = {True: HypStatus.PROVED, False: HypStatus.REFUTED, None: HypStatus.UNKNOWN}[inv]
    return simple("skip_hyper_invertible", status, statement, "" if inv else "A is not shown invertible")


@hypothesis("hc_structured", "the weights are Hyper-Connection-structured, `W_down = β ⊗ W⁰`, as the spec declares "
            "(`hyper(..., structured: true)`; checked exactly for given weights)")
def _hc_structured(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    b = s.the_block
    statement = ("the weights are Hyper-Connection-structured: $W_{\\mathrm{down}} = \\beta \\otimes W^0$ with "
                 "$\\beta \\in \\mathbb{R}^n$, $W^0 \\in \\mathbb{R}^{d \\times m}$")
    if not is_stream_skip(b.skip):
        return simple("hc_structured", HypStatus.REFUTED, statement, "the skip is not a Hyper-Connection A ⊗ I_d")
    if not b.skip.structured:
        return simple("hc_structured", HypStatus.REFUTED, statement,
                      "the weights are arbitrary on the whole n·d stream (no `structured: true` in the spec)")
    if b.w_down is not None and b.skip.n is not None:
        rank = hc_structure_rank(b.w_down, b.skip.n)
        if rank is None:
            return simple("hc_structured", HypStatus.UNKNOWN, statement, "W_down has irrational entries")
        if rank > 1:
            return simple("hc_structured", HypStatus.REFUTED, statement,
                          f"the stream blocks of W_down span a space of dimension {rank} > 1")
        return simple("hc_structured", HypStatus.PROVED,
                      statement + " (the stream blocks of $W_{\\mathrm{down}}$ are multiples of one matrix, exactly)")
    if getattr(b, "weights", None) is not None:  # a file's weights are not read here: never assumed structured
        return simple("hc_structured", HypStatus.UNKNOWN, statement,
                      "the weights come from a file, whose structure is not checked (declare inline weights)")
    return simple("hc_structured", HypStatus.ASSUMED, statement,
                  assumption="Hyper-Connection-structured weights W_down = β ⊗ W⁰ (declared: `structured: true`)")


@hypothesis("skip_product_nonzero", '(stacks) `M_L⋯M_1 ≠ 0`', subject="stack")
def _skip_product(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    assert s.stack is not None
    statement = "$M_L \\cdots M_1 \\ne 0$"
    if s.library is None:
        return simple("skip_product_nonzero", HypStatus.UNKNOWN, statement, "no library in force to cite")
    value, reason = stack_skip_product_nonzero(s.stack, s.library.provider("doubly-stochastic-product"))
    status = {True: HypStatus.PROVED, False: HypStatus.REFUTED, None: HypStatus.UNKNOWN}[value]
    return simple("skip_product_nonzero", status, f"$M_L \\cdots M_1 \\ne 0$ ({reason})", "" if value else reason)
