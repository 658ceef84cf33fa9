"""Issue 25, deep stacks (MATH.md Part III, §14): Theorem 1D, Theorem FA's fold test, Theorem FD's certificate,
and the symbolic answers. Every verdict path has the input that would make it false: a stack just outside the
fold region, a hidden zero in a slope, a profile where the shortcut D_free would certify falsely, the absorbable
stack inside Ω, flip-absorbable blocks, GELU stacks (never Theorem FA or 1D's absorption)."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
import sympy as sp

from symabsorb.model import resolve_text
from symabsorb.theory.derivation import Scope, Verdict
from symabsorb.theory.hyp_deep import d_free, d_res, shortcut_d_free
from symabsorb.theory.library import default_library
from symabsorb.weights.deep import (
    Layer,
    _eye,
    check_fold_witness,
    fd_certificate,
    fold_test,
    fold_witness,
    jacobian_rows,
    layers_of,
    one_layer_equal,
)
from tests.helpers import decide, prove

SPEC = """
block g { activation: gelu dim: d width: 4*d }
stack gelu_deep = g ^ L
block r { activation: relu dim: d width: 4*d }
stack relu_deep = r ^ L
block wa { activation: relu dim: d width: 2*d }
block wb { activation: relu dim: d width: 3*d }
stack widening = [wa, wb]
block ga { activation: gelu dim: d width: 2*d }
block gb { activation: gelu dim: d width: 3*d }
stack gelu_widening = [ga, gb]
block r1s { activation: relu dim: 1 width: 3 }
block r0s { activation: relu dim: 1 width: 1 }
stack one_wide = [r1s, r1s]
stack one_fold = [r1s, r0s]
stack one_first = [r0s, r1s]
block c4 { activation: relu dim: 2 width: 4 }
stack e4 = c4 ^ 2
block c5 { activation: relu dim: 3 width: 12 }
stack eq3 = c5 ^ 2

block a { activation: relu dim: 1 width: 2 W_up: [[1], [-1]] W_down: [[2, 3]] }
block b { activation: relu dim: 1 width: 1 W_up: [[1]] W_down: [[1]] }
block bn { activation: relu dim: 1 width: 1 W_up: [[-1]] W_down: [[1]] }
block c { activation: relu dim: 1 width: 2 skip: [[cosh(1)^2 - sinh(1)^2]] W_up: [[1], [-1]] W_down: [[-1, 0]] }
block c1 { activation: relu dim: 1 width: 1 skip: [[cosh(1)^2 - sinh(1)^2]] W_up: [[1]] W_down: [[-1]] }
block pos { activation: relu dim: 1 width: 2 W_up: [[1], [-1]] W_down: [[1, -3]] }
block ga1 { activation: gelu dim: 1 width: 1 W_up: [[1]] W_down: [[2]] }
stack s3 = [a, b]
stack s3_pos = [pos, b]
stack s2 = [a, a]
stack s1 = [b, a]
stack s1_neg = [bn, a]
stack s3z = [c, b]
stack s1z = [c1, a]
stack gelu_one = [ga1, ga1]

block p { activation: relu dim: 2 width: 4 W_up: [[1, 0], [0, 1], [-1, 0], [0, -1]] W_down: [[3, 3, 3, 3], [1, 1, 1, 1]] }
block q { activation: relu dim: 2 width: 6 W_up: [[1, 0], [0, 1], [1, 1], [1, 2], [2, 1], [1, -1]]
    W_down: [[1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 0, 1]] }
block q_out { activation: relu dim: 2 width: 6 W_up: [[1, 0], [0, 1], [1, 1], [1, 2], [2, 1], [1, -3]]
    W_down: [[1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 0, 1]] }
block pg { activation: gelu dim: 2 width: 4 W_up: [[1, 0], [0, 1], [-1, 0], [0, -1]] W_down: [[3, 3, 3, 3], [1, 1, 1, 1]] }
block qg { activation: gelu dim: 2 width: 6 W_up: [[1, 0], [0, 1], [1, 1], [1, 2], [2, 1], [1, -1]]
    W_down: [[1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 0, 1]] }
