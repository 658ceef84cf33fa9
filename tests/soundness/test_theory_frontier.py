"""Issue 20, the theory frontier: inputs the engine could not decide (or decided wrongly), each with
its true answer; non-real activations; Sym(σ) for kinks away from 0, piecewise polynomials and
logarithmic growth."""

from __future__ import annotations

import pytest
import sympy as sp

from symabsorb.analysis.symmetry import symmetry_fact
from symabsorb.errors import SpecError
from symabsorb.model import Z, activation_from_text, resolve_text
from symabsorb.model.domain import nonreal_stretches
from symabsorb.theory.derivation import Verdict
from tests.helpers import classify


def _verdict(text: str, gated: bool = False) -> tuple[Verdict, str | None, str]:
    d = classify(activation_from_text(text, gated=gated))
    return d.verdict, d.decided_by, d.scope


# ---- non-real activations ---------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "sqrt((z-20)^2 - 1) + sqrt((z+20)^2 - 1)",  # even: L-parity answered `impossible`
    "sqrt((z-20)^2 - 1) + z",
    "sqrt((z-20)^2 - 1) + max(0, z)",
])
def test_a_bounded_nonreal_stretch_is_a_spec_error_at_a_point(text: str) -> None:
    # proved non-real at one rational point (issue 26 leftovers): a spec error like a half-line; the message
    # names that point, and the stretch only as where the argument of the square root is negative
    with pytest.raises(SpecError) as err:
        activation_from_text(text)
    msg = str(err.value)
    assert "not real-valued at z = " in msg and ("19 < z < 21" in msg or "-21 < z < -19" in msg)


def test_a_bounded_nonreal_gate_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match="not real-valued at z = 20"):
        activation_from_text("sqrt((z-20)^2 - 1) + 1", gated=True)


def test_nonreal_stretches_are_exact() -> None:
    (nr,) = nonreal_stretches(sp.sqrt(Z**2 - 2) + Z)
    assert (nr.lo, nr.hi) == (-sp.sqrt(2), sp.sqrt(2)) and -nr.hi < nr.point < nr.hi


@pytest.mark.parametrize("expr", [
    sp.Piecewise((sp.sqrt(Z), Z >= 0), (-sp.sqrt(-Z), True)),  # the signed square root is real
    sp.sqrt(Z**2 + 1), sp.log(1 + Z**2), sp.sqrt(sp.Abs(Z)), sp.Abs(Z) ** sp.Rational(1, 3),
])
def test_real_activations_have_no_nonreal_stretch(expr: sp.Expr) -> None:
    assert nonreal_stretches(expr) == ()


@pytest.mark.parametrize("text, col, where", [
    ("activation a(z) = 1 + log(z)\n", 23, "z < 0"),
    ("activation a(z) = z + sqrt(z)\n", 23, "z < 0"),
    ("activation a(z; c = 2) = z + (z - c)^(1/2)\n", 31, "z < 2"),
    ("activation a(z) = sqrt(z^2 + 1) + sqrt(z - 3)\n", 35, "z < 3"),
    ("gated a gate (z) = 1 + sqrt(-z)\n", 24, "z > 0"),
])
def test_a_nonreal_half_line_is_a_positioned_error(text: str, col: int | None, where: str) -> None:
    with pytest.raises(SpecError) as err:
        resolve_text(text)
    assert "not real-valued at z = " in str(err.value) and f"is negative for {where}" in str(err.value)
    if col is not None:
        assert err.value.span is not None and err.value.span.column == col


def test_a_nonreal_half_line_in_a_classify_expression_is_an_error() -> None:
    with pytest.raises(SpecError, match="not real-valued at z = -1"):
        activation_from_text("log(z)")


def test_the_signed_square_root_is_accepted() -> None:
    resolve_text("activation s(z) = if z >= 0 then sqrt(z) else -sqrt(-z)\n")


