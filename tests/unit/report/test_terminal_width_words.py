"""Issue 28 row 5: in the terminal a `width` answer carries its own verdict word ("minimal width",
"width at most", "no width absorbs it"), as the HTML report does, never the word "absorbable"."""

from __future__ import annotations

from symabsorb.answer.types import Report
from symabsorb.model import resolve_text
from symabsorb.report.terminal import render_answer_terminal, render_terminal
from tests.helpers import build_report

SPEC = """
block narrow { activation: relu dim: 8 width: 2 }
block mish_b { activation: mish dim: 4 width: 16 }
block lin { activation: identity dim: 4 width: 2 }
width narrow
width mish_b
width lin
"""


def _report() -> Report:
    return build_report(resolve_text(SPEC), SPEC)


def test_width_words_in_the_summary_and_in_full() -> None:
    report = _report()
    for plain in (True, False):
        text = render_terminal(report, width=200, color=False, plain=plain)
        narrow = next(line for line in text.splitlines() if "narrow" in line)
        lin = next(line for line in text.splitlines() if "width lin" in line)
        mish = next(line for line in text.splitlines() if "mish_b" in line)
        assert "minimal width 16" in narrow and "absorbable" not in narrow, narrow
        assert "width at most 4" in lin and "absorbable" not in lin, lin  # a bound only
        assert "absorbable" not in mish.replace("no width absorbs it", ""), mish
    for a in report.answers:
        full = render_answer_terminal(a, report.library, width=200, color=False, plain=True)
        assert "absorbable (" not in full.splitlines()[0], full.splitlines()[0]


def test_a_width_answer_carries_its_deciding_results_source() -> None:
    """The JSON of a `width` answer decided by Theorem W (a library result) says `library`, not the source of
    the absorb answer it builds on (Thm. 8, the paper's): a new user's report of issue 28's review."""
    import json

    from symabsorb.report.jsonout import render_json

    spec = resolve_text("block w { activation: relu  dim: 2  width: 3  W_up: [[1, 0], [0, 1], [1, 1]]  "
                        "W_down: [[1, 0, 1], [0, 1, 1]] }\nwidth w\nabsorb w\n", "w.absorb")
    data = json.loads(render_json(build_report(spec, "")))
    width, absorb = (q["derivation"] for q in data["queries"])
    assert (width["decided_by"], width["source"]) == ("thm-W", "library")
    assert (absorb["decided_by"], absorb["source"]) == ("thm8", "paper")
