"""Concrete weights for the Euler-type results (MATH §13), decided exactly.

* ``span`` (Cor. R-log, ``σ = c·t + γ t log|t|``): absorbable iff ``M = Σ_i D_ii a_i w_iᵀ`` has a
  solution ``D`` over Q (``c W_down D W_up = M`` with ``c = 1``, solved exactly); witness rows
  ``μ_i w_i``, columns ``a_i/μ_i`` with ``μ_i = exp(D_ii/γ)``.
* ``rescale-power`` (Cor. R-pow, ``σ = c·t + α₊ t₊^k + α₋ t₋^k``, ``k`` not an integer): ``D`` with
  ``c W_down D W_up = M`` and ``D_ii > −1`` (``D_ii ≠ −1`` when ``α₊ = α₋``), searched by the sign
  patterns of :func:`~.rpos.rpos_decide` (its degree-``k`` condition is vacuous here); witness
  ``μ_i = (1 + D_ii)^{1/(1−k)}`` (``D_ii > −1``) or ``−(−1 − D_ii)^{1/(1−k)}`` (``D_ii < −1``),
  ``κ_i = |μ_i|^k``.

Each witness is checked by rigorous enclosures at sample points before it is reported;
``not-absorbable`` needs the exact refutation and nondegenerate weights (checked exactly).
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from ..model.block import Block
from ..theory.derivation import Derivation, DerivationStep, HypStatus, Scope, Verdict, Witness
from .witness import rescaled_units

__all__ = ["power_decision", "span_decision"]


def _context(block: Block, chosen: object) -> tuple[sp.MatrixBase, object] | None:
    from ..theory.skips import skip_matrix

    m_skip = skip_matrix(block)
    nd = next((x for x in chosen.checks if x.name == "nondegenerate"), None)  # type: ignore[attr-defined]
    if m_skip is None or block.w_up is None or block.w_down is None or nd is None:
        return None
    if not all(x.is_Rational for x in (*block.w_up, *block.w_down, *m_skip)):
        return None
    return m_skip, nd


def _checked(block: Block, new_up: sp.MatrixBase, new_down: sp.MatrixBase, m_skip: sp.MatrixBase) -> float | None:
    from ..theory.rpos import checked_residual

    return checked_residual(block, new_up, new_down, m_skip)


def span_decision(block: Block, d: Derivation, chosen: object) -> Derivation:
    from ..theory.polyrescale import solve_diagonal

    ctx = _context(block, chosen)
    gamma = chosen.bindings().get("gamma_log")  # type: ignore[attr-defined]
    if ctx is None or not isinstance(gamma, sp.Expr) or not gamma.is_Rational:
        return d
    m_skip, nd = ctx
    assert block.w_up is not None and block.w_down is not None
    rid = d.decided_by or ""
    solved = solve_diagonal(sp.Matrix(block.w_up), sp.Matrix(block.w_down), sp.Matrix(m_skip), sp.S.One)
    if solved is None:
        if nd.status is HypStatus.PROVED:  # type: ignore[attr-defined]
            step = DerivationStep(f"Exactly over $\\mathbb{{Q}}$: $M \\notin \\operatorname{{span}}\\{{a_i w_i^\\top\\}}$ "
                                  f"(the system $\\sum_i D_{{ii}}\\, a_i w_i^\\top = M$ is inconsistent), and these weights "
                                  f"are nondegenerate (checked exactly). Therefore [{rid}]: these weights are not "
                                  "absorbable.", (rid,), kind="conclusion")
            return replace(d, verdict=Verdict.NOT_ABSORBABLE, scope=Scope.THESE, steps=(*d.steps, step))
        reason = ("M is not in the span of the a_i w_iᵀ, but the weights are degenerate, where the condition is only "
                  "sufficient")
        step = DerivationStep(f"For these weights {reason}.", (rid,), kind="conclusion")
        return replace(d, verdict=Verdict.OPEN, scope=Scope.THESE, steps=(*d.steps, step), notes=(*d.notes, reason))
    particular, _basis = solved
    mus = [sp.exp(x / gamma) for x in particular]
    new_up = sp.ImmutableMatrix(sp.diag(*mus) * sp.Matrix(block.w_up))
    new_down = sp.ImmutableMatrix(sp.Matrix(block.w_down) * sp.diag(*[1 / mu for mu in mus]))
    err = _checked(block, new_up, new_down, m_skip)
    if err is None:
        return d
    shown = ", ".join(sp.sstr(x) for x in particular)
    verified = (f"exact: D = diag({shown}) solves sum_i D_ii a_i w_i^T = M over Q; rows mu_i w_i with "
                f"mu_i = exp(D_ii/gamma), columns a_i/mu_i; rigorous enclosures of B' - Mx - B at sample points lie "
                f"within {err:.1e}")
    step = DerivationStep(f"Exactly over $\\mathbb{{Q}}$: $D = \\operatorname{{diag}}({shown})$ solves "
                          "$\\sum_i D_{ii}\\, a_i w_i^\\top = M$, so $M \\in \\operatorname{span}\\{a_i w_i^\\top\\}$; "
                          "the witness has rows $\\mu_i w_i$ and columns $a_i/\\mu_i$ with $\\mu_i = e^{D_{ii}/\\gamma}$ "
                          f"(checked by rigorous enclosures). Therefore [{rid}]: these weights are absorbable.", (rid,),
                          kind="conclusion")
    return replace(d, verdict=Verdict.ABSORBABLE, scope=Scope.THESE, steps=(*d.steps, step),
                   witness=Witness((), new_up, new_down, None, verified,
                                   description="rescale every unit i: row μ_i w_i, column a_i/μ_i, μ_i = exp(D_ii/γ)"))


def power_decision(block: Block, d: Derivation, chosen: object) -> Derivation:
    from ..theory.rpos import rpos_decide

    ctx = _context(block, chosen)
    b = chosen.bindings()  # type: ignore[attr-defined]
    c, k, even = b.get("c_pow"), b.get("k_pow"), b.get("even_pow")
    if ctx is None or not all(isinstance(v, sp.Expr) and v.is_Rational for v in (c, k, even)):
        return d
    assert isinstance(c, sp.Expr) and isinstance(k, sp.Expr) and isinstance(even, sp.Expr)
    m_skip, nd = ctx
    assert block.w_up is not None and block.w_down is not None
    # rpos_decide with an odd integer exponent searches D_ii > −1 off N and D_ii < −1 on N (every D_ii ≠ −1);
    # with an even one, D_ii > −1 everywhere. A zero degree-k coefficient makes its degree condition vacuous.
    result = rpos_decide(block.w_up, block.w_down, m_skip, c, 3 if even == 1 else 2, sp.S.Zero)
    rid = d.decided_by or ""
    if result.found:
        expo = 1 / (1 - k)
        scales = [(1 + x) ** expo if x > -1 else -((-1 - x) ** expo) for x in result.diagonal]
        kappas = [abs(mu) ** k for mu in scales]
        new_up = sp.ImmutableMatrix(sp.diag(*scales) * sp.Matrix(block.w_up))
        new_down = sp.ImmutableMatrix(sp.Matrix(block.w_down) * sp.diag(*[1 / x for x in kappas]))
        err = _checked(block, new_up, new_down, m_skip)
        if err is None:
            return d
        negative = tuple(i for i, x in enumerate(result.diagonal) if x < -1)
        shown = ", ".join(sp.sstr(x) for x in result.diagonal)
        verified = (f"exact: D = diag({shown}) solves c W_down D W_up = M over Q with the sign conditions; rows "
                    f"mu_i w_i with mu = ({', '.join(sp.sstr(x) for x in scales)}), columns a_i/|mu_i|^k; rigorous "
                    f"enclosures of B' - Mx - B at sample points lie within {err:.1e}")
        step = DerivationStep(f"Exact criterion for these weights: $D = \\operatorname{{diag}}({shown})$ solves "
                              "$c\\,W_{\\mathrm{down}}DW_{\\mathrm{up}} = M$ with the sign conditions; the witness (rows "
                              "$\\mu_i w_i$, columns $a_i/|\\mu_i|^k$) is checked by rigorous enclosures. Therefore "
                              f"[{rid}]: these weights are absorbable.", (rid,), kind="conclusion")
        return replace(d, verdict=Verdict.ABSORBABLE, scope=Scope.THESE, steps=(*d.steps, step),
                       witness=Witness(negative, new_up, new_down, None, verified, description=rescaled_units(negative)))
    if result.found is False and nd.status is HypStatus.PROVED:  # type: ignore[attr-defined]
        step = DerivationStep(f"For these nondegenerate weights (checked exactly) no admissible $D$ exists: "
                              f"{result.how}. Therefore [{rid}]: these weights are not absorbable.", (rid,),
                              kind="conclusion")
        return replace(d, verdict=Verdict.NOT_ABSORBABLE, scope=Scope.THESE, steps=(*d.steps, step))
    reason = (f"no admissible D exists ({result.how}), but the weights are degenerate, where the criterion is only "
              "sufficient" if result.found is False else f"undecided: {result.how}")
    step = DerivationStep(f"For these weights {reason}.", (rid,), kind="conclusion")
    return replace(d, verdict=Verdict.OPEN, scope=Scope.THESE, steps=(*d.steps, step), notes=(*d.notes, reason))
