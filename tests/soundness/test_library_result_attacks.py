"""Referee attacks on today's library results (Theorem G, Theorem SDI, Cor. R-pos, parameter domains,
biased and normalised blocks) where the engine's verdict was checked by hand and found right.
Each case says why the verdict is the true answer; docs/referee-attacks.md has the full log of attempts."""

from __future__ import annotations

import pytest

from symabsorb import api

BUDGET = 60


@pytest.mark.parametrize(("expr", "gated", "verdict"), [
    # sigma = z - |z|^3 = cz + q, q = -|z|^3 (k = 3 odd, alpha = beta = -1): flips allowed (D < -1),
    # the degree-3 remainder coefficient alpha - beta is 0: a condition, not impossible.
    ("z - abs(z)^3", False, "conditional"),
    # ELU plus a polynomial: dilates independent modulo polynomials (exponential pieces), so
    # Mx is a sum of vanishing profiles: impossible for every weight.
    ("elu(z) + z^3", False, "impossible"),
    ("if z >= 0 then z + z^2 else exp(z) - 1", False, "impossible"),
    ("celu(z)", False, "impossible"),
    # odd sigma with exp pieces on both sides: no result proves it either way.
    ("if z >= 0 then exp(z) - 1 else 1 - exp(-z)", False, "open"),
    # even sigma (also with kinks at +-1 only): x -> -x gives 2Mx = 0.
    ("if z >= 0 then exp(z) else exp(-z)", False, "impossible"),
    ("max(0, z - 1) + max(0, -z - 1)", False, "impossible"),
    # sigma vanishes on (-1, 1): Jacobian at 0 is M on one side, 0 on the other.
    ("max(0, z - 1) + min(0, z + 1)", False, "impossible"),
    # kink at 1 only: Sym(sigma) is trivial; at d = 1 kinks force v = w, a = b, then 1 = 0.
    ("z + max(0, z - 1)", False, "impossible"),
    # odd, frequencies independent, every symmetry has remainder 0 (bias-free absorbers).
    ("z + sin(z) + z^3", False, "impossible"),
    # the flip has remainder 2t^2: quadratic against -Mx, never (nondegenerate weights).
    ("z + sin(z) + z^2", False, "impossible"),
    # a discontinuous single-point value: nothing applies.
    ("if z >= 1 and z <= 1 then 5 else max(0, z)", False, "open"),
    # gates: g(-t) = c - g(t) gives kappa = -1, constant remainder c: W_S = -M/c (iff, Theorem G).
    ("sigmoid(z) + z", True, "conditional"),
    ("sigmoid(z) + z^3", True, "conditional"),
    ("2 + tanh(z)", True, "conditional"),
    ("sigmoid(z) + sigmoid(2*z)", True, "conditional"),
    # a polynomial gate: the flip is sufficient (W_S = -M/2), nothing more is proved.
    ("1 + z", True, "conditional"),
    # even gate / exp gate: every remainder vanishes at 0, so -M = 0 is needed.
    ("softplus(z) - z/2", True, "impossible"),
    ("exp(z)", True, "impossible"),
    # g(0) = 0: the block's Jacobian at 0 is M, the absorber's 0.
    ("tanh(z) + z^2", True, "impossible"),
    # sigmoid plus a non-odd polynomial and a log-periodic gate: honest open.
    ("sigmoid(z) + z^2", True, "open"),
    ("1 + z*sin(2*pi*log(abs(z))/log(2))", True, "open"),
])
def test_classify_attack(expr: str, gated: bool, verdict: str) -> None:
    assert api.classify(expr, gated, budget=BUDGET).verdict == verdict


def test_gate_constants() -> None:
    """Theorem G's constant: rho = g(t) + g(-t) = c, so W_S = -M/c."""
    assert "-1/4*I_d" in (api.classify("2 + tanh(z)", True, budget=BUDGET).condition or "")
    assert "-1/2*I_d" in (api.classify("sigmoid(z) + sigmoid(2*z)", True, budget=BUDGET).condition or "")


