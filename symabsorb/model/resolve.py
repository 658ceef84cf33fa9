"""From typed syntax to mathematics: names, arities, shapes and values, checked.

Expressions become SymPy objects only through :data:`~symabsorb.model.functions.BUILTIN_FUNCTIONS`
and the node types of :mod:`symabsorb.dsl.syntax`; no text is ever evaluated.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, MutableMapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import sympy as sp

from ..budget import current, input_root
from ..dsl import syntax as s
from ..dsl.errors import Span, SpecError, SpecLimitError, SpecNameError, SpecShapeError, SpecValueError, did_you_mean
from ..dsl.formatter import format_act_ref, format_expr, format_statement
from ..dsl.loader import load_modules
from ..dsl.parser import parse_act_ref, parse_expression, parse_text
from ..paths import confine, note_checked
from .activation import Activation, AnyActivation, Domain, GatedActivation, Parameter, ParameterSymbol
from .block import L_DEPTH, M_WIDTH, NORMS, Block, D, ResolvedSpec, Skip, SpecQuery, Stack, hc_structure_rank
from .catalog import CATALOG, catalog_source
from .domain import SideCondition, domain_gap, nonreal_stretches, open_conditions
from .functions import BUILTIN_FUNCTIONS, CONSTANTS, Z
from .space import MAX_GRID, MAX_SIZE, OPERATORS, ParameterRange, Space

__all__ = [
    "MAX_SERIES_ORDER",
    "WEIGHT_EXTENSIONS",
    "Scope",
    "activation_from_text",
    "catalog_scope",
    "constant_from_text",
    "load_spec",
    "resolve_modules",
    "resolve_text",
]

MAX_SERIES_ORDER = 60
WEIGHT_EXTENSIONS = (".npy", ".npz", ".safetensors", ".pt", ".pth", ".bin")
_NOT_FINITE = {"nan", "NaN", "inf", "Inf", "infinity", "Infinity", "oo", "zoo"}
#: Names a parameter may not take: `z` is the variable every activation is resolved in (a
#: parameter `z` would silently become it), and the non-finite names are errors wherever they appear.
RESERVED_PARAMETERS = frozenset({"z", *_NOT_FINITE})
_LOG2_10 = 3.3219280948873626
#: Inline weights stay where float64 arithmetic (the searches' first guess) keeps its squares finite.
_HUGE_WEIGHT = sp.Integer(10) ** 100
_TINY_WEIGHT = sp.Rational(1, 10**100)


def _short(node: s.Expr, n: int = 60) -> str:
    text = format_expr(node)
    return text if len(text) <= n else text[: n - 12] + "…" + text[-10:]


def _top_numbers(value: sp.Expr) -> list[sp.Rational]:
    """The rational numbers at the top of ``value``: itself, or the coefficients of its sum or product
    (where the arithmetic of one step put them; deeper ones were checked when they were built)."""
    if value.is_Rational:
        return [value]  # type: ignore[list-item]
    terms = value.args if value.is_Add else (value,)
    out = []
    for term in terms:
        if term.is_Rational:
            out.append(term)
        elif term.is_Mul and term.args and term.args[0].is_Rational:
            out.append(term.args[0])
    return out  # type: ignore[return-value]


def _checked_number(value: sp.Expr, node: s.Expr) -> sp.Expr:
    """An exact result whose numbers stay within the `digits` limit (Python cannot even print larger ones)."""
    limits = current().limits
    for number in _top_numbers(value):
        bits = max(abs(number.p).bit_length(), number.q.bit_length())
        if bits > limits.digits * _LOG2_10:
            raise SpecLimitError("a number in this expression is too large", node.span, f"`{_short(node)}`, "
                                 f"about {int(bits / _LOG2_10)} digits", f"at most {limits.digits} digits",
                                 limits.hint("digits"))
    return value


def _check_power(base: sp.Expr, exponent: sp.Expr, node: s.Binary) -> None:
    """Refuse ``base ^ exponent`` between numbers *before* computing it when the exponent or the
    result would be too large: ``((2^4096)^4096)^4096`` has 2·10^10 bits."""
    if not (base.is_number and exponent.is_Number):
        return
    limits = current().limits
    if exponent.is_Rational and base.is_Number and abs(exponent) > limits.exponent:
        raise SpecLimitError("exponent too large", node.right.span, f"`{_short(node.right)}`",
                             f"an exponent of at most {limits.exponent} between numbers", limits.hint("exponent"))
    if exponent.is_Rational and base.is_Rational and abs(base) not in (0, 1):
        bits = max(abs(base.p).bit_length(), base.q.bit_length())  # type: ignore[attr-defined]
        grown = bits * abs(exponent.p) / exponent.q  # type: ignore[attr-defined]
        if grown > limits.digits * _LOG2_10:
            raise SpecLimitError("this power is too large to compute exactly", node.span, f"`{_short(node)}`, "
                                 f"about {int(grown / _LOG2_10)} digits", f"at most {limits.digits} digits",
                                 limits.hint("digits"))


@dataclass
class _Template:
    """A declared activation before its parameters are fixed."""

    name: str
    gated: bool
    params: tuple[tuple[str, sp.Symbol, sp.Expr | None, sp.Basic | None], ...] = ()
    body: sp.Expr | None = None  # ungated: σ in Z with parameter symbols
    gate: Activation | None = None  # gated: the resolved gate
    source: str = ""
    span: Span | None = None
    domains: dict[str, Domain] = field(default_factory=dict)  # constrained parameters
    #: every divisor, logarithm argument and base of a negative power of the body as written (ungated)
    conditions: tuple[SideCondition, ...] = ()

    def _subs(self, values: dict[str, sp.Expr]) -> tuple[dict[sp.Basic, sp.Basic], list[Parameter]]:
        subs: dict[sp.Basic, sp.Basic] = {}
        free: list[Parameter] = []
        for name, sym, default, constraint in self.params:
            if name in values:
                subs[sym] = values[name]
            elif default is not None:
                subs[sym] = default
            else:
                free.append(Parameter(sym, constraint, self.domains.get(name)))
        return subs, free

    def instantiate(self, values: dict[str, sp.Expr], display: str) -> AnyActivation:
        if self.gated:
            assert self.gate is not None
            return GatedActivation(display, self.gate, self.source, self.span)
        assert self.body is not None
        subs, free = self._subs(values)
        body = self.body.xreplace(subs)
        return Activation(display, body, tuple(free), self.source, self.span,
                          open_conditions(body, self.written_conditions(values)))

    def written_conditions(self, values: dict[str, sp.Expr]) -> tuple[SideCondition, ...]:
        """The side conditions of the body as written, with these parameter values."""
        subs, _ = self._subs(values)
        return tuple(c.subs(subs) for c in self.conditions) if subs else self.conditions


@dataclass
class Scope:
    """Declared activations, in declaration order, falling back on a parent (the catalog)."""

    templates: MutableMapping[str, _Template] = field(default_factory=dict)
    parent: Scope | None = None
    pending: dict[str, Span | None] = field(default_factory=dict)  # declared later in the spec

    def lookup(self, name: str) -> _Template | None:
        if name in self.templates:
            return self.templates[name]
        return self.parent.lookup(name) if self.parent else None

    def names(self) -> list[str]:
        own = list(self.templates)
        return own + (self.parent.names() if self.parent else [])


class _ExprBuilder:
    """Builds one SymPy expression from syntax, given what names mean in its context."""

    def __init__(self, scope: Scope, var: str | None, params: dict[str, sp.Symbol],
                 self_name: str | None = None, symbols: dict[str, sp.Symbol] | None = None) -> None:
        self.scope = scope
        self.var = var
        self.params = params
        self.self_name = self_name
        self.symbols = symbols  # free size symbols allowed (for `width: 4*d`), created on demand
        #: where σ as written has a value: every divisor, logarithm argument and base of a negative power built,
        #: recorded before SymPy's evaluation can cancel it (``z^2/z`` is built as ``z``)
        self.conditions: list[SideCondition] = []

    def _side_condition(self, value: sp.Expr, what: str, node: s.Expr) -> None:
        if not value.is_Rational and value.free_symbols:
            self.conditions.append(SideCondition(value, what, _short(node, 40)))

    def known_names(self) -> list[str]:
        names = list(self.params) + list(CONSTANTS) + list(BUILTIN_FUNCTIONS) + self.scope.names()
        if self.var:
            names.append(self.var)
        return names

    def build(self, node: s.Expr) -> sp.Expr:
        result = self._build(node)
        if result.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
            raise SpecValueError("the expression is not a finite number", node.span,
                                 f"`{format_expr(node)}`", "a finite value",
                                 "look for a division by zero or log(0)")
        return result

    def _build(self, node: s.Expr) -> sp.Expr:
        if isinstance(node, s.Number):
            return _checked_number(sp.Rational(node.value.numerator, node.value.denominator), node)
        if isinstance(node, s.Name):
            return self._name(node)
        if isinstance(node, s.Unary):
            # A chain `- - - z` in a loop: the parser bounds nesting, not the length of a chain.
            negate = False
            current: s.Expr = node
            while isinstance(current, s.Unary):
                negate ^= current.op == "-"
                current = current.operand
            inner = self._build(current)
            return -inner if negate else inner
        if isinstance(node, s.Binary) and node.op != "^":
            chained = self._chain(node)
            return _checked_number(_exact_sum(chained) if node.op in "+-" else chained, node)
        if isinstance(node, s.Binary):
            left, right = self._build(node.left), self._build(node.right)
            _check_power(left, right, node)
            if _proved_zero(left) and right.is_negative:
                raise SpecValueError("zero raised to a negative power", node.span, f"`{_short(node)}`",
                                     "a finite value", "this is a division by zero")
            if right.is_negative is True:
                self._side_condition(left, "base of a negative power", node.left)
            return _checked_number(sp.Pow(left, right), node)
        if isinstance(node, s.IfExpr):
            first = len(self.conditions)
            then = self._build(node.then)
            middle = len(self.conditions)
            cond = self._cond(node.cond)
            after_cond = len(self.conditions)
            orelse = self._build(node.orelse)
            self._guard(first, middle, cond)  # a side condition of a case holds only where the case is taken
            self._guard(after_cond, len(self.conditions), sp.Not(cond))
            return sp.Piecewise((then, cond), (orelse, True))
        if isinstance(node, s.Call):
            return self._call(node)
        raise TypeError(node)  # pragma: no cover - the parser builds nothing else

    def _guard(self, start: int, stop: int, cond: sp.Basic) -> None:
        for i in range(start, stop):
            c = self.conditions[i]
            self.conditions[i] = SideCondition(c.expr, c.what, c.written, sp.And(c.guard, cond))

    def _chain(self, node: s.Binary) -> sp.Expr:
        """``a + b - c + ...`` or ``a * b / c ...``: the left spine collected in a loop and built
        with one ``Add``/``Mul`` (linear, where folding pairwise is quadratic in the terms)."""
        additive = node.op in "+-"
        ops = "+-" if additive else "*/"
        spine: list[s.Binary] = []
        current: s.Expr = node
        while isinstance(current, s.Binary) and current.op in ops:
            spine.append(current)
            current = current.left
        terms = [self._build(current)]
        for b in reversed(spine):
            right = self._build(b.right)
            if b.op == "-":
                right = -right
            elif b.op == "/":
                if _proved_zero(right):
                    raise SpecValueError("division by zero", b.right.span, f"`{_short(b.right)}`",
                                         "a nonzero divisor", "check the constants of this expression")
                self._side_condition(right, "divisor", b.right)
                right = 1 / right
            terms.append(right)
        if len(terms) == 2:  # the common case, built exactly as before
            return terms[0] + terms[1] if additive else terms[0] * terms[1]
        return sp.Add(*terms) if additive else sp.Mul(*terms)

    def _cond(self, node: s.Compare | s.BoolOp) -> sp.Basic:
        if isinstance(node, s.Compare):
            ops = {"<": sp.Lt, "<=": sp.Le, ">": sp.Gt, ">=": sp.Ge}
            left, right = self._build(node.left), self._build(node.right)
            if left.is_real is False or right.is_real is False:
                raise SpecValueError("a comparison between non-real values", node.span, f"`{_short(node.left)} "
                                     f"{node.op} {_short(node.right)}`", "real values on both sides",
                                     "only real numbers can be compared")
            try:
                return ops[node.op](left, right)
            except TypeError:
                raise SpecValueError("these values cannot be compared", node.span, f"`{_short(node.left)} "
                                     f"{node.op} {_short(node.right)}`", "real values on both sides") from None
        spine: list[s.BoolOp] = []
        current: s.Compare | s.BoolOp = node
        while isinstance(current, s.BoolOp):
            spine.append(current)
            current = current.left
        result = self._cond(current)
        for b in reversed(spine):
            right_cond = self._cond(b.right)
            result = sp.And(result, right_cond) if b.op == "and" else sp.Or(result, right_cond)
        return result

    def _name(self, node: s.Name) -> sp.Expr:
        name = node.id
        if name == self.var:
            return Z
        if name in self.params:
            return self.params[name]
        if name in CONSTANTS:
            return CONSTANTS[name]
        if self.symbols is not None and name not in BUILTIN_FUNCTIONS and self.scope.lookup(name) is None:
            if name not in self.symbols:
                self.symbols[name] = sp.Symbol(name, integer=True, positive=True)
            return self.symbols[name]
        if name in _NOT_FINITE:
            raise SpecValueError(f"`{name}` is not a finite number", node.span, f"`{name}`",
                                 "a finite number", "symabsorb works with exact finite values only")
        if name in BUILTIN_FUNCTIONS or self.scope.lookup(name) is not None:
            raise SpecNameError(f"`{name}` is a function and needs an argument", node.span, f"`{name}`",
                                "a value", f"write `{name}({self.var or 'z'})`")
        if self.var is None:
            raise SpecNameError(f"unknown name `{name}`", node.span, f"`{name}`",
                                "a number or a constant (`pi`, `e`)",
                                did_you_mean(name, list(CONSTANTS)) or "only constant expressions are allowed here")
        raise SpecNameError(f"unknown name `{name}`", node.span, f"`{name}`",
                            f"the variable `{self.var}`, a parameter, `pi` or `e`",
                            did_you_mean(name, self.known_names())
                            or f"declare it as a parameter: `activation f({self.var}; {name} = 1) = ...`")

    def _call(self, node: s.Call) -> sp.Expr:
        name = node.func
        if name == self.self_name and name not in BUILTIN_FUNCTIONS:
            raise SpecNameError(f"activation `{name}` calls itself", node.span, f"`{name}(...)`",
                                "calls of built-in functions or earlier activations only",
                                "activations cannot be recursive")
        template = self.scope.templates.get(name) if name != self.self_name else None
        if template is None and name in self.scope.pending and name != self.self_name:
            where = self.scope.pending[name]
            raise SpecNameError(f"`{name}` is used before its declaration", node.span, f"`{name}`",
                                "an activation declared above this line",
                                f"move the declaration of `{name}`"
                                + (f" (line {where.line})" if where else "") + " above this one")
        if template is None and name in BUILTIN_FUNCTIONS:
            fn = BUILTIN_FUNCTIONS[name]
            n = len(node.args)
            if node.kwargs:
                raise SpecNameError(f"`{name}` takes no named parameters", node.kwargs[0].span,
                                    f"`{node.kwargs[0].name} = ...`", "positional arguments only")
            if n < fn.min_args or (fn.max_args is not None and n > fn.max_args):
                raise SpecValueError(f"`{name}` takes {fn.arity_text()}, got {n}", node.span,
                                     f"{n} argument{'s' if n != 1 else ''}", fn.arity_text(),
                                     f"`{name}` is the {fn.doc}")
            args = [self._build(a) for a in node.args]
            if name in ("max", "min"):
                args = [_comparable(v, a) for v, a in zip(args, node.args, strict=True)]
            if name == "log":
                self._side_condition(args[0], "argument of log", node.args[0])
            return fn.build(*args)
        if template is None:
            template = self.scope.lookup(name)
        if template is None:
            raise SpecNameError(f"unknown function `{name}`", node.span, f"`{name}`",
                                "a built-in function or an activation declared earlier",
                                did_you_mean(name, list(BUILTIN_FUNCTIONS) + self.scope.names())
                                or "declare it first: `activation " + name + "(z) = ...`")
        if template.gated:
            raise SpecNameError(f"`{name}` is a gated unit, not a function of one variable", node.span,
                                f"`{name}`", "an ungated activation", "call its gate instead")
        if len(node.args) != 1:
            raise SpecValueError(f"activation `{name}` takes 1 argument, got {len(node.args)}", node.span,
                                 f"{len(node.args)} arguments", "1 argument",
                                 "parameters are passed after `;`: f(z; alpha = 1/5)")
        values = _kwarg_values(template, node.kwargs, self)
        act = template.instantiate(values, name)
        assert isinstance(act, Activation)
        arg = self._build(node.args[0])
        # the called activation's own divisors, at its argument (its simplified body may have cancelled them)
        self.conditions.extend(c.subs({Z: arg}) for c in template.written_conditions(values))
        return act(arg)


def _kwarg_values(template: _Template, kwargs: Iterable[s.KwArg], builder: _ExprBuilder) -> dict[str, sp.Expr]:
    names = [p[0] for p in template.params]
    values: dict[str, sp.Expr] = {}
    for kw in kwargs:
        if kw.name not in names:
            expected = ("its parameters " + ", ".join(f"`{n}`" for n in names)) if names else "no parameters"
            raise SpecNameError(f"`{template.name}` has no parameter `{kw.name}`", kw.span, f"`{kw.name}`",
                                expected, did_you_mean(kw.name, names))
        if kw.name in values:
            raise SpecNameError(f"parameter `{kw.name}` given twice", kw.span, f"`{kw.name}`",
                                "each parameter at most once")
        value = builder.build(kw.value)
        domain = template.domains.get(kw.name)
        if domain is not None and not value.free_symbols and domain.contains(value) is False:
            raise SpecValueError(f"the value of `{kw.name}` violates its constraint", kw.span,
                                 f"{kw.name} = {sp.sstr(value)}", domain.text(kw.name),
                                 f"`{template.name}` is declared for {domain.text(kw.name)} only")
        values[kw.name] = value
    return values


# ---- declarations ----------------------------------------------------------------------------

_RELATIONS = {"<": sp.Lt, "<=": sp.Le, ">": sp.Gt, ">=": sp.Ge, "!=": sp.Ne}


def _sign_assumptions(domain: Domain) -> dict[str, bool]:
    """SymPy assumptions implied by a domain (``0 < a < 1`` makes ``a`` positive, ``a != 0`` nonzero)."""
    def rel(x: sp.Expr | None, op: str) -> bool:
        return x is not None and _RELATIONS[op](x, 0) is sp.true

    lo_pos = rel(domain.lo, ">=") if domain.lo_open else rel(domain.lo, ">")
    lo_nonneg = rel(domain.lo, ">=")
    hi_neg = rel(domain.hi, "<=") if domain.hi_open else rel(domain.hi, "<")
    hi_nonpos = rel(domain.hi, "<=")
    zero_out = any(sp.Eq(x, 0) is sp.true for x in domain.excluded)
    if lo_pos or (lo_nonneg and zero_out):
        return {"positive": True}
    if hi_neg or (hi_nonpos and zero_out):
        return {"negative": True}
    if lo_nonneg:
        return {"nonnegative": True}
    if hi_nonpos:
        return {"nonpositive": True}
    if zero_out:
        return {"nonzero": True}
    return {}


def _said_by_assumptions(domain: Domain) -> bool:
    """Whether the sign assumptions alone describe the domain (``a > 0``, ``a <= 0``, ``a != 0``)."""
    zero = sp.S.Zero
    if domain.lo is None and domain.hi is None:
        return not domain.excluded or (len(domain.excluded) == 1 and domain.excluded[0] == zero)
    if domain.excluded:
        return False
    return (domain.lo is None or domain.lo == zero) and (domain.hi is None or domain.hi == zero)


def _compare(x: sp.Expr, op: str, y: sp.Expr, span: Span | None, name: str) -> bool:
    """``x op y`` for two real constants, decided exactly by SymPy, else an error."""
    result = _RELATIONS[op](x, y)
    if result is sp.true or result is sp.false:
        return result is sp.true
    raise SpecValueError(f"the bounds on `{name}` cannot be compared exactly", span,
                         f"{sp.sstr(x)} and {sp.sstr(y)}", "bounds whose order SymPy decides",
                         "write the bounds as rationals")


def _equal(x: sp.Expr, y: sp.Expr, span: Span | None, name: str) -> bool:
    return _compare(x, "<=", y, span, name) and _compare(x, ">=", y, span, name)


def _param_domain(name: str, constraints: list[tuple[str, sp.Expr, Span | None]], span: Span | None) -> Domain:
    """The intersection of the constraints on one parameter; an error when it is empty."""
    lo: sp.Expr | None = None
    lo_open = True
    hi: sp.Expr | None = None
    hi_open = True
    excluded: list[sp.Expr] = []
    for op, bound, where in constraints:
        if op in (">", ">="):
            if lo is None or _compare(bound, ">", lo, where, name):
                lo, lo_open = bound, op == ">"
            elif _equal(bound, lo, where, name) and op == ">":
                lo_open = True
        elif op in ("<", "<="):
            if hi is None or _compare(bound, "<", hi, where, name):
                hi, hi_open = bound, op == "<"
            elif _equal(bound, hi, where, name) and op == "<":
                hi_open = True
        elif not any(_equal(bound, x, where, name) for x in excluded):
            excluded.append(bound)
    if lo is not None and hi is not None:
        empty = _compare(lo, ">", hi, span, name) or (
            _compare(lo, ">=", hi, span, name) and (lo_open or hi_open))
        if not empty and _equal(lo, hi, span, name) and any(_equal(x, lo, span, name) for x in excluded):
            empty = True
        if empty:
            raise SpecValueError(f"the constraints on `{name}` allow no value", span,
                                 ", ".join(f"{name} {op} {sp.sstr(b)}" for op, b, _ in constraints),
                                 "an interval with at least one value",
                                 "check the direction of each comparison")
    def inside(x: sp.Expr) -> bool:
        return (lo is None or _compare(x, ">" if lo_open else ">=", lo, span, name)) and (
            hi is None or _compare(x, "<" if hi_open else "<=", hi, span, name))
    kept = [x for x in excluded if inside(x)]
    for i in range(1, len(kept)):  # in increasing order (insertion sort with exact comparisons)
        j = i
        while j and _compare(kept[j - 1], ">", kept[j], span, name):
            kept[j - 1], kept[j] = kept[j], kept[j - 1]
            j -= 1
    # an excluded closed end opens it
    if lo is not None and not lo_open and any(_equal(x, lo, span, name) for x in excluded):
        lo_open = True
    if hi is not None and not hi_open and any(_equal(x, hi, span, name) for x in excluded):
        hi_open = True
    # an excluded end is no piece boundary of its own: the open end already leaves it out
    kept = [x for x in kept if not ((lo is not None and _equal(x, lo, span, name))
                                    or (hi is not None and _equal(x, hi, span, name)))]
    return Domain(lo, lo_open, hi, hi_open, tuple(kept))


def _merged_params(d: s.ActivationDef) -> list[tuple[s.Param, list[s.Constraint], Span | None]]:
    """Entries of one name joined (``a > 0, a < 1``): the first carries the default, the others
    add constraints only. Each with the span from its first entry to its last."""
    out: dict[str, tuple[s.Param, list[s.Constraint], Span | None]] = {}
    for p in d.params:
        if p.name in out:
            if p.default is not None or not p.constraints:
                raise SpecNameError(f"parameter `{p.name}` declared twice", p.span, f"`{p.name}`",
                                    "distinct names for the variable and each parameter",
                                    f"several constraints are fine (`{p.name} > 0, {p.name} < 1`), "
                                    "but one default, in the first entry")
            first, constraints, span = out[p.name]
            constraints.extend(p.constraints)
            if span is not None and p.span is not None and span.file == p.span.file:
                span = Span(span.file, span.line, span.column, p.span.end_line, p.span.end_column)
            out[p.name] = (first, constraints, span)
        else:
            out[p.name] = (p, list(p.constraints), p.span)
    return list(out.values())


def _declare_activation(d: s.ActivationDef, scope: Scope, source: str) -> _Template:
    params: list[tuple[str, sp.Symbol, sp.Expr | None, sp.Basic | None]] = []
    domains: dict[str, Domain] = {}
    const = _ExprBuilder(scope, None, {})
    if d.var in _NOT_FINITE:
        raise SpecNameError(f"`{d.var}` is reserved and cannot be the variable", d.span, f"`{d.var}`",
                            "a name such as `z` or `x`", f"`{d.var}` means a non-finite number, which is an error")
    for p, constraints, span in _merged_params(d):
        if p.name == d.var:
            raise SpecNameError(f"parameter `{p.name}` declared twice", p.span, f"`{p.name}`",
                                "distinct names for the variable and each parameter")
        if p.name in RESERVED_PARAMETERS:
            why = ("`z` is the variable every activation is analysed in" if p.name == "z"
                   else f"`{p.name}` means a non-finite number")
            raise SpecNameError(f"`{p.name}` is reserved and cannot be a parameter", p.span, f"`{p.name}`",
                                "another name, e.g. `k` or `alpha`", f"rename the parameter: {why}")
        if p.name in CONSTANTS or p.name in BUILTIN_FUNCTIONS:
            raise SpecNameError(f"`{p.name}` is a built-in name and cannot be a parameter", p.span,
                                f"`{p.name}`", "a new name", "rename the parameter")
        default = const.build(p.default) if p.default is not None else None
        if default is not None and p.default is not None and default.is_real is not True:
            raise SpecValueError(f"the default of `{p.name}` is not a real number", p.default.span,
                                 f"`{_short(p.default)}`", "a real constant", "parameters are real numbers")
        relations: list[tuple[str, sp.Expr, Span | None]] = []
        for c in constraints:
            bound = const.build(c.bound)
            if bound.is_real is not True:
                raise SpecValueError(f"the bound on `{p.name}` is not a real number", c.bound.span,
                                     f"`{_short(c.bound)}`", "a real constant",
                                     "a constraint compares the parameter with a real number")
            relations.append((c.normalized_op, bound, c.span))
        constraint: sp.Basic | None = None
        assumptions: dict[str, bool] = {"real": True}
        sym: sp.Symbol
        if relations:
            domain = _param_domain(p.name, relations, span)
            domains[p.name] = domain
            if default is not None and domain.contains(default) is False:
                raise SpecValueError(f"the default of `{p.name}` violates its constraint", p.span,
                                     f"{p.name} = {sp.sstr(default)}", domain.text(p.name))
            if default is None:
                assumptions.update(_sign_assumptions(domain))
            if default is None and not _said_by_assumptions(domain):
                sym = ParameterSymbol(p.name, domain, **assumptions)
            else:
                sym = sp.Symbol(p.name, **assumptions)
            rels = [_RELATIONS[op](sym, bound, evaluate=False) for op, bound, _ in relations]
            constraint = rels[0] if len(rels) == 1 else sp.And(*rels, evaluate=False)
        else:
            sym = sp.Symbol(p.name, **assumptions)
        params.append((p.name, sym, default, constraint))
    builder = _ExprBuilder(scope, d.var, {name: sym for name, sym, _, _ in params}, self_name=d.name)
    body = builder.build(d.body)
    conditions = tuple(dict.fromkeys(builder.conditions))
    defaults = {sym: v for _, sym, v, _ in params if v is not None}
    _check_real(body.xreplace(defaults), d.body, builder, defaults)
    return _Template(d.name, False, tuple(params), body, None, source, d.span, domains, conditions)


def _check_real(body: sp.Expr, node: s.Expr, builder: _ExprBuilder,
                defaults: dict[sp.Symbol, sp.Expr] | None = None) -> None:
    """A spec error when σ is proved non-real at a real point: an activation is a function R → R, on a
    half-line (``log(z)``, ``sqrt(z)``) or a bounded stretch (``sqrt((z-20)^2-1) + z``, non-real at 20) alike.

    The message states what is proved, no more: σ's value at one rational point has an imaginary part whose
    rigorous enclosure excludes 0, and the argument of the square root / logarithm / fractional power is
    negative on the stretch between its exact real roots (σ itself may be real at some points of it)."""
    for nr in nonreal_stretches(body):
        where = f"z = {sp.sstr(nr.point)}"
        value = (f"its value at {where} has imaginary part in {nr.imaginary} (a rigorous enclosure excluding 0)")
        hint = ("an activation is a function R -> R: sqrt(-4) is 2i, log of a negative number is not real; write "
                "e.g. sqrt(abs(z)), log(1 + z^2), or `if z >= 0 then ... else ...` with a real value on each side")
        if nr.kind == "point":
            raise SpecValueError(f"the activation is not real-valued at {where}", node.span,
                                 f"`{_short(node)}`, whose value at {where} has imaginary part in {nr.imaginary} "
                                 "(a rigorous enclosure excluding 0)", "an activation real on all of R", hint)
        at = _source_node(node, nr.source, builder, defaults or {}) or node
        if nr.kind == "argument":
            negative = f"is negative at {where}"
        elif nr.lo is None and nr.hi is None:
            negative = "is negative for every real z"
        elif nr.lo is None:
            negative = f"is negative for z < {sp.sstr(nr.hi)}"
        elif nr.hi is None:
            negative = f"is negative for z > {sp.sstr(nr.lo)}"
        else:
            negative = f"is negative for {sp.sstr(nr.lo)} < z < {sp.sstr(nr.hi)}"
        raise SpecValueError(f"the activation is not real-valued at {where}", at.span,
                             f"`{_short(at)}`, whose argument {sp.sstr(nr.argument)} {negative}; {value}",
                             "an activation real on all of R", hint)


def _source_node(node: s.Expr, source: sp.Expr, builder: _ExprBuilder,
                 defaults: dict[sp.Symbol, sp.Expr]) -> s.Expr | None:
    stack: list[object] = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (s.Call, s.Binary)) and (
                (isinstance(n, s.Call) and n.func in ("log", "sqrt")) or (isinstance(n, s.Binary) and n.op == "^")):
            try:
                if builder.build(n).xreplace(defaults) == source:
                    return n
            except SpecError:
                pass
        if isinstance(n, s.Call):
            stack.extend(reversed(n.args))
        elif isinstance(n, (s.Binary, s.Compare, s.BoolOp)):
            stack.extend((n.right, n.left))
        elif isinstance(n, s.Unary):
            stack.append(n.operand)
        elif isinstance(n, s.IfExpr):
            stack.extend((n.orelse, n.then, n.cond))
    return None


def _declare_gated(d: s.GatedDef, scope: Scope, source: str) -> _Template:
    if isinstance(d.gate, s.InlineGate):
        gate_builder = _ExprBuilder(scope, d.gate.var, {}, self_name=d.name)
        body = gate_builder.build(d.gate.body)
        conditions = open_conditions(body, tuple(gate_builder.conditions))
        _check_real(body, d.gate.body, gate_builder)
        gate = Activation(f"{d.name}.gate", body, (), source, d.gate.span, conditions)
    else:
        gate_act = _activation_ref(d.gate, scope, want_gated=False)
        assert isinstance(gate_act, Activation)
        gate = gate_act
    return _Template(d.name, True, (), None, gate, source, d.span)


def _activation_ref(ref: s.ActRef, scope: Scope, want_gated: bool | None = None) -> AnyActivation:
    template = scope.templates.get(ref.name)
    if template is None and ref.name in scope.pending:
        raise SpecNameError(f"`{ref.name}` is used before its declaration", ref.span, f"`{ref.name}`",
                            "an activation declared above this line", f"move `{ref.name}` above")
    template = template or scope.lookup(ref.name)
    if template is None:
        if ref.name in BUILTIN_FUNCTIONS and not ref.kwargs:
            fn = BUILTIN_FUNCTIONS[ref.name]
            if fn.min_args == 1:
                return Activation(ref.name, fn.build(Z), (), f"activation {ref.name}(z) = {ref.name}(z)", ref.span)
        raise SpecNameError(f"unknown activation `{ref.name}`", ref.span, f"`{ref.name}`",
                            "a built-in activation or one declared earlier",
                            did_you_mean(ref.name, scope.names()) or "declare it: `activation NAME(z) = ...`")
    if want_gated is False and template.gated:
        raise SpecNameError(f"`{ref.name}` is a gated unit and cannot be used as a gate", ref.span,
                            f"`{ref.name}`", "an ungated activation", "use its gate instead")
    values = _kwarg_values(template, ref.kwargs, _ExprBuilder(scope, None, {}))
    return template.instantiate(values, format_act_ref(ref))


class _CatalogTemplates(MutableMapping[str, "_Template"]):
    """The catalog's activations, each resolved on first use (a command that names one built-in
    resolves that one and what it calls, not all of them)."""

    def __init__(self, scope: Scope, statements: dict[str, s.ActivationDef | s.GatedDef],
                 aliases: dict[str, str]) -> None:
        self._scope, self._statements, self._aliases = scope, statements, aliases
        self._done: dict[str, _Template] = {}

    def __getitem__(self, name: str) -> _Template:
        if name in self._done:
            return self._done[name]
        if name in self._aliases:
            return self[self._aliases[name]]
        stmt = self._statements[name]  # KeyError: not a built-in
        definition = CATALOG[name].definition
        template = (_declare_activation(stmt, self._scope, definition) if isinstance(stmt, s.ActivationDef)
                    else _declare_gated(stmt, self._scope, definition))
        self._done[name] = template
        return template

    def __contains__(self, name: object) -> bool:
        return name in self._statements or name in self._aliases or name in self._done

    def __iter__(self) -> Iterator[str]:
        yield from self._statements
        yield from self._aliases

    def __len__(self) -> int:
        return len(self._statements) + len(self._aliases)

    def __setitem__(self, name: str, template: _Template) -> None:
        self._done[name] = template

    def __delitem__(self, name: str) -> None:
        raise TypeError("the catalog is read-only")


@functools.cache
def catalog_scope() -> Scope:
    """The built-in activations, resolved (on first use of each) through the ordinary machinery."""
    scope = Scope()
    module = parse_text(catalog_source(), "<catalog>")
    statements = {stmt.name: stmt for stmt in module.statements if isinstance(stmt, (s.ActivationDef, s.GatedDef))}
    aliases = {alias: entry.name for entry in CATALOG.values() for alias in entry.aliases}
    scope.templates = _CatalogTemplates(scope, statements, aliases)
    return scope


# ---- blocks -------------------------------------------------------------------------------------


def _positive_int(node: s.Expr, what: str, scope: Scope) -> int:
    value = _ExprBuilder(scope, None, {}).build(node)
    if not (value.is_Integer and value >= 1):
        raise SpecValueError(f"{what} must be a positive integer", node.span, f"`{format_expr(node)}`",
                             "an integer >= 1", None)
    return int(value)


def _matrix(m: s.Matrix, scope: Scope, what: str, rational: bool) -> sp.ImmutableMatrix:
    builder = _ExprBuilder(scope, None, {})
    seen: dict[Fraction, sp.Expr] = {}
    width = len(m.rows[0])
    rows = []
    for i, row in enumerate(m.rows):
        if len(row) != width:
            def entries(n: int) -> str:
                return f"{n} entr{'y' if n == 1 else 'ies'}"

            raise SpecShapeError(f"row {i + 1} of {what} has {entries(len(row))}, row 1 has {entries(width)}", m.span,
                                 entries(len(row)), f"{entries(width)}, like row 1",
                                 "every row of a matrix has the same length")
        values = []
        for entry in row:
            key = _literal_fraction(entry)
            if key is not None and key in seen:  # the same literal value, already built and checked
                values.append(seen[key])
                continue
            v = builder.build(entry)
            if rational and not v.is_Rational:
                raise SpecValueError(f"entries of {what} must be exact rational numbers", entry.span,
                                     f"`{format_expr(entry)}`", "an integer, decimal or p/q",
                                     "irrational weights cannot be checked exactly")
            if rational and v != 0 and not (_TINY_WEIGHT <= abs(v) <= _HUGE_WEIGHT):
                raise SpecValueError(f"an entry of {what} is out of the range the searches handle", entry.span,
                                     f"`{_short(entry)}`", "a magnitude between 10^-100 and 10^100 (or 0)",
                                     "the float guess of the search squares entries; rescale the weights")
            if not rational and not (v.is_real and v.is_finite):
                raise SpecValueError(f"entries of {what} must be real numbers", entry.span,
                                     f"`{format_expr(entry)}`", "a finite real constant")
            if not rational:
                v = _exact_constant(v)
            if key is not None:
                seen[key] = v
            values.append(v)
        rows.append(values)
    return sp.ImmutableMatrix(rows)


#: CPU seconds the resolver spends proving one constant 0 by SymPy's ``simplify`` (past it: not shown).
PROVE_ZERO_SECONDS = 1.0


def _proved_zero(v: sp.Expr) -> bool:
    """``v = 0`` proved by exact identities (a hidden zero such as ``cosh(1)^2 - sinh(1)^2 - 1`` is 0).

    The model layer sits below the analysis (no enclosures here), and needs only this direction: a
    float screens out the constants that are clearly not 0 (it decides nothing: they are merely not
    folded), then ``exp`` rewriting, ``logcombine`` (an identity for positive arguments, which it
    checks) and a CPU-bounded ``simplify`` prove 0 or leave ``v`` as written."""
    if v.is_Rational or v.free_symbols:
        return v.is_zero is True
    if v.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        return False
    try:
        screen = abs(complex(v.evalf(60)))
    except (TypeError, ValueError, ArithmeticError):
        return False
    if screen > 1e-40:
        return False
    if v.has(sp.sinh, sp.cosh, sp.tanh, sp.sin, sp.cos, sp.tan) and sp.expand(v.rewrite(sp.exp)) == 0:
        return True
    if v.has(sp.log) and sp.expand(sp.logcombine(v, force=False)) == 0:
        return True
    from ..budget import BudgetExhausted, Timeout, deadline

    try:
        with deadline(PROVE_ZERO_SECONDS):
            return bool(sp.simplify(v) == 0)
    except BudgetExhausted:
        raise
    except Timeout:
        return False


def _exact_sum(e: sp.Expr) -> sp.Expr:
    """``e`` with the constant part of the sum replaced by the rational number it equals, when it is
    a sum with an irrational term and the exact sign decision proves the equality: ``cosh(1)^2 −
    sinh(1)^2 − 1`` and ``(cosh 1 − sinh 1)(cosh 1 + sinh 1) − 1`` are 0, ``z + 3 + (log 6 − log 2 −
    log 3)`` is ``z + 3``. Every later reader
    (``max``/``min``, case splits, breakpoints, coefficients) then sees the number itself, which SymPy
    can compare. The candidate comes from a float; only the exact decision replaces anything."""
    if not isinstance(e, sp.Add):
        return e
    const, rest = e.as_independent(*e.free_symbols, as_Add=True) if e.free_symbols else (e, sp.S.Zero)
    terms = sp.Add.make_args(const)
    if len(terms) < 2 or all(a.is_Rational for a in terms) or not const.is_number:
        return e
    try:
        approx = const.evalf(40)
        if not approx.is_real or not approx.is_finite:
            return e
        q = sp.Rational(Fraction(str(approx)).limit_denominator(10**12))
    except (TypeError, ValueError, ArithmeticError):
        return e
    return q + rest if _proved_zero(const - q) else e


def _exact_constant(v: sp.Expr) -> sp.Expr:
    """A skip scale or entry as every later reader may compare it: an irrational constant proved 0
    by the exact sign decision (``cosh(1)^2 - sinh(1)^2 - 1``) becomes the literal 0."""
    if v.is_Rational or v.free_symbols:
        return v
    return sp.S.Zero if _proved_zero(v) else v


def _comparable(v: sp.Expr, node: s.Expr) -> sp.Expr:
    """An argument of ``max``/``min`` SymPy can order: a constant it cannot compare (a hidden zero,
    which its numerics cannot tell from 0) is replaced by 0 when it is proved 0, else refused."""
    if v.free_symbols or not v.is_number or v.is_comparable is not False:
        return v
    if _proved_zero(v):
        return sp.S.Zero
    raise SpecValueError("a constant argument of max/min that cannot be compared exactly", node.span,
                         f"`{_short(node)}`", "a real constant whose sign can be decided",
                         "write the constant in a simpler form")


def _literal_fraction(node: s.Expr) -> Fraction | None:
    """The value of a plain literal entry (``3``, ``-2``, ``0.5``, ``-3/2``) as a Fraction, else None.

    Only a key for :func:`_matrix`'s memo: every distinct value is still built and checked by the
    expression builder once (its first occurrence, so errors point where they did); the thousands of
    repeats among the entries of an inline matrix reuse that result."""
    if isinstance(node, s.Binary):
        if node.op != "/" or not isinstance(node.right, s.Number) or node.right.value == 0:
            return None
        left = _literal_fraction(node.left)
        return None if left is None or isinstance(node.left, s.Binary) else left / node.right.value
    negate = False
    while isinstance(node, s.Unary):
        negate ^= node.op == "-"
        node = node.operand
    if not isinstance(node, s.Number):
        return None
    return -node.value if negate else node.value


def _shape_error(what: str, got: tuple[int, int], want: tuple[object, object], span: Span | None,
                 hint: str) -> SpecShapeError:
    return SpecShapeError(f"{what} has shape {got[0]} x {got[1]}", span, f"{got[0]} x {got[1]}",
                          f"{want[0]} x {want[1]}", hint)


def _block(d: s.BlockDef, scope: Scope, spec_dir: Path | None, root: Path | None = None) -> Block:
    if d.activation is None:
        raise SpecValueError(f"block `{d.name}` has no activation", d.span, "no `activation:` field",
                             "an `activation:` field", "add e.g. `activation: gelu`")
    act = _activation_ref(d.activation, scope)
    symbols: dict[str, sp.Symbol] = {}
    # Dimension: an integer, a symbol, or inferred from the weights.
    dim: int | sp.Expr
    if d.dim is None:
        dim = d.w_up.shape[1] if d.w_up is not None else D
    elif isinstance(d.dim, s.Name) and d.dim.id not in CONSTANTS:
        dim = sp.Symbol(d.dim.id, integer=True, positive=True)
        symbols[d.dim.id] = dim
    else:
        dim = _positive_int(d.dim, "`dim`", scope)
    width: int | sp.Expr
    if d.width is None:
        width = d.w_up.shape[0] if d.w_up is not None else M_WIDTH
    else:
        wexpr = _ExprBuilder(scope, None, {}, symbols=symbols).build(d.width)
        _check_width_symbols(wexpr, dim, d)
        if wexpr.free_symbols:
            if wexpr.is_positive is not True:
                raise SpecValueError("`width` must be positive for every size", d.width.span,
                                     f"`{format_expr(d.width)}`", "an expression such as `4*d`",
                                     "a block needs at least one hidden unit for every dimension")
            width = wexpr
        else:
            if not (wexpr.is_Integer and wexpr >= 1):
                raise SpecValueError("`width` must be a positive integer", d.width.span,
                                     f"`{format_expr(d.width)}`", "an integer >= 1",
                                     "a block needs at least one hidden unit")
            width = int(wexpr)
    skip = _skip(d.skip, d, dim, scope)
    stream = dim * skip.n if skip.kind == "hyper" and skip.n else dim
    w_up = _matrix(d.w_up, scope, "`W_up`", True) if d.w_up is not None else None
    w_down = _matrix(d.w_down, scope, "`W_down`", True) if d.w_down is not None else None
    w_gate = _matrix(d.w_gate, scope, "`W_gate`", True) if d.w_gate is not None else None
    gated = isinstance(act, GatedActivation)
    if (w_up is None) != (w_down is None):
        missing = "W_down" if w_down is None else "W_up"
        raise SpecValueError(f"block `{d.name}` gives one weight matrix without `{missing}`", d.span,
                             f"no `{missing}:`", "both `W_up:` and `W_down:`", f"add `{missing}:`")
    if w_gate is not None and not gated:
        raise SpecValueError(f"`W_gate` given for the ungated activation `{act.name}`", d.span_of("W_gate"),
                             "`W_gate:`", "a gated activation (e.g. swiglu) when `W_gate` is given",
                             "remove `W_gate:`, or use a gated unit")
    if gated and w_up is not None and w_gate is None:
        raise SpecValueError(f"gated block `{d.name}` needs `W_gate`", d.span, "no `W_gate:`",
                             "`W_gate:` beside `W_up:` and `W_down:`", "add `W_gate:` (same shape as W_up)")
    if w_up is not None and w_down is not None:
        if not isinstance(stream, int) or not isinstance(width, int):
            raise SpecValueError("inline weights need a numeric `dim:` and `width:`", d.span_of("W_up"),
                                 f"dim {dim}, width {width}", "integers",
                                 "remove `dim:`/`width:` to infer them from W_up")
        if w_up.shape != (width, stream):
            raise _shape_error("`W_up`", w_up.shape, (width, stream), d.span_of("W_up"),
                               "W_up is width x dim: one row per hidden unit")
        if w_down.shape != (stream, width):
            raise _shape_error("`W_down`", w_down.shape, (stream, width), d.span_of("W_down"),
                               "W_down is dim x width: one column per hidden unit")
        if w_gate is not None and w_gate.shape != w_up.shape:
            raise _shape_error("`W_gate`", w_gate.shape, w_up.shape, d.span_of("W_gate"),
                               "W_gate has the shape of W_up")
        if skip.structured and skip.n is not None and (hc_structure_rank(w_down, skip.n) or 0) > 1:
            raise SpecValueError(f"block `{d.name}` declares Hyper-Connection-structured weights, but its `W_down` "
                                 "is not β ⊗ W⁰", d.span_of("W_down"),
                                 f"stream blocks of W_down that are not multiples of one {dim} x {width} matrix",
                                 "W_down = β ⊗ W⁰: stream k's rows are β_k times the same matrix W⁰",
                                 "remove `structured: true` to decide these weights as given")
    if d.weights is not None:
        if skip.structured:
            raise SpecValueError(f"block `{d.name}` declares Hyper-Connection-structured weights and a weights file",
                                 d.weights.span, "`structured: true` with `weights:`",
                                 "`structured: true` for symbolic weights, or inline weights (checked exactly)",
                                 "remove `structured: true`: weights read from a file are decided as given (their "
                                 "exact ranks decide a structured W_down)")
        _check_weights_decl(d.weights, spec_dir, root)
        if w_up is not None:
            raise SpecValueError(f"block `{d.name}` has both inline weights and a weights file",
                                 d.weights.span, '`weights: "..."`', "one source of weights",
                                 "remove either `weights:` or `W_up:`/`W_down:`")
    layer = _layer_fields(d, scope, dim, width, gated, skip)
    return Block(d.name, act, dim, width, skip, w_up, w_down, w_gate, d.weights, d.span, **layer)


def _vector(values: tuple[s.Expr, ...], scope: Scope, what: str, length: int | sp.Expr, hint: str,
            span: Span | None) -> sp.ImmutableMatrix:
    """A column vector of exact rationals (``b_up``, ``b_down``, ``ln_gamma``) of the stated length."""
    if not isinstance(length, int):
        raise SpecValueError(f"inline {what} needs a numeric size", span, f"size `{length}`", "an integer size",
                             hint)
    if len(values) != length:
        raise SpecShapeError(f"{what} has {len(values)} entr{'y' if len(values) == 1 else 'ies'}", span,
                             f"{len(values)} entries", f"{length} entries", hint)
    column = _matrix(s.Matrix(tuple((v,) for v in values), span), scope, what, True)
    return sp.ImmutableMatrix(column)


def _layer_fields(d: s.BlockDef, scope: Scope, dim: int | sp.Expr, width: int | sp.Expr, gated: bool,
                  skip: Skip) -> dict[str, Any]:
    """Biases, the absorber's biases and the normalisation: checked for type, shape and consistency."""
    out: dict[str, Any] = {}
    for key, length, hint in (("b_up", width, "b_up has one entry per hidden unit (length width)"),
                              ("b_down", dim, "b_down has one entry per output coordinate (length dim)"),
                              ("b_gate", width, "b_gate has one entry per gated unit (length width)")):
        values = getattr(d, key)
        if values is None:
            continue
        if d.bias is False:
            raise SpecValueError(f"`{key}:` given in block `{d.name}`, which says `bias: false`", d.span_of(key),
                                 f"`{key}:`", "no biases", f"remove `{key}:` or `bias: false`")
        if skip.kind == "hyper":
            raise SpecValueError("biases on a Hyper-Connection block are not supported", d.span_of(key),
                                 f"`{key}:`", "a block without biases", "remove the bias field")
        if key == "b_gate" and not gated:
            raise SpecValueError(f"`b_gate:` given for the ungated block `{d.name}`", d.span_of(key), "`b_gate:`",
                                 "a gated activation when `b_gate` is given", "remove `b_gate:`")
        out[key] = _vector(values, scope, f"`{key}`", length, hint, d.span_of(key))
    if d.bias:
        out["bias"] = True
    if d.weights is not None and d.weights.gate_bias_key is not None and not gated:
        raise SpecValueError(f"`gate_bias:` given for the ungated block `{d.name}`", d.span_of("gate_bias"),
                             "`gate_bias:`", "a gated activation", "remove `gate_bias:`")
    if d.absorber_bias is not None:
        out["absorber_bias"] = d.absorber_bias
    norm = d.norm or "none"
    if norm not in NORMS:  # the grammar admits only these; a guard for syntax trees built by hand
        raise SpecValueError(f"unknown normalisation `{norm}`", d.span_of("norm"), f"`{norm}`",
                             "one of " + ", ".join(NORMS))
    if norm != "none" and skip.kind == "hyper":
        raise SpecValueError("a normalisation on a Hyper-Connection block is not supported", d.span_of("norm"),
                             f"`norm: {norm}`", "`norm: none`", "remove `norm:`")
    out["norm"] = norm
    for key in ("eps", "ln_gamma"):
        given = getattr(d, key) is not None or (key == "ln_gamma" and d.weights is not None
                                                and d.weights.gamma_key is not None)
        if given and norm == "none":
            raise SpecValueError(f"`{key}:` given in block `{d.name}` without a normalisation", d.span_of(key),
                                 f"`{key}:`", "a `norm:` field (pre-ln, post-ln, pre-rms or post-rms)",
                                 "add `norm: post-ln` (or another placement), or remove the field")
    if d.eps is not None:
        eps = _ExprBuilder(scope, None, {}).build(d.eps)
        if not (eps.is_real and eps.is_finite) or eps.is_negative:
            raise SpecValueError("`eps` must be a real number >= 0", d.eps.span, f"`{format_expr(d.eps)}`",
                                 "a constant such as 1e-12 (LayerNorm's epsilon)")
        out["eps"] = eps
    if d.ln_gamma is not None:
        out["ln_gamma"] = _vector(d.ln_gamma, scope, "`ln_gamma`", dim,
                                  "ln_gamma has one scale per coordinate (length dim)", d.span_of("ln_gamma"))
    return out


