"""Exact facts about skips: zero, invertible, the target ``T = −M/(2c)``, products along a stack."""

from __future__ import annotations

from typing import Any

import sympy as sp

from ..analysis.identity import exact_zero
from ..model.block import Block, Skip, Stack

__all__ = [
    "is_identity_like",
    "skip_invertible",
    "skip_is_zero",
    "skip_latex",
    "skip_matrix",
    "stack_skip_product_nonzero",
    "target_latex",
    "target_matrix",
    "target_plain",
]


def _matrix_is_zero(m: sp.MatrixBase) -> bool | None:
    values = [exact_zero(x) for x in m]
    if all(v is True for v in values):
        return True
    if any(v is False for v in values):
        return False
    return None


def _negated(v: bool | None) -> bool | None:
    return None if v is None else not v


def _det(m: sp.MatrixBase) -> sp.Expr:
    return sp.simplify(m.det(method="bareiss"))


def _centering(n: int) -> sp.ImmutableMatrix:
    """``P = I − 11ᵀ/n``, the orthogonal projector onto the vectors with zero mean."""
    return sp.ImmutableMatrix(sp.eye(n) - sp.ones(n, n) / n)


def skip_is_zero(skip: Skip) -> bool | None:
    if skip.kind == "none":
        return True
    if skip.kind == "centered":  # factor·P, and P = 0 exactly when n = 1
        assert skip.factor is not None
        return True if skip.n == 1 else exact_zero(skip.factor)
    if skip.kind == "identity":
        return False
    if skip.kind == "scaled":
        assert skip.factor is not None
        return exact_zero(skip.factor)
    assert skip.matrix is not None
    return _matrix_is_zero(skip.matrix)


def skip_invertible(skip: Skip) -> bool | None:
    if skip.kind == "identity":
        return True
    if skip.kind in ("none", "centered"):  # P·1 = 0
        return False
    if skip.kind == "scaled":
        assert skip.factor is not None
        return _negated(exact_zero(skip.factor))
    assert skip.matrix is not None
    det = _det(skip.matrix)
    return _negated(exact_zero(det))


def is_identity_like(skip: Skip) -> bool:
    return skip.kind == "identity" or (skip.kind == "scaled" and skip.factor == 1)


def skip_matrix(block: Block) -> sp.ImmutableMatrix | None:
    """M as an explicit matrix when the dimension is numeric."""
    skip = block.skip
    dim = block.dim
    if skip.kind == "matrix":
        return skip.matrix
    if not isinstance(dim, int):
        return None
    if skip.kind == "identity":
        return sp.ImmutableMatrix(sp.eye(dim))
    if skip.kind == "none":
        return sp.ImmutableMatrix(sp.zeros(dim, dim))
    if skip.kind == "scaled":
        return sp.ImmutableMatrix(skip.factor * sp.eye(dim))
    if skip.kind == "centered":
        return sp.ImmutableMatrix(skip.factor * _centering(dim))
    assert skip.matrix is not None
    return sp.ImmutableMatrix(sp.kronecker_product(skip.matrix, sp.eye(dim)))


def dim_name(block: Any) -> str:
    """The symbol of the dimension a block maps: ``d``, or ``nd`` for a Hyper-Connection, whose
    ``d`` is the stream dimension (``dim:``) so that ``M = A ⊗ I_d`` is ``nd × nd``."""
    return "nd" if block.skip.kind == "hyper" else "d"


def skip_latex(skip: Skip) -> str:
    if skip.kind == "identity":
        return "I_d"
    if skip.kind == "none":
        return "0"
    if skip.kind == "scaled":
        return f"{sp.latex(skip.factor)}\\, I_d"
    if skip.kind == "matrix":
        return sp.latex(skip.matrix)
    if skip.kind == "centered":
        return _centered_latex(skip.factor)
    return f"{sp.latex(skip.matrix)} \\otimes I_d"


_P_LATEX = "(I_d - \\tfrac{1}{d}\\mathbf{1}\\mathbf{1}^\\top)"


def _centered_latex(factor: sp.Expr | None) -> str:
    if factor == 1:
        return _P_LATEX
    if factor == -1:
        return "-" + _P_LATEX
    return f"{sp.latex(factor)}\\,{_P_LATEX}"


