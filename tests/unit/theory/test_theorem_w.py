"""Theorem W (MATH §11): dilate independence, the line-module hypothesis, the exact minimal width by the
3^m enumeration (cross-checked against an independent float implementation and a witness per case),
the bounds for large m, the invertibility certificate, generic symbolic blocks, file weights, and
`absorb --width`. Each soundness test names the input that must not get an exact-width claim."""

from __future__ import annotations

import itertools
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp

from symabsorb.analysis.posdilates import positive_dilate_fact
from symabsorb.model import activation_from_text, resolve_text
from symabsorb.model.block import Block, Skip
from symabsorb.theory.derivation import HypStatus, Verdict
from symabsorb.theory.hyp_width import line_module
from symabsorb.theory.hypotheses import Subject
from symabsorb.theory.widthexact import (
    construct,
    enumerate_width,
    exact_rank_q,
    modular_rank_lower,
    squared_frobenius_upper,
)
from tests.helpers import build_report, require_module

np = require_module("numpy", "weights")

# ---- DI and LM ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, how", [
    ("z*Phi(z)", "erf"), ("z*sigmoid(z)", "poles"), ("z*sigmoid(1.702*z)", "poles"), ("log(1 + exp(z))", "poles"),
    ("-softplus(-z)", "poles"), ("z*min(max(z + 3, 0), 6)/6", "kinks"), ("(z + sqrt(z^2 + 4))/2", "sqrt"),
])
def test_dilate_independence_is_proved_structurally(text: str, how: str) -> None:
    fact = positive_dilate_fact(activation_from_text(text).expr)
    assert fact.evidence.proved and fact.how == how


@pytest.mark.parametrize("text", ["z/2*(1 + tanh(sqrt(2/pi)*(z + 0.044715*z^3)))", "z*tanh(softplus(z))", "tanh(z)",
                                  "z + z^2", "z", "abs(z)", "max(0, z)"])
def test_dilate_independence_is_not_claimed_without_a_criterion(text: str) -> None:
    """tanh-GELU has no structural proof here (its poles solve a cubic): DI stays unknown, never proved.
    ReLU's dilates are dependent (σ(2t) = 2σ(t)): no criterion may fire."""
    assert not positive_dilate_fact(activation_from_text(text).expr).evidence.proved


def _lm(text: str, gated: bool = False) -> tuple[HypStatus, str]:
    act = activation_from_text(text, gated=gated) if gated else activation_from_text(text)
    block = Block("b", act, 2, 3, Skip("identity"))
    status, clause, _, _ = line_module(Subject(block=block))
    return status, clause


@pytest.mark.parametrize("text, clause", [
    ("max(0, z)", "homogeneous"), ("if z >= 0 then z else z/100", "homogeneous"), ("if z >= 0 then z else z/4",
                                                                                   "homogeneous"),
    ("z*Phi(z)", "dilates"), ("z*sigmoid(z)", "dilates"), ("log(1 + exp(z))", "dilates"), ("-softplus(-z)", "dilates"),
    ("z*min(max(z + 3, 0), 6)/6", "dilates"), ("(z + sqrt(z^2 + 4))/2", "dilates"),
])
def test_line_module_holds(text: str, clause: str) -> None:
    assert _lm(text) == (HypStatus.PROVED, clause)


@pytest.mark.parametrize("text", ["z/2*(1 + tanh(sqrt(2/pi)*(z + 0.044715*z^3)))", "z*tanh(softplus(z))", "abs(z)",
                                  "if z > 0 then z else exp(z) - 1", "z + z^2", "tanh(z)"])
def test_line_module_is_not_claimed(text: str) -> None:
    assert _lm(text)[0] is not HypStatus.PROVED


def test_line_module_refuted_for_a_gated_block() -> None:
    assert _lm("swiglu", gated=True)[0] is HypStatus.REFUTED


# ---- the exact enumeration against an independent implementation ---------------------------------------


def _float_formula(w_up: np.ndarray, w_down: np.ndarray, skip: np.ndarray, c: float) -> int:
    """w* by the theorem's formula, written independently: numpy ranks of N_S (I − W_J⁺ W_J), every S, J."""
    m, d = w_up.shape
    best = None
    for labels in itertools.product(range(3), repeat=m):
        s = [i for i in range(m) if labels[i] == 1]
        j = [i for i in range(m) if labels[i] == 2]
        n = skip + 2 * c * (w_down[:, s] @ w_up[s, :])
        proj = np.eye(d) - (np.linalg.pinv(w_up[j, :]) @ w_up[j, :] if j else 0)
        cost = len(j) + 2 * np.linalg.matrix_rank(n @ proj, tol=1e-9)
        best = cost if best is None else min(best, cost)
    assert best is not None
    return m + best


