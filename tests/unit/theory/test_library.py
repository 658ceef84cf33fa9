"""The result library: loaded from the package, checked at load, extensible with --theorems."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from symabsorb.cli import main
from symabsorb.theory.hypotheses import REGISTRY
from symabsorb.theory.library import LibraryError, default_library, load_library
from tests.helpers import USER_LEMMA

REQUIRED = ["lemma4", "prop5", "prop6", "cor7", "thm8", "thm10", "cor11", "parity-decomposition",
            "ridge-uniqueness", "open-deep", "L-jacobian", "L-growth", "L-parity", "L-odd-linear", "L-gate-flip",
            "L-linear", "L-degree", "depth-witnesses", "lemma-R", "thm-R", "R-linear-odd", "R-no-flip", "R-rank",
            "R-polynomial-odd", "L-poly-rescale", "L-gate-continuous", "L-odd-gate", "L-constant-gate",
            "L-linear-rank", "L-dim-one", "L-mhc-product", "L-hc-structured", "L-width-pairs", "L-width-lines",
            "L-width-free", "lemma-G", "thm-G", "cor-G1", "cor-G2"]


def test_every_required_result_is_there() -> None:
    lib = default_library()
    for rid in REQUIRED:
        assert rid in lib.results
    assert {r.source for r in lib.results.values()} == {"paper", "library"}
    assert lib.results["prop5"].citation == "Mijoski & Karbevski 2026, Prop. 5"
    assert lib.results["L-growth"].source == "library"
    assert ("ridge-uniqueness", "thm8") in lib.graph.edges and ("ridge-uniqueness", "thm10") in lib.graph.edges


def test_library_comes_from_the_installed_package() -> None:
    import symabsorb.theorems

    assert (Path(symabsorb.theorems.__file__).parent / "prop5.toml").is_file()


def _write(d: Path, name: str, text: str) -> None:
    (d / name).write_text(text, encoding="utf-8")


BASE = """id = "{id}"
label = "{id}"
title = "t"
kind = "lemma"
source = "library"
citation = "test"
statement = "s"
uses = {uses}

[[hypotheses]]
name = "{hyp}"

[conclusion]
verdict = "impossible"
"""


def test_unknown_hypothesis_names_file_and_line(tmp_path: Path) -> None:
    _write(tmp_path, "a.toml", BASE.format(id="a", uses="[]", hyp="skip_nonzer"))
    with pytest.raises(LibraryError) as info:
        load_library([tmp_path], REGISTRY)
    assert info.value.span is not None and info.value.span.line == 11
    assert "a.toml" in str(info.value) and "skip_nonzero" in str(info.value)


def test_dangling_uses(tmp_path: Path) -> None:
    _write(tmp_path, "a.toml", BASE.format(id="a", uses='["nope"]', hyp="ungated"))
    with pytest.raises(LibraryError, match="unknown result `nope`") as info:
        load_library([tmp_path], REGISTRY)
    assert info.value.span is not None and info.value.span.line == 8


def test_cycles(tmp_path: Path) -> None:
    _write(tmp_path, "a.toml", BASE.format(id="a", uses='["b"]', hyp="ungated"))
    _write(tmp_path, "b.toml", BASE.format(id="b", uses='["a"]', hyp="ungated"))
    with pytest.raises(LibraryError, match="cycle"):
        load_library([tmp_path], REGISTRY)


def test_duplicate_ids(tmp_path: Path) -> None:
    _write(tmp_path, "a.toml", BASE.format(id="a", uses="[]", hyp="ungated"))
    _write(tmp_path, "b.toml", BASE.format(id="a", uses="[]", hyp="ungated"))
    with pytest.raises(LibraryError, match="duplicate result id `a`"):
        load_library([tmp_path], REGISTRY)


def test_user_results_with_theorems_dir(tmp_path: Path) -> None:
    """A user lemma (here: a restatement of L-growth at a higher priority) takes part in proofs."""
    _write(tmp_path, "my.toml", USER_LEMMA)
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["classify", "tanh", "--theorems", str(tmp_path), "--json"])
    assert code == 0, err.getvalue()
    assert '"decided_by": "my-bounded"' in out.getvalue()


def test_ridge_results_are_wired_into_the_graph() -> None:
    lib = default_library()
    for edge in (("lemma-R", "thm-R"), ("lemma-R", "ridge-uniqueness"), ("thm-R", "R-linear-odd"),
                 ("thm-R", "R-no-flip"), ("thm-R", "R-rank"), ("thm-R", "R-polynomial-odd"),
                 ("L-odd-linear", "R-linear-odd")):
        assert edge in lib.graph.edges, edge
    # the paper's results stay paper results; the ridge results are the library's
    assert lib.results["thm8"].source == lib.results["thm10"].source == lib.results["ridge-uniqueness"].source == "paper"
    assert all(lib.results[r].source == "library" for r in ("lemma-R", "thm-R", "R-linear-odd", "R-no-flip"))
    for rid in ("R-linear-odd", "R-no-flip", "R-rank", "R-polynomial-odd", "thm8", "thm10"):
        c = lib.results[rid].conclusion
        assert c.scope == "nondegenerate weights" and c.degenerate, rid
    assert lib.results["L-odd-linear"].conclusion.necessary == "open"
    # thm8/thm10 come before R-linear-odd, so the paper decides where it applies
    order = [r.id for r in lib.deciders("block")]
    assert order.index("thm8") < order.index("R-linear-odd") and order.index("R-rank") < order.index("R-linear-odd")
    assert order.index("R-no-flip") < order.index("R-linear-odd")


def test_nondegenerate_scope_must_state_the_degenerate_case(tmp_path: Path) -> None:
    _write(tmp_path, "a.toml", BASE.format(id="a", uses="[]", hyp="ungated") + 'scope = "nondegenerate weights"\n')
    with pytest.raises(LibraryError, match="degenerate"):
        load_library([tmp_path], REGISTRY)
    _write(tmp_path, "a.toml", BASE.format(id="a", uses="[]", hyp="ungated") + 'scope = "some weights"\n')
    with pytest.raises(LibraryError, match="unknown scope"):
        load_library([tmp_path], REGISTRY)
