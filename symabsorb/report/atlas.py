"""The exploration atlas as Markdown, HTML (self-contained, inline SVG) and JSON.

Conjectures are shown with their evidence and are never counted among the decided cases.
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict
from typing import Any

from .. import __version__
from ..explore.atlas import Atlas, FamilyMap, SpaceAtlas
from .escape import html_text as escape  # the one HTML escaper (symabsorb.report.escape)
from .escape import json_safe, markdown_code, markdown_text
from .formats import RENDERERS, RenderOptions, renderer

__all__ = ["ATLAS_SCHEMA_VERSION", "atlas_to_dict", "family_svg", "render_atlas", "render_atlas_html",
           "render_atlas_json", "render_atlas_markdown"]

ATLAS_SCHEMA_VERSION = "1.0"
#: Verdict colours from the Okabe-Ito palette (told apart with every common colour-vision deficiency;
#: "conditional" and "impossible" were two near reds), dark enough for white text.
COLORS = {"impossible": "#c24e00", "conditional": "#0066a6", "absorbable": "#007856", "not-absorbable": "#9c4f86",
          "open": "#5f5f5f"}
_LIST = 25  # open cases listed per group (all are in the JSON)
_FRONTIER = 15


def atlas_to_dict(atlas: Atlas) -> dict[str, Any]:
    return {"schema_version": ATLAS_SCHEMA_VERSION, "tool": {"name": "symabsorb", "version": __version__},
            **asdict(atlas), "conjectures_counted_as_decided": 0}


# ---- the parameter-plane picture --------------------------------------------------------------------


def _sign(text: str) -> str:
    return "<0" if text.startswith("-") else "=0" if text == "0" else ">0"


def family_svg(f: FamilyMap, gated: bool, title: str) -> str:
    """Verdicts over the grid (one square per point), the sign-cell boundaries dashed; a white dot marks
    a point the symbolic split left open, a black cross a point that contradicts its symbolic cell."""
    nx = len(f.axes[0])
    ny = len(f.axes[1]) if len(f.axes) > 1 else 1
    cell = max(8, min(28, 300 // max(nx, ny)))
    left, top = 52, 30
    grid_w, grid_h = nx * cell, ny * cell
    width, height = left + grid_w + 160, top + grid_h + 48
    cell_verdict = {(v, g): verdict for v, g, verdict, _ in f.cells}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
           f'<text x="{left}" y="16" font-weight="bold">{escape(title)}</text>']
    for values, g, verdict, by in f.points:
        if g != gated:
            continue
        i = f.axes[0].index(values[0])
        j = f.axes[1].index(values[1]) if len(values) > 1 else 0
        x, y = left + i * cell, top + (ny - 1 - j) * cell
        tip = ", ".join(f"{p} = {v}" for p, v in zip(f.params, values, strict=True)) + f": {verdict}" + (
            f" ({result_label(by)})" if by else "")
        out.append(f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{COLORS.get(verdict, "#999")}" '
                   f'stroke="#fff" stroke-width="1"><title>{escape(tip)}</title></rect>')
        symbolic = cell_verdict.get((tuple(_sign(v) for v in values), g))
        cx, cy = x + cell / 2, y + cell / 2
        if symbolic == "open" and verdict != "open":
            out.append(f'<circle cx="{cx}" cy="{cy}" r="{cell / 6:.1f}" fill="#fff"/>')
        elif symbolic not in (None, "open") and verdict not in ("open", symbolic):
            r = cell / 3
            out.append(f'<path d="M{cx - r},{cy - r}L{cx + r},{cy + r}M{cx - r},{cy + r}L{cx + r},{cy - r}" '
                       'stroke="#000" stroke-width="2"/>')
    # sign boundaries: between the last negative and the first nonnegative value, and around 0
    for axis, values in enumerate(f.axes[: 2]):
        for k, v in enumerate(values):
            if v == "0" or (k and values[k - 1].startswith("-") and not v.startswith("-")):
                edges = ([k, k + 1] if v == "0" else [k])
                for e in edges:
                    if axis == 0:
                        x = left + e * cell
                        out.append(f'<line x1="{x}" y1="{top}" x2="{x}" y2="{top + grid_h}" stroke="#222" '
                                   'stroke-dasharray="3,2"/>')
                    else:
                        y = top + (ny - e) * cell
                        out.append(f'<line x1="{left}" y1="{y}" x2="{left + grid_w}" y2="{y}" stroke="#222" '
                                   'stroke-dasharray="3,2"/>')
    out.append(f'<text x="{left}" y="{top + grid_h + 14}">{escape(f.axes[0][0])}</text>')
    out.append(f'<text x="{left + grid_w}" y="{top + grid_h + 14}" text-anchor="end">{escape(f.axes[0][-1])}</text>')
    out.append(f'<text x="{left + grid_w / 2}" y="{top + grid_h + 30}" text-anchor="middle" font-style="italic">'
               f"{escape(f.params[0])}</text>")
    if len(f.axes) > 1:
        out.append(f'<text x="{left - 4}" y="{top + grid_h}" text-anchor="end">{escape(f.axes[1][0])}</text>')
        out.append(f'<text x="{left - 4}" y="{top + 10}" text-anchor="end">{escape(f.axes[1][-1])}</text>')
        out.append(f'<text x="{left - 22}" y="{top + grid_h / 2}" text-anchor="middle" font-style="italic">'
                   f"{escape(f.params[1])}</text>")
    lx = left + grid_w + 14
    for k, (verdict, color) in enumerate(COLORS.items()):
        y = top + k * 16
        out.append(f'<rect x="{lx}" y="{y}" width="11" height="11" fill="{color}"/>'
                   f'<text x="{lx + 16}" y="{y + 10}">{escape(verdict)}</text>')
    y = top + len(COLORS) * 16 + 6
    out.append(f'<circle cx="{lx + 5}" cy="{y + 5}" r="3" fill="#fff" stroke="#999"/>'
               f'<text x="{lx + 16}" y="{y + 9}">symbolic cell open</text>')
    out.append(f'<path d="M{lx},{y + 16}L{lx + 10},{y + 26}M{lx},{y + 26}L{lx + 10},{y + 16}" stroke="#000" '
               f'stroke-width="2"/><text x="{lx + 16}" y="{y + 25}">contradicts the cell</text>')
    out.append("</svg>")
    return "".join(out)


# ---- Markdown -----------------------------------------------------------------------------------------


def _md(text: str) -> str:
    """One line, no HTML, no table or emphasis syntax from the data; ``<``, ``>`` and ``&`` as backslash
    escapes (literal characters in CommonMark and GitHub), which read as themselves in the raw file
    and in a renderer alike, where ``&lt;`` shows as an entity in raw text and some viewers."""
    return (markdown_text(text).replace("&lt;", "\\<").replace("&gt;", "\\>").replace("&amp;", "\\&"))


@functools.cache
def _labels() -> dict[str, str]:
    from ..theory.library import default_library

    return {rid: r.label for rid, r in default_library().results.items()}


def result_label(rid: str | None) -> str:
    """A result as readers cite it (``Thm. 10``, not ``thm10``); an id the library does not know as itself."""
    if not rid:
        return "—"
    return _labels().get(rid, rid)


def _code(text: str) -> str:
    return markdown_code(text)


def _evidence_text(c: Any) -> str:
    if c.conjecture is None:
        return "not searched: " + (c.not_searched or "no evidence record")
    ev = c.conjecture
    tag = ("inconclusive (numerical search, not proof)" if ev.get("conjecture") == "inconclusive"
           else "conjecture (evidence, not proof)")
    if ev.get("instance_verdict") == "absorbable":
        tag += "; the sampled weights are absorbable (witness verified exactly)"
    return f"{tag}: {ev.get('statement') or ev.get('error', 'no evidence recorded')}"


def _searched(s: SpaceAtlas) -> str:
    """``12 with a conjecture`` and, when some are, ``, 2 inconclusive``."""
    records = [c.conjecture for c in s.open_cases if c.conjecture]
    unsure = sum(1 for r in records if r.get("conjecture") == "inconclusive")
    return f"{len(records) - unsure} with a conjecture" + (f", {unsure} inconclusive" if unsure else "")


def _not_searched(s: SpaceAtlas) -> list[str]:
    """One sentence per reason why open cases have no evidence: ``12 open cases (9 gated) were not
    searched: ...``."""
    reasons: dict[str, list[bool]] = {}
    for c in s.open_cases:
        if c.conjecture is None:
            reasons.setdefault(c.not_searched or "no evidence record", []).append(c.gated)
    return [f"{len(g)} open case{'s' if len(g) != 1 else ''} ({sum(g)} gated) {'were' if len(g) != 1 else 'was'} "
            f"not searched for absorbing weights: {why}." for why, g in sorted(reasons.items())]


def _space_md(s: SpaceAtlas) -> list[str]:
    out = [f"## Space `{s.name}`", "", "```", s.source, "```", ""]
    if s.enumeration:
        e = s.enumeration
        out += [f"Enumeration up to size {e['size']}: **{e['generated']} candidate expressions** built; "
                f"{e['constant']} constant, {e['structural']} structural duplicates, {e['proved']} proved duplicates "
                f"(exact identity after overlapping enclosures), {len(e['unresolved'])} pairs with overlapping "
                f"enclosures left unmerged (no proof of equality); **{e['survivors']} distinct expressions**, each "
                "classified ungated and gated.", ""]
    decided = sum(r.count for r in s.counts if r.verdict != "open")
    out += [f"{s.cases} cases: {decided} decided, {len(s.open_cases)} open "
            f"({_searched(s)}; conjectures are not decisions). "
            f"CPU time: {s.cpu_s} s.", "", *(x for line in _not_searched(s) for x in (_md(line), "")),
            "### Counts per deciding result", "",
            "| unit | verdict | decided by | cases |", "|---|---|---|---:|"]
    for r in s.counts:
        out.append(f"| {'gated' if r.gated else 'ungated'} | {r.verdict} | {_md(result_label(r.decided_by))} | "
                   f"{r.count} |")
    if s.family is not None:
        f = s.family
        out += ["", "### Verdict regions", "",
                f"![ungated verdicts over the parameter plane](atlas-{s.name}-ungated.svg) "
                f"![gated verdicts](atlas-{s.name}-gated.svg)", "",
                f"Check against the symbolic case split (one classification per sign cell, parameters symbolic): "
                f"{f.agree} grid points agree with their cell, {f.refined} decided where the cell stayed open, "
                f"{f.both_open} open in both, {f.point_open} open where the cell is decided, "
                f"**{len(f.conflicts)} contradictions**.", "", "| cell | unit | verdict | decided by |", "|---|---|---|---|"]
        for signs, gated, verdict, by in f.cells:
            label = ", ".join(f"{p} {sg}" for p, sg in zip(f.params, signs, strict=True))
            out.append(f"| {_md(label)} | {'gated' if gated else 'ungated'} | {verdict} | {_md(result_label(by))} |")
        for point, gated, pv, cv in f.conflicts:
            out.append(f"\nContradiction at {_code(point)} ({'gated' if gated else 'ungated'}): grid {pv}, cell {cv}.")
    out += ["", "### Frontier", "",
            "*Undecided facts*: a result whose only obstacle, in that many open cases, is a fact the engine could "
            "not decide; proving it closes them. *Missing results*: the open cases that share one obstacle profile "
            "(the facts that failed); one new result covering that profile would close them all.", "",
            "| closes | kind | result (verdict) | obstacle | reason (example) | examples |", "|---:|---|---|---|---|---|"]
    for item in s.frontier[:_FRONTIER]:
        out.append(f"| {item.closes} | {item.kind} | {_md(result_label(item.result))} ({item.verdict}) | "
                   f"{_md(item.hypothesis)} | "
                   f"{_md(item.reason)} | {', '.join(_code(x) for x in item.examples[:3])} |")
    if not s.frontier:
        out.append("| 0 | — | — | — | no open case | — |")
    out += ["", "### Open cases, grouped by the hypotheses that failed or stayed undecided", "",
            "Each case is in one group: the facts that block the library's results about activations (facts that "
            "block every open case of that kind are left out)."]
    by_label = {("gated " if c.gated else "") + c.label: c for c in s.open_cases}
    for g in s.groups:
        out += ["", f"#### {g.result}: {_md(g.hypothesis)} ({len(g.cases)} cases)", "", f"Reasons: {_md(g.reason)}.", ""]
        for label in g.cases[:_LIST]:
            c = by_label.get(label)
            out.append(f"- {_code(label)}" + (f" — {_md(_evidence_text(c))}" if c is not None else ""))
        if len(g.cases) > _LIST:
            out.append(f"- … and {len(g.cases) - _LIST} more (all in the JSON atlas)")
    out.append("")
    return out


def _stacks_md(atlas: Atlas) -> list[str]:
    if not atlas.stacks:
        return []
    out = ["## Depth-2 stacks: evidence about the paper's open problem", "",
           "Whether a composition of two ReLU (GELU) residual blocks can equal a composition of two residual-free "
           "blocks of the same width is **open**. Below: the best relative residual the numerical search reached. "
           "This is evidence, not a result; the planted control shows the search finds witnesses that exist.", "",
           "| activation | weights | sizes (d, m): best residual | best | status |", "|---|---|---|---:|---|"]
    for r in atlas.stacks:
        sizes = ", ".join(f"({x['d']}, {x['m']}): {_res(x['best_residual'])}" for x in r.get("sizes", []))
        what = r.get("description") or r.get("error", "")
        out.append(f"| {r['label']} | {_md(what)} | {sizes} | {_res(r.get('best_residual'))} | {r['status']} |")
    return [*out, ""]


def _res(r: float | None) -> str:
    return "—" if r is None else f"{r:.3g}"


@renderer("md", kind="atlas")
def render_atlas_markdown(atlas: Atlas, opts: RenderOptions | None = None) -> str:
    out = [f"# {atlas.title}", "", f"Generated by symabsorb {__version__}. Verdicts come from the prover (exact "
           "steps only); conjectures come from numerical search and are never counted as decided.", ""]
    run = atlas.run
    if run:
        out += ["| run | |", "|---|---|"] + [f"| {_md(str(k))} | {_md(str(v))} |" for k, v in run.items()] + [""]
    for s in atlas.spaces:
        out += _space_md(s)
    out += _stacks_md(atlas)
    return "\n".join(out).rstrip() + "\n"


# ---- HTML ----------------------------------------------------------------------------------------------

CSS = """body{font-family:system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b;
line-height:1.45}table{border-collapse:collapse;margin:.6rem 0}td,th{border:1px solid #ddd;padding:.2rem .5rem;
text-align:left;vertical-align:top}pre{background:#f6f8fa;padding:.8rem}code{font-size:.9em}
.v{display:inline-block;padding:0 .5rem;border-radius:1rem;color:#fff;font-size:.9em}
.figure{display:flex;gap:1rem;flex-wrap:wrap}details>summary{cursor:pointer}"""


def _v(verdict: str) -> str:
    return f'<span class="v" style="background:{COLORS.get(verdict, "#999")}">{escape(verdict)}</span>'


def _space_html(s: SpaceAtlas) -> str:
    parts = [f'<section id="space-{escape(s.name)}"><h2>Space <code>{escape(s.name)}</code></h2>'
             f"<pre>{escape(s.source)}</pre>"]
    if s.enumeration:
        e = s.enumeration
        parts.append(f"<p>Enumeration up to size {e['size']}: <strong>{e['generated']} candidate expressions</strong>; "
                     f"{e['constant']} constant, {e['structural']} structural and {e['proved']} proved duplicates, "
                     f"{len(e['unresolved'])} overlapping pairs left unmerged; <strong>{e['survivors']} distinct "
                     "expressions</strong>, each classified ungated and gated.</p>")
    decided = sum(r.count for r in s.counts if r.verdict != "open")
    parts.append(f"<p>{s.cases} cases: {decided} decided, {len(s.open_cases)} open "
                 f"({_searched(s)}, never counted as decided). "
                 f"CPU time {s.cpu_s} s.</p>" + "".join(f"<p>{escape(line)}</p>" for line in _not_searched(s))
                 + "<h3>Counts per deciding result</h3><table><tr><th>unit</th><th>verdict</th>"
                 "<th>decided by</th><th>cases</th></tr>")
    for r in s.counts:
        parts.append(f"<tr><td>{'gated' if r.gated else 'ungated'}</td><td>{_v(r.verdict)}</td>"
                     f"<td>{escape(result_label(r.decided_by))}</td><td>{r.count}</td></tr>")
    parts.append("</table>")
    if s.family is not None:
        f = s.family
        parts.append('<h3>Verdict regions</h3><div class="figure">'
                     f"{family_svg(f, False, 'ungated σ')}{family_svg(f, True, 'gated g')}</div>"
                     f"<p>Against the symbolic case split: {f.agree} points agree with their sign cell, {f.refined} "
                     f"decided where the cell stayed open, {f.both_open} open in both, {f.point_open} open where the "
                     f"cell is decided, <strong>{len(f.conflicts)} contradictions</strong>.</p>")
    parts.append("<h3>Frontier</h3><p>Undecided facts: proving one closes that many open cases. Missing results: "
                 "the open cases sharing one obstacle profile.</p><table><tr><th>closes</th><th>kind</th>"
                 "<th>result (verdict)</th><th>obstacle</th>"
                 "<th>reason</th><th>examples</th></tr>")
    for item in s.frontier[:_FRONTIER]:
        parts.append(f"<tr><td>{item.closes}</td><td>{escape(item.kind)}</td><td>{escape(result_label(item.result))} "
                     f"({escape(item.verdict)})</td><td>{escape(item.hypothesis)}</td><td>{escape(item.reason)}</td>"
                     f"<td>{', '.join(f'<code>{escape(x)}</code>' for x in item.examples[:3])}</td></tr>")
    parts.append("</table><h3>Open cases by failed or undecided hypothesis</h3>")
    by_label = {("gated " if c.gated else "") + c.label: c for c in s.open_cases}
    for g in s.groups:
        items = "".join(f"<li><code>{escape(lb)}</code>"
                        + (f" — {escape(_evidence_text(by_label[lb]))}" if lb in by_label else "") + "</li>"
                        for lb in g.cases[:_LIST])
        more = f"<li>… and {len(g.cases) - _LIST} more (JSON atlas)</li>" if len(g.cases) > _LIST else ""
        parts.append(f"<details><summary>{escape(g.result)}: {escape(g.hypothesis)} ({len(g.cases)} cases)</summary>"
                     f"<p>Reasons: {escape(g.reason)}.</p><ul>{items}{more}</ul></details>")
    parts.append("</section>")
    return "".join(parts)


@renderer("html", kind="atlas")
def render_atlas_html(atlas: Atlas, opts: RenderOptions | None = None) -> str:
    run = "".join(f"<tr><td>{escape(str(k))}</td><td>{escape(str(v))}</td></tr>" for k, v in atlas.run.items())
    stacks = ""
    if atlas.stacks:
        rows = "".join(f"<tr><td>{escape(r['label'])}</td><td>{escape(r.get('description') or r.get('error', ''))}</td>"
                       "<td>" + escape(", ".join(f"({x['d']}, {x['m']}): {_res(x['best_residual'])}"
                                                 for x in r.get("sizes", [])))
                       + f"</td><td>{_res(r.get('best_residual'))}</td></tr>" for r in atlas.stacks)
        stacks = ("<section id=\"stacks\"><h2>Depth-2 stacks: evidence about the paper's open problem</h2><p>Open "
                  "problem; the residuals are evidence, not a result. The planted control checks that the search "
                  "finds witnesses that exist.</p><table><tr><th>activation</th><th>weights</th><th>sizes</th>"
                  f"<th>best</th></tr>{rows}</table></section>")
    body = "".join(_space_html(s) for s in atlas.spaces)
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(atlas.title)}</title>'
            f"<style>{CSS}</style></head><body><h1>{escape(atlas.title)}</h1><p>Generated by symabsorb "
            f"{escape(__version__)}. Verdicts come from the prover (exact steps only); conjectures come from "
            f"numerical search and are never counted as decided.</p><table>{run}</table>{body}{stacks}</body></html>\n")


@renderer("json", kind="atlas")
def render_atlas_json(atlas: Atlas, opts: RenderOptions | None = None) -> str:
    return json_safe(json.dumps(atlas_to_dict(atlas), indent=1, ensure_ascii=False, sort_keys=True, allow_nan=False)) + "\n"


def render_atlas(atlas: Atlas, fmt: str) -> str:
    """The atlas in ``fmt``, any format with an ``atlas`` renderer (md, html, json);
    :class:`~.formats.UnknownFormat` naming them otherwise (never Markdown in disguise)."""
    return RENDERERS.render("atlas", fmt, atlas)
