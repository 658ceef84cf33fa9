"""The ``symabsorb scan`` table: in the terminal (width aware: a label is shortened in the middle of
its path, never in its layer, and never so that two rows read the same) and as a file
(``scan ... -o table.md|.tex|.csv``), every user string escaped for its format."""

from __future__ import annotations

import csv
import io
import math
import textwrap
from collections.abc import Sequence
from typing import Any

from ..untrusted import nfc_twins, visible
from .escape import latex_text, markdown_text, terminal_text
from .formats import RENDERERS, RenderOptions, renderer

__all__ = ["LEGEND", "render_scan_table", "scan_csv", "scan_latex", "scan_markdown", "scan_rows", "scan_table"]

#: what the distance and bare columns mean (printed under every table)
LEGEND = ("distance: the certified lower bound on min_S ‖W_down[:,S] W_up[S,:] − T‖_F (for a post-LN layer "
          "‖P W_down[:,S] W_up[S,:] − T‖_F, P = I − 11ᵀ/d: the question Lemma PN reduces it to), T the criterion's "
          "target for the layer as used (from its certificate, checked in exact arithmetic); dist/√d: that "
          "bound divided by √d; —: absorbable, or no certificate. bare: the verdict for the bare block of "
          "the paper's question, x ↦ x + W_down σ(W_up x) with the same tensors and activation but no biases "
          "and no normalisation (=: the layer as used is bare); bare dist.: the same certified bound for the "
          "bare block's criterion")
#: a layer that was not decided: its reason is on its ``skipped`` line (said once)
_FAILED_NOTE = "not decided: the reason is on its `skipped` line"


def _result_label(rid: str, record: dict[str, Any] | None = None) -> str:
    """The label ``prove`` shows (``Lemma PN``), not the id; a user's result (``--theorems``) by the label
    its record carries, with its source (``My lemma (user)``), as ``prove`` shows it."""
    from ..theory.library import default_library

    results = default_library().results
    if rid in results:
        return results[rid].label
    if record is not None and record.get("decided_by") == rid and isinstance(record.get("decided_by_label"), str):
        source = record.get("decided_by_source")
        return visible(str(record["decided_by_label"])) + (f" ({visible(str(source))})" if source else "")
    return rid


def _distance(r: dict[str, Any]) -> float | None:
    if r.get("verdict") == "absorbable":
        return None
    cert = r.get("certificate")
    value = cert.get("distance_lower_bound") if isinstance(cert, dict) else None
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def _bare_cells(r: dict[str, Any]) -> tuple[str, str, str]:
    """The bare block's verdict, result label and certified distance (``=`` when the layer as used is
    bare, ``—`` when the layer was not decided)."""
    if r.get("status", "done") != "done":
        return "—", "—", "—"
    bare = r.get("bare")
    if not isinstance(bare, dict):
        return "=", "=", "="
    dist = _distance(bare)
    rid = bare.get("decided_by")
    return (str(bare.get("verdict", "open")), _result_label(str(rid), bare) if rid else "—",
            "—" if dist is None else f"{dist:.4g}")


def _bare_note(r: dict[str, Any]) -> str:
    bare = r.get("bare")
    if isinstance(bare, dict) and bare.get("status", "done") != "done":
        return "bare block not decided: " + str(bare.get("error") or bare.get("status"))
    return ""


