"""LaTeX: a standalone ``article`` (amsthm environments, one ``\\label`` per result, ``\\ref`` in
the steps) that compiles with pdflatex, or with ``fragment=True`` only the body to paste into a paper."""

from __future__ import annotations

import re
from functools import singledispatchmethod

import sympy as sp

from .. import __version__
from ..analysis.engine import ActivationFacts
from ..analysis.facts import Evidence, Step
from ..theory.derivation import Derivation, DerivationStep, NodeState
from ..theory.library import Library
from .common import SOURCE_COLORS, STATE_COLORS, VERDICT_TEXT, facts_rows, has_index_set, node_id, text_pieces, used_graph
from .escape import latex_math, latex_text
from .model import QueryAnswer, Report

__all__ = ["PREAMBLE", "LatexRenderer", "activation_figures", "graph_tikz", "render_latex", "result_name"]

ENVIRONMENTS = {"theorem": "theorem", "lemma": "lemma", "proposition": "proposition", "corollary": "corollary",
                "definition": "definition", "open-problem": "problem"}

PREAMBLE = r"""\usepackage{amsmath,amssymb,amsthm}
\usepackage{graphicx,tikz}
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


_NUMBER = re.compile(r"(\d+(?:\.\d+)*)$")


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


def graph_tikz(report: Report) -> list[str]:
    """The lemma graph as a TikZ picture (layered like the HTML figure), scaled to the text width."""
    import networkx as nx

    nodes, edges = used_graph(report)
    if not nodes:
        return []
    states = report.node_states()
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    g.add_edges_from(edges)
    layers = [sorted(layer) for layer in nx.topological_generations(g)]
    widest = max(len(layer) for layer in layers)
    lines = ["\\begin{center}", f"\\resizebox{{{min(1.0, widest / 5):.2f}\\textwidth}}{{!}}{{%",
             "\\begin{tikzpicture}[x=3.2cm,y=-1.5cm,every node/.style={draw,rounded corners,line width=1pt,"
             "minimum width=2.8cm,minimum height=.8cm,font=\\sffamily\\small}]"]
    for row, layer in enumerate(layers):
        for col, rid in enumerate(layer):
            r = report.library.results[rid]
            fill = _tikz_color(STATE_COLORS[states.get(rid, NodeState.NOT_TRIED)])
            border = _tikz_color(SOURCE_COLORS[r.source])
            dash = ",dashed" if r.source == "library" else ""
            x = col - (len(layer) - 1) / 2
            lines.append(f"\\node[fill={fill},draw={border}{dash}] ({node_id(rid)}) at ({x:.2f},{row}) "
                         f"{{\\hyperref[{_label(rid)}]{{{escape_text(r.label)}}}}};")
    for u, v in edges:
        lines.append(f"\\draw[->,>=stealth,gray] ({node_id(u)}) -- ({node_id(v)});")
    lines += ["\\end{tikzpicture}}", "\\end{center}"]
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


def _label(rid: str) -> str:
    return "res:" + re.sub(r"[^A-Za-z0-9-]", "-", rid)


class LatexRenderer:
    def __init__(self, library: Library) -> None:
        self.library = library

    def cite(self, rid: str) -> str:
        """``Theorem~8``, ``Lemma~L-growth`` or ``Open problem``: the result's own number, linked."""
        r = self.library.results[rid]
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
            title = f"{escape_text(r.title)}; \\emph{{{escape_text(r.source)}}}"
            begin = (f"\\begin{{result}}{{{name}}}{{{escape_text(number)}}}{{{title}}}" if number is not None
                     else f"\\begin{{result*}}{{{escape_text(r.label)}}}{{{title}}}")
            end = "\\end{result}" if number is not None else "\\end{result*}"
            lines += [f"{begin}\\label{{{_label(rid)}}}", self.text(r.statement),
                      f"\\par\\noindent{{\\small Source: {escape_text(r.citation)}.}}", end]
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
                out.append(escape_text(value))
        return "".join(out)

    @singledispatchmethod
    def render(self, node: object) -> list[str]:
        raise TypeError(f"no LaTeX rendering for {type(node).__name__}")

    @render.register
    def _(self, node: Report) -> list[str]:
        lines = [f"% Generated by symabsorb {__version__} from {escape_text(node.spec_path)}.",
                 "\\section*{Results used}",
                 "Results marked \\emph{paper} are from Mijoski and Karbevski (2026); results marked \\emph{library} "
                 "are symabsorb's own lemmas."]
        lines += self.references(node.cited())
        for i, a in enumerate(node.answers, start=1):
            lines += [f"\\section{{Query {i}: \\texttt{{{escape_text(a.query)}}}}}\\label{{q:{i}}}"]
            lines += self.render(a)
        lines += ["\\section*{Lemma graph}",
                  "The part of the result library these queries used. Border: blue = paper, purple (dashed) = "
                  "library; fill: green = applied, pale green = also applicable, red = a hypothesis failed, yellow = "
                  "a hypothesis undecided, blue = cited, white = not tried.", "", *graph_tikz(node)]
        figures = activation_figures(node)
        if figures:
            lines += ["\\section*{Activations}", *figures]
        return lines

    @render.register
    def _(self, node: QueryAnswer) -> list[str]:
        if node.derivation is not None:
            return self.render(node.derivation)
        assert node.facts is not None
        return self.render(node.facts)

    @render.register
    def _(self, d: Derivation) -> list[str]:
        head = f"\\textbf{{Verdict: {VERDICT_TEXT[d.verdict]}}} (scope: {escape_text(d.scope)})"
        if d.decided_by:
            head += f", decided by {self.cite(d.decided_by)}, \\emph{{{escape_text(d.source or '')}}}"
        lines = [head + ".", ""]
        if d.condition:
            some_s = " for some index set $S$" if has_index_set(d) else ""
            lines += [f"\\textbf{{Condition:}} {latex_math(d.condition)}{some_s} (sufficient: {d.sufficient}; "
                      f"necessary: {d.necessary}).", ""]
        if d.assumptions:
            lines += ["\\textbf{Assumptions:} " + "; ".join(escape_text(a) for a in d.assumptions) + ".", ""]
        for note in d.notes:
            lines += [f"\\emph{{{escape_text(note)}}}", ""]
        lines.append("\\begin{enumerate}")
        for step in d.steps:
            lines += self.step(step)
        lines.append("\\end{enumerate}")
        others = [c for c in d.candidates if c.state is not NodeState.APPLIED]
        if others:
            lines += ["Other candidate results:", "\\begin{itemize}"]
            lines += [f"\\item {self.cite(c.id)}: {escape_text(c.state.value)} --- {self.text(c.reason)}" for c in others]
            lines.append("\\end{itemize}")
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
        reason = f" --- {escape_text(ev.reason)}" if ev.reason else ""
        lines = [f"\\item \\emph{{{escape_text(label)}}}: {ev.status.value} ({escape_text(ev.decided_by.value)}){reason}"]
        if ev.steps:
            lines.append("\\begin{itemize}")
            lines += [f"\\item {self.fact_step(s)}" for s in ev.steps]
            lines.append("\\end{itemize}")
        return lines

    def fact_step(self, s: Step) -> str:
        return escape_text(s.text) + (f": ${sp.latex(s.claim)}$" if s.claim is not None else "")

    @render.register
    def _(self, node: ActivationFacts) -> list[str]:
        g = "g" if node.gated else "\\sigma"
        lines = [f"Facts about \\texttt{{{escape_text(node.name)}}}: ${g}(z) = {sp.latex(node.expr)}$.",
                 "\\begin{itemize}"]
        for name, ev, value in facts_rows(node):
            lines.append(f"\\item {escape_text(name)}: {ev.status.value} ({escape_text(ev.decided_by.value)}): "
                         f"{escape_text(value)}")
        lines.append("\\end{itemize}")
        return lines


def render_latex(report: Report, fragment: bool = False) -> str:
    body = LatexRenderer(report.library).render(report)
    if fragment:
        head = ["% symabsorb fragment: paste into a document whose preamble has", *("%   " + line for line in
                PREAMBLE.strip().splitlines())]
        return "\n".join(head + body) + "\n"
    return "\n".join(["\\documentclass[11pt]{article}", PREAMBLE.strip(), "\\usepackage[margin=2.2cm]{geometry}",
                      f"\\title{{{escape_text(report.title)}}}", "\\date{}", "\\begin{document}", "\\maketitle",
                      *body, "\\end{document}"]) + "\n"
