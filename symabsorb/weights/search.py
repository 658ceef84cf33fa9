"""The index-set search: is there ``S`` with ``W_down[:,S] W_up[S,:] = T``?

With ``a_j = W_down[:,j]`` and ``b_j = W_up[j,:]`` the question is whether the linear system
``Σ_j c_j vec(a_j b_jᵀ) = vec(T)`` has a 0/1 solution ``c``. Exact weights are solved over the
rationals (python-flint when installed, else SymPy's ``DomainMatrix``; never ``Matrix.rank``).
The real least-squares residual is a certified lower bound on ``min_S ‖W_down[:,S]W_up[S,:] − T‖_F``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy as sp
from sympy.polys.domains import QQ
from sympy.polys.matrices import DomainMatrix

__all__ = ["MAX_ENUMERATION", "SearchResult", "exact_search"]

#: Free variables enumerated exhaustively when the solution space is not a single point.
MAX_ENUMERATION = 22


@dataclass(frozen=True)
class SearchResult:
    """``index_set`` when found; otherwise ``proof`` says why none exists (or why undecided)."""

    found: bool | None  # True: S found; False: proved none; None: undecided
    index_set: tuple[int, ...]
    proof: str
    residual_squared: Fraction  # least-squares residual², exact
    target_norm_squared: Fraction
    method: str

    @property
    def distance(self) -> float:
        """The certified lower bound on ``min_S ‖W_down[:,S]W_up[S,:] − T‖_F`` (rounded down)."""
        return sqrt_lower(self.residual_squared)

    @property
    def relative_distance(self) -> float:
        norm = float(self.target_norm_squared) ** 0.5
        return self.distance / norm if norm else float("inf") if self.distance else 0.0


def sqrt_lower(x: Fraction) -> float:
    """A float that is at most ``sqrt(x)`` (exact integer square root, then rounded down)."""
    import math

    if x <= 0:
        return 0.0
    scale = 1 << 128
    root = Fraction(math.isqrt(int(x * scale * scale)), scale)  # <= sqrt(x)
    value = float(root)
    return math.nextafter(value, 0.0) if Fraction(value) > root else value


def floor_text(x: float, digits: int = 6) -> str:
    """``x`` with ``digits`` significant digits, rounded toward zero (a printed lower bound stays one)."""
    import decimal

    if x == 0 or x != x or x in (float("inf"), float("-inf")):
        return f"{x:g}"
    with decimal.localcontext() as ctx:
        ctx.prec = digits
        ctx.rounding = decimal.ROUND_DOWN
        return format(+decimal.Decimal(x), "g")


def _q(x: sp.Expr) -> Fraction:
    r = sp.Rational(x)
    return Fraction(int(r.p), int(r.q))


def _fraction_rows(mat: sp.MatrixBase) -> list[list[Fraction]]:
    """The entries as Fractions, row by row: one ``tolist`` instead of a SymPy ``m[i, j]`` per entry
    (0.02 ms each: 1.4 s for the 32,768 weights of a d = 64, m = 256 block)."""
    return [[Fraction(int(x.p), int(x.q)) if isinstance(x, sp.Rational) else _q(x) for x in row]
            for row in mat.tolist()]


class _Flint:
    """Exact rational matrices with python-flint (fmpq_mat)."""

    name = "python-flint fmpq_mat"

    def __init__(self) -> None:
        import flint

        self.flint = flint

    def matrix(self, rows: list[list[Fraction]]) -> Any:
        f = self.flint
        return f.fmpq_mat([[f.fmpq(x.numerator, x.denominator) for x in r] for r in rows])

    def augmented(self, rows: list[list[Fraction]], rhs: list[Fraction]) -> tuple[Any, Any, Any]:
        f = self.flint
        conv = [[f.fmpq(x.numerator, x.denominator) for x in r] for r in rows]
        return self._augmented(conv, rhs)

    def _augmented(self, conv: list[list[Any]], rhs: list[Fraction]) -> tuple[Any, Any, Any]:
        f = self.flint
        t = [f.fmpq(x.numerator, x.denominator) for x in rhs]
        return f.fmpq_mat(conv), f.fmpq_mat([[x] for x in t]), f.fmpq_mat([[*r, x] for r, x in zip(conv, t, strict=True)])

    def outer_system(self, a: list[list[Fraction]], b: list[list[Fraction]], rhs: list[Fraction], d: int,
                     m: int) -> tuple[Any, Any, Any]:
        """The system Σ_j c_j vec(a_j b_jᵀ) = rhs, its products taken in fmpq (the same exact values as
        :meth:`augmented` of the Fraction products, without a Python gcd per product)."""
        f = self.flint
        fa = [[f.fmpq(x.numerator, x.denominator) for x in row] for row in a]
        fb = [[f.fmpq(x.numerator, x.denominator) for x in row] for row in b]
        return self._augmented([[fa[j][i] * fb[j][k] for j in range(m)] for i in range(d) for k in range(d)], rhs)

    def rref(self, m: Any) -> tuple[Any, int]:
        return m.rref()

    def entry(self, m: Any, i: int, j: int) -> Fraction:
        v = m[i, j]
        return Fraction(int(v.p), int(v.q))

    def transpose(self, m: Any) -> Any:
        return m.transpose()

    def hstack(self, a: Any, b: Any) -> Any:
        f = self.flint
        rows = [[a[i, j] for j in range(a.ncols())] + [b[i, j] for j in range(b.ncols())] for i in range(a.nrows())]
        return f.fmpq_mat(rows)


class _Domain:
    """Exact rational matrices with SymPy's DomainMatrix over QQ (never ``Matrix.rank``)."""

    name = "SymPy DomainMatrix over QQ"

    def matrix(self, rows: list[list[Fraction]]) -> Any:
        return DomainMatrix([[QQ(x.numerator, x.denominator) for x in r] for r in rows],
                            (len(rows), len(rows[0]) if rows else 0), QQ)

    def rref(self, m: Any) -> tuple[Any, int]:
        red, pivots = m.rref()
        return red, len(pivots)

    def entry(self, m: Any, i: int, j: int) -> Fraction:
        v = m.getitem_sympy(i, j)
        return Fraction(int(v.p), int(v.q))

    def transpose(self, m: Any) -> Any:
        return m.transpose()

    def hstack(self, a: Any, b: Any) -> Any:
        return a.hstack(b)

    def augmented(self, rows: list[list[Fraction]], rhs: list[Fraction]) -> tuple[Any, Any, Any]:
        system, t_col = self.matrix(rows), self.matrix([[x] for x in rhs])
        return system, t_col, system.hstack(t_col)

    def outer_system(self, a: list[list[Fraction]], b: list[list[Fraction]], rhs: list[Fraction], d: int,
                     m: int) -> tuple[Any, Any, Any]:
        return self.augmented([[a[j][i] * b[j][k] for j in range(m)] for i in range(d) for k in range(d)], rhs)


