"""The whitelist: every function a spec may call, and the SymPy object it builds.

This is the only door from spec text to SymPy. Nothing here parses strings; each builder
receives SymPy objects that were themselves built from the typed syntax.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sympy as sp

__all__ = ["BUILTIN_FUNCTIONS", "CONSTANTS", "BuiltinFunction", "Phi", "Z", "sigmoid", "softplus"]

#: The variable of every activation once resolved: a real symbol called ``z``.
Z = sp.Symbol("z", real=True)


def sigmoid(x: sp.Expr) -> sp.Expr:
    return 1 / (1 + sp.exp(-x))


def softplus(x: sp.Expr) -> sp.Expr:
    return sp.log(1 + sp.exp(x))


def Phi(x: sp.Expr) -> sp.Expr:
    return (1 + sp.erf(x / sp.sqrt(2))) / 2


@dataclass(frozen=True)
class BuiltinFunction:
    name: str
    min_args: int
    max_args: int | None  # None: any number from min_args up
    build: Callable[..., sp.Expr]
    doc: str

    def arity_text(self) -> str:
        if self.max_args is None:
            return f"{self.min_args} or more arguments"
        if self.min_args == self.max_args == 1:
            return "1 argument"
        return f"{self.min_args} arguments"


def _f(name: str, build: Callable[..., sp.Expr], doc: str, lo: int = 1, hi: int | None = 1) -> BuiltinFunction:
    return BuiltinFunction(name, lo, hi, build, doc)


BUILTIN_FUNCTIONS: dict[str, BuiltinFunction] = {
    f.name: f
    for f in (
        _f("exp", sp.exp, "exponential"),
        _f("log", sp.log, "natural logarithm"),
        _f("sqrt", sp.sqrt, "square root"),
        _f("abs", sp.Abs, "absolute value"),
        _f("sign", sp.sign, "sign (-1, 0 or 1)"),
        _f("max", lambda *a: sp.Max(*a), "largest argument", 2, None),
        _f("min", lambda *a: sp.Min(*a), "smallest argument", 2, None),
        _f("erf", sp.erf, "error function"),
        _f("erfc", sp.erfc, "complementary error function"),
        _f("tanh", sp.tanh, "hyperbolic tangent"),
        _f("sinh", sp.sinh, "hyperbolic sine"),
        _f("cosh", sp.cosh, "hyperbolic cosine"),
        _f("sin", sp.sin, "sine"),
        _f("cos", sp.cos, "cosine"),
        _f("atan", sp.atan, "arc tangent"),
        _f("sigmoid", sigmoid, "logistic function 1/(1+exp(-x))"),
        _f("softplus", softplus, "log(1+exp(x))"),
        _f("relu", lambda x: sp.Max(0, x), "max(0, x)"),
        _f("Phi", Phi, "standard normal CDF (1+erf(x/sqrt(2)))/2"),
    )
}

#: Named constants an expression may use.
CONSTANTS: dict[str, sp.Expr] = {"pi": sp.pi, "e": sp.E}
