"""Inline SVG plots of an activation: σ, its even and odd parts, and its Taylor polynomial near 0.

Needs matplotlib (the ``report`` extra); the SVG is made deterministic (fixed hash salt, no date).
"""

from __future__ import annotations

import io
import re

import sympy as sp

from ..analysis.engine import ActivationFacts
from ..analysis.numeric import NotNumeric, evaluate
from ..model.functions import Z

__all__ = ["activation_svg", "plots_available"]


def plots_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _values(expr: sp.Expr, xs: list[float]) -> list[float]:
    out = []
    for x in xs:
        try:
            out.append(float(evaluate(expr, x, 20)))
        except (NotNumeric, ValueError, ZeroDivisionError):
            out.append(float("nan"))
    return out


def activation_svg(facts: ActivationFacts, anchor: str) -> str | None:
    """An SVG figure (a string) or None when matplotlib is missing or σ has parameters."""
    if not plots_available() or facts.expr.free_symbols - {Z}:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [-4 + 8 * i / 200 for i in range(201)]
    e = facts.expr
    curves = [("σ" if not facts.gated else "g", e, "-", "#1f4e9c"),
              ("even part", (e + e.xreplace({Z: -Z})) / 2, "--", "#2e8b57"),
              ("odd part", (e - e.xreplace({Z: -Z})) / 2, ":", "#b03060")]
    if facts.series.analytic_at_0 and facts.series.coefficients:
        poly = sum((c * Z**k for k, c in enumerate(facts.series.coefficients[:6])), sp.S.Zero)
        curves.append((f"Taylor (order {min(5, len(facts.series.coefficients) - 1)})", poly, "-.", "#999999"))
    with plt.rc_context({"svg.hashsalt": f"symabsorb-{anchor}", "svg.fonttype": "none", "font.size": 9}):
        fig, ax = plt.subplots(figsize=(4.6, 2.9))
        for label, expr, style, color in curves:
            ys = _values(expr, xs)
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
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": "symabsorb"})
        plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    return re.sub(r"<!--.*?-->", "", svg, flags=re.S)
