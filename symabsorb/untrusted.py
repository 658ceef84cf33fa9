"""Lemma files as untrusted input (a base module: the library loader calls it on every result file).

A ``--theorems`` directory may come from anyone, and its strings land in Markdown, HTML, LaTeX,
DOT, Mermaid, JSON and the terminal. Each renderer escapes them for its format
(:mod:`symabsorb.report.escape`); before that, the loader refuses what no format should receive:

* **ids** from a safe alphabet (:data:`ID_PATTERN`: letters and digits in words joined by single
  ``-``, at most 64 characters), so an id is a valid file stem, anchor, graph node and LaTeX label,
  and two ids that differ only in case or punctuation (``L_linear`` / ``L-linear``: one graph
  node) are refused as a collision (:func:`id_collisions`);
* **text** without control characters (C0 but tab and newline, DEL, C1 such as U+009B, the
  terminal's CSI), without bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069,
  U+200E, U+200F, U+061C) or line/paragraph separators, and at most :data:`MAX_TEXT` characters;
* **types**: every known field has the TOML type the loader expects (``priority = "high"`` is a
  positioned error, not an internal one).

:func:`check_result_data` returns the first problem as ``(needle, summary, expected, hint)`` for the
loader to position in the file; ``None`` when the data is acceptable.

Numbers written as text in reports (``"-1/2"``, ``"1e-3"``) become exact numbers only through
:func:`exact_fraction`, which bounds digits and exponents *before* building anything: ``"1e999999999"``
would otherwise make :class:`fractions.Fraction` compute a billion-digit power of ten.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

__all__ = ["ID_PATTERN", "MAX_NUMBER_DIGITS", "MAX_NUMBER_EXPONENT", "MAX_TEXT", "check_result_data", "exact_fraction",
           "id_collisions", "id_key", "nfc_twins", "shown", "text_problem", "visible"]

#: Digits of the numerator or denominator of a number read from a report (as text or integer).
MAX_NUMBER_DIGITS = 10_000
#: Largest decimal exponent (``1e-3``: 3) of a number read from a report.
MAX_NUMBER_EXPONENT = 10_000
_RATIO = re.compile(r"([+-]?)(\d+)(?:/(\d+))?", re.ASCII)
_DECIMAL = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?", re.ASCII)


def exact_fraction(value: Any) -> Fraction:
    """The exact rational a report writes as ``value`` (an integer, or text ``p``, ``p/q``, a decimal
    ``-1.25e-3``), with its size checked before any number is built: at most
    :data:`MAX_NUMBER_DIGITS` digits in the numerator and denominator and an exponent of at most
    :data:`MAX_NUMBER_EXPONENT`. Raises :class:`ValueError` (with what was wrong, never the whole
    text) for anything else: ``nan``, ``inf``, ``1_000``, a zero denominator, ``1e999999999``."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"not a number written as an integer or text ({type(value).__name__})")
    if isinstance(value, int):
        if value.bit_length() > MAX_NUMBER_DIGITS * 3.33:
            raise ValueError(f"an integer of more than {MAX_NUMBER_DIGITS} digits")
        return Fraction(value)
    text = value.strip()
    if len(text) > 2 * MAX_NUMBER_DIGITS + 8:
        raise ValueError(f"{len(text)} characters (at most {2 * MAX_NUMBER_DIGITS + 8})")
    m = _RATIO.fullmatch(text)
    if m is not None:
        num, den = m.group(2), m.group(3)
        if len(num) > MAX_NUMBER_DIGITS or (den is not None and len(den) > MAX_NUMBER_DIGITS):
            raise ValueError(f"more than {MAX_NUMBER_DIGITS} digits")
        if den is not None and int(den) == 0:
            raise ValueError("a zero denominator")
        q = Fraction(int(num), int(den) if den is not None else 1)
        return -q if m.group(1) == "-" else q
    m = _DECIMAL.fullmatch(text)
    if m is None or not (m.group(2) or m.group(3)):
        raise ValueError(f"`{shown(text, 40)}` is not an integer, p/q or a decimal number")
    whole, frac, exp = m.group(2) or "", m.group(3) or "", m.group(4)
    if len(whole) + len(frac) > MAX_NUMBER_DIGITS:
        raise ValueError(f"more than {MAX_NUMBER_DIGITS} digits")
    if exp is not None and len(exp.lstrip("+-").lstrip("0")) > 6:
        raise ValueError(f"the exponent `{shown(exp, 20)}` is out of range (at most {MAX_NUMBER_EXPONENT})")
    e = int(exp) if exp is not None else 0
    if abs(e) > MAX_NUMBER_EXPONENT:
        raise ValueError(f"the exponent {e} is out of range (at most {MAX_NUMBER_EXPONENT} in size)")
    q = Fraction(int(whole + frac or "0"))
    shift = e - len(frac)
    q = q * 10**shift if shift >= 0 else q / 10**-shift
    return -q if m.group(1) == "-" else q

