"""A witness that is not a flip, re-checked by the identity it claims: ``B'(x) = Mx + B(x)`` for every ``x``.

The rescalings of Lemma L-poly-rescale, Cor. R-pos and Cor. R-pow, the rank factorisation of a linear
σ and the enumerated flips of an odd-part condition each come with residual-free weights
``W'_up, W'_down`` of the block's width. ``verify`` does not re-run the procedure that found them,
nor trust the lemma that says they work: it proves the identity

    Σ_i a'_i σ(w'_i·x) − Σ_i a_i σ(w_i·x) − Mx ≡ 0        (x ∈ R^d)

directly, in exact arithmetic, for every σ of Euler type (:mod:`symabsorb.analysis.euler`) or
polynomial. The argument, each step an identity:

* σ = p(t) + Σ_e (α₊_e t₊^e + α₋_e t₋^e) + γ t^k log|t| with σ(0) = p(0), so the left side is a sum
  over units ``u`` (the witness's with sign +, the block's with sign −) of ``β_u σ(v_u·x)``.
* A unit ``v = s·r`` (``r`` its line's representative, first nonzero entry 1) has ``t₊^e, t₋^e`` of
  ``r·x`` times ``|s|^e`` (swapped when ``s < 0``), and ``(s t)^k log|s t| = s^k (t^k log|t| +
  log|s| t^k)``. For an integer ``e``, ``t₊^e = t^e − (−1)^e t₋^e`` moves the rest into the polynomial.
* So the left side is ``Σ_lines [C₊ (r·x)₊^e + C₋ (r·x)₋^e + G (r·x)^k log|r·x|] + P(x)`` with ``P``
  a polynomial; every line's ``C₊, C₋, G`` proved 0 and ``P ≡ 0`` proves the identity (sufficient;
  nothing is concluded from a coefficient that is not 0 but the failure to re-check).
* ``P ≡ 0`` degree by degree: degree 0 and 1 are a vector and a matrix; a higher degree ``j`` first
  merges the terms of each line, then evaluates what remains at the points of ``Z≥0^d`` with
  coordinates summing to ``j``, a set on which a form of degree ``j`` vanishing is the zero form (the
  principal lattice of the simplex is unisolvent).

Every coefficient is decided by :func:`symabsorb.analysis.identity.exact_zero` (undecided: the check
fails, never passes). Witness entries are read by the spec grammar (:func:`constant_from_text`).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations_with_replacement
from typing import Any

import sympy as sp

from ..budget import BudgetExhausted
from ..dsl.errors import SymabsorbError
from ..weights.certify import CertificateError

__all__ = ["check_identity_witness"]

#: Unit-term evaluations a higher-degree polynomial check may spend (points × lines × dimension).
MAX_EVALUATIONS = 400_000
#: Largest witness (entries) read.
MAX_ENTRIES = 65_536

_Vec = tuple[sp.Expr, ...]


def _zero(e: sp.Expr, what: str) -> bool:
    from ..analysis.identity import exact_zero

    decided = exact_zero(sp.expand(e))
    if decided is None:
        raise CertificateError(f"{what}: a coefficient could be neither proved 0 nor proved nonzero, so the "
                               "witness is not re-checked")
    return decided


def _matrix(raw: Any, shape: tuple[int, int], what: str) -> list[list[sp.Expr]]:
    from ..model.resolve import constant_from_text

    rows, cols = shape
    if not isinstance(raw, list) or len(raw) != rows or any(not isinstance(r, list) or len(r) != cols for r in raw):
        raise CertificateError(f"the witness's {what} is not a {rows} x {cols} matrix")
    out = []
    for row in raw:
        values = []
        for x in row:
            if isinstance(x, bool) or not isinstance(x, int | str):
                raise CertificateError(f"an entry of the witness's {what} is not an exact number")
            try:
                values.append(sp.Integer(x) if isinstance(x, int) else constant_from_text(x, f"an entry of {what}"))
            except BudgetExhausted:
                raise  # the command's budget ends the command (never a FAILED witness)
            except SymabsorbError as err:
                raise CertificateError(f"an entry of the witness's {what} is not an exact number: "
                                       f"{str(err).splitlines()[0]}") from None
        out.append(values)
    return out


def _decomposition(expr: sp.Expr) -> tuple[dict[int, sp.Expr], tuple[Any, ...], Any] | None:
    """σ as (polynomial coefficients, Euler powers, logarithm), every coefficient decided; None when σ has
    another shape."""
    from ..analysis.euler import euler_form
    from ..analysis.identity import exact_polynomial
    from ..model.functions import Z

    if expr.free_symbols - {Z}:
        return None
    poly = exact_polynomial(expr)
    if poly is not None:
        return poly, (), None
    form = euler_form(expr)
    if form is None:
        return None
    poly = exact_polynomial(form.poly)
    return (None if poly is None else (poly, form.powers, form.log))


class _Line:
    """The units on one line ``r``: the coefficients of its non-polynomial functions."""

    def __init__(self, r: _Vec, d_out: int) -> None:
        self.r = r
        self.kinks: dict[tuple[sp.Expr, str], list[sp.Expr]] = {}
        self.log = [sp.S.Zero] * d_out

    def add(self, key: tuple[sp.Expr, str], coeff: sp.Expr, beta: _Vec) -> None:
        slot = self.kinks.setdefault(key, [sp.S.Zero] * len(beta))
        for o, b in enumerate(beta):
            slot[o] += coeff * b


def _normalised(v: _Vec) -> tuple[sp.Expr, _Vec] | None:
    """``v = s·r`` with ``r``'s first nonzero entry 1; None for the zero vector."""
    for x in v:
        if not _zero(x, "a weight"):
            return x, tuple(y / x if y.is_Rational and x.is_Rational else sp.radsimp(y / x) for y in v)
    return None


