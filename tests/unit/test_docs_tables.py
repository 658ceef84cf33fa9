"""The tables in docs/ generated from the registries (``make docs``) are current: a new hypothesis,
procedure, skip kind or output format cannot go undocumented."""

from __future__ import annotations

import importlib.util

from tests.helpers import ROOT


def _tool():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("doctables", ROOT / "tools" / "doctables.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_generated_table_is_current() -> None:
    tool = _tool()
    stale = [p.name for p in sorted((ROOT / "docs").glob("*.md"))
             if tool.regenerate(p.read_text(encoding="utf-8")) != p.read_text(encoding="utf-8")]
    assert stale == [], f"stale generated tables in {stale}: run `make docs`"


def test_every_registry_has_its_table_in_the_docs() -> None:
    tool = _tool()
    text = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md"))
    assert all(f"<!-- generated: {name} -->" in text for name in tool.TABLES)


def test_a_stale_table_is_rewritten() -> None:
    tool = _tool()
    text = "x\n<!-- generated: skip-kinds -->\n| old |\n<!-- end generated -->\ny\n"
    new = tool.regenerate(text)
    assert "| old |" not in new and "`identity`" in new and new.startswith("x\n") and new.endswith("y\n")
