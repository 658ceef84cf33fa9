"""docs/architecture.md, "How to add a result", followed from a test module: one TOML file in a
temporary directory plus one checker declared here decide symbolic, inline and file-weight blocks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sympy as sp

from symabsorb.answer import Session
from symabsorb.model import resolve_text
from symabsorb.model.functions import Z
from symabsorb.theory.checks import Subject, simple
from symabsorb.theory.derivation import HypothesisCheck, HypStatus, Verdict
from symabsorb.theory.hypdecl import Param
from symabsorb.theory.hypotheses import declare, undeclare
from symabsorb.theory.library import library_with
from tests.helpers import require_module

NAME = "test_odd_part_is_cz"

RESULT = r"""
id = "A-test-flip"
label = "L-test-flip"
title = "A test lemma: the flip witness, with the odd part found by SymPy"
kind = "lemma"
source = "library"
citation = "tests/unit/answer/test_new_result.py"
role = "decide"
applies_to = "block"
priority = 2
statement = '''If $\sigma(z) - \sigma(-z) = 2c\,z$ with $c \ne 0$, negating the rows $S$ of $W_{\mathrm{up}}$
absorbs $x \mapsto Mx + B(x)$ whenever $W_{\mathrm{down}}[:,S]W_{\mathrm{up}}[S,:] = -M/(2c)$.'''
uses = []

[[hypotheses]]
name = "ungated"

[[hypotheses]]
name = "test_odd_part_is_cz"
params = { largest = 10 }

[conclusion]
verdict = "conditional"
scope = "all weights"
condition = '''W_{\mathrm{down}}[:,S]\,W_{\mathrm{up}}[S,:] = @{T}'''
condition_plain = "W_down[:,S] W_up[S,:] = @{T}"
sufficient = "proved"
necessary = "open"
concrete = "index-set"

[proof]
steps = ['''$\sigma(-t) = \sigma(t) - 2c\,t$ with $c = @{c}$: flipping the units $S$ changes $B$ by
$-2c\,W_{\mathrm{down}}[:,S]W_{\mathrm{up}}[S,:]\,x$.''']
"""

SPEC = """activation sq(z) = z + sign(z)^2
block symbolic { activation: sq }
block inline { activation: sq  W_up: [[1, 0], [0, 1], [1, 1]]  W_down: [[-1/2, 0, 1], [0, -1/2, 1]] }
block file { activation: sq  weights: "w.npz" }
absorb symbolic
absorb inline
absorb file
"""


@pytest.fixture
def checker() -> Iterator[None]:
    @declare(NAME, "`σ(z) − σ(−z) = 2cz` with a rational `c ≠ 0` of size at most `largest` (SymPy simplification)",
             params={"largest": Param("integer", "the largest |c| admitted", default=100)}, binds=("c",))
    def _odd_part(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
        e = s.the_block.activation.expr
        c = sp.simplify((e - e.xreplace({Z: -Z})) / (2 * Z))
        statement = "$\\sigma(z) - \\sigma(-z) = 2c\\,z$"
        if c.is_Rational and c != 0 and abs(c) <= p["largest"]:
            return simple(NAME, HypStatus.PROVED, statement + f" with $c = {sp.latex(c)}$", bindings={"c": c})
        return simple(NAME, HypStatus.UNKNOWN, statement, "the odd part is not shown to be a rational multiple of z")

    yield
    undeclare(NAME)


def test_a_new_lemma_decides_symbolic_inline_and_file_blocks(tmp_path: Path, checker: None) -> None:
    np = require_module("numpy", "weights")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "A-test-flip.toml").write_text(RESULT, encoding="utf-8")
    np.savez(tmp_path / "w.npz", W_up=np.array([[1.0, 0], [0, 1], [1, 1]]),
             W_down=np.array([[-0.5, 0, 1], [0, -0.5, 1]]))
    library = library_with([tmp_path / "lib"])
    spec = resolve_text(SPEC, str(tmp_path / "s.absorb"))
    got = {q.text: Session(library, 30, str(tmp_path)).answer(q).derivation for q in spec.queries}
    symbolic, inline, file = got["absorb symbolic"], got["absorb inline"], got["absorb file"]
    assert symbolic is not None and symbolic.decided_by == "A-test-flip"
    assert symbolic.verdict is Verdict.CONDITIONAL and symbolic.condition_plain == "W_down[:,S] W_up[S,:] = -1/2*I_d"
    assert any("$c = 1$" in s.text for s in symbolic.steps)
    for d in (inline, file):
        assert d is not None and d.decided_by == "A-test-flip"
        assert d.verdict is Verdict.ABSORBABLE and d.witness is not None and d.witness.index_set == (0, 1)


def test_a_new_lemma_is_checked_against_its_checkers_declaration(tmp_path: Path, checker: None) -> None:
    from symabsorb.theory.library import LibraryError

    (tmp_path / "A-test-flip.toml").write_text(RESULT.replace("largest = 10", "larges = 10"), encoding="utf-8")
    with pytest.raises(LibraryError) as info:
        library_with([tmp_path])
    assert "unknown parameter `larges` of hypothesis `test_odd_part_is_cz`" in str(info.value)
    assert "did you mean `largest`" in str(info.value)


def test_every_concrete_value_has_one_procedure_and_files_are_proved_once(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The concrete-weights layer: one registry keyed by the TOML field; a file block is proved once,
    with the sizes its file gives, and the prover itself never decides concrete weights."""
    np = require_module("numpy", "weights")
    from symabsorb.answer import Session, session
    from symabsorb.theory import prover
    from symabsorb.theory.library import default_library
    from symabsorb.theory.procedures import PROCEDURES
    from symabsorb.weights import concrete

    assert concrete.PROCEDURES is PROCEDURES and PROCEDURES.unattached() == ()
    np.savez(tmp_path / "w.npz", W_up=np.array([[1.0, 0], [0, 1], [1, 1]]),
             W_down=np.array([[-1.0, 0, 1], [0, -1, 1]]))
    spec = resolve_text("block file { activation: relu  weights: \"w.npz\" }\nabsorb file\n"
                        "block inline { activation: relu  W_up: [[1, 0], [0, 1], [1, 1]]  "
                        "W_down: [[-1, 0, 1], [0, -1, 1]] }\nabsorb inline\n", str(tmp_path / "s.absorb"))
    proved: list[tuple[object, object]] = []
    real = session._derive  # the answer layer's one call of the prover

    def counting(target: Any, *args: Any, **kwargs: Any) -> prover.Proof:
        proved.append((target.dim, target.width))
        return real(target, *args, **kwargs)

    monkeypatch.setattr(session, "_derive", counting)
    file, inline = (Session(default_library(), base_dir=str(tmp_path)).answer(q).derivation for q in spec.queries)
    assert proved == [(2, 3), (2, 3)]
    assert file is not None and file.verdict is Verdict.ABSORBABLE and file.witness is not None
    assert inline is not None and inline.verdict is Verdict.ABSORBABLE
    # the prover alone answers for arbitrary weights of these sizes: the condition, not a verdict on the weights
    assert prover.prove(spec.blocks[1], default_library()).verdict is Verdict.CONDITIONAL
