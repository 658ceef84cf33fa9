"""Every symbol of every step round-trips through every format (issue 21, item 1).

A derivation with one step of each kind, evidence with fact steps, candidate reasons, notes and
assumptions, all carrying Greek letters, sub- and superscripts, bars and relations written the way
the prover and the analysis write them (plain text outside ``$...$``, LaTeX inside), is rendered in
each format; the symbols are read back from each output."""

from __future__ import annotations

import html
import json
import re
import subprocess
import unicodedata
from pathlib import Path

import pytest
import sympy as sp

from symabsorb.analysis.facts import Evidence, Stage, Status, Step
from symabsorb.answer.types import QueryAnswer
from symabsorb.report.latex import MATH_CHARS, PREAMBLE, TEXT_CHARS, latex_prose
from symabsorb.report.plainmath import plain_math
from symabsorb.report.render import render_answer
from symabsorb.theory.derivation import CandidateOutcome, Derivation, DerivationStep, NodeState, Verdict
from symabsorb.theory.library import default_library
from tests.helpers import ROOT, require_program

#: Plain text as symmetry.py, growth.py and the prover write it.
PLAIN = [
    "(μ^k - κ)s_k = 0 for k > N gives μ^2 = κ = μ^4, so |μ| = 1, and for μ = -1, κ = (-1)^2 = 1",
    "a polynomial with |σ(t)| ≤ C(1 + |t|^N) has degree ≤ N = 1, but the Taylor coefficient s_2 at 0 is nonzero",
    "σ(-t) - κσ(t) = (1 - κ)e(t) - (1 + κ)o(t) is a polynomial iff its even and odd parts are",
    "so Sym(σ) = {(μ, μ) for every μ > 0, (μ, |μ|) for every μ < 0}",
    "W_down[:,S] W_up[S,:] = −M ⊗ I_d with ‖T‖ ≠ 0, m >= d, x ∈ ℝ, λ ≥ 0 and Wᵀ",
]
KINDS = ["setting", "hypothesis", "argument", "conclusion", "remark"]


def _derivation() -> Derivation:
    ev = Evidence(Status.PROVED, Stage.SYMBOLIC, tuple(Step(t, sp.Rational(1, 8) if i == 0 else None)
                                                      for i, t in enumerate(PLAIN)), reason=PLAIN[3])
    steps = tuple(DerivationStep(f"step {kind}: {PLAIN[i]} and $\\mu^{{2}} \\ge \\kappa$", (), ((PLAIN[1], ev),), kind)
                  for i, kind in enumerate(KINDS))
    return Derivation(query="absorb b", target="b", target_kind="block", verdict=Verdict.OPEN, scope="all weights",
                      decided_by=None, source=None, steps=steps, assumptions=(PLAIN[4],), notes=(PLAIN[2],),
                      candidates=(CandidateOutcome("L-linear", NodeState.FAILED, PLAIN[0]),))


def _render(fmt: str) -> str:
    return render_answer(QueryAnswer("absorb b", "absorb", _derivation()), default_library(), fmt)


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _latex_read_back(tex: str) -> str:
    """What a reader sees in LaTeX source, as plain text: math and escapes undone."""
    tex = tex.replace("---", "—").replace("\\_", "_").replace("$", "")
    return plain_math(tex)


@pytest.mark.parametrize("text", PLAIN)
def test_latex_prose_reads_back_as_written(text: str) -> None:
    out = latex_prose(text)
    assert "?" not in out and "[U+" not in out
    assert _squash(_latex_read_back(out)) == _squash(text.replace("−", "-").replace(">=", "≥"))


def test_latex_prose_puts_symbols_in_math() -> None:
    out = latex_prose(PLAIN[0] + "; " + PLAIN[1])
    for piece in ("$\\mu^{k}$", "\\kappa", "$s_{k} = 0$", "$s_{2}$", "|^{N}$", "$k > N$", "$\\mu = -1$"):
        assert piece in out, piece
    assert "\\^{}" not in out and "s\\_" not in out
    assert latex_prose("blocks absorb any skip when m >= d") == "blocks absorb any skip when $m \\ge d$"
    # a block name keeps its underscore as text; an unknown character is named, never dropped
    assert latex_prose("block relu_mlp") == "block relu\\_mlp"
    assert latex_prose("snow ☃") == "snow [U+2603]"


def test_every_character_the_library_and_prover_write_has_a_latex_form() -> None:
    chars: set[str] = set()
    for path in [*(ROOT / "theorems").glob("*.toml"), *(ROOT / "symabsorb" / "analysis").glob("*.py"),
                 *(ROOT / "symabsorb" / "theory").glob("*.py"), *(ROOT / "symabsorb" / "weights").glob("*.py")]:
        chars |= {ch for ch in path.read_text(encoding="utf-8") if ord(ch) > 127}
    missing = sorted(ch for ch in chars if not unicodedata.category(ch).startswith("M")
                     and ("?" in latex_prose(ch) or "[U+" in latex_prose(ch)))
    assert not missing, missing


def test_every_step_kind_round_trips_in_every_format() -> None:
    tex = _render("tex")
    assert "?" not in tex and "[U+" not in tex
    read = _squash(_latex_read_back(tex))
    for text in PLAIN:
        assert _squash(text.replace("−", "-").replace(">=", "≥")) in read, text
    for kind in KINDS:
        assert f"step {kind}:" in tex
    md = _render("md")
    md_read = _squash(html.unescape(re.sub(r"\\(.)", r"\1", md)))
    page = _squash(html.unescape(re.sub(r"<[^>]+>", "", _render("html"))))
    data = json.loads(_render("json"))
    terminal, text_out = (_squash(re.sub("[│╭╮╰╯─]", "", _render(fmt))) for fmt in ("terminal", "text"))
    for t in PLAIN:
        for name, out in (("md", md_read), ("html", page), ("terminal", terminal), ("text", text_out)):
            assert _squash(t) in out, (name, t)
    assert [s["text"].split(" and $")[0] for s in data["derivation"]["steps"]] == [
        f"step {kind}: {PLAIN[i]}" for i, kind in enumerate(KINDS)]


def test_symbols_compile_with_pdflatex(tmp_path: Path) -> None:
    pdflatex = require_program("pdflatex", "texlive-latex-base")
    body = _render("tex") + "\n\n" + latex_prose(" ".join(MATH_CHARS) + " " + " ".join(TEXT_CHARS))
    doc = "\n".join(["\\documentclass{article}", PREAMBLE, "\\begin{document}", body, "\\end{document}"])
    (tmp_path / "s.tex").write_text(doc, encoding="utf-8")
    run = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "s.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:]
    log = (tmp_path / "s.log").read_text(errors="replace")
    assert "Missing character" not in log and not re.search(r"^! ", log, flags=re.M)
