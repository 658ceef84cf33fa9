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

__all__ = ["DomainGap", "NonReal", "SideCondition", "domain_gap", "first_real_root", "nonreal_stretches",
           "open_conditions", "proved_nonzero_on_reals", "proved_positive_on_reals"]

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
    #: "stretch": ``source``'s argument is negative on (lo, hi) (between exact real roots); "argument": it is
    #: proved negative at ``point`` only (a rigorous enclosure; lo = hi = point); "point": σ is not proved real on R
    #: (``source`` is σ) and is proved non-real at ``point`` only (lo = hi = point).
    kind: str = "stretch"

    @property
    def unbounded(self) -> bool:
        return self.kind == "stretch" and (self.lo is None or self.hi is None)

    def interval_text(self) -> str:
        if self.kind != "stretch":
            return "{" + sp.sstr(self.point) + "}"
        lo = "−∞" if self.lo is None else sp.sstr(self.lo)
        hi = "+∞" if self.hi is None else sp.sstr(self.hi)
        return f"({lo}, {hi})"

    def interval_latex(self) -> str:
        if self.kind != "stretch":
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
        where = f"at z = {sp.sstr(self.point)}" if self.kind == "argument" else f"on {self.interval_text()}"
        return (f"σ is not real-valued: Im σ({sp.sstr(self.point)}) ∈ {self.imaginary} (a rigorous enclosure "
                f"excluding 0); the argument of {what}, {sp.sstr(self.argument)}, is negative {where}")


    def sentence(self, name: str) -> str:
        """The prover's reason for ``open`` (Markdown with ``$...$`` math) for the activation called ``name``:
        the point where σ is proved non-real and, when it is known, where the argument is proved negative, no
        more (σ itself may be real at some points of that stretch)."""
        head = (f"The activation `{name}` is not real-valued: $\\sigma({sp.latex(self.point)})$ is not real (its "
                f"imaginary part lies in {self.imaginary}, a rigorous enclosure)")
        tail = " Every result is about real functions σ: R → R, so none applies."
        if self.kind == "point":
            return head + "." + tail
        where = (f"at $z = {sp.latex(self.point)}$ (a rigorous enclosure)" if self.kind == "argument"
                 else f"on ${self.interval_latex()}$")
        return f"{head}, and the argument of ${sp.latex(self.source)}$ is negative {where}.{tail}"


def _sources(expr: sp.Expr) -> list[tuple[sp.Expr, sp.Expr]]:
    out: list[tuple[sp.Expr, sp.Expr]] = []
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.log):
            out.append((node, node.args[0]))
        elif isinstance(node, sp.Pow) and node.exp.is_Rational and not node.exp.is_Integer:
            out.append((node, node.base))
    return list(dict.fromkeys(out))


def _negative_stretches(u: sp.Expr) -> list[tuple[sp.Expr | None, sp.Expr | None, list[sp.Rational]]]:
    """The maximal open intervals where the rational polynomial ``u`` is negative, each with rational
    points inside (exactly checked; the midpoint first)."""
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
            out.append((lo, hi, [q, *_more_points(lo, hi, q)]))
    return out


def _more_points(lo: sp.Expr | None, hi: sp.Expr | None, q: sp.Rational) -> list[sp.Rational]:
    """A few more rational points strictly inside (lo, hi) besides ``q`` (exact comparisons)."""
    out: list[sp.Rational] = []
    for a, b in ((lo, q), (q, hi)):
        p = _rational_between(a, b) if a is not None and b is not None else (q - 1 if a is None else q + 1)
        if p is not None and p != q and (lo is None or bool(p > lo)) and (hi is None or bool(p < hi)):
            out.append(p)
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
    if at is None:
        return bool(cond) if cond is sp.true or cond is sp.false else None
    return _guard_at(cond, at)


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
        stretches = _negative_stretches(u)
        for lo, hi, points in stretches:
            for q in points:  # the midpoint first; σ may happen to be real there
                im = _imaginary_part(expr, q)
                if im is not None:
                    out.append(NonReal(source, u, lo, hi, q, im))
                    break
        if not stretches and not out and _rational_poly(u) is None:
            found = _negative_argument_point(expr, source, u)
            if found is not None:
                out.append(found)
    if not out:
        found = _nonreal_point(expr)
        if found is not None:
            out.append(found)
    return tuple(out)


