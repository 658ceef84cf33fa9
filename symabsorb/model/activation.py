"""Activations as mathematics: an expression in the real variable ``z``, and gated units."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import sympy as sp

from ..dsl.errors import Span
from .functions import Z

if TYPE_CHECKING:
    from .domain import SideCondition

__all__ = ["Activation", "AnyActivation", "Domain", "GatedActivation", "Parameter", "ParameterSymbol", "domain_of"]


@dataclass(frozen=True)
class Domain:
    """The values a parameter may take: an interval (``None`` for an infinite end) without finitely
    many points, from constraints such as ``0 < a < 1`` or ``a != 1``. Bounds are exact real constants."""

    lo: sp.Expr | None = None
    lo_open: bool = True
    hi: sp.Expr | None = None
    hi_open: bool = True
    excluded: tuple[sp.Expr, ...] = ()

    def contains(self, value: sp.Expr) -> bool | None:
        """Whether the real constant ``value`` is allowed (``None`` when SymPy cannot compare)."""
        checks: list[sp.Basic] = []
        if self.lo is not None:
            checks.append(sp.Gt(value, self.lo) if self.lo_open else sp.Ge(value, self.lo))
        if self.hi is not None:
            checks.append(sp.Lt(value, self.hi) if self.hi_open else sp.Le(value, self.hi))
        checks.extend(sp.Ne(value, x) for x in self.excluded)
        if any(c is sp.false for c in checks):
            return False
        return True if all(c is sp.true for c in checks) else None

    def relations(self, symbol: sp.Symbol) -> list[sp.Basic]:
        out: list[sp.Basic] = []
        if self.lo is not None:
            out.append(sp.Gt(symbol, self.lo) if self.lo_open else sp.Ge(symbol, self.lo))
        if self.hi is not None:
            out.append(sp.Lt(symbol, self.hi) if self.hi_open else sp.Le(symbol, self.hi))
        out.extend(sp.Ne(symbol, x) for x in self.excluded)
        return out

    def text(self, name: str) -> str:
        """``0 < a < 1, a != 2`` (the spec's own syntax)."""
        parts: list[str] = []
        lo = None if self.lo is None else f"{sp.sstr(self.lo)} {'<' if self.lo_open else '<='} "
        hi = None if self.hi is None else f" {'<' if self.hi_open else '<='} {sp.sstr(self.hi)}"
        if lo is not None and hi is not None:
            parts.append(f"{lo}{name}{hi}")
        elif lo is not None:
            parts.append(f"{name} {'>' if self.lo_open else '>='} {sp.sstr(self.lo)}")
        elif hi is not None:
            parts.append(f"{name}{hi}")
        parts.extend(f"{name} != {sp.sstr(x)}" for x in self.excluded)
        return ", ".join(parts)

    def key(self) -> tuple[object, ...]:
        return (self.lo, self.lo_open, self.hi, self.hi_open, self.excluded)


class ParameterSymbol(sp.Symbol):
    """A real parameter whose domain is more than SymPy's sign assumptions can say (``0 < a < 1``,
    ``k > 1``, ``a != 1``). It prints as its name; equality, hashing and ``srepr`` (the facts cache
    key) include the domain, so two parameters with different constraints never share facts. The
    analysis reads the domain through :func:`domain_of` to decide signs on every allowed value."""

    __slots__ = ("domain",)
    domain: Domain

    def __new__(cls, name: str, domain: Domain, **assumptions: bool) -> ParameterSymbol:
        cls._sanitize(assumptions, cls)
        obj: ParameterSymbol = sp.Symbol.__xnew__(cls, name, **assumptions)
        obj.domain = domain
        return obj

    def __getnewargs_ex__(self) -> tuple[tuple[object, ...], dict[str, bool]]:
        return ((self.name, self.domain), self._assumptions_orig)

    def _hashable_content(self) -> tuple[object, ...]:
        return (*sp.Symbol._hashable_content(self), self.domain.key())

    def _sympyrepr(self, printer: object) -> str:
        assumptions = ", ".join(f"{k}={v}" for k, v in sorted(self._assumptions_orig.items()))
        return f"ParameterSymbol({self.name!r}, {self.domain.text(self.name)!r}, {sp.srepr(self.domain.key())}, " \
               f"{assumptions})"


def domain_of(symbol: sp.Basic) -> Domain | None:
    """The declared domain of a parameter symbol, if it says more than its sign assumptions."""
    return symbol.domain if isinstance(symbol, ParameterSymbol) else None


@dataclass(frozen=True)
class Parameter:
    """A parameter left symbolic (declared without a value), with its constraint if any: one
    relation (``k > 1``), or their conjunction (``And(a > 0, a < 1)``) for several."""

    symbol: sp.Symbol
    constraint: sp.Basic | None = None
    domain: Domain | None = None

    def describe(self) -> str:
        """The constraint in the spec's syntax (``0 < a < 1``), or ``""``."""
        if self.domain is not None:
            return self.domain.text(self.symbol.name)
        if self.constraint is not None and self.constraint is not sp.true:
            return sp.sstr(self.constraint)
        return ""


@dataclass(frozen=True)
class Activation:
    """An elementwise activation ``σ(z)``, exact, in the canonical real symbol :data:`Z`."""

    name: str
    expr: sp.Expr
    params: tuple[Parameter, ...] = ()
    source: str = field(default="", compare=False)
    span: Span | None = field(default=None, compare=False, repr=False)
    #: Where σ *as written* has a value, when SymPy's evaluation cancelled a factor that is not proved nonzero
    #: (``z^2/z``, ``z*log(z)/log(z)``): the prover answers ``open`` unless each is proved (:mod:`.domain`).
    conditions: tuple[SideCondition, ...] = field(default=(), repr=False)

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
