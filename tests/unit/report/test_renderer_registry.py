"""Issue 27 part 3: one table of output formats, filled by ``@renderer`` on each renderer's entry
function and read by every consumer (render's dispatch, the API's format check, ``--format``'s
choices, the ``-o`` suffix lookup, ``scan -o``). A new format is one decorated function in one
file; an unknown format, or a format without an entry for the document asked, raises naming the
choices instead of rendering as terminal text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import symabsorb
from symabsorb.errors import ArgumentError
from symabsorb.report.formats import RENDERERS, RendererRegistry, RenderOptions, UnknownFormat, renderer
from symabsorb.report.render import normalize_format, render_answer, render_report, render_summary
from tests.helpers import ROOT, run_cli

SPEC = "block b { activation: relu2  dim: d  width: 2*d  skip: identity }\nabsorb b\n"


@pytest.fixture
def toy() -> Iterator[None]:
    """The whole of a new format: one decorated function (removed again after the test)."""

    @renderer("toy", aliases=("toys",), suffixes=(".toy",))
    def render_toy(report: Any, opts: RenderOptions) -> str:
        verdicts = "; ".join(f"{a.query} -> {a.derivation.verdict.value}" for a in report.answers if a.derivation)
        return f"TOY[{opts.format}, fragment={opts.fragment}] {verdicts}\n"

    try:
        yield
    finally:
        RENDERERS.unregister("toy")


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "b.absorb"
    path.write_text(SPEC, encoding="utf-8")
    return path


def test_a_toy_format_through_the_api(toy: None, spec: Path) -> None:
    report = symabsorb.prove(symabsorb.load(spec))
    assert report.render("toy") == "TOY[toy, fragment=False] absorb b -> " + report.results[0].verdict + "\n"
    assert report.render(".TOY", fragment=True).startswith("TOY[toy, fragment=True]")  # suffix spelling, any case
    assert report.render("toys").startswith("TOY[toy")
    assert normalize_format("toys") == "toy" and "toy" in RENDERERS.names("report")
    # the toy renders reports only: one answer in toy raises, never falls back to terminal text
    with pytest.raises(UnknownFormat, match="no answer renderer: use one of md, html, tex, json, terminal, text"):
        report.results[0].render("toy")


def test_a_toy_format_through_the_cli(toy: None, spec: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.toy"
    code, _text, err, _ = run_cli("prove", str(spec), "-o", str(out))
    assert code == 0, err
    assert out.read_text(encoding="utf-8").startswith("TOY[toy, fragment=False] absorb b -> ")
    code, text, err, _ = run_cli("prove", str(spec), "--format", "toy")
    assert code == 0 and text.startswith("TOY[toy"), err


def test_the_toy_is_gone_after(spec: Path) -> None:
    assert "toy" not in RENDERERS.names("report")
    code, _, err, _ = run_cli("prove", str(spec), "--format", "toy")
    assert code == 2 and "md" in err and "toy" not in err.split("choose from")[-1]


def test_unknown_formats_name_the_choices(spec: Path, tmp_path: Path) -> None:
    with pytest.raises(UnknownFormat, match="unknown format 'nope': use one of md, html, tex, json, terminal, text"):
        normalize_format("nope")
    report = symabsorb.prove(symabsorb.load(spec))
    with pytest.raises(ArgumentError, match="expected one of md, html, tex, json, terminal, text"):
        report.render("nope")
    with pytest.raises(UnknownFormat, match="the format 'csv' has no report renderer"):
        render_report(report.data, "csv")  # a scan-table format: never a report as terminal text
    with pytest.raises(UnknownFormat, match="the format 'tex' has no summary renderer: use one of md, html"):
        render_summary(report.data, "tex")
    with pytest.raises(UnknownFormat, match="unknown format 'nope'"):
        render_answer(report.results[0].answer, report.results[0].library, "nope")
    code, _, err, _ = run_cli("prove", str(spec), "-o", str(tmp_path / "r.txt"))
    assert code == 2 and "use --format md|html|tex|json" in err
    code, _, err, _ = run_cli("scan", str(tmp_path), "-o", str(tmp_path / "t.xlsx"))
    assert code == 2 and "use a .md, .tex or .csv file" in err


def test_the_one_table() -> None:
    assert RENDERERS.names("report") == ("md", "html", "tex", "json", "terminal", "text")
    assert RENDERERS.names("answer") == ("md", "html", "tex", "json", "terminal", "text")
    assert RENDERERS.names("summary") == ("md", "html")
    assert RENDERERS.names("scan") == ("md", "tex", "csv")
    assert RENDERERS.by_suffix(".HTM").name == "html" and RENDERERS.by_suffix(".csv", "scan").name == "csv"
    with pytest.raises(UnknownFormat):
        RENDERERS.by_suffix(".csv")  # no report is written as csv
    assert normalize_format("Markdown") == "md" and normalize_format(".tex") == "tex" and normalize_format("txt") == "text"
    # --format accepts what it accepted when the CLI had its own copy of the table
    assert set(RENDERERS.spellings("report")) == {"md", "markdown", "html", "htm", "tex", "latex", "json", "terminal",
                                                  "text", "txt"}


def test_registration_conflicts_are_errors() -> None:
    table = RendererRegistry()

    @table.register("a", aliases=("x",), suffixes=(".a",))
    def first(report: Any, opts: RenderOptions) -> str:
        return "a"

    with pytest.raises(ValueError, match="'x' already selects the format 'a'"):
        table.register("b", aliases=("x",))(first)
    with pytest.raises(ValueError, match="already has a report renderer"):
        table.register("a")(first)
    with pytest.raises(ValueError, match="bare name"):
        table.register(".c")
    with pytest.raises(ValueError, match="unknown kind"):
        table.register("c", kind="poster")  # type: ignore[arg-type]
    assert table.render("report", "X", object()) == "a" and table.names() == ("a",)


def test_graph_formats_come_from_the_table(tmp_path: Path) -> None:
    from symabsorb.report.graph import render_graph
    from symabsorb.theory.library import default_library

    assert RENDERERS.names("graph") == ("dot", "mermaid", "json", "html", "blueprint")
    with pytest.raises(UnknownFormat, match="unknown format 'svg': use one of dot, mermaid, json, html, blueprint"):
        render_graph(default_library(), "svg")
    with pytest.raises(UnknownFormat, match="the format 'md' has no graph renderer"):
        render_graph(default_library(), "md")  # never DOT in disguise

    @renderer("toygraph", kind="graph")
    def toy_graph(library: Any, states: Any, opts: RenderOptions) -> str:
        return f"{len(library.results)} results\n"

    try:
        code, out, err, _ = run_cli("graph", "--format", "toygraph")
        assert code == 0 and out == f"{len(default_library().results)} results\n", err
    finally:
        RENDERERS.unregister("toygraph")
    code, _, err, _ = run_cli("graph", "--format", "toygraph")
    assert code == 2 and "'dot', 'mermaid', 'json', 'html', 'blueprint'" in err
    code, _, err, _ = run_cli("graph", "-o", str(tmp_path / "g.html"))
    assert code == 0 and (tmp_path / "g.html").read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")


def test_atlas_formats_come_from_the_table() -> None:
    from symabsorb.explore.atlas import Atlas
    from symabsorb.report.atlas import render_atlas

    assert RENDERERS.names("atlas") == ("md", "html", "json")
    atlas = Atlas(title="t", spaces=(), stacks=(), run={})
    assert render_atlas(atlas, "md").startswith("# t") and render_atlas(atlas, "json").startswith("{")
    with pytest.raises(UnknownFormat, match="the format 'tex' has no atlas renderer: use one of md, html, json"):
        render_atlas(atlas, "tex")  # before: Markdown in disguise
    spec = ROOT / "examples" / "explore.absorb"
    code, _, err, _ = run_cli("explore", str(spec), "--in-process", "-o", "atlas.tex")
    assert code == 2 and "the atlas is written as md, html or json" in err  # refused before any work
