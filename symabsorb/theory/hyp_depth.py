"""Hypotheses of Theorem D1 (docs/theorems.md#depth): concrete bias-free stacks whose blocks have a ReLU tropical
limit, a narrow first block, and every linear piece of every residual block invertible (H).

(H) is certified exactly, never by floats alone:

* the norm route: ``|α₊|·‖W_k‖₂‖U_k‖₂ < σ_min(M_k)``, with rational upper bounds
  ``‖W‖₂² ≤ min(‖W‖_F², ‖WᵀW‖_∞)`` and the lower bound ``σ_min(M)² > t`` proved by the exact positive
  definiteness of ``MᵀM − t·I`` (every leading principal minor > 0, rational arithmetic);
* the exact route: ``det(M_k + α₊ W_k D U_k) ≠ 0`` for all ``2^m`` 0/1 diagonals ``D`` (rational
  determinants), for ``m ≤`` :data:`MAX_EXACT_WIDTH` and at most :data:`MAX_DETERMINANTS` in all.
"""

from __future__ import annotations

import itertools
from typing import Any

import sympy as sp

from ..analysis.identity import exact_zero
from ..model.block import Block
from .checks import Subject, registrar, simple
from .derivation import HypothesisCheck, HypStatus
from .skips import is_stream_skip

__all__ = ["CHECKERS", "MAX_DETERMINANTS", "MAX_EXACT_WIDTH", "certify_h"]

CHECKERS, hypothesis = registrar()

#: Widths up to which (H) may be checked by its 2^m determinants.
MAX_EXACT_WIDTH = 12
#: The work cap of the exact route: determinants over all blocks of a stack.
MAX_DETERMINANTS = 20_000


def _rational_matrix(m: Any) -> sp.Matrix | None:
    if m is None or not all(x.is_Rational for x in m):
        return None
    return sp.Matrix(m)


def _dm(m: sp.Matrix) -> Any:
    from sympy.polys.domains import QQ
    from sympy.polys.matrices import DomainMatrix

    return DomainMatrix.from_Matrix(m).convert_to(QQ)


def _norm2_sq_upper(w: sp.Matrix) -> sp.Rational:
    """A rational upper bound of ``‖W‖₂²``: min of ``‖W‖_F²`` and the max absolute row sum of ``WᵀW``."""
    frob = sum((x * x for x in w), sp.Rational(0))
    g = (w.T * w)
    row = max((sum((abs(g[i, j]) for j in range(g.cols)), sp.Rational(0)) for i in range(g.rows)),
              default=sp.Rational(0))
    return min(frob, row)


def _positive_definite(a: sp.Matrix) -> bool:
    """Exact: every leading principal minor of the symmetric rational matrix ``a`` is > 0."""
    return all(_dm(a[:k, :k]).det() > 0 for k in range(1, a.rows + 1))


def _norm_route(m: sp.Matrix, w: sp.Matrix, u: sp.Matrix, alpha: sp.Rational) -> bool:
    t = alpha * alpha * _norm2_sq_upper(w) * _norm2_sq_upper(u)
    return _positive_definite(m.T * m - t * sp.eye(m.rows))


def _exact_route(m: sp.Matrix, w: sp.Matrix, u: sp.Matrix, alpha: sp.Rational) -> tuple[bool, int | None]:
    """(H) by the 2^m determinants: (True, None) all nonzero; (False, i) the pattern ``i`` is singular."""
    width = u.rows
    for bits in itertools.product((0, 1), repeat=width):
        piece = m + alpha * w * sp.diag(*bits) * u
        if _dm(piece).det() == 0:
            return False, int("".join(map(str, bits)) or "0", 2)
    return True, None


def _tropical_relu(block: Block) -> tuple[sp.Rational | None, str]:
    """``α₊`` with ``σ_∞ = α₊·ReLU`` (``α₋ = 0`` exactly, ``α₊ ≠ 0`` rational, σ locally bounded), or why not."""
    from ..analysis.structure import locally_bounded
    from ..analysis.tropical import slope_at_infinity

    if block.gated:
        return None, "the block is gated"
    expr = block.activation.expr
    if not locally_bounded(expr):
        return None, "σ is not shown locally bounded"
    plus, minus = slope_at_infinity(expr, 1), slope_at_infinity(expr, -1)
    if plus.value is None or minus.value is None:
        return None, (plus.how if plus.value is None else minus.how)
    if exact_zero(minus.value) is not True:
        return None, (f"the slope at −∞ is {minus.value} ≠ 0: the tropical limit is not a multiple of ReLU"
                      if exact_zero(minus.value) is False else f"the slope at −∞, {minus.value}, is not proved 0")
    if exact_zero(plus.value) is not False:
        return None, "the slope at +∞ is 0" if exact_zero(plus.value) else "the slope at +∞ is not proved nonzero"
    if not plus.value.is_Rational:
        return None, f"the slope at +∞, {plus.value}, is not an exact rational"
    return sp.Rational(plus.value), f"σ_∞ = {plus.value}·ReLU ({plus.how}; {minus.how})"


