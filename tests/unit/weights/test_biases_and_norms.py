"""Real layers (issue 19, MATH.md Part II): biases, the absorber's biases, where the norm sits.

The counterexamples of MATH.md §8 are here with their true answers checked independently
(plain floats, no symabsorb code): a bias-free result applied to them would say `impossible`.
"""

from __future__ import annotations

import math
import random

import pytest

from symabsorb.dsl.errors import SpecError
from symabsorb.model import resolve_text
from symabsorb.theory.derivation import Verdict
from symabsorb.theory.library import default_library
from tests.helpers import ROOT, prove


def _prove(text: str, name: str = "b"):  # type: ignore[no-untyped-def]
    spec = resolve_text(text)
    block = next(b for b in spec.blocks if b.name == name)
    return prove(block)


def _relu(s: float) -> float:
    return max(0.0, s)


# ---- §8 counterexamples: the true answer is "absorbable"; never `impossible` ------------------------


def test_biased_relu_squared_is_absorbable_so_never_impossible() -> None:
    # Mx + a relu(x+b1)^2 - a relu(x+b2)^2 + c with a = -M/(2(b1-b2)), flipped units absorb it
    m_skip, b1, b2, c = 1.0, 1.0, 0.0, 0.25
    a = -m_skip / (2 * (b1 - b2))
    rng = random.Random(1)
    for _ in range(200):
        x = rng.uniform(-5, 5)
        residual = m_skip * x + a * _relu(x + b1) ** 2 - a * _relu(x + b2) ** 2 + c
        const = a * (b1 * b1 - b2 * b2)  # the flips leave -const, absorbed by the output bias
        absorbed = -a * _relu(-x - b1) ** 2 + a * _relu(-x - b2) ** 2 + c + const
        assert math.isclose(residual, absorbed, abs_tol=1e-9)
    d = _prove("activation relu2(z) = max(0, z)^2\n"
               "block b { activation: relu2 dim: 1 width: 2 W_up: [[1], [1]] W_down: [[-1/2, 1/2]] "
               "b_up: [1, 0] b_down: [1/4] }")
    assert d.verdict is not Verdict.IMPOSSIBLE and d.verdict is not Verdict.NOT_ABSORBABLE
    symbolic = _prove("activation relu2(z) = max(0, z)^2\nblock b { activation: relu2 dim: 1 width: 2 bias: true }")
    assert symbolic.verdict is Verdict.OPEN
    assert "prop5" not in symbolic.cited
    bare = _prove("activation relu2(z) = max(0, z)^2\nblock b { activation: relu2 dim: 1 width: 2 }")
    assert bare.verdict is Verdict.IMPOSSIBLE  # the paper's setting is unchanged


def test_biased_even_activation_with_parallel_units_is_not_impossible() -> None:
    # σ = z² + |z| is even (L-parity, bias-free only); two units on parallel hyperplanes with biases
    # produce a linear term: (x+1)² - (x-1)² = 4x, and |x+1| - |x-1| is not linear, so use the
    # checked identity only for the quadratic part and ask that the verdict is not `impossible`
    d = _prove("activation sq_abs(z) = z^2 + abs(z)\n"
               "block b { activation: sq_abs dim: 1 width: 2 W_up: [[1], [1]] W_down: [[1, -1]] "
               "b_up: [1, -1] b_down: [0] }")
    assert d.verdict not in (Verdict.IMPOSSIBLE, Verdict.NOT_ABSORBABLE)
    assert "L-parity" not in d.cited
    symbolic = _prove("activation sq_abs(z) = z^2 + abs(z)\nblock b { activation: sq_abs bias: true }")
    assert symbolic.verdict is Verdict.OPEN


def test_swiglu_with_gate_biases_is_not_impossible() -> None:
    # the flip remainder (u·x+β)(v·x+γ) of a gated unit has linear part βv + γu: Prop. 6 is false here
    d = _prove("block b { activation: swiglu dim: 1 width: 2 W_up: [[1], [1]] W_gate: [[1], [1]] "
               "W_down: [[1, 1]] b_gate: [1, -1] b_up: [0, 0] }")
    assert d.verdict not in (Verdict.IMPOSSIBLE, Verdict.NOT_ABSORBABLE)
    assert "prop6" not in d.cited
    assert _prove("block b { activation: swiglu bias: true }").verdict is Verdict.OPEN


def test_t_plus_sin_with_a_biased_absorber_is_not_impossible() -> None:
    # σ(t) + σ(t + π) = 2t + π: a biased residual-free block absorbs what the bias-free one cannot
    rng = random.Random(2)
    for _ in range(100):
        t = rng.uniform(-10, 10)
        assert math.isclose((t + math.sin(t)) + (t + math.pi + math.sin(t + math.pi)), 2 * t + math.pi,
                            abs_tol=1e-9)
    text = "activation ts(z) = z + sin(z)\nblock b { activation: ts absorber_bias: true }"
    d = _prove(text)
    assert d.verdict not in (Verdict.IMPOSSIBLE, Verdict.NOT_ABSORBABLE)
    assert any("residual-free block may carry biases" in a for a in d.assumptions)


