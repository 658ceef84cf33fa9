"""The typed syntax of a ``.absorb`` file: frozen dataclasses, each with its source span.

Spans do not take part in equality, so a spec and its reformatted text compare equal.
Nothing here knows SymPy; turning expressions into mathematics is the model layer's job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from .errors import Span

__all__ = [
    "ActRef",
    "ActivationDef",
    "Binary",
    "BlockDef",
    "BoolOp",
    "Call",
    "Compare",
    "Constraint",
    "Expr",
    "GatedDef",
    "HyperSkip",
    "IdentitySkip",
    "IfExpr",
    "Import",
    "InlineGate",
    "KwArg",
    "Matrix",
    "MatrixSkip",
    "Module",
    "Name",
    "NoSkip",
    "Number",
    "Param",
    "Query",
    "ScaledSkip",
    "Skip",
    "SpaceDef",
    "SpaceRange",
    "StackDef",
    "Statement",
    "Unary",
    "WeightsDecl",
]


def _span() -> Span | None:
    return field(default=None, compare=False, repr=False)  # type: ignore[return-value]


# ---- expressions ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Number:
    value: Fraction
    text: str = field(compare=False)
    span: Span | None = _span()


@dataclass(frozen=True)
class Name:
    id: str
    span: Span | None = _span()


@dataclass(frozen=True)
class KwArg:
    name: str
    value: Expr
    span: Span | None = _span()


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple[Expr, ...]
    kwargs: tuple[KwArg, ...] = ()
    span: Span | None = _span()


@dataclass(frozen=True)
class Unary:
    op: str  # "-" or "+"
    operand: Expr
    span: Span | None = _span()


@dataclass(frozen=True)
class Binary:
    op: str  # "+", "-", "*", "/", "^"
    left: Expr
    right: Expr
    span: Span | None = _span()


@dataclass(frozen=True)
class Compare:
    op: str  # "<", "<=", ">", ">="
    left: Expr
    right: Expr
    span: Span | None = _span()


@dataclass(frozen=True)
class BoolOp:
    op: str  # "and" or "or"
    left: Condition
    right: Condition
    span: Span | None = _span()


@dataclass(frozen=True)
class IfExpr:
    cond: Condition
    then: Expr
    orelse: Expr
    span: Span | None = _span()


Expr = Number | Name | Call | Unary | Binary | IfExpr
Condition = Compare | BoolOp


# ---- declarations --------------------------------------------------------------------------


@dataclass(frozen=True)
class Constraint:
    """One relation between a parameter and a constant bound, as written: ``a > 0`` (``op=">"``,
    ``bound_first=False``) or the ``0 <`` of ``0 < a < 1`` (``op="<"``, ``bound_first=True``)."""

    op: str  # "<", "<=", ">", ">=", "!="
    bound: Expr
    bound_first: bool = False
    span: Span | None = _span()

    @property
    def normalized_op(self) -> str:
        """The operator with the parameter on the left (``0 < a`` is ``a > 0``)."""
        if not self.bound_first:
            return self.op
        return {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}[self.op]


@dataclass(frozen=True)
class Param:
    """``alpha = 1/100``, ``alpha > 0``, ``0 < a < 1``, ``a != 1`` or a default with one constraint.
    A parameter may also be listed again with more constraints (``a > 0, a < 1``): the model layer
    joins the entries of one name."""

    name: str
    default: Expr | None = None
    constraints: tuple[Constraint, ...] = ()
    span: Span | None = _span()


@dataclass(frozen=True)
class ActRef:
    """A reference to an activation by name, with optional parameter values."""

    name: str
    kwargs: tuple[KwArg, ...] = ()
    span: Span | None = _span()


@dataclass(frozen=True)
class InlineGate:
    var: str
    body: Expr
    span: Span | None = _span()


@dataclass(frozen=True)
class ActivationDef:
    name: str
    var: str
    params: tuple[Param, ...]
    body: Expr
    span: Span | None = _span()


@dataclass(frozen=True)
class GatedDef:
    name: str
    gate: ActRef | InlineGate
    span: Span | None = _span()


@dataclass(frozen=True)
class Matrix:
    rows: tuple[tuple[Expr, ...], ...]
    span: Span | None = _span()

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.rows), len(self.rows[0]) if self.rows else 0


@dataclass(frozen=True)
class IdentitySkip:
    span: Span | None = _span()


@dataclass(frozen=True)
class NoSkip:
    span: Span | None = _span()


@dataclass(frozen=True)
class MatrixSkip:
    matrix: Matrix
    span: Span | None = _span()


@dataclass(frozen=True)
class ScaledSkip:
    factor: Expr
    span: Span | None = _span()


@dataclass(frozen=True)
class HyperSkip:
    n: Expr
    mix: Matrix
    span: Span | None = _span()
    #: ``structured: true``: the block's weights are Hyper-Connection-structured (``W_down = β ⊗ W⁰``).
    structured: bool = False


Skip = IdentitySkip | NoSkip | MatrixSkip | ScaledSkip | HyperSkip


@dataclass(frozen=True)
class WeightsDecl:
    """``weights: "FILE"`` with its optional prefix, key map and layout."""

    file: str
    prefix: str | None = None
    up_key: str | None = None
    down_key: str | None = None
    gate_key: str | None = None
    transpose: bool = False
    span: Span | None = _span()
    # bias tensors (``up_bias:``, ``down_bias:``, ``gate_bias:``) and the LayerNorm scale (``ln_gamma: "NAME"``)
    up_bias_key: str | None = None
    down_bias_key: str | None = None
    gate_bias_key: str | None = None
    gamma_key: str | None = None


@dataclass(frozen=True)
class BlockDef:
    name: str
    activation: ActRef | None = None
    dim: Expr | None = None
    width: Expr | None = None
    skip: Skip | None = None
    w_up: Matrix | None = None
    w_down: Matrix | None = None
    w_gate: Matrix | None = None
    weights: WeightsDecl | None = None
    span: Span | None = _span()
    bias: bool | None = None  # `bias: true|false` (symbolic blocks: arbitrary biases)
    b_up: tuple[Expr, ...] | None = None  # inline hidden biases (length width)
    b_down: tuple[Expr, ...] | None = None  # inline output bias (length dim)
    b_gate: tuple[Expr, ...] | None = None  # inline gate biases (gated units)
    absorber_bias: bool | None = None  # may the residual-free block carry biases (None: what the block has)
    norm: str | None = None  # none | pre-ln | post-ln | pre-rms | post-rms
    eps: Expr | None = None
    ln_gamma: tuple[Expr, ...] | None = None  # inline LayerNorm/RMSNorm scales (length dim)
    field_spans: tuple[tuple[str, Span | None], ...] = field(default=(), compare=False, repr=False)

    def span_of(self, name: str) -> Span | None:
        """The span of field ``name`` (``"dim"``, ``"W_up"``, ...), else the block's."""
        for key, span in self.field_spans:
            if key == name:
                return span
        return self.span