def target_matrix(block: Block, c: sp.Expr) -> sp.ImmutableMatrix | None:
    m = skip_matrix(block)
    return None if m is None else sp.ImmutableMatrix(-m / (2 * c))


def _scale(skip: Skip) -> sp.Expr:
    if skip.kind == "scaled":
        assert skip.factor is not None
        return skip.factor
    return sp.Integer(1)


def target_latex(skip: Skip, c: sp.Expr) -> str:
    """``−M/(2c)`` in LaTeX, simplified for identity and scaled skips."""
    if skip.kind in ("identity", "scaled"):
        factor = sp.simplify(-_scale(skip) / (2 * c))
        if factor == -1:
            return "-I_d"
        if factor == 1:
            return "I_d"
        return f"{sp.latex(factor)}\\, I_d"
    factor = sp.simplify(-1 / (2 * c))
    if skip.kind == "centered":
        return _centered_latex(sp.simplify(factor * skip.factor))
    if skip.kind == "matrix":
        assert skip.matrix is not None
        return sp.latex(sp.ImmutableMatrix(skip.matrix * factor))
    assert skip.matrix is not None
    return f"{sp.latex(sp.ImmutableMatrix(skip.matrix * factor))} \\otimes I_d"


def target_plain(skip: Skip, c: sp.Expr) -> str:
    if skip.kind in ("identity", "scaled"):
        factor = sp.simplify(-_scale(skip) / (2 * c))
        if factor == -1:
            return "-I_d"
        if factor == 1:
            return "I_d"
        return f"-{sp.sstr(-factor)}*I_d" if factor.is_negative else f"{sp.sstr(factor)}*I_d"
    factor = sp.simplify(-1 / (2 * c))
    if skip.kind == "centered":
        scale = sp.simplify(factor * skip.factor)
        p = "(I_d - 11ᵀ/d)"
        return p if scale == 1 else f"-{p}" if scale == -1 else f"{sp.sstr(scale)}*{p}"
    assert skip.matrix is not None
    mat = skip.matrix * factor
    text = "[" + ", ".join("[" + ", ".join(sp.sstr(x) for x in mat.row(i)) + "]" for i in range(mat.rows)) + "]"
    return text if skip.kind == "matrix" else f"{text} ⊗ I_d"


def _doubly_stochastic(skip: Skip) -> bool:
    """``M = A ⊗ I_d`` (or ``M = A``) with ``A`` exactly doubly stochastic: entries ≥ 0, rows and columns sum to 1."""
    if skip.kind not in ("hyper", "matrix") or skip.matrix is None:
        return skip.kind == "identity"
    a = skip.matrix
    if a.rows != a.cols or not all(x.is_Rational and x >= 0 for x in a):
        return False
    return all(sum(a.row(i)) == 1 for i in range(a.rows)) and all(sum(a.col(j)) == 1 for j in range(a.cols))


def stack_skip_product_nonzero(stack: Stack, cite: str = "") -> tuple[bool | None, str]:
    """Whether ``M_L ⋯ M_1 ≠ 0``, with the reason (``cite``: the result proving that products of doubly
    stochastic mixes are nonzero)."""
    invertible = [skip_invertible(b.skip) for b in stack.blocks]
    if all(v is True for v in invertible):
        return True, "every skip is invertible, so their product is invertible, hence nonzero"
    if any(skip_is_zero(b.skip) for b in stack.blocks):
        return False, "a skip is zero, so the product is zero"
    if all(_doubly_stochastic(b.skip) for b in stack.blocks):
        return True, ("every skip is A ⊗ I_d with A doubly stochastic (an mHC mix); products of doubly stochastic "
                      f"matrices are doubly stochastic, hence nonzero{f' [{cite}]' if cite else ''}")
    if not isinstance(stack.repeat, int):
        return None, "a skip is singular and the depth is symbolic"
    mats = [skip_matrix(b) for b in stack.blocks]
    if any(m is None for m in mats):
        return None, "a skip is singular and the dimension is symbolic"
    product = sp.eye(mats[0].rows)  # type: ignore[union-attr]
    for _ in range(stack.repeat):
        for m in mats:
            product = m * product
    zero = _matrix_is_zero(product)
    if zero is False:
        return True, "the product of the skips, computed exactly, is nonzero"
    if zero is True:
        return False, "the product of the skips, computed exactly, is zero"
    return None, "the product of the skips could not be decided"
