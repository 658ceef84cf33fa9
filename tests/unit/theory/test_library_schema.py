"""Results are data: the schema of ``theorems/*.toml`` is checked at load against the hypothesis
declarations, and no result id appears in the code (issue 18)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import symabsorb
from symabsorb.theory.hypotheses import hypothesis_table
from symabsorb.theory.library import LibraryError, default_library, library_with
from tests.helpers import ROOT, run_cli

PACKAGE = Path(symabsorb.__file__).parent
THEOREMS = ROOT / "theorems"
DOCS = ROOT / "docs"


def _strings(tree: ast.AST) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append((node.lineno, node.value))
    return out


def test_no_result_id_in_the_code() -> None:
    """No string constant of symabsorb/ equals a result id or cites one (``[id]``, f-string parts included):
    what a result means lives in its TOML file."""
    ids = set(default_library().results)
    cites = re.compile(r"\[(" + "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True)) + r")\]")
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "lalr_tables.py":
            continue
        for line, value in _strings(ast.parse(path.read_text(encoding="utf-8"))):
            if value in ids or cites.search(value):
                bad.append(f"{path.relative_to(PACKAGE)}:{line}: {value[:60]!r}")
    assert bad == []


def _copy(tmp_path: Path, source: str, new_id: str, edit: tuple[str, str] | None = None) -> Path:
    text = (THEOREMS / f"{source}.toml").read_text(encoding="utf-8")
    text = text.replace(f'id = "{source}"', f'id = "{new_id}"', 1)
    if edit is not None:
        assert edit[0] in text
        text = text.replace(*edit)
    path = tmp_path / f"{new_id}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _load_error(tmp_path: Path) -> LibraryError:
    with pytest.raises(LibraryError) as info:
        library_with([tmp_path])
    return info.value


def test_misspelt_parameter_is_a_positioned_load_error(tmp_path: Path) -> None:
    path = _copy(tmp_path, "L-degree", "L-degree-typo", ("params = { equals = 0 }", "params = { equal = 5 }"))
    err = _load_error(tmp_path)
    line = next(i for i, row in enumerate(path.read_text().splitlines(), 1) if "equal = 5" in row)
    assert err.span is not None and err.span.line == line and err.span.file == str(path)
    text = str(err)
    assert "unknown parameter `equal` of hypothesis `unit_homogeneous`" in text
    assert "did you mean `equals`" in text and "`min_exclusive`" in text and "`exclude`" in text


def test_misspelt_parameter_never_makes_relu_impossible(tmp_path: Path) -> None:
    """The row of the issue: the unknown key made the degree check vacuous and relu came out impossible."""
    _copy(tmp_path, "L-degree", "A-degree-typo", ("params = { equals = 0 }", "params = { equal = 5 }"))
    code, out, err, _ = run_cli("classify", "relu", "--theorems", str(tmp_path))
    assert code == 2 and out == ""
    assert "A-degree-typo.toml:" in err and "did you mean `equals`" in err
    assert "impossible" not in out


def test_a_hypothesis_without_any_constraint_is_refused(tmp_path: Path) -> None:
    _copy(tmp_path, "L-degree", "L-degree-bare", ("params = { equals = 0 }", "params = {}"))
    assert "needs at least one of `equals`, `min_exclusive`, `exclude`" in str(_load_error(tmp_path))


def test_misspelt_hypothesis_name(tmp_path: Path) -> None:
    _copy(tmp_path, "L-growth", "L-growth-typo", ('name = "sublinear_growth"', 'name = "sublinear_grwth"'))
    err = _load_error(tmp_path)
    assert "unknown hypothesis `sublinear_grwth`" in str(err) and "did you mean `sublinear_growth`" in str(err)
    assert err.span is not None and err.span.line > 1


@pytest.mark.parametrize(("edit", "message"), [
    (('params = { n = 2 }', 'params = { n = "two" }'), "parameter `n` of hypothesis `dim_at_least` is not an integer"),
    (('params = { reference = "relu" }', 'params = { reference = "rleu" }'), "is not one of the choices"),
    (('params = { reference = "relu" }', 'params = {}'), "needs the parameter `reference`"),
    (('concrete = "index-set"', 'concrete = "index-sets"'), "unknown concrete-weights procedure `index-sets`"),
    (('necessary = "proved"', 'necesary = "proved"'), "unknown key `necesary` in [conclusion]"),
    (('cite = "cor11"', 'cite = "cor12"'), "cites unknown result `cor12`"),
    (('necessary = "proved"', 'necessary = "conjectured"'), "unknown `necessary` status `conjectured`"),
])
def test_wrong_values_are_positioned_load_errors(tmp_path: Path, edit: tuple[str, str], message: str) -> None:
    _copy(tmp_path, "thm8", "thm8-edit", edit)
    err = _load_error(tmp_path)
    assert message in str(err) and err.span is not None and err.span.line > 1


def test_unbound_placeholder_is_a_load_error(tmp_path: Path) -> None:
    """L-growth's hypotheses bind no constant c: a ``@{c}`` in its proof would print literally."""
    path = _copy(tmp_path, "L-growth", "L-growth-c", ("with $Mx \\ne 0$", "with $Mx \\ne 0$ and $\\tfrac{1}@{c}$"))
    err = _load_error(tmp_path)
    assert "the placeholder `@{c}` is bound by no hypothesis of this result" in str(err)
    row = path.read_text().splitlines()[err.span.line - 1] if err.span else ""
    assert "@{c}" in row


def test_hypotheses_about_stacks_are_refused_on_blocks(tmp_path: Path) -> None:
    _copy(tmp_path, "L-growth", "L-growth-stack", ('name = "locally_bounded"', 'name = "skip_product_nonzero"'))
    assert "hypothesis `skip_product_nonzero` is about a stack" in str(_load_error(tmp_path))


