"""Theorem D (MATH.md Part IV, §15): one bias-free block with any weights — zero rows, zero columns,
several units on one line — decided exactly.

Setting: ``R(x) = Mx + Σ_i a_i σ(w_i·x)`` with σ continuous, not a polynomial, ``σ(t) − σ(−t) = 2ct``,
``c ≠ 0``, and either ReLU-like (positively homogeneous of degree 1; ``kind = "homogeneous"``) or with
proved dilate independence (``kind = "dilates"``). Write ``σ(t) = ct + e(t)``, ``e`` even. Then

    R(x) = T x + Σ_α C_α e(v_α·x) + σ(0)·Σ_{w_i = 0} a_i,      T = M + c W_down W_up,

where the *atoms* α group the units with ``a_i ≠ 0`` and ``w_i ≠ 0``: by line for ReLU-like σ
(``w_i = λ_i v``, ``C = Σ |λ_i| a_i``, since ``e(λt) = |λ| e(t)``), by pair ``{v, −v}`` otherwise
(``C = Σ a_i``; ``v`` and ``2v`` are different atoms). The essential atoms (``C ≠ 0``, exactly) each need
one unit with the sign ``s_α`` of its row, or two units (``α ∈ J``: any linear term along ``v_α``); a
nonzero constant needs one zero-row unit; the linear part left, ``D^J_s Π_J``, two units per rank.

Everything here is exact (Fractions; ranks, inverses and reductions over Q by python-flint). The
search is bounded by a *count* of exact ranks (:data:`WORK_CAP`), so an answer never depends on the
machine; the command's CPU budget still applies on top. Nothing here decides whether σ satisfies the
hypotheses: the caller passes ``kind``, ``c`` and the exact sign of ``σ(0)``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..theory.directions import line_key_and_scale

__all__ = ["WORK_CAP", "Atom", "Atoms", "Choice", "DegenerateSearch", "atoms_of", "canonical_form", "construct",
           "decide_width", "exact_rank", "minimal_width", "same_function"]

Vec = tuple[Fraction, ...]
Mat = list[list[Fraction]]

#: The most work one decision may do, in units of d²(d + k) per exact rank (a count, not a time: answers do not
#: depend on the machine; the command's CPU budget applies on top).
WORK_CAP = 4_000_000


def _fmpq_mat(rows: Sequence[Sequence[Fraction]], ncols: int) -> Any:
    import flint

    return flint.fmpq_mat(len(rows), ncols, [flint.fmpq(x.numerator, x.denominator) for r in rows for x in r])


def _fractions(m: Any) -> Mat:
    return [[Fraction(int(x.p), int(x.q)) for x in row] for row in m.tolist()]


def exact_rank(rows: Sequence[Sequence[Fraction]], ncols: int) -> int:
    """The rank over Q (python-flint ``fmpq_mat``)."""
    if not rows or ncols == 0:
        return 0
    return int(_fmpq_mat(rows, ncols).rank())


@dataclass(frozen=True)
class Atom:
    """Units of ``B`` sharing a line (ReLU-like) or a pair ``{v, −v}`` (DI): representative row ``v`` and ``C``."""

    units: tuple[int, ...]
    v: Vec
    coeff: Vec

    @property
    def essential(self) -> bool:
        return any(x != 0 for x in self.coeff)


@dataclass(frozen=True)
class Atoms:
    """A block in Theorem D's normal form."""

    d: int
    m: int
    kind: str  # "homogeneous" (ReLU-like) | "dilates" (pairs {v, -v}: valid for any σ with σ(t) - σ(-t) = 2ct)
    c: Fraction
    dropped: tuple[int, ...]  # a_i = 0
    zero_rows: tuple[int, ...]  # w_i = 0 and a_i != 0
    constant: Vec  # Σ a_i over the zero rows (the constant of R is σ(0) times it)
    eps: int | None  # Theorem D's δ: 1 for a nonzero constant; None: σ(0) undecided while the sum is nonzero
    essential: tuple[Atom, ...]
    inessential: tuple[Atom, ...]
    t: Mat  # T = M + c W_down W_up

    @property
    def k(self) -> int:
        return len(self.essential)

    @property
    def rho(self) -> int:
        return exact_rank([a.v for a in self.essential], self.d)

    def g(self, alpha: int) -> Mat:
        """``G_α = c C_α v_αᵀ``."""
        a = self.essential[alpha]
        return [[self.c * x * y for y in a.v] for x in a.coeff]


def atoms_of(w_up: Mat, w_down: Mat, skip: Mat, c: Fraction, kind: str, sigma0_sign: int | None) -> Atoms:
    """The normal form of ``R(x) = Mx + W_down σ(W_up x)`` (``w_up`` m x d, ``w_down`` d x m, ``skip`` d x d)."""
    m = len(w_up)
    d = len(skip)
    cols = [[w_down[r][i] for r in range(d)] for i in range(m)]
    dropped: list[int] = []
    zero_rows: list[int] = []
    groups: dict[Any, list[int]] = {}
    reps: dict[Any, tuple[Vec, list[Fraction]]] = {}
    constant = [Fraction(0)] * d
    for i in range(m):
        if all(x == 0 for x in cols[i]):
            dropped.append(i)
            continue
        if all(x == 0 for x in w_up[i]):
            zero_rows.append(i)
            constant = [p + q for p, q in zip(constant, cols[i], strict=True)]
            continue
        p, lam = line_key_and_scale(w_up[i])
        if kind == "homogeneous":
            key: Any = p
            v = tuple(Fraction(x) for x in p)
            weight = abs(lam)
        else:
            key = (p, abs(lam))
            v = tuple(abs(lam) * x for x in p)
            weight = Fraction(1)
        if key not in reps:
            reps[key] = (v, [Fraction(0)] * d)
            groups[key] = []
        groups[key].append(i)
        acc = reps[key][1]
        for r in range(d):
            acc[r] += weight * cols[i][r]
    essential: list[Atom] = []
    inessential: list[Atom] = []
    for key in sorted(groups, key=lambda k: groups[k][0]):
        v, coeff = reps[key]
        atom = Atom(tuple(groups[key]), v, tuple(coeff))
        (essential if atom.essential else inessential).append(atom)
    t = [[skip[r][q] + c * sum((w_down[r][i] * w_up[i][q] for i in range(m)), Fraction(0)) for q in range(d)]
         for r in range(d)]
    nonzero = any(x != 0 for x in constant)
    eps: int | None = 0
    if nonzero:
        eps = None if sigma0_sign is None else (0 if sigma0_sign == 0 else 1)
    return Atoms(d, m, kind, c, tuple(dropped), tuple(zero_rows), tuple(constant), eps, tuple(essential),
                 tuple(inessential), t)