# ---- the setting of every result ----------------------------------------------------------------------


def test_results_false_with_biases_declare_the_bias_free_setting() -> None:
    lib = default_library()
    for rid in ("prop5", "L-degree", "prop6", "L-gate-continuous", "L-parity", "L-jacobian", "L-jacobian-depth",
                "cor7", "thm8", "thm10", "R-linear-odd", "R-no-flip", "thm-R"):
        assert lib.get(rid).biases == ("none",), rid
        assert lib.get(rid).norms == ("none",), rid


def test_no_bias_free_result_decides_a_biased_or_normed_block() -> None:
    lib = default_library()
    bare_only = {r.id for r in lib.results.values() if r.biases == ("none",) and r.norms == ("none",)}
    specs = ["block b { activation: %s bias: true }", "block b { activation: %s absorber_bias: true }",
             "block b { activation: %s norm: pre-ln }", "block b { activation: %s dim: 3 norm: post-ln eps: 1/10 }",
             "block b { activation: %s dim: 3 norm: post-rms eps: 1/10 bias: true }"]
    for act in ("relu", "gelu", "relu2", "tanh", "mish", "swiglu", "geglu", "identity", "elu"):
        for spec in specs:
            d = _prove(spec % act)
            if d.decided_by is not None and "post-" not in spec:
                assert d.decided_by not in bare_only, (act, spec, d.decided_by)


# ---- biased criteria (Cor. R-aff-1), Lemma N, Lemma PN, post-RMSNorm --------------------------------


@pytest.mark.parametrize("act", ["relu", "gelu", "silu", "softplus", "gelu_tanh", "leaky_relu", "hardswish"])
def test_biased_flip_criterion(act: str) -> None:
    d = _prove(f"block b {{ activation: {act} bias: true }}")
    assert d.verdict is Verdict.CONDITIONAL and d.decided_by == "R-aff-1"
    assert d.necessary == "proved" and d.condition_constant is not None


@pytest.mark.parametrize("act", ["mish"])
def test_biased_without_a_proved_criterion_is_open(act: str) -> None:
    # Mish: Sym_aff(σ) is not computed (its slope at −∞ is not proved), so Cor. R-aff-0 does not apply
    assert _prove(f"block b {{ activation: {act} bias: true }}").verdict is Verdict.OPEN


def test_biased_sublinear_is_impossible() -> None:
    d = _prove("block b { activation: tanh bias: true }")
    assert d.verdict is Verdict.IMPOSSIBLE and d.decided_by == "L-growth"


@pytest.mark.parametrize("norm", ["pre-ln", "pre-rms"])
@pytest.mark.parametrize("act", ["gelu", "relu", "swiglu", "relu2"])
def test_pre_norm_is_impossible(norm: str, act: str) -> None:
    d = _prove(f"block b {{ activation: {act} norm: {norm} bias: true }}")
    assert d.verdict is Verdict.IMPOSSIBLE and d.decided_by == "L-pre-norm"
    stack = resolve_text(f"block b {{ activation: {act} norm: {norm} }}\nstack s = b ^ 4").stacks[0]
    ds = prove(stack)
    assert ds.verdict is Verdict.IMPOSSIBLE and ds.decided_by == "L-pre-norm-depth"


def test_pre_norm_with_no_skip_is_absorbable() -> None:
    d = _prove("block b { activation: gelu norm: pre-ln skip: none }")
    assert d.verdict is Verdict.ABSORBABLE


def test_pre_norm_needs_a_locally_bounded_activation() -> None:
    d = _prove("activation inv(z) = if z >= 0 and z <= 0 then 0 else 1/z\nblock b { activation: inv norm: pre-ln }")
    assert d.verdict is not Verdict.IMPOSSIBLE


def test_post_ln_reduces_to_the_centred_skip() -> None:
    d = _prove("block b { activation: gelu dim: 4 norm: post-ln eps: 1/10**12 bias: true }")
    assert d.verdict is Verdict.CONDITIONAL and d.decided_by == "R-aff-1"
    assert "L-post-ln" in d.cited
    assert d.condition_plain == "P W_down[:,S] W_up[S,:] = -(I_d - 11ᵀ/d)"


@pytest.mark.parametrize("eps", ["0", "0.0"])
def test_post_ln_with_eps_zero_is_open(eps: str) -> None:
    d = _prove(f"block b {{ activation: gelu dim: 4 norm: post-ln eps: {eps} }}")
    assert d.verdict is Verdict.OPEN


def test_post_ln_scales_compared_exactly() -> None:
    tiny = _prove("block b { activation: tanh dim: 2 norm: post-ln eps: 1/100 ln_gamma: [5e-33, 1] }")
    assert tiny.verdict is Verdict.IMPOSSIBLE  # 5e-33 is a nonzero scale: Lemma PN, then L-growth
    zero = _prove("block b { activation: tanh dim: 2 norm: post-ln eps: 1/100 ln_gamma: [0, 1] }")
    assert zero.verdict is Verdict.OPEN


