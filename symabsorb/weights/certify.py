"""Deciding the index-set condition on float weights **exactly**, with a certificate anyone can re-check.

Float weights are exact rationals (dyadic numbers), and the question "is there ``S`` with
``W_down[:,S] W_up[S,:] = T``?" is asked about those rationals. Floats only *find* candidates
(:mod:`.floatsearch`); a verdict rests on one of these certificates, each checked in exact integer
arithmetic (:mod:`.exact`):

``index-set``
    ``S`` with ``Σ_{j∈S} a_j b_jᵀ = T`` (checked entry by entry, exactly).
``separating``
    a matrix ``Y`` (a sum of integer matrices times powers of two) with
    ``⟨Y, T⟩ > Σ_j max(0, a_jᵀ Y b_j)`` or ``⟨Y, T⟩ < Σ_j min(0, a_jᵀ Y b_j)``. Proof that no ``S``
    exists: if ``Σ_j c_j a_j b_jᵀ = T`` with ``c ∈ {0,1}^m``, then ``⟨Y, T⟩ = Σ_j c_j a_jᵀ Y b_j``, a
    number between ``Σ_j min(0, ·)`` and ``Σ_j max(0, ·)``. It also bounds the distance:
    ``‖Σ_{j∈S} a_j b_jᵀ − T‖_F ≥ margin / ‖Y‖_F`` for every ``S`` (Cauchy–Schwarz). See
    ``docs/theorems.md`` ("Certificates for float weights").
``exact-search``
    small systems only: exact rational elimination and enumeration (:func:`.search.exact_search`),
    re-checked by running it again.
"""

from __future__ import annotations

import base64
import hashlib
import math
import zlib
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from .exact import bilinear_diagonal, exact_product, primitive_row_keys
from .floatsearch import FloatSearch, correction, float_search, separating_direction
from .search import floor_text

__all__ = [
    "Certificate",
    "CertificateError",
    "ExactDecision",
    "Target",
    "check_certificate",
    "decide_exactly",
    "exact_nondegeneracy",
]

#: Bits of each integer limb of Y (|limb| < 2^Y_BITS).
Y_BITS = 20
#: Rounds of refinement of Y (each adds one limb).
REFINE_ROUNDS = 3
#: Largest limb of Y read from a report (entries; d up to 8192).
MAX_LIMB_ENTRIES = 1 << 26
#: Largest d² · m for the exact rational fallback.
EXACT_FALLBACK_SIZE = 60_000


class CertificateError(Exception):
    """A certificate that does not check: an internal error, never a verdict."""


@dataclass(frozen=True)
class Target:
    """The rational d x d target ``T``, stored by its nonzero entries (sorted)."""

    size: int
    entries: tuple[tuple[int, int, Fraction], ...]

    @classmethod
    def from_rows(cls, rows: list[list[Fraction]] | tuple[tuple[Fraction, ...], ...]) -> Target:
        return cls(len(rows), tuple((i, k, Fraction(v)) for i, row in enumerate(rows) for k, v in enumerate(row) if v))

    def rows(self) -> list[list[Fraction]]:
        out = [[Fraction(0)] * self.size for _ in range(self.size)]
        for i, k, v in self.entries:
            out[i][k] = v
        return out

    def dense_float(self) -> Any:
        np = _np()
        t = np.zeros((self.size, self.size))
        for i, k, v in self.entries:
            t[i, k] = float(v)
        return t


@dataclass(frozen=True)
class Certificate:
    kind: str  # "index-set" | "separating" | "exact-search" | "nondegenerate"
    target: Target
    index_set: tuple[int, ...] = ()
    y_limbs: tuple[tuple[int, Any], ...] = ()  # Y = Σ 2^e · limb
    inner: Fraction | None = None  # ⟨Y, T⟩
    positive_sum: Fraction | None = None  # Σ_j max(0, a_jᵀ Y b_j)
    negative_sum: Fraction | None = None  # Σ_j min(0, a_jᵀ Y b_j)
    distance: float = 0.0  # certified lower bound on min_S ‖W_down[:,S] W_up[S,:] − T‖_F (rounded down)
    method: str = ""
    proof: str = ""
    weights: dict[str, Any] = field(default_factory=dict)  # file, sha256, keys, transpose (filled by the caller)
    nondegenerate: dict[str, Any] | None = None
    # "centering" (a post-LN layer, Lemma PN): the claim is about P·W_down[:,S] W_up[S,:] = P·T with
    # P = I − 11ᵀ/d; a separating Y then has zero column sums (Y = PY), and nondegeneracy asks P·a_j ≠ 0
    projector: str | None = None

    @property
    def found(self) -> bool:
        return self.kind == "index-set"

    def describe_target(self) -> str:
        """``T`` in a few words (what the certificate is about)."""
        t = self.target
        diag = {v for i, k, v in t.entries if i == k}
        if len(t.entries) == t.size and all(i == k for i, k, _ in t.entries) and len(diag) == 1:
            v = diag.pop()
            return f"T = {_frac_str(v)}·I ({t.size} x {t.size})"
        return f"T ({t.size} x {t.size}, {len(t.entries)} nonzero entries)"