def _backend() -> _Flint | _Domain:
    try:
        return _Flint()
    except ImportError:
        return _Domain()


def _milp_exact_candidate(red: list[list[Fraction]], pivots: list[int], free: list[int],
                          m: int) -> tuple[int, ...] | None:
    """A 0/1 point of the (exact, reduced) solution space proposed by MILP, checked by the caller."""
    try:
        import numpy as np
        from scipy.optimize import Bounds, LinearConstraint, milp
    except ImportError:
        return None
    rows = np.array([[float(x) for x in r[:m]] for r in red])
    rhs = np.array([float(r[m]) for r in red])
    result = milp(c=np.zeros(m), integrality=np.ones(m), bounds=Bounds(0, 1),
                  constraints=LinearConstraint(rows, rhs - 1e-9, rhs + 1e-9), options={"time_limit": 60})
    if result.x is None:
        return None
    return tuple(int(j) for j in np.flatnonzero(result.x > 0.5))


def _float_guess(a: list[list[Fraction]], b: list[list[Fraction]], rhs: list[Fraction], d: int,
                 m: int) -> tuple[int, ...] | None:
    """A candidate S from the float Gram system, returned only if it checks exactly (else None)."""
    try:
        import numpy as np
    except ImportError:
        return None
    fa = np.array([[float(x) for x in col] for col in a])  # m x d: row j is a_j
    fb = np.array([[float(x) for x in row] for row in b])  # m x d: row j is b_j
    ft = np.array([float(x) for x in rhs]).reshape(d, d)
    with np.errstate(all="ignore"):
        gram = (fa @ fa.T) * (fb @ fb.T)
        r = np.einsum("ji,ik,jk->j", fa, ft, fb)
    if not (np.isfinite(gram).all() and np.isfinite(r).all()):
        return None  # entries near 1e±300: the float guess over/underflows (LAPACK could hang on NaN)
    try:
        c, *_ = np.linalg.lstsq(gram, r, rcond=None)
    except np.linalg.LinAlgError:
        return None
    s = tuple(int(j) for j in np.flatnonzero(c > 0.5))
    for i in range(d):
        for k in range(d):
            if sum((a[j][i] * b[j][k] for j in s), Fraction(0)) != rhs[i * d + k]:
                return None
    return s


