"""Issue 28 row 14: docs/explore.md's scan section is true to the code: every layout named, no
"identity skip", the options of `symabsorb scan --help` described."""

from __future__ import annotations

from symabsorb.explore.scan import LAYOUTS
from tests.helpers import ROOT, run_cli


def test_the_scan_section_names_every_layout_and_option() -> None:
    text = (ROOT / "docs" / "explore.md").read_text(encoding="utf-8")
    section = text.split("## `symabsorb scan DIR`")[1].split("\n## ")[0]
    assert all(f"`{layout.name}`" in section for layout in LAYOUTS)
    assert "identity skip" not in section and "DIR-scan" not in section
    _code, out, _err, _ = run_cli("scan", "--help")
    for option in ("--activation", "--case-budget", "--json", "-o", "--results", "--workers", "--allow-outside"):
        assert option in out and f"`{option}" in section, option