def _check_width_symbols(width: sp.Expr, dim: int | sp.Expr, d: s.BlockDef) -> None:
    """A symbolic width is an expression in the block's own dimension symbol (``4*d`` with ``dim: d``):
    any other symbol would be a second, unrelated size."""
    allowed = dim.free_symbols if isinstance(dim, sp.Expr) else set()
    others = sorted(str(x) for x in width.free_symbols - allowed)
    if not others or width == M_WIDTH:  # `width: m` is the default, an arbitrary width
        return
    assert d.width is not None
    if allowed:
        (dim_name,) = (str(x) for x in allowed)
        expected = f"an integer or an expression in the dimension `{dim_name}`, such as `4*{dim_name}`"
        hint = (f"the block's dimension is `{dim_name}`" if d.dim is not None else
                f"without `dim:` the dimension is `{dim_name}`") + "; omit `width:` for an arbitrary width `m`"
    else:
        expected = "a positive integer (the dimension is a number)"
        hint = f"write the width as a number, or make the dimension symbolic: `dim: {others[0]}`; omit `width:` " \
               "for an arbitrary width `m`"
    raise SpecValueError(f"`width` uses `{others[0]}`, which is not the block's dimension", d.width.span,
                         f"`{format_expr(d.width)}`", expected, hint)


