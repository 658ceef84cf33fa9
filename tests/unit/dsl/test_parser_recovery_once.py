"""A misspelt statement keyword is one syntax error, not the same error twice (the new user's `absrob b` printed the
same block twice and '2 syntax errors'); the errors after it are still found."""

from __future__ import annotations

import pytest

from symabsorb.dsl.errors import SpecSyntaxError
from symabsorb.dsl.parser import parse_text


def test_a_misspelt_keyword_is_reported_once() -> None:
    with pytest.raises(SpecSyntaxError) as info:
        parse_text("block b { activation: relu dim: 1 width: 1 }\nabsrob b\n", "t.absorb")
    assert str(info.value).count("unexpected `absrob`") == 1


def test_the_errors_after_it_are_still_found() -> None:
    with pytest.raises(SpecSyntaxError) as info:
        parse_text("block b { activation: relu dim: 1 width: 1 }\nabsrob b\nabsorb c c\nblok x {}\n", "t.absorb")
    text = str(info.value)
    assert text.count("unexpected `absrob`") == 1 and "unexpected `c`" in text and "unexpected `blok`" in text