stack fa = [p, q]
stack fa_out = [p, q_out]
stack fa_gelu = [pg, qg]

block n1 { activation: relu dim: 2 width: 4 W_up: [[1, 0], [0, 1], [1, 1], [1, -1]]
    W_down: [[1/10, 0, 1/20, 0], [0, 1/10, 0, 1/30]] }
block n2 { activation: relu dim: 2 width: 4 W_up: [[1, 2], [2, -1], [1, 3], [3, -1]]
    W_down: [[1/10, 0, 1/20, 1/50], [0, 1/10, 1/70, 1/30]] }
stack near_identity = [n1, n2]
block f1 { activation: relu dim: 2 width: 4 W_up: [[1, 0], [0, 1], [1, 1], [1, -1]]
    W_down: [[-1, 0, 1/3, 1/5], [0, -1, 1/7, -1/4]] }
block f2 { activation: relu dim: 2 width: 4 W_up: [[2, 1], [1, 3], [1, 1], [1, -2]]
    W_down: [[-3/5, 1/5, 1/4, 1/6], [1/5, -2/5, -1/3, 1/2]] }
stack flips = [f1, f2]
"""


@pytest.fixture(scope="module")
def stacks():  # type: ignore[no-untyped-def]
    return {s.name: s for s in resolve_text(SPEC).stacks}


def _decide(stack):  # type: ignore[no-untyped-def]
    return decide(stack, default_library())


# ---- symbolic stacks ---------------------------------------------------------------------------------------------


def test_gelu_deep_at_4d_states_cor_ni_and_stays_open(stacks) -> None:  # type: ignore[no-untyped-def]
    d = prove(stacks["gelu_deep"])
    assert d.verdict is Verdict.OPEN and d.decided_by == "open-deep"
    remarks = [s.text for s in d.steps if s.kind == "remark"]
    assert any("[cor-NI]" in t and "near the identity" in t for t in remarks)
    assert any("[conj-E]" in t and "conjecture" in t.lower() for t in remarks)
    assert "cor-NI" in d.cited and "thm-FD" in d.cited


@pytest.mark.parametrize("name", ["relu_deep", "e4", "eq3"])
def test_equal_widths_stay_open(stacks, name: str) -> None:  # type: ignore[no-untyped-def]
    d = prove(stacks[name])
    assert d.verdict is Verdict.OPEN
    e4 = any("[thm-E4]" in s.text and "on the fold region" in s.text for s in d.steps)
    assert e4 is (name == "e4")


def test_widening_profile_is_conditional_and_sufficient_only(stacks) -> None:  # type: ignore[no-untyped-def]
    d = prove(stacks["widening"])
    assert (d.verdict, d.decided_by, d.sufficient, d.necessary) == (Verdict.CONDITIONAL, "thm-FA", "proved", "open")
    assert any("[cor-NI]" in s.text for s in d.steps if s.kind == "remark")
    assert "generic" not in (d.condition or "")


def test_gelu_widening_never_gets_theorem_fa(stacks) -> None:  # type: ignore[no-untyped-def]
    d = prove(stacks["gelu_widening"])
    assert d.decided_by != "thm-FA" and d.verdict is Verdict.OPEN


@pytest.mark.parametrize(("name", "rid", "verdict"), [("one_wide", "thm-1D-c2", Verdict.ABSORBABLE),
                                                      ("one_fold", "thm-1D-c3", Verdict.CONDITIONAL),
                                                      ("one_first", "thm-1D-c1", Verdict.CONDITIONAL)])
def test_theorem_1d_symbolic_cases(stacks, name: str, rid: str, verdict: Verdict) -> None:  # type: ignore[no-untyped-def]
    d = prove(stacks[name])
    assert (d.decided_by, d.verdict) == (rid, verdict)


def test_symbolic_dimension_is_not_taken_for_one(stacks) -> None:  # type: ignore[no-untyped-def]
    assert not prove(stacks["relu_deep"]).decided_by.startswith("thm-1D")  # type: ignore[union-attr]


# ---- Theorem 1D on concrete weights --------------------------------------------------------------------------------


def _relu(x: sp.Expr) -> sp.Expr:
    return sp.Max(0, sp.simplify(sp.sympify(x).rewrite(sp.exp)))


def _slopes_of_witness(w) -> tuple[sp.Expr, sp.Expr]:  # type: ignore[no-untyped-def]
    out = []
    for t in (1, -1):
        y = sp.Integer(t)
        for layer in w.layers:
            y = sum((layer.w_down[0, j] * _relu(layer.w_up[j, 0] * y) for j in range(layer.w_up.rows)),
                    sp.Integer(0))
        out.append(sp.simplify(y))
    return out[0], -out[1]


@pytest.mark.parametrize(("name", "verdict"), [("s3", Verdict.ABSORBABLE), ("s2", Verdict.ABSORBABLE),
                                               ("s1", Verdict.NOT_ABSORBABLE), ("s1_neg", Verdict.ABSORBABLE),
                                               ("s3_pos", Verdict.NOT_ABSORBABLE), ("s3z", Verdict.ABSORBABLE),
                                               ("s1z", Verdict.ABSORBABLE)])
def test_theorem_1d_concrete(stacks, name: str, verdict: Verdict) -> None:  # type: ignore[no-untyped-def]
    d = _decide(stacks[name])
    assert d.verdict is verdict and d.scope == Scope.THESE
    if verdict is Verdict.ABSORBABLE:
        assert d.witness is not None and len(d.witness.layers) == 2
        for layer, block in zip(d.witness.layers, stacks[name].blocks, strict=True):
            assert layer.w_up.rows == block.width  # the same widths
        # the witness's slopes are F's: α = F(1), β = −F(−1) (recomputed independently here)
        y1, ym = sp.Integer(1), sp.Integer(-1)
        for block in stacks[name].blocks:
            mu = block.skip.matrix[0, 0] if block.skip.matrix is not None else 1
            y1 = mu * y1 + sum((block.w_down[0, j] * _relu(block.w_up[j, 0] * y1) for j in range(block.width)),
                               sp.Integer(0))
            ym = mu * ym + sum((block.w_down[0, j] * _relu(block.w_up[j, 0] * ym) for j in range(block.width)),
                               sp.Integer(0))
        got = _slopes_of_witness(d.witness)
        assert sp.simplify((got[0] - y1).rewrite(sp.exp)) == 0 and sp.simplify((got[1] + ym).rewrite(sp.exp)) == 0


def test_a_hidden_zero_slope_is_zero_exactly(stacks) -> None:  # type: ignore[no-untyped-def]
    d = _decide(stacks["s3z"])  # α = (cosh²1 − sinh²1) − 1 = 0 exactly: αβ = 0 ≤ 0
    assert d.verdict is Verdict.ABSORBABLE and any("is zero" in s.text for s in d.steps)


def test_gelu_d1_is_never_absorbed_by_theorem_1d(stacks) -> None:  # type: ignore[no-untyped-def]
    d = _decide(stacks["gelu_one"])
    assert not (d.decided_by or "").startswith("thm-1D") and d.verdict is not Verdict.ABSORBABLE


# ---- Theorem FA on concrete weights --------------------------------------------------------------------------------


def _float_stack(layers, x):  # type: ignore[no-untyped-def]
    import numpy as np

    y = x
    for lay in layers:
        y = np.array(lay.m, dtype=float) @ y + np.array(lay.w, dtype=float) @ np.maximum(np.array(lay.u, dtype=float) @ y, 0)
    return y


def test_fold_witness_absorbs_and_is_checked_exactly(stacks) -> None:  # type: ignore[no-untyped-def]
    d = _decide(stacks["fa"])
    assert (d.verdict, d.decided_by, d.scope) == (Verdict.ABSORBABLE, "thm-FA", Scope.THESE)
    w = d.witness
    assert w is not None and [lay.w_up.rows for lay in w.layers] == [4, 6]
    np = pytest.importorskip("numpy")
    layers = layers_of(stacks["fa"])
    rng = np.random.default_rng(0)
    for x in rng.normal(size=(200, 2)):
        y = x
        for lay in w.layers:
            y = np.array(lay.w_down.tolist(), dtype=float) @ np.maximum(np.array(lay.w_up.tolist(), dtype=float) @ y, 0)
        assert np.allclose(y, _float_stack(layers, x), atol=1e-9)


def test_just_outside_the_fold_region_stays_open(stacks) -> None:  # type: ignore[no-untyped-def]
    layers = layers_of(stacks["fa_out"])
    assert fold_test(layers).state == "no-fold"
    d = _decide(stacks["fa_out"])
    assert d.verdict is Verdict.OPEN and d.verdict is not Verdict.NOT_ABSORBABLE


def test_a_perturbed_fold_witness_fails_the_exact_check(stacks) -> None:  # type: ignore[no-untyped-def]
    layers = layers_of(stacks["fa"])
    fold = fold_test(layers)
    wit = fold_witness(layers, fold, [4, 6])
    assert wit is not None and check_fold_witness(layers, fold, wit)
    up, down = wit[1]
    bad = [list(r) for r in down]
    bad[0][0] += Fraction(1, 10**9)
    assert not check_fold_witness(layers, fold, [wit[0], (up, bad)])


def test_gelu_fold_is_never_absorbed(stacks) -> None:  # type: ignore[no-untyped-def]
    d = _decide(stacks["fa_gelu"])
    assert d.verdict is not Verdict.ABSORBABLE and d.decided_by != "thm-FA"


def test_one_layer_equality_is_exact() -> None:
    zero = [[Fraction(0)] * 2 for _ in range(2)]
    eye = _eye(2)
    up = [[Fraction(1), Fraction(0)], [Fraction(-1), Fraction(0)], [Fraction(0), Fraction(2)], [Fraction(0), Fraction(-1)]]
    down = [[Fraction(1), Fraction(-1), Fraction(0), Fraction(0)], [Fraction(0), Fraction(0), Fraction(1, 2), Fraction(-1)]]
    assert one_layer_equal(zero, up, down, eye, [], [[], []])
    down[1][3] = Fraction(-2)
    assert not one_layer_equal(zero, up, down, eye, [], [[], []])


# ---- Theorem FD ---------------------------------------------------------------------------------------------------


def test_lemma_f_general_formula() -> None:
    assert d_free(3, [12, 12]) == 111 and d_free(2, [4, 4]) == 20
    assert (shortcut_d_free(3, [1, 1]), d_free(3, [1, 1])) == (1, 5)
    for d in range(1, 5):
        for widths in ([d, d], [2 * d, 3 * d, d + 1], [4 * d] * 3):
            assert d_free(d, widths) == shortcut_d_free(d, widths)  # equal when every m_k >= d
            assert d_free(d, widths) < d_res(d, widths)


def test_near_identity_gets_the_certificate_and_is_not_called_not_absorbable(stacks) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("flint", reason="python-flint (rank modulo a prime); the certificate also runs over Q")
    d = _decide(stacks["near_identity"])
    assert d.verdict is Verdict.OPEN and d.scope == Scope.NEAR and d.decided_by == "thm-FD"
    text = " ".join(s.text for s in d.steps)
    assert "almost every weight near these is not absorbable (Theorem FD, certificate: rank 24 > D_free = 20)" in text
    assert "these weights themselves are not decided" in text
    assert d.depth_certificate is not None and d.depth_certificate.certified


def test_absorbable_inside_omega_stays_absorbable(stacks) -> None:  # type: ignore[no-untyped-def]
    """§14.3: d = 2, (4, 4), every block with W_S = −I: inside Ω (the certificate succeeds) and absorbable by
    composing flips; the verdict is absorbable, never "not absorbable"."""
    layers = layers_of(stacks["flips"])
    assert fd_certificate(layers).certified
    d = _decide(stacks["flips"])
    assert d.verdict is Verdict.ABSORBABLE and d.decided_by == "depth-witnesses"


def test_the_shortcut_would_certify_falsely_where_some_width_is_below_d() -> None:
    """d = 3, widths (1, 1), W = 0 and the same row twice: the Jacobian has rank 3, above the shortcut's 1 but not
    above Lemma F's 5: no certificate (the shortcut would have issued one)."""
    eye = _eye(3)
    row = [[Fraction(1), Fraction(2), Fraction(-1)]]
    zero_w = [[Fraction(0)] for _ in range(3)]
    cert = fd_certificate([Layer(eye, zero_w, row), Layer(eye, zero_w, row)])
    assert cert.rank == 3 and cert.rank > shortcut_d_free(3, [1, 1])
    assert not cert.certified and cert.d_free == 5


