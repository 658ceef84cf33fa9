"""Units on parallel hyperplanes (MATH.md §8, N2): for a hinge at 0 (ReLU, leaky with slope ≠ ±1) the
biased criterion of Cor. R-aff-1 holds under N2 — the pairs (w_i, b_i) pairwise non-collinear — even
when N1 fails because units share a direction. Other σ, collinear pairs and constant units: open."""

from __future__ import annotations

from fractions import Fraction

import pytest

from symabsorb.dsl.errors import SpecError
from symabsorb.model import resolve_text
from symabsorb.theory.derivation import Verdict
from symabsorb.theory.library import default_library
from tests.helpers import ROOT, decide

LEAKY = "activation leaky(z) = max(z, z/10)\n"


def _decide(act: str, w_up: str, w_down: str, b_up: str, b_down: str, dim: int = 1, prelude: str = ""):  # type: ignore[no-untyped-def]
    width = w_up.count("[") - 1
    text = (f"{prelude}block b {{ activation: {act} dim: {dim} width: {width} W_up: {w_up} W_down: {w_down} "
            f"b_up: {b_up} b_down: {b_down} }}")
    block = next(b for b in resolve_text(text).blocks if b.name == "b")
    return decide(block, default_library())


def _leaky(s: Fraction, alpha: Fraction) -> Fraction:
    return s if s > 0 else alpha * s


def test_planted_parallel_relu_units_are_absorbable_with_an_exact_witness() -> None:
    # x + (-1) relu(x) + 3 relu(x + 1) + 1/2: flipping unit 0 absorbs the skip (W_S = -M/(2c), c = 1/2)
    d = _decide("relu", "[[1], [1]]", "[[-1, 3]]", "[0, 1]", "[1/2]")
    assert d.verdict is Verdict.ABSORBABLE and d.decided_by == "R-aff-2"
    w = d.witness
    assert w is not None and tuple(w.index_set) == (0,)
    # the witness, evaluated exactly at rationals (no symabsorb code)
    wu = [Fraction(str(r[0])) for r in w.w_up.tolist()]
    wd = [Fraction(str(v)) for v in w.w_down.tolist()[0]]
    bu = [Fraction(str(v)) for v in list(w.b_up)]
    bd = Fraction(str(w.b_down[0]))
    for k in range(-40, 41):
        x = Fraction(k, 7)
        residual = x - max(x, Fraction(0)) + 3 * max(x + 1, Fraction(0)) + Fraction(1, 2)
        absorbed = sum(a * max(u * x + b, Fraction(0)) for a, u, b in zip(wd, wu, bu, strict=True)) + bd
        assert residual == absorbed


def test_parallel_relu_units_not_absorbable() -> None:
    # subsets give 0, -1/2, -1/4, -3/4: never -1
    d = _decide("relu", "[[1], [1]]", "[[-1/2, -1/4]]", "[0, 1]", "[0]")
    assert d.verdict is Verdict.NOT_ABSORBABLE and d.decided_by == "R-aff-2"


def test_parallel_leaky_units_decided_in_two_dimensions() -> None:
    # leaky slope 1/10: c = 11/20, target -M/(2c) = -(10/11) I; rows (1,0),(1,0),(0,1)
    d = _decide("leaky", "[[1, 0], [1, 0], [0, 1]]", "[[-10/11, 1, 0], [0, 2, -10/11]]", "[0, 1, 0]", "[0, 0]",
                dim=2, prelude=LEAKY)
    assert d.verdict is Verdict.ABSORBABLE and d.decided_by == "R-aff-2"
    assert set(d.witness.index_set) == {0, 2}
    no = _decide("leaky", "[[1, 0], [1, 0], [0, 1]]", "[[-1, 1, 0], [0, 2, -1]]", "[0, 1, 0]", "[0, 0]",
                 dim=2, prelude=LEAKY)
    assert no.verdict is Verdict.NOT_ABSORBABLE and no.decided_by == "R-aff-2"


@pytest.mark.parametrize("act", ["gelu", "softplus"])
def test_other_activations_stay_open(act: str) -> None:
    # no proved affine independence property: never decided beyond the sufficient condition
    d = _decide(act, "[[1], [1]]", "[[-1/2, -1/4]]", "[0, 1]", "[0]")
    assert d.verdict is Verdict.OPEN and d.decided_by != "R-aff-2"


def test_collinear_pairs_are_open() -> None:
    # (1, 1) and (2, 2): one hyperplane, N2 fails; two units there can merge, so necessity is not claimed
    d = _decide("relu", "[[1], [2]]", "[[-1/4, -1/4]]", "[1, 2]", "[0]")
    assert d.verdict is Verdict.OPEN and d.decided_by != "R-aff-2"
    # (1, 1) and (-1, -1) are collinear too (the same hyperplane, opposite sides)
    d = _decide("relu", "[[1], [-1]]", "[[-1/4, -1/4]]", "[1, -1]", "[0]")
    assert d.verdict is Verdict.OPEN and d.decided_by != "R-aff-2"


def test_constant_unit_is_open() -> None:
    d = _decide("relu", "[[1], [0]]", "[[-1/2, 1]]", "[0, 1]", "[0]")
    assert d.verdict is Verdict.OPEN and d.decided_by != "R-aff-2"


def test_non_hinge_piecewise_activations_are_not_covered() -> None:
    # |z| (slope -1: even) and relu(z - 1) (kink not at 0) are not hinges at 0
    for prelude, act in (("activation a(z) = abs(z)\n", "a"), ("activation k(z) = max(0, z - 1)\n", "k")):
        d = _decide(act, "[[1], [1]]", "[[-1/2, -1/4]]", "[0, 1]", "[0]", prelude=prelude)
        assert d.decided_by != "R-aff-2" and d.verdict is not Verdict.NOT_ABSORBABLE


def test_n2_declaration_goes_with_its_hypothesis(tmp_path) -> None:  # type: ignore[no-untyped-def]

    from symabsorb.theory.hypotheses import REGISTRY
    from symabsorb.theory.library import LibraryError, load_library

    src = ROOT / "theorems" / "R-aff-2.toml"
    text = src.read_text().replace('[[hypotheses]]\nname = "n2_nondegenerate"\n', "")
    (tmp_path / "R-aff-2.toml").write_text(text)
    with pytest.raises((LibraryError, SpecError), match="n2_nondegenerate"):
        load_library([tmp_path], REGISTRY)


def test_symbolic_biases_with_parallel_rows_are_open() -> None:
    # `bias: true` with inline matrices: the hidden biases are arbitrary, so N2 is not known
    text = "block b { activation: relu dim: 1 width: 2 W_up: [[1], [1]] W_down: [[-1/2, -1/4]] bias: true }"
    block = resolve_text(text).blocks[0]
    d = decide(block, default_library())
    assert d.verdict is not Verdict.NOT_ABSORBABLE and d.decided_by != "R-aff-2"