ID_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")
MAX_ID = 64
MAX_TEXT = 20_000
_BAD_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]")

#: Top-level fields and their types (``str``, ``int``, ``list[str]``, ``table``).
_FIELDS: dict[str, str] = {
    "id": "str", "label": "str", "title": "str", "kind": "str", "source": "str", "citation": "str", "role": "str",
    "applies_to": "str", "priority": "int", "statement": "str", "uses": "list[str]", "hypotheses": "list[table]",
    "conclusion": "table", "proof": "table",
}


def text_problem(text: str) -> str | None:
    """What makes ``text`` unfit for any output format, or ``None``."""
    if len(text) > MAX_TEXT:
        return f"{len(text)} characters (at most {MAX_TEXT})"
    bad = _BAD_CHARS.search(text)
    if bad is not None:
        return f"the control or bidirectional character U+{ord(bad.group()):04X}"
    return None


def id_key(result_id: str) -> str:
    """What two ids must not share: lower case, letters and digits only (the graph node id, the
    anchor and the file name of every renderer are derived from it)."""
    return re.sub(r"[^a-z0-9]", "", result_id.lower())


def id_collisions(ids: Iterable[str]) -> list[tuple[str, str]]:
    """Pairs of distinct ids with the same :func:`id_key` (the later one second)."""
    seen: dict[str, str] = {}
    out: list[tuple[str, str]] = []
    for rid in ids:
        key = id_key(rid)
        if key in seen and seen[key] != rid:
            out.append((seen[key], rid))
        seen.setdefault(key, rid)
    return out


def _type_name(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "an array",
            dict: "a table"}.get(type(value), type(value).__name__)


def _matches(value: Any, kind: str) -> bool:
    if kind == "str":
        return isinstance(value, str)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "table":
        return isinstance(value, dict)
    if kind == "list[str]":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if kind == "list[table]":
        return isinstance(value, list) and all(isinstance(v, dict) for v in value)
    return True


_EXPECTED = {"str": 'a quoted string ("...")', "int": "an integer (priority = 50)",
             "list[str]": 'an array of strings (["a", "b"])', "list[table]": "[[hypotheses]] tables",
             "table": "a table ([conclusion], [proof])"}


