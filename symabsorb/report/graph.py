"""The lemma graph as DOT, Mermaid, JSON or an interactive HTML page (``symabsorb graph``)."""

from __future__ import annotations

import json

from ..theory.derivation import NodeState
from ..theory.library import Library
from ..theory.serialize import graph_to_dict
from .common import SOURCE_COLORS, STATE_COLORS, citation_text, node_id, shown_source
from .escape import dot_string, json_safe, mermaid_text

__all__ = ["GRAPH_FORMATS", "render_graph"]

GRAPH_FORMATS = ("dot", "mermaid", "json", "html", "blueprint")


def _dot(library: Library, states: dict[str, NodeState]) -> str:
    lines = ["digraph symabsorb {", "  rankdir=BT;", '  node [shape=box, style="rounded,filled", fontname="Helvetica"];']
    for rid in sorted(library.results):
        r = library.results[rid]
        state = states.get(rid, NodeState.NOT_TRIED)
        style = "rounded,filled" + (",dashed" if shown_source(r) != "paper" else "")
        lines.append(f'  {node_id(rid)} [label="{dot_string(r.label)}\\n{dot_string(r.title)}", '
                     f'color="{SOURCE_COLORS[shown_source(r)]}", fillcolor="{STATE_COLORS[state]}", style="{style}", '
                     f'penwidth=2, tooltip="{shown_source(r)}: {dot_string(citation_text(r))}; state: {state.value}"];')
    for u, v in sorted(library.graph.edges):
        lines.append(f"  {node_id(u)} -> {node_id(v)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _mermaid(library: Library, states: dict[str, NodeState]) -> str:
    lines = ["graph BT"]
    for rid in sorted(library.results):
        lines.append(f'  {node_id(rid)}["{mermaid_text(library.results[rid].label)}"]')
    for u, v in sorted(library.graph.edges):
        lines.append(f"  {node_id(u)} --> {node_id(v)}")
    for rid in sorted(library.results):
        r = library.results[rid]
        fill = STATE_COLORS[states.get(rid, NodeState.NOT_TRIED)]
        dash = ",stroke-dasharray: 5 3" if shown_source(r) != "paper" else ""
        lines.append(f"  style {node_id(rid)} fill:{fill},stroke:{SOURCE_COLORS[shown_source(r)]},stroke-width:2px{dash}")
    return "\n".join(lines) + "\n"


def render_graph(library: Library, fmt: str = "dot", states: dict[str, NodeState] | None = None) -> str:
    states = states or {}
    if fmt == "dot":
        return _dot(library, states)
    if fmt == "mermaid":
        return _mermaid(library, states)
    if fmt == "html":
        from .graphpage import graph_page

        return graph_page(library, states)
    if fmt == "blueprint":
        from .latex import render_blueprint

        return render_blueprint(library)
    if fmt == "json":
        return json_safe(json.dumps(graph_to_dict(library, states), indent=2, ensure_ascii=False)) + "\n"
    raise ValueError(f"unknown graph format {fmt!r}; expected one of {', '.join(GRAPH_FORMATS)}")
