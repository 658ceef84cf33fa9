"""Any text generated from the grammar itself (hypothesis.extra.lark.from_lark) either parses and
resolves, or raises the project's own error type with a position: 300 examples (the slow tier; the
same property on random and near-miss text runs in every tier, tests/hostile/test_typed_input.py).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from tests.hostile.test_typed_input import GRAMMAR_TEXT, SETTINGS, check_total, shallow_generation


@pytest.mark.slow
@shallow_generation
@settings(SETTINGS, max_examples=300)
@given(GRAMMAR_TEXT)
def test_grammar_generated_text_parses_or_fails_cleanly(text: str) -> None:
    check_total(text)
