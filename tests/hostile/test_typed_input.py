"""Property tests of the language: nothing a user types crashes symabsorb.

Any text generated from the grammar itself, and any random text, either parses (and resolves)
or raises the project's own error type with a position. Formatting is idempotent and parsing
the formatted text gives an equal spec.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import hypothesis.internal.conjecture.data as hypothesis_data
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.lark import from_lark

from symabsorb.dsl.errors import SpecError
from symabsorb.dsl.formatter import format_module
from symabsorb.dsl.parser import grammar_parser, parse_text
from symabsorb.model.resolve import resolve_text

SETTINGS = settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))

_NAMES = st.sampled_from(["z", "x", "relu", "gelu", "silu", "swiglu", "b", "c", "d", "alpha", "tanh", "max", "f", "L"])
GRAMMAR_TEXT = from_lark(grammar_parser(), start="start", explicit={
    "NAME": _NAMES,
    "WS": st.just(" "),
    "COMMENT": st.just("# c\n"),
    "STRING": st.sampled_from(['"a.absorb"', '"w.npz"', '"enc.0"']),
    "INT": st.sampled_from(["0", "1", "2", "3", "12"]),
    "DECIMAL": st.sampled_from(["0.5", "1.25", "2e3", ".5"]),
    "CMPOP": st.sampled_from(["<", "<=", ">", ">="]),
    "CARET": st.sampled_from(["^", "**"]),
    "BOOL": st.sampled_from(["true", "false"]),
})


def shallow_generation(test: Callable[..., None]) -> Callable[..., None]:
    """Run ``test`` with Hypothesis's nesting limit at 40 instead of 100.

    The expression grammar branches more than once per level, so at the default limit most drawn
    texts are abandoned as "max depth exceeded" (about 65 %), which made 2,000 examples take minutes;
    at 40 the texts are as varied (mean length ~40, up to ~150 characters) and five times cheaper.
    """
    @functools.wraps(test)
    def run(*args: object, **kwargs: object) -> None:
        old = hypothesis_data.MAX_DEPTH
        hypothesis_data.MAX_DEPTH = 40
        try:
            test(*args, **kwargs)
        finally:
            hypothesis_data.MAX_DEPTH = old

    return run


def check_total(text: str) -> None:
    try:
        resolve_text(text, "gen.absorb")
    except SpecError as err:
        assert err.span is not None, f"error without a position: {err.summary!r}"
        assert err.span.line >= 1 and err.span.column >= 1
        str(err)  # rendering never fails


@SETTINGS
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=80))
@pytest.mark.slow  # a property test, seconds of CPU (the fast tier's budget: make test-fast <= 60 s)
def test_random_text_parses_or_fails_cleanly(text: str) -> None:
    check_total(text)


_ALPHABET = "abcdefgz()[]{}+-*/^=<>:;,. \n0123456789#\"" + "activation block gated stack absorb if then else"


@SETTINGS
@given(st.text(alphabet=_ALPHABET, max_size=120))
@pytest.mark.slow  # a property test, seconds of CPU (the fast tier's budget: make test-fast <= 60 s)
def test_near_miss_text_parses_or_fails_cleanly(text: str) -> None:
    check_total(text)


@shallow_generation
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(GRAMMAR_TEXT)
@pytest.mark.slow  # a property test, seconds of CPU (the fast tier's budget: make test-fast <= 60 s)
def test_format_round_trip(text: str) -> None:
    try:
        module = parse_text(text, "gen.absorb")
    except SpecError:
        return
    formatted = format_module(module)
    again = parse_text(formatted, "gen.absorb")
    assert again.statements == module.statements
    assert format_module(again) == formatted


@pytest.mark.parametrize("text", [
    "activation f(z) = -z^2 - (a - b) - c/(d*e) + 2^-1",
    "activation f(z; a = 1/2, b > 0) = if z > 0 and z < 1 or z >= 3 then a*z else if z < -1 then 0 else b",
    "gated g gate (u) = u/(1 + exp(-u))",
    "block b { activation: leaky_relu(alpha = 1/5) dim: d width: 4*d skip: hyper(n: 2, mix: [[1, 0], [0, 1]]) }",
    "stack s = b ^ L\nstack t = [b, c]\nseries gelu order 4\nclassify x(y = 1)",
])
def test_format_round_trip_examples(text: str) -> None:
    module = parse_text(text)
    assert parse_text(format_module(module)).statements == module.statements


def _parse_or_error(parser: object, text: str, start: str) -> object:
    from lark.exceptions import UnexpectedInput

    try:
        return parser.parse(text, start=start)  # type: ignore[attr-defined]
    except UnexpectedInput as err:
        return (type(err).__name__, err.line, err.column, sorted(map(str, getattr(err, "expected", ()) or ())))


def test_shipped_lalr_tables_are_the_grammar_s() -> None:
    """dsl/lalr_tables.py must be regenerated (`make tables`) whenever the grammar changes."""
    from symabsorb.dsl import lalr_tables
    from symabsorb.dsl.parser import _tables_key, get_parser

    assert lalr_tables.KEY == _tables_key(), "the grammar changed: run `make tables`"
    get_parser.cache_clear()
    assert get_parser().options.parser == "lalr"


@shallow_generation
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(text=GRAMMAR_TEXT, cut=st.integers(min_value=0, max_value=200))
@pytest.mark.slow  # builds the LALR tables afresh (the fast tier's budget: make test-fast <= 60 s)
def test_shipped_tables_parse_exactly_like_a_fresh_build(text: str, cut: int) -> None:
    """The shipped tables (state numbers differ between builds) accept, reject and report
    exactly as tables built from the grammar now: on grammar sentences and on their prefixes."""
    from lark import Lark

    from symabsorb.dsl import lalr_tables

    shipped = Lark._load_from_dict(lalr_tables.DATA, lalr_tables.MEMO)
    fresh = grammar_parser()
    for sample in (text, text[:cut]):
        assert _parse_or_error(shipped, sample, "start") == _parse_or_error(fresh, sample, "start")