def _check_weights_decl(w: s.WeightsDecl, spec_dir: Path | None, root: Path | None = None) -> None:
    suffix = Path(w.file).suffix.lower()
    if suffix not in WEIGHT_EXTENSIONS:
        raise SpecValueError(f"unsupported weights file `{w.file}`", w.span, f"`{suffix or 'no extension'}`",
                             "one of " + ", ".join(WEIGHT_EXTENSIONS),
                             "convert the weights to .safetensors or .npz")
    if spec_dir is None:
        return
    # Inside the spec's directory tree (unless --allow-outside), and a regular file: the weights
    # readers open the same path through symabsorb.paths.open_regular.
    path = confine(spec_dir, w.file, root, w.span, "weights file")
    note_checked(path)  # the answer depends on it (replay re-checks it), even if no query reads it
    try:
        exists, regular = path.exists(), path.is_file()
    except OSError as err:  # a name too long for the file system, a loop of links, ...
        raise SpecValueError(f"weights file `{w.file}` cannot be looked up: {err.strerror or err}", w.span,
                             f"`{w.file}`", "a readable file name", "use a shorter path") from None
    if not exists:
        raise SpecValueError(f"weights file `{w.file}` not found", w.span, f"`{spec_dir / w.file}`",
                             "an existing file", "paths are relative to the spec file")
    if not regular:
        raise SpecValueError(f"weights file `{w.file}` is not a regular file", w.span, f"`{w.file}`",
                             "a regular file", "only regular files are read")


