"""Issue 28: ``graph --format blueprint``, the result library as a leanblueprint chapter
(``\\begin{theorem}[...]\\label{...}\\uses{...}``, a status for paper / library-proved / conjecture /
open, never ``\\leanok``), built with pdflatex; the graph page coloured by that status."""

from __future__ import annotations

import json
import re
from pathlib import Path

from symabsorb.report.common import STATUS_COLORS, blueprint_status
from symabsorb.report.graph import render_graph
from symabsorb.report.graphpage import graph_page
from symabsorb.theory.library import default_library
from tests.helpers import ROOT, run_cli

#: what a blueprint's print.tex provides around content.tex: ONLY what leanblueprint's stock
#: macros/common.tex defines (theorem, proposition, lemma, corollary, definition), plus the plugin's
#: \uses, \leanok, \notready and \lean as no-ops (no conjecture environment: the chapter defines it)
WRAPPER = r"""\documentclass{report}
\usepackage{amsmath,amssymb,amsthm,mathtools}
\usepackage[hidelinks]{hyperref}
\newtheorem{theorem}{Theorem}
\newtheorem{proposition}[theorem]{Proposition}
\newtheorem{lemma}[theorem]{Lemma}
\newtheorem{corollary}[theorem]{Corollary}
\theoremstyle{definition}
\newtheorem{definition}[theorem]{Definition}
\newcommand{\uses}[1]{}
\newcommand{\leanok}{}
\newcommand{\notready}{}
\newcommand{\lean}[1]{}
\begin{document}
\input{content}
\end{document}
"""
ENTRY = re.compile(r"% status: (\S+)\n\\begin\{(\w+)\}\[[^\n]*\]\\label\{res:([^}]*)\}(?:\\uses\{([^}]*)\})?(\\notready)?")


def _entries(text: str) -> dict[str, tuple[str, str, list[str], bool]]:
    return {m.group(3): (m.group(1), m.group(2), [u.strip().removeprefix("res:") for u in (m.group(4) or "").split(",")
                                                   if u.strip()], bool(m.group(5)))
            for m in ENTRY.finditer(text)}


def test_every_result_with_its_uses_and_status() -> None:
    lib = default_library()
    text = render_graph(lib, "blueprint")
    entries = _entries(text)
    assert set(entries) == set(lib.results)
    order = list(entries)
    for rid, (status, env, uses, notready) in entries.items():
        r = lib.results[rid]
        assert status == blueprint_status(r)
        assert sorted(uses) == sorted(r.uses), rid
        assert all(order.index(u) < order.index(rid) for u in uses), rid  # what it uses is stated first
        assert notready == (status in ("conjecture", "open", "user")), rid
        assert env == ("conjecture" if r.kind == "open-problem" else r.kind)
        # stock common.tex's environments, and the conjecture the chapter defines when the document has none
        assert env in ("theorem", "lemma", "proposition", "corollary", "definition", "conjecture")
    assert entries["thm8"][0] == "paper" and entries["open-deep"][0] == "open"
    assert entries["conj-E"][0] == "conjecture" and entries["thm-R"][0] == "library-proved"
    assert "\\leanok" not in text.replace("\\providecommand{\\leanok}{}", "")  # nothing is formalised in Lean
    assert text.count("\\begin{proof}") == sum(1 for s, *_ in entries.values() if s in ("paper", "library-proved"))


def test_no_placeholder_no_latex_source_as_text_and_named_docs() -> None:
    text = render_graph(default_library(), "blueprint")
    assert text.count("@{") == 0  # no unfilled template placeholder
    assert "\\textbackslash" not in text  # math never printed as its LaTeX source in \texttt
    assert "\\begin{theorem}[Conjecture E" not in text and "\\begin{conjecture}[Conjecture E" in text
    assert "proved in docs/theorems.md" not in text and "proved in symabsorb's docs/theorems.md" in text


def test_a_user_lemma_is_escaped_and_marked(tmp_path: Path) -> None:
    text = (ROOT / "theorems" / "L-linear.toml").read_text(encoding="utf-8")
    text = text.replace('id = "L-linear"', 'id = "X-linear"').replace("priority = 5", "priority = 1")
    text = re.sub(r'(?m)^label = .*$', lambda _m: "label = " + json.dumps("X \\input{/etc/passwd} ^^5c"), text)
    lemmas = tmp_path / "lemmas"
    lemmas.mkdir()
    (lemmas / "X-linear.toml").write_text(text, encoding="utf-8")
    code, out, err, _ = run_cli("graph", "--theorems", str(lemmas), "--format", "blueprint")
    assert code == 0, err
    assert "\\input{/etc" not in out and "^^5c" not in out
    assert _entries(out)["X-linear"][0] == "user" and _entries(out)["X-linear"][3]


def test_the_graph_page_is_coloured_by_status() -> None:
    lib = default_library()
    page = graph_page(lib)
    statuses = dict(re.findall(r'data-i="(\d+)"[^>]*data-status="([a-z-]+)"', page))
    assert set(statuses.values()) >= {"paper", "library-proved", "conjecture", "open"}
    nodes = re.findall(r'data-status="([a-z-]+)" data-open="no"[^>]*>.*?<rect [^>]*fill="([^"]+)"', page)
    assert nodes and all(fill == STATUS_COLORS[status] for status, fill in nodes)
    assert "library-proved" in page.split('class="lg-legend"')[1]  # the legend says what the fills mean


def test_escaped_hash_and_percent_are_safe_math_but_bare_ones_are_not() -> None:
    from symabsorb.report.escape import is_safe_math
    assert is_safe_math(r"\#\text{active}(x) \le m") and is_safe_math(r"50\%") and is_safe_math(r"\tbinom{1/2}{j}")
    assert not is_safe_math(r"\\#1") and not is_safe_math("#1") and not is_safe_math(r"\\%x")


def test_an_open_problem_is_a_conjecture_never_a_theorem() -> None:
    """The new user's PDF read 'Theorem 1.51 (Conjecture E: ...)': an unproved statement printed as a theorem."""
    from symabsorb.report.latex import render_blueprint
    from symabsorb.theory.library import default_library

    lib = default_library()
    text = render_blueprint(lib)
    open_ids = [rid for rid, r in lib.results.items() if r.kind == "open-problem"]
    assert open_ids
    for rid in open_ids:
        head = next(line for line in text.splitlines() if f"\\label{{res:{rid}}}" in line)
        assert head.startswith("\\begin{conjecture}"), head
    assert "\\newtheorem{conjecture}" in text  # defined when the document has none
