"""Activations of Euler type, recognised structurally, and their ``Sym(σ)`` in closed form (MATH §13).

An activation of Euler type is

    σ(t) = p(t) + Σ_{e ∈ K} (α₊_e t₊^e + α₋_e t₋^e) + γ t^k log|t|,      σ(0) = p(0),

with ``p`` a polynomial, ``t₊ = max(t, 0)``, ``t₋ = max(−t, 0)``, exponents ``e > 0`` (rational),
and for the logarithm an integer ``k ≥ 1``. It is read off the piecewise normal form: one
breakpoint at 0, and on each ray a finite sum of terms ``c·s^e`` and ``c·s^k·log s`` in ``s = |t|``
(each coefficient free of ``z`` and decided exactly). For an integer ``e`` the polynomial takes
the right ray's coefficient and the kink is put on the left ray (``α₊_e = 0``); a pair
``(α₊_e, α₋_e)`` is kept in ``K`` only when it is not a polynomial.

``Sym(σ)`` follows from one identity. Modulo polynomials, the functions ``t₊^e``, ``t₋^e``
(non-integer ``e``), ``t₋^e`` (integer ``e``) and ``t^k log|t|`` are linearly independent, and
a combination ``β₊ t₊^e + β₋ t₋^e`` with integer ``e`` is a polynomial iff ``β₋ = (−1)^e β₊``.
Dilating by ``μ > 0`` multiplies ``t₊^e, t₋^e`` by ``μ^e`` and sends ``t^k log|t|`` to
``μ^k(t^k log|t| + log μ · t^k)``; ``μ < 0`` also swaps ``t₊`` and ``t₋``. So (proofs in
docs/theorems.md, Cor. R-log and Cor. R-pow):

* logarithm (then ``K = ∅``): ``Sym = {(μ, μ^k) : μ ≠ 0}``, remainder
  ``Σ_j p_j (1 − μ^{j−k}) t^j − γ log|μ| t^k``;
* powers, one exponent ``K = {e}``: ``(μ, μ^e)`` for every ``μ > 0``; for ``μ < 0`` the family
  ``(μ, λ|μ|^e)`` with ``λ = α₋/α₊ ∈ {±1}`` (non-integer ``e``; none if ``α₋ ≠ ±α₊``) or
  ``λ = (−1)^{e+1}`` (integer ``e``);
* powers, ``|K| ≥ 2``: only ``μ = ±1``; ``(1, 1)``, and ``(−1, λ)`` when every exponent gives the
  same ``λ``.

Every remainder is ``σ(t) − σ(μt)/κ``, a polynomial in ``t`` whose coefficients are closed-form
functions of the symbol ``μ`` (of the family's sign). Only exact steps are used; an undecided sign
or an unrecognised term gives None.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import sympy as sp

from ..model.functions import Z
from .facts import Step
from .identity import exact_sign, prove_zero, simplified
from .piecewise import piecewise_form
from .realness import not_proved_real

__all__ = ["EulerForm", "EulerSym", "euler_form", "euler_sym"]

_S = sp.Symbol("s", positive=True)


@dataclass(frozen=True)
class EulerForm:
    """``σ(t) = p(t) + Σ_e (α₊_e t₊^e + α₋_e t₋^e) + γ t^k log|t|`` (see the module docstring)."""

    poly: sp.Expr                                          # p(z)
    powers: tuple[tuple[sp.Rational, sp.Expr, sp.Expr], ...]  # (e, α₊_e, α₋_e), each not a polynomial
    log: tuple[int, sp.Expr] | None                        # (k, γ), γ ≠ 0

    def describe(self) -> str:
        parts = [sp.sstr(self.poly)] if self.poly != 0 else []
        for e, ap, am in self.powers:
            if ap != 0:
                parts.append(f"({sp.sstr(ap)})·t₊^{sp.sstr(e)}")
            if am != 0:
                parts.append(f"({sp.sstr(am)})·t₋^{sp.sstr(e)}")
        if self.log is not None:
            parts.append(f"({sp.sstr(self.log[1])})·t^{self.log[0]}·log|t|")
        return " + ".join(parts) or "0"

    @property
    def is_power_form(self) -> bool:
        """``σ = c·t + α₊ t₊^e + α₋ t₋^e`` with one non-integer ``e`` (Cor. R-pow's shape)."""
        return (self.log is None and len(self.powers) == 1 and not self.powers[0][0].is_Integer
                and _degree_at_most_one_no_constant(self.poly))

    @property
    def is_log_form(self) -> bool:
        """``σ = c·t + γ t log|t|`` (Cor. R-log's shape)."""
        return (self.log is not None and self.log[0] == 1 and not self.powers
                and _degree_at_most_one_no_constant(self.poly))


def _degree_at_most_one_no_constant(p: sp.Expr) -> bool:
    poly = sp.Poly(p, Z)
    return poly.degree() <= 1 and exact_sign(poly.coeff_monomial(1)) == 0


def _ray_terms(e: sp.Expr) -> tuple[dict[sp.Rational, sp.Expr], dict[sp.Rational, sp.Expr]] | None:
    """``e(s)`` for ``s > 0`` as ``Σ c_e s^e + Σ d_e s^e log s`` (exponents rational, coefficients
    free of ``s``); None when some term has another shape."""
    f = sp.expand(sp.expand_log(sp.expand(e), force=True))
    powers: dict[sp.Rational, sp.Expr] = {}
    logs: dict[sp.Rational, sp.Expr] = {}
    for term in sp.Add.make_args(f):
        if term == 0:
            continue
        coeff, rest = term.as_independent(_S, as_Add=False)
        if coeff.has(sp.log, sp.exp) and coeff.free_symbols:
            return None
        n_log = 0
        expo: sp.Expr = sp.S.Zero
        for factor in sp.Mul.make_args(rest):
            if factor == sp.S.One:
                continue
            if factor == _S:
                expo += 1
            elif isinstance(factor, sp.Pow) and factor.base == _S and factor.exp.is_Rational:
                expo += factor.exp
            elif factor == sp.log(_S):
                n_log += 1
            elif isinstance(factor, sp.Pow) and factor.base == sp.log(_S):
                return None
            else:
                return None
        if n_log > 1 or not expo.is_Rational:
            return None
        target = logs if n_log else powers
        target[expo] = target.get(expo, sp.S.Zero) + coeff
    out_p = {k: simplified(v) for k, v in powers.items()}
    out_l = {k: simplified(v) for k, v in logs.items()}
    # a coefficient is dropped only when exactly 0 (an undecided one stays, and euler_form gives up on it)
    return ({k: v for k, v in out_p.items() if exact_sign(v) != 0},
            {k: v for k, v in out_l.items() if exact_sign(v) != 0})


def _decided_nonzero(c: sp.Expr) -> bool | None:
    s = exact_sign(c)
    return None if s is None else s != 0


@functools.lru_cache(maxsize=512)
def euler_form(expr: sp.Expr) -> EulerForm | None:
    """The Euler-type decomposition of σ, proved exactly, or None."""
    if not_proved_real(expr) is not None:
        return None
    form = piecewise_form(expr)
    if form is None or len(form.pieces) != 2 or form.breakpoints != (sp.S.Zero,):
        return None
    left, right = form.pieces
    try:
        r = _ray_terms(right.expr.xreplace({Z: _S}))
        lft = _ray_terms(left.expr.xreplace({Z: -_S}))
    except (sp.PolynomialError, TypeError, ValueError):
        return None
    if r is None or lft is None:
        return None
    (rp, rl), (lp, ll) = r, lft
    if any(c.has(Z, _S) for d in (rp, rl, lp, ll) for c in d.values()):
        return None
    if any(e < 0 for d in (rp, lp) for e in d) or any(not (e.is_Integer and e >= 1) for d in (rl, ll) for e in d):
        return None
    # every coefficient decided exactly (nonzero or zero)
    if any(_decided_nonzero(c) is None for d in (rp, rl, lp, ll) for c in d.values()):
        return None
    # the logarithm: γ t^k log|t| is γ s^k log s on the right and γ (−1)^k s^k log s on the left
    log: tuple[int, sp.Expr] | None = None
    if rl or ll:
        if len(rl) != 1 or set(rl) != set(ll):
            return None
        ((k, gamma),) = rl.items()
        if not prove_zero(ll[k] - (-1) ** int(k) * gamma):
            return None
        log = (int(k), gamma)
    poly = sp.S.Zero
    powers: list[tuple[sp.Rational, sp.Expr, sp.Expr]] = []
    for e in sorted(set(rp) | set(lp)):
        a_plus, a_left = rp.get(e, sp.S.Zero), lp.get(e, sp.S.Zero)
        if e.is_Integer:
            poly += a_plus * Z ** int(e)
            kink = simplified(a_left - (-1) ** int(e) * a_plus)
            if _decided_nonzero(kink) is None:
                return None
            if kink != 0 and exact_sign(kink) != 0:
                powers.append((e, sp.S.Zero, kink))
        else:
            powers.append((e, a_plus, a_left))
    if any(e == 0 for e, _, _ in powers):
        return None  # a jump at 0
    if log is not None and powers:
        return None  # a logarithm together with kinks: not handled
    if log is None and not powers:
        return None  # a polynomial
    # σ(0) = p(0): the value held at 0 is the limit from both sides (e > 0, k ≥ 1: s^e, s^k log s → 0)
    value = simplified(expr.xreplace({Z: sp.S.Zero}))
    if value.has(sp.nan, sp.zoo, sp.oo, -sp.oo) or not prove_zero(value - poly.xreplace({Z: sp.S.Zero})):
        return None
    return EulerForm(sp.expand(poly), tuple(powers), log)


@dataclass(frozen=True)
class EulerSym:
    """``Sym(σ)`` for an Euler-type σ: a list of ``(mu, kappa, remainder)`` with ``mu`` one of
    ``"1"``, ``"-1"``, ``"mu>0"``, ``"mu<0"``; for a family ``kappa`` and ``remainder`` are
    expressions in the symbol ``μ`` of that sign."""

    form: EulerForm
    members: tuple[tuple[str, sp.Expr, sp.Expr], ...]
    steps: tuple[Step, ...]


def _remainder(form: EulerForm, mu: sp.Expr, kappa: sp.Expr) -> sp.Expr:
    """``σ(t) − σ(μt)/κ`` for a symmetry ``(μ, κ)``: the polynomial part, the integer kinks that the
    dilation turned into a polynomial, and the logarithm's ``log|μ|`` term."""
    p = form.poly
    out = p - p.xreplace({Z: mu * Z}) / kappa
    for e, ap, am in form.powers:
        if e.is_Integer and (mu.is_negative or (mu.is_Number and mu < 0)):
            # σ(μt) ⊇ |μ|^e (α₋ t₊^e) and −κ σ ⊇ −κ α₋ t₋^e; with κ = (−1)^(e+1)|μ|^e they sum to |μ|^e α₋ t^e
            out += -(sp.Abs(mu) ** e) * am * Z ** int(e) / kappa
        _ = ap
    if form.log is not None:
        k, gamma = form.log
        out += -gamma * sp.log(sp.Abs(mu)) * Z ** k
    return sp.expand(sp.powsimp(sp.expand(out), force=True))


@functools.lru_cache(maxsize=512)
def euler_sym(expr: sp.Expr) -> EulerSym | None:
    """``Sym(σ)`` in closed form when σ is of Euler type (None otherwise)."""
    from .symmetry import MU_NEG, MU_POS

    form = euler_form(expr)
    if form is None:
        return None
    steps: list[Step] = [Step(
        "σ is of Euler type: σ(t) = " + form.describe() + " with σ(0) = p(0), read off its two rays exactly "
        "(t₊ = max(t, 0), t₋ = max(−t, 0)); it is continuous (s^e → 0 and s^k log s → 0 as s → 0+ for e > 0, "
        "k ≥ 1) and not a polynomial (a term independent of the polynomials modulo polynomials is present)")]
    members: list[tuple[str, sp.Expr, sp.Expr]] = []
    if form.log is not None:
        k, _gamma = form.log
        for mu, sym in (("mu>0", MU_POS), ("mu<0", MU_NEG)):
            kappa = sym ** k
            members.append((mu, kappa, _remainder(form, sym, kappa)))
        steps.append(Step(
            f"σ(μt) − κσ(t) = p(μt) − κp(t) + γ(μ^{k} − κ) t^{k} log|t| + γ μ^{k} log|μ| t^{k}, and t^{k} log|t| is "
            f"not a polynomial: a polynomial iff κ = μ^{k}; so Sym(σ) = {{(μ, μ^{k}) : μ ≠ 0}}, a continuum"))
    else:
        pos_kappas = [e for e, _, _ in form.powers]
        lambdas: list[sp.Expr | None] = []
        for e, ap, am in form.powers:
            if e.is_Integer:
                lambdas.append(sp.Integer((-1) ** (int(e) + 1)))
            elif prove_zero(am - ap):
                lambdas.append(sp.S.One)
            elif prove_zero(am + ap):
                lambdas.append(-sp.S.One)
            else:
                lambdas.append(None)
        if len(pos_kappas) == 1:
            (e,) = pos_kappas
            members.append(("mu>0", MU_POS ** e, _remainder(form, MU_POS, MU_POS ** e)))
            steps.append(Step(
                f"μ > 0: σ(μt) − κσ(t) = p(μt) − κp(t) + (μ^{sp.sstr(e)} − κ)(α₊ t₊^{sp.sstr(e)} + α₋ t₋^{sp.sstr(e)}), "
                f"a polynomial iff κ = μ^{sp.sstr(e)}"))
            lam = lambdas[0]
            if lam is not None:
                kappa = lam * sp.Abs(MU_NEG) ** e
                members.append(("mu<0", kappa, _remainder(form, MU_NEG, kappa)))
                steps.append(Step(
                    f"μ < 0: the dilation swaps t₊ and t₋; the kink part is a polynomial iff κ = {sp.sstr(lam)}·|μ|^"
                    f"{sp.sstr(e)}" + (" (α₋ = ±α₊)" if not e.is_Integer else " (an integer exponent)")))
            else:
                steps.append(Step("μ < 0: |μ|^e α₋ = κα₊ and |μ|^e α₊ = κα₋ force α₋ = ±α₊, which fails: no μ < 0"))
        else:
            steps.append(Step(
                "μ > 0: κ = μ^e for every exponent e of the kink part, two distinct exponents give μ = κ = 1"))
            members.append(("1", sp.S.One, sp.S.Zero))
            lams = set(lambdas)
            if None not in lams and len(lams) == 1:
                (lam,) = lams
                assert lam is not None
                members.append(("-1", lam, _remainder(form, sp.S.NegativeOne, lam)))
                steps.append(Step(f"μ < 0: κ = λ_e |μ|^e for every exponent with one λ = {sp.sstr(lam)}: μ = −1, "
                                  f"κ = {sp.sstr(lam)}"))
            else:
                steps.append(Step("μ < 0: the exponents need κ = λ_e |μ|^e with different (or no) signs λ_e: no μ < 0"))
    return EulerSym(form, tuple(members), tuple(steps))