def _strings(value: Any, path: str) -> Iterable[tuple[str, str]]:
    """Every string inside ``value`` (keys included) with where it is."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield f"{path}.{k}", str(k)
            yield from _strings(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{path}[{i}]")


Problem = tuple[str, str, str, "str | None"]


def check_result_data(data: Mapping[str, Any]) -> Problem | None:
    """The first problem of one parsed result file, as ``(needle, summary, expected, hint)``."""
    for key, kind in _FIELDS.items():
        if key in data and not _matches(data[key], kind):
            return (key, f"`{key}` is {_type_name(data[key])}", _EXPECTED[kind],
                    "see docs/theorems.md for the format")
    rid = data.get("id")
    if isinstance(rid, str) and (len(rid) > MAX_ID or not ID_PATTERN.fullmatch(rid)):
        return (rid or "id", f"result id `{_shown(rid)}` is not a safe id",
                f"letters and digits in words joined by `-` (`L-linear`, `thm8`), at most {MAX_ID} characters",
                "ids name graph nodes, anchors, labels and files in every output format")
    for i, h in enumerate(data.get("hypotheses") or []):
        if not isinstance(h.get("name"), str):
            return ("[[hypotheses]]", f"hypothesis {i + 1} has no `name` string", 'name = "..."', None)
        if "params" in h and not isinstance(h["params"], dict):
            return ("params", f"`params` of hypothesis `{_shown(h['name'])}` is {_type_name(h['params'])}",
                    "a table (params = { n = 2 })", None)
    for key in ("conclusion", "proof"):
        table = data.get(key)
        if isinstance(table, dict):
            for field, value in table.items():
                if key == "proof" and field == "steps":
                    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                        return ("steps", "`steps` in [proof] is not an array of strings", "steps = ['''...''']", None)
                elif not isinstance(value, str):
                    return (field, f"`{field}` in [{key}] is {_type_name(value)}", _EXPECTED["str"], None)
    for where, text in _strings(dict(data), ""):
        problem = text_problem(text)
        if problem is not None:
            return (where.lstrip(".").split(".")[-1].split("[")[0] or "=", f"`{where.lstrip('.')}` holds {problem}",
                    "printable text", "lemma strings reach terminals and documents; control and bidirectional "
                    "characters are refused")
    return None


def shown(text: str, limit: int = 200) -> str:
    """``text`` safe to show anywhere: control and bidirectional characters as ``?``, clipped."""
    out = _BAD_CHARS.sub("?", text)
    return out if len(out) <= limit else out[: limit - 1] + "…"


def _shown(text: str) -> str:
    return shown(text, 80)


#: Unicode categories a reader cannot see or tell apart: controls, format characters (zero-width
#: spaces and joiners, bidirectional marks, the BOM, the soft hyphen), line and paragraph separators,
#: spaces other than U+0020, surrogates (undecodable bytes of a file name), private and unassigned.
_INVISIBLE = frozenset(("Cc", "Cf", "Zl", "Zp", "Zs", "Cs", "Co", "Cn"))
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(ch: str) -> str:
    if ch in _SHORT:
        return _SHORT[ch]
    return f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}"


def visible(text: str, ascii_only: bool = False) -> str:
    """A name from someone else's file (a checkpoint's path, a tensor name) as a reader can tell it
    apart: every control, format, line-separator, non-ASCII space, surrogate or unassigned character
    written as an escape (``\\r``, ``\\u2028``, ``\\u200b``), and a backslash as ``\\\\`` when
    anything is escaped (so an escape never reads like a name's own text). ``ascii_only``: every
    non-ASCII character escaped too (what tells ``é`` from ``e`` + U+0301), and every backslash
    doubled: two different texts never read the same with ``ascii_only``."""
    def hidden(ch: str) -> bool:
        return ch != " " and (unicodedata.category(ch) in _INVISIBLE or (ascii_only and ord(ch) > 126))

    if not ascii_only and not any(hidden(ch) for ch in text):
        return text
    return "".join(_escape_char(ch) if hidden(ch) else "\\\\" if ch == "\\" else ch for ch in text)


def nfc_twins(texts: Sequence[str]) -> list[list[int]]:
    """Groups of positions (two or more) whose texts differ but read alike: equal after Unicode NFC
    normalisation once invisible characters are shown (:func:`visible`)."""
    groups: dict[str, list[int]] = {}
    for i, text in enumerate(texts):
        groups.setdefault(unicodedata.normalize("NFC", visible(text)), []).append(i)
    return [g for g in groups.values() if len({texts[i] for i in g}) > 1]
