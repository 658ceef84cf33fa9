"""Packaging (issue 21 items 13-15): the Quick start, the torch extra as a range, the flat layout
(no "Editable installation" warning) and a real non-editable install used from the repository root."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import types
import venv
from pathlib import Path

import pytest

import symabsorb
from symabsorb.errors import SpecError
from tests.helpers import ROOT


def _pyproject() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _quick_start() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text.split("## Quick start", 1)[1].split("\n## ", 1)[0]


def test_quick_start_has_two_commands_and_ci_runs_the_same_test_command() -> None:
    block = re.search(r"```sh\n(.*?)```", _quick_start(), re.S)
    assert block is not None
    commands = [line.split("#", 1)[0].strip() for line in block.group(1).splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^make test$", ci, re.M)
    # what `make extras` adds, and which commands need it
    quick = _quick_start()
    assert "make extras" in quick
    for extra in ("numpy", "safetensors", "rich", "matplotlib", "torch", "dask"):
        assert extra in quick, extra
    for command in ("absorb", "explore", "scan"):
        assert f"`{command}" in quick or f"symabsorb {command}" in quick, command


def _requirement(extra: str, name: str) -> str:
    project = _pyproject()["project"]
    assert isinstance(project, dict)
    reqs = [r for r in project["optional-dependencies"][extra] if re.match(rf"{name}\b", r)]
    assert len(reqs) == 1, reqs
    return str(reqs[0])


def _satisfies(version: str, requirement: str) -> bool:
    try:
        from packaging.requirements import Requirement
    except ImportError:  # pragma: no cover - pip vendors packaging; setuptools ships it
        pytest.skip("packaging is not installed")
    return Requirement(requirement).specifier.contains(version, prereleases=True)


def test_the_torch_extra_is_a_range_that_ml_installs_satisfy() -> None:
    req = _requirement("torch", "torch")
    assert "==" not in req and "~=" not in req
    for version in ("2.6.0", "2.8.0+cu128", "2.13.0", "3.0.0"):
        assert _satisfies(version, req), (version, req)
    assert not _satisfies("2.5.1", req)  # weights_only=True is unsafe before 2.6 (CVE-2025-32434)
    # ...while CI and `make extras` install exactly the 2.13.0 CPU build (reproducible, not a CUDA wheel)
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^TORCH_VERSION \?= 2\.13\.0$", makefile, re.M)
    assert "'torch==$(TORCH_VERSION)'" in makefile


def test_a_missing_or_too_old_torch_names_the_range(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numpy")
    from symabsorb.weights.io import TORCH_MINIMUM, read_tensors

    assert f">={TORCH_MINIMUM}" in _requirement("torch", "torch").replace(" ", "")
    weights = tmp_path / "layer.pt"
    weights.write_bytes(b"PK\x03\x04 not really a zip")
    monkeypatch.setitem(sys.modules, "torch", None)  # not installed
    with pytest.raises(SpecError) as info:
        read_tensors(weights)
    assert "==" not in str(info.value) and f"torch >= {TORCH_MINIMUM}" in str(info.value)
    old = types.ModuleType("torch")
    old.__version__ = "2.3.1+cpu"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "torch", old)
    with pytest.raises(SpecError, match=r"torch 2\.3\.1\+cpu is too old") as info:
        read_tensors(weights)
    assert "CVE-2025-32434" in str(info.value)


def test_the_layout_is_flat_so_an_editable_install_needs_no_import_hook() -> None:
    """grammar/ and theorems/ stay where they are; the package reaches them through symbolic
    links, so setuptools sees a simple flat layout (an editable install is a plain path entry: no
    meta path finder, no "Editable installation" warning) and a checkout has the data a wheel has."""
    tool = _pyproject()["tool"]
    assert isinstance(tool, dict)
    assert tool["setuptools"]["package-dir"] == {"": "."}
    for name in ("grammar", "theorems"):
        link = ROOT / "symabsorb" / name
        assert link.is_symlink() and link.resolve() == (ROOT / name).resolve()
    assert (ROOT / "symabsorb" / "theorems" / "prop5.toml").is_file()
    assert (ROOT / "symabsorb" / "grammar" / "absorb.lark").is_file()


def _copy_checkout(dst: Path) -> Path:
    """A copy of the source tree as a fresh clone has it (symbolic links kept, no build products)."""
    ignore = shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info", "__pycache__", ".pytest_cache",
                                    ".mypy_cache", ".ruff_cache", ".hypothesis", "report.*", "*-explore", "*-scan")
    shutil.copytree(ROOT, dst, symlinks=True, ignore=ignore)
    return dst


def _venv(path: Path) -> Path:
    """A new virtual environment that sees this environment's packages (sympy, lark, ...) but not
    its symabsorb: a ``.pth`` line adds the site directories, whose own ``.pth`` files (the
    editable hook of the development install) are not run."""
    venv.create(path, with_pip=True, symlinks=True)
    python = path / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    import site as site_module

    dirs = [d for d in [*site_module.getsitepackages(), site_module.getusersitepackages()] if os.path.isdir(d)]
    Path(site, "outer-environment.pth").write_text("\n".join(dirs) + "\n", encoding="utf-8")
    return python


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, (cmd, result.stdout[-3000:], result.stderr[-3000:])
    return result


@pytest.mark.slow
def test_a_real_install_works_from_the_repository_root(tmp_path: Path) -> None:
    """``pip install .`` then ``python -c "import symabsorb; symabsorb.classify('gelu')"`` from the
    repository root, where the source tree shadows the installed package; then ``pip install -e .``
    prints no "Editable installation" warning."""
    checkout = _copy_checkout(tmp_path / "checkout")
    python = _venv(tmp_path / "venv")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(SYMABSORB_CACHE_DIR=str(tmp_path / "cache"), SYMABSORB_NO_REPLAY="1")
    probe = ("import symabsorb, symabsorb.theorems; "
             "print(symabsorb.__file__); print(symabsorb.classify('gelu').verdict)")

    install = _run([str(python), "-m", "pip", "install", "-v", "--no-deps", "."], checkout, env)
    assert "Editable installation" not in install.stdout + install.stderr
    root = _run([str(python), "-c", probe], checkout, env).stdout.split()
    assert root == [str(checkout / "symabsorb" / "__init__.py"), "conditional"]  # the source tree, complete
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    installed = _run([str(python), "-c", probe], elsewhere, env).stdout.split()
    assert installed[1] == "conditional" and str(tmp_path / "venv") in installed[0]  # the installed wheel

    editable = _run([str(python), "-m", "pip", "install", "-v", "--no-deps", "-e", "."], checkout, env)
    output = editable.stdout + editable.stderr
    assert "Editable installation" not in output and "meta path finder" not in output
    via_editable = _run([str(python), "-c", probe], elsewhere, env).stdout.split()
    assert via_editable == [str(checkout / "symabsorb" / "__init__.py"), "conditional"]
    assert symabsorb.__version__ in _run([str(python), "-m", "symabsorb", "--version"], elsewhere, env).stdout