def _skip(node: s.Skip | None, d: s.BlockDef, dim: int | sp.Expr, scope: Scope) -> Skip:
    if node is None or isinstance(node, s.IdentitySkip):
        return Skip("identity", span=node.span if node else None)
    if isinstance(node, s.NoSkip):
        return Skip("none", span=node.span)
    if isinstance(node, s.ScaledSkip):
        factor = _ExprBuilder(scope, None, {}).build(node.factor)
        if not (factor.is_real and factor.is_finite):
            raise SpecValueError("the skip scale must be a real number", node.factor.span,
                                 f"`{format_expr(node.factor)}`", "a finite real constant")
        return Skip("scaled", factor=_exact_constant(factor), span=node.span)
    if isinstance(node, s.MatrixSkip):
        mat = _matrix(node.matrix, scope, "the skip matrix", False)
        if mat.rows != mat.cols:
            raise _shape_error("the skip matrix", mat.shape, ("dim", "dim"), node.span,
                               "a skip maps R^dim to itself: it is square")
        if isinstance(dim, int) and mat.rows != dim:
            raise _shape_error("the skip matrix", mat.shape, (dim, dim), node.span,
                               f"the block's dim is {dim}")
        if not isinstance(dim, int):
            raise SpecValueError("a matrix skip needs a numeric `dim:`", node.span, f"dim `{dim}`",
                                 f"`dim: {mat.rows}`", f"add `dim: {mat.rows}` to block `{d.name}`")
        return Skip("matrix", matrix=mat, span=node.span)
    n = _positive_int(node.n, "the number of streams `n`", scope)
    mix = _matrix(node.mix, scope, "the mixing matrix", False)
    if mix.shape != (n, n):
        raise _shape_error("the mixing matrix", mix.shape, (n, n), node.mix.span,
                           f"hyper(n: {n}, ...) mixes {n} streams with a {n} x {n} matrix")
    return Skip("hyper", matrix=mix, n=n, span=node.span, structured=node.structured)


