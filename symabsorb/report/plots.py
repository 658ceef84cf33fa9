"""Inline SVG plots of an activation: σ, its even and odd parts, and its Taylor polynomial near 0.

Needs matplotlib (the ``report`` extra); the SVG is made deterministic (fixed hash salt, no date).
"""

from __future__ import annotations

import io
import re
from fractions import Fraction
from typing import Any

import sympy as sp

from ..analysis.engine import ActivationFacts
from ..analysis.numeric import plot_values
from ..answer.types import Report
from ..model.functions import Z

__all__ = ["activation_svg", "activation_tikz", "has_taylor_curve", "plots_available", "report_activations"]


def plots_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _grid(n: int) -> list[Fraction]:
    """``n + 1`` exact points from -4 to 4 (breakpoints such as 0 are hit exactly)."""
    return [Fraction(-4) + Fraction(8 * i, n) for i in range(n + 1)]


def _values(expr: sp.Expr, xs: list[Fraction]) -> list[float]:
    return plot_values(expr, xs)


def _figure(facts: ActivationFacts) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid = _grid(200)
    xs = [float(x) for x in grid]
    curves = _curves(facts)
    fig, ax = plt.subplots(figsize=(4.6, 2.9))
    for label, expr, style, color in curves:
        ys = _values(expr, grid)
        if label.startswith("Taylor"):
            ys = [y if abs(x) <= 2 else float("nan") for x, y in zip(xs, ys, strict=True)]
        ax.plot(xs, ys, style, color=color, label=label, linewidth=1.4)
    ax.axhline(0, color="#cccccc", linewidth=0.6)
    ax.axvline(0, color="#cccccc", linewidth=0.6)
    ax.set_xlabel("z")
    ax.set_ylim(-4.5, 4.5)
    ax.legend(loc="upper left", fontsize=7, frameon=False)
    ax.set_title(facts.name, fontsize=9)
    fig.tight_layout()
    return fig


def _plottable(facts: ActivationFacts) -> bool:
    return plots_available() and not (facts.expr.free_symbols - {Z})


def activation_svg(facts: ActivationFacts, anchor: str) -> str | None:
    """An SVG figure (a string) or None when matplotlib is missing or σ has parameters."""
    if not _plottable(facts):
        return None
    import matplotlib.pyplot as plt

    with plt.rc_context({"svg.hashsalt": f"symabsorb-{anchor}", "svg.fonttype": "none", "font.size": 9}):
        fig = _figure(facts)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": "symabsorb"})
        plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    # matplotlib numbers its ids per figure (`figure_1`, `axes_1`): make them this figure's own
    svg = re.sub(r'(\sid=")([^"]+")', rf"\1{anchor}-\2", svg)
    svg = re.sub(r'((?:xlink:)?href="#|url\(#)', rf"\1{anchor}-", svg)
    # matplotlib's `*{...}` rule would restyle every element of a page that embeds the SVG: scope it
    svg = svg.replace("<svg ", f'<svg class="plot-{anchor}" ', 1)
    return svg.replace("*{stroke-linejoin", f".plot-{anchor} *{{stroke-linejoin", 1)


def _curves(facts: ActivationFacts) -> list[tuple[str, sp.Expr, str, str]]:
    e = facts.expr
    curves = [("σ" if not facts.gated else "g", e, "-", "#1f4e9c"),
              ("even part", (e + e.xreplace({Z: -Z})) / 2, "--", "#2e8b57"),
              ("odd part", (e - e.xreplace({Z: -Z})) / 2, ":", "#b03060")]
    if has_taylor_curve(facts):
        poly = sum((c * Z**k for k, c in enumerate(facts.series.coefficients[:6])), sp.S.Zero)
        curves.append((f"Taylor (order {min(5, len(facts.series.coefficients) - 1)})", poly, "-.", "#999999"))
    return curves


_TIKZ_STYLE = {"-": "solid", "--": "dashed", ":": "dotted", "-.": "dashdotted"}
_TIKZ_NAME = {"σ": "$\\sigma$", "g": "$g$"}


def activation_tikz(facts: ActivationFacts) -> str | None:
    """The same figure as a TikZ picture (for LaTeX reports: no extra file, no TeX run to make it),
    or None when σ has parameters. Needs no optional package."""
    if facts.expr.free_symbols - {Z}:
        return None
    grid = _grid(160)
    xs = [float(x) for x in grid]
    sx, sy = 0.85, 0.45  # cm per unit: the picture is 6.8 cm x 4.05 cm
    lines = ["\\begin{tikzpicture}[line width=.8pt]",
             f"\\draw[gray!40,thin] ({-4 * sx:.2f},0) -- ({4 * sx:.2f},0) node[right,black] {{\\small $z$}};",
             f"\\draw[gray!40,thin] (0,{-4.5 * sy:.2f}) -- (0,{4.5 * sy:.2f});",
             f"\\draw[gray!60,thin] ({-4 * sx:.2f},{-4.5 * sy:.2f}) rectangle ({4 * sx:.2f},{4.5 * sy:.2f});"]
    legend = []
    for k, (label, expr, style, color) in enumerate(_curves(facts)):
        ys = _values(expr, grid)
        limit = 2.0 if label.startswith("Taylor") else 4.0
        runs: list[list[str]] = [[]]
        for x, y in zip(xs, ys, strict=True):
            if y == y and abs(y) <= 4.5 and abs(x) <= limit:
                runs[-1].append(f"({x * sx:.3f},{y * sy:.3f})")
            elif runs[-1]:
                runs.append([])
        rgb = ",".join(str(int(color[i:i + 2], 16)) for i in (1, 3, 5))
        for run in runs:
            if len(run) > 1:
                lines.append(f"\\draw[{_TIKZ_STYLE[style]},color={{rgb,255:red,{rgb.split(',')[0]};green,"
                             f"{rgb.split(',')[1]};blue,{rgb.split(',')[2]}}}] " + " -- ".join(run) + ";")
        name = _TIKZ_NAME.get(label, label)
        y0 = 4.5 * sy - 0.3 - 0.38 * k
        legend.append(f"\\draw[{_TIKZ_STYLE[style]},color={{rgb,255:red,{rgb.split(',')[0]};green,"
                      f"{rgb.split(',')[1]};blue,{rgb.split(',')[2]}}}] ({-4 * sx + 0.15:.2f},{y0:.2f}) -- "
                      f"({-4 * sx + 0.75:.2f},{y0:.2f}) node[right,black] {{\\scriptsize {name}}};")
    return "\n".join(lines + legend + ["\\end{tikzpicture}"])


def report_activations(report: Report) -> list[tuple[str, ActivationFacts]]:
    """Every activation a report's queries are about, with its facts, sorted by name."""
    from ..analysis.engine import analyze
    from ..model.activation import Activation, GatedActivation

    seen: dict[str, ActivationFacts] = {}
    for a in report.answers:
        if a.facts is not None:
            seen.setdefault(a.facts.name, a.facts)
        elif a.derivation is not None and a.derivation.activation_expr is not None:
            d = a.derivation
            if d.activation not in seen:
                act = Activation(d.activation, d.activation_expr)
                seen[d.activation] = analyze(GatedActivation(d.activation, act) if d.gated else act)
    return sorted(seen.items())


def has_taylor_curve(facts: ActivationFacts) -> bool:
    """Whether :func:`activation_svg` draws a Taylor polynomial (only for σ analytic at 0)."""
    return bool(facts.series.analytic_at_0 and facts.series.coefficients)