# ---- one choice (J, s) --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Choice:
    """``doubled`` = J (indices of essential atoms, their rows independent), ``signs`` one per essential atom
    (``0`` for those in J), ``rank`` = rank(D^J_s Π_J)."""

    doubled: tuple[int, ...]
    signs: tuple[int, ...]
    rank: int

    def width(self, a: Atoms) -> int:
        assert a.eps is not None
        return a.k + a.eps + len(self.doubled) + 2 * self.rank


def _d_matrix(a: Atoms, doubled: Sequence[int], signs: Sequence[int]) -> Mat:
    """``D^J_s = T − Σ_{α∉J} s_α G_α``."""
    out = [list(r) for r in a.t]
    for alpha, atom in enumerate(a.essential):
        if alpha in doubled:
            continue
        s = signs[alpha]
        for r in range(a.d):
            cr = a.c * atom.coeff[r] * s
            if cr:
                row = out[r]
                for q in range(a.d):
                    row[q] -= cr * atom.v[q]
    return out


def _rank_projected(a: Atoms, dm: Mat, doubled: Sequence[int]) -> int:
    """``rank(D Π_J) = rank([V_J; D]) − |J|`` (the rows ``v_α``, ``α ∈ J``, independent)."""
    vj = [list(a.essential[i].v) for i in doubled]
    return exact_rank(vj + dm, a.d) - len(vj)


def _projector(a: Atoms, doubled: Sequence[int]) -> Mat:
    """``Π_J = I − V_Jᵀ (V_J V_Jᵀ)^{-1} V_J`` over Q."""
    import flint

    d = a.d
    eye = [[Fraction(int(r == q)) for q in range(d)] for r in range(d)]
    if not doubled:
        return eye
    v = _fmpq_mat([a.essential[i].v for i in doubled], d)
    p = v.transpose() * (v * v.transpose()).inv() * v
    return [[eye[r][q] - Fraction(int(p[r, q].p), int(p[r, q].q)) for q in range(d)] for r in range(d)] \
        if isinstance(p, flint.fmpq_mat) else eye


def _mul(x: Mat, y: Mat) -> Mat:
    return [[sum((x[r][k] * y[k][q] for k in range(len(y))), Fraction(0)) for q in range(len(y[0]))]
            for r in range(len(x))]


# ---- the search -----------------------------------------------------------------------------------------


@dataclass
class DegenerateSearch:
    """The decision at one width: ``found`` True (``choice`` given), False (``certificate`` lists every J), None
    (work cap reached or a step undecided: ``reason``)."""

    found: bool | None
    width: int
    choice: Choice | None = None
    certificate: list[dict[str, Any]] = field(default_factory=list)
    reason: str = ""
    work: int = 0


def _zero_one(a: Atoms, doubled: tuple[int, ...], free: list[int]) -> tuple[bool | None, tuple[int, ...], str]:
    """``D^J_s Π_J = 0`` for some signs: with ``s = 1 − 2t`` the index-set system
    ``Σ_{α∈S} (c C_α)(Π_J v_α)ᵀ = (Σ_{α∉J} G_α Π_J − T Π_J)/2`` (``S`` = the atoms with ``s = −1``), decided by
    :func:`symabsorb.weights.search.exact_search`."""
    import sympy as sp

    from .search import exact_search

    pi = _projector(a, doubled)
    d = a.d
    rows = [[sum((a.essential[al].v[k] * pi[k][q] for k in range(d)), Fraction(0)) for q in range(d)] for al in free]
    cols = [[a.c * a.essential[al].coeff[r] for r in range(d)] for al in free]
    rest = _mul(_d_matrix(a, doubled, [1] * a.k), pi)  # (T − Σ_{α∉J} G_α) Π_J
    target = [[-x / 2 for x in r] for r in rest]
    if not free:
        ok = all(x == 0 for r in target for x in r)
        return ok, (), "no sign to choose: $D\\Pi_J$ is " + ("zero" if ok else "nonzero")
    res = exact_search(sp.Matrix([[sp.Rational(x.numerator, x.denominator) for x in r] for r in rows]),
                       sp.Matrix([[sp.Rational(cols[j][r].numerator, cols[j][r].denominator) for j in range(len(free))]
                                  for r in range(d)]),
                       sp.Matrix([[sp.Rational(x.numerator, x.denominator) for x in r] for r in target]))
    flipped = tuple(free[j] for j in res.index_set) if res.found else ()
    return res.found, flipped, res.proof


def _enumerate_signs(a: Atoms, js: tuple[int, ...], free: list[int], r_max: int) -> \
        tuple[tuple[int, ...] | None, int, int]:
    """Signs of the ``free`` atoms in Gray-code order, ``D^J_s Π_J`` updated by one ``±2 G_α Π_J`` per step (exact,
    python-flint): ``(signs with rank ≤ r_max or None, least rank seen, ranks computed)``."""
    import flint

    d = a.d
    pi = _fmpq_mat(_projector(a, js), d)
    signs = [0 if i in js else 1 for i in range(a.k)]
    dp = _fmpq_mat(_d_matrix(a, js, signs), d) * pi
    gp = {al: _fmpq_mat(a.g(al), d) * pi for al in free}
    two = flint.fmpq(2)
    best = d + 1
    count = 0
    n = len(free)
    for step in range(2 ** n):
        if step:
            bit = (step & -step).bit_length() - 1  # Gray code: flip the lowest set bit's atom
            al = free[bit]
            dp += gp[al] * (two * signs[al])  # s: +1 -> -1 adds 2G, -1 -> +1 subtracts it
            signs[al] = -signs[al]
        count += 1
        rank = int(dp.rank())
        best = min(best, rank)
        if rank <= r_max:
            return tuple(signs), best, count
    return None, best, count