def _pivot_rows(backend: _Flint | _Domain, red: Any, rank: int, ncols: int) -> tuple[list[list[Fraction]], list[int]]:
    rows, pivots = [], []
    for i in range(rank):
        row = [backend.entry(red, i, j) for j in range(ncols)]
        rows.append(row)
        pivots.append(next(j for j, x in enumerate(row) if x != 0))
    return rows, pivots


def _pivots(backend: _Flint | _Domain, red: Any, rank: int, ncols: int) -> list[int]:
    """The pivot columns of a reduced echelon form, without converting its rows (see :func:`_pivot_rows`)."""
    return [next(j for j in range(ncols) if backend.entry(red, i, j) != 0) for i in range(rank)]


#: Above this many bits in the common denominators of the weights, the exact normal equations of the
#: least-squares floor can take seconds in one uninterruptible call (a budget could not stop it).
EXACT_RESIDUAL_BITS = 4096


def _denominator_bits(rows: list[list[Fraction]]) -> int:
    den = 1
    for row in rows:
        for x in row:
            den = den * x.denominator // math.gcd(den, x.denominator)
    return den.bit_length()


def _residual_lower(backend: _Flint | _Domain, system: Any, t_col: Any, independent: list[int], norm2: Fraction,
                    m: int, denominator_bits: int) -> Fraction:
    """A lower bound on the least-squares residual ``‖t‖² − ‖proj t‖²`` of an inconsistent
    ``system · c = t``: exact (rational normal equations) unless the weights' denominators exceed
    :data:`EXACT_RESIDUAL_BITS`; then ball arithmetic on the independent columns ``A_P``
    (``‖t‖² − vᵀG⁻¹v``, ``G = A_PᵀA_P``, ``v = A_Pᵀt``), whose lower endpoint is rigorous, at growing
    precision until it is positive; failing that, 0 (a true, if weak, floor).
    """
    if denominator_bits > EXACT_RESIDUAL_BITS:
        if not isinstance(backend, _Flint) or not independent:
            return Fraction(0)
        f = backend.flint
        saved = f.ctx.prec
        try:
            for prec in (128, 512, 2048):
                f.ctx.prec = prec
                a = f.arb_mat(system)
                a_p = f.arb_mat([[a[i, j] for j in independent] for i in range(a.nrows())])
                v = a_p.transpose() * f.arb_mat(t_col)
                try:
                    x = (a_p.transpose() * a_p).solve(v)
                except ZeroDivisionError:
                    continue  # G not certified invertible at this precision
                low = (f.arb(f.fmpq(norm2.numerator, norm2.denominator)) - (v.transpose() * x)[0, 0]).lower()
                man, exp = low.man_exp()
                bound = Fraction(int(man)) * (Fraction(2) ** int(exp))
                if bound > 0:
                    return bound
        finally:
            f.ctx.prec = saved
        return Fraction(0)
    # least-squares residual: ‖t‖² − (Aᵀt)·c* for any solution c* of the normal equations
    at = backend.transpose(system)
    normal, nrank = backend.rref(backend.hstack(at * system, at * t_col))
    npivots = _pivots(backend, normal, nrank, m + 1)
    atb = at * t_col
    c_ls = [Fraction(0)] * m
    for i, p in enumerate(npivots):
        if p < m:
            c_ls[p] = backend.entry(normal, i, m)
    return max(norm2 - sum((backend.entry(atb, j, 0) * c_ls[j] for j in range(m)), Fraction(0)), Fraction(0))


