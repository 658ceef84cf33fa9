"""Exact arithmetic on float weights: every float is a dyadic rational, and we compute with it as one.

A float array ``X`` (float16, bfloat16, float32 or float64: each converts to float64 exactly) is an
integer array times a power of two. :func:`dyadic` writes it as ``X = 2^exp · Σ_p 2^(bits·p) X_p``
with *limbs* ``X_p``: int64 arrays with ``|X_p| < 2^bits`` (each limb carries the sign of its entry).

Products of limbs are computed with float64 BLAS, which is exact here: every input, every product and
every partial sum is an integer of magnitude below ``2^50`` (the sizes are chosen so: ``n · 2^(a+b) ≤
2^50`` for an inner dimension ``n`` and limbs of ``a`` and ``b`` bits), and an IEEE-754 operation whose
exact result is representable returns it, whatever the order of summation or the use of FMA. Row-wise
dot products are done in int64 with ``n · 2^(a+b) ≤ 2^62``. The limb results are then combined in
Python integers. So every function here returns the exact value; nothing is rounded.

The certificate evaluation :func:`bilinear_diagonal` puts each unit on its own grid instead of one
exponent for a whole block of units: a float32 column spans ~36 bits below its largest entry (two
limbs), a block of 256 columns ~45 (three), and the few entries further down are an exact remainder.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

__all__ = [
    "Dyadic",
    "bilinear_diagonal",
    "dyadic",
    "exact_product",
    "frac_matrix",
    "integer_only",
    "integer_rows",
    "primitive_row_keys",
]

#: Exactness bound for float64 BLAS on integer data (2^53 minus a safety factor of 8).
FLOAT_EXACT_BITS = 50
#: Exactness bound for int64 sums of products.
INT_EXACT_BITS = 62


_INTEGER_ONLY: ContextVar[bool] = ContextVar("symabsorb_integer_only", default=False)


def _np() -> Any:
    import numpy

    return numpy


@contextlib.contextmanager
def integer_only() -> Iterator[None]:
    """Within the block, limb products use int64 matrix products (numpy's own loops, no floating point,
    no BLAS) instead of float64 BLAS: about 10x slower, and independent of the BLAS library
    (``symabsorb verify`` uses it, so a report is re-checked by different arithmetic than made it)."""
    token = _INTEGER_ONLY.set(True)
    try:
        yield
    finally:
        _INTEGER_ONLY.reset(token)


def _limb_product(a: Any, b: Any) -> Any:
    """``a @ b`` for int64 limb arrays whose exact result and partial sums are below 2^50 in magnitude:
    float64 BLAS (exact then, see the module docstring) or, under :func:`integer_only`, int64."""
    np = _np()
    if _INTEGER_ONLY.get():
        return np.asarray(a, dtype=np.int64) @ np.asarray(b, dtype=np.int64)
    return (np.asarray(a, dtype=np.float64) @ np.asarray(b, dtype=np.float64)).astype(np.int64)


@dataclass(frozen=True)
class Dyadic:
    """``value = 2^exp · Σ_p 2^(bits·p) · limbs[p]`` exactly; each limb is int64 with ``|limb| < 2^bits``."""

    exp: int
    bits: int
    limbs: tuple[Any, ...]

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.limbs[0].shape)

    def integers(self) -> Any:
        """The integer array ``Σ_p 2^(bits·p) limbs[p]`` as Python ints (numpy object array)."""
        np = _np()
        acc = np.zeros(self.shape, dtype=object)
        for p, limb in enumerate(self.limbs):
            acc = acc + limb.astype(object) * (1 << (self.bits * p))
        return acc


def _odd_parts(x: Any) -> tuple[Any, Any, Any]:
    """``x = sign · odd · 2^f`` elementwise (odd = 0 where x = 0): int64 sign, odd, f."""
    np = _np()
    x = np.asarray(x, dtype=np.float64)
    mant, ex = np.frexp(x)
    m = (mant * 9007199254740992.0).astype(np.int64)  # mant * 2^53: an exact integer, |m| < 2^53
    e = ex.astype(np.int64) - 53
    am = np.abs(m)
    low = am & (-am)  # lowest set bit (0 for 0)
    tz = np.where(am > 0, np.frexp(low.astype(np.float64))[1].astype(np.int64) - 1, 0)
    odd = am >> tz
    return np.sign(m).astype(np.int64), odd, e + tz


def dyadic(x: Any, bits: int) -> Dyadic:
    """The exact limb form of a float array (every entry finite)."""
    np = _np()
    if not 1 <= bits <= 62:
        raise ValueError("limb size must be 1..62 bits")
    sign, odd, f = _odd_parts(x)
    nz = odd > 0
    if not nz.any():
        return Dyadic(0, bits, (np.zeros(odd.shape, dtype=np.int64),))
    low = int(f[nz].min())
    top = int((np.frexp(odd[nz].astype(np.float64))[1].astype(np.int64) + f[nz] - low).max())  # bit length
    count = max(1, -(-top // bits))
    shift0 = np.where(nz, f - low, 0)
    uodd = odd.astype(np.uint64)
    mask = np.uint64((1 << bits) - 1)
    limbs = []
    for p in range(count):
        sh = shift0 - bits * p
        left = np.clip(sh, 0, bits).astype(np.uint64)
        right = np.clip(-sh, 0, 63).astype(np.uint64)
        limb = (((uodd << left) >> right) & mask).astype(np.int64) * sign
        limbs.append(limb)
    return Dyadic(low, bits, tuple(limbs))


def _limb_bits(inner: int, other_bits: int, budget: int) -> int:
    """Largest limb size ``a`` with ``inner · 2^(a + other_bits) ≤ 2^budget``."""
    a = budget - other_bits - max(1, math.ceil(math.log2(max(inner, 2))))
    if a < 1:
        raise ValueError(f"inner dimension {inner} too large for exact limb arithmetic")
    return a


def _split_int64(x: Any, bits: int) -> list[Any]:
    """Signed limbs of an int64 array: ``x = Σ_p 2^(bits·p) limb_p``, ``|limb_p| < 2^bits``."""
    np = _np()
    sign = np.sign(x)
    ax = np.abs(x)
    mask = (1 << bits) - 1
    out = []
    top = int(ax.max()).bit_length() if ax.size else 0
    for p in range(max(1, -(-top // bits))):
        out.append(((ax >> (bits * p)) & mask) * sign)
    return out


def bilinear_diagonal(w_down: Any, w_up: Any, y_limbs: list[tuple[int, Any]], chunk: int = 256) -> list[Fraction]:
    """``y_j = a_jᵀ Y b_j`` exactly for every unit ``j`` (``a_j = W_down[:,j]``, ``b_j = W_up[j,:]``).

    ``Y = Σ_l 2^(e_l) Y_l`` with integer arrays ``Y_l`` (``|Y_l| < 2^31``) given as ``(e_l, Y_l)``.
    Units are processed ``chunk`` at a time to bound memory, each unit on its own power-of-two grid
    (:func:`_grid`): ``a_j = 2^(g_j) M_j + R_j`` with ``M_j`` integer limbs for the BLAS products and a
    remainder ``R_j`` that is nonzero only on the few entries far below the column's largest (checked
    one by one, exactly); ``b_j = 2^(h_j) U_j`` with ``U_j`` an integer row. A chunk whose rows of
    ``W_up`` span too many bits for that falls back to one common exponent (:func:`_bilinear_chunk`).
    BLAS runs with the float path's thread limit (two threads on a busy 2-core machine cost 4x the CPU).
    """
    from .floatsearch import limited_threads, stage_progress

    np = _np()
    m = w_down.shape[1]
    progress = stage_progress(m, new_layer=False)
    ys: list[_YLimb] = []
    for e_l, y_l in y_limbs:
        y_l = np.asarray(y_l, dtype=np.int64)
        if y_l.size == 0 or not y_l.any():
            continue
        # converted for BLAS once per call (not once per chunk and limb of W_down)
        ys.append(_YLimb(e_l, y_l, None if _INTEGER_ONLY.get() else y_l.astype(np.float64),
                         max(1, int(np.abs(y_l).max()).bit_length())))
    out: list[Fraction] = []
    with limited_threads():
        for start in range(0, m, chunk):
            down, up = w_down[:, start:start + chunk], w_up[start:start + chunk]
            part = _bilinear_grid_chunk(down, up, ys) if ys else [Fraction(0)] * down.shape[1]
            out.extend(part if part is not None else _bilinear_chunk(down, up, y_limbs))
            if progress is not None:
                progress("exact certificate", min(m, start + chunk), m)
    return out


@dataclass(frozen=True)
class _YLimb:
    exp: int
    ints: Any  # int64 d x d, |entries| < 2^bits
    floats: Any | None  # the same as float64 (for BLAS), None under integer_only
    bits: int


#: Rows of W_up are integer rows in limbs of this many bits (products with 25-bit pieces stay in int64).
U_BITS = 26
#: Widest grid (bits below a unit's largest entry) tried before falling back: float64 exponents stay finite.
MAX_GRID_BITS = 960


def _grid(x: Any, axis: int, total_bits: int) -> tuple[Any, Any, Any]:
    """``x = 2^g · M + R`` exactly, with one exponent ``g`` per unit (per column for ``axis=0``, per row
    for ``axis=1``) such that ``|M| < 2^total_bits``: (g as int64, M integer-valued float64, R float64).

    With ``|x| < 2^top`` on the unit, ``g = top − total_bits``. Every step is an exact IEEE operation:
    scaling by a power of two is exact unless the result is subnormal, and then it is below 1 in
    magnitude and truncates to 0, as the exact value does; ``2^g · M`` is ``x`` truncated to the grid
    ``2^g``, at most as many significant bits as ``x``; and ``R = x − 2^g M`` is exact (Sterbenz's lemma
    when ``M ≠ 0``, since ``2^g|M| ≤ |x| < 2^(g+1)|M|``; ``R = x`` otherwise)."""
    np = _np()
    big = np.abs(x).max(axis=axis)
    top = np.frexp(big)[1].astype(np.int64)  # |x| < 2^top on every unit (0 for a zero unit)
    g = top - total_bits
    gg = (g[None, :] if axis == 0 else g[:, None]).astype(np.int32)
    if g.size and -1000 <= int(g.min()) and int(g.max()) <= 1000:  # the powers of two are normal floats
        main = np.trunc(x * np.ldexp(1.0, -gg))  # a product with a power of two: the same exact value, faster
        return g, main, x - main * np.ldexp(1.0, gg)
    main = np.trunc(np.ldexp(x, -gg))
    return g, main, x - np.ldexp(main, gg)


def _split_float(main: Any, bits: int, count: int) -> list[Any]:
    """Integer-valued float64 ``|main| < 2^(bits·count)`` as ``Σ_p 2^(bits·p) limb_p`` with ``|limb_p| < 2^bits``
    (each limb carries the sign of its entry); every operation is exact, as in :func:`_grid`."""
    np = _np()
    limbs: list[Any] = [None] * count
    rest = main
    for p in range(count - 1, 0, -1):
        hi = np.trunc(np.ldexp(rest, -bits * p))
        limbs[p] = hi
        rest = rest - np.ldexp(hi, bits * p)
    limbs[0] = rest
    return limbs


def _gemm(a: Any, y: _YLimb) -> Any:
    """``aᵀ Y`` for an integer-valued float64 limb ``a`` (d x c) whose exact products and partial sums are
    below 2^50: float64 BLAS (exact then, see the module docstring) or, under :func:`integer_only`, int64."""
    np = _np()
    if y.floats is None:
        return a.T.astype(np.int64) @ y.ints
    return (a.T @ y.floats).astype(np.int64)


def _rowdots(x: Any, u_limbs: list[Any], u_bits: int) -> list[Any]:
    """``Σ_r 2^(u_bits·r) Σ_k x[n,k] u_r[n,k]`` for every row ``n``, exactly (Python ints): int64 ``x`` split
    into pieces small enough that no int64 sum can overflow."""
    np = _np()
    d = x.shape[1]
    piece = _limb_bits(d, u_bits, INT_EXACT_BITS)
    total = np.zeros(x.shape[0], dtype=object)
    for q, xq in enumerate(_split_int64(x, piece)):
        for r, ur in enumerate(u_limbs):
            total = total + np.einsum("nk,nk->n", xq, ur).astype(object) * (1 << (piece * q + u_bits * r))
    return list(total)


def _bilinear_grid_chunk(w_down: Any, w_up: Any, ys: list[_YLimb]) -> list[Fraction] | None:
    """:func:`bilinear_diagonal` on a chunk of units, each on its own grid; None when a row of ``W_up``
    spans more than :data:`MAX_GRID_BITS` bits (the caller then uses one common exponent)."""
    np = _np()
    d, c = w_down.shape
    for ku in range(2, MAX_GRID_BITS // U_BITS + 1):  # two limbs hold any float32 row of up to 52 bits' span
        h, u_main, u_rest = _grid(w_up, 1, U_BITS * ku)
        if not u_rest.any():
            break
    else:
        return None
    u_limbs = [limb.astype(np.int64) for limb in _split_float(u_main, U_BITS, ku)]
    del u_main, u_rest
    piece = _limb_bits(d, U_BITS, INT_EXACT_BITS)
    grids: dict[int, tuple[Any, list[Any], Any]] = {}
    totals = [Fraction(0)] * c
    for y in ys:
        bits = _limb_bits(d, y.bits, FLOAT_EXACT_BITS)
        if bits not in grids:
            grids[bits] = _down_grid(w_down, bits)
        g, limbs, rest = grids[bits]
        acc = np.zeros(c, dtype=object)
        for p, limb in enumerate(limbs):
            pint = _gemm(limb, y)  # c x d, exact (integers below 2^50)
            for q, pq in enumerate(_split_int64(pint, piece)):
                for r, ur in enumerate(u_limbs):
                    dots = np.einsum("jk,jk->j", pq, ur)  # int64, exact (below 2^62)
                    acc = acc + dots.astype(object) * (1 << (bits * p + piece * q + U_BITS * r))
        for j in range(c):
            if acc[j]:
                scale = int(g[j]) + int(h[j]) + y.exp
                totals[j] += Fraction(int(acc[j]) << scale) if scale >= 0 else Fraction(int(acc[j]), 1 << -scale)
        # the remainder: a few entries R_ij, each times (Y b_j)_i = 2^(h_j) Y[i,:]·U_j, exactly
        rows, cols = np.nonzero(rest)
        if len(rows):
            dots = _rowdots(y.ints[rows], [ur[cols] for ur in u_limbs], U_BITS)
            for i, j, v in zip(rows.tolist(), cols.tolist(), dots, strict=True):
                if v:
                    totals[j] += Fraction(float(rest[i, j])) * Fraction(2) ** (int(h[j]) + y.exp) * int(v)
    return totals


#: A remainder is accepted when it has at most this fraction of the entries (each costs a d-term exact
#: dot product; one more limb costs a d x d x chunk BLAS product).
REMAINDER_SHARE = 1 / 64


def _down_grid(w_down: Any, bits: int) -> tuple[Any, list[Any], Any]:
    """Columns of ``W_down`` on their own grids with the fewest limbs of ``bits`` bits whose remainder is
    sparse (at most :data:`REMAINDER_SHARE` of the entries; the widest grid otherwise)."""
    np = _np()
    budget = max(1, int(w_down.size * REMAINDER_SHARE))
    top = max(1, MAX_GRID_BITS // bits)
    for count in range(1, top + 1):
        g, main, rest = _grid(w_down, 0, bits * count)
        if count == top or np.count_nonzero(rest) <= budget:
            return g, _split_float(main, bits, count), rest
    raise AssertionError("unreachable")


def _bilinear_chunk(w_down: Any, w_up: Any, y_limbs: list[tuple[int, Any]]) -> list[Fraction]:
    np = _np()
    d, m = w_down.shape
    acc = np.zeros(m, dtype=object)
    u_bits = 26
    u = dyadic(w_up, u_bits)
    p_bits = _limb_bits(d, u_bits, INT_EXACT_BITS)
    for e_l, y_l in y_limbs:
        y_l = np.asarray(y_l, dtype=np.int64)
        if y_l.size == 0 or not y_l.any():
            continue
        yb = max(1, int(np.abs(y_l).max()).bit_length())
        down = dyadic(w_down, _limb_bits(d, yb, FLOAT_EXACT_BITS))
        part = np.zeros(m, dtype=object)
        for p, dl in enumerate(down.limbs):
            pint = _limb_product(dl.T, y_l)  # m x d, exact (integers below 2^50)
            for q, pl in enumerate(_split_int64(pint, p_bits)):
                for r, ul in enumerate(u.limbs):
                    dots = np.einsum("jk,jk->j", pl, ul)  # int64, exact (below 2^62)
                    part = part + dots.astype(object) * (1 << (down.bits * p + p_bits * q + u.bits * r))
        scale = e_l + down.exp + u.exp
        acc = acc + (part * (1 << scale) if scale >= 0 else np.array([Fraction(int(v), 1 << -scale) for v in part],
                                                                      dtype=object))
    return [Fraction(v) for v in acc]


def exact_product(w_down: Any, w_up: Any, index_set: tuple[int, ...]) -> tuple[Any, int]:
    """``W_down[:,S] W_up[S,:] = 2^exp · X`` exactly: returns (X as a Python-int object array, exp)."""
    np = _np()
    d = w_down.shape[0]
    s = list(index_set)
    if not s:
        return np.zeros((d, w_up.shape[1]), dtype=object), 0
    half = (FLOAT_EXACT_BITS - max(1, math.ceil(math.log2(max(len(s), 2))))) // 2
    if half < 1:
        raise ValueError("index set too large for exact limb arithmetic")
    from .floatsearch import limited_threads

    a = dyadic(w_down[:, s], half)
    b = dyadic(w_up[s, :], half)
    acc = np.zeros((d, w_up.shape[1]), dtype=object)
    with limited_threads():
        for p, al in enumerate(a.limbs):
            for q, bl in enumerate(b.limbs):
                prod = _limb_product(al, bl)
                acc = acc + prod.astype(object) * (1 << (half * (p + q)))
    return acc, a.exp + b.exp


def frac_matrix(x: Any) -> list[list[Fraction]]:
    """A float matrix as exact Fractions (slow; for small matrices and tests)."""
    return [[Fraction(float(v)) for v in row] for row in x.tolist()]


def integer_rows(x: Any) -> tuple[list[list[int]] | Any, bool]:
    """Each row of a float matrix scaled by its own power of two to integers (exact).

    Returns (rows, as_int64): an int64 array when every row fits in 62 bits, else lists of Python ints.
    """
    np = _np()
    sign, odd, f = _odd_parts(x)
    nz = odd > 0
    big = np.iinfo(np.int64).max
    low = np.where(nz, f, big).min(axis=1, keepdims=True)
    low = np.where(low == big, 0, low)
    shift = np.where(nz, f - low, 0)
    bitlen = np.where(nz, np.frexp(odd.astype(np.float64))[1].astype(np.int64), 0)
    if int((bitlen + shift).max(initial=0)) <= INT_EXACT_BITS:
        return (odd << shift) * sign, True
    rows = [[int(s) * (int(o) << int(t)) for s, o, t in zip(sr, orow, trow, strict=True)]
            for sr, orow, trow in zip(sign.tolist(), odd.tolist(), shift.tolist(), strict=True)]
    return rows, False


def primitive_row_keys(x: Any, chunk: int = 256) -> list[bytes | tuple[int, ...]]:
    """For each row, a key equal for two nonzero rows exactly when they are collinear.

    The key is the primitive integer vector on the row's line whose first nonzero entry is positive
    (rows scaled to integers exactly, divided by the gcd of their entries): two nonzero vectors are
    collinear iff these vectors are equal. A zero row gets the all-zero key.
    """
    keys: list[bytes | tuple[int, ...]] = []
    for start in range(0, x.shape[0], chunk):
        keys.extend(_row_keys(x[start:start + chunk]))
    return keys


def _row_keys(x: Any) -> list[bytes | tuple[int, ...]]:
    np = _np()
    rows, fits = integer_rows(x)
    if fits:
        g = np.gcd.reduce(np.abs(rows), axis=1)
        g = np.where(g == 0, 1, g)
        prim = rows // g[:, None]
        first = np.argmax(prim != 0, axis=1)
        lead = np.sign(prim[np.arange(prim.shape[0]), first])
        lead = np.where(lead == 0, 1, lead)
        prim = prim * lead[:, None]
        return [b"i" + r.astype("<i8").tobytes() for r in prim]
    keys: list[bytes | tuple[int, ...]] = []
    for row in rows:
        g = 0
        for v in row:
            g = math.gcd(g, v)
        g = g or 1
        prim = [v // g for v in row]
        lead = next((v for v in prim if v), 1)
        keys.append(b"i" + b"".join(int(v if lead > 0 else -v).to_bytes(8, "little", signed=True) for v in prim)
                    if all(abs(v) < 2**62 for v in prim) else tuple(v if lead > 0 else -v for v in prim))
    return keys