def _q(a: np.ndarray) -> list[list[Fraction]]:
    return [[Fraction(int(x)) for x in row] for row in a]


def _relu(t: np.ndarray, slope: float = 0.0) -> np.ndarray:
    return np.where(t >= 0, t, slope * t)


def _nondegenerate(w_up: np.ndarray, w_down: np.ndarray) -> bool:
    if (np.abs(w_up).sum(axis=1) == 0).any() or (np.abs(w_down).sum(axis=0) == 0).any():
        return False
    return all(np.linalg.matrix_rank(w_up[[i, k]]) == 2 for i, k in itertools.combinations(range(len(w_up)), 2))


@pytest.mark.parametrize("seed", range(12))
def test_enumeration_matches_the_independent_formula_and_its_witness_absorbs(seed: int) -> None:
    rng = np.random.default_rng(seed)
    d, m = int(rng.integers(2, 4)), int(rng.integers(1, 5))
    while True:
        w_up, w_down = rng.integers(-2, 3, (m, d)), rng.integers(-2, 3, (d, m))
        if _nondegenerate(w_up, w_down):
            break
    if seed % 3 == 0:  # plant an index set: W_S = −M (ReLU, c = 1/2)
        skip = -(w_down[:, :1] @ w_up[:1, :])
    elif seed % 3 == 1:
        skip = np.eye(d, dtype=int)
    else:
        skip = rng.integers(-1, 2, (d, d))
    slope = [0.0, 0.25][seed % 2]  # ReLU (c = 1/2) and PReLU a = 1/4 (c = 5/8)
    c = Fraction(1 + Fraction(slope).limit_denominator(), 2)
    found = enumerate_width(_q(w_up), _q(w_down), _q(skip), c)
    assert found is not None
    lab, _ = found
    assert lab.width(m) == _float_formula(w_up.astype(float), w_down.astype(float), skip.astype(float), float(c))
    rows, cols = construct(_q(w_up), _q(w_down), _q(skip), c, lab)
    up2 = np.array([[float(x) for x in r] for r in rows])
    down2 = np.array([[float(x) for x in r] for r in cols])
    assert up2.shape == (lab.width(m), d)
    x = rng.standard_normal((200, d))
    residual = x @ skip.T + _relu(x @ w_up.T, slope) @ w_down.T
    assert np.abs(_relu(x @ up2.T, slope) @ down2.T - residual).max() < 1e-9


def test_a_planted_index_set_gives_width_m() -> None:
    w_up, w_down = np.array([[1, 0], [0, 1], [1, 1]]), np.array([[-1, 0, 1], [0, -1, 1]])
    found = enumerate_width(_q(w_up), _q(w_down), _q(np.eye(2, dtype=int)), Fraction(1, 2))
    assert found is not None and found[0].width(3) == 3 and found[0].flipped == (0, 1)


def test_one_dimension_one_unit_by_hand() -> None:
    """d = m = 1, M = μ: w* = 1 if μ = −2c·a·w (flip), else 2 (one more unit on the line: any βw)."""
    for mu, expect in ((Fraction(-1), 1), (Fraction(3), 2), (Fraction(0), 1)):
        found = enumerate_width([[Fraction(1)]], [[Fraction(1)]], [[mu]], Fraction(1, 2))
        assert found is not None and found[0].width(1) == expect


# ---- exact building blocks ---------------------------------------------------------------------------------


def test_modular_rank_is_a_lower_bound_and_frobenius_an_upper_one() -> None:
    rng = np.random.default_rng(5)
    for _ in range(20):
        a = rng.integers(-3, 4, (4, 3)) @ rng.integers(-3, 4, (3, 5))
        q = _q(a)
        assert modular_rank_lower(a.astype(np.float64)) <= exact_rank_q(q, 5)
        assert modular_rank_lower(q) <= exact_rank_q(q, 5)
    f = rng.standard_normal((6, 4)).astype(np.float32).astype(np.float64)
    exact = sum((Fraction(float(x)) ** 2 for x in f.ravel()), Fraction(0))
    assert exact <= squared_frobenius_upper(f) <= exact * (1 + Fraction(1, 2 ** 50))
    g = rng.standard_normal((3, 3))  # float64 mantissas: the exact route
    assert squared_frobenius_upper(g) == sum((Fraction(float(x)) ** 2 for x in g.ravel()), Fraction(0))