# ---- exploration spaces ---------------------------------------------------------------------------


def _space(d: s.SpaceDef, scope: Scope) -> Space:
    """A ``space`` declaration: an enumerated space, or a family with parameter ranges."""
    const = _ExprBuilder(scope, None, {})
    enum_fields = [k for k, v in (("primitives", d.primitives), ("constants", d.constants),
                                  ("operators", d.operators), ("size", d.size)) if v]
    if d.family is None:
        if d.size is None:
            raise SpecValueError(f"space `{d.name}` has neither `size:` nor `family:`", d.span, "no `size:` field",
                                 "`size: N` (with primitives/constants) or `family: EXPR` with `range` lines",
                                 "e.g. `space s = { primitives: [tanh, exp], constants: [2], size: 5 }`")
        if d.ranges or d.grid is not None:
            key = "grid" if d.grid is not None else f"range {d.ranges[0].name}"
            raise SpecValueError(f"`{key.split()[0]}` belongs to a family, and space `{d.name}` has no `family:`",
                                 d.span_of(key), f"`{key}`", "`range`/`grid` only next to `family:`",
                                 "add `family: EXPR`, or remove the field")
    elif enum_fields:
        raise SpecValueError(f"space `{d.name}` mixes `family:` with `{enum_fields[0]}:`", d.span_of(enum_fields[0]),
                             f"`{enum_fields[0]}:`", "either an enumerated space or a family",
                             "declare two spaces")
    if d.family is not None:
        if not d.ranges or len(d.ranges) > 2:
            raise SpecValueError(f"family `{d.name}` needs one or two `range` lines, got {len(d.ranges)}", d.span,
                                 f"{len(d.ranges)} ranges", "one or two parameters to sweep",
                                 "e.g. `range a: [-1, 1]`")
        ranges = []
        params: dict[str, sp.Symbol] = {}
        for r in d.ranges:
            if r.name == "z" or r.name in CONSTANTS or r.name in BUILTIN_FUNCTIONS:
                raise SpecNameError(f"`{r.name}` cannot be a parameter", r.span, f"`{r.name}`",
                                    "a new name (`z` is the variable)", "rename the parameter")
            low, high = const.build(r.low), const.build(r.high)
            if not (low.is_Rational and high.is_Rational) or not low < high:
                raise SpecValueError(f"the range of `{r.name}` must be two rationals, low < high", r.span,
                                     f"[{sp.sstr(low)}, {sp.sstr(high)}]", "[low, high] with low < high",
                                     "grid points are then exact rationals, e.g. `range a: [-1, 1]`")
            params[r.name] = sp.Symbol(r.name, real=True)
            ranges.append(ParameterRange(params[r.name], sp.Rational(low), sp.Rational(high)))
        family_builder = _ExprBuilder(scope, "z", params)
        family = family_builder.build(d.family)
        _defined_on_reals(open_conditions(family, tuple(family_builder.conditions)), "the family",
                          d.span_of("family"))
        for pr in ranges:
            if not family.has(pr.symbol):
                raise SpecValueError(f"the family does not use the parameter `{pr.symbol}`", d.span_of(
                    f"range {pr.symbol}"), f"`range {pr.symbol}`", "a parameter of the family", "remove the range")
        grid = 11 if d.grid is None else d.grid
        if not 2 <= grid <= MAX_GRID:
            raise SpecValueError(f"grid {grid} is out of range", d.span_of("grid"), str(grid),
                                 f"a grid from 2 to {MAX_GRID} points per parameter")
        return Space(d.name, family=family, ranges=tuple(ranges), grid=grid, size=0,
                     source=format_statement(d), span=d.span)
    assert d.size is not None
    if not 1 <= d.size <= MAX_SIZE:
        raise SpecValueError(f"size {d.size} is out of range", d.span_of("size"), str(d.size),
                             f"a size from 1 to {MAX_SIZE} (the count of expressions grows exponentially)")
    primitives: list[Activation] = []
    for name in d.primitives:
        if name in [p.name for p in primitives]:
            raise SpecNameError(f"primitive `{name}` listed twice", d.span_of("primitives"), f"`{name}`",
                                "each primitive once")
        act = _activation_ref(s.ActRef(name, (), d.span_of("primitives")), scope, want_gated=False)
        if not isinstance(act, Activation) or act.params:
            raise SpecValueError(f"primitive `{name}` has parameters without a value", d.span_of("primitives"),
                                 f"`{name}`", "an activation of z alone",
                                 f"declare `activation {name}1(z) = {name}(z; ...)` with values and list that")
        _defined_on_reals(act.conditions, f"primitive `{name}`", d.span_of("primitives"))
        primitives.append(Activation(name, act.expr, (), act.source, act.span))
    constants: list[sp.Expr] = []
    for c in d.constants:
        value = const.build(c)
        if not (value.is_number and value.is_real) or value in constants:
            raise SpecValueError("a constant of a space must be a distinct real number", c.span,
                                 f"`{format_expr(c)}`", "a real number listed once", None)
        constants.append(value)
    operators = d.operators if d.operators is not None else OPERATORS
    if len(set(operators)) != len(operators):
        raise SpecValueError("an operator is listed twice", d.span_of("operators"), ", ".join(operators),
                             "each of `+`, `-`, `*` at most once")
    return Space(d.name, tuple(primitives), tuple(constants), tuple(operators), d.size,
                 source=format_statement(d), span=d.span)