def decide_width(a: Atoms, width: int, cap: int = WORK_CAP) -> DegenerateSearch:
    """Is ``R`` a residual-free block of width ``width``? Theorem D's procedure: the counting bounds first,
    then every independent ``J`` with ``|J| ≤ min(width − k − δ, d)``: a free rank bound, an exact 0/1 system
    when no rank is left, sign enumeration otherwise."""
    if a.eps is None:
        return DegenerateSearch(None, width, reason="the sign of σ(0) is undecided while the zero-row units' "
                                "columns sum to a nonzero vector")
    base = a.k + a.eps
    d = a.d
    if width < base:
        return DegenerateSearch(False, width, certificate=[{"J": None, "reason": f"k + δ = {base} > {width}"}])
    rho = a.rho
    if width >= base + 2 * d - rho:
        basis: list[int] = []
        for alpha in range(a.k):
            if exact_rank([a.essential[i].v for i in [*basis, alpha]], d) > len(basis):
                basis.append(alpha)
        signs = tuple(0 if i in basis else 1 for i in range(a.k))
        rank = _rank_projected(a, _d_matrix(a, basis, signs), basis)
        return DegenerateSearch(True, width, Choice(tuple(basis), signs, rank))
    unit = d * d * (d + a.k) + 1  # the work of one exact rank (a count, not a time)
    work = 0
    cert: list[dict[str, Any]] = []
    undecided = ""

    def over(what: str) -> DegenerateSearch:
        return DegenerateSearch(None, width, reason=f"{what} exceeds the work cap ({cap} units of exact "
                                "arithmetic)", work=work)

    for size in range(0, min(width - base, d, rho) + 1):
        r_max = (width - base - size) // 2
        if r_max >= d - size:  # rank(D Π_J) ≤ rank Π_J = d − |J|: any independent J of this size, any signs
            js_free: list[int] = []
            for alpha in range(a.k):
                if len(js_free) == size:
                    break
                if exact_rank([a.essential[i].v for i in [*js_free, alpha]], d) > len(js_free):
                    js_free.append(alpha)
            signs = tuple(0 if i in js_free else 1 for i in range(a.k))
            rank = _rank_projected(a, _d_matrix(a, js_free, signs), js_free)
            return DegenerateSearch(True, width, Choice(tuple(js_free), signs, rank), work=work)
        for js in itertools.combinations(range(a.k), size):
            work += unit
            if work > cap:
                return over(f"enumerating the sets J of size {size} (at J = {list(js)})")
            if size and exact_rank([a.essential[i].v for i in js], d) < size:
                continue  # dependent rows: the same Π_J as a smaller J, already tried
            pi_zero = set()
            if js:
                vj = [list(a.essential[i].v) for i in js]
                for al in range(a.k):
                    if al not in js and exact_rank([*vj, list(a.essential[al].v)], d) == len(js):
                        pi_zero.add(al)  # Π_J v_α = 0: the sign of α does not matter
                work += unit * a.k
            free = [al for al in range(a.k) if al not in js and al not in pi_zero]
            if r_max == 0:
                found, flipped, how = _zero_one(a, js, free)
                if found:
                    signs = tuple(0 if i in js else (-1 if i in flipped else 1) for i in range(a.k))
                    rank = _rank_projected(a, _d_matrix(a, js, signs), js)
                    assert rank == 0, "the 0/1 system's solution must leave no rank"
                    return DegenerateSearch(True, width, Choice(js, signs, rank), work=work)
                if found is None:
                    undecided = f"J = {list(js)}: {how}"
                    continue
                cert.append({"J": list(js), "r_max": 0, "method": "0/1 system", "proof": how})
                continue
            if work + unit * 2 ** len(free) > cap:
                return over(f"the sign enumeration for J = {list(js)} (2^{len(free)} exact ranks)")
            found_signs, best, spent = _enumerate_signs(a, js, free, r_max)
            work += unit * spent
            if found_signs is not None:
                rank = _rank_projected(a, _d_matrix(a, js, found_signs), js)
                assert rank <= r_max, "the incremental rank must agree with the direct one"
                return DegenerateSearch(True, width, Choice(js, found_signs, rank), work=work)
            cert.append({"J": list(js), "r_max": r_max, "method": f"signs (2^{len(free)})", "min_rank": best})
    if undecided:
        return DegenerateSearch(None, width, reason=undecided, work=work)
    return DegenerateSearch(False, width, certificate=cert, work=work)


@dataclass(frozen=True)
class MinimalWidth:
    """``w*`` exactly (``lower == upper``, ``choice`` attains it) or proved bounds."""

    lower: int
    upper: int
    choice: Choice | None
    reason: str = ""


def minimal_width(a: Atoms, cap: int = WORK_CAP) -> MinimalWidth:
    """``w* = k + δ + min_{J,s} [|J| + 2 rank(D^J_s Π_J)]``: the least width at which :func:`decide_width`
    finds a choice; bounds ``k + δ ≤ w* ≤ k + δ + 2d − ρ`` where the work cap stops it."""
    assert a.eps is not None
    base = a.k + a.eps
    upper = base + 2 * a.d - a.rho
    lower = base
    spent = 0
    for w in range(base, upper + 1):
        res = decide_width(a, w, max(cap - spent, 1))  # one budget for all the widths tried
        spent += res.work
        if res.found:
            assert res.choice is not None
            return MinimalWidth(w, w, res.choice)
        if res.found is None:
            top = decide_width(a, upper, cap)
            return MinimalWidth(lower, upper, top.choice, res.reason)
        lower = w + 1
    raise AssertionError("the shortcut width always admits a choice")


# ---- the witness and the exact identity check ----------------------------------------------------------


