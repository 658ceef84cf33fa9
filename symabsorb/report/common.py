"""Pieces every renderer shares: verdict words, citation parsing, the used part of the graph."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import sympy as sp

from ..analysis.engine import ActivationFacts
from ..analysis.facts import Evidence
from ..answer.types import Report
from ..theory.derivation import Derivation, NodeState, Verdict
from ..theory.library import Library, shown_source  # shown_source: every renderer reads it from here
from .plainmath import plain_expr

__all__ = [
    "CITATION",
    "QUESTIONS",
    "SOURCE_COLORS",
    "STATE_COLORS",
    "STATUS_COLORS",
    "VERDICT_TEXT",
    "SummaryRow",
    "blocking_reason",
    "blueprint_status",
    "candidate_groups",
    "citation_text",
    "cited_and_tried",
    "facts_rows",
    "has_index_set",
    "math_parts",
    "node_id",
    "show",
    "shown_source",
    "split_citations",
    "summary_rows",
    "used_graph",
    "verdict_class",
    "verdict_word",
]

CITATION = re.compile(r"\[([A-Za-z][A-Za-z0-9_-]*)\]")
MATH = re.compile(r"\$([^$]+)\$")

VERDICT_TEXT = {
    Verdict.IMPOSSIBLE: "impossible",
    Verdict.CONDITIONAL: "conditional",
    Verdict.ABSORBABLE: "absorbable",
    Verdict.NOT_ABSORBABLE: "not absorbable",
    Verdict.OPEN: "open",
}

#: Lean-blueprint style: the border says where a result comes from, the fill what happened to it.
SOURCE_COLORS = {"paper": "#1f4e9c", "library": "#7a3fb0", "user": "#b35900"}

#: The fill of a result by what is known of it (the graph page of the whole library, the blueprint):
#: light tints of the Okabe-Ito colour-blind-safe palette; an open problem is hatched instead.
STATUS_COLORS = {"paper": "#cfe8f7", "library-proved": "#c6ede0", "user": "#fbdcbc", "conjecture": "#f6eda0",
                 "open": "#eeeeee"}


def blueprint_status(result: Any) -> str:
    """``paper``, ``library-proved``, ``user``, ``conjecture`` or ``open``: what is known of a result."""
    if result.kind == "open-problem" or result.conclusion.verdict == "open":
        return "conjecture" if "onjecture" in f"{result.label} {result.title}" else "open"
    source = shown_source(result)
    return "library-proved" if source == "library" else source


_MATH_REF = re.compile(r"MATH(?:\.md)?(?:,?\s*(?:Part\s+[IVX]+|§\s*\d+(?:\.\d+)*|N\d+))*")


def citation_text(result: Any) -> str:
    """A result's citation as a reader can follow it: the design notes it may name (``MATH.md §8 N2``,
    not in the repository) become ``docs/theorems.md``, where every library result is proved."""
    text = _MATH_REF.sub("docs/theorems.md", result.citation)
    if shown_source(result) == "library" and "docs/theorems.md" not in text:
        text += "; proved in symabsorb's docs/theorems.md"
    return text
STATE_COLORS = {
    NodeState.APPLIED: "#9be39b",
    NodeState.APPLICABLE: "#d6f5d6",
    NodeState.FAILED: "#f7b6b6",
    NodeState.UNDECIDED: "#ffe29a",
    NodeState.CITED: "#cfe2ff",
    NodeState.NOT_TRIED: "#ffffff",
}


def split_citations(text: str, library: Library) -> list[tuple[str, str | None]]:
    """``text`` cut into (piece, result id or None) so renderers can link citations."""
    out: list[tuple[str, str | None]] = []
    pos = 0
    for m in CITATION.finditer(text):
        if m.group(1) not in library.results:
            continue
        if m.start() > pos:
            out.append((text[pos:m.start()], None))
        out.append((m.group(1), m.group(1)))
        pos = m.end()
    if pos < len(text):
        out.append((text[pos:], None))
    return out


def math_parts(text: str) -> list[tuple[str, bool]]:
    """``text`` cut into (piece, is_math) at ``$...$``."""
    out: list[tuple[str, bool]] = []
    pos = 0
    for m in MATH.finditer(text):
        if m.start() > pos:
            out.append((text[pos:m.start()], False))
        out.append((m.group(1), True))
        pos = m.end()
    if pos < len(text):
        out.append((text[pos:], False))
    return out


_BACKTICKS = re.compile(r"`+")


def code_parts(text: str) -> list[tuple[str, bool]]:
    """``text`` cut into (piece, is_code) at code spans, as CommonMark reads them: a run of ``n``
    backticks opens a span that the next run of exactly ``n`` closes; a run with no closing run is
    literal text. Code spans are found first, so a user string the engine quotes in backticks (a
    file name, a tensor key) stays one inert piece even when it holds ``$`` or ``[``."""
    out: list[tuple[str, bool]] = []
    pos = start = 0
    while True:
        m = _BACKTICKS.search(text, pos)
        if m is None:
            break
        n = len(m.group())
        close = next((c for c in _BACKTICKS.finditer(text, m.end()) if len(c.group()) == n), None)
        if close is None:
            pos = m.end()
            continue
        if m.start() > start:
            out.append((text[start:m.start()], False))
        out.append((text[m.end():close.start()], True))
        pos = start = close.end()
    if start < len(text):
        out.append((text[start:], False))
    return out


def text_pieces(text: str, library: Library) -> list[tuple[str, str]]:
    """A step's text as (kind, value) pieces, kind one of ``cite`` (a result id), ``math`` (LaTeX),
    ``code`` (between backticks) or ``text``: each renderer maps the kinds to its own markup. Code
    spans are cut first (:func:`code_parts`), then citations, then math: a backtick that closes no
    span is text."""
    out: list[tuple[str, str]] = []
    for chunk, is_code in code_parts(text):
        if is_code:
            out.append(("code", chunk))
            continue
        for piece, rid in split_citations(chunk, library):
            if rid is not None:
                out.append(("cite", rid))
                continue
            for part, is_math in math_parts(piece):
                if part:
                    out.append(("math", powers_of_ten(part)) if is_math else
                               ("text", _MATH_REF.sub("docs/theorems.md", powers_of_ten(part, latex=False))))
    return out


_TENTH_POWER_TEX = re.compile(r"\\frac\{(\d+)\}\{1(0{4,})\}")
_TENTH_POWER_TEXT = re.compile(r"(?<![\d/.])(\d+)/1(0{4,})(?![\d/.])")


def powers_of_ten(text: str, latex: bool = True) -> str:
    """Exact rationals ``a/10^k`` (k >= 4) as a reader writes them: ``\\frac{1}{1000000000000}`` ->
    ``10^{-12}``, ``3/10000`` -> ``3·10^-4`` (the same number)."""
    def tex(m: re.Match[str]) -> str:
        k = len(m.group(2))
        return f"10^{{-{k}}}" if m.group(1) == "1" else f"{m.group(1)} \\cdot 10^{{-{k}}}"

    def plain(m: re.Match[str]) -> str:
        k = len(m.group(2))
        return f"10^-{k}" if m.group(1) == "1" else f"{m.group(1)}·10^-{k}"

    return _TENTH_POWER_TEX.sub(tex, text) if latex else _TENTH_POWER_TEXT.sub(plain, text)


def verdict_word(d: Derivation) -> str:
    """The verdict as a reader says it: a ``width`` query's answer is the width it proved ("minimal
    width 5d", "width at most 5d", "no width"), not the word "absorbable"."""
    if d.width is not None:
        upper, lower, never, _scope = d.width
        if never:
            return "no width absorbs it"
        if upper and lower and upper == lower:
            return f"minimal width {_width_text(upper)}"
        if upper:
            return f"width at most {_width_text(upper)}" + (f", at least {_width_text(lower)}" if lower else "")
        return "width open"
    return VERDICT_TEXT[d.verdict]


def verdict_class(d: Derivation) -> str:
    """The CSS class / colour key of a verdict: ``width`` for a width query's answer, else the verdict."""
    return "width" if d.width is not None and not d.width[2] and d.width[0] else d.verdict.value


def _width_text(text: str) -> str:
    """``5*d`` -> ``5d`` (a number times one symbol), otherwise as given."""
    m = re.fullmatch(r"(\d+)\*([A-Za-z_]\w*)", text.strip())
    return f"{m.group(1)}{m.group(2)}" if m else text


QUESTIONS = {"absorb": "same-width residual-free block?", "width": "smallest residual-free width?",
             "classify": "same-width residual-free block, generic weights?", "series": "Taylor series",
             "parity": "parity", "facts": "facts"}


@dataclass(frozen=True)
class SummaryRow:
    """One line of a report's summary table; math fields are LaTeX (``None``: none)."""

    query: str
    anchor: str
    question: str
    verdict: str  # the words (verdict_word)
    verdict_class: str  # colour key (verdict_class)
    result: str | None  # the deciding result's id
    condition: str | None
    scope: str


def summary_rows(report: Report) -> list[SummaryRow]:
    """The summary table every report format starts with: query, question, verdict, the deciding
    result, the condition, the scope."""
    rows = []
    for a in report.answers:
        d = a.derivation
        kind = "width" if d is not None and d.width is not None else a.kind
        question = QUESTIONS.get(kind, kind)
        if d is None:
            rows.append(SummaryRow(a.query, a.anchor, question, a.kind, "facts", None, None, ""))
            continue
        condition = d.condition if d.condition and d.width is None else None
        scope = (d.width[3] or d.scope) if d.width is not None else d.scope
        rows.append(SummaryRow(a.query, a.anchor, question, verdict_word(d), verdict_class(d), d.decided_by,
                               condition, scope))
    return rows


_SETTING = re.compile(r"^(?:fails: )?proved only for .*?; (this question has .*)$")


def candidate_groups(d: Derivation) -> list[tuple[NodeState, str, list[str]]]:
    """The candidates a derivation tried but did not apply, grouped by why: (state, the reason they
    share, their ids in trial order), one group per distinct reason (results proved only for other
    biases or normalisations share "not proved for this setting"), groups in order of first trial."""
    groups: dict[tuple[NodeState, str], list[str]] = {}
    for c in d.candidates:
        if c.state is NodeState.APPLIED:
            continue
        m = _SETTING.match(c.reason)
        reason = f"not proved for this setting ({m.group(1)})" if m else c.reason
        groups.setdefault((c.state, reason), []).append(c.id)
    return [(state, reason, ids) for (state, reason), ids in groups.items()]


#: Reasons that say a result is for another kind of block, not what blocks this one.
_OTHER_KIND = ("the block is ungated", "the block is gated", "the skip is nonzero", "not proved for this setting")


def blocking_reason(d: Derivation) -> tuple[str, list[str]] | None:
    """For an open answer: the refuted hypothesis that the most candidate results needed (``σ is not
    continuous``: 7 results), with their ids; None when no refuted hypothesis is shared by two or
    more results (results for other kinds of blocks, gated ones or another setting, never count)."""
    shared = [(reason.removeprefix("fails: "), ids) for state, reason, ids in candidate_groups(d)
              if state is NodeState.FAILED and not any(kind in reason for kind in _OTHER_KIND)]
    best = max(shared, key=lambda group: len(group[1]), default=None)
    return best if best is not None and len(best[1]) >= 2 else None


def open_problem(d: Derivation, library: Library) -> Any:
    """The open problem (a result of kind ``open-problem``) an open answer is filed under, or None: a reader is
    told first that the question is open in the mathematics, not only that some hypothesis failed here."""
    r = library.results.get(d.decided_by or "") if d.verdict is Verdict.OPEN else None
    return r if r is not None and r.kind == "open-problem" else None


def has_index_set(d: Any) -> bool:
    """Whether a derivation's condition is about an index set ``S`` (``W_down[:,S] W_up[S,:] = T``)."""
    return "S]" in (getattr(d, "condition_plain", None) or "") or "[S," in (getattr(d, "condition_plain", None) or "")


def node_id(rid: str) -> str:
    return "n_" + re.sub(r"[^A-Za-z0-9]", "_", rid)


def used_graph(report: Report) -> tuple[list[str], list[tuple[str, str]]]:
    """The results cited, applied or tried by the report's queries, and the `uses` edges among them."""
    states = report.node_states()
    nodes = [rid for rid in sorted(report.library.results)
             if rid in states or rid in report.cited()]
    keep = set(nodes)
    edges = [(u, v) for u, v in sorted(report.library.graph.edges) if u in keep and v in keep]
    return nodes, edges


def show(value: sp.Basic | None) -> str:
    """A value for a reader: an exact closed form made as simple as SymPy can (``tanh(log(2))`` -> ``3/5``)."""
    if value is None:
        return "?"
    if isinstance(value, sp.Expr) and value.free_symbols == set() and not value.is_Rational:
        try:
            simpler = sp.simplify(value.rewrite(sp.exp))
        except (TypeError, ValueError, NotImplementedError):  # pragma: no cover - SymPy corner cases
            simpler = value
        if sp.count_ops(simpler) < sp.count_ops(value) and sp.simplify(simpler - value) == 0:
            value = simpler
    return plain_expr(value)


def facts_rows(f: ActivationFacts) -> list[tuple[str, Evidence, str]]:
    """(fact name, evidence, value in words) for each fact."""
    p, z, s, h, g, po = f.parity, f.at_zero, f.series, f.homogeneity, f.growth, f.polynomial
    rows = [
        ("odd part c·z", p.evidence,
         f"c = {plain_expr(p.odd_linear_constant)}" if p.odd_linear_constant is not None else "not exactly linear"
         if p.evidence.refuted else "undecided"),
        ("symmetry", p.symmetry_evidence, p.symmetry or "undecided"),
        ("differentiable at 0", z.evidence,
         (f"σ(0) = {show(z.value)}, " if z.value is not None else "") +
         (f"σ'(0) = {show(z.derivative)}" if z.derivative is not None else
          f"left {plain_expr(z.left_derivative)}, right {plain_expr(z.right_derivative)}"
          if z.left_derivative is not None else "undecided")),
        ("analytic at 0", s.evidence, "yes" if s.analytic_at_0 else ("no" if s.analytic_at_0 is False else "undecided")),
        ("positively homogeneous", h.evidence, f"degree {plain_expr(h.degree)}" if h.degree is not None else
         ("no" if h.evidence.refuted else "undecided")),
        ("growth", g.evidence, f"{g.growth_class} (+∞: {g.plus_infinity}, −∞: {g.minus_infinity})"
         if g.growth_class else "undecided"),
        ("polynomial", po.evidence, "yes" if po.value else ("no" if po.evidence.refuted else "undecided")),
    ]
    if f.gate is None:
        sym = f.symmetry
        rows.append(("scale-sign symmetries Sym(σ)", sym.evidence,
                     "{" + ", ".join(c.describe() for c in sym.kept) + "}; remainders "
                     + ", ".join(plain_expr(r) for r in sym.remainders()) if sym.evidence.proved else "undecided"))
    if f.gate is not None:
        rows.append(("gate flip g(z)+g(−z) = 2g(0)", f.gate.evidence,
                     f"g(0) = {plain_expr(f.gate.value_at_0)}, flip symmetric: {f.gate.flip_symmetric}"))
    return rows


def cited_and_tried(answer: Any, library: Library) -> tuple[list[str], list[str]]:
    """For one answer shown alone: the results its steps cite (stated in full), then the candidates it
    only tried (linked from its table: listed too, folded away), each in library order."""
    d = answer.derivation
    ids = set() if d is None else ({rid for step in d.steps for rid in step.cites} | set(d.cited)
                                    | ({d.decided_by} if d.decided_by else set()))
    cited = [rid for rid in sorted(library.results) if rid in ids]
    tried = [rid for rid in Report("", "", "", (answer,), library).cited() if rid not in cited]
    return cited, tried