def test_post_ln_of_one_coordinate_is_constant() -> None:
    d = _prove("block b { activation: relu2 dim: 1 norm: post-ln eps: 1/100 }")
    assert d.verdict is Verdict.ABSORBABLE  # LN on R^1 is the constant β on both sides


def test_post_rms_is_the_ordinary_question() -> None:
    d = _prove("block b { activation: relu2 dim: 3 norm: post-rms eps: 1/10**6 }")
    assert d.verdict is Verdict.IMPOSSIBLE and d.decided_by == "prop5"
    assert "L-post-rms" in d.cited
    biased = _prove("block b { activation: relu2 dim: 3 norm: post-rms eps: 1/10**6 bias: true }")
    assert biased.verdict is Verdict.OPEN


def test_every_report_states_the_question() -> None:
    d = _prove("block b { activation: gelu bias: true absorber_bias: false }")
    assert any("the block has biases, the residual-free block has none" in a for a in d.assumptions)
    assert d.verdict is Verdict.OPEN  # the biased flip witness needs an output bias
    bare = _prove("block b { activation: gelu }")
    assert bare.assumptions[0] == "bias-free blocks (the paper's setting)"


# ---- the language ---------------------------------------------------------------------------------------


def test_layer_fields_resolve() -> None:
    spec = resolve_text("block b { activation: gelu dim: 2 width: 3 W_up: [[1, 0], [0, 1], [1, 1]] "
                        "W_down: [[1, 0, 1], [0, 1, 1]] b_up: [1, 2, 3] b_down: [0, 1/2] norm: post-ln "
                        "eps: 1e-12 ln_gamma: [1, 2] absorber_bias: false }")
    b = spec.blocks[0]
    assert b.b_up is not None and list(b.b_up) == [1, 2, 3]
    assert b.norm == "post-ln" and b.eps is not None and b.eps > 0
    q = b.question
    assert (q.block_biases, q.absorber_biases, q.norm) == (True, False, "post-ln")


@pytest.mark.parametrize(("text", "needle"), [
    ("block b { activation: gelu dim: 2 width: 3 b_up: [1, 2] }", "`b_up` has 2 entries"),
    ("block b { activation: gelu dim: 2 width: 3 b_down: [1, 2, 3] }", "`b_down` has 3 entries"),
    ("block b { activation: gelu b_up: [1] }", "needs a numeric size"),
    ("block b { activation: gelu bias: false b_down: [1] dim: 1 }", "says `bias: false`"),
    ("block b { activation: gelu eps: 1 }", "without a normalisation"),
    ("block b { activation: gelu norm: post-ln eps: -1 }", "`eps` must be a real number >= 0"),
    ("block b { activation: gelu norm: middle }", "unexpected `middle`"),
    ("block b { activation: gelu dim: 2 norm: post-ln ln_gamma: [1] }", "`ln_gamma` has 1 entry"),
    ("block b { activation: gelu dim: 2 width: 2 b_gate: [1, 1] }", "ungated block"),
    ("block b { activation: gelu up_bias: \"x.bias\" }", "without `weights:`"),
    ("block b { activation: gelu dim: 1 width: 1 b_up: [sqrt(2)] }", "exact rational"),
])
def test_layer_field_errors_are_positioned(text: str, needle: str) -> None:
    with pytest.raises(SpecError) as info:
        resolve_text(text, "spec.absorb")
    message = str(info.value)
    assert needle in message, message
    assert message.startswith("spec.absorb:1:")


def test_layer_fields_round_trip_through_fmt() -> None:
    from symabsorb.dsl.formatter import format_module
    from symabsorb.dsl.parser import parse_text

    text = ("block b {\n    activation: gelu\n    dim: 2\n    width: 1\n    bias: true\n    b_up: [1]\n"
            "    b_down: [0, 1/2]\n    absorber_bias: false\n    norm: post-ln\n    eps: 1/10\n"
            "    ln_gamma: [1, 2]\n}\n")
    once = format_module(parse_text(text, "x"))
    assert format_module(parse_text(once, "x")) == once
    for key in ("bias: true", "b_up: [1]", "norm: post-ln", "eps: 1/10", "ln_gamma: [1, 2]", "absorber_bias: false"):
        assert key in once


def test_language_reference_examples_of_real_layers_decide_as_documented() -> None:
    import re

    doc = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    section = doc.split("## Biases and normalisation", 1)[1].split("\n## ", 1)[0]
    text = re.findall(r"```absorb\n(.*?)```", section, flags=re.S)[0]
    spec = resolve_text(text)
    got = {b.name: prove(b) for b in spec.blocks}
    assert (got["bert_mlp"].verdict, got["bert_mlp"].decided_by) == (Verdict.CONDITIONAL, "R-aff-1")
    assert got["biased"].verdict is Verdict.OPEN  # a biased block, a bias-free absorber: no result
    assert (got["prenorm"].verdict, got["prenorm"].decided_by) == (Verdict.IMPOSSIBLE, "L-pre-norm")
    assert got["sine"].verdict not in (Verdict.IMPOSSIBLE, Verdict.NOT_ABSORBABLE)