def construct(a: Atoms, choice: Choice, width: int) -> tuple[Mat, Mat]:
    """The residual-free block of Theorem D for ``choice``, padded with zero units to ``width``:
    ``(W'_up, W'_down)`` as ``width x d`` and ``d x width`` rational matrices."""
    d, c = a.d, a.c
    rows: list[list[Fraction]] = []
    cols: list[list[Fraction]] = []
    dm = _d_matrix(a, choice.doubled, choice.signs)
    js = list(choice.doubled)
    beta: Mat = [[Fraction(0)] * len(js) for _ in range(d)]
    if js:
        v = _fmpq_mat([a.essential[i].v for i in js], d)
        b = _fmpq_mat(dm, d) * v.transpose() * (v * v.transpose()).inv()
        beta = _fractions(b)
    for alpha, atom in enumerate(a.essential):
        if alpha in js:
            col = js.index(alpha)
            bvec = [beta[r][col] / c for r in range(d)]
            rows.append(list(atom.v))
            cols.append([(atom.coeff[r] + bvec[r]) / 2 for r in range(d)])
            rows.append([-x for x in atom.v])
            cols.append([(atom.coeff[r] - bvec[r]) / 2 for r in range(d)])
        else:
            s = choice.signs[alpha]
            rows.append([s * x for x in atom.v])
            cols.append(list(atom.coeff))
    if a.eps:
        rows.append([Fraction(0)] * d)
        cols.append(list(a.constant))
    p = _mul(dm, _projector(a, js))
    if any(x != 0 for r in p for x in r):
        red, rank = _fmpq_mat(p, d).rref()
        factors = _fractions(red)[:rank]
        piv = [next(q for q in range(d) if f[q] != 0) for f in factors]
        for f, q in zip(factors, piv, strict=True):
            u = [p[r][q] / (2 * c) for r in range(d)]
            rows.append(list(f))
            cols.append(u)
            rows.append([-x for x in f])
            cols.append([-x for x in u])
    if len(rows) > width:
        raise ValueError(f"the construction needs {len(rows)} units, more than the width {width}")
    while len(rows) < width:
        rows.append([Fraction(0)] * d)
        cols.append([Fraction(0)] * d)
    w_down = [[cols[j][r] for j in range(len(cols))] for r in range(d)]
    return rows, w_down


def canonical_form(w_up: Mat, w_down: Mat, skip: Mat | None, c: Fraction, kind: str, sigma0_zero: bool) -> \
        tuple[tuple[tuple[Fraction, ...], ...], tuple[tuple[Any, Vec], ...], Vec]:
    """``(T, {atom key: C}, constant sum)`` of ``Mx + W_down σ(W_up x)`` (``skip`` None: no skip). Two blocks with
    equal forms are equal functions for every σ with ``σ(t) − σ(−t) = 2ct`` (``kind = "dilates"``), and for
    every degree-1 positively homogeneous one (``kind = "homogeneous"``): ``σ(t) = ct + e(t)``, ``e`` even (and
    ``e(λt) = |λ| e(t)`` in the homogeneous case), so each block is its form written out."""
    d = len(w_down)
    zero_skip = [[Fraction(0)] * d for _ in range(d)]
    a = atoms_of(w_up, w_down, skip if skip is not None else zero_skip, c, kind, 0 if sigma0_zero else 1)
    keyed = []
    for atom in (*a.essential,):
        p, lam = line_key_and_scale(atom.v)
        key = p if kind == "homogeneous" else (p, abs(lam))
        keyed.append((key, atom.coeff if kind == "dilates" or lam == 1 else tuple(x * abs(lam) for x in atom.coeff)))
    const = a.constant if not sigma0_zero else tuple(Fraction(0) for _ in range(d))
    return tuple(tuple(r) for r in a.t), tuple(sorted(keyed)), tuple(const)


def same_function(w_up: Mat, w_down: Mat, skip: Mat, rows: Mat, cols: Mat, c: Fraction, kind: str,
                  sigma0_zero: bool) -> bool:
    """Exact proof that the residual-free block ``(rows, cols)`` equals ``Mx + W_down σ(W_up x)``: equal
    :func:`canonical_form` (a proof for all x, not a test at points)."""
    return canonical_form(rows, cols, None, c, kind, sigma0_zero) == \
        canonical_form(w_up, w_down, skip, c, kind, sigma0_zero)


# ---- the concrete-weights procedure (inline exact weights) ---------------------------------------------

#: How a Theorem D witness is described (it is not a flip of units of B).
DESCRIPTION = ("Theorem D's residual-free block: one unit per essential atom (two for J), a zero-row unit for a "
               "nonzero constant, a ± pair per remaining rank, zero units to the width")

#: At most this many J of a not-absorbable certificate are spelled out in the derivation (all are in the certificate).
SHOWN_CASES = 8


def _frac_rows(m: Any) -> Mat | None:
    if m is None or not all(getattr(x, "is_Rational", False) for x in m):
        return None
    return [[Fraction(int(x.p), int(x.q)) for x in row] for row in m.tolist()]


def _set(s: Sequence[int]) -> str:
    return "\\{" + ", ".join(map(str, s)) + "\\}" if s else "\\emptyset"


def sigma_kind(block: Any) -> tuple[str | None, str]:
    """``("homogeneous" | "dilates", how)`` when the line-module hypothesis is proved for the block's σ."""
    from ..theory.checks import Subject
    from ..theory.derivation import HypStatus
    from ..theory.hyp_width import line_module

    status, clause, _c, _di = line_module(Subject(block=block))
    if status is not HypStatus.PROVED:
        return None, clause
    return clause, ""


def sigma_at_zero_sign(block: Any) -> tuple[int | None, Any]:
    """The exact sign of ``σ(0)`` (the project's sign decision, never ``== 0`` on a SymPy value) and ``σ(0)``."""
    import sympy as sp

    from ..analysis.identity import exact_sign
    from ..model.functions import Z

    try:
        value = block.activation.expr.xreplace({Z: sp.Integer(0)})
        value = sp.simplify(value) if not value.is_Rational else value
    except (TypeError, ValueError, AttributeError):
        return None, None
    return exact_sign(value), value


