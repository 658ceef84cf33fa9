"""The API's per-fact CPU seconds are ``fact_budget=`` (the command line's ``--budget`` is per command);
``budget=`` is its deprecated old name: still read, with a DeprecationWarning."""

from __future__ import annotations

import warnings

import pytest

import symabsorb
from symabsorb import api


def test_fact_budget_is_the_name_and_warns_nothing() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert symabsorb.classify("relu", fact_budget=None).verdict == "conditional"


def test_budget_is_a_deprecated_alias(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[float | None] = []

    class Spy:
        def __init__(self, library: object, budget: float | None = None, *args: object) -> None:
            seen.append(budget)

        def classify(self, act: object) -> object:
            raise LookupError("stop here")

    import symabsorb.answer

    monkeypatch.setattr(symabsorb.answer, "Session", Spy)
    with pytest.warns(DeprecationWarning, match="budget= is deprecated: it is CPU seconds per fact, now fact_budget="):
        with pytest.raises(LookupError):
            api.classify("relu", budget=7)
    assert seen == [7.0]
    with pytest.warns(DeprecationWarning), pytest.raises(symabsorb.ArgumentError) as info:
        api.classify("relu", budget=7, fact_budget=3)
    assert info.value.param == "budget" and info.value.reason == "give fact_budget= only (budget= is its deprecated name)"