def _same(a: _Vec, b: _Vec) -> bool:
    return all(x == y or _zero(x - y, "a direction") for x, y in zip(a, b, strict=True))


class _Lines:
    """Lines found so far, by representative: rational ones in a dict (equal exactly when equal as tuples), the
    others compared one by one by the exact zero test (m units cost m lookups, not m² sign decisions)."""

    def __init__(self) -> None:
        self.rational: dict[_Vec, Any] = {}
        self.other: list[tuple[_Vec, Any]] = []

    def get(self, r: _Vec) -> Any:
        if all(x.is_Rational for x in r):
            return self.rational.get(r)
        return next((v for key, v in self.other if _same(key, r)), None)

    def put(self, r: _Vec, value: Any) -> None:
        if all(x.is_Rational for x in r):
            self.rational[r] = value
        else:
            self.other.append((r, value))

    def values(self) -> list[Any]:
        return [*self.rational.values(), *(v for _, v in self.other)]


def _compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """The points of ``Z≥0^parts`` whose coordinates sum to ``total``."""
    for cut in combinations_with_replacement(range(parts), total):
        point = [0] * parts
        for i in cut:
            point[i] += 1
        yield tuple(point)


def _form_is_zero(terms: list[tuple[_Vec, _Vec]], j: int, d: int) -> bool:
    """``Σ β (r·x)^j ≡ 0`` (vectors β): each line's terms merged, the rest evaluated on the principal lattice."""
    merged = _Lines()
    for r, beta in terms:
        n = _normalised(r)
        if n is None:
            continue  # (0·x)^j = 0 for j ≥ 1
        s, line = n
        acc = merged.get(line)
        if acc is None:
            merged.put(line, (line, [b * s**j for b in beta]))
        else:
            for o, b in enumerate(beta):
                acc[1][o] += b * s**j
    left = [(r, acc) for r, acc in merged.values() if not all(_zero(c, f"a degree-{j} coefficient") for c in acc)]
    if not left:
        return True
    points = list(_compositions(j, d)) if sp.binomial(d + j - 1, j) * len(left) * d <= MAX_EVALUATIONS else None
    if points is None:
        raise CertificateError(f"the degree-{j} part does not cancel line by line, and checking it on the "
                               f"{sp.binomial(d + j - 1, j)} lattice points exceeds verify's limit")
    for p in points:
        for o in range(len(left[0][1])):
            value = sum((acc[o] * sum((ri * pi for ri, pi in zip(r, p, strict=True) if pi), sp.S.Zero) ** j
                         for r, acc in left), sp.S.Zero)
            if not _zero(value, f"the degree-{j} part at a lattice point"):
                return False
    return True


