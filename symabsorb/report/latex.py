"""LaTeX: a standalone ``article`` (amsthm environments, one ``\\label`` per result, ``\\ref`` in
the steps) that compiles with pdflatex, or with ``fragment=True`` only the body to paste into a paper."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import singledispatchmethod

import sympy as sp

from .. import __version__
from ..analysis.engine import ActivationFacts
from ..analysis.facts import Evidence, Step
from ..answer.types import QueryAnswer, Report
from ..theory.derivation import Derivation, DerivationStep, NodeState
from ..theory.library import Library, unfilled
from .common import (
    SOURCE_COLORS,
    STATE_COLORS,
    blocking_reason,
    blueprint_status,
    candidate_groups,
    citation_text,
    facts_rows,
    has_index_set,
    node_id,
    open_problem,
    shown_source,
    summary_rows,
    text_pieces,
    used_graph,
    verdict_word,
)
from .escape import is_safe_math, latex_math, latex_text
from .formats import RenderOptions, renderer
from .plainmath import prose, tidy

__all__ = ["PREAMBLE", "LatexRenderer", "activation_figures", "graph_tikz", "latex_prose", "render_answer_latex",
           "render_latex", "result_name"]

ENVIRONMENTS = {"theorem": "theorem", "lemma": "lemma", "proposition": "proposition", "corollary": "corollary",
                "definition": "definition", "open-problem": "problem"}

PREAMBLE = r"""\usepackage{amsmath,amssymb,amsthm}
\usepackage{graphicx,tikz,needspace,booktabs,longtable,array}
\usetikzlibrary{backgrounds}
\usepackage[hidelinks]{hyperref}
\theoremstyle{plain}
% A result keeps its own number: the paper's Theorem 8 is Theorem 8 here, a library lemma is named by its id.
\newcommand\symresultname{}
\newtheorem{symresult}{\symresultname}
\newtheorem*{symresult*}{\symresultname}
\newenvironment{result}[3]{\renewcommand\symresultname{#1}\renewcommand\thesymresult{#2}%
  \def\theHsymresult{#1-#2}\begin{symresult}[#3]}{\end{symresult}}
\newenvironment{result*}[2]{\renewcommand\symresultname{#1}\begin{symresult*}[#2]}{\end{symresult*}}
\emergencystretch=3em
"""

# The one LaTeX escaper (symabsorb.report.escape): every user-derived string goes through it.
escape_text = latex_text


# ---- plain text with math notation (fact steps, reasons, notes) -----------------------------------

#: Unicode letters and symbols of plain-text steps as math macros (each wrapped in ``$...$``).
MATH_CHARS = {
    **{ch: "\\" + name for ch, name in zip("αβγδεζηθικλμνξπρςστυφχψω",
                                          "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi "
                                          "rho varsigma sigma tau upsilon phi chi psi omega".split(), strict=True)},
    **{ch: "\\" + name for ch, name in zip("ΓΔΘΛΞΠΣΥΦΨΩ", "Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega".split(),
                                          strict=True)},
    "ϑ": "\\vartheta", "ϕ": "\\phi", "ϵ": "\\epsilon", "ℓ": "\\ell",
    "≥": "\\ge", "≤": "\\le", "≠": "\\ne", "≈": "\\approx", "≡": "\\equiv", "∼": "\\sim", "≅": "\\cong",
    "⊗": "\\otimes", "⊙": "\\odot", "⊕": "\\oplus", "∘": "\\circ", "·": "\\cdot", "×": "\\times", "÷": "\\div",
    "±": "\\pm", "∓": "\\mp", "−": "-", "∞": "\\infty", "∂": "\\partial", "∇": "\\nabla", "√": "\\surd",
    "∈": "\\in", "∉": "\\notin", "⊂": "\\subset", "⊆": "\\subseteq", "⊇": "\\supseteq", "∪": "\\cup", "∩": "\\cap",
    "∖": "\\setminus", "∅": "\\emptyset", "∀": "\\forall", "∃": "\\exists", "→": "\\to", "↦": "\\mapsto",
    "⇒": "\\Rightarrow", "⇔": "\\Leftrightarrow", "⊥": "\\perp", "⋆": "\\star", "⋯": "\\cdots", "⋮": "\\vdots",
    "‖": "\\|", "⟨": "\\langle", "⟩": "\\rangle", "⌊": "\\lfloor", "⌋": "\\rfloor", "⌈": "\\lceil", "⌉": "\\rceil",
    "ℝ": "\\mathbb{R}", "ℕ": "\\mathbb{N}", "ℤ": "\\mathbb{Z}", "ℚ": "\\mathbb{Q}", "ℂ": "\\mathbb{C}",
    "ᵀ": "^{\\top}", "ᵏ": "^{k}", "⁻": "^{-}", "⁽": "^{(}", "⁾": "^{)}", "²": "^{2}", "³": "^{3}", "¹": "^{1}",
    **{chr(0x2080 + i): f"_{{{i}}}" for i in range(10)},
    **{ch: f"^{{{i}}}" for i, ch in zip(range(4, 10), "⁴⁵⁶⁷⁸⁹", strict=True)}, "⁰": "^{0}", "ⁿ": "^{n}",
    "⁺": "^{+}", "₊": "_{+}", "₋": "_{-}", "ᵢ": "_{i}", "ⱼ": "_{j}", "⇐": "\\Leftarrow", "⟹": "\\Longrightarrow",
    "⟸": "\\Longleftarrow", "⟺": "\\Longleftrightarrow", "↔": "\\leftrightarrow", "←": "\\leftarrow",
    "≪": "\\ll", "≫": "\\gg", "∑": "\\sum", "∏": "\\prod", "∫": "\\int", "∧": "\\wedge", "∨": "\\vee",
    "¬": "\\neg", "⊤": "\\top", "∣": "\\mid", "∥": "\\parallel", "∝": "\\propto", "≃": "\\simeq",
    "⊖": "\\ominus", "∗": "\\ast", "∎": "\\blacksquare", "∡": "\\angle", "ϱ": "\\varrho", "ϖ": "\\varpi",
    "|": "|", "<": "<", ">": ">",
}
#: Unicode in running text that is not math.
TEXT_CHARS = {"—": "---", "–": "--", "…": "\\dots{}", "’": "'", "‘": "`", "“": "``", "”": "''", "§": "\\S{}",
              "¦": "\\textbar{}", "é": "\\'e", "è": "\\`e", "ä": '\\"a', "ö": '\\"o', "ü": '\\"u', "â": "\\^a",
              "Â": "\\^A", "ĉ": "\\^c", "Ĝ": "\\^G", "ŵ": "\\^w", "ñ": "\\~n", "\u00a0": "~"}
_SCRIPT = re.compile(r"[_^](\{[A-Za-z0-9 ,+\-]*\}|-?[0-9]+|[A-Za-z]+|[α-ωΑ-Ω])")
#: What a script attaches to: one letter for ``_`` (``s_k``, ``W_down``, not ``relu_mlp``); for
#: ``^`` a word of at most three letters or digits, or a bracket, a bar or math just before it.
_SUB_BASE = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z]$")
_SUP_BASE = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z0-9]{1,3}$")


def _script(body: str) -> str:
    body = body[1:-1] if body.startswith("{") else body
    if len(body) > 1 and body.isalpha():
        return "{\\mathrm{" + body + "}}"
    return "{" + "".join(MATH_CHARS.get(ch, ch) for ch in body) + "}"


_OPERAND = r"(?:-?\d+(?:\.\d+)?|[A-Za-zα-ωΑ-Ω](?:[_^](?:[A-Za-z0-9]|\{[A-Za-z0-9 ,+\-]*\}))?)"
_RELATION = r"(?:>=|<=|!=|=|<|>|≥|≤|≠)"
#: ``m >= d``, ``k > N = 1``, ``μ = -1``: single-letter or numeric operands joined by relations, set as one formula.
_CHAIN = re.compile(rf"(?<![\w(|'.^_\-]){_OPERAND}(?:\s*{_RELATION}\s*{_OPERAND})+(?![\w(|'])")
_RELATIONS = {">=": "\\ge ", "<=": "\\le ", "!=": "\\ne "}


def _chain_math(chain: str) -> str:
    chain = re.sub(r">=|<=|!=", lambda m: _RELATIONS[m.group(0)], chain)
    chain = _SCRIPT.sub(lambda m: ("_" if m.group(0)[0] == "_" else "^") + _script(m.group(1)), chain)
    out = "".join(MATH_CHARS.get(ch, ch) + (" " if ch in MATH_CHARS and MATH_CHARS[ch][-1:].isalpha() else "")
                  for ch in chain)
    return re.sub(r"\s+", " ", out).strip()


def latex_prose(text: str) -> str:
    """Plain text as written in fact steps and reasons (``(μ^k - κ)s_k = 0``, ``|t|^N``, ``W_down``,
    ``m >= d``) as LaTeX: Greek letters, relations, sub- and superscripts and formulas of single-letter
    operands in math mode, everything else escaped by :func:`~symabsorb.report.escape.latex_text`; a
    character without a macro is written as its code point (``[U+2603]``), never dropped."""
    text = prose(text)
    pieces: list[tuple[bool, str]] = []  # (is_math, LaTeX)

    def add(is_math: bool, s: str) -> None:
        if not s:
            return
        if pieces and pieces[-1][0] == is_math:
            prev = pieces[-1][1]
            if is_math and re.search(r"\\[A-Za-z]+$", prev) and s[:1].isalpha():
                s = " " + s
            pieces[-1] = (is_math, prev + s)
        else:
            pieces.append((is_math, s))

    pos = 0
    for m in _CHAIN.finditer(text):
        _prose(text[pos:m.start()], pieces, add)
        add(True, _chain_math(m.group(0)))
        pos = m.end()
    _prose(text[pos:], pieces, add)
    return "".join(f"${s}$" if is_math else s for is_math, s in pieces)


def _prose(text: str, pieces: list[tuple[bool, str]], add: Callable[[bool, str], None]) -> None:
    i, run = 0, ""
    while i < len(text):
        ch = text[i]
        m = _SCRIPT.match(text, i)
        base = (_SUB_BASE if ch == "_" else _SUP_BASE).search(run) if m else None
        if m and (base or (ch == "^" and (run[-1:] in (")", "]") or (not run and pieces and pieces[-1][0])))):
            if base:
                add(False, latex_text(run[:base.start()]))
                add(True, base.group(0))
            elif run:
                add(False, latex_text(run))
            run = ""
            add(True, ("_" if ch == "_" else "^") + _script(m.group(1)))
            i = m.end()
            continue
        minus = (ch == "-" and (i == 0 or text[i - 1] in " ([,=") and text[i + 1:i + 2] != ""
                 and (text[i + 1].isalnum() or text[i + 1] in " (|" or text[i + 1] in MATH_CHARS))
        if ch in MATH_CHARS or minus:
            if run:
                add(False, latex_text(run))
                run = ""
            add(True, MATH_CHARS.get(ch, "-"))
        elif ch in TEXT_CHARS:
            if run:
                add(False, latex_text(run))
                run = ""
            add(False, TEXT_CHARS[ch])
        elif ord(ch) > 126 and latex_text(ch) == "?":
            run += f"[U+{ord(ch):04X}]"
        else:
            run += ch
        i += 1
    if run:
        add(False, latex_text(run))


_NUMBER = re.compile(r"(?:^|\s)(\d+(?:\.\d+)*)$")  # "Thm. 8", "Cor. 11"; not "Cor. R-aff-1"


def result_name(kind: str, label: str) -> tuple[str, str | None]:
    """(environment name, number): ``("Theorem", "8")`` for the paper's Thm. 8, ``("Lemma", "L-growth")``
    for a library lemma, ``("Open problem", None)`` for a result the paper does not number."""
    name = ENVIRONMENTS[kind].capitalize() if kind != "open-problem" else "Open problem"
    m = _NUMBER.search(label)
    if m:
        return name, m.group(1)
    if label.startswith("L-"):
        return name, label
    return name, None


def _tikz_color(hex_color: str) -> str:
    """``#1f4e9c`` as an xcolor expression: ``{rgb,255:red,31;green,78;blue,156}``."""
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return f"{{rgb,255:red,{r};green,{g};blue,{b}}}"


#: Nodes per row of the lemma graph: a wider layer is split over several rows, so the figure fits
#: the text width unscaled and its labels keep their size (9 pt: \\footnotesize of an 11 pt article).
GRAPH_ROW = 5


def graph_tikz(report: Report, stated: set[str] | None = None) -> list[str]:
    """The lemma graph as a TikZ picture: one band per topological layer, a wide layer split into rows
    of :data:`GRAPH_ROW`, drawn at its natural size."""
    import networkx as nx

    nodes, edges = used_graph(report)
    if not nodes:
        return []
    states = report.node_states()
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    g.add_edges_from(edges)
    layers = [sorted(layer) for layer in nx.topological_generations(g)]
    lines = ["\\begin{center}",
             "\\begin{tikzpicture}[x=3.3cm,y=-1.25cm,every node/.style={draw,rounded corners,line width=.8pt,"
             "minimum width=2.9cm,minimum height=.7cm,inner sep=2pt,font=\\sffamily\\footnotesize}]"]
    row = 0.0
    for layer in layers:
        chunks = [layer[i:i + GRAPH_ROW] for i in range(0, len(layer), GRAPH_ROW)]
        for chunk in chunks:
            for col, rid in enumerate(chunk):
                r = report.library.results[rid]
                fill = _tikz_color(STATE_COLORS[states.get(rid, NodeState.NOT_TRIED)])
                border = _tikz_color(SOURCE_COLORS[shown_source(r)])
                dash = ",dashed" if shown_source(r) != "paper" else ""
                x = col - (len(chunk) - 1) / 2
                name = (f"\\hyperref[{_label(rid)}]{{{escape_text(r.label)}}}" if stated is None or rid in stated
                        else escape_text(r.label))  # a result only tried is not stated: no link
                lines.append(f"\\node[fill={fill},draw={border}{dash}] ({node_id(rid)}) at ({x:.2f},{row:g}) "
                             f"{{{name}}};")
            row += 1
        row += 0.4  # a gap between layers
    # the edges behind the (opaque) nodes: an edge passing a row never covers a label
    lines.append("\\begin{pgfonlayer}{background}")
    for u, v in edges:
        lines.append(f"\\draw[->,>=stealth,gray] ({node_id(u)}) -- ({node_id(v)});")
    lines += ["\\end{pgfonlayer}", "\\end{tikzpicture}", "\\end{center}"]
    return lines


def activation_figures(report: Report) -> list[str]:
    """One TikZ figure per activation of the report (σ, its even and odd parts, Taylor polynomial)."""
    from .plots import activation_tikz, has_taylor_curve, report_activations

    out = []
    for name, f in report_activations(report):
        picture = activation_tikz(f)
        if picture is None:
            continue
        drawn = "even and odd parts" + (", and its Taylor polynomial near 0" if has_taylor_curve(f) else "")
        g = "g" if f.gated else "\\sigma"
        out += ["\\begin{figure}[htbp]", "\\centering", picture,
                f"\\caption{{\\texttt{{{escape_text(name)}}}: ${g}(z) = {sp.latex(f.expr)}$ on $[-4, 4]$, its {drawn}.}}",
                "\\end{figure}"]
    return out


#: Before a heading or a lead-in line: start a new page unless a few lines fit under it (no orphaned heading).
_NEEDSPACE = "\\needspace{6\\baselineskip}"


_TEXT_IN_MATH = re.compile(r"\\text\{([^{}$]*)\}")


def _breakable_math(latex: str) -> str:
    """Math for a narrow table cell: its top-level ``\\text{...}`` words set as text, where lines may
    break (one ``\\text`` box cannot), when every math piece stays whole; else the math as it is."""
    pieces = _TEXT_IN_MATH.split(latex)
    maths = [p.strip() for p in pieces[::2]]
    if len(pieces) == 1 or not all(is_safe_math(m) for m in maths if m):
        return latex_math(latex)
    return " ".join(latex_math(p.strip()) if i % 2 == 0 else latex_text(p.strip())
                    for i, p in enumerate(pieces) if p.strip())


def _stated(report: Report) -> list[str]:
    """The results a report's derivations cite in their steps or conclude with, in library order."""
    ids = {rid for a in report.answers if a.derivation is not None
           for rid in (*(r for step in a.derivation.steps for r in step.cites), *a.derivation.cited,
                       *([a.derivation.decided_by] if a.derivation.decided_by else []))}
    return [rid for rid in sorted(report.library.results) if rid in ids]


_STATE_HEADS = {NodeState.APPLICABLE: "also applicable (an earlier result decided)",
                NodeState.UNDECIDED: "a hypothesis undecided", NodeState.FAILED: "a hypothesis fails"}


def _item_ranges(query: int, numbers: list[int]) -> str:
    """``Query~\\ref{q:6}, items~1--6, 8 and 11``: item numbers of one query, runs as ranges."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    parts = [f"{r[0]}" if len(r) == 1 else f"{r[0]}--{r[-1]}" for r in runs]
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    plural = "s" if len(numbers) > 1 else ""
    return f"Query~\\ref{{q:{query}}}, item{plural}~{listed}"


def _label(rid: str) -> str:
    return "res:" + re.sub(r"[^A-Za-z0-9-]", "-", rid)


class LatexRenderer:
    def __init__(self, library: Library) -> None:
        self.library = library
        self.stated: set[str] | None = None  # a whole report states only these results (None: all it names)
        # in a whole report, what an earlier query already printed: a step's lines -> (query, item
        # number), a candidate group -> query; a later query refers to it instead of repeating it
        self.query: int | None = None
        self.seen_steps: dict[tuple[str, ...], tuple[int, int]] = {}
        self.seen_groups: dict[tuple[str, str, tuple[str, ...]], int] = {}

    def cite(self, rid: str) -> str:
        """``Theorem~8``, ``Lemma~L-growth`` or ``Open problem``: the result's own number, linked (a
        result the report does not state, one a query only tried, by its label)."""
        r = self.library.results[rid]
        if self.stated is not None and rid not in self.stated:
            return escape_text(r.label)
        name, number = result_name(r.kind, r.label)
        if number is None:
            return f"\\hyperref[{_label(rid)}]{{{escape_text(r.label)}}}"
        return f"{name}~\\ref{{{_label(rid)}}}"

    def references(self, ids: list[str]) -> list[str]:
        """The environments of the results ``ids``, each numbered as in its source."""
        lines = []
        for rid in ids:
            r = self.library.results[rid]
            name, number = result_name(r.kind, r.label)
            title = f"{latex_prose(r.title)}; \\emph{{{escape_text(shown_source(r))}}}"
            begin = (f"\\begin{{result}}{{{name}}}{{{escape_text(number)}}}{{{title}}}" if number is not None
                     else f"\\begin{{result*}}{{{escape_text(r.label)}}}{{{title}}}")
            end = "\\end{result}" if number is not None else "\\end{result*}"
            lines += [f"{begin}\\label{{{_label(rid)}}}", self.text(r.statement),
                      f"\\par\\noindent{{\\small Source: {escape_text(citation_text(r))}.}}", end]
        return lines

    def text(self, text: str) -> str:
        out = []
        for kind, value in text_pieces(text, self.library):
            if kind == "cite":
                out.append(self.cite(value))
            elif kind == "math":
                out.append(latex_math(value))
            elif kind == "code":
                out.append(f"\\texttt{{{escape_text(value)}}}")
            else:
                out.append(latex_prose(value))
        return "".join(out)

    @singledispatchmethod
    def render(self, node: object) -> list[str]:
        raise TypeError(f"no LaTeX rendering for {type(node).__name__}")

    @render.register
    def _(self, node: Report) -> list[str]:
        # the queries first; the results they use and the lemma graph are an appendix, which states the
        # results the derivations rest on (the ones a query only tried are named, not stated)
        self.stated = set(_stated(node))
        lines = [f"% Generated by symabsorb {__version__} from {escape_text(node.spec_path)}.",
                 *self.summary(node),
                 "Each query below is answered by a derivation whose steps cite the results they use; the results "
                 "are stated in Appendix~\\ref{app:results} and the part of the library used is drawn in "
                 "Appendix~\\ref{app:graph}."]
        for i, a in enumerate(node.answers, start=1):
            lines += [_NEEDSPACE, f"\\section{{Query {i}: \\texttt{{{escape_text(a.query)}}}}}\\label{{q:{i}}}"]
            self.query = i
            lines += self.render(a)
        self.query = None
        figures = activation_figures(node)
        if figures:
            lines += [_NEEDSPACE, "\\section*{Activations}", *figures]
        lines += ["\\appendix", _NEEDSPACE, "\\section{Results used}\\label{app:results}",
                  "Results marked \\emph{paper} are from Mijoski and Karbevski (2026); results marked \\emph{library} "
                  "are symabsorb's own lemmas, proved in symabsorb's docs/theorems.md; results marked \\emph{user} come from a "
                  "\\texttt{-{}-theorems} directory."]
        lines += self.references(_stated(node))
        graph = graph_tikz(node, self.stated)
        if graph:  # heading, legend and picture on one page
            lines += ["\\clearpage", "\\section{Lemma graph}\\label{app:graph}",
                      "The part of the result library these queries used. Border: blue = paper, purple (dashed) = library, "
                      "orange (dashed) = user; fill: green = applied, pale green = also applicable, "
                      "red = a hypothesis failed, "
                      "yellow = a hypothesis undecided, blue = cited, white = not tried. An arrow goes from a result "
                      "to one that uses it.", "", *graph]
        return lines

    def summary(self, report: Report) -> list[str]:
        """The summary table (booktabs): query, question, verdict, result, condition, scope."""
        lines = ["\\section*{Summary}\\label{summary}",
                 "{\\footnotesize\\setlength\\tabcolsep{3pt}\\binoppenalty=0\\relpenalty=0\\sloppy",
                 "\\begin{longtable}{@{}>{\\raggedright}p{2.7cm}>{\\raggedright}p{2.1cm}>{\\raggedright}p{1.9cm}"
                 ">{\\raggedright}p{2.0cm}>{\\raggedright}p{3.8cm}>{\\raggedright\\arraybackslash}p{2.3cm}@{}}",
                 "\\toprule", "query & question & verdict & result & condition & scope\\\\", "\\midrule\\endhead"]
        for i, row in enumerate(summary_rows(report), start=1):
            result = self.cite(row.result) if row.result else "---"
            condition = _breakable_math(row.condition) if row.condition else "---"
            query = escape_text(row.query).replace("\\_", "\\_\\allowbreak{}")
            lines.append(f"\\hyperref[q:{i}]{{\\texttt{{{query}}}}} & {escape_text(row.question)} & "
                         f"\\textbf{{{escape_text(row.verdict)}}} & {result} & {condition} & {latex_prose(row.scope)}\\\\")
        lines += ["\\bottomrule", "\\end{longtable}}", ""]
        return lines

    @render.register
    def _(self, node: QueryAnswer) -> list[str]:
        if node.derivation is not None:
            return self.render(node.derivation)
        assert node.facts is not None
        return self.render(node.facts)

    @render.register
    def _(self, d: Derivation) -> list[str]:
        head = f"\\textbf{{Verdict: {escape_text(verdict_word(d))}}} (scope: {latex_prose(d.scope)})"
        if d.decided_by:
            source = shown_source(self.library.results[d.decided_by])
            head += f", decided by {self.cite(d.decided_by)}, \\emph{{{escape_text(source)}}}"
        lines = [head + ".", ""]
        blocker = blocking_reason(d) if d.verdict.value == "open" else None
        problem = open_problem(d, self.library)
        if problem is not None:
            lines += [f"\\textbf{{Open problem:}} {self.cite(problem.id)}: {latex_prose(problem.title)}.", ""]
        if blocker:
            lines += [f"\\textbf{{{'Other results need' if problem is not None else 'Blocked by'}:}} "
                      f"{self.text(blocker[0])}, a hypothesis of "
                      + ", ".join(self.cite(rid) for rid in blocker[1]) + ".", ""]
        if d.condition:
            some_s = " for some index set $S$" if has_index_set(d) else ""
            lines += [f"\\textbf{{Condition:}} {latex_math(d.condition)}{some_s} (sufficient: {d.sufficient}; "
                      f"necessary: {d.necessary}).", ""]
        if d.assumptions:
            lines += ["\\textbf{Assumptions:} " + "; ".join(self.text(a) for a in d.assumptions) + ".", ""]
        for note in d.notes:
            lines += [f"\\emph{{{self.text(note)}}}", ""]
        lines.append("\\begin{enumerate}")
        lines += self.steps(d.steps)
        lines.append("\\end{enumerate}")
        groups = candidate_groups(d)
        if groups:  # one paragraph, a clause per reason: a page of "hypothesis failed" items helps no reader
            clauses = []
            again: dict[int, list[str]] = {}  # groups an earlier query gave with their reasons: named only
            for state in (NodeState.APPLICABLE, NodeState.UNDECIDED, NodeState.FAILED):
                parts = []
                for st, reason, ids in groups:
                    if st is not state:
                        continue
                    key = (state.value, reason, tuple(ids))
                    if self.query is not None and key in self.seen_groups:
                        again.setdefault(self.seen_groups[key], []).extend(ids)
                        continue
                    if self.query is not None:
                        self.seen_groups[key] = self.query
                    parts.append(f"{self.text(reason.removeprefix('fails: ').removeprefix('undecided: '))} ("
                                 + ", ".join(self.cite(rid) for rid in ids) + ")")
                if parts:
                    clauses.append(f"\\emph{{{escape_text(_STATE_HEADS[state])}}}: " + "; ".join(parts))
            clauses += [f"As in Query~\\ref{{q:{q}}}: " + ", ".join(self.cite(rid) for rid in ids)
                        for q, ids in sorted(again.items())]
            lines += ["{\\small\\noindent Other candidate results, by the hypothesis that failed. "
                      + ". ".join(clauses) + ".\\par}", ""]
        return lines

    def steps(self, steps: Sequence[DerivationStep]) -> list[str]:
        """The steps as items; in a whole report, consecutive steps an earlier query printed word for
        word are one item naming where they are (the derivation stays whole: the earlier query has it)."""
        lines: list[str] = []
        run: list[tuple[int, int]] = []  # (query, item number there) of the repeated steps in the current run
        items = 0  # the top-level items printed so far

        def close() -> None:
            nonlocal items
            if run:
                items += 1
                lines.append("\\item As in " + "; ".join(_item_ranges(q, sorted({n for p, n in run if p == q}))
                                                         for q in sorted({q for q, _ in run})) + ".")
                run.clear()

        for step in steps:
            rendered = self.step(step)
            key = tuple(rendered)
            earlier = self.seen_steps.get(key) if self.query is not None else None
            if earlier is not None:
                run.append(earlier)
                continue
            close()
            lines += rendered
            items += 1
            if self.query is not None:
                self.seen_steps.setdefault(key, (self.query, items))
        close()
        return lines

    def step(self, step: DerivationStep) -> list[str]:
        lines = [f"\\item {self.text(step.text)}"]
        if step.evidence:
            lines.append("\\begin{itemize}")
            for label, ev in step.evidence:
                lines += self.evidence(label, ev)
            lines.append("\\end{itemize}")
        return lines

    def evidence(self, label: str, ev: Evidence) -> list[str]:
        reason = f" --- {latex_prose(ev.reason)}" if ev.reason else ""
        head = f"\\item \\emph{{{latex_prose(label)}}}: {ev.status.value} ({escape_text(ev.decided_by.value)}){reason}"
        if not ev.steps:
            return [head]
        # the steps as one small paragraph, not a list: the proof stays, a page of bullets goes
        return [head + ". {\\small " + "; ".join(self.fact_step(s) for s in ev.steps) + ".}"]

    def fact_step(self, s: Step) -> str:
        return latex_prose(s.text) + (f": ${sp.latex(tidy(s.claim))}$" if s.claim is not None else "")

    @render.register
    def _(self, node: ActivationFacts) -> list[str]:
        g = "g" if node.gated else "\\sigma"
        lines = [f"Facts about \\texttt{{{escape_text(node.name)}}}: ${g}(z) = {sp.latex(node.expr)}$.",
                 "\\begin{itemize}"]
        for name, ev, value in facts_rows(node):
            lines.append(f"\\item {latex_prose(name)}: {ev.status.value} ({escape_text(ev.decided_by.value)}): "
                         f"{latex_prose(value)}")
        lines.append("\\end{itemize}")
        return lines


@renderer("tex", aliases=("latex",), suffixes=(".tex", ".latex"))
def render_latex(report: Report, opts: RenderOptions | None = None) -> str:
    """A standalone document, or with ``opts.fragment`` a body to paste into a paper."""
    body = LatexRenderer(report.library).render(report)
    if opts is not None and opts.fragment:
        head = ["% symabsorb fragment: paste into a document whose preamble has", *("%   " + line for line in
                PREAMBLE.strip().splitlines())]
        return "\n".join(head + body) + "\n"
    return "\n".join(["\\documentclass[11pt]{article}", PREAMBLE.strip(), "\\usepackage[margin=2.2cm]{geometry}",
                      f"\\title{{{escape_text(report.title)}}}", "\\date{}", "\\begin{document}", "\\maketitle",
                      *body, "\\end{document}"]) + "\n"


@renderer("tex", kind="answer")
def render_answer_latex(answer: QueryAnswer, library: Library, opts: RenderOptions | None = None) -> str:
    """One answer, after the environment of every result it cites or tried (each is cited with ``\\ref``)."""
    renderer_ = LatexRenderer(library)
    lines = renderer_.references(Report("", "", "", (answer,), library).cited()) + renderer_.render(answer)
    return "\n".join(lines) + "\n"


# ---- a leanblueprint chapter: `symabsorb graph --format blueprint` ---------------------------------

#: leanblueprint's environments for a result's kind: those its stock ``macros/common.tex`` defines
#: (theorem, proposition, lemma, corollary, definition), and ``conjecture`` for an open problem, which the
#: chapter defines itself when the blueprint has none (an unproved statement never prints as a Theorem);
#: its status line says it is not proved and it is marked ``\notready``.
BLUEPRINT_ENVIRONMENTS = {"theorem": "theorem", "lemma": "lemma", "proposition": "proposition",
                          "corollary": "corollary", "definition": "definition", "open-problem": "conjecture"}
#: status -> (what the reader is told, the leanblueprint macro that marks it, or "")
BLUEPRINT_STATUS = {
    "paper": ("proved in the paper (Mijoski and Karbevski 2026)", ""),
    "library-proved": ("proved in symabsorb's library", ""),
    "user": ("from a --theorems directory: not checked by symabsorb", "\\notready"),
    "conjecture": ("a conjecture: not proved", "\\notready"),
    "open": ("an open problem", "\\notready"),
}
BLUEPRINT_PREAMBLE = r"""% In a leanblueprint project: \input this file from content.tex (its macros are the plugin's).
% Standalone (pdflatex), the blueprint macros are defined away below; a minimal wrapper is
%   \documentclass{report} \usepackage{amsmath,amssymb,amsthm,hyperref}
%   \newtheorem{theorem}{Theorem} \newtheorem{proposition}[theorem]{Proposition}
%   \newtheorem{lemma}[theorem]{Lemma} \newtheorem{corollary}[theorem]{Corollary}
%   \theoremstyle{definition} \newtheorem{definition}[theorem]{Definition}
%   \begin{document} \input{this-file} \end{document}
% Open problems are stated as conjectures: the environment is defined here when the document has none.
\makeatletter\@ifundefined{conjecture}{\@ifundefined{c@theorem}{\newtheorem{conjecture}{Conjecture}}%
{\newtheorem{conjecture}[theorem]{Conjecture}}}{}\makeatother
\providecommand{\uses}[1]{}
\providecommand{\lean}[1]{}
\providecommand{\leanok}{}
\providecommand{\notready}{}
\providecommand{\mathlibok}{}
\providecommand{\symabsorbstatus}[1]{\par\noindent{\small\textit{Status: #1.}}}"""


def render_blueprint(library: Library) -> str:
    """Every result as a leanblueprint statement, a chapter to ``\\input`` from a blueprint's
    ``content.tex``: ``\\begin{theorem}[label: title]\\label{...}\\uses{...}``, its status (paper,
    library-proved, user, conjecture, open; ``\\notready`` for the last three, never ``\\leanok``:
    nothing here is formalised in Lean) and its proof steps with their own ``\\uses``. Results come in
    dependency order; every string of a ``--theorems`` file is escaped. The environments are the
    blueprint's stock ones (``theorem``, ``lemma``, ``proposition``, ``corollary``, ``definition``); an open
    problem is a ``conjecture`` (defined by the chapter when the document has none), never a theorem."""
    import networkx as nx

    renderer = LatexRenderer(library)
    renderer.stated = set(library.results)
    graph = library.graph  # an edge from a result to one that uses it: a topological order states uses first
    order = [rid for rid in nx.lexicographical_topological_sort(graph, key=lambda rid: rid)
             if rid in library.results] if nx.is_directed_acyclic_graph(graph) else sorted(library.results)
    body = [BLUEPRINT_PREAMBLE, f"% Generated by symabsorb {__version__}: the result library as a leanblueprint chapter.",
            "\\chapter{The symabsorb result library}\\label{chap:symabsorb}",
            "In the proofs, $\\langle\\mathtt{name}\\rangle$ marks a value that a hypothesis of the result "
            "supplies when the result is applied to a block (a constant of $\\sigma$, the target "
            "$\\langle\\mathtt{T}\\rangle = -M/(2c)$, a condition on $D$); a report's derivation shows the value.", ""]
    for rid in order:
        r = library.results[rid]
        env = BLUEPRINT_ENVIRONMENTS[r.kind]
        status = blueprint_status(r)
        words, macro = BLUEPRINT_STATUS[status]
        uses = ", ".join(_label(u) for u in r.uses if u in library.results)
        head = f"\\begin{{{env}}}[{escape_text(r.label)}: {latex_prose(r.title)}]\\label{{{_label(rid)}}}"
        body += [f"% status: {status}", head + (f"\\uses{{{uses}}}" if uses else "") + macro,
                 renderer.text(r.statement),
                 f"\\symabsorbstatus{{{escape_text(words)}; source: {escape_text(citation_text(r))}}}",
                 f"\\end{{{env}}}"]
        if status in ("paper", "library-proved", "user"):
            steps = " ".join(renderer.text(unfilled(step)) for step in r.proof) or f"See {escape_text(citation_text(r))}."
            body += ["\\begin{proof}" + (f"\\uses{{{uses}}}" if uses else ""), steps, "\\end{proof}"]
        body.append("")
    return "\n".join(body) + "\n"