# ---- the `width` query ---------------------------------------------------------------------------------------

SPEC = """
activation gtanh(z) = z/2*(1 + tanh(sqrt(2/pi)*(z + 0.044715*z^3)))
block planted { activation: relu W_up: [[1, 0], [0, 1], [1, 1]] W_down: [[-1, 0, 1], [0, -1, 1]] }
block gelu_w { activation: gelu W_up: [[1, 0], [0, 1], [1, 1]] W_down: [[1, 2, 0], [0, 1, 3]] }
block degenerate { activation: relu W_up: [[1, 0], [2, 0], [0, 1]] W_down: [[1, 0, 0], [0, 1, 0]] }
block tanh_gelu { activation: gtanh W_up: [[1, 0], [0, 1], [1, 1]] W_down: [[1, 2, 0], [0, 1, 3]] }
block biased { activation: relu dim: 4 width: 16 bias: true }
block swiglu_b { activation: swiglu dim: 4 width: 16 }
block wide { activation: relu dim: 4 width: 16 }
block narrow { activation: gelu dim: 8 width: 2 }
block noskip { activation: relu dim: 4 width: 3 skip: none }
block rank1 { activation: relu dim: 3 width: 5 skip: [[1, 0, 0], [0, 0, 0], [0, 0, 0]] }
block mish_b { activation: mish dim: 4 width: 16 }
block big { activation: relu
  W_up: [[1, 0], [0, 1], [1, 1], [1, 2], [2, 1], [1, 3], [3, 1], [1, -1], [2, -1], [1, -2], [3, 2], [2, 3]]
  W_down: [[1, 0, 1, 2, 0, 1, 1, 0, 2, 1, 1, 0], [0, 1, 1, 0, 2, 1, 0, 1, 1, 2, 0, 1]] }
block tiny { activation: relu skip: identity
  W_up: [[1/100, 0], [0, 1/100], [1/100, 1/100], [1/100, 2/100], [2/100, 1/100], [1/100, 3/100], [3/100, 1/100],
         [1/100, -1/100], [2/100, -1/100], [1/100, -2/100], [3/100, 2/100], [2/100, 3/100]]
  W_down: [[1/10, 0, 1/10, 1/10, 0, 1/10, 1/10, 0, 1/10, 1/10, 1/10, 0],
           [0, 1/10, 1/10, 0, 1/10, 1/10, 0, 1/10, 1/10, 1/10, 0, 1/10]] }
"""
QUERIES = ["planted", "gelu_w", "degenerate", "tanh_gelu", "biased", "swiglu_b", "wide", "narrow", "noskip", "rank1",
           "mish_b", "big", "tiny"]


@pytest.fixture(scope="module")
def answers() -> dict[str, object]:
    text = SPEC + "".join(f"width {q}\n" for q in QUERIES)
    spec = resolve_text(text)
    report = build_report(spec, text)
    return {a.query.split()[1]: a.derivation for a in report.answers}


@pytest.mark.parametrize("name, upper, lower, scope", [
    ("planted", "3", "3", "these weights"),      # S = {0, 1}: W_S = −I, width m
    ("gelu_w", "5", "5", "these weights"),       # the 3^3 labellings: J = {0, 1}
    ("wide", "20", "20", "generic weights"),     # m + d
    ("narrow", "16", "16", "generic weights"),   # 2d for m < d
    ("noskip", "3", "3", "nondegenerate weights"),
    ("rank1", "7", "7", "generic weights"),      # m + min(2r, d), r = 1
    ("big", "14", "13", "these weights"),        # 3^12 over the cap: m + min(2 rank M, 2d − rank W_up); min_S rank = 1
    ("tiny", "14", "14", "these weights"),       # every N_S invertible, certified: m + 2d − rank W_up
])
def test_theorem_w_answers(answers: dict[str, object], name: str, upper: str, lower: str, scope: str) -> None:
    d = answers[name]
    assert d.decided_by == "thm-W" and d.verdict is Verdict.ABSORBABLE  # type: ignore[attr-defined]
    assert d.width[:2] == (upper, lower) and d.width[3] == scope  # type: ignore[attr-defined]
    plain = f"w* = {upper}" if upper == lower else f"{lower} <= w* <= {upper}"
    assert d.condition_plain == plain  # type: ignore[attr-defined]


