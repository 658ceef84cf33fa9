"""The parser's fast path for long literal matrices (dsl/parser.py) builds exactly the syntax the
ordinary Lark parse builds, spans included, and every error still comes from the ordinary path."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from symabsorb.budget import Budget, Limits, installed
from symabsorb.dsl import parser
from symabsorb.errors import SpecError
from symabsorb.model import resolve_text

ENTRIES = ["3", "-2", "0", "-0", "0.5", "-1.25e-1", "3/4", "-7/2", ".5", "2e3", "1.", "- 3", "3 / 4", "12"]


def spec(rows: int, cols: int, *, seed: int = 0, sep: str = ", ", extra: str = "") -> str:
    rng = random.Random(seed)

    def mat(n: int, m: int) -> str:
        return "[" + sep.join("[" + sep.join(rng.choice(ENTRIES) for _ in range(m)) + "]"
                                    for _ in range(n)) + "]"

    return (f"block b {{\n  activation: relu\n  dim: {cols}\n  width: {rows}\n  W_up:\n  {mat(rows, cols)}\n"
            f"  W_down: {mat(cols, rows)}{extra}\n}}\nabsorb b\n")


def spans(node: Any, out: list[Any]) -> list[Any]:
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        for f in dataclasses.fields(node):
            if f.name == "span":
                out.append(node.span)
            spans(getattr(node, f.name), out)
    elif isinstance(node, (tuple, list)):
        for item in node:
            spans(item, out)
    return out


def ordinary(text: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as m:
        m.setattr(parser, "_FAST_MATRIX_CHARS", 10**12)
        return parser.parse_text(text, "m.absorb")


@pytest.mark.parametrize("sep", [", ", ",\n    ", " ,\t"])
def test_the_fast_path_builds_the_ordinary_syntax(sep: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = spec(40, 16, sep=sep)
    assert len(parser._literal_matrices(text)[1]) == 2  # both matrices take the fast path
    fast, slow = parser.parse_text(text, "m.absorb"), ordinary(text, monkeypatch)
    assert repr(fast) == repr(slow)
    assert spans(fast, []) == spans(slow, []) and len(spans(fast, [])) > 1000


@pytest.mark.parametrize("extra", [
    "\n  W_gate: [[1, 2], [3, x]]",  # a later error after the fast matrices
    "\n  oops",
    "\n  # W_up: [[" + ", ".join(["1"] * 1200) + "]]",  # a matrix-looking comment
])
def test_errors_and_comments_match_the_ordinary_path(extra: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = spec(40, 16, extra=extra)
    try:
        fast: Any = parser.parse_text(text, "m.absorb")
    except SpecError as err:
        fast = (type(err), str(err), err.span)
    try:
        slow: Any = ordinary(text, monkeypatch)
    except SpecError as err:
        slow = (type(err), str(err), err.span)
    assert repr(fast) == repr(slow)


def test_limits_inside_a_long_matrix_are_positioned_as_before() -> None:
    text = spec(40, 16).replace("W_down: [[", "W_down: [[" + "7" * 4400 + ", ", 1)
    with installed(Budget(30, Limits())), pytest.raises(SpecError) as info:
        resolve_text(text, "m.absorb")
    assert "too large" in info.value.summary
    line = text[:text.index("7" * 4400)].count("\n") + 1
    assert info.value.span is not None and info.value.span.line == line


def test_resolved_weights_do_not_depend_on_the_path(monkeypatch: pytest.MonkeyPatch) -> None:
    text = spec(40, 16, seed=2)
    with installed(Budget(30, Limits())):
        fast = resolve_text(text, "m.absorb")
        with monkeypatch.context() as m:
            m.setattr(parser, "_FAST_MATRIX_CHARS", 10**12)
            slow = resolve_text(text, "m.absorb")
    assert fast.blocks[0].w_up == slow.blocks[0].w_up and fast.blocks[0].w_down == slow.blocks[0].w_down


def test_a_near_miss_is_rejected_in_linear_time() -> None:
    import time

    text = spec(40, 16).replace("], [", "],, [")  # a doubled comma: no literal matrix, a syntax error
    started = time.process_time()
    assert parser._literal_matrices(text)[1] == {}
    assert time.process_time() - started < 1.0
