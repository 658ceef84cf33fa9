"""A referee's attacks on verify's identity check of a non-flip witness (answer/verify_identity.py).

The bugs found were marked ``xfail(strict=True)`` and are fixed (each test fails without its fix); the attacks the
check withstood are ordinary tests.

Bugs (fixed): (1) a block declared ``bias: true`` (arbitrary biases) asked against a bias-free absorber
(``absorber_bias: false``) is checked as if it had no biases, so a bias-free witness is OK; (2) a witness entry
SymPy cannot prove real (``(-2)^sqrt(2)``) is read as a real constant, so a witness with non-real entries is OK;
(3) a post-LN witness with a column along ``1`` (which LayerNorm's centring removes) is correct but FAILED, with the
claim that it "does not absorb the block"; (4) the command's budget running out while a witness entry is read
becomes that witness's FAILED, where verify lets it end the command."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import sympy as sp

import symabsorb
from symabsorb.answer.verify_identity import check_identity_witness
from symabsorb.budget import BudgetExhausted
from symabsorb.model.functions import Z
from symabsorb.model.resolve import constant_from_text, resolve_text
from symabsorb.weights.certify import CertificateError
from tests.helpers import verify_report

pytest.importorskip("numpy", reason="numpy (verify reads reports with the weights extra)")

SPEC = """
activation sq(z) = z + z^2
activation lg(z) = if z >= 0 and z <= 0 then 0 else z + z*log(abs(z))
block plain  { activation: sq dim: 1 width: 2 skip: [[1]] W_up: [[1], [1]] W_down: [[1/2, 1/2]] }
block biased { activation: sq dim: 1 width: 2 skip: [[1]] W_up: [[1], [1]] W_down: [[1/2, 1/2]]
               bias: true absorber_bias: false }
block relu0  { activation: relu dim: 1 width: 1 skip: [[-1]] W_up: [[1]] W_down: [[1]] }
block relub  { activation: relu dim: 1 width: 1 skip: [[-1]] W_up: [[1]] W_down: [[1]] bias: true absorber_bias: false }
block postln { activation: sq dim: 2 width: 2 norm: post-ln skip: [[1, 0], [0, 2]] W_up: [[1, 0], [0, 1]]
               W_down: [[1, 0], [0, 1]] }
block hyper  { activation: sq dim: 1 width: 2 skip: hyper(n: 2, mix: [[1, 1], [0, 1]]) W_up: [[1, 1], [0, 1]]
               W_down: [[1, 0], [0, 1]] }
