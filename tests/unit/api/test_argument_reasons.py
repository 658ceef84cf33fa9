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


def test_every_argument_error_the_package_raises_names_its_reason() -> None:
    import ast

    package = Path(symabsorb.__file__).parent
    bad = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "ArgumentError" \
                    and not any(k.arg == "reason" for k in node.keywords):
                bad.append(f"{path.relative_to(package)}:{node.lineno}")
    assert bad == []


def test_the_command_line_names_the_flag_and_says_the_reason() -> None:
    from symabsorb import cli

    with pytest.raises(ArgumentError) as info:
        symabsorb.absorb("block b { activation: relu dim: 2 width: 3 }\nabsorb b\n", "b", near=-1.0)
    assert cli._option_message(info.value) == ("--near -1.0: expected a finite number >= 0 (the relative distance EPS "
                                               "to the index-set condition), or None")
