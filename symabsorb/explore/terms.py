"""Terms of an enumerated space: small trees over ``z``, the space's constants, primitives and operators.

A term is data (JSON-able, so a results file can name it); its SymPy expression is built directly
from the space's objects, never from text.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import sympy as sp

from ..model.functions import Z
from ..model.space import Space

__all__ = ["Term", "term_from_json"]


@dataclass(frozen=True)
class Term:
    """``op`` is ``z``, ``c`` (constant ``index``), ``p`` (primitive ``index`` applied to ``args[0]``)
    or a binary operator ``+ - *`` applied to ``args``."""

    op: str
    index: int = 0
    args: tuple[Term, ...] = ()

    @functools.cached_property
    def size(self) -> int:
        return 1 + sum(a.size for a in self.args)

    @functools.cached_property
    def has_z(self) -> bool:
        return self.op == "z" or any(a.has_z for a in self.args)

    def to_json(self) -> Any:
        if self.op == "z":
            return "z"
        if self.op in ("c", "p"):
            return [self.op, self.index, *(a.to_json() for a in self.args)]
        return [self.op, *(a.to_json() for a in self.args)]

    def text(self, space: Space) -> str:
        """Readable text in the ``.absorb`` expression syntax (for labels; never parsed back)."""
        if self.op == "z":
            return "z"
        if self.op == "c":
            value = space.constants[self.index]
            return f"({sp.sstr(value)})" if value.is_negative else sp.sstr(value)
        if self.op == "p":
            return f"{space.primitives[self.index].name}({self.args[0].text(space)})"
        left, right = (a.text(space) for a in self.args)
        if self.args[0].op in "+-" and self.op == "*":
            left = f"({left})"
        if self.args[1].op in "+-" and self.op in "*-":
            right = f"({right})"
        sep = f" {self.op} " if self.op in "+-" else "*"
        return f"{left}{sep}{right}"

    def build(self, space: Space) -> sp.Expr:
        """The term's SymPy expression in :data:`Z`."""
        if self.op == "z":
            return Z
        if self.op == "c":
            return space.constants[self.index]
        if self.op == "p":
            return space.primitives[self.index](self.args[0].build(space))
        a, b = (t.build(space) for t in self.args)
        if self.op == "+":
            return a + b
        if self.op == "-":
            return a - b
        return a * b


def term_from_json(data: Any) -> Term:
    """The inverse of :meth:`Term.to_json` (shapes checked; a bad results file is an error)."""
    if data == "z":
        return Term("z")
    if not isinstance(data, list) or not data or not isinstance(data[0], str):
        raise ValueError(f"not a term: {data!r}")
    op = data[0]
    if op in ("c", "p"):
        if len(data) < 2 or not isinstance(data[1], int):
            raise ValueError(f"not a term: {data!r}")
        args = tuple(term_from_json(a) for a in data[2:])
        if (op == "c" and args) or (op == "p" and len(args) != 1):
            raise ValueError(f"not a term: {data!r}")
        return Term(op, data[1], args)
    if op not in ("+", "-", "*") or len(data) != 3:
        raise ValueError(f"not a term: {data!r}")
    return Term(op, 0, (term_from_json(data[1]), term_from_json(data[2])))
