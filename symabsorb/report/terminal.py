"""Terminal output: ``rich`` when installed (colours, tables, panels), plain text otherwise.

Two renderings: a summary table of a whole report (``prove``), and one answer in full (``classify``,
``facts``, ``absorb``): verdict, condition, derivation steps, witness, the other candidates. Math is
made legible (``W_{\\mathrm{down}}`` -> ``W_down``); no Markdown, LaTeX or HTML reaches the terminal.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import sympy as sp

from ..analysis.engine import ActivationFacts
from ..answer.types import QueryAnswer, Report
from ..theory.derivation import Derivation, DerivationStep, NodeState, Scope, Verdict, Witness
from ..theory.library import Library
from .common import (
    VERDICT_TEXT,
    blocking_reason,
    facts_rows,
    has_index_set,
    open_problem,
    shown_source,
    text_pieces,
    verdict_class,
    verdict_word,
)
from .escape import terminal_text
from .formats import RenderOptions, renderer
from .plainmath import plain_expr, plain_math, prose

if TYPE_CHECKING:
    from ..answer.verify import CheckedQuery
    from ..explore.atlas import Atlas
    from ..model.block import ResolvedSpec

__all__ = ["VERDICT_STYLE", "catalog_table", "exploration_summary", "facts_table", "plain_math", "plain_table",
           "render_answer_terminal", "render_terminal", "scan_table", "spec_listing", "terminal_answer", "terminal_report",
           "verification_text"]

VERDICT_STYLE = {Verdict.IMPOSSIBLE: "bold red", Verdict.CONDITIONAL: "bold yellow", Verdict.ABSORBABLE: "bold green",
                 Verdict.NOT_ABSORBABLE: "bold magenta", Verdict.OPEN: "bold cyan"}
#: a width query's proved width (minimal or an upper bound) has its own colour, not absorbable's green
WIDTH_STYLE = "bold blue"


def _style(d: Derivation) -> str:
    return WIDTH_STYLE if verdict_class(d) == "width" else VERDICT_STYLE[d.verdict]


_DISTANCE = re.compile(r"\\min_S[^$]*\\ge ([0-9.eE+-]+)\$(?: \(([0-9.eE+-]+) relative)?")


def _line(text: str, library: Library) -> str:
    """A step's text for a terminal: citations as labels, math (``$...$``) made legible, the prose
    around it kept as written (its braces are a set's, its ``_`` and ``^`` plain text)."""
    out = []
    for kind, value in text_pieces(text, library):
        if kind == "cite":
            out.append(library.results[value].label)
        elif kind == "math":
            out.append(plain_math(value))
        else:
            out.append(prose(value))
    return "".join(out)


def _witness_text(w: Witness) -> str:
    if w.description:  # not a flip: a deep stack's residual-free blocks (docs/theorems.md#deep-stacks)
        return w.description
    if w.layers:
        sets = "; ".join(f"block {i + 1}: " + (layer.description or f"S = {{{', '.join(map(str, layer.index_set))}}}")
                         for i, layer in enumerate(w.layers))  # a layer that is not a flip says what it is
        numbered = "; units numbered from 0" if any(not layer.description for layer in w.layers) else ""
        return f"compose the block witnesses ({sets}{numbered})"
    return f"flip the units S = {{{', '.join(map(str, w.index_set))}}} (numbered from 0)"


def _detail(d: Derivation, library: Library) -> str:
    if d.condition_plain and d.width is not None:  # the `width` query: proved bounds, not a condition
        detail = f"{d.condition_plain} ({d.width[3] or d.scope})"
    elif d.condition_plain:
        detail = f"{d.condition_plain} (sufficient: {d.sufficient}; necessary: {d.necessary})"
    elif d.verdict is Verdict.OPEN and d.scope == Scope.NEAR and d.notes:  # Theorem FD: a neighbourhood statement
        detail = d.notes[-1]
    elif d.verdict is Verdict.OPEN:
        undecided = [c for c in d.candidates if c.state is NodeState.UNDECIDED]
        blocker = blocking_reason(d)  # lead with what blocks, not with a result that happens to be undecided
        problem = open_problem(d, library)  # an open problem of the mathematics leads, before any local hypothesis
        head = f"an open problem ({problem.title})" if problem is not None else "no result applies"
        detail = head + (f"{'; other results need' if problem is not None else ':'} {blocker[0]} "
                         f"({len(blocker[1])} results need it)" if blocker else "") + (
            f"; undecided: {library.results[undecided[0].id].label} ({undecided[0].reason})" if undecided else "")
    else:
        detail = f"{VERDICT_TEXT[d.verdict]} for {d.scope}"
    for step in d.steps:
        m = _DISTANCE.search(step.text)
        if m:
            detail += (f"; criterion distance min_S ‖W_down[:,S] W_up[S,:] − T‖_F ≥ {m.group(1)}"
                       + (f" ({m.group(2)} relative)" if m.group(2) else ""))
    for note in d.notes:
        if "biases" in note:
            detail += "; " + note.split(":")[0]
    detail = _line(detail, library)
    if d.witness is not None:  # plain text already: its braces are a set's
        detail += "; witness: " + _witness_text(d.witness)
    return detail


def _facts_summary(a: QueryAnswer) -> str:
    assert a.facts is not None
    if a.kind == "series":
        return series_text(a.facts, a.order or 8)
    if a.kind == "parity":
        p = a.facts.parity
        c = f", odd part c·z with c = {plain_expr(p.odd_linear_constant)}" if p.odd_linear_constant is not None else ""
        return f"symmetry: {p.symmetry or 'undecided'}{c}"
    return "; ".join(f"{n}: {v}" for n, _, v in facts_rows(a.facts)[:3])


def series_text(f: ActivationFacts, order: int) -> str:
    """``σ(z) = 1 + z/2 + z**2/8 + O(z**7)``, or why there is no series."""
    s = f.series
    if not s.analytic_at_0:
        return f"not analytic at 0: no Taylor series ({s.evidence.status.value})"
    from ..model.functions import Z

    poly = sum((c * Z**k for k, c in enumerate(s.coefficients)), sp.S.Zero)
    terms = sp.Poly(poly, Z).terms() if poly != 0 else []
    ordered = " + ".join(plain_expr(c * Z**k[0]) for k, c in sorted(terms, key=lambda t: t[0][0])).replace("+ -", "- ")
    return f"{'g' if f.gated else 'σ'}(z) = {ordered or '0'} + O(z^{order + 1})"


def _summary(report: Report) -> list[tuple[str, str, str, str]]:
    rows = []
    for a in report.answers:
        d = a.derivation
        if d is not None:
            label = report.library.results[d.decided_by].label if d.decided_by else "—"
            rows.append((a.query, verdict_word(d), label, _detail(d, report.library)))
        elif a.facts is not None:
            rows.append((a.query, a.kind, "—", _facts_summary(a)))
    return rows


def _console(buf: io.StringIO, width: int, color: bool) -> object:
    from rich.console import Console

    return Console(file=buf, width=width, force_terminal=color, color_system="standard" if color else None,
                   highlight=False, emoji=False)


def _rich_available() -> bool:
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def render_terminal(report: Report, width: int = 110, color: bool = True, plain: bool = False,
                    verbose: bool = False) -> str:
    """A summary table of every query (``plain``: no ``rich``, one line a query); ``verbose``: then
    every answer in full (:func:`render_answer_terminal`)."""
    summary = _summary_table(report, width, color, plain)
    if not verbose:
        return summary
    return summary + "".join("\n" + render_answer_terminal(a, report.library, width, color, plain, verbose=True)
                             for a in report.answers)


@renderer("text", aliases=("txt",))
@renderer("terminal")
def terminal_report(report: Report, opts: RenderOptions) -> str:
    """``terminal`` (``rich``, in colour when asked) or ``text`` (plain): :func:`render_terminal`."""
    return render_terminal(report, width=opts.width, color=opts.color and opts.format == "terminal",
                           plain=opts.format == "text", verbose=opts.verbose)


@renderer("text", kind="answer")
@renderer("terminal", kind="answer")
def terminal_answer(answer: QueryAnswer, library: Library, opts: RenderOptions) -> str:
    """One answer for ``terminal`` or ``text``: :func:`render_answer_terminal`."""
    return render_answer_terminal(answer, library, width=opts.width, color=opts.color and opts.format == "terminal",
                                  plain=opts.format == "text", verbose=opts.verbose)


def plain_table(rows: Sequence[tuple[str, ...]], width: int) -> list[str]:
    """Rows of cells as plain-text lines no wider than ``width`` (when the cells' words allow): every column
    is wrapped in its own width, never truncated. The first columns keep their natural width up to a share
    of ``width``; the last gets the rest, and when fewer than 24 columns are left it is printed below its
    row, indented, at the full width."""
    import textwrap

    if not rows:
        return []
    n = len(rows[0])
    caps = [max(10, width * 2 // 5)] + [max(10, width // 4)] * (n - 2)
    widths = [max(1, min(cap, max(len(r[i]) for r in rows))) for i, cap in enumerate(caps)]
    rest = width - sum(widths) - len(widths)
    below = rest < 24

    def wrap(text: str, w: int) -> list[str]:
        return textwrap.wrap(text, w, break_long_words=True, break_on_hyphens=False) or [""]

    out = []
    for row in rows:
        cells = [wrap(c, w) for c, w in zip(row[:-1], widths, strict=True)]
        last = wrap(row[-1], width - 4 if below else rest)
        if not below:
            cells.append(last)
        for k in range(max(len(c) for c in cells)):
            parts = [(c[k] if k < len(c) else "").ljust(w) for c, w in zip(cells, [*widths, rest], strict=False)]
            out.append(" ".join(parts).rstrip())
        if below and row[-1]:
            out.extend("    " + line for line in last)
    return out


def _summary_table(report: Report, width: int, color: bool, plain: bool) -> str:
    rows = [(terminal_text(q), v, terminal_text(by), terminal_text(d)) for q, v, by, d in _summary(report)]
    if plain or not _rich_available():
        return "\n".join([terminal_text(report.title), "", *plain_table(rows, width)]) + "\n"
    from rich.markup import escape
    from rich.table import Table

    buf = io.StringIO()
    console = _console(buf, width, color)
    table = Table(title=escape(terminal_text(report.title)), show_lines=False)
    for col in ("query", "verdict", "decided by", "condition / conclusion"):
        table.add_column(col, overflow="fold")
    for a, (q, v, by, detail) in zip(report.answers, rows, strict=True):
        style = _style(a.derivation) if a.derivation else "bold"
        table.add_row(escape(q), f"[{style}]{escape(v)}[/]", escape(by), escape(detail))
    console.print(table)  # type: ignore[attr-defined]
    return buf.getvalue()


# ---- one answer in full ----------------------------------------------------------------------------


def _evidence_lines(step: DerivationStep) -> list[str]:
    """What a step rests on, for ``verbose``: each fact's status, then its own steps."""
    out = []
    for label, ev in step.evidence:
        out.append(f"   - {label}: {ev.status.value} ({ev.decided_by.value})" + (f" — {ev.reason}" if ev.reason else ""))
        out += [f"      · {prose(s.text)}" + (f": {plain_expr(s.claim)}" if s.claim is not None else "") for s in ev.steps]
    return out


def _derivation_lines(d: Derivation, library: Library, verbose: bool = False) -> tuple[str, list[tuple[str, str]]]:
    """The headline, then (label, text) sections. Candidates whose hypothesis failed are one line
    (their labels) unless ``verbose``, which also shows the facts under each step."""
    head = f"{verdict_word(d)} ({d.scope})"
    if d.decided_by:
        r = library.results[d.decided_by]
        head += f" — decided by {r.label} ({shown_source(r)})"
    sections: list[tuple[str, str]] = []
    if d.condition:
        some_s = " for some index set S of units (numbered from 0)" if has_index_set(d) else ""
        sections.append(("condition", f"{plain_math(d.condition)}{some_s} — "
                                      f"sufficient: {d.sufficient}; necessary: {d.necessary}"))
    if d.assumptions:
        sections.append(("assumptions", "; ".join(_line(a, library) for a in d.assumptions)))
    for note in d.notes:
        sections.append(("note", _line(note, library)))
    steps = []
    for i, s in enumerate(d.steps, start=1):
        steps.append(f"{i}. {_line(s.text, library)}")
        if verbose:
            steps += _evidence_lines(s)
    sections.append(("derivation", "\n".join(steps)))
    if d.witness is not None:
        sections.append(("witness", _witness_text(d.witness) + (f" — {_line(d.witness.verified, library)}"
                                                                  if d.witness.verified else "")))
    others = [c for c in d.candidates if c.state is not NodeState.APPLIED]
    failed = [c for c in others if c.state is NodeState.FAILED]
    said = {rid for step in d.steps for rid in step.cites}  # an open answer's steps name its undecided candidates
    shown = others if verbose else [c for c in others if c.state is not NodeState.FAILED and c.id not in said]
    lines = [f"• {library.results[c.id].label}: {c.state.value} — {_line(c.reason, library)}" for c in shown]
    if failed and not verbose:
        labels = ", ".join(library.results[c.id].label for c in failed)
        lines.append(f"• {len(failed)} with a hypothesis that fails: {labels} (-v: each with its reason)")
    if lines:
        sections.append(("other candidates", "\n".join(lines)))
    return head, sections


def _facts_lines(a: QueryAnswer) -> tuple[str, list[tuple[str, str]]]:
    f = a.facts
    assert f is not None
    g = "g" if f.gated else "σ"
    head = f"{g}(z) = {plain_expr(f.expr)}"
    if a.kind == "series":
        return head, [("series", series_text(f, a.order or 8))]
    rows: Sequence[tuple[str, object, str]] = facts_rows(f)
    table = "\n".join(f"{n:30s} {ev.status.value:8s} {v}   [{ev.decided_by.value}]"  # type: ignore[attr-defined]
                      for n, ev, v in rows)
    return head, [("facts", table)]


def render_answer_terminal(answer: QueryAnswer, library: Library, width: int = 100, color: bool = True,
                           plain: bool = False, verbose: bool = False) -> str:
    """One answer in full: a panel per section with ``rich`` (wrapped lines hang under their number),
    indented plain text otherwise. ``verbose``: every candidate with its reason, the facts under each step."""
    if answer.derivation is not None:
        head, sections = _derivation_lines(answer.derivation, library, verbose)
        style = _style(answer.derivation)
    else:
        head, sections = _facts_lines(answer)
        style = "bold"
    # No control character from a name, a file or a tensor key reaches the terminal.
    title, head = terminal_text(answer.query), terminal_text(head)
    sections = [(label, terminal_text(text)) for label, text in sections]
    if plain or not _rich_available():
        out = [f"{title}: {head}"]
        for label, text in sections:
            out.append(f"{label}:")
            out += ["  " + line for line in text.splitlines()]
        return "\n".join(out) + "\n"
    from rich.markup import escape
    from rich.panel import Panel
    from rich.text import Text

    buf = io.StringIO()
    console = _console(buf, width, color)
    console.print(Text.assemble((title, "bold"), ": ", (head, style)))  # type: ignore[attr-defined]
    for label, text in sections:
        console.print(Panel(_hanging(text), title=escape(label), title_align="left", expand=True))  # type: ignore[attr-defined,arg-type]
    return buf.getvalue()


_MARKER = re.compile(r"(\d+\.|•|·|-) ")


def _hanging(text: str) -> object:
    """``text`` as a grid: a line's marker (``12.``, ``•``) in its own column, so a wrapped line continues
    under its text and not under the marker; lines indented under a step stay indented."""
    from rich.table import Table
    from rich.text import Text

    lines = text.splitlines()
    if not any(_MARKER.match(line.lstrip()) for line in lines):
        return Text(text)
    grid = Table.grid(padding=(0, 1))
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column()
    for line in lines:
        indent = len(line) - len(line.lstrip())
        m = _MARKER.match(line.lstrip())
        if m and indent == 0:
            grid.add_row(Text(m.group(1)), Text(line[m.end():]))
        elif m:  # a fact under a step: its own hanging indent inside the text column
            sub = Table.grid(padding=(0, 1))
            sub.add_column(no_wrap=True)
            sub.add_column()
            sub.add_row(Text(" " * max(0, indent - 3) + m.group(1)), Text(line.lstrip()[m.end():]))
            grid.add_row("", sub)
        else:
            grid.add_row("", Text(line.strip()))
    return grid


# ==== command tables (catalog, scan, verify, explore, facts, check) ====================================
# The plain-text tables of the commands that print no report. Owned with the command line
# (symabsorb/cli.py calls symabsorb/api.py, whose results render through these); kept apart from
# the report renderings above.


def catalog_table(rows: Sequence[dict[str, object]]) -> str:
    """``symabsorb catalog``: one line per built-in activation."""
    header = f"{'activation':13s} {'verdict':40s} {'decided by':16s} {'source':8s} condition"
    out = [header, "-" * len(header)]
    for row in rows:
        verdict = str(row["verdict"])
        if row["verdict"] == "conditional":
            verdict += " (iff" if row["necessary"] == "proved" else " (if"
            verdict += ", nondegenerate weights)" if row["scope"] == "nondegenerate weights" else ")"
        elif row["scope"] == "nondegenerate weights":
            verdict += " (nondegenerate weights)"
        out.append(f"{row['activation']!s:13s} {verdict:40s} {row['label'] or '—'!s:16s} {row['source'] or '—'!s:8s} "
                   f"{row['condition'] or '; '.join(map(str, row.get('assumes') or ())) or ''}")  # type: ignore[call-overload]
    return "\n".join(out) + "\n"


def scan_table(records: Sequence[dict[str, Any]], skipped: Sequence[tuple[str, str]], width: int = 100) -> str:
    """``symabsorb scan``: one line per layer (with where its normalisation sits: the question answered
    differs), a legend, then the files skipped with the reason (:func:`.scantable.scan_table`)."""
    from .scantable import scan_table as table

    return table(records, skipped, width)


def verification_text(report: str, checks: Sequence[CheckedQuery], unchecked: int = 0, library: str = "") -> str:
    """``symabsorb verify``: one line per checked query, a total, and which library re-derived the questions."""
    skipped = (f"; {unchecked} other quer{'y' if unchecked == 1 else 'ies'} not re-checkable "
               "(symbolic blocks, stacks, verdicts without a certificate or witness)") if unchecked else ""
    used = f"{terminal_text(library)}\n" if library else ""
    if not checks:
        return (f"{terminal_text(report)}: nothing to check (only decisions on weights carry certificates or "
                f"witnesses){skipped}\n") + used
    out = [f"{'OK    ' if c.ok else 'FAILED'} {c.query} ({c.verdict}): {c.detail}" for c in checks]
    failed = sum(1 for c in checks if not c.ok)
    out.append(f"{len(checks) - failed} of {len(checks)} certificates and witnesses checked exactly"
               + (f"; {failed} FAILED" if failed else "") + skipped)
    return terminal_text("\n".join(out)) + "\n" + used


def exploration_summary(atlas: Atlas) -> str:
    """``symabsorb explore``: one line per space."""
    out = []
    for s in atlas.spaces:
        decided = sum(r.count for r in s.counts if r.verdict != "open")
        out.append(f"{s.name}: {s.cases} cases, {decided} decided, {len(s.open_cases)} open"
                   + (f", {s.enumeration['generated']} candidates, {s.enumeration['survivors']} distinct"
                      if s.enumeration else "")
                   + (f", {len(s.family.conflicts)} contradictions with the symbolic split" if s.family else ""))
    return "\n".join(out) + ("\n" if out else "")


def facts_table(f: ActivationFacts, name: str, steps: bool) -> str:
    """``symabsorb facts``: one line per fact, with the reason and (``steps``) every step."""
    from .plainmath import plain_expr

    g = "g" if f.gated else "σ"
    out = [f"{name}: {g}(z) = {plain_expr(f.expr)}"]
    for label, ev, value in facts_rows(f):
        out.append(f"  {label:34s} {ev.status.value:8s} {value}   [{ev.decided_by.value}]")
        if steps or ev.reason:
            if ev.reason:
                out.append(f"      reason: {ev.reason}")
            for s in ev.steps if steps else ():
                claim = f": {plain_expr(s.claim)}" if s.claim is not None else ""
                out.append(f"      - {prose(s.text)}{claim}")
    return "\n".join(out) + "\n"


def _constraint(p: Any) -> str:
    """A parameter's constraint as written (``k > 1``); a sign constraint kept only as an assumption
    on the symbol (``k > 0`` makes ``k`` positive) is spelled out too."""
    from .plainmath import plain_expr

    text = p.describe() if hasattr(p, "describe") else ""
    if text:
        return " with " + text
    c = p.constraint
    if c is not None and c is not sp.true and isinstance(c, sp.Basic):
        return " with " + plain_expr(c)
    sym = p.symbol
    for attr, text in (("is_positive", "> 0"), ("is_negative", "< 0"), ("is_nonnegative", ">= 0"),
                       ("is_nonpositive", "<= 0")):
        if getattr(sym, attr):
            return f" with {sym} {text}"
    return ""


def spec_listing(path: str, spec: ResolvedSpec) -> str:
    """``symabsorb check``: what a spec declares and asks."""
    from ..model.activation import GatedActivation
    from ..theory.skips import describe_skip
    from .plainmath import plain_expr

    s = spec
    out = [f"{path}: OK"]
    if s.imports:
        out.append("imports: " + ", ".join(s.imports))
    out.append(f"activations ({len(s.activations)}):")
    for a in s.activations:
        if isinstance(a, GatedActivation):
            out.append(f"  gated {a.name}: g(z) = {plain_expr(a.gate.expr)}")
        else:
            params = "".join(f"  [parameter {p.symbol}{_constraint(p)}]" for p in a.params)
            out.append(f"  {a.name}(z) = {plain_expr(a.expr)}{params}")
    out.append(f"blocks ({len(s.blocks)}):")
    for b in s.blocks:
        weights = ", inline weights" if b.has_inline_weights else (f', weights "{b.weights.file}"' if b.weights else "")
        out.append(f"  {b.name}: {b.activation.name}, dim {b.dim}, width {b.width}, {describe_skip(b.skip)}{weights}")
    out.append(f"stacks ({len(s.stacks)}):")
    for st in s.stacks:
        out.append(f"  {st.name}: [{', '.join(b.name for b in st.blocks)}] x {st.repeat} (depth {st.depth})")
    out.append(f"queries ({len(s.queries)}):")
    for q in s.queries:
        out.append(f"  {q.text}")
    if s.spaces:
        out.append(f"spaces ({len(s.spaces)}):")
        for sp_ in s.spaces:
            if sp_.parametric:
                ranges = ", ".join(f"{r.symbol} in [{r.low}, {r.high}]" for r in sp_.ranges)
                out.append(f"  {sp_.name}: family {plain_expr(sp_.family)}, {ranges}, grid {sp_.grid}")
            else:
                out.append(f"  {sp_.name}: size {sp_.size}, primitives {', '.join(p.name for p in sp_.primitives)}, "
                           f"constants {', '.join(plain_expr(c) for c in sp_.constants)}, operators {' '.join(sp_.operators)}")
    return "\n".join(out) + "\n"
