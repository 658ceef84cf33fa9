"""Terminal and text output speak the spec's language, never SymPy's or LaTeX's (issue 21, item 4)."""

from __future__ import annotations

import re

import sympy as sp

import symabsorb
from symabsorb.model.functions import Z
from symabsorb.report.plainmath import plain_expr, plain_math
from tests.helpers import EXAMPLES, run_cli

#: What must never reach a terminal: SymPy's str, LaTeX control words, SymPy's own spacing.
INTERNALS = re.compile(r"\bMax\(|\bMin\(|\bAbs\(|Piecewise|\*\*|\\[A-Za-z]+|\bwedge\b|√\[|= - \d|sign\(z\)/2")


def test_plain_expr_writes_the_spec_syntax() -> None:
    a = sp.Symbol("alpha", positive=True)
    assert plain_expr(559 * sp.Max(0, Z) ** 2 / 625) == "559*max(0, z)^2/625"
    assert plain_expr(sp.Piecewise((Z, Z >= 0), (a * Z, True))) == "if z >= 0 then z else alpha*z"
    assert plain_expr(2 * sp.Piecewise((Z, (Z >= 0) & (Z < 1)), (a * Z, True))) == \
        "2*(if z >= 0 and z < 1 then z else alpha*z)"
    assert plain_expr(Z / 2 + sp.sqrt(Z**2 + 4) / 2) == "z/2 + sqrt(z^2 + 4)/2"
    assert plain_expr(sp.log(1 + Z**2) ** sp.Rational(1, 3)) == "log(z^2 + 1)^(1/3)"
    assert plain_expr(sp.Abs(Z) * sp.sign(Z) / 2) == "z/2" and plain_expr(sp.Abs(Z) * sp.sign(Z + 1)) != "z"
    assert plain_expr(sp.E * Z**-2) == "e/z^2"


def test_plain_math_reads_sympy_latex() -> None:
    assert plain_math(r"\sqrt[3]{\log{\left(z^{2} + 1 \right)}}") == "∛log(z^2 + 1)"
    assert plain_math(r"z = - \frac{7}{5}") == "z = -7/5"
    assert plain_math(r"a - b") == "a - b"
    assert plain_math(r"S = \{0, 1, 2\}") == "S = {0, 1, 2}"
    assert plain_math(r"z \geq 0 \wedge z < 1") == "z ≥ 0 ∧ z < 1"
    assert plain_math(r"- \frac{5}{6}\, I_d") == "-5/6 I_d"


def test_check_series_and_classify_print_no_internals() -> None:
    code, out, _, _ = run_cli("check", str(EXAMPLES / "beyond.absorb"))
    assert code == 0 and "star_relu(z) = 559*max(0, z)^2/625 - 559/1250" in out
    assert "leaky_sym(z) = if z >= 0 then z else alpha*z" in out
    assert not INTERNALS.search(out), INTERNALS.search(out)
    report = symabsorb.prove(symabsorb.load("activation cb(z) = log(1 + z^2)^(1/3)\nseries gelu order 4\n"
                                            "parity relu\nclassify cb\nclassify relu\n"))
    for fmt in ("text", "terminal"):
        out = report.render(fmt)
        assert "z^2" in out and not INTERNALS.search(out), INTERNALS.search(out)
        for result in report.results:
            out = result.render(fmt)
            assert not INTERNALS.search(out), (result.query, INTERNALS.search(out))
    for act in ("log(1 + z^2)^(1/3)", "relu", "if z >= 0 then z else z/5"):
        code, out, _, _ = run_cli("classify", act)
        assert code == 0 and not INTERNALS.search(out), (act, INTERNALS.search(out))
    code, out, _, _ = run_cli("facts", "relu", "--steps")
    assert "σ(z) = max(0, z)" in out and not INTERNALS.search(out)


def test_candidates_are_said_once_and_folded_unless_verbose() -> None:
    """Issue 21 item 5: an open answer names each candidate once; failed hypotheses are one folded
    line in the terminal (as HTML folds them in <details>); verbose lists each with its reason."""
    from symabsorb.report.render import render_answer

    for act in ("exp(z)/(1+z^2)", "relu"):
        result = symabsorb.classify(act)
        d = result.derivation
        assert d is not None
        failed = [c for c in d.candidates if c.state.value == "hypothesis failed"]
        assert len(failed) > 10
        for fmt in ("text", "terminal"):
            out = render_answer(result.answer, result.library, fmt, width=100)
            flat = re.sub(r"[│╭╮╰╯─\s]+", " ", out)
            for c in failed:
                label = result.library.results[c.id].label
                # a label as an item of a list ("L-x," "L-x:" "L-x (-v"), not the prefix of another ("L-x (biases)")
                item = rf"(?<![\w-]){re.escape(label)}(?=[,:.]| \(-v)"
                assert len(re.findall(item, flat)) == 1, (act, fmt, label)
                assert c.reason not in flat or any(c.reason == o.reason for o in d.candidates if o not in failed)
            assert f"{len(failed)} with a hypothesis that fails" in flat
            full = render_answer(result.answer, result.library, fmt, width=100, verbose=True)
            flat_full = re.sub(r"[│╭╮╰╯─\s]+", " ", full)
            for c in failed:
                reason = re.sub(r"\s+", " ", c.reason.replace("`", ""))  # code spans shown without their backticks
                assert f"{result.library.results[c.id].label}: hypothesis failed — {reason}" in flat_full
        if d.verdict.value == "open":
            assert len(render_answer(result.answer, result.library, "text").splitlines()) < 20
            assert not any("does not apply" in s.text for s in d.steps)


def test_verbose_report_prints_every_derivation() -> None:
    report = symabsorb.prove(symabsorb.load("block b { activation: relu dim: 2 width: 3 }\nabsorb b\nclassify gelu\n"))
    short = report.render("text")
    from symabsorb.report.render import render_report

    full = render_report(report.data, "text", verbose=True)
    assert short in full and "derivation:" not in short and full.count("derivation:") == 2
    assert "σ = ReLU: proved (structural)" in full  # the facts under a step


def test_check_separates_the_skip_from_the_weights() -> None:
    """`symabsorb check` printed '... identity skip M = I inline weights' with no separator."""
    from tests.helpers import ROOT, run_cli

    code, out, _, _ = run_cli("check", str(ROOT / "examples" / "weights.absorb"))
    assert code == 0
    assert "identity skip M = I, inline weights" in out and "M = I inline" not in out
