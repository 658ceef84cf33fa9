"""Round 3b referee of Cor. R-aff-2 (N2, units on parallel hyperplanes; MATH.md §8): attacks on the
hinge recogniser, the N2 check and the settings. Every `absorbable` witness is re-evaluated here in
exact rationals (no symabsorb code); every `not-absorbable` is one the necessity proof covers (hinge at
0 with α₊ ≠ α₋, α₊ + α₋ ≠ 0, pairwise non-collinear (w_i, b_i), a_i ≠ 0, no subset sum W_S = −M/(2c))."""

from __future__ import annotations

import random
from collections.abc import Callable
from fractions import Fraction

import pytest

from symabsorb.model import resolve_text
from symabsorb.theory.derivation import Verdict
from symabsorb.theory.library import default_library
from tests.helpers import decide

F = Fraction
Act = Callable[[Fraction], Fraction]


def _block(act: str, wu: str, wd: str, extra: str, dim: int = 1, prelude: str = ""):  # type: ignore[no-untyped-def]
    width = wu.count("[") - 1
    text = f"{prelude}block b {{ activation: {act} dim: {dim} width: {width} W_up: {wu} W_down: {wd} {extra} }}"
    return decide(next(b for b in resolve_text(text).blocks if b.name == "b"), default_library())


def _mat(rows: list[list[object]]) -> list[list[Fraction]]:
    return [[F(str(v)) for v in r] for r in rows]


def _mlp(x: list[Fraction], wu: list[list[Fraction]], bu: list[Fraction], wd: list[list[Fraction]],
         bd: list[Fraction], sig: Act) -> list[Fraction]:
    h = [sig(sum((a * b for a, b in zip(row, x, strict=True)), F(0)) + c) for row, c in zip(wu, bu, strict=True)]
    return [sum((a * v for a, v in zip(row, h, strict=True)), F(0)) + c for row, c in zip(wd, bd, strict=True)]


def _check_witness(d, wu, bu, wd, bd, skip, sig: Act) -> None:  # type: ignore[no-untyped-def]
    """x ↦ Mx + B(x) equals the witness B' at 400 random rational points, exactly."""
    w = d.witness
    assert w is not None
    wu2, wd2 = _mat(w.w_up.tolist()), _mat(w.w_down.tolist())
    bu2 = [F(str(v)) for v in list(w.b_up)] if w.b_up is not None else [F(0)] * len(wu2)
    bd2 = [F(str(v)) for v in list(w.b_down)] if w.b_down is not None else [F(0)] * len(wd2)
    assert len(wu2) == len(wu)  # same width
    rng = random.Random(7)
    dim = len(wu[0])
    for _ in range(400):
        x = [F(rng.randint(-60, 60), rng.randint(1, 9)) for _ in range(dim)]
        left = [sum((m * v for m, v in zip(row, x, strict=True)), F(0)) + y
                for row, y in zip(skip, _mlp(x, wu, bu, wd, bd, sig), strict=True)]
        assert left == _mlp(x, wu2, bu2, wd2, bd2, sig)


def relu(s: Fraction) -> Fraction:
    return max(s, F(0))


def test_collinear_scaled_and_negated_pairs_only_sufficient() -> None:
    # (1,1) vs (2,2) and (1,1) vs (-1,-1): one hyperplane, N2 fails; R-aff-2 must not decide, and the
    # sufficient witness found instead must be exact
    d = _block("relu", "[[1], [2]]", "[[-1/2, -1/2]]", "b_up: [1, 2] b_down: [0]")
    assert d.decided_by != "R-aff-2" and d.verdict is Verdict.ABSORBABLE
    _check_witness(d, [[F(1)], [F(2)]], [F(1), F(2)], [[F(-1, 2), F(-1, 2)]], [F(0)], [[F(1)]], relu)
    d = _block("relu", "[[1], [-1]]", "[[-1, 1]]", "b_up: [1, -1] b_down: [0]")
    assert d.decided_by != "R-aff-2" and d.verdict is Verdict.ABSORBABLE
    _check_witness(d, [[F(1)], [F(-1)]], [F(1), F(-1)], [[F(-1), F(1)]], [F(0)], [[F(1)]], relu)
    # (1,0) vs (-1,0) with b = 0: collinear as well (N1 fails too)
    d = _block("relu", "[[1], [-1]]", "[[-1/4, -1/4]]", "b_up: [0, 0] b_down: [0]")
    assert d.decided_by != "R-aff-2" and d.verdict is not Verdict.NOT_ABSORBABLE


