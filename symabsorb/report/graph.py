"""The lemma graph as DOT, Mermaid, JSON, an interactive HTML page or a leanblueprint chapter
(``symabsorb graph``): each registered as a ``graph`` renderer in the one table of formats."""

from __future__ import annotations

import json

from ..theory.derivation import NodeState
from ..theory.library import Library
from ..theory.serialize import graph_to_dict
from .common import SOURCE_COLORS, STATE_COLORS, citation_text, node_id, shown_source
from .escape import dot_string, json_safe, mermaid_text
from .formats import RENDERERS, RenderOptions, renderer

__all__ = ["render_graph"]


@renderer("dot", kind="graph")
def _dot(library: Library, states: dict[str, NodeState], opts: RenderOptions | None = None) -> str:
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


@renderer("mermaid", kind="graph")
def _mermaid(library: Library, states: dict[str, NodeState], opts: RenderOptions | None = None) -> str:
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


@renderer("json", kind="graph")
def _json(library: Library, states: dict[str, NodeState], opts: RenderOptions | None = None) -> str:
    graph = graph_to_dict(library, states)
    for node in graph.get("nodes", ()):  # a --theorems result is the user's, whatever its file claims
        if node.get("id") in library.results:
            node["source"] = shown_source(library.results[node["id"]])
    return json_safe(json.dumps(graph, indent=2, ensure_ascii=False)) + "\n"


@renderer("html", kind="graph")
def _page(library: Library, states: dict[str, NodeState], opts: RenderOptions | None = None) -> str:
    from .graphpage import graph_page

    return graph_page(library, states)


@renderer("blueprint", kind="graph")
def _blueprint(library: Library, states: dict[str, NodeState], opts: RenderOptions | None = None) -> str:
    from .latex import render_blueprint

    return render_blueprint(library)


def render_graph(library: Library, fmt: str = "dot", states: dict[str, NodeState] | None = None) -> str:
    """The library's lemma graph in ``fmt``, any format with a ``graph`` renderer (dot, mermaid, json,
    html, blueprint); :class:`~.formats.UnknownFormat` naming them otherwise."""
    return RENDERERS.render("graph", fmt, library, states or {})