def describe_atoms(a: Atoms) -> str:
    group = "line" if a.kind == "homogeneous" else "pair $\\{v, -v\\}$"
    parts = []
    for i, atom in enumerate(a.essential):
        v = ", ".join(str(x) for x in atom.v)
        cc = ", ".join(str(x) for x in atom.coeff)
        parts.append(f"$\\alpha_{i}$: units ${_set(atom.units)}$, $v = ({v})$, $C = ({cc})$")
    text = (f"atoms by {group}: " + ("; ".join(parts) if parts else "none essential")
            + ("; inessential ($C = 0$): " + ", ".join(f"${_set(x.units)}$" for x in a.inessential)
               if a.inessential else "")
            + (f"; dropped ($a_i = 0$): ${_set(a.dropped)}$" if a.dropped else "")
            + (f"; zero rows: ${_set(a.zero_rows)}$, $\\sum a_i = ({', '.join(map(str, a.constant))})$"
               if a.zero_rows else ""))
    return text


def certificate_text(cert: list[dict[str, Any]]) -> str:
    shown = []
    for rec in cert[:SHOWN_CASES]:
        if rec.get("J") is None:
            shown.append(rec["reason"])
            continue
        js = _set(rec["J"])
        if rec["method"] == "0/1 system":
            shown.append(f"$J = {js}$ (no rank left): $D^J_s\\Pi_J = 0$ has no sign solution ({rec['proof']})")
        else:
            shown.append(f"$J = {js}$: $\\min_s \\operatorname{{rank}}(D^J_s\\Pi_J) = {rec['min_rank']} > {rec['r_max']}$ "
                         f"({rec['method']})")
    more = f"; and {len(cert) - SHOWN_CASES} more cases, in the certificate" if len(cert) > SHOWN_CASES else ""
    return "; ".join(shown) + more


def witness_for(block: Any, a: Atoms, choice: Choice, width: int, w_up: Mat, w_down: Mat, skip: Mat,
                sigma0_zero: bool) -> tuple[Any, str] | None:
    """The witness of ``choice`` at ``width``, proved equal to ``R`` exactly (:func:`same_function`) and
    cross-checked at random rational points (:func:`.witness.check_witness`); None if either check fails."""
    import sympy as sp

    from ..theory.derivation import Witness
    from .witness import check_witness

    rows, cols = construct(a, choice, width)
    if not same_function(w_up, w_down, skip, rows, cols, a.c, a.kind, sigma0_zero):
        return None
    up = sp.ImmutableMatrix([[sp.Rational(x.numerator, x.denominator) for x in r] for r in rows])
    down = sp.ImmutableMatrix([[sp.Rational(x.numerator, x.denominator) for x in r] for r in cols])
    witness = Witness((), up, down, None, description=DESCRIPTION)
    check = check_witness(block, witness, points=60)
    if not check.error <= (0 if check.exact else 1e-12):
        return None
    verified = ("exact: the residual-free block and $Mx + B(x)$ have the same linear part $T$, the same atom "
                "coefficients $C_\\alpha$ and the same constant (a proof for every $x$); " + check.text())
    # no index set: not a flip of units of B
    return Witness((), up, down, None, verified, description=DESCRIPTION), verified


def degenerate_inline(block: Any, d: Any, chosen: Any, library: Any) -> Any:
    """``degenerate`` on inline exact weights: Theorem D decided at the block's width."""
    from dataclasses import replace

    import sympy as sp

    from ..theory.derivation import DerivationStep, Scope, Verdict
    from ..theory.skips import skip_matrix

    rid = d.decided_by or ""
    c = chosen.bindings().get("c")
    w_up, w_down = _frac_rows(block.w_up), _frac_rows(block.w_down)
    m_skip = skip_matrix(block)
    skip = _frac_rows(m_skip)

    def stays_open(why: str, before: Sequence[Any] = ()) -> Any:
        step = DerivationStep(f"So the question stays open for these weights: {why}.", (rid,), kind="conclusion")
        return replace(d, verdict=Verdict.OPEN, scope=Scope.THESE, steps=(*d.steps, *before, step),
                       notes=(*d.notes, why))

    if not isinstance(c, sp.Expr) or not c.is_Rational or w_up is None or w_down is None or skip is None:
        # As the index-set procedure does (weights/decide.py): the exact search works over Q, so an irrational
        # c or entry leaves the condition as stated (proved both ways) rather than deciding it by rounding.
        why = ("Theorem D's procedure works over the rationals, and $c$, the weights or the skip are not rational "
               "numbers, so these concrete weights are not decided beyond the condition above")
        note = DerivationStep(f"{why}.", (rid,), kind="argument")
        return replace(d, steps=(*d.steps, note), notes=(*d.notes, why))
    kind, why = sigma_kind(block)
    if kind is None:
        return stays_open(why)
    sign0, value0 = sigma_at_zero_sign(block)
    a = atoms_of(w_up, w_down, skip, Fraction(int(c.p), int(c.q)), kind, sign0)
    width = len(w_up)
    steps = [*d.steps]
    eps_text = ("$\\delta = 0$ (no zero-row unit with a nonzero column sum)" if not any(a.constant) else
                f"$\\sigma(0) = {sp.latex(value0)}$, decided " + ("zero" if sign0 == 0 else "nonzero") +
                f" exactly: $\\delta = {a.eps}$" if a.eps is not None else "$\\sigma(0)$ undecided")
    steps.append(DerivationStep(f"Theorem D's normal form of these weights (exact): {describe_atoms(a)}; "
                                f"$k = {a.k}$, {eps_text}, $\\rho = {a.rho}$, $d = {a.d}$, $m = {width}$.", (rid,)))
    if a.eps is None:
        return stays_open("the sign of $\\sigma(0)$ is not decided exactly, and the zero-row units' columns sum to a "
                          "nonzero vector", steps[len(d.steps):])
    res = decide_width(a, width)
    base = a.k + a.eps
    if res.found:
        assert res.choice is not None
        built = witness_for(block, a, res.choice, width, w_up, w_down, skip, sign0 == 0)
        if built is None:
            return replace(d, steps=tuple(steps))  # a witness failing its check decides nothing (a bug: tests catch it)
        witness, verified = built
        ch = res.choice
        steps.append(DerivationStep(
            f"By [{rid}] with $J = {_set(ch.doubled)}$, signs $s = ({', '.join(str(s) for s in ch.signs)})$ "
            f"($0$ for $J$): $k + \\delta + |J| + 2\\operatorname{{rank}}(D^J_s\\Pi_J) = {base} + {len(ch.doubled)}"
            f" + 2 \\cdot {ch.rank} = {ch.width(a)} \\le m = {width}$. Witness: one unit per essential atom (row "
            "$s_\\alpha v_\\alpha$, column $C_\\alpha$), two for $\\alpha \\in J$, a zero-row unit for the constant, a "
            f"pair per rank of $D^J_s\\Pi_J$; verified ({verified}). Therefore these weights are absorbable.",
            (rid,), kind="conclusion"))
        return replace(d, verdict=Verdict.ABSORBABLE, scope=Scope.THESE, steps=tuple(steps), witness=witness)
    if res.found is False:
        steps.append(DerivationStep(
            f"By [{rid}], every independent $J$ with $|J| \\le \\min(m - k - \\delta, d)$ fails (exact ranks over "
            f"$\\mathbb{{Q}}$): {certificate_text(res.certificate)}. Therefore these weights are not absorbable.",
            (rid,), kind="conclusion"))
        return replace(d, verdict=Verdict.NOT_ABSORBABLE, scope=Scope.THESE, steps=tuple(steps))
    upper = base + 2 * a.d - a.rho
    why = (f"{res.reason}; proved bounds: ${base} = k + \\delta \\le w^* \\le k + \\delta + 2d - \\rho = "
           f"{upper}$")
    return stays_open(why, steps[len(d.steps):])


