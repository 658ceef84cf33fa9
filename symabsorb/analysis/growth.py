"""Growth at ±∞ (bounded, sublinear, linear, superlinear) from limits of the outer pieces,
and local boundedness from the shape of the expression."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import sympy as sp

from ..model.functions import Z
from .facts import Evidence, Stage, Step, proved, unknown
from .piecewise import piecewise_form
from .structure import locally_bounded

__all__ = ["GROWTH_ORDER", "GrowthFact", "growth_fact"]

GROWTH_ORDER = ("bounded", "sublinear", "linear", "superlinear")


@dataclass(frozen=True)
class GrowthFact:
    """``evidence`` covers both ends; ``growth_class`` is the faster of the two."""

    evidence: Evidence
    plus_infinity: str | None
    minus_infinity: str | None
    growth_class: str | None
    locally_bounded: bool

    @property
    def sublinear(self) -> bool:
        """Proved ``σ(z) = o(|z|)`` at both ends."""
        return self.growth_class in ("bounded", "sublinear")


def _finite(v: sp.Basic) -> bool:
    if isinstance(v, sp.AccumBounds):
        return bool(v.min.is_finite and v.max.is_finite)
    return bool(v.is_finite)


def _end(e: sp.Expr, direction: sp.Expr) -> tuple[str | None, list[Step]]:
    label = "+∞" if direction == sp.oo else "−∞"
    ratio = sp.limit(e / Z, Z, direction)
    steps = [Step(f"limit of σ(z)/z as z → {label}", sp.Eq(sp.Symbol(f"lim σ(z)/z at {label}"), ratio, evaluate=False))]
    if isinstance(ratio, sp.AccumBounds) or ratio.has(sp.nan):
        return None, steps
    if ratio.is_zero:
        value = sp.limit(e, Z, direction)
        steps.append(Step(f"limit of σ(z) as z → {label}", value))
        return ("bounded" if _finite(value) else "sublinear"), steps
    if ratio.is_finite and ratio.is_nonzero:
        return "linear", steps
    if ratio in (sp.oo, -sp.oo):
        return "superlinear", steps
    return None, steps


@functools.lru_cache(maxsize=512)
def growth_fact(expr: sp.Expr) -> GrowthFact:
    bounded_locally = locally_bounded(expr)
    form = piecewise_form(expr)
    if form is None:
        return GrowthFact(unknown("the case splits of σ could not be decided exactly"), None, None, None,
                          bounded_locally)
    plus, plus_steps = _end(form.pieces[-1].expr, sp.oo)
    minus, minus_steps = _end(form.pieces[0].expr, -sp.oo)
    steps = plus_steps + minus_steps
    if plus is None or minus is None:
        return GrowthFact(unknown("a limit at infinity could not be decided", *steps), plus, minus, None,
                          bounded_locally)
    cls = max(plus, minus, key=GROWTH_ORDER.index)
    steps.append(Step(f"growth: {plus} at +∞, {minus} at −∞, so {cls} overall"))
    steps.append(Step("σ is locally bounded (continuous, or with finitely many bounded jumps)" if bounded_locally
                      else "local boundedness of σ is not shown"))
    return GrowthFact(proved(Stage.SYMBOLIC, *steps), plus, minus, cls, bounded_locally)