def test_the_jacobian_matches_finite_differences() -> None:
    np = pytest.importorskip("numpy")
    rng = random.Random(3)
    d, widths = 3, [5, 4]

    def rnd(r: int, c: int) -> list[list[Fraction]]:
        return [[Fraction(rng.randint(-9, 9), rng.randint(1, 5)) for _ in range(c)] for _ in range(r)]

    layers = [Layer(rnd(d, d), rnd(d, m), rnd(m, d)) for m in widths]
    x = [Fraction(rng.randint(-9, 9), 7) for _ in range(d)]
    rows = jacobian_rows(layers, x)
    assert rows is not None
    jac = np.array([[float(v) for v in r] for r in rows])
    params = []
    for lay in layers:
        params += [float(lay.w[i][j]) for j in range(lay.width) for i in range(d)]
        params += [float(lay.u[j][i]) for j in range(lay.width) for i in range(d)]
    p = np.array(params)

    def f(q):  # type: ignore[no-untyped-def]
        y, k = np.array([float(v) for v in x]), 0
        for lay, m in zip(layers, widths, strict=True):
            w = q[k:k + d * m].reshape(m, d).T
            k += d * m
            u = q[k:k + m * d].reshape(m, d)
            k += m * d
            y = np.array(lay.m, dtype=float) @ y + w @ np.maximum(u @ y, 0)
        return y

    h = 1e-6
    num = np.array([(f(p + h * e) - f(p - h * e)) / (2 * h) for e in np.eye(len(p))]).T
    assert np.abs(num - jac).max() < 1e-4 * max(1.0, np.abs(jac).max())