# ---- Sym(σ): kinks away from 0, parts with kinks, one kink at 0, logarithmic growth ----------------------


@pytest.mark.parametrize("text, verdict, decided_by, constant", [
    # kinks at ±1, odd part z: R-linear-odd's iff with −I/2
    ("max(0,z-1) + max(0,-z-1) + z", Verdict.CONDITIONAL, "R-linear-odd", sp.Integer(1)),
    # odd: the even part is 0, the odd part has kinks at ±1 (not a polynomial): R-no-flip
    ("max(0,z-1) - max(0,-z-1) + z", Verdict.IMPOSSIBLE, "R-no-flip", None),
    # degree bound 2 from |log(1 + z²)| ≤ C(1 + |z|); odd Taylor coefficients past 2: R-no-flip
    ("z*log(1+z^2) + z", Verdict.IMPOSSIBLE, "R-no-flip", None),
    # the family (μ, |μ|) with remainders (1 − μ²)t³, (1 + μ²)t³: no linear part, R-no-flip
    ("abs(z) + z^3", Verdict.IMPOSSIBLE, "R-no-flip", None),
])
def test_sym_coverage_examples(text: str, verdict: Verdict, decided_by: str, constant: sp.Expr | None) -> None:
    d = classify(activation_from_text(text))
    assert (d.verdict, d.decided_by) == (verdict, decided_by)
    if verdict is Verdict.CONDITIONAL:
        assert (d.sufficient, d.necessary, d.scope) == ("proved", "proved", "nondegenerate weights")
        assert d.condition_constant == constant and d.condition is not None and "- \\frac{1}{2}" in d.condition
    else:
        assert d.scope == "nondegenerate weights"


def test_softshrink_odd_part_is_refuted_by_its_kinks() -> None:
    f = symmetry_fact(activation_from_text("softshrink").expr)
    assert f.evidence.proved and f.kind == "no-flip"
    assert [c.describe() for c in f.kept] == ["(1, 1)", "(-1, -1)"]


def test_one_kink_at_zero_gives_a_closed_form_family() -> None:
    from symabsorb.analysis.symmetry import MU_NEG, MU_POS

    f = symmetry_fact(activation_from_text("max(0,z) + z^3").expr)
    assert f.evidence.proved
    rems = {c.mu: c.remainder for c in f.kept}
    assert sp.expand(rems["mu>0"] - (1 - MU_POS**2) * Z**3) == 0
    assert sp.expand(rems["mu<0"] - (Z + (1 + MU_NEG**2) * Z**3)) == 0
    # the remainders are right: σ(t) − σ(μt)/|μ| at sample points, exactly
    sigma = activation_from_text("max(0,z) + z^3").expr
    for mu in (sp.Rational(3, 2), sp.Rational(-2, 3), sp.Integer(-3)):
        rem = rems["mu>0" if mu > 0 else "mu<0"].xreplace({MU_POS: mu, MU_NEG: mu})
        for t in (sp.Rational(-5, 3), sp.Rational(7, 4)):
            assert sigma.xreplace({Z: t}) - sigma.xreplace({Z: mu * t}) / abs(mu) == rem.xreplace({Z: t})
    # a continuum with a varying cubic part: none of the finite-remainder corollaries applies
    d = classify(activation_from_text("max(0,z) + z^3"))
    assert d.verdict is Verdict.OPEN or d.decided_by not in ("R-linear-odd", "R-polynomial-odd")


# ---- Theorem G: gated blocks decided by Sym(g) -------------------------------------------------------------


@pytest.mark.parametrize("gate, K", [("sigmoid", 1), ("1 + tanh(z)", 2), ("Phi", 1), ("1 + erf(z)", 2)])
def test_cor_g1_constant_flip_gates_are_iff(gate: str, K: int) -> None:
    d = classify(activation_from_text(gate, gated=True))
    assert (d.verdict, d.decided_by, d.scope) == (Verdict.CONDITIONAL, "cor-G1", "nondegenerate weights")
    assert (d.sufficient, d.necessary) == ("proved", "proved")
    assert d.condition_constant == sp.Rational(K, 2)  # T = -M/(2c) = -M/K


