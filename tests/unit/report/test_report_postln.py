"""Issue 28 row 3: after Lemma PN reduces a post-LN question, every step speaks of the reduced
block's output weights ``P W_down``, so that no step quoted alone states a criterion on ``W_down``."""

from __future__ import annotations

import re
from pathlib import Path

import symabsorb

SPEC = """block b { activation: gelu dim: 4 width: 8 norm: post-ln }
block r { activation: relu dim: 3 width: 6 norm: post-ln }
absorb b
absorb r
"""
#: W_down not preceded by P (LaTeX or plain text)
BARE = re.compile(r"(?<!P\\,)W_\{\\mathrm\{down\}\}|(?<!P )W_down")


def test_post_ln_steps_keep_p(tmp_path: Path) -> None:
    spec = tmp_path / "p.absorb"
    spec.write_text(SPEC, encoding="utf-8")
    report = symabsorb.prove(spec)
    for result in report.results:
        d = result.derivation
        assert d is not None and d.verdict.value == "conditional", result
        texts = [s.text for s in d.steps]
        reduction = next(i for i, t in enumerate(texts) if "the question is the ordinary one" in t)
        assert "P\\,W_{\\mathrm{down}}" in texts[reduction]
        for text in texts[reduction + 1:]:
            assert not BARE.search(text), text
        assert d.condition_plain is not None and d.condition_plain.startswith("P W_down[:,S]")
        assert not any(BARE.search(a) for a in d.assumptions[1:] if "nondegenerate" in a)
    text = report.render("text", verbose=True)
    closing = [line for line in text.splitlines() if "absorbable exactly when" in line]
    assert closing and all("P W_down[:,S]" in line for line in closing)