def _integer_matrix(m: sp.MatrixBase) -> tuple[list[list[int]], int] | None:
    """``m = N / den`` with an integer matrix ``N`` (None if an entry is not rational)."""
    rows = m.tolist()
    pq = []
    den = 1
    for row in rows:
        out = []
        for x in row:
            if not getattr(x, "is_Rational", False):
                return None
            p, q = int(x.p), int(x.q)
            out.append((p, q))
            den = den * q // math.gcd(den, q)
        pq.append(out)
    return [[p * (den // q) for p, q in row] for row in pq], den


#: _quick_planted could not compute a float guess (no numpy, an irrational entry, over/underflow)
_UNTRIED = "untried"


def _quick_planted(w_up: sp.MatrixBase, w_down: sp.MatrixBase,
                   target: sp.MatrixBase) -> tuple[int, ...] | str | None:
    """A float64 candidate S, returned only if ``W_down[:,S] W_up[S,:] = target`` holds exactly (integers);
    None when the guess was made and failed its exact check; :data:`_UNTRIED` when none could be made."""
    try:
        import numpy as np
    except ImportError:
        return _UNTRIED
    up, down, tt = _integer_matrix(w_up), _integer_matrix(w_down), _integer_matrix(target)
    if up is None or down is None or tt is None:
        return _UNTRIED
    (u, du), (dn, dd), (t, dt) = up, down, tt
    d = len(dn)
    try:
        fu = np.array(u, dtype=np.float64) / du
        fd = np.array(dn, dtype=np.float64) / dd
        ft = np.array(t, dtype=np.float64) / dt
    except OverflowError:
        return _UNTRIED
    if not (np.isfinite(fu).all() and np.isfinite(fd).all() and np.isfinite(ft).all()):
        return _UNTRIED
    from .floatsearch import limited_threads

    # one BLAS thread even for small systems: OpenBLAS's spinning threads made this 10-50x slower on a
    # loaded 2-core machine (0.9-1.5 s instead of 0.01-0.04 s)
    with limited_threads(), np.errstate(all="ignore"):
        gram = (fd.T @ fd) * (fu @ fu.T)
        rhs = np.einsum("jk,jk->j", fd.T @ ft, fu)
        if not (np.isfinite(gram).all() and np.isfinite(rhs).all()):
            return _UNTRIED  # over/underflow: no float guess; the exact path decides
        try:
            c, *_ = np.linalg.lstsq(gram, rhs, rcond=None)
        except np.linalg.LinAlgError:
            return _UNTRIED
    s = tuple(int(j) for j in np.flatnonzero(c > 0.5))
    scale = dd * du
    for i in range(d):
        row = dn[i]
        for k in range(d):
            if sum(row[j] * u[j][k] for j in s) * dt != t[i][k] * scale:
                return None
    return s


_INCONSISTENT = ("the linear system Σ c_j vec(a_j b_jᵀ) = vec(T) has no real solution (exact row reduction is "
                 "inconsistent), so no 0/1 solution exists")


def _normal_residual(backend: _Flint, a: list[list[Fraction]], b: list[list[Fraction]], rhs: list[Fraction], d: int,
                     m: int, norm2: Fraction) -> Fraction:
    """The exact least-squares residual ``‖t‖² − vᵀc*`` of ``Σ_j c_j vec(a_j b_jᵀ) = t`` (``t = vec(T)``), from
    the normal equations ``G c = v`` alone: ``G = AᵀA`` is the Hadamard product of the two m x m Gram
    matrices, ``G_jl = (a_j·a_l)(b_j·b_l)``, and ``v_j = a_jᵀ T b_j``, all in python-flint's exact
    rationals (the same values :func:`_residual_lower` reaches through the d² x m system, at d = 64,
    m = 256 in 0.13 s instead of ~1 s). Zero exactly when the system is consistent."""
    f = backend.flint
    wd = f.fmpq_mat([[f.fmpq(a[j][i].numerator, a[j][i].denominator) for j in range(m)] for i in range(d)])
    wu = f.fmpq_mat([[f.fmpq(x.numerator, x.denominator) for x in row] for row in b])
    t = f.fmpq_mat([[f.fmpq(x.numerator, x.denominator) for x in rhs[i * d:(i + 1) * d]] for i in range(d)])
    wd_t = wd.transpose()
    ga, gb = wd_t * wd, wu * wu.transpose()
    p = (wd_t * t) * wu.transpose()  # its diagonal: v_j = a_jᵀ T b_j
    normal, nrank = f.fmpq_mat([[ga[j, k] * gb[j, k] for k in range(m)] + [p[j, j]] for j in range(m)]).rref()
    total = Fraction(0)
    for i, piv in enumerate(_pivots(backend, normal, nrank, m + 1)):
        if piv < m:
            total += backend.entry(normal, i, m) * backend.entry(p, piv, piv)
    return max(norm2 - total, Fraction(0))


def exact_search(w_up: sp.MatrixBase, w_down: sp.MatrixBase, target: sp.MatrixBase) -> SearchResult:
    """Decide exactly whether some index set ``S`` has ``W_down[:,S] W_up[S,:] = target``."""
    d, m = w_down.shape
    tried = _quick_planted(w_up, w_down, target)
    quick = tried if isinstance(tried, tuple) else None
    if quick is not None:
        norm2 = sum((_q(x) ** 2 for x in target), Fraction(0))
        return SearchResult(True, quick, f"rounding a float64 least-squares solution gives S = "
                            f"{{{', '.join(map(str, quick))}}}, and W_down[:,S] W_up[S,:] = T holds exactly in "
                            "integer arithmetic (common denominators)", Fraction(0), norm2,
                            "float64 guess, exact rational check")
    a = [list(col) for col in zip(*_fraction_rows(w_down), strict=True)] if d else [[] for _ in range(m)]
    b = _fraction_rows(w_up)
    rhs = [x for row in _fraction_rows(target) for x in row]
    norm2 = sum((x * x for x in rhs), Fraction(0))
    # the same float guess from the same numbers: made again only when _quick_planted could not make it
    # (it only proposes; the exact elimination below decides either way)
    quick = _float_guess(a, b, rhs, d, m) if tried == _UNTRIED else None
    if quick is not None:
        return SearchResult(True, quick, f"rounding a float64 least-squares solution gives S = "
                            f"{{{', '.join(map(str, quick))}}}, and W_down[:,S] W_up[S,:] = T holds exactly in "
                            "rational arithmetic", Fraction(0), norm2, "float64 guess, exact rational check")
    backend = _backend()
    bits = _denominator_bits(a) + _denominator_bits(b)
    if isinstance(backend, _Flint) and d and m and bits <= EXACT_RESIDUAL_BITS:
        # the least-squares residual from the m x m normal equations, formed without the d² x m system:
        # positive exactly when the system is inconsistent (the usual answer for weights with no S)
        residual = _normal_residual(backend, a, b, rhs, d, m, norm2)
        if residual > 0:
            return SearchResult(False, (), _INCONSISTENT, residual, norm2, backend.name)
    system, t_col, aug = backend.outer_system(a, b, rhs, d, m)
    red, rank = backend.rref(aug)
    pivots = _pivots(backend, red, rank, m + 1)
    # A consistent system has least-squares residual 0; an inconsistent one gets a certified lower bound
    residual = Fraction(0) if m not in pivots else _residual_lower(backend, system, t_col, [p for p in pivots if p < m],
                                                                    norm2, m, bits)
    method = backend.name
    if m in pivots:
        return SearchResult(False, (), _INCONSISTENT, residual, norm2, method)
    red = [[backend.entry(red, i, j) for j in range(m + 1)] for i in range(rank)]
    free = [j for j in range(m) if j not in pivots]
    if len(free) > MAX_ENUMERATION:
        candidate = _milp_exact_candidate(red, pivots, free, m)
        if candidate is not None and all(
                sum((a[j][i] * b[j][k] for j in candidate), Fraction(0)) == rhs[i * d + k]
                for i in range(d) for k in range(d)):
            return SearchResult(True, candidate, f"a mixed-integer program (HiGHS) over the {len(free)} free coordinates "
                                f"proposed S = {{{', '.join(map(str, candidate))}}}, and W_down[:,S] W_up[S,:] = T holds "
                                "exactly in rational arithmetic", residual, norm2, method + " + MILP")
        return SearchResult(None, (), f"the solutions form an affine space with {len(free)} free coordinates; "
                            f"enumerating their 0/1 values (2^{len(free)}) is beyond the exact search limit "
                            f"(2^{MAX_ENUMERATION})", residual, norm2, method)
    for values in itertools.product((0, 1), repeat=len(free)):
        c = [Fraction(0)] * m
        for j, v in zip(free, values, strict=True):
            c[j] = Fraction(v)
        ok = True
        for r, p in zip(red, pivots, strict=True):
            val = r[m] - sum((r[j] * c[j] for j in free), Fraction(0))
            if val not in (0, 1):
                ok = False
                break
            c[p] = val
        if ok:
            s = tuple(j for j in range(m) if c[j] == 1)
            how = "the unique solution" if not free else f"one of the 2^{len(free)} 0/1 points of the solution space"
            return SearchResult(True, s, f"{how} is the 0/1 vector of S = {{{', '.join(map(str, s))}}} (exact)",
                                residual, norm2, method)
    if not free:
        return SearchResult(False, (), "the system has a unique real solution and it is not a 0/1 vector (exact)",
                            residual, norm2, method)
    return SearchResult(False, (), f"none of the 2^{len(free)} 0/1 assignments of the free coordinates gives a 0/1 "
                        "solution (exhaustive, exact)", residual, norm2, method)
