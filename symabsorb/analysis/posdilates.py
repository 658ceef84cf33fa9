"""Dilate independence for positive dilates (DI of Theorem W, MATH §11): for distinct ``μ_1..μ_r > 0``,
``Σ_k C_k σ(μ_k t)`` a polynomial forces every ``C_k = 0``.

Four structural recognisers, each an exact proof (the first hit wins; none hit: unknown):

* *kinks* (hardswish): σ is piecewise analytic with finitely many breakpoints, and σ is proved not
  analytic at a breakpoint ``p ≠ 0`` of largest modulus. Let ``μ_*`` be the smallest ``μ_k`` with
  ``C_k ≠ 0``: ``σ(μ_* t)`` is not analytic at ``p/μ_*``, while every other dilate ``σ(μ_k t)`` is
  analytic there (``|p μ_k/μ_*| > |p|`` exceeds every breakpoint), and so is the polynomial:
  ``C_* = 0``, a contradiction.
* *poles of an exponential fraction* (SiLU, Swish-β, QuickGELU; softplus and log-sigmoid through σ'):
  ``F = z^a·N(w)/D(w)`` with ``w = e^{gz}``, ``N/D`` in lowest terms over Q, ``D`` with a nonzero root and
  ``D(1) ≠ 0``. ``F`` is meromorphic on C; its poles are the ``z`` with ``e^{gz}`` a nonzero root of
  ``D`` (``N ≠ 0`` there, ``z ≠ 0`` so ``z^a ≠ 0``), a nonempty discrete set not containing 0 with a pole
  ``z_0`` of least modulus ``ρ > 0``. With ``μ^*`` the largest ``μ_k`` with ``C_k ≠ 0``, ``z_0/μ^*`` is a
  pole of ``F(μ^* z)`` and of no other dilate (their poles have modulus ``≥ ρ/μ_k > ρ/μ^*``), while the
  polynomial is entire. For ``F = σ'`` (σ analytic on R): differentiate the identity, ``C_k μ_k = 0``.
* *one error function* (GELU): ``σ = P(z) + β z·erf(αz)``, ``α, β ≠ 0``. On ``t > 0``,
  ``t·erf(αμt) = t − t·erfc(|α|μt)``; the polynomial ``Σ C_k β μ_k t·erfc(|α|μ_k t)`` tends to 0, so it is
  0; dividing by the slowest term and using ``(2/√π)e^{−x²}/(x + √(x²+2)) ≤ erfc(x) ≤ e^{−x²}``
  (``x ≥ 0``) the smallest ``μ`` with ``C ≠ 0`` would dominate.
* *one square root of a positive quadratic* (squareplus): ``σ = P(z) + β√(Az² + B)``, ``A, B > 0``,
  ``β ≠ 0``. For large ``t``, ``√(Aμ²t² + B) = √A μ t Σ_j binom(1/2, j)(B/(Aμ²t²))^j`` converges; a
  polynomial has no ``t^{1−2j}`` term (``j ≥ 1``), so ``Σ_k C_k μ_k^{1−2j} = 0`` for ``j = 1..r``: a
  nonsingular Vandermonde system in the distinct ``μ_k^{−2}``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import sympy as sp

from ..model.functions import Z
from .facts import Evidence, Stage, Step, proved, unknown
from .identity import exact_sign, simplified
from .piecewise import piecewise_form
from .realness import not_proved_real
from .structure import analytic_on_reals

__all__ = ["PositiveDilateFact", "positive_dilate_fact"]

_W = sp.Symbol("w")


@dataclass(frozen=True)
class PositiveDilateFact:
    evidence: Evidence
    how: str = ""  # which recogniser proved it ("kinks", "poles", "erf", "sqrt")


def _kinks(expr: sp.Expr) -> Evidence | None:
    from .symmetry import _kinks as nonanalytic_breakpoints  # the exact non-analyticity test of Sym(σ)

    form = piecewise_form(expr)
    if form is None or not form.breakpoints:
        return None
    biggest = abs(form.breakpoints[0])
    for b in form.breakpoints[1:]:  # ordered by the exact sign decision, never by SymPy's numeric `>`
        s = exact_sign(abs(b) - biggest)
        if s is None:
            return None
        if s > 0:
            biggest = abs(b)
    if exact_sign(biggest) != 1:
        return None
    found, _ = nonanalytic_breakpoints(form)
    hits = [b for b in found if exact_sign(abs(b) - biggest) == 0]
    if not hits:
        return None
    p = hits[0]
    return proved(Stage.SERIES, Step(
        f"σ is piecewise analytic with breakpoints {{{', '.join(sp.sstr(b) for b in form.breakpoints)}}} and "
        f"proved not analytic at p = {sp.sstr(p)}, a breakpoint of largest modulus. If Σ C_k σ(μ_k t) is a polynomial "
        "(distinct μ_k > 0) and μ_* is the least μ_k with C_k ≠ 0, then σ(μ_* t) is not analytic at p/μ_*, every "
        "other dilate is analytic there (|p μ_k/μ_*| > |p| exceeds every breakpoint) and so is the polynomial: "
        "C_* = 0, a contradiction"))


def _exp_rational(e: sp.Expr) -> tuple[int, sp.Expr, sp.Expr, sp.Rational] | None:
    """``(a, N, D, g)`` with ``e = z^a N(w)/D(w)``, ``w = e^{gz}``, ``N/D`` in lowest terms over Q."""
    exps = list(e.atoms(sp.exp))
    if not exps:
        return None
    lams = []
    for x in exps:
        lam = sp.cancel(x.args[0] / Z)  # an exponent in z (GELU's −z²/2) needs no simplify to be refused
        if not lam.is_Rational and not lam.has(Z):
            lam = simplified(lam)  # a constant exponent written otherwise
        if not lam.is_Rational or lam == 0:
            return None
        lams.append(sp.Rational(lam))
    num_gcd = functools.reduce(sp.igcd, [abs(q.p) for q in lams])
    den_lcm = functools.reduce(sp.ilcm, [q.q for q in lams])
    g = sp.Rational(num_gcd, den_lcm)
    replaced = e.xreplace({x: _W ** int(sp.Rational(lam / g)) for x, lam in zip(exps, lams, strict=True)})
    if replaced.atoms(sp.Function) or replaced.has(sp.exp):
        return None
    num, den = sp.fraction(sp.cancel(sp.together(replaced)))
    try:
        pn, pd = sp.Poly(num, Z, _W), sp.Poly(den, Z, _W)
    except sp.PolynomialError:
        return None
    if (pn.domain != sp.QQ and pn.domain != sp.ZZ) or (pd.domain != sp.QQ and pd.domain != sp.ZZ):
        return None
    if pd.degree(Z) != 0:
        return None
    zdeg = {m[0] for m in pn.monoms()}
    if len(zdeg) != 1:
        return None
    (a,) = zdeg
    n_w = sp.Poly(sp.cancel(num / Z**a), _W)
    d_w = sp.Poly(den, _W)
    # a nonzero root of D exists iff D is not a monomial (roots at w = 0 are never attained: e^{gz} ≠ 0)
    if len(d_w.terms()) < 2 or sum(d_w.all_coeffs()) == 0 or sp.gcd(n_w, d_w).degree() > 0 or n_w.is_zero:
        return None
    return int(a), n_w.as_expr(), d_w.as_expr(), g


def _poles(expr: sp.Expr) -> Evidence | None:
    form = piecewise_form(expr)
    if form is None or len(form.pieces) != 1 or not analytic_on_reals(expr):
        return None
    for which, f in (("σ", expr), ("σ'", sp.diff(expr, Z))):
        found = _exp_rational(f)
        if found is None:
            continue
        a, n, d, g = found
        w = f"e^({sp.sstr(g)}·z)" if g != 1 else "e^z"
        deriv = ("; σ is analytic on R, so differentiating Σ C_k σ(μ_k t) = P(t) gives Σ C_k μ_k σ'(μ_k t) = P'(t), "
                 "and C_k μ_k = 0 forces C_k = 0") if which == "σ'" else ""
        return proved(Stage.SERIES, Step(
            f"{which} = z^{a}·N(w)/D(w) with w = {w}, N = {sp.sstr(n)}, D = {sp.sstr(d)} coprime over Q, D(1) ≠ 0: "
            f"{which} is meromorphic on C with a nonempty discrete set of poles (e^({sp.sstr(g)}z) a nonzero root of "
            "D; N ≠ 0 and z ≠ 0 there), none at 0; take a pole z_0 of least modulus ρ > 0. If μ^* is the largest "
            f"μ_k with C_k ≠ 0, z_0/μ^* is a pole of {which}(μ^* z) and of no other dilate (their poles have "
            "modulus ≥ ρ/μ_k > ρ/μ^*), while the polynomial side is entire: C^* = 0, a contradiction" + deriv))
    return None


def _single_special(expr: sp.Expr, kind: type) -> tuple[sp.Expr, sp.Expr] | None:
    """``(P, term)``: ``expr = P(z) + term`` with ``P`` a polynomial in z and ``term`` the sum of the terms
    containing ``kind``."""
    terms = sp.Add.make_args(sp.expand(expr))
    special = [t for t in terms if t.has(kind)]
    rest = sp.Add(*[t for t in terms if not t.has(kind)])
    if not special or not rest.is_polynomial(Z) or rest.free_symbols - {Z}:
        return None
    return rest, sp.Add(*special)


def _erf(expr: sp.Expr) -> Evidence | None:
    split = _single_special(expr, sp.erf)
    if split is None:
        return None
    _, term = split
    erfs = term.atoms(sp.erf)
    if len(erfs) != 1:
        return None
    (e,) = erfs
    alpha = sp.cancel(e.args[0] / Z)  # rational-function cancellation decides these quotients: no simplify
    beta = sp.cancel(term / (Z * e))
    if alpha.free_symbols or beta.free_symbols or exact_sign(alpha) in (0, None) or exact_sign(beta) in (0, None):
        return None
    return proved(Stage.SERIES, Step(
        f"σ = P(z) + β·z·erf(αz) with P a polynomial, α = {sp.sstr(alpha)}, β = {sp.sstr(beta)} (both ≠ 0). On t > 0, "
        "t·erf(αμt) = sign(α)(t − t·erfc(|α|μt)), so Σ C_k σ(μ_k t) a polynomial makes Σ C_k μ_k t·erfc(|α|μ_k t) a "
        "polynomial; it tends to 0 (0 < erfc(x) ≤ e^(−x²), x ≥ 0), so it is 0. If μ_* is the least μ_k with C_k ≠ 0, "
        "divide by t·erfc(|α|μ_* t): by (2/√π)e^(−x²)/(x + √(x² + 2)) ≤ erfc(x), each ratio "
        "erfc(|α|μ_k t)/erfc(|α|μ_* t) (μ_k > μ_*) tends to 0, so C_* μ_* = 0, a contradiction"))


def _sqrt(expr: sp.Expr) -> Evidence | None:
    terms = sp.Add.make_args(sp.expand(expr))
    special = [t for t in terms if any(p.exp == sp.S.Half for p in t.atoms(sp.Pow) if p.base.has(Z))]
    rest = sp.Add(*[t for t in terms if t not in special])
    if len(special) != 1 or not rest.is_polynomial(Z) or rest.free_symbols - {Z}:
        return None
    (term,) = special
    roots = [p for p in term.atoms(sp.Pow) if p.exp == sp.S.Half and p.base.has(Z)]
    if len(roots) != 1:
        return None
    (root,) = roots
    beta = sp.cancel(term / root)
    try:
        q = sp.Poly(sp.expand(root.base), Z)
    except sp.PolynomialError:
        return None
    if beta.free_symbols or q.free_symbols - {Z} or q.degree() != 2 or q.coeff_monomial(Z) != 0:
        return None
    a_, b_ = q.coeff_monomial(Z**2), q.coeff_monomial(1)
    if exact_sign(beta) in (0, None) or exact_sign(a_) != 1 or exact_sign(b_) != 1:
        return None
    return proved(Stage.SERIES, Step(
        f"σ = P(z) + β·√(Az² + B) with P a polynomial, β = {sp.sstr(beta)} ≠ 0, A = {sp.sstr(a_)} > 0, "
        f"B = {sp.sstr(b_)} > 0. For t > √(B/A)/μ, √(Aμ²t² + B) = √A·μt·Σ_j binom(1/2, j)(B/(Aμ²t²))^j converges; "
        "Σ C_k σ(μ_k t) a polynomial has no t^(1−2j) term (j ≥ 1; uniqueness of the expansion at +∞), so "
        "Σ_k C_k μ_k·(μ_k^(−2))^j = 0 for j = 1..r (binom(1/2, j) ≠ 0): a nonsingular Vandermonde system in the "
        "distinct μ_k^(−2) > 0, so every C_k = 0"))


@functools.lru_cache(maxsize=256)
def positive_dilate_fact(expr: sp.Expr) -> PositiveDilateFact:
    """Whether distinct positive dilates of σ are independent modulo polynomials (proved structurally)."""
    if not_proved_real(expr) is not None:
        return PositiveDilateFact(unknown(f"σ is not proved real-valued and finite on R: {not_proved_real(expr)}"))
    for how, recognise in (("kinks", _kinks), ("poles", _poles), ("erf", _erf), ("sqrt", _sqrt)):
        try:
            ev = recognise(expr)
        except (sp.PolynomialError, sp.CoercionFailed, NotImplementedError, ValueError, TypeError):
            ev = None
        if ev is not None:
            return PositiveDilateFact(ev, how)
    return PositiveDilateFact(unknown("no structural criterion proves that distinct positive dilates of σ are "
                                      "independent modulo polynomials (kinks, poles of an exponential fraction, "
                                      "one error function, one square root of a positive quadratic)"))