R_POS = """
activation cub(z) = z - abs(z)^3
activation p3(z) = z + max(0,z)^3
activation p2(z) = z + max(0,z)^2
activation zz(z) = z + z*abs(z)
activation neg(z) = -z + abs(z)^3
# -2x + sigma(x) = sigma(-x)
block cubw { activation: cub dim: 1 width: 1 skip: scaled(-2) W_up: [[1]] W_down: [[1]] }
# x - sigma(x)/2 = -sigma(-x)/2
block cubI { activation: cub dim: 1 width: 1 W_up: [[1]] W_down: [[-1/2]] }
# -x + relu(x)^3 = b(vx + relu(vx)^3) needs bv = -1 and v > 0, b > 0
block p3a { activation: p3 dim: 1 width: 1 skip: scaled(-2) W_up: [[1]] W_down: [[1]] }
# -x + relu(x)^2: a flip brings an x^2 term, no flip needs bv = -1 with b, v > 0
block p2a { activation: p2 dim: 1 width: 1 skip: scaled(-2) W_up: [[1]] W_down: [[1]] }
# x/2 + x|x| = b(vx + v|v| x|x|) with v = 2, b = 1/4
block zza { activation: zz dim: 1 width: 1 skip: scaled(-1/2) W_up: [[1]] W_down: [[1]] }
# -2x + x|x| needs bv = -2 and bv|v| = 1
block zzb { activation: zz dim: 1 width: 1 skip: scaled(-3) W_up: [[1]] W_down: [[1]] }
# x + |x|^3 = sigma(-x)
block nega { activation: neg dim: 1 width: 1 skip: scaled(2) W_up: [[1]] W_down: [[1]] }
# -3x/2 + |x|^3 = b(-vx + v^3|x|^3) with v^2 = 2/3
block negb { activation: neg dim: 1 width: 1 skip: scaled(-1/2) W_up: [[1]] W_down: [[1]] }
block cubg { activation: cub dim: 1 width: 1 skip: scaled(-2) }
absorb cubw
absorb cubI
absorb p3a
absorb p2a
absorb zza
absorb zzb
absorb nega
absorb negb
absorb cubg
"""


def test_r_pos_by_hand() -> None:
    got = {k.removeprefix("absorb "): v for k, v in api.prove(R_POS, budget=BUDGET).verdicts.items()}
    assert got == {"cubw": "absorbable", "cubI": "absorbable", "p3a": "not-absorbable",
                   "p2a": "not-absorbable", "zza": "absorbable", "zzb": "not-absorbable",
                   "nega": "absorbable", "negb": "absorbable", "cubg": "conditional"}


BIASED = """
activation r2(z) = max(0,z)^2
activation ea(z) = z^2 + abs(z)
activation tsin(z) = z + sin(z)
# MATH.md 8: relu(-s)^2 = s^2 - relu(s)^2 absorbs a parallel pair with biases
block b_r2 { activation: r2 dim: 1 width: 2 bias: true }
block b_r2d { activation: r2 dim: d bias: true }
block b_ea { activation: ea dim: 1 width: 2 bias: true }
# sigma(t) + sigma(t + pi) = 2t + pi: a biased absorber may absorb it
block b_sin { activation: tsin absorber_bias: true }
block b_sinB { activation: tsin bias: true }
block b_sin0 { activation: tsin }
# pre-LN with M = 0 is already residual-free; with M = I, bounded against unbounded
block b_preln0 { activation: gelu norm: pre-ln skip: none }
block b_preln { activation: gelu norm: pre-ln }
# post-LN at d = 1: LN is constant, P = 0
block b_postln { activation: gelu norm: post-ln dim: 1 }
absorb b_r2
absorb b_r2d
absorb b_ea
absorb b_sin
absorb b_sinB
absorb b_sin0
absorb b_preln0
absorb b_preln
absorb b_postln
"""


def test_biased_and_normalised() -> None:
    got = {k.removeprefix("absorb "): v for k, v in api.prove(BIASED, budget=BUDGET).verdicts.items()}
    assert got == {"b_r2": "open", "b_r2d": "open", "b_ea": "open", "b_sin": "open", "b_sinB": "open",
                   "b_sin0": "impossible", "b_preln0": "absorbable", "b_preln": "impossible",
                   "b_postln": "absorbable"}


DOMAINS = """
activation lk(z; -2 < a < 1) = if z >= 0 then z else a*z
activation lk2(z; -1 < a <= 1) = if z >= 0 then z else a*z
activation lk3(z; a > -2, a != -1, a < 1) = if z >= 0 then z else a*z
activation mx(z; 0 < a <= 1) = a*z + (1 - a)*softplus(z)
activation mx2(z; 0 <= a < 1) = a*z + (1 - a)*softplus(z)
activation pw2(z; 0 < k < 3, k != 1) = max(0,z)^k
activation el2(z; a >= 0) = if z >= 0 then z else a*(exp(z) - 1)
classify lk
classify lk2
classify lk3
classify mx
classify mx2
classify pw2
classify el2
"""


@pytest.mark.slow  # every parameter-domain attack, seconds of CPU (the fast tier's budget: make test-fast <= 60 s)
def test_parameter_domains() -> None:
    """lk contains a = -1 (|z|, even); lk2, mx contain a = 1 (sigma = z); el2 contains a = 0 (ReLU);
    lk3 and mx2 exclude the bad points, so R-linear-odd's iff holds; relu^k is homogeneous, k != 1."""
    report = api.prove(DOMAINS, budget=BUDGET)
    got = {r.query: (r.verdict, r.decided_by) for r in report.results}
    assert [v for v, _ in got.values()] == ["open", "conditional", "conditional", "conditional",
                                            "conditional", "impossible", "open"]
    by = [b for _, b in got.values()]
    assert by[1] == "L-odd-linear" and by[3] == "L-odd-linear"
    assert by[2] == "R-linear-odd" and by[4] == "R-linear-odd"
