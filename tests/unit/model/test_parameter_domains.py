"""Parameters with several constraints (`0 < a < 1`, `a > 0, a < 1`, `a != 1`): the syntax, the
domain the model derives, the signs the analysis decides on it, and the verdicts that follow."""

from __future__ import annotations

import pickle

import pytest
import sympy as sp

from symabsorb.analysis import cache
from symabsorb.analysis.identity import exact_sign, proved_nonzero
from symabsorb.dsl.errors import SpecNameError, SpecSyntaxError, SpecValueError
from symabsorb.dsl.formatter import format_module
from symabsorb.dsl.parser import parse_text
from symabsorb.model import Z, resolve_text
from symabsorb.model.activation import ParameterSymbol, domain_of
from symabsorb.theory.derivation import Verdict
from tests.helpers import classify


def _param(spec_text: str, index: int = 0) -> sp.Symbol:
    spec = resolve_text(spec_text)
    return spec.activations[0].params[index].symbol


@pytest.mark.parametrize("text", [
    "activation f(z; 0 < a < 1) = a*z",
    "activation f(z; 1 > a >= -1) = a*z",
    "activation f(z; a > 0, a < 1, a != 1/2) = a*z",
    "activation f(z; 0 < a) = a*z",
    "activation f(z; a = 1/2 > 0, b, c != 1) = a*z + b + c",
])
def test_forms_parse_and_format_back(text: str) -> None:
    module = parse_text(text)
    assert format_module(module).strip() == text
    assert parse_text(format_module(module)) == module


@pytest.mark.parametrize("text, summary, column", [
    ("activation f(z; 0 < a > 1) = z", "goes one way", 17),
    ("activation f(z; 1 < 2) = z", "compares the parameter's name", 17),
    ("activation f(z; 0 != a != 1) = z", "cannot be chained", 17),
    ("activation f(z; a = 1 > 0 < 2) = z", "takes one constraint", 17),
    ("activation f(z; 0 < a < b < 1) = z", "LOW < NAME < HIGH", 17),
])
def test_bad_chains_are_positioned_errors(text: str, summary: str, column: int) -> None:
    with pytest.raises(SpecSyntaxError) as info:
        parse_text(text, "f.absorb")
    assert summary in info.value.summary and info.value.span is not None
    assert (info.value.span.line, info.value.span.column) == (1, column)
    assert info.value.hint


def test_domains_join_every_constraint() -> None:
    a = _param("activation f(z; a > 0, a < 1, a != 1/2, a != 5) = a*z")
    assert isinstance(a, ParameterSymbol) and a.is_positive
    dom = domain_of(a)
    assert dom is not None and (dom.lo, dom.lo_open, dom.hi, dom.hi_open) == (0, True, 1, True)
    assert dom.excluded == (sp.Rational(1, 2),)  # 5 lies outside (0, 1)
    assert dom.text("a") == "0 < a < 1, a != 1/2"
    # the tighter of two bounds, and an excluded closed end opens it
    b = _param("activation f(z; b >= 0, b > -1, b <= 2, b != 2) = b*z")
    db = domain_of(b)
    assert db is not None and (db.lo, db.lo_open, db.hi, db.hi_open) == (0, False, 2, True)
    assert b.is_nonnegative and not b.is_positive
    # what the sign assumptions say alone stays a plain symbol (same facts-cache key as before)
    assert type(_param("activation f(z; a > 0) = a*z")) is sp.Symbol
    # an excluded closed end opens it and leaves no extra piece: a >= 0, a != 0 is a > 0
    pos = _param("activation f(z; a >= 0, a != 0) = a*z")
    assert type(pos) is sp.Symbol and pos.is_positive
    ends = domain_of(_param("activation f(z; 0 <= a <= 1, a != 1, a != 0, a != 1/2) = a*z"))
    assert ends is not None and ends.text("a") == "0 < a < 1, a != 1/2"
    nz = _param("activation f(z; a != 0) = a*z")
    assert type(nz) is sp.Symbol and nz.is_nonzero


def test_empty_or_violated_domains_are_errors() -> None:
    with pytest.raises(SpecValueError, match="allow no value"):
        resolve_text("activation f(z; a > 1, a < 0) = a*z")
    with pytest.raises(SpecValueError, match="allow no value"):
        resolve_text("activation f(z; a >= 1, a <= 1, a != 1) = a*z")
    with pytest.raises(SpecValueError, match="violates its constraint"):
        resolve_text("activation f(z; a = 2, a < 1) = a*z")
    with pytest.raises(SpecNameError, match="declared twice"):
        resolve_text("activation f(z; a > 0, a = 1) = a*z")