@pytest.mark.parametrize("prelude, sig, wd, expect, index", [
    # 3·relu: c = 3/2, target -1/3
    ("activation t(z) = 3*max(z, 0)\n", lambda s: 3 * max(s, F(0)), "[[-1/3, 5]]", Verdict.ABSORBABLE, (0,)),
    ("activation t(z) = 3*max(z, 0)\n", lambda s: 3 * max(s, F(0)), "[[-1, 5]]", Verdict.NOT_ABSORBABLE, None),
    # -relu: c = -1/2, target +1
    ("activation t(z) = -max(z, 0)\n", lambda s: -max(s, F(0)), "[[1, 5]]", Verdict.ABSORBABLE, (0,)),
    # min(z, 0): α₊ = 0, α₋ = 1, target -1; subset sums 0, 1, 5, 6
    ("activation t(z) = min(z, 0)\n", lambda s: min(s, F(0)), "[[1, 5]]", Verdict.NOT_ABSORBABLE, None),
    # slope -2 on the left: c = -1/2, target +1
    ("activation t(z) = if z >= 0 then z else -2*z\n", lambda s: s if s >= 0 else -2 * s, "[[1, 5]]",
     Verdict.ABSORBABLE, (0,)),
    ("activation t(z) = if z >= 0 then z else -2*z\n", lambda s: s if s >= 0 else -2 * s, "[[-1/2, 5]]",
     Verdict.NOT_ABSORBABLE, None),
])
def test_scaled_and_signed_hinges(prelude: str, sig: Act, wd: str, expect: Verdict, index) -> None:  # type: ignore[no-untyped-def]
    d = _block("t", "[[1], [1]]", wd, "b_up: [0, 1] b_down: [0]", prelude=prelude)
    assert d.verdict is expect and d.decided_by == "R-aff-2"
    if expect is Verdict.ABSORBABLE:
        assert tuple(d.witness.index_set) == index
        wdm = [[F(v) for v in wd.strip("[]").split(", ")]]
        _check_witness(d, [[F(1)], [F(1)]], [F(0), F(1)], wdm, [F(0)], [[F(1)]], sig)


@pytest.mark.parametrize("prelude", [
    "activation a(z) = abs(z)\n",                           # α₊ + α₋ = 0
    "activation a(z) = if z >= 0 then z else -z\n",         # leaky slope -1
    "activation a(z) = if z >= 0 then z else z\n",          # slope 1: linear
    "activation a(z) = max(z, 0) + z^3/1000\n",             # a tiny extra term
    "activation a(z) = max(z, 1) - 1\n",                    # kink not at 0
    "activation a(z; alpha > 0) = if z >= 0 then z else alpha*z\n",  # alpha = 1 allowed
])
def test_non_hinges_never_decided_by_r_aff_2(prelude: str) -> None:
    d = _block("a", "[[1], [1]]", "[[-1, 5]]", "b_up: [0, 1] b_down: [0]", prelude=prelude)
    assert d.decided_by != "R-aff-2" and d.verdict is not Verdict.NOT_ABSORBABLE


def test_prelu_parameter_in_an_open_interval_is_not_refuted() -> None:
    # 0 < alpha < 1: target -2/(1+alpha) ranges over (-2, -1); W_S = -3/2 at alpha = 1/3, so never
    # "not absorbable" for all alpha
    pre = "activation p(z; 0 < alpha < 1) = if z >= 0 then z else alpha*z\n"
    for wd in ("[[-3/2, 5]]", "[[-1/2, 5]]"):
        d = _block("p", "[[1], [1]]", wd, "b_up: [0, 1] b_down: [0]", prelude=pre)
        assert d.verdict is not Verdict.NOT_ABSORBABLE


def test_absorber_without_biases_is_not_decided_by_r_aff_2() -> None:
    for wd in ("[[-1, 3]]", "[[-1/2, -1/4]]"):
        d = _block("relu", "[[1], [1]]", wd, "b_up: [0, 1] b_down: [1/2] absorber_bias: false")
        assert d.decided_by != "R-aff-2"


def test_no_output_bias_in_the_block_witness_is_exact() -> None:
    # b_up given, no b_down: the witness needs an output bias (2c·W_S b_S = 0 here, but check exactly)
    d = _block("relu", "[[1], [1]]", "[[3, -1]]", "b_up: [0, 1]")
    assert d.verdict is Verdict.ABSORBABLE and d.decided_by == "R-aff-2"
    _check_witness(d, [[F(1)], [F(1)]], [F(0), F(1)], [[F(3), F(-1)]], [F(0)], [[F(1)]], relu)


