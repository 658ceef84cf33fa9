"""Any text generated from the grammar itself (hypothesis.extra.lark.from_lark) either parses and
resolves, or raises the project's own error type with a position: 1,000 examples.

Kept in its own file so that `pytest -n 2 --dist loadfile` runs it beside the rest of the suite.
"""

from __future__ import annotations

from hypothesis import given, settings
from test_properties import GRAMMAR_TEXT, SETTINGS, check_total, shallow_generation


@shallow_generation
@settings(SETTINGS, max_examples=1000)
@given(GRAMMAR_TEXT)
def test_grammar_generated_text_parses_or_fails_cleanly(text: str) -> None:
    check_total(text)
