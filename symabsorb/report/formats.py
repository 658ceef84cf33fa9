"""The one table of output formats: each renderer module registers its entry functions with
:func:`renderer`, and every consumer reads :data:`RENDERERS` — ``render``'s dispatch, the API's
format check, the CLI's ``--format`` choices and ``-o`` suffix lookup, ``scan -o``'s table formats.

A format has a canonical name, aliases (``markdown`` for ``md``), file suffixes (``.md``) and up to
four entry points, one per kind of document:

- ``report``: ``fn(report: Report, opts: RenderOptions) -> str`` (every query of a spec),
- ``answer``: ``fn(answer: QueryAnswer, library: Library, opts: RenderOptions) -> str`` (one answer),
- ``summary``: ``fn(report: Report, opts: RenderOptions) -> str`` (a notebook's compact view),
- ``scan``: ``fn(records, skipped, opts: RenderOptions) -> str`` (``symabsorb scan``'s table),
- ``graph``: ``fn(library: Library, states, opts: RenderOptions) -> str`` (``symabsorb graph``),
- ``atlas``: ``fn(atlas: Atlas, opts: RenderOptions) -> str`` (``symabsorb explore``'s atlas).

A new format is one decorated function in one file::

    @renderer("toy", suffixes=(".toy",))
    def render_toy(report, opts):
        return "..."

Asking for an unknown format, or for a kind of document a format has no entry for, raises
:class:`UnknownFormat` (a ``ValueError``) naming the formats that can: nothing falls back silently.

This module imports nothing heavy (``symabsorb --help`` reads the names); the built-in renderer
modules are imported the first time the table is read.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar

__all__ = ["KINDS", "RENDERERS", "Format", "RenderOptions", "RendererRegistry", "UnknownFormat", "renderer"]

Kind = Literal["report", "answer", "summary", "scan", "graph", "atlas"]
#: the kinds of document a format can render
KINDS: tuple[Kind, ...] = ("report", "answer", "summary", "scan", "graph", "atlas")

F = TypeVar("F", bound=Callable[..., str])


@dataclass(frozen=True)
class RenderOptions:
    """What every entry point receives besides the document: the canonical format name it was asked
    for (one function may serve two, as ``terminal`` and ``text``), ``fragment`` (an embeddable HTML
    ``<div>``, a LaTeX body without preamble), ``color``, ``width`` (columns) and ``verbose``."""

    format: str
    fragment: bool = False
    color: bool = False
    width: int = 110
    verbose: bool = False


@dataclass
class Format:
    """One output format: its names and the entry point for each kind of document it renders."""

    name: str
    aliases: tuple[str, ...] = ()
    suffixes: tuple[str, ...] = ()
    entries: dict[str, Callable[..., str]] = field(default_factory=dict)

    @property
    def names(self) -> tuple[str, ...]:
        """Every spelling that selects this format: the name, the aliases, the suffixes without dot."""
        return (self.name, *self.aliases, *(s.lstrip(".") for s in self.suffixes))


class UnknownFormat(ValueError):
    """A format name no renderer registered, or a format without an entry for the kind asked."""

    def __init__(self, message: str, choices: tuple[str, ...]) -> None:
        super().__init__(message)
        self.choices = choices


#: the modules that register the built-in formats, imported on the first read of the table
BUILTIN_MODULES = ("markdown", "html", "latex", "jsonout", "terminal", "scantable", "graph", "atlas")


class RendererRegistry:
    """Format name -> :class:`Format`, filled by :meth:`register` (the :func:`renderer` decorator)."""

    def __init__(self, builtin: tuple[str, ...] = ()) -> None:
        self._formats: dict[str, Format] = {}
        self._seq: dict[tuple[str, str], int] = {}  # the order (format, kind) entries were registered in
        self._builtin = builtin
        self._loaded = not builtin

    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True
            for module in self._builtin:
                importlib.import_module(f"{__package__}.{module}")
            from ..plugins import load

            load()  # an installed plug-in's renderer is in the table wherever it is read (--format, -o, render)

    def register(self, name: str, *, kind: Kind = "report", aliases: tuple[str, ...] = (),
                 suffixes: tuple[str, ...] = ()) -> Callable[[F], F]:
        """A decorator: the function becomes ``name``'s entry point for ``kind``. Aliases and
        suffixes add to the format's; a spelling another format already owns, or a second entry for
        the same kind, is a ``ValueError``."""
        if kind not in KINDS:
            raise ValueError(f"unknown kind of document {kind!r}: use one of {', '.join(KINDS)}")
        key = name.lower()
        if not key or key != key.strip(".") or any(s[:1] != "." for s in suffixes):
            raise ValueError(f"a format is registered as a bare name (md) with dotted suffixes (.md), not {name!r}")

        def decorate(fn: F) -> F:
            fmt = self._formats.get(key) or Format(key)
            new_aliases = tuple(a.lower() for a in aliases if a.lower() not in fmt.aliases)
            new_suffixes = tuple(s.lower() for s in suffixes if s.lower() not in fmt.suffixes)
            for spelling in (key, *new_aliases, *(s.lstrip(".") for s in new_suffixes)):
                owner = self._owner(spelling)
                if owner is not None and owner != key:
                    raise ValueError(f"format {name!r}: {spelling!r} already selects the format {owner!r}")
            if kind in fmt.entries:
                raise ValueError(f"format {name!r} already has a {kind} renderer ({fmt.entries[kind].__qualname__})")
            fmt = replace(fmt, aliases=fmt.aliases + new_aliases, suffixes=fmt.suffixes + new_suffixes,
                          entries={**fmt.entries, kind: fn})
            self._formats[key] = fmt
            self._seq.setdefault((key, kind), len(self._seq))
            return fn

        return decorate

    def unregister(self, name: str) -> None:
        """Forget the format ``name`` (every kind): what a test does after registering a toy one."""
        self._formats.pop(name.lower(), None)
        self._seq = {k: v for k, v in self._seq.items() if k[0] != name.lower()}

    def _owner(self, spelling: str) -> str | None:
        for fmt in self._formats.values():
            if spelling in fmt.names:
                return fmt.name
        return None

    def _rank(self, fmt: Format, kind: str | None = None) -> tuple[int, int]:
        """Built-in formats first, in the order of their modules (whatever order those were imported
        in), then the others as registered: the choices read the same in every process. With ``kind``,
        by that kind's entry (``json`` is listed among the graph formats where graph.py registers it)."""
        modules = [f"{__package__}.{m}" for m in self._builtin]
        entries = {k: fn for k, fn in fmt.entries.items() if kind is None or k == kind}
        ranks = [(modules.index(fn.__module__) if fn.__module__ in modules else len(modules), self._seq[(fmt.name, k)])
                 for k, fn in entries.items()]
        return min(ranks) if ranks else (len(modules), 0)

    def __iter__(self) -> Iterator[Format]:
        self._load()
        return iter(sorted(self._formats.values(), key=self._rank))

    def _of(self, kind: Kind) -> list[Format]:
        """The formats that render ``kind``, in their order for that kind."""
        self._load()
        return sorted((f for f in self._formats.values() if kind in f.entries), key=lambda f: self._rank(f, kind))

    def names(self, kind: Kind = "report") -> tuple[str, ...]:
        """The canonical names of the formats that render ``kind``, in registration order."""
        return tuple(f.name for f in self._of(kind))

    def spellings(self, kind: Kind = "report") -> tuple[str, ...]:
        """Every spelling of the formats that render ``kind``: name, aliases and suffixes without the
        dot (what ``--format`` accepts: ``md``, ``markdown``, ``htm``...)."""
        return tuple(dict.fromkeys(n for f in self._of(kind) for n in f.names))

    def suffixes(self, kind: Kind = "report") -> tuple[str, ...]:
        """The file suffixes (``.md``) of the formats that render ``kind`` (what ``-o FILE`` tells apart)."""
        return tuple(s for f in self._of(kind) for s in f.suffixes)

    def lookup(self, fmt: str, kind: Kind = "report") -> Format:
        """The format ``fmt`` names (any case, a leading dot allowed: ``.MD``, ``markdown``) if it
        renders ``kind``; :class:`UnknownFormat` naming the choices otherwise."""
        key = fmt.lower().lstrip(".") if isinstance(fmt, str) else ""
        choices = self.names(kind)
        found = next((f for f in self if key and key in f.names), None)
        if found is None:
            raise UnknownFormat(f"unknown format {fmt!r}: use one of {', '.join(choices)}", choices)
        if kind not in found.entries:
            raise UnknownFormat(f"the format {found.name!r} has no {kind} renderer: use one of {', '.join(choices)}",
                                choices)
        return found

    def by_suffix(self, suffix: str, kind: Kind = "report") -> Format:
        """The format a file suffix (``.md``, any case) selects for ``kind``; :class:`UnknownFormat`
        naming the suffixes otherwise (``.txt``: no format is chosen by that suffix)."""
        suffix = suffix.lower()
        choices = self.suffixes(kind)
        found = next((f for f in self if suffix and suffix in f.suffixes and kind in f.entries), None)
        if found is None:
            raise UnknownFormat(f"no {kind} format is written to a {suffix or 'suffix-less'} file: use one of "
                                f"{', '.join(choices)}", choices)
        return found

    def normalize(self, fmt: str, kind: Kind = "report") -> str:
        """The canonical name of ``fmt`` (``markdown`` -> ``md``)."""
        return self.lookup(fmt, kind).name

    def render(self, kind: Kind, fmt: str, *args: Any, **options: Any) -> str:
        """``kind`` in the format ``fmt``: its entry point called with ``args`` and the options."""
        found = self.lookup(fmt, kind)
        return found.entries[kind](*args, RenderOptions(found.name, **options))


#: the table every consumer reads
RENDERERS = RendererRegistry(BUILTIN_MODULES)


def _snapshot() -> dict[str, tuple[str, ...]]:
    """Format name -> the kinds it renders, as registered now (a session's snapshot, answer/registries.py)."""
    return {f.name: tuple(f.entries) for f in RENDERERS}


def _provide() -> None:
    from ..plugins import provide  # a base module: the answer layer reads it, this module imports nothing of it

    provide("renderers", _snapshot)


_provide()


def renderer(name: str, *, kind: Kind = "report", aliases: tuple[str, ...] = (),
             suffixes: tuple[str, ...] = ()) -> Callable[[F], F]:
    """Register the decorated function as the ``kind`` entry point of the format ``name`` in
    :data:`RENDERERS` (see the module docstring for each kind's signature)."""
    return RENDERERS.register(name, kind=kind, aliases=aliases, suffixes=suffixes)
