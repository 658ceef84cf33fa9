"""Hypothesis checkers: each registered name maps a block or stack to proved / refuted / unknown
(or "assumed", for size and genericity assumptions that the verdict then states).

A checker never proves by numbers; it reads facts from :mod:`symabsorb.analysis`, which only
refute numerically.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy as sp

from ..analysis.engine import ActivationFacts, analyze, identical, linear_constant
from ..analysis.facts import Evidence, Stage, Status, Step, label, proved
from ..analysis.identity import find_nonzero_point
from ..model.activation import GatedActivation
from ..model.block import Block, Stack
from ..model.functions import Phi, Z
from .derivation import HypothesisCheck, HypStatus
from .skips import skip_invertible, skip_is_zero, skip_latex, stack_skip_product_nonzero

__all__ = ["REFERENCES", "REGISTRY", "Subject", "check", "nondegeneracy"]

#: Activations that results name exactly (Thms. 8 and 10), as expressions in z.
REFERENCES: dict[str, tuple[str, sp.Expr]] = {
    "relu": ("ReLU", sp.Max(0, Z)),
    "gelu": ("GELU", Z * Phi(Z)),
}


@dataclass(frozen=True)
class Subject:
    """What a query is about: one block, or a stack of blocks."""

    block: Block | None = None
    stack: Stack | None = None
    budget: float | None = 5.0

    @property
    def kind(self) -> str:
        return "stack" if self.stack is not None else "block"

    def blocks(self) -> tuple[Block, ...]:
        if self.stack is not None:
            seen: dict[str, Block] = {}
            for b in self.stack.blocks:
                seen.setdefault(b.name, b)
            return tuple(seen.values())
        assert self.block is not None
        return (self.block,)

    @property
    def the_block(self) -> Block:
        assert self.block is not None
        return self.block

    def facts(self, block: Block | None = None) -> ActivationFacts:
        return analyze((block or self.the_block).activation, budget=self.budget)


Checker = Callable[[Subject, dict[str, Any]], HypothesisCheck]
REGISTRY: dict[str, Checker] = {}


def hypothesis(name: str) -> Callable[[Checker], Checker]:
    def register(fn: Checker) -> Checker:
        REGISTRY[name] = fn
        return fn

    return register


def _from_evidence(name: str, statement: str, label: str, ev: Evidence, bindings: dict[str, Any] | None = None,
                   holds: bool | None = None, refuted_reason: str = "") -> HypothesisCheck:
    """A check whose status follows one fact's evidence (``holds`` overrides "proved")."""
    if ev.status is Status.PROVED and holds is not False:
        status = HypStatus.PROVED
    elif ev.status is Status.REFUTED or holds is False:
        status = HypStatus.REFUTED
    else:
        status = HypStatus.UNKNOWN
    reason = ev.reason if status is HypStatus.UNKNOWN else (refuted_reason if status is HypStatus.REFUTED else "")
    return HypothesisCheck(name, status, statement, ((label, ev),), tuple((bindings or {}).items()),
                           reason=reason)


def _simple(name: str, status: HypStatus, statement: str, reason: str = "", assumption: str | None = None,
            bindings: dict[str, Any] | None = None, evidence: tuple[tuple[str, Evidence], ...] = ()) -> HypothesisCheck:
    return HypothesisCheck(name, status, statement, evidence, tuple((bindings or {}).items()), assumption, reason)


def _sigma(subject: Subject) -> str:
    return "g" if subject.the_block.gated else r"\sigma"


# ---- skips -------------------------------------------------------------------------------------