@pytest.mark.parametrize("gate", ["softplus", "exp", "exp(2*z) + z"])
def test_cor_g2_vanishing_remainders_are_not_absorbable(gate: str) -> None:
    d = classify(activation_from_text(gate, gated=True))
    assert (d.verdict, d.decided_by, d.scope) == (Verdict.IMPOSSIBLE, "cor-G2", "nondegenerate weights")
    assert d.degenerate and "extra unit" in d.degenerate


@pytest.mark.parametrize("gate", [
    "1 + z",  # a polynomial gate: generic weights absorb by rescaling while no index set works (MATH §10)
    # continuous, not a polynomial, (2, 2) ∈ Sym(g) with remainder 1/2: Sym(g) is not proved
    "if z >= 0 and z <= 0 then 1 else 1 + z*sin(2*pi*log(abs(z))/log(2))",
])
def test_gate_flip_counterexamples_stay_sufficient_only(gate: str) -> None:
    d = classify(activation_from_text(gate, gated=True))
    assert d.decided_by == "L-gate-flip" and (d.sufficient, d.necessary) == ("proved", "open")


def test_the_counterexample_gate_really_has_the_symmetry() -> None:
    """(2, 2) ∈ Sym(1 + t·sin(2π log₂|t|)): g(2t) − 2g(t) = −1 exactly, at rational points."""
    from symabsorb.analysis.enclosure import nonzero_enclosure

    g = activation_from_text("if z >= 0 and z <= 0 then 1 else 1 + z*sin(2*pi*log(abs(z))/log(2))").expr
    for t in (sp.Rational(3, 7), sp.Rational(-5, 2), sp.Integer(9)):
        assert nonzero_enclosure(g.xreplace({Z: 2 * t}) - 2 * g.xreplace({Z: t}) + 1) is None


def test_no_result_is_conjectured() -> None:
    from symabsorb.theory.library import default_library

    lib = default_library()
    assert all(r.conclusion.necessary != "conjectured" for r in lib.results.values())


GATED = """
block ok { activation: glu dim: 2 width: 3 W_gate: [[1, 0], [0, 1], [1, 1]] W_up: [[1, 0], [0, 1], [1, 1]]
           W_down: [[-1, 0, 1], [0, -1, 1]] }
block no { activation: glu dim: 2 width: 3 W_gate: [[1, 0], [0, 1], [1, 1]] W_up: [[1, 0], [0, 1], [1, 1]]
           W_down: [[-1, 0, 1], [0, -2, 0]] }
block collinear { activation: glu dim: 2 width: 3 W_gate: [[1, 0], [2, 0], [1, 1]] W_up: [[1, 0], [0, 1], [1, 1]]
           W_down: [[-1, 0, 1], [0, -2, 0]] }
gated spg gate softplus
block sp { activation: spg dim: 2 width: 2 W_gate: [[1, 0], [0, 1]] W_up: [[1, 0], [0, 1]] W_down: [[-1, 0], [0, -1]] }
"""


def test_cor_g1_and_g2_on_inline_weights() -> None:
    from symabsorb.theory.library import default_library
    from tests.helpers import decide

    blocks = {b.name: b for b in resolve_text(GATED).blocks}

    def decided(name: str):  # type: ignore[no-untyped-def]
        return decide(blocks[name], default_library())

    assert decided("ok").verdict is Verdict.ABSORBABLE
    no = decided("no")
    assert (no.verdict, no.decided_by) == (Verdict.NOT_ABSORBABLE, "cor-G1")
    # collinear gate rows: Theorem G's necessity does not apply, so no "not absorbable"
    assert decided("collinear").verdict is Verdict.OPEN
    sp_ = decided("sp")
    assert (sp_.verdict, sp_.decided_by) == (Verdict.NOT_ABSORBABLE, "cor-G2")


