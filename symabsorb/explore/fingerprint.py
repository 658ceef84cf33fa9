"""Semantic fingerprints: an activation's values at fixed rational points, as rigorous enclosures.

Two expressions are *certainly different* when their balls are disjoint at some point. Balls that
overlap everywhere only make two expressions candidates for merging; they merge only after an
exact identity proof (``analysis.engine.identical``). Otherwise both are kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy as sp

from .enclosure import NotEnclosable, disjoint, enclose

__all__ = ["POINTS", "Fingerprint", "certainly_different", "fingerprint"]

#: Fixed points, not symmetric about 0 (so parity differences show), 0 included (piecewise values).
POINTS: tuple[Fraction, ...] = tuple(Fraction(p) for p in (
    "-3", "-2", "-3/2", "-1", "-1/2", "-1/5", "0", "1/7", "1/3", "3/4", "1", "5/3", "5/2"))
_DIGITS = 6


@dataclass(frozen=True)
class Fingerprint:
    """Balls at :data:`POINTS` (``None`` where no enclosure could be made) and a bucket key."""

    balls: tuple[Any, ...]
    key: tuple[str, ...]

    @property
    def complete(self) -> bool:
        return all(b is not None for b in self.balls)


def _key(ball: Any) -> str:
    if ball is None:
        return "?"
    mid = ball.mid()
    if mid.is_zero():
        return "0"
    return str(mid.str(_DIGITS, radius=False))


def fingerprint(expr: sp.Expr, points: Sequence[Fraction] = POINTS) -> Fingerprint:
    balls: list[Any] = []
    for p in points:
        try:
            balls.append(enclose(expr, p))
        except NotEnclosable:
            balls.append(None)
    return Fingerprint(tuple(balls), tuple(_key(b) for b in balls))


def certainly_different(a: Fingerprint, b: Fingerprint) -> int | None:
    """The index of a point where the two are certainly different, else None."""
    for i, (x, y) in enumerate(zip(a.balls, b.balls, strict=True)):
        if x is not None and y is not None and disjoint(x, y):
            return i
    return None
