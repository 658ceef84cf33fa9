"""Spaces of activations for ``symabsorb explore``: an enumerated space or a parametric family."""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from ..dsl.errors import Span
from .activation import Activation

__all__ = ["MAX_GRID", "MAX_SIZE", "OPERATORS", "ParameterRange", "Space"]

#: The binary operators an enumerated space may combine subexpressions with.
OPERATORS = ("+", "-", "*")
#: Limits that keep one space's enumeration within reach of a laptop.
MAX_SIZE = 11
MAX_GRID = 101


@dataclass(frozen=True)
class ParameterRange:
    """A parameter of a family (a real SymPy symbol) and the closed interval it sweeps."""

    symbol: sp.Symbol
    low: sp.Rational
    high: sp.Rational


@dataclass(frozen=True)
class Space:
    """What ``explore`` maps.

    Enumerated (``family is None``): every expression in ``z`` of at most ``size`` nodes built
    from ``z``, the ``constants``, the unary ``primitives`` (each an activation in ``z``, applied by
    substitution) and the binary ``operators``. Parametric: ``family`` (an expression in ``z`` and
    the symbols of ``ranges``) sampled on a ``grid`` x ``grid`` lattice of the parameter box.
    """

    name: str
    primitives: tuple[Activation, ...] = ()
    constants: tuple[sp.Expr, ...] = ()
    operators: tuple[str, ...] = OPERATORS
    size: int = 0
    family: sp.Expr | None = None
    ranges: tuple[ParameterRange, ...] = ()
    grid: int = 11
    source: str = field(default="", compare=False)
    span: Span | None = field(default=None, compare=False, repr=False)

    @property
    def parametric(self) -> bool:
        return self.family is not None