def degenerate_width(block: Any, rid: str) -> tuple[int, int, list[Any], Any] | None:
    """The ``width`` query under Theorem D on inline exact weights: ``(lower, upper, steps, witness of width
    upper)`` with ``lower == upper`` the exact ``w*`` unless the work cap stopped the search; None when the
    procedure does not apply (irrational entries, σ outside the theorem, ``σ(0)`` undecided)."""
    from ..theory.derivation import DerivationStep
    from ..theory.skips import skip_matrix

    w_up, w_down = _frac_rows(block.w_up), _frac_rows(block.w_down)
    skip = _frac_rows(skip_matrix(block))
    if w_up is None or w_down is None or skip is None:
        return None
    kind, _why = sigma_kind(block)
    if kind is None:
        return None
    from ..theory.checks import Subject
    from ..theory.hyp_width import line_module

    c = line_module(Subject(block=block))[2]
    if c is None or not c.is_Rational:
        return None
    sign0, _value0 = sigma_at_zero_sign(block)
    a = atoms_of(w_up, w_down, skip, Fraction(int(c.p), int(c.q)), kind, sign0)
    if a.eps is None:
        return None
    mw = minimal_width(a)
    assert mw.choice is not None
    built = witness_for(block, a, mw.choice, mw.upper, w_up, w_down, skip, sign0 == 0)
    if built is None:
        from ..errors import InternalError

        raise InternalError("the width witness of Theorem D failed its exact check")
    witness, verified = built
    base = a.k + a.eps
    ch = mw.choice
    steps = [DerivationStep(f"Theorem D's normal form of these weights (exact): {describe_atoms(a)}; $k = {a.k}$, "
                            f"$\\delta = {a.eps}$, $\\rho = {a.rho}$.", (rid,))]
    if mw.lower == mw.upper:
        steps.append(DerivationStep(
            f"By [{rid}], $w^* = k + \\delta + \\min_{{J,s}}[\\,|J| + 2\\operatorname{{rank}}(D^J_s\\Pi_J)]$: every "
            f"width from ${base}$ up was decided exactly (every independent $J$, exact ranks over $\\mathbb{{Q}}$); the "
            f"least is attained at $J = {_set(ch.doubled)}$, $s = ({', '.join(map(str, ch.signs))})$: "
            f"$w^* = {base} + {len(ch.doubled)} + 2 \\cdot {ch.rank} = {mw.upper}$. Witness of width {mw.upper}: "
            f"verified ({verified}).", (rid,)))
    else:
        steps.append(DerivationStep(
            f"By [{rid}]: widths below ${mw.lower}$ are ruled out exactly; {mw.reason}; so ${mw.lower} \\le w^* \\le "
            f"{mw.upper} = k + \\delta + 2d - \\rho$ (witness of width {mw.upper} verified: {verified}).", (rid,)))
    return mw.lower, mw.upper, steps, witness


def _sandwich_condition() -> dict[str, Any]:
    return {"condition": ("\\text{Theorem D's criterion: for } \\sigma \\text{ with pair atoms (sufficient); for } "
                          "\\sigma_\\infty \\text{ (necessary)}"),
            "condition_plain": "Theorem D's criterion: for sigma with pair atoms (sufficient); for sigma_inf (necessary)",
            "sufficient": "proved", "necessary": "proved"}


def sandwich_applies(block: Any, d: Any, library: Any) -> bool:
    """Whether the Lemma-T sandwich (:func:`sandwich_inline`) may decide ``d``'s block: the library has the
    results providing ``degenerate-sandwich`` and ``tropical-limit``, the block is ungated, bias-free, without a
    normalisation, with rational weights proved degenerate and a rational condition constant ``c``. Structural
    only: the sandwich result's hypotheses are checked by the prover's checker after this (weights/concrete.py)."""
    import sympy as sp

    from ..theory.skips import skip_matrix

    try:
        library.provider("degenerate-sandwich"), library.provider("tropical-limit")
    except KeyError:
        return False
    q = block.question
    c = d.condition_constant
    if block.gated or q.bias_label != "none" or q.norm != "none" or not isinstance(c, sp.Expr) or not c.is_Rational:
        return False
    if _frac_rows(block.w_up) is None or _frac_rows(block.w_down) is None or _frac_rows(skip_matrix(block)) is None:
        return False
    from ..theory.hyp_sizes import nondegeneracy

    return not nondegeneracy(block.w_up, block.w_down)[0]  # nondegenerate weights: Theorem R's answer stands