def test_gelu_near_identity_gets_the_certificate_through_lemma_t() -> None:
    pytest.importorskip("flint", reason="python-flint (rank modulo a prime)")
    spec = """
    block g1 { activation: gelu dim: 2 width: 4 W_up: [[1, 0], [0, 1], [1, 1], [1, -1]]
        W_down: [[1/10, 0, 1/20, 0], [0, 1/10, 0, 1/30]] }
    block g2 { activation: silu dim: 2 width: 4 W_up: [[1, 2], [2, -1], [1, 3], [3, -1]]
        W_down: [[1/10, 0, 1/20, 1/50], [0, 1/10, 1/70, 1/30]] }
    stack s = [g1, g2]
    """
    stack = resolve_text(spec).stacks[0]
    d = _decide(stack)
    assert (d.verdict, d.scope) == (Verdict.OPEN, Scope.NEAR)
    assert any("Lemma T" in s.text for s in d.steps)


# ---- reports and verify ---------------------------------------------------------------------------------------------

VERIFY_SPEC = """
block a { activation: relu dim: 1 width: 2 W_up: [[1], [-1]] W_down: [[2, 3]] }
block b { activation: relu dim: 1 width: 1 W_up: [[1]] W_down: [[1]] }
stack s3 = [a, b]
block p { activation: relu dim: 2 width: 4 W_up: [[1, 0], [0, 1], [-1, 0], [0, -1]] W_down: [[3, 3, 3, 3], [1, 1, 1, 1]] }
block q { activation: relu dim: 2 width: 6 W_up: [[1, 0], [0, 1], [1, 1], [1, 2], [2, 1], [1, -1]]
    W_down: [[1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 0, 1]] }
stack fa = [p, q]
block n1 { activation: relu dim: 2 width: 4 W_up: [[1, 0], [0, 1], [1, 1], [1, -1]]
    W_down: [[1/10, 0, 1/20, 0], [0, 1/10, 0, 1/30]] }
block n2 { activation: relu dim: 2 width: 4 W_up: [[1, 2], [2, -1], [1, 3], [3, -1]]
    W_down: [[1/10, 0, 1/20, 1/50], [0, 1/10, 1/70, 1/30]] }
stack ni = [n1, n2]
absorb s3
absorb fa
absorb ni
"""