def _negative_argument_point(expr: sp.Expr, source: sp.Expr, u: sp.Expr) -> NonReal | None:
    """For an argument ``u`` that is not a rational polynomial: the first point of a deterministic grid where a
    ball proves ``u < 0`` and σ non-real (an enclosure of its imaginary part excluding 0), else None."""
    if not u.has(Z) or u.free_symbols - {Z} or sp.count_ops(u) > _MAX_OPS:
        return None
    if u.is_nonnegative is True:
        return None  # SymPy's deductive sign: u is never negative
    flint = _flint()
    for q in _GRID:
        if _ball_sign(flint, u, q) == -1:
            im = _imaginary_part(expr, q)
            if im is not None:
                return NonReal(source, u, q, q, q, im, "argument")
    return None


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


# ---- where σ as written is defined: divisors, logarithm arguments, bases of negative powers ----------------


@dataclass(frozen=True)
class SideCondition:
    """σ *as written* has a value only where ``expr ≠ 0`` (a divisor, the argument of a logarithm, the base of a
    negative power), at the points where ``guard`` holds (the case of an ``if`` it sits in; ``true``: everywhere).

    SymPy's automatic evaluation cancels such a factor when it builds σ (``z^2/z`` is built as ``z``,
    ``z*log(z)/log(z)`` as ``z``, ``tanh(z)*(z^2-1)/(z^2-1)`` as ``tanh z``), so the resolver records each one: the
    simplified σ agrees with σ as written wherever σ as written has a value, and nowhere else is there a value."""

    expr: sp.Expr
    what: str  # "divisor", "argument of log", "base of a negative power"
    written: str = ""  # the spec text it came from (for messages)
    guard: sp.Basic = sp.true

    def subs(self, mapping: dict[sp.Basic, sp.Basic]) -> SideCondition:
        return SideCondition(self.expr.xreplace(mapping), self.what, self.written,
                             self.guard if self.guard is sp.true else self.guard.xreplace(mapping))


@dataclass(frozen=True)
class DomainGap:
    """A side condition not proved to hold on all of R: ``point`` (exact) or a point of ``between`` (open
    interval, rational ends) where it is proved to fail, or neither (undecided)."""

    condition: SideCondition
    point: sp.Expr | None = None
    between: tuple[sp.Rational, sp.Rational] | None = None
    factor: sp.Expr | None = None  # the factor whose sign change proves the 0 in ``between`` (when not the whole)

    @property
    def proved(self) -> bool:
        return self.point is not None or self.between is not None

    def _which(self, latex: bool = False) -> str:
        c = self.condition
        return f"the {c.what} ${sp.latex(c.expr)}$" if latex else f"the {c.what} {sp.sstr(c.expr)}"

    def _changing(self, latex: bool = False) -> str:
        f = self.factor
        if f is None or f == self.condition.expr:
            return "it"
        return f"its factor ${sp.latex(f)}$" if latex else f"its factor {sp.sstr(f)}"

    def describe(self) -> str:
        """One sentence: what is proved (a point, or an interval holding a point), or that nothing is."""
        if self.point is not None:
            return (f"σ as written has no value at z = {sp.sstr(self.point)}: {self._which()} is 0 there (exactly); "
                    "SymPy's simplified form may be defined there, but it is another function")
        if self.between is not None:
            lo, hi = self.between
            return (f"σ as written has no value at some z in ({sp.sstr(lo)}, {sp.sstr(hi)}): {self._which()} is 0 "
                    f"there, since {self._changing()} is continuous and takes both signs at the ends (rigorous "
                    "enclosures)")
        return (f"{self._which()} of σ as written is not proved nonzero on R, so σ may have no value at some real "
                "point (SymPy's simplified form may not show it)")

    def sentence(self, name: str) -> str:
        """The prover's reason for ``open`` (Markdown with ``$...$`` math), for the activation called ``name``."""
        if self.point is not None:
            return (f"The activation `{name}` as written has no value at $z = {sp.latex(self.point)}$: "
                    f"{self._which(True)} is $0$ there (exactly), even where SymPy's simplified form of it is defined. "
                    "So it is not a function on all of R and no result applies (define its value there, e.g. with "
                    "`if z >= a and z <= a then v else ...`, or write the simplified form).")
        if self.between is not None:
            lo, hi = self.between
            return (f"The activation `{name}` as written has no value at some "
                    f"$z \\in ({sp.latex(lo)}, {sp.latex(hi)})$: {self._which(True)} is $0$ there, since "
                    f"{self._changing(True)} is continuous and takes both signs at the ends (rigorous enclosures). "
                    "So it is not a function on all of R and no result applies (write the simplified form if that "
                    "is what is meant).")
        return (f"The activation `{name}` as written may have no value at some real point: {self._which(True)} is "
                "not proved nonzero on R (SymPy's simplified form may not show it), and every result is about "
                "functions σ: R → R, so none applies (write the simplified form if that is what is meant).")