def test_degenerate_weights_get_theorem_d_exact_width(answers: dict[str, object]) -> None:
    """Degenerate weights: Theorem W does not apply, Theorem D (issue 30) gives w* exactly: the line e_1 carries
    one essential atom (C = (1, 2)), J = {it} and a pair for e_2: 1 + 1 + 2 = 4."""
    d = answers["degenerate"]
    assert d.decided_by == "thm-D" and d.width[:2] == ("4", "4")  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["tanh_gelu", "biased", "swiglu_b"])
def test_no_exact_width_without_the_hypotheses(answers: dict[str, object], name: str) -> None:
    """A σ without proved DI, a biased block, a gated block: Theorem W does not apply."""
    d = answers[name]
    assert d.decided_by != "thm-W"  # type: ignore[attr-defined]
    upper, lower = d.width[:2]  # type: ignore[attr-defined]
    assert lower is None or upper is None or upper != lower


def test_no_width_for_mish(answers: dict[str, object]) -> None:
    assert answers["mish_b"].verdict is Verdict.IMPOSSIBLE  # type: ignore[attr-defined]


def test_d1_with_several_units_gets_no_generic_claim() -> None:
    """d = 1, m = 3: no weights are nondegenerate, so Theorem W's generic value (m + d = 4) would be about
    no weights; L-dim-one's 2 units stand."""
    text = "block one { activation: relu dim: 1 width: 3 }\nwidth one\n"
    d = build_report(resolve_text(text), text).answers[0].derivation
    assert d.decided_by != "thm-W" and d.width[0] == "2"  # type: ignore[union-attr]


# ---- file weights and `absorb --width` -----------------------------------------------------------------------


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "symabsorb", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_file_weights_get_the_inline_answer(tmp_path: Path) -> None:
    w_up, w_down = np.array([[1, 0], [0, 1], [1, 1]], float), np.array([[1, 2, 0], [0, 1, 3]], float)
    np.savez(tmp_path / "w.npz", W_up=w_up, W_down=w_down)
    text = ('block f { activation: gelu weights: "w.npz" }\n'
            "block i { activation: gelu W_up: [[1, 0], [0, 1], [1, 1]] W_down: [[1, 2, 0], [0, 1, 3]] }\n"
            "width f\nwidth i\n")
    (tmp_path / "s.absorb").write_text(text)
    from symabsorb.model import load_spec

    report = build_report(load_spec(str(tmp_path / "s.absorb")), text)
    f, i = (a.derivation for a in report.answers)
    assert f.width == i.width == ("5", "5", False, "these weights")  # type: ignore[union-attr]
    assert f.decided_by == i.decided_by == "thm-W"  # type: ignore[union-attr]


