"""Non-real activations and real-only facts (issue 26 §1): σ must be proved real-valued and finite
on R before any verdict; proved non-real somewhere → a clean spec error; undecided → open."""

from __future__ import annotations

import subprocess
import sys

import pytest
import sympy as sp

from symabsorb.analysis.engine import analyze_expr
from symabsorb.analysis.facts import Status
from symabsorb.analysis.growth import growth_fact, size_at_infinity
from symabsorb.analysis.realness import not_proved_real
from symabsorb.errors import SpecError
from symabsorb.model import Z, activation_from_text
from symabsorb.model.domain import nonreal_stretches
from symabsorb.theory.derivation import Verdict
from tests.helpers import classify

TANH_MINUS_ERFI = "tanh(z) + sqrt(-1)*erf(sqrt(-1)*z)"  # = tanh z − erfi z: real, unbounded


def _verdict(text: str) -> Verdict:
    return classify(activation_from_text(text)).verdict


# ---- undecided realness: open, never a verdict on a real-only fact ---------------------------------

def test_tanh_minus_erfi_is_real_and_unbounded_so_not_bounded() -> None:
    expr = sp.tanh(Z) + sp.I * sp.erf(sp.I * Z)
    value = complex(sp.N(expr.xreplace({Z: 4})))
    assert abs(value.imag) < 1e-9 and value.real < -1e5  # the input that made "bounded" false
    assert size_at_infinity(sp.erf(sp.I * Z)) is None
    assert growth_fact(expr).evidence.status is Status.UNKNOWN
    assert nonreal_stretches(expr) == ()  # it is real: no error either


@pytest.mark.parametrize("text", [TANH_MINUS_ERFI, "z*sin(z)/cos(z)", "z*sin(z)/cos(z) + z"])
def test_undecided_realness_or_poles_are_open(text: str) -> None:
    d = classify(activation_from_text(text))
    assert d.verdict is Verdict.OPEN
    assert any("not proved real-valued and finite" in s.text for s in d.steps)


def test_every_fact_is_unknown_when_sigma_is_not_proved_real() -> None:
    parts = analyze_expr(sp.tanh(Z) + sp.I * sp.erf(sp.I * Z))
    for part in parts:
        if part is not None:
            assert part.evidence.status is Status.UNKNOWN  # type: ignore[attr-defined]


# ---- proved non-real somewhere: the same clean error as sqrt(z) --------------------------------------

@pytest.mark.parametrize("text", ["sqrt(-z^2)", "sqrt(-4)*abs(z)", "sqrt(-4)*tanh(z)", "z + sqrt(-4)*z^2",
                                  "atan(sqrt(-z^2))", "sqrt(-4)*z", "log(-abs(z))", "sqrt(cos(z))"])
def test_proved_nonreal_is_a_spec_error(text: str) -> None:
    with pytest.raises(SpecError, match="not real-valued"):
        activation_from_text(text)


def test_proved_nonreal_from_sympy_is_open_in_the_prover() -> None:
    from symabsorb.model.activation import Activation

    act = Activation("c", 2 * sp.I * sp.Abs(Z))
    d = classify(act)
    assert d.verdict is Verdict.OPEN


@pytest.mark.parametrize("text", ["sqrt(-z^2)", TANH_MINUS_ERFI, "z*sin(z)/cos(z)"])
def test_cli_exit_codes(text: str) -> None:
    r = subprocess.run([sys.executable, "-m", "symabsorb", "classify", text], capture_output=True, text=True,
                       timeout=600)
    assert "Traceback" not in r.stderr
    if r.returncode == 2:
        assert "not real-valued" in r.stderr
    else:
        assert r.returncode == 0 and ": open" in r.stdout.splitlines()[0]


# ---- real activations keep their verdicts ------------------------------------------------------------

@pytest.mark.parametrize("text", ["gelu", "silu", "tanh", "softplus", "mish", "sigmoid", "relu", "erf(z)",
                                  "if z >= 0 then sqrt(z) else -sqrt(-z)", "abs(z)^(3/2)", "z/(1 + z^2)",
                                  "if z > 0 then z*log(z) else if z < 0 then z*log(-z) else 0"])
def test_real_builtins_are_proved_real(text: str) -> None:
    act = activation_from_text(text)
    assert not_proved_real(act.expr) is None
    assert nonreal_stretches(act.expr) == ()


@pytest.mark.parametrize("text, verdict", [("tanh(z)", Verdict.IMPOSSIBLE), ("gelu", None), ("relu", None)])
def test_real_verdicts_unchanged(text: str, verdict: Verdict | None) -> None:
    v = _verdict(text)
    assert v is not Verdict.OPEN
    if verdict is not None:
        assert v is verdict


def test_not_proved_real_reasons() -> None:
    assert not_proved_real(sp.sqrt(1 - Z**2)) is not None
    assert not_proved_real(sp.log(sp.cos(Z) + 2)) is not None  # conservative: positivity not proved
    assert not_proved_real(1 / (1 + Z**2)) is None
    assert "pole" in (not_proved_real(Z / sp.cos(Z)) or "")
    assert "imaginary" in (not_proved_real(sp.tanh(Z) + sp.I * sp.erf(sp.I * Z)) or "")