def test_two_dimensional_parallel_and_opposite_rows_witnesses_are_exact() -> None:
    # opposite directions, distinct hyperplanes x = -1 and x = 1: N2 holds; S = all units
    d = _block("relu", "[[1, 0], [-1, 0], [0, 1]]", "[[-1/2, 1/2, 0], [0, 0, -1]]", "b_up: [1, 1, 0] b_down: [0, 0]",
               dim=2)
    assert d.verdict is Verdict.ABSORBABLE and d.decided_by == "R-aff-2"
    _check_witness(d, _mat([[1, 0], [-1, 0], [0, 1]]), [F(1), F(1), F(0)], _mat([[-0.5, 0.5, 0], [0, 0, -1]]),
                   [F(0), F(0)], [[F(1), F(0)], [F(0), F(1)]], relu)
    # scaled directions (1,0), (2,0) with biases 0, 1, and an output bias
    d = _block("relu", "[[1, 0], [2, 0], [0, 1]]", "[[-1, 7, 0], [0, 3, -1]]", "b_up: [0, 1, 5] b_down: [1, 2]",
               dim=2)
    assert d.verdict is Verdict.ABSORBABLE and d.decided_by == "R-aff-2"
    _check_witness(d, _mat([[1, 0], [2, 0], [0, 1]]), [F(0), F(1), F(5)], _mat([[-1, 7, 0], [0, 3, -1]]),
                   [F(1), F(2)], [[F(1), F(0)], [F(0), F(1)]], relu)


def test_skip_matrix_and_norms() -> None:
    d = _block("relu", "[[1], [1]]", "[[-2, -1/4]]", "b_up: [0, 1] b_down: [0] skip: [[2]]")
    assert d.verdict is Verdict.ABSORBABLE and d.decided_by == "R-aff-2"
    _check_witness(d, [[F(1)], [F(1)]], [F(0), F(1)], [[F(-2), F(-1, 4)]], [F(0)], [[F(2)]], relu)
    # pre-norm: never R-aff-2 (its setting is norm = none)
    d = _block("relu", "[[1], [1]]", "[[-1/2, -1/4]]", "b_up: [0, 1] b_down: [0] norm: pre-ln")
    assert d.decided_by != "R-aff-2"
    # gated: never R-aff-2
    d = _block("swiglu", "[[1], [1]]", "[[-1/2, -1/4]]", "b_up: [0, 1] b_down: [0] W_gate: [[1], [1]]")
    assert d.decided_by != "R-aff-2" and d.verdict is not Verdict.NOT_ABSORBABLE


def test_collinear_pairs_are_really_absorbable_when_the_criterion_fails() -> None:
    # why N2 must exclude (w, b) ~ λ(w, b) for λ of either sign: the criterion has no solution, yet a
    # width-2 biased absorber exists (checked exactly). The engine must not say "not absorbable".
    xs = [F(k, 7) for k in range(-80, 81)]
    # (1,1), (2,2), a = (-1/4, -1/4): subset sums 0, -1/4, -1/2, -3/4, never -1
    for x in xs:
        left = x - F(1, 4) * relu(x + 1) - F(1, 4) * relu(2 * x + 2)
        assert left == F(1, 4) * relu(x + 1) - relu(-x - 1) - 1
    d = _block("relu", "[[1], [2]]", "[[-1/4, -1/4]]", "b_up: [1, 2] b_down: [0]")
    assert d.verdict is not Verdict.NOT_ABSORBABLE and d.decided_by != "R-aff-2"
    # (1,1), (-1,-1), a = (-1/4, -1/4): subset sums 0, -1/4, 1/4, never -1
    for x in xs:
        left = x - F(1, 4) * relu(x + 1) - F(1, 4) * relu(-x - 1)
        assert left == F(3, 4) * relu(x + 1) - F(5, 4) * relu(-x - 1) - 1
    d = _block("relu", "[[1], [-1]]", "[[-1/4, -1/4]]", "b_up: [1, -1] b_down: [0]")
    assert d.verdict is not Verdict.NOT_ABSORBABLE and d.decided_by != "R-aff-2"


def test_file_weights_with_parallel_rows_stay_open(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # N2 is not implemented for weight files: R-aff-1's N1 check keeps them open (collinear or not)
    np = pytest.importorskip("numpy")
    from symabsorb.model.resolve import load_spec

    for name, up, b in (("collinear", [[1.0], [2.0]], [1.0, 2.0]), ("parallel", [[1.0], [1.0]], [0.0, 1.0])):
        np.savez(tmp_path / f"{name}.npz", W_up=np.array(up), W_down=np.array([[-0.25, -0.25]]), bu=np.array(b),
                 bd=np.zeros(1))
        spec = tmp_path / f"{name}.absorb"
        spec.write_text(f'block b {{ activation: relu weights: "{name}.npz" up_bias: "bu" down_bias: "bd" }}\n')
        d = decide(load_spec(spec).blocks[0], default_library())
        assert d.verdict is not Verdict.NOT_ABSORBABLE and d.decided_by != "R-aff-2"
