"""Frictions of the spec language (issue 21, item 10): commas between block fields, `4d`, a width in a
foreign symbol, the end of the file in English, and several errors per file."""

from __future__ import annotations

import pytest

from symabsorb.dsl.errors import SpecSyntaxError, SpecValueError
from symabsorb.dsl.parser import parse_text
from symabsorb.model import resolve_text


def test_block_fields_accept_commas() -> None:
    with_commas = parse_text("block b { activation: relu, dim: 2, width: 3, skip: identity, }")
    without = parse_text("block b { activation: relu dim: 2 width: 3 skip: identity }")
    assert with_commas == without
    block = resolve_text("block b { activation: leaky_relu(alpha = 1/5), dim: d, width: 4*d }").blocks[0]
    assert str(block.width) == "4*d"


def test_juxtaposed_number_and_name_suggests_a_star() -> None:
    with pytest.raises(SpecSyntaxError) as info:
        parse_text("block b {\n  activation: relu\n  width: 4d\n}", "b.absorb")
    err = info.value
    assert err.span is not None and (err.span.line, err.span.column) == (3, 11)
    assert err.hint == "multiplication is written with `*`: `4*d`"
    with pytest.raises(SpecSyntaxError) as info:
        parse_text("activation f(z) = 2.5z + 1")
    assert info.value.hint == "multiplication is written with `*`: `2.5*z`"
    # a digit inside a name is no juxtaposition: `x2 y` gets the ordinary message
    with pytest.raises(SpecSyntaxError) as info:
        parse_text("activation f(x2) = x2 y")
    assert "multiplication" not in (info.value.hint or "")


@pytest.mark.parametrize("text, message", [
    ("block b { activation: relu  dim: d  width: 4*n }", "expression in the dimension `d`"),
    ("block b { activation: relu  dim: 3  width: 4*n }", "a positive integer"),
    ("block b { activation: relu  width: 2*k }", "expression in the dimension `d`"),
])
def test_width_in_another_symbol_is_an_error(text: str, message: str) -> None:
    with pytest.raises(SpecValueError) as info:
        resolve_text(text, "b.absorb")
    err = info.value
    assert "is not the block's dimension" in err.summary and message in (err.expected or "")
    assert err.span is not None and err.span.line == 1 and text[err.span.column - 1:].startswith(("4*n", "2*k"))


def test_width_in_the_dimension_symbol_or_generic_is_fine() -> None:
    spec = resolve_text("block a { activation: relu  dim: n  width: 2*n + 1 }\n"
                        "block b { activation: relu  width: 4*d }\nblock c { activation: relu  width: m }")
    assert [str(b.width) for b in spec.blocks] == ["2*n + 1", "4*d", "m"]


@pytest.mark.parametrize("text", ["activation f(z) = (z", "block b { activation: relu", "activation f(z; a > "])
def test_end_of_file_reads_as_english(text: str) -> None:
    with pytest.raises(SpecSyntaxError) as info:
        parse_text(text, "eof.absorb")
    assert info.value.summary == "unexpected end of file"
    assert "unexpected the" not in str(info.value)


BROKEN = """activation f(z) = 2z + 1
activation g(z) = z +* 3
block B {
  activation: relu
  width: 4d
}
blok C { activation: relu }
block D { activation: relu dim: 2
absorb D
activation ok(z) = tanh(z)
activation h(z) = (z
"""


def test_several_syntax_errors_each_at_its_exact_position() -> None:
    from symabsorb.dsl.errors import SpecSyntaxErrors

    with pytest.raises(SpecSyntaxErrors) as info:
        parse_text(BROKEN, "broken.absorb")
    err = info.value
    where = [(e.span.line, e.span.column) for e in err.errors if e.span is not None]
    assert where == [(1, 20), (2, 22), (5, 11), (7, 1), (9, 1), (11, 21)]
    assert [e.summary for e in err.errors][-1] == "unexpected end of file"
    assert (err.span, err.summary) == (err.errors[0].span, err.errors[0].summary)  # reads as the first one
    text = str(err.with_source(BROKEN))
    assert text.count("error:") == 6 and text.endswith("6 syntax errors")
    assert " 7 | blok C { activation: relu }" in text and " 11 | activation h(z) = (z" in text


def test_errors_stop_at_twenty() -> None:
    from symabsorb.dsl.errors import SpecSyntaxErrors
    from symabsorb.dsl.parser import MAX_ERRORS

    text = "".join(f"activation f{i}(z) = {i}z\n" for i in range(30))
    with pytest.raises(SpecSyntaxErrors) as info:
        parse_text(text, "many.absorb")
    assert MAX_ERRORS == 20 and len(info.value.errors) == 20 and info.value.truncated
    assert [e.span.line for e in info.value.errors if e.span] == list(range(1, 21))


def test_one_error_is_still_a_plain_syntax_error() -> None:
    from symabsorb.dsl.errors import SpecSyntaxErrors

    with pytest.raises(SpecSyntaxError) as info:
        parse_text("activation f(z) = z +* 1\nactivation g(z) = z\n", "one.absorb")
    assert not isinstance(info.value, SpecSyntaxErrors)
