"""Hypotheses about the activation σ (or the gate g): kind of unit, homogeneity, values and
derivatives at 0, growth, parity, identity with a reference, linearity, polynomiality, Sym(σ)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import sympy as sp

from ..analysis.engine import identical, linear_constant
from ..analysis.facts import Evidence, Stage, Status, Step, label, proved
from ..analysis.identity import (
    exact_sign,
    exact_zero,
    find_nonconstant_points,
    find_nonzero_point,
    has_domain,
    is_free_of_z,
    proved_nonzero,
    simplified,
)
from ..model.activation import GatedActivation
from ..model.block import Block
from ..model.functions import Z
from ..model.spectext import spec_expr
from .checks import REFERENCES, Param, Subject, from_evidence, registrar, simple
from .derivation import HypothesisCheck, HypStatus

__all__ = ["CHECKERS"]

CHECKERS, hypothesis = registrar()


# ---- kind of unit ------------------------------------------------------------------------------------


@hypothesis("ungated", 'the block is ungated')
def _ungated(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    ok = not s.the_block.gated
    return simple("ungated", HypStatus.PROVED if ok else HypStatus.REFUTED,
                   "the block is ungated: $B(x) = W_{\\mathrm{down}}\\sigma(W_{\\mathrm{up}}x)$",
                   "" if ok else "the block is gated")


@hypothesis("gated", 'the block is gated')
def _gated(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    ok = s.the_block.gated
    return simple("gated", HypStatus.PROVED if ok else HypStatus.REFUTED,
                   "the block is gated: $B(x) = W_{\\mathrm{down}}[g(W_{\\mathrm{gate}}x) \\odot W_{\\mathrm{up}}x]$",
                   "" if ok else "the block is ungated")


# ---- facts of the activation ---------------------------------------------------------------------------


def _number(v: Any) -> sp.Expr:
    """A parameter from a result file (an int or float in TOML) as an exact number."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"expected a number, got {v!r}")
    frac = Fraction(v)
    return sp.Rational(frac.numerator, frac.denominator)


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


def _relation_on_domain(c: sp.Basic) -> bool | None:
    """``k = v``, ``k > v`` or ``k ≠ v`` decided for every allowed value of the parameters in ``k``
    (``1 < k < 2`` proves ``k > 1``) through the exact sign of ``k − v``, else None."""
    if not isinstance(c, sp.core.relational.Relational) or not has_domain(c):
        return None  # without a declared domain: SymPy's own evaluation, as before
    diff = c.lhs - c.rhs
    sign = exact_sign(diff)
    if isinstance(c, sp.Eq):
        return True if sign == 0 else (False if proved_nonzero(diff) else None)
    if isinstance(c, sp.StrictGreaterThan):
        return None if sign is None else sign == 1
    if isinstance(c, sp.Ne):
        return True if proved_nonzero(diff) else (False if sign == 0 else None)
    return None


def _degree_ok(k: sp.Expr, p: dict[str, Any], params: tuple[Any, ...] = ()) -> bool | None:
    k = _within_constraints(k, params)
    checks = []
    if "equals" in p:
        checks.append(sp.Eq(k, _number(p["equals"])))
    if "min_exclusive" in p:
        checks.append(sp.Gt(k, _number(p["min_exclusive"])))
    if "exclude" in p:
        checks.append(sp.Ne(k, _number(p["exclude"])))
    if not checks:
        return None  # no constraint: never vacuously true (the declaration requires one)
    values = [bool(c) if c in (sp.true, sp.false) else _relation_on_domain(c) for c in checks]
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


@hypothesis("unit_homogeneous",
            'each unit is positively homogeneous of a degree `k` meeting the constraints (gated: `k = deg g + 1`)',
            params={"equals": Param("number", "the degree k equals this"),
                    "min_exclusive": Param("number", "k is greater than this"),
                    "exclude": Param("number", "k differs from this")},
            binds=('k',), require_any=('equals', 'min_exclusive', 'exclude'))