@dataclass(frozen=True)
class StackDef:
    """``stack S = B ^ L`` (``blocks=(B,)``, ``depth=L``) or ``stack S = [B1, B2]``."""

    name: str
    blocks: tuple[str, ...]
    depth: Expr | None = None
    block_spans: tuple[Span | None, ...] = field(default=(), compare=False, repr=False)
    span: Span | None = _span()


@dataclass(frozen=True)
class SpaceRange:
    """``range a: [-1, 1]``: a parameter of a family and the interval it sweeps."""

    name: str
    low: Expr
    high: Expr
    span: Span | None = _span()


@dataclass(frozen=True)
class SpaceDef:
    """``space NAME = { ... }``: expressions to enumerate (primitives, constants, operators, size)
    or a parametric family (``family: EXPR`` with ``range`` lines and a ``grid``)."""

    name: str
    primitives: tuple[str, ...] = ()
    constants: tuple[Expr, ...] = ()
    operators: tuple[str, ...] | None = None
    size: int | None = None
    family: Expr | None = None
    ranges: tuple[SpaceRange, ...] = ()
    grid: int | None = None
    span: Span | None = _span()
    field_spans: tuple[tuple[str, Span | None], ...] = field(default=(), compare=False, repr=False)

    def span_of(self, name: str) -> Span | None:
        """The span of field ``name`` (``"size"``, ``"range a"``, ...), else the space's."""
        for key, span in self.field_spans:
            if key == name:
                return span
        return self.span


@dataclass(frozen=True)
class Query:
    kind: str  # "absorb", "width", "classify", "series", "parity", "facts"
    target: str | ActRef
    order: int | None = None
    span: Span | None = _span()


@dataclass(frozen=True)
class Import:
    path: str
    span: Span | None = _span()


Statement = Import | ActivationDef | GatedDef | BlockDef | StackDef | SpaceDef | Query


@dataclass(frozen=True)
class Module:
    """One parsed file: its statements in source order."""

    file: str
    statements: tuple[Statement, ...]
    text: str = field(default="", compare=False, repr=False)
