"""``prove -k PATTERN`` (and :func:`symabsorb.select`): pytest's ``-k`` expressions over query texts.
Words match as case-insensitive substrings, combined with ``and``, ``or``, ``not`` and parentheses."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["keyword_matcher"]


def keyword_matcher(expression: str) -> Callable[[str], bool]:
    """A predicate on query texts from a pytest-style ``-k`` expression: words match as
    case-insensitive substrings, combined with ``and``, ``or``, ``not`` and parentheses."""
    import re

    from .errors import ArgumentError, bad_argument, check_type

    check_type("keyword", expression, str, "a -k expression such as 'relu and not deep' (str)")
    tokens = re.findall(r"\(|\)|[^\s()]+", expression)

    def bad(why: str) -> ArgumentError:
        return bad_argument('keyword', expression, f"{why}; expected words joined by and, or, "
                             "not and parentheses, e.g. 'relu and not deep'")

    if not tokens:
        raise bad("the expression is empty")
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> str:
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    def primary() -> Callable[[str], bool]:
        token = peek()
        if token is None:
            raise bad("it ends where a word was expected")
        if token == "not":
            take()
            inner = primary()
            return lambda text: not inner(text)
        if token == "(":
            take()
            inner = disjunction()
            if peek() != ")":
                raise bad("a `(` is not closed")
            take()
            return inner
        if token in (")", "and", "or"):
            raise bad(f"`{token}` where a word was expected")
        word = take().lower()
        return lambda text: word in text.lower()

    def conjunction() -> Callable[[str], bool]:
        parts = [primary()]
        while peek() == "and":
            take()
            parts.append(primary())
        return lambda text: all(p(text) for p in parts)

    def disjunction() -> Callable[[str], bool]:
        parts = [conjunction()]
        while peek() == "or":
            take()
            parts.append(conjunction())
        return lambda text: any(p(text) for p in parts)

    matcher = disjunction()
    if pos != len(tokens):
        raise bad(f"`{tokens[pos]}` follows a complete expression (join words with and / or)")
    return matcher
