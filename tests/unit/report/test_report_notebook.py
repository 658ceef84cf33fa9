"""A Report in a notebook is a compact summary with folded derivations (issue 21, item 9)."""

from __future__ import annotations

import re

import symabsorb
from tests.helpers import EXAMPLES


def _outside_details(html: str) -> str:
    """``html`` with every top-level ``<details>`` element (and all it holds) removed."""
    out, depth, pos = [], 0, 0
    for m in re.finditer(r"<details[ >]|</details>", html):
        if depth == 0:
            out.append(html[pos:m.start()])
        depth += 1 if m.group(0) != "</details>" else -1
        pos = m.end()
    out.append(html[pos:])
    return "".join(out)


def test_report_repr_is_a_summary_with_folded_derivations() -> None:
    report = symabsorb.prove(symabsorb.load(EXAMPLES / "paper.absorb"))
    n = len(report.data.answers)
    html = report._repr_html_()
    full = report.render("html", fragment=True)
    assert html.startswith('<div class="symabsorb">') and "<!DOCTYPE" not in html
    assert len(_outside_details(html)) < len(full) / 10  # what shows before a fold is opened
    assert _outside_details(html).count("<tr>") == n + 1  # a header and one row per query
    assert len(re.findall(r"<details id=\"[^\"]*q-", html)) == n  # each derivation folded (closed)
    assert "<details open" not in html.split('<details id="')[0]  # nothing open above the folds
    for query in report.data.answers:
        assert query.query in html
    assert "<math" in html  # the condition is math
    # compact (issue 28 row 9): no lemma graph, references by label and title only
    # (an absolute bound: the full fragment's size depends on whether matplotlib draws the plots)
    assert "<svg" not in html and len(html) < 25_000 * n
    md = report._repr_markdown_()
    assert md.count("<details><summary>") >= n and md.count("\n| [`absorb") == n
    assert md.index("<details>") > md.rindex("\n| [`absorb")  # the table first, then the folds
    assert "**impossible**" in md and "Thm. 8" in md
