"""Scale-sign symmetries ``Sym(σ)``: a proved over-approximation and each candidate's remainder.

``Sym(σ) = {(μ, κ) : μ, κ ≠ 0, t ↦ σ(μt) − κσ(t) is a polynomial}`` (MATH §6). Theorem R turns
it into the absorption criterion; this module proves ``Sym(σ) ⊆ C`` for a small candidate set
``C`` and decides, for each candidate, whether its remainder ``r(t) = σ(t) − σ(μt)/κ`` is a
polynomial. Only exact steps prove or drop anything:

* a degree bound ``N`` (``|σ(t)| ≤ C(1 + |t|^N)``), so ``deg(σ(μt) − κσ(t)) ≤ N``;
* exact Taylor coefficients at 0 (of σ, or of its one-sided pieces) and their exact signs:
  ``(μ^k − κ)s_k = 0`` for ``k > N``, and the one-sided analogues;
* kinks away from 0 (breakpoints where the adjacent analytic pieces have different exact Taylor
  coefficients): ``μK = K`` forces ``|μ| = 1``;
* degree-1 positive homogeneity (the family ``κ = |μ|``, ReLU-like);
* for ``μ = −1``: ``(1 − κ)e + … `` splits into even and odd parts, so only ``κ = ±1`` can occur, with
  remainders ``2o`` (``κ = 1``) and ``2e`` (``κ = −1``), each kept only when proved a polynomial.

Numbers never enter: an undecided sign leaves the candidate (and the fact) unknown.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import sympy as sp

from ..model.functions import Z
from .facts import Evidence, Stage, Status, Step, label, proved, unknown
from .growth import growth_fact
from .homogeneity import homogeneity_fact
from .identity import exact_polynomial, exact_sign, is_free_of_z, prove_zero, proved_nonzero, simplified
from .parity import parity_fact, parity_split
from .piecewise import PiecewiseForm, piecewise_form
from .polynomial import polynomial_fact
from .structure import analytic_at, analytic_on_reals, locally_bounded

__all__ = ["SymCandidate", "SymmetryFact", "degree_bound", "symmetry_fact"]

#: How many Taylor coefficients past the degree bound are inspected.
EXTRA_ORDERS = 6


@dataclass(frozen=True)
class SymCandidate:
    """One element (or one family) of the over-approximation ``C ⊇ Sym(σ)``.

    ``mu`` is ``1``, ``-1``, or the text ``"mu>0"`` / ``"mu<0"`` for a family with ``κ = |μ|·kappa``.
    ``status`` says whether the candidate is in ``Sym(σ)``: proved (remainder proved a
    polynomial), refuted (dropped by an exact step), unknown.
    """

    mu: str
    kappa: sp.Expr
    remainder: sp.Expr | None
    status: Status
    reason: str
    #: For a family whose κ is not ``±|μ|`` (Euler type, ``analysis/euler.py``): κ as an expression
    #: of the symbol μ of the family's sign (``kappa`` is then unused).
    family_kappa: sp.Expr | None = None

    def describe(self) -> str:
        if self.family_kappa is not None:
            sign = "> 0" if self.mu == "mu>0" else "< 0"
            return f"(μ, {sp.sstr(self.family_kappa)}) for every μ {sign}"
        if self.mu == "mu>0":
            return "(μ, μ) for every μ > 0"
        if self.mu == "mu<0":
            k = "|μ|" if self.kappa == 1 else "−|μ|"
            return f"(μ, {k}) for every μ < 0"
        return f"({self.mu}, {sp.sstr(self.kappa)})"


@dataclass(frozen=True)
class SymmetryFact:
    """``evidence`` is proved when ``Sym(σ) ⊆ C`` is proved and every candidate of ``C`` is decided."""

    evidence: Evidence
    degree_bound: int | None
    candidates: tuple[SymCandidate, ...]

    @property
    def kept(self) -> tuple[SymCandidate, ...]:
        return tuple(c for c in self.candidates if c.status is Status.PROVED)

    def remainders(self) -> tuple[sp.Expr, ...]:
        """The distinct remainders of the candidates in ``Sym(σ)`` (only when the fact is proved)."""
        if not self.evidence.proved:
            return ()
        out: list[sp.Expr] = []
        for c in self.kept:
            assert c.remainder is not None
            r = _exact_remainder(c.remainder)
            if all(not prove_zero(r - q) for q in out):
                out.append(r)
        return tuple(out)

    @property
    def linear_coefficients(self) -> tuple[sp.Expr, ...]:
        return tuple(sp.Poly(r, Z).coeff_monomial(Z) if r != 0 else sp.S.Zero for r in self.remainders())

    @property
    def kind(self) -> str | None:
        """``no-flip`` (every remainder has zero linear part), ``linear-odd`` (remainders ``0`` and
        ``2c·t``, ``c ≠ 0``), ``polynomial-odd`` (``0`` and ``2o`` with ``o`` an odd polynomial of degree
        > 1 and ``o'(0) ≠ 0``), or None (not proved, or another shape)."""
        if not self.evidence.proved:
            return None
        rems = self.remainders()
        lin = [sp.Poly(r, Z).coeff_monomial(Z) if r != 0 else sp.S.Zero for r in rems]
        if all(exact_sign(c) == 0 for c in lin):
            return "no-flip"
        nonzero = [r for r in rems if r != 0]
        if len(nonzero) != 1 or len(rems) != 2:
            return None
        (r,) = nonzero
        poly = sp.Poly(r, Z)
        if any(k % 2 == 0 and exact_sign(c) != 0 for (k,), c in poly.terms()):
            return None
        if not proved_nonzero(poly.coeff_monomial(Z)):
            return None
        # The degree counts only coefficients proved nonzero: a coefficient that is an unsimplified
        # zero (2·atan(tanh(1/2)) − atan(sinh 1)) or a parameter that may vanish (a ≥ 0) decides nothing.
        higher = [exact_sign(c) for (k,), c in poly.terms() if k > 1]
        if any(sgn is None for sgn in higher):
            return None
        return "polynomial-odd" if any(sgn != 0 for sgn in higher) else "linear-odd"

    @property
    def gate_kind(self) -> str | None:
        """For a gate ``g`` (Theorem G, MATH §10): ``constant-flip`` (the remainders are the
        constants ``0`` and one ``K ≠ 0``: Cor. G1), ``vanishing`` (every remainder is 0 at 0:
        Cor. G2), or None (not proved, or another shape)."""
        if not self.evidence.proved:
            return None
        rems = self.remainders()
        at0 = [sp.expand(r.xreplace({Z: sp.S.Zero})) for r in rems]
        signs = [exact_sign(c) if not c.free_symbols else (0 if c == 0 else None) for c in at0]
        if all(sg == 0 for sg in signs):
            return "vanishing"
        if any(r.has(Z) or r.free_symbols for r in rems) or any(sg is None for sg in signs):
            return None
        nonzero = [r for r, sg in zip(rems, signs, strict=True) if sg != 0]
        return "constant-flip" if len(nonzero) == 1 and len(rems) == 2 else None

    @property
    def gate_flip_constant(self) -> sp.Expr | None:
        """``K`` with the remainders ``{0, K}`` (``gate_kind == "constant-flip"``)."""
        if self.gate_kind != "constant-flip":
            return None
        return next(r for r in self.remainders() if r != 0)

    @property
    def flip_constant(self) -> sp.Expr | None:
        """``c`` with the flip remainder ``2o(t) = 2c·t + …``."""
        if self.kind not in ("linear-odd", "polynomial-odd"):
            return None
        (r,) = [r for r in self.remainders() if r != 0]
        return sp.Poly(r, Z).coeff_monomial(Z) / 2

    @property
    def flip_remainder(self) -> sp.Expr | None:
        if self.kind not in ("linear-odd", "polynomial-odd"):
            return None
        (r,) = [r for r in self.remainders() if r != 0]
        return r


def _exact_remainder(r: sp.Expr) -> sp.Expr:
    """``r`` expanded, with its coefficients proved 0 dropped (``exact_polynomial``): a remainder
    ``(cosh(1)² − sinh(1)² − 1)·t`` is 0. With an undecided coefficient ``r`` stays as written, and
    every reader decides its coefficients with ``exact_sign`` before concluding anything."""
    r = sp.expand(r)
    terms = exact_polynomial(r) if not r.free_symbols - {Z} else None
    return r if terms is None else sp.Add(*(c * Z**k for k, c in terms.items()))


# ---- the degree bound ------------------------------------------------------------


_BOUNDED = (sp.tanh, sp.erf, sp.sin, sp.cos, sp.atan, sp.sign, sp.Heaviside)


def _degree(e: sp.Expr) -> int | None:
    """``n`` with ``|e(z)| ≤ C(1 + |z|^n)`` on R, from the shape of ``e`` (None: not shown)."""
    if not e.has(Z):
        return 0 if (e.is_finite or e.is_Number) else None
    if e == Z:
        return 1
    if isinstance(e, _BOUNDED):
        return 0 if e.args[0].is_real is not False else None
    if isinstance(e, sp.Add) or isinstance(e, (sp.Max, sp.Min)):
        parts = [_degree(a) for a in e.args]
        return None if any(p is None for p in parts) else max(p for p in parts if p is not None)
    if isinstance(e, sp.Mul):
        parts = [_degree(a) for a in e.args]
        return None if any(p is None for p in parts) else sum(p for p in parts if p is not None)
    if isinstance(e, sp.Abs):
        return _degree(e.args[0])
    if isinstance(e, sp.log) and isinstance(e.args[0], sp.Add) and _bounded_below_by_positive(e.args[0]):
        # c ≤ u ≤ C(1 + |z|^n) with c > 0: |log u| ≤ max(|log c|, log C + n·log(1 + |z|)) ≤ C'(1 + |z|)
        inner = _degree(e.args[0])
        if inner is not None:
            return 0 if inner == 0 else 1
    if isinstance(e, sp.log) and isinstance(e.args[0], sp.Add):
        # log(c + exp(u)), c > 0 constant: between log c and log(c + 1) + max(u, 0)
        const = sum((a for a in e.args[0].args if not a.has(Z)), sp.S.Zero)
        rest = [a for a in e.args[0].args if a.has(Z)]
        if const.is_positive and len(rest) == 1 and isinstance(rest[0], sp.exp):
            inner = _degree(rest[0].args[0])
            return None if inner is None else max(inner, 0)
        return None
    if isinstance(e, sp.Pow) and e.exp.is_Integer and e.exp < 0 and isinstance(e.base, sp.Add):
        # (c + nonnegative terms)^(-k) with c > 0 lies in (0, c^(-k)]
        const = sum((a for a in e.base.args if not a.has(Z)), sp.S.Zero)
        rest = [a for a in e.base.args if a.has(Z)]
        if const.is_positive and all(a.is_nonnegative for a in rest):
            return 0
        return None
    if isinstance(e, sp.Pow) and e.exp.is_Integer and e.exp >= 0:
        inner = _degree(e.base)
        return None if inner is None else inner * int(e.exp)
    if isinstance(e, sp.Piecewise):
        parts = [_degree(branch) for branch, _ in e.args]
        return None if any(p is None for p in parts) else max(p for p in parts if p is not None)
    return None


def _bounded_below_by_positive(u: sp.Expr) -> bool:
    """``u = c + (terms proved nonnegative)`` with a constant ``c > 0`` (so ``u ≥ c > 0`` on R)."""
    const = sum((a for a in u.args if not a.has(Z)), sp.S.Zero)
    rest = [a for a in u.args if a.has(Z)]
    return bool(const.is_positive) and all(a.is_nonnegative for a in rest)


@functools.lru_cache(maxsize=512)
def degree_bound(expr: sp.Expr) -> tuple[int | None, Step | None]:
    """A proved ``N`` with ``|σ(t)| ≤ C(1 + |t|^N)``, and the step that proves it."""
    g = growth_fact(expr)
    if g.evidence.proved and g.degree_bound is not None and locally_bounded(expr):
        return 1, Step(f"σ is locally bounded and grows at most linearly ({g.plus_infinity} at +∞, "
                       f"{g.minus_infinity} at −∞), so |σ(t)| ≤ C(1 + |t|)", sp.Eq(label("N", "N"), 1, evaluate=False))
    n = _degree(expr)
    if n is not None:
        return max(n, 1), Step("a bound calculus on the expression (polynomials, bounded functions, sums, products, "
                               "abs, max, min, cases) gives |σ(t)| ≤ C(1 + |t|^N)",
                               sp.Eq(label("N", "N"), max(n, 1), evaluate=False))
    return None, None


# ---- Taylor coefficients -------------------------------------------------------------------------


def _coefficients(e: sp.Expr, order: int) -> tuple[sp.Expr, ...]:
    from .series import taylor_coefficients

    return taylor_coefficients(e, order)


def _nonzero(c: sp.Expr) -> bool | None:
    s = exact_sign(c)
    if s is None:  # a parameter's domain may prove it nonzero with a sign that depends on the piece
        return True if proved_nonzero(c) else None
    return s != 0


# ---- the scale of μ ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Sides:
    """What is proved about μ > 0 and μ < 0 (``"one"``: only ``|μ| = 1``; ``"none"``: no such μ;
    ``"family"``: κ = |μ|·κ' by homogeneity; None: not decided). ``kappa_neg`` is a κ forced for μ = −1."""

    pos: str | None
    neg: str | None
    kappa_neg: sp.Expr | None
    steps: tuple[Step, ...]


def _analytic_sides(coeffs: tuple[sp.Expr, ...], n: int) -> _Sides | None:
    nz = []
    for k in range(n + 1, len(coeffs)):
        v = _nonzero(coeffs[k])
        if v:
            nz.append(k)
    if len(nz) < 2:
        return None
    odd_gap = next(((p, q) for i, p in enumerate(nz) for q in nz[i + 1:] if (q - p) % 2 == 1), None)
    if odd_gap is not None:
        p, q = odd_gap
        step = Step(f"σ is analytic at 0 with exact Taylor coefficients s_{p} ≠ 0 and s_{q} ≠ 0 ({q} − {p} odd, both "
                    f"> N = {n}); (μ^k − κ)s_k = 0 for k > N gives μ^{p} = κ = μ^{q}, so μ^{q - p} = 1 with "
                    f"{q - p} odd: μ = κ = 1", sp.Tuple(coeffs[p], coeffs[q]))
        return _Sides("one", "none", None, (step,))
    p, q = nz[0], nz[1]
    kappa = sp.Integer((-1) ** p)
    step = Step(f"σ is analytic at 0 with exact Taylor coefficients s_{p} ≠ 0 and s_{q} ≠ 0 (both > N = {n}); "
                f"(μ^k − κ)s_k = 0 for k > N gives μ^{p} = κ = μ^{q}, so |μ| = 1, and for μ = −1, κ = (−1)^{p} = "
                f"{kappa}", sp.Tuple(coeffs[p], coeffs[q]))
    return _Sides("one", "one", kappa, (step,))


def _onesided_sides(right: tuple[sp.Expr, ...], left: tuple[sp.Expr, ...], n: int) -> _Sides:
    """0 is a breakpoint; ``right``/``left`` are the Taylor coefficients of the analytic pieces."""
    steps: list[Step] = []
    pos: str | None = None
    idx = [k for k in range(n + 1, len(right)) if _nonzero(right[k]) or _nonzero(left[k])]
    if len(idx) >= 2:
        p, q = idx[0], idx[1]
        pos = "one"
        steps.append(Step(f"μ > 0: σ(μt) − κσ(t) = P(t) on each side of 0 gives (μ^k − κ)R_k = (μ^k − κ)L_k = 0 for "
                          f"k > N = {n}; a nonzero coefficient at k = {p} and at k = {q} gives μ^{p} = κ = μ^{q}, "
                          "so μ = κ = 1", sp.Tuple(right[p], left[p], right[q], left[q])))
    neg: str | None = None
    for k in range(n + 1, len(right)):
        r, lft = _nonzero(right[k]), _nonzero(left[k])
        if r is None or lft is None:
            continue
        if r != lft:
            neg = "none"
            steps.append(Step(f"μ < 0: μ^k L_k = κR_k and μ^k R_k = κL_k for k > N; at k = {k} exactly one of "
                              "R_k, L_k is zero, so no μ < 0 is possible", sp.Tuple(right[k], left[k])))
            break
        if r and lft:
            gap = exact_sign(right[k] ** 2 - left[k] ** 2)
            if gap not in (0, None):
                neg = "none"
                steps.append(Step(f"μ < 0: the equations at k = {k} force R_k² = L_k², which fails exactly",
                                  sp.Tuple(right[k], left[k])))
                break
    if neg is None:
        both = [k for k in range(n + 1, len(right)) if _nonzero(right[k]) and _nonzero(left[k])]
        if len(both) >= 2:
            neg = "one"
            steps.append(Step(f"μ < 0: at k = {both[0]} and k = {both[1]}, κ = ±μ^k with R_k, L_k ≠ 0, so |μ| = 1"))
    return _Sides(pos, neg, None, tuple(steps))


def _derivatives_at(e: sp.Expr, b: sp.Expr, order: int) -> list[sp.Expr]:
    out = []
    d = e
    for _ in range(order + 1):
        out.append(d.xreplace({Z: b}))  # compared through exact_sign (enclosures, then exact zero)
        d = sp.diff(d, Z)
    return out


def _kinks(form: PiecewiseForm) -> tuple[list[sp.Expr], Step | None]:
    """Nonzero breakpoints where σ is proved not analytic (σ's set of such points is finite)."""
    if not all(analytic_on_reals(p.expr) for p in form.pieces):
        return [], None
    found = []
    for b in form.breakpoints:
        if b == 0:
            continue
        left, right = form.left_of(b), form.right_of(b)
        value = form.original.xreplace({Z: b})
        dl, dr = _derivatives_at(left.expr, b, 3), _derivatives_at(right.expr, b, 3)
        if exact_sign(dl[0] - value) not in (0, None) or any(exact_sign(x - y) not in (0, None)
                                                              for x, y in zip(dl, dr, strict=True)):
            found.append(b)
    if not found:
        return [], None
    # −b is a breakpoint by the exact sign decision (3 − h and −3 − h, h a hidden zero, are mirror images)
    mirror = [b for b in found if all(exact_sign(b + c) not in (0, None) for c in form.breakpoints)]
    if mirror:
        return found, Step(f"σ is piecewise analytic and not analytic at z = {sp.sstr(mirror[0])} but analytic at "
                           f"z = {sp.sstr(-mirror[0])} (not a breakpoint); σ(μt) = κσ(t) + P(t) makes σ analytic at μt "
                           "iff at t, so μK = K for the finite nonempty set K of nonzero non-analytic points: |μ| = 1 "
                           "and K ≠ −K rules out μ = −1", sp.FiniteSet(*found))
    return found, Step("σ is piecewise analytic with finitely many breakpoints, and not analytic at the nonzero "
                       "breakpoints where its one-sided derivatives differ exactly; σ(μt) = κσ(t) + P(t) makes σ "
                       "analytic at μt iff at t, so μK = K for the finite nonempty set K of nonzero non-analytic "
                       "points, hence |μ| = 1", sp.FiniteSet(*found))


# ---- the parts for μ = −1 ------------------------------------------------------------------------


def _part_polynomial(expr: sp.Expr, which: str, n: int, sides: tuple[tuple[sp.Expr, ...], tuple[sp.Expr, ...]] | None,
                     coeffs: tuple[sp.Expr, ...] | None) -> tuple[Status, sp.Expr | None, str]:
    """Is the even (``which = "e"``) or odd (``"o"``) part of σ a polynomial? With the polynomial.

    The exact refutations (Taylor coefficients) come first: they are cheap, and where one holds no
    simplification can show the part a polynomial."""
    name = "even" if which == "e" else "odd"
    if coeffs is not None:
        for k in range(n + 1, len(coeffs)):
            if (k % 2 == 0) == (which == "e") and _nonzero(coeffs[k]):
                return Status.REFUTED, None, (f"its Taylor coefficient s_{k} ≠ 0 with k > N = {n}, while a polynomial "
                                              f"{name} part of σ has degree ≤ N")
    if sides is not None:
        right, left = sides
        sign = 1 if which == "e" else -1
        for k in range(len(right)):
            ck = (right[k] + sign * (-1) ** k * left[k]) / 2
            must_vanish = k > n or (k % 2 == 1) == (which == "e")
            if must_vanish and _nonzero(ck):
                why = f"k > N = {n}" if k > n else f"k = {k} has the wrong parity for an {name} polynomial"
                return Status.REFUTED, None, (f"its right-hand Taylor coefficient at 0 of order {k} is nonzero "
                                              f"({sp.sstr(simplified(ck))}) and {why}")
    part = (expr + (1 if which == "e" else -1) * expr.xreplace({Z: -Z})) / 2
    part_form = piecewise_form(part)
    if part_form is not None:
        part_kinks, _ = _kinks(part_form)
        if part_kinks:
            return Status.REFUTED, None, (f"the {name} part is piecewise analytic and not analytic at z = "
                                          f"{sp.sstr(part_kinks[0])} (its one-sided derivatives differ exactly "
                                          "there), while a polynomial is analytic everywhere")
    split = parity_split(expr)
    if split is not None:
        parts = [s.even if which == "e" else s.odd for s in split.segments]
        base = sp.expand(parts[0])
        if base.is_polynomial(Z) and all(prove_zero(p - base) for p in parts[1:]):
            sign = 1 if which == "e" else -1
            parity_ok = prove_zero(base.xreplace({Z: -Z}) - sign * base)
            at_points = all(prove_zero((pe if which == "e" else po) - base.xreplace({Z: b}))
                            for b, pe, po in split.points)
            at_zero = which == "o" or prove_zero(expr.xreplace({Z: sp.S.Zero}) - base.xreplace({Z: sp.S.Zero}))
            if parity_ok and at_points and at_zero:
                return Status.PROVED, base, "simplifies to one polynomial on every segment and at every breakpoint"
    if which == "o":
        par = parity_fact(expr)
        if par.evidence.proved and par.odd_linear_constant is not None:
            return Status.PROVED, par.odd_linear_constant * Z, "the odd part is exactly c·z (parity fact)"
    return Status.UNKNOWN, None, f"the {name} part of σ is neither shown a polynomial nor refuted"


def _nonpolynomial_step(ev: Evidence, n: int, coeffs: tuple[sp.Expr, ...] | None,
                        sides: tuple[tuple[sp.Expr, ...], tuple[sp.Expr, ...]] | None,
                        kinks: list[sp.Expr]) -> Step | None:
    """An exact reason why σ is not a polynomial, or None."""
    if coeffs is not None:
        for k in range(n + 1, len(coeffs)):
            if _nonzero(coeffs[k]):
                return Step(f"σ is not a polynomial: a polynomial with |σ(t)| ≤ C(1 + |t|^N) has degree ≤ N = {n}, "
                            f"but the Taylor coefficient s_{k} at 0 is nonzero", coeffs[k])
    if sides is not None:
        for k, (r, lft) in enumerate(zip(*sides, strict=True)):
            if _nonzero(r - lft):
                return Step(f"σ is not a polynomial: its pieces at 0 have different z^{k} coefficients, so σ is not "
                            "analytic at 0", sp.Ne(r, lft))
    if kinks:
        return Step("σ is not a polynomial: it is not analytic at the kinks", sp.FiniteSet(*kinks))
    if ev.refuted:
        return Step("σ is not a polynomial (polynomial fact: " + "; ".join(s.text for s in ev.steps) + ")")
    return None


# ---- one kink at 0 in the linear term: a continuous family -----------------------------------------

#: The scale of a family of symmetries, by sign (Greek names: no spec parameter can be called so).
MU_POS = sp.Symbol("μ", positive=True)
MU_NEG = sp.Symbol("μ", negative=True)


def _linear_kink_family(form: PiecewiseForm, steps: list[Step], n: int) -> SymmetryFact | None:
    """σ = R(t) on t > 0 and L(t) on t < 0, both polynomials, continuous at 0, differing only in
    the linear coefficient (``abs(z) + z^3``, ``max(0, z) + z^3``).

    One polynomial ``P`` equals ``σ(μt) − κσ(t)`` on both sides of 0, so the coefficients agree for
    every ``k``: ``(μ^k − κ)(R_k − L_k) = 0`` (μ > 0) and ``(μ^k + κ)(L_k − R_k) = 0`` (μ < 0). With
    ``R_k = L_k`` for every ``k ≠ 1`` and ``R_1 ≠ L_1`` this forces ``κ = |μ|``, and then every such
    ``(μ, |μ|)`` is a symmetry: with ``P₀ = Σ_{k≠1} R_k t^k`` the remainder ``σ(t) − σ(μt)/|μ|`` is
    ``P₀(t) − P₀(μt)/μ`` (μ > 0) and ``P₀(t) + P₀(μt)/μ + (R_1 + L_1)t`` (μ < 0), polynomials."""
    if len(form.pieces) != 2 or form.breakpoints != (sp.S.Zero,):
        return None
    left, right = (sp.expand(p.expr) for p in form.pieces)
    if not (left.is_polynomial(Z) and right.is_polynomial(Z)):
        return None
    pr, pl = sp.Poly(right, Z), sp.Poly(left, Z)
    diff = sp.Poly(right - left, Z)
    signs = {k: exact_sign(c) for (k,), c in diff.terms()}
    if any(sg is None for sg in signs.values()) or {k for k, sg in signs.items() if sg != 0} != {1}:
        return None
    r1, l1 = pr.coeff_monomial(Z), pl.coeff_monomial(Z)
    p0 = sp.expand(right - r1 * Z)
    rem_pos = sp.expand(p0 - p0.xreplace({Z: MU_POS * Z}) / MU_POS)
    rem_neg = sp.expand(p0 + p0.xreplace({Z: MU_NEG * Z}) / MU_NEG + (r1 + l1) * Z)
    steps.append(Step(
        "σ is one polynomial on each side of 0 and the two differ exactly in the z-coefficient only "
        f"(R(z) = {sp.sstr(right)}, L(z) = {sp.sstr(left)}); σ(μt) − κσ(t) = P(t) on both sides gives "
        "(μ^k − κ)(R_k − L_k) = 0 for μ > 0 and (μ^k + κ)(L_k − R_k) = 0 for μ < 0, for every k; at k = 1, "
        "κ = |μ|; every (μ, |μ|) is then a symmetry, with a polynomial remainder σ(t) − σ(μt)/|μ|",
        sp.Tuple(rem_pos, rem_neg)))
    candidates = (
        SymCandidate("mu>0", sp.S.One, rem_pos, Status.PROVED, f"μ > 0: remainder {sp.sstr(rem_pos)}"),
        SymCandidate("mu<0", sp.S.One, rem_neg, Status.PROVED, f"μ < 0: remainder {sp.sstr(rem_neg)}"),
    )
    for c in candidates:
        steps.append(Step(f"candidate {c.describe()}: proved — {c.reason}", c.remainder))
    steps.append(Step("so Sym(σ) = {(μ, |μ|) : μ ≠ 0}, a continuum (no genericity statement rests on it)"))
    return SymmetryFact(proved(Stage.SERIES, *steps), n, candidates)


# ---- exponential polynomials ------------------------------------------------------------------------


def exponential_polynomial(expr: sp.Expr) -> dict[sp.Expr, sp.Expr] | None:
    """``{λ: p_λ(z)}`` with ``expr = Σ_λ p_λ(z)·exp(λz)`` (``λ = 0``: the polynomial part), each
    ``p_λ`` a polynomial with constant coefficients and each ``λ`` a real constant; None when
    ``expr`` is not of that shape or when a coefficient's or exponent's zero test is undecided. The
    exponents are pairwise distinct and every kept coefficient is proved nonzero (exact signs)."""
    out: dict[sp.Expr, sp.Expr] = {}
    for term in sp.Add.make_args(sp.expand(sp.powsimp(sp.expand(expr)))):
        lam = sp.S.Zero
        rest = sp.S.One
        for f in sp.Mul.make_args(term):
            if isinstance(f, sp.exp):
                lin = sp.expand(f.args[0])
                k = lin.coeff(Z)
                if sp.expand(lin - k * Z) != 0 or k.has(Z) or k.is_real is not True:
                    return None
                lam += k
            else:
                rest *= f
        if not rest.is_polynomial(Z) or rest.free_symbols - {Z}:
            return None
        out[lam] = sp.expand(out.get(lam, sp.S.Zero) + rest)
    return _exact_exponential_terms(out)


def _exact_exponential_terms(terms: dict[sp.Expr, sp.Expr]) -> dict[sp.Expr, sp.Expr] | None:
    """``terms`` with exponents merged when their difference is exactly 0 and every polynomial
    coefficient kept only when proved nonzero (the exact sign decision, :func:`exact_sign`): a
    coefficient or exponent written as a hidden zero (``log 6 − log 2 − log 3``) is dropped, and an
    undecided one makes the shape undecided (None), never a term assumed present."""
    merged: list[tuple[sp.Expr, sp.Expr]] = []
    for lam, p in terms.items():
        sign = exact_sign(lam)
        if sign is None:
            return None
        key = sp.S.Zero if sign == 0 else lam
        for i, (other, q) in enumerate(merged):
            same = exact_sign(key - other)
            if same is None:
                return None
            if same == 0:
                merged[i] = (other, sp.expand(q + p))
                break
        else:
            merged.append((key, p))
    out: dict[sp.Expr, sp.Expr] = {}
    for lam, p in merged:
        kept: list[sp.Expr] = []
        for (k,), c in sp.Poly(p, Z).terms():
            sign = exact_sign(c)
            if sign is None:
                return None
            if sign != 0:
                kept.append(c * Z**k)
        if kept:
            out[lam] = sp.Add(*kept)
    return out


def _exponential_symmetry(expr: sp.Expr) -> SymmetryFact | None:
    """σ = P + Σ p_λ(z) e^{λz} with a nonzero exponent and Λ ≠ −Λ: Sym(σ) = {(1, 1)}.

    Exponential polynomials with distinct exponents are linearly independent over the polynomials,
    so σ(μt) − κσ(t) is a polynomial only if μΛ = Λ for the finite set Λ of nonzero exponents (and
    then p_λ(μt) = κ p_{μλ}(t)): the largest |λ| is kept, so |μ| = 1, and μ = −1 needs Λ = −Λ; μ = 1
    then needs (1 − κ)p_λ = 0, so κ = 1."""
    form = exponential_polynomial(expr)
    if form is None:
        return None
    lams = [lam for lam in form if lam != 0]
    signs = [exact_sign(lam) for lam in lams]
    if not lams or any(sg is None or sg == 0 for sg in signs):
        return None
    if all(any(exact_sign(lam + other) == 0 for other in lams) for lam in lams):
        return None  # Λ = −Λ (cosh): μ = −1 would need the parts; not handled here
    lam0 = next(lam for lam in lams if all(exact_sign(lam + other) != 0 for other in lams))
    steps = (
        Step("σ is not a polynomial: it is an exponential polynomial with a nonzero exponent, and exponential "
             "polynomials with distinct exponents are linearly independent over the polynomials",
             sp.FiniteSet(*lams)),
        Step("σ(μt) − κσ(t) is a polynomial only if μΛ = Λ for the finite set Λ of nonzero exponents: the largest "
             f"|λ| is kept, so |μ| = 1; −λ is not an exponent for λ = {sp.sstr(lam0)}, so μ ≠ −1; for μ = 1, "
             "(1 − κ)σ is a polynomial only for κ = 1", sp.FiniteSet(*lams)),
        Step("candidate (1, 1): proved — remainder 0"),
        Step("so Sym(σ) = {(1, 1)}"),
    )
    return SymmetryFact(proved(Stage.STRUCTURAL, *steps), None, (
        SymCandidate("1", sp.S.One, sp.S.Zero, Status.PROVED, "μ = 1, κ = 1; remainder 0"),
        SymCandidate("-1", sp.S.One, None, Status.REFUTED, "no μ < 0 (μΛ ≠ Λ)"),
        SymCandidate("-1", -sp.S.One, None, Status.REFUTED, "no μ < 0 (μΛ ≠ Λ)")))


# ---- the fact -------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=512)
def symmetry_fact(expr: sp.Expr) -> SymmetryFact:
    """``Sym(σ)``: the series, kink and homogeneity steps below; when they leave it undecided, the
    closed form of an Euler-type σ (``analysis/euler.py``)."""
    fact = _symmetry_fact(expr)
    if fact.evidence.proved:
        return fact
    by_form = _euler_symmetry(expr)
    return fact if by_form is None else by_form


def _euler_symmetry(expr: sp.Expr) -> SymmetryFact | None:
    from .euler import euler_sym

    found = euler_sym(expr)
    if found is None:
        return None
    steps = list(found.steps)
    candidates: list[SymCandidate] = []
    for mu, kappa, rem in found.members:
        family = mu in ("mu>0", "mu<0")
        cand = SymCandidate(mu, sp.S.One if family else kappa, rem, Status.PROVED, f"remainder {sp.sstr(rem)}",
                            family_kappa=kappa if family else None)
        candidates.append(cand)
        steps.append(Step(f"candidate {cand.describe()}: proved — {cand.reason}", rem))
    if not any(c.mu in ("-1", "mu<0") for c in candidates):
        candidates.append(SymCandidate("-1", sp.S.One, None, Status.REFUTED, "no μ < 0 (see the steps)"))
        candidates.append(SymCandidate("-1", -sp.S.One, None, Status.REFUTED, "no μ < 0 (see the steps)"))
    kept = [c.describe() for c in candidates if c.status is Status.PROVED]
    continuum = any(c.mu in ("mu>0", "mu<0") for c in candidates)
    steps.append(Step("so Sym(σ) = {" + ", ".join(kept) + "}" + (
        ", a continuum (no genericity statement rests on it)" if continuum else "")))
    return SymmetryFact(proved(Stage.STRUCTURAL, *steps), None, tuple(candidates))


def _symmetry_fact(expr: sp.Expr) -> SymmetryFact:
    form = piecewise_form(expr)
    if form is None:
        return SymmetryFact(unknown("the case splits of σ could not be decided exactly"), None, ())
    poly = polynomial_fact(expr)
    if poly.evidence.proved:
        return SymmetryFact(unknown("σ is a polynomial (every (μ, κ) is a symmetry)"), None, ())
    n, n_step = degree_bound(expr)
    if n is None or n_step is None:
        by_exponents = _exponential_symmetry(expr)
        if by_exponents is not None:
            return by_exponents
        return SymmetryFact(unknown("no proved polynomial bound |σ(t)| ≤ C(1 + |t|^N)"), None, ())
    order = n + EXTRA_ORDERS
    steps: list[Step] = [n_step]
    coeffs: tuple[sp.Expr, ...] | None = None
    sides: tuple[tuple[sp.Expr, ...], tuple[sp.Expr, ...]] | None = None
    found: list[_Sides] = []
    at0 = form.piece_at(sp.S.Zero)
    if at0 is not None and analytic_at(at0.expr, sp.S.Zero):
        coeffs = _coefficients(at0.expr, order)
        s = _analytic_sides(coeffs, n)
        if s is not None:
            found.append(s)
    elif at0 is None:
        left, right = form.left_of(sp.S.Zero), form.right_of(sp.S.Zero)
        value = simplified(expr.xreplace({Z: sp.S.Zero}))
        continuous0 = all(prove_zero(p.expr.xreplace({Z: sp.S.Zero}) - value) for p in (left, right))
        if continuous0 and analytic_at(left.expr, sp.S.Zero) and analytic_at(right.expr, sp.S.Zero):
            sides = (_coefficients(right.expr, order), _coefficients(left.expr, order))
            found.append(_onesided_sides(sides[0], sides[1], n))
    kinks, kink_step = _kinks(form)
    if kink_step is not None:
        found.append(_Sides("one", "none" if "K ≠ −K" in kink_step.text else "one", None, (kink_step,)))
    homog = homogeneity_fact(expr)
    if homog.evidence.proved and homog.degree is not None and homog.degree == 1:
        found.append(_Sides("family", "family", None, (Step(
            "σ is positively homogeneous of degree 1 (proved): σ(μt) = μσ(t) for μ > 0 and σ(μt) = |μ|σ(−t) for "
            "μ < 0, so (μ, κ) ∈ Sym(σ) iff (sign μ, κ/|μ|) ∈ Sym(σ)"),)))
    nonpoly = _nonpolynomial_step(poly.evidence, n, coeffs, sides, kinks)
    if nonpoly is None:
        return SymmetryFact(unknown("σ is not proved non-polynomial", *steps), n, ())
    steps.insert(0, nonpoly)
    if not any(s.pos for s in found) and sides is not None:
        linear_kink = _linear_kink_family(form, steps, n)
        if linear_kink is not None:
            return linear_kink
    pos = next((s.pos for s in found if s.pos == "one"), None) or next((s.pos for s in found if s.pos), None)
    neg = next((s.neg for s in found if s.neg == "none"), None) or next(
        (s.neg for s in found if s.neg == "one"), None) or next((s.neg for s in found if s.neg), None)
    kappa_neg = next((s.kappa_neg for s in found if s.kappa_neg is not None), None)
    for s in found:
        steps.extend(s.steps)
    if pos is None or neg is None:
        return SymmetryFact(unknown("no exact step bounds the scale μ (no two nonzero Taylor coefficients past N, "
                                    "no kink away from 0, no degree-1 homogeneity)", *steps), n, ())
    candidates: list[SymCandidate] = []
    if pos == "one":
        candidates.append(SymCandidate("1", sp.S.One, sp.S.Zero, Status.PROVED,
                                       "μ = 1: (1 − κ)σ is a polynomial only for κ = 1 (σ is not one); remainder 0"))
    else:
        candidates.append(SymCandidate("mu>0", sp.S.One, sp.S.Zero, Status.PROVED,
                                       "μ > 0: σ(μt) = μσ(t), and (μ − κ)σ is a polynomial only for κ = μ; remainder 0"))
    if neg == "none":
        candidates.append(SymCandidate("-1", sp.S.One, None, Status.REFUTED, "no μ < 0 (see the steps)"))
        candidates.append(SymCandidate("-1", -sp.S.One, None, Status.REFUTED, "no μ < 0 (see the steps)"))
    else:
        mu = "-1" if neg == "one" else "mu<0"
        for kappa, which in ((sp.S.One, "o"), (-sp.S.One, "e")):
            if kappa_neg is not None and kappa != kappa_neg:
                candidates.append(SymCandidate(mu, kappa, None, Status.REFUTED,
                                               f"the Taylor coefficients force κ = {kappa_neg} for μ = −1"))
                continue
            status, part, why = _part_polynomial(expr, which, n, sides, coeffs)
            what = "2o(t) = σ(t) − σ(−t)" if which == "o" else "2e(t) = σ(t) + σ(−t)"
            rem = None if part is None else sp.expand(2 * part)
            candidates.append(SymCandidate(mu, kappa, rem, status, f"remainder {what}: {why}"))
        steps.append(Step("μ = −1: σ(−t) − κσ(t) = (1 − κ)e(t) − (1 + κ)o(t) is a polynomial iff its even and odd "
                          "parts are; σ = e + o is not a polynomial, so κ = 1 (o a polynomial, remainder 2o) or "
                          "κ = −1 (e a polynomial, remainder 2e)"))
    for c in candidates:
        steps.append(Step(f"candidate {c.describe()}: {c.status.value} — {c.reason}",
                          c.remainder if c.remainder is not None else None))
    undecided = [c for c in candidates if c.status is Status.UNKNOWN]
    if undecided:
        return SymmetryFact(unknown(f"the candidate {undecided[0].describe()} is undecided: {undecided[0].reason}",
                                    *steps), n, tuple(candidates))
    kept = [c.describe() for c in candidates if c.status is Status.PROVED]
    steps.append(Step("so Sym(σ) = {" + ", ".join(kept) + "}"))
    return SymmetryFact(proved(Stage.SERIES, *steps), n, tuple(candidates))


_ = is_free_of_z
