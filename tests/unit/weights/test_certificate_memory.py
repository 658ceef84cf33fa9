"""The m x m Cholesky factor is not alive while a separating certificate is first evaluated exactly
(issue 29: the peak of a 4096 x 11008 layer, 1 m² less); a refinement that needs it gets it again."""

from __future__ import annotations

import weakref
from fractions import Fraction
from typing import Any

import pytest

from tests.helpers import require_module

np = require_module("numpy", "weights")

from symabsorb.weights import certify  # noqa: E402


def _layer(d: int = 8, m: int = 32, seed: int = 0) -> tuple[Any, Any, certify.Target]:
    rng = np.random.default_rng(seed)
    w_up = rng.standard_normal((m, d)).astype(np.float32).astype(np.float64)
    w_down = rng.standard_normal((d, m)).astype(np.float32).astype(np.float64)
    return w_up, w_down, certify.Target(d, tuple((i, i, Fraction(-1, 2)) for i in range(d)))


@pytest.mark.parametrize("projector", [None, "centering"])
def test_the_factor_is_released_before_the_first_evaluation(projector: str | None,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    factors: list[Any] = []
    alive: list[bool] = []
    real_search, real_evaluate = certify.float_search, certify._evaluate

    def search(*args: Any, **kwargs: Any) -> Any:
        fs = real_search(*args, **kwargs)
        factors.append(weakref.ref(fs.factor))
        return fs

    def evaluate(*args: Any, **kwargs: Any) -> Any:
        alive.append(any(ref() is not None for ref in factors))
        return real_evaluate(*args, **kwargs)

    monkeypatch.setattr(certify, "float_search", search)
    monkeypatch.setattr(certify, "_evaluate", evaluate)
    w_up, w_down, target = _layer()
    decision = certify.decide_exactly(w_up, w_down, target, projector)
    assert decision.found is False and decision.certificate is not None
    assert decision.certificate.kind == "separating"
    assert len(factors) == 1 and alive == [False]


def test_a_refinement_gets_the_same_factor_again(monkeypatch: pytest.MonkeyPatch) -> None:
    w_up, w_down, target = _layer(seed=1)
    plain = certify.decide_exactly(w_up, w_down, target)
    seen: list[bool] = []
    real = certify._separating_attempt

    def attempt(w_up: Any, w_down: Any, target: Any, fs: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(fs.factor is not None)
        if len(seen) == 1:
            return None  # as if the float residual had not separated: a refinement needs the factor
        return real(w_up, w_down, target, fs, *args, **kwargs)

    monkeypatch.setattr(certify, "_separating_attempt", attempt)
    again = certify.decide_exactly(w_up, w_down, target)
    assert seen[:2] == [False, True]
    assert again.certificate is not None and plain.certificate is not None
    assert again.certificate.inner == plain.certificate.inner
    assert [(e, limb.tolist()) for e, limb in again.certificate.y_limbs] == \
        [(e, limb.tolist()) for e, limb in plain.certificate.y_limbs]
