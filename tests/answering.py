"""The prover and the concrete-weights decisions as the tests call them: through a
:class:`symabsorb.answer.Session` (the one door), with the built-in library unless one is given.

The package itself never falls back to the built-in library below the API (``tests/test_layers.py``);
tests that exercise one layer use these short forms instead of building a session each time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from symabsorb.analysis.budget import DEFAULT_BUDGET
from symabsorb.answer import Session
from symabsorb.theory.library import Library, default_library

__all__ = ["build_report", "classify", "decide", "decide_block", "derive", "prove", "session", "verify_report", "width_bounds",
           "width_derivation", "width_witness"]


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
    from symabsorb.weights.width import width_bounds as _width_bounds

    return _width_bounds(block, base, library or default_library(), budget, base_dir)


def width_derivation(block: Any, base: Any, query: str, budget: float | None = DEFAULT_BUDGET,
                     library: Library | None = None, base_dir: str | None = None) -> Any:
    from symabsorb.weights.width import width_derivation as _width_derivation

    return _width_derivation(block, base, query, library or default_library(), budget, base_dir)


def width_witness(block: Any, base: Any, width: int, budget: float | None = DEFAULT_BUDGET,
                  library: Library | None = None, base_dir: str | None = None) -> Any:
    from symabsorb.weights.width import width_witness as _width_witness

    return _width_witness(block, base, width, library or default_library(), budget, base_dir)


def verify_report(report: Path, weights_dir: Path | None = None, blas: bool = False,
                  library: Library | None = None) -> Any:
    from symabsorb.answer.verify import verify_report as _verify_report

    return _verify_report(report, session(library), weights_dir, blas)


def build_report(spec: Any, text: str, library: Library | None = None, budget: float | None = DEFAULT_BUDGET,
                 progress: Any = None) -> Any:
    return session(library, budget).report(spec, text, progress)
