"""LaTeX layout (issue 21, item 6): the queries first and the library as an appendix; the lemma graph
unscaled, its layers split into rows that fit the text width, labels at 9 pt; math in theorem titles;
headings kept with what follows; failed candidates said once."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from symabsorb.report.latex import GRAPH_ROW
from tests.helpers import EXAMPLES, require_program, run_cli


def _tex(tmp_path: Path) -> Path:
    tex = tmp_path / "paper.tex"
    assert run_cli("prove", str(EXAMPLES / "paper.absorb"), "-o", str(tex))[0] == 0
    return tex


def test_latex_order_graph_and_titles(tmp_path: Path) -> None:
    body = _tex(tmp_path).read_text(encoding="utf-8")
    first_query = body.index("\\section{Query 1:")
    appendix = body.index("\\appendix")
    assert first_query < appendix < body.index("\\section{Results used}") < body.index("\\section{Lemma graph}")
    assert "\\begin{result}" not in body[:appendix]  # the library is stated in the appendix only
    assert "\\resizebox" not in body and "font=\\sffamily\\footnotesize" in body  # 9 pt labels, never scaled
    xs = [float(x) for x in re.findall(r"\\node\[[^]]*\] \([^)]*\) at \(([-0-9.]+),", body)]
    assert xs and max(abs(x) for x in xs) <= (GRAPH_ROW - 1) / 2  # at most GRAPH_ROW nodes a row
    from symabsorb.report.latex import latex_prose

    assert latex_prose("when m >= d") == "when $m \\ge d$"  # math in theorem titles
    assert "m >= d" not in body
    assert body.count("\\needspace") >= body.count("\\section{Query")
    # candidates grouped by the hypothesis that failed, one line per group (issue 28 row 4)
    assert "Other candidate results, by the hypothesis that failed" in body


@pytest.mark.slow  # pdfLaTeX twice (the slow tier runs it; make test-fast does not)
def test_latex_layout_compiles_and_the_graph_fits(tmp_path: Path) -> None:
    pdflatex = require_program("pdflatex", "texlive-latex-base")
    tex = _tex(tmp_path)
    for _ in range(2):
        run = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", tex.name], cwd=tmp_path,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout[-3000:]
    log = (tmp_path / "paper.log").read_text(errors="replace")
    assert "Overfull \\hbox" not in log and "undefined" not in log.lower()


def test_a_result_keeps_its_own_number_only_when_its_label_has_one() -> None:
    from symabsorb.report.latex import result_name

    assert result_name("corollary", "Cor. 11") == ("Corollary", "11")
    assert result_name("corollary", "Cor. R-aff-1") == ("Corollary", None)  # not "Corollary 1"
    assert result_name("lemma", "L-growth") == ("Lemma", "L-growth")
