"""The interactive lemma graph: one self-contained offline HTML page (``symabsorb graph -o graph.html``)
and the graph section of HTML report pages.

Everything is inline (SVG, CSS, a small script; no network, no CDN). Pan with the mouse or the arrow
keys, zoom with the wheel or ``+``/``-``; a click on a result opens its statement in the side panel;
*focus* shows only a result's ancestors (what it builds on), descendants (what builds on it) or both,
up to a depth, and lives in the URL (``#focus=thm8&dir=ancestors&depth=2``) so a view can be linked.

Every string from a lemma file (ids, labels, titles, statements) is untrusted: it reaches the page
through ``html_text``/``html_math`` only, and the JSON in ``<script>`` escapes ``<``, ``>``, ``&`` and
U+2028/U+2029, so no id can close the script element. Notebook fragments (no script allowed) keep the
static figure of :mod:`symabsorb.report.svggraph`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from .. import __version__
from ..answer.types import Report
from ..theory.derivation import NodeState
from ..theory.library import Library
from .common import citation_text, shown_source, text_pieces, used_graph
from .escape import html_math
from .escape import html_text as escape
from .svggraph import draw_graph, is_open_problem, legend_svg

__all__ = ["graph_page", "graph_widget", "report_graph_widget", "script_json"]

WIDGET_CSS = """
.lg{display:flex;flex-direction:column;border:1px solid #d0d5dd;border-radius:8px;background:#fff;min-height:0}
.lg-bar{display:flex;flex-wrap:wrap;gap:.4rem .8rem;align-items:center;padding:.4rem .6rem;border-bottom:1px solid #eaecf0;
font-size:.9rem}
.lg-bar button,.lg-bar select,.lg-info button{font:inherit;font-size:.85rem;padding:.1rem .45rem;border:1px solid #98a2b3;
border-radius:5px;background:#f9fafb;cursor:pointer}
.lg-status{color:#475467}
.lg-main{display:flex;flex:1;min-height:0}
.lg-view{flex:1;min-width:0;position:relative;overflow:hidden;cursor:grab;touch-action:none}
.lg-view.lg-dragging{cursor:grabbing}
.lg .lemma-graph{width:100%;height:100%;display:block;user-select:none}
.lg-node{cursor:pointer}
.lg-node:focus{outline:none}.lg-node:focus rect{stroke-width:3.5}
.lg-hidden{display:none}
.lg-embed{height:36rem;margin:.6rem 0}
.lg-selected rect{stroke:#101828;stroke-width:3.5}
.lg-focus rect{filter:drop-shadow(0 0 4px #f79009)}
.lg-panel{width:22rem;max-width:45%;border-left:1px solid #eaecf0;padding:.6rem .8rem;overflow:auto;font-size:.92rem}
.lg-panel h3{margin:.1rem 0 .3rem;font-size:1.05rem}
.lg-meta{color:#475467;font-size:.85rem;margin:.2rem 0}
.lg-info ul{padding-left:1.1rem;margin:.2rem 0}
.lg-info .lg-links button{margin:.1rem .15rem .1rem 0}
.lg-open-note{background:#f2f4f7;border-left:3px solid #98a2b3;padding:.2rem .5rem}
"""

PAGE_CSS = """
html,body{height:100%;margin:0}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1b1b;display:flex;flex-direction:column}
header{padding:.5rem 1rem;border-bottom:1px solid #ddd}header h1{font-size:1.2rem;margin:0}
header p{margin:.2rem 0;font-size:.9rem;color:#475467}
.lg-page{flex:1;display:flex;min-height:0;padding:.5rem;gap:.5rem}
.lg-page .lg{flex:1}
.lg-legend{align-self:flex-start}
"""

# The script: no string from a lemma file is interpolated into it; it reads the JSON data element.
SCRIPT = r"""
(function () {
  "use strict";
  var root = document.currentScript.parentNode;
  var data = JSON.parse(root.querySelector("script.lg-data").textContent);
  var ids = data.ids, n = ids.length, up = [], down = [], index = {};
  for (var i = 0; i < n; i++) { up.push([]); down.push([]); index[ids[i]] = i; }
  data.edges.forEach(function (e) { down[e[0]].push(e[1]); up[e[1]].push(e[0]); });
  var svg = root.querySelector("svg.lemma-graph"), view = root.querySelector(".lg-view");
  var nodeEls = [], edgeEls = Array.prototype.slice.call(svg.querySelectorAll(".lg-edge"));
  svg.querySelectorAll(".lg-node").forEach(function (el) { nodeEls[+el.getAttribute("data-i")] = el; });
  var infos = [];
  root.querySelectorAll(".lg-info").forEach(function (el) { infos[+el.getAttribute("data-i")] = el; });
  var status = root.querySelector(".lg-status"), dirSel = root.querySelector("select.lg-dir");
  var depthSel = root.querySelector("select.lg-depth"), none = root.querySelector(".lg-none");
  var W = +svg.getAttribute("data-width"), H = +svg.getAttribute("data-height");
  var vb = {x: 0, y: 0, w: W, h: H}, selected = -1, focused = -1;

  function setBox() {
    svg.setAttribute("viewBox", [vb.x, vb.y, vb.w, vb.h].map(function (v) { return v.toFixed(1); }).join(" "));
  }
  function aspect() { var r = svg.getBoundingClientRect(); return r.width > 0 && r.height > 0 ? r.width / r.height : W / H; }
  function fit(box) {
    var pad = 16, w = Math.max(box.w + 2 * pad, 480), h = Math.max(box.h + 2 * pad, 240), a = aspect();
    if (w / h < a) { w = h * a; } else { h = w / a; }
    vb = {x: box.x + box.w / 2 - w / 2, y: box.y + box.h / 2 - h / 2, w: w, h: h};
    setBox();
  }
  function visibleBox() {
    var x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    nodeEls.forEach(function (el) {
      if (el.classList.contains("lg-hidden")) return;
      var r = el.querySelector("rect");
      var x = +r.getAttribute("x"), y = +r.getAttribute("y"), w = +r.getAttribute("width"), h = +r.getAttribute("height");
      x0 = Math.min(x0, x); y0 = Math.min(y0, y); x1 = Math.max(x1, x + w); y1 = Math.max(y1, y + h);
    });
    return x0 === Infinity ? {x: 0, y: 0, w: W, h: H} : {x: x0, y: y0, w: x1 - x0, h: y1 - y0};
  }
  function zoom(f, cx, cy) {
    if (cx === undefined) { cx = vb.x + vb.w / 2; cy = vb.y + vb.h / 2; }
    var w = Math.min(Math.max(vb.w * f, 40), 20 * Math.max(W, H));
    var k = w / vb.w;
    vb = {x: cx - (cx - vb.x) * k, y: cy - (cy - vb.y) * k, w: w, h: vb.h * k};
    setBox();
  }
  function toSvg(clientX, clientY) {
    var r = svg.getBoundingClientRect();
    return {x: vb.x + (clientX - r.left) / r.width * vb.w, y: vb.y + (clientY - r.top) / r.height * vb.h};
  }

  function select(i) {
    selected = i;
    nodeEls.forEach(function (el, k) { el.classList.toggle("lg-selected", k === i); });
    infos.forEach(function (el, k) { el.hidden = k !== i; });
    if (none) none.hidden = i >= 0;
  }
  function reach(start, dir, depth) {
    var seen = {}, frontier = [start], d = 0;
    seen[start] = true;
    while (frontier.length && d < depth) {
      var next = [];
      frontier.forEach(function (v) {
        var nb = dir === "ancestors" ? up[v] : dir === "descendants" ? down[v] : up[v].concat(down[v]);
        nb.forEach(function (w) { if (!seen[w]) { seen[w] = true; next.push(w); } });
      });
      frontier = next; d += 1;
    }
    return seen;
  }
  function parseHash() {
    var p = new URLSearchParams(location.hash.replace(/^#/, ""));
    var dir = p.get("dir"), depth = p.get("depth");
    if (["ancestors", "descendants", "both"].indexOf(dir) < 0) dir = "ancestors";
    var k = parseInt(depth || "", 10);
    return {focus: p.get("focus"), dir: dir, depth: k >= 1 ? String(k) : "all"};
  }
  function apply() {
    var s = parseHash();
    dirSel.value = s.dir;
    if (!Array.prototype.some.call(depthSel.options, function (o) { return o.value === s.depth; })) {
      var o = document.createElement("option"); o.value = s.depth; o.textContent = s.depth; depthSel.appendChild(o);
    }
    depthSel.value = s.depth;
    var i = s.focus !== null && Object.prototype.hasOwnProperty.call(index, s.focus) ? index[s.focus] : -1;
    var keep = null;
    if (i >= 0) { keep = reach(i, s.dir, s.depth === "all" ? Infinity : +s.depth); }
    var shown = 0;
    nodeEls.forEach(function (el, k) {
      var on = keep === null || keep[k] === true;
      el.classList.toggle("lg-hidden", !on);
      el.classList.toggle("lg-focus", k === i);
      if (on) shown += 1;
    });
    edgeEls.forEach(function (el) {
      var u = +el.getAttribute("data-u"), v = +el.getAttribute("data-v");
      el.classList.toggle("lg-hidden", keep !== null && !(keep[u] && keep[v]));
    });
    focused = i;
    root.setAttribute("data-focus", i >= 0 ? ids[i] : "");
    root.setAttribute("data-shown", String(shown));
    if (i >= 0) {
      status.textContent = "Showing " + shown + " of " + n + ": the " + (s.dir === "both" ? "ancestors and descendants" : s.dir) +
        " of " + nodeEls[i].querySelector("text").textContent + (s.depth === "all" ? "" : ", depth " + s.depth) + ".";
      select(i);
    } else {
      status.textContent = s.focus !== null ? "No result " + JSON.stringify(s.focus) + " here; showing all " + n + "." :
        "All " + n + " results. Click one for its statement.";
    }
    fit(visibleBox());
  }
  function setFocus(i, dir) {
    var depth = depthSel.value;
    var h = "focus=" + encodeURIComponent(ids[i]) + "&dir=" + (dir || dirSel.value) + "&depth=" + depth;
    if (location.hash.replace(/^#/, "") === h) { apply(); } else { location.hash = h; }
  }
  function clearFocus() {
    if (history.replaceState) { history.replaceState(null, "", location.pathname + location.search); }
    else { location.hash = ""; }
    apply();
  }

  var drag = null, moved = false;
  view.addEventListener("pointerdown", function (e) {
    if (e.button !== 0) return;
    drag = {x: e.clientX, y: e.clientY, vx: vb.x, vy: vb.y}; moved = false;
  });
  window.addEventListener("pointermove", function (e) {
    if (!drag) return;
    var r = svg.getBoundingClientRect(), dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (!moved && Math.abs(dx) + Math.abs(dy) < 4) return;
    moved = true; view.classList.add("lg-dragging");
    vb.x = drag.vx - dx / r.width * vb.w; vb.y = drag.vy - dy / r.height * vb.h; setBox();
  });
  window.addEventListener("pointerup", function () { drag = null; view.classList.remove("lg-dragging"); });
  view.addEventListener("wheel", function (e) {
    e.preventDefault();
    var p = toSvg(e.clientX, e.clientY);
    zoom(e.deltaY < 0 ? 1 / 1.15 : 1.15, p.x, p.y);
  }, {passive: false});
  nodeEls.forEach(function (el, k) {
    el.addEventListener("click", function () { if (!moved) select(k); });
    el.addEventListener("dblclick", function () { setFocus(k); });
    el.addEventListener("keydown", function (e) {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); select(k); }
      if (e.key === "f") { setFocus(k); }
    });
  });
  view.addEventListener("keydown", function (e) {
    var step = 0.1;
    if (e.key === "+" || e.key === "=") zoom(1 / 1.2);
    else if (e.key === "-") zoom(1.2);
    else if (e.key === "ArrowLeft") { vb.x -= vb.w * step; setBox(); }
    else if (e.key === "ArrowRight") { vb.x += vb.w * step; setBox(); }
    else if (e.key === "ArrowUp") { vb.y -= vb.h * step; setBox(); }
    else if (e.key === "ArrowDown") { vb.y += vb.h * step; setBox(); }
    else return;
    e.preventDefault();
  });
  root.addEventListener("click", function (e) {
    var t = e.target.closest ? e.target.closest("[data-act],[data-goto]") : null;
    if (!t || !root.contains(t)) return;
    var act = t.getAttribute("data-act");
    if (t.hasAttribute("data-goto")) { var k = +t.getAttribute("data-goto"); select(k); if (focused >= 0) setFocus(k); }
    else if (act === "zoom-in") zoom(1 / 1.25);
    else if (act === "zoom-out") zoom(1.25);
    else if (act === "fit") fit(visibleBox());
    else if (act === "clear") clearFocus();
    else if (act === "focus" && selected >= 0) setFocus(selected);
    else if (act === "ancestors" || act === "descendants" || act === "both") { if (selected >= 0) setFocus(selected, act); }
  });
  dirSel.addEventListener("change", function () { if (focused >= 0) setFocus(focused); });
  depthSel.addEventListener("change", function () { if (focused >= 0) setFocus(focused); });
  function applyAndShow() { apply(); if (focused >= 0 && root.scrollIntoView) root.scrollIntoView({block: "nearest"}); }
  window.addEventListener("hashchange", applyAndShow);
  window.addEventListener("resize", function () { fit(visibleBox()); });
  root.setAttribute("data-ready", "yes");
  applyAndShow();
})();
"""


def script_json(value: object) -> str:
    """JSON safe inside ``<script>``: ``<``, ``>``, ``&`` and U+2028/U+2029 as ``\\u`` escapes."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    for ch, rep in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, rep)
    return text


def _text(text: str, library: Library, index: Mapping[str, int]) -> str:
    out = []
    for kind, value in text_pieces(text, library):
        if kind == "cite":
            label = escape(library.results[value].label)
            out.append(f'<button type="button" data-goto="{index[value]}">{label}</button>' if value in index else label)
        elif kind == "math":
            out.append(html_math(value))
        elif kind == "code":
            out.append(f"<code>{escape(value)}</code>")
        else:
            out.append(escape(value))
    return "".join(out)


def _info(library: Library, rid: str, i: int, state: NodeState, index: Mapping[str, int],
          uses: Sequence[str], used_by: Sequence[str], link_refs: bool) -> str:
    r = library.results[rid]

    def links(ids: Sequence[str]) -> str:
        if not ids:
            return "none"
        return "".join(f'<button type="button" data-goto="{index[u]}">{escape(library.results[u].label)}</button>'
                       for u in ids)

    c = r.conclusion
    verdict = escape(c.verdict) + (f" ({escape(c.scope)})" if c.scope else "")
    here = state.value
    if is_open_problem(r) and state in (NodeState.APPLIED, NodeState.APPLICABLE):
        here += " (the answer it gives is open)"
    parts = [f'<div class="lg-info" data-i="{i}" hidden><h3>{escape(r.label)}: {escape(r.title)}</h3>',
             f'<p class="lg-meta">{escape(r.kind)} · {escape(shown_source(r))} · {escape(citation_text(r))}</p>',
             f'<p class="lg-meta">id <code>{escape(rid)}</code> · here: <strong>{escape(here)}</strong></p>']
    if is_open_problem(r):
        note = "An open problem: when it decides a query, the answer is “open”; it is not solved."
        parts.append(f'<p class="lg-open-note">{note}</p>')
    parts.append(f"<p>{_text(r.statement, library, index)}</p>")
    if r.hypotheses:
        parts.append("<p class=\"lg-meta\">Hypotheses:</p><ul>" + "".join(
            f"<li><code>{escape(h.name)}</code>"
            + (" " + escape(", ".join(f"{k} = {v}" for k, v in h.params)) if h.params else "") + "</li>"
            for h in r.hypotheses) + "</ul>")
    parts.append(f'<p class="lg-meta">Conclusion: {verdict}</p>')
    parts.append(f'<p class="lg-links">Uses: {links(uses)}</p><p class="lg-links">Used by: {links(used_by)}</p>')
    parts.append('<p><button type="button" data-act="ancestors">Focus ancestors</button> '
                 '<button type="button" data-act="descendants">Focus descendants</button> '
                 '<button type="button" data-act="both">Both</button></p>')
    if link_refs:
        parts.append(f'<p><a href="#ref-{escape(rid)}">The reference in this report</a></p>')
    parts.append("</div>")
    return "".join(parts)


def graph_widget(library: Library, nodes: Sequence[str], edges: Sequence[tuple[str, str]],
                 states: Mapping[str, NodeState], *, link_refs: bool = False, embed: bool = False,
                 by_status: bool = False) -> str:
    """The interactive graph of ``nodes``/``edges`` as one ``<div class="lg">`` (its CSS, data and script inline)."""
    nodes = sorted(nodes)
    index = {rid: i for i, rid in enumerate(nodes)}
    edges = sorted((u, v) for u, v in edges if u in index and v in index)
    uses: dict[str, list[str]] = {rid: [] for rid in nodes}
    used_by: dict[str, list[str]] = {rid: [] for rid in nodes}
    for u, v in edges:
        uses[v].append(u)
        used_by[u].append(v)
    svg = draw_graph(library, nodes, edges, states, link_refs=False, interactive=True, by_status=by_status)
    infos = "".join(_info(library, rid, index[rid], states.get(rid, NodeState.NOT_TRIED), index, uses[rid],
                          used_by[rid], link_refs) for rid in nodes)
    data = script_json({"ids": nodes, "edges": [[index[u], index[v]] for u, v in edges]})
    depth_options = "".join(f'<option value="{d}"{" selected" if d == "all" else ""}>{d}</option>'
                            for d in ("1", "2", "3", "4", "all"))
    bar = ('<div class="lg-bar"><span>Focus on the selected result:</span>'
           '<select class="lg-dir" aria-label="direction"><option value="ancestors">ancestors (what it uses)</option>'
           '<option value="descendants">descendants (what uses it)</option><option value="both">both</option></select>'
           f'<label>depth <select class="lg-depth" aria-label="depth">{depth_options}</select></label>'
           '<button type="button" data-act="focus">Focus</button><button type="button" data-act="clear">Show all</button>'
           '<button type="button" data-act="fit">Fit</button><button type="button" data-act="zoom-in" '
           'aria-label="zoom in">+</button><button type="button" data-act="zoom-out" aria-label="zoom out">−</button>'
           '<span class="lg-status" role="status"></span></div>')
    return (f'<div class="lg{" lg-embed" if embed else ""}"><style>{WIDGET_CSS}</style>{bar}<div class="lg-main">'
            f'<div class="lg-view" tabindex="0" aria-label="lemma graph: drag to pan, wheel to zoom">{svg}</div>'
            '<div class="lg-panel"><p class="lg-none">Click a result for its statement; double-click (or '
            '<kbd>f</kbd>) to focus on it. Drag to pan, wheel to zoom.</p>'
            f'{infos}</div></div><script type="application/json" class="lg-data">{data}</script>'
            f"<script>{SCRIPT}</script></div>")


def report_graph_widget(report: Report) -> str:
    """The graph section's figure for an HTML report page: the results the queries used, interactive."""
    nodes, edges = used_graph(report)
    return graph_widget(report.library, nodes, edges, report.node_states(), link_refs=True,
                        embed=True)


def graph_page(library: Library, states: Mapping[str, NodeState] | None = None, title: str = "symabsorb lemma graph",
               subtitle: str = "") -> str:
    """The whole library's lemma graph as one self-contained offline HTML page."""
    by_status = not states  # the library alone: each result coloured by what is known of it, as a blueprint
    states = states or {}
    nodes = sorted(library.results)
    edges = sorted(library.graph.edges)
    sub = escape(subtitle) if subtitle else (f"{len(nodes)} results, {len(edges)} uses")
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">'
            f"<title>{escape(title)}</title><style>{PAGE_CSS}</style></head><body>"
            f"<header><h1>{escape(title)}</h1><p>{sub} · symabsorb {escape(__version__)} · an arrow runs from a "
            "result to one that uses it. Focus is in the address (<code>#focus=ID&amp;dir=ancestors&amp;depth=2</code>)"
            " so a view can be linked.</p></header>"
            f'<div class="lg-page">{graph_widget(library, nodes, edges, states, by_status=by_status)}'
            f'<div class="lg-legend">{legend_svg(by_status)}</div></div></body></html>\n')
