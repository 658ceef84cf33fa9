"""Every catalog activation that PyTorch implements agrees with torch.nn.functional in float64
at 2,001 points in [-20, 20] (max abs error < 1e-6)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from symabsorb.analysis.numeric import evaluate
from symabsorb.model import CATALOG, activation_from_text
from tests.helpers import require_module


def _torch_fn(name: str, torch: Any) -> Callable[[Any], Any]:
    F = torch.nn.functional
    table: dict[str, Callable[[Any], Any]] = {
        "relu": F.relu,
        "leaky_relu": lambda x: F.leaky_relu(x, 0.01),
        "prelu": lambda x: F.prelu(x, torch.tensor([0.25], dtype=torch.float64)),
        "relu6": F.relu6,
        "gelu": F.gelu,
        "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
        "silu": F.silu,
        "elu": F.elu,
        "selu": F.selu,
        "celu": F.celu,
        "softplus": F.softplus,
        "mish": F.mish,
        "hardswish": F.hardswish,
        "hardsigmoid": F.hardsigmoid,
        "hardtanh": F.hardtanh,
        "tanh": torch.tanh,
        "sigmoid": torch.sigmoid,
        "softsign": F.softsign,
        "tanhshrink": F.tanhshrink,
        "softshrink": F.softshrink,
        "hardshrink": F.hardshrink,
        "logsigmoid": F.logsigmoid,
    }
    return table[name]


WITH_TORCH = [name for name, entry in CATALOG.items() if entry.torch is not None]


def test_every_torch_counterpart_is_listed() -> None:
    assert len(WITH_TORCH) >= 20


@pytest.mark.parametrize("name", WITH_TORCH)
def test_matches_torch(name: str) -> None:
    torch = require_module("torch", "torch")
    xs = torch.linspace(-20, 20, 2001, dtype=torch.float64)
    expected = _torch_fn(name, torch)(xs)
    expr = activation_from_text(name).expr
    worst = 0.0
    for x, y in zip(xs.tolist(), expected.tolist(), strict=True):
        worst = max(worst, abs(float(evaluate(expr, x, 30)) - y))
    assert worst < 1e-6, f"{name}: max abs error {worst:.3g}"
