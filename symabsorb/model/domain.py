"""Where an activation is real-valued: stretches of R on which σ takes non-real values.

Every result of the library is about real functions ``σ : R → R``. A square root, a logarithm or a
fractional power of an argument that goes negative makes σ complex there (SymPy's principal
branch: ``sqrt(−1) = i``, ``log(−2) = log 2 + iπ``), and then no verdict about real MLPs applies.

Candidates come from exact algebra: for each ``sqrt(u)``, ``log(u)``, ``u^(p/q)`` whose argument ``u``
is a polynomial in ``z`` with rational coefficients, the intervals between consecutive real roots
where ``u < 0`` (decided by the exact sign of ``u`` at a rational point inside). A candidate is
confirmed only at an exact rational point ``q``: σ's tree is enclosed there in complex ball arithmetic
(python-flint ``acb``; the cases of ``if``, ``max``, ``sign`` decided exactly or by disjoint balls, else
undecided), never evaluated by SymPy (whose automatic evaluation of a substituted point is unbounded);
σ is proved non-real at ``q`` when the ball of the imaginary part excludes 0. The stretch
reported is where the argument is negative (σ itself may be real at some of its points). Nothing
here proves that σ *is* real elsewhere.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from typing import Any

import sympy as sp

from .functions import Z

__all__ = ["NonReal", "nonreal_stretches"]

#: Precisions (bits) of the complex enclosure, tried in turn.
_PRECISIONS = (64, 256, 1024)
#: Largest degree of a polynomial argument whose real roots are isolated exactly.
_MAX_DEGREE = 8


@dataclass(frozen=True)
class NonReal:
    """σ is proved non-real at ``point``; ``source``'s argument is negative on ``(lo, hi)``
    (``None``: unbounded on that side)."""

    source: sp.Expr
    argument: sp.Expr
    lo: sp.Expr | None
    hi: sp.Expr | None
    point: sp.Rational
    imaginary: str  # the enclosure of Im σ(point), flint's notation
    #: "stretch": ``source``'s argument is negative on (lo, hi); "point": σ is not proved real on R
    #: (``source`` is σ) and is proved non-real at ``point`` only (lo = hi = point).
    kind: str = "stretch"

    @property
    def unbounded(self) -> bool:
        return self.kind == "stretch" and (self.lo is None or self.hi is None)

    def interval_text(self) -> str:
        if self.kind == "point":
            return "{" + sp.sstr(self.point) + "}"
        lo = "−∞" if self.lo is None else sp.sstr(self.lo)
        hi = "+∞" if self.hi is None else sp.sstr(self.hi)
        return f"({lo}, {hi})"

    def interval_latex(self) -> str:
        if self.kind == "point":
            return "\\{" + sp.latex(self.point) + "\\}"
        lo = "-\\infty" if self.lo is None else sp.latex(self.lo)
        hi = "+\\infty" if self.hi is None else sp.latex(self.hi)
        return f"({lo}, {hi})"

    def describe(self) -> str:
        if self.kind == "point":
            return (f"σ is not real-valued: Im σ({sp.sstr(self.point)}) ∈ {self.imaginary} (a rigorous enclosure "
                    "excluding 0)")
        what = "log" if isinstance(self.source, sp.log) else (
            "sqrt" if isinstance(self.source, sp.Pow) and self.source.exp == sp.S.Half else "the fractional power")
        return (f"σ is not real-valued: Im σ({sp.sstr(self.point)}) ∈ {self.imaginary} (a rigorous enclosure "
                f"excluding 0); the argument of {what}, {sp.sstr(self.argument)}, is negative on "
                f"{self.interval_text()}")


def _sources(expr: sp.Expr) -> list[tuple[sp.Expr, sp.Expr]]:
    out: list[tuple[sp.Expr, sp.Expr]] = []
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.log):
            out.append((node, node.args[0]))
        elif isinstance(node, sp.Pow) and node.exp.is_Rational and not node.exp.is_Integer:
            out.append((node, node.base))
    return list(dict.fromkeys(out))


def _negative_stretches(u: sp.Expr) -> list[tuple[sp.Expr | None, sp.Expr | None, sp.Rational]]:
    """The maximal open intervals where the rational polynomial ``u`` is negative, each with a
    rational point inside (exactly checked)."""
    if not u.has(Z) or u.free_symbols - {Z}:
        return []
    bound = _degree_bound(u)
    if bound is None or bound > _MAX_DEGREE:
        return []  # never expand a large power just to look at it
    try:
        poly = sp.Poly(u, Z)
    except sp.PolynomialError:
        return []
    if not 1 <= poly.degree() <= _MAX_DEGREE or not all(c.is_Rational for c in poly.all_coeffs()):
        return []
    roots = sorted(set(sp.Poly(u, Z, domain="QQ").real_roots()), key=lambda r: float(r))
    bounds: list[sp.Expr | None] = [None, *roots, None]
    out = []
    for lo, hi in itertools.pairwise(bounds):
        q = _rational_between(lo, hi)
        if q is None:
            continue
        if poly(q) < 0:  # exact rational arithmetic (Poly.__call__)
            out.append((lo, hi, q))
    return out


def _degree_bound(u: sp.Expr) -> int | None:
    """An upper bound on the degree of ``u`` in z read from its tree (None: not a polynomial shape)."""
    if not u.has(Z):
        return 0
    if u == Z:
        return 1
    if isinstance(u, sp.Add):
        parts = [_degree_bound(a) for a in u.args]
        return None if any(p is None for p in parts) else max(p for p in parts if p is not None)
    if isinstance(u, sp.Mul):
        parts = [_degree_bound(a) for a in u.args]
        return None if any(p is None for p in parts) else sum(p for p in parts if p is not None)
    if isinstance(u, sp.Pow) and u.exp.is_Integer and u.exp >= 0:
        inner = _degree_bound(u.base)
        return None if inner is None or u.exp > 64 else inner * int(u.exp)
    return None


def _rational_between(lo: sp.Expr | None, hi: sp.Expr | None) -> sp.Rational | None:
    if lo is None and hi is None:
        return sp.S.Zero
    if lo is None:
        assert hi is not None
        return sp.Integer(math.floor(float(hi)) - 1)
    if hi is None:
        return sp.Integer(math.ceil(float(lo)) + 1)
    for den in (1, 2, 4, 16, 256, 2**16, 2**32):
        q = sp.Rational(round((float(lo) + float(hi)) / 2 * den), den)
        if bool(q > lo) and bool(q < hi):  # exact comparisons with algebraic numbers
            return q
    return None


def _flint() -> Any:
    import flint

    return flint


class _NotNumeric(Exception):
    pass


def _acb(flint: Any, e: sp.Basic, at: sp.Rational | None = None) -> Any:
    """The complex ball of ``e`` with ``z = at`` (``at`` None: ``e`` holds no ``z``). Nothing is evaluated by
    SymPy: substituting a point into a large expression lets SymPy's automatic evaluation run unbounded
    (``as_real_imag`` over a nested sum took minutes), so the tree is walked here and enclosed directly."""
    acb = flint.acb
    if e is Z:
        if at is None:
            raise _NotNumeric("z without a point")
        return acb(flint.fmpq(int(at.p), int(at.q)))
    if e.is_Rational:
        return acb(flint.fmpq(int(e.p), int(e.q)))  # type: ignore[attr-defined]
    if e is sp.I:
        return acb(0, 1)
    if e is sp.pi:
        return acb.pi()
    if e is sp.E:
        return acb(1).exp()
    if isinstance(e, sp.Add):
        out = acb(0)
        for a in e.args:
            out += _acb(flint, a, at)
        return out
    if isinstance(e, sp.Mul):
        out = acb(1)
        for a in e.args:
            out *= _acb(flint, a, at)
        return out
    if isinstance(e, sp.Pow):
        base = _acb(flint, e.base, at)
        if e.exp.is_Integer:
            n = int(e.exp)
            if abs(n) > 10**4:
                raise _NotNumeric("exponent too large")
            return base ** n
        if e.exp.is_Rational:
            return base ** acb(flint.fmpq(int(e.exp.p), int(e.exp.q)))
        return base ** _acb(flint, e.exp, at)
    unary = {sp.exp: "exp", sp.log: "log", sp.erf: "erf", sp.erfc: "erfc", sp.tanh: "tanh", sp.sinh: "sinh",
             sp.cosh: "cosh", sp.sin: "sin", sp.cos: "cos", sp.atan: "atan", sp.atanh: "atanh", sp.asinh: "asinh",
             sp.acosh: "acosh", sp.asin: "asin", sp.acos: "acos"}
    name = unary.get(type(e))
    if name is not None:
        v = _acb(flint, e.args[0], at)
        if name == "log" and v.contains(0):
            raise _NotNumeric("log of a ball containing 0")
        return getattr(v, name)()
    if isinstance(e, sp.Abs):
        return acb(abs(_acb(flint, e.args[0], at)))
    if isinstance(e, (sp.sign, sp.Heaviside)) and len(e.args) == 1:
        v = _acb(flint, e.args[0], at)
        if not v.imag.is_zero() or v.real.contains(0):
            raise _NotNumeric("sign of a value not proved real and nonzero")
        positive = v.real > 0
        if isinstance(e, sp.sign):
            return acb(1 if positive else -1)
        return acb(1 if positive else 0)
    if isinstance(e, sp.Piecewise):
        for piece, cond in e.args:
            decided = _condition_at(cond, at)
            if decided is None:
                raise _NotNumeric("a case not decided at the point")
            if decided:
                return _acb(flint, piece, at)
        raise _NotNumeric("no case holds at the point")
    if isinstance(e, (sp.Max, sp.Min)):
        vals = [_acb(flint, a, at) for a in e.args]
        if not all(v.imag.is_zero() for v in vals):
            raise _NotNumeric("max/min of a value not proved real")
        reals = [v.real for v in vals]
        for i, r in enumerate(reals):  # the one proved >= (max) or <= (min) every other
            if all(i == j or (r >= o if isinstance(e, sp.Max) else r <= o) for j, o in enumerate(reals)):
                return vals[i]
        raise _NotNumeric("max/min not decided at the point")
    raise _NotNumeric(f"cannot enclose {type(e).__name__}")


def _condition_at(cond: sp.Basic, at: sp.Rational | None) -> bool | None:
    """A case condition decided exactly at ``z = at`` (a relational between rationals and the point), else None."""
    if cond is sp.true or cond is sp.false:
        return bool(cond)
    if at is None or cond.free_symbols - {Z} or sp.count_ops(cond) > 40:
        return None
    try:
        value = cond.xreplace({Z: at})
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    if value is sp.true or value is sp.false:
        return bool(value)
    return None


def _imaginary_part(value: sp.Expr, at: sp.Rational | None = None) -> str | None:
    """The enclosure of ``Im value`` (at ``z = at``) when it excludes 0, else None."""
    flint = _flint()
    old = flint.ctx.prec
    try:
        for prec in _PRECISIONS:
            flint.ctx.prec = prec
            try:
                v = _acb(flint, value, at)
            except (_NotNumeric, ZeroDivisionError, ValueError, OverflowError):
                return None
            im = v.imag
            if im.is_finite() and not im.contains(0):
                return str(im.str(12))
    finally:
        flint.ctx.prec = old
    return None


@functools.lru_cache(maxsize=512)
def nonreal_stretches(expr: sp.Expr) -> tuple[NonReal, ...]:
    """Stretches where σ is proved non-real (at a rational point inside each), in order."""
    if expr.free_symbols - {Z}:
        return ()
    out: list[NonReal] = []
    for source, u in _sources(expr):
        for lo, hi, q in _negative_stretches(u):
            im = _imaginary_part(expr, q)
            if im is not None:
                out.append(NonReal(source, u, lo, hi, q, im))
    if not out:
        found = _nonreal_point(expr)
        if found is not None:
            out.append(found)
    return tuple(out)


#: Rational points where σ not proved real on R is evaluated exactly (then enclosed).
_POINTS = tuple(sp.Rational(p, q) for p, q in ((1, 1), (-1, 1), (2, 1), (-2, 1), (1, 2), (-1, 2), (3, 1), (-3, 1)))


#: Functions real and finite at every real argument: an expression built from these, rational powers with
#: integer exponents, Z and real constants cannot be non-real at a real point (a pole is not a non-real value).
_REAL_AT_REAL = (sp.exp, sp.sin, sp.cos, sp.tan, sp.sinh, sp.cosh, sp.tanh, sp.erf, sp.erfc, sp.atan, sp.Abs,
                 sp.sign, sp.Heaviside, sp.Max, sp.Min, sp.Piecewise, sp.floor, sp.ceiling)


def _may_be_nonreal(expr: sp.Expr) -> bool:
    """Whether σ could take a non-real value at a real point: it holds the imaginary unit, a logarithm, a
    fractional power or a function outside :data:`_REAL_AT_REAL` (a cheap structural gate in the model layer:
    the point evaluation that follows is the proof; ``analysis/realness`` decides what is proved real)."""
    for node in sp.preorder_traversal(expr):
        if node is sp.I or (isinstance(node, sp.Number) and not node.is_real):
            return True
        if isinstance(node, sp.Pow) and not (node.exp.is_Integer):
            return True
        if isinstance(node, sp.Function) and not isinstance(node, _REAL_AT_REAL):
            return True
    return False


def _nonreal_point(expr: sp.Expr) -> NonReal | None:
    """A point where σ is proved non-real, tried only when σ is not proved real on R (so a real
    built-in costs one structural walk, no evaluation). Where it is undecided, None."""
    if not _may_be_nonreal(expr):
        return None
    for q in _POINTS:
        im = _imaginary_part(expr, q)
        if im is not None:
            return NonReal(expr, expr, q, q, q, im, "point")
    return None