def scan_rows(records: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    """One row of strings per layer: path, layer, activation, norm, d, m, verdict, decided by (a
    label), distance, dist/√d, the bare block's verdict, label and distance, CPU time, and a note
    when there is one (a failed layer's reason is on its ``skipped`` line, not repeated here)."""
    rows = []
    labels = [str(r.get("label", "")) for r in records]
    # two labels that read alike (differing only in how a character is composed, Unicode NFC) are
    # shown with every non-ASCII character escaped, and say so; invisible characters always are
    twins = {i for group in nfc_twins(labels) for i in group}
    for i, r in enumerate(records):
        dist = _distance(r)
        d = r.get("d")
        rel = dist / math.sqrt(d) if dist is not None and isinstance(d, int) and d > 0 else None
        label = labels[i]
        layer = str(r.get("layer") or "(top level)")
        path = label[:-len(layer) - 1] if label.endswith(":" + layer) else label
        rid = r.get("decided_by")
        failed = r.get("status", "done") != "done"
        notes = [_FAILED_NOTE if failed else visible(str(r.get("norm_note") or "")), visible(_bare_note(r))]
        if i in twins:
            notes.insert(0, "this label reads like another row's (equal after Unicode NFC normalisation): its "
                         "non-ASCII characters are shown escaped")
        rows.append({"path": visible(path, i in twins), "layer": visible(layer, i in twins),
                     "activation": str(r.get("activation") or "?"),
                     "norm": str(r.get("norm") or "?"), "d": str(r.get("d", "?")), "m": str(r.get("m", "?")),
                     "verdict": str(r.get("verdict", "open")),
                     "decided by": _result_label(str(rid), r) if rid else "—",
                     "distance": "—" if dist is None else f"{dist:.4g}",
                     "dist/√d": "—" if rel is None else f"{rel:.3g}",
                     **dict(zip(("bare", "bare by", "bare dist."), _bare_cells(r), strict=True)),
                     "cpu": f"{r['cpu_s']:.2f} s" if isinstance(r.get("cpu_s"), (int, float)) else "—",
                     "note": "; ".join(n for n in notes if n)})
    return rows


def _shorten(path: str, room: int) -> str:
    """``path`` in at most ``room`` characters if it can be: its middle folders left out
    (``models--org--name/…/model.safetensors``: the model folder and the file name kept), never a
    name cut; the shortest such form when none fits."""
    parts = path.split("/")
    if len(path) <= room or len(parts) <= 2:
        return path
    for keep in range(len(parts) - 2, 0, -1):  # the first folders and the file name, fewer and fewer
        short = "/".join([*parts[:keep], "…", parts[-1]])
        if len(short) <= room:
            return short
    return "/".join([parts[0], "…", parts[-1]])


_TERMINAL_COLUMNS = ("act", "norm", "d", "m", "verdict", "decided by", "distance", "dist/√d", "bare",
                     "bare dist.")
_FIELD = {"act": "activation"}
#: the columns' usual widths (the table reads the same from one scan to the next; wider when needed)
_MIN_WIDTH = {"act": 8, "norm": 8, "d": 5, "m": 6, "verdict": 14, "decided by": 12}
_RIGHT = {"d", "m", "distance", "dist/√d", "bare dist."}


def scan_table(records: Sequence[dict[str, Any]], skipped: Sequence[tuple[str, str]], width: int = 100) -> str:
    """``symabsorb scan`` in the terminal: one line per layer, nothing truncated but the middle of a
    long path when the line would be wider than ``width`` (and only when the rows stay distinct),
    then a legend, then the files skipped with the reason."""
    rows = scan_rows(records)
    widths = {c: max([len(c), _MIN_WIDTH.get(c, 0), *(len(row[_FIELD.get(c, c)]) for row in rows)])
              for c in _TERMINAL_COLUMNS}
    others = sum(widths.values()) + len(widths)
    full = [f"{row['path']}:{row['layer']}" for row in rows]
    labels = full
    longest = max([len("file:layer"), *(len(x) for x in full)])
    if others + longest > width:
        room = max(len("file:layer"), width - others)
        short = [f"{_shorten(row['path'], room - len(row['layer']) - 1)}:{row['layer']}" for row in rows]
        if len(set(short)) == len(set(full)):  # shortening never makes two rows read the same
            labels = short
    label_w = max([len("file:layer"), *(len(x) for x in labels)])

    def line(label: str, cells: dict[str, str]) -> str:
        out = [label.ljust(label_w)]
        for c in _TERMINAL_COLUMNS:
            out.append(cells[c].rjust(widths[c]) if c in _RIGHT else cells[c].ljust(widths[c]))
        return " ".join(out).rstrip()

    header = line("file:layer", {c: c for c in _TERMINAL_COLUMNS})
    lines = [header, "-" * len(header)]
    for label, row in zip(labels, rows, strict=True):
        lines.append(line(label, {c: row[_FIELD.get(c, c)] for c in _TERMINAL_COLUMNS}))
        if row["note"]:
            lines.append(f"    {row['note']}")
    if rows:
        lines += textwrap.wrap(LEGEND, max(width, 40), break_on_hyphens=False)
    for path, why in _skipped(skipped):
        lines.append(f"skipped {path}: {why}")
    return terminal_text("\n".join(lines)) + "\n"


_FILE_COLUMNS = ("model / file", "layer", "activation", "norm", "d x m", "verdict", "decided by",
                 "certified distance ≥", "dist/√d", "bare verdict", "bare decided by", "bare distance ≥", "CPU time")


def _file_cells(row: dict[str, str]) -> list[str]:
    return [row["path"], row["layer"], row["activation"], row["norm"], f"{row['d']} x {row['m']}", row["verdict"],
            row["decided by"], row["distance"], row["dist/√d"], row["bare"], row["bare by"], row["bare dist."],
            row["cpu"]]


_TEX_HEADER = ("model / file & layer & activation & norm & $d \\times m$ & verdict & decided by & "
               "certified distance $\\ge$ & dist/$\\sqrt{d}$ & bare verdict & bare decided by & "
               "bare distance $\\ge$ & CPU time")
_TEX_LEGEND = ("Certified distance: the certified lower bound on $\\min_S \\|W_{\\mathrm{down}}[:,S]\\,"
               "W_{\\mathrm{up}}[S,:] - T\\|_F$, $T$ the criterion's target for the layer as used (from its "
               "certificate, checked in exact arithmetic); dist/$\\sqrt{d}$: that bound divided by $\\sqrt{d}$; "
               "---: absorbable, or no certificate. Bare: the verdict for the bare block of the paper's question, "
               "$x \\mapsto x + W_{\\mathrm{down}}\\,\\sigma(W_{\\mathrm{up}} x)$ with the same tensors and "
               "activation but no biases and no normalisation (=: the layer as used is bare); bare distance: the "
               "same certified bound for the bare block's criterion.\\par")


def _skipped(skipped: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The skipped files and groups with their names and reasons readable (:func:`visible`); two paths
    that read alike shown with their non-ASCII characters escaped."""
    paths = [str(p) for p, _ in skipped]
    twins = {i for group in nfc_twins(paths) for i in group}
    return [(visible(p, i in twins), visible(str(why))) for i, (p, why) in enumerate(skipped)]


def _tex(text: str) -> str:
    """A cell for LaTeX: :func:`latex_text`, but a character it would print as ``?`` (any it has no
    macro for) written as its ``\\uXXXX`` escape, so two names never print the same."""
    return latex_text("".join(ch if ch == "?" or latex_text(ch) != "?" else visible(ch, True) for ch in text))


def _csv_cell(text: str) -> str:
    """A cell no spreadsheet reads as a formula: one starting with ``= + - @`` (or a tab or carriage
    return) is prefixed with ``'``."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def render_scan_table(records: Sequence[dict[str, Any]], skipped: Sequence[tuple[str, str]], fmt: str) -> str:
    """The scan table as a file in ``fmt``: any format with a ``scan`` renderer (:mod:`.formats`):
    ``md`` (a GitHub table, every cell inert), ``tex`` (a tabular to ``\\input``, every cell escaped)
    or ``csv`` (quoted, formula-injection safe)."""
    return RENDERERS.render("scan", fmt, records, skipped)


@renderer("md", kind="scan")
def scan_markdown(records: Sequence[dict[str, Any]], skipped: Sequence[tuple[str, str]], opts: RenderOptions) -> str:
    rows = scan_rows(records)
    out = ["| " + " | ".join(_FILE_COLUMNS) + " |", "|" + "---|" * len(_FILE_COLUMNS)]
    out += ["| " + " | ".join(markdown_text(c) for c in _file_cells(row)) + " |" for row in rows]
    notes = [f"- {markdown_text(row['path'] + ':' + row['layer'])}: {markdown_text(row['note'])}"
             for row in rows if row["note"]]
    out += ["", markdown_text(LEGEND)] + (["", *notes] if notes else [])
    out += [f"- skipped {markdown_text(path)}: {markdown_text(why)}" for path, why in _skipped(skipped)]
    return "\n".join(out) + "\n"


@renderer("tex", kind="scan")
def scan_latex(records: Sequence[dict[str, Any]], skipped: Sequence[tuple[str, str]], opts: RenderOptions) -> str:
    rows = scan_rows(records)
    columns = "l" * 7 + "r" * 2 + "l" * 2 + "r" * 2
    out = ["% symabsorb scan table: needs \\usepackage{booktabs}",
           "\\begin{tabular}{" + columns + "}", "\\toprule", _TEX_HEADER + " \\\\", "\\midrule"]
    out += [" & ".join(_tex(c) for c in _file_cells(row)) + " \\\\" for row in rows]
    out += ["\\bottomrule", "\\end{tabular}", "", _TEX_LEGEND]
    out += [_tex(f"{row['path']}:{row['layer']}: {row['note']}") + "\\par" for row in rows if row["note"]]
    out += [_tex(f"skipped {path}: {why}") + "\\par" for path, why in _skipped(skipped)]
    return "\n".join(out) + "\n"


@renderer("csv", kind="scan", suffixes=(".csv",))
def scan_csv(records: Sequence[dict[str, Any]], skipped: Sequence[tuple[str, str]], opts: RenderOptions) -> str:
    rows = scan_rows(records)
    buf = io.StringIO()
    writer = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow([*_FILE_COLUMNS, "note"])
    for row in rows:
        writer.writerow([_csv_cell(terminal_text(c)) for c in [*_file_cells(row), row["note"]]])
    return buf.getvalue()
