"""The `width NAME` query: the smallest width at which absorption is *proved* possible (a witness
construction), a lower bound only where a result proves one, and the gap between them.

The caller (the answer layer) passes a :class:`~symabsorb.theory.proof.WidthProof`: the block's derivation
(after concrete weights were decided) and the hypotheses the width constructions use, checked by the
prover's one checker (:func:`symabsorb.theory.prover.width_proof`). This module checks no hypothesis: it
reads the verdict, the checks, the facts and the exact ranks.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import sympy as sp

from ..model.block import Block
from ..theory.derivation import Derivation, DerivationStep, HypStatus, Scope, Verdict, Witness
from ..theory.hyp_sizes import exact_rank
from ..theory.library import Library, WidthRule
from ..theory.proof import WidthProof
from ..theory.skips import skip_rank

__all__ = ["WidthBounds", "width_bounds", "width_derivation"]


@dataclass(frozen=True)
class WidthBounds:
    """``upper``: a width at which absorption is proved possible (None: none proved); ``lower``: a
    width below which it is proved impossible (None: no bound proved); ``never``: no width works."""

    upper: int | sp.Expr | None
    lower: int | sp.Expr | None
    never: bool
    lower_scope: str
    steps: tuple[DerivationStep, ...]
    witness: Witness | None = None  # residual-free weights of width ``upper`` (Theorem W on concrete weights)
    decided_by: str | None = None  # the result that gives both bounds (Theorem W), else None
    #: where ``upper`` is proved: all weights for a construction, the base decision's scope ("these weights") when
    #: the upper bound is "absorbable at width m" for concrete weights (affine referee, B4: it was said for all)
    upper_scope: str = Scope.ALL


def _text(v: int | sp.Expr) -> str:
    return sp.latex(v) if isinstance(v, sp.Basic) else str(v)


def width_bounds(block: Block, proof: WidthProof, library: Library, base_dir: str | None = None) -> WidthBounds:
    """The bounds, from the deciding result's ``[width]`` rule (docs/theorems.md), Theorem W (the result
    providing ``width-exact``: exact on concrete nondegenerate weights below a work cap, proved bounds
    above it, generic values for symbolic blocks) and the generic constructions (the results providing
    ``width-pairs`` and ``width-lines``). ``base_dir``: where a block's weight file is."""
    m = block.width
    base = proof.base
    steps: list[DerivationStep] = []
    rid = base.decided_by or ""
    rule = library.get(rid).width if rid in library.results else WidthRule()
    if base.verdict is Verdict.IMPOSSIBLE and base.scope == Scope.ALL and not rule.uses_width:
        free = library.provider("width-free")
        steps.append(DerivationStep(f"[{rid}] decides the block and its proof does not use the width "
                                    f"([{free}]): no residual-free block of any width absorbs it.",
                                    (rid, free), kind="conclusion"))
        return WidthBounds(None, None, True, Scope.ALL, tuple(steps))
    upper: int | sp.Expr | None = None
    lower: int | sp.Expr | None = None
    lower_scope = Scope.NONDEGENERATE
    by_rule = library.procedure(rid, "width") if rid in library.results else None
    if by_rule is not None and by_rule.width_rule is not None:  # the decider's `[width] procedure`
        return by_rule.width_rule(block, proof, library)  # type: ignore[no-any-return]
    if rule.upper is not None and rule.step is not None:
        steps.append(DerivationStep(rule.step, (rid,)))
        return WidthBounds(rule.upper, None, False, Scope.ALL, tuple(steps))
    not_at_m = base.verdict is Verdict.NOT_ABSORBABLE or (base.verdict is Verdict.IMPOSSIBLE
                                                          and base.scope == Scope.NONDEGENERATE)
    proc = library.procedure(rid)
    if proc is not None and proc.width is not None and block.has_inline_weights:  # e.g. Theorem D: exact w*
        target = _decided_block(block)  # under a norm after the sum: the reduced block (Lemma PN), as `absorb`
        found = (proc.width(target, rid) if target is not None
                 and library.get(rid).admits(target.question.bias_label, target.question.norm) else None)
        if found is not None:
            low, high, d_steps, d_witness = found
            return WidthBounds(high, low, False, Scope.THESE, tuple(steps) + tuple(d_steps), d_witness, rid)
    from .widththm import theorem_w

    thm = theorem_w(block, proof.exact, library, not_at_m, base_dir)
    if thm is not None and (thm.upper is not None or thm.lower is not None):
        return WidthBounds(thm.upper, thm.lower, False, thm.scope, tuple(steps) + thm.steps, thm.witness, thm.result)
    upper_scope: str = Scope.ALL
    if base.verdict is Verdict.ABSORBABLE:
        upper = m
        upper_scope = base.scope
        steps.append(DerivationStep(f"At width $m = {_text(m)}$ the block is absorbable ([{rid}]).", (rid,)))
    odd = proof.check("odd_linear") if not block.gated else None
    pairs, lines_id = library.provider("width-pairs"), library.provider("width-lines")
    # The constructions below keep B's units and add bias-free units acting on x: sound only when B' may
    # carry B's biases and B' sees x itself (no normalisation before the block; one after the residual sum
    # sees Mx + B(x) either way). The second one also moves a constant into B' when B has biases. The
    # lower bound counts B's lines: after a LayerNorm only the units with P a_i != 0 need one, and before
    # a normalisation B' sees N(x), whose image is not open. Elsewhere: no bound (referee round 3).
    q = block.question
    keeps_units = q.norm in ("none", "post-ln", "post-rms") and (q.absorber_biases or not q.block_biases)
    bias_free_block = keeps_units and not q.block_biases
    counts_lines = q.norm in ("none", "post-rms")
    if odd is not None and odd.status is HypStatus.PROVED and keeps_units:
        rank, how = skip_rank(block)
        if rank is not None:
            candidate = sp.Integer(m) + 2 * rank if isinstance(m, int) and isinstance(rank, int) else m + 2 * rank
            text = (f"$\\sigma(z) - \\sigma(-z) = 2c\\,z$ with $c \\ne 0$: adding a pair of units per rank-one term "
                    f"of $M$ absorbs the block at width $m + 2\\operatorname{{rank}} M = {_text(candidate)}$ "
                    f"([{pairs}]; {how}).")
            steps.append(DerivationStep(text, (pairs,), odd.evidence))
            if upper is None or _lt(candidate, upper):
                upper_scope = Scope.ALL  # the construction alone gives the bound: it holds for all weights
            upper = candidate if upper is None else _min(upper, candidate)
        if bias_free_block and block.w_up is not None and exact_rank(block.w_up) == block.stream_dim:
            candidate = m + block.stream_dim
            steps.append(DerivationStep(f"$\\operatorname{{rank}} W_{{\\mathrm{{up}}}} = d$: one extra unit on each of "
                                        f"$d$ independent lines gives width $m + d = {_text(candidate)}$ "
                                        f"([{pairs}]).", (pairs,)))
            if upper is None or _lt(candidate, upper):
                upper_scope = Scope.THESE  # it uses rank W_up = d of these weights: not a bound for all weights
            upper = candidate if upper is None else _min(upper, candidate)
    lines = [proof.checks[name] for name in ("ungated", "continuous", "nondegenerate")]
    nonpoly = proof.facts().symmetry.evidence.proved or proof.facts().polynomial.evidence.refuted
    # nondegenerate weights with d = 1 exist only for m = 1: a bound "for nondegenerate weights" would be vacuous
    vacuous = block.stream_dim == 1 and m != 1
    # file weights are not checked for nondegeneracy here (only assumed): a lower bound "for nondegenerate
    # weights" would read as one for these weights, which may be degenerate (referee round 3)
    from_file = block.weights is not None and lines[2].status is not HypStatus.PROVED
    if not block.gated and all(c.status.holds for c in lines) and nonpoly and not vacuous and counts_lines \
            and not from_file:
        lower = (m + 1) if not_at_m else m
        if lines[2].status is HypStatus.PROVED:
            lower_scope = Scope.THESE
        why = f" and [{rid}] rules out width $m$" if not_at_m else ""
        steps.append(DerivationStep(f"σ is continuous and not a polynomial: for nondegenerate weights every line of $B$ "
                                    f"needs a unit of $B'$ ([{lines_id}]){why}, so the width is at least "
                                    f"${_text(lower)}$.", (lines_id,) + ((rid,) if not_at_m else ())))
    return WidthBounds(upper, lower, False, lower_scope, tuple(steps), upper_scope=upper_scope)


