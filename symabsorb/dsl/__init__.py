"""The ``.absorb`` language: grammar, typed syntax, errors, loader and formatter."""

from .errors import (
    Span,
    SpecError,
    SpecImportError,
    SpecNameError,
    SpecShapeError,
    SpecSyntaxError,
    SpecValueError,
    SymabsorbError,
)
from .formatter import format_expr, format_module
from .loader import load_modules
from .parser import parse_expression, parse_text

__all__ = [
    "Span", "SpecError", "SpecImportError", "SpecNameError", "SpecShapeError", "SpecSyntaxError",
    "SpecValueError", "SymabsorbError", "format_expr", "format_module", "load_modules",
    "parse_expression", "parse_text",
]
