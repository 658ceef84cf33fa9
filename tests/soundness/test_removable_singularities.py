"""Removable singularities (issue 26, N1): SymPy's automatic evaluation cancels a division when it builds σ
(``z^2/z`` is built as ``z``), so the resolver keeps every divisor, logarithm argument and base of a negative
power as a side condition of the activation. One proved to vanish at a real point makes σ as written undefined
there: ``open``, naming the point (as for a pole). One not proved nonzero: ``open``, saying so. One proved
nonzero (``1 + exp(-z)``, ``1 + abs(z)``, ``1 + z^2``, ``cosh z``) changes nothing."""

from __future__ import annotations

import pytest
import sympy as sp

from symabsorb.model import Z, activation_from_text, resolve_text
from symabsorb.model.activation import Activation, GatedActivation
from symabsorb.model.catalog import CATALOG
from symabsorb.model.domain import SideCondition, domain_gap, proved_nonzero_on_reals
from symabsorb.theory.derivation import Verdict
from tests.helpers import classify


def _conditions(act: Activation | GatedActivation) -> tuple[SideCondition, ...]:
    return (act.gate if isinstance(act, GatedActivation) else act).conditions


def _open_reason(text: str, gated: bool = False) -> str:
    d = classify(activation_from_text(text, gated=gated))
    assert d.verdict is Verdict.OPEN, (text, d.verdict)
    return d.steps[-1].text


# ---- a cancelled divisor that vanishes at a real point: open, with the point ---------------------------------

@pytest.mark.parametrize("text, point", [
    ("z^2/z", "z = 0"),  # was `absorbable` by L-linear: the verdict was about z
    ("z*log(z)/log(z)", "z = 0"),  # log(0), and 0/0 at z = 1
    ("tanh(z)*(z^2-1)/(z^2-1)", "z = -1"),  # was `impossible` by L-growth: about tanh z
    ("z*(z^2-2)/(z^2-2)", "z = - \\sqrt{2}"),  # an irrational root, exact
    ("z + 0/z", "z = 0"),
    ("exp(log(z))", "z = 0"),  # log(0) inside: SymPy builds z
    ("log(z) - log(z) + z", "z = 0"),
    ("z*(exp(z) - 1)/(exp(z) - 1)", "z = 0"),  # not a polynomial: exactly 0 at the rational point 0
    ("z*z^(-1)*z", "z = 0"),  # a negative power written with ^
])
def test_a_cancelled_divisor_vanishing_at_a_real_point_is_open_with_the_point(text: str, point: str) -> None:
    reason = _open_reason(text)
    assert "as written has no value at $" + point + "$" in reason


def test_a_sign_change_of_a_continuous_divisor_is_a_proved_zero_in_an_interval() -> None:
    reason = _open_reason("z*cos(z)/cos(z)")
    assert "no value at some $z \\in (" in reason and "takes both signs" in reason


def test_an_undecided_divisor_is_open_and_says_so() -> None:
    reason = _open_reason("z*(2 + sin(z))/(2 + sin(z))")
    assert "not proved nonzero on R" in reason and "may have no value" in reason


def test_the_side_conditions_follow_calls_parameters_and_gates() -> None:
    spec = resolve_text("activation g(z) = z^2/z\n"
                        "activation h(z) = 2*g(3*z)\n"
                        "activation p(z; a = 1) = a*z^2/z\n"
                        "gated u gate (z) = tanh(z)*(z-1)/(z-1)\n")
    acts = {a.name: a for a in spec.activations}
    for name in ("g", "h", "p", "u"):
        assert _conditions(acts[name]), name
        gap = domain_gap(_conditions(acts[name]))
        assert gap is not None and gap.proved, name
    assert domain_gap(_conditions(acts["u"])).point == 1  # type: ignore[union-attr]
    for name in ("g", "h", "p"):
        assert classify(acts[name]).verdict is Verdict.OPEN
    assert classify(acts["u"]).verdict is Verdict.OPEN


# ---- a case not taken where the divisor vanishes: σ as written is defined, nothing changes ----------------------

def test_a_divisor_inside_a_case_counts_only_where_the_case_is_taken() -> None:
    relu = classify(activation_from_text("relu"))
    d = classify(activation_from_text("if z > 0 then z^2/z else 0"))  # z^2/z only for z > 0: this is relu
    assert d.verdict is relu.verdict and d.verdict is not Verdict.OPEN
    # the value defined at the hole, as the pole message suggests: no gap
    sinc = activation_from_text("if z >= 0 and z <= 0 then 1 else sin(z)/z")
    assert domain_gap(_conditions(sinc)) is None  # type: ignore[arg-type]
    # a case taken at the hole: the gap is proved
    taken = activation_from_text("if z >= 0 then z^2/z else 0")
    gap = domain_gap(_conditions(taken))  # type: ignore[arg-type]
    assert gap is not None and gap.point == 0


# ---- divisors proved nonzero change nothing -------------------------------------------------------------------

@pytest.mark.parametrize("text, same_as", [
    ("z*(1 + z^2)/(1 + z^2)", "z"),
    ("z*cosh(z)/cosh(z)", "z"),
    ("z*(z^2 + z + 1)/(z^2 + z + 1)", "z"),  # no real root: exact real-root isolation
    ("tanh(z)*(1 + exp(-z))/(1 + exp(-z))", "tanh(z)"),
    ("tanh(z)*(1 + abs(z))/(1 + abs(z))", "tanh(z)"),
])
def test_a_cancelled_divisor_proved_nonzero_changes_nothing(text: str, same_as: str) -> None:
    act = activation_from_text(text)
    assert _conditions(act) == ()
    assert classify(act).verdict is classify(activation_from_text(same_as)).verdict