def sandwich_inline(block: Any, d: Any, library: Any, attempt: Any) -> Any:
    """Degenerate inline weights under a σ with ``c ≠ 0`` and proved tropical slopes but no proved DI (the
    Lemma-T sandwich, the result providing ``degenerate-sandwich``): absorbable when Theorem D's pair-atom
    criterion holds for σ, not absorbable when Theorem D's criterion fails for the ReLU-like ``σ_∞``, else
    ``d`` unchanged. ``d`` is the derivation after the index-set search (its condition constant is ``c``);
    ``attempt``: the sandwich result's hypotheses (σ continuous, tropical slopes) checked on the block by the
    prover's checker; call it only where :func:`sandwich_applies`."""
    from dataclasses import replace

    import sympy as sp

    from ..theory.derivation import DerivationStep, HypStatus, Scope, Verdict
    from ..theory.skips import skip_matrix

    if not sandwich_applies(block, d, library):
        return d
    sid, tid = library.provider("degenerate-sandwich"), library.provider("tropical-limit")
    c = d.condition_constant
    w_up, w_down, skip = _frac_rows(block.w_up), _frac_rows(block.w_down), _frac_rows(skip_matrix(block))
    assert w_up is not None and w_down is not None and skip is not None  # sandwich_applies checked them
    checks = {x.name: x for x in attempt.checks} if attempt is not None else {}
    cont, trop = checks.get("continuous"), checks.get("tropical_slopes")
    if cont is None or trop is None or cont.status is not HypStatus.PROVED or trop.status is not HypStatus.PROVED:
        return d
    ap, am = trop.binding("alpha_plus"), trop.binding("alpha_minus")
    if not all(isinstance(x, sp.Expr) and x.is_Rational for x in (ap, am)):
        return d
    assert isinstance(ap, sp.Expr) and isinstance(am, sp.Expr)
    cf = Fraction(int(c.p), int(c.q))
    c_inf = (Fraction(int(ap.p), int(ap.q)) + Fraction(int(am.p), int(am.q))) / 2
    if c_inf != cf:
        return d  # cannot happen for σ(t) − σ(−t) = 2ct; decide nothing if it does
    sign0, _value0 = sigma_at_zero_sign(block)
    pairs = atoms_of(w_up, w_down, skip, cf, "dilates", sign0)
    width = len(w_up)
    steps = [*d.steps, DerivationStep(
        f"Hypotheses of [{sid}]: σ is continuous, $\\sigma(t) - \\sigma(-t) = 2c\\,t$ with $c = {sp.latex(c)}$, and "
        f"{trop.statement} ([{tid}]). Dilate independence is not proved, so [{sid}] brackets the answer between "
        "Theorem D's criteria for σ (pair atoms, sufficient) and for $\\sigma_\\infty$ (necessary).", (sid, tid),
        trop.evidence, kind="hypothesis")]
    if pairs.eps is not None:
        res = decide_width(pairs, width)
        if res.found:
            assert res.choice is not None
            built = witness_for(block, pairs, res.choice, width, w_up, w_down, skip, sign0 == 0)
            if built is not None:
                witness, verified = built
                steps.append(DerivationStep(
                    f"Pair atoms for σ: {describe_atoms(pairs)}; with $J = {_set(res.choice.doubled)}$ the count is "
                    f"${res.choice.width(pairs)} \\le m = {width}$. By [{sid}] (the sufficient half of Theorem D, which "
                    f"needs only $c \\ne 0$) these weights are absorbable; witness verified ({verified}).", (sid,),
                    kind="conclusion"))
                return replace(d, verdict=Verdict.ABSORBABLE, scope=Scope.THESE, steps=tuple(steps), witness=witness,
                               decided_by=sid, cited=tuple(dict.fromkeys([*d.cited, sid, tid])), **_sandwich_condition())
    lines = atoms_of(w_up, w_down, skip, c_inf, "homogeneous", 0)
    res_inf = decide_width(lines, width)
    if res_inf.found is False:
        steps.append(DerivationStep(
            f"For $\\sigma_\\infty(s) = \\alpha_+\\max(s,0) + \\alpha_-\\min(s,0)$, $\\alpha_\\pm = {sp.latex(ap)}, "
            f"{sp.latex(am)}$ (ReLU-like, line atoms): "
            f"{describe_atoms(lines)}; every independent $J$ fails: {certificate_text(res_inf.certificate)}. By [{tid}] "
            f"an absorbing σ-block would give one for $\\sigma_\\infty$ with the same matrices, so by [{sid}] these "
            "weights are not absorbable.", (sid, tid), kind="conclusion"))
        return replace(d, verdict=Verdict.NOT_ABSORBABLE, scope=Scope.THESE, steps=tuple(steps), decided_by=sid,
                       cited=tuple(dict.fromkeys([*d.cited, sid, tid])), **_sandwich_condition())
    why = ("the Lemma-T sandwich does not decide these weights: Theorem D's criterion for σ_∞ holds at width "
           f"{width} while the pair-atom criterion for σ " + ("does not" if pairs.eps is not None else
                                                              "cannot be evaluated (σ(0) undecided)")
           + " (dilate independence of σ is not proved)")
    if res_inf.found is None:
        why = f"the Lemma-T sandwich ran out of work: {res_inf.reason}"
    return replace(d, notes=(*d.notes, why), steps=(*d.steps, DerivationStep(f"Also: {why}.", (sid,))))


# ---- file weights (floats read as exact dyadic rationals) -----------------------------------------------

#: File blocks larger than this (m·d entries) stay on the index-set path (open for degenerate weights), saying so.
MAX_FILE_ENTRIES = 4096

#: The certificate kind of a Theorem D decision on file weights (re-derived by ``verify``).
CERT_KIND = "theorem-D"


def file_fractions(arr: Any) -> Mat:
    """A float array as exact rationals (every float is a dyadic rational)."""
    return [[Fraction(float(x)) for x in row] for row in arr.tolist()]


def theorem_d_id(library: Any) -> str | None:
    """The result whose concrete procedure decides any weights of one block (Theorem D's ``degenerate``), cited
    by what its procedure is, not by its name."""
    return next((r.id for r in library.results_with(lambda p: p.any_weights)), None)


