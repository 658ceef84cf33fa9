"""Parity: the exact even and odd parts, symmetry, and whether the odd part is exactly ``c·z``.

For a piecewise activation the parts are computed segment by segment on ``z > 0`` (pairing the
piece at ``z`` with the piece at ``-z``) and checked again at every breakpoint, so a function
whose odd part is ``c·z`` except at isolated points is not called odd-linear.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import sympy as sp

from ..model.functions import Z
from .facts import Evidence, Stage, Step, label, proved, refuted, unknown
from .identity import exact_sign, find_nonconstant_points, find_nonzero_point, is_free_of_z, prove_zero
from .identity import simplified as _simplified
from .piecewise import compare, lt, piecewise_form

__all__ = ["EvenPart", "ParityFact", "ParitySplit", "Segment", "parity_fact", "parity_split"]


@dataclass(frozen=True)
class Segment:
    """On ``lo < z < hi`` (with ``0 <= lo``): even part ``even(z)`` and odd part ``odd(z)``.

    Each part is normalised only when asked for (``even``, ``odd``): most proofs need one of the
    two, and ``simplify`` on the even part cost more than all other facts together (GELU)."""

    lo: sp.Expr
    hi: sp.Expr
    even_raw: sp.Expr  # (σ(z) + σ(−z))/2 as built, before normalisation
    odd_raw: sp.Expr  # (σ(z) − σ(−z))/2
    simplify: bool = True

    @property
    def even(self) -> sp.Expr:
        return _simplified(self.even_raw) if self.simplify else _cheap(self.even_raw)

    @property
    def odd(self) -> sp.Expr:
        return _simplified(self.odd_raw) if self.simplify else _cheap(self.odd_raw)


@dataclass(frozen=True)
class ParitySplit:
    """Even and odd parts on ``z > 0`` segment by segment, and at the breakpoints."""

    segments: tuple[Segment, ...]
    points: tuple[tuple[sp.Expr, sp.Expr, sp.Expr], ...]  # (b, even(b), odd(b)) for breakpoints b > 0
    smooth: bool  # one segment computed symbolically for every real z

    def even_expr(self) -> sp.Expr:
        return _assemble(self, "even")

    def odd_expr(self) -> sp.Expr:
        return _assemble(self, "odd")


def _assemble(split: ParitySplit, which: str) -> sp.Expr:
    """The part as one expression on R (piecewise in ``|z|`` off the breakpoints)."""
    parts = [getattr(s, which) for s in split.segments]
    if split.smooth:
        return parts[0]
    a = sp.Abs(Z)
    sign = sp.Integer(1) if which == "even" else sp.sign(Z)
    # values held at single breakpoints ±b come first (a spike at b changes both parts there)
    spikes = []
    for b, even_b, odd_b in split.points:
        value = even_b if which == "even" else odd_b
        seg = next((sg for sg in split.segments if sg.hi == b), None)
        near = None if seg is None else getattr(seg, which).xreplace({Z: b})
        if near is None or not prove_zero(near - value):
            spikes.append((sign * value, sp.Eq(a, b)))
    if all(prove_zero(p - parts[0]) for p in parts[1:]):
        smooth = sign * parts[0].xreplace({Z: a})  # for display: no simplify (it cost seconds, proves nothing)
        return sp.Piecewise(*spikes, (smooth, True)) if spikes else smooth
    branches = [*spikes] + [(sign * s.odd.xreplace({Z: a}) if which == "odd" else s.even.xreplace({Z: a}), a < s.hi)
                for s in split.segments[:-1]]
    last = split.segments[-1]
    branches.append((sign * last.odd.xreplace({Z: a}) if which == "odd" else last.even.xreplace({Z: a}), True))
    return sp.Piecewise(*branches)


@functools.lru_cache(maxsize=512)
def parity_split(expr: sp.Expr, simplify: bool = True) -> ParitySplit | None:
    """The split of ``expr``, or None when its case splits cannot be decided.

    With ``simplify=False`` the parts are only normalised cheaply (for display after a refutation).
    """
    simplified = _simplified if simplify else _cheap
    form = piecewise_form(expr)
    if form is None:
        return None
    mirrored = expr.xreplace({Z: -Z})
    if form.is_single:
        return ParitySplit((Segment(sp.S.Zero, sp.oo, (expr + mirrored) / 2, (expr - mirrored) / 2, simplify),), (),
                           True)
    pos = form.restricted(sp.S.Zero, sp.oo)
    neg = [(-p.hi, -p.lo, p.expr.xreplace({Z: -Z})) for p in reversed(form.restricted(-sp.oo, sp.S.Zero))]
    ordered = sorted({p.hi for p in pos[:-1]} | {n[1] for n in neg[:-1]}, key=functools.cmp_to_key(compare))
    # a breakpoint and a mirrored one proved equal but written apart (3 − h and 3 + h, h a hidden zero) are one cut
    cuts = [c for i, c in enumerate(ordered) if i == 0 or compare(ordered[i - 1], c) != 0]
    bounds = [sp.S.Zero, *cuts, sp.oo]
    segments = []
    for a, b in itertools.pairwise(bounds):
        mid = a + 1 if b == sp.oo else (a + b) / 2
        ep = next((p.expr for p in pos if p.contains(mid)), None)
        en = next((e for lo, hi, e in neg if lt(lo, mid) and lt(mid, hi)), None)
        if ep is None or en is None:
            return None  # not expected once equal cuts are merged; undecided rather than a guess
        segments.append(Segment(a, b, (ep + en) / 2, (ep - en) / 2, simplify))
    points = []
    for b in cuts:
        vp, vn = simplified(expr.xreplace({Z: b})), simplified(expr.xreplace({Z: -b}))
        points.append((b, simplified((vp + vn) / 2), simplified((vp - vn) / 2)))
    return ParitySplit(tuple(segments), tuple(points), False)


def _cheap(e: sp.Expr) -> sp.Expr:
    return sp.expand(e)


@dataclass(frozen=True)
class EvenPart:
    """The even part of a split, assembled (and simplified) when first read: it is shown, never
    used by a proof, so a run that does not show it does not pay for it."""

    split: ParitySplit

    def value(self) -> sp.Expr:
        return _even_expr(self.split)


@functools.lru_cache(maxsize=512)
def _even_expr(split: ParitySplit) -> sp.Expr:
    """The even part for display: simplified within one fact's CPU budget; when that runs out or
    SymPy fails, the same part normalised cheaply (equal, only less simple). The command's own
    budget still ends the command."""
    from .budget import BudgetExhausted, Timeout, fact_budget, time_budget

    try:
        with time_budget(fact_budget(None)):
            return split.even_expr()
    except BudgetExhausted:
        raise
    except (Timeout, NotImplementedError, ValueError, TypeError, ZeroDivisionError, RecursionError, MemoryError,
            OverflowError):
        # as built, piece by piece in |z|, with every breakpoint's own value (no identity to prove)
        a = sp.Abs(Z)
        branches = [(even_b, sp.Eq(a, b)) for b, even_b, _odd_b in split.points]
        branches += [(g.even_raw.xreplace({Z: a}), a < g.hi) for g in split.segments[:-1]]
        branches.append((split.segments[-1].even_raw.xreplace({Z: a}), sp.true))
        return branches[0][0] if len(branches) == 1 else sp.Piecewise(*branches)


@dataclass(frozen=True)
class ParityFact:
    """Whether the odd part is exactly ``c·z`` (``evidence``), the parts, and the symmetry."""

    evidence: Evidence
    even_source: sp.Expr | EvenPart | None  # read it as ``even_part``
    odd_part: sp.Expr | None
    odd_linear_constant: sp.Expr | None
    symmetry: str | None  # "even", "odd", "neither" or None (unknown)
    symmetry_evidence: Evidence

    @property
    def even_part(self) -> sp.Expr | None:
        src = self.even_source
        return src.value() if isinstance(src, EvenPart) else src


def _odd_ratio_numeric(expr: sp.Expr) -> sp.Expr:
    return (expr - expr.xreplace({Z: -Z})) / (2 * Z)


def _refuting_points(expr: sp.Expr) -> list[sp.Expr]:
    """Sample points plus the positive rational breakpoints of σ and of σ(−z) (a value held at a
    single point is seen only there)."""
    from .identity import sample_points

    pts: list[sp.Expr] = [sp.Rational(p.numerator, p.denominator) for p in sample_points() if p > 0]
    form = piecewise_form(expr)
    if form is not None:
        pts += [abs(b) for b in form.breakpoints if b.is_Rational and b != 0]
    return pts


def _odd_linear(expr: sp.Expr) -> tuple[Evidence, sp.Expr | None, ParitySplit | None]:
    # Enclosures first: a refutation is cheap and spares the simplifier (Mish's odd part is within
    # 3e-4 of z/2; balls of radius 1e-19 separate it).
    witness = find_nonconstant_points(_odd_ratio_numeric(expr), lo=sp.S.Zero, points=_refuting_points(expr))
    if witness is not None:
        p, q, vp, vq = witness
        return refuted(Stage.NUMERIC_REFUTATION, Step(
            f"(σ(z) − σ(−z))/(2z) takes different values at z = {p} and z = {q} "
            f"(rigorous enclosures {vp} and {vq} are disjoint): the odd part is not c·z for any c")), \
            None, parity_split(expr, simplify=False)
    split = parity_split(expr)
    if split is None:
        return unknown("the case splits of σ could not be decided exactly"), None, None
    consts = []
    for seg in split.segments:
        ratio = _simplified(seg.odd / Z)
        if not is_free_of_z(ratio):
            return unknown("(σ(z) − σ(−z))/(2z) did not simplify to a constant, and no point refutes it"), None, split
        consts.append(ratio)
    c = consts[0]
    same = all(prove_zero(k - c) for k in consts[1:])
    at_points = all(prove_zero(odd_b - c * b) for b, _, odd_b in split.points)
    if not (same and at_points):
        for b, _, odd_b in split.points:
            if exact_sign(odd_b - c * b) not in (0, None):
                return refuted(Stage.SYMBOLIC, Step(
                    f"at the breakpoint z = {b}, (σ(z) − σ(−z))/2 ≠ c·z (c = {c}): σ holds a value of its own there",
                    sp.Ne(odd_b, c * b))), None, split
        return unknown("the odd part is linear on each segment but not shown to be one c·z"), None, split
    steps = [Step("the odd part of σ", sp.Eq(label("σ_odd(z)", r"\sigma_{\mathrm{odd}}(z)"), split.odd_expr(), evaluate=False))]
    if split.smooth:
        steps.append(Step("simplify((σ(z) − σ(−z))/(2z)) is free of z", sp.Eq(
            label("σ_odd(z)/z", r"\sigma_{\mathrm{odd}}(z)/z"), c, evaluate=False)))
    else:
        n = len(split.segments)
        where = "on z > 0 (no breakpoint there)" if n == 1 else f"on each of the {n} segments of z > 0 between breakpoints"
        steps.append(Step(f"{where}, (σ(z) − σ(−z))/(2z) simplifies to the same constant", c))
        if split.points:
            steps.append(Step("and at every breakpoint b > 0, (σ(b) − σ(−b))/2 = c·b exactly",
                              sp.FiniteSet(*[b for b, _, _ in split.points])))
    steps.append(Step("so the odd part is exactly c·z with", sp.Eq(label("c", "c"), c, evaluate=False)))
    return proved(Stage.SYMBOLIC, *steps), c, split


def _symmetry(expr: sp.Expr, split: ParitySplit | None) -> tuple[Evidence, str | None]:
    pts = _refuting_points(expr)
    pts = pts + [-p for p in pts]
    odd_w = find_nonzero_point(expr - expr.xreplace({Z: -Z}), points=pts)
    even_w = find_nonzero_point(expr + expr.xreplace({Z: -Z}), points=pts)
    if odd_w is not None and even_w is not None:
        return refuted(Stage.NUMERIC_REFUTATION,
                       Step(f"σ(z) − σ(−z) ∈ {odd_w[1]} at z = {odd_w[0]} (not even) and σ(z) + σ(−z) ∈ {even_w[1]} "
                            f"at z = {even_w[0]} (not odd); rigorous enclosures excluding 0")), "neither"
    full = parity_split(expr) if (odd_w is None or even_w is None) else None
    if full is not None:
        if odd_w is None and all(prove_zero(s.odd) for s in full.segments) and all(
                prove_zero(o) for _, _, o in full.points):
            return proved(Stage.SYMBOLIC, Step("σ(z) − σ(−z) simplifies to 0 on every segment and at every "
                                               "breakpoint: σ is even", sp.S.Zero)), "even"
        if even_w is None and all(prove_zero(s.even) for s in full.segments) and all(
                prove_zero(e) for _, e, _ in full.points) and prove_zero(expr.xreplace({Z: 0})):
            return proved(Stage.SYMBOLIC, Step("σ(z) + σ(−z) simplifies to 0 on every segment, at every breakpoint "
                                               "and at 0: σ is odd", sp.S.Zero)), "odd"
    return unknown("neither symmetry could be proved or refuted"), None


@functools.lru_cache(maxsize=512)
def parity_fact(expr: sp.Expr) -> ParityFact:
    evidence, c, split = _odd_linear(expr)
    sym_evidence, symmetry = _symmetry(expr, split)
    if split is None:
        return ParityFact(evidence, None, None, c, symmetry, sym_evidence)
    odd = c * Z if c is not None else split.odd_expr()
    return ParityFact(evidence, EvenPart(split), odd, c, symmetry, sym_evidence)
