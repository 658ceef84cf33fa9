"""Facts as data: a three-valued status, the stage that decided it, and its derivation steps."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import sympy as sp

__all__ = ["Evidence", "Stage", "Status", "Step", "proved", "refuted", "unknown"]


class Status(StrEnum):
    PROVED = "proved"
    REFUTED = "refuted"
    UNKNOWN = "unknown"


class Stage(StrEnum):
    """How a fact was decided, in rising order of cost (numeric evaluation may only refute)."""

    STRUCTURAL = "structural"
    SYMBOLIC = "symbolic"
    SERIES = "series"
    NUMERIC_REFUTATION = "numeric-refutation"
    UNDECIDED = "undecided"


@dataclass(frozen=True)
class Step:
    """One line of a derivation: a claim (a SymPy expression or equation) and why it holds."""

    text: str
    claim: sp.Basic | None = None
    data: tuple[tuple[str, Any], ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Evidence:
    """The status of one claim and how it is known."""

    status: Status
    decided_by: Stage
    steps: tuple[Step, ...] = ()
    reason: str = ""
    #: ``unknown`` only because time (or memory) ran out: another machine, or a larger budget, may
    #: decide it. Such a fact is never cached on disk, and an answer built on it is not replayed.
    timed_out: bool = False

    @property
    def proved(self) -> bool:
        return self.status is Status.PROVED

    @property
    def refuted(self) -> bool:
        return self.status is Status.REFUTED


def proved(stage: Stage, *steps: Step, reason: str = "") -> Evidence:
    return Evidence(Status.PROVED, stage, tuple(steps), reason)


def refuted(stage: Stage, *steps: Step, reason: str = "") -> Evidence:
    return Evidence(Status.REFUTED, stage, tuple(steps), reason)


def unknown(reason: str, *steps: Step) -> Evidence:
    return Evidence(Status.UNKNOWN, Stage.UNDECIDED, tuple(steps), reason)


class Label(sp.Symbol):
    """A named quantity in a claim (``σ'(0)``, ``σ_odd(z)``): prints as given in every format."""

    _LATEX: dict[str, str] = {}

    def __new__(cls, plain: str, latex: str | None = None) -> Label:
        obj = super().__new__(cls, plain)
        if latex is not None:
            cls._LATEX[plain] = latex
        return obj

    def __getnewargs_ex__(self) -> tuple[tuple[str, str | None], dict[str, Any]]:
        return (self.name, self._LATEX.get(self.name)), {}

    def _latex(self, printer: object) -> str:
        return self._LATEX.get(self.name) or self.name

    def _sympystr(self, printer: object) -> str:
        return self.name


def label(plain: str, latex: str) -> Label:
    return Label(plain, latex)