def _condition_of(library: Any, rid: str) -> dict[str, Any]:
    c = library.get(rid).conclusion
    return {"condition": c.condition, "condition_plain": c.condition_plain, "sufficient": c.sufficient,
            "necessary": c.necessary, "condition_constant": None}


def degenerate_file(state: Any, fb: Any, library: Any) -> Any:
    """Theorem D on a file block whose weights were found degenerate exactly (``state.exact_nd``): a
    :class:`~.filedecide.FileDecision` with a ``theorem-D`` certificate, or None (the index-set path goes on)."""
    from dataclasses import replace

    import numpy as np

    from ..theory.checks import Subject
    from ..theory.derivation import DerivationStep, HypStatus, Verdict, Witness
    from ..theory.hyp_width import line_module
    from .certify import Certificate, Target
    from .filedecide import WITNESS_TOLERANCE, FileDecision, _weights_info, float_max_relative_error

    rid = theorem_d_id(library)
    block, w, extras, concrete = fb.block, fb.weights, fb.extras, fb.concrete
    q = concrete.question
    if rid is None or state.exact_nd is None or state.exact_nd.get("holds") or concrete.gated or w.w_gate is not None \
            or q.bias_label != "none" or q.norm != "none" or fb.projector is not None:
        return None
    m, dim = (int(x) for x in w.w_up.shape)
    steps = list(state.steps)
    derivation = state.derivation
    if m * dim > MAX_FILE_ENTRIES:
        return None  # the index-set path goes on (its open answer names the degeneracy)
    status, kind, c, _di = line_module(Subject(block=concrete))
    if status is not HypStatus.PROVED or c is None or not c.is_Rational:
        return None
    from ..theory.skips import skip_matrix

    skip = _frac_rows(skip_matrix(concrete))
    if skip is None:
        return None
    w_up, w_down = file_fractions(w.w_up), file_fractions(w.w_down)
    sign0, _value0 = sigma_at_zero_sign(concrete)
    a = atoms_of(w_up, w_down, skip, Fraction(int(c.p), int(c.q)), kind, sign0)
    steps.append(DerivationStep(
        f"The weights are degenerate ({state.exact_nd['reason']}), so [{rid}] decides them (hypotheses: ungated, "
        f"continuous, the line-module property with $c = {c}$, proved for σ). Its normal form on the weights' exact "
        f"values: {describe_atoms(a)}; $k = {a.k}$, $\\delta = {a.eps}$, $\\rho = {a.rho}$.", (rid,)))
    cert_base = Certificate(CERT_KIND, Target(dim, ()), method="Theorem D: exact search on the weights' rational "
                            "values", weights=_weights_info(block, w, extras), nondegenerate=state.exact_nd)
    if a.eps is None:
        return None
    res = decide_width(a, m)
    cited = tuple(dict.fromkeys([*derivation.cited, rid]))
    if res.found:
        assert res.choice is not None
        rows, cols = construct(a, res.choice, m)
        if not same_function(w_up, w_down, skip, rows, cols, a.c, kind, sign0 == 0):
            return None
        up = np.array([[float(x) for x in r] for r in rows])
        down = np.array([[float(x) for x in r] for r in cols])
        exact = all(Fraction(float(x)) == x for r in (*rows, *cols) for x in r)
        witness = replace(Witness((), up, down, None, description=DESCRIPTION),
                          names=(("W_up", w.keys[0]), ("W_down", w.keys[1])), dtype=w.dtype,
                          transpose=bool(block.weights.transpose))
        error = float_max_relative_error(concrete, w, witness)
        if not error <= WITNESS_TOLERANCE:
            return None
        verified = ("exact: equal normal forms (linear part, atom coefficients, constant) in rational arithmetic"
                    + ("" if exact else "; some witness entries are not float64 numbers and are rounded in the file")
                    + f"; numerically: max relative error {error:.2e} at 1,000 random points (float64)")
        steps.append(DerivationStep(
            f"By [{rid}] with $J = {_set(res.choice.doubled)}$: ${res.choice.width(a)} \\le m = {m}$. Witness verified "
            f"({verified}). Therefore these weights are absorbable.", (rid,), kind="conclusion"))
        cert = replace(cert_base, proof=f"J = {list(res.choice.doubled)}, signs {list(res.choice.signs)}, width "
                       f"{res.choice.width(a)} <= {m}")
        d2 = replace(derivation, verdict=Verdict.ABSORBABLE, scope="these weights", steps=tuple(steps), decided_by=rid,
                     source=library.get(rid).source, cited=cited, **_condition_of(library, rid),
                     witness=replace(witness, verified=verified), certificate=cert)
        return FileDecision(d2, w, state.nondeg, None, cert)
    if res.found is False:
        steps.append(DerivationStep(
            f"By [{rid}], every independent $J$ fails (exact ranks over $\\mathbb{{Q}}$): "
            f"{certificate_text(res.certificate)}. Therefore these weights are not absorbable.", (rid,),
            kind="conclusion"))
        cert = replace(cert_base, proof=f"k + eps = {a.k + a.eps}; every independent J fails at width {m} "
                       f"({len(res.certificate)} cases)")
        d2 = replace(derivation, verdict=Verdict.NOT_ABSORBABLE, scope="these weights", steps=tuple(steps),
                     decided_by=rid, source=library.get(rid).source, cited=cited, certificate=cert,
                     **_condition_of(library, rid))
        return FileDecision(d2, w, state.nondeg, None, cert)
    base = a.k + a.eps
    why = (f"{res.reason}; proved bounds: ${base} = k + \\delta \\le w^* \\le k + \\delta + 2d - \\rho = "
           f"{base + 2 * a.d - a.rho}$")
    steps.append(DerivationStep(f"So the question stays open for these weights: {why}.", (rid,), kind="conclusion"))
    d2 = replace(derivation, verdict=Verdict.OPEN, scope="these weights", steps=tuple(steps), cited=cited,
                 notes=(*derivation.notes, why))
    return FileDecision(d2, w, state.nondeg, None)
