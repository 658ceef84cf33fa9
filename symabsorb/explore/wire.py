"""Expressions on the wire between the driver and Dask workers: plain nested tuples, rebuilt on
the worker from this process's :data:`~symabsorb.model.functions.Z` and a whitelist of SymPy
constructors (never from text).

Why not pickle SymPy objects: unpickling creates ``Symbol('z', real=True)`` through SymPy's bounded
cache; once ``Z`` has been evicted, the worker gets an equal but distinct symbol, and SymPy's
function cache then hands back subexpressions holding it, so code comparing the variable by
identity (``e is Z``) stops recognising it. Rebuilding from ``Z`` never creates a second ``z``.
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from ..model.functions import Z

__all__ = ["from_wire", "to_wire"]

_FUNCTIONS: dict[str, Any] = {
    "Add": sp.Add, "Mul": sp.Mul, "Pow": sp.Pow, "exp": sp.exp, "log": sp.log, "erf": sp.erf, "erfc": sp.erfc,
    "tanh": sp.tanh, "sinh": sp.sinh, "cosh": sp.cosh, "sin": sp.sin, "cos": sp.cos, "atan": sp.atan,
    "Abs": sp.Abs, "sign": sp.sign, "Max": sp.Max, "Min": sp.Min, "Heaviside": sp.Heaviside,
    "StrictLessThan": sp.StrictLessThan, "LessThan": sp.LessThan, "StrictGreaterThan": sp.StrictGreaterThan,
    "GreaterThan": sp.GreaterThan, "And": sp.And, "Or": sp.Or, "Not": sp.Not,
}
_CONSTANTS: dict[str, Any] = {"pi": sp.pi, "E": sp.E, "true": sp.true, "false": sp.false}


def to_wire(e: sp.Basic) -> Any:
    """A JSON-able tree: ``["z"]``, ``["Q", p, q]``, ``["S", name, assumptions]``, ``["K", name]``,
    ``["Piecewise", [expr, cond], ...]`` or ``[class name, *args]``."""
    if e == Z:
        return ["z"]
    if e.is_Rational:
        return ["Q", int(e.p), int(e.q)]
    for name, value in _CONSTANTS.items():
        if e is value:
            return ["K", name]
    if isinstance(e, sp.Symbol):
        orig = getattr(e, "_assumptions_orig", None) or e.assumptions0
        return ["S", e.name, sorted((str(k), bool(v)) for k, v in orig.items() if v is not None)]
    if isinstance(e, sp.Piecewise):
        return ["Piecewise", *([to_wire(x), to_wire(c)] for x, c in e.args)]
    name = type(e).__name__
    if name not in _FUNCTIONS:
        raise ValueError(f"cannot send a {name} to a worker")
    return [name, *(to_wire(a) for a in e.args)]


def from_wire(data: Any) -> Any:
    tag = data[0]
    if tag == "z":
        return Z
    if tag == "Q":
        return sp.Rational(int(data[1]), int(data[2]))
    if tag == "K":
        return _CONSTANTS[data[1]]
    if tag == "S":
        return sp.Symbol(str(data[1]), **{str(k): bool(v) for k, v in data[2]})
    if tag == "Piecewise":
        return sp.Piecewise(*((from_wire(x), from_wire(c)) for x, c in data[1:]))
    return _FUNCTIONS[tag](*(from_wire(a) for a in data[1:]))