def test_no_builtin_activation_carries_a_side_condition() -> None:
    for name in CATALOG:
        assert _conditions(activation_from_text(name)) == (), name
    for text in ("(exp(z) - exp(-z))/(exp(z) + exp(-z))", "z/(1 + abs(z))", "z/(1 + exp(-z))", "1/(1 + exp(-z))",
                 "z/(1 + z^2)"):
        assert _conditions(activation_from_text(text)) == (), text


@pytest.mark.parametrize("text", ["sigmoid", "silu", "softsign", "tanh", "swish"])
def test_builtin_verdicts_are_not_open(text: str) -> None:
    assert classify(activation_from_text(text)).verdict is not Verdict.OPEN


def test_a_pole_still_visible_keeps_its_old_message() -> None:
    act = activation_from_text("sin(z)/z")
    assert _conditions(act) == ()  # z is still a divisor of σ: the realness checks see the pole
    assert "no finite real value at $z = 0$" in classify(act).steps[-1].text


def test_sympy_input_has_no_side_conditions() -> None:
    assert classify(Activation("x", Z)).verdict is Verdict.ABSORBABLE


def test_proved_nonzero_on_reals() -> None:
    assert proved_nonzero_on_reals(1 + sp.exp(-Z)) and proved_nonzero_on_reals(sp.cosh(Z))
    assert proved_nonzero_on_reals(Z**2 + Z + 1)  # no real root
    assert not proved_nonzero_on_reals(Z**2 - 2) and not proved_nonzero_on_reals(sp.cos(Z))
    h = sp.cosh(1) ** 2 - sp.sinh(1) ** 2 - 1  # a hidden zero: never taken as nonzero
    assert not proved_nonzero_on_reals(h) and not proved_nonzero_on_reals(Z**2 + h)


WIDTH_SPEC = """activation f(z) = z^2/z
block bf { activation: f dim: 2 width: 2 W_up: [[1, 0], [0, 1]] W_down: [[1, 2], [3, 4]] }
"""


def test_the_facts_and_the_width_query_claim_nothing_for_sigma_undefined_at_a_point() -> None:
    from symabsorb.analysis.engine import analyze
    from symabsorb.analysis.facts import Status
    from tests.helpers import session

    facts = analyze(activation_from_text("z^2/z"))  # facts about z would say: odd, linear, a polynomial
    for part in (facts.parity, facts.polynomial, facts.homogeneity, facts.growth, facts.symmetry):
        assert part.evidence.status is Status.UNKNOWN
        assert "not proved defined on all of R" in (part.evidence.reason or "")
    block = resolve_text(WIDTH_SPEC).blocks[0]
    d = session().width(block, "width bf")  # was `width at most 4` by a witness construction for z
    assert d.verdict is Verdict.OPEN


@pytest.mark.parametrize("text", [
    "space s = { family: a*z^2/z  range a: [-1, 1] }\n",
    "activation f(z) = z*(z-1)/(z-1)\nspace s = { primitives: [tanh, f], size: 3 }\n",
])
def test_an_explored_expression_undefined_at_a_point_is_a_spec_error(text: str) -> None:
    # explore sends the simplified expression to its workers: it would decide a*z, or z, instead
    from symabsorb.errors import SpecError

    with pytest.raises(SpecError, match="as written is not proved defined on all of R"):
        resolve_text(text)


def test_an_explored_family_defined_everywhere_is_accepted() -> None:
    spec = resolve_text("space s = { family: a*z*(1 + z^2)/(1 + z^2)  range a: [-1, 1] }\n")
    assert spec.spaces[0].family is not None


def test_a_divisor_that_is_itself_a_reciprocal_is_never_zero() -> None:
    act = activation_from_text("z*(1/(z^2 + z + 1))/(1/(z^2 + z + 1))")  # SymPy builds z; the divisor is never 0
    assert domain_gap(_conditions(act)) is None
    gap = domain_gap(_conditions(activation_from_text("z*(1/z)/(1/z)")))  # the inner 1/z: no value at 0
    assert gap is not None and gap.point == 0


def test_a_sign_change_of_a_factor_is_named_as_the_factor() -> None:
    # cos(z)^2 never changes sign: its factor cos(z) does, between -2 and -3/2 (a root at -π/2)
    gap = domain_gap(_conditions(activation_from_text("z*cos(z)^2/cos(z)^2")))  # type: ignore[arg-type]
    assert gap is not None and gap.between == (-2, sp.Rational(-3, 2))
    assert "its factor cos(z) is continuous and takes both signs" in gap.describe()


def test_a_hidden_zero_of_a_divisor_at_a_rational_point_is_decided_exactly() -> None:
    d = "(sin(z)^2 + cos(z)^2 - 1 + (z - 1)^2)"  # = (z - 1)^2; at z = 1 a hidden zero, never negative
    gap = domain_gap(_conditions(activation_from_text(f"z*{d}/{d}")))  # type: ignore[arg-type]
    assert gap is not None and gap.point == 1


def test_a_divisor_kept_inside_a_case_with_an_irrational_root_is_open_with_the_point() -> None:
    # not cancelled, only hidden from the pole checks by the case split; the root is irrational
    reason = _open_reason("if z >= 0 then sin(z)/(z^2 - 2) else 1")
    assert "as written has no value at $z = \\sqrt{2}$" in reason
