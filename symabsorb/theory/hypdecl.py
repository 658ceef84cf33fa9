"""Hypothesis declarations: each hypothesis a result may name is declared once — its name, what it
says, the parameters a result file may give it (with their types), the placeholders its checker
binds, and what it is about (a block, a stack, or either) — and its checker registers on the
declaration.

This module is the schema only (no SymPy, no checker code): :mod:`.library` validates every
``[[hypotheses]]`` entry of a result file against it at load, and :mod:`.checks` attaches the
checkers. A result file may name only declared hypotheses with declared parameters of the
declared types; its templates may use only placeholders its hypotheses bind.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .checks import Subject
    from .derivation import HypothesisCheck

__all__ = ["PARAM_TYPES", "SUBJECTS", "Declaration", "Param", "ParamProblem"]

#: The types a parameter may have in a result file (TOML values).
PARAM_TYPES = ("number", "integer", "string", "strings")
#: What a hypothesis is about: one block, a stack of blocks, or either.
SUBJECTS = ("block", "stack", "any")


@dataclass(frozen=True)
class Param:
    """One parameter of a hypothesis: ``type`` is one of :data:`PARAM_TYPES` (``number``: an integer or
    a float, never a boolean; ``strings``: a list of strings), ``choices`` restricts a string (or each
    string of a list), ``default`` is what the checker uses when the file omits it."""

    type: str
    doc: str
    required: bool = False
    default: Any = None
    choices: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.type not in PARAM_TYPES:
            raise ValueError(f"parameter type {self.type!r} is not one of {PARAM_TYPES}")

    def describe(self) -> str:
        kind = {"number": "a number", "integer": "an integer", "string": "a string",
                "strings": "a list of strings"}[self.type]
        if self.choices:
            kind += " from " + ", ".join(f'"{c}"' for c in self.choices)
        return kind


@dataclass(frozen=True)
class ParamProblem:
    """A parameter of a result file that does not fit the declaration: ``key`` is the offending key
    (or the hypothesis name, for a missing one), ``found`` / ``expected`` / ``hint`` the message parts."""

    key: str
    summary: str
    found: str
    expected: str
    hint: str | None = None


@dataclass
class Declaration:
    """A hypothesis, declared once. ``holds`` is the plain-text condition (the docs table is built
    from it), ``binds`` the placeholders its checker may bind for the result's templates,
    ``require_any`` parameters of which a file must give at least one (so a constraint is never
    vacuous). Calling a declaration runs its checker."""

    name: str
    holds: str
    params: Mapping[str, Param] = field(default_factory=dict)
    binds: tuple[str, ...] = ()
    subject: str = "block"
    require_any: tuple[str, ...] = ()
    checker: Callable[[Subject, dict[str, Any]], HypothesisCheck] | None = None

    def __post_init__(self) -> None:
        if self.subject not in SUBJECTS:
            raise ValueError(f"subject {self.subject!r} is not one of {SUBJECTS}")
        unknown = set(self.require_any) - set(self.params)
        if unknown:
            raise ValueError(f"require_any names undeclared parameters {sorted(unknown)}")

    def __call__(self, subject: Subject, params: dict[str, Any]) -> HypothesisCheck:
        if self.checker is None:
            raise RuntimeError(f"hypothesis `{self.name}` is declared but no checker is registered on it")
        result = self.checker(subject, {**self.defaults(), **params})
        undeclared = [k for k, _ in result.bindings if k not in self.binds]
        if undeclared:  # a result's templates may rely only on what the declaration promises
            from ..errors import InternalError

            raise InternalError(f"hypothesis `{self.name}` bound {', '.join(map(repr, undeclared))}, which its "
                                f"declaration does not list in binds={self.binds!r}")
        if result.name != self.name:  # the check is stamped with the name it was declared under
            from dataclasses import replace

            result = replace(result, name=self.name)
        return result

    def defaults(self) -> dict[str, Any]:
        return {k: p.default for k, p in self.params.items() if p.default is not None}

    def signature(self) -> str:
        """``name (key, key)`` as the docs table shows it."""
        return f"`{self.name}`" + (" (" + ", ".join(f"`{k}`" for k in self.params) + ")" if self.params else "")

    def problems(self, given: Mapping[str, Any]) -> list[ParamProblem]:
        """What is wrong with the parameters ``given`` in a result file (empty: they fit)."""
        from ..dsl.errors import did_you_mean

        out: list[ParamProblem] = []
        allowed = ", ".join(f"`{k}`" for k in self.params) or "none"
        for key, value in given.items():
            spec = self.params.get(key)
            if spec is None:
                hint = did_you_mean(key, self.params)
                out.append(ParamProblem(key, f"unknown parameter `{key}` of hypothesis `{self.name}`", f"`{key}`",
                                        f"one of its parameters: {allowed}", hint))
                continue
            problem = _type_problem(spec, value)
            if problem:
                out.append(ParamProblem(key, f"parameter `{key}` of hypothesis `{self.name}` {problem}",
                                        repr(value), spec.describe(), spec.doc))
        for key, spec in self.params.items():
            if spec.required and key not in given:
                out.append(ParamProblem(self.name, f"hypothesis `{self.name}` needs the parameter `{key}`",
                                        "no `" + key + "`", f"`params = {{ {key} = ... }}` ({spec.describe()})",
                                        spec.doc))
        if self.require_any and not any(k in given for k in self.require_any):
            keys = ", ".join(f"`{k}`" for k in self.require_any)
            out.append(ParamProblem(self.name, f"hypothesis `{self.name}` needs at least one of {keys}",
                                    "none of them", f"`params = {{ {self.require_any[0]} = ... }}`",
                                    "without a constraint the hypothesis would hold vacuously"))
        return out


def _type_problem(spec: Param, value: Any) -> str:
    if spec.type == "number":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return "" if ok else "is not a number"
    if spec.type == "integer":
        return "" if isinstance(value, int) and not isinstance(value, bool) else "is not an integer"
    if spec.type == "string":
        if not isinstance(value, str):
            return "is not a string"
        return "" if not spec.choices or value in spec.choices else "is not one of the choices"
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return "is not a list of strings"
    bad = [v for v in value if spec.choices and v not in spec.choices]
    return f"has the unknown value(s) {', '.join(map(repr, bad))}" if bad else ""
