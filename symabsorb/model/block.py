"""Blocks, skips and stacks: the objects whose absorption symabsorb decides."""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from ..dsl.errors import Span
from ..dsl.syntax import WeightsDecl
from .activation import Activation, AnyActivation, GatedActivation
from .space import Space

__all__ = ["L_DEPTH", "M_WIDTH", "Block", "D", "ResolvedSpec", "Skip", "SpecQuery", "Stack"]

#: Default symbols for a block's dimension, width and a stack's depth.
D = sp.Symbol("d", integer=True, positive=True)
M_WIDTH = sp.Symbol("m", integer=True, positive=True)
L_DEPTH = sp.Symbol("L", integer=True, positive=True)


@dataclass(frozen=True)
class Skip:
    """The skip ``x ↦ M x``.

    ``kind`` is ``identity`` (M = I), ``none`` (M = 0), ``scaled`` (M = factor·I), ``matrix``
    (M given), or ``hyper`` (Hyper-Connections: M = mix ⊗ I_d on ``n`` streams).
    """

    kind: str
    factor: sp.Expr | None = None
    matrix: sp.ImmutableMatrix | None = None
    n: int | None = None
    span: Span | None = field(default=None, compare=False, repr=False)

    def describe(self) -> str:
        if self.kind == "identity":
            return "identity skip M = I"
        if self.kind == "none":
            return "no skip (M = 0)"
        if self.kind == "scaled":
            return f"scaled skip M = {sp.sstr(self.factor)}·I"
        if self.kind == "matrix":
            return f"matrix skip M = {_mat(self.matrix)}"
        return f"Hyper-Connection skip M = A ⊗ I_d with n = {self.n}, A = {_mat(self.matrix)}"


def _mat(m: sp.ImmutableMatrix | None) -> str:
    if m is None:
        return "?"
    return "[" + ", ".join("[" + ", ".join(sp.sstr(x) for x in m.row(i)) + "]" for i in range(m.rows)) + "]"


@dataclass(frozen=True)
class Block:
    """A residual block ``x ↦ M x + MLP(x)``, with symbolic or concrete sizes and weights."""

    name: str
    activation: AnyActivation
    dim: int | sp.Expr
    width: int | sp.Expr
    skip: Skip
    w_up: sp.ImmutableMatrix | None = None
    w_down: sp.ImmutableMatrix | None = None
    w_gate: sp.ImmutableMatrix | None = None
    weights: WeightsDecl | None = None
    span: Span | None = field(default=None, compare=False, repr=False)

    @property
    def gated(self) -> bool:
        return isinstance(self.activation, GatedActivation)

    @property
    def stream_dim(self) -> int | sp.Expr:
        """The dimension the block maps (``n·dim`` for a Hyper-Connection)."""
        if self.skip.kind == "hyper":
            assert self.skip.n is not None
            return self.skip.n * self.dim
        return self.dim

    @property
    def has_inline_weights(self) -> bool:
        return self.w_up is not None and self.w_down is not None

    @property
    def ungated_activation(self) -> Activation | None:
        return self.activation if isinstance(self.activation, Activation) else None


@dataclass(frozen=True)
class Stack:
    """``blocks`` applied in order, the whole sequence repeated ``repeat`` times."""

    name: str
    blocks: tuple[Block, ...]
    repeat: int | sp.Expr = 1
    span: Span | None = field(default=None, compare=False, repr=False)

    @property
    def depth(self) -> int | sp.Expr:
        return len(self.blocks) * self.repeat

    @property
    def uniform(self) -> bool:
        return len(self.blocks) == 1


@dataclass(frozen=True)
class SpecQuery:
    kind: str
    target: Block | Stack | AnyActivation
    order: int | None = None
    text: str = ""
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ResolvedSpec:
    """Everything a spec declares and asks, resolved to mathematics."""

    path: str
    activations: tuple[AnyActivation, ...]
    blocks: tuple[Block, ...]
    stacks: tuple[Stack, ...]
    queries: tuple[SpecQuery, ...]
    imports: tuple[str, ...] = ()
    spaces: tuple[Space, ...] = ()  # `space` declarations, for `symabsorb explore`
