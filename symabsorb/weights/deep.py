"""Deep bias-free ReLU stacks with concrete weights (MATH.md Part III, §14): exact procedures only.

* :func:`slopes_1d` / :func:`decide_1d` — Theorem 1D (``d = 1``): the slopes ``α = F(1)``, ``β = −F(−1)``
  evaluated exactly (every ReLU decided by the project's exact sign decision), the case's condition decided, the
  witness built and its slopes compared exactly with ``(α, β)``.
* :func:`fold_test` / :func:`decide_fold` — Theorem FA: in the order §14.5 gives (the widths, proved by the
  result's hypotheses; an invertible ``U_1[S,:]``; the signs of every later row on the images of the vertex
  rays; ``open`` beyond :data:`MAX_RAYS`), the witness, and an exact proof that the witness equals ``N R_1``.
* :func:`fd_certificate` — Theorem FD: exact X-regularity, points in every sector (``d = 2``), the exact
  Jacobian in ``(U, W)``, its rank modulo a prime (a lower bound, python-flint) or over Q, against Lemma F's
  general ``D_free``. It never decides the weights: its verdict stays ``open`` with the scope
  ``almost every weight near these``.

Weights are exact: inline rationals (SymPy) turned into :class:`fractions.Fraction`. Nothing here uses a float.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy as sp

from ..budget import check as budget_check
from ..model.block import Block, Stack
from ..theory.directions import line_key, ray_key
from ..theory.hyp_deep import d_free, profile
from ..theory.skips import is_stream_skip

__all__ = ["MAX_FD_ENTRIES", "MAX_RAYS", "FDCertificate", "FoldResult", "Layer", "fd_certificate", "fold_test",
           "layers_of", "one_layer_equal", "slopes_1d"]

Vec = list[Fraction]
Mat = list[list[Fraction]]

#: The fold test gives up (``open``) beyond this many vertex rays (at most ``2·C(m_1, d−1)``).
MAX_RAYS = 20_000
#: Theorem FD's certificate gives up beyond this many Jacobian entries (rows × columns).
MAX_FD_ENTRIES = 500_000


# ---- exact linear algebra over Q ------------------------------------------------------------------------------


def as_expr(value: object) -> sp.Expr:
    """A SymPy value as it is (entries of exact matrices, sums of them), a Python int or Fraction as a Rational;
    never text (no ``sympify``: nothing here parses)."""
    if isinstance(value, sp.Expr):
        return value
    if isinstance(value, int):
        return sp.Integer(value)
    if isinstance(value, Fraction):
        return sp.Rational(value.numerator, value.denominator)
    raise TypeError(f"not an exact number: {type(value).__name__}")


def _mat(m: Any) -> Mat | None:
    """A SymPy matrix of rationals as Fractions (None: some entry is not a rational number)."""
    out: Mat = []
    for i in range(m.rows):
        row = []
        for j in range(m.cols):
            v = m[i, j]
            if not getattr(v, "is_Rational", False):
                return None
            row.append(Fraction(int(v.p), int(v.q)))
        out.append(row)
    return out


def _matvec(a: Mat, x: Sequence[Fraction]) -> Vec:
    return [sum((r * v for r, v in zip(row, x, strict=True)), Fraction(0)) for row in a]


def _matmul(a: Mat, b: Mat) -> Mat:
    cols = list(zip(*b, strict=True)) if b else []
    return [[sum((x * y for x, y in zip(row, col, strict=True)), Fraction(0)) for col in cols] for row in a]


def _eye(n: int) -> Mat:
    return [[Fraction(int(i == j)) for j in range(n)] for i in range(n)]


def _relu(v: Fraction) -> Fraction:
    return v if v > 0 else Fraction(0)


def _rref_rank(rows: Mat) -> tuple[int, list[int]]:
    """The rank over Q and the indices of a maximal independent set of ``rows`` (greedy, in order)."""
    basis: list[tuple[int, Vec]] = []  # (pivot column, reduced row)
    chosen: list[int] = []
    for idx, row in enumerate(rows):
        budget_check()
        r = list(row)
        for col, b in basis:
            if r[col] != 0:
                f = r[col] / b[col]
                r = [x - f * y for x, y in zip(r, b, strict=True)]
        piv = next((j for j, x in enumerate(r) if x != 0), None)
        if piv is not None:
            basis.append((piv, r))
            chosen.append(idx)
    return len(basis), chosen


def _inverse(a: Mat) -> Mat | None:
    n = len(a)
    aug = [list(row) + _eye(n)[i] for i, row in enumerate(a)]
    for c in range(n):
        p = next((r for r in range(c, n) if aug[r][c] != 0), None)
        if p is None:
            return None
        aug[c], aug[p] = aug[p], aug[c]
        piv = aug[c][c]
        aug[c] = [x / piv for x in aug[c]]
        for r in range(n):
            if r != c and aug[r][c] != 0:
                f = aug[r][c]
                aug[r] = [x - f * y for x, y in zip(aug[r], aug[c], strict=True)]
    return [row[n:] for row in aug]


def _kernel_line(rows: Mat, d: int) -> Vec | None:
    """A nonzero vector spanning the kernel of ``rows`` (``d − 1`` rows of rank ``d − 1``), else None."""
    rank, _ = _rref_rank(rows)
    if rank != d - 1:
        return None
    # kernel by cofactors: v_i = (−1)^i det(rows without column i)
    v = []
    for i in range(d):
        minor = [[r[j] for j in range(d) if j != i] for r in rows]
        v.append((-1) ** i * _det(minor))
    return v if any(x != 0 for x in v) else None


def _det(a: Mat) -> Fraction:
    n = len(a)
    if n == 0:
        return Fraction(1)
    m = [list(r) for r in a]
    det = Fraction(1)
    for c in range(n):
        p = next((r for r in range(c, n) if m[r][c] != 0), None)
        if p is None:
            return Fraction(0)
        if p != c:
            m[c], m[p] = m[p], m[c]
            det = -det
        det *= m[c][c]
        for r in range(c + 1, n):
            if m[r][c] != 0:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c], strict=True)]
    return det


# ---- the stack as exact layers --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layer:
    """One residual block ``y ↦ M y + W relu(U y)`` in exact rationals."""

    m: Mat
    w: Mat
    u: Mat

    @property
    def width(self) -> int:
        return len(self.u)

    def __call__(self, y: Sequence[Fraction]) -> Vec:
        pre = _matvec(self.u, y)
        act = [_relu(p) for p in pre]
        lin = _matvec(self.m, y)
        out = _matvec(self.w, act)
        return [a + b for a, b in zip(lin, out, strict=True)]

    def piece(self, pattern: Sequence[int]) -> Mat:
        """``M + W D U`` for the 0/1 pattern ``D``."""
        d = len(self.m)
        return [[self.m[i][j] + sum((self.w[i][k] * pattern[k] * self.u[k][j] for k in range(self.width)),
                                    Fraction(0)) for j in range(d)] for i in range(d)]


def layers_of(stack: Stack) -> list[Layer] | None:
    """The stack's blocks (repeat unrolled) as exact layers; None unless every block has inline rational weights,
    a numeric dimension and a ``d × d`` skip."""
    from ..theory.skips import skip_matrix

    blocks, symbolic = profile(stack)
    if symbolic:
        return None
    out = []
    for b in blocks:
        if not b.has_inline_weights or is_stream_skip(b.skip):
            return None
        sk = skip_matrix(b)
        if sk is None:
            return None
        m, w, u = _mat(sk), _mat(b.w_down), _mat(b.w_up)
        if m is None or w is None or u is None:
            return None
        out.append(Layer(m, w, u))
    return out


# ---- Theorem 1D ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Slopes:
    alpha: sp.Expr | None
    beta: sp.Expr | None
    sign_alpha: int | None
    sign_beta: int | None
    how: str


def _eval_1d(blocks: Sequence[Block], t: int) -> tuple[sp.Expr | None, str]:
    """``F(t)`` exactly for a ``d = 1`` stack with inline (possibly irrational) weights: every ReLU decided by the
    exact sign decision; None (and why) when a sign is undecided."""
    from ..analysis.identity import exact_sign
    from ..theory.skips import skip_matrix

    y: sp.Expr = sp.Integer(t)
    for b in blocks:
        sk = skip_matrix(b)
        assert sk is not None and b.w_up is not None and b.w_down is not None
        total = sk[0, 0] * y
        for j in range(b.w_up.rows):
            pre = b.w_up[j, 0] * y
            s = exact_sign(as_expr(pre))
            if s is None:
                return None, f"the sign of a pre-activation of block {b.name} is not decided exactly"
            if s > 0:
                total += b.w_down[0, j] * pre
        y = total
    return y, ""


def slopes_1d(stack: Stack) -> Slopes:
    """``α = F(1)``, ``β = −F(−1)`` and their exact signs (None when undecided)."""
    from ..analysis.identity import exact_sign

    blocks, symbolic = profile(stack)
    if symbolic or not all(b.has_inline_weights for b in blocks):
        return Slopes(None, None, None, None, "the weights are not all inline")
    fp, why = _eval_1d(blocks, 1)
    fm, why2 = _eval_1d(blocks, -1)
    if fp is None or fm is None:
        return Slopes(None, None, None, None, why or why2)
    alpha, beta = fp, -fm
    return Slopes(alpha, beta, exact_sign(as_expr(alpha)), exact_sign(as_expr(beta)), "")


def _slope_pair_of_free(layers: Sequence[tuple[sp.Matrix, sp.Matrix]]) -> tuple[sp.Expr, sp.Expr] | None:
    """The slopes of a residual-free ``d = 1`` stack given as ``(W_up, W_down)`` pairs, exactly (None: a sign is
    undecided)."""
    from ..analysis.identity import exact_sign

    out = []
    for t in (1, -1):
        y: sp.Expr = sp.Integer(t)
        for up, down in layers:
            total: sp.Expr = sp.Integer(0)
            for j in range(up.rows):
                pre = up[j, 0] * y
                s = exact_sign(as_expr(pre))
                if s is None:
                    return None
                if s > 0:
                    total += down[0, j] * pre
            y = total
        out.append(y)
    return out[0], -out[1]


def witness_1d(widths: Sequence[int], sl: Slopes) -> list[tuple[sp.Matrix, sp.Matrix]] | None:
    """Theorem 1D's witness as ``(W_up, W_down)`` per block, or None when the construction does not apply (the
    condition fails). Block 1 realises ``(α, β)``; every later block passes the image: the identity (width ≥ 2) or
    ``s·relu(s t)`` on a half-line of sign ``s`` (one unit)."""
    a, b, sa, sb = sl.alpha, sl.beta, sl.sign_alpha, sl.sign_beta
    assert a is not None and b is not None and sa is not None and sb is not None
    out: list[tuple[sp.Matrix, sp.Matrix]] = []
    m1 = widths[0]
    up, down = sp.zeros(m1, 1), sp.zeros(1, m1)
    if m1 >= 2:
        up[0, 0], up[1, 0], down[0, 0], down[0, 1] = 1, -1, a, -b
    elif sb == 0:
        up[0, 0], down[0, 0] = 1, a
    elif sa == 0:
        up[0, 0], down[0, 0] = -1, -b
    else:
        return None
    out.append((up, down))
    signs = {s for s in (sa, -sb) if s != 0}  # the signs of the values of block 1 (t > 0: α t; t < 0: β t)
    for m in widths[1:]:
        up, down = sp.zeros(m, 1), sp.zeros(1, m)
        if len(signs) <= 1:
            s = next(iter(signs), 1)
            up[0, 0], down[0, 0] = s, s
        elif m >= 2:
            up[0, 0], up[1, 0], down[0, 0], down[0, 1] = 1, -1, 1, -1
        else:
            return None
        out.append((up, down))
    return out


# ---- Theorem FA: the fold test ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FoldResult:
    """``state``: ``"fold"`` (the condition holds), ``"no-fold"`` (a row takes both signs: the sufficient condition
    fails), ``"open"`` (rank ``U_1 < d``, too many rays, or not rational). ``strict``: every sign was strict."""

    state: str
    reason: str
    rays: int = 0
    strict: bool = False
    n: Mat | None = None
    s: tuple[int, ...] = ()
    wide: int = -1


def vertex_rays(u1: Mat, d: int) -> list[Vec] | None:
    """Both directions of every line that is the intersection of ``d − 1`` independent first-layer hyperplanes
    (None: more than :data:`MAX_RAYS`)."""
    rows = [r for r in u1 if any(x != 0 for x in r)]
    if 2 * math.comb(len(rows), d - 1) > MAX_RAYS:
        return None
    seen: dict[tuple[int, ...], Vec] = {}
    for subset in itertools.combinations(range(len(rows)), d - 1):
        budget_check()
        v = _kernel_line([rows[i] for i in subset], d)
        if v is None:
            continue
        key = line_key(v)
        if key not in seen:
            seen[key] = [Fraction(x) for x in key]
    out: list[Vec] = []
    for v in seen.values():
        out.extend((v, [-x for x in v]))
    return out


def fold_test(layers: Sequence[Layer]) -> FoldResult:
    """Theorem FA's condition, exactly, in §14.5's order: (2) an invertible ``U_1[S,:]``; (3) every row of every
    later block has one weak sign on the images of the vertex rays (then ``F = N R_1``, ``N = N_L⋯N_2``)."""
    d = len(layers[0].m)
    u1 = layers[0].u
    rank, chosen = _rref_rank(u1)
    if rank < d:
        return FoldResult("open", f"rank U_1 = {rank} < d = {d}: no invertible U_1[S,:], so Theorem FA's witness "
                                  "does not exist and the ray test is not exact")
    s = tuple(chosen[:d])
    rays = vertex_rays(u1, d)
    if rays is None:
        return FoldResult("open", f"more than {MAX_RAYS} vertex rays: beyond the budget of the fold test")
    images = [layers[0](r) for r in rays]
    n = _eye(d)
    strict = True
    for k, layer in enumerate(layers[1:], start=2):
        pattern = []
        for i, row in enumerate(layer.u):
            budget_check()
            signs = {(v > 0) - (v < 0) for v in (sum((a * b for a, b in zip(row, z, strict=True)), Fraction(0))
                                                 for z in images)}
            if 1 in signs and -1 in signs:
                return FoldResult("no-fold", f"row {i} of block {k} takes both signs on the image of the blocks before "
                                             "it (at the images of two vertex rays)", len(rays))
            if 0 in signs:
                strict = False
            pattern.append(1 if 1 in signs else 0)
        piece = layer.piece(pattern)
        images = [_matvec(piece, z) for z in images]
        n = _matmul(piece, n)
    return FoldResult("fold", "", len(rays), strict, n, s)


def _identity_block(d: int, width: int) -> tuple[Mat, Mat]:
    """``Σ_i e_i relu(x_i) − e_i relu(−x_i)`` with ``2d`` units, the rest zero: (W_up, W_down)."""
    up = [[Fraction(0)] * d for _ in range(width)]
    down = [[Fraction(0)] * width for _ in range(d)]
    for i in range(d):
        up[2 * i][i], up[2 * i + 1][i] = Fraction(1), Fraction(-1)
        down[i][2 * i], down[i][2 * i + 1] = Fraction(1), Fraction(-1)
    return up, down


def fold_witness(layers: Sequence[Layer], fold: FoldResult, widths: Sequence[int]) -> list[tuple[Mat, Mat]] | None:
    """Theorem FA's witness (W_up, W_down) per block: identities, and at the first later block of width
    ``≥ m_1 + d`` the block ``N R_1`` of width ``m_1 + d`` (padded with zero units)."""
    assert fold.n is not None
    d, first = len(layers[0].m), layers[0]
    m1 = first.width
    k = next((j for j in range(1, len(widths)) if widths[j] >= m1 + d), None)
    if k is None or m1 < 2 * d or any(w < 2 * d for w in widths):
        return None
    u_s = [first.u[i] for i in fold.s]
    inv = _inverse(u_s)
    assert inv is not None
    n, nm1 = fold.n, _matmul(fold.n, first.m)
    nw = _matmul(n, first.w)
    rows: list[Vec] = []
    cols: list[Vec] = []
    for j in range(m1):
        col = [nw[i][j] for i in range(d)]
        if j in fold.s:
            l_idx = fold.s.index(j)
            beta = [inv[i][l_idx] for i in range(d)]
            shift = _matvec(nm1, beta)
            rows.append(list(first.u[j]))
            cols.append([a + b for a, b in zip(col, shift, strict=True)])
            rows.append([-x for x in first.u[j]])
            cols.append([-x for x in shift])
        else:
            rows.append(list(first.u[j]))
            cols.append(col)
    width = widths[k]
    while len(rows) < width:
        rows.append([Fraction(0)] * d)
        cols.append([Fraction(0)] * d)
    wide = (rows, [[cols[j][i] for j in range(width)] for i in range(d)])
    return [wide if j == k else _identity_block(d, widths[j]) for j in range(len(widths))]


def one_layer_equal(lin_a: Mat, up_a: Mat, down_a: Mat, lin_b: Mat, up_b: Mat, down_b: Mat) -> bool:
    """Exactly whether ``x ↦ A x + V relu(P x)`` and ``x ↦ B x + V' relu(P' x)`` are the same function: with
    ``relu(t) = t/2 + |t|/2``, the linear parts and, per line ``p`` (primitive, up to sign), the coefficient vectors
    of ``|p·x|`` must agree (these functions and the linear ones are independent)."""
    d = len(lin_a)

    def parts(lin: Mat, up: Mat, down: Mat) -> tuple[Mat, dict[tuple[int, ...], Vec]]:
        linear = [list(r) for r in lin]
        even: dict[tuple[int, ...], Vec] = {}
        for j, row in enumerate(up):
            col = [down[i][j] for i in range(d)]
            if all(x == 0 for x in row) or all(x == 0 for x in col):
                continue
            for i in range(d):
                for c in range(d):
                    linear[i][c] += col[i] * row[c] / 2
            key = line_key(row)
            lead = next(x for x in row if x != 0)
            kint = next(x for x in key if x != 0)
            scale = abs(lead / kint)  # |row·x| = scale·|key·x|
            acc = even.setdefault(key, [Fraction(0)] * d)
            for i in range(d):
                acc[i] += col[i] * scale / 2
        return linear, {k: v for k, v in even.items() if any(x != 0 for x in v)}

    la, ea = parts(lin_a, up_a, down_a)
    lb, eb = parts(lin_b, up_b, down_b)
    return la == lb and ea == eb


def check_fold_witness(layers: Sequence[Layer], fold: FoldResult, witness: Sequence[tuple[Mat, Mat]]) -> bool:
    """Exactly: every witness block but one is the identity and that one equals ``N R_1`` (with the fold condition,
    proved separately, ``F = N R_1``, so the witness stack equals ``F``)."""
    assert fold.n is not None
    d = len(layers[0].m)
    zero = [[Fraction(0)] * d for _ in range(d)]
    first = layers[0]
    n = fold.n
    target_lin = _matmul(n, first.m)
    target_down = _matmul(n, first.w)
    others = 0
    matched = False
    for up, down in witness:
        if one_layer_equal(zero, up, down, _eye(d), [], [[] for _ in range(d)]):
            others += 1
            continue
        if not matched and one_layer_equal(zero, up, down, target_lin, first.u, target_down):
            matched = True
            continue
        return False
    if matched:
        return others == len(witness) - 1
    # N R_1 may itself be the identity (then every block is)
    return one_layer_equal(zero, [], [[] for _ in range(d)], target_lin, first.u, target_down)


# ---- Theorem FD: the certificate ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FDCertificate:
    """The outcome: ``rank`` (a lower bound of fdim: exact over Q, or modulo ``prime``), ``d_free`` (Lemma F, general
    formula), the points ``X``, whether every sector got ``d`` points (``d = 2``), and ``certified = rank > d_free``."""

    rank: int
    d_free: int
    d_res: int
    points: tuple[tuple[Fraction, ...], ...]
    prime: int | None
    sectors: int | None
    certified: bool
    columns: int
    reason: str = ""


def _forward(layers: Sequence[Layer], x: Sequence[Fraction]) -> tuple[list[Vec], list[Vec], bool]:
    """Inputs ``y_k`` and pre-activations per block at ``x``; False when some pre-activation is 0 (not X-regular)."""
    ys, pres = [], []
    y = list(x)
    regular = True
    for layer in layers:
        pre = _matvec(layer.u, y)
        if any(p == 0 for p in pre):
            regular = False
        ys.append(y)
        pres.append(pre)
        y = layer(y)
    return ys, pres, regular


def jacobian_rows(layers: Sequence[Layer], x: Sequence[Fraction]) -> list[Vec] | None:
    """The ``d`` rows of ``∂F(x)/∂(U_k, W_k)_k`` (columns: per block, ``W_k`` by column then ``U_k`` by row), exactly;
    None when ``x`` is not regular."""
    d = len(layers[0].m)
    ys, pres, regular = _forward(layers, x)
    if not regular:
        return None
    pats = [[1 if p > 0 else 0 for p in pre] for pre in pres]
    jac = [layer.piece(pat) for layer, pat in zip(layers, pats, strict=True)]
    big_l = len(layers)
    s_after: list[Mat] = [None] * big_l  # type: ignore[list-item]
    s = _eye(d)
    for k in range(big_l - 1, -1, -1):
        s_after[k] = s
        s = _matmul(s, jac[k])
    rows: list[Vec] = [[] for _ in range(d)]
    for k, layer in enumerate(layers):
        sk = s_after[k]
        act = [_relu(p) for p in pres[k]]
        for j in range(layer.width):  # ∂F/∂W_k[i, j] = S_k[:, i] relu(pre_j)
            for i in range(d):
                for r in range(d):
                    rows[r].append(sk[r][i] * act[j])
        for j in range(layer.width):  # ∂F/∂U_k[j, i] = S_k W_k[:, j] 1[pre_j > 0] y_k[i]
            col = [layer.w[i][j] for i in range(d)]
            sw = _matvec(sk, col) if pats[k][j] else [Fraction(0)] * d
            for i in range(d):
                for r in range(d):
                    rows[r].append(sw[r] * ys[k][i])
    return rows


def _angle_key(v: Sequence[Fraction]) -> tuple[int, Fraction]:
    """An exact sort key of the direction of a nonzero 2-vector by angle in [0, 2π)."""
    x, y = v
    if y > 0 or (y == 0 and x > 0):
        half = 0
    else:
        half = 1
    # within a half-plane the angle increases with −x/|(x, y)|; compare by cotangent-like exact ratio
    if half == 0:
        return (0, -x / (abs(x) + abs(y)))
    return (1, x / (abs(x) + abs(y)))


def sector_points(layers: Sequence[Layer]) -> tuple[list[Vec], int] | None:
    """``d = 2``: the kink rays of every layer (found exactly, sector by sector) with the axes added, and two
    independent points inside every sector between consecutive rays; None beyond the budget."""
    rays: dict[tuple[int, ...], Vec] = {}

    def add(v: Sequence[Fraction]) -> None:
        if any(x != 0 for x in v):
            key = ray_key(v)
            rays.setdefault(key, [Fraction(x) for x in key])

    for v in ([1, 0], [0, 1], [-1, 0], [0, -1]):
        add([Fraction(x) for x in v])
    for row in layers[0].u:
        if any(x != 0 for x in row):
            add([-row[1], row[0]])
            add([row[1], -row[0]])
    for k in range(1, len(layers)):
        ordered = sorted(rays.values(), key=_angle_key)
        for a, b in zip(ordered, ordered[1:] + ordered[:1], strict=True):
            budget_check()
            if len(rays) > MAX_RAYS:
                return None
            # the composite of layers < k is linear on the closed sector [a, b]: evaluate at the ends
            ya, yb = a, b
            for layer in layers[:k]:
                ya, yb = layer(ya), layer(yb)
            for row in layers[k].u:
                pa = sum((r * v for r, v in zip(row, ya, strict=True)), Fraction(0))
                pb = sum((r * v for r, v in zip(row, yb, strict=True)), Fraction(0))
                if (pa > 0 and pb < 0) or (pa < 0 and pb > 0):
                    s = pa / (pa - pb)
                    add([(1 - s) * p + s * q for p, q in zip(a, b, strict=True)])
    ordered = sorted(rays.values(), key=_angle_key)
    points: list[Vec] = []
    for a, b in zip(ordered, ordered[1:] + ordered[:1], strict=True):
        points.append([2 * p + q for p, q in zip(a, b, strict=True)])
        points.append([p + 2 * q for p, q in zip(a, b, strict=True)])
    return points, len(ordered)


def _lcg_points(d: int, count: int) -> list[Vec]:
    """Deterministic rational points (a fixed linear congruential sequence), for ``d ≥ 3``."""
    state = 12345
    out: list[Vec] = []
    for _ in range(count):
        v = []
        for _ in range(d):
            state = (1103515245 * state + 12345) % 2**31
            v.append(Fraction(state % 2001 - 1000, 97 + state % 13))
        out.append(v)
    return out


_PRIMES = (2_305_843_009_213_693_951, 1_000_000_007, 998_244_353)


def _rank_mod_p(rows: Sequence[Vec]) -> tuple[int, int | None]:
    """The rank modulo a large prime with python-flint (a lower bound of the rank over Q), or over Q without it."""
    try:
        import flint
    except ImportError:
        rank, _ = _rref_rank(list(rows))
        return rank, None
    ncols = len(rows[0]) if rows else 0
    for p in _PRIMES:
        if any(x.denominator % p == 0 for row in rows for x in row):
            continue
        mat = flint.nmod_mat(len(rows), ncols, [int(x.numerator * pow(x.denominator, -1, p) % p)
                                                 for row in rows for x in row], p)
        return int(mat.rank()), p
    rank, _ = _rref_rank(list(rows))
    return rank, None


def fd_certificate(layers: Sequence[Layer]) -> FDCertificate:
    """Theorem FD's certificate for a bias-free ReLU stack with exact rational weights (never decides the weights)."""
    from ..theory.hyp_deep import d_res

    d = len(layers[0].m)
    widths = [layer.width for layer in layers]
    free = d_free(d, widths)
    res = d_res(d, widths)
    columns = 2 * d * sum(widths)
    sectors = None
    if d == 2:
        found = sector_points(layers)
        if found is None:
            return FDCertificate(0, free, res, (), None, None, False, columns, "too many sectors for the budget")
        points, sectors = found
    else:
        points = _lcg_points(d, max(columns // d + 2 * d, d + 1))
    if len(points) * d * columns > MAX_FD_ENTRIES:
        return FDCertificate(0, free, res, (), None, sectors, False, columns,
                             f"the Jacobian would have {len(points) * d * columns} entries (more than {MAX_FD_ENTRIES})")
    rows: list[Vec] = []
    used: list[tuple[Fraction, ...]] = []
    for x in points:
        budget_check()
        r = jacobian_rows(layers, x)
        if r is None:  # a pre-activation is 0 there (e.g. identically 0 on a sector): the point is left out, which
            continue     # only lowers the rank (every X-regular set gives a lower bound of fdim)
        rows.extend(r)
        used.append(tuple(x))
    if not rows:
        return FDCertificate(0, free, res, (), None, sectors, False, columns, "no X-regular point")
    rank, prime = _rank_mod_p(rows)
    return FDCertificate(rank, free, res, tuple(used), prime, sectors, rank > free, columns)
