"""The lemma graph as inline SVG, in the style of Lean blueprints: the border says where a result comes
from (paper solid, library dashed), the fill what happened to it in this report. A result whose
conclusion is *open* (an open problem) is always hatched grey, never the green of "applied": that it
answered a query means the answer is "open", not that the problem is solved (its tooltip and the
interactive page's panel say what happened to it).

The layout is a layered DAG drawing (:mod:`symabsorb.report.layout`); the static figure of reports and
the interactive page (:mod:`symabsorb.report.graphpage`) draw the same SVG."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..answer.types import Report
from ..theory.derivation import NodeState
from ..theory.library import Library, Result
from .common import SOURCE_COLORS, STATE_COLORS, STATUS_COLORS, blueprint_status, shown_source, used_graph
from .escape import html_text as escape  # the one HTML escaper (symabsorb.report.escape)
from .layout import Layout, layout_dag

__all__ = ["OPEN_FILL", "OPEN_STROKE", "draw_graph", "graph_layout", "graph_svg", "is_open_problem", "legend_svg",
           "node_fill"]

_H = 34.0
OPEN_FILL = "#eaecf0"
OPEN_STROKE = "#98a2b3"
_HATCH = "lg-open-hatch"


def is_open_problem(r: Result) -> bool:
    """Whether ``r`` states an open problem: its conclusion is the verdict ``open`` (data, not an id)."""
    return r.conclusion.verdict == "open" or r.kind == "open-problem"


def node_fill(r: Result, state: NodeState) -> str:
    """The fill of ``r``'s box: its state's colour, or the open-problem hatch whatever its state."""
    return f"url(#{_HATCH})" if is_open_problem(r) else STATE_COLORS[state]


def _node_width(label: str) -> float:
    return max(64.0, 20.0 + 7.0 * len(label))


def graph_layout(library: Library, nodes: Sequence[str], edges: Sequence[tuple[str, str]]) -> Layout:
    return layout_dag(nodes, edges, {rid: _node_width(library.results[rid].label) for rid in nodes},
                      node_height=_H)


def _curve(points: Sequence[tuple[float, float]]) -> str:
    """A smooth path through ``points``: vertical tangents at every layer, straight through dummies."""
    (x0, y0), rest = points[0], points[1:]
    out = [f"M{x0:.1f},{y0:.1f}"]
    px, py = x0, y0
    for x, y in rest:
        if abs(x - px) < 0.05:
            out.append(f"L{x:.1f},{y:.1f}")
        else:
            my = (py + y) / 2
            out.append(f"C{px:.1f},{my:.1f} {x:.1f},{my:.1f} {x:.1f},{y:.1f}")
        px, py = x, y
    return "".join(out)


def _defs() -> str:
    return ('<defs><marker id="lg-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
            'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#667085"/></marker>'
            f'<pattern id="{_HATCH}" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
            f'<rect width="8" height="8" fill="{OPEN_FILL}"/><line x1="0" y1="0" x2="0" y2="8" stroke="{OPEN_STROKE}" '
            'stroke-width="3"/></pattern></defs>')


def draw_graph(library: Library, nodes: Sequence[str], edges: Sequence[tuple[str, str]],
               states: Mapping[str, NodeState], *, link_refs: bool, interactive: bool = False,
               by_status: bool = False) -> str:
    """The SVG of ``nodes``/``edges``: each node a ``<g class="lg-node" data-i=...>`` (``data-i`` its
    index in ``sorted(nodes)``), each edge a ``<path class="lg-edge" data-u=... data-v=...>``; with
    ``link_refs`` a node links to its entry in the report's references. ``by_status``: each node
    filled by what is known of it (paper, library-proved, user, conjecture; open hatched), as a
    blueprint colours its graph, instead of by what a query did with it."""
    nodes = sorted(nodes)
    index = {rid: i for i, rid in enumerate(nodes)}
    lay = graph_layout(library, nodes, edges)
    w, h = lay.width, lay.height
    size = "" if interactive else f' width="{w:.0f}" height="{h:.0f}"'
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="lemma-graph" role="img" aria-label="lemma graph"'
           f'{size} viewBox="0 0 {w:.1f} {h:.1f}" data-width="{w:.1f}" data-height="{h:.1f}">', _defs(),
           '<g class="lg-edges">']
    for u, v, points in lay.edges:
        out.append(f'<path class="lg-edge" data-u="{index[u]}" data-v="{index[v]}" d="{_curve(points)}" fill="none" '
                   'stroke="#667085" stroke-width="1.3" marker-end="url(#lg-arrow)"/>')
    out.append('</g><g class="lg-nodes">')
    for rid in nodes:
        r = library.results[rid]
        state = states.get(rid, NodeState.NOT_TRIED)
        nw = lay.widths[rid]
        x, y = lay.x[rid] - nw / 2, lay.y[rid]
        opened = is_open_problem(r)
        dash = ' stroke-dasharray="5 3"' if shown_source(r) != "paper" else ""
        what = "open problem; " if opened else ""
        title = f"{r.label}: {r.title} ({shown_source(r)}; {what}{state.value})"
        status = blueprint_status(r)
        fill = node_fill(r, state) if not by_status or opened else STATUS_COLORS[status]
        attrs = (f' class="lg-node" data-i="{index[rid]}" data-state="{escape(state.value)}" '
                 f'data-source="{escape(shown_source(r))}" data-status="{status}" '
                 f'data-open="{"yes" if opened else "no"}"')
        if interactive:
            attrs += f' tabindex="0" role="button" aria-label="{escape(title)}"'
        box = (f'<g{attrs}><title>{escape(title)}</title>'
               f'<rect x="{x:.1f}" y="{y:.1f}" width="{nw:.1f}" height="{_H:.0f}" rx="7" fill="{fill}" '
               f'stroke="{SOURCE_COLORS[shown_source(r)]}" stroke-width="2.2"{dash}/>'
               f'<text x="{x + nw / 2:.1f}" y="{y + _H / 2 + 4:.1f}" text-anchor="middle" font-size="12" '
               f'font-family="sans-serif">{escape(r.label)}</text>')
        box += "</g>"
        out.append(f'<a href="#ref-{escape(rid)}">{box}</a>' if link_refs and not interactive else box)
    out.append("</g></svg>")
    return "".join(out)


def graph_svg(report: Report) -> str:
    """The static lemma graph of a report (the results its queries used), each node linked to its reference."""
    nodes, edges = used_graph(report)
    return draw_graph(report.library, nodes, edges, report.node_states(), link_refs=True)


def legend_svg(by_status: bool = False) -> str:
    items = ([(STATUS_COLORS[s], "#444", "", s) for s in ("paper", "library-proved", "user", "conjecture")]
             if by_status else [(STATE_COLORS[s], "#444", "", s.value) for s in NodeState])
    items += [(f"url(#{_HATCH}-legend)", OPEN_STROKE, "", "open problem (stays open)"),
              ("#ffffff", SOURCE_COLORS["paper"], "", "border: paper"),
              ("#ffffff", SOURCE_COLORS["library"], ' stroke-dasharray="5 3"', "border: library"),
              ("#ffffff", SOURCE_COLORS["user"], ' stroke-dasharray="5 3"', "border: user (--theorems)")]
    height = 22 * len(items) + 8
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="legend" width="230" height="{height}" '
           f'viewBox="0 0 230 {height}" role="img" aria-label="legend">',
           f'<defs><pattern id="{_HATCH}-legend" width="8" height="8" patternUnits="userSpaceOnUse" '
           f'patternTransform="rotate(45)"><rect width="8" height="8" fill="{OPEN_FILL}"/>'
           f'<line x1="0" y1="0" x2="0" y2="8" stroke="{OPEN_STROKE}" stroke-width="3"/></pattern></defs>']
    for i, (fill, stroke, dash, label) in enumerate(items):
        y = 6 + 22 * i
        out.append(f'<rect x="4" y="{y}" width="28" height="16" rx="4" fill="{fill}" stroke="{stroke}" '
                   f'stroke-width="2"{dash}/><text x="40" y="{y + 12}" font-size="12" '
                   f'font-family="sans-serif">{escape(label)}</text>')
    out.append("</svg>")
    return "".join(out)
