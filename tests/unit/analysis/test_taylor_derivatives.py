"""The closed forms of f⁽ᵏ⁾ used by the truncated series arithmetic are the derivatives."""

from __future__ import annotations

import pytest
import sympy as sp

from symabsorb.analysis import taylor
from symabsorb.model.functions import Z

FUNCTIONS = [sp.exp, sp.log, sp.sin, sp.cos, sp.sinh, sp.cosh, sp.tanh, sp.erf, sp.erfc, sp.atan]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_closed_form_derivatives_equal_diff(f: type) -> None:
    x = taylor._X
    for k in range(12):
        closed = taylor._derivative(f, k)
        reference = sp.diff(f(x), x, k)
        difference = sp.cancel(reference - closed) if f is sp.atan else sp.expand(reference - closed)
        assert difference == 0, (f, k, closed, reference)


A0 = [sp.S.Zero, sp.log(2), sp.Rational(1, 3), sp.sqrt(2) / 2, sp.Symbol("a", positive=True), 1 + sp.Symbol("b", real=True)]


def _cases() -> list[object]:
    """Every (f, a₀); atan's coefficients at a symbolic point (seconds of ``cancel``) in the slow tier."""
    return [pytest.param(f, a0, id=f"{a0}-{f.__name__}",
                         marks=[pytest.mark.slow] if f is sp.atan and a0.free_symbols else [])
            for a0 in A0 for f in FUNCTIONS]


@pytest.mark.parametrize(("f", "a0"), _cases())
def test_coefficients_equal_those_from_diff(f: type, a0: sp.Expr) -> None:
    """The coefficient f⁽ᵏ⁾(a₀)/k! in normal form is the same expression as through ``diff``."""
    x = taylor._X
    if f is sp.log and not a0.is_positive:
        return
    for k in range(10):
        ours = taylor.normal_coefficient(taylor._derivative(f, k).xreplace({x: a0}) / sp.factorial(k))
        ref = taylor.normal_coefficient(sp.diff(f(x), x, k).xreplace({x: a0}) / sp.factorial(k))
        assert ours == ref, (f, a0, k, ours, ref)


def test_series_of_mish_and_gelu_are_exact() -> None:
    mish = Z * sp.tanh(sp.log(1 + sp.exp(Z)))
    coeffs = taylor.taylor(mish, 6)
    assert coeffs is not None and all(c.is_Rational for c in coeffs)
    ref = sp.series(mish.rewrite(sp.exp), Z, 0, 7).removeO()
    assert all(sp.simplify(coeffs[k] - ref.coeff(Z, k)) == 0 for k in range(7))
    gelu = Z * (1 + sp.erf(Z / sp.sqrt(2))) / 2
    g = taylor.taylor(gelu, 6)
    ref = sp.series(gelu, Z, 0, 7).removeO()
    assert g is not None and all(sp.simplify(g[k] - ref.coeff(Z, k)) == 0 for k in range(7))
