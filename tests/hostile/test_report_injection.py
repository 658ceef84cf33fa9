"""Issue 26 §2, injection: a user string (tensor key, weights file name, lemma statement or label)
never comes out of a Markdown output as an image or a link. Every Markdown output is rendered with
a CommonMark renderer (markdown-it-py) and its HTML searched for ``<img>`` and for links that the
report did not create itself (its own links are ``#ref-...`` and ``#q-...`` anchors)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symabsorb.report.common import code_parts, text_pieces
from symabsorb.report.escape import markdown_math, markdown_text
from symabsorb.report.markdown import MarkdownRenderer
from symabsorb.theory.library import default_library
from tests.helpers import ROOT, require_module, run_cli

IMAGE = "$![t](http://host/p.png)$"
LINK = "[c](javascript:alert(1))"
PAYLOADS = (IMAGE, LINK, "a`$![u](http://host/u.png)$`b", "![v](x.png)", "www.host.example", "<http://host/>",
            "mail@host.example", "$x$![w](http://h/w.png)", "``[d](http://h/)``")


def _html(markdown: str) -> str:
    markdown_it = require_module("markdown_it", "test")
    md = markdown_it.MarkdownIt("commonmark")
    md.validateLink = lambda url: True  # a renderer that keeps `javascript:` links: see every link made
    return str(md.render(markdown))


def foreign(markdown: str) -> list[str]:
    """Images, and links other than the report's own anchors, in ``markdown`` rendered as CommonMark."""
    html = _html(markdown)
    bad = re.findall(r"<img\b[^>]*>", html)
    bad += [a for a in re.findall(r"<a\b[^>]*>", html) if not re.fullmatch(r'<a (href="#(ref|q)-[^"]*"|id="[^"]*")>', a)]
    return bad


def test_the_check_sees_an_injection() -> None:
    """The detector itself: raw payloads are images and links."""
    assert foreign(IMAGE) and foreign(LINK)
    assert not foreign("[x](#ref-thm8)")


@pytest.mark.parametrize("payload", PAYLOADS)
def test_escapes_are_inert(payload: str) -> None:
    assert not foreign(markdown_text(payload))
    assert not foreign(markdown_math(payload))
    assert not foreign(markdown_math(payload.strip("$")))


def test_code_spans_are_cut_before_math() -> None:
    assert code_parts("a `$x$` b") == [("a ", False), ("$x$", True), (" b", False)]
    assert code_parts("a ``x`y`` b `c") == [("a ", False), ("x`y", True), (" b `c", False)]
    lib = default_library()
    assert text_pieces("file `$![t](p.png)$` and $x^2$", lib) == [
        ("text", "file "), ("code", "$![t](p.png)$"), ("text", " and "), ("math", "x^2")]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["$", "`", "``", "[", "]", "(", ")", "!", "<", ">", "http://h/p.png", "x", " ",
                                 "[thm8]", "\\", "www.", "@", "*", "_", "&", ":", "javascript:", "|"]),
                max_size=24).map("".join))
def test_any_step_text_is_inert_in_markdown(text: str) -> None:
    """Whatever the engine writes around a user string, the step renders with no image and no link
    but the citations' anchors."""
    require_module("markdown_it", "test")
    renderer = MarkdownRenderer(default_library())
    assert not foreign("1. " + renderer.cite(text)), text


def _hostile_file_spec(tmp_path: Path) -> Path:
    np = require_module("numpy", "weights")
    safetensors = require_module("safetensors.numpy", "weights")
    rng = np.random.default_rng(0)
    up = rng.standard_normal((5, 3)).astype(np.float32)
    down = rng.standard_normal((3, 5)).astype(np.float32)
    safetensors.save_file({IMAGE: up, LINK: down}, str(tmp_path / "$![f](f.png)$ www.h.example.safetensors"))
    spec = tmp_path / "s!(javascript:x) $x$.absorb"
    spec.write_text('block b { activation: relu weights: "$![f](f.png)$ www.h.example.safetensors" '
                    f"up: {json.dumps(IMAGE)} down: {json.dumps(LINK)} }}\nabsorb b\n", encoding="utf-8")
    return spec


def test_tensor_keys_and_file_names_are_inert(tmp_path: Path) -> None:
    spec = _hostile_file_spec(tmp_path)
    out = tmp_path / "r.md"
    code, _o, err, _ = run_cli("prove", str(spec), "-o", str(out))
    assert code == 0, err
    text = out.read_text(encoding="utf-8")
    assert "http://host/p.png" in text  # the key is shown, as code
    assert not foreign(text)
    import symabsorb

    report = symabsorb.prove(spec)
    assert not foreign(report._repr_markdown_())
    assert not foreign(report.results[0].render("md"))


def _lemma_dir(tmp_path: Path, **fields: str) -> Path:
    text = (ROOT / "theorems" / "L-linear.toml").read_text(encoding="utf-8")
    text = text.replace('id = "L-linear"', 'id = "X-linear"').replace("priority = 5", "priority = 1")
    for key, value in fields.items():
        text = re.sub(rf"(?m)^{key} = .*$", lambda _m, k=key, v=value: f"{k} = {json.dumps(v)}", text, count=1)
    directory = tmp_path / "lemmas"
    directory.mkdir(exist_ok=True)
    (directory / "X-linear.toml").write_text(text, encoding="utf-8")
    return directory


def test_lemma_strings_are_inert(tmp_path: Path) -> None:
    require_module("markdown_it", "test")
    lemmas = _lemma_dir(tmp_path, statement=f"Linear {IMAGE} and {LINK} and `{IMAGE}`", label=LINK + IMAGE,
                        title=IMAGE, citation="http://host/x " + LINK)
    spec = tmp_path / "s.absorb"
    spec.write_text("activation lin(z) = 2*z\nblock b { activation: lin dim: 2 width: 3 }\nabsorb b\n")
    out = tmp_path / "r.md"
    code, _o, err, _ = run_cli("prove", str(spec), "--theorems", str(lemmas), "-o", str(out))
    assert code == 0, err
    text = out.read_text(encoding="utf-8")
    assert "X-linear" in text or "X\\-linear" in text
    assert not foreign(text)
    code, classified, err, _ = run_cli("classify", "2*z", "--theorems", str(lemmas), "--format", "md")
    assert code == 0, err
    assert not foreign(classified)
