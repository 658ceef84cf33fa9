"""`symabsorb.decide` for the layer as the model uses it (biases, the absorber's biases, the norm, its ε
and scales), answered as the equivalent spec is; shape errors name the argument, never a file the
user did not give (issue 28, rows 9 and API)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

import symabsorb
from symabsorb.errors import ArgumentError
from tests.helpers import require_module

np = require_module("numpy", "weights")

UP = [[1, 0], [0, 1], [1, 1]]
DOWN = [[-1, 0, 1], [0, -1, 1]]


def _same(api: symabsorb.Result, spec_text: str, base: Path | None = None) -> None:
    if base is not None:
        path = base / "layer.absorb"
        path.write_text(spec_text, encoding="utf-8")
        report = symabsorb.prove(path)
    else:
        report = symabsorb.prove(symabsorb.load(spec_text))
    (via_spec,) = report.results
    assert (api.verdict, api.scope, api.decided_by, api.condition) == \
        (via_spec.verdict, via_spec.scope, via_spec.decided_by, via_spec.condition)


@pytest.mark.parametrize(("options", "fields"), [
    ({"b_up": [1, 2, 3], "b_down": [Fraction(1, 2), 0], "absorber_bias": False},
     "b_up: [1, 2, 3] b_down: [1/2, 0] absorber_bias: false"),
    ({"b_up": [1, 2, 3], "b_down": [Fraction(1, 2), 0]}, "b_up: [1, 2, 3] b_down: [1/2, 0]"),
    ({"bias": True}, "bias: true"),
    ({"norm": "post-ln", "eps": Fraction(1, 1000), "gamma": [1, 2]}, "norm: post-ln eps: 1/1000 ln_gamma: [1, 2]"),
    ({"norm": "post", "eps": 1e-12}, "norm: post-ln eps: 1e-12"),
    ({"norm": "pre-rms", "eps": 0}, "norm: pre-rms eps: 0"),
    ({"norm": "post-rms"}, "norm: post-rms"),
])
def test_exact_arrays_answer_as_the_spec(options: dict, fields: str) -> None:
    api = symabsorb.decide("relu", UP, DOWN, **options)
    _same(api, f"block b {{ activation: relu W_up: {UP} W_down: {DOWN} {fields} }}\nabsorb b\n")


def test_affine_sigma_with_biases_as_the_spec() -> None:
    """σ = 2z − 3 with a hidden bias, bias-free absorber: absorbable (L-affine), as the spec answers."""
    api = symabsorb.decide("2*z - 3", [[1, 0], [0, 1]], [[1, -1], [2, -2]], b_up=[1, 0], absorber_bias=False)
    assert api.verdict == "absorbable"
    _same(api, "activation act(z) = 2*z - 3\nblock b { activation: act W_up: [[1, 0], [0, 1]] "
               "W_down: [[1, -1], [2, -2]] b_up: [1, 0] absorber_bias: false }\nabsorb b\n")
    assert symabsorb.decide("2*z - 3", [[1, 0], [0, 1]], [[1, -1], [2, -2]]).verdict == "not-absorbable"


@pytest.mark.parametrize(("options", "fields", "tensors"), [
    ({"b_up": np.array([0.5, -1.0, 2.0]), "b_down": np.array([0.25, 0.0])},
     'up_bias: "b_up" down_bias: "b_down"', ("b_up", "b_down")),
    ({"norm": "pre-rms", "eps": 1e-6}, "norm: pre-rms eps: 1e-6", ()),
    ({"norm": "post-ln", "eps": 1e-12, "gamma": np.array([1.0, 0.5])},
     'norm: post-ln eps: 1e-12 ln_gamma: "ln_gamma"', ("ln_gamma",)),
])
def test_float_arrays_answer_as_the_spec_with_a_file(tmp_path: Path, options: dict, fields: str,
                                                      tensors: tuple[str, ...]) -> None:
    up = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    down = np.array([[-1.0, 0.0, 0.5], [0.0, -1.0, 0.25]])
    api = symabsorb.decide("relu", up, down, **options)
    saved = {"W_up": up, "W_down": down}
    for name in tensors:
        saved[name] = options["gamma" if name == "ln_gamma" else name]
    np.savez(tmp_path / "layer.npz", **saved)
    _same(api, f'block b {{ activation: relu weights: "layer.npz" {fields} }}\nabsorb b\n', tmp_path)


def test_torch_biases_are_read_exactly() -> None:
    torch = pytest.importorskip("torch")
    api = symabsorb.decide("relu", torch.tensor(UP, dtype=torch.float32), torch.tensor(DOWN, dtype=torch.float32),
                           b_up=torch.tensor([1.0, 2.0, 3.0], dtype=torch.bfloat16), b_down=torch.zeros(2))
    assert api.verdict is not None


def test_file_with_bias_tensors_as_the_spec(tmp_path: Path) -> None:
    np.savez(tmp_path / "layer.npz", W_up=np.array(UP, dtype=float), W_down=np.array(DOWN, dtype=float),
             bu=np.array([1.0, 2.0, 3.0]), bd=np.array([0.5, 0.0]))
    api = symabsorb.decide("relu", file=tmp_path / "layer.npz", up_bias="bu", down_bias="bd", absorber_bias=False)
    _same(api, 'block b { activation: relu weights: "layer.npz" up_bias: "bu" down_bias: "bd" absorber_bias: false }\n'
               "absorb b\n", tmp_path)


@pytest.mark.parametrize(("args", "options", "param"), [
    ((np.ones((3, 2)) / 2, np.ones((3, 3)) / 2), {}, "w_down"),
    ((np.ones((3, 2)) / 2, np.ones((3, 2)) / 2), {}, "w_down"),
    ((UP, DOWN), {"b_up": [1, 2]}, "b_up"),
    ((np.ones((3, 2)) / 2, np.ones((2, 3)) / 2), {"b_down": np.ones(3)}, "b_down"),
    ((UP, DOWN), {"norm": "post-ln", "gamma": [1, 2, 3]}, "gamma"),
    ((UP, DOWN), {"eps": 1e-6}, "eps"),
    ((UP, DOWN), {"gamma": [1, 1]}, "gamma"),
    ((UP, DOWN), {"norm": "mid"}, "norm"),
    ((UP, DOWN), {"norm": "post-ln", "eps": -1}, "eps"),
    ((UP, DOWN), {"b_gate": [1, 1, 1]}, "b_gate"),
    ((UP, DOWN), {"up_bias": "b"}, "up_bias"),
    ((UP, DOWN), {"b_up": [1, 2, 3], "bias": False}, "bias"),
    (([[1, 0], [0, 1], [1, 1]], np.array(DOWN, dtype=float)), {"b_up": [Fraction(1, 3), 0, 0]}, "b_up"),
    ((np.array([[np.nan, 0], [0, 1], [1, 1]]), np.array(DOWN, dtype=float)), {}, "w_up"),
    ((np.ones((3, 2)) / 2, np.ones((2, 3)) / 2), {"b_down": np.array([np.inf, 0])}, "b_down"),
])
def test_errors_name_the_argument_never_a_file(args: tuple, options: dict, param: str) -> None:
    with pytest.raises(ArgumentError) as info:
        symabsorb.decide("relu", *args, **options)
    assert info.value.param == param
    assert "arrays.npz" not in str(info.value)


def test_gate_shape_error_names_w_gate() -> None:
    with pytest.raises(ArgumentError) as info:
        symabsorb.decide("swiglu", np.ones((3, 2)) / 2, np.ones((2, 3)) / 2, w_gate=np.ones((2, 2)) / 2)
    assert info.value.param == "w_gate" and "arrays.npz" not in str(info.value)


@pytest.mark.parametrize(("skip", "field"), [(2, "skip: scaled(2)"), (Fraction(1, 2), "skip: scaled(1/2)"),
                                             ([[1, 0], [0, 0]], "skip: [[1, 0], [0, 0]]"),
                                             (np.array([[0.5, 0.0], [1.0, 0.0]]), "skip: [[1/2, 0], [1, 0]]")])
def test_skips_as_the_spec(skip: object, field: str) -> None:
    api = symabsorb.decide("relu", UP, DOWN, skip=skip)
    _same(api, f"block b {{ activation: relu dim: 2 W_up: {UP} W_down: {DOWN} {field} }}\nabsorb b\n")


@pytest.mark.parametrize("skip", ["hyper", [[1, 0, 0], [0, 1, 0], [0, 0, 1]], [[1, 0]], True, float("nan")])
def test_bad_skips_name_skip(skip: object) -> None:
    with pytest.raises(ArgumentError) as info:
        symabsorb.decide("relu", UP, DOWN, skip=skip)
    assert info.value.param == "skip"
