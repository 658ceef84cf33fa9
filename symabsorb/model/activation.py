"""Activations as mathematics: an expression in the real variable ``z``, and gated units."""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from ..dsl.errors import Span
from .functions import Z

__all__ = ["Activation", "AnyActivation", "GatedActivation", "Parameter"]


@dataclass(frozen=True)
class Parameter:
    """A parameter left symbolic (declared without a value), with its constraint if any."""

    symbol: sp.Symbol
    constraint: sp.Basic | None = None


@dataclass(frozen=True)
class Activation:
    """An elementwise activation ``σ(z)``, exact, in the canonical real symbol :data:`Z`."""

    name: str
    expr: sp.Expr
    params: tuple[Parameter, ...] = ()
    source: str = field(default="", compare=False)
    span: Span | None = field(default=None, compare=False, repr=False)

    @property
    def var(self) -> sp.Symbol:
        return Z

    @property
    def gated(self) -> bool:
        return False

    def __call__(self, x: sp.Expr) -> sp.Expr:
        return self.expr.xreplace({Z: x})


@dataclass(frozen=True)
class GatedActivation:
    """A gated unit ``g(w_gate·x) * (w_up·x)``; ``gate`` is ``g``."""

    name: str
    gate: Activation
    source: str = field(default="", compare=False)
    span: Span | None = field(default=None, compare=False, repr=False)

    @property
    def gated(self) -> bool:
        return True

    @property
    def expr(self) -> sp.Expr:
        return self.gate.expr


AnyActivation = Activation | GatedActivation