def _report(tmp_path):  # type: ignore[no-untyped-def]
    import json

    from symabsorb.model import resolve_text
    from symabsorb.report.jsonout import render_json
    from tests.helpers import build_report

    path = tmp_path / "deep.absorb"
    path.write_text(VERIFY_SPEC, encoding="utf-8")
    report = build_report(resolve_text(VERIFY_SPEC, str(path)), VERIFY_SPEC)
    out = tmp_path / "deep.json"
    out.write_text(render_json(report), encoding="utf-8")
    return out, json.loads(out.read_text(encoding="utf-8"))


def test_json_validates_and_verify_rechecks_every_deep_witness_and_certificate(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("flint", reason="python-flint (rank modulo a prime)")
    from symabsorb.report.jsonout import schema
    from tests.helpers import verify_report

    path, data = _report(tmp_path)
    jsonschema.validate(data, schema())
    scopes = {q["query"]: (q["derivation"]["verdict"], q["derivation"]["scope"]) for q in data["queries"]}
    assert scopes["absorb ni"] == ("open", "almost every weight near these")
    checked = verify_report(path)
    assert len(checked) == 3 and all(c.ok for c in checked), checked
    # tampering: a witness entry, a certificate point, a claimed verdict
    for edit in ("witness", "point", "verdict", "fold-verdict"):
        bad = json.loads(json.dumps(data))
        qs = {q["query"]: q for q in bad["queries"]}
        if edit == "witness":
            qs["absorb fa"]["derivation"]["witness"]["layers"][1]["W_down"][0][0] = "23"
        elif edit == "point":
            qs["absorb ni"]["derivation"]["depth_certificate"]["points"] = [["1", "0"], ["0", "1"]]
        elif edit == "verdict":
            qs["absorb ni"]["derivation"]["verdict"] = "not-absorbable"
        else:
            qs["absorb fa"]["derivation"]["verdict"] = "not-absorbable"
            qs["absorb fa"]["derivation"]["witness"] = None
        p = tmp_path / f"bad-{edit}.json"
        p.write_text(json.dumps(bad), encoding="utf-8")
        assert not all(c.ok for c in verify_report(p)), edit


def test_the_depth_example_shows_each_case() -> None:
    from symabsorb.model import load_spec
    from tests.helpers import EXAMPLES, build_report

    path = EXAMPLES / "depth.absorb"
    report = build_report(load_spec(path), path.read_text(encoding="utf-8"))
    got = {a.query.split()[-1]: (a.derivation.verdict.value, a.derivation.decided_by, str(a.derivation.scope))
           for a in report.answers if a.derivation is not None}
    assert got["relu_equal"][:2] == ("open", "open-deep")
    assert got["gelu_equal"][:2] == ("open", "open-deep")
    assert got["widening"][:2] == ("conditional", "thm-FA")
    assert got["one_wide"][:2] == ("absorbable", "thm-1D-c2")
    assert got["one_fold"][:2] == ("conditional", "thm-1D-c3")
    assert got["one_first"][:2] == ("conditional", "thm-1D-c1")
    assert got["e4"][:2] == ("open", "open-deep")
    assert got["d1_fold_yes"] == ("absorbable", "thm-1D-c3", "these weights")
    assert got["d1_fold_no"] == ("not-absorbable", "thm-1D-c3", "these weights")
    assert got["d1_first_no"] == ("not-absorbable", "thm-1D-c1", "these weights")
    assert got["fold_yes"] == ("absorbable", "thm-FA", "these weights")
    assert got["fold_no"][0] == "open"
    assert got["flips"][:2] == ("absorbable", "depth-witnesses")
    assert got["narrow_first"][:2] == ("not-absorbable", "thm-D1")
    if __import__("importlib").util.find_spec("flint") is not None:
        assert got["near_identity"] == ("open", "thm-FD", "almost every weight near these")
    assert all(v[0] != "not-absorbable" or v[2] == "these weights" for v in got.values())


def test_gelu_d1_not_absorbable_side_transfers_through_lemma_t_and_the_absorbable_side_does_not() -> None:
    spec = """
    block g2 { activation: gelu dim: 1 width: 2 W_up: [[1], [-1]] W_down: [[1, -3]] }
    block g1 { activation: gelu dim: 1 width: 1 W_up: [[1]] W_down: [[1]] }
    block ga { activation: gelu dim: 1 width: 2 W_up: [[1], [-1]] W_down: [[2, 3]] }
    stack no = [g2, g1]
    stack yes = [ga, g1]
    """
    got = {s.name: _decide(s) for s in resolve_text(spec).stacks}
    assert (got["no"].verdict, got["no"].decided_by) == (Verdict.NOT_ABSORBABLE, "thm-1D-c3")
    assert "lemma-T" in got["no"].cited
    assert got["yes"].verdict is Verdict.OPEN  # alpha*beta < 0: the ReLU stack is absorbable, the GELU one open


def test_fold_in_dimension_three_and_a_rank_deficient_first_layer() -> None:
    np = pytest.importorskip("numpy")
    spec = """
    block p3 { activation: relu dim: 3 width: 6
        W_up: [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]]
        W_down: [[100, 100, 100, 100, 100, 100], [100, 100, 100, 100, 100, 100], [100, 100, 100, 100, 100, 100]] }
    block q3 { activation: relu dim: 3 width: 9
        W_up: [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1], [1, 1, 1], [2, -1, 0], [-1, 2, 0]]
        W_down: [[1, 0, 0, 1, 0, 0, 1, 0, 1], [0, 1, 0, 0, 1, 0, 0, 1, 0], [0, 0, 1, 0, 0, 1, 0, 1, 1]] }
    block flat { activation: relu dim: 2 width: 4 W_up: [[1, 0], [2, 0], [-1, 0], [3, 0]]
        W_down: [[3, 3, 3, 3], [1, 1, 1, 1]] }
    block q { activation: relu dim: 2 width: 6 W_up: [[1, 0], [0, 1], [1, 1], [1, 2], [2, 1], [1, -1]]
        W_down: [[1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 0, 1]] }
    stack s3 = [p3, q3]
    stack srank = [flat, q]
    """
    st = {s.name: s for s in resolve_text(spec).stacks}
    d = _decide(st["s3"])
    assert (d.verdict, d.decided_by) == (Verdict.ABSORBABLE, "thm-FA")
    layers = layers_of(st["s3"])
    rng = np.random.default_rng(1)
    for x in rng.normal(size=(100, 3)):
        y = x
        for lay in d.witness.layers:  # type: ignore[union-attr]
            y = np.array(lay.w_down.tolist(), dtype=float) @ np.maximum(np.array(lay.w_up.tolist(), dtype=float) @ y, 0)
        assert np.allclose(y, _float_stack(layers, x), rtol=1e-9, atol=1e-6)
    assert fold_test(layers_of(st["srank"])).state == "open"  # rank U_1 = 1 < d: no witness, the ray test not exact
    assert _decide(st["srank"]).verdict is Verdict.OPEN


@pytest.mark.parametrize(("eps", "state"), [("1/1000000", "fold"), ("0", "fold"), ("-1/1000000", "no-fold")])
def test_the_fold_boundary_is_decided_exactly(eps: str, state: str) -> None:
    """Row (ε, 1) of the second block on the image ray R_1(0, −1) = (3, 0): sign of 3ε. ε > 0: strict fold; ε = 0:
    weak fold (pointwise); ε < 0, however small: just outside, both signs, open."""
    spec = f"""
    block p {{ activation: relu dim: 2 width: 4 W_up: [[1, 0], [0, 1], [-1, 0], [0, -1]] W_down: [[3, 3, 3, 3], [1, 1, 1, 1]] }}
    block q {{ activation: relu dim: 2 width: 6 W_up: [[1, 0], [{eps}, 1], [1, 1], [1, 2], [2, 1], [1, -1]]
        W_down: [[1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 0, 1]] }}
    stack s = [p, q]
    """
    stack = resolve_text(spec).stacks[0]
    fold = fold_test(layers_of(stack))
    assert fold.state == state and fold.strict is (eps == "1/1000000")
    d = _decide(stack)
    assert d.verdict is (Verdict.ABSORBABLE if state == "fold" else Verdict.OPEN)


def test_theorem_1d_on_random_stacks_agrees_with_an_independent_evaluation() -> None:
    """Random d = 1 stacks (widths 1..3, skips ±1, ±2): the verdict follows the case and αβ computed here
    independently in Fractions; every witness reproduces F at ±1 (and so everywhere)."""
    rng = random.Random(2024)
    for _ in range(20):
        widths = [rng.randint(1, 3) for _ in range(rng.randint(2, 3))]
        lines, names = [], []
        for k, m in enumerate(widths):
            up = ", ".join(f"[{rng.randint(-3, 3)}]" for _ in range(m))
            down = ", ".join(str(rng.randint(-3, 3)) for _ in range(m))
            mu = rng.choice([-2, -1, 1, 2])
            lines.append(f"block b{k} {{ activation: relu dim: 1 width: {m} skip: [[{mu}]] W_up: [{up}] "
                         f"W_down: [[{down}]] }}")
            names.append(f"b{k}")
        spec = "\n".join(lines) + f"\nstack s = [{', '.join(names)}]\n"
        stack = resolve_text(spec).stacks[0]
        layers = layers_of(stack)
        assert layers is not None

        def f(t: Fraction) -> Fraction:
            y = [t]
            for lay in layers:  # noqa: B023
                y = lay(y)
            return y[0]

        alpha, beta = f(Fraction(1)), -f(Fraction(-1))
        d = _decide(stack)
        if widths[0] == 1:
            expect = alpha * beta == 0
        elif 1 in widths[1:]:
            expect = alpha * beta <= 0
        else:
            expect = True
        assert d.verdict is (Verdict.ABSORBABLE if expect else Verdict.NOT_ABSORBABLE), (spec, alpha, beta)
        if expect:
            assert d.witness is not None
            for t, want in ((1, alpha), (-1, -beta)):
                y = sp.Integer(t)
                for lay in d.witness.layers:
                    y = sum((lay.w_down[0, j] * sp.Max(0, lay.w_up[j, 0] * y) for j in range(lay.w_up.rows)),
                            sp.Integer(0))
                assert y == sp.Rational(want.numerator, want.denominator)