# ---- Theorem SDI: independent dilates, impossible at every width ------------------------------------------


@pytest.mark.parametrize("name", ["elu", "selu", "celu", "mish", "elu(alpha = 2)", "celu(alpha = 1/2)",
                                  "z + sin(z)", "z + 2*sin(3*z) + z^3"])  # z + sin z: bias-free absorbers only
def test_sdi_activations_are_impossible_for_all_weights(name: str) -> None:
    d = classify(activation_from_text(name))
    assert (d.verdict, d.decided_by, d.scope) == (Verdict.IMPOSSIBLE, "thm-SDI", "all weights")


@pytest.mark.parametrize("text", ["gelu", "silu", "softplus", "relu", "tanh", "sigmoid", "z*sigmoid(z)",
                                  "max(0,z) + z^3", "z + sin(z)^2", "z + sin(z) + cos(z)", "z^2 + sin(z)", "exp(z)",
                                  "z*exp(z)/(exp(z) + 1)"])
def test_dilate_independence_is_not_claimed_where_it_fails_or_is_unproved(text: str) -> None:
    from symabsorb.analysis.dilates import dilate_fact

    assert not dilate_fact(activation_from_text(text).expr).evidence.proved


def test_sdi_counterexamples_to_independence() -> None:
    """Where dilates are dependent, the recognisers must not fire: ReLU (σ(2t) = 2σ(t)), GELU-type
    (σ(t) − σ(−t) = t), and an exponential on both sides (e^{t} and e^{-t} dilates collide)."""
    from symabsorb.analysis.dilates import dilate_fact

    for text in ("if z > 0 then exp(-z) - 1 + z else exp(z) - 1", "z*exp(z)/(exp(z) + 1)",
                 "z*exp(2*z)/(exp(2*z) + 1)"):
        assert not dilate_fact(activation_from_text(text).expr).evidence.proved, text


def test_mish_dilates_are_numerically_independent() -> None:
    """A referee's check of the pole argument: Mish dilates μ = 1, 2, −1, 1/2 have a Gram matrix on
    [−6, 6] (modulo cubics) of full rank (numbers test the engine here; they prove nothing)."""
    from tests.helpers import require_module

    np = require_module("numpy", "weights")
    ts = np.linspace(-6, 6, 400)

    def mish(x):  # type: ignore[no-untyped-def]
        return x * np.tanh(np.log1p(np.exp(x)))

    cols = [mish(mu * ts) for mu in (1.0, 2.0, -1.0, 0.5)] + [ts**k for k in range(4)]
    s = np.linalg.svd(np.stack(cols, axis=1), compute_uv=False)
    assert s[-1] / s[0] > 1e-8


# ---- Cor. R-pos: the exact criterion for cz + q, q positively homogeneous --------------------------------------

RPOS = """
activation cub(z) = z - abs(z)^3
activation zabs(z) = z + z*abs(z)
block one { activation: cub dim: 1 width: 1 skip: [[-2]] W_up: [[1]] W_down: [[1]] }
block pos { activation: cub dim: 1 width: 1 skip: [[3]] W_up: [[1]] W_down: [[1]] }
block gap { activation: cub dim: 1 width: 1 skip: [[-1]] W_up: [[1]] W_down: [[1]] }
block sq { activation: zabs dim: 2 width: 2 W_up: [[1, 0], [0, 1]] W_down: [[2, 0], [0, 3]] }
block sqno { activation: zabs dim: 2 width: 2 W_up: [[1, 0], [0, 1]] W_down: [[-1, 0], [0, 3]] }
"""


def _rpos(name: str):  # type: ignore[no-untyped-def]
    from symabsorb.theory.library import default_library
    from tests.helpers import decide

    block = {b.name: b for b in resolve_text(RPOS).blocks}[name]
    return decide(block, default_library())


