"""Concrete-weights procedures are one registry (theory/procedures.py): the library validates a result's
``concrete`` field against it at load, and a new procedure is one decorated function, here in a test module,
used by a user lemma in a ``--theorems`` directory."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from symabsorb.answer import Session
from symabsorb.model import resolve_text
from symabsorb.theory.derivation import DerivationStep, Verdict
from symabsorb.theory.library import LibraryError, library_with
from symabsorb.theory.procedures import BUILTIN, PROCEDURES, Procedure, ProcedureRegistry, procedure
from tests.helpers import ROOT

THEOREMS = ROOT / "symabsorb" / "theorems"
NAME = "test-marks-open"
CALLS: list[str] = []


@pytest.fixture
def registered() -> Iterator[None]:
    @procedure(NAME, doc="a test procedure: leaves the verdict open, saying so")
    def _marks_open(block: Any, d: Any, chosen: Any, library: Any) -> Any:
        CALLS.append(chosen.result.id)
        step = DerivationStep("The test procedure looked at these weights and decided nothing.", (chosen.result.id,),
                              kind="conclusion")
        return replace(d, verdict=Verdict.OPEN, steps=(*d.steps, step), notes=(*d.notes, "test procedure"))

    try:
        yield
    finally:
        PROCEDURES.unregister(NAME)


def _user_lemma(tmp_path: Path, concrete: str) -> None:
    text = (THEOREMS / "thm8.toml").read_text(encoding="utf-8")
    text = text.replace('id = "thm8"', 'id = "U-test-proc"', 1).replace("priority = 40", "priority = 1", 1)
    text = text.replace('concrete = "index-set"', f'concrete = "{concrete}"', 1)
    (tmp_path / "U-test-proc.toml").write_text(text, encoding="utf-8")


def test_every_builtin_name_has_a_procedure() -> None:
    import symabsorb.weights.concrete  # noqa: F401  (attaches the built-in callables)

    assert PROCEDURES.names()[: len(BUILTIN)] == tuple(p.name for p in BUILTIN)
    assert PROCEDURES.unattached() == ()


def test_unknown_procedure_is_refused_at_load_with_a_position(tmp_path: Path) -> None:
    _user_lemma(tmp_path, "test-marks-opn")
    with pytest.raises(LibraryError) as info:
        library_with([tmp_path])
    message = str(info.value)
    assert "unknown concrete-weights procedure `test-marks-opn`" in message
    assert "U-test-proc.toml:" in message


def test_a_procedure_added_from_a_test_module_decides_a_user_lemma(tmp_path: Path, registered: None) -> None:
    _user_lemma(tmp_path, NAME)
    library = library_with([tmp_path])
    assert library.results["U-test-proc"].conclusion.concrete == NAME
    spec = resolve_text("block b { activation: relu  W_up: [[1, 0], [0, 1], [1, 1]]  "
                        "W_down: [[-1, 0, 1], [0, -1, 1]] }\nabsorb b\n", str(tmp_path / "s.absorb"))
    CALLS.clear()
    d = Session(library, base_dir=str(tmp_path)).answer(spec.queries[0]).derivation
    assert d is not None and d.decided_by == "U-test-proc"
    assert CALLS == ["U-test-proc"]
    assert d.verdict is Verdict.OPEN and "test procedure" in d.notes


def test_unregistered_again_the_name_is_refused(tmp_path: Path) -> None:
    assert NAME not in PROCEDURES.names()
    _user_lemma(tmp_path, NAME)
    with pytest.raises(LibraryError):
        library_with([tmp_path])


def test_registry_refuses_a_second_registration_and_an_empty_procedure() -> None:
    registry = ProcedureRegistry((Procedure("a", "doc"),))
    registry.register("a", lambda *args: None)
    with pytest.raises(ValueError, match="already registered"):
        registry.register("a", lambda *args: None)
    with pytest.raises(ValueError, match="needs an inline callable"):
        registry.register("b")
    assert registry.unattached() == ()


def test_a_procedure_reading_a_binding_no_hypothesis_binds_is_refused_at_load(tmp_path: Path) -> None:
    # `rescale` reads c, k, q; thm8's hypotheses bind c only
    _user_lemma(tmp_path, "rescale")
    with pytest.raises(LibraryError) as info:
        library_with([tmp_path])
    message = str(info.value)
    assert "the procedure `rescale` reads `k`, `q`, which no hypothesis of this result binds" in message
    assert "U-test-proc.toml:" in message


def test_a_width_procedure_is_one_the_registry_allows_in_width(tmp_path: Path) -> None:
    _user_lemma(tmp_path, "index-set")
    path = tmp_path / "U-test-proc.toml"
    path.write_text(path.read_text(encoding="utf-8") + '\n[width]\nprocedure = "index-set"\n', encoding="utf-8")
    with pytest.raises(LibraryError, match="unknown width procedure `index-set`"):
        library_with([tmp_path])
    assert "rank" in PROCEDURES.names("width") and "index-set" not in PROCEDURES.names("width")


def test_code_asks_the_procedure_object() -> None:
    import symabsorb.answer  # noqa: F401  (attaches verify's re-checks)
    from symabsorb.theory.library import default_library

    lib = default_library()
    flip = lib.procedure("thm8")
    assert flip is not None and flip.index_set and not flip.stack and flip.file is not None
    any_weights = [r.id for r in lib.results_with(lambda p: p.any_weights)]
    assert any_weights == ["thm-D"]
    d = lib.procedure("thm-D")
    assert d is not None and d.verifier is not None and d.width is not None
    stack = lib.procedure("thm-FA")
    assert stack is not None and stack.stack and stack.inline is not None and stack.verifier is not None
    assert lib.procedure("L-linear", "width") is PROCEDURES.get("rank")
    assert lib.procedure("no-such-result") is None


def test_a_procedure_declared_index_set_gets_the_condition_constant(tmp_path: Path) -> None:
    """What the prover and --near do follows the procedure's declaration, not its name: a test procedure
    declared ``index_set`` keeps the derivation's constant c, one that is not drops it."""
    from symabsorb.theory.library import library_with as load

    calls: list[str] = []

    def _inline(block: Any, d: Any, chosen: Any, library: Any) -> Any:
        calls.append(str(d.condition_constant))
        return d

    spec = resolve_text("block b { activation: relu  W_up: [[1, 0], [0, 1], [1, 1]]  "
                        "W_down: [[-1, 0, 1], [0, -1, 1]] }\nabsorb b\n", str(tmp_path / "s.absorb"))
    for flag in (True, False):
        PROCEDURES.register(NAME, _inline, index_set=flag)
        try:
            _user_lemma(tmp_path, NAME)
            Session(load([tmp_path]), base_dir=str(tmp_path)).answer(spec.queries[0])
        finally:
            PROCEDURES.unregister(NAME)
    assert calls == ["1/2", "None"]
