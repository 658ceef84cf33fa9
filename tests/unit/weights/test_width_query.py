"""The `width NAME` query: proved sufficient widths (witness constructions), proved lower bounds, the gap."""

from __future__ import annotations

import pytest
import sympy as sp

from symabsorb.dsl.errors import SpecError
from symabsorb.model import activation_from_text, resolve_text
from symabsorb.model.block import Block, Skip
from symabsorb.theory.derivation import Verdict
from tests.helpers import build_report, classify, require_module

np = require_module("numpy", "weights")

SPEC = """
block narrow { activation: relu dim: 8 width: 2 }
block tanh_b { activation: tanh dim: 4 width: 8 }
block mish_b { activation: mish dim: 4 width: 16 }
block lin { activation: identity dim: 4 width: 2 }
block lin_w { activation: identity dim: 3 width: 1 W_up: [[1, 0, 0]] W_down: [[1], [0], [0]] }
block gelu_w { activation: gelu dim: 2 width: 3 W_up: [[1, 0], [0, 1], [1, 1]] W_down: [[1, 2, 0], [0, 1, 3]] }
block one { activation: relu dim: 1 width: 3 }
width narrow
width tanh_b
width mish_b
width lin
width lin_w
width gelu_w
width one
"""


def _answers() -> dict[str, object]:
    spec = resolve_text(SPEC)
    report = build_report(spec, SPEC)
    return {a.query: a.derivation for a in report.answers}


@pytest.fixture(scope="module")
def answers() -> dict[str, object]:
    return _answers()


@pytest.mark.parametrize("query, verdict, upper, lower, necessary", [
    ("width narrow", Verdict.ABSORBABLE, "16", "16", "proved"),     # Theorem W, generic weights: 2d for m < d
    ("width tanh_b", Verdict.IMPOSSIBLE, None, None, None),         # L-growth holds at every width
    ("width mish_b", Verdict.IMPOSSIBLE, None, None, None),         # thm-SDI: no width at all
    ("width lin", Verdict.ABSORBABLE, "4", None, "open"),          # linear: d suffices
    ("width lin_w", Verdict.ABSORBABLE, "3", "3", "proved"),       # I + W_down W_up = diag(2, 1, 1): rank 3
    ("width gelu_w", Verdict.ABSORBABLE, "5", "5", "proved"),       # Theorem W: the 3^3 labellings, exact
    ("width one", Verdict.ABSORBABLE, "2", None, "open"),          # d = 1: two units; no vacuous lower bound
])
def test_width_answers(answers: dict[str, object], query: str, verdict: Verdict, upper: str | None,
                       lower: str | None, necessary: str | None) -> None:
    d = answers[query]
    assert d.verdict is verdict  # type: ignore[attr-defined]
    assert d.width[:2] == (upper, lower)  # type: ignore[attr-defined]
    assert d.necessary == necessary  # type: ignore[attr-defined]


def test_width_of_a_stack_is_an_error() -> None:
    with pytest.raises(SpecError, match="stack"):
        resolve_text("block b { activation: relu dim: 2 width: 2 }\nstack s = b ^ 2\nwidth s")


def test_pair_construction_absorbs_numerically() -> None:
    """The witness behind `m + 2 rank M` for GELU: B plus pairs ±(u/2c)σ(±v·x) equals Mx + B(x)."""
    rng = np.random.default_rng(0)
    from scipy import special

    def gelu(t: np.ndarray) -> np.ndarray:
        return t * (1 + special.erf(t / np.sqrt(2))) / 2

    d, m = 3, 4
    w_up, w_down = rng.standard_normal((m, d)), rng.standard_normal((d, m))
    skip = rng.standard_normal((d, d))
    u, s, vt = np.linalg.svd(skip)
    extra_up, extra_down = [], []
    for k in range(d):  # c = 1/2 for GELU: (u/2c)(σ(v·x) − σ(−v·x)) = u vᵀx
        extra_up += [vt[k], -vt[k]]
        extra_down += [u[:, k] * s[k], -u[:, k] * s[k]]
    up = np.vstack([w_up, np.array(extra_up)])
    down = np.hstack([w_down, np.array(extra_down).T])
    x = rng.standard_normal((100, d))
    assert up.shape[0] == m + 2 * d
    assert np.abs(gelu(x @ up.T) @ down.T - (x @ skip.T + gelu(x @ w_up.T) @ w_down.T)).max() < 1e-9


def test_lower_bound_is_not_claimed_for_degenerate_concrete_weights() -> None:
    from tests.helpers import prove, width_bounds

    act = activation_from_text("silu")
    block = Block("b", act, 2, 3, Skip("identity"), sp.ImmutableMatrix([[1, 0], [2, 0], [0, 1]]),
                  sp.ImmutableMatrix([[1, 0, 0], [0, 1, 0]]))
    # Theorem D (issue 30) now proves the exact width of degenerate weights: atoms (1,0), (2,0) on one line (SiLU:
    # different dilates), J = {(1,0)} and a pair for e_2: 2 + 1 + 2 = 5, every smaller width ruled out exactly
    from symabsorb.theory.library import default_library
    from tests.helpers import decide

    b = width_bounds(block, decide(block, default_library()))
    assert (b.lower, b.upper, b.decided_by) == (5, 5, "thm-D")
    assert prove(block).decided_by == "thm-D"


@pytest.mark.parametrize("text, c, k", [("z + z*abs(z)", 1, 2), ("2*z + max(0,z)^2", 2, 2), ("z - abs(z)^3", 1, 3)])
def test_positively_homogeneous_rescaling_absorbs(text: str, c: int, k: int) -> None:
    """L-pos-rescale: σ = cz + q, q positively homogeneous of degree k. With λ_i > 0 and
    M = c W_down diag(λ^(1−k) − 1) W_up, rows λ_i w_i and columns a_i λ_i^(−k) reproduce Mx + B(x)."""
    from symabsorb.analysis.numeric import evaluate_array

    act = activation_from_text(text)
    d = classify(act)
    # Cor. R-pos (the exact criterion, iff for nondegenerate weights) now decides; N = ∅ is this rescaling
    assert d.decided_by == "R-pos" and d.verdict is Verdict.CONDITIONAL and d.necessary == "proved"
    rng = np.random.default_rng(k)
    w_up, w_down = rng.standard_normal((4, 2)), rng.standard_normal((2, 4))
    lam = rng.uniform(0.3, 3.0, size=4)
    m_skip = c * w_down @ np.diag(lam ** (1 - k) - 1) @ w_up
    xs = rng.standard_normal((500, 2)) * 3
    residual = xs @ m_skip.T + evaluate_array(act.expr, xs @ w_up.T) @ w_down.T
    rescaled = evaluate_array(act.expr, xs @ (lam[:, None] * w_up).T) @ (w_down * lam ** (-k)).T
    assert np.max(np.abs(rescaled - residual)) < 1e-9 * max(1.0, float(np.max(np.abs(residual))))


@pytest.mark.parametrize("text", ["relu", "if z >= 0 then z else z/5", "z + sign(z)", "z + max(0,z)^2 + min(0,z)^3",
                                  "z + z^2"])
def test_positively_homogeneous_rescaling_does_not_claim_others(text: str) -> None:
    assert classify(activation_from_text(text)).decided_by not in ("L-pos-rescale", "R-pos")
