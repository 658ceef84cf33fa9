"""The prover: the paper's table exactly, and symabsorb's own reach beyond it."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import pytest

from symabsorb.cli import main
from symabsorb.model import CATALOG, activation_from_text, load_spec
from symabsorb.theory.derivation import Verdict
from symabsorb.theory.hypotheses import Subject
from symabsorb.theory.library import default_library
from symabsorb.theory.prover import attempts
from tests.helpers import EXAMPLES, classify, prove


def run_json(*argv: str) -> dict:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(list(argv)) in (0, 1)
    return json.loads(out.getvalue())


def classified(expr: str, gated: bool = False) -> dict:
    return run_json("classify", expr, "--json", *(["--gated"] if gated else []))


def test_paper_table() -> None:
    data = run_json("prove", str(EXAMPLES / "paper.absorb"), "--format", "json")
    got = {q["query"]: (q["derivation"]["verdict"], q["derivation"]["decided_by"], q["derivation"]["condition"])
           for q in data["queries"]}
    assert got["absorb relu2_mlp"] == ("impossible", "prop5", None)
    assert got["absorb reglu_mlp"] == ("impossible", "prop5", None)
    assert got["absorb swiglu_mlp"] == ("impossible", "prop6", None)
    assert got["absorb geglu_mlp"] == ("impossible", "prop6", None)
    assert got["absorb relu_mlp"] == ("conditional", "thm8", "W_down[:,S] W_up[S,:] = -I_d")
    assert got["absorb gelu_mlp"] == ("conditional", "thm10", "W_down[:,S] W_up[S,:] = -I_d")
    assert got["absorb relu_skew"] == ("conditional", "thm8", "W_down[:,S] W_up[S,:] = [[-2, -1], [0, -1]]")
    assert got["absorb gelu_hyper"][:2] == ("conditional", "thm10")
    for deep in ("relu2_deep", "reglu_deep", "swiglu_deep", "geglu_deep"):
        assert got[f"absorb {deep}"][:2] == ("impossible", "cor7")
    assert got["absorb relu_deep"][:2] == ("open", "open-deep")
    assert got["absorb gelu_deep"][:2] == ("open", "open-deep")
    assert got["absorb gelu_once"][:2] == ("conditional", "thm10")
    by_query = {q["query"]: q["derivation"] for q in data["queries"]}
    # Lemma 4 is cited for the invertible and Hyper-Connection skips, Cor. 7's hypotheses are shown
    for name in ("relu_skew", "gelu_hyper"):
        assert "lemma4" in by_query[f"absorb {name}"]["cited"]
        assert any("lemma4" in s["cites"] for s in by_query[f"absorb {name}"]["steps"])
    cor7 = by_query["absorb swiglu_deep"]
    assert any(s["kind"] == "hypothesis" and "Prop. 6" in s["text"] for s in cor7["steps"])
    assert by_query["absorb relu_mlp"]["necessary"] == "proved"
    assert "d ≥ 2" in by_query["absorb relu_mlp"]["assumptions"]


@pytest.mark.parametrize("expr", ["tanh", "sigmoid", "softsign", "relu6"])
def test_bounded_is_impossible_by_growth(expr: str) -> None:
    d = classified(expr)
    assert (d["verdict"], d["decided_by"], d["source"]) == ("impossible", "L-growth", "library")


@pytest.mark.parametrize("expr", ["abs(z)", "z*erf(z)"])
def test_even_is_impossible_by_parity(expr: str) -> None:
    d = classified(expr)
    assert (d["verdict"], d["decided_by"]) == ("impossible", "L-parity")


def test_tanhshrink_by_jacobian() -> None:
    assert classified("tanhshrink")["decided_by"] == "L-jacobian"


@pytest.mark.parametrize("expr, condition, constant", [
    ("silu", "W_down[:,S] W_up[S,:] = -I_d", "1/2"),
    ("softplus", "W_down[:,S] W_up[S,:] = -I_d", "1/2"),
    ("hardswish", "W_down[:,S] W_up[S,:] = -I_d", "1/2"),
    ("leaky_relu", "W_down[:,S] W_up[S,:] = -100/101*I_d", "101/200"),
    ("max(z, 0.01*z)", "W_down[:,S] W_up[S,:] = -100/101*I_d", "101/200"),
])
def test_odd_linear_conditional(expr: str, condition: str, constant: str) -> None:
    """Theorem R makes the flip condition an iff for nondegenerate weights, with an exact Sym step."""
    d = classified(expr)
    assert d["verdict"] == "conditional" and d["decided_by"] == "R-linear-odd"
    assert d["condition"] == condition and d["condition_constant"] == constant
    assert (d["sufficient"], d["necessary"]) == ("proved", "proved")
    assert d["scope"] == "nondegenerate weights" and "open" in d["degenerate_case"]
    sym = [ev for s in d["steps"] for ev in s["evidence"] if ev["fact"] == "Sym(σ)"]
    assert sym and all(ev["status"] == "proved" and ev["decided_by"] != "numeric-refutation" for ev in sym)


@pytest.mark.parametrize("expr, result", [("relu", "thm8"), ("gelu", "thm10"), ("max(0, z)", "thm8"),
                                          ("(z + abs(z))/2", "thm8"), ("z*Phi(z)", "thm10")])
def test_relu_gelu_criterion_by_function_not_name(expr: str, result: str) -> None:
    d = classified(expr)
    assert d["verdict"] == "conditional" and d["decided_by"] == result and d["source"] == "paper"
    assert d["necessary"] == "proved"
    assert any("nondegenerate" in a for a in d["assumptions"])


def test_identity_is_absorbable() -> None:
    d = classified("identity")
    assert (d["verdict"], d["decided_by"]) == ("absorbable", "L-linear")
    assert "m ≥ d" in d["assumptions"]


@pytest.mark.parametrize("expr", ["z*log(1+z^2) + z", "abs(z) + z^3", "max(0,z-1) - max(0,-z-1) + z"])
def test_no_flip_is_impossible_for_nondegenerate_weights(expr: str) -> None:
    # mish, elu, selu, celu: impossible for all weights at every width by thm-SDI (test_frontier.py)
    d = classified(expr)
    assert (d["verdict"], d["decided_by"], d["scope"]) == ("impossible", "R-no-flip", "nondegenerate weights")
    assert d["degenerate_case"] and "thm-R" in d["cited"] and "lemma-R" in d["cited"]


@pytest.mark.parametrize("expr", ["max(0, z) + z^3"])  # abs(z) + z^3: R-no-flip (test_frontier.py)
def test_open_with_reasons(expr: str) -> None:
    d = classified(expr)
    assert d["verdict"] == "open" and d["decided_by"] is None
    assert len(d["candidates"]) >= 10
    assert all(c["reason"] for c in d["candidates"])


def test_glu_is_conditional_by_cor_g1() -> None:
    d = classified("sigmoid", gated=True)
    assert (d["verdict"], d["decided_by"]) == ("conditional", "cor-G1")
    assert d["condition"] == "W_down[:,S] W_up[S,:] = -I_d"
    assert classified("glu")["verdict"] == "conditional"


def test_gated_units() -> None:
    assert classified("swiglu")["decided_by"] == "prop6"
    assert classified("geglu")["decided_by"] == "prop6"
    assert classified("reglu")["decided_by"] == "prop5"
    assert classified("silu", gated=True)["verdict"] == "impossible"


def test_singular_nonzero_skip_is_not_thm8() -> None:
    spec = load_spec(EXAMPLES / "paper.absorb")
    from dataclasses import replace

    from sympy import ImmutableMatrix

    from symabsorb.model.block import Skip

    block = next(b for b in spec.blocks if b.name == "relu_skew")
    singular = replace(block, skip=Skip("matrix", matrix=ImmutableMatrix([[1, 1], [1, 1]])))
    d = prove(singular)
    assert d.verdict is Verdict.CONDITIONAL and d.decided_by == "R-linear-odd"
    assert d.necessary == "proved" and d.scope == "nondegenerate weights"
    assert not any("lemma4" in s.cites for s in d.steps)  # no invertibility needed


def test_no_skip_is_trivially_absorbable() -> None:
    spec = load_spec(EXAMPLES / "paper.absorb")
    from dataclasses import replace

    from symabsorb.model.block import Skip

    block = replace(spec.blocks[0], skip=Skip("none"))
    d = prove(block)
    assert d.verdict is Verdict.ABSORBABLE and d.decided_by == "trivial-no-skip"


def test_never_both_impossible_and_absorbable() -> None:
    """The graph never derives opposite verdicts: check every candidate, not just the first."""
    library = default_library()
    for name in CATALOG:
        act = activation_from_text(name)
        d = classify(act)
        from symabsorb.model.block import M_WIDTH, Block, D, Skip

        subject = Subject(block=Block(name, act, D, M_WIDTH, Skip("identity")))
        holding = {a.result.conclusion.verdict for a in attempts(subject, library, stop_at_failure=False) if a.holds}
        assert not ({"impossible"} <= holding and holding & {"conditional", "absorbable"}), (name, holding)
        assert d.verdict.value in holding or d.verdict is Verdict.OPEN


def test_catalog_command() -> None:
    rows = run_json("catalog", "--json")
    assert len(rows) == len(CATALOG)
    by_name = {r["activation"]: r for r in rows}
    assert by_name["relu2"]["verdict"] == "impossible" and by_name["relu2"]["source"] == "paper"
    assert by_name["tanh"]["verdict"] == "impossible" and by_name["tanh"]["source"] == "library"
    # issue 20's done-when: Theorem SDI for the ELU family and Mish, Theorem G for GLU, identity keeps m ≥ d
    for name in ("elu", "selu", "celu", "mish"):
        assert (by_name[name]["verdict"], by_name[name]["scope"]) == ("impossible", "all weights"), name
    assert by_name["glu"]["verdict"] == "conditional" and by_name["glu"]["necessary"] == "proved"
    assert not any(r.get("necessary") == "conjectured" for r in rows)


def test_parametric_activations() -> None:
    """Parameters declared without a value stay symbols and are analysed for all their values."""
    import sympy as sp

    from symabsorb.model import Z, resolve_text

    spec = resolve_text("""