def rank_width(block: Block, proof: WidthProof, library: Library) -> WidthBounds:
    """``[width] procedure = "rank"``: every unit is linear, so the smallest width is
    ``rank(M + c W_down W_up)`` (exact on inline weights; ``d`` an upper bound otherwise)."""
    rank_id = library.provider("width-rank")
    rank = _linear_rank(block, proof)
    if rank is not None:
        step = DerivationStep(f"Every unit is linear, so absorption at width $w$ holds iff "
                              f"$\\operatorname{{rank}}(M + c\\,W_{{\\mathrm{{down}}}}W_{{\\mathrm{{up}}}}) = {rank} "
                              f"\\le w$ ([{rank_id}], exact rank over $\\mathbb{{Q}}$).", (rank_id,))
        return WidthBounds(rank, rank, False, Scope.ALL, (step,))
    step = DerivationStep(f"Every unit is linear: width $d$ always suffices ([{rank_id}]: "
                          "$\\operatorname{rank}(M + c\\,W_{\\mathrm{down}}W_{\\mathrm{up}}) \\le d$); the exact "
                          "smallest width is that rank, which needs concrete weights.", (rank_id,))
    return WidthBounds(block.stream_dim, None, False, Scope.NONDEGENERATE, (step,))


def _decided_block(block: Block) -> Block | None:
    """The block the deciding result was applied to: ``block`` itself, or under a normalisation after the
    residual sum the reduced block (skip ``PM``, output weights ``P·W_down`` for post-LN; the block without the
    norm for post-RMSNorm), whose ordinary question is this block's (theory/layers.py); None if it cannot be built
    (referee of issue 30, F3: Theorem D on the untransformed ``M``, ``W_down`` gave a wrong ``w*``)."""
    if block.question.norm == "none":
        return block
    from ..theory.layers import reduced_block

    reduced = reduced_block(block)
    return None if isinstance(reduced, str) else reduced