def check_identity_witness(block: Any, witness: dict[str, Any], centred: bool = False) -> str | None:
    """Re-check a non-flip witness of an ungated, bias-free inline block by ``B'(x) = Mx + B(x)`` itself.

    Returns what was checked; None when the identity is outside this check's reach (a gated or biased
    block, σ not of Euler type or polynomial): nothing is then claimed. A witness that is malformed, of
    another width, or whose identity is not proved raises :class:`CertificateError`."""
    from ..model.spectext import spec_expr
    from ..theory.skips import skip_matrix

    if block.gated or block.question.block_biases or block.question.absorber_biases \
            or any(v is not None for v in (block.b_up, block.b_down, block.b_gate)):
        return None  # biases (inline or arbitrary, `bias: true`), a gate: outside this check (never a bias-free twin's)
    extra = [k for k in ("W_gate", "b_up", "b_down", "b_gate") if witness.get(k) is not None]
    if extra:
        raise CertificateError(f"the witness has {', '.join(extra)}, which the ungated bias-free block's question "
                               "does not have (no W_gate, no biases)")
    parts = _decomposition(block.activation.expr)
    skip = skip_matrix(block)
    if parts is None or skip is None:
        return None
    poly, powers, log = parts
    w_up, w_down = sp.Matrix(block.w_up), sp.Matrix(block.w_down)
    m, d = w_up.shape
    d_out = w_down.rows
    if m * d > MAX_ENTRIES:
        raise CertificateError("the witness is larger than verify re-checks exactly")
    new_up = _matrix(witness.get("W_up"), (m, d), "W_up")
    new_down = _matrix(witness.get("W_down"), (d_out, m), "W_down")
    if centred:  # post-LN (Lemma PN): LN(B'(x)) = LN(Mx + B(x)) needs only P B' = P(Mx + B), P = I − 11ᵀ/d; the
        # reduced block already has P M and P W_down, so the witness's output weights are compared after P
        new_down = [[x - sum((row[i] for row in new_down), sp.S.Zero) / d_out for i, x in enumerate(row)]
                    for row in new_down]
    units: list[tuple[_Vec, _Vec]] = []  # (row v, signed column β)
    for i in range(m):
        units.append((tuple(new_up[i]), tuple(new_down[o][i] for o in range(d_out))))
        units.append((tuple(w_up.row(i)), tuple(-w_down[o, i] for o in range(d_out))))
    lines = _Lines()
    polynomial: dict[int, list[tuple[_Vec, _Vec]]] = {j: [] for j in poly}
    constant = [sp.S.Zero] * d_out
    for v, beta in units:
        if 0 in poly:
            constant = [c + poly[0] * b for c, b in zip(constant, beta, strict=True)]
        for j, cj in poly.items():
            if j >= 1:
                polynomial[j].append((v, tuple(cj * b for b in beta)))
        n = _normalised(v)
        if n is None or not (powers or log):
            continue  # every kink and t^k log|t| vanishes at 0
        s, r = n
        line = lines.get(r)
        if line is None:
            line = _Line(r, d_out)
            lines.put(r, line)
        negative = not s.is_positive
        if negative and not s.is_negative:
            from ..analysis.identity import exact_sign

            sign = exact_sign(s)
            if sign is None:
                raise CertificateError("the sign of a witness weight is not decided exactly")
            negative = sign < 0
        for e, a_plus, a_minus in powers:
            scale = sp.Abs(s) ** e
            plus, minus = (a_minus, a_plus) if negative else (a_plus, a_minus)
            if e.is_Integer:  # t₊^e = t^e − (−1)^e t₋^e: the kink is on t₋^e only, the rest is polynomial
                minus = minus - (-1) ** int(e) * plus
                polynomial.setdefault(int(e), []).append((r, tuple(plus * scale * b for b in beta)))
                plus = sp.S.Zero
            line.add((e, "+"), plus * scale, beta)
            line.add((e, "-"), minus * scale, beta)
        if log is not None:
            k, gamma = log
            for o, b in enumerate(beta):
                line.log[o] += gamma * s**k * b
            polynomial.setdefault(k, []).append((r, tuple(gamma * s**k * sp.log(sp.Abs(s)) * b for b in beta)))
    for line in lines.values():
        for (e, side), coeffs in line.kinks.items():
            if not all(_zero(c, "a kink coefficient") for c in coeffs):
                raise CertificateError(f"B'(x) − Mx − B(x) keeps a term in (r·x)_{side}^{e} on a line of units: "
                                       "the witness does not absorb the block")
        if not all(_zero(c, "a logarithm coefficient") for c in line.log):
            raise CertificateError("B'(x) − Mx − B(x) keeps a term in t^k log|t| on a line of units: the witness "
                                   "does not absorb the block")
    if not all(_zero(c, "the constant term") for c in constant):
        raise CertificateError("B'(0) ≠ B(0): the witness does not absorb the block")
    linear = polynomial.pop(1, [])
    for o in range(d_out):
        for col in range(d):
            entry = sum((beta[o] * v[col] for v, beta in linear), sp.S.Zero) - skip[o, col]
            if not _zero(entry, "the linear part"):
                raise CertificateError("the linear part of B'(x) − B(x) is not Mx: the witness does not absorb "
                                       "the block")
    for j in sorted(polynomial):
        if j >= 2 and polynomial[j] and not _form_is_zero(polynomial[j], j, d):
            raise CertificateError(f"the degree-{j} part of B'(x) − Mx − B(x) is not 0: the witness does not "
                                   "absorb the block")
    return (f"witness: B'(x) − Mx − B(x) ≡ 0 proved exactly for σ(z) = {spec_expr(block.activation.expr)} (line by "
            f"line, then the polynomial part degree by degree), at the block's width {m}")
