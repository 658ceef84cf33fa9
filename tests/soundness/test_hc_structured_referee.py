"""Referee attacks on L-hc-structured as a decider (`hyper(n: N, mix: A, structured: true)`).

Each test is an input that could make the prover claim `impossible` where it cannot prove it: n = 1,
singular mixes with hidden zeros, parametric activations that include a linear member, degenerate
concrete weights that are absorbable, the Kronecker order of inline weights, biases, norms, and the
question for undeclared weights asked in the same spec. The one bug found (a file block
assumed structured, internal only) is fixed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import symabsorb
from symabsorb.errors import SpecValueError
from symabsorb.model import resolve_text
from symabsorb.theory.derivation import Derivation, Verdict

MIX = "mix: [[1, 1], [0, 1]]"


def _answers(text: str) -> dict[str, Derivation]:
    report = symabsorb.prove(symabsorb.load(text))
    return {r.query: r.derivation for r in report.results if r.derivation is not None}


def _block(name: str, body: str, mix: str = MIX, n: int = 2) -> str:
    return f"block {name} {{ {body} skip: hyper(n: {n}, {mix}, structured: true) }}\n"


def test_hidden_zero_determinants_are_not_claimed() -> None:
    """det A = 0 written so that it is not visible: the lemma needs A invertible (rank A·d > d)."""
    mixes = {
        "sq": "mix: [[sqrt(2)^2, 2], [1, 1]]",
        "rad": "mix: [[sqrt(2)*sqrt(3), sqrt(6)], [1, 1]]",
        "trig": "mix: [[sin(1)^2 + cos(1)^2, 1], [1, 1]]",
        "huge": "mix: [[10^30, 1], [1, 10^-30]]",
    }
    text = "".join(_block(k, "activation: relu dim: 2 width: 8", v) for k, v in mixes.items())
    d = _answers(text + "".join(f"absorb {k}\n" for k in mixes))
    for k in mixes:
        r = d[f"absorb {k}"]
        assert r.decided_by != "L-hc-structured" and r.verdict is not Verdict.IMPOSSIBLE, k
    # and a nearly singular but invertible mix is still decided (the determinant is exact, not a float)
    near = _answers(_block("nr", "activation: relu dim: 2 width: 8", "mix: [[10^30, 1], [1, 10^-30 + 10^-60]]")
                    + "absorb nr\n")["absorb nr"]
    assert near.decided_by == "L-hc-structured"


def test_rank_deficient_mix_with_three_streams_is_not_claimed() -> None:
    d = _answers(_block("n3", "activation: relu dim: 2 width: 8", "mix: [[1, 0, 0], [0, 1, 0], [0, 0, 0]]", 3)
                 + "absorb n3\n")["absorb n3"]
    assert d.decided_by != "L-hc-structured"


def test_parametric_activation_with_a_linear_member_is_not_impossible() -> None:
    """leaky(alpha > 0) includes alpha = 1 (σ = z, absorbable at width 8 > n·d = 4): no `impossible`."""
    text = ("activation lk(z; alpha > 0) = if z >= 0 then z else alpha*z\n"
            + _block("p", "activation: lk dim: 2 width: 8")
            + _block("one", "activation: leaky_relu(alpha = 1) dim: 2 width: 8")
            + "absorb p\nabsorb one\n")
    d = _answers(text)
    assert d["absorb p"].verdict is not Verdict.IMPOSSIBLE
    assert d["absorb one"].verdict is Verdict.ABSORBABLE


def test_degenerate_structured_weights_that_absorb_are_absorbable() -> None:
    """β = 0, or columns that cancel on repeated rows: structured, degenerate, and absorbable (the block is x)."""
    text = """
block z0 { activation: relu dim: 1 width: 4 skip: hyper(n: 2, mix: [[1, 0], [0, 1]], structured: true)
  W_up: [[1, 0], [-1, 0], [0, 1], [0, -1]]
  W_down: [[0, 0, 0, 0], [0, 0, 0, 0]] }
block rep { activation: relu dim: 1 width: 6 skip: hyper(n: 2, mix: [[1, 0], [0, 1]], structured: true)
  W_up: [[1, 0], [1, 0], [1, 0], [1, 0], [0, 1], [0, 1]]
  W_down: [[1, -1, 1, -1, 1, -1], [1, -1, 1, -1, 1, -1]] }
absorb z0
absorb rep
"""
    d = _answers(text)
    for q in ("absorb z0", "absorb rep"):
        assert d[q].verdict is Verdict.ABSORBABLE, q


def test_inline_weights_in_the_other_kronecker_order_are_refused() -> None:
    """W⁰ ⊗ β (stream-interleaved) is not β ⊗ W⁰ for M = A ⊗ I_d (stream-major): a spec error."""
    text = ("block ilv { activation: relu dim: 2 width: 2 skip: hyper(n: 2, " + MIX + ", structured: true)\n"
            "  W_up: [[1, 0, 0, 1], [0, 1, 1, 0]]\n  W_down: [[1, 2], [2, 4], [0, 1], [0, 2]] }\n")
    with pytest.raises(SpecValueError, match="not β ⊗ W⁰"):
        resolve_text(text)


def test_biased_or_normalised_structured_blocks_are_not_decided_by_the_lemma() -> None:
    text = (_block("b", "activation: relu dim: 2 width: 8 bias: true")
            + _block("ab", "activation: relu dim: 2 width: 8 absorber_bias: true")
            + "absorb b\nabsorb ab\n")
    d = _answers(text)
    for q in ("absorb b", "absorb ab"):
        assert d[q].decided_by != "L-hc-structured", q
    with pytest.raises(SpecValueError, match="normalisation"):
        resolve_text(_block("n", "activation: relu dim: 2 width: 8 norm: pre-ln"))


def test_declared_and_undeclared_blocks_in_one_spec_keep_their_own_answers() -> None:
    text = ("block hu { activation: relu dim: 2 width: 8 skip: hyper(n: 2, " + MIX + ") }\n"
            + _block("hs", "activation: relu dim: 2 width: 8")
            + "absorb hu\nabsorb hs\nwidth hu\nwidth hs\n")
    d = _answers(text)
    assert d["absorb hu"].verdict is Verdict.CONDITIONAL
    assert d["absorb hs"].verdict is Verdict.IMPOSSIBLE
    assert not any("structured" in a for a in d["absorb hu"].assumptions)
    assert any("structured" in a for a in d["width hs"].assumptions)
    assert not any("structured" in a for a in d["width hu"].assumptions)


def test_weights_file_block_marked_structured_is_not_assumed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    np = pytest.importorskip("numpy")
    from symabsorb.theory.library import default_library
    from symabsorb.theory.prover import prove

    np.savez(tmp_path / "w.npz", W_up=np.array([[1.0, 0], [0, 1], [1, 1]]),
             W_down=np.array([[1.0, 2, 3], [5, -1, 7]]))  # stream blocks (1,2,3), (5,-1,7): not β ⊗ W⁰
    monkeypatch.chdir(tmp_path)
    spec = resolve_text("block q { activation: relu dim: 1 width: 3 skip: hyper(n: 2, " + MIX
                        + ') weights: "w.npz" }\n')
    b = spec.blocks[0]
    marked = dataclasses.replace(b, skip=dataclasses.replace(b.skip, structured=True))
    assert prove(marked, default_library(), "absorb q").decided_by != "L-hc-structured"
