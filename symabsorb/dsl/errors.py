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

__all__ = [
    "Span",
    "SpecError",
    "SpecImportError",
    "SpecLimitError",
    "SpecNameError",
    "SpecShapeError",
    "SpecSyntaxError",
    "SpecValueError",
    "SymabsorbError",
    "did_you_mean",
]
