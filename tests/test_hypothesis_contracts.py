"""Lemma-file contracts checked in code (issue 27): a checker's answer carries the name it was declared
under, and binds only the placeholders its declaration lists (a result's templates rely on those)."""

from __future__ import annotations

import pytest

from symabsorb.errors import InternalError
from symabsorb.theory.checks import Subject, simple
from symabsorb.theory.derivation import HypStatus
from symabsorb.theory.hypdecl import Declaration
from symabsorb.theory.hypotheses import REGISTRY


def test_a_check_is_stamped_with_its_declared_name() -> None:
    decl = Declaration("declared_name", "always", checker=lambda s, p: simple("typo_name", HypStatus.PROVED, "x"))
    assert decl(Subject(), {}).name == "declared_name"


def test_an_undeclared_binding_is_refused() -> None:
    ok = Declaration("binds_c", "always", binds=("c",),
                     checker=lambda s, p: simple("binds_c", HypStatus.PROVED, "x", bindings={"c": 1}))
    assert ok(Subject(), {}).binding("c") == 1
    bad = Declaration("binds_c", "always", binds=("c",),
                      checker=lambda s, p: simple("binds_c", HypStatus.PROVED, "x", bindings={"c": 1, "o2": 2}))
    with pytest.raises(InternalError, match="'o2'"):
        bad(Subject(), {})


def test_every_registered_hypothesis_declares_what_it_binds() -> None:
    """The built-in declarations: every bind is a plain placeholder name (what `@{name}` may refer to)."""
    for name, decl in REGISTRY.items():
        assert decl.name == name
        assert all(b.isidentifier() for b in decl.binds), (name, decl.binds)