def _defined_on_reals(conditions: tuple[SideCondition, ...], what: str, span: Span | None) -> None:
    """A spec error when ``what`` as written is not proved defined on R where its simplified form is (a divisor
    SymPy cancelled): an explored expression travels as its simplified form, which would be decided instead."""
    gap = domain_gap(conditions)
    if gap is not None:
        raise SpecValueError(f"{what} as written is not proved defined on all of R", span, gap.describe(),
                             "an expression with a value at every real z",
                             "write the simplified expression, or give the value at the hole with "
                             "`if z >= a and z <= a then v else ...`")


# ---- the whole spec ----------------------------------------------------------------------------------


def resolve_modules(modules: tuple[s.Module, ...], path: str = "<string>") -> ResolvedSpec:
    """Resolve parsed files (dependency order) into a :class:`ResolvedSpec`."""
    try:
        return _resolve(modules, path)
    except SpecError as err:
        if err.source_line is None and err.span is not None:
            for module in modules:
                if module.file == err.span.file:
                    err.with_source(module.text)
        raise


def _resolve(modules: tuple[s.Module, ...], path: str) -> ResolvedSpec:
    scope = Scope(parent=catalog_scope())
    declared: dict[str, tuple[str, Span | None]] = {}
    for module in modules:
        for stmt in module.statements:
            if isinstance(stmt, (s.ActivationDef, s.GatedDef, s.BlockDef, s.StackDef)):
                kind = {s.ActivationDef: "activation", s.GatedDef: "gated unit", s.BlockDef: "block",
                        s.StackDef: "stack"}[type(stmt)]
                if stmt.name in _NOT_FINITE:
                    raise SpecNameError(f"`{stmt.name}` is reserved and cannot name a{'n' if kind[0] == 'a' else ''} "
                                        f"{kind}", stmt.span, f"`{stmt.name}`", "another name",
                                        f"`{stmt.name}` means a non-finite number, which is an error")
                if stmt.name in declared:
                    first_kind, first = declared[stmt.name]
                    raise SpecNameError(f"`{stmt.name}` is declared twice", stmt.span, f"a second `{stmt.name}`",
                                        "a new name",
                                        f"the first declaration ({first_kind}) is at {first}" if first else None)
                declared[stmt.name] = (kind, stmt.span)
                if kind in ("activation", "gated unit"):
                    scope.pending[stmt.name] = stmt.span
    activations: list[AnyActivation] = []
    blocks: dict[str, Block] = {}
    stacks: dict[str, Stack] = {}
    queries: list[SpecQuery] = []
    imports: list[str] = []
    spaces: dict[str, Space] = {}
    root = input_root(path) if path not in ("<string>", "<stdin>") else None
    for module in modules:
        spec_dir = Path(module.file).parent if module.file not in ("<string>", "<stdin>") else None
        for stmt in module.statements:
            if isinstance(stmt, s.Import):
                imports.append(stmt.path)
            elif isinstance(stmt, s.ActivationDef):
                scope.pending.pop(stmt.name, None)
                template = _declare_activation(stmt, scope, format_statement(stmt))
                scope.templates[stmt.name] = template
                activations.append(template.instantiate({}, stmt.name))
            elif isinstance(stmt, s.GatedDef):
                scope.pending.pop(stmt.name, None)
                template = _declare_gated(stmt, scope, format_statement(stmt))
                scope.templates[stmt.name] = template
                activations.append(template.instantiate({}, stmt.name))
            elif isinstance(stmt, s.BlockDef):
                blocks[stmt.name] = _block(stmt, scope, spec_dir, root)
            elif isinstance(stmt, s.StackDef):
                stacks[stmt.name] = _stack(stmt, blocks, stacks, declared, scope)
            elif isinstance(stmt, s.Query):
                if module is modules[-1]:  # an imported file brings its declarations, not its queries
                    queries.append(_query(stmt, scope, blocks, stacks, declared))
            elif isinstance(stmt, s.SpaceDef):
                if stmt.name in spaces:
                    raise SpecNameError(f"space `{stmt.name}` is declared twice", stmt.span, f"a second `{stmt.name}`",
                                        "a new name")
                spaces[stmt.name] = _space(stmt, scope)
    return ResolvedSpec(path, tuple(activations), tuple(blocks.values()), tuple(stacks.values()),
                        tuple(queries), tuple(imports), tuple(spaces.values()))