@dataclass(frozen=True)
class ExactDecision:
    found: bool | None  # True: S exists; False: proved none; None: undecided
    certificate: Certificate | None
    search: FloatSearch | None
    reason: str  # why undecided, when found is None


# ---- helpers --------------------------------------------------------------------------------------


def _np() -> Any:
    import numpy

    return numpy


def _inner(y_limbs: list[tuple[int, Any]], target: Target) -> Fraction:
    total = Fraction(0)
    nonzero = target.entries
    for e, limb in y_limbs:
        part = sum((int(limb[i, k]) * v for i, k, v in nonzero), Fraction(0))
        total += part * (Fraction(2) ** e)
    return total


def _norm_squared(y_limbs: list[tuple[int, Any]]) -> Fraction:
    """``‖Σ_l 2^(e_l) Y_l‖_F²`` exactly: pairwise inner products of the limbs, in int64 blocks small
    enough that no sum can overflow (|entries| < 2^31, so each product is below 2^62 / block)."""
    np = _np()
    total = Fraction(0)
    for a, (ea, la) in enumerate(y_limbs):
        for b, (eb, lb) in enumerate(y_limbs):
            if b < a:
                continue
            fa, fb = np.asarray(la, dtype=np.int64).ravel(), np.asarray(lb, dtype=np.int64).ravel()
            bits = max(1, int(np.abs(fa).max(initial=0)).bit_length()) + max(1, int(np.abs(fb).max(initial=0)).bit_length())
            block = max(1, 1 << max(0, 62 - bits))
            dot = 0
            for start in range(0, fa.size, block):
                dot += int(np.dot(fa[start:start + block], fb[start:start + block]))
            total += Fraction(dot * (1 if a == b else 2)) * Fraction(2) ** (ea + eb)
    return total


