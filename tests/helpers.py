"""Everything the tests share but fixtures (those are in conftest.py): paths, skipping on a missing
extra, the CLI in-process, cache sealing, and the prover and the concrete-weights decisions as the
tests call them — through a :class:`symabsorb.answer.Session` (the one door), with the built-in library
unless one is given. The package itself never falls back to the built-in library below the API."""

from __future__ import annotations

import importlib
import os
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from symabsorb.analysis.budget import DEFAULT_BUDGET
from symabsorb.answer import Session
from symabsorb.theory.library import Library, default_library

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
GOLDEN = ROOT / "tests" / "golden"


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


# ---- the one door, as the tests call it ----------------------------------------------------------


def session(library: Library | None = None, budget: float | None = DEFAULT_BUDGET,
            base_dir: str | None = None) -> Session:
    return Session(library or default_library(), budget, base_dir)


def prove(target: Any, query: str = "", library: Library | None = None, budget: float | None = DEFAULT_BUDGET) -> Any:
    return session(library, budget).prove(target, query)


def derive(target: Any, query: str = "", library: Library | None = None, budget: float | None = DEFAULT_BUDGET) -> Any:
    return session(library, budget).derive(target, query)


def classify(act: Any, library: Library | None = None, budget: float | None = DEFAULT_BUDGET) -> Any:
    return session(library, budget).classify(act)


def decide(target: Any, library: Library | None = None, base_dir: str | None = None, query: str = "",
           budget: float | None = DEFAULT_BUDGET) -> Any:
    return session(library, budget, base_dir).decide(target, query)


def decide_block(block: Any, derivation: Any, library: Library | None = None) -> Any:
    from symabsorb.weights.decide import decide_block as _decide_block

    return _decide_block(block, derivation, library or default_library())


def width_bounds(block: Any, base: Any, budget: float | None = DEFAULT_BUDGET, library: Library | None = None,
                 base_dir: str | None = None) -> Any:
    from symabsorb.theory.prover import width_proof
    from symabsorb.weights.width import width_bounds as _width_bounds

    library = library or default_library()
    return _width_bounds(block, width_proof(block, base, library, budget), library, base_dir)


def width_derivation(block: Any, base: Any, query: str, budget: float | None = DEFAULT_BUDGET,
                     library: Library | None = None, base_dir: str | None = None) -> Any:
    from symabsorb.theory.prover import width_proof
    from symabsorb.weights.width import width_derivation as _width_derivation

    library = library or default_library()
    return _width_derivation(block, width_proof(block, base, library, budget), query, library, base_dir)


def width_witness(block: Any, base: Any, width: int, budget: float | None = DEFAULT_BUDGET,
                  library: Library | None = None, base_dir: str | None = None) -> Any:
    from symabsorb.theory.prover import width_proof
    from symabsorb.weights.width import width_witness as _width_witness

    library = library or default_library()
    return _width_witness(block, width_proof(block, base, library, budget), width, library, base_dir)


def proved_json(spec_text: str, directory: Path, name: str = "spec.absorb") -> dict[str, Any]:
    """The JSON report ``prove`` writes for ``spec_text`` saved as ``directory/name`` (what ``verify`` reads)."""
    import json

    import symabsorb

    spec = directory / name
    spec.write_text(spec_text)
    return json.loads(symabsorb.prove(str(spec)).render("json"))  # type: ignore[no-any-return]


def verify_report(report: Path, weights_dir: Path | None = None, blas: bool = False,
                  library: Library | None = None) -> Any:
    from symabsorb.answer.verify import verify_report as _verify_report

    return _verify_report(report, session(library), weights_dir, blas)


def build_report(spec: Any, text: str, library: Library | None = None, budget: float | None = DEFAULT_BUDGET,
                 progress: Any = None) -> Any:
    return session(library, budget).report(spec, text, progress)


#: A user's lemma (a restatement of L-growth at a higher priority, claiming source "library"): what a
#: `--theorems` directory holds in the tests of user results.
USER_LEMMA = """id = "my-bounded"
label = "My lemma"
title = "Bounded activations"
kind = "lemma"
source = "library"
citation = "a user's lemma"
priority = 2
statement = "Bounded activations cannot absorb a nonzero skip."
uses = ["L-growth"]

[[hypotheses]]
name = "ungated"
[[hypotheses]]
name = "locally_bounded"
[[hypotheses]]
name = "sublinear_growth"
[[hypotheses]]
name = "skip_nonzero"

[conclusion]
verdict = "impossible"
scope = "all weights"

[proof]
steps = ["As in [L-growth]."]
"""