activation leaky_sym(z; alpha > 0) = if z >= 0 then z else alpha*z
activation swish_b(z; beta > 0) = z*sigmoid(beta*z)
classify leaky_sym
classify swish_b
""")
    leaky, swish = (classify(q.target) for q in spec.queries)
    assert leaky.verdict is Verdict.CONDITIONAL and leaky.decided_by == "L-odd-linear"
    alpha = spec.activations[0].params[0].symbol
    assert sp.simplify(leaky.condition_constant - (1 + alpha) / 2) == 0
    # the proved constant is right for a sample value of the parameter
    e = spec.activations[0].expr.subs(alpha, sp.Rational(3, 10))
    from fractions import Fraction

    for x in (Fraction(7, 5), Fraction(-2, 3)):
        from symabsorb.analysis.enclosure import nonzero_enclosure

        assert nonzero_enclosure((e - e.subs(Z, -Z)) / 2 - sp.Rational(13, 20) * Z, x) is None
    assert swish.verdict is Verdict.CONDITIONAL and swish.condition_constant == sp.Rational(1, 2)


def test_fractional_degree_is_prop5() -> None:
    d = classified("max(0, z)^(5/2)")
    assert (d["verdict"], d["decided_by"]) == ("impossible", "prop5")


def test_a_parameter_that_may_vanish_is_not_assumed_nonzero() -> None:
    """σ(z) = a·z with an unconstrained a: a = 0 would make the block unabsorbable, so L-linear and
    L-odd-linear must not apply; with a > 0 they may."""
    from symabsorb.model import resolve_text

    spec = resolve_text("activation lin(z; a) = a*z\nactivation pos(z; a > 0) = a*z\nclassify lin\nclassify pos")
    free, positive = (classify(q.target) for q in spec.queries)
    assert free.verdict is Verdict.OPEN
    assert {c.id: c.state.value for c in free.candidates}["L-linear"] == "hypothesis undecided"
    assert positive.verdict is Verdict.ABSORBABLE and positive.decided_by == "L-linear"


def test_parameter_constraints_are_used() -> None:
    """`k > 1` decides Prop. 5 for every such k; `k > 0` does not (k = 1 is allowed)."""
    from symabsorb.model import resolve_text

    spec = resolve_text("activation powk(z; k > 1) = max(0, z)^k\nactivation powh(z; k > 0) = max(0, z)^k\n"
                        "classify powk\nclassify powh")
    above_one, positive = (classify(q.target) for q in spec.queries)
    assert (above_one.verdict, above_one.decided_by) == (Verdict.IMPOSSIBLE, "prop5")
    assert positive.verdict is Verdict.OPEN


def test_a_symbolic_depth_is_named_not_equated_with_itself() -> None:
    """'depth $L = L$' (a new user's report) reads 'depth $L$'; a numeric depth keeps its value."""
    from symabsorb.model import resolve_text

    spec = resolve_text("block a { activation: relu }\nstack s = a ^ L\nstack t = a ^ 3\nabsorb s\nabsorb t\n", "d.absorb")
    symbolic, numeric = (prove(q.target).steps[0].text for q in spec.queries)
    assert "(depth $L$)" in symbolic and "L = L" not in symbolic
    assert "(depth $L = 3$)" in numeric
