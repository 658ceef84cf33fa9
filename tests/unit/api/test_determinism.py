"""Answers never depend on how busy the machine is: budgets count CPU time, not wall-clock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CODE = "import sys; from symabsorb.cli import main; sys.exit(main(sys.argv[1:]))"


def _catalog(tmp: Path) -> dict[str, str]:
    env = {**os.environ, "SYMABSORB_CACHE_DIR": str(tmp)}
    out = subprocess.run([sys.executable, "-c", CODE, "catalog", "--json", "--no-cache"], capture_output=True,
                         text=True, env=env, check=True).stdout
    return {row["activation"]: json.dumps(row, sort_keys=True) for row in json.loads(out)}


@pytest.mark.slow
def test_catalog_is_the_same_under_load(tmp_path: Path) -> None:
    quiet = _catalog(tmp_path / "a")
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        loaded = _catalog(tmp_path / "b")
    finally:
        for p in busy:
            p.kill()
            p.wait()
    assert loaded == quiet
    assert len(quiet) >= 25