@pytest.mark.slow  # a large weights file decided exactly, seconds of CPU (the fast tier's budget: make test-fast <= 60 s)
def test_large_file_block_bounds_and_witness(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    m, d = 14, 4
    w_up = rng.standard_normal((m, d)).astype(np.float32)
    w_down = rng.standard_normal((d, m)).astype(np.float32)
    np.savez(tmp_path / "w.npz", W_up=w_up, W_down=w_down)
    text = 'block f { activation: relu weights: "w.npz" }\nwidth f\n'
    (tmp_path / "s.absorb").write_text(text)
    from symabsorb.model import load_spec

    d_ = build_report(load_spec(str(tmp_path / "s.absorb")), text).answers[0].derivation
    assert d_.decided_by == "thm-W" and d_.width[0] == str(m + d)  # type: ignore[union-attr]
    assert int(d_.width[1]) in (m, m + 1)  # type: ignore[union-attr]
    out = _cli("absorb", "s.absorb", "--block", "f", "--width", str(m + d + 1), "-o", "wit.npz", cwd=tmp_path)
    assert out.returncode == 0, out.stderr + out.stdout
    wit = np.load(tmp_path / "wit.npz")
    up2, down2 = wit["W_up"], wit["W_down"]
    assert up2.shape == (m + d + 1, d)
    x = rng.standard_normal((300, d))
    res = x + np.maximum(x @ w_up.astype(float).T, 0) @ w_down.astype(float).T
    assert np.abs(np.maximum(x @ up2.T, 0) @ down2.T - res).max() < 1e-8
    low = _cli("absorb", "s.absorb", "--block", "f", "--width", str(m - 1), cwd=tmp_path)
    assert low.returncode == 1 and "proved too small" in low.stdout


def test_absorb_width_writes_the_exact_witness(tmp_path: Path) -> None:
    text = "block g { activation: relu W_up: [[1, 0], [0, 1], [1, 1]] W_down: [[1, 2, 0], [0, 1, 3]] }\n"
    (tmp_path / "s.absorb").write_text(text)
    out = _cli("absorb", "s.absorb", "--block", "g", "--width", "5", "-o", "w.npz", cwd=tmp_path)
    assert out.returncode == 0, out.stderr + out.stdout
    assert "exact rational arithmetic" in out.stdout
    wit = np.load(tmp_path / "w.npz")
    x = np.random.default_rng(0).standard_normal((100, 2))
    w_up, w_down = np.array([[1, 0], [0, 1], [1, 1]], float), np.array([[1, 2, 0], [0, 1, 3]], float)
    res = x + np.maximum(x @ w_up.T, 0) @ w_down.T
    assert wit["W_up"].shape == (5, 2)
    assert np.abs(np.maximum(x @ wit["W_up"].T, 0) @ wit["W_down"].T - res).max() < 1e-12
    assert _cli("absorb", "s.absorb", "--block", "g", "--width", "4", cwd=tmp_path).returncode == 1


def test_exact_witness_check_is_exact_for_relu() -> None:
    from tests.helpers import prove, width_witness

    block = Block("g", activation_from_text("relu"), 2, 3, Skip("identity"), sp.ImmutableMatrix([[1, 0], [0, 1], [1, 1]]),
                  sp.ImmutableMatrix([[1, 2, 0], [0, 1, 3]]))
    witness, why = width_witness(block, prove(block), 7)
    assert witness is not None and witness.w_up.shape == (7, 2) and "w* = 5" in why
    assert "exact rational arithmetic" in witness.verified and "error 0.00e+00" in witness.verified


def test_large_file_block_with_the_norm_certificate_is_exact(tmp_path: Path) -> None:
    """Small weights: 4c²‖W_down‖_F²‖W_up‖_F² < σ_min(I)² = 1, so every N_S is invertible and
    w* = m + 2d − rank W_up = m + d (rank W_up = d proved modulo p)."""
    rng = np.random.default_rng(2)
    m, d = 14, 4
    np.savez(tmp_path / "w.npz", W_up=(rng.standard_normal((m, d)) * 0.01).astype(np.float32),
             W_down=(rng.standard_normal((d, m)) * 0.01).astype(np.float32))
    text = 'block f { activation: relu weights: "w.npz" }\nwidth f\n'
    (tmp_path / "s.absorb").write_text(text)
    from symabsorb.model import load_spec

    d_ = build_report(load_spec(str(tmp_path / "s.absorb")), text).answers[0].derivation
    assert d_.decided_by == "thm-W" and d_.width[:2] == (str(m + d), str(m + d))  # type: ignore[union-attr]
    assert any("invertible" in s.text for s in d_.steps)  # type: ignore[union-attr]


def test_a_hidden_zero_in_the_slope_is_decided_exactly() -> None:
    """`(cosh(1)^2 - sinh(1)^2 - 1) z` on z < 0 is ReLU: Theorem W's exact w* = m (S = {0, 1} flips);
    the same slope without the `- 1` is σ(z) = z, which no Theorem W claim may cover."""
    rows = "W_up: [[1, 0], [0, 1], [1, 1]] W_down: [[-1, 0, 2], [0, -1, 3]]"
    text = ("activation lk(z) = if z > 0 then z else (cosh(1)^2 - sinh(1)^2)*z\n"
            "activation lk2(z) = if z > 0 then z else (cosh(1)^2 - sinh(1)^2 - 1)*z\n"
            f"block a {{ activation: lk dim: 2 width: 3 skip: identity {rows} }}\n"
            f"block b {{ activation: lk2 dim: 2 width: 3 skip: identity {rows} }}\nwidth a\nwidth b\n")
    a, b = (x.derivation for x in build_report(resolve_text(text), text).answers)
    assert b.decided_by == "thm-W" and b.width is not None and b.width[0] == b.width[1] == "3"
    assert a.decided_by != "thm-W"
