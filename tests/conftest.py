"""Fixtures and hooks only; what tests share is in ``tests/helpers.py``. Tests that need an optional
extra are skipped (with the reason) when it is missing, except under SYMABSORB_REQUIRE_EXTRAS=1 (set by
.ci/run), where a missing extra fails (``helpers.require_module``)."""

from __future__ import annotations

import os

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """Tests never read or write the user's facts cache: each run gets a fresh one, without replay."""
    import tempfile

    if "SYMABSORB_CACHE_DIR" not in os.environ:
        os.environ["SYMABSORB_CACHE_DIR"] = tempfile.mkdtemp(prefix="symabsorb-test-cache-")
    # Tests monkeypatch the code under a command; a replayed output of an earlier run would hide
    # that. tests/unit/api/test_replay.py turns replay back on where it is the subject.
    os.environ["SYMABSORB_NO_REPLAY"] = "1"
    # Terminal output wraps at the terminal's width, which differs between a shell, CI and an xdist worker: the
    # tests read it at 100 columns unless they set COLUMNS themselves (monkeypatch.setenv overrides this).
    os.environ["COLUMNS"] = "100"


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