@hypothesis("skip_none")
def _skip_none(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    zero = all(skip_is_zero(b.skip) for b in s.blocks())
    return _simple("skip_none", HypStatus.PROVED if zero else HypStatus.REFUTED, "$M = 0$ (no skip connection)",
                   "" if zero else "the skip is nonzero")


@hypothesis("skip_nonzero")
def _skip_nonzero(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    z = skip_is_zero(s.the_block.skip)
    m = skip_latex(s.the_block.skip)
    if z is False:
        return _simple("skip_nonzero", HypStatus.PROVED, f"$M = {m} \\ne 0$", bindings={"M": m})
    if z is True:
        return _simple("skip_nonzero", HypStatus.REFUTED, "$M \\ne 0$", "the skip is zero")
    return _simple("skip_nonzero", HypStatus.UNKNOWN, "$M \\ne 0$", "could not decide whether the skip is zero")


@hypothesis("skip_invertible")
def _skip_invertible(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    skip = s.the_block.skip
    inv = skip_invertible(skip)
    m = skip_latex(skip)
    how = {"identity": "the identity", "scaled": "a nonzero multiple of the identity",
           "matrix": "nonzero determinant, computed exactly",
           "hyper": "$A \\otimes I_d$ with $\\det A \\ne 0$, computed exactly"}.get(skip.kind, "")
    if inv is True:
        return _simple("skip_invertible", HypStatus.PROVED, f"$M = {m}$ is invertible ({how})", bindings={"M": m})
    if inv is False:
        return _simple("skip_invertible", HypStatus.REFUTED, f"$M = {m}$ is invertible", "the skip is singular")
    return _simple("skip_invertible", HypStatus.UNKNOWN, f"$M = {m}$ is invertible", "invertibility undecided")


@hypothesis("skip_product_nonzero")
def _skip_product(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    assert s.stack is not None
    value, reason = stack_skip_product_nonzero(s.stack)
    status = {True: HypStatus.PROVED, False: HypStatus.REFUTED, None: HypStatus.UNKNOWN}[value]
    return _simple("skip_product_nonzero", status, f"$M_L \\cdots M_1 \\ne 0$ ({reason})", "" if value else reason)


# ---- kind of unit ------------------------------------------------------------------------------------


@hypothesis("ungated")
def _ungated(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    ok = not s.the_block.gated
    return _simple("ungated", HypStatus.PROVED if ok else HypStatus.REFUTED,
                   "the block is ungated: $B(x) = W_{\\mathrm{down}}\\sigma(W_{\\mathrm{up}}x)$",
                   "" if ok else "the block is gated")


@hypothesis("gated")
def _gated(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    ok = s.the_block.gated
    return _simple("gated", HypStatus.PROVED if ok else HypStatus.REFUTED,
                   "the block is gated: $B(x) = W_{\\mathrm{down}}[g(W_{\\mathrm{gate}}x) \\odot W_{\\mathrm{up}}x]$",
                   "" if ok else "the block is ungated")


# ---- facts of the activation ---------------------------------------------------------------------------


def _number(v: Any) -> sp.Expr:
    """A parameter from a result file (an int or float in TOML) as an exact number."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"expected a number, got {v!r}")
    frac = Fraction(v)
    return sp.Rational(frac.numerator, frac.denominator)


def _as_expr(v: int | sp.Expr) -> sp.Expr:
    return sp.Integer(v) if isinstance(v, int) else v


def _within_constraints(e: sp.Expr, params: tuple[Any, ...]) -> sp.Expr:
    """``e`` with each constrained parameter written as bound ± (a nonnegative or positive slack),
    so SymPy's assumptions see the constraint (``k > 1`` becomes ``1 + t`` with ``t > 0``)."""
    subs = {}
    for param in params:
        c = param.constraint
        if c is None or not isinstance(c, sp.core.relational.Relational) or c.lhs != param.symbol:
            continue
        strict = isinstance(c, (sp.StrictGreaterThan, sp.StrictLessThan))
        slack = sp.Dummy("t", positive=True) if strict else sp.Dummy("t", nonnegative=True)
        if isinstance(c, (sp.StrictGreaterThan, sp.GreaterThan)):
            subs[param.symbol] = c.rhs + slack
        elif isinstance(c, (sp.StrictLessThan, sp.LessThan)):
            subs[param.symbol] = c.rhs - slack
    return e.xreplace(subs) if subs else e


def _degree_ok(k: sp.Expr, p: dict[str, Any], params: tuple[Any, ...] = ()) -> bool | None:
    k = _within_constraints(k, params)
    checks = []
    if "equals" in p:
        checks.append(sp.Eq(k, _number(p["equals"])))
    if "min_exclusive" in p:
        checks.append(sp.Gt(k, _number(p["min_exclusive"])))
    if "exclude" in p:
        checks.append(sp.Ne(k, _number(p["exclude"])))
    values = [bool(c) if c in (sp.true, sp.false) else None for c in checks]
    if any(v is False for v in values):
        return False
    if all(v is True for v in values):
        return True
    return None


def _degree_text(p: dict[str, Any]) -> str:
    parts = []
    if "equals" in p:
        parts.append(f"k = {p['equals']}")
    if "min_exclusive" in p:
        parts.append(f"k > {p['min_exclusive']}")
    if "exclude" in p:
        parts.append(f"k \\ne {p['exclude']}")
    return ", ".join(parts)


def _unit_degree(s: Subject, block: Block) -> tuple[Evidence, sp.Expr | None, str]:
    f = s.facts(block)
    ev, k = f.homogeneity.evidence, f.homogeneity.degree
    if block.gated and k is not None:
        return ev, k + 1, f"the gate $g$ is positively homogeneous of degree {sp.latex(k)}, so each unit " \
            f"$g(w^\\top x)(v^\\top x)$ is homogeneous of degree ${sp.latex(k + 1)}$"
    what = "the gate $g$" if block.gated else "$\\sigma$"
    return ev, k, f"{what} is positively homogeneous of degree $k = {sp.latex(k)}$" if k is not None else ""


@hypothesis("unit_homogeneous")
def _unit_homogeneous(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    ev, k, text = _unit_degree(s, s.the_block)
    statement = f"each unit is positively homogeneous of degree $k$ with ${_degree_text(p)}$"
    if k is None:
        what = "the gate g is" if s.the_block.gated else "σ is"
        return _from_evidence("unit_homogeneous", statement, "homogeneity", ev,
                              refuted_reason=f"{what} not positively homogeneous")
    act = s.the_block.activation
    ok = _degree_ok(k, p, act.gate.params if isinstance(act, GatedActivation) else act.params)
    check = _from_evidence("unit_homogeneous", statement + f" ({text})", "homogeneity", ev, {"k": k},
                           holds=ok)
    if ok is False:
        return HypothesisCheck(check.name, HypStatus.REFUTED, check.statement, check.evidence, check.bindings,
                               reason=f"the degree is k = {sp.sstr(k)}, outside "
                                      f"{_degree_text(p).replace(chr(92) + 'ne', '≠')}")
    if ok is None:
        return HypothesisCheck(check.name, HypStatus.UNKNOWN, check.statement, check.evidence, check.bindings,
                               reason="the degree could not be compared")
    return check


@hypothesis("gate_value_at_0_zero")
def _gate_zero(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    if not s.the_block.gated:
        return _simple("gate_value_at_0_zero", HypStatus.REFUTED, "$g(0) = 0$", "the block is ungated")
    f = s.facts()
    v = f.at_zero.value
    statement = "$g(0) = 0$" + (f" (here $g(0) = {sp.latex(v)}$)" if v is not None else "")
    if v is None:
        return _simple("gate_value_at_0_zero", HypStatus.UNKNOWN, statement, "g(0) undecided")
    ev = proved(Stage.STRUCTURAL, Step("value at 0", sp.Eq(label("g(0)", "g(0)"), v, evaluate=False)))
    if v.is_zero:
        return _from_evidence("gate_value_at_0_zero", statement, "g(0)", ev, {"g0": v})
    if v.is_nonzero:
        return _simple("gate_value_at_0_zero", HypStatus.REFUTED, statement, f"g(0) = {sp.sstr(v)} ≠ 0",
                       evidence=(("g(0)", ev),))
    return _simple("gate_value_at_0_zero", HypStatus.UNKNOWN, statement, "g(0) undecided")


def _differentiable(name: str, s: Subject, what: str) -> HypothesisCheck:
    f = s.facts()
    ev = f.at_zero.evidence
    statement = f"${what}$ is differentiable at $0$"
    if f.at_zero.derivative is not None:
        statement += f" with ${what}'(0) = {sp.latex(f.at_zero.derivative)}$"
    elif f.at_zero.left_derivative is not None and f.at_zero.right_derivative is not None:
        statement += (f" (one-sided derivatives ${sp.latex(f.at_zero.left_derivative)}$ and "
                      f"${sp.latex(f.at_zero.right_derivative)}$)")
    refuted_reason = f"{'g' if what == 'g' else 'σ'} is not differentiable at 0"
    if f.at_zero.left_derivative is not None and f.at_zero.right_derivative is not None:
        refuted_reason += (f" (left derivative {sp.sstr(f.at_zero.left_derivative)}, right derivative "
                           f"{sp.sstr(f.at_zero.right_derivative)})")
    return _from_evidence(name, statement, "differentiability at 0", ev, {"d0": f.at_zero.derivative},
                          refuted_reason=refuted_reason)


@hypothesis("gate_differentiable_at_0")
def _gate_diff(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    if not s.the_block.gated:
        return _simple("gate_differentiable_at_0", HypStatus.REFUTED, "$g$ is differentiable at $0$",
                       "the block is ungated")
    return _differentiable("gate_differentiable_at_0", s, "g")


@hypothesis("differentiable_at_0")
def _diff(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    return _differentiable("differentiable_at_0", s, "\\sigma")


@hypothesis("derivative_at_0_zero")
def _deriv_zero(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    f = s.facts()
    d = f.at_zero.derivative
    if d is None:
        return _simple("derivative_at_0_zero", HypStatus.UNKNOWN, "$\\sigma'(0) = 0$", "σ'(0) is not available")
    ev = f.at_zero.evidence
    if d.is_zero:
        return _from_evidence("derivative_at_0_zero", "$\\sigma'(0) = 0$", "derivative at 0", ev)
    if d.is_nonzero is not True:
        return _simple("derivative_at_0_zero", HypStatus.UNKNOWN, "$\\sigma'(0) = 0$",
                       f"σ'(0) = {sp.sstr(d)} is not decided to be zero or nonzero", evidence=(("derivative at 0", ev),))
    return _simple("derivative_at_0_zero", HypStatus.REFUTED, "$\\sigma'(0) = 0$", f"σ'(0) = {sp.sstr(d)} ≠ 0",
                   evidence=(("derivative at 0", ev),))


@hypothesis("locally_bounded")
def _locally_bounded(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    f = s.facts()
    if f.growth.locally_bounded:
        ev = proved(Stage.STRUCTURAL, Step("σ is built from continuous functions (and finitely many bounded "
                                           "jumps), with denominators bounded away from 0 and logs of such"))
        return _from_evidence("locally_bounded", "$\\sigma$ is locally bounded", "local boundedness", ev)
    return _simple("locally_bounded", HypStatus.UNKNOWN, "$\\sigma$ is locally bounded",
                   "local boundedness is not shown structurally")


@hypothesis("sublinear_growth")
def _sublinear(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    g = s.facts().growth
    statement = "$\\sigma(z) = o(|z|)$ as $z \\to \\pm\\infty$"
    if g.growth_class is not None:
        statement += f" (growth: {g.plus_infinity} at $+\\infty$, {g.minus_infinity} at $-\\infty$)"
    if g.evidence.proved and g.growth_class is not None:
        ok = g.growth_class in ("bounded", "sublinear")
        check = _from_evidence("sublinear_growth", statement, "growth", g.evidence, holds=ok)
        if not ok:
            return HypothesisCheck(check.name, HypStatus.REFUTED, statement, check.evidence,
                                   reason=f"σ grows {g.growth_class}ly" if g.growth_class != "linear"
                                   else "σ grows linearly")
        return check
    return _from_evidence("sublinear_growth", statement, "growth", g.evidence)


@hypothesis("even")
def _even(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    f = s.facts()
    par = f.parity
    if par.symmetry == "even" and par.symmetry_evidence.proved:
        return _from_evidence("even", "$\\sigma$ is even", "parity", par.symmetry_evidence)
    e = f.expr
    w = find_nonzero_point(e - e.xreplace({Z: -Z}))
    if w is not None:
        ev = Evidence(Status.REFUTED, Stage.NUMERIC_REFUTATION,
                      (Step(f"σ(z) − σ(−z) ≠ 0 at z = {w[0]} (60-digit evaluation)"),))
        return _simple("even", HypStatus.REFUTED, "$\\sigma$ is even", "σ is not even", evidence=(("parity", ev),))
    return _simple("even", HypStatus.UNKNOWN, "$\\sigma$ is even", "evenness neither proved nor refuted",
                   evidence=(("parity", par.symmetry_evidence),))


def _nonzero_or_unknown(check: HypothesisCheck, value: Any, what: str) -> HypothesisCheck:
    """A proved check whose constant is not *proved* nonzero (a free parameter) becomes unknown."""
    if check.status is HypStatus.PROVED and value is not None and value.is_nonzero is not True:
        return HypothesisCheck(check.name, HypStatus.UNKNOWN, check.statement, check.evidence, check.bindings,
                               reason=f"{what} = {sp.sstr(value)} is not proved nonzero")
    return check


@hypothesis("odd_linear")
def _odd_linear(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    par = s.facts().parity
    c = par.odd_linear_constant
    statement = "$\\sigma(z) - \\sigma(-z) = 2c\\,z$ with $c \\ne 0$"
    if c is not None:
        statement += f" (here $c = {sp.latex(c)}$)"
        if c.is_zero:
            return _simple("odd_linear", HypStatus.REFUTED, statement, "the odd part is 0 (c = 0)",
                           evidence=(("parity", par.evidence),))
    check = _from_evidence("odd_linear", statement, "parity", par.evidence, {"c": c})
    if check.status is HypStatus.REFUTED:
        return HypothesisCheck(check.name, check.status, statement, check.evidence, check.bindings,
                               reason="the odd part of σ is not c·z")
    return _nonzero_or_unknown(check, c, "c")


@hypothesis("gate_flip")
def _gate_flip(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    gate = s.facts().gate
    if gate is None:
        return _simple("gate_flip", HypStatus.REFUTED, "$g(z) + g(-z) = 2g(0) \\ne 0$", "the block is ungated")
    g0 = gate.value_at_0
    statement = "$g(z) + g(-z) = 2g(0)$ with $g(0) \\ne 0$" + (f" (here $g(0) = {sp.latex(g0)}$)" if g0 is not None
                                                              else "")
    if g0 is not None and g0.is_zero:
        return _simple("gate_flip", HypStatus.REFUTED, statement, "g(0) = 0", evidence=(("gate", gate.evidence),))
    check = _from_evidence("gate_flip", statement, "gate symmetry", gate.evidence, {"g0": g0})
    if check.status is HypStatus.REFUTED:
        return HypothesisCheck(check.name, check.status, statement, check.evidence, reason="g(z) + g(−z) is not "
                               "constant")
    return _nonzero_or_unknown(check, g0, "g(0)")


@hypothesis("same_function")
def _same_function(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    label, ref = REFERENCES[p["reference"]]
    block = s.the_block
    statement = f"$\\sigma = \\mathrm{{{label}}}$ exactly"
    if block.gated:
        return _simple("same_function", HypStatus.REFUTED, statement, "the block is gated")
    ev = identical(block.activation.expr, ref, label)
    check = _from_evidence("same_function", statement, f"σ = {label}", ev)
    if check.status is HypStatus.REFUTED:
        return HypothesisCheck(check.name, check.status, statement, check.evidence, reason=f"σ is not {label}")
    return check


@hypothesis("linear_activation")
def _linear(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    block = s.the_block
    if block.gated:
        return _simple("linear_activation", HypStatus.REFUTED, "$\\sigma(z) = c\\,z$", "the block is gated")
    ev, c = linear_constant(block.activation.expr)
    statement = "$\\sigma(z) = c\\,z$ with $c \\ne 0$" + (f" (here $c = {sp.latex(c)}$)" if c is not None else "")
    if c is not None and c.is_zero:
        return _simple("linear_activation", HypStatus.REFUTED, statement, "σ ≡ 0")
    check = _from_evidence("linear_activation", statement, "linearity", ev, {"c": c})
    if check.status is HypStatus.REFUTED:
        return HypothesisCheck(check.name, check.status, statement, check.evidence, reason="σ is not linear")
    return _nonzero_or_unknown(check, c, "c")


@hypothesis("nonpolynomial")
def _nonpolynomial(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    poly = s.facts().polynomial
    ev = poly.evidence
    if ev.status is Status.REFUTED:
        return _simple("nonpolynomial", HypStatus.PROVED, "$\\sigma$ is not a polynomial", evidence=(("polynomial", ev),))
    if ev.status is Status.PROVED:
        return _simple("nonpolynomial", HypStatus.REFUTED, "$\\sigma$ is not a polynomial", "σ is a polynomial",
                       evidence=(("polynomial", ev),))
    return _simple("nonpolynomial", HypStatus.UNKNOWN, "$\\sigma$ is not a polynomial", ev.reason)


# ---- sizes and weights -------------------------------------------------------------------------


@hypothesis("dim_at_least")
def _dim_at_least(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    n = int(p.get("n", 2))
    dim = s.the_block.stream_dim
    statement = f"$d \\ge {n}$"
    if isinstance(dim, int) or getattr(dim, "is_Integer", False):
        ok = int(dim) >= n
        return _simple("dim_at_least", HypStatus.PROVED if ok else HypStatus.REFUTED, f"$d = {dim} \\ge {n}$",
                       "" if ok else f"d = {dim} < {n}")
    if sp.Ge(dim, n) is sp.true:
        return _simple("dim_at_least", HypStatus.PROVED, statement)
    return _simple("dim_at_least", HypStatus.ASSUMED, statement, assumption=f"d ≥ {n}")


@hypothesis("width_at_least_dim")
def _width_at_least_dim(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    b = s.the_block
    dim, width = b.stream_dim, b.width
    gap = _as_expr(width) - _as_expr(dim)
    if gap.is_nonnegative:
        return _simple("width_at_least_dim", HypStatus.PROVED, f"$m = {sp.latex(width)} \\ge d = {sp.latex(dim)}$")
    if gap.is_negative:
        return _simple("width_at_least_dim", HypStatus.REFUTED, "$m \\ge d$", f"m = {width} < d = {dim}")
    return _simple("width_at_least_dim", HypStatus.ASSUMED, "$m \\ge d$", assumption="m ≥ d")


def nondegeneracy(w_up: sp.MatrixBase, w_down: sp.MatrixBase) -> tuple[bool, str]:
    """Exact check of the hypothesis of Thms. 8/10: rows of W_up nonzero and pairwise non-collinear,
    columns of W_down nonzero. Returns (holds, reason naming the offending rows/columns)."""
    rows = [w_up.row(i) for i in range(w_up.rows)]
    for i, r in enumerate(rows):
        if all(x == 0 for x in r):
            return False, f"row {i} of W_up is zero"
    for j in range(w_down.cols):
        if all(x == 0 for x in w_down.col(j)):
            return False, f"column {j} of W_down is zero"
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            if sp.Matrix.vstack(rows[i], rows[j]).rank() < 2:
                return False, f"rows {i} and {j} of W_up are collinear"
    return True, "rows of W_up are nonzero and pairwise non-collinear; columns of W_down are nonzero (exact)"


@hypothesis("nondegenerate")
def _nondegenerate(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    b = s.the_block
    statement = ("the block is nondegenerate: rows of $W_{\\mathrm{up}}$ nonzero and pairwise non-collinear, "
                 "columns of $W_{\\mathrm{down}}$ nonzero")
    if b.w_up is not None and b.w_down is not None:
        ok, reason = nondegeneracy(b.w_up, b.w_down)
        return _simple("nondegenerate", HypStatus.PROVED if ok else HypStatus.REFUTED, statement,
                       "" if ok else reason)
    return _simple("nondegenerate", HypStatus.ASSUMED, statement,
                   assumption="nondegenerate weights (rows of W_up nonzero and pairwise non-collinear, columns of "
                              "W_down nonzero) — needed for the 'only if'")


@hypothesis("depth_at_least")
def _depth_at_least(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    n = int(p.get("n", 2))
    assert s.stack is not None
    depth = s.stack.depth
    if isinstance(depth, int) or getattr(depth, "is_Integer", False):
        ok = int(depth) >= n
        return _simple("depth_at_least", HypStatus.PROVED if ok else HypStatus.REFUTED, f"depth $L = {depth} \\ge {n}$",
                       "" if ok else f"depth {depth} < {n}")
    return _simple("depth_at_least", HypStatus.ASSUMED, f"depth $L \\ge {n}$", assumption=f"L ≥ {n}")


# ---- every block of a stack -------------------------------------------------------------------------


def _each(name: str, s: Subject, statement: str,
          one: Callable[[Subject], list[HypothesisCheck]]) -> HypothesisCheck:
    evidence: list[tuple[str, Evidence]] = []
    assumptions: list[str] = []
    worst = HypStatus.PROVED
    reason = ""
    for block in s.blocks():
        sub = Subject(block=block, budget=s.budget)
        for c in one(sub):
            evidence.extend((f"{block.name}: {label}", ev) for label, ev in c.evidence)
            if c.assumption:
                assumptions.append(c.assumption)
            if c.status is HypStatus.REFUTED:
                return _simple(name, HypStatus.REFUTED, statement, f"block {block.name}: {c.reason or c.statement}",
                               evidence=tuple(evidence))
            if c.status is HypStatus.UNKNOWN:
                worst = HypStatus.UNKNOWN
                reason = f"block {block.name}: {c.reason or 'undecided'}"
            elif c.status is HypStatus.ASSUMED and worst is HypStatus.PROVED:
                worst = HypStatus.ASSUMED
    return HypothesisCheck(name, worst, statement, tuple(evidence), (),
                           "; ".join(dict.fromkeys(assumptions)) or None, reason)


def _flat_unit(sub: Subject) -> list[HypothesisCheck]:
    """Prop. 5 with k > 1, or Prop. 6: the residual-free unit vanishes to first order at 0."""
    homog = _unit_homogeneous(sub, {"min_exclusive": 1})
    if homog.status is HypStatus.PROVED:
        return [homog]
    if sub.the_block.gated:
        return [_gate_zero(sub, {}), _gate_diff(sub, {})]
    return [homog]


@hypothesis("each_unit_flat_at_0")
def _each_flat_unit(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    return _each("each_unit_flat_at_0", s, "every block satisfies Prop. 5 with $k > 1$ or Prop. 6", _flat_unit)


@hypothesis("each_flat_activation")
def _each_flat_activation(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    def one(sub: Subject) -> list[HypothesisCheck]:
        f = sub.facts()
        v = f.at_zero.value
        zero = _simple("value_at_0_zero", HypStatus.PROVED if v is not None and v.is_zero else
                       (HypStatus.REFUTED if v is not None and v.is_nonzero else HypStatus.UNKNOWN),
                       "$\\sigma(0) = 0$", "" if v is not None and v.is_zero else "σ(0) ≠ 0")
        return [_ungated(sub, {}), zero, _diff(sub, {}), _deriv_zero(sub, {})]

    return _each("each_flat_activation", s, "every block is ungated with $\\sigma(0) = 0$ and $\\sigma'(0) = 0$", one)


@hypothesis("each_sublinear")
def _each_sublinear(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    def one(sub: Subject) -> list[HypothesisCheck]:
        return [_ungated(sub, {}), _locally_bounded(sub, {}), _sublinear(sub, {})]

    return _each("each_sublinear", s, "every block is ungated with a locally bounded $\\sigma = o(|z|)$", one)


@hypothesis("each_relu_or_gelu")
def _each_relu_or_gelu(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    def one(sub: Subject) -> list[HypothesisCheck]:
        relu = _same_function(sub, {"reference": "relu"})
        if relu.status is HypStatus.PROVED:
            return [relu]
        return [_same_function(sub, {"reference": "gelu"})]

    return _each("each_relu_or_gelu", s, "every block is a ReLU or GELU block", one)


def check(name: str, subject: Subject, params: dict[str, Any]) -> HypothesisCheck:
    return REGISTRY[name](subject, params)


def iter_registry() -> Iterator[str]:
    return iter(sorted(REGISTRY))


_ = GatedActivation
