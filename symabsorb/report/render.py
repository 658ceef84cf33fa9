"""The one place that turns report data into text: it sits above the renderers (``markdown``,
``html``, ``latex``, ``jsonout``, ``terminal``, ``scantable``), which never import each other, and
dispatches through the table they register themselves in (:mod:`.formats`: ``@renderer("md")``);
an unknown format, or one with no entry for the kind of document asked, raises naming the choices.

Two kinds of input: a whole :class:`~.model.Report` (every query of a spec) or one
:class:`~.model.QueryAnswer` (what ``classify``, ``facts`` and ``absorb`` print).
"""

from __future__ import annotations

import importlib.util

from ..answer.types import QueryAnswer, Report
from ..theory.library import Library
from .formats import RENDERERS, Kind

__all__ = ["missing_extras", "normalize_format", "render_answer", "render_report", "render_summary"]


def normalize_format(fmt: str, kind: Kind = "report") -> str:
    """The canonical name of ``fmt`` (``markdown`` -> ``md``); :class:`~.formats.UnknownFormat` (a
    ``ValueError``) naming the choices for an unknown format or one that renders no ``kind``."""
    return RENDERERS.normalize(fmt, kind)


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
    return RENDERERS.render("report", fmt, report, fragment=fragment, color=color, width=width, verbose=verbose)


def render_summary(report: Report, fmt: str) -> str:
    """What a notebook shows for a report (``html`` or ``md``): the verdicts in a table and each
    derivation folded, instead of the whole report inline."""
    return RENDERERS.render("summary", fmt, report)


def render_answer(answer: QueryAnswer, library: Library, fmt: str, *, fragment: bool = True, color: bool = False,
                  width: int = 100, verbose: bool = False) -> str:
    """One answer (a verdict with its derivation, or facts) in ``fmt``, with the results it cites.
    ``verbose`` (terminal, text): each candidate with its reason and the facts under each step."""
    return RENDERERS.render("answer", fmt, answer, library, fragment=fragment, color=color, width=width,
                            verbose=verbose)
