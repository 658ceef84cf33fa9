"""Hypotheses of the Euler-type results (docs/theorems.md#euler-type): ``σ = c·t + γ t log|t|`` (Cor. R-log) and
``σ = c·t + α₊ t₊^k + α₋ t₋^k`` with a non-integer ``k`` (Cor. R-pow). Both forms are recognised
structurally by :mod:`symabsorb.analysis.euler`; every coefficient is decided exactly."""

from __future__ import annotations

from typing import Any

import sympy as sp

from ..analysis.euler import euler_form
from ..analysis.identity import exact_sign, prove_zero
from ..model.functions import Z
from .checks import Subject, registrar, simple
from .derivation import HypothesisCheck, HypStatus

__all__ = ["CHECKERS"]

CHECKERS, hypothesis = registrar()


@hypothesis("log_linear_form",
            "`σ(t) = c·t + γ·t·log|t|` with `σ(0) = 0`, `γ ≠ 0` (Euler type, `analysis/euler.py`)",
            binds=("gamma_log",))
def _log_linear_form(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    statement = ("$\\sigma(t) = c\\,t + \\gamma\\,t\\log|t|$ with $\\sigma(0) = 0$ and $\\gamma \\ne 0$ (continuous, "
                 "not a polynomial)")
    if s.the_block.gated:
        return simple("log_linear_form", HypStatus.REFUTED, statement, "the block is gated")
    form = euler_form(s.the_block.activation.expr)
    if form is None or not form.is_log_form or form.log is None:
        return simple("log_linear_form", HypStatus.UNKNOWN, statement,
                      "σ is not shown to be c·t + γ·t·log|t| (with value 0 at 0)")
    gamma = form.log[1]
    c = sp.Poly(form.poly, Z).coeff_monomial(Z)
    return simple("log_linear_form", HypStatus.PROVED,
                  statement + f" (here $c = {sp.latex(c)}$, $\\gamma = {sp.latex(gamma)}$)",
                  bindings={"gamma_log": gamma})


@hypothesis("power_linear_form",
            "`σ(t) = c·t + α₊ t₊^k + α₋ t₋^k`, `c ≠ 0`, `k > 0` not an integer, `(α₊, α₋) ≠ 0` (Cor. R-pow)",
            binds=("c_pow", "k_pow", "even_pow", "Dcond", "Dplain"))
def _power_linear_form(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    statement = ("$\\sigma(t) = c\\,t + \\alpha_+ t_+^k + \\alpha_- t_-^k$ with $c \\ne 0$, $k > 0$ not an integer, "
                 "$(\\alpha_+, \\alpha_-) \\ne 0$ ($t_\\pm = \\max(\\pm t, 0)$)")
    if s.the_block.gated:
        return simple("power_linear_form", HypStatus.REFUTED, statement, "the block is gated")
    form = euler_form(s.the_block.activation.expr)
    if form is None or not form.is_power_form:
        return simple("power_linear_form", HypStatus.UNKNOWN, statement,
                      "σ is not shown to be c·t + α₊ t₊^k + α₋ t₋^k with one non-integer k")
    c = sp.Poly(form.poly, Z).coeff_monomial(Z)
    if exact_sign(c) in (0, None):
        return simple("power_linear_form", HypStatus.REFUTED if exact_sign(c) == 0 else HypStatus.UNKNOWN, statement,
                      "the linear coefficient c is 0" if exact_sign(c) == 0 else "the sign of c is undecided")
    ((k, a_plus, a_minus),) = form.powers
    even = prove_zero(a_plus - a_minus)
    cond = "D_{ii} \\ne -1" if even else "D_{ii} > -1"
    plain = "D_ii != -1" if even else "D_ii > -1"
    return simple("power_linear_form", HypStatus.PROVED,
                  statement + f" (here $c = {sp.latex(c)}$, $k = {sp.latex(k)}$, $\\alpha_+ = {sp.latex(a_plus)}$, "
                  f"$\\alpha_- = {sp.latex(a_minus)}$" + (", $q$ even" if even else "") + ")",
                  bindings={"c_pow": c, "k_pow": k, "even_pow": sp.S.One if even else sp.S.Zero,
                            "Dcond": cond, "Dplain": plain})
