"""Dilate independence (Theorem SDI, MATH §11): for pairwise inequivalent dilates ``μ_1..μ_r`` (distinct,
or for an odd σ with distinct ``|μ_k|``: ``σ(−t) = −σ(t)`` is the symmetry ``(−1, −1)`` with remainder 0),
``Σ_k C_k σ(μ_k t)`` a polynomial forces every ``C_k = 0``. With Lemma R, no residual-free σ-block of
any width equals ``Mx + B(x)`` when ``M ≠ 0`` (bias-free, all weights).

Three structural recognisers, each an exact proof:

* *one exponential on one side* (ELU, SELU, CELU): σ is a polynomial on ``t > 0`` and
  ``P(t) + p(t)e^{λt}`` on ``t < 0`` with ``λ ≠ 0``, ``p ≠ 0`` (or the mirror image). On ``t < 0`` only
  the dilates with ``μ > 0`` carry an exponential, ``p(μt)e^{μλt}``, with pairwise distinct exponents;
  exponential polynomials with distinct exponents are independent over the polynomials, so their
  ``C_k`` vanish; on ``t > 0`` the same for ``μ < 0``.
* *poles on one vertical line* (Mish): ``σ(z) = z^a·N(w)/D(w)`` with ``w = e^z``, ``N/D`` in lowest
  terms, ``D`` of degree 1 or 2 whose roots all have one modulus ``r ≠ 1`` (degree 2: complex roots,
  ``r² = D_0/D_2``; degree 1: a negative root). Then σ is meromorphic on C and its poles are the
  ``z`` with ``e^z`` a root of ``D`` (the numerator is nonzero there and ``z^a ≠ 0``), all with real part
  ``log r ≠ 0``; the poles of ``σ(μ·)`` have real part ``log r/μ``, so distinct dilates have disjoint
  pole sets, and a polynomial combination would be analytic at a pole of one term only.
* *one sine* (``z + sin z``): σ = P + α sin(ωz), P odd: odd, and dilates of distinct ``|μ|`` carry
  distinct frequencies.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import sympy as sp

from ..model.functions import Z
from .facts import Evidence, Stage, Step, proved, unknown
from .identity import exact_sign
from .piecewise import piecewise_form
from .realness import not_proved_real
from .symmetry import exponential_polynomial

__all__ = ["DilateFact", "dilate_fact"]

_W = sp.Symbol("w")  # the variable e^z, for display


@dataclass(frozen=True)
class DilateFact:
    evidence: Evidence


def _one_sided_exponential(expr: sp.Expr) -> Evidence | None:
    form = piecewise_form(expr)
    if form is None or len(form.pieces) != 2 or form.breakpoints != (sp.S.Zero,):
        return None
    left, right = (sp.expand(p.expr) for p in form.pieces)
    sides = {"t < 0": exponential_polynomial(left), "t > 0": exponential_polynomial(right)}
    if any(v is None for v in sides.values()):
        return None
    exp_sides = {k: {lam: p for lam, p in v.items() if lam != 0} for k, v in sides.items() if v is not None}
    with_exp = [k for k, v in exp_sides.items() if v]
    if len(with_exp) != 1:
        return None
    (side,) = with_exp
    terms = exp_sides[side]
    if len(terms) != 1:
        return None
    ((lam, p),) = terms.items()
    if exact_sign(lam) in (None, 0):  # p is nonzero: exponential_polynomial keeps only proved-nonzero terms
        return None
    other = "t > 0" if side == "t < 0" else "t < 0"
    step = Step(
        f"σ is a polynomial on {other} and P(t) + p(t)·e^(λt) on {side} with λ = {sp.sstr(lam)} ≠ 0 and "
        f"p(t) = {sp.sstr(p)} ≠ 0 (exact). For distinct nonzero μ_k, on {side} only the dilates σ(μ_k t) with μ_k > 0 "
        "carry an exponential, p(μ_k t)·e^(μ_k λ t), with pairwise distinct exponents; exponential polynomials with "
        f"distinct exponents are independent over the polynomials, so Σ C_k σ(μ_k t) polynomial forces C_k = 0 for "
        f"μ_k > 0, and on {other} likewise for μ_k < 0", sp.Tuple(lam, p))
    return proved(Stage.STRUCTURAL, step)


def _as_rational_in_exp(expr: sp.Expr) -> tuple[int, sp.Expr, sp.Expr] | None:
    """``(a, N, D)`` with ``expr = z^a·N(e^z)/D(e^z)``, ``N``/``D`` coprime rational polynomials."""
    w = sp.Dummy("w")
    e = expr.rewrite(sp.exp)
    e = e.replace(lambda n: isinstance(n, sp.exp), lambda n: sp.exp(sp.expand(n.args[0])))

    def sub(n: sp.Basic) -> sp.Basic:
        k = sp.expand(n.args[0]).coeff(Z)
        if sp.expand(n.args[0] - k * Z) == 0 and k.is_Integer:
            return w ** int(k)
        raise ValueError("not an integer multiple of z")

    try:
        e = e.replace(lambda n: isinstance(n, sp.exp), sub)
    except ValueError:
        return None
    e = sp.cancel(sp.together(e))
    num, den = sp.fraction(e)
    if Z in den.free_symbols or not num.is_polynomial(Z):
        return None
    monomials = sp.Poly(num, Z).terms()
    if len(monomials) != 1:
        return None
    ((a,), num) = monomials[0]
    if num.free_symbols - {w} or den.free_symbols - {w}:
        return None
    try:
        pn, pd = sp.Poly(num, w), sp.Poly(den, w)
    except sp.PolynomialError:
        return None
    if not all(c.is_Rational for c in (*pn.all_coeffs(), *pd.all_coeffs())):
        return None
    g = sp.gcd(pn, pd)
    pn, pd = sp.Poly(sp.quo(pn, g), w), sp.Poly(sp.quo(pd, g), w)
    return a, pn.as_expr().xreplace({w: _W}), pd.as_expr().xreplace({w: _W})


def _poles_on_a_line(expr: sp.Expr) -> Evidence | None:
    if any(isinstance(n, (sp.Piecewise, sp.Max, sp.Min, sp.Abs, sp.sign, sp.Heaviside))
           for n in sp.preorder_traversal(expr)):
        return None
    try:
        parts = _as_rational_in_exp(expr)
    except (sp.PolynomialError, TypeError, ValueError):
        return None
    if parts is None:
        return None
    a, num, den = parts
    pd = sp.Poly(den, _W)
    if pd.degree() == 2:
        c2, c1, c0 = pd.all_coeffs()
        if not c1**2 - 4 * c2 * c0 < 0:
            return None
        r2 = c0 / c2
        roots = "two complex roots"
    elif pd.degree() == 1:
        c1, c0 = pd.all_coeffs()
        root = -c0 / c1
        if not root < 0:
            return None
        r2 = root**2
        roots = f"the negative root {sp.sstr(root)}"
    else:
        return None
    if r2 == 1:
        return None
    step = Step(
        f"σ(z) = z^{a}·N(e^z)/D(e^z) with N(w) = {sp.sstr(num)}, D(w) = {sp.sstr(den)} coprime; D has {roots}, all "
        f"of modulus r with r² = {sp.sstr(r2)} ≠ 1. So σ is meromorphic on C with poles exactly where e^z is a root "
        "of D (N ≠ 0 there, z ≠ 0), all with real part log r ≠ 0; the poles of σ(μ·) have real part log(r)/μ, so "
        "distinct dilates have disjoint pole sets, and Σ C_k σ(μ_k t) polynomial (an identity of meromorphic "
        "functions on C) would be analytic at a pole of one term only: every C_k = 0",
        sp.Tuple(num, den))
    return proved(Stage.STRUCTURAL, step)


def _one_sine(expr: sp.Expr) -> Evidence | None:
    """σ = P(z) + α·sin(ωz) with P an odd polynomial, α, ω ≠ 0 (``z + sin z``): σ is odd, and the
    dilates σ(μ_k t) with distinct |μ_k| are independent modulo polynomials (distinct frequencies
    |μ_k|ω: sines of distinct frequencies are independent over the polynomials)."""
    if any(isinstance(n, (sp.Piecewise, sp.Max, sp.Min, sp.Abs, sp.sign, sp.Heaviside))
           for n in sp.preorder_traversal(expr)):
        return None
    poly = sp.S.Zero
    sines: list[tuple[sp.Expr, sp.Expr]] = []
    for term in sp.Add.make_args(sp.expand(expr)):
        coeff, rest = term.as_independent(Z, as_Add=False)
        if isinstance(rest, sp.sin):
            arg = sp.expand(rest.args[0])
            omega = arg.coeff(Z)
            if sp.expand(arg - omega * Z) != 0 or omega.has(Z):
                return None
            sines.append((coeff, omega))
        elif term.is_polynomial(Z):
            poly += term
        else:
            return None
    if len(sines) != 1 or poly.free_symbols - {Z}:
        return None
    ((alpha, omega),) = sines
    if exact_sign(alpha) in (None, 0) or exact_sign(omega) in (None, 0):
        return None
    if sp.expand(poly + poly.xreplace({Z: -Z})) != 0:
        return None
    step = Step(
        f"σ = P(z) + α·sin(ωz) with P = {sp.sstr(poly)} odd, α = {sp.sstr(alpha)} ≠ 0, ω = {sp.sstr(omega)} ≠ 0: σ is odd, "
        "so σ(−μt) = −σ(μt) (the symmetry (−1, −1), remainder 0) merges the dilates μ and −μ; for distinct |μ_k|, "
        "Σ C_k σ(|μ_k| t) = polynomial + Σ C_k α sin(|μ_k|ω t), and sines of distinct frequencies are independent "
        "over the polynomials: every C_k = 0", sp.Tuple(alpha, omega))
    return proved(Stage.STRUCTURAL, step)


@functools.lru_cache(maxsize=256)
def dilate_fact(expr: sp.Expr) -> DilateFact:
    """Whether distinct dilates of σ are independent modulo polynomials (proved structurally)."""
    if expr.free_symbols - {Z}:
        return DilateFact(unknown("σ has free parameters"))
    if not_proved_real(expr) is not None:
        return DilateFact(unknown(f"σ is not proved real-valued and finite on R: {not_proved_real(expr)}"))
    for recogniser in (_one_sided_exponential, _poles_on_a_line, _one_sine):
        ev = recogniser(expr)
        if ev is not None:
            return DilateFact(ev)
    return DilateFact(unknown("no structural proof of dilate independence (one exponential on one side of 0, or "
                              "poles on one vertical line) applies"))