def _stack(d: s.StackDef, blocks: dict[str, Block], stacks: dict[str, Stack],
           declared: dict[str, tuple[str, Span | None]], scope: Scope) -> Stack:
    members = []
    for name, span in zip(d.blocks, d.block_spans or (d.span,) * len(d.blocks), strict=False):
        if name in blocks:
            members.append(blocks[name])
            continue
        if name in stacks:
            raise SpecNameError(f"`{name}` is a stack; stacks are built from blocks", span, f"stack `{name}`",
                                "a block name", "list the blocks of that stack instead")
        if name in declared and declared[name][0] == "block":
            raise SpecNameError(f"block `{name}` is used before its declaration", span, f"`{name}`",
                                "a block declared above", f"move block `{name}` above this stack")
        raise SpecNameError(f"unknown block `{name}`", span, f"`{name}`", "a block declared above",
                            did_you_mean(name, list(blocks)))
    dims = {str(b.stream_dim) for b in members}
    if len(dims) > 1:
        raise SpecShapeError(f"the blocks of stack `{d.name}` have different dimensions", d.span,
                             ", ".join(sorted(dims)), "one dimension shared by every block",
                             "a stack composes blocks R^d -> R^d")
    repeat: int | sp.Expr = 1
    if d.depth is not None:
        if isinstance(d.depth, s.Name) and d.depth.id not in CONSTANTS:
            repeat = L_DEPTH if d.depth.id == "L" else sp.Symbol(d.depth.id, integer=True, positive=True)
        else:
            repeat = _positive_int(d.depth, "the depth of a stack", scope)
    return Stack(d.name, tuple(members), repeat, d.span)


