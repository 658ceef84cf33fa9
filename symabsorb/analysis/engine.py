"""All facts about one activation, each under a time budget, cached by canonical expression."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import sympy as sp

from ..budget import note_machine_dependent, timeouts
from ..model.activation import Activation, AnyActivation, GatedActivation
from ..model.domain import domain_gap
from ..model.functions import Z
from . import cache
from .at_zero import AtZeroFact, at_zero_fact
from .budget import DEFAULT_BUDGET, BudgetExhausted, Timeout, fact_budget, time_budget
from .continuity import ContinuityFact, continuity_fact
from .facts import Evidence, Stage, Step, label, proved, refuted, unknown
from .fold import fold_constants
from .gate import GateFact, gate_fact
from .growth import GrowthFact, growth_fact
from .homogeneity import HomogeneityFact, homogeneity_fact
from .identity import find_nonzero_point, is_free_of_z, prove_zero, simplified
from .parity import ParityFact, parity_fact
from .piecewise import PiecewiseForm, piecewise_form
from .polynomial import PolynomialFact, polynomial_fact
from .realness import not_proved_real
from .series import SeriesFact, series_fact
from .symmetry import SymmetryFact, symmetry_fact

__all__ = ["DEFAULT_ORDER", "ActivationFacts", "analyze", "analyze_expr", "identical", "linear_constant"]

DEFAULT_ORDER = 8
T = TypeVar("T")


@dataclass(frozen=True)
class ActivationFacts:
    """Every fact about σ (for a gated unit: about its gate g, plus the gate facts)."""

    name: str
    expr: sp.Expr
    gated: bool
    parity: ParityFact
    at_zero: AtZeroFact
    series: SeriesFact
    homogeneity: HomogeneityFact
    growth: GrowthFact
    polynomial: PolynomialFact
    gate: GateFact | None
    continuity: ContinuityFact
    symmetry: SymmetryFact  # scale-sign symmetries Sym(σ) (Theorem R); for a gated unit Sym(g) (Theorem G)


def _timed(compute: Callable[[], T], fallback: Callable[[str], T], budget: float | None) -> T:
    # CPU time, capped by the command's budget. When the whole command's budget is spent the
    # exception goes on up (a cached "unknown" would outlive the command); a fact's own timeout
    # or a numeric blow-up (MemoryError, OverflowError from huge intermediate values) is "unknown".
    try:
        with time_budget(fact_budget(budget)):
            return compute()
    except BudgetExhausted:
        raise
    except Timeout as err:
        return _timed_out(fallback(err.reason))
    except MemoryError as err:  # depends on the machine's memory (ulimit), not the input: like a timeout
        note_machine_dependent()
        return _timed_out(fallback(f"SymPy could not decide it ({type(err).__name__})"))
    except (NotImplementedError, ValueError, TypeError, ZeroDivisionError, RecursionError,
            OverflowError) as err:
        return fallback(f"SymPy could not decide it ({type(err).__name__})")


def _timed_out(fact: T) -> T:
    """``fact`` with each of its evidences marked as out of time (the fact carries its own status)."""
    changes = {f.name: dataclasses.replace(v, timed_out=True) for f in dataclasses.fields(fact)  # type: ignore[arg-type]
               if isinstance(v := getattr(fact, f.name), Evidence)}
    return dataclasses.replace(fact, **changes)  # type: ignore[type-var]


def ran_out_of_time(fact: object) -> bool:
    """Whether some evidence of ``fact`` is unknown only because its time (or memory) ran out."""
    return dataclasses.is_dataclass(fact) and any(
        isinstance(v := getattr(fact, f.name), Evidence) and v.timed_out for f in dataclasses.fields(fact))


def _parity_fallback(reason: str) -> ParityFact:
    return ParityFact(unknown(reason), None, None, None, None, unknown(reason))


def _at_zero_fallback(reason: str) -> AtZeroFact:
    return AtZeroFact(unknown(reason), None, None, None, None, None, None)


@functools.lru_cache(maxsize=256)
def analyze_expr(expr: sp.Expr, gated: bool = False, order: int = DEFAULT_ORDER,
                 budget: float | None = DEFAULT_BUDGET) -> tuple[ParityFact, AtZeroFact, SeriesFact, HomogeneityFact,
                                                                 GrowthFact, PolynomialFact, GateFact | None,
                                                                 ContinuityFact, SymmetryFact]:
    """The facts of an expression in :data:`~symabsorb.model.functions.Z` (cached in memory and,
    when every fact finished within its budget, on disk: :mod:`.cache`)."""
    k = cache.key(expr, gated, order)
    hit = cache.load(k)
    if isinstance(hit, tuple) and len(hit) == 9:
        return hit  # type: ignore[return-value]
    before = timeouts()
    result = _compute(expr, gated, order, budget)
    # A fact out of time may be decided next time; so may one that read a bounded ``simplify`` that
    # ran out (identity.SIMPLIFY_SECONDS: a machine-dependent outcome, counted like a timeout).
    if not any(ran_out_of_time(part) for part in result) and timeouts() == before:
        cache.store(k, result)
    return result


def _compute(expr: sp.Expr, gated: bool, order: int, budget: float | None) -> tuple[
        ParityFact, AtZeroFact, SeriesFact, HomogeneityFact, GrowthFact, PolynomialFact, GateFact | None,
        ContinuityFact, SymmetryFact]:
    why = not_proved_real(expr)
    if why is not None:  # every fact is about a function R → R: none is claimed for σ
        return _unknown_facts(f"σ is not proved real-valued and finite on R: {why}", gated, order)
    parity = _timed(lambda: parity_fact(expr), _parity_fallback, budget)
    at0 = _timed(lambda: at_zero_fact(expr), _at_zero_fallback, budget)
    series = _timed(lambda: series_fact(expr, order), lambda r: SeriesFact(unknown(r), None, (), order), budget)
    homog = _timed(lambda: homogeneity_fact(expr), lambda r: HomogeneityFact(unknown(r), None), budget)
    growth = _timed(lambda: growth_fact(expr), lambda r: GrowthFact(unknown(r), None, None, None, False), budget)
    poly = _timed(lambda: polynomial_fact(expr), lambda r: PolynomialFact(unknown(r), None, None), budget)
    gate = (_timed(lambda: gate_fact(expr), lambda r: GateFact(unknown(r), None, None, None), budget)
            if gated else None)
    cont = _timed(lambda: continuity_fact(expr), lambda r: ContinuityFact(unknown(r), (), ()), budget)
    # For a gated unit the expression is the gate g: Sym(g) decides gated blocks (Theorem G).
    sym = _timed(lambda: symmetry_fact(expr), lambda r: SymmetryFact(unknown(r), None, ()), budget)
    return parity, at0, series, homog, growth, poly, gate, cont, sym


def _unknown_facts(reason: str, gated: bool, order: int) -> tuple[
        ParityFact, AtZeroFact, SeriesFact, HomogeneityFact, GrowthFact, PolynomialFact, GateFact | None,
        ContinuityFact, SymmetryFact]:
    return (_parity_fallback(reason), _at_zero_fallback(reason), SeriesFact(unknown(reason), None, (), order),
            HomogeneityFact(unknown(reason), None), GrowthFact(unknown(reason), None, None, None, False),
            PolynomialFact(unknown(reason), None, None),
            GateFact(unknown(reason), None, None, None) if gated else None, ContinuityFact(unknown(reason), (), ()),
            SymmetryFact(unknown(reason), None, ()))


def analyze(act: AnyActivation, order: int = DEFAULT_ORDER, budget: float | None = DEFAULT_BUDGET) -> ActivationFacts:
    """Every fact about ``act``; for a gated unit the facts are about its gate."""
    gated = isinstance(act, GatedActivation)
    # the facts' entry (the prover's is theory.prover.derive): constants proved rational are numbers
    expr = fold_constants(act.gate.expr if isinstance(act, GatedActivation) else act.expr)
    # σ as written may have no value where SymPy cancelled a divisor (z^2/z): no fact is claimed then
    gap = domain_gap((act.gate if isinstance(act, GatedActivation) else act).conditions)
    parts = (_unknown_facts(f"σ is not proved defined on all of R: {gap.describe()}", gated, order)
             if gap is not None else analyze_expr(expr, gated, order, budget))
    return ActivationFacts(act.name, expr, gated, *parts)


@functools.lru_cache(maxsize=512)
def linear_constant(expr: sp.Expr) -> tuple[Evidence, sp.Expr | None]:
    """Whether ``σ(z) = c·z`` exactly (with ``c``). Enclosures try to refute first (cheap); only
    then does simplification try to prove."""
    why = not_proved_real(expr)
    if why is not None:
        return unknown(f"σ is not proved real-valued and finite on R: {why}"), None
    from .identity import find_nonconstant_points

    form = piecewise_form(expr)
    points = _points_with_breakpoints(form)
    pts = find_nonconstant_points(expr / Z, points=points)
    if pts is not None:
        return refuted(Stage.NUMERIC_REFUTATION, Step(
            f"σ(z)/z ∈ {pts[2]} at z = {pts[0]} and ∈ {pts[3]} at z = {pts[1]} (disjoint rigorous enclosures), "
            "so σ is not c·z")), None
    if form is not None and form.is_single and prove_zero(expr.xreplace({Z: sp.S.Zero})):
        # the one piece is σ on all of R (the normal form keeps a breakpoint with a value of its own as a
        # piece): relu(z) - relu(-z) is the piece z, whose quotient simplifies where Max(..)/z does not
        c = simplified(form.pieces[0].expr / Z)
        if is_free_of_z(c):
            return proved(Stage.SYMBOLIC, Step("σ(0) = 0 and σ(z)/z simplifies to a constant", sp.Eq(
                label("c", "c"), c, evaluate=False))), c
    if form is not None and not form.is_single:
        c = _one_slope(form)
        if c is not None:
            return proved(Stage.SYMBOLIC, Step("on every piece σ(z)/z simplifies to the same constant (differences "
                                               "proved 0) and σ(b) = c·b exactly at every breakpoint b",
                                               sp.Eq(label("c", "c"), c, evaluate=False))), c
    return unknown("σ(z)/z did not simplify to a constant"), None


def _one_slope(form: PiecewiseForm) -> sp.Expr | None:
    """``c`` when every piece of ``form`` is ``c·z`` (one ``c``, equalities proved exactly) and the
    value at every breakpoint ``b`` is exactly ``c·b``; else None (not shown)."""
    slopes = [simplified(p.expr / Z) for p in form.pieces]
    if not all(is_free_of_z(c) for c in slopes):
        return None
    c = slopes[0]
    if not all(prove_zero(other - c) for other in slopes[1:]):
        return None
    if not all(prove_zero(form.original.xreplace({Z: b}) - c * b) for b in form.breakpoints):
        return None
    return c


def _points_with_breakpoints(form: PiecewiseForm | None) -> list[sp.Expr]:
    from .identity import sample_points

    pts: list[sp.Expr] = [sp.Rational(p.numerator, p.denominator) for p in sample_points()]
    if form is not None:
        pts += [b for b in form.breakpoints if b.is_Rational and b != 0]
    return pts


@functools.lru_cache(maxsize=512)
def identical(expr: sp.Expr, reference: sp.Expr, label: str) -> Evidence:
    """Whether ``expr`` and ``reference`` are the same function of real ``z``: a rigorous enclosure
    at a sample point or breakpoint refutes; exact simplification on every piece and at every
    breakpoint proves."""
    why = not_proved_real(expr)
    if why is not None:
        return unknown(f"σ is not proved real-valued and finite on R: {why}")
    if expr == reference:
        return proved(Stage.STRUCTURAL, Step(f"σ is literally {label}", reference))
    diff = expr - reference
    form = piecewise_form(diff)
    w = find_nonzero_point(diff, points=[*_points_with_breakpoints(form), sp.S.Zero])
    if w is not None:
        return refuted(Stage.NUMERIC_REFUTATION, Step(f"σ − {label} ∈ {w[1]} at z = {w[0]} (rigorous enclosure "
                                                      "excluding 0), so σ differs from " + label))
    if form is not None:
        if all(prove_zero(p.expr) for p in form.pieces) and all(
                prove_zero(diff.xreplace({Z: b})) for b in form.breakpoints):
            return proved(Stage.SYMBOLIC, Step(f"σ − {label} simplifies to 0 on every piece and at every breakpoint",
                                               sp.S.Zero))
    return unknown(f"σ − {label} did not simplify to 0")


def activation_expr(act: AnyActivation) -> sp.Expr:
    return act.gate.expr if isinstance(act, GatedActivation) else act.expr


_ = Activation  # re-exported type for annotations elsewhere
