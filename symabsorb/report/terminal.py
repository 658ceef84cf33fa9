"""A readable terminal summary: ``rich`` when installed (colours, a table), plain text otherwise."""

from __future__ import annotations

import io
import re

from ..theory.derivation import Verdict
from .common import VERDICT_TEXT, facts_rows
from .model import Report

__all__ = ["VERDICT_STYLE", "render_terminal"]

VERDICT_STYLE = {Verdict.IMPOSSIBLE: "bold red", Verdict.CONDITIONAL: "bold yellow", Verdict.ABSORBABLE: "bold green",
                 Verdict.NOT_ABSORBABLE: "bold magenta", Verdict.OPEN: "bold cyan"}
_MATHRM = re.compile(r"\\mathrm\{([^}]*)\}")


def _plain_math(text: str) -> str:
    """LaTeX made legible in a terminal (``W_{\\mathrm{down}}`` -> ``W_down``)."""
    text = _MATHRM.sub(r"\1", text)
    for a, b in (("\\,", " "), ("\\ne", "≠"), ("\\le", "≤"), ("\\ge", "≥"), ("\\sigma", "σ"), ("\\odot", "⊙"),
                 ("\\otimes", "⊗"), ("\\cdots", "⋯"), ("\\to", "→"), ("\\infty", "∞"), ("\\pm", "±"), ("$", ""),
                 ("{", ""), ("}", ""), ("\\tfrac", ""), ("\\frac", ""), ("\\top", "ᵀ"), ("\\", "")):
        text = text.replace(a, b)
    return text


def _summary(report: Report) -> list[tuple[str, str, str, str]]:
    rows = []
    for a in report.answers:
        d = a.derivation
        if d is not None:
            label = report.library.results[d.decided_by].label if d.decided_by else "—"
            if d.condition_plain:
                detail = f"{d.condition_plain} (sufficient: {d.sufficient}; necessary: {d.necessary})"
            elif d.verdict is Verdict.OPEN:
                undecided = [c for c in d.candidates if c.state.value == "hypothesis undecided"]
                detail = "no result applies" + (f"; undecided: {undecided[0].id} ({undecided[0].reason})"
                                                  if undecided else "")
            else:
                detail = f"{VERDICT_TEXT[d.verdict]} for {d.scope}"
            if d.witness is not None:
                detail += f"; witness S = {{{', '.join(map(str, d.witness.index_set))}}}"
            rows.append((a.query, VERDICT_TEXT[d.verdict], label, _plain_math(detail)))
        elif a.facts is not None:
            first = "; ".join(f"{n}: {v}" for n, _, v in facts_rows(a.facts)[:3])
            rows.append((a.query, a.kind, "—", first))
    return rows


def render_terminal(report: Report, width: int = 110, color: bool = True) -> str:
    rows = _summary(report)
    try:
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table
    except ImportError:
        out = [report.title, ""]
        for q, v, by, detail in rows:
            out.append(f"{q:40s} {v:15s} {by:14s} {detail}")
        return "\n".join(out) + "\n"
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=color, color_system="standard" if color else None,
                      highlight=False)
    table = Table(title=report.title, show_lines=False)
    for col in ("query", "verdict", "decided by", "condition / conclusion"):
        table.add_column(col, overflow="fold")
    for a, (q, v, by, detail) in zip(report.answers, rows, strict=True):
        style = VERDICT_STYLE.get(a.derivation.verdict) if a.derivation else "bold"
        table.add_row(escape(q), f"[{style}]{escape(v)}[/]", escape(by), escape(detail))
    console.print(table)
    return buf.getvalue()
