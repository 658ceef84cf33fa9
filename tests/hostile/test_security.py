"""Spec text never reaches code execution: no eval/exec/sympify/parse_expr/string lambdify."""

from __future__ import annotations

import ast
from pathlib import Path

import symabsorb

PACKAGE = Path(symabsorb.__file__).parent
FORBIDDEN_NAMES = {"eval", "exec", "sympify", "parse_expr", "lambdify", "S", "__import__", "compile"}
FORBIDDEN_ATTRS = {"sympify", "parse_expr", "lambdify", "S", "eval", "exec"}


def _calls(tree: ast.AST) -> list[tuple[str, int]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in FORBIDDEN_NAMES:
                found.append((f.id, node.lineno))
            elif isinstance(f, ast.Attribute) and f.attr in FORBIDDEN_ATTRS:
                found.append((f.attr, node.lineno))
    return found


def test_no_code_execution_paths_in_the_package() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        offenders += [f"{path.relative_to(PACKAGE)}:{line}: {name}(...)" for name, line in _calls(tree)]
    assert offenders == []


def test_scanner_catches_a_planted_call() -> None:
    tree = ast.parse("import sympy\nx = sympy.sympify(user_text)\ny = eval(t)\nz = S('1')")
    assert sorted(name for name, _ in _calls(tree)) == ["S", "eval", "sympify"]


def test_a_malicious_spec_is_just_an_error() -> None:
    import pytest

    from symabsorb.dsl.errors import SpecError
    from symabsorb.model import resolve_text

    with pytest.raises(SpecError):
        resolve_text("activation f(z) = __import__(z)")
    with pytest.raises(SpecError):
        resolve_text('activation f(z) = "os".system(z)')
