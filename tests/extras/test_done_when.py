"""Issue 28's Done-when checks, with the tools they need (each skipped with the reason when its program is
absent, failed under SYMABSORB_REQUIRE_EXTRAS=1): the HTML report of examples/paper.absorb in headless
Chromium has the summary table first and no raw `$` in its rendered text; its LaTeX builds with pdflatex
and the first page is the summary (the label's page, and the page's text with pdftotext when installed);
`graph --format blueprint` of the shipped library, wrapped in a minimal document as a blueprint's
print.tex would `\\input` it, builds with pdflatex."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import symabsorb
from tests.helpers import EXAMPLES, require_program, run_cli
from tests.unit.report.test_blueprint import WRAPPER

PAPER = EXAMPLES / "paper.absorb"


@pytest.mark.slow
def test_html_report_in_chromium(tmp_path: Path) -> None:
    """The Done-when check: the HTML report of paper.absorb shows the summary table and no raw `$`."""
    chromium = require_program("chromium", "chromium")
    from tests.cdp import Browser

    page = tmp_path / "paper.html"
    page.write_text(symabsorb.prove(PAPER).render("html"), encoding="utf-8")
    with Browser(chromium, tmp_path / "profile") as browser:
        browser.open(page.as_uri())
        rows = browser.eval("document.querySelectorAll('table.summary tr').length")
        top = browser.eval("document.querySelector('table.summary').getBoundingClientRect().top")
        first = browser.eval("document.querySelector('section[id^=\"q-\"]').getBoundingClientRect().top")
        raw = browser.eval("""(() => { const c = document.body.cloneNode(true);
            c.querySelectorAll('pre, code, script, style').forEach(e => e.remove());
            return c.innerText.split('\\n').filter(l => l.includes('$')); })()""")
        tex_fallbacks = browser.eval("document.querySelectorAll('code.tex').length")
        maths = browser.eval("document.querySelectorAll('math').length")
    assert rows == len(symabsorb.load(PAPER).queries) + 1
    assert top < first
    assert raw == []
    assert tex_fallbacks == 0 and maths > 50


@pytest.mark.slow
def test_latex_report_builds_and_page_one_is_the_summary(tmp_path: Path) -> None:
    pdflatex = require_program("pdflatex", "texlive-latex-base")
    tex = tmp_path / "paper.tex"
    tex.write_text(symabsorb.prove(PAPER).render("tex"), encoding="utf-8")
    for _ in range(2):
        run = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", tex.name], cwd=tmp_path,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout[-3000:]
    aux = (tmp_path / "paper.aux").read_text(errors="replace")
    m = re.search(r"\\newlabel\{summary\}\{\{[^}]*\}\{(\d+)\}", aux)
    assert m and m.group(1) == "1", aux[:500]
    pdftotext = shutil.which("pdftotext")  # poppler-utils: the page's own text, when installed
    if pdftotext is not None:
        page = subprocess.run([pdftotext, "-f", "1", "-l", "1", "-layout", "paper.pdf", "-"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60).stdout
        head = [line.strip() for line in page.splitlines() if line.strip()]
        assert head[1] == "Summary" and head[2].split()[:3] == ["query", "question", "verdict"], head[:4]
        assert "Query 1:" not in page  # no derivation starts on page one
    log = (tmp_path / "paper.log").read_text(errors="replace")
    overfull = [float(x) for x in re.findall(r"Overfull \\hbox \(([0-9.]+)pt too wide\)", log)]
    assert all(w < 1 for w in overfull), overfull


@pytest.mark.slow  # runs pdfLaTeX (the fast tier's budget: make test-fast <= 60 s)
def test_the_blueprint_builds_with_pdflatex(tmp_path: Path) -> None:
    pdflatex = require_program("pdflatex", "texlive-latex-base")
    code, _out, err, _ = run_cli("graph", "--format", "blueprint", "-o", str(tmp_path / "content.tex"))
    assert code == 0, err
    (tmp_path / "print.tex").write_text(WRAPPER, encoding="utf-8")
    for _ in range(2):
        run = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "print.tex"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout[-3000:]
    log = (tmp_path / "print.log").read_text(errors="replace")
    assert "undefined references" not in log and "Reference `" not in log
