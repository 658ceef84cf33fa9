"""Positive homogeneity ``σ(tz) = t^k σ(z)`` for all ``t > 0``: the exact degree, or a refutation.

A proof uses Euler's identity on each ray: if ``z σ'(z) = k σ(z)`` on ``(0, ∞)`` then
``σ(z) = C z^k`` there (and likewise on ``(−∞, 0)``). SymPy cannot simplify
``Max(0, t z) − t Max(0, z)``, so rays are read from the piecewise normal form.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from typing import Any

import sympy as sp

from ..model.functions import Z
from .enclosure import PRECISIONS, NotNumeric, enclose, enclose_constant
from .facts import Evidence, Stage, Step, label, proved, refuted, unknown
from .identity import exact_sign, is_free_of_z, prove_zero, simplified
from .piecewise import piecewise_form

__all__ = ["HomogeneityFact", "homogeneity_fact"]


@dataclass(frozen=True)
class HomogeneityFact:
    evidence: Evidence
    degree: sp.Expr | None


def _degree_balls(expr: sp.Expr, x0: sp.Rational, prec: int) -> tuple[Any, Any] | Step | None:
    """Enclosures of log(σ(2x)/σ(x))/log 2 and log(σ(3x)/σ(x))/log 3 at ``x = x0``; a refuting
    step when the ratios are certainly not positive; None when σ(x0) is not bounded away from 0."""
    v1, v2, v3 = (enclose(expr, t * x0, prec).value for t in (1, 2, 3))
    if v1.is_exact() and v1 == 0 and not v2.contains(0):
        return Step(f"σ({x0}) = 0 exactly but σ({2 * x0}) ∈ {v2.str(10)} ≠ 0 (rigorous enclosure), impossible for "
                    "σ(2z) = 2^k σ(z)")
    if v1.contains(0):
        return None
    r2, r3 = v2 / v1, v3 / v1
    for t, r in ((2, r2), (3, r3)):
        if r <= 0:
            return Step(f"σ({t * x0})/σ({x0}) ∈ {r.str(10)} is not positive (rigorous enclosure), impossible for "
                        f"σ({t}z) = {t}^k σ(z)")
    if not (r2 > 0 and r3 > 0):
        return None
    return r2.log() / enclose_constant(sp.log(2), prec).value, r3.log() / enclose_constant(sp.log(3), prec).value


def _numeric_refutation(expr: sp.Expr) -> Step | None:
    """A point and scale where no single k satisfies σ(tz) = t^k σ(z), shown by rigorous
    enclosures (disjoint balls for two degree estimates); None when none is found."""
    points = (sp.Integer(1), sp.Rational(5, 2), sp.Rational(1, 3), sp.Integer(-1), sp.Rational(-7, 3),
              sp.Rational(-2, 7))
    for prec in PRECISIONS:
        estimates: list[tuple[sp.Rational, Any]] = []
        try:
            for x0 in points:
                got = _degree_balls(expr, x0, prec)
                if isinstance(got, Step):
                    return got
                if got is None:
                    continue
                k2, k3 = got
                if not k2.overlaps(k3):
                    return Step(f"at z = {x0}: log(σ(2z)/σ(z))/log 2 ∈ {k2.str(8)} but log(σ(3z)/σ(z))/log 3 ∈ "
                                f"{k3.str(8)} (rigorous enclosures, disjoint); no single degree k fits")
                estimates.append((x0, k2))
        except NotNumeric:
            return None
        for (xa, ka), (xb, kb) in itertools.pairwise(estimates):
            if not ka.overlaps(kb):
                return Step(f"the degree seen at z = {xa} ({ka.str(8)}) and the one at z = {xb} ({kb.str(8)}) "
                            "have disjoint rigorous enclosures")
    return None


@functools.lru_cache(maxsize=512)
def homogeneity_fact(expr: sp.Expr) -> HomogeneityFact:
    # Numbers first: cheap, and a refutation makes the symbolic attempt pointless.
    step = _numeric_refutation(expr)
    if step is not None:
        return HomogeneityFact(refuted(Stage.NUMERIC_REFUTATION, step), None)
    form = piecewise_form(expr)
    if form is not None:
        rays = [form.restricted(sp.S.Zero, sp.oo), form.restricted(-sp.oo, sp.S.Zero)]
        if all(len(r) == 1 for r in rays):
            degrees = []
            steps: list[Step] = []
            ok = True
            u = sp.Dummy("u", positive=True)
            for name, sign, (piece,) in zip(("z > 0", "z < 0"), (1, -1), rays, strict=True):
                if prove_zero(piece.expr):
                    steps.append(Step(f"on {name}, σ ≡ 0 (homogeneous of every degree)", sp.S.Zero))
                    continue
                # on the ray z = ±u with u > 0, Euler's ratio u·e'(u)/e(u) (u positive helps powsimp)
                e = piece.expr.xreplace({Z: sign * u})
                k = simplified(u * sp.diff(e, u) / e)
                if u in k.free_symbols or not is_free_of_z(k):
                    ok = False
                    break
                degrees.append(k)
                steps.append(Step(f"on {name}, σ(z) = {sp.sstr(piece.expr)} and Euler's ratio z·σ'(z)/σ(z) is constant",
                                  sp.Eq(label("k", "k"), k, evaluate=False)))
            if ok and degrees and all(prove_zero(k - degrees[0]) for k in degrees[1:]):
                k = degrees[0]
                value0 = simplified(expr.xreplace({Z: sp.S.Zero}))
                k_sign = exact_sign(k)
                if k_sign != 0 and not prove_zero(value0):
                    if k_sign is not None and exact_sign(value0) not in (0, None):
                        return HomogeneityFact(refuted(Stage.SYMBOLIC, *steps, Step(
                            "but σ(0) ≠ 0 while homogeneity of degree k ≠ 0 forces σ(0) = t^k σ(0) = 0", value0)), None)
                else:
                    steps.append(Step("z·σ'(z) = k·σ(z) on each ray gives σ(z) = C·|z|^k there, so σ(tz) = t^k σ(z) "
                                      "for every t > 0" + ("" if k_sign == 0 else " (and σ(0) = 0)"),
                                      sp.Eq(label("k", "k"), k, evaluate=False)))
                    return HomogeneityFact(proved(Stage.SYMBOLIC, *steps), k)
    if form is None:
        return HomogeneityFact(unknown("the case splits of σ could not be decided exactly"), None)
    return HomogeneityFact(unknown("no constant Euler ratio on the rays, and no refuting point"), None)
