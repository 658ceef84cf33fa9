"""Exact verification of a candidate witness found by the numerical search.

The candidate's floats are rounded to rationals (each hidden row first snapped onto the line of a
block unit it lies on, as Theorem R says witnesses must), the output weights refitted and rounded,
and then the identity ``x + B(x) − B'(x) ≡ 0`` is proved with exact steps only, by a sufficient
criterion: group the units by the line of their hidden (gate) vector ``λ·u`` (``u`` a primitive
integer vector).

* Ungated: on each line the profile ``f_u(t) = Σ ± a σ(λ t)`` must be exactly linear, ``α_u t``
  (``analysis.engine.identical`` proves ``f_u = f_u(1)·t``), and ``Σ_u α_u uᵀ + I = 0`` exactly.
* Gated: on each gate line ``F_u(t) = Σ ± g(λ t) b υᵀ`` must be exactly constant, ``F_u(0)``, and
  ``Σ_u F_u(0) + I = 0`` exactly.
* Polynomial σ (or gate), where units on different lines can cancel: ``x + B(x) − B'(x)`` is a
  polynomial in ``x`` and must expand to 0.

Then ``x + B(x) − B'(x) = Σ_u f_u(u·x) + x`` (or ``(Σ_u F_u(u·x) + I) x``) vanishes identically. A
candidate that fails this is reported as an unverified candidate, never as absorbable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy as sp

from ..model.functions import Z
from .search import BlockProblem, SearchOutcome, refit

__all__ = ["ExactWitness", "verify_candidate"]

Vec = tuple[Fraction, ...]


@dataclass(frozen=True)
class ExactWitness:
    """Residual-free weights in exact rationals (as strings, row by row) and how they were proved."""

    w_up: tuple[tuple[str, ...], ...]
    w_down: tuple[tuple[str, ...], ...]
    w_gate: tuple[tuple[str, ...], ...] | None
    proof: str


def _line(v: Vec) -> tuple[tuple[int, ...], Fraction] | None:
    """``v = λ·u`` with ``u`` a primitive integer vector whose first nonzero entry is positive."""
    if all(x == 0 for x in v):
        return None
    lcm = 1
    for x in v:
        lcm = lcm * x.denominator // math.gcd(lcm, x.denominator)
    ints = [int(x * lcm) for x in v]
    g = 0
    for n in ints:
        g = math.gcd(g, abs(n))
    u = [n // g for n in ints]
    first = next(n for n in u if n != 0)
    if first < 0:
        u = [-n for n in u]
    k = next(i for i, n in enumerate(u) if n != 0)
    return tuple(u), v[k] / u[k]


def _q(x: float, denominator: int = 1000) -> Fraction:
    return Fraction(x).limit_denominator(denominator)


def _snap_rows(hidden: Any, base: Any, exact_scale: bool) -> list[Vec]:
    """Each row as a rational vector: on the line of a row of ``base`` when it lies on one."""
    import numpy as np

    rows: list[Vec] = []
    for v in hidden:
        snapped = None
        for w in base:
            w = np.asarray(w, dtype=float)
            nv, nw = float(np.linalg.norm(v)), float(np.linalg.norm(w))
            if nv and nw and abs(abs(float(v @ w)) / (nv * nw) - 1) < 1e-7:
                mu = float(v @ w) / float(w @ w)
                scale = _q(mu, 64) if exact_scale else Fraction(1 if mu > 0 else -1)
                snapped = tuple(scale * int(x) for x in w)
                break
        rows.append(snapped if snapped is not None else tuple(_q(float(x), 64) for x in v))
    return rows


def _rat(x: Fraction) -> sp.Rational:
    return sp.Rational(x.numerator, x.denominator)


def _sum_zero(e: sp.Expr) -> bool:
    from ..analysis.identity import prove_zero

    e = sp.expand(e)
    return e == 0 or bool(prove_zero(e))


def _identical(f: sp.Expr, g: sp.Expr) -> bool:
    from ..analysis.engine import identical

    return f == g or identical(f, g, "the claimed profile").status.value == "proved"


def _verify_ungated(expr: sp.Expr, units: list[tuple[Vec, Vec, int]], d: int) -> str | None:
    lines: dict[tuple[int, ...] | None, list[tuple[Fraction, Vec, int]]] = {}
    for v, a, sign in units:
        line = _line(v)
        key, lam = (None, Fraction(0)) if line is None else line
        lines.setdefault(key, []).append((lam, a, sign))
    total = sp.eye(d)  # the skip M = I
    for key, members in lines.items():
        for k in range(d):
            f = sp.Add(*[sign * _rat(a[k])
                         * expr.xreplace({Z: _rat(lam) * Z})
                         for lam, a, sign in members])
            if key is None:
                if not _sum_zero(f):
                    return None
                continue
            alpha = f.xreplace({Z: sp.S.One})
            if not _identical(f, alpha * Z):
                return None
            for col in range(d):
                total[k, col] += alpha * key[col]
    if not all(_sum_zero(x) for x in total):
        return None
    return (f"exact: {len(lines)} lines; on each, the units' profile is proved equal to α·t "
            "(analysis.engine.identical) and Σ α·uᵀ + I reduces to 0")


def _verify_gated(expr: sp.Expr, units: list[tuple[Vec, Vec, Vec, int]], d: int) -> str | None:
    lines: dict[tuple[int, ...] | None, list[tuple[Fraction, Vec, Vec, int]]] = {}
    for gate, up, b, sign in units:
        line = _line(gate)
        key, lam = (None, Fraction(0)) if line is None else line
        lines.setdefault(key, []).append((lam, up, b, sign))
    total = sp.eye(d)
    for members in lines.values():
        for k in range(d):
            for col in range(d):
                f = sp.Add(*[sign * _rat(b[k] * up[col]) * expr.xreplace(
                    {Z: _rat(lam) * Z}) for lam, up, b, sign in members])
                c = f.xreplace({Z: sp.S.Zero})
                if not _identical(f, c):
                    return None
                total[k, col] += c
    if not all(_sum_zero(x) for x in total):
        return None
    return (f"exact: {len(lines)} gate lines; on each, Σ ± g(λt) b υᵀ is proved constant "
            "(analysis.engine.identical) and the constants sum with I to 0")


def _verify_polynomial(expr: sp.Expr, units: list[tuple[Vec | None, Vec, Vec, int]], d: int) -> str | None:
    """For a polynomial σ (or gate): ``x + B(x) − B'(x)`` is a polynomial in ``x``; expand it exactly.
    Units are ``(gate row or None, up row, output column, ±1)``."""
    if not expr.is_polynomial(Z):
        return None
    xs = sp.symbols(f"x0:{d}", real=True)

    def dot(row: Vec) -> sp.Expr:
        return sp.Add(*[_rat(c) * x for c, x in zip(row, xs, strict=True)])

    total = [xs[k] for k in range(d)]
    for gate, up, col, sign in units:
        value = expr.xreplace({Z: dot(gate)}) * dot(up) if gate is not None else expr.xreplace({Z: dot(up)})
        for k in range(d):
            total[k] += sign * _rat(col[k]) * value
    if all(sp.expand(e) == 0 for e in total):
        return "exact: σ is a polynomial and x + B(x) − B'(x) expands to 0"
    return None


def _ints(a: Any) -> list[Vec]:
    return [tuple(Fraction(int(x)) for x in row) for row in a]


def _strs(rows: list[Vec]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(str(x) for x in r) for r in rows)


def verify_candidate(expr: sp.Expr, problem: BlockProblem, outcome: SearchOutcome) -> ExactWitness | None:
    """An exact witness from a candidate (rounded, refitted, proved), or None."""
    import numpy as np

    d, m, gated = problem.d, problem.m, problem.w_gate is not None
    for exact_scale in (False, True):
        if gated:
            g_rows = _snap_rows(outcome.hidden[0], problem.w_gate, exact_scale)
            u_rows = _snap_rows(outcome.hidden[1], problem.w_up, False)  # the output weights absorb its scale
            p = np.array([[float(x) for x in r] for r in g_rows + u_rows]).ravel()
        else:
            g_rows, u_rows = [], _snap_rows(outcome.hidden, problem.w_up, exact_scale)
            p = np.array([[float(x) for x in r] for r in u_rows]).ravel()
        r, out = refit(expr, outcome, p, m, d, gated)
        if out is None or r > 1e-7:
            continue
        down_cols = [tuple(_q(float(out[k, j]), 10_000) for k in range(d)) for j in range(m)]
        w_down = _ints(problem.w_down)
        block_cols = [tuple(w_down[k][j] for k in range(d)) for j in range(m)]
        if gated:
            assert problem.w_gate is not None
            units_g = [(gr, ur, a, 1) for gr, ur, a in zip(_ints(problem.w_gate), _ints(problem.w_up), block_cols,
                                                           strict=True)]
            units_g += [(gr, ur, b, -1) for gr, ur, b in zip(g_rows, u_rows, down_cols, strict=True)]
            proof = _verify_gated(expr, units_g, d) or _verify_polynomial(expr, list(units_g), d)
        else:
            units = [(w, a, 1) for w, a in zip(_ints(problem.w_up), block_cols, strict=True)]
            units += [(v, b, -1) for v, b in zip(u_rows, down_cols, strict=True)]
            proof = _verify_ungated(expr, units, d) or _verify_polynomial(
                expr, [(None, w, a, s) for w, a, s in units], d)
        if proof is not None:
            w_down_rows = [tuple(down_cols[j][k] for j in range(m)) for k in range(d)]
            return ExactWitness(_strs(u_rows), _strs(w_down_rows), _strs(g_rows) if gated else None, proof)
    return None
