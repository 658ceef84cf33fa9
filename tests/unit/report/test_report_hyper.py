"""Hyper-Connections: the stream dimension d and the block dimension nd have their own symbols, and
M = A ⊗ I_d is stated with the d it means (issue 21, item 2)."""

from __future__ import annotations

import re

import symabsorb

SPEC = ("block h { activation: gelu dim: 4 width: 20 skip: hyper(n: 4, mix: [[1, 1, 0, 0], [0, 1, 0, 0], "
        "[0, 0, 1, 0], [0, 0, 0, 1]]) }\nabsorb h\n")


def test_hyper_connection_dimensions_are_consistent() -> None:
    report = symabsorb.prove(symabsorb.load(SPEC))
    md = report.render("md")
    assert "stream dimension $d = 4$, $n = 4$ streams, block dimension $nd = 16$" in md
    assert "\\otimes I_d" in md and "$nd = 16 \\ge 2$" in md
    assert not re.search(r"\$d = 16", md)  # d is never the total dimension
    text = report.results[0].render("text")
    assert "stream dimension d = 4" in text and "nd = 16" in text and "d = 16" not in text.replace("nd = 16", "")
