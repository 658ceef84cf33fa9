"""Issue 28 rows 4 and 5: every report file starts with a summary table (query, question, verdict,
result, condition, scope), other candidates are grouped by the hypothesis that failed, math in the
HTML assumptions is math, and a `width` answer says the width it proved in its own colour. The HTML
report in headless Chromium and the LaTeX report with pdflatex: tests/extras/test_done_when.py."""

from __future__ import annotations

import re

import pytest

import symabsorb
from symabsorb.report.common import candidate_groups, summary_rows, verdict_word
from tests.helpers import EXAMPLES

PAPER = EXAMPLES / "paper.absorb"
WIDTH_SPEC = """block g { activation: gelu dim: d width: 4*d }
width g
absorb g
"""


@pytest.fixture(scope="module")
def paper() -> symabsorb.Report:
    return symabsorb.prove(PAPER)


@pytest.fixture(scope="module")
def widths(tmp_path_factory: pytest.TempPathFactory) -> symabsorb.Report:
    spec = tmp_path_factory.mktemp("w") / "w.absorb"
    spec.write_text(WIDTH_SPEC, encoding="utf-8")
    return symabsorb.prove(spec)


def test_markdown_starts_with_the_summary(paper: symabsorb.Report) -> None:
    md = paper.render("md")
    head = md[:md.index("## The spec")]
    assert "## Summary" in head
    assert "| query | question | verdict | result | condition | scope |" in head
    assert head.count("\n| [`absorb") == len(paper.results)
    assert "[Thm. 8](#ref-thm8)" in head and "$W_{\\mathrm{down}}[:,S]" in head


@pytest.mark.slow  # the paper example rendered in HTML with its plots (the fast tier's budget: make test-fast <= 60 s)
def test_html_starts_with_the_summary(paper: symabsorb.Report) -> None:
    html = paper.render("html")
    summary = html.index('<table class="summary">')
    assert summary < html.index('<section id="q-')
    table = html[summary:html.index("</table>", summary)]
    assert table.count("<tr>") == len(paper.results) + 1 and "<math" in table


def test_latex_starts_with_a_booktabs_summary(paper: symabsorb.Report) -> None:
    tex = paper.render("tex")
    start = tex.index("\\section*{Summary}")
    assert start < tex.index("\\section{Query 1:")
    table = tex[start:tex.index("\\end{longtable}")]
    assert "\\toprule" in table and "\\midrule" in table and "\\bottomrule" in table
    assert table.count("\\hyperref[q:") == len(paper.results)


def test_width_answers_have_their_own_verdict(widths: symabsorb.Report) -> None:
    width, absorb = widths.results
    assert width.derivation is not None and absorb.derivation is not None
    assert verdict_word(width.derivation) == "minimal width 5d"
    assert verdict_word(absorb.derivation) == "conditional"
    html = widths.render("html")
    assert '<span class="verdict v-width">minimal width 5d</span>' in html
    assert 'class="verdict v-absorbable"' not in html  # the width answer never wears the absorbable badge
    assert "**minimal width 5d**" in widths.render("md")
    rows = summary_rows(widths.data)
    assert rows[0].question == "smallest residual-free width?" and rows[0].condition is None


def test_candidates_are_grouped_by_reason(paper: symabsorb.Report) -> None:
    for result in paper.results:
        d = result.derivation
        assert d is not None
        groups = candidate_groups(d)
        tried = [c.id for c in d.candidates if c.state.value != "applied"]
        assert sorted(rid for _, _, ids in groups for rid in ids) == sorted(tried)  # each exactly once
        assert len({reason for _, reason, _ in groups}) == len(groups)
    gelu = next(r for r in paper.results if r.query == "absorb gelu_once").derivation
    assert gelu is not None
    assert len(candidate_groups(gelu)) < 0.6 * len(gelu.candidates)
    md = paper.render("md")
    assert "by the hypothesis that failed" in md and "| result | state | reason |" not in md


@pytest.mark.slow  # the paper example rendered in HTML with its plots (the fast tier's budget: make test-fast <= 60 s)
def test_html_assumptions_are_math(paper: symabsorb.Report) -> None:
    html = paper.render("html")
    for m in re.finditer(r"<p><strong>Assumptions:</strong>(.*?)</p>", html):
        text = re.sub(r"<math.*?</math>|<code>.*?</code>", "", m.group(1))
        assert "$" not in text and "`" not in text, m.group(1)[:300]


def test_an_open_problem_leads_before_any_local_hypothesis() -> None:
    """An open deep stack is filed under the paper's open problem: every format says so first, and the
    hypothesis other results needed follows as such (a new user read 'Blocked by: d = 2 ≠ 1' as if choosing d
    would settle it)."""
    import symabsorb

    report = symabsorb.prove(EXAMPLES / "depth.absorb", keyword="e4")
    terminal = report.render("text")
    assert "an open problem (Deep ReLU/GELU stacks with generic weights); other results need" in terminal
    for fmt, open_line in (("md", "**Open problem:**"), ("html", "<strong>Open problem:</strong>"),
                           ("tex", "\\textbf{Open problem:}")):
        text = report.render(fmt)
        assert open_line in text and "Blocked by" not in text and text.index(open_line) < text.index("Other results need")
