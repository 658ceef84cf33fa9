"""The piecewise normal form: an activation as smooth pieces on open intervals.

Activations built from ``max``, ``min``, ``abs``, ``sign``, ``relu`` and ``if`` are split at the
real roots of their "kink arguments" (``a - b`` for ``max(a, b)``, ``a`` for ``abs(a)``, both sides of
each comparison). Between consecutive roots every kink argument keeps its sign, so each non-smooth
node can be replaced by one of its branches, decided exactly at a rational sample point. SymPy's
``series`` and ``simplify`` are unreliable on these nodes; on the pieces they are exact.

Only kink arguments whose roots we can find exactly are accepted: polynomials of degree one (any
real coefficients) or with rational coefficients, possibly inside a strictly increasing odd
function (``tanh``, ``sinh``, ``atan``, ``erf``). Anything else gives ``None``: the caller answers
``unknown`` instead of guessing.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import sympy as sp

from ..model.functions import Z
from .identity import exact_sign, prove_zero
from .structure import NONSMOOTH

__all__ = ["Piece", "PiecewiseForm", "compare", "lt", "piecewise_form", "rational_between"]

_SIGN_PRESERVING = (sp.tanh, sp.sinh, sp.atan, sp.erf)


def lt(a: sp.Expr, b: sp.Expr) -> bool:
    """``a < b`` for reals or ±∞, decided exactly (rationals) or by an enclosure of ``b − a``;
    an undecidable comparison is an error, never a guess."""
    if a == b or a == sp.oo or b == -sp.oo:
        return False
    if a == -sp.oo or b == sp.oo:
        return True
    s = exact_sign(b - a)
    if s is None:
        raise _Undecidable("the order of two breakpoints")
    return s > 0


@dataclass(frozen=True)
class Piece:
    """``σ(z) = expr`` for ``lo < z < hi`` (``lo`` may be ``-oo``, ``hi`` may be ``oo``)."""

    lo: sp.Expr
    hi: sp.Expr
    expr: sp.Expr

    def contains(self, x: sp.Expr) -> bool:
        return lt(self.lo, x) and lt(x, self.hi)

    def interval(self) -> sp.Interval:
        return sp.Interval.open(self.lo, self.hi)


@dataclass(frozen=True)
class PiecewiseForm:
    """Smooth pieces covering R minus finitely many breakpoints, plus the original expression
    (which gives the value at the breakpoints themselves)."""

    original: sp.Expr
    pieces: tuple[Piece, ...]

    @property
    def breakpoints(self) -> tuple[sp.Expr, ...]:
        return tuple(p.hi for p in self.pieces[:-1])

    @property
    def is_single(self) -> bool:
        return len(self.pieces) == 1

    def piece_at(self, x: sp.Expr) -> Piece | None:
        """The piece whose open interval contains ``x`` (None when ``x`` is a breakpoint)."""
        for p in self.pieces:
            if p.contains(x):
                return p
        return None

    def left_of(self, x: sp.Expr) -> Piece:
        """The piece just left of ``x``."""
        for p in self.pieces:
            if not lt(p.hi, x):
                return p
        return self.pieces[-1]

    def right_of(self, x: sp.Expr) -> Piece:
        """The piece just right of ``x``."""
        for p in reversed(self.pieces):
            if not lt(x, p.lo):
                return p
        return self.pieces[0]

    def restricted(self, lo: sp.Expr, hi: sp.Expr) -> tuple[Piece, ...]:
        """The pieces cut to ``(lo, hi)``."""
        out = []
        for p in self.pieces:
            a = p.lo if not lt(p.lo, lo) else lo
            b = p.hi if not lt(hi, p.hi) else hi
            if lt(a, b):
                out.append(Piece(a, b, p.expr))
        return tuple(out)


def rational_between(a: sp.Expr, b: sp.Expr) -> sp.Rational:
    """A rational number strictly between ``a < b`` (either may be infinite)."""
    if a == -sp.oo and b == sp.oo:
        return sp.Integer(0)
    if a == -sp.oo:
        return sp.floor(b) - 1
    if b == sp.oo:
        return sp.ceiling(a) + 1
    if a.is_Rational and b.is_Rational:
        return (a + b) / 2
    for digits in (20, 40, 80):
        mid = ((a + b) / 2).evalf(digits)
        q = sp.Rational(int(sp.floor(mid * 10**digits)), 10**digits)
        if exact_sign(q - a) == 1 and exact_sign(b - q) == 1:  # checked by enclosures, not by the float
            return q
    raise ValueError("cannot separate the interval ends")


class _Undecidable(ValueError):
    pass


def _innermost(e: sp.Basic) -> sp.Basic | None:
    """A non-smooth node none of whose arguments contains another one (post-order)."""
    for arg in e.args:
        found = _innermost(arg)
        if found is not None:
            return found
    if isinstance(e, NONSMOOTH) and e.has(Z):
        return e
    return None


def _kinks(node: sp.Basic) -> list[sp.Expr]:
    if isinstance(node, (sp.Max, sp.Min)):
        args = node.args
        return [args[i] - args[j] for i in range(len(args)) for j in range(i + 1, len(args))]
    if isinstance(node, (sp.Abs, sp.sign, sp.Heaviside)):
        return [node.args[0]]
    if isinstance(node, sp.Piecewise):
        out: list[sp.Expr] = []
        for _, cond in node.args:
            out.extend(_relational_kinks(cond))
        return out
    raise _Undecidable(type(node).__name__)


def _relational_kinks(c: sp.Basic) -> list[sp.Expr]:
    if c in (sp.true, sp.false):
        return []
    if isinstance(c, (sp.And, sp.Or, sp.Not)):
        return [k for a in c.args for k in _relational_kinks(a)]
    if isinstance(c, sp.core.relational.Relational):
        return [c.lhs - c.rhs]
    raise _Undecidable(type(c).__name__)


def _roots(k: sp.Expr, lo: sp.Expr, hi: sp.Expr) -> list[sp.Expr]:
    """Exact real roots of ``k`` in ``(lo, hi)``."""
    while True:
        coeff, rest = k.as_coeff_Mul()
        if coeff != 0 and rest != k:
            k = rest  # a nonzero constant factor does not move the roots
            continue
        if isinstance(k, _SIGN_PRESERVING):  # sign(f(p)) = sign(p) for these f
            k = k.args[0]
            continue
        break
    if not k.has(Z):
        return []
    if k.free_symbols - {Z}:
        raise _Undecidable("a parameter in a case split")
    exps = [a for a in k.atoms(sp.exp) if a.has(Z)]
    if len(exps) == 1:
        # k = alpha*exp(u) + beta with constant alpha != 0: exp(u) = -beta/alpha
        (atom,) = exps
        w = sp.Dummy("w")
        lin = k.xreplace({atom: w})
        alpha = sp.expand(lin).coeff(w, 1)
        beta = sp.expand(lin).coeff(w, 0)
        if not alpha.has(Z) and not beta.has(Z) and sp.expand(alpha * w + beta - lin) == 0 \
                and exact_sign(alpha) not in (0, None):
            target = -beta / alpha
            if target.is_positive:
                return _roots(atom.args[0] - sp.log(target), lo, hi)
            if target.is_nonpositive:
                return []
        raise _Undecidable("a case split on a non-polynomial expression")
    try:
        poly = sp.Poly(k, Z)
    except sp.PolynomialError:
        raise _Undecidable("a case split on a non-polynomial expression") from None
    if poly.degree() <= 0:
        return []
    if poly.degree() == 1:
        a, b = poly.all_coeffs()
        candidates = [-b / a]
    elif all(c.is_Rational for c in poly.all_coeffs()):
        candidates = list(dict.fromkeys(sp.Poly(poly.as_expr(), Z, domain="QQ").real_roots()))
    else:
        raise _Undecidable("a case split on a polynomial with irrational coefficients")
    inside = []
    for r in candidates:
        # A root written as a hidden zero (``cosh(1)^2 - sinh(1)^2 - 1``) is the breakpoint 0: every
        # reader compares breakpoints with 0 structurally, so the form holds 0 itself.
        sign = exact_sign(r)
        if sign is None:
            raise _Undecidable("the sign of a breakpoint")
        r = sp.S.Zero if sign == 0 else r
        if lt(lo, r) and lt(r, hi):
            inside.append(r)
    return inside


def _sign_at(k: sp.Expr, q: sp.Expr) -> int:
    sign = exact_sign(k.xreplace({Z: q}))
    if sign is not None:
        return sign
    raise _Undecidable("sign of a case split at a sample point")


def _branch(node: sp.Basic, q: sp.Expr) -> sp.Expr:
    """The branch of ``node`` that holds on the whole interval containing ``q``."""
    if isinstance(node, (sp.Max, sp.Min)):
        best = node.args[0]
        for a in node.args[1:]:
            s = _sign_at(a - best, q)
            if (s > 0 and isinstance(node, sp.Max)) or (s < 0 and isinstance(node, sp.Min)):
                best = a
        return best
    if isinstance(node, sp.Abs):
        a = node.args[0]
        return a if _sign_at(a, q) >= 0 else -a
    if isinstance(node, sp.sign):
        return sp.Integer(_sign_at(node.args[0], q))
    if isinstance(node, sp.Heaviside):
        s = _sign_at(node.args[0], q)
        return sp.Integer(1) if s > 0 else (sp.Integer(0) if s < 0 else node.xreplace({Z: q}))
    assert isinstance(node, sp.Piecewise)
    for branch, cond in node.args:
        if _truth_at(cond, q):
            return branch
    raise _Undecidable("no branch applies")


def _truth_at(c: sp.Basic, q: sp.Expr) -> bool:
    """The truth of a condition at ``z = q``, each comparison decided by :func:`exact_sign`."""
    if c in (sp.true, sp.false):
        return c is sp.true
    if isinstance(c, sp.And):
        return all(_truth_at(a, q) for a in c.args)
    if isinstance(c, sp.Or):
        return any(_truth_at(a, q) for a in c.args)
    if isinstance(c, sp.Not):
        return not _truth_at(c.args[0], q)
    if isinstance(c, sp.core.relational.Relational):
        s = _sign_at(c.lhs - c.rhs, q)
        return {"<": s < 0, "<=": s <= 0, ">": s > 0, ">=": s >= 0, "==": s == 0, "!=": s != 0}[c.rel_op]
    raise _Undecidable(type(c).__name__)


def compare(a: sp.Expr, b: sp.Expr) -> int:
    """Exact order of two real roots (an enclosure of their difference, or exact equality)."""
    if a == b:
        return 0
    s = exact_sign(a - b)
    if s is None:
        raise _Undecidable("the order of two breakpoints")
    return s


def _split(e: sp.Expr, lo: sp.Expr, hi: sp.Expr, depth: int = 0) -> list[Piece]:
    if depth > 40:
        raise _Undecidable("too many nested cases")
    node = _innermost(e)
    if node is None:
        return [Piece(lo, hi, e)]
    roots: set[sp.Expr] = set()
    for k in _kinks(node):
        roots.update(_roots(k, lo, hi))
    ordered = sorted(roots, key=functools.cmp_to_key(compare))
    cuts = [r for i, r in enumerate(ordered) if i == 0 or compare(ordered[i - 1], r) != 0]  # equal, written apart
    bounds = [lo, *cuts, hi]
    pieces: list[Piece] = []
    for a, b in itertools.pairwise(bounds):
        q = rational_between(a, b)
        replaced = e.xreplace({node: _branch(node, q)})
        pieces.extend(_split(replaced, a, b, depth + 1))
    return pieces


def _holds_at(original: sp.Expr, piece_expr: sp.Expr, b: sp.Expr) -> bool:
    """``original(b) = piece_expr(b)`` proved exactly (so ``b`` carries no value of its own)."""
    at = piece_expr.xreplace({Z: b})
    if at.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        return False
    return prove_zero(original.xreplace({Z: b}) - at)


def _merge(original: sp.Expr, pieces: list[Piece]) -> tuple[Piece, ...]:
    """Join neighbouring pieces with the same expression, but only across a breakpoint where the
    function's own value is proved to be that expression's value: a point that carries a value of
    its own (``if z >= a and z <= a then v else f``) stays a breakpoint."""
    out: list[Piece] = []
    for p in pieces:
        if out and out[-1].expr == p.expr and _holds_at(original, p.expr, p.lo):
            out[-1] = Piece(out[-1].lo, p.hi, p.expr)
        else:
            out.append(p)
    return tuple(out)


@functools.lru_cache(maxsize=1024)
def piecewise_form(expr: sp.Expr) -> PiecewiseForm | None:
    """The normal form of ``expr`` in :data:`Z`, or None when a case split cannot be decided.

    Adjacent pieces with the same expression are merged only where the value at the breakpoint
    between them is proved to be that expression's: otherwise the breakpoint stays, and every
    fact that reads the form sees it.
    """
    try:
        pieces = _split(expr, -sp.oo, sp.oo)
    except (_Undecidable, ValueError, TypeError):
        return None
    return PiecewiseForm(expr, _merge(expr, [Piece(p.lo, p.hi, sp.expand(p.expr) if p.expr.is_polynomial(Z) else p.expr)
                                       for p in pieces]))
