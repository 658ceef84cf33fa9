"""Plug-in discovery (symabsorb/plugins.py): an installed distribution naming a module in the entry-point group
``symabsorb.plugins`` extends every registry — a procedure, a renderer, a skip kind, a hypothesis checker — in the
process that makes a session, in a worker that builds its session the same way, and in the shell command. The
distribution here is a fake one: a ``*.dist-info`` directory with its ``entry_points.txt`` on ``sys.path``."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from symabsorb import plugins
from symabsorb.answer import Session
from tests.helpers import ROOT

MODULE = "fake_symabsorb_ext"
PROC = "fake-plugin-proc"

PLUGIN = f'''
from dataclasses import replace

import sympy as sp

from symabsorb.report.formats import renderer
from symabsorb.theory.derivation import DerivationStep, HypStatus, Verdict
from symabsorb.theory.hypotheses import declare
from symabsorb.theory.checks import simple
from symabsorb.theory.procedures import procedure
from symabsorb.theory.skips import SkipKind, skip_kind


@procedure("{PROC}", doc="a plug-in's procedure: leaves the verdict open, saying so")
def _marks_open(block, d, chosen, library):
    step = DerivationStep("The plug-in procedure decided nothing.", (chosen.result.id,), kind="conclusion")
    return replace(d, verdict=Verdict.OPEN, steps=(*d.steps, step), notes=(*d.notes, "fake plug-in procedure"))


@renderer("fakefmt")
def _render(report, options):
    return "fake"


@skip_kind
class _Negated(SkipKind):
    """M = -I_d."""

    name = "fake-negated"

    def describe(self, skip):
        return "negated skip"

    def latex(self, skip):
        return "-I_d"

    def matrix(self, skip, dim=None):
        return sp.ImmutableMatrix(-sp.eye(dim)) if isinstance(dim, int) else None

    def scale(self, skip):
        return sp.Integer(-1)


@declare("fake_always", "a plug-in's hypothesis (always proved)")
def _always(subject, params):
    return simple("fake_always", HypStatus.PROVED, "always")
'''


def _install(root: Path, body: str = PLUGIN) -> Path:
    """A fake installed distribution under ``root``: its module and its ``.dist-info`` with the entry point."""
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{MODULE}.py").write_text(body, encoding="utf-8")
    info = root / "fake_symabsorb_ext-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-symabsorb-ext\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[symabsorb.plugins]\nfake = {MODULE}\n", encoding="utf-8")
    return root


def _lemma(directory: Path, concrete: str = PROC) -> Path:
    text = (ROOT / "symabsorb" / "theorems" / "thm8.toml").read_text(encoding="utf-8")
    text = text.replace('id = "thm8"', 'id = "U-plugin"', 1).replace("priority = 40", "priority = 1", 1)
    text = text.replace('concrete = "index-set"', f'concrete = "{concrete}"', 1)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "U-plugin.toml").write_text(text, encoding="utf-8")
    return directory


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    site = _install(tmp_path / "site")
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    plugins.reset()
    try:
        yield site
    finally:
        from symabsorb.report.formats import RENDERERS
        from symabsorb.theory.hypotheses import undeclare
        from symabsorb.theory.procedures import PROCEDURES
        from symabsorb.theory.skips import SKIP_KINDS

        PROCEDURES.unregister(PROC)
        RENDERERS.unregister("fakefmt")
        SKIP_KINDS.pop("fake-negated", None)
        undeclare("fake_always")
        sys.modules.pop(MODULE, None)
        plugins.reset()


def test_a_session_made_loads_the_installed_plugin_and_snapshots_every_registry(installed: Path,
                                                                                 tmp_path: Path) -> None:
    session = Session.make((_lemma(tmp_path / "lemmas"),))
    assert plugins.loaded() == {"fake": MODULE}
    names = session.registries.names()
    assert PROC in names["procedures"]
    assert "fakefmt" in names["renderers"]
    assert "fake-negated" in names["skip_kinds"]
    assert "fake_always" in names["hypotheses"]
    assert session.library.results["U-plugin"].conclusion.concrete == PROC
    from symabsorb.model import resolve_text

    spec = resolve_text("block b { activation: relu  W_up: [[1, 0], [0, 1], [1, 1]]  "
                        "W_down: [[-1, 0, 1], [0, -1, 1]] }\nabsorb b\n", str(tmp_path / "s.absorb"))
    d = session.answer(spec.queries[0]).derivation
    assert d is not None and d.decided_by == "U-plugin" and "fake plug-in procedure" in d.notes


def test_a_worker_building_its_library_sees_the_plugin(installed: Path, tmp_path: Path) -> None:
    # explore's workers build `Session(library_with(task.theorems))`: the library loads the plug-ins first
    from symabsorb.theory.library import library_with

    library = library_with([_lemma(tmp_path / "lemmas")])
    assert library.procedure("U-plugin") is not None and plugins.loaded() == {"fake": MODULE}


def test_a_plugin_that_fails_to_load_is_an_error_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = _install(tmp_path / "site", "raise ImportError('broken on purpose')\n")
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    plugins.reset()
    try:
        with pytest.raises(plugins.PluginError, match=r"plug-in `fake` \(fake_symabsorb_ext\) failed to load: "
                                                      r"ImportError: broken on purpose"):
            plugins.load()
    finally:
        sys.modules.pop(MODULE, None)
        plugins.reset()


def _cli(args: list[str], site: Path | None, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*([str(site)] if site else []), str(ROOT)])
    return subprocess.run([sys.executable, "-m", "symabsorb", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=600, check=False)


def test_the_shell_command_sees_an_installed_plugin(tmp_path: Path) -> None:
    site = _install(tmp_path / "site")
    lemmas = _lemma(tmp_path / "lemmas")
    spec = tmp_path / "s.absorb"
    spec.write_text("block b { activation: relu  W_up: [[1, 0], [0, 1], [1, 1]]  "
                    "W_down: [[-1, 0, 1], [0, -1, 1]] }\nabsorb b\n", encoding="utf-8")
    without = _cli(["prove", str(spec), "--theorems", str(lemmas), "--no-cache"], None, tmp_path)
    assert without.returncode == 2 and f"unknown concrete-weights procedure `{PROC}`" in without.stderr
    with_plugin = _cli(["prove", str(spec), "--theorems", str(lemmas), "--no-cache", "--format", "json"], site,
                       tmp_path)
    assert with_plugin.returncode == 0, with_plugin.stderr
    assert '"U-plugin"' in with_plugin.stdout and "fake plug-in procedure" in with_plugin.stdout
    rendered = _cli(["prove", str(spec), "--no-cache", "--format", "fakefmt"], site, tmp_path)
    assert rendered.returncode == 0 and rendered.stdout.strip() == "fake", rendered.stderr
    refused = _cli(["prove", str(spec), "--no-cache", "--format", "fakefmt"], None, tmp_path)
    assert refused.returncode == 2 and "fakefmt" in refused.stderr


def test_without_a_plugin_installed_the_metadata_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process with no distribution declaring the group never imports importlib.metadata for it (the
    pre-check reads each distribution's entry_points.txt only)."""
    import importlib.metadata

    def refuse(**_: object) -> object:
        raise AssertionError("entry_points read although no distribution declares the group")

    monkeypatch.setattr(importlib.metadata, "entry_points", refuse)
    plugins.reset()
    try:
        assert plugins.load() == {}
    finally:
        plugins.reset()


