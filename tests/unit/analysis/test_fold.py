"""Constants proved rational are folded where an activation enters the prover and the facts
(``analysis/fold.py``): an ``Activation`` holding a SymPy expression with a hidden zero (issue 26 §1)
is decided like the plain activation, at once, instead of every fact exhausting its budget (issue 29).
Only a constant proved equal to a rational is replaced; anything else stays as written."""

from __future__ import annotations

import dataclasses

import pytest
import sympy as sp

import symabsorb
from symabsorb.analysis import fold
from symabsorb.analysis.fold import fold_activation, fold_constants
from symabsorb.model.activation import Activation
from symabsorb.model.functions import Z
from symabsorb.model.resolve import activation_from_text

COSH = sp.cosh(1) ** 2 - sp.sinh(1) ** 2 - 1
LOGS = sp.Add(sp.log(6), -sp.log(2), -sp.log(3), evaluate=False)
PRODUCT = (sp.cosh(1) - sp.sinh(1)) * (sp.cosh(1) + sp.sinh(1)) - 1
RATIO = (sp.log(2) + sp.log(3)) / sp.log(6) - 1
ZEROS = (COSH, LOGS, PRODUCT, RATIO)


@pytest.mark.parametrize("h", ZEROS, ids=("cosh", "logs", "product", "ratio"))
def test_a_hidden_zero_is_folded_wherever_it_is_written(h: sp.Expr) -> None:
    assert fold_constants(sp.exp(h * Z) - 1) == 0  # in an exponent
    assert fold_constants(Z + h * sp.exp(Z)) == Z  # a coefficient
    assert fold_constants(sp.Piecewise((Z, Z > h), (h * (sp.exp(Z) - 1), True))) == sp.Piecewise((Z, Z > 0), (0, True))
    assert fold_constants(1 / (1 + sp.exp(-(1 + h) * Z))) == 1 / (1 + sp.exp(-Z))  # c·(1 + h)
    assert fold_constants(sp.Max(h * Z, Z)) == sp.Max(0, Z)
    assert fold_constants(Z ** (2 + h)) == Z**2
    assert fold_constants(Z + sp.sqrt(2) + h) == Z + sp.sqrt(2)  # the part of a sum that is rational


def test_constants_proved_rational_that_are_not_zero() -> None:
    long = sp.Rational(5253504936777402467096674926473, 5000000000000000000000000000000)  # SELU's scale, exactly
    assert fold_constants(Z * (long + LOGS)) == long * Z
    assert fold_constants(Z * sp.Mul(long, 1 + RATIO, evaluate=False) + 1) == long * Z + 1
    assert fold_constants(sp.cosh(sp.log(2)) * Z) == sp.Rational(5, 4) * Z
    # the root of a negative number written with a hidden zero: its radicand folded, the root is what it is
    assert fold_constants(Z * sp.sqrt(COSH - sp.Rational(1, 10**60))) == sp.I * Z / 10**30
    assert fold_constants(sp.sqrt(2) * Z * (sp.cosh(1) - sp.sinh(1)) * (sp.cosh(1) + sp.sinh(1))) == sp.sqrt(2) * Z


@pytest.mark.parametrize("expr", [
    Z * sp.erf(sp.sqrt(2) * Z / 2),  # nothing to fold
    Z + sp.pi - sp.Rational(355, 113),  # close to a rational, not one
    Z + sp.exp(sp.pi * sp.sqrt(163)) - 640320**3 - 744,  # within 1e-12 of an integer, not one
    Z * sp.exp(-100),  # within 1e-43 of 0, not 0
    Z + 1 / COSH,  # 1/0: no value; never folded into zoo
    Z + sp.log(LOGS),  # log 0
])
def test_what_is_not_proved_rational_is_left_as_written(expr: sp.Expr) -> None:
    assert fold_constants(expr) == expr


def test_the_work_is_bounded_and_what_was_decided_stays_sound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fold, "MAX_DECISIONS", 1)
    monkeypatch.setattr(fold, "_CACHE", {})
    out = fold_constants(sp.exp(COSH * Z) + sp.exp(RATIO * Z) * Z)
    # one decision allowed: at most one of the two hidden zeros is folded, the other stays as written
    assert out in (1 + sp.exp(RATIO * Z) * Z, sp.exp(COSH * Z) + Z, sp.exp(COSH * Z) + sp.exp(RATIO * Z) * Z)


def test_the_enclosures_are_bounded_too(monkeypatch: pytest.MonkeyPatch) -> None:
    # off the main thread no CPU deadline interrupts: the count of enclosures bounds the work there
    monkeypatch.setattr(fold, "MAX_SCREENS", 2)
    monkeypatch.setattr(fold, "_CACHE", {})
    screened: list[sp.Expr] = []
    candidate = fold._candidate
    monkeypatch.setattr(fold, "_candidate", lambda c: screened.append(c) or candidate(c))
    tower = Z
    for k in range(2, 8):
        tower = tower * sp.log(k) + sp.log(k + 1) * COSH
    out = fold_constants(tower)  # stops after two screens; what it decided is applied, the rest as written
    assert len(screened) == 2
    assert out.free_symbols == {Z} and out.has(sp.cosh)


def test_an_activation_unchanged_is_the_same_object() -> None:
    gelu = activation_from_text("gelu")
    assert fold_activation(gelu) is gelu
    swiglu = activation_from_text("swiglu", gated=True)
    assert fold_activation(swiglu) is swiglu


def _hidden(expr: sp.Expr) -> Activation:
    return dataclasses.replace(activation_from_text("relu"), expr=expr, name="hidden")


@pytest.mark.parametrize("h", (COSH, LOGS), ids=("cosh", "logs"))
def test_the_issue_examples_through_the_api_are_decided_like_the_plain_activation(h: sp.Expr) -> None:
    # issue 26 §1: ReLU and z written with a hidden-zero exponential, as SymPy Activations (past the
    # resolver); a hidden zero in an exponent once cost every fact its whole budget
    cases = ((sp.Piecewise((Z, Z > 0), (h * (sp.exp(Z) - 1), True)), "relu"),
             (sp.Piecewise((Z, Z > 0), (Z + h * sp.exp(Z), True)), "z"),
             (sp.Piecewise((Z, Z > 0), (sp.exp(h * Z) - 1, True)), "relu"),
             (1 / (1 + sp.exp(-(1 + h) * Z)), "sigmoid"))
    for expr, plain in cases:
        got = symabsorb.classify(_hidden(expr))
        want = symabsorb.classify(plain)
        assert (got.verdict, got.scope) == (want.verdict, want.scope), (expr, got.verdict, want.verdict)
        # the prover checked σ with its constants folded (the σ its derivation states holds no hidden zero)
        assert got.derivation is not None and got.derivation.activation_expr is not None
        assert not got.derivation.activation_expr.has(sp.cosh, sp.sinh, sp.log), got.derivation.activation_expr


def test_the_facts_of_an_activation_are_those_of_its_folded_expression() -> None:
    facts = symabsorb.facts(_hidden(1 / (1 + sp.exp(-(1 + COSH) * Z)))).facts
    assert facts is not None
    assert facts.expr == 1 / (1 + sp.exp(-Z))
    plain = symabsorb.facts("sigmoid").facts
    assert plain is not None and facts.parity.evidence.status == plain.parity.evidence.status
