"""Every ArgumentError carries its ``reason`` (what is wrong, without the argument's name), as Click's
``BadParameter``: a caller never reads it out of the message."""

from __future__ import annotations

from pathlib import Path

import pytest

import symabsorb
from symabsorb.errors import ArgumentError


def test_errors_about_a_result_carry_their_reason(tmp_path: Path) -> None:
    result = symabsorb.classify("gelu")
    with pytest.raises(ArgumentError) as info:
        result.write_witness(tmp_path / "w.npz")
    assert info.value.reason is not None and "no witness" in info.value.reason
    with pytest.raises(ArgumentError) as info:
        result.facts_table()
    assert info.value.reason == "a verdict has no facts table: render it instead"
