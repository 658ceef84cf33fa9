"""Positive homogeneity ``σ(tz) = t^k σ(z)`` for all ``t > 0``: the exact degree, or a refutation.

A proof uses Euler's identity on each ray: if ``z σ'(z) = k σ(z)`` on ``(0, ∞)`` then
``σ(z) = C z^k`` there (and likewise on ``(−∞, 0)``). SymPy cannot simplify
``Max(0, t z) − t Max(0, z)``, so rays are read from the piecewise normal form.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import sympy as sp

from ..model.functions import Z
from .facts import Evidence, Stage, Step, label, proved, refuted, unknown
from .identity import is_free_of_z, prove_zero, simplified
from .numeric import NotNumeric, evaluate, is_clearly_nonzero
from .piecewise import piecewise_form

__all__ = ["HomogeneityFact", "homogeneity_fact"]


@dataclass(frozen=True)
class HomogeneityFact:
    evidence: Evidence
    degree: sp.Expr | None


def _numeric_refutation(expr: sp.Expr) -> Step | None:
    """A point and scale where no single k satisfies σ(tz) = t^k σ(z); None when none found."""
    estimates: list[tuple[object, object]] = []
    for x0 in (sp.Integer(1), sp.Rational(5, 2), sp.Rational(1, 3), sp.Integer(-1), sp.Rational(-7, 3),
               sp.Rational(-2, 7)):
        try:
            v1, v2, v3 = (evaluate(expr, t * _frac(x0)) for t in (1, 2, 3))
        except NotNumeric:
            return None
        with mpmath.workdps(60):
            if not is_clearly_nonzero(v1):
                if is_clearly_nonzero(v2):
                    return Step(f"σ({x0}) = 0 but σ({2 * x0}) ≠ 0, impossible for σ(2z) = 2^k σ(z)")
                continue
            r2, r3 = v2 / v1, v3 / v1
            if r2 <= 0 or r3 <= 0:
                return Step(f"σ({2 * x0})/σ({x0}) = {mpmath.nstr(r2, 8)} is not positive, impossible for "
                            "σ(2z) = 2^k σ(z)")
            k2, k3 = mpmath.log(r2) / mpmath.log(2), mpmath.log(r3) / mpmath.log(3)
            if is_clearly_nonzero(k2 - k3):
                return Step(f"at z = {x0}: log(σ(2z)/σ(z))/log 2 = {mpmath.nstr(k2, 8)} but "
                            f"log(σ(3z)/σ(z))/log 3 = {mpmath.nstr(k3, 8)}; no single degree k fits")
            estimates.append((x0, k2))
    for (xa, ka), (xb, kb) in itertools.pairwise(estimates):
        if is_clearly_nonzero(ka - kb):  # type: ignore[operator]
            return Step(f"the degree seen at z = {xa} ({mpmath.nstr(ka, 8)}) differs from the one at z = {xb} "
                        f"({mpmath.nstr(kb, 8)})")
    return None


def _frac(x: sp.Rational) -> Fraction:
    return Fraction(int(x.p), int(x.q))


@functools.lru_cache(maxsize=512)
def homogeneity_fact(expr: sp.Expr) -> HomogeneityFact:
    # Numbers first: cheap, and a refutation makes the symbolic attempt pointless.
    step = _numeric_refutation(expr)
    if step is not None:
        return HomogeneityFact(refuted(Stage.NUMERIC_REFUTATION, step, Step("60-digit evaluation")), None)
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
                if k != 0 and not prove_zero(value0):
                    if value0.is_nonzero:
                        return HomogeneityFact(refuted(Stage.SYMBOLIC, *steps, Step(
                            "but σ(0) ≠ 0 while homogeneity of degree k ≠ 0 forces σ(0) = t^k σ(0) = 0", value0)), None)
                else:
                    steps.append(Step("z·σ'(z) = k·σ(z) on each ray gives σ(z) = C·|z|^k there, so σ(tz) = t^k σ(z) "
                                      "for every t > 0" + ("" if k == 0 else " (and σ(0) = 0)"),
                                      sp.Eq(label("k", "k"), k, evaluate=False)))
                    return HomogeneityFact(proved(Stage.SYMBOLIC, *steps), k)
    if form is None:
        return HomogeneityFact(unknown("the case splits of σ could not be decided exactly"), None)
    return HomogeneityFact(unknown("no constant Euler ratio on the rays, and no refuting point"), None)
