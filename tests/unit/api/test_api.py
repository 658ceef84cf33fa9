"""The public API: ``import symabsorb`` is cheap, results render in every format and in notebooks."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

import symabsorb
from tests.helpers import EXAMPLES, ROOT, require_module

PAPER = EXAMPLES / "paper.absorb"


def test_import_is_lazy_and_lists_the_api() -> None:
    probe = ("import sys, symabsorb; names = dir(symabsorb); "
             "print('sympy' in sys.modules, 'symabsorb.api' in sys.modules, "
             "all(n in names for n in ('load', 'classify', 'facts', 'prove', 'decide', 'absorb')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "True"]


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        symabsorb.nope  # noqa: B018


def test_classify_three_activations() -> None:
    results = {name: symabsorb.classify(name) for name in ("relu", "tanh", "max(0, z) + z^3")}
    assert {n: r.verdict for n, r in results.items()} == {"relu": "conditional", "tanh": "impossible", "max(0, z) + z^3": "open"}
    assert results["relu"].decided_by == "Thm. 8" and "W_down[:,S] W_up[S,:] = -I" in (results["relu"].condition or "")
    assert repr(results["tanh"]) == "<Result 'classify tanh': impossible, decided_by='L-growth'>"
    assert symabsorb.classify("sigmoid", gated=True).verdict == "conditional"


def test_facts_and_their_renderings() -> None:
    f = symabsorb.facts("mish")
    assert f.verdict is None and f.facts is not None
    text = f.render("text")
    assert "σ'(0) = 3/5" in text and "σ'(0) = tanh" not in text  # tanh(log 2), simplified exactly
    assert f._repr_latex_().startswith("$\\sigma(z) = ")


def test_load_from_path_and_from_text() -> None:
    spec = symabsorb.load(PAPER)
    assert spec.path == str(PAPER) and "relu_mlp" in spec.blocks and len(spec.queries) == 16
    text = "block b { activation: relu dim: 2 width: 3 }\nabsorb b\n"
    inline = symabsorb.load(text)
    assert inline.path == "<string>" and inline.queries == ["absorb b"]
    assert repr(inline) == "<Spec '<string>': 0 activations, 1 blocks, 0 stacks, 1 queries>"
    assert "| blocks (1) | `b` |" in inline._repr_markdown_()
    with pytest.raises(symabsorb.SpecError, match="cannot find"):
        symabsorb.load("missing.absorb")


@pytest.mark.slow  # the paper example proved and rendered in every format (the fast tier's budget: make test-fast <= 60 s)
def test_prove_and_render_every_format() -> None:
    report = symabsorb.prove("block b { activation: relu dim: 2 width: 3 }\nclassify tanh\nabsorb b\n")
    assert report.verdicts == {"classify tanh": "impossible", "absorb b": "conditional"} and report.open == 0
    assert report.render("md").startswith("# symabsorb report")
    assert json.loads(report.render("json"))["queries"][0]["query"] == "classify tanh"
    assert report.render("html").startswith("<!DOCTYPE html>")
    assert "\\documentclass" in report.render("tex") and "\\documentclass" not in report.render("tex", fragment=True)
    plain = report.render("text")
    assert "classify tanh" in plain and "\x1b[" not in plain
    assert [r.verdict for r in report.results] == ["impossible", "conditional"]
    with pytest.raises(symabsorb.SymabsorbError, match=r"fmt=.docx. .type=str.: expected one of md"):
        report.render("docx")


CSS_RULE = re.compile(r"([^{}]+)\{[^{}]*\}")


def _assert_scoped_fragment(html: str) -> None:
    assert not html.lstrip().lower().startswith(("<!doctype", "<html"))
    for tag in ("html", "head", "body", "link", "script", "meta"):  # (<title> is an SVG tooltip)
        assert not re.search(rf"<{tag}[\s>]", html, flags=re.I), tag
    assert html.startswith('<div class="symabsorb">')
    for style in re.findall(r"<style[^>]*>(.*?)</style>", html, flags=re.S):
        for m in CSS_RULE.finditer(style):
            for selector in m.group(1).split(","):
                selector = selector.strip()
                assert selector.startswith((".symabsorb", ".plot-")), selector


def test_notebook_html_is_a_scoped_fragment() -> None:
    report = symabsorb.prove(PAPER)
    _assert_scoped_fragment(report._repr_html_())
    _assert_scoped_fragment(symabsorb.classify("gelu")._repr_html_())
    _assert_scoped_fragment(symabsorb.facts("hardswish")._repr_html_())
    md = symabsorb.classify("relu")._repr_markdown_()
    assert "**Verdict: conditional**" in md and '<a id="ref-thm8"></a>' in md


def test_decide_numpy_arrays_exact_values_and_files(tmp_path: Path) -> None:
    np = require_module("numpy", "weights")
    up = [[1, 0], [0, 1], [1, 1]]
    down = [[-1, 0, Fraction(1, 2)], [0, -1, Fraction(1, 3)]]
    exact = symabsorb.decide("relu", up, down)
    assert exact.verdict == "absorbable" and exact.witness is not None and exact.witness.index_set == (0, 1)
    floats = symabsorb.decide("relu", np.array(up, dtype=float), np.array(down, dtype=float))
    assert floats.verdict == "absorbable" and floats.witness is not None and floats.witness.index_set == (0, 1)
    generic = symabsorb.decide("relu", np.array([[1.0, 2], [3, -1], [1, 1]]), np.array([[1.0, 0, 2], [-1, 1, 1]]))
    assert generic.verdict == "not-absorbable"
    path = tmp_path / "layer.npz"
    np.savez(path, W_up=np.array(up, dtype=float), W_down=np.array(down, dtype=float))
    from_file = symabsorb.decide("relu", file=path)
    assert from_file.verdict == "absorbable"
    with pytest.raises(ValueError, match="w_up and w_down"):
        symabsorb.decide("relu", up)


def test_witness_written_from_a_result(tmp_path: Path) -> None:
    require_module("numpy", "weights")
    result = symabsorb.absorb(EXAMPLES / "weights.absorb", "planted")
    assert result.verdict == "absorbable"
    out = result.write_witness(tmp_path / "w.npz")
    import numpy as np

    with np.load(out) as data:
        assert data["W_up"].shape == (3, 2)
    with pytest.raises(ValueError, match="no witness"):
        symabsorb.absorb(EXAMPLES / "weights.absorb", "generic").write_witness(tmp_path / "x.npz")


@pytest.mark.slow  # runs every example of docs/api.md (the fast tier's budget: make test-fast <= 60 s)
def test_api_page_is_under_a_page_and_its_examples_run() -> None:
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert len(page.splitlines()) <= 70
    for name in ("load", "classify", "facts", "prove", "decide", "absorb", "render"):
        assert f"{name}(" in page
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    assert blocks
    if any("numpy" in b for b in blocks):
        require_module("numpy", "weights")
    namespace: dict[str, object] = {}
    import os

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        for block in blocks:
            exec(compile(block, "docs/api.md", "exec"), namespace)  # the page's own examples, not user input
    finally:
        os.chdir(cwd)


def test_parameter_constraint_proves_the_constant_nonzero() -> None:
    # c = (a + 1)/2 is the odd-part constant; a > -1 makes it positive, a > -2 leaves c = 0 possible
    body = "activation lk(z; a {}) = if z >= 0 then z else a*z\nclassify lk\n"
    assert symabsorb.prove(body.format("> -1")).verdicts == {"classify lk": "conditional"}
    assert symabsorb.prove(body.format("> -2")).verdicts == {"classify lk": "open"}


def test_a_missing_extra_is_one_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    from symabsorb import results

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setattr(results, "_WARNED", set())
    report = symabsorb.prove("classify relu\n")
    with pytest.warns(UserWarning, match=r"matplotlib is missing \(pip install 'symabsorb\[report\]'\)"):
        report.render("html")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report.render("html")  # once is enough
        symabsorb.classify("relu").render("html")  # one answer has no plots: nothing is missing


def test_fragments_on_one_page_share_no_id() -> None:
    pages = [symabsorb.prove(PAPER)._repr_html_(), symabsorb.classify("gelu")._repr_html_(),
             symabsorb.classify("relu")._repr_html_()]
    seen: set[str] = set()
    for html in pages:
        ids = re.findall(r'\sid="([^"]+)"', html)
        assert ids and len(ids) == len(set(ids)) and not seen & set(ids)
        seen |= set(ids)
        local = re.findall(r'(?:href="#|url\(#)([^")]+)', html)
        assert local and set(local) <= set(ids)  # every link and SVG reference stays in its own fragment
