"""Deciding ``f ≡ 0`` and ``f ≡ const``: exact simplification proves, enclosures only refute.

``Expr.equals`` is randomized in SymPy and is never used as a proof here. Numbers enter only as
rigorous enclosures (:mod:`.enclosure`): a ball that excludes 0 refutes "``f ≡ 0``"; a ball around
0 refutes nothing.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Sequence
from fractions import Fraction

import sympy as sp

from ..budget import BudgetExhausted, Timeout, deadline
from ..model.activation import Domain, domain_of
from ..model.functions import Z
from .enclosure import PRECISIONS, Ball, NotNumeric, constant_sign, enclose, nonzero_enclosure

__all__ = [
    "exact_polynomial",
    "exact_sign",
    "exact_zero",
    "find_nonconstant_points",
    "find_nonzero_point",
    "has_domain",
    "is_free_of_z",
    "prove_zero",
    "proved_nonzero",
    "sample_points",
    "simplified",
]


def sample_points() -> Sequence[Fraction]:
    """Rational points for refutations: away from 0, of both signs, irregularly spaced."""
    base = [Fraction(7, 5), Fraction(13, 4), Fraction(2, 7), Fraction(9, 1), Fraction(31, 10), Fraction(5, 3)]
    return base + [-p for p in base]


#: CPU seconds one SymPy ``simplify`` may take (issue 29: one took 73 s inside SymPy's assumption
#: system, finding the real roots of a polynomial of degree 10^6). Past it the expression is left as it
#: is: an identity not shown proves nothing, so the fact that asked is ``unknown``, never decided.
SIMPLIFY_SECONDS = 2.0


def _bounded_simplify(e: sp.Expr) -> sp.Expr:
    """``sp.simplify(e)``, or ``e`` itself when it takes more than :data:`SIMPLIFY_SECONDS` of CPU."""
    message = f"timeout: not decided within {SIMPLIFY_SECONDS:g} CPU seconds"
    try:
        with deadline(SIMPLIFY_SECONDS):
            # a rational function of z and exponentials equal to a number or a rational polynomial (SiLU's
            # odd part over z, (1/(1 + e^−z) + 1/(1 + e^z))/2 = 1/2) is that after cancellation alone;
            # simplify's first call imports sympy.physics.units (issue 29: 0.18 s of a cold classify)
            try:
                quick = sp.cancel(e)
            except (sp.PolynomialError, NotImplementedError, TypeError, ValueError):
                quick = e
            if quick.is_Number:
                return quick
            if quick.has(Z) and _rational_polynomial(poly := sp.expand(quick)):
                return poly  # the canonical form :func:`simplified` gives a rational polynomial anyway
            return sp.simplify(e)
    except BudgetExhausted:
        raise
    except Timeout as err:
        if str(err) != message:  # an enclosing fact's own deadline: not ours to swallow
            raise
        return e


@functools.lru_cache(maxsize=4096)
def simplified(e: sp.Expr) -> sp.Expr:
    """A simpler equal expression (``simplify`` after cheap normalisations). Every step is an
    identity, so the result equals ``e``; a result that is not 0 proves nothing."""
    if e.is_Number or e.is_Symbol:
        return e
    cheap = sp.expand(e)
    if cheap.has(sp.erfc):  # erfc(a) = 1 - erf(a): an identity SymPy's simplify does not apply
        cheap = sp.expand(cheap.replace(sp.erfc, lambda a: 1 - sp.erf(a)))
        e = cheap
    if cheap == 0 or (not cheap.has(Z) and cheap.is_Number):
        return cheap
    if _rational_polynomial(cheap):
        return cheap  # expanded polynomials with rational coefficients are canonical: 0 iff 0
    out = _bounded_simplify(e)
    if out != 0 and out.has(sp.exp, sp.log):
        alt = _bounded_simplify(sp.expand_log(sp.powsimp(out), force=False))
        if sp.count_ops(alt) < sp.count_ops(out):
            out = alt
    return out


def _rational_polynomial(e: sp.Expr) -> bool:
    """A polynomial in z (and parameters) with rational coefficients and no functions."""
    if e.atoms(sp.Function) or any(not n.is_Rational for n in e.atoms(sp.Number)):
        return False
    if any(isinstance(p, sp.Pow) and not (p.exp.is_Integer and p.exp > 0) for p in sp.preorder_traversal(e)):
        return False
    return not e.atoms(sp.NumberSymbol)


def is_free_of_z(e: sp.Expr) -> bool:
    return Z not in e.free_symbols


def prove_zero(e: sp.Expr) -> bool:
    """True only when ``e`` simplifies to exactly 0 (a proof); False means "not shown"."""
    if e == 0:
        return True
    if e.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        return False
    if _refuted_cheaply(e):
        return False
    return bool(simplified(e) == 0)


def _cheap_zero(e: sp.Expr) -> bool:
    """``e`` (a constant) reduced to 0 by one cheap identity before any ``simplify``: hyperbolic and
    trigonometric functions written with ``exp`` (``cosh(1)^2 − sinh(1)^2 − 1``), or logarithms of
    positive numbers combined (``log 6 − log 2 − log 3``; ``logcombine`` checks the positivity)."""
    if e.has(sp.sinh, sp.cosh, sp.tanh, sp.sin, sp.cos, sp.tan) and sp.expand(e.rewrite(sp.exp)) == 0:
        return True
    return bool(e.has(sp.log) and sp.expand(sp.logcombine(e, force=False)) == 0)


def _refuted_cheaply(e: sp.Expr) -> bool:
    """A rigorous enclosure excludes 0 (at a sample point when ``e`` depends on ``z``): ``e`` is not 0,
    and no ``simplify`` needs to run (cheap refutations first, issue 29)."""
    params = sorted(e.free_symbols - {Z}, key=str)
    if params:
        # one allowed value of every parameter: e ≠ 0 there refutes "e ≡ 0 for every allowed value"
        values = {p: _allowed_value(p) for p in params}
        if any(v is None for v in values.values()):
            return False
        e = e.xreplace(values)
    if Z not in e.free_symbols:
        return constant_sign(e) in (-1, 1)
    return find_nonzero_point(e, points=_QUICK_POINTS) is not None


def _allowed_value(p: sp.Basic) -> sp.Rational | None:
    """A rational value ``p`` may take: one satisfying every SymPy assumption of ``p`` (a parameter
    with a declared domain, :func:`domain_of`, is left alone: None)."""
    if not isinstance(p, sp.Symbol) or domain_of(p) is not None:
        return None
    for v in (sp.Rational(3, 2), sp.Rational(-5, 3), sp.Integer(7), sp.Integer(-4)):
        if all(getattr(v, f"is_{k}") == want for k, want in p.assumptions0.items()):
            return v
    return None


#: A few of :func:`sample_points` for the cheap refutation in :func:`prove_zero`.
_QUICK_POINTS = (Fraction(7, 5), Fraction(-13, 4), Fraction(2, 7), Fraction(-31, 10))


def _as_fraction(p: Fraction | sp.Rational) -> Fraction:
    return p if isinstance(p, Fraction) else Fraction(int(p.p), int(p.q))


def _inside(p: Fraction, lo: sp.Expr | None, hi: sp.Expr | None) -> bool:
    q = sp.Rational(p.numerator, p.denominator)
    if lo is not None and lo != -sp.oo and not bool(q > lo):
        return False
    return not (hi is not None and hi != sp.oo and not bool(q < hi))


def _candidates(points: Iterable[Fraction | sp.Rational] | None, lo: sp.Expr | None,
                hi: sp.Expr | None) -> list[Fraction]:
    pts = [_as_fraction(p) for p in (sample_points() if points is None else points)]
    return [p for p in dict.fromkeys(pts) if _inside(p, lo, hi)]


def find_nonzero_point(e: sp.Expr, points: Iterable[Fraction | sp.Rational] | None = None,
                       lo: sp.Expr | None = None, hi: sp.Expr | None = None) -> tuple[Fraction, Ball] | None:
    """A rational point (in ``(lo, hi)`` when given) and an enclosure of ``e`` there that
    excludes 0 — a rigorous refutation of ``e ≡ 0`` — else None."""
    for p in _candidates(points, lo, hi):
        ball = nonzero_enclosure(e, p)
        if ball is not None:
            return p, ball
    return None


def find_nonconstant_points(e: sp.Expr, lo: sp.Expr | None = None, hi: sp.Expr | None = None,
                            points: Iterable[Fraction | sp.Rational] | None = None,
                            ) -> tuple[Fraction, Fraction, Ball, Ball] | None:
    """Two points in ``(lo, hi)`` with disjoint enclosures of ``e`` (so ``e`` is not constant there)."""
    pts = _candidates(points, lo, hi)
    for prec in PRECISIONS:
        values: list[tuple[Fraction, Ball]] = []
        for p in pts:
            try:
                values.append((p, enclose(e, p, prec)))
            except NotNumeric:
                continue
        for i in range(len(values)):
            for j in range(i + 1, len(values)):
                a, b = values[i][1], values[j][1]
                if a.value.is_finite() and b.value.is_finite() and not a.value.overlaps(b.value):
                    return values[i][0], values[j][0], a, b
    return None


@functools.lru_cache(maxsize=8192)
def exact_sign(e: sp.Expr) -> int | None:
    """The sign of a constant expression, or None.

    Decided by exact structure (rationals, SymPy's deductive assumptions on symbols) or by a
    rigorous enclosure that excludes 0; 0 only when the expression simplifies to exactly 0.
    Never by a fixed-precision number."""
    if e.is_Rational:
        return int(sp.sign(e))
    if e.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        return None
    if not e.free_symbols:
        s = constant_sign(e)
        if s is not None:
            return s
        content, primitive = e.as_content_primitive()  # h/2, h/6, h/24: one decision (cached) for h
        if content.is_Rational and content > 0 and primitive != e:
            return exact_sign(primitive)
        return 0 if _cheap_zero(e) or prove_zero(e) else None
    if Z in e.free_symbols:
        return None
    # Symbolic parameters: SymPy's assumption system deduces from declared constraints.
    if e.is_zero:
        return 0
    if e.is_positive:
        return 1
    if e.is_negative:
        return -1
    s = simplified(e)
    if s.is_zero or s == 0:
        return 0
    if s.is_positive:
        return 1
    if s.is_negative:
        return -1
    signs = _signs_on_domain(e)
    if signs is not None and len(set(signs)) == 1:
        return signs[0]
    return None


def exact_zero(e: sp.Expr) -> bool | None:
    """The project's zero test on a SymPy value (free of ``z``): True when ``e`` is proved 0, False
    when proved nonzero (by :func:`exact_sign`, or on every piece of a parameter's domain), None when
    undecided. Never structural: ``cosh(1)**2 - sinh(1)**2 - 1`` is not ``== 0``, and is 0."""
    if isinstance(e, (int, Fraction)):
        return e == 0
    sign = exact_sign(e)
    if sign is not None:
        return sign == 0
    return False if proved_nonzero(e) else None


def exact_polynomial(e: sp.Expr) -> dict[int, sp.Expr] | None:
    """``{k: c_k}`` with ``e = Σ c_k z^k`` and every ``c_k`` proved nonzero by :func:`exact_sign`
    (coefficients proved 0 dropped, whatever they are written as); None when ``e`` is not a
    polynomial in ``z`` or a coefficient is undecided."""
    if not e.is_polynomial(Z):
        return None
    try:
        terms = sp.Poly(sp.expand(e), Z).terms()
    except sp.PolynomialError:
        return None
    out: dict[int, sp.Expr] = {}
    for (k,), c in terms:
        sign = exact_zero(c)
        if sign is None:
            return None
        if sign is False:
            out[int(k)] = c
    return out


def has_domain(e: sp.Basic) -> bool:
    """Whether ``e`` holds a parameter with a declared domain beyond its sign assumptions."""
    return any(domain_of(x) is not None for x in e.free_symbols)


def proved_nonzero(e: sp.Expr) -> bool:
    """Whether ``e`` (free of ``z``) is proved nonzero for every allowed value of its parameters,
    possibly with different signs on different pieces of a domain (``1 - a`` for ``a != 1``)."""
    sign = exact_sign(e)
    if sign is not None:
        return sign != 0
    if Z in e.free_symbols:
        return False
    signs = _signs_on_domain(e)
    return signs is not None and 0 not in signs and None not in signs


def _pieces(domain: Domain) -> list[tuple[sp.Expr | None, sp.Expr | None]]:
    """The open intervals of a domain between its ends and its excluded points, in order."""
    cuts: list[sp.Expr | None] = [domain.lo, *domain.excluded, domain.hi]
    return list(itertools.pairwise(cuts))


def _signs_on_domain(e: sp.Expr) -> list[int | None] | None:
    """The exact sign of ``e`` on each piece of the domain of one constrained parameter of ``e``
    (an open interval mapped onto ``t > 0`` by a bijection, so SymPy's assumptions on ``t`` see
    the interval; each closed end substituted), or None when ``e`` has no such parameter. Every
    allowed value lies in exactly one piece, so a sign shared by all pieces is the sign of ``e``."""
    param = next((x for x in sorted(e.free_symbols, key=str) if domain_of(x) is not None), None)
    if param is None:
        return None
    domain = domain_of(param)
    assert domain is not None
    out: list[int | None] = []
    for lo, hi in _pieces(domain):
        t = sp.Dummy("t", positive=True)
        if lo is None and hi is None:
            return None  # the whole line: nothing beyond the assumptions
        if hi is None:
            value = lo + t
        elif lo is None:
            value = hi - t
        else:
            value = lo + (hi - lo) / (1 + t)
        out.append(exact_sign(e.xreplace({param: value})))
        if out[-1] is None:
            return out
    for end, is_open in ((domain.lo, domain.lo_open), (domain.hi, domain.hi_open)):
        if end is not None and not is_open:
            out.append(exact_sign(e.xreplace({param: end})))
    return out
