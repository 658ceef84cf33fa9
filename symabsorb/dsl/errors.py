"""The error tree lives at the base (:mod:`symabsorb.errors`) since every layer raises it;
this module re-exports it under its historical name."""

from __future__ import annotations

from ..errors import (
    Span,
    SpecError,
    SpecImportError,
    SpecLimitError,
    SpecNameError,
    SpecShapeError,
    SpecSyntaxError,
    SpecValueError,
    SymabsorbError,
    did_you_mean,
)


class SpecSyntaxErrors(SpecSyntaxError):
    """Several syntax errors of one file, in source order. Its own fields (``span``, ``found``,
    ...) are the first error's, so code that reads one error still works; ``str()`` shows them all."""

    def __init__(self, errors: list[SpecSyntaxError], truncated: bool = False) -> None:
        first = errors[0]
        super().__init__(first.summary, first.span, first.found, first.expected, first.hint, first.source_line)
        self.errors = tuple(errors)
        self.truncated = truncated

    def with_source(self, text: str) -> SpecSyntaxErrors:
        for e in self.errors:
            e.with_source(text)
        super().with_source(text)
        return self

    def __str__(self) -> str:
        parts = [str(e) for e in self.errors]
        more = " (stopped there; fix these first)" if self.truncated else ""
        parts.append(f"{len(self.errors)} syntax errors{more}")
        return "\n".join(parts)

__all__ = [
    "Span",
    "SpecError",
    "SpecImportError",
    "SpecLimitError",
    "SpecNameError",
    "SpecShapeError",
    "SpecSyntaxError",
    "SpecSyntaxErrors",
    "SpecValueError",
    "SymabsorbError",
    "did_you_mean",
]
