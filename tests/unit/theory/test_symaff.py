"""Lemma A and the exact Sym_aff(σ) (analysis/symaff.py), Theorem R-aff and Cor. R-aff-0 (MATH.md §8).

Each claim the module proves is checked against an independent attempt to break it in plain floats:
an element (μ, ν, κ) with a polynomial remainder would make a finite difference of
σ(μs + ν) − κσ(s) vanish; where such an element exists (relu(s − 1), t + sin t) nothing may claim
Sym_aff trivial.
"""

from __future__ import annotations

import math

import pytest
import sympy as sp

from symabsorb.analysis.symaff import affine_symmetry
from symabsorb.analysis.tropical import asymptote_at_infinity
from symabsorb.model import resolve_text
from symabsorb.theory.derivation import Verdict
from tests.helpers import prove

DECLS = '''activation shifted_relu(z) = max(0, z - 1)
activation shifted_gelu(z) = gelu(z - 1)
activation tsin(z) = z + sin(z)
activation relu2(z) = max(0, z)^2
'''


def _sigma(act: str) -> sp.Expr:
    spec = resolve_text(DECLS + f"block b {{ activation: {act} }}")
    act_ = spec.blocks[0].ungated_activation
    assert act_ is not None
    return act_.expr


def _prove(text: str):  # type: ignore[no-untyped-def]
    return prove(resolve_text(DECLS + text).blocks[0])


def _elu(s: float, alpha: float = 1.0) -> float:
    return s if s > 0 else alpha * (math.exp(s) - 1)


def _selu(s: float) -> float:
    return 1.0507009873554805 * (s if s > 0 else 1.6732632423543772 * (math.exp(s) - 1))


def _celu(s: float) -> float:
    return s if s > 0 else math.exp(s) - 1  # CELU with α = 1 (the catalog's)


def test_exact_asymptotes() -> None:
    one, zero = sp.Integer(1), sp.Integer(0)
    for act, plus, minus in (("elu", (one, zero), (zero, -one)), ("gelu", (one, zero), (zero, zero)),
                             ("relu", (one, zero), (zero, zero)), ("shifted_relu", (one, -one), (zero, zero))):
        e = _sigma(act)
        got = [(a.slope, a.intercept) for a in (asymptote_at_infinity(e, 1), asymptote_at_infinity(e, -1))]
        assert got == [plus, minus], act
    assert asymptote_at_infinity(_sigma("tsin"), 1).intercept is None  # z + sin z has no asymptote


@pytest.mark.parametrize("act", ["elu", "selu", "celu"])
def test_elu_family_has_trivial_affine_symmetries(act: str) -> None:
    fact = affine_symmetry(_sigma(act))
    assert fact.evidence.proved and [(e.mu, e.nu, e.remainder) for e in fact.elements] == [("1", 0, 0)]
    assert fact.hinge is not None and sp.sign(fact.hinge) == -1  # s* = −α: the kink 0 is not the hinge point


@pytest.mark.parametrize("f", [_elu, _selu, _celu])
def test_no_other_affine_symmetry_of_the_elu_family(f) -> None:  # type: ignore[no-untyped-def]
    # would make "Sym_aff = {(1, 0, 1)}" false: an element with a polynomial remainder of degree ≤ 3 has
    # vanishing fourth differences; every other (μ, ν, κ) on a grid leaves one far from 0
    h = 0.25
    for mu in (-2.0, -1.0, -0.5, 0.5, 2.0, 1.0):
        for nu in (-1.0, -0.5, 0.0, 0.5, 1.0):
            for kappa in (abs(mu), -abs(mu), 1.0):
                if (mu, nu, kappa) == (1.0, 0.0, 1.0):
                    continue
                worst = 0.0
                for s0 in [k / 2 for k in range(-12, 13)]:
                    g = [f(mu * (s0 + i * h) + nu) - kappa * f(s0 + i * h) for i in range(5)]
                    worst = max(worst, abs(g[4] - 4 * g[3] + 6 * g[2] - 4 * g[1] + g[0]))
                assert worst > 1e-4, (mu, nu, kappa)


def test_affine_symmetries_through_sym_at_hinge_zero() -> None:
    relu = affine_symmetry(_sigma("relu"))
    assert relu.evidence.proved and {e.mu for e in relu.elements} == {"mu>0", "mu<0"}
    gelu = affine_symmetry(_sigma("gelu"))
    assert gelu.evidence.proved and sorted(str(e.remainder) for e in gelu.elements) == ["0", "z"]
    assert not relu.constant_remainders and not gelu.constant_remainders


@pytest.mark.parametrize("act", ["shifted_relu", "tsin", "shifted_gelu", "mish", "tanh", "relu2"])
def test_undecided_affine_symmetries_stay_unknown(act: str) -> None:
    assert not affine_symmetry(_sigma(act)).evidence.proved


def test_a_kink_at_the_hinge_point_is_a_real_symmetry() -> None:
    # relu(s − 1): s* = 1 is its kink, and (2, −1, 2) ∈ Sym_aff (relu(2s − 2) = 2 relu(s − 1)); the kink
    # route must not conclude "trivial" here
    for k in range(-40, 41):
        s = k / 8
        assert max(0.0, 2 * s - 1 - 1) == 2 * max(0.0, s - 1)
    fact = affine_symmetry(_sigma("shifted_relu"))
    assert not fact.evidence.proved and "not proved different from s*" in fact.evidence.reason


def test_t_plus_sin_has_affine_symmetries_with_a_linear_remainder() -> None:
    # (1, π, −1): σ(s + π) + σ(s) = 2s + π; so Sym_aff is not trivial and a biased absorber may exist
    for k in range(-20, 21):
        s = k / 3
        assert math.isclose((s + math.pi + math.sin(s + math.pi)) + (s + math.sin(s)), 2 * s + math.pi, abs_tol=1e-12)
    d = _prove("block b { activation: tsin bias: true }")
    assert d.verdict not in (Verdict.IMPOSSIBLE, Verdict.NOT_ABSORBABLE)


@pytest.mark.parametrize("act", ["elu", "selu", "celu"])
def test_biased_elu_family_is_not_absorbable(act: str) -> None:
    for fields in ("bias: true", "absorber_bias: true", "bias: true absorber_bias: false"):
        d = _prove(f"block b {{ activation: {act} {fields} }}")
        assert (d.verdict, d.decided_by, str(d.scope)) == (Verdict.IMPOSSIBLE, "R-aff-0", "nondegenerate weights"), fields
        assert "thm-R-aff" in d.cited and "lemma-A" in d.cited
    bare = _prove(f"block b {{ activation: {act} }}")
    assert bare.decided_by != "R-aff-0"  # the bare block keeps its own (stronger) result


def test_r_aff_0_needs_its_hypotheses() -> None:
    assert _prove("block b { activation: elu bias: true skip: none }").verdict is not Verdict.IMPOSSIBLE
    for act in ("gelu", "relu", "leaky_relu"):  # a flip remainder that is not constant: R-aff-1 decides
        assert _prove(f"block b {{ activation: {act} bias: true }}").decided_by == "R-aff-1"
    relu2 = _prove("block b { activation: relu2 dim: 1 width: 2 bias: true }")
    assert relu2.verdict is Verdict.OPEN  # §8: biased ReLU² is absorbable for some weights


def test_post_ln_biased_elu_is_decided_on_the_reduced_block() -> None:
    d = _prove("block b { activation: elu dim: 4 bias: true norm: post-ln eps: 1e-12 }")
    assert d.verdict is Verdict.IMPOSSIBLE and d.decided_by == "R-aff-0" and "L-post-ln" in d.cited
