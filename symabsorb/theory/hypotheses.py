"""The hypothesis registry: every hypothesis a result may name, declared once with its checker.

The checkers live by concern: :mod:`.hyp_skips` (the skip), :mod:`.hyp_activation` (facts of σ or g),
:mod:`.hyp_sizes` (sizes and weights), :mod:`.hyp_stacks` (every block of a stack). Each declares its
hypotheses with the decorator of :func:`~.checks.registrar` (name, what holds, parameter schema,
bindings, subject); this module merges the tables into :data:`REGISTRY` (a name declared twice is an
error). Code outside the package (a plug-in, a test) adds one with :func:`declare`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from . import (
    hyp_activation,
    hyp_deep,
    hyp_depth,
    hyp_euler,
    hyp_gated,
    hyp_layers,
    hyp_ridge,
    hyp_sizes,
    hyp_skips,
    hyp_stacks,
    hyp_width,
)
from .checks import REFERENCES, Checker, Subject
from .derivation import HypothesisCheck
from .hyp_sizes import nondegeneracy
from .hypdecl import Declaration, Param

__all__ = ["REFERENCES", "REGISTRY", "Declaration", "Param", "Subject", "check", "declare", "hypothesis_table",
           "iter_registry", "nondegeneracy", "undeclare"]


def _merge(*tables: dict[str, Declaration]) -> dict[str, Declaration]:
    out: dict[str, Declaration] = {}
    for table in tables:
        for name, decl in table.items():
            if name in out:
                raise RuntimeError(f"hypothesis `{name}` is registered twice")
            out[name] = decl
    return out


#: Every declared hypothesis by name; a value is a :class:`Declaration`, callable as its checker.
REGISTRY: dict[str, Declaration] = _merge(hyp_skips.CHECKERS, hyp_activation.CHECKERS, hyp_sizes.CHECKERS,
                                          hyp_stacks.CHECKERS, hyp_layers.CHECKERS, hyp_gated.CHECKERS,
                                          hyp_ridge.CHECKERS, hyp_euler.CHECKERS, hyp_width.CHECKERS,
                                          hyp_depth.CHECKERS, hyp_deep.CHECKERS)


def declare(name: str, holds: str, *, params: dict[str, Param] | None = None, binds: tuple[str, ...] = (),
            subject: str = "block", require_any: tuple[str, ...] = ()) -> Callable[[Checker], Declaration]:
    """Declare a hypothesis and register the decorated function as its checker::

        @declare("cubic_odd_part", "σ(z) − σ(−z) = 2c·z", binds=("c",))
        def _cubic(subject: Subject, params: dict[str, Any]) -> HypothesisCheck: ...

    Result files loaded afterwards may name it (``--theorems DIR``; :func:`~.library.library_with`)."""

    def register(fn: Checker) -> Declaration:
        if name in REGISTRY:
            raise RuntimeError(f"hypothesis `{name}` is registered twice")
        decl = Declaration(name, holds, params or {}, binds, subject, require_any, fn)
        REGISTRY[name] = decl
        return decl

    return register


def undeclare(name: str) -> None:
    """Remove a hypothesis added with :func:`declare` (tests clean up with it)."""
    REGISTRY.pop(name, None)


def check(name: str, subject: Subject, params: dict[str, Any]) -> HypothesisCheck:
    """Hypothesis ``name`` checked on ``subject``: with the declaration of the library in force (the one the
    subject carries: its snapshot taken at load) when it has one, else the declared table."""
    declared = subject.library.hypotheses.get(name) if subject.library is not None else None
    return (declared if declared is not None else REGISTRY[name])(subject, params)


def iter_registry() -> Iterator[str]:
    return iter(sorted(REGISTRY))


def hypothesis_table(names: list[str] | None = None) -> str:
    """The Markdown table of declared hypotheses (docs/theorems.md holds it; a test compares)."""
    rows = ["| name (parameters) | holds when | binds |", "|---|---|---|"]
    for name in names if names is not None else sorted(REGISTRY):
        decl = REGISTRY[name]
        binds = ", ".join(f"`@{{{b}}}`" for b in decl.binds)
        rows.append(f"| {decl.signature()} | {decl.holds} | {binds} |")
    return "\n".join(rows)
