"""Hypothesis checkers: each registered name maps a block or stack to proved / refuted / unknown
(or "assumed", for size and genericity assumptions that the verdict then states).

The checkers live by concern: :mod:`.hyp_skips` (the skip), :mod:`.hyp_activation` (facts of σ or g),
:mod:`.hyp_sizes` (sizes and weights), :mod:`.hyp_stacks` (every block of a stack). Each exports its
own table ``CHECKERS``; this module merges them into :data:`REGISTRY` (a name defined twice is an error).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from . import hyp_activation, hyp_gated, hyp_layers, hyp_ridge, hyp_sizes, hyp_skips, hyp_stacks
from .checks import REFERENCES, Checker, Subject
from .derivation import HypothesisCheck
from .hyp_sizes import nondegeneracy

__all__ = ["REFERENCES", "REGISTRY", "Subject", "check", "iter_registry", "nondegeneracy"]


def _merge(*tables: dict[str, Checker]) -> dict[str, Checker]:
    out: dict[str, Checker] = {}
    for table in tables:
        for name, fn in table.items():
            if name in out:
                raise RuntimeError(f"hypothesis `{name}` is registered twice")
            out[name] = fn
    return out


REGISTRY: dict[str, Checker] = _merge(hyp_skips.CHECKERS, hyp_activation.CHECKERS, hyp_sizes.CHECKERS,
                                      hyp_stacks.CHECKERS, hyp_layers.CHECKERS, hyp_gated.CHECKERS,
                                      hyp_ridge.CHECKERS)


def check(name: str, subject: Subject, params: dict[str, Any]) -> HypothesisCheck:
    return REGISTRY[name](subject, params)


def iter_registry() -> Iterator[str]:
    return iter(sorted(REGISTRY))