def _lt(a: int | sp.Expr, b: int | sp.Expr) -> bool:
    """``a < b`` proved (ints, Integers or size symbols); False when not decided."""
    return sp.Lt(a, b) is sp.true


def _min(a: int | sp.Expr, b: int | sp.Expr) -> int | sp.Expr:
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    le = sp.Le(a, b)
    if le is sp.true:
        return a
    if le is sp.false:
        return b
    return sp.Min(a, b)


def _linear_rank(block: Block, proof: WidthProof) -> int | None:
    from ..theory.skips import skip_matrix

    lin = proof.checks["linear_block"]
    c = lin.binding("c")
    m_skip = skip_matrix(block)
    if lin.status is not HypStatus.PROVED or c is None or m_skip is None or block.w_up is None or block.w_down is None:
        return None
    linear = sp.Matrix(m_skip) + c * sp.Matrix(block.w_down) * sp.Matrix(block.w_up)
    if block.question.norm == "post-ln":
        # Lemma PN: LN(u) = LN(v) iff u - v is constant across coordinates, so only P(M + cW_down W_up) must be
        # matched, P = I - 11^T/d (its rank can be one less; referee round 3)
        d = linear.rows
        linear = (sp.eye(d) - sp.ones(d, d) / d) * linear
    elif block.question.norm != "none" and block.question.norm != "post-rms":
        return None
    return exact_rank(linear)


