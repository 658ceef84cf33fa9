"""The registries a :class:`~symabsorb.answer.session.Session` answers with, as one snapshot.

symabsorb is extended through registries on the thing they extend: hypothesis checkers
(:func:`symabsorb.theory.hypotheses.declare`), concrete-weights procedures (:func:`symabsorb.theory.procedures.procedure`),
skip kinds (:func:`symabsorb.theory.skips.skip_kind`), renderers (:func:`symabsorb.report.formats.renderer`) and
scan layouts (:func:`symabsorb.explore.scan.register_layout`). A session holds a :class:`Registries`: what was
registered when it was made (plug-ins included, :mod:`symabsorb.plugins`), so an answer can say what it used.

The hypotheses and procedures are the library's own (the ones its results were validated against at load). The
layers above this one (report, explore) add their tables through :func:`symabsorb.plugins.provide` when they are
imported (a base module: neither side imports the other).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..plugins import provide
from ..theory.library import Library
from ..theory.procedures import ProcedureRegistry

__all__ = ["Registries", "provide"]


@dataclass(frozen=True)
class Registries:
    """What the session answers with besides the results: ``hypotheses`` (name -> declaration) and
    ``procedures`` (the library's), ``skip_kinds`` (name -> kind), and ``extra`` (the layers' above: ``renderers``
    (format names), ``layouts`` (scan layout names), ...), each a snapshot taken when the session was made."""

    hypotheses: Mapping[str, Any] = field(default_factory=dict)
    procedures: ProcedureRegistry | None = None
    skip_kinds: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, library: Library) -> Registries:
        """The registries in force now, with ``library``'s hypotheses and procedures."""
        from .. import plugins
        from ..theory.skips import SKIP_KINDS

        extra = plugins.provided()
        return cls(MappingProxyType(dict(library.hypotheses)), library.procedures,
                   MappingProxyType(dict(SKIP_KINDS)), MappingProxyType(extra))

    def __reduce__(self) -> tuple[Any, ...]:  # picklable (a session may be sent to a worker): plain dicts inside
        return (_rebuild, (dict(self.hypotheses), self.procedures, dict(self.skip_kinds), dict(self.extra)))

    def names(self) -> dict[str, tuple[str, ...]]:
        """Every registry's names, for a reader (``{"procedures": (...), "skip_kinds": (...), ...}``)."""
        out: dict[str, tuple[str, ...]] = {"hypotheses": tuple(sorted(self.hypotheses)),
                                           "procedures": self.procedures.names() if self.procedures else (),
                                           "skip_kinds": tuple(self.skip_kinds)}
        for name, value in self.extra.items():
            out[name] = tuple(value)
        return out


def _rebuild(hypotheses: dict[str, Any], procedures: ProcedureRegistry | None, skip_kinds: dict[str, Any],
             extra: dict[str, Any]) -> Registries:
    return Registries(MappingProxyType(hypotheses), procedures, MappingProxyType(skip_kinds), MappingProxyType(extra))
