"""Issue 28 rows 1 and 9: the API speaks torch and SymPy. ``decide`` takes PyTorch tensors (fp32,
fp16, bf16: every value exact in float64), anything with ``__array__`` or DLPack, and refuses
anything else with a clean ``ArgumentError``; ``classify`` takes a SymPy expression in one symbol."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
import sympy as sp

import symabsorb
from symabsorb.errors import ArgumentError
from tests.helpers import require_module

#: ReLU, identity skip, nondegenerate: flipping units {0, 1} gives W_down[:,S] W_up[S,:] = -I (absorbable).
UP = [[1, 0], [0, 1], [1, 1]]
DOWN = [[-1, 0, 1], [0, -1, 1]]  # nondegenerate: every column of W_down nonzero
#: generic weights: no index set works
GENERIC_UP = [[1, 2], [3, -1], [1, 1]]
GENERIC_DOWN = [[1, 0, 2], [-1, 1, 1]]


class DLPackOnly:
    """An array known only through the DLPack protocol (as CuPy or a TensorFlow tensor is)."""

    def __init__(self, array: Any) -> None:
        self._array = array

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        return self._array.__dlpack_device__()


class ArrayLike:
    """An object with ``__array__`` only (pandas, xarray, JAX arrays)."""

    def __init__(self, rows: list[list[float]]) -> None:
        self.rows = rows

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        import numpy as np

        return np.array(self.rows, dtype=dtype)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_decide_takes_torch_tensors(dtype: str) -> None:
    torch = require_module("torch", "torch")
    kind = getattr(torch, dtype)
    up = torch.tensor(UP, dtype=kind, requires_grad=True)  # a parameter: detached, never an error
    result = symabsorb.decide("relu", up, torch.tensor(DOWN, dtype=kind))
    assert result.verdict == "absorbable" and result.witness is not None
    assert set(result.witness.index_set) == {0, 1}
    generic = symabsorb.decide("relu", torch.tensor(GENERIC_UP, dtype=kind), torch.tensor(GENERIC_DOWN, dtype=kind))
    assert generic.verdict == "not-absorbable"


def test_bf16_values_are_decided_exactly() -> None:
    """A bf16 weight of 1 + 2^-7 (not 1) must not be read as 1: its witness fails, exactly."""
    torch = require_module("torch", "torch")
    up = torch.tensor([[1 + 2**-7, 0], [0, 1], [1, 1]], dtype=torch.bfloat16)
    assert float(up[0, 0]) == 1 + 2**-7
    result = symabsorb.decide("relu", up, torch.tensor(DOWN, dtype=torch.bfloat16))
    exact = symabsorb.decide("relu", [[Fraction(129, 128), 0], [0, 1], [1, 1]], DOWN)
    assert result.verdict == exact.verdict == "not-absorbable"


def test_torch_linear_layers_as_the_issue_wrote_them() -> None:
    torch = require_module("torch", "torch")
    torch.manual_seed(0)
    lin1, lin2 = torch.nn.Linear(3, 12), torch.nn.Linear(12, 3)
    assert symabsorb.decide("gelu", lin1.weight, lin2.weight).verdict == "not-absorbable"


def test_decide_takes_dlpack_and_array_protocol_objects() -> None:
    np = require_module("numpy", "weights")
    assert symabsorb.decide("relu", DLPackOnly(np.array(UP, dtype=np.float32)),
                            DLPackOnly(np.array(DOWN, dtype=np.float32))).verdict == "absorbable"
    assert symabsorb.decide("relu", ArrayLike(UP), ArrayLike(DOWN)).verdict == "absorbable"
    rational = np.array([[Fraction(1), Fraction(0)], [Fraction(0), Fraction(1)], [Fraction(1), Fraction(1)]],
                        dtype=object)
    assert symabsorb.decide("relu", rational, DOWN).verdict == "absorbable"


def test_decide_refuses_what_is_not_a_real_matrix() -> None:
    np = require_module("numpy", "weights")
    bad: list[tuple[Any, str]] = [
        (np.zeros((3, 2), dtype=complex), "complex entries"),
        (np.array([["1", "2"], ["3", "4"], ["5", "6"]]), "expected numbers"),
        ({1: 2}, "expected a matrix"),
    ]
    try:
        import torch
    except ImportError:
        pass
    else:
        bad += [(torch.zeros(3, 2, dtype=torch.complex64), "complex entries"),
                (torch.zeros(3, 2, device="meta"), "cannot read it as a matrix")]
    for value, message in bad:
        with pytest.raises(ArgumentError, match=message):
            symabsorb.decide("relu", value, DOWN)


def test_classify_takes_a_sympy_expression() -> None:
    x = sp.Symbol("x")
    mish = symabsorb.classify(x * sp.tanh(sp.log(1 + sp.exp(x))))
    assert mish.verdict == symabsorb.classify("z*tanh(softplus(z))").verdict
    relu = symabsorb.classify(sp.Max(0, x))
    assert relu.verdict == "conditional" and relu.decided_by == "Thm. 8"
    # a symbol named like a constant is still the variable (never Euler's e)
    assert symabsorb.classify(sp.Max(0, sp.Symbol("e"))).verdict == "conditional"
    assert symabsorb.facts(x**2 + x).facts is not None


@pytest.mark.parametrize(("expr", "message"), [
    (sp.Symbol("a") * sp.Symbol("x"), "one symbol"),
    (sp.Float(0.5) * sp.Symbol("x"), "not exact"),
    (sp.Heaviside(sp.Symbol("x")), "unknown function"),
    (sp.Matrix([[1]]), "expected"),
])
def test_classify_refuses_sympy_it_cannot_read(expr: Any, message: str) -> None:
    with pytest.raises(ArgumentError, match=message):
        symabsorb.classify(expr)


def test_condition_as_sympy() -> None:
    relu = symabsorb.classify("relu")
    eq = relu.condition_sympy
    assert isinstance(eq, sp.Eq) and relu.condition == "W_down[:,S] W_up[S,:] = -I_d"
    d = sp.Symbol("d", integer=True, positive=True)
    assert eq.rhs == -sp.Identity(d)
    assert eq.lhs.args[0].shape == (d, sp.Symbol("k", integer=True, nonnegative=True))  # W_down[:,S]: d x |S|
    assert symabsorb.classify("2*relu(z)").condition_sympy.rhs == -sp.Identity(d) / 2
    assert symabsorb.classify("z + z^2").condition_sympy is None  # another form: the string only
    from symabsorb.api import _condition_sympy

    matrix = _condition_sympy("W_down[:,S] W_up[S,:] = [[1, -1/2], [0, 3]]")
    assert matrix.rhs == sp.Matrix([[1, sp.Rational(-1, 2)], [0, 3]]) and matrix.lhs.shape[0] == 2
    assert _condition_sympy("W_down[:,S] W_up[S,:] = [[1, 2]] ⊗ I_d") is None
    assert _condition_sympy("W_down[:,S] W_up[S,:] = __import__('os')") is None
