"""Issue 28 row 13: a Hyper-Connection block decided for arbitrary weights on the whole stream says
that HC-structured weights (W_down = β ⊗ W⁰) are never absorbable, citing L-hc-structured; a block
with another skip, or concrete weights, does not."""

from __future__ import annotations

from pathlib import Path

import symabsorb

SPEC = """block g { activation: gelu dim: 2 width: 8 skip: hyper(n: 2, mix: [[1, 1], [0, 1]]) }
block s { activation: silu dim: 2 width: 8 skip: hyper(n: 2, mix: [[1, 1], [0, 1]]) }
block r { activation: relu dim: 2 width: 8 skip: hyper(n: 2, mix: [[1, 1], [0, 1]]) }
block singular { activation: relu dim: 2 width: 8 skip: hyper(n: 2, mix: [[1, 1], [1, 1]]) }
block plain { activation: relu dim: 2 width: 8 }
absorb g
absorb s
absorb r
absorb singular
absorb plain
"""


def test_hc_blocks_carry_the_structured_remark(tmp_path: Path) -> None:
    spec = tmp_path / "hc.absorb"
    spec.write_text(SPEC, encoding="utf-8")
    report = symabsorb.prove(spec)
    remark = {}
    for result in report.results:
        d = result.derivation
        assert d is not None
        remark[result.query] = any("L-hc-structured" in s.cites for s in d.steps)
    assert remark == {"absorb g": True, "absorb s": True, "absorb r": True, "absorb singular": False,
                      "absorb plain": False}
    assert "Hyper-Connection-structured weights" in report.render("md")
