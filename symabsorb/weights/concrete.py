"""The concrete-weights procedures: one derivation, proved once, refined for the block's weights.

The answer layer (:mod:`symabsorb.answer`, the only caller of the prover) proves a block once, with the
sizes its weights give (a weights file's shapes are read first, :func:`.filedecide.load_file_block`), and hands the
:class:`~symabsorb.theory.proof.Proof` here with the weights: the spec's inline exact rationals, or a
file's floats (exact dyadic rationals). The prover never looks at concrete weights.

What is done with the weights depends on one field of the deciding result, ``[conclusion] concrete``
in its TOML file: :data:`~symabsorb.theory.procedures.PROCEDURES` (the one registry) maps each value
to its procedure, for inline weights and, where one exists, for file weights. A new concrete procedure
is one function decorated with :func:`symabsorb.theory.procedures.procedure` (docs/architecture.md,
"How to add a result"). Before the procedure, the steps every result shares: a verdict "impossible
(nondegenerate weights)" becomes "not absorbable" for weights whose nondegeneracy is checked exactly
(inline: by the result's own ``nondegenerate`` hypothesis; files: :func:`.filedecide.file_prelude`).
A stack's blocks are decided one by one and composed by the answer layer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import sympy as sp

from ..model.block import Block, Stack
from ..model.functions import Z
from ..theory.derivation import Derivation, DerivationStep, HypStatus, Scope, Verdict, Witness
from ..theory.library import Library
from ..theory.procedures import PROCEDURES, Procedure
from ..theory.proof import Attempt, Proof
from .decide import decide_block
from .filedecide import FileBlock, FileDecision, FileState, file_prelude, index_set_file, inline_only
from .witness import rescaled_units

__all__ = ["MAX_ENUMERATED_WIDTH", "PROCEDURES", "Procedure", "refine_file", "refine_inline"]

InlineProcedure = Callable[[Block, Derivation, Attempt, Library], Derivation]
FileProcedure = Callable[[FileState, FileBlock], FileDecision]


def refine_inline(proof: Proof, library: Library, *, index_set: bool = True) -> Derivation:
    """``proof``'s derivation refined for the inline exact weights of the block it was proved for
    (unchanged without them). ``index_set=False`` leaves an ``index-set`` condition as stated (a stack
    of one block: its blocks' decisions are composed by :func:`refine_stack`)."""
    d, chosen, block = proof.derivation, proof.attempt, proof.block
    if chosen is None or block is None or not block.has_inline_weights:
        return d
    if d.verdict is Verdict.IMPOSSIBLE and d.scope == Scope.NONDEGENERATE:
        nd = next((c for c in chosen.checks if c.name in ("nondegenerate", "gated_nondegenerate")), None)
        if nd is not None and nd.status is HypStatus.PROVED:
            step = DerivationStep(f"These weights are nondegenerate (checked exactly), so by [{d.decided_by}] they are "
                                  "not absorbable.", (d.decided_by or "",), kind="conclusion")
            return replace(d, verdict=Verdict.NOT_ABSORBABLE, scope=Scope.THESE, steps=(*d.steps, step))
    procedure = library.procedure(chosen.result)
    if (d.verdict is Verdict.CONDITIONAL and procedure is not None and procedure.inline is not None
            and not procedure.stack and (index_set or not procedure.index_set)):
        return procedure.inline(block, d, chosen, library)  # type: ignore[no-any-return]
    return d


def refine_file(proof: Proof, fb: FileBlock, library: Library) -> FileDecision:
    """``proof`` (of ``fb.concrete``: the block with the file's sizes) refined for the file's weights."""
    state = file_prelude(proof.derivation, fb, library)
    if state.done is not None:
        return state.done
    result = library.results.get(state.derivation.decided_by or "")
    if state.exact_nd is not None and not state.exact_nd.get("holds"):
        from .degenerate import degenerate_file  # degenerate file weights: Theorem D where it applies

        decided = degenerate_file(state, fb, library)
        if decided is not None:
            return decided  # type: ignore[no-any-return]
    procedure = library.procedure(result)
    if procedure is None or procedure.file is None:
        return inline_only(state, fb)
    return procedure.file(state, fb)  # type: ignore[no-any-return]


#: Index sets are enumerated exactly for R-polynomial-odd up to this width.
MAX_ENUMERATED_WIDTH = 12


def _identity_state(entries: sp.MatrixBase, xs: list[sp.Symbol]) -> bool | None:
    """Whether a vector of polynomials in ``xs`` is identically zero: True (every coefficient proved
    0), False (some coefficient proved nonzero), None (undecided)."""
    from ..analysis.identity import exact_sign, prove_zero

    undecided = False
    for e in entries:
        expanded = sp.expand(e)
        if expanded == 0:
            continue
        for c in sp.Poly(expanded, *xs).coeffs():
            sign = exact_sign(c)
            if sign not in (0, None):
                return False
            if sign is None and not prove_zero(c):
                undecided = True
    return None if undecided else True


def _polynomial_odd_decision(block: Block, d: Derivation, chosen: Attempt, library: Library) -> Derivation:
    """Enumerate S exactly: Σ_{i∈S} a_i·2o(w_i·x) ≡ −Mx as a polynomial identity (rational weights)."""
    from dataclasses import replace
    from itertools import combinations

    from ..theory.skips import skip_matrix

    o2 = chosen.bindings().get("o2")
    m_skip = skip_matrix(block)
    nd = next((c for c in chosen.checks if c.name == "nondegenerate"), None)
    if not isinstance(o2, sp.Expr) or m_skip is None or block.w_up is None or block.w_down is None or nd is None:
        return d
    width = block.w_up.rows
    if width > MAX_ENUMERATED_WIDTH or not all(x.is_Rational for x in (*block.w_up, *block.w_down, *m_skip)):
        return d
    xs = sp.Matrix(sp.symbols(f"x0:{block.w_up.cols}"))
    terms = [sp.Matrix(block.w_down[:, i]) * sp.expand(o2.xreplace({Z: (sp.Matrix(block.w_up[i, :]) * xs)[0]}))
             for i in range(width)]
    target = -sp.Matrix(m_skip) * xs
    rid = d.decided_by or ""
    undecided = False
    for size in range(width + 1):
        for subset in combinations(range(width), size):
            total = sp.zeros(target.rows, 1)
            for i in subset:
                total += terms[i]
            state = _identity_state(total - target, list(xs))
            if state is None:
                undecided = True  # neither proved nor refuted: this subset may work
                continue
            if state:
                w_up = sp.Matrix(block.w_up)
                for i in subset:
                    w_up[i, :] = -w_up[i, :]
                verified = ("exact: $\\sum_{i \\in S} a_i\\,2o(w_i^\\top x) + Mx$ expands to $0$, and "
                            "$\\sigma(-t) = \\sigma(t) - 2o(t)$")
                shown = "\\{" + ", ".join(map(str, subset)) + "\\}"
                step = DerivationStep(f"Exact enumeration of the $2^{{{width}}}$ index sets: $S = {shown}$ satisfies "
                                      f"the condition ({verified}). Therefore [{rid}]: these weights are absorbable "
                                      "(negate the rows $S$ of $W_{\\mathrm{up}}$).", (rid,), kind="conclusion")
                return replace(d, verdict=Verdict.ABSORBABLE, scope=Scope.THESE, steps=(*d.steps, step),
                               witness=Witness(subset, sp.ImmutableMatrix(w_up), block.w_down, None, verified))
    if undecided:
        step = DerivationStep(f"Exact enumeration of the $2^{{{width}}}$ index sets: for some of them a coefficient of "
                              "the condition could be neither proved zero nor proved nonzero, so these weights are "
                              "not decided beyond the condition above.", (rid,), kind="argument")
        return replace(d, steps=(*d.steps, step))
    if nd.status is HypStatus.PROVED:
        step = DerivationStep(f"Exact enumeration of the $2^{{{width}}}$ index sets: none satisfies the condition, which "
                              f"is necessary for nondegenerate weights (checked exactly). Therefore [{rid}]: these "
                              "weights are not absorbable.", (rid,), kind="conclusion")
        return replace(d, verdict=Verdict.NOT_ABSORBABLE, scope=Scope.THESE, steps=(*d.steps, step))
    return d


def _rescale_decision(block: Block, d: Derivation, chosen: Attempt, library: Library) -> Derivation:
    from dataclasses import replace

    from ..theory.polyrescale import rescale_witness
    from ..theory.skips import skip_matrix

    b = chosen.bindings()
    c, k, q = b.get("c"), b.get("k"), b.get("q")
    m_skip = skip_matrix(block)
    if not (isinstance(c, sp.Expr) and isinstance(k, sp.Integer) and isinstance(q, sp.Expr)) or m_skip is None \
            or block.w_up is None or block.w_down is None:
        return d
    result = rescale_witness(block.w_up, block.w_down, m_skip, c, int(k), q.coeff(Z, int(k)))
    rid = d.decided_by or ""
    if result.found:
        verified = f"exact: {result.how}"
        step = DerivationStep(f"Exact linear feasibility for these weights: {result.how}. Therefore [{rid}]: these "
                              "weights are absorbable (rows $\\lambda_i w_i$, columns $a_i\\lambda_i^{-k}$).", (rid,),
                              kind="conclusion")
        return replace(d, verdict=Verdict.ABSORBABLE, scope=Scope.THESE, steps=(*d.steps, step),
                       witness=Witness((), result.w_up, result.w_down, None, verified,
                                       description="rescale every unit i: row λ_i w_i, column a_i λ_i^(−k)"))
    reason = (f"the rescaling condition fails ({result.how}); it is only sufficient, so the question stays open"
              if result.found is False else f"no admissible D was found ({result.how})")
    step = DerivationStep(f"For these weights {reason}.", (rid,), kind="conclusion")
    return replace(d, verdict=Verdict.OPEN, scope=Scope.THESE, steps=(*d.steps, step), notes=(*d.notes, reason))


def _rpos_decision(block: Block, d: Derivation, chosen: Attempt, library: Library) -> Derivation:
    """Cor. R-pos on inline weights: the exact criterion (theory/rpos.py); the witness (rows μ_i w_i,
    columns a_i/κ_i) is also checked by rigorous enclosures at sample points."""
    from dataclasses import replace

    from ..theory.rpos import checked_residual, rpos_decide
    from ..theory.skips import skip_matrix

    b = chosen.bindings()
    c, k, a, bb = b.get("c_rpos"), b.get("k"), b.get("A"), b.get("B")
    nd = next((x for x in chosen.checks if x.name == "nondegenerate"), None)
    m_skip = skip_matrix(block)
    if not all(isinstance(v, sp.Expr) for v in (c, k, a, bb)) or m_skip is None or block.w_up is None \
            or block.w_down is None or nd is None:
        return d
    assert isinstance(c, sp.Expr) and isinstance(k, sp.Expr) and isinstance(a, sp.Expr) and isinstance(bb, sp.Expr)
    kk = int(k)
    result = rpos_decide(block.w_up, block.w_down, m_skip, c, kk, a + bb)
    rid = d.decided_by or ""
    if result.found:
        kappas = [(-1 if (kk % 2 == 0 and mu < 0) else 1) * abs(mu) ** kk for mu in result.scales]
        new_up = sp.ImmutableMatrix(sp.diag(*result.scales) * sp.Matrix(block.w_up))
        new_down = sp.ImmutableMatrix(sp.Matrix(block.w_down) * sp.diag(*[1 / x for x in kappas]))
        err = checked_residual(block, new_up, new_down, m_skip)
        if err is None:
            return d  # a witness failing its check decides nothing (and signals a bug in the tests)
        verified = (f"exact: {result.how}; rows μ_i w_i with μ = ({', '.join(sp.sstr(x) for x in result.scales)}), "
                    f"columns a_i/κ_i; rigorous enclosures of B' − Mx − B at sample points lie within {err:.1e}")
        step = DerivationStep(f"Exact criterion for these weights: {result.how}. Therefore [{rid}]: these weights "
                              "are absorbable.", (rid,), kind="conclusion")
        return replace(d, verdict=Verdict.ABSORBABLE, scope=Scope.THESE, steps=(*d.steps, step),
                       witness=Witness(result.flipped, new_up, new_down, None, verified,
                                       description=rescaled_units(result.flipped)))
    if result.found is False and nd.status is HypStatus.PROVED:
        step = DerivationStep(f"For these nondegenerate weights (checked exactly) the criterion fails: {result.how}. "
                              f"Therefore [{rid}]: these weights are not absorbable.", (rid,), kind="conclusion")
        return replace(d, verdict=Verdict.NOT_ABSORBABLE, scope=Scope.THESE, steps=(*d.steps, step))
    reason = (f"the criterion fails ({result.how}), but the weights are degenerate, where it is only sufficient"
              if result.found is False else f"undecided: {result.how}")
    step = DerivationStep(f"For these weights {reason}.", (rid,), kind="conclusion")
    return replace(d, verdict=Verdict.OPEN, scope=Scope.THESE, steps=(*d.steps, step), notes=(*d.notes, reason))


def _rank_decision(block: Block, d: Derivation, chosen: Attempt, library: Library) -> Derivation:
    from dataclasses import replace

    from sympy.polys.domains import QQ
    from sympy.polys.matrices import DomainMatrix

    from ..theory.skips import skip_matrix

    c = chosen.bindings().get("c")
    m_skip = skip_matrix(block)
    if not isinstance(c, sp.Expr) or m_skip is None or block.w_up is None or block.w_down is None:
        return d
    a = sp.Matrix(m_skip) + c * sp.Matrix(block.w_down) * sp.Matrix(block.w_up)
    if not all(x.is_Rational for x in a):
        return d
    dm = DomainMatrix.from_Matrix(a).convert_to(QQ)
    rref, pivots = dm.rref()
    r = len(pivots)
    width = int(block.width)
    rid = d.decided_by or ""
    if r > width:
        step = DerivationStep(f"Exactly over $\\mathbb{{Q}}$: $\\operatorname{{rank}}(M + c\\,W_{{\\mathrm{{down}}}}"
                              f"W_{{\\mathrm{{up}}}}) = {r} > m = {width}$, so by [{rid}] these weights are not "
                              "absorbable.", (rid,), kind="conclusion")
        return replace(d, verdict=Verdict.NOT_ABSORBABLE, scope=Scope.THESE, steps=(*d.steps, step))
    f_rows = sp.Matrix(rref.to_Matrix()[:r, :])
    c_cols = a[:, list(pivots)]
    dim = a.rows
    w_up = sp.ImmutableMatrix(sp.Matrix.vstack(f_rows, sp.zeros(width - r, dim)))
    w_down = sp.ImmutableMatrix(sp.Matrix.hstack(c_cols / c, sp.zeros(dim, width - r)))
    ok = (c * w_down * w_up - a).is_zero_matrix
    if not ok:
        return d
    verified = ("exact: $c\\,W'_{\\mathrm{down}}W'_{\\mathrm{up}} = M + c\\,W_{\\mathrm{down}}W_{\\mathrm{up}}$ in rational "
                "arithmetic")
    step = DerivationStep(f"Exactly over $\\mathbb{{Q}}$: $\\operatorname{{rank}}(M + c\\,W_{{\\mathrm{{down}}}}"
                          f"W_{{\\mathrm{{up}}}}) = {r} \\le m = {width}$; the rank factorization (pivot columns and "
                          f"the rows of the reduced echelon form) gives the witness, verified ({verified}). Therefore "
                          f"[{rid}]: these weights are absorbable.", (rid,), kind="conclusion")
    w_gate = sp.ImmutableMatrix(sp.zeros(width, dim)) if block.gated else None
    return replace(d, verdict=Verdict.ABSORBABLE, scope=Scope.THESE, steps=(*d.steps, step),
                   witness=Witness(tuple(int(p) for p in pivots), w_up, w_down, w_gate, verified,
                                   description="the rank factorisation of M + c W_down W_up: rows of its reduced "
                                               "echelon form, its pivot columns divided by c, zero units to the width"))


def _rank_factor(a: sp.Matrix) -> tuple[int, list[int], sp.Matrix, sp.Matrix]:
    """``rank a``, its pivot columns, ``P`` (those columns) and ``F`` (the nonzero rows of the reduced echelon
    form), exactly over Q: ``a = P F``."""
    from sympy.polys.domains import QQ
    from sympy.polys.matrices import DomainMatrix

    rref, pivots = DomainMatrix.from_Matrix(a).convert_to(QQ).rref()
    r = len(pivots)
    return r, [int(p) for p in pivots], a[:, list(pivots)], sp.Matrix(rref.to_Matrix()[:r, :])


def _affine_map(block: Block, m_skip: sp.MatrixBase, a: sp.Expr, c0: sp.Expr) -> tuple[sp.Matrix, sp.Matrix | None] | None:
    """The block with ``σ = az + b`` as the affine map ``x ↦ Ax + k``: ``A = M + a W_down W_up`` and ``k = R(0) =
    W_down(a b_up + b 1) + b_down`` (biases absent: 0), exactly; None when an entry of ``A`` is not rational, ``k``
    None when the biases are symbolic (``bias: true`` without values)."""
    w_up, w_down = sp.Matrix(block.w_up), sp.Matrix(block.w_down)
    big_a = sp.Matrix(m_skip) + a * w_down * w_up
    if not all(x.is_Rational for x in big_a):
        return None
    if block.bias and (block.b_up is None or block.b_down is None):
        return big_a, None
    width, dim = int(block.width), big_a.rows
    b_up = sp.Matrix(block.b_up) if block.b_up is not None else sp.zeros(width, 1)
    b_down = sp.Matrix(block.b_down) if block.b_down is not None else sp.zeros(dim, 1)
    return big_a, w_down * (a * b_up + c0 * sp.ones(width, 1)) + b_down


def _affine_decision(block: Block, d: Derivation, chosen: Attempt, library: Library) -> Derivation:
    """σ = az + b on inline exact weights (L-affine, L-affine with biases): the block is the affine map
    ``x ↦ Ax + k`` (``A = M + a W_down W_up``, ``k = W_down(a b_up + b 1) + b_down``). A residual-free block with
    biases realises it iff ``rank A ≤ m``; a bias-free one (``b ≠ 0``) iff ``rank A < m``, or ``rank A = m`` and
    ``0 ≠ k ∈ col A``. Every witness is checked exactly (``a W'_down W'_up = A`` and the constant) before it is
    claimed."""
    from ..theory.skips import skip_matrix

    b = chosen.bindings()
    a, c0 = b.get("a"), b.get("b")
    m_skip = skip_matrix(block)
    if not (isinstance(a, sp.Expr) and isinstance(c0, sp.Expr) and a.is_Rational and c0.is_Rational and a != 0) \
            or m_skip is None or block.w_up is None or block.w_down is None or block.gated:
        return d
    found = _affine_map(block, m_skip, a, c0)
    if found is None:
        return d
    big_a, k_found = found
    dim, width = big_a.rows, int(block.width)
    absorber_biases = block.question.absorber_biases
    r, _pivots, p_cols, f_rows = _rank_factor(big_a)
    rid = d.decided_by or ""
    shown_a = "A = M + a\\,W_{\\mathrm{down}}W_{\\mathrm{up}}"
    if r > width:
        step = DerivationStep(f"Exactly over $\\mathbb{{Q}}$ with $a = {sp.latex(a)}$: $\\operatorname{{rank}} A = {r} > m = "
                              f"{width}$ (${shown_a}$), and every residual-free block's linear part has rank at most "
                              f"$m$. Therefore [{rid}]: these weights are not absorbable.", (rid,), kind="conclusion")
        return replace(d, verdict=Verdict.NOT_ABSORBABLE, scope=Scope.THESE, steps=(*d.steps, step))
    ones = sp.ones(width, 1)
    if absorber_biases:
        k_const = None
    else:
        k_const = k_found
        if k_const is None:
            return d  # symbolic biases: the constant k is not a number
        if not all(x.is_Rational for x in k_const) or c0 == 0:
            return d
    new_up: sp.Matrix | None = None
    new_down: sp.Matrix | None = None
    out_bias: sp.Matrix | None = None
    how = ""
    if k_const is None:  # a biased absorber: the rank factorization and an output bias
        new_up = sp.Matrix.vstack(f_rows, sp.zeros(width - r, dim))
        new_down = sp.Matrix.hstack(p_cols / a, sp.zeros(dim, width - r))
        out_bias = -c0 * new_down * ones  # the constant of R is added back below: k − b W'_down 1
        how = f"$\\operatorname{{rank}} A = {r} \\le m = {width}$: the rank factorization, hidden biases $0$"
    else:
        v = k_const / c0
        if r < width:
            u = sp.Matrix.hstack(p_cols, v - p_cols * sp.ones(r, 1), sp.zeros(dim, width - r - 1))
            new_up = sp.Matrix.vstack(f_rows / a, sp.zeros(width - r, dim))
            new_down = u
            how = (f"$\\operatorname{{rank}} A = {r} < m = {width}$: the pivot columns of $A$ and one column "
                   "$k/b - P\\mathbf{1}$")
        else:  # r == width: k/b must be a nonzero vector of col A
            y = _solve_exact(p_cols, v)
            if y is None or v.is_zero_matrix:
                why = "$k = 0$" if v.is_zero_matrix else "$k \\notin \\operatorname{col} A$"
                step = DerivationStep(f"Exactly over $\\mathbb{{Q}}$ with $a = {sp.latex(a)}$, $b = {sp.latex(c0)}$: "
                                      f"$\\operatorname{{rank}} A = {r} = m$ (${shown_a}$) and {why} ($k = R(0)$, "
                                      "the block's constant). A bias-free residual-free block of width $m$ with "
                                      "$\\operatorname{col} W'_{\\mathrm{down}} \\supseteq \\operatorname{col} A$ has "
                                      "its $m$ columns a basis of $\\operatorname{col} A$, so its constant "
                                      f"$b\\,W'_{{\\mathrm{{down}}}}\\mathbf{{1}}$ is a nonzero vector of it. Therefore "
                                      f"[{rid}]: these weights are not absorbable.", (rid,), kind="conclusion")
                return replace(d, verdict=Verdict.NOT_ABSORBABLE, scope=Scope.THESE, steps=(*d.steps, step))
            j = next(i for i, x in enumerate(y) if x != 0)
            t = sp.eye(r) + (y - sp.ones(r, 1)) * sp.Matrix([[1 if i == j else 0 for i in range(r)]])
            new_down = p_cols * t
            new_up = t.inv() * f_rows / a
            how = (f"$\\operatorname{{rank}} A = {r} = m$ and $0 \\ne k = b\\,Py$ with $y_{{{j}}} \\ne 0$: "
                   "$W'_{\\mathrm{down}} = PT$, $T = I + (y - \\mathbf{1})e_j^\\top$")
    assert new_up is not None and new_down is not None
    if k_const is None:  # symbolic biases (k_found None): the output bias k − b W'_down 1 is stated, not a number
        out_bias = k_found + out_bias if k_found is not None and out_bias is not None else None
    linear_ok = (a * new_down * new_up - big_a).is_zero_matrix
    if k_const is not None:
        const_ok = (c0 * new_down * ones - k_const).is_zero_matrix
    else:
        const_ok = True  # the output bias is chosen as k − b W'_down 1
    if not (linear_ok and const_ok):
        return d  # a witness failing its exact check decides nothing
    verified = ("exact: $a\\,W'_{\\mathrm{down}}W'_{\\mathrm{up}} = M + a\\,W_{\\mathrm{down}}W_{\\mathrm{up}}$"
                + (" and $b\\,W'_{\\mathrm{down}}\\mathbf{1} = R(0)$" if k_const is not None else
                   "; the output bias is $R(0) - b\\,W'_{\\mathrm{down}}\\mathbf{1}$")
                + " in rational arithmetic")
    step = DerivationStep(f"Exactly over $\\mathbb{{Q}}$ with $a = {sp.latex(a)}$, $b = {sp.latex(c0)}$ (${shown_a}$): "
                          f"{how}; verified ({verified}). Therefore [{rid}]: these weights are absorbable.", (rid,),
                          kind="conclusion")
    witness = Witness((), sp.ImmutableMatrix(new_up), sp.ImmutableMatrix(new_down), None, verified,
                      b_up=sp.ImmutableMatrix(sp.zeros(width, 1)) if k_const is None and out_bias is not None else None,
                      b_down=sp.ImmutableMatrix(out_bias) if k_const is None and out_bias is not None else None,
                      description="residual-free weights from a rank factorization of the affine map (not a flip)")
    if k_const is None and out_bias is None:
        step = replace(step, text=step.text.replace("Therefore", "(the block's biases are symbolic: the output "
                                                    "bias is $R(0) - b\\,W'_{\\mathrm{down}}\\mathbf{1}$.) "
                                                    "Therefore"))
        return replace(d, verdict=Verdict.ABSORBABLE, scope=Scope.THESE, steps=(*d.steps, step))
    return replace(d, verdict=Verdict.ABSORBABLE, scope=Scope.THESE, steps=(*d.steps, step), witness=witness)


def _affine_width(block: Block, rid: str) -> tuple[int, int, list[DerivationStep], Witness] | None:
    """The ``width`` query under L-affine / L-affine (biases) on inline exact weights: the exact ``w*`` with a
    witness of that width. ``A = M + a W_down W_up`` of rank ``r``, ``k = R(0)``: with a biased residual-free
    block ``w* = max(r, 1)``; with a bias-free one (``b ≠ 0``) ``w* = r`` when ``0 ≠ k ∈ col A``, else ``r + 1``
    (the lemma at every width: its criterion is necessary and sufficient). None when it does not apply."""
    from ..analysis.engine import linear_constant
    from ..analysis.facts import Status
    from ..theory.skips import skip_matrix

    m_skip = skip_matrix(block)
    if block.gated or m_skip is None or block.w_up is None or block.w_down is None:
        return None
    expr = block.activation.expr
    c0 = expr.xreplace({Z: sp.S.Zero})
    ev, a = linear_constant(expr - c0)
    if ev.status is not Status.PROVED or not (isinstance(a, sp.Expr) and a.is_Rational and a != 0 and c0.is_Rational):
        return None
    found = _affine_map(block, m_skip, a, c0)
    if found is None:
        return None
    big_a, k_const = found
    dim = big_a.rows
    r, _pivots, p_cols, f_rows = _rank_factor(big_a)
    biased = block.question.absorber_biases
    if biased:
        if k_const is None:
            return None  # symbolic biases: the output bias is no number
        w_star = max(r, 1)
        new_up = sp.Matrix.vstack(f_rows, sp.zeros(w_star - r, dim))
        new_down = sp.Matrix.hstack(p_cols / a, sp.zeros(dim, w_star - r))
        out_bias = k_const - c0 * new_down * sp.ones(w_star, 1)
        why = (f"a residual-free block with biases is $x \\mapsto a\\,W'_{{\\mathrm{{down}}}}W'_{{\\mathrm{{up}}}}x$ plus a "
               f"constant, its linear part of rank at most its width, so $w^* = \\max(\\operatorname{{rank}} A, 1) = "
               f"{w_star}$")
        ok = (a * new_down * new_up - big_a).is_zero_matrix
        witness = Witness((), sp.ImmutableMatrix(new_up), sp.ImmutableMatrix(new_down), None,
                          "exact: $a\\,W'_{\\mathrm{down}}W'_{\\mathrm{up}} = A$; output bias $R(0) - b\\,W'_{\\mathrm{down}}"
                          "\\mathbf{1}$", b_up=sp.ImmutableMatrix(sp.zeros(w_star, 1)),
                          b_down=sp.ImmutableMatrix(out_bias),
                          description="residual-free weights from a rank factorization of the affine map (not a flip)")
    else:
        if k_const is None or c0 == 0 or not all(x.is_Rational for x in k_const):
            return None
        v = k_const / c0
        y = _solve_exact(p_cols, v) if r > 0 else None
        exact_fit = r > 0 and y is not None and not v.is_zero_matrix
        w_star = r if exact_fit else r + 1
        if exact_fit:
            assert y is not None
            j = next(i for i, x in enumerate(y) if x != 0)
            t = sp.eye(r) + (y - sp.ones(r, 1)) * sp.Matrix([[1 if i == j else 0 for i in range(r)]])
            new_down, new_up = p_cols * t, t.inv() * f_rows / a
        else:
            new_down = sp.Matrix.hstack(p_cols, v - p_cols * sp.ones(r, 1))
            new_up = sp.Matrix.vstack(f_rows / a, sp.zeros(1, dim))
        why = (f"a bias-free residual-free block of width $w$ is $B'(x) = a\\,UVx + b\\,U\\mathbf{{1}}$ with "
               f"$\\operatorname{{col}} A \\subseteq \\operatorname{{col}} U$: $w \\ge \\operatorname{{rank}} A = {r}$, and "
               f"$w = {r}$ needs $0 \\ne k \\in \\operatorname{{col}} A$, which "
               + ("holds" if exact_fit else "fails") + f"; so $w^* = {w_star}$")
        ok = (a * new_down * new_up - big_a).is_zero_matrix and (c0 * new_down * sp.ones(w_star, 1) - k_const).is_zero_matrix
        witness = Witness((), sp.ImmutableMatrix(new_up), sp.ImmutableMatrix(new_down), None,
                          "exact: $a\\,W'_{\\mathrm{down}}W'_{\\mathrm{up}} = A$ and $b\\,W'_{\\mathrm{down}}\\mathbf{1} = R(0)$",
                          description="residual-free weights from a rank factorization of the affine map (not a flip)")
    if not ok:
        return None  # a witness failing its exact check decides nothing
    step = DerivationStep(f"Exactly over $\\mathbb{{Q}}$ ($A = M + a\\,W_{{\\mathrm{{down}}}}W_{{\\mathrm{{up}}}}$, "
                          f"$a = {sp.latex(a)}$, $b = {sp.latex(c0)}$, $k = R(0)$): by [{rid}] at every width, {why}; a "
                          f"witness of width {w_star} is checked exactly.", (rid,), kind="conclusion")
    return w_star, w_star, [step], witness


def _solve_exact(p_cols: sp.Matrix, v: sp.Matrix) -> sp.Matrix | None:
    """The ``y`` with ``P y = v`` for ``P`` of full column rank (exact), or None when ``v ∉ col P``."""
    r = p_cols.cols
    if r == 0:
        return sp.zeros(0, 1) if v.is_zero_matrix else None
    gram = p_cols.T * p_cols
    y = gram.inv() * (p_cols.T * v)
    return y if (p_cols * y - v).is_zero_matrix else None


def _span_decision(block: Block, d: Derivation, chosen: Attempt, library: Library) -> Derivation:
    """Cor. R-log (Euler type), inline exact weights only: :func:`symabsorb.weights.euler_concrete.span_decision`."""
    from .euler_concrete import span_decision

    return span_decision(block, d, chosen)


def _power_decision(block: Block, d: Derivation, chosen: Attempt, library: Library) -> Derivation:
    """Cor. R-pow (Euler type), inline exact weights only: :func:`symabsorb.weights.euler_concrete.power_decision`."""
    from .euler_concrete import power_decision

    return power_decision(block, d, chosen)


def _degenerate_decision(block: Block, d: Derivation, chosen: Attempt, library: Library) -> Derivation:
    """Theorem D (any weights of one block), inline exact weights: :func:`symabsorb.weights.degenerate.degenerate_inline`."""
    from .degenerate import degenerate_inline

    return degenerate_inline(block, d, chosen, library)  # type: ignore[no-any-return]


def _index_set_inline(block: Block, d: Derivation, chosen: Attempt, library: Library) -> Derivation:
    """``index-set`` on inline weights: :func:`.decide.decide_block` (exact search over Q); degenerate weights it
    leaves open go to the Lemma-T sandwich of Theorem D (:func:`.degenerate.sandwich_inline`)."""
    decided = decide_block(block, d, library)[0]
    if decided.verdict in (Verdict.OPEN, Verdict.CONDITIONAL):
        from .degenerate import sandwich_applies, sandwich_inline

        if sandwich_applies(block, decided, library):
            # the sandwich result's hypotheses, checked by the prover's one checker (not by the procedure)
            from ..theory.hypotheses import Subject
            from ..theory.prover import check_result

            sandwich = library.get(library.provider("degenerate-sandwich"))
            attempt = check_result(sandwich, Subject(block=block, library=library))
            return sandwich_inline(block, decided, library, attempt)  # type: ignore[no-any-return]
    return decided


def _rank_width(block: Block, proof: Any, library: Library) -> object:
    """``[width] procedure = "rank"``: :func:`.width.rank_width`."""
    from .width import rank_width

    return rank_width(block, proof, library)


def _degenerate_width(block: Block, rid: str) -> object:
    """Theorem D's exact ``w*`` on inline weights: :func:`.degenerate.degenerate_width`."""
    from .degenerate import degenerate_width

    return degenerate_width(block, rid)


def _slopes_1d(target: Stack, d: Derivation, library: Library) -> Derivation:
    """Theorem 1D on a deep stack's inline weights: :func:`.deepdecide.decide_1d`."""
    from .deepdecide import decide_1d

    return decide_1d(target, d, library)  # type: ignore[no-any-return]


def _fold(target: Stack, d: Derivation, library: Library) -> Derivation:
    """Theorem FA's fold test on a deep stack's inline weights: :func:`.deepdecide.decide_fold`."""
    from .deepdecide import decide_fold

    return decide_fold(target, d)  # type: ignore[no-any-return]


# The concrete-weight procedures, keyed by a result's ``concrete`` field (the only switch), attached to their
# declarations in the one registry (theory/procedures.py: what each is, checked at load). ``rank``,
# ``rescale``, ``enumerate``, ``rescale-signed``, ``span`` and ``rescale-power`` exist for inline exact weights
# only; ``slopes-1d`` and ``fold`` decide deep stacks (weights/deepdecide.py asks the procedure).
PROCEDURES.attach("index-set", inline=_index_set_inline, file=index_set_file)
PROCEDURES.attach("rank", inline=_rank_decision, width_rule=_rank_width)
PROCEDURES.attach("rescale", inline=_rescale_decision)
PROCEDURES.attach("enumerate", inline=_polynomial_odd_decision)
PROCEDURES.attach("rescale-signed", inline=_rpos_decision)
PROCEDURES.attach("span", inline=_span_decision)
PROCEDURES.attach("rescale-power", inline=_power_decision)
PROCEDURES.attach("degenerate", inline=_degenerate_decision, width=_degenerate_width)
PROCEDURES.attach("affine", inline=_affine_decision, width=_affine_width)
PROCEDURES.attach("slopes-1d", inline=_slopes_1d)
PROCEDURES.attach("fold", inline=_fold)
