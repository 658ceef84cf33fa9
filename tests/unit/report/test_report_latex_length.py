"""Issue 28 leftovers: the LaTeX report of examples/paper.absorb (16 queries) reads like a paper's
appendix: a step another query already printed word for word, or a group of candidates another query
already gave with its reason, is a pointer to it ("As in Query 6, items 1--6"), never printed again;
every derivation is still whole in the first query that needs it. Measured: 24 pages before, 19 after
(pdflatex twice)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import symabsorb
from tests.helpers import EXAMPLES, require_program


def _tex(fmt: str = "tex", **kw: bool) -> str:
    return symabsorb.prove(symabsorb.load(EXAMPLES / "paper.absorb")).render(fmt, **kw)


def _top_items(steps: str) -> list[str]:
    """The top-level items of an enumerate body, each with its nested evidence list."""
    items: list[str] = []
    depth = 0
    for line in steps.splitlines(keepends=True):
        if depth == 0 and line.startswith("\\item "):
            items.append("")
        if items:
            items[-1] += line
        depth += line.count("\\begin{itemize}") - line.count("\\end{itemize}")
    return items


def _queries(body: str) -> list[str]:
    parts = re.split(r"\\section\{Query \d+:", body.split("\\section*{Activations}")[0])
    return parts[1:]


def test_no_step_is_printed_twice() -> None:
    queries = _queries(_tex())
    assert len(queries) == 16
    seen: set[str] = set()
    for q in queries:
        steps = q.split("\\begin{enumerate}", 1)[1].split("\\end{enumerate}", 1)[0]
        for item in _top_items(steps):  # a top-level item with its evidence
            if not item.startswith("\\item As in Query"):
                assert item not in seen, item[:200]
                seen.add(item)
    refs = re.findall(r"\\item As in (Query~\\ref\{q:\d+\}, items?~[0-9, and-]+(?:; )?)+\.", "".join(queries))
    assert refs, "later queries point to the steps earlier ones printed"
    # query 16 (gelu_mlp ^ 1) is query 6's block: its whole derivation is a pointer
    last = queries[15].split("\\begin{enumerate}", 1)[1].split("\\end{enumerate}", 1)[0]
    assert [item[:17] for item in _top_items(last)] == ["\\item As in Query"]


def test_candidate_groups_are_given_once() -> None:
    queries = _queries(_tex())
    paragraphs = [q.split("Other candidate results", 1)[1].split("\\par}", 1)[0] for q in queries]
    assert "the skip is nonzero (L-no-skip)" in paragraphs[0]
    assert all("the skip is nonzero" not in p for p in paragraphs[1:])  # said once, then pointed to
    assert all("L-no-skip" in p for p in paragraphs)  # ...but every query still names the candidate
    assert "As in Query~\\ref{q:1}: " in paragraphs[1]


def test_one_answer_and_other_formats_are_unchanged() -> None:
    assert "As in Query" not in _tex("md") and "As in Query" not in _tex("html")
    one = symabsorb.prove(symabsorb.load(EXAMPLES / "paper.absorb")).results[15].render("tex")
    assert "As in Query" not in one and "\\begin{enumerate}" in one  # a single answer is whole


@pytest.mark.slow  # pdfLaTeX twice
def test_the_pdf_is_an_appendix_not_a_book(tmp_path: Path) -> None:
    pdflatex = require_program("pdflatex", "texlive-latex-base")
    (tmp_path / "paper.tex").write_text(_tex(), encoding="utf-8")
    for _ in range(2):
        run = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "paper.tex"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout[-3000:]
    log = (tmp_path / "paper.log").read_text(errors="replace")
    pages = int(re.search(r"Output written on paper\.pdf \((\d+) pages", log).group(1))  # type: ignore[union-attr]
    assert pages <= 20, pages  # 24 before the pointers
    assert "undefined" not in log.lower()  # every "As in Query~\ref" resolves


def test_every_pointer_names_the_very_steps_it_replaces() -> None:
    """Expanding each "As in Query q, items ..." by the items it names gives back, item for item,
    the derivation the query has on its own (rendered alone, with no pointer)."""
    report = symabsorb.prove(symabsorb.load(EXAMPLES / "paper.absorb"))
    queries = _queries(report.render("tex"))

    def items(body: str) -> list[str]:
        return _top_items(body.split("\\begin{enumerate}", 1)[1].split("\\end{enumerate}", 1)[0])

    printed = [items(q) for q in queries]
    pointer = re.compile(r"Query~\\ref\{q:(\d+)\}, items?~([0-9, and-]+?)(?=; Query|\.$)")
    for j, (result, mine) in enumerate(zip(report.results, printed, strict=True)):
        expanded: list[str] = []
        for item in mine:
            if not item.startswith("\\item As in Query"):
                expanded.append(item)
                continue
            named: list[tuple[int, int]] = []
            for q, numbers in pointer.findall(item.strip()):
                for part in re.split(r", | and ", numbers):
                    lo, _, hi = part.partition("--")
                    named += [(int(q), n) for n in range(int(lo), int(hi or lo) + 1)]
            expanded += [printed[q - 1][n - 1] for q, n in named]
        alone = items(result.render("tex"))
        assert sorted(expanded) == sorted(alone), j + 1  # the same steps (a pointer lists them by query)