def _query(q: s.Query, scope: Scope, blocks: dict[str, Block], stacks: dict[str, Stack],
           declared: dict[str, tuple[str, Span | None]]) -> SpecQuery:
    text = format_statement(q)
    if q.kind in ("absorb", "width"):
        assert isinstance(q.target, str)
        name = q.target
        target: Block | Stack | AnyActivation
        if name in blocks:
            target = blocks[name]
        elif name in stacks and q.kind == "width":
            raise SpecNameError(f"`{name}` is a stack; `width` asks about one block", q.span, f"stack `{name}`",
                                "a block", f"ask `width` of a block of `{name}`")
        elif name in stacks:
            target = stacks[name]
        elif name in declared and declared[name][0] in ("block", "stack"):
            raise SpecNameError(f"`{name}` is used before its declaration", q.span, f"`{name}`",
                                "a block or stack declared above", f"move `{name}` above this query")
        elif scope.lookup(name) is not None:
            raise SpecNameError(f"`{name}` is an activation, not a block", q.span, f"`{name}`",
                                "a block or stack", f"use `classify {name}`, or declare a block using it")
        else:
            raise SpecNameError(f"unknown block or stack `{name}`", q.span, f"`{name}`",
                                "a block or stack declared above",
                                did_you_mean(name, list(blocks) + list(stacks)))
        return SpecQuery(q.kind, target, None, text, q.span)
    assert isinstance(q.target, s.ActRef)
    if q.target.name in blocks or q.target.name in stacks:
        raise SpecNameError(f"`{q.target.name}` is a block; `{q.kind}` asks about an activation", q.target.span,
                            f"block `{q.target.name}`", "an activation", f"use `absorb {q.target.name}`")
    act = _activation_ref(q.target, scope)
    if q.kind == "series" and q.order is not None and q.order > MAX_SERIES_ORDER:
        raise SpecValueError(f"series order {q.order} is too high", q.span, str(q.order),
                             f"an order from 0 to {MAX_SERIES_ORDER}")
    if q.kind in ("series", "parity") and isinstance(act, GatedActivation):
        act = act.gate
    return SpecQuery(q.kind, act, q.order, text, q.span)


def load_spec(path: str | Path) -> ResolvedSpec:
    """Read, parse and resolve a spec file and its imports."""
    return resolve_modules(load_modules(path), str(path))


def resolve_text(text: str, file: str = "<string>") -> ResolvedSpec:
    """Parse and resolve spec text given directly (imports relative to the working directory)."""
    return resolve_modules(load_modules(file, text), file)


def activation_from_text(text: str, gated: bool = False) -> AnyActivation:
    """An activation from an expression (``symabsorb classify EXPR``).

    A bare name (``gelu``, ``swiglu``, ``tanh``) refers to a built-in activation or function (an
    unknown one is an error); otherwise the expression's variable is ``z``, or its only free name.
    With ``gated``, the expression is the gate ``g``.
    """
    scope = catalog_scope()
    try:
        node = parse_expression(text)
    except SpecError as first:
        try:
            ref = parse_act_ref(text)
        except SpecError:
            raise first from None
        act = _activation_ref(ref, scope)
        return _gate_wrap(act, gated)
    try:
        if isinstance(node, s.Name) and node.id != "z" and node.id not in CONSTANTS and node.id not in _NOT_FINITE:
            # A bare name is a built-in activation (or a one-argument built-in function); a typo
            # (`gelu2`) is an error with a suggestion, never the identity in a variable `gelu2`.
            act = _activation_ref(s.ActRef(node.id, (), node.span), scope)
        else:
            var = _guess_variable(node, scope)
            builder = _ExprBuilder(scope, var, {})
            body = builder.build(node)
            conditions = open_conditions(body, tuple(builder.conditions))
            _check_real(body, node, builder)
            act = Activation(text.strip(), body, (), f"activation f({var}) = {format_expr(node)}", node.span,
                             conditions)
    except SpecError as err:
        raise err.with_source(text) from None
    return _gate_wrap(act, gated)


def constant_from_text(text: str, what: str = "a number") -> sp.Expr:
    """An exact real constant written in spec syntax (``3/4``, ``-250000000*sqrt(2)``, ``2**(1/3)``), as
    SymPy: parsed by the spec grammar (its size, depth and digit limits) and built from its node types,
    never evaluated as text. Names other than constants and built-in functions are errors."""
    try:
        node = parse_expression(text, f"<{what}>")
        value = _ExprBuilder(catalog_scope(), None, {}).build(node)
    except SpecError as err:
        raise err.with_source(text) from None
    if value.free_symbols or not value.is_number or value.is_real is not True:  # real only when proved real
        raise SpecValueError(f"{what} is not a real constant (or is not proved real)", node.span, f"`{_short(node)}`",
                             "a real number written exactly (integers, p/q, sqrt(...), ^)", None).with_source(text)
    return _exact_constant(value)


def _gate_wrap(act: AnyActivation, gated: bool) -> AnyActivation:
    if gated and not isinstance(act, GatedActivation):
        return GatedActivation(f"gated({act.name})", act, act.source, act.span)
    return act


def _guess_variable(node: s.Expr, scope: Scope) -> str:
    names: set[str] = set()

    def walk(n: object) -> None:
        if isinstance(n, s.Name):
            if (n.id not in CONSTANTS and n.id not in BUILTIN_FUNCTIONS and n.id not in _NOT_FINITE
                    and scope.lookup(n.id) is None):
                names.add(n.id)
        elif isinstance(n, s.Call):
            for a in n.args:
                walk(a)
            for kw in n.kwargs:
                walk(kw.value)
        elif isinstance(n, (s.Unary,)):
            walk(n.operand)
        elif isinstance(n, (s.Binary, s.Compare, s.BoolOp)):
            walk(n.left)
            walk(n.right)
        elif isinstance(n, s.IfExpr):
            walk(n.cond)
            walk(n.then)
            walk(n.orelse)

    walk(node)
    if len(names) == 1:
        return names.pop()
    return "z" if not names or "z" in names else sorted(names)[0]