#: Rational points where a non-polynomial side condition is checked, in this order (a deterministic grid).
_GRID = tuple(sorted({sp.Rational(n, d) for n in range(-64, 65) for d in (1, 2) if abs(n) <= 8 or d == 1},
                     key=lambda q: (abs(q), q)))
#: Largest tree (SymPy ``count_ops``) a side condition may have to be evaluated at points.
_MAX_OPS = 60

#: Functions continuous on all of R (a tree built from these, Z, constants and integer powers >= 0 is continuous).
_CONTINUOUS = (sp.exp, sp.sin, sp.cos, sp.sinh, sp.cosh, sp.tanh, sp.erf, sp.erfc, sp.atan, sp.Abs, sp.Max, sp.Min)


def _continuous(e: sp.Basic) -> bool:
    if e is Z or (isinstance(e, sp.Expr) and not e.has(Z) and e.is_extended_real is True and e.is_finite is True):
        return True
    if isinstance(e, sp.Pow):
        return bool(e.exp.is_Integer and e.exp >= 0 and _continuous(e.base))
    if isinstance(e, (sp.Add, sp.Mul, *_CONTINUOUS)):
        return all(_continuous(a) for a in e.args)
    return False


def proved_nonzero_on_reals(e: sp.Expr) -> bool:
    """``e ≠ 0`` at every real z, proved: SymPy's deductive sign (True only when proved), or a polynomial with
    rational coefficients and no real root (exact real-root isolation). False: not proved (it may be 0 somewhere)."""
    if e.is_positive is True or e.is_negative is True:
        return True
    poly = _rational_poly(e)
    return poly is not None and poly.degree() >= 0 and not poly.real_roots()


def proved_positive_on_reals(e: sp.Expr) -> bool:
    """``e > 0`` at every real z, proved: SymPy's deductive sign, or a polynomial with rational coefficients, no
    real root and a positive value at 0 (exact). False: not proved."""
    if e.is_positive is True:
        return True
    poly = _rational_poly(e)
    return poly is not None and poly.degree() >= 0 and not poly.real_roots() and poly.coeff_monomial(1) > 0


def first_real_root(e: sp.Expr) -> sp.Expr | None:
    """The least real root of ``e`` when it is a polynomial with rational coefficients (exact: a rational, a
    radical or a ``CRootOf``), else None (none, or not such a polynomial)."""
    poly = _rational_poly(e)
    if poly is None or poly.degree() < 1:
        return None
    roots = poly.real_roots()
    return min(roots, key=lambda r: float(r)) if roots else None


def _rational_poly(e: sp.Expr) -> sp.Poly | None:
    """``e`` as a polynomial in z with rational coefficients of small degree, else None (never expanding a large
    power to look)."""
    if e.free_symbols - {Z}:
        return None
    bound = _degree_bound(e)
    if bound is None or bound > 2 * _MAX_DEGREE:
        return None
    try:
        poly = sp.Poly(e, Z, domain="QQ")
    except (sp.PolynomialError, sp.CoercionFailed):
        return None
    return poly


