"""The golden table of bad inputs: each file in tests/golden/errors gives its exact message.

Files starting with `_` are helpers (the other half of an import cycle). Regenerate with
`pytest tests/unit/cli/test_errors_golden.py --update-goldens` and review the diff.
"""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from symabsorb.cli import main
from tests.helpers import GOLDEN

CASES = sorted(p for p in (GOLDEN / "errors").glob("*.absorb") if not p.name.startswith("_"))


def test_table_is_large_enough() -> None:
    assert len(CASES) >= 20


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_golden_error(path: Path, monkeypatch: pytest.MonkeyPatch, update_goldens: bool) -> None:
    monkeypatch.chdir(path.parent)
    err, out = io.StringIO(), io.StringIO()
    with redirect_stderr(err), redirect_stdout(out):
        code = main(["check", path.name])
    assert code == 2, out.getvalue()
    message = err.getvalue()
    golden = path.with_suffix(".txt")
    if update_goldens:
        golden.write_text(message, encoding="utf-8")
    assert message == golden.read_text(encoding="utf-8")
    first = message.splitlines()[0]
    # file:line:col, then what was found and what was expected, never a traceback or a token name
    assert first.startswith(f"{path.name}:") or first.startswith("_cycle_b.absorb:")
    assert "found:" in message and "expected:" in message
    assert "Traceback" not in message and "__ANON" not in message and "RBRACE" not in message


def test_line_7_column_12() -> None:
    text = (GOLDEN / "errors" / "line7_col12.txt").read_text(encoding="utf-8")
    assert text.startswith("line7_col12.absorb:7:12:")
