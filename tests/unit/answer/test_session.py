"""One door (issue 27): the library in force is the session's, and ``--theorems`` means the same in every
command — prove, classify, catalog, absorb, verify, scan and explore all build their library from it."""

from __future__ import annotations

from pathlib import Path

import pytest

import symabsorb
from symabsorb.answer import Session, in_force
from symabsorb.errors import InternalError
from symabsorb.model import resolve_text
from symabsorb.theory.library import default_library, library_with, results_digest
from tests.helpers import USER_LEMMA, require_module, session

SPEC = """block b { activation: relu  W_up: [[1, 0], [0, 1], [1, 1]]  W_down: [[-1, 0, 1], [0, -1, 1]] }
absorb b
classify gelu
"""


def test_a_session_answers_as_the_api_does(tmp_path: Path) -> None:
    path = tmp_path / "s.absorb"
    path.write_text(SPEC, encoding="utf-8")
    report = session().report(resolve_text(SPEC, str(path)), SPEC)
    api = symabsorb.prove(path)
    assert [a.derivation.verdict.value for a in report.answers] == [r.verdict for r in api.results]  # type: ignore[union-attr]
    assert report.answers[0].derivation.verdict.value == "absorbable"  # type: ignore[union-attr]


def test_no_session_is_in_force_by_default() -> None:
    """verify's checkers read the installed session; there is no silent fallback to the built-in library."""
    with pytest.raises(InternalError):
        in_force()
    s = Session(default_library())
    with s.installed():
        assert in_force() is s
    with pytest.raises(InternalError):
        in_force()


def test_the_library_of_theorem_directories_and_its_digest(tmp_path: Path) -> None:
    assert library_with([]) is default_library() and results_digest([]) == ""
    (tmp_path / "a.toml").write_text("# empty\n", encoding="utf-8")
    first = results_digest([tmp_path])
    (tmp_path / "a.toml").write_text("# changed\n", encoding="utf-8")
    assert results_digest([tmp_path]) != first  # a changed lemma file never reuses a cached answer


def test_theorems_reach_scan_and_key_its_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    np = require_module("numpy", "weights")
    st = require_module("safetensors.numpy", "weights")
    folder = tmp_path / "ckpt"
    folder.mkdir()
    st.save_file({"ok.W_up": np.eye(3, 2, dtype=np.float32), "ok.W_down": -np.eye(2, 3, dtype=np.float32)},
                 str(folder / "model.safetensors"))
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "note.toml").write_text("", encoding="utf-8")
    import symabsorb.theory.library as library

    seen: list[tuple[str, ...]] = []
    real = library.library_with

    def spy(extra: object) -> object:
        seen.append(tuple(str(d) for d in extra))  # type: ignore[attr-defined]
        return real([])  # the built-in results answer; what matters is which directories were asked for

    monkeypatch.setattr(library, "library_with", spy)
    results = tmp_path / "results"
    plain = symabsorb.scan(folder, activation="relu", results=results)
    assert seen == [] or all(s == () for s in seen)
    seen.clear()
    with_mine = symabsorb.scan(folder, activation="relu", results=results, theorems=[mine])
    assert seen and all(s == (str(mine.absolute()),) for s in seen), seen  # decided again, with the user's library
    assert [r["verdict"] for r in plain.layers] == [r["verdict"] for r in with_mine.layers]


def test_theorems_reach_verify(tmp_path: Path) -> None:
    """A user's lemma directory is loaded by verify (a malformed one is refused, as prove refuses it)."""
    path = tmp_path / "s.absorb"
    path.write_text(SPEC, encoding="utf-8")
    report = tmp_path / "r.json"
    report.write_text(symabsorb.prove(path).render("json"), encoding="utf-8")
    assert symabsorb.verify(report).ok
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "x.toml").write_text("id = 3\n", encoding="utf-8")
    with pytest.raises(symabsorb.SymabsorbError):
        symabsorb.verify(report, theorems=[bad])
    with pytest.raises(symabsorb.SymabsorbError):
        symabsorb.prove(path, theorems=[bad])




def test_verify_says_which_library_re_derived_and_whether_it_is_the_reports(tmp_path: Path) -> None:
    path = tmp_path / "s.absorb"
    path.write_text(SPEC, encoding="utf-8")
    report = tmp_path / "r.json"
    report.write_text(symabsorb.prove(path).render("json"), encoding="utf-8")
    same = symabsorb.verify(report)
    assert same.library.startswith("questions re-derived with the built-in library (") and \
        same.library.endswith("the library the report was proved with"), same.library
    assert same.library in same.render("text")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "my.toml").write_text(USER_LEMMA, encoding="utf-8")
    other = symabsorb.verify(report, theorems=[mine])
    assert "1 user result (my-bounded)" in other.library and "proved with another library" in other.library
    proved_with_mine = tmp_path / "r2.json"
    proved_with_mine.write_text(symabsorb.prove(path, theorems=[mine]).render("json"), encoding="utf-8")
    told = symabsorb.verify(proved_with_mine)
    assert "its user results: my-bounded; pass their directory with --theorems" in told.library, told.library
    assert symabsorb.verify(proved_with_mine, theorems=[mine]).library.endswith("the library the report was proved with")


