"""The `width` query by Theorem W (MATH §11): for an ungated, continuous σ with the line-module
property (LM), bias-free, no normalisation, the exact minimal width on nondegenerate concrete weights
(the ``3^m`` enumeration below a work cap), proved bounds above it, and the generic values for
symbolic blocks. Every bound that is printed is proved; the upper one comes with a witness.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import sympy as sp

from ..model.block import Block
from ..theory.derivation import DerivationStep, HypStatus, Scope, Witness
from ..theory.library import Library
from ..theory.proof import Attempt
from ..theory.skips import is_stream_skip
from ..theory.widthexact import (
    WORK_CAP,
    Labelling,
    certify_invertible,
    construct,
    enumerate_width,
    enumeration_work,
    exact_rank_q,
    labelling_width,
    min_rank_over_s,
    modular_rank_lower,
    sigma_min_sq_lower,
)

__all__ = ["TheoremW", "theorem_w"]


@dataclass(frozen=True)
class TheoremW:
    upper: int | sp.Expr | None
    lower: int | sp.Expr | None
    scope: str  # of both bounds: "these weights" (concrete) or "generic weights" (symbolic)
    steps: tuple[DerivationStep, ...]
    witness: Witness | None = None
    result: str = ""


def _fmt(s: tuple[int, ...]) -> str:
    return "\\{" + ", ".join(map(str, s)) + "\\}" if s else "\\emptyset"


def _fractions(m: sp.MatrixBase) -> list[list[Fraction]] | None:
    if not all(x.is_Rational for x in m):
        return None
    return [[Fraction(int(x.p), int(x.q)) for x in row] for row in m.tolist()]


def _applies(attempt: Attempt | None, rid: str) -> tuple[bool, list[DerivationStep], Any]:
    """Whether every hypothesis of Theorem W except nondegeneracy is proved (``attempt``: checked by the prover,
    None when the result does not cover the block's setting), with the steps; ``c``."""
    if attempt is None or attempt.result.id != rid:
        return False, [], None
    checked = [h for h in attempt.result.hypotheses if h.name != "nondegenerate"]
    if len(attempt.checks) != len(checked):
        return False, [], None  # a hypothesis failed (the checker stopped there)
    steps: list[DerivationStep] = []
    c = None
    for hc in attempt.checks:
        if hc.status is not HypStatus.PROVED:
            return False, [], None
        c = hc.binding("c") if hc.binding("c") is not None else c
        steps.append(DerivationStep(f"Hypothesis of [{rid}]: {hc.statement} — proved.", (rid,), hc.evidence,
                                    kind="hypothesis"))
    return c is not None, steps, c


def theorem_w(block: Block, attempt: Attempt | None, library: Library, base_verdict_not_at_m: bool,
              base_dir: str | None = None) -> TheoremW | None:
    """Theorem W's answer, or None when it does not apply (a hypothesis not proved, biases, a
    normalisation, a gated block, degenerate or irrational weights): the caller's bounds then stand."""
    try:
        rid = library.provider("width-exact")
    except KeyError:
        return None
    ok, steps, c = _applies(attempt, rid)
    if not ok:
        return None
    if block.w_up is not None and block.w_down is not None:
        w_up, w_down = _fractions(block.w_up), _fractions(block.w_down)
        if w_up is None or w_down is None or not c.is_Rational:
            return None
        return _concrete(block, w_up, w_down, Fraction(int(c.p), int(c.q)), steps, rid, library, None)
    if block.weights is not None and base_dir is not None:
        return _file(block, Fraction(int(c.p), int(c.q)) if c.is_Rational else None, steps, rid, library,
                     base_verdict_not_at_m, base_dir)
    return _generic(block, steps, rid)


# ---- concrete exact weights ---------------------------------------------------------------------------


def _skip_fractions(block: Block, d: int) -> list[list[Fraction]] | None:
    from ..theory.skips import skip_matrix

    skip = skip_matrix(replace(block, dim=d // (block.skip.n or 1) if is_stream_skip(block.skip) else d))
    if skip is None:
        return None
    return _fractions(skip)


def _nondegenerate(w_up: list[list[Fraction]], w_down: list[list[Fraction]]) -> tuple[bool, str]:
    from ..theory.hyp_sizes import nondegeneracy

    return nondegeneracy(sp.Matrix(w_up), sp.Matrix(w_down))


def _concrete(block: Block, w_up: list[list[Fraction]], w_down: list[list[Fraction]], c: Fraction,
              steps: list[DerivationStep], rid: str, library: Library, file_witness: Any) -> TheoremW | None:
    m, d = len(w_up), len(w_up[0]) if w_up else 0
    skip = _skip_fractions(block, d)
    if skip is None or m == 0:
        return None
    ok, reason = _nondegenerate(w_up, w_down)
    if not ok:
        steps.append(DerivationStep(f"Hypothesis of [{rid}]: the block is nondegenerate — refuted ({reason}): no "
                                    "exact width is claimed.", (rid,), kind="hypothesis"))
        return None
    steps.append(DerivationStep(f"Hypothesis of [{rid}]: the block is nondegenerate — checked exactly on these "
                                f"weights: {reason}.", (rid,), kind="hypothesis"))
    found = enumerate_width(w_up, w_down, skip, c)
    if found is not None:
        lab, min_rank_n = found
        w = lab.width(m)
        steps.append(DerivationStep(
            f"By [{rid}], $w^* = m + \\min_{{S \\cap J = \\emptyset}} [\\,|J| + 2\\operatorname{{rank}}((M + 2c\\,W_S)\\Pi_J)]$: "
            f"all $3^{{{m}}}$ labellings enumerated with exact ranks over $\\mathbb{{Q}}$ (work "
            f"${enumeration_work(m, d)} \\le {WORK_CAP}$). The least is $S = {_fmt(lab.flipped)}$, "
            f"$J = {_fmt(lab.doubled)}$, $\\operatorname{{rank}}((M + 2c\\,W_S)\\Pi_J) = {lab.extra}$: "
            f"$w^* = {m} + {len(lab.doubled)} + 2 \\cdot {lab.extra} = {w}$ "
            f"($\\min_S \\operatorname{{rank}}(M + 2c\\,W_S) = {min_rank_n}$).", (rid,)))
        witness = _witness(block, w_up, w_down, skip, c, lab, rid, steps)
        if witness is None:
            return None
        return TheoremW(w, w, Scope.THESE, tuple(steps), witness, rid)
    # large m: the bounds
    r_up = exact_rank_q(w_up, d)
    r_m = exact_rank_q(skip, d)
    pairs, lines = library.provider("width-pairs"), library.provider("width-lines")
    if 2 * r_m <= 2 * d - r_up:
        lab = Labelling((), (), r_m)
        how = f"$S = J = \\emptyset$: $m + 2\\operatorname{{rank}} M = {m} + 2 \\cdot {r_m}$ ([{pairs}])"
    else:
        basis = _independent_rows(w_up, d)
        lab = labelling_width(w_up, w_down, skip, c, (), basis)
        how = (f"$S = \\emptyset$, $J = {_fmt(tuple(basis))}$ ({r_up} independent rows): "
               f"$m + 2d - \\operatorname{{rank}} W_{{\\mathrm{{up}}}} = {m} + {2 * d} - {r_up}$ ([{pairs}])")
    upper = lab.width(m)
    steps.append(DerivationStep(
        f"The $3^{{{m}}}$ labellings exceed the work cap ({WORK_CAP}). Upper bound by [{rid}]: {how}; exact ranks "
        f"over $\\mathbb{{Q}}$ ($\\operatorname{{rank}} M = {r_m}$, $\\operatorname{{rank}} W_{{\\mathrm{{up}}}} = {r_up}$): "
        f"$w^* \\le {upper}$.", (rid, pairs)))
    min_n = min_rank_over_s(w_up, w_down, skip, c)
    if min_n is not None:
        lower = m + min_n
        steps.append(DerivationStep(
            f"Lower bound by [{rid}]: $w^* \\ge m + \\min_S \\operatorname{{rank}}(M + 2c\\,W_S) = {m} + {min_n}$ (all "
            f"$2^{{{m}}}$ sets, exact ranks).", (rid,)))
    else:
        r_down = exact_rank_q([list(r) for r in zip(*w_down, strict=True)], d)
        weak = max(0, r_m - min(r_up, r_down))
        lower = m + weak
        steps.append(DerivationStep(
            f"Lower bound by [{rid}] and [{lines}]: $\\operatorname{{rank}}(M + 2c\\,W_S) \\ge \\operatorname{{rank}} M - "
            f"\\min(\\operatorname{{rank}} W_{{\\mathrm{{down}}}}, \\operatorname{{rank}} W_{{\\mathrm{{up}}}}) = {r_m} - "
            f"\\min({r_down}, {r_up})$ (the exact $\\min_S$ over $2^{{{m}}}$ sets exceeds the work cap): "
            f"$w^* \\ge {lower}$.", (rid, lines)))
    smin = sigma_min_sq_lower(skip)
    inv_ok, inv_text = certify_invertible(w_up, w_down, c, smin)
    if inv_ok:
        exact = m + 2 * d - r_up
        lower = max(lower, exact)
        steps.append(DerivationStep(
            f"Every $M + 2c\\,W_S$ is invertible ([{rid}], Weyl): {inv_text}; so $w^* = m + 2d - "
            f"\\operatorname{{rank}} W_{{\\mathrm{{up}}}} = {exact}$.", (rid,)))
    witness = _witness(block, w_up, w_down, skip, c, lab, rid, steps)
    if witness is None:
        return None
    return TheoremW(upper, lower, Scope.THESE, tuple(steps), witness, rid)


def _independent_rows(w_up: list[list[Fraction]], d: int) -> list[int]:
    chosen: list[int] = []
    rank = 0
    for i, row in enumerate(w_up):
        if exact_rank_q([w_up[k] for k in chosen] + [row], d) > rank:
            chosen.append(i)
            rank += 1
            if rank == d:
                break
    return chosen


def _witness(block: Block, w_up: list[list[Fraction]], w_down: list[list[Fraction]], skip: list[list[Fraction]],
             c: Fraction, lab: Labelling, rid: str, steps: list[DerivationStep]) -> Witness | None:
    from .witness import check_witness

    rows, cols = construct(w_up, w_down, skip, c, lab)
    witness = Witness(lab.flipped, sp.ImmutableMatrix(rows), sp.ImmutableMatrix(cols))
    concrete = replace(block, w_up=sp.ImmutableMatrix(w_up), w_down=sp.ImmutableMatrix(w_down),
                       dim=len(skip) // (block.skip.n or 1) if is_stream_skip(block.skip) else len(skip),
                       width=len(w_up), weights=None)
    result = check_witness(concrete, witness, points=100)
    if not result.error <= (0 if result.exact else 1e-12):  # enclosures: an upper bound, cancellation in σ
        from ..errors import InternalError

        raise InternalError(f"the width witness failed its check ({result.text()})")
    steps.append(DerivationStep(
        f"Witness of width {len(rows)} ([{rid}]'s construction): the rows of $S$ negated, for each $i \\in J$ the "
        "column $a_i + \\beta_i/(2c)$ and a unit $(-w_i, -\\beta_i/(2c))$, a pair $\\pm(u_k/2c)\\,\\sigma(\\pm v_k^\\top x)$ "
        f"per rank-one term of $(M + 2c\\,W_S)\\Pi_J$; checked: {result.text()}.", (rid,)))
    return replace(witness, verified=result.text())


# ---- file weights -------------------------------------------------------------------------------------


def _file(block: Block, c: Fraction | None, steps: list[DerivationStep], rid: str, library: Library,
          not_at_m: bool, base_dir: str) -> TheoremW | None:
    from .certify import exact_nondegeneracy
    from .io import load_block_weights
    from .layers import block_fields, load_layer_extras

    assert block.weights is not None
    if c is None:
        return None
    w = load_block_weights(block.weights, Path(base_dir), False)
    m, d = w.w_up.shape
    if is_stream_skip(block.skip):
        return None
    extras = load_layer_extras(block, (m, d), Path(base_dir))
    concrete = replace(block, dim=d, width=m, **block_fields(extras))
    q = concrete.question
    if not library.get(rid).admits(q.bias_label, q.norm):
        steps.append(DerivationStep(f"The weight file carries biases: [{rid}] (bias-free) does not apply.", (rid,)))
        return None
    steps.append(DerivationStep(f"Weights from `{Path(w.file).name}` (dtype {w.dtype}): $d = {d}$, $m = {m}$; every "
                                "entry an exact dyadic rational.", kind="setting"))
    nd = exact_nondegeneracy(w.w_up, w.w_down)
    if not nd["holds"]:
        steps.append(DerivationStep(f"Hypothesis of [{rid}]: the block is nondegenerate — refuted ({nd['reason']}): no "
                                    "exact width is claimed.", (rid,), kind="hypothesis"))
        return None
    if enumeration_work(m, d) <= WORK_CAP:
        as_q = [[Fraction(float(x)) for x in row] for row in w.w_up.tolist()]
        down_q = [[Fraction(float(x)) for x in row] for row in w.w_down.tolist()]
        return _concrete(concrete, as_q, down_q, c, steps, rid, library, None)
    steps.append(DerivationStep(f"Hypothesis of [{rid}]: the block is nondegenerate — checked exactly on these "
                                f"weights: {nd['reason']}.", (rid,), kind="hypothesis"))
    skip = _skip_fractions(concrete, d)
    if skip is None:
        return None
    r_m = exact_rank_q(skip, d)
    r_up_low = modular_rank_lower(w.w_up)
    pairs, lines = library.provider("width-pairs"), library.provider("width-lines")
    full = min(m, d)
    # the J construction needs d independent rows (found modulo p); else the pairs of [width-pairs]
    use_pairs = 2 * r_m <= 2 * d - r_up_low or r_up_low < d
    upper = m + (2 * r_m if use_pairs else 2 * d - r_up_low)
    exact_text = "exact: the largest possible" if r_up_low == full else "a lower bound of the rank over Q"
    steps.append(DerivationStep(
        f"Upper bound by [{rid}]: $w^* \\le m + \\min(2\\operatorname{{rank}} M, 2d - \\operatorname{{rank}} "
        f"W_{{\\mathrm{{up}}}}) = {upper}$ with $\\operatorname{{rank}} M = {r_m}$ (exact) and "
        f"$\\operatorname{{rank}} W_{{\\mathrm{{up}}}} \\ge {r_up_low}$ (rank modulo the prime {2147483629} of the exact "
        f"integer multiple: a nonzero minor mod $p$ is one over $\\mathbb{{Q}}$; {exact_text}) ([{pairs}]).", (rid, pairs)))
    lower = m + (1 if not_at_m else 0)
    weak = max(0, r_m - full)
    lower = max(lower, m + weak)
    steps.append(DerivationStep(
        f"Lower bound: every line of $B$ needs a unit ([{lines}])" + (", and width $m$ is ruled out by the decision "
                                                                      "of the block" if not_at_m else "")
        + (f"; $\\operatorname{{rank}}(M + 2c\\,W_S) \\ge \\operatorname{{rank}} M - \\min(m, d) = {weak}$" if weak else "")
        + f" ([{rid}]): $w^* \\ge {lower}$ (the exact minimum over the $3^{{{m}}}$ labellings exceeds the work cap).",
        (rid, lines)))
    smin = sigma_min_sq_lower(skip)
    inv_ok, inv_text = certify_invertible(w.w_up, w.w_down, c, smin)
    if inv_ok:
        lower = max(lower, m + 2 * d - full)
        steps.append(DerivationStep(
            f"Every $M + 2c\\,W_S$ is invertible ([{rid}], Weyl): {inv_text}; so $w^* = m + 2d - "
            f"\\operatorname{{rank}} W_{{\\mathrm{{up}}}} \\ge {m + 2 * d - full}$.", (rid,)))
    else:
        steps.append(DerivationStep(f"The invertibility certificate of [{rid}] fails: {inv_text}.", (rid,)))
    witness = _file_witness(concrete, w, skip, c, use_pairs, rid, steps)
    if witness is None:
        return TheoremW(None, lower, Scope.THESE, tuple(steps), None, rid)
    return TheoremW(upper, lower, Scope.THESE, tuple(steps), witness, rid)


def _file_witness(block: Block, w: Any, skip: list[list[Fraction]], c: Fraction, use_pairs: bool, rid: str,
                  steps: list[DerivationStep]) -> Witness | None:
    """The upper bound's construction in float64 (pairs for a rank decomposition of M; or ``J`` = a set
    of independent rows found modulo p, ``β = M W_J⁻¹``), checked numerically like every file witness."""
    import numpy as np

    from .filedecide import WITNESS_TOLERANCE, float_max_relative_error

    d = w.w_up.shape[1]
    two_c = float(2 * c)
    mat = np.array([[float(x) for x in row] for row in skip])
    ups, downs = [w.w_up], [w.w_down]
    if use_pairs:
        from ..theory.widthexact import _fmpq_mat, _to_fractions

        rref, rank = _fmpq_mat(skip, d).rref()
        r_rows = _to_fractions(rref)[:rank]
        pivots = [next(k for k, x in enumerate(row) if x != 0) for row in r_rows]
        v = np.array([[float(x) for x in row] for row in r_rows]).reshape(rank, d)
        u = mat[:, pivots] / two_c
        ups += [v, -v]
        downs += [u, -u]
        how = f"a pair of units per term of a rank decomposition of $M$ ({rank} pairs)"
    else:
        rows = _independent_rows_mod_p(w.w_up, d)
        if rows is None:
            return None
        wj = w.w_up[rows]
        beta = np.linalg.solve(wj.T, mat.T).T  # β W_J = M
        new_down = w.w_down.copy()
        new_down[:, rows] += beta / two_c
        downs = [new_down, -beta / two_c]
        ups = [w.w_up, -wj]
        how = f"a second unit on each of {d} independent lines (found modulo p), $\\beta = M W_J^{{-1}}$ in float64"
    witness = Witness((), np.vstack(ups), np.hstack(downs))
    err = float_max_relative_error(block, w, witness, skip=mat)
    if not err <= WITNESS_TOLERANCE:
        steps.append(DerivationStep(f"The float64 witness of the upper bound measured error {err:.2e} > "
                                    f"{WITNESS_TOLERANCE}: no witness is given.", (rid,)))
        return None
    text = f"max relative error {err:.2e} at 1000 random points (float64)"
    steps.append(DerivationStep(f"Witness of width {witness.w_up.shape[0]} ([{rid}]'s construction): {how}; checked: "
                                f"{text}.", (rid,)))
    return replace(witness, verified=text, names=(), dtype=w.dtype)


def _independent_rows_mod_p(w_up: Any, d: int) -> list[int] | None:
    """``d`` rows of ``W_up`` independent over Q (independent modulo p), or None."""
    import flint
    import numpy as np

    from ..theory.widthexact import PRIME, _dyadic_parts

    mant, expo = _dyadic_parts(w_up.T)
    nonzero = mant != 0
    low = int(expo[nonzero].min()) if nonzero.any() else 0
    shift = np.where(nonzero, expo - low, 0)
    pow2 = np.array([pow(2, k, PRIME) for k in range(int(shift.max()) + 1)], dtype=np.uint64)
    residues = (np.mod(mant, PRIME).astype(np.uint64) * pow2[shift]) % np.uint64(PRIME)
    mat = flint.nmod_mat(d, w_up.shape[0], [int(v) for v in residues.ravel()], PRIME)
    rref, rank = mat.rref()
    if rank < d:
        return None
    pivots = []
    for i in range(rank):
        for k in range(w_up.shape[0]):
            if int(rref[i, k]) != 0:
                pivots.append(k)
                break
    return pivots


# ---- symbolic blocks: generic weights -------------------------------------------------------------------


def _generic(block: Block, steps: list[DerivationStep], rid: str) -> TheoremW | None:
    from ..theory.skips import skip_invertible, skip_rank

    m, d = block.width, block.stream_dim
    if is_stream_skip(block.skip):
        return None
    rank, how = skip_rank(block)
    if rank is None:
        return None
    # nondegenerate weights exist (and are generic) iff d >= 2 or m = 1: with d = 1 and m >= 2 every row
    # pair is collinear, and a claim "for generic weights" would be about no weights at all
    d_num = int(d) if isinstance(d, int) or getattr(d, "is_Integer", False) else None
    m_num = int(m) if isinstance(m, int) or getattr(m, "is_Integer", False) else None
    if d_num == 1 and m_num != 1:
        return None
    if d_num is None and sp.Ge(d, 2) is not sp.true:
        steps.append(DerivationStep("The generic values below are claimed for $d \\ge 2$ (for $d = 1$, $m \\ge 2$ no "
                                    "weights are nondegenerate).", (rid,)))
    if skip_invertible(block.skip):
        w = sp.Max(m, d) + d if not (isinstance(m, int) and isinstance(d, int)) else max(m, d) + d
        steps.append(DerivationStep(
            f"$M$ is invertible ({how}). For generic weights every $M + 2c\\,W_S$ is invertible (its determinant is a "
            f"polynomial in the weights, nonzero at $W = 0$, for each of the finitely many $S$) and "
            f"$\\operatorname{{rank}} W_{{\\mathrm{{up}}}} = \\min(m, d)$; by [{rid}], $w^* = m + 2d - \\min(m, d)$: "
            f"$m + d$ for $m \\ge d$, $2d$ for $m < d$; here $w^* = {sp.latex(w) if isinstance(w, sp.Basic) else w}$ "
            "(generic weights: outside a Lebesgue-null set; nondegenerate weights are generic).", (rid,)))
        return TheoremW(w, w, Scope.GENERIC, tuple(steps), None, rid)
    if isinstance(rank, int) and rank == 0:
        w0 = m
        steps.append(DerivationStep(f"$M = 0$: $B$ itself is residual-free, and by [{rid}] $w^* = m$ (nondegenerate "
                                    "weights: every line needs a unit).", (rid,)))
        return TheoremW(w0, w0, Scope.NONDEGENERATE, tuple(steps), None, rid)
    if isinstance(m, int) and isinstance(d, int) and isinstance(rank, int) and m >= d:
        w = m + min(2 * rank, d)
        steps.append(DerivationStep(
            f"$M$ is singular of rank $r = {rank}$ ({how}) and $m \\ge d$: for generic weights, by [{rid}], "
            f"$w^* = m + \\min(2r, d) = {w}$ (generic weights: outside a Lebesgue-null set).", (rid,)))
        return TheoremW(w, w, Scope.GENERIC, tuple(steps), None, rid)
    return None
