"""One exception tree for everything a user can get wrong (a base module: every layer raises these).

Every :class:`SpecError` knows where it happened (file, line, column), what was found, what
was expected and, when we can guess, a hint. ``str(err)`` renders the whole message with the
offending source line and a caret under the column, in the style of a compiler diagnostic.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ArgumentError",
    "InternalError",
    "Span",
    "SpecError",
    "SpecImportError",
    "SpecLimitError",
    "SpecNameError",
    "SpecShapeError",
    "SpecSyntaxError",
    "SpecValueError",
    "SymabsorbError",
    "bad_argument",
    "did_you_mean",
]


#: Characters of a source line shown in a message (longer lines are cut around the column).
_SHOWN = 120


@dataclass(frozen=True)
class Span:
    """A region of a source file; lines and columns count from 1."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class SymabsorbError(Exception):
    """Base class of every error symabsorb raises on purpose. ``exit_code`` is what the command line
    exits with: 2 (bad input or usage) unless a subclass says otherwise."""

    exit_code = 2


class InternalError(SymabsorbError):
    """A check symabsorb made on its own work failed (a witness that does not pass its numeric
    check, an invariant broken): a bug in symabsorb, not in the input. Exit code 3."""

    exit_code = 3

    def __str__(self) -> str:
        return (f"internal error: {super().__str__()}\n  this is a bug in symabsorb, not in the input; rerun with "
                "SYMABSORB_DEBUG=1 for the traceback and report it")


class ArgumentError(SymabsorbError, ValueError):
    """A Python API call with an argument of the wrong type or value. The message names the
    argument as ``name=value (type=...)`` and says what to give instead, as Hypothesis does.
    (Also a ``ValueError``, so callers that caught one before keep working.)

    ``param`` is the name of the argument at fault (``"keyword"``, ``"theorems[0]"``; None when the
    error is about several at once) and ``value`` the value given, as Click's
    ``BadParameter(param=...)``: a caller (the command line) names the argument from them, never by
    reading the message."""

    def __init__(self, message: str, *, param: str | None = None, value: object = None,
                 reason: str | None = None) -> None:
        super().__init__(message)
        self.param = param
        self.value = value
        self.reason = reason  # what is wrong with the value, without naming the argument (None: the message)

    def __reduce__(self) -> tuple[Any, ...]:  # picklable with its keywords (explore's workers send errors back)
        return (_argument_error, (str(self), self.param, self.value, self.reason))


def _argument_error(message: str, param: str | None, value: object, reason: str | None) -> ArgumentError:
    return ArgumentError(message, param=param, value=value, reason=reason)


def bad_argument(name: str, value: object, why: str) -> ArgumentError:
    """``ArgumentError("name=value (type=T): why")`` carrying ``param=name``, ``value`` and ``reason=why``."""
    return ArgumentError(f"{describe_argument(name, value)}: {why}", param=name, value=value, reason=why)


def describe_argument(name: str, value: object) -> str:
    """``name=value (type=T)``, the value's repr cut to a readable length."""
    text = repr(value)
    if len(text) > 80:
        text = text[:60] + "…" + text[-10:]
    return f"{name}={text} (type={type(value).__name__})"


def check_type(name: str, value: object, types: type | tuple[type, ...], expected: str) -> None:
    """Raise :class:`ArgumentError` unless ``isinstance(value, types)`` (``bool`` is never a number)."""
    numeric = types in (int, float) or (isinstance(types, tuple) and (int in types or float in types))
    if not isinstance(value, types) or (isinstance(value, bool) and numeric and bool not in (
            types if isinstance(types, tuple) else (types,))):
        raise bad_argument(name, value, f"expected {expected}")


@dataclass(eq=False)
class SpecError(SymabsorbError):
    """A problem in a ``.absorb`` text, with its position."""

    summary: str
    span: Span | None = None
    found: str | None = None
    expected: str | None = None
    hint: str | None = None
    source_line: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        super().__init__(self.summary)

    @property
    def line(self) -> int | None:
        return self.span.line if self.span else None

    @property
    def column(self) -> int | None:
        return self.span.column if self.span else None

    def with_source(self, text: str) -> SpecError:
        """Attach the offending line from ``text`` (the whole file) if not yet attached."""
        if self.source_line is None and self.span is not None:
            lines = text.splitlines()
            if 1 <= self.span.line <= len(lines):
                self.source_line = lines[self.span.line - 1]
        return self

    def __str__(self) -> str:
        where = f"{self.span}: " if self.span else ""
        out = [f"{where}error: {self.summary}"]
        if self.span is not None and self.source_line is not None:
            number = str(self.span.line)
            pad = " " * len(number)
            line = self.source_line.expandtabs(1)
            column = self.span.column
            width = 1
            if self.span.end_line == self.span.line and self.span.end_column > self.span.column:
                width = self.span.end_column - self.span.column
            if len(line) > _SHOWN:  # a window around the column, not a megabyte line
                start = max(0, min(column - 1 - _SHOWN // 2, len(line) - _SHOWN))
                line = ("…" if start else "") + line[start:start + _SHOWN] + ("…" if start + _SHOWN < len(line) else "")
                column = column - start + (1 if start else 0)
                width = max(1, min(width, _SHOWN - column + 2))
            out.append(f" {number} | {line}")
            out.append(f" {pad} | {' ' * (column - 1)}{'^' * width}")
        if self.found is not None:
            out.append(f"  found: {_clip(self.found)}")
        if self.expected is not None:
            out.append(f"  expected: {_clip(self.expected)}")
        if self.hint is not None:
            out.append(f"  hint: {self.hint}")
        # No control character (terminal escape sequences) from the input reaches a terminal.
        return _CONTROL.sub("?", "\n".join(out))


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _clip(text: str, n: int = 2 * _SHOWN) -> str:
    return text if len(text) <= n else f"{text[:n - 20]}…{text[-10:]} ({len(text)} characters)"


class SpecSyntaxError(SpecError):
    """The text does not follow the grammar."""


class SpecNameError(SpecError):
    """A name is unknown, declared twice, or used before its declaration."""


class SpecValueError(SpecError):
    """A value is out of range: a zero width, a division by zero, a non-finite number..."""


class SpecShapeError(SpecError):
    """A matrix has the wrong shape."""


class SpecImportError(SpecError):
    """An ``import`` cannot be followed: missing file or a cycle."""


class SpecLimitError(SpecError):
    """The input is larger, deeper or grows faster than a limit allows (``--limit NAME=N`` raises it)."""


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """A "did you mean" hint built from the closest registered names, or ``None``."""
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=3, cutoff=0.6)
    if not close:
        return None
    return "did you mean " + " or ".join(f"`{c}`" for c in close) + "?"
