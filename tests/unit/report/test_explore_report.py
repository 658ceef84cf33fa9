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


def test_atlas_says_expressions_and_values_in_spec_syntax(tmp_path: Path) -> None:
    """Issue 28 row 12 (leftover): the atlas's expressions and its fact texts are written as a spec
    writes them (`max(0, z)`, `abs(z)`, `z^2`, the number `e`), never SymPy's `Max(0, z)`, `Abs(z)`,
    `z**2`, `E`; one printer (the model layer's) for explore and the reports."""
    import json
    import re

    from symabsorb.model.spectext import spec_expr
    from symabsorb.report.plainmath import plain_expr

    assert plain_expr is spec_expr
    spec = tmp_path / "s.absorb"
    spec.write_text("space s = { primitives: [relu, exp, abs], constants: [1/2, 2], size: 3 }\n", encoding="utf-8")
    exploration = symabsorb.api.explore(spec, results=tmp_path / "r", evidence=False, stacks=False,
                                        executor=symabsorb.api.executor(in_process=True))
    records = [json.loads(line) for line in (tmp_path / "r" / "cases.jsonl").read_text(encoding="utf-8").splitlines()
               if '"expr"' in line]
    exprs = {r["expr"] for r in records if "expr" in r}
    assert {"max(0, z)", "abs(z)", "exp(max(0, z))"} <= exprs, exprs
    sympy_spelling = re.compile(r"\bMax\(|\bAbs\(|[\w)]\*\*[\w(]|= E\b")  # Markdown bold is not a power
    for fmt in ("md", "html", "json"):
        out = exploration.render(fmt)
        assert not sympy_spelling.search(out), (fmt, sympy_spelling.search(out))
        assert "g(0) = e ≠ 0" in out, fmt  # the gate exp(relu(z)) at 0: the number e as the spec writes it
    assert any(c.expr == "exp(max(0, z))" for s in exploration.atlas.spaces for c in s.open_cases)


def test_no_evidence_on_the_command_line_skips_the_stack_search_too(tmp_path: Path) -> None:
    """`explore --no-evidence` ran the depth-2 ReLU/GELU evidence search anyway (69 s for a new user) and then
    listed evidence settings; it is an evidence search, so it is skipped unless --stacks asks for it."""
    from tests.helpers import run_cli

    spec = tmp_path / "s.absorb"
    spec.write_text("space s = { primitives: [abs], size: 1 }\n", encoding="utf-8")
    code, _, err, _ = run_cli("explore", str(spec), "--no-evidence", "--in-process", "--results", str(tmp_path / "r"))
    assert code == 0, err
    atlas = (tmp_path / "r" / "atlas.md").read_text(encoding="utf-8")
    assert "depth-2 stacks" not in atlas and "evidence sizes" not in atlas and "not run (--no-evidence)" in atlas
