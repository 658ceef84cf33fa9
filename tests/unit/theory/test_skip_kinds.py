"""Skip kinds are registered types (issue 27): every question about a skip is asked of its kind, and a new
kind is one class with ``@skip_kind`` — here one written in this file, answered like the built-in skip it
equals."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import sympy as sp

import symabsorb
from symabsorb.model import activation_from_text
from symabsorb.model.block import Block, Skip, Stack
from symabsorb.theory.skips import (
    SKIP_KINDS,
    SkipKind,
    describe_skip,
    is_identity_like,
    is_stream_skip,
    kind_of,
    skip_invertible,
    skip_is_zero,
    skip_kind,
    skip_latex,
    skip_matrix,
    skip_rank,
    stack_skip_product_nonzero,
    target_latex,
)
from tests.helpers import prove


class _Negated(SkipKind):
    """M = −I_d, a kind the library does not ship: only what M is and how it is written."""

    name = "negated-test"

    def describe(self, skip: Skip) -> str:
        return "negated skip M = -I"

    def latex(self, skip: Skip) -> str:
        return "-I_d"

    def matrix(self, skip: Skip, dim: int | sp.Expr | None = None) -> sp.ImmutableMatrix | None:
        return sp.ImmutableMatrix(-sp.eye(dim)) if isinstance(dim, int) else None

    def scale(self, skip: Skip) -> sp.Expr:
        return sp.Integer(-1)  # M = s·I_d: the results stated for multiples of the identity apply


@pytest.fixture
def negated() -> object:
    skip_kind(_Negated)
    yield SKIP_KINDS[_Negated.name]
    del SKIP_KINDS[_Negated.name]


def _block(skip: Skip, dim: int = 2) -> Block:
    return Block("b", activation_from_text("relu"), dim, 3, skip,
                 w_up=sp.ImmutableMatrix([[1, 0], [0, 1], [1, 1]]), w_down=sp.ImmutableMatrix([[1, 0, -1], [0, 1, -1]]))


def test_a_new_kind_in_one_class_is_answered_like_the_skip_it_equals(negated: object) -> None:
    new, old = Skip(_Negated.name), Skip("scaled", factor=sp.Integer(-1))
    assert describe_skip(new) == "negated skip M = -I" and not is_stream_skip(new) and not is_identity_like(new)
    assert skip_matrix(_block(new)) == skip_matrix(_block(old))
    assert skip_rank(_block(new)) == (2, "M is a nonzero multiple of I_d")
    assert skip_is_zero(new) is False and skip_invertible(new) is True  # from the scale, for any dimension
    a, b = prove(_block(new)), prove(_block(old))
    assert (a.verdict, a.decided_by) == (b.verdict, b.decided_by), (a.verdict, a.decided_by, b.verdict, b.decided_by)


def test_a_kind_that_only_states_its_matrix_gets_the_general_results(negated: object) -> None:
    """Without ``scale`` a kind is not known to be a multiple of I_d: the results for those do not apply, and
    a more general one decides (never a result whose hypothesis was not checked)."""

    class Opaque(_Negated):
        name = "opaque-test"

        def scale(self, skip: Skip) -> None:  # type: ignore[override]
            return None

    skip_kind(Opaque)
    try:
        opaque = Skip("opaque-test")
        # decided on the explicit matrix for a numeric dimension, undecided (never guessed) for a symbolic one
        assert kind_of(opaque).vanishes(opaque, 2) is False and kind_of(opaque).invertible(opaque, 2) is True
        assert skip_is_zero(opaque) is None and skip_invertible(opaque) is None
        d = prove(_block(opaque))
        assert d.verdict.value == "conditional" and d.decided_by != "thm8", d.decided_by
    finally:
        del SKIP_KINDS["opaque-test"]


def test_an_unknown_kind_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"unknown skip kind 'warp'.*@skip_kind"):
        kind_of(Skip("warp"))
    with pytest.raises(ValueError, match="new name"):
        skip_kind(type("Again", (SkipKind,), {"name": "identity"}))


def test_the_built_in_kinds_answer_as_before() -> None:
    d = sp.Symbol("d", integer=True, positive=True)
    ident, none, half = Skip("identity"), Skip("none"), Skip("scaled", factor=sp.Rational(1, 2))
    hyper = Skip("hyper", matrix=sp.ImmutableMatrix([[1, 0], [0, 0]]), n=2)
    assert [skip_is_zero(s) for s in (ident, none, half, hyper)] == [False, True, False, False]
    assert [skip_invertible(s) for s in (ident, none, half, hyper)] == [True, False, True, False]
    assert skip_latex(half) == "\\frac{1}{2}\\, I_d" and target_latex(ident, sp.Rational(-1, 2)) == "I_d"
    assert target_latex(hyper, sp.Integer(-1)).endswith("\\otimes I_d") and is_stream_skip(hyper)
    assert skip_rank(Block("b", activation_from_text("relu"), d, d, ident))[0] == d
    centered = Skip("centered", factor=sp.Integer(1), n=3)
    assert skip_matrix(Block("b", activation_from_text("relu"), 3, 3, centered)) == \
        sp.ImmutableMatrix(sp.eye(3) - sp.ones(3, 3) / 3)
    stack = Stack("s", (Block("b", activation_from_text("relu"), 2, 2, hyper),), 2)
    assert stack_skip_product_nonzero(stack)[0] is True  # A² = A ≠ 0, computed exactly


def test_no_skip_kind_is_compared_by_name_outside_its_registry() -> None:
    """Only the kinds (theory/skips.py) and the spec resolver (which maps the spec's keywords to kinds) read
    ``skip.kind``; the model's ``stream_dim`` reads it once (a Hyper-Connection's block maps n·d)."""
    package = Path(symabsorb.__file__).parent
    allowed = {"theory/skips.py", "model/resolve.py", "model/block.py"}
    bad = []
    for path in sorted(package.rglob("*.py")):
        rel = str(path.relative_to(package))
        if rel in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "kind" and isinstance(node.value, ast.Attribute) \
                    and node.value.attr == "skip":
                bad.append(f"{rel}:{node.lineno}")
    assert bad == []