def test_parameter_symbols_keep_their_domain() -> None:
    a = _param("activation f(z; 0 < a < 1) = a*z")
    b = _param("activation f(z; 0 < a < 2) = a*z")
    assert a != b and hash(a) != hash(b)
    assert sp.sstr(a) == "a" and sp.latex(a) == "a"
    assert pickle.loads(pickle.dumps(a)) == a and domain_of(pickle.loads(pickle.dumps(a))) == domain_of(a)
    # facts are cached per domain: (0, 1) and (0, 2) never share an entry
    assert cache.key(a * Z, False, 8) != cache.key(b * Z, False, 8)


def test_signs_are_decided_on_every_piece_of_the_domain() -> None:
    a = _param("activation f(z; 0 < a < 1) = a*z")
    assert exact_sign(1 - a) == 1 and exact_sign(a - 1) == -1 and exact_sign((1 - a) * (1 + a)) == 1
    assert exact_sign(2 * a - 1) is None  # negative below 1/2, positive above
    closed = _param("activation f(z; 0 < a <= 1) = a*z")
    assert exact_sign(1 - closed) is None and not proved_nonzero(1 - closed)  # 0 at a = 1
    ne = _param("activation f(z; a != 1) = a*z")
    assert exact_sign(1 - ne) is None and proved_nonzero(1 - ne) and proved_nonzero((ne - 1) ** 2)
    assert not proved_nonzero(1 + ne)  # a = -1 is allowed
    c = _param("activation f(z; -1 <= c <= 1, c != 0) = c*z")
    assert exact_sign(2 - c) == 1 and proved_nonzero(c) and not proved_nonzero(c - 1)
    assert exact_sign(c**2 - 1) is None  # 0 at the closed ends


MIX = "activation mix(z; {}) = a*z + (1 - a)*softplus(z)\nclassify mix\n"


@pytest.mark.parametrize("constraint, iff", [
    ("0 < a < 1", True),
    ("a > 0, a < 1", True),
    ("a > -1, a != 1", True),
    # a = 1 makes σ = z (a polynomial): the converse fails there
    ("0 < a <= 1", False),
    ("a > 0", False),
    # a = -1 makes the odd part 0
    ("-2 < a < 1", False),
])
def test_mixture_gets_the_ridge_iff_exactly_when_every_allowed_a_does(constraint: str, iff: bool) -> None:
    spec = resolve_text(MIX.format(constraint))
    d = classify(spec.queries[0].target)
    if iff:
        assert (d.verdict, d.decided_by) == (Verdict.CONDITIONAL, "R-linear-odd")
        a = spec.activations[0].params[0].symbol
        assert sp.simplify(d.condition_constant - (1 + a) / 2) == 0
    else:
        assert d.decided_by != "R-linear-odd"
        assert d.verdict in (Verdict.CONDITIONAL, Verdict.OPEN)


@pytest.mark.parametrize("constraint, decided", [("1 < k < 2", "prop5"), ("k > 1, k != 3/2", "prop5"),
                                                 ("1 <= k < 2", None), ("0 < k < 2", None)])
def test_degree_conditions_are_decided_on_the_whole_domain(constraint: str, decided: str | None) -> None:
    """Prop. 5 needs k > 1 for every allowed k: k = 1 (ReLU, conditional) must keep it from applying."""
    spec = resolve_text(f"activation powk(z; {constraint}) = max(0, z)^k\nclassify powk\n")
    d = classify(spec.queries[0].target)
    if decided:
        assert (d.verdict, d.decided_by) == (Verdict.IMPOSSIBLE, decided)
    else:
        assert d.verdict is not Verdict.IMPOSSIBLE


def test_a_value_outside_the_domain_is_an_error() -> None:
    head = "activation mix(z; 0 < a < 1, a != 1/2) = a*z + (1 - a)*softplus(z)\n"
    for bad in ("1", "1/2", "-3"):
        with pytest.raises(SpecValueError, match="violates its constraint") as info:
            resolve_text(head + f"block b {{ activation: mix(a = {bad}) }}\n", "m.absorb")
        assert info.value.span is not None and info.value.span.line == 2
        assert info.value.expected == "0 < a < 1, a != 1/2"
    ok = resolve_text(head + "block b { activation: mix(a = 1/3) }\n").blocks[0]
    assert not ok.activation.expr.free_symbols - {Z}