def certify_h(block: Block, alpha: sp.Rational, budget: list[int]) -> tuple[HypStatus, str]:
    """(H) for one concrete block: proved (and by which route), refuted (a singular piece), or unknown."""
    from .skips import skip_matrix

    m = _rational_matrix(skip_matrix(block))
    w, u = _rational_matrix(block.w_down), _rational_matrix(block.w_up)
    if m is None or w is None or u is None:
        return HypStatus.UNKNOWN, f"block {block.name}: the skip or the weights are not all rational"
    if is_stream_skip(block.skip) or not (m.rows == m.cols == u.cols == w.rows and w.cols == u.rows):
        return HypStatus.UNKNOWN, f"block {block.name}: a Hyper-Connection skip or mismatched shapes (not covered)"
    if _norm_route(m, w, u, alpha):
        return HypStatus.PROVED, (f"block {block.name}: |α₊|·‖W‖₂‖U‖₂ < σ_min(M), certified in rational arithmetic "
                                  "(Frobenius/row-sum bounds, exact positive definiteness of MᵀM − t·I)")
    width = u.rows
    if width > MAX_EXACT_WIDTH or budget[0] < 2**width:
        return HypStatus.UNKNOWN, (f"block {block.name}: the norm condition does not certify (H), and its 2^{width} "
                                   "determinants exceed the work cap")
    budget[0] -= 2**width
    ok, bad = _exact_route(m, w, u, alpha)
    if ok:
        return HypStatus.PROVED, f"block {block.name}: all 2^{width} determinants det(M + α₊ W D U) ≠ 0, exactly"
    return HypStatus.REFUTED, (f"block {block.name}: det(M + α₊ W D U) = 0 exactly for the 0/1 pattern "
                               f"{bad:0{width}b} (a singular linear piece)")


@hypothesis("each_tropical_relu",
            "(stacks) every block is ungated, bias-free, σ locally bounded with `σ(s) = α₊·max(s, 0) + o(|s|)` "
            "(exact `α₊ ≠ 0`, slope 0 at −∞: Lemma T's limit is a multiple of ReLU)", subject="stack")
def _each_tropical_relu(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    statement = ("every block is ungated with $\\sigma(s) = \\alpha_+\\max(s, 0) + o(|s|)$ at $\\pm\\infty$, "
                 "$\\alpha_+ \\ne 0$, $\\sigma$ locally bounded")
    if s.stack is None:
        return simple("each_tropical_relu", HypStatus.REFUTED, statement, "not a stack")
    for block in s.stack.blocks:
        alpha, why = _tropical_relu(block)
        if alpha is None:
            status = HypStatus.REFUTED if block.gated or "≠ 0" in why else HypStatus.UNKNOWN
            return simple("each_tropical_relu", status, statement, f"block {block.name}: {why}")
    return simple("each_tropical_relu", HypStatus.PROVED, statement)


@hypothesis("first_width_below_twice_dim",
            "(stacks) every block has inline weights and the first has width `m₁ < 2d` (so has the residual-free first block)",
            subject="stack")
def _first_narrow(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    statement = "the first block has width $m_1 < 2d$"
    if s.stack is None:
        return simple("first_width_below_twice_dim", HypStatus.REFUTED, statement, "not a stack")
    first = s.stack.blocks[0]
    m, d = first.width, first.dim
    if any(is_stream_skip(b.skip) for b in s.stack.blocks):
        return simple("first_width_below_twice_dim", HypStatus.REFUTED, statement,
                      "a Hyper-Connection skip (the stream has dimension n·d): not covered")
    if not all(b.has_inline_weights for b in s.stack.blocks) or not (isinstance(m, int) and isinstance(d, int)):
        return simple("first_width_below_twice_dim", HypStatus.REFUTED, statement,
                      "only concrete stacks are decided: some block has no inline weights")
    if m < 2 * d:
        return simple("first_width_below_twice_dim", HypStatus.PROVED, statement + f" (here $m_1 = {m}$, $d = {d}$)")
    return simple("first_width_below_twice_dim", HypStatus.REFUTED, statement,
                  f"the first block has width {m} ≥ 2d = {2 * d}")


@hypothesis("each_piece_invertible",
            "(stacks) (H): `det(M_k + α₊W_k D U_k) ≠ 0` for every 0/1 diagonal `D` and every block, certified by "
            "`|α₊|‖W_k‖₂‖U_k‖₂ < σ_min(M_k)` in rational arithmetic or by the `2^m` exact determinants "
            "(`m ≤ 12`, a work cap); concrete rational weights only", subject="stack")
def _each_piece_invertible(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    statement = ("(H): every linear piece $M_k + \\alpha_+ W_k D U_k$ ($D$ a 0/1 diagonal) of every residual block "
                 "is invertible")
    if s.stack is None:
        return simple("each_piece_invertible", HypStatus.REFUTED, statement, "not a stack")
    budget = [MAX_DETERMINANTS]
    how: list[str] = []
    seen: set[str] = set()
    for block in s.stack.blocks:
        if block.name in seen:
            continue
        seen.add(block.name)
        if not block.has_inline_weights or not block.question.bare:
            return simple("each_piece_invertible", HypStatus.UNKNOWN, statement,
                          f"block {block.name}: no inline weights (or biases, or a normalisation)")
        alpha, why = _tropical_relu(block)
        if alpha is None:
            return simple("each_piece_invertible", HypStatus.UNKNOWN, statement, f"block {block.name}: {why}")
        status, text = certify_h(block, alpha, budget)
        if status is not HypStatus.PROVED:
            return simple("each_piece_invertible", status, statement, text)
        how.append(text)
    return simple("each_piece_invertible", HypStatus.PROVED, statement + " (" + "; ".join(how) + ")")
