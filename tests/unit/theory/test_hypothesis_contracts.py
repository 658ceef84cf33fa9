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


def test_the_prover_checks_with_the_declarations_the_library_was_loaded_against() -> None:
    """A library carries its hypothesis declarations (a snapshot taken at load), so the registry in force
    is the session's library's, not whatever the global table holds at the time of the proof."""
    from dataclasses import replace

    from symabsorb.answer import Session
    from symabsorb.model import activation_from_text
    from symabsorb.theory.library import default_library

    def classify_with(lib: object, name: str) -> object:
        return Session(lib).classify(activation_from_text(name))  # type: ignore[arg-type]

    library = default_library()
    assert library.hypotheses and set(library.hypotheses) <= set(REGISTRY)
    refuting = Declaration("skip_nonzero", "never (a test's declaration)", binds=("M",),
                           checker=lambda s, p: simple("skip_nonzero", HypStatus.REFUTED, "$M \\ne 0$", "refuted here"))
    mine = replace(library, hypotheses={**library.hypotheses, "skip_nonzero": refuting})
    assert classify_with(library, "tanh").verdict.value == "impossible"  # type: ignore[attr-defined]
    assert classify_with(mine, "tanh").decided_by != classify_with(library, "tanh").decided_by  # type: ignore[attr-defined]