def test_r_pos_is_iff_for_nondegenerate_weights() -> None:
    d = classify(activation_from_text("z - abs(z)^3"))
    assert (d.verdict, d.decided_by, d.scope) == (Verdict.CONDITIONAL, "R-pos", "nondegenerate weights")
    assert (d.sufficient, d.necessary) == ("proved", "proved")


@pytest.mark.parametrize("name, verdict", [
    ("one", Verdict.ABSORBABLE),   # M = -2: absorbed by σ(-x) (N = {0}, D = -2 < -1); L-pos-rescale missed it
    ("pos", Verdict.ABSORBABLE),   # M = 3: D = 3 > -1, a positive rescaling
    ("gap", Verdict.NOT_ABSORBABLE),  # M = -1: D = -1 is neither > -1 nor < -1
    ("sq", Verdict.ABSORBABLE),    # k = 2, A + B = 0 (z|z| is odd): D = diag(1/2, 1/3)
    ("sqno", Verdict.NOT_ABSORBABLE),  # D = diag(-1, 1/3): D_00 = -1 fails for k even
])
def test_r_pos_on_inline_weights(name: str, verdict: Verdict) -> None:
    d = _rpos(name)
    assert (d.verdict, d.decided_by) == (verdict, "R-pos")
    if verdict is Verdict.ABSORBABLE:
        assert d.witness is not None


def test_r_pos_witness_for_the_issue_example_is_sigma_of_minus_x() -> None:
    d = _rpos("one")
    assert d.witness is not None and list(d.witness.w_up) == [-1] and list(d.witness.w_down) == [1]


def test_cor_g1_on_file_weights_checks_the_gate_rows(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Gated nondegeneracy for file weights is about W_gate (collinear up rows do not matter, collinear
    gate rows leave the question open)."""
    import json

    from tests.helpers import require_module, run_cli

    np = require_module("numpy", "weights")
    rng = np.random.default_rng(11)
    w_gate, w_up, w_down = rng.standard_normal((6, 3)), rng.standard_normal((6, 3)), rng.standard_normal((3, 6))
    spec = tmp_path / "g.absorb"
    spec.write_text('block b { activation: glu weights: "g.npz" }\nabsorb b\n')

    def verdict() -> dict:  # type: ignore[type-arg]
        np.savez(tmp_path / "g.npz", W_gate=w_gate, W_up=w_up, W_down=w_down)
        code, out, err, _ = run_cli("prove", str(spec), "--format", "json")
        assert code == 0, err
        return json.loads(out)["queries"][0]["derivation"]  # type: ignore[no-any-return]

    d = verdict()
    assert (d["verdict"], d["decided_by"]) == ("not-absorbable", "cor-G1")
    w_up[4] = 2.0 * w_up[1]  # up rows collinear: still gated-nondegenerate
    assert verdict()["verdict"] == "not-absorbable"
    w_gate[4] = -4.0 * w_gate[1]  # gate rows collinear: Theorem G's necessity does not apply
    d = verdict()
    assert d["verdict"] == "open" and d["necessary"] == "open"


def test_the_catalog_shows_what_identity_assumes() -> None:
    """Issue 20: `identity` keeps its m >= d in the catalog (an absorbable verdict under an assumed size)."""
    from symabsorb import api
    from symabsorb.report.terminal import catalog_table

    rows = {r["activation"]: r for r in api.catalog().rows}
    assert rows["identity"]["verdict"] == "absorbable" and rows["identity"]["assumes"] == ["m ≥ d"]
    line = next(ln for ln in catalog_table(list(rows.values())).splitlines() if ln.startswith("identity"))
    assert line.rstrip().endswith("m ≥ d")
    assert rows["elu"]["assumes"] == [] and rows["elu"]["verdict"] == "impossible"