#: Case splits (SymPy or by the realness checks' piecewise normal form).
_CASES = (sp.Piecewise, sp.Max, sp.Min, sp.Abs, sp.sign, sp.Heaviside)


def open_conditions(expr: sp.Expr, conditions: tuple[SideCondition, ...]) -> tuple[SideCondition, ...]:
    """The side conditions a verdict about ``expr`` (σ simplified) would silently rely on: those not proved
    nonzero on R and no longer visible in ``expr`` (a divisor still there as the base of a negative power, or a
    logarithm's argument still there, is already treated as a possible pole by the realness checks)."""
    seen: set[sp.Basic] = set()
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.Pow) and node.exp.is_negative is True:
            seen.add(node.base)
        elif isinstance(node, sp.log):
            seen.add(node.args[0])
    # a case split could hide a pole in z at a breakpoint: then only a pole in the parameters counts as visible
    cases = expr.has(*_CASES)
    out: list[SideCondition] = []
    for c in dict.fromkeys(conditions):
        base = c.expr.base if isinstance(c.expr, sp.Pow) and c.expr.exp.is_Integer and c.expr.exp > 0 else c.expr
        if (c.guard is sp.true or not c.expr.has(Z)) and (not cases or not c.expr.has(Z)) and (
                c.expr in seen or base in seen):
            continue
        if c.guard is sp.false or proved_nonzero_on_reals(c.expr):
            continue
        out.append(c)
    return tuple(out)


@functools.lru_cache(maxsize=512)
def domain_gap(conditions: tuple[SideCondition, ...]) -> DomainGap | None:
    """The first side condition not proved to hold on R, with a point where it is proved to fail when one is
    found (such a gap comes first); None when every condition is proved (σ as written is defined where its
    simplified form is)."""
    undecided: DomainGap | None = None
    for c in conditions:
        gap = _gap(c)
        if gap is None:
            continue
        if gap.proved:
            return gap
        undecided = undecided or gap
    return undecided


def _zero_factors(e: sp.Expr) -> list[sp.Expr]:
    """Expressions whose real zeros together are exactly those of ``e`` (``|u|``, ``u^k`` with ``k > 0`` and a
    product split into its factors; a factor proved nonzero, such as ``exp(u)`` or a negative power, dropped)."""
    if isinstance(e, sp.Abs):
        return _zero_factors(e.args[0])
    if isinstance(e, sp.Pow) and e.exp.is_positive is True and not e.exp.has(Z):
        return _zero_factors(e.base)
    if isinstance(e, sp.Pow) and e.exp.is_negative is True and not e.exp.has(Z):
        return []  # 1/u is never 0 (where u is 0, 1/u is a side condition of its own)
    if isinstance(e, sp.Mul):
        out: list[sp.Expr] = []
        for a in e.args:
            if isinstance(a, sp.Pow) and a.exp.is_negative is True:
                continue  # 1/u is never 0 (its own pole is a side condition of its own)
            out.extend(_zero_factors(a))
        return out
    return [] if proved_nonzero_on_reals(e) else [e]


def _gap(c: SideCondition) -> DomainGap | None:
    undecided: DomainGap | None = None
    for e in _zero_factors(c.expr):
        gap = _factor_gap(c, e)
        if gap is not None and gap.proved:
            return gap
        undecided = undecided or gap
    return undecided


