"""Exact integer directions of rational vectors: the keys that say two rows lie on one line or one ray.

A nonzero rational vector ``v`` is ``λ·p`` with ``p`` a primitive integer vector (the gcd of its entries 1).
Two nonzero vectors are collinear iff their :func:`line_key` agree, positively collinear iff their
:func:`ray_key` agree. Everything here is exact integer arithmetic (no floats, no SymPy)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

__all__ = ["line_key", "line_key_and_scale", "ray_key"]


def ray_key(v: Sequence[Fraction]) -> tuple[int, ...]:
    """``v`` scaled by a positive number to a primitive integer vector (the sign is kept; zero stays zero)."""
    den = 1
    for x in v:
        den = math.lcm(den, x.denominator)
    ints = [int(x * den) for x in v]
    g = 0
    for n in ints:
        g = math.gcd(g, n)
    return tuple(n // (g or 1) for n in ints)


def line_key(v: Sequence[Fraction]) -> tuple[int, ...]:
    """:func:`ray_key` with the first nonzero entry made positive: the key of the line ``ℝv``."""
    ray = ray_key(v)
    lead = next((n for n in ray if n != 0), 1)
    return ray if lead > 0 else tuple(-n for n in ray)


def line_key_and_scale(v: Sequence[Fraction]) -> tuple[tuple[int, ...], Fraction]:
    """``(p, λ)`` with ``v = λ·p`` and ``p = line_key(v)``; ``v`` must be nonzero."""
    p = line_key(v)
    first = next(i for i, n in enumerate(p) if n != 0)
    return p, v[first] / p[first]
