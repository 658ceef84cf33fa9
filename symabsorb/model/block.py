"""Blocks, skips and stacks: the objects whose absorption symabsorb decides."""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from ..dsl.errors import Span
from ..dsl.syntax import WeightsDecl
from .activation import Activation, AnyActivation, GatedActivation
from .space import Space

__all__ = ["L_DEPTH", "M_WIDTH", "NORMS", "Block", "D", "Question", "ResolvedSpec", "Skip", "SpecQuery", "Stack",
           "hc_structure_rank"]

#: Where a block's normalisation sits (``norm:``): none, LayerNorm or RMSNorm before the block or after the sum.
NORMS = ("none", "pre-ln", "post-ln", "pre-rms", "post-rms")

#: Default symbols for a block's dimension, width and a stack's depth.
D = sp.Symbol("d", integer=True, positive=True)
M_WIDTH = sp.Symbol("m", integer=True, positive=True)
L_DEPTH = sp.Symbol("L", integer=True, positive=True)


@dataclass(frozen=True)
class Skip:
    """The skip ``x ↦ M x``.

    ``kind`` is ``identity`` (M = I), ``none`` (M = 0), ``scaled`` (M = factor·I), ``matrix``
    (M given), ``hyper`` (Hyper-Connections: M = mix ⊗ I_d on ``n`` streams), or ``centered``
    (M = factor·P with P = I − 11ᵀ/n on ``n`` coordinates: the skip a post-LN question reduces to).
    What each kind means, exactly, is its registered kind's (:mod:`symabsorb.theory.skips`, ``@skip_kind``).

    ``structured`` (``hyper(..., structured: true)``): the block's weights are Hyper-Connection-structured,
    ``W_down = β ⊗ W⁰`` (one ``d × m`` output written into stream ``k`` scaled by ``β_k``), not arbitrary on
    the whole ``n·d`` stream; the question is then asked of such weights only.
    """

    kind: str
    factor: sp.Expr | None = None
    matrix: sp.ImmutableMatrix | None = None
    n: int | None = None
    span: Span | None = field(default=None, compare=False, repr=False)
    structured: bool = False


def hc_structure_rank(w_down: sp.MatrixBase, n: int) -> int | None:
    """The rank of the ``n × (d·m)`` matrix whose row ``k`` is stream ``k``'s block ``W_down[kd:(k+1)d, :]``
    flattened, exactly over Q: ``W_down = β ⊗ W⁰`` for some ``β``, ``W⁰`` iff it is at most 1. None when an
    entry is not rational or the rows do not split into ``n`` streams."""
    from sympy import QQ
    from sympy.polys.matrices import DomainMatrix

    if n < 1 or w_down.rows % n or not all(getattr(x, "is_Rational", False) for x in w_down):
        return None
    d = w_down.rows // n
    rows = [[w_down[k * d + i, j] for i in range(d) for j in range(w_down.cols)] for k in range(n)]
    return int(DomainMatrix.from_Matrix(sp.Matrix(rows)).convert_to(QQ).rank())


@dataclass(frozen=True)
class Question:
    """The question a block asks: does the block carry biases, may the residual-free block carry
    them, and where the normalisation sits (``none``: the bare residual sum)."""

    block_biases: bool = False
    absorber_biases: bool = False
    norm: str = "none"

    @property
    def bias_label(self) -> str:
        """``none`` (the paper's setting), ``block``, ``absorber`` or ``both``."""
        return {(False, False): "none", (True, False): "block", (False, True): "absorber",
                (True, True): "both"}[(self.block_biases, self.absorber_biases)]

    @property
    def bare(self) -> bool:
        return not self.block_biases and not self.absorber_biases and self.norm == "none"

    def describe(self) -> str:
        block = "the block has biases" if self.block_biases else "the block has no biases"
        absorber = "the residual-free block may carry biases" if self.absorber_biases else \
            "the residual-free block has none"
        norm = {"none": "no normalisation",
                "pre-ln": "LayerNorm before the block ($x + B(\\mathrm{LN}(x))$ against $B'(\\mathrm{LN}(x))$)",
                "post-ln": "LayerNorm after the residual sum ($\\mathrm{LN}(x + B(x))$ against "
                           "$\\mathrm{LN}(B'(x))$)",
                "pre-rms": "RMSNorm before the block ($x + B(\\mathrm{RMS}(x))$ against $B'(\\mathrm{RMS}(x))$)",
                "post-rms": "RMSNorm after the residual sum ($\\mathrm{RMS}(x + B(x))$ against "
                            "$\\mathrm{RMS}(B'(x))$)"}[self.norm]
        return f"{block}, {absorber}; {norm}"


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
    bias: bool = False  # arbitrary (symbolic) hidden and output biases, or nonzero biases read from a file
    b_up: sp.ImmutableMatrix | None = None  # width x 1: hidden biases (up rows of a gated unit)
    b_down: sp.ImmutableMatrix | None = None  # dim x 1: output bias
    b_gate: sp.ImmutableMatrix | None = None  # width x 1: gate biases
    absorber_bias: bool | None = None  # None: the residual-free block has the biases the block has
    norm: str = "none"
    eps: sp.Expr | None = None  # the normalisation's epsilon (None: not given)
    ln_gamma: sp.ImmutableMatrix | None = None  # dim x 1: the normalisation's scales (None: not given)

    @property
    def declares_biases(self) -> bool:
        """Biases are part of the block's description (``bias: true``, inline or file biases)."""
        w = self.weights
        return self.bias or any(b is not None for b in (self.b_up, self.b_down, self.b_gate)) or (
            w is not None and any(k is not None for k in (w.up_bias_key, w.down_bias_key, w.gate_bias_key)))

    @property
    def question(self) -> Question:
        """What is asked: the block's biases (exact zeros are no biases), the absorber's, the norm."""
        inline = any(b is not None and any(x != 0 for x in b) for b in (self.b_up, self.b_down, self.b_gate))
        has = self.bias or inline
        absorber = self.declares_biases if self.absorber_bias is None else self.absorber_bias
        return Question(has, absorber, self.norm)

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