def test_the_point_test_encloses_the_tree_and_decides_cases_exactly_or_not_at_all() -> None:
    """σ is enclosed at a rational point without SymPy evaluating the substituted expression; the
    cases of sign/if/max are decided exactly, and an undecided case (a hidden-zero breakpoint) is
    never read as taken."""
    import sympy as sp

    from symabsorb.model.domain import nonreal_stretches
    from symabsorb.model.functions import Z

    h = sp.cosh(1) ** 2 - sp.sinh(1) ** 2 - 1
    assert nonreal_stretches(sp.sign(Z) * sp.sqrt(Z))  # sign(-1) = -1 decided, sqrt(-1) = i
    assert nonreal_stretches(sp.Piecewise((sp.sqrt(Z), Z < 0), (Z, True)))  # the taken case is complex
    assert not nonreal_stretches(sp.Piecewise((Z, Z < 0), (sp.sqrt(Z), True)))  # sqrt only where z >= 0
    assert not nonreal_stretches(sp.Max(Z, sp.sqrt(Z)))  # max of a non-real value: undecided, not claimed
    # a breakpoint 1 + h (h a hidden zero): the case is not decided at the point, so nothing is claimed
    assert not nonreal_stretches(sp.Piecewise((sp.sqrt(Z - 1), Z > 1 + h), (Z, True)))


# ---- a bounded non-real stretch: the same spec error, naming only what is proved (issue 26 leftovers) -----------

def test_a_bounded_nonreal_stretch_is_exit_2_at_the_proved_point() -> None:
    r = subprocess.run([sys.executable, "-m", "symabsorb", "classify", "sqrt((z-20)^2-1)+z"], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "not real-valued at z = 20" in r.stderr and "19 < z < 21" in r.stderr


@pytest.mark.parametrize("text, point", [
    ("sqrt(exp((z-20)^2) - 2) + z", "z = 20"),  # an argument that is not a polynomial: a grid point, by a ball
    ("z + log(cos(z) + 1/2)", "z = -5/2"),
])
def test_a_bounded_stretch_of_a_non_polynomial_argument_is_found_on_a_grid(text: str, point: str) -> None:
    with pytest.raises(SpecError, match=f"not real-valued at {point}") as err:
        activation_from_text(text)
    assert f"is negative at {point}" in str(err.value)


def test_the_message_names_the_proved_point_not_the_whole_stretch() -> None:
    # Im σ(z) = sqrt(-z) sin(z) is 0 at z = -π: σ is not non-real on all of z < 0, only its argument is negative
    with pytest.raises(SpecError) as err:
        activation_from_text("sqrt(z)*sin(z) + z")
    msg = str(err.value)
    assert "not real-valued at z = -1" in msg and "is negative for z < 0" in msg
    assert "not real-valued for" not in msg


def test_a_bounded_stretch_from_sympy_is_open_with_the_point_and_the_argument_interval() -> None:
    from symabsorb.model.activation import Activation

    d = classify(Activation("c", sp.sqrt((Z - 20) ** 2 - 1) + Z))
    assert d.verdict is Verdict.OPEN
    last = d.steps[-1].text
    assert "\\sigma(20)" in last and "(19, 21)" in last


def test_a_stretch_where_sigma_is_real_at_the_midpoint_tries_other_points() -> None:
    # the argument 1 - z^2 is negative for |z| > 1, where Im σ = sqrt(z^2 - 1)·sin(π z / 2): 0 at the first
    # points tried (±2), not at ±3; the stretch is still reported as a stretch, at a point where it is proved
    expr = sp.sqrt(1 - Z**2) * sp.sin(sp.pi * Z / 2) + Z  # real at z = ±2 (sin(±π) = 0), not at ±3
    (nr,) = nonreal_stretches(expr)[:1]
    assert nr.point not in (2, -2) and nr.kind == "stretch"


def test_a_rational_polynomial_is_proved_positive_or_its_real_root_named() -> None:
    # exact real-root isolation, where SymPy's assumptions leave z^2 + z + 1 undecided
    assert not_proved_real(Z / (Z**2 + Z + 1)) is None
    assert not_proved_real(sp.log(Z**2 + Z + 1)) is None
    assert not_proved_real(sp.log(Z**2 + Z + 1) + 1 / (Z**4 + 1)) is None
    assert "is 0 at z = -sqrt(2) (exactly)" in (not_proved_real(Z / (Z**2 - 2)) or "")
    assert not_proved_real(sp.log(Z**2 - Z)) is not None  # negative on (0, 1)
    assert not_proved_real(sp.log(-(Z**2) - 1)) is not None  # no real root, but negative
    assert not_proved_real(1 / (Z**2 + Z + 1)) is None and not_proved_real(1 / Z**2) is not None


def test_the_prover_states_only_what_is_proved_about_a_nonreal_point() -> None:
    from symabsorb.model.activation import Activation

    # σ itself non-real at a point (no square root, logarithm or power to blame): no argument is said negative
    last = classify(Activation("c", 2 * sp.I * sp.Abs(Z))).steps[-1].text
    assert "is not real" in last and "argument" not in last
    # an argument that is not a polynomial: negative at the point (a ball), not on a stretch
    last = classify(Activation("e", sp.sqrt(sp.exp((Z - 20) ** 2) - 2) + Z)).steps[-1].text
    assert "\\sigma(20)" in last and "is negative at $z = 20$" in last