def test_shipped_library_declares_its_semantics() -> None:
    lib = default_library()
    concrete = {r.id: r.conclusion.concrete for r in lib.results.values() if r.conclusion.concrete}
    from symabsorb.theory.procedures import BUILTIN

    assert set(concrete.values()) == {p.name for p in BUILTIN}
    for rid, r in lib.results.items():
        if r.conclusion.scope == "nondegenerate weights":
            gated = any(h.name == "gated_nondegenerate" for h in r.hypotheses)
            n2 = any(h.name == "n2_nondegenerate" for h in r.hypotheses)
            assert r.nondegeneracy == ("gated-N1" if gated else "N2" if n2 else "N1"), rid
    for role in ("width-free", "width-rank", "width-pairs", "width-lines", "composition"):
        lib.provider(role)
    free = [r for r in lib.results.values() if not r.width.uses_width]
    assert free and all(r.conclusion.verdict == "impossible" and r.conclusion.scope == "all weights" for r in free)


def test_docs_hypothesis_table_is_the_declarations() -> None:
    text = (DOCS / "theorems.md").read_text(encoding="utf-8")
    assert hypothesis_table() in text


def test_docs_list_every_field_of_the_schema() -> None:
    from symabsorb.theory import library

    text = (DOCS / "theorems.md").read_text(encoding="utf-8")
    keys = (*library._TOP_KEYS, *library._CONCLUSION_KEYS, *(k for ks in library._SECTION_KEYS.values() for k in ks))
    missing = [k for k in keys if not re.search(rf"\b{re.escape(k)}\b", text)]
    assert missing == []
    from symabsorb.theory.procedures import BUILTIN

    for values in (tuple(p.name for p in BUILTIN), library.NONDEGENERACY, library.BIAS_SETTINGS, library.NORM_SETTINGS,
                   library.PROVIDES):
        for v in values:
            assert f'"{v}"' in text or f"`{v}`" in text, v


_SQ_SPEC = '''activation sq(z) = z + sign(z)^2
block inline { activation: sq  W_up: [[1, 0], [0, 1], [1, 1]]  W_down: [[-1/2, 0, 1], [0, -1/2, 1]] }
block file { activation: sq  weights: "w.npz" }
absorb inline
absorb file
'''


def test_copied_lemma_decides_inline_and_file_weights_like_the_original(tmp_path: Path) -> None:
    """The row of the issue: a verbatim copy of L-odd-linear under a new id (sorting first, so it decides)
    stayed undecided on inline and file weights although it says ``concrete = "index-set"``."""
    from symabsorb.answer import Session
    from symabsorb.model import resolve_text
    from tests.helpers import require_module

    np = require_module("numpy", "weights")
    (tmp_path / "lib").mkdir()
    _copy(tmp_path / "lib", "L-odd-linear", "A-odd-linear-copy")
    np.savez(tmp_path / "w.npz", W_up=np.array([[1.0, 0], [0, 1], [1, 1]]),
             W_down=np.array([[-0.5, 0, 1], [0, -0.5, 1]]))
    spec = resolve_text(_SQ_SPEC, str(tmp_path / "s.absorb"))
    seen = {}
    for lib in (default_library(), library_with([tmp_path / "lib"])):
        for q in spec.queries:
            d = Session(lib, 30, str(tmp_path)).answer(q).derivation
            assert d is not None and d.witness is not None, (q.text, d)
            seen.setdefault(q.text, []).append((d.decided_by, d.verdict.value, d.witness.index_set))
    for decisions in seen.values():
        assert decisions == [("L-odd-linear", "absorbable", (0, 1)), ("A-odd-linear-copy", "absorbable", (0, 1))]


def test_no_conjecture_is_printed() -> None:
    """L-gate-flip's "necessary: conjectured" was false (MATH.md §10): necessity is proved or open."""
    from symabsorb.model import activation_from_text
    from tests.helpers import classify

    assert {r.conclusion.necessary for r in default_library().results.values()} <= {"proved", "open", None}
    assert default_library().get("L-gate-flip").conclusion.necessary == "open"
    for act in ("sigmoid", "1 + z"):
        d = classify(activation_from_text(act, gated=True))
        assert d.necessary in ("proved", "open", None)
        assert not any("conjectur" in s.text for s in d.steps)


@pytest.mark.parametrize("module", ["decide", "filedecide"])
def test_a_witness_failing_its_numeric_check_is_an_internal_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   module: str) -> None:
    """The row of the issue: exit code 3 (internal error), not 2 (bad input), and no report written."""
    import importlib

    from tests.helpers import require_module

    np = require_module("numpy", "weights")
    from symabsorb.weights.witness import WitnessCheck

    mod = importlib.import_module(f"symabsorb.weights.{module}")
    if module == "decide":
        monkeypatch.setattr(mod, "check_witness", lambda *a, **k: WitnessCheck(1.0, 200, True, 0))
    else:
        monkeypatch.setattr(mod, "float_max_relative_error", lambda *a, **k: 1.0)
    np.savez(tmp_path / "w.npz", W_up=np.array([[1.0, 0], [0, 1], [1, 1]]),
             W_down=np.array([[-0.5, 0, 1], [0, -0.5, 1]]))
    (tmp_path / "s.absorb").write_text(_SQ_SPEC.replace("absorb file\n", "") if module == "decide"
                                       else _SQ_SPEC.replace("absorb inline\n", ""), encoding="utf-8")
    out = tmp_path / "r.md"
    code, _, err, _ = run_cli("prove", str(tmp_path / "s.absorb"), "-o", str(out), "--no-cache")
    assert code == 3, err
    assert "internal error" in err and "fails its numeric check" in err and not out.exists()
