"""Issue 28 row 12: the explore atlas lists what ran (no evidence settings under --no-evidence), and
its verdict colours are told apart with colour-vision deficiencies (Okabe-Ito, not two near reds)."""

from __future__ import annotations

from pathlib import Path

import symabsorb.api
from symabsorb.report.atlas import COLORS


def test_no_evidence_run_table_lists_what_ran(tmp_path: Path) -> None:
    spec = tmp_path / "s.absorb"
    spec.write_text("space s = { primitives: [abs], size: 1 }\n", encoding="utf-8")
    exploration = symabsorb.api.explore(spec, results=tmp_path / "r", evidence=False, stacks=False,
                                        executor=symabsorb.api.executor(in_process=True))
    run = exploration.atlas.run
    assert run["evidence search"] == "not run (--no-evidence)"
    assert not any(key.startswith(("evidence budget", "evidence sizes", "starts")) for key in run)
    md = exploration.render("md")
    assert "not run (--no-evidence)" in md and "evidence sizes" not in md


def _luminance(color: str) -> float:
    def channel(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def test_verdict_colours_are_distinct_and_readable() -> None:
    assert COLORS["impossible"] != COLORS["conditional"]
    hue = {v: max(range(3), key=lambda i: int(c[1 + 2 * i: 3 + 2 * i], 16)) for v, c in COLORS.items()}
    assert hue["impossible"] != hue["conditional"]  # not two reds
    for color in COLORS.values():  # white text: contrast at least 4.5 (WCAG AA)
        assert (1.05) / (_luminance(color) + 0.05) >= 4.5, color