def _unit_homogeneous(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    ev, k, text = _unit_degree(s, s.the_block)
    statement = f"each unit is positively homogeneous of degree $k$ with ${_degree_text(p)}$"
    if k is None:
        what = "the gate g is" if s.the_block.gated else "σ is"
        return from_evidence("unit_homogeneous", statement, "homogeneity", ev,
                              refuted_reason=f"{what} not positively homogeneous")
    act = s.the_block.activation
    ok = _degree_ok(k, p, act.gate.params if isinstance(act, GatedActivation) else act.params)
    check = from_evidence("unit_homogeneous", statement + f" ({text})", "homogeneity", ev, {"k": k},
                           holds=ok)
    if ok is False:
        return HypothesisCheck(check.name, HypStatus.REFUTED, check.statement, check.evidence, check.bindings,
                               reason=f"the degree is k = {spec_expr(k)}, outside "
                                      f"{_degree_text(p).replace(chr(92) + 'ne', '≠')}")
    if ok is None:
        return HypothesisCheck(check.name, HypStatus.UNKNOWN, check.statement, check.evidence, check.bindings,
                               reason="the degree could not be compared")
    return check


@hypothesis("gate_value_at_0_zero", '`g(0) = 0`', binds=('g0',))
def _gate_zero(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    if not s.the_block.gated:
        return simple("gate_value_at_0_zero", HypStatus.REFUTED, "$g(0) = 0$", "the block is ungated")
    f = s.facts()
    v = f.at_zero.value
    statement = "$g(0) = 0$" + (f" (here $g(0) = {sp.latex(v)}$)" if v is not None else "")
    if v is None:
        return simple("gate_value_at_0_zero", HypStatus.UNKNOWN, statement, "g(0) undecided")
    ev = proved(Stage.STRUCTURAL, Step("value at 0", sp.Eq(label("g(0)", "g(0)"), v, evaluate=False)))
    if exact_zero(v) is True:
        return from_evidence("gate_value_at_0_zero", statement, "g(0)", ev, {"g0": v})
    if exact_zero(v) is False:
        return simple("gate_value_at_0_zero", HypStatus.REFUTED, statement, f"g(0) = {spec_expr(v)} ≠ 0",
                       evidence=(("g(0)", ev),))
    return simple("gate_value_at_0_zero", HypStatus.UNKNOWN, statement, "g(0) undecided")


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
        refuted_reason += (f" (left derivative {spec_expr(f.at_zero.left_derivative)}, right derivative "
                           f"{spec_expr(f.at_zero.right_derivative)})")
    return from_evidence(name, statement, "differentiability at 0", ev, {"d0": f.at_zero.derivative},
                          refuted_reason=refuted_reason)


@hypothesis("gate_differentiable_at_0", '`g` differentiable at 0', binds=('d0',))
def _gate_diff(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    if not s.the_block.gated:
        return simple("gate_differentiable_at_0", HypStatus.REFUTED, "$g$ is differentiable at $0$",
                       "the block is ungated")
    return _differentiable("gate_differentiable_at_0", s, "g")


@hypothesis("differentiable_at_0", 'σ differentiable at 0', binds=('d0',))
def _diff(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    return _differentiable("differentiable_at_0", s, "\\sigma")


@hypothesis("derivative_at_0_zero", "`σ'(0) = 0`")
def _deriv_zero(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    f = s.facts()
    d = f.at_zero.derivative
    if d is None:
        return simple("derivative_at_0_zero", HypStatus.UNKNOWN, "$\\sigma'(0) = 0$", "σ'(0) is not available")
    ev = f.at_zero.evidence
    if exact_zero(d) is True:
        return from_evidence("derivative_at_0_zero", "$\\sigma'(0) = 0$", "derivative at 0", ev)
    if exact_zero(d) is not False:
        return simple("derivative_at_0_zero", HypStatus.UNKNOWN, "$\\sigma'(0) = 0$",
                       f"σ'(0) = {spec_expr(d)} is not decided to be zero or nonzero", evidence=(("derivative at 0", ev),))
    return simple("derivative_at_0_zero", HypStatus.REFUTED, "$\\sigma'(0) = 0$", f"σ'(0) = {spec_expr(d)} ≠ 0",
                   evidence=(("derivative at 0", ev),))


@hypothesis("locally_bounded", 'σ locally bounded')
def _locally_bounded(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    f = s.facts()
    if f.growth.locally_bounded:
        ev = proved(Stage.STRUCTURAL, Step("σ is built from continuous functions (and finitely many bounded "
                                           "jumps), with denominators bounded away from 0 and logs of such"))
        return from_evidence("locally_bounded", "$\\sigma$ is locally bounded", "local boundedness", ev)
    return simple("locally_bounded", HypStatus.UNKNOWN, "$\\sigma$ is locally bounded",
                   "local boundedness is not shown structurally")


@hypothesis("sublinear_growth", '`σ = o(|z|)` at ±∞')
def _sublinear(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    g = s.facts().growth
    statement = "$\\sigma(z) = o(|z|)$ as $z \\to \\pm\\infty$"
    if g.growth_class is not None:
        statement += f" (growth: {g.plus_infinity} at $+\\infty$, {g.minus_infinity} at $-\\infty$)"
    if g.evidence.proved and g.growth_class is not None:
        ok = g.growth_class in ("bounded", "sublinear")
        check = from_evidence("sublinear_growth", statement, "growth", g.evidence, holds=ok)
        if not ok:
            return HypothesisCheck(check.name, HypStatus.REFUTED, statement, check.evidence,
                                   reason=f"σ grows {g.growth_class}ly" if g.growth_class != "linear"
                                   else "σ grows linearly")
        return check
    return from_evidence("sublinear_growth", statement, "growth", g.evidence)


@hypothesis("even", 'σ even')
def _even(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    f = s.facts()
    par = f.parity
    if par.symmetry == "even" and par.symmetry_evidence.proved:
        return from_evidence("even", "$\\sigma$ is even", "parity", par.symmetry_evidence)
    e = f.expr
    w = find_nonzero_point(e - e.xreplace({Z: -Z}))
    if w is not None:
        ev = Evidence(Status.REFUTED, Stage.NUMERIC_REFUTATION,
                      (Step(f"σ(z) − σ(−z) ∈ {w[1]} at z = {w[0]} (a rigorous enclosure excluding 0)"),))
        return simple("even", HypStatus.REFUTED, "$\\sigma$ is even", "σ is not even", evidence=(("parity", ev),))
    return simple("even", HypStatus.UNKNOWN, "$\\sigma$ is even", "evenness neither proved nor refuted",
                   evidence=(("parity", par.symmetry_evidence),))


def _params(s: Subject) -> tuple[Any, ...]:
    """The symbolic parameters (with their constraints) of the subject's activation."""
    act = s.the_block.activation
    return tuple(act.gate.params if isinstance(act, GatedActivation) else act.params)


def _nonzero_or_unknown(check: HypothesisCheck, value: Any, what: str, params: tuple[Any, ...] = ()) -> HypothesisCheck:
    """A proved check whose constant is not *proved* nonzero (a free parameter) becomes unknown;
    the parameters' constraints are used (``a > -1`` proves ``c = (a+1)/2 ≠ 0``)."""
    if check.status is HypStatus.PROVED and value is not None and \
            exact_zero(_within_constraints(value, params)) is not False and \
            not (has_domain(value) and proved_nonzero(value)):
        return HypothesisCheck(check.name, HypStatus.UNKNOWN, check.statement, check.evidence, check.bindings,
                               reason=f"{what} = {spec_expr(value)} is not proved nonzero")
    return check


@hypothesis("odd_linear", '`σ(z) − σ(−z) = 2cz` with `c ≠ 0`', binds=('c',))
def _odd_linear(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    par = s.facts().parity
    c = par.odd_linear_constant
    statement = "$\\sigma(z) - \\sigma(-z) = 2c\\,z$ with $c \\ne 0$"
    if c is not None:
        statement += f" (here $c = {sp.latex(c)}$)"
        if exact_zero(c) is True:
            return simple("odd_linear", HypStatus.REFUTED, statement, "the odd part is 0 (c = 0)",
                           evidence=(("parity", par.evidence),))
    check = from_evidence("odd_linear", statement, "parity", par.evidence, {"c": c})
    if check.status is HypStatus.REFUTED:
        return HypothesisCheck(check.name, check.status, statement, check.evidence, check.bindings,
                               reason="the odd part of σ is not c·z")
    return _nonzero_or_unknown(check, c, "c", _params(s))


@hypothesis("gate_flip", '`g(z) + g(−z) = 2g(0) ≠ 0`', binds=('g0',))
def _gate_flip(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    gate = s.facts().gate
    if gate is None:
        return simple("gate_flip", HypStatus.REFUTED, "$g(z) + g(-z) = 2g(0) \\ne 0$", "the block is ungated")
    g0 = gate.value_at_0
    statement = "$g(z) + g(-z) = 2g(0)$ with $g(0) \\ne 0$" + (f" (here $g(0) = {sp.latex(g0)}$)" if g0 is not None
                                                              else "")
    if g0 is not None and exact_zero(g0) is True:
        return simple("gate_flip", HypStatus.REFUTED, statement, "g(0) = 0", evidence=(("gate", gate.evidence),))
    check = from_evidence("gate_flip", statement, "gate symmetry", gate.evidence, {"g0": g0})
    if check.status is HypStatus.REFUTED:
        return HypothesisCheck(check.name, check.status, statement, check.evidence, reason="g(z) + g(−z) is not "
                               "constant")
    return _nonzero_or_unknown(check, g0, "g(0)", _params(s))


@hypothesis("same_function",
            "σ is exactly the reference function (decided on the piecewise normal form, not by name); binds "
            "its odd-part constant `c`",
            params={"reference": Param("string", "the reference activation", required=True,
                                       choices=tuple(REFERENCES))},
            binds=('c',))
def _same_function(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    label, ref = REFERENCES[p["reference"]]
    block = s.the_block
    statement = f"$\\sigma = \\mathrm{{{label}}}$ exactly"
    if block.gated:
        return simple("same_function", HypStatus.REFUTED, statement, "the block is gated")
    ev = identical(block.activation.expr, ref, label)
    check = from_evidence("same_function", statement, f"σ = {label}", ev)
    if check.status is HypStatus.REFUTED:
        return HypothesisCheck(check.name, check.status, statement, check.evidence, reason=f"σ is not {label}")
    if check.status is HypStatus.PROVED:
        # σ is the reference, so its odd part is the reference's: σ(z) − σ(−z) = 2c·z (c = 1/2 for ReLU, GELU)
        c = s.facts().parity.odd_linear_constant
        return HypothesisCheck(check.name, check.status, statement, check.evidence, (("c", c),))
    return check


@hypothesis("linear_activation", '`σ = cz`, `c ≠ 0`', binds=('c',))
def _linear(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    block = s.the_block
    if block.gated:
        return simple("linear_activation", HypStatus.REFUTED, "$\\sigma(z) = c\\,z$", "the block is gated")
    ev, c = linear_constant(block.activation.expr)
    statement = "$\\sigma(z) = c\\,z$ with $c \\ne 0$" + (f" (here $c = {sp.latex(c)}$)" if c is not None else "")
    if c is not None and exact_zero(c) is True:
        return simple("linear_activation", HypStatus.REFUTED, statement, "σ ≡ 0")
    check = from_evidence("linear_activation", statement, "linearity", ev, {"c": c})
    if check.status is HypStatus.REFUTED:
        return HypothesisCheck(check.name, check.status, statement, check.evidence, reason="σ is not linear")
    return _nonzero_or_unknown(check, c, "c", _params(s))


@hypothesis("affine_activation",
            '`σ = az + b`, `a ≠ 0` (`b = σ(0)`; with `constant = "nonzero"` also `b ≠ 0`)',
            params={"constant": Param("string", "whether σ(0) must be nonzero", default="any",
                                      choices=("any", "nonzero"))},
            binds=('a', 'b'))
def _affine(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    block = s.the_block
    nonzero = p.get("constant") == "nonzero"
    statement = "$\\sigma(z) = a\\,z + b$ with $a \\ne 0$" + (", $b \\ne 0$" if nonzero else "")
    if block.gated:
        return simple("affine_activation", HypStatus.REFUTED, statement, "the block is gated")
    expr = block.activation.expr
    b = expr.xreplace({Z: sp.S.Zero})
    if not isinstance(b, sp.Expr) or b.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        return simple("affine_activation", HypStatus.UNKNOWN, statement, "σ(0) is not a finite number here")
    ev, a = linear_constant(expr - b)
    if a is not None:
        statement += f" (here $a = {sp.latex(a)}$, $b = {sp.latex(b)}$)"
        if exact_zero(a) is True:
            return simple("affine_activation", HypStatus.REFUTED, statement, "σ is constant")
    check = from_evidence("affine_activation", statement, "linearity of σ − σ(0)", ev, {"a": a, "b": b})
    if check.status is HypStatus.REFUTED:
        return HypothesisCheck(check.name, check.status, statement, check.evidence, reason="σ is not affine")
    check = _nonzero_or_unknown(check, a, "a", _params(s))
    if nonzero and check.status is HypStatus.PROVED:
        zero = exact_zero(b)
        if zero is True:
            return HypothesisCheck(check.name, HypStatus.REFUTED, statement, check.evidence, check.bindings,
                                   reason="σ(0) = 0 (σ is linear)")
        check = _nonzero_or_unknown(check, b, "b = σ(0)", _params(s))
    return check


@hypothesis("nonpolynomial", 'σ is not a polynomial')
def _nonpolynomial(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    poly = s.facts().polynomial
    ev = poly.evidence
    if ev.status is Status.REFUTED:
        return simple("nonpolynomial", HypStatus.PROVED, "$\\sigma$ is not a polynomial", evidence=(("polynomial", ev),))
    if ev.status is Status.PROVED:
        return simple("nonpolynomial", HypStatus.REFUTED, "$\\sigma$ is not a polynomial", "σ is a polynomial",
                       evidence=(("polynomial", ev),))
    return simple("nonpolynomial", HypStatus.UNKNOWN, "$\\sigma$ is not a polynomial", ev.reason)


# ---- continuity, Sym(σ) and polynomial forms (Theorem R and its neighbours) ----------------------------


@hypothesis("continuous", 'σ continuous on R (`analysis/continuity.py`)')
def _continuous(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    if s.the_block.gated:
        return simple("continuous", HypStatus.REFUTED, "$\\sigma$ is continuous on $\\mathbb{R}$", "the block is gated")
    cont = s.facts().continuity
    check = from_evidence("continuous", "$\\sigma$ is continuous on $\\mathbb{R}$", "continuity", cont.evidence)
    if check.status is HypStatus.REFUTED:
        return HypothesisCheck(check.name, check.status, check.statement, check.evidence, reason="σ is not continuous")
    return check


def _sym_latex(kept: tuple[Any, ...]) -> str:
    parts = []
    for c in kept:
        if getattr(c, "family_kappa", None) is not None:
            sign = ">" if c.mu == "mu>0" else "<"
            parts.append(f"(\\mu, {sp.latex(c.family_kappa)})_{{\\mu {sign} 0}}")
        elif c.mu == "mu>0":
            parts.append("(\\mu, \\mu)_{\\mu > 0}")
        elif c.mu == "mu<0":
            parts.append("(\\mu, |\\mu|)_{\\mu < 0}" if c.kappa == 1 else "(\\mu, -|\\mu|)_{\\mu < 0}")
        else:
            parts.append(f"({c.mu}, {sp.latex(c.kappa)})")
    return "\\{" + ", ".join(parts) + "\\}"


@hypothesis("sym_remainders",
            "`Sym(σ)` proved exactly (`analysis/symmetry.py`) and its remainders are of one of the kinds "
            "`linear-odd` (`{0, 2ct}`, `c ≠ 0`), `no-flip` (no linear term), `polynomial-odd` (`{0, 2o}`, `o` odd "
            "polynomial of degree > 1, `o'(0) ≠ 0`)",
            params={"kinds": Param("strings", "the admitted kinds of remainders", required=True,
                                   choices=("linear-odd", "no-flip", "polynomial-odd"))},
            binds=('c', 'c_lin', 'o2'))
def _sym_remainders(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    kinds = tuple(p.get("kinds", ()))
    want = {"linear-odd": "remainders $\\{0, 2c\\,t\\}$ with $c \\ne 0$",
            "no-flip": "every remainder free of a linear term",
            "polynomial-odd": "remainders $\\{0, 2o(t)\\}$ with $o$ an odd polynomial of degree $> 1$, $o'(0) \\ne 0$"}
    statement = "$\\mathrm{Sym}(\\sigma)$ is proved exactly, with " + " or ".join(want[k] for k in kinds)
    if s.the_block.gated:
        return simple("sym_remainders", HypStatus.REFUTED, statement, "the block is gated")
    sym = s.facts().symmetry
    ev = sym.evidence
    if not ev.proved:
        return simple("sym_remainders", HypStatus.UNKNOWN, statement, f"Sym(σ) not decided: {ev.reason}",
                      evidence=(("Sym(σ)", ev),))
    rems = ", ".join(sp.latex(r) for r in sym.remainders())
    statement += f" (here $\\mathrm{{Sym}}(\\sigma) = {_sym_latex(sym.kept)}$, remainders ${rems}$)"
    kind = sym.kind
    if kind not in kinds:
        what = kind or "another shape"
        return simple("sym_remainders", HypStatus.REFUTED, statement, f"the remainders of Sym(σ) are of kind {what}",
                      evidence=(("Sym(σ)", ev),))
    bindings: dict[str, Any] = {}
    c = sym.flip_constant
    if kind == "linear-odd":
        bindings["c"] = c
    elif kind == "polynomial-odd":
        bindings["c_lin"] = c
        bindings["o2"] = sym.flip_remainder
    return simple("sym_remainders", HypStatus.PROVED, statement, bindings=bindings, evidence=(("Sym(σ)", ev),))


@hypothesis("linear_plus_homogeneous", '`σ = cz + q(z)`, `c ≠ 0` proved, `q` homogeneous of degree `k ≥ 2`',
            binds=('c', 'k', 'q', 'Dcond', 'Dplain'))
def _linear_plus_homogeneous(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    statement = "$\\sigma(z) = c\\,z + q(z)$ with $c \\ne 0$ and $q$ homogeneous of degree $k \\ge 2$"
    if s.the_block.gated:
        return simple("linear_plus_homogeneous", HypStatus.REFUTED, statement, "the block is gated")
    expr = sp.expand(s.the_block.activation.expr)
    if not expr.is_polynomial(Z):
        return simple("linear_plus_homogeneous", HypStatus.REFUTED if s.facts().polynomial.evidence.refuted
                      else HypStatus.UNKNOWN, statement, "σ is not (shown to be) a polynomial")
    poly = sp.Poly(expr, Z)
    c = poly.coeff_monomial(Z)
    from ..analysis.identity import exact_sign

    signs = {m[0]: exact_sign(coeff) for m, coeff in poly.terms()}
    if any(sign is None for sign in signs.values()):
        return simple("linear_plus_homogeneous", HypStatus.UNKNOWN, statement,
                      "a coefficient of σ could be neither proved zero nor proved nonzero")
    degrees = sorted(k for k, sign in signs.items() if sign != 0 and k != 1)
    if signs.get(1, 0) == 0 or len(degrees) != 1 or degrees[0] < 2:
        return simple("linear_plus_homogeneous", HypStatus.REFUTED, statement,
                      "σ is not c·z plus one homogeneous term of degree ≥ 2 with c ≠ 0 (every coefficient decided)")
    k = degrees[0]  # every other coefficient is proved 0
    q = poly.coeff_monomial(Z**k) * Z**k
    dcond = "D_{ii} \\ne -1" if k % 2 == 0 else "D_{ii} > -1"
    dplain = "D_ii != -1" if k % 2 == 0 else "D_ii > -1"
    return simple("linear_plus_homogeneous", HypStatus.PROVED,
                  statement + f" (here $c = {sp.latex(c)}$, $q(z) = {sp.latex(q)}$, $k = {k}$)",
                  bindings={"c": c, "k": sp.Integer(k), "q": q, "Dcond": dcond, "Dplain": dplain})


# ---- gates that are odd, constant, or only continuous at 0 --------------------------------------------


@hypothesis("gate_continuous_at_0", '`g` continuous at 0')
def _gate_continuous(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    statement = "$g$ is continuous at $0$"
    if not s.the_block.gated:
        return simple("gate_continuous_at_0", HypStatus.REFUTED, statement, "the block is ungated")
    at0 = s.facts().at_zero
    if at0.continuous is True:
        return simple("gate_continuous_at_0", HypStatus.PROVED, statement, evidence=(("g at 0", at0.evidence),))
    if at0.continuous is False:
        return simple("gate_continuous_at_0", HypStatus.REFUTED, statement, "g jumps at 0",
                      evidence=(("g at 0", at0.evidence),))
    return simple("gate_continuous_at_0", HypStatus.UNKNOWN, statement, "continuity of g at 0 undecided")


@hypothesis("gate_odd", '`g` odd')
def _gate_odd(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    statement = "the gate $g$ is odd: $g(-z) = -g(z)$"
    if not s.the_block.gated:
        return simple("gate_odd", HypStatus.REFUTED, statement, "the block is ungated")
    par = s.facts().parity
    if par.symmetry == "odd" and par.symmetry_evidence.proved:
        return simple("gate_odd", HypStatus.PROVED, statement, evidence=(("parity of g", par.symmetry_evidence),))
    if par.symmetry in ("even", "neither"):
        return simple("gate_odd", HypStatus.REFUTED, statement, "g is not odd",
                      evidence=(("parity of g", par.symmetry_evidence),))
    return simple("gate_odd", HypStatus.UNKNOWN, statement, "oddness of g undecided")


@hypothesis("linear_block", '`σ = cz`, or a gated unit with constant gate `g ≡ c`; `c ≠ 0`', binds=('c',))
def _linear_block(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    block = s.the_block
    statement = "every unit is linear: $\\sigma(z) = c\\,z$, or a constant gate $g \\equiv c$, with $c \\ne 0$"
    if block.gated:
        if s.facts().at_zero.value is not None and find_nonconstant_points(s.facts().expr) is not None:
            # two points with disjoint enclosures of g: not constant, refuted before any simplify
            return simple("linear_block", HypStatus.REFUTED, statement, "the gate is not (shown) constant")
        g = simplified(s.facts().expr)
        if not is_free_of_z(g):
            return simple("linear_block", HypStatus.REFUTED if s.facts().at_zero.value is not None and
                          find_nonzero_point(sp.diff(g, Z)) is not None else HypStatus.UNKNOWN,
                          statement, "the gate is not (shown) constant")
        if exact_zero(g) is not False:
            return simple("linear_block", HypStatus.UNKNOWN if exact_zero(g) is not True else HypStatus.REFUTED,
                          statement, f"the constant gate {spec_expr(g)} is not proved nonzero")
        return simple("linear_block", HypStatus.PROVED, statement + f" (here $g \\equiv {sp.latex(g)}$)",
                      bindings={"c": g})
    ev, c = linear_constant(block.activation.expr)
    if c is not None and exact_zero(c) is True:
        return simple("linear_block", HypStatus.REFUTED, statement, "σ ≡ 0")
    check = from_evidence("linear_block", statement + (f" (here $c = {sp.latex(c)}$)" if c is not None else ""),
                          "linearity", ev, {"c": c})
    if check.status is HypStatus.REFUTED:
        return HypothesisCheck(check.name, check.status, check.statement, check.evidence, reason="σ is not linear")
    return _nonzero_or_unknown(check, c, "c", _params(s))


@hypothesis("linear_plus_positively_homogeneous",
            '`σ = cz + q(z)`, `c ≠ 0`, `q` positively homogeneous of degree `k > 0`, `k ≠ 1` (one polynomial piece per ray)',
            binds=('c', 'k', 'qplus', 'qminus'))
def _linear_plus_positively_homogeneous(s: Subject, p: dict[str, Any]) -> HypothesisCheck:
    """σ = c·z + q with q positively homogeneous of degree k ∉ {0, 1}, read from the two rays:
    σ = c z + A z^k on z > 0 and c z + B z^k on z < 0 (polynomial pieces), σ(0) = 0, every
    coefficient's sign decided exactly."""
    from ..analysis.identity import exact_sign, prove_zero
    from ..analysis.piecewise import piecewise_form

    name = "linear_plus_positively_homogeneous"
    statement = ("$\\sigma(z) = c\\,z + q(z)$ with $c \\ne 0$ and $q$ positively homogeneous of degree "
                 "$k > 0$, $k \\ne 1$")
    if s.the_block.gated:
        return simple(name, HypStatus.REFUTED, statement, "the block is gated")
    expr = s.the_block.activation.expr
    form = piecewise_form(expr)
    if form is None:
        return simple(name, HypStatus.UNKNOWN, statement, "the case splits of σ could not be decided exactly")
    rays = [form.restricted(sp.S.Zero, sp.oo), form.restricted(-sp.oo, sp.S.Zero)]
    if any(len(r) != 1 for r in rays) or not all(r[0].expr.is_polynomial(Z) for r in rays):
        return simple(name, HypStatus.UNKNOWN, statement, "σ is not one polynomial on each ray z > 0, z < 0")
    if not prove_zero(expr.xreplace({Z: sp.S.Zero})):
        return simple(name, HypStatus.REFUTED if exact_sign(expr.xreplace({Z: sp.S.Zero})) not in (0, None)
                      else HypStatus.UNKNOWN, statement, "σ(0) is not shown to be 0")
    polys = [sp.Poly(sp.expand(r[0].expr), Z) for r in rays]
    signs = [{m[0]: exact_sign(coeff) for m, coeff in poly.terms()} for poly in polys]
    if any(sign is None for side in signs for sign in side.values()):
        return simple(name, HypStatus.UNKNOWN, statement, "a coefficient could be neither proved zero nor nonzero")
    c_plus, c_minus = (poly.coeff_monomial(Z) for poly in polys)
    if not prove_zero(c_plus - c_minus) or exact_sign(c_plus) in (0, None):
        return simple(name, HypStatus.REFUTED, statement, "the z coefficients on the two rays differ or vanish")
    degrees = sorted({k for side in signs for k, sign in side.items() if sign != 0 and k != 1})
    if len(degrees) != 1 or degrees[0] < 2:
        return simple(name, HypStatus.REFUTED, statement,
                      "σ − c·z is not a single power of z on each ray (every coefficient decided)")
    k = degrees[0]
    q_plus, q_minus = (poly.coeff_monomial(Z**k) * Z**k for poly in polys)
    return simple(name, HypStatus.PROVED,
                  statement + f" (here $c = {sp.latex(c_plus)}$, $k = {k}$)",
                  bindings={"c": c_plus, "k": sp.Integer(k), "qplus": sp.latex(q_plus), "qminus": sp.latex(q_minus)})