def _sqrt_down(q: Fraction) -> float:
    """A float ≤ √q."""
    if q <= 0:
        return 0.0
    k = max(0, 64 - (q.numerator.bit_length() - q.denominator.bit_length()) // 2)
    n = math.isqrt(q.numerator * 4**k // q.denominator)
    lb = Fraction(n, 2**k)
    try:
        f = float(lb)
    except OverflowError:
        return 1.7976931348623157e308
    while f > 0 and Fraction(f) > lb:
        f = math.nextafter(f, 0.0)
    return f


def _limbs_from_float(y: Any, bits: int = Y_BITS) -> tuple[int, Any] | None:
    """Round a float matrix to ``2^e · L`` with integer ``|L| ≤ 2^bits`` (a candidate: rounding is allowed)."""
    np = _np()
    big = float(np.abs(y).max(initial=0.0))
    if not big or not math.isfinite(big):
        return None
    e = math.frexp(big)[1] - bits
    limb = np.rint(np.ldexp(y, -e)).astype(np.int64)
    return (e, limb) if limb.any() else None


def _limbs_from_ints(values: list[list[int]], bits: int = Y_BITS) -> list[tuple[int, Any]]:
    """An integer matrix (Python ints, any size) as limbs of ``bits`` bits."""
    np = _np()
    top = max((abs(v).bit_length() for row in values for v in row), default=0)
    out = []
    mask = (1 << bits) - 1
    for p in range(max(1, -(-top // bits))):
        limb = np.array([[(abs(v) >> (bits * p) & mask) * (1 if v >= 0 else -1) for v in row] for row in values],
                        dtype=np.int64)
        if limb.any():
            out.append((bits * p, limb))
    return out


@dataclass(frozen=True)
class _Evaluation:
    inner: Fraction
    y: list[Fraction]
    positive: Fraction
    negative: Fraction

    @property
    def upper_margin(self) -> Fraction:
        return self.inner - self.positive

    @property
    def lower_margin(self) -> Fraction:
        return self.negative - self.inner


def _evaluate(w_up: Any, w_down: Any, target: Target, y_limbs: list[tuple[int, Any]],
              before: _Evaluation | None = None) -> _Evaluation:
    """The exact values for ``Y = Σ y_limbs``; ``before``: the evaluation of all limbs but the last (a
    refinement adds one limb, and ``a_jᵀ Y b_j`` is linear in ``Y``: only the new limb is evaluated)."""
    if before is None:
        y = bilinear_diagonal(w_down, w_up, y_limbs)
    else:
        y = [u + v for u, v in zip(before.y, bilinear_diagonal(w_down, w_up, y_limbs[-1:]), strict=True)]
    inner = _inner(y_limbs, target)
    pos = sum((v for v in y if v > 0), Fraction(0))
    neg = sum((v for v in y if v < 0), Fraction(0))
    return _Evaluation(inner, y, pos, neg)


def _index_set_holds(w_up: Any, w_down: Any, target: Target, s: tuple[int, ...], projector: str | None = None) -> bool:
    if projector == "centering":
        return _centered_holds(w_up, w_down, target, s)
    x, e = exact_product(w_down, w_up, s)
    scale = Fraction(2) ** e
    want = {(i, k): v for i, k, v in target.entries}
    nonzero = zip(*x.nonzero(), strict=True) if x.size else iter(())
    if any((int(i), int(k)) not in want for i, k in nonzero):
        return False
    return all(int(x[i, k]) * scale == v for (i, k), v in want.items())


def _centered_holds(w_up: Any, w_down: Any, target: Target, s: tuple[int, ...]) -> bool:
    """``P(W_down[:,S] W_up[S,:] − T) = 0``: every column of ``W_S − T`` is a constant vector, exactly."""
    np = _np()
    x, e = exact_product(w_down, w_up, s)
    d = target.size
    if d < 2:
        return True
    scale = Fraction(2) ** e
    by_col: dict[int, dict[int, Fraction]] = {}
    for i, k, v in target.entries:
        by_col.setdefault(k, {})[i] = v
    for k in range(x.shape[1]):
        tcol = by_col.get(k, {})
        free = [i for i in range(min(d, len(tcol) + 1)) if i not in tcol]
        if free:
            r = free[0]
            base = x[r, k] * scale
            plain = np.ones(d, dtype=bool)
            plain[list(tcol)] = False
            if not bool((x[plain, k] == x[r, k]).all()):
                return False
            if any(x[i, k] * scale - v != base for i, v in tcol.items()):
                return False
        else:
            values = {x[i, k] * scale - tcol[i] for i in range(d)}
            if len(values) != 1:
                return False
    return True


def _centered_limb(limb: Any) -> Any:
    """The integer limb with its column sums made exactly zero (the last row takes the difference)."""
    out = limb.copy()
    out[-1, :] -= out.sum(axis=0)
    return out


def _safe_float(q: Fraction) -> float:
    try:
        return float(q)
    except OverflowError:
        return math.inf if q > 0 else -math.inf


def _approx(q: Fraction) -> str:
    """A short decimal rendering of a rational of any size."""
    try:
        return f"{float(q):.6g}"
    except OverflowError:
        digits = len(str(abs(q.numerator))) - len(str(q.denominator))
        return f"{'-' if q < 0 else ''}~1e{digits}"


def _frac_str(q: Fraction | None) -> str | None:
    return None if q is None else (str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}")


# ---- nondegeneracy, exactly -----------------------------------------------------------------------


def exact_nondegeneracy(w_up: Any, w_down: Any, projector: str | None = None) -> dict[str, Any]:
    """Rows of W_up nonzero and pairwise non-collinear, columns of W_down nonzero: decided exactly.
    With ``projector="centering"`` (post-LN) the columns must be nonzero after centring: ``P a_j ≠ 0``,
    i.e. no column of W_down is a constant vector (floats compared exactly).

    Collinearity is equality of primitive integer vectors (rows scaled to integers exactly, divided
    by their gcd, sign fixed): no rounding, no overflow whatever the size of the entries.
    """
    np = _np()
    zero_rows = np.flatnonzero(~(w_up != 0).any(axis=1))
    if len(zero_rows):
        return {"holds": False, "reason": f"row {int(zero_rows[0])} of W_up is zero (exact)", "pair": None}
    zero_cols = np.flatnonzero(~(w_down != 0).any(axis=0))
    if len(zero_cols):
        return {"holds": False, "reason": f"column {int(zero_cols[0])} of W_down is zero (exact)", "pair": None}
    if projector == "centering":
        constant = np.flatnonzero((w_down == w_down[:1, :]).all(axis=0))
        if len(constant):
            return {"holds": False, "reason": f"column {int(constant[0])} of W_down is a constant vector, so "
                    "P·W_down[:,j] = 0 (exact)", "pair": None}
    seen: dict[Any, int] = {}
    for j, key in enumerate(primitive_row_keys(w_up)):
        if key in seen:
            return {"holds": False, "reason": f"rows {seen[key]} and {j} of W_up are collinear (exact: equal primitive "
                    "integer directions)", "pair": [seen[key], j]}
        seen[key] = j
    cols = "columns of W_down nonzero and not constant (P·a_j ≠ 0)" if projector == "centering" else \
        "columns of W_down nonzero"
    return {"holds": True, "reason": f"rows of W_up nonzero and pairwise non-collinear ({len(seen)} distinct primitive "
            f"integer directions, compared exactly), {cols}", "pair": None}


# ---- the decision ---------------------------------------------------------------------------------


def _separating(w_up: Any, w_down: Any, target: Target, fs: FloatSearch, projector: str | None = None,
                t_search: Any = None) -> Certificate | None:
    for mode in ("residual", "box-slack", "box"):
        cert = _separating_attempt(w_up, w_down, target, fs, mode, projector, t_search)
        if cert is not None or fs.factor is None:
            return cert
    return None


def _separating_attempt(w_up: Any, w_down: Any, target: Target, fs: FloatSearch,
                        mode: str, projector: str | None = None, t_search: Any = None) -> Certificate | None:
    np = _np()
    y_float, w_hat = separating_direction(fs, target.dense_float() if t_search is None else t_search, mode)
    if projector == "centering":  # Y = PY: then ⟨Y, W_S⟩ = ⟨Y, P W_S⟩ and the certificate speaks of P W_S
        y_float = y_float - y_float.mean(axis=0, keepdims=True)
    first = _limbs_from_float(y_float)
    del y_float  # d x d float64 (0.15 m² at d = 4096, m = 11008): not needed while the limbs are evaluated
    if first is None:
        return None
    if projector == "centering":
        first = (first[0], _centered_limb(first[1]))
    limbs = [first]
    ev: _Evaluation | None = None
    for rnd in range(REFINE_ROUNDS + 1):
        ev = _evaluate(w_up, w_down, target, limbs, ev)
        if ev.upper_margin > 0 or ev.lower_margin > 0:
            how = {"residual": "float least-squares residual", "box": "float residual plus box directions",
                   "box-slack": "float residual plus box directions with slack"}[mode] + (f", refined {rnd}×" if rnd else "")
            return replace(_separating_certificate(target, limbs, ev, how), projector=projector)
        if rnd == REFINE_ROUNDS or fs.factor is None:
            return None
        with np.errstate(all="ignore"):
            y_hat = np.array([_safe_float(ev.y[j]) for j in fs.active]) / fs.unit_scale
        if not np.isfinite(y_hat).all():
            return None
        fix = correction(fs, y_hat - w_hat)
        if fix is None:
            return None
        if projector == "centering":
            fix = fix - fix.mean(axis=0, keepdims=True)
        extra = _limbs_from_float(fix)
        if extra is None:
            return None
        if projector == "centering":
            extra = (extra[0], _centered_limb(extra[1]))
        limbs.append(extra)
    return None


def _separating_certificate(target: Target, limbs: list[tuple[int, Any]], ev: _Evaluation,
                            how: str) -> Certificate:
    margin = ev.upper_margin if ev.upper_margin > 0 else ev.lower_margin
    norm2 = _norm_squared(limbs)
    distance = _sqrt_down(margin * margin / norm2) if norm2 else 0.0
    side = (f"⟨Y, T⟩ = {_approx(ev.inner)} > Σ_j max(0, a_jᵀYb_j) = {_approx(ev.positive)}" if ev.upper_margin > 0
            else f"⟨Y, T⟩ = {_approx(ev.inner)} < Σ_j min(0, a_jᵀYb_j) = {_approx(ev.negative)}")
    return Certificate("separating", target, (), tuple(limbs), ev.inner, ev.positive,
                       ev.negative, distance, how + "; checked in exact integer arithmetic",
                       f"a separating matrix Y ({how}) has {side}, checked exactly; no 0/1 combination of the "
                       "rank-one terms a_j b_jᵀ can equal T")


def _exact_residual(w_up: Any, w_down: Any, target: Target) -> list[list[Fraction]] | None:
    """The exact least-squares residual ``T − Σ c_j a_j b_jᵀ`` (rational), for small systems."""
    from .search import _backend, _pivot_rows

    d, m = w_down.shape
    a = [[Fraction(float(w_down[i, j])) for i in range(d)] for j in range(m)]
    b = [[Fraction(float(w_up[j, k])) for k in range(d)] for j in range(m)]
    dense = target.rows()
    rhs = [dense[i][k] for i in range(d) for k in range(d)]
    backend = _backend()
    system, t_col, _ = backend.augmented([[a[j][i] * b[j][k] for j in range(m)] for i in range(d) for k in range(d)],
                                         rhs)
    at = backend.transpose(system)
    normal, rank = backend.rref(backend.hstack(at * system, at * t_col))
    rows, pivots = _pivot_rows(backend, normal, rank, m + 1)
    c = [Fraction(0)] * m
    for r, p in zip(rows, pivots, strict=True):
        if p < m:
            c[p] = r[m]
    return [[dense[i][k] - sum((c[j] * a[j][i] * b[j][k] for j in range(m) if c[j]), Fraction(0)) for k in range(d)]
            for i in range(d)]


def _projected_search(w_up: Any, w_down: Any, target: Target, projector: str | None) -> Any:
    """The exact rational search on the (projected) system: ``P W_down`` and ``P T`` for post-LN."""
    import sympy as sp

    from .search import exact_search

    down, t_rows = _sympy_matrix(w_down), sp.Matrix(target.rows())
    if projector == "centering":
        d = target.size
        p = sp.eye(d) - sp.ones(d, d) / d
        down, t_rows = p * down, p * t_rows
    return exact_search(_sympy_matrix(w_up), down, t_rows)


def _exact_fallback(w_up: Any, w_down: Any, target: Target, projector: str | None = None) -> ExactDecision | None:
    d, m = w_down.shape
    if d * d * m > EXACT_FALLBACK_SIZE:
        return None
    if projector is not None:
        result = _projected_search(w_up, w_down, target, projector)
        if result.found:
            if not _index_set_holds(w_up, w_down, target, result.index_set, projector):
                raise CertificateError(f"exact search returned S = {result.index_set}, which does not satisfy the "
                                       "condition")
            return ExactDecision(True, Certificate("index-set", target, result.index_set, method=result.method,
                                                   proof=result.proof, projector=projector), None, "")
        if result.found is False:
            return ExactDecision(False, Certificate("exact-search", target, method=result.method, proof=result.proof,
                                                    distance=_sqrt_down(result.residual_squared),
                                                    projector=projector), None, "")
        return ExactDecision(None, None, None, result.proof)
    residual = _exact_residual(w_up, w_down, target)
    if residual is not None and any(v for row in residual for v in row):
        den = 1
        for row in residual:
            for v in row:
                den = den * v.denominator // math.gcd(den, v.denominator)
        limbs = _limbs_from_ints([[int(v * den) for v in row] for row in residual])
        ev = _evaluate(w_up, w_down, target, limbs)
        if ev.upper_margin > 0:
            return ExactDecision(False, _separating_certificate(target, limbs, ev, "exact rational least-squares "
                                                                "residual"), None, "")
    import sympy as sp

    from .search import exact_search

    result = exact_search(_sympy_matrix(w_up), _sympy_matrix(w_down), sp.Matrix(target.rows()))
    if result.found:
        s = result.index_set
        if not _index_set_holds(w_up, w_down, target, s):
            raise CertificateError(f"exact search returned S = {s}, which does not satisfy the condition")
        return ExactDecision(True, Certificate("index-set", target, s, method=result.method,
                                               proof=result.proof), None, "")
    if result.found is False:
        return ExactDecision(False, Certificate("exact-search", target, method=result.method,
                                                proof=result.proof, distance=_sqrt_down(result.residual_squared)),
                             None, "")
    return ExactDecision(None, None, None, result.proof)


def _sympy_matrix(x: Any) -> Any:
    import sympy as sp

    return sp.Matrix([[sp.Rational(Fraction(float(v)).numerator, Fraction(float(v)).denominator) for v in row]
                      for row in x.tolist()])


def decide_exactly(w_up: Any, w_down: Any, target: Target, projector: str | None = None) -> ExactDecision:
    """Is there ``S`` with ``W_down[:,S] W_up[S,:] = T`` for these (exact, rational) float weights?
    With ``projector="centering"`` (a post-LN layer): ``P W_down[:,S] W_up[S,:] = P T``, ``P = I − 11ᵀ/d``;
    the float search runs on ``P a_j`` and ``P T`` (candidates only), every check on the exact weights."""
    np = _np()
    w_up = np.asarray(w_up, dtype=np.float64)
    w_down = np.asarray(w_down, dtype=np.float64)
    t_float = target.dense_float()
    if projector == "centering":
        t_float = t_float - t_float.mean(axis=0, keepdims=True)

    def search() -> FloatSearch:
        if projector == "centering":
            return float_search(w_up, w_down - w_down.mean(axis=0, keepdims=True), t_float)
        return float_search(w_up, w_down, t_float)

    fs = search()
    t_norm = float(np.linalg.norm(t_float))
    d, m = w_down.shape
    small = d * d * m <= EXACT_FALLBACK_SIZE
    if fs.recheck <= 1e-6 * t_norm or small or (t_norm == 0 and not fs.index_set):
        if _index_set_holds(w_up, w_down, target, fs.index_set, projector):
            claim = "P W_down[:,S] W_up[S,:] = P T" if projector else "W_down[:,S] W_up[S,:] = T"
            return ExactDecision(True, Certificate("index-set", target, fs.index_set,
                                                   method=fs.method + "; checked in exact integer arithmetic",
                                                   proof=f"S = {{{', '.join(map(str, fs.index_set))}}} (|S| = "
                                                   f"{len(fs.index_set)}) satisfies {claim} exactly",
                                                   projector=projector), fs, "")
    # The first attempt (Y the float residual, no refinement) needs no m x m factor: it is dropped while
    # that certificate is evaluated exactly (the peak of a big layer: 1 m² less), and made again, the
    # same bits (one BLAS thread, same inputs), only if the attempt fails and a refinement needs it.
    refinable = fs.factor is not None
    fs = replace(fs, factor=None)
    cert = _separating_attempt(w_up, w_down, target, fs, "residual", projector, t_float)
    if cert is None and refinable:
        fs = search()
        cert = _separating(w_up, w_down, target, fs, projector, t_float)
    if cert is not None:
        return ExactDecision(False, cert, fs, "")
    fallback = _exact_fallback(w_up, w_down, target, projector)
    if fallback is not None:
        return ExactDecision(fallback.found, fallback.certificate, fs, fallback.reason)
    return ExactDecision(None, None, fs, "the float candidates gave no exactly checked certificate (no index set "
                         "satisfied the condition exactly and no separating matrix was found), and the system is too "
                         f"large for the exact rational search (d²·m = {d * d * m} > {EXACT_FALLBACK_SIZE})")


# ---- checking a certificate (used by `symabsorb verify` and after every decision) ---------------------


def check_certificate(cert: Certificate, w_up: Any, w_down: Any) -> str:
    """Re-check ``cert`` against the weights from scratch; returns what was checked, raises CertificateError."""
    np = _np()
    w_up = np.asarray(w_up, dtype=np.float64)
    w_down = np.asarray(w_down, dtype=np.float64)
    target = cert.target
    d, m = w_down.shape
    if target.size != d or w_up.shape != (m, d) or any(not (0 <= i < d and 0 <= k < d) for i, k, _ in target.entries):
        raise CertificateError(f"shapes do not match: W_up {w_up.shape}, W_down {w_down.shape}, T {target.size} x "
                               f"{target.size}")
    if cert.kind == "index-set":
        if any(not 0 <= j < m for j in cert.index_set):
            raise CertificateError("index set out of range")
        if cert.projector not in (None, "centering"):
            raise CertificateError(f"unknown projector `{str(cert.projector)[:40]}`")
        if not _index_set_holds(w_up, w_down, target, tuple(cert.index_set), cert.projector):
            raise CertificateError("W_down[:,S] W_up[S,:] ≠ T for the certificate's S" if cert.projector is None
                                   else "P W_down[:,S] W_up[S,:] ≠ P T for the certificate's S")
        claim = "P W_down[:,S] W_up[S,:] = P T (P = I − 11ᵀ/d)" if cert.projector else "W_down[:,S] W_up[S,:] = T"
        out = f"{claim} holds exactly for S of size {len(cert.index_set)}"
    elif cert.kind == "separating":
        for _, limb in cert.y_limbs:
            if limb.shape != (d, d):
                raise CertificateError("Y has the wrong shape")
            if cert.projector == "centering" and any(int(v) for v in limb.sum(axis=0)):
                raise CertificateError("a post-LN separating matrix must have zero column sums (Y = PY), and a limb "
                                       "of this one does not")
        if cert.projector not in (None, "centering"):
            raise CertificateError(f"unknown projector `{str(cert.projector)[:40]}`")
        ev = _evaluate(w_up, w_down, target, list(cert.y_limbs))
        if not (ev.upper_margin > 0 or ev.lower_margin > 0):
            raise CertificateError(f"⟨Y,T⟩ = {_approx(ev.inner)} lies in [{_approx(ev.negative)}, "
                                   f"{_approx(ev.positive)}]: Y separates nothing")
        for name, got, claimed in (("⟨Y,T⟩", ev.inner, cert.inner), ("Σ max(0, y_j)", ev.positive, cert.positive_sum),
                                   ("Σ min(0, y_j)", ev.negative, cert.negative_sum)):
            if claimed is not None and got != claimed:
                raise CertificateError(f"{name} recomputed as {got}, the certificate says {claimed}")
        norm2 = _norm_squared(list(cert.y_limbs))
        margin = ev.upper_margin if ev.upper_margin > 0 else ev.lower_margin
        if norm2 and Fraction(cert.distance) ** 2 * norm2 > margin * margin:
            raise CertificateError(f"the claimed distance {cert.distance} exceeds margin/‖Y‖_F")
        out = (f"⟨Y,T⟩ = {_approx(ev.inner)} outside [Σ min(0,y_j), Σ max(0,y_j)] = [{_approx(ev.negative)}, "
               f"{_approx(ev.positive)}] (exact); distance ≥ {floor_text(cert.distance)} confirmed")
    elif cert.kind == "nondegenerate":
        if cert.nondegenerate is None or not cert.nondegenerate.get("holds"):
            raise CertificateError("a nondegeneracy certificate must record that nondegeneracy holds")
        out = "the verdict rests on nondegeneracy alone"
    elif cert.kind == "exact-search":
        if d * d * m > EXACT_FALLBACK_SIZE:
            raise CertificateError("exact-search certificates are only accepted for small systems")
        result = _projected_search(w_up, w_down, target, cert.projector)
        if result.found is not False:
            raise CertificateError("the exact search, run again, does not prove that no index set exists")
        out = "exact rational search re-run: " + result.proof
    else:
        raise CertificateError(f"unknown certificate kind `{cert.kind}`")
    if cert.nondegenerate is not None:
        again = exact_nondegeneracy(w_up, w_down, cert.projector)
        if again["holds"] != cert.nondegenerate.get("holds"):
            raise CertificateError(f"nondegeneracy recomputed as {again['holds']}: {again['reason']}")
        out += "; nondegeneracy " + ("holds" if again["holds"] else "fails") + " (exact)"
    return out


# ---- JSON ---------------------------------------------------------------------------------------------


#: zlib level of a limb. The certificate is re-checked, never trusted, so its encoding only has to be
#: compact and fast: level 1 is ~8x faster than level 9 on Y's limbs (whose low bits are noise) and as
#: small; any level decompresses the same way, so reports written with level 9 still verify.
ZLIB_LEVEL = 1


def _pack(limb: Any) -> dict[str, Any]:
    np = _np()
    arr = np.ascontiguousarray(limb, dtype="<i4")
    return {"shape": list(arr.shape), "dtype": "int32-le", "encoding": "zlib+base64",
            "data": base64.b64encode(zlib.compress(arr.tobytes(), ZLIB_LEVEL)).decode("ascii")}


def _unpack(obj: dict[str, Any]) -> Any:
    np = _np()
    shape = tuple(int(x) for x in obj["shape"])
    if obj.get("dtype") != "int32-le" or obj.get("encoding") != "zlib+base64" or len(shape) != 2:
        raise CertificateError("unsupported limb encoding")
    n = shape[0] * shape[1]
    if not 0 < n <= MAX_LIMB_ENTRIES or min(shape) <= 0:
        raise CertificateError(f"limb shape {shape} out of range (at most {MAX_LIMB_ENTRIES} entries)")
    raw = zlib.decompressobj().decompress(base64.b64decode(obj["data"], validate=True), 4 * n + 1)
    if len(raw) != 4 * n:
        raise CertificateError("limb data has the wrong length")
    return np.frombuffer(raw, dtype="<i4").astype(np.int64).reshape(shape)


def certificate_to_dict(cert: Certificate) -> dict[str, Any]:
    d = cert.target.size
    entries = [[i, k, _frac_str(v)] for i, k, v in cert.target.entries]
    out: dict[str, Any] = {
        "kind": cert.kind,
        "claim": {"index-set": "W_down[:,S] W_up[S,:] = T",
                  "nondegenerate": "rows of W_up nonzero and pairwise non-collinear, columns of W_down nonzero",
                  "theorem-D": "Theorem D (any weights, MATH §15): the verdict is that of its exact search on the "
                               "weights' rational values (verify runs it again)"}.get(
                      cert.kind, "no S ⊆ {0..m-1} has W_down[:,S] W_up[S,:] = T"),
        "target": {"rows": d, "cols": d, "nonzero": entries},
        "index_set": list(cert.index_set),
        "Y": None if not cert.y_limbs else {"sum_of": [{"exp": e, **_pack(limb)} for e, limb in cert.y_limbs],
                                            "meaning": "Y = Σ 2^exp · limb (limbs are integer matrices)"},
        "inner": _frac_str(cert.inner),
        "positive_sum": _frac_str(cert.positive_sum),
        "negative_sum": _frac_str(cert.negative_sum),
        "distance_lower_bound": cert.distance,
        "method": cert.method,
        "proof": cert.proof,
        "nondegenerate": cert.nondegenerate,
        "weights": cert.weights,
    }
    if cert.projector is not None:  # a post-LN layer (Lemma PN): the claim is about P·W_S, P = I − 11ᵀ/d
        out["projector"] = cert.projector
        out["claim"] = {"index-set": "P W_down[:,S] W_up[S,:] = P T"}.get(
            cert.kind, out["claim"].replace("W_down[:,S] W_up[S,:] = T", "P W_down[:,S] W_up[S,:] = P T"))
    return out


def _frac(text: Any) -> Fraction:
    if not isinstance(text, str | int) or (isinstance(text, str) and len(text) > 10_000):
        raise CertificateError(f"not a rational: {str(text)[:40]!r}")
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError) as err:
        raise CertificateError(f"not a rational: {str(text)[:40]!r}") from err


def certificate_from_dict(data: dict[str, Any]) -> Certificate:
    try:
        t = data["target"]
        d = int(t["rows"])
        if not 0 <= d <= 100_000 or int(t["cols"]) != d:
            raise CertificateError("bad target shape")
        cells = {}
        for i, k, v in t["nonzero"]:
            if not (0 <= int(i) < d and 0 <= int(k) < d):
                raise CertificateError("target entry out of range")
            q = _frac(v)
            if q:
                cells[(int(i), int(k))] = q
        target = Target(d, tuple((i, k, v) for (i, k), v in sorted(cells.items())))
        parts = (data["Y"] or {}).get("sum_of", [])
        if len(parts) > 64:
            raise CertificateError("too many limbs in Y")
        limbs = tuple((int(x["exp"]), _unpack(x)) for x in parts)
        if any(limb.shape != (d, d) for _, limb in limbs):
            raise CertificateError("Y and T have different shapes")
        if any(abs(e) > 1_000_000 for e, _ in limbs):
            raise CertificateError("exponent of a limb of Y out of range")
        opt = {name: (_frac(data[name]) if data.get(name) is not None else None)
               for name in ("inner", "positive_sum", "negative_sum")}
        return Certificate(str(data["kind"]), target, tuple(int(j) for j in data["index_set"]),
                           limbs, opt["inner"], opt["positive_sum"], opt["negative_sum"],
                           float(data.get("distance_lower_bound") or 0.0), str(data.get("method", "")),
                           str(data.get("proof", "")), dict(data.get("weights") or {}), data.get("nondegenerate"),
                           _projector(data.get("projector")))
    except (KeyError, TypeError, ValueError, IndexError, zlib.error) as err:
        raise CertificateError(f"malformed certificate: {type(err).__name__}: {err}") from err


def _projector(value: Any) -> str | None:
    if value is None or value == "centering":
        return value
    raise CertificateError(f"unknown projector {str(value)[:40]!r}")


#: Digests already computed in this process, by (device, inode, size, mtime, ctime) of the opened file.
_DIGESTS: dict[tuple[int, int, int, int, int], str] = {}


def file_digest(path: str) -> str:
    """SHA-256 of a weights file (regular files only, same size cap as the readers).

    A file whose device, inode, size, mtime and ctime are unchanged is hashed once per process (six
    layers of one 90 MB model file: one pass, not six). Only files last changed more than two seconds
    before are remembered ("racy git"): file times are coarse, and a write in the same tick could
    otherwise keep them; any later write or ``utime`` moves the ctime to a new, current value."""
    import os
    import time
    from pathlib import Path

    from ..paths import open_regular
    from .io import MAX_FILE_BYTES

    with open_regular(Path(path), None, "weights file", max_bytes=MAX_FILE_BYTES) as (fh, _size):
        st = os.fstat(fh.fileno())
        key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if key in _DIGESTS:
            return _DIGESTS[key]
        h = hashlib.sha256()
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    digest = h.hexdigest()
    if max(st.st_mtime_ns, st.st_ctime_ns) < time.time_ns() - 2_000_000_000:
        _DIGESTS[key] = digest
    return digest
