"""Parametric families: classification on a grid of exact parameter values, and the symbolic case split.

The symbolic split classifies the family once per *sign cell* (each parameter negative, zero or
positive, as far as its range reaches), with the parameters left as SymPy symbols carrying that sign.
Each grid point is then checked against its cell: where both are decided they must agree; a cell
left open by the symbolic run is *refined* by the grid, never contradicted.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy as sp

from ..model.space import ParameterRange, Space
from .classify import ClassifyTask, case_id
from .wire import to_wire

__all__ = ["CELL_SIGNS", "GridPoint", "cell_of", "cell_tasks", "grid_points", "grid_tasks"]

CELL_SIGNS = ("<0", "=0", ">0")


@dataclass(frozen=True)
class GridPoint:
    values: tuple[sp.Rational, ...]

    def label(self, ranges: tuple[ParameterRange, ...]) -> str:
        return ", ".join(f"{r.symbol} = {sp.sstr(v)}" for r, v in zip(ranges, self.values, strict=True))


def _axis(r: ParameterRange, n: int) -> list[sp.Rational]:
    return [r.low + (r.high - r.low) * sp.Rational(i, n - 1) for i in range(n)]


def grid_points(space: Space) -> list[GridPoint]:
    axes = [_axis(r, space.grid) for r in space.ranges]
    return [GridPoint(tuple(vals)) for vals in itertools.product(*axes)]


def _sign(v: sp.Rational) -> str:
    return "<0" if v < 0 else "=0" if v == 0 else ">0"


def cell_of(values: tuple[sp.Rational, ...]) -> tuple[str, ...]:
    return tuple(_sign(v) for v in values)


def _cells(space: Space) -> list[tuple[str, ...]]:
    options = []
    for r in space.ranges:
        options.append([s for s, ok in (("<0", r.low < 0), ("=0", r.low <= 0 <= r.high), (">0", r.high > 0)) if ok])
    return [tuple(c) for c in itertools.product(*options)]


def grid_tasks(space: Space, budget: float | None) -> list[ClassifyTask]:
    assert space.family is not None
    tasks = []
    for point in grid_points(space):
        expr = space.family.xreplace({r.symbol: v for r, v in zip(space.ranges, point.values, strict=True)})
        params = tuple((str(r.symbol), sp.sstr(v)) for r, v in zip(space.ranges, point.values, strict=True))
        for gated in (False, True):
            label = point.label(space.ranges)
            tasks.append(ClassifyTask(case_id("grid", space.name, space.source, label, gated, budget), "grid",
                                      space.name, label, to_wire(expr), gated, budget, params))
    return tasks


def cell_tasks(space: Space, budget: float | None) -> list[ClassifyTask]:
    assert space.family is not None
    tasks = []
    for cell in _cells(space):
        subs: dict[sp.Basic, sp.Basic] = {}
        for r, sign in zip(space.ranges, cell, strict=True):
            name = str(r.symbol)
            if sign == "=0":
                subs[r.symbol] = sp.Integer(0)
            else:  # the worker gives these symbols their constraints (classify._cell_parameters)
                subs[r.symbol] = sp.Symbol(name, positive=True) if sign == ">0" else sp.Symbol(name, negative=True)
        expr = space.family.xreplace(subs)
        label = ", ".join(f"{r.symbol} {s[0]} 0" for r, s in zip(space.ranges, cell, strict=True))
        params = tuple((str(r.symbol), s) for r, s in zip(space.ranges, cell, strict=True))
        for gated in (False, True):
            tasks.append(ClassifyTask(case_id("cell", space.name, space.source, label, gated, budget), "cell",
                                      space.name, label, to_wire(expr), gated, budget, params))
    return tasks


def point_values(record: dict[str, Any]) -> tuple[Fraction, ...]:
    return tuple(Fraction(v) for v in record["params"].values())
