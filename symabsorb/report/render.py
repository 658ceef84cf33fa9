"""The one place that turns report data into text: it dispatches on the format and sits above the
renderers (``markdown``, ``html``, ``latex``, ``jsonout``, ``terminal``), which never import each
other; :mod:`.model` imports none of them.

Two kinds of input: a whole :class:`~.model.Report` (every query of a spec) or one
:class:`~.model.QueryAnswer` (what ``classify``, ``facts`` and ``absorb`` print).
"""

from __future__ import annotations

import importlib.util
import json

from ..answer.types import QueryAnswer, Report
from ..theory.library import Library
from .common import citation_text, shown_source
from .escape import json_safe

__all__ = ["FORMATS", "missing_extras", "normalize_format", "render_answer", "render_report", "render_summary"]

#: Accepted format names (and file extensions) -> the canonical format.
FORMATS = {"md": "md", "markdown": "md", "html": "html", "htm": "html", "tex": "tex", "latex": "tex", "json": "json",
           "terminal": "terminal", "text": "text", "txt": "text"}


def normalize_format(fmt: str) -> str:
    """The canonical name of ``fmt`` (``markdown`` -> ``md``); ``ValueError`` naming the choices."""
    key = fmt.lower().lstrip(".")
    if key not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: use one of md, html, tex, json, terminal, text")
    return FORMATS[key]


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ValueError:  # a module blocked with sys.modules[name] = None
        return False


def missing_extras(fmt: str, plots: bool = True) -> list[str]:
    """One warning line per optional package that ``fmt`` would use and that is not installed
    (``plots``: whether the output has activation plots, as a whole report does)."""
    fmt = normalize_format(fmt)
    out = []
    if fmt == "html" and not _has("latex2mathml"):
        out.append("HTML math is shown as LaTeX source: latex2mathml is missing (pip install 'symabsorb[report]')")
    if fmt == "html" and plots and not _has("matplotlib"):  # (LaTeX draws its plots in TikZ: nothing missing)
        out.append("HTML reports have no activation plots: matplotlib is missing (pip install 'symabsorb[report]')")
    return out


def render_report(report: Report, fmt: str, *, fragment: bool = False, color: bool = False, width: int = 110,
                  verbose: bool = False) -> str:
    """``report`` in ``fmt``. ``fragment``: HTML as an embeddable ``<div>`` with scoped CSS, LaTeX
    as a body to paste into a paper. ``verbose`` (terminal, text): every derivation in full after the
    summary, each candidate with its reason (folded to one line otherwise, as HTML folds them)."""
    fmt = normalize_format(fmt)
    if fmt == "md":
        from .markdown import render_markdown

        return render_markdown(report)
    if fmt == "json":
        from .jsonout import render_json

        return render_json(report)
    if fmt == "html":
        from .html import render_html

        return render_html(report, fragment=fragment)
    if fmt == "tex":
        from .latex import render_latex

        return render_latex(report, fragment=fragment)
    from .terminal import render_terminal

    return render_terminal(report, width=width, color=color and fmt == "terminal", plain=fmt == "text",
                           verbose=verbose)


def render_summary(report: Report, fmt: str) -> str:
    """What a notebook shows for a report (``html`` or ``md``): the verdicts in a table and each
    derivation folded, instead of the whole report inline."""
    fmt = normalize_format(fmt)
    if fmt == "html":
        from .html import render_html_summary

        return render_html_summary(report)
    if fmt == "md":
        from .markdown import render_markdown_summary

        return render_markdown_summary(report)
    raise ValueError(f"no summary in {fmt!r}: use html or md")


def _cited(answer: QueryAnswer, library: Library) -> list[str]:
    """The results one answer's steps cite (the candidates it merely tried are listed, not stated)."""
    d = answer.derivation
    if d is None:
        return []
    ids = {rid for step in d.steps for rid in step.cites} | set(d.cited) | ({d.decided_by} if d.decided_by else set())
    return [rid for rid in sorted(library.results) if rid in ids]


def render_answer(answer: QueryAnswer, library: Library, fmt: str, *, fragment: bool = True, color: bool = False,
                  width: int = 100, verbose: bool = False) -> str:
    """One answer (a verdict with its derivation, or facts) in ``fmt``, with the results it cites.
    ``verbose`` (terminal, text): each candidate with its reason and the facts under each step."""
    fmt = normalize_format(fmt)
    cited = _cited(answer, library)
    # the candidates it only tried are linked from its table: listed too, folded away
    tried = [rid for rid in Report("", "", "", (answer,), library).cited() if rid not in cited]
    if fmt == "md":
        from .escape import markdown_text
        from .markdown import MarkdownRenderer

        def entry(rid: str) -> list[str]:
            r = library.results[rid]
            return [f'<a id="ref-{rid}"></a>', f"- **{markdown_text(r.label)}** — {markdown_text(r.title)} "
                    f"(*{markdown_text(shown_source(r))}*: {markdown_text(citation_text(r))}).", ""]

        lines = MarkdownRenderer(library).render(answer)
        if cited:
            lines += ["", "**Results cited**", ""]
            for rid in cited:
                lines += entry(rid)
        if tried:
            lines += ["<details><summary>Other results tried</summary>", ""]
            for rid in tried:
                lines += entry(rid)
            lines += ["</details>"]
        return "\n".join(lines).rstrip("\n") + "\n"
    if fmt == "json":
        from .jsonout import answer_to_dict

        return json_safe(json.dumps(answer_to_dict(answer), indent=2, ensure_ascii=False)) + "\n"
    if fmt == "html":
        from .escape import html_text as escape
        from .html import HtmlRenderer, html_fragment, html_page

        renderer = HtmlRenderer(library)
        body = (f"<p><strong><code>{escape(answer.query)}</code></strong></p>" + renderer.render(answer)
                + "".join(renderer.reference(rid) for rid in cited)
                + (f"<details><summary>Other results tried ({len(tried)})</summary>"
                   + "".join(renderer.reference(rid) for rid in tried) + "</details>" if tried else ""))
        return html_fragment(body) if fragment else html_page(answer.query, body)
    if fmt == "tex":
        from .latex import LatexRenderer

        renderer_tex = LatexRenderer(library)
        # every candidate is cited with \ref in LaTeX, so each needs its environment
        lines_tex = renderer_tex.references(Report("", "", "", (answer,), library).cited()) + renderer_tex.render(answer)
        return "\n".join(lines_tex) + "\n"
    from .terminal import render_answer_terminal

    return render_answer_terminal(answer, library, width=width, color=color and fmt == "terminal",
                                  plain=fmt == "text", verbose=verbose)
