"""Shared fixtures. Tests that need an optional extra are skipped (with the reason) when it is
missing, except under SYMABSORB_REQUIRE_EXTRAS=1 (set by .ci/run), where a missing extra fails."""

from __future__ import annotations

import importlib
import os
import shutil
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
GOLDEN = Path(__file__).resolve().parent / "golden"


def pytest_configure(config: pytest.Config) -> None:
    """Tests never read or write the user's facts cache: each run gets a fresh one, without replay."""
    import tempfile

    if "SYMABSORB_CACHE_DIR" not in os.environ:
        os.environ["SYMABSORB_CACHE_DIR"] = tempfile.mkdtemp(prefix="symabsorb-test-cache-")
    # Tests monkeypatch the code under a command; a replayed output of an earlier run would hide
    # that. tests/test_replay.py turns replay back on where it is the subject.
    os.environ["SYMABSORB_NO_REPLAY"] = "1"


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Collect once, then freeze what survives (``gc.freeze``). pytest's cleanup after the session
    runs five full collections (to find unraisable exceptions) over SymPy's whole heap, seconds on a
    loaded machine; execnet gives an xdist worker 5 s after it reported before it sends itself a
    SIGINT, and that KeyboardInterrupt landed in Hypothesis's garbage-collector callback ("Exception
    ignored in: gc_callback ... KeyboardInterrupt" at the end of `make test`). This collection still
    reports unraisable exceptions; after it the cleanup's collections have nothing old to walk."""
    import gc

    gc.collect()
    gc.freeze()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", help="rewrite golden files from current output")


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))


def _strict() -> bool:
    return os.environ.get("SYMABSORB_REQUIRE_EXTRAS") == "1"


def require_module(name: str, extra: str) -> ModuleType:
    """Import ``name`` or skip (fail under SYMABSORB_REQUIRE_EXTRAS=1); also at module level."""
    try:
        return importlib.import_module(name)
    except ImportError:
        message = f"needs the optional package `{name}` (pip install 'symabsorb[{extra}]')"
        if _strict():
            pytest.fail(message)
        pytest.skip(message, allow_module_level=True)


def require_program(name: str, package: str) -> str:
    """The path of an executable, or skip (fail under SYMABSORB_REQUIRE_EXTRAS=1)."""
    path = shutil.which(name)
    if path is None:
        message = f"needs the program `{name}` (Debian package {package})"
        if _strict():
            pytest.fail(message)
        pytest.skip(message)
    return path


def run_cli(*argv: str) -> tuple[int, str, str, float]:
    """``symabsorb ARGV`` in-process: exit code, stdout, stderr, CPU seconds used."""
    import io
    import time
    from contextlib import redirect_stderr, redirect_stdout

    from symabsorb.cli import main

    out, err = io.StringIO(), io.StringIO()
    start = time.process_time()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue(), time.process_time() - start


def sealed_payload(path: Path) -> bytes:
    """The JSON of a cache entry (:func:`symabsorb.userdirs.seal`'s output without its HMAC line)."""
    return path.read_bytes().partition(b"\n")[2]


def reseal(path: Path, payload: bytes, purpose: str, key: str, cache: Path) -> None:
    """Write ``payload`` to ``path`` sealed with the genuine key of ``cache``: what the user's own
    earlier run could have written (a damaged or odd entry that still carries a valid HMAC)."""
    import hashlib
    import hmac

    secret = (cache / "key").read_bytes()
    mac = hmac.new(secret, purpose.encode() + b"\0" + key.encode() + b"\0" + payload, hashlib.sha256).hexdigest()
    path.write_bytes(mac.encode() + b"\n" + payload)
