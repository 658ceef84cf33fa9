"""Hypotheses of real layers (docs/theorems.md#real-layers): the tropical slopes of σ (Lemma T), the
normalisation's ``ε`` and scales (Lemma PN, post-RMSNorm), local boundedness in every block of a
stack (Lemma N at depth). Exact steps only; a value the spec does not give is a stated assumption."""

from __future__ import annotations

from typing import Any

import sympy as sp

from ..analysis.identity import exact_sign
from .checks import Subject, registrar, simple
from .derivation import HypothesisCheck, HypStatus
from .hyp_activation import CHECKERS as ACTIVATION
from .hyp_stacks import _each

__all__ = ["CHECKERS"]

CHECKERS, hypothesis = registrar()


@hypothesis("tropical_slopes",
            "`σ(s) = α±·s + o(|s|)` at ±∞ with exact `α₊ ≠ α₋` (Lemma T: the tropical limit is not linear)",
            binds=("alpha_plus", "alpha_minus"))
def _tropical_slopes(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    """``σ(s) = α_± s + o(|s|)`` at ``±∞`` with exact ``α₊ ≠ α₋`` (so ``σ_∞ = α₊ s₊ + α₋ s₋`` is not a polynomial)."""
    from ..analysis.tropical import slope_at_infinity

    block = s.the_block
    statement = ("$\\sigma(s) = \\alpha_\\pm s + o(|s|)$ as $s \\to \\pm\\infty$ with $\\alpha_+ \\ne \\alpha_-$ "
                 "(the tropical limit $\\sigma_\\infty(s) = \\alpha_+\\max(s,0) + \\alpha_-\\min(s,0)$ is not linear)")
    if block.gated:
        return simple("tropical_slopes", HypStatus.REFUTED, statement, "the block is gated")
    act = block.ungated_activation
    assert act is not None
    plus, minus = slope_at_infinity(act.expr, 1), slope_at_infinity(act.expr, -1)
    if plus.value is None or minus.value is None:
        why = plus.how if plus.value is None else minus.how
        return simple("tropical_slopes", HypStatus.UNKNOWN, statement, why)
    text = (f"$\\alpha_+ = {sp.latex(plus.value)}$, $\\alpha_- = {sp.latex(minus.value)}$ ({plus.how}; "
            f"{minus.how})")
    if plus.value == minus.value:
        return simple("tropical_slopes", HypStatus.REFUTED, statement,
                      f"both slopes are {plus.value}: the tropical limit is linear")
    return simple("tropical_slopes", HypStatus.PROVED, statement.split(" (")[0] + f": {text}",
                  bindings={"alpha_plus": plus.value, "alpha_minus": minus.value})


@hypothesis("relu_hinge",
            "`σ(s) = α₊·max(s, 0) + α₋·min(s, 0)` identically (piecewise form: two linear pieces, the only kink at 0), "
            "exact `α₊ ≠ α₋` and `α₊ + α₋ ≠ 0` (ReLU, leaky/PReLU with slope `α ≠ ±1`, up to scale)")
def _relu_hinge(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    """σ is exactly a hinge at 0: proved from its piecewise normal form (no name tables)."""
    from ..analysis.identity import prove_zero
    from ..analysis.piecewise import piecewise_form
    from ..model.functions import Z

    block = s.the_block
    statement = ("$\\sigma(s) = \\alpha_+\\max(s,0) + \\alpha_-\\min(s,0)$ identically with "
                 "$\\alpha_+ \\ne \\alpha_-$ and $\\alpha_+ + \\alpha_- \\ne 0$ (its only kink is at $0$)")
    if block.gated:
        return simple("relu_hinge", HypStatus.REFUTED, statement, "the block is gated")
    act = block.ungated_activation
    assert act is not None
    form = piecewise_form(act.expr)
    if form is None:
        return simple("relu_hinge", HypStatus.UNKNOWN, statement, "σ has no exact piecewise normal form")
    pieces = form.pieces
    if len(pieces) != 2 or pieces[0].lo != -sp.oo or pieces[0].hi != 0 or pieces[1].hi != sp.oo:
        return simple("relu_hinge", HypStatus.REFUTED if len(pieces) == 1 else HypStatus.UNKNOWN, statement,
                      "σ is not two pieces split at 0")
    slopes = []
    for piece in pieces:
        e = sp.expand(piece.expr)
        if not e.is_polynomial(Z) or sp.degree(e, Z) > 1 or e.subs(Z, 0) != 0:
            return simple("relu_hinge", HypStatus.UNKNOWN, statement, f"the piece {sp.sstr(e)} is not α·s")
        slopes.append(e.coeff(Z, 1))
    minus, plus = slopes
    if not prove_zero(act.expr.xreplace({Z: sp.Integer(0)})):
        return simple("relu_hinge", HypStatus.UNKNOWN, statement, "σ(0) = 0 is not proved")
    signs = (exact_sign(plus - minus), exact_sign(plus + minus))
    if None in signs:
        return simple("relu_hinge", HypStatus.UNKNOWN, statement, "the signs of α₊ − α₋ and α₊ + α₋ are not decided")
    if 0 in signs:
        return simple("relu_hinge", HypStatus.REFUTED, statement,
                      f"slopes {sp.sstr(minus)}, {sp.sstr(plus)}: need α₊ ≠ α₋ and α₊ + α₋ ≠ 0")
    return simple("relu_hinge", HypStatus.PROVED, statement.split(" (")[0]
                  + f": $\\alpha_+ = {sp.latex(plus)}$, $\\alpha_- = {sp.latex(minus)}$ (exact piecewise form)")


@hypothesis("sym_aff_constant",
            "`Sym_aff(σ)` proved exactly (Lemma A with exact asymptotes, `analysis/symaff.py`) and every remainder "
            "`σ(s) − σ(μs + ν)/κ` a constant (e.g. `Sym_aff(σ) = {(1, 0, 1)}`)")
def _sym_aff_constant(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    from ..analysis.symaff import affine_symmetry

    block = s.the_block
    statement = ("$\\mathrm{Sym}_{\\mathrm{aff}}(\\sigma)$ is proved exactly and every remainder "
                 "$\\sigma(s) - \\sigma(\\mu s + \\nu)/\\kappa$ is a constant")
    if block.gated:
        return simple("sym_aff_constant", HypStatus.REFUTED, statement, "the block is gated")
    act = block.ungated_activation
    assert act is not None
    fact = affine_symmetry(act.expr)
    if not fact.evidence.proved:
        return simple("sym_aff_constant", HypStatus.UNKNOWN, statement,
                      f"Sym_aff(σ) not decided: {fact.evidence.reason}", evidence=(("Sym_aff(σ)", fact.evidence),))
    shown = ", ".join(e.describe() for e in fact.elements)
    if not fact.constant_remainders:
        return simple("sym_aff_constant", HypStatus.REFUTED, statement,
                      f"Sym_aff(σ) = {{{shown}}} has a remainder that is not a constant",
                      evidence=(("Sym_aff(σ)", fact.evidence),))
    return simple("sym_aff_constant", HypStatus.PROVED, statement.split(" is proved")[0]
                  + f" is {{{shown}}} (proved exactly), every remainder a constant",
                  evidence=(("Sym_aff(σ)", fact.evidence),))


def _norm_name(block: Any) -> str:
    return "LayerNorm" if block.norm.endswith("-ln") else "RMSNorm"


@hypothesis("norm_eps_positive", "the normalisation's `ε > 0` (exact; not given: a stated assumption)")
def _norm_eps_positive(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    block = s.the_block
    statement = f"the {_norm_name(block)} epsilon is positive, $\\varepsilon > 0$"
    if block.eps is None:
        return simple("norm_eps_positive", HypStatus.ASSUMED, statement,
                      assumption=f"{_norm_name(block)} with ε > 0 (no `eps:` given)")
    sign = exact_sign(block.eps)
    if sign == 1:
        return simple("norm_eps_positive", HypStatus.PROVED,
                      f"$\\varepsilon = {sp.latex(block.eps)} > 0$ (exact)")
    if sign in (0, -1):
        return simple("norm_eps_positive", HypStatus.REFUTED, statement,
                      f"ε = {sp.sstr(block.eps)}: with ε = 0 the normalisation is also invariant under positive "
                      "scaling, and the reduction does not hold")
    return simple("norm_eps_positive", HypStatus.UNKNOWN, statement, "the sign of ε is not decided exactly")


@hypothesis("norm_scales_nonzero",
            "every normalisation scale `γ_k ≠ 0` (exact; not given: a stated assumption)")
def _norm_scales_nonzero(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    block = s.the_block
    statement = f"every {_norm_name(block)} scale is nonzero, $\\gamma_k \\ne 0$"
    gamma = block.ln_gamma
    if gamma is None:
        return simple("norm_scales_nonzero", HypStatus.ASSUMED, statement,
                      assumption=f"every {_norm_name(block)} scale γ_k ≠ 0 (no `ln_gamma:` given)")
    undecided = False
    for k, g in enumerate(gamma):
        # a scale read from a file is a float, so a dyadic Rational: its sign is its integer numerator's
        # (exact, and ~100x cheaper than the general sign decision, which handles any other entry)
        sign = (g.p > 0) - (g.p < 0) if isinstance(g, sp.Rational) else exact_sign(g)
        if sign == 0:
            return simple("norm_scales_nonzero", HypStatus.REFUTED, statement,
                          f"γ_{k} = 0 exactly: coordinate {k} of the output is the constant β_{k}, and the "
                          "reduction is not proved for it")
        if sign is None:
            undecided = True
    if undecided:
        return simple("norm_scales_nonzero", HypStatus.UNKNOWN, statement, "a scale is not decided exactly")
    smallest = min(abs(float(g)) for g in gamma)  # for display only: every scale was decided above
    return simple("norm_scales_nonzero", HypStatus.PROVED,
                  f"all {len(gamma)} scales $\\gamma_k$ are nonzero, compared exactly with 0 (smallest "
                  f"$|\\gamma_k| \\approx {smallest:.3g}$)")


@hypothesis("each_locally_bounded", "(stacks) the activation (or gate) of every block is locally bounded",
            subject="stack")
def _each_locally_bounded(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    def one(sub: Subject) -> list[HypothesisCheck]:
        return [ACTIVATION["locally_bounded"](sub, {})]

    return _each("each_locally_bounded", s, "the activation (or gate) of every block is locally bounded", one)