def test_a_table_providing_its_snapshot_imports_nothing_of_the_answer_layer() -> None:
    """report/formats.py and explore/scan.py provide their tables through the base module plugins.py: the
    format table stays as light to import as it was (no answer layer, no SymPy)."""
    code = ("import sys, symabsorb.report.formats; "
            "print(sorted(m for m in ('symabsorb.answer', 'sympy') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300,
                          check=False)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr


LAYOUT_PLUGIN = """
from symabsorb.explore.scan import Layout, register_layout

register_layout(Layout("fake-plugin-ffn", "a plug-in's family", "ffn.w_in.weight", "ffn.w_out.weight",
                       activation="relu"), before="symabsorb")
"""


def test_scan_matches_a_plugin_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from symabsorb.explore import scan

    site = _install(tmp_path / "site", LAYOUT_PLUGIN)
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    plugins.reset()
    try:
        weights = tmp_path / "w.npz"
        weights.write_bytes(b"not read: only hashed")
        names = [f"layers.0.ffn.{t}.weight" for t in ("w_in", "w_out")]
        tasks, missing = scan.find_layers(weights, names, None, None, directory=tmp_path)
        assert missing == [] and [t.pattern for t in tasks] == ["fake-plugin-ffn"]
    finally:
        scan.unregister_layout("fake-plugin-ffn")
        sys.modules.pop(MODULE, None)
        plugins.reset()
