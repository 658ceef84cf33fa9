"""symabsorb/runtime.py holds only what the command line needs from below the API: every name it exports is
one the CLI imports, and one command's run is built and installed by ``command_run``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import symabsorb
from symabsorb import context, runtime

PACKAGE = Path(symabsorb.__file__).parent


def test_every_runtime_name_is_one_the_command_line_imports() -> None:
    tree = ast.parse((PACKAGE / "cli.py").read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module == "runtime" and node.level == 1
                for alias in node.names}
    assert set(runtime.__all__) == imported
    for name in runtime.__all__:
        assert getattr(runtime, name) is not None


def test_command_run_installs_one_run_with_the_options() -> None:
    limits = runtime.parse_limits(["input-bytes=1000"])
    assert limits.input_bytes == 1000
    with runtime.command_run(12.0, limits, allow_outside=True, cache=False) as run:
        assert context.current() is run
        assert run.budget.seconds == 12.0 and run.budget.limits is limits and run.budget.allow_outside
        assert not run.cache and run.ledger.inputs == {}
    assert context.current() is not run
    with pytest.raises(ValueError, match="--limit 'nonsense'"):
        runtime.parse_limits(["nonsense"])