def width_derivation(block: Block, proof: WidthProof, query: str, library: Library,
                     base_dir: str | None = None) -> Derivation:
    """The answer to ``width NAME`` as a derivation: the proved bounds ``L ≤ w* ≤ U`` (verdict absorbable:
    a residual-free block of width ``U`` exists, with the witness when the weights are concrete),
    impossible at every width, or open (no width proved to suffice)."""
    b = width_bounds(block, proof, library, base_dir)
    base = proof.base
    steps = [base.steps[0], *b.steps]
    condition = condition_plain = None
    necessary = None
    scope = base.scope
    if b.never:
        verdict, summary = Verdict.IMPOSSIBLE, "no width absorbs the block"
        scope = Scope.ALL
    elif b.upper is None:
        verdict = Verdict.OPEN
        summary = "no width is proved to absorb the block" + (
            f"; at least ${_text(b.lower)}$ units are needed ({b.lower_scope})" if b.lower is not None else "")
    else:
        verdict = Verdict.ABSORBABLE
        scope = b.lower_scope if b.decided_by else b.upper_scope
        exact = b.lower is not None and sp.simplify(sp.Integer(0) + b.upper - b.lower) == 0
        if exact:
            condition, condition_plain = f"w^* = {_text(b.upper)}", f"w* = {sp.sstr(b.upper)}"
        elif b.lower is not None:
            condition = f"{_text(b.lower)} \\le w^* \\le {_text(b.upper)}"
            condition_plain = f"{sp.sstr(b.lower)} <= w* <= {sp.sstr(b.upper)}"
        else:
            condition, condition_plain = f"w^* \\le {_text(b.upper)}", f"w* <= {sp.sstr(b.upper)}"
        necessary = "proved" if b.lower is not None else "open"
        where = f" ({b.lower_scope})" if b.lower is not None else ""
        made = (f" (witness checked here, not carried in the report: `absorb --width {sp.sstr(b.upper)}` rebuilds, "
                "re-checks and writes it)" if b.witness is not None
                else " (witness construction)")
        if exact:
            summary = (f"the smallest width of a residual-free block absorbing it is exactly $w^* = {_text(b.upper)}$"
                       f"{where}{made}")
        else:
            low = (f"none of width below ${_text(b.lower)}$ does{where}" if b.lower is not None
                   else "no lower bound beyond $1$ is proved")
            summary = (f"${condition}$: a residual-free block of width ${_text(b.upper)}$ absorbs it{made}; {low}; "
                       "the smallest width in between is open")
    steps.append(DerivationStep(f"Width: {summary}.", kind="conclusion"))
    cited = tuple(dict.fromkeys([*base.cited, *(c for s in b.steps for c in s.cites)]))
    upper = None if b.upper is None else sp.sstr(b.upper)
    lower = None if b.lower is None else sp.sstr(b.lower)
    decided_by = b.decided_by or base.decided_by
    source = library.get(decided_by).source if decided_by is not None and decided_by in library.results else base.source
    return replace(base, query=query, verdict=verdict, scope=scope, decided_by=decided_by, source=source,
                   steps=tuple(steps), cited=cited, condition=condition, condition_plain=condition_plain,
                   condition_constant=None, sufficient="proved" if condition else None, necessary=necessary,
                   witness=None,  # the width-U weights: `absorb --width U` writes them (width_witness)
                   width=(upper, lower, b.never, str(b.lower_scope) if b.lower is not None else None))


def _pad(witness: Witness, extra: int) -> Witness:
    """``extra`` more units with a zero row and a zero column (each contributes 0: the blocks are bias-free)."""
    if extra == 0:
        return witness
    up, down = witness.w_up, witness.w_down
    if isinstance(up, sp.MatrixBase):
        d = up.cols
        return replace(witness, w_up=sp.ImmutableMatrix(sp.Matrix(up).col_join(sp.zeros(extra, d))),
                       w_down=sp.ImmutableMatrix(sp.Matrix(down).row_join(sp.zeros(d, extra))))
    import numpy as np

    d = up.shape[1]
    return replace(witness, w_up=np.vstack([up, np.zeros((extra, d))]), w_down=np.hstack([down, np.zeros((d, extra))]))


def width_witness(block: Block, proof: WidthProof, width: int, library: Library,
                  base_dir: str | None = None) -> tuple[Witness | None, str]:
    """Residual-free weights of width ``width`` equal to the block (the upper bound's witness, padded with
    units that contribute 0), or None with the reason."""
    b = width_bounds(block, proof, library, base_dir)
    if b.upper is None:
        bounds = "no width is proved to suffice"
    elif b.lower is not None and sp.simplify(sp.Integer(0) + b.upper - b.lower) == 0:
        bounds = f"w* = {sp.sstr(b.upper)}"
    else:
        bounds = (f"{sp.sstr(b.lower)} <= w* <= " if b.lower is not None else "w* <= ") + sp.sstr(b.upper)
    if b.never:
        return None, "no residual-free block of any width absorbs it"
    if b.witness is None or b.upper is None or not isinstance(b.upper, int):
        return None, f"no witness for concrete weights ({bounds})"
    if isinstance(b.lower, int) and width < b.lower and b.lower_scope in (Scope.THESE, Scope.ALL):
        return None, f"width {width} is proved too small ({bounds}, {b.lower_scope})"
    if width < b.upper:
        return None, f"no witness of width {width} is known ({bounds})"
    return _pad(b.witness, width - b.upper), f"width {width} ({bounds})"