def test_a_scan_json_says_which_library_decided_it(tmp_path: Path) -> None:
    """A scan decided with a user's lemma directory: its JSON names the library, and verify without the
    directory says the report was proved with another one (a new user's report: it said nothing)."""
    np = require_module("numpy", "weights")
    st = require_module("safetensors.numpy", "weights")
    folder = tmp_path / "ckpt"
    folder.mkdir()
    st.save_file({"ok.W_up": np.eye(3, 2, dtype=np.float32), "ok.W_down": -np.eye(2, 3, dtype=np.float32)},
                 str(folder / "model.safetensors"))
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "my.toml").write_text(USER_LEMMA, encoding="utf-8")
    plain = symabsorb.scan(folder, activation="relu")
    assert plain.library["user_results"] == [] and '"tool"' in plain.render("json")
    report = folder / "scan.json"
    report.write_text(symabsorb.scan(folder, activation="relu", theorems=[mine]).render("json"), encoding="utf-8")
    told = symabsorb.verify(report)
    assert "its user results: my-bounded" in told.library, told.library
    assert symabsorb.verify(report, theorems=[mine]).library.endswith("the library the report was proved with")


def test_an_imported_blocks_weights_are_read_beside_the_file_that_declares_them(tmp_path: Path) -> None:
    """`weights: "w.npz"` in an imported file names the file beside that file, as its own imports are named;
    with a same-named file beside the top spec, the top one was decided silently (a referee's finding)."""
    np = require_module("numpy", "weights")
    (tmp_path / "sub").mkdir()
    np.savez(tmp_path / "sub" / "w.npz", W_up=np.array([[1.0, 0], [0, 1], [1, 1]]),
             W_down=np.array([[-1.0, 0, 1], [0, -1, 1]]))  # planted: absorbable by a flip
    np.savez(tmp_path / "w.npz", W_up=np.array([[1.0, 2], [3, 1], [1, 5]]), W_down=np.array([[1.0, 7, 1], [2, -1, 3]]))
    (tmp_path / "sub" / "blocks.absorb").write_text('block b { activation: relu  weights: "w.npz" }\n', encoding="utf-8")
    top = tmp_path / "top.absorb"
    top.write_text('import "sub/blocks.absorb"\nabsorb b\n', encoding="utf-8")
    assert symabsorb.prove(top).verdicts == {"absorb b": "absorbable"}
    (tmp_path / "own.absorb").write_text('block b { activation: relu  weights: "w.npz" }\nabsorb b\n', encoding="utf-8")
    assert symabsorb.prove(tmp_path / "own.absorb").verdicts == {"absorb b": "not-absorbable"}


def test_verify_reads_an_imported_blocks_weights_where_prove_did(tmp_path: Path) -> None:
    np = require_module("numpy", "weights")
    (tmp_path / "sub").mkdir()
    np.savez(tmp_path / "sub" / "w.npz", W_up=np.array([[1.0, 0], [0, 1], [1, 1]]),
             W_down=np.array([[-1.0, 0, 1], [0, -1, 1]]))
    np.savez(tmp_path / "w.npz", W_up=np.array([[1.0, 2], [3, 1], [1, 5]]), W_down=np.array([[1.0, 7, 1], [2, -1, 3]]))
    (tmp_path / "sub" / "blocks.absorb").write_text('block b { activation: relu  weights: "w.npz" }\n', encoding="utf-8")
    top = tmp_path / "top.absorb"
    top.write_text('import "sub/blocks.absorb"\nabsorb b\n', encoding="utf-8")
    report = tmp_path / "r.json"
    report.write_text(symabsorb.prove(top).render("json"), encoding="utf-8")
    checked = symabsorb.verify(report)
    assert checked.ok and checked.checks[0].verdict == "absorbable", checked.render("text")


def test_a_session_holds_its_run_and_installs_it_while_it_answers(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import math

    from symabsorb import context
    from symabsorb.budget import Budget

    run = context.Run(Budget(seconds=math.inf), cache=False)
    s = Session(default_library(), run=run)
    seen: list[object] = []
    monkeypatch.setattr(Session, "_answer", lambda self, q: seen.append(context.current()))
    s.answer(resolve_text(SPEC, str(tmp_path / "s.absorb")).queries[0])
    with s.installed():
        seen.append(context.current())
    assert seen == [run, run] and context.current() is not run
    assert Session(default_library()).run is None  # no run of its own: the one in force when it answers


def test_a_session_snapshots_the_registries_it_answers_with() -> None:
    from symabsorb.theory.skips import SKIP_KINDS

    s = Session(default_library())
    assert s.registries.procedures is s.library.procedures  # the registry the library was validated against
    assert s.registries.hypotheses.keys() == s.library.hypotheses.keys()
    assert "identity" in s.registries.names()["skip_kinds"]
    SKIP_KINDS["test-after-the-session"] = SKIP_KINDS["identity"]
    try:
        assert "test-after-the-session" not in s.registries.skip_kinds  # registered later: not this session's
        assert "test-after-the-session" in Session(default_library()).registries.skip_kinds
        assert s.with_(budget=None).registries is s.registries  # a changed session keeps its snapshot
    finally:
        del SKIP_KINDS["test-after-the-session"]


def test_the_snapshot_names_the_renderers_and_the_scan_layouts_in_force() -> None:
    import symabsorb.explore.scan as scan
    import symabsorb.report.formats  # noqa: F401  (provides the renderers)

    s = Session(default_library())
    names = s.registries.names()
    assert "md" in names["renderers"] and "symabsorb" in names["layouts"]
    scan.register_layout(scan.Layout("test-later", "a layout registered after the session", "up", "down"))
    try:
        assert "test-later" not in s.registries.names()["layouts"]
        assert "test-later" in Session(default_library()).registries.names()["layouts"]
    finally:
        scan.unregister_layout("test-later")


def test_a_session_is_picklable_with_its_snapshot() -> None:
    import pickle

    s = Session(default_library(), budget=None)
    again = pickle.loads(pickle.dumps(s))
    assert again.registries.names() == s.registries.names() and again.budget is None
