"""The lemma graph as inline SVG, in the style of Lean blueprints: the border says where a result
comes from (paper or library), the fill what happened to it in this report."""

from __future__ import annotations

import networkx as nx

from ..theory.derivation import NodeState
from .common import SOURCE_COLORS, STATE_COLORS, used_graph
from .escape import html_text as escape  # the one HTML escaper (symabsorb.report.escape)
from .model import Report

__all__ = ["graph_svg", "legend_svg"]

_W, _H, _GAP_X, _GAP_Y = 132, 34, 18, 46


def graph_svg(report: Report) -> str:
    nodes, edges = used_graph(report)
    states = report.node_states()
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    g.add_edges_from(edges)
    layers = [sorted(layer) for layer in nx.topological_generations(g)]
    pos: dict[str, tuple[float, float]] = {}
    width = max((len(layer) for layer in layers), default=1) * (_W + _GAP_X) + _GAP_X
    for row, layer in enumerate(layers):
        offset = (width - len(layer) * (_W + _GAP_X) + _GAP_X) / 2
        for col, rid in enumerate(layer):
            pos[rid] = (offset + col * (_W + _GAP_X), _GAP_Y / 2 + row * (_H + _GAP_Y))
    height = len(layers) * (_H + _GAP_Y) + _GAP_Y / 2
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="lemma-graph" role="img" '
           f'aria-label="lemma graph" width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>']
    for u, v in edges:
        (x1, y1), (x2, y2) = pos[u], pos[v]
        out.append(f'<line x1="{x1 + _W / 2:.1f}" y1="{y1 + _H:.1f}" x2="{x2 + _W / 2:.1f}" y2="{y2:.1f}" '
                   'stroke="#555" stroke-width="1.2" marker-end="url(#arrow)"/>')
    for rid in nodes:
        r = report.library.results[rid]
        x, y = pos[rid]
        state = states.get(rid, NodeState.NOT_TRIED)
        dash = ' stroke-dasharray="5 3"' if r.source == "library" else ""
        out.append(f'<a href="#ref-{escape(rid)}"><g class="node"><title>{escape(r.label)}: {escape(r.title)} '
                   f'({r.source}; {state.value})</title>'
                   f'<rect x="{x:.1f}" y="{y:.1f}" width="{_W}" height="{_H}" rx="7" fill="{STATE_COLORS[state]}" '
                   f'stroke="{SOURCE_COLORS[r.source]}" stroke-width="2.2"{dash}/>'
                   f'<text x="{x + _W / 2:.1f}" y="{y + _H / 2 + 4:.1f}" text-anchor="middle" font-size="12" '
                   f'font-family="sans-serif">{escape(r.label)}</text></g></a>')
    out.append("</svg>")
    return "".join(out)


def legend_svg() -> str:
    items = [(STATE_COLORS[s], "#444", "", s.value) for s in NodeState]
    items += [("#ffffff", SOURCE_COLORS["paper"], "", "border: paper"),
              ("#ffffff", SOURCE_COLORS["library"], ' stroke-dasharray="5 3"', "border: library")]
    height = 22 * len(items) + 8
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="legend" width="230" height="{height}" '
           f'viewBox="0 0 230 {height}" role="img" aria-label="legend">']
    for i, (fill, stroke, dash, label) in enumerate(items):
        y = 6 + 22 * i
        out.append(f'<rect x="4" y="{y}" width="28" height="16" rx="4" fill="{fill}" stroke="{stroke}" '
                   f'stroke-width="2"{dash}/><text x="40" y="{y + 12}" font-size="12" '
                   f'font-family="sans-serif">{escape(label)}</text>')
    out.append("</svg>")
    return "".join(out)