def _factor_gap(c: SideCondition, e: sp.Expr) -> DomainGap | None:
    """Where ``e`` (a factor of ``c``'s expression) is proved 0 at a point where ``c`` applies; ``DomainGap(c)``
    when that is not decided; None when ``e`` is proved nonzero wherever ``c`` applies."""
    if c.guard is sp.false or proved_nonzero_on_reals(e):
        return None
    if e.free_symbols - {Z}:
        return DomainGap(c)  # a parameter: not decided here
    poly = _rational_poly(e)
    if poly is not None:
        roots = sorted(set(poly.real_roots()), key=lambda r: float(r))
        undecided = False
        for r in roots:
            holds = _guard_at(c.guard, r)
            if holds:
                return DomainGap(c, point=r)
            undecided = undecided or holds is None
        return DomainGap(c) if undecided else None
    if sp.count_ops(e) > _MAX_OPS:
        return DomainGap(c)
    flint = _flint()
    signs: list[tuple[sp.Rational, int]] = []
    exact_tries = _EXACT_TRIES
    for q in _GRID:  # nearest 0 first: the point named is the first exact 0 found
        holds = _guard_at(c.guard, q)
        if holds is False:
            continue
        value = _exact_at(e, q)
        if value is sp.S.Zero:  # a literal 0 (SymPy evaluated log(1), sin(0), exp(0) - 1 exactly)
            if holds:
                return DomainGap(c, point=q)
            continue
        if holds is None:
            continue
        sign = _ball_sign(flint, e, q)
        if sign is not None:
            signs.append((q, sign))
        elif exact_tries and isinstance(value, sp.Expr) and value.is_number and _real_ball_holds_zero(flint, e, q):
            exact_tries -= 1  # a ball around 0: a hidden zero (sin(1)^2 + cos(1)^2 - 1) is decided exactly
            if _exact_zero(value):
                return DomainGap(c, point=q)
    if c.guard is sp.true and _continuous(e):
        changes = [(a, b) for (a, sa), (b, sb) in itertools.pairwise(sorted(signs)) if sa != sb]
        if changes:  # the sign change nearest 0
            return DomainGap(c, between=min(changes, key=lambda ab: (max(abs(ab[0]), abs(ab[1])), ab[0])), factor=e)
    return DomainGap(c)


#: Grid points per side condition where a value whose ball holds 0 is decided exactly (each up to a CPU second).
_EXACT_TRIES = 3


def _exact_zero(value: sp.Expr) -> bool:
    """``value = 0`` proved by the model layer's exact decision (the resolver's, which imports this module)."""
    from .resolve import _proved_zero

    return _proved_zero(value)


def _exact_at(e: sp.Expr, q: sp.Rational) -> sp.Basic | None:
    """``e`` at ``z = q`` as SymPy evaluates it (only small trees: see ``_MAX_OPS``), None when it fails."""
    try:
        return e.xreplace({Z: q})
    except (TypeError, ValueError, ZeroDivisionError, ArithmeticError):
        return None


def _real_ball_holds_zero(flint: Any, e: sp.Expr, q: sp.Rational) -> bool:
    """Whether ``e(q)``'s ball is real, finite and holds 0 at the working precision (nothing proved: only a
    candidate for the exact decision)."""
    try:
        v = _acb(flint, e, q)
    except (_NotNumeric, ZeroDivisionError, ValueError, OverflowError):
        return False
    return bool(v.imag.is_zero() and v.real.is_finite() and v.real.contains(0))


def _ball_sign(flint: Any, e: sp.Expr, q: sp.Rational) -> int | None:
    """The sign of the real ``e(q)`` when a ball proves it (real, excluding 0), else None."""
    old = flint.ctx.prec
    try:
        for prec in _PRECISIONS:
            flint.ctx.prec = prec
            try:
                v = _acb(flint, e, q)
            except (_NotNumeric, ZeroDivisionError, ValueError, OverflowError):
                return None
            if not v.imag.is_zero() or not v.real.is_finite():
                return None
            if v.real > 0:
                return 1
            if v.real < 0:
                return -1
    finally:
        flint.ctx.prec = old
    return None


def _guard_at(guard: sp.Basic, at: sp.Expr) -> bool | None:
    """The case condition ``guard`` decided exactly at ``z = at`` (rational or real algebraic), else None."""
    if guard is sp.true or guard is sp.false:
        return bool(guard)
    if guard.free_symbols - {Z} or sp.count_ops(guard) > 40:
        return None
    try:
        value = guard.xreplace({Z: at})
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    if value is sp.true or value is sp.false:
        return bool(value)
    return None
