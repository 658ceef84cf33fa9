"""Issue 28 row 13: Hyper-Connection-structured weights (W_down = β ⊗ W⁰) are declarable in a spec
(`hyper(n: N, mix: A, structured: true)`), and the prover answers that question with L-hc-structured
(impossible for nondegenerate weights) where its hypotheses hold; an undeclared Hyper-Connection block is
asked for arbitrary weights on the whole n·d stream (conditional), and the lemma is never claimed where a
hypothesis fails."""

from __future__ import annotations

from pathlib import Path

import pytest

import symabsorb
from symabsorb.dsl.formatter import format_module
from symabsorb.dsl.parser import parse_text
from symabsorb.errors import SpecValueError
from symabsorb.model import resolve_text
from symabsorb.theory.derivation import Verdict

ROOT = Path(__file__).resolve().parents[3]
MIX = "mix: [[1, 1], [0, 1]]"


def _answers(text: str) -> dict[str, object]:
    report = symabsorb.prove(symabsorb.load(text))
    return {r.query: r.derivation for r in report.results}


def test_structured_hyper_connection_is_never_absorbable() -> None:
    d = _answers(f"""
block hs {{ activation: relu dim: 2 width: 8 skip: hyper(n: 2, {MIX}, structured: true) }}
block hg {{ activation: gelu dim: d width: 4*d skip: hyper(n: 3, mix: [[1, 1, 0], [0, 1, 0], [0, 0, 2]], structured: true) }}
absorb hs
absorb hg
""")
    for query in ("absorb hs", "absorb hg"):
        r = d[query]
        assert r.verdict is Verdict.IMPOSSIBLE and r.decided_by == "L-hc-structured", query
        assert str(r.scope) == "nondegenerate weights"
        assert any("structured" in a for a in r.assumptions)  # the declared structure is a stated assumption
        assert "Hyper-Connection-structured weights" in r.steps[0].text  # the setting says what was asked


def test_undeclared_hyper_connection_stays_conditional() -> None:
    d = _answers(f"block hu {{ activation: relu dim: 2 width: 8 skip: hyper(n: 2, {MIX}) }}\nabsorb hu\n")["absorb hu"]
    assert d.verdict is Verdict.CONDITIONAL and d.decided_by != "L-hc-structured"
    reason = next(c.reason for c in d.candidates if c.id == "L-hc-structured")
    assert "structured: true" in reason and "arbitrary" in reason


def test_structured_is_not_claimed_where_a_hypothesis_fails() -> None:
    d = _answers("""
block sing { activation: relu dim: 2 width: 8 skip: hyper(n: 2, mix: [[1, 1], [1, 1]], structured: true) }
block one  { activation: relu dim: 2 width: 8 skip: hyper(n: 1, mix: [[2]], structured: true) }
absorb sing
absorb one
""")
    for query in ("absorb sing", "absorb one"):
        assert d[query].decided_by != "L-hc-structured", query
        assert d[query].verdict is not Verdict.IMPOSSIBLE, query


def test_structured_inline_weights_are_checked_exactly() -> None:
    head = f"block c {{ activation: relu dim: 2 width: 2 skip: hyper(n: 2, {MIX}, structured: true)\n" \
           "  W_up: [[1, 0, 0, 1], [0, 1, 1, 0]]\n"
    ok = _answers(head + "  W_down: [[1, 2], [0, 1], [2, 4], [0, 2]] }\nabsorb c\n")["absorb c"]
    assert ok.verdict is Verdict.NOT_ABSORBABLE and str(ok.scope) == "these weights"
    with pytest.raises(SpecValueError, match="not β ⊗ W⁰"):
        resolve_text(head + "  W_down: [[1, 2], [0, 1], [2, 4], [0, 3]] }\n")


def test_structured_with_a_weights_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SpecValueError, match="weights file"):
        resolve_text(f'block c {{ activation: relu skip: hyper(n: 2, {MIX}, structured: true) weights: "w.npz" }}\n')


def test_structured_round_trips_through_the_formatter() -> None:
    text = f"block hs {{ activation: relu dim: 2 width: 8 skip: hyper(n: 2, {MIX}, structured: true) }}\n"
    formatted = format_module(parse_text(text, "s.absorb"))
    assert "structured: true" in formatted
    assert resolve_text(formatted).blocks[0].skip.structured
    assert not resolve_text(text.replace(", structured: true", "")).blocks[0].skip.structured


def test_the_example_spec_declares_both() -> None:
    report = symabsorb.prove(ROOT / "examples" / "beyond.absorb", keyword="hc_")
    verdicts = {r.query: r.derivation.verdict for r in report.results if r.derivation is not None}
    assert verdicts["absorb hc_structured"] is Verdict.IMPOSSIBLE
    assert verdicts["absorb hc_arbitrary"] is Verdict.CONDITIONAL
