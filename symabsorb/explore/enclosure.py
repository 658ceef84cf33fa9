"""Enclosures for fingerprints: the analysis layer's rigorous ``arb`` balls (:mod:`symabsorb.analysis.enclosure`).

A ball certainly contains the true value, so two functions whose balls at one point are disjoint
are certainly different there. Overlapping balls prove nothing (that needs an exact identity).
Anything the walker cannot enclose (an unknown function, a piecewise condition neither the balls
nor exact arithmetic decide, a pole) raises :class:`NotEnclosable`.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import sympy as sp

from ..analysis.enclosure import NotNumeric
from ..analysis.enclosure import enclose as _enclose

__all__ = ["FINGERPRINT_PRECISION", "NotEnclosable", "disjoint", "enclose", "enclose_many", "flint_available"]

#: Working precision of fingerprints (bits): enough to separate distinct candidates at a glance.
FINGERPRINT_PRECISION = 96

NotEnclosable = NotNumeric


def flint_available() -> bool:
    try:
        import flint  # noqa: F401
    except ImportError:
        return False
    return True


def enclose(expr: sp.Expr, point: Fraction) -> Any:
    """An ``arb`` ball containing ``expr`` at ``z = point`` (raises :class:`NotEnclosable`)."""
    ball = _enclose(expr, point, FINGERPRINT_PRECISION).value
    if not ball.is_finite():
        raise NotEnclosable("not finite")
    return ball


def enclose_many(expr: sp.Expr, points: Sequence[Fraction]) -> tuple[Any, ...]:
    return tuple(enclose(expr, p) for p in points)


def disjoint(a: Any, b: Any) -> bool:
    """Whether two balls certainly hold different numbers."""
    return not a.overlaps(b)