block logs   { activation: lg dim: 1 width: 2 skip: [[log(6)/2]] W_up: [[1], [1]] W_down: [[1/2, 1/2]] }
absorb plain
absorb biased
absorb relu0
absorb relub
absorb postln
absorb hyper
"""

#: the imaginary unit, written so that SymPy cannot tell it is not real: (−1)^((√2+1)(√2−1)/2) = (−1)^(1/2)
I_HIDDEN = "(-1)^((sqrt(2)+1)*(sqrt(2)-1)/2)"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    spec = tmp_path_factory.mktemp("spec") / "referee.absorb"
    spec.write_text(SPEC)
    result = symabsorb.prove(str(spec))
    return json.loads(result.to_json() if hasattr(result, "to_json") else result.render("json"))  # type: ignore[no-any-return]


def _query(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(q for q in data["queries"] if q["query"] == f"absorb {name}")


def _verify_one(tmp_path: Path, report: dict[str, Any], name: str, verdict: str | None = None,
                witness: dict[str, Any] | None = None) -> Any:
    data = copy.deepcopy(report)
    data["queries"] = [copy.deepcopy(_query(report, name))]
    d = data["queries"][0]["derivation"]
    if verdict is not None:
        d["verdict"] = verdict
    if witness is not None:
        d["witness"] = witness
    out = tmp_path / "report.json"
    out.write_text(json.dumps(data))
    checked = verify_report(out)
    return checked[0] if checked else None  # None: counted as not re-checkable (nothing claimed)


def _block(name: str) -> Any:
    return next(b for b in resolve_text(SPEC).blocks if b.name == name)


# ----------------------------------------------------------------------------------------------- bugs


@pytest.mark.parametrize(("twin", "name"), [("plain", "biased"), ("relu0", "relub")])
def test_arbitrary_block_biases_are_not_checked_away(report: dict[str, Any], tmp_path: Path, twin: str,
                                                     name: str) -> None:
    # the prover leaves the biased question open; a report claiming it absorbable with the bias-free twin's witness
    assert _query(report, name)["derivation"]["verdict"] != "absorbable"
    witness = _query(report, twin)["derivation"]["witness"]
    assert _verify_one(tmp_path, report, twin).ok
    # the witness does not absorb the biased block: with hidden biases b = (1, 0) (or 1) it misses at x = 0
    block = _block(name)
    up = [[constant_from_text(x) for x in row] for row in witness["W_up"]]
    down = [[constant_from_text(x) for x in row] for row in witness["W_down"]]
    sigma = block.activation.expr
    b_up = [1] + [0] * (len(up) - 1)
    at0 = sum(block.w_down[0, i] * sigma.xreplace({Z: sp.Integer(b_up[i])}) for i in range(len(up)))
    new0 = sum(down[0][i] * sigma.xreplace({Z: sp.S.Zero}) for i in range(len(up)))
    assert sp.simplify(at0 - new0) != 0  # M·0 + B(0) ≠ B'(0)
    c = _verify_one(tmp_path, report, name, verdict="absorbable", witness=witness)
    assert c is None or not c.ok, c.detail  # a biased question is outside the identity check: never OK


def test_a_non_real_witness_entry_is_refused(report: dict[str, Any], tmp_path: Path) -> None:
    # λ = 1/2, column 4 = (2 + c) + (2 − c) on one line: the identity holds over C, the witness is no real MLP
    c = "(-2)^sqrt(2)"
    assert sp.im(sp.N((-2) ** sp.sqrt(2), 30)) != 0
    witness = copy.deepcopy(_query(report, "plain")["derivation"]["witness"])
    witness["W_up"], witness["W_down"] = [["1/2"], ["1/2"]], [[f"2 + {c}", f"2 - {c}"]]
    checked = _verify_one(tmp_path, report, "plain", witness=witness)
    assert not checked.ok, checked.detail


@pytest.mark.parametrize("text", ["(-2)^sqrt(2)", I_HIDDEN])
def test_the_grammar_refuses_a_constant_not_proved_real(text: str) -> None:
    with pytest.raises(symabsorb.SymabsorbError):
        constant_from_text(text)


def test_a_post_ln_witness_with_a_ones_component_is_correct(report: dict[str, Any], tmp_path: Path) -> None:
    witness = copy.deepcopy(_query(report, "postln")["derivation"]["witness"])
    assert _verify_one(tmp_path, report, "postln").ok
    # add 1·(1, 1) to W'_down: P·1 = 0, so P B'(x) and hence LN(B'(x)) are unchanged
    witness["W_down"] = [[f"({x}) + 1" for x in row] for row in witness["W_down"]]
    c = _verify_one(tmp_path, report, "postln", witness=witness)
    assert c.ok, c.detail


def test_the_budget_running_out_while_reading_an_entry_ends_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import symabsorb.model.resolve as resolve

    def exhausted(text: str, what: str = "a number") -> sp.Expr:
        raise BudgetExhausted("budget: the command's budget ran out")

    monkeypatch.setattr(resolve, "constant_from_text", exhausted)
    with pytest.raises(BudgetExhausted):
        check_identity_witness(_block("plain"), {"W_up": [["1/3"], ["1"]], "W_down": [["9/2", "1/2"]]})


# ------------------------------------------------------------------------------------- attacks withstood


def test_the_imaginary_unit_as_a_unit_scale_is_undecided_not_ok() -> None:
    # σ = z + z^2 ... with λ = i: a'λ = 1 + M, a'λ^2 = 1 would need a complex λ; refused (its sign is undecided)
    with pytest.raises(CertificateError, match=r"neither proved 0 nor proved nonzero|not proved real"):
        check_identity_witness(_block("plain"), {"W_up": [[I_HIDDEN], ["1"]], "W_down": [["-1", "1/2"]]})


def test_a_hyper_connection_witness_is_checked_against_the_mix(report: dict[str, Any], tmp_path: Path) -> None:
    assert _verify_one(tmp_path, report, "hyper").ok
    data = copy.deepcopy(report)
    data["spec"]["text"] = data["spec"]["text"].replace("mix: [[1, 1], [0, 1]]", "mix: [[1, 1], [0, 2]]")
    c = _verify_one(tmp_path, data, "hyper")
    assert not c.ok and "linear part" in c.detail


def test_logarithms_of_a_witness_add_up_exactly() -> None:
    # σ = z + z log|z|: rows μ_i w, columns a_i/μ_i add Σ a_i log|μ_i| w x; log 2/2 + log 3/2 = log(6)/2 = M
    block = _block("logs")
    def witness(mu: tuple[str, str]) -> dict[str, Any]:
        return {"W_up": [[mu[0]], [mu[1]]], "W_down": [[f"1/(2*({mu[0]}))", f"1/(2*({mu[1]}))"]]}

    for mu in (("2", "-3"), ("-1", "6"), ("sqrt(2)", "3*sqrt(2)")):  # |μ1 μ2| = 6
        assert "proved exactly" in (check_identity_witness(block, witness(mu)) or ""), mu
    for mu in (("2", "3 + 1/10^30"), ("2", "6"), ("3", "3"), ("sqrt(2)", "sqrt(18) + 1/10^40")):
        with pytest.raises(CertificateError):
            check_identity_witness(block, witness(mu))
