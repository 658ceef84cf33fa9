"""Plug-in discovery: installed extensions register themselves through one entry-point group.

An extension (a renderer, a skip kind, a concrete-weights procedure, a hypothesis checker) is an ordinary
module that registers with the decorator of the registry it extends (``@renderer("md")``, ``@skip_kind``,
``@procedure("name")``, ``declare(...)``). A pip-installed distribution makes it seen by every symabsorb
process — the shell command, the API, Dask and in-process workers — by naming it in its metadata::

    [project.entry-points."symabsorb.plugins"]
    myext = "myext.symabsorb_plugin"            # a module: importing it registers
    other = "other.plug:register"               # or a callable, called once with no argument

:func:`load` imports every entry point of the group :data:`GROUP`, once per process, in name order. It is
called before a library is loaded (a plug-in procedure or hypothesis must exist before a result naming it
is validated) and when a :class:`~symabsorb.answer.session.Session` is made, so a worker that builds its
session the way the command does sees the same extensions. A plug-in that fails to load is an error
naming it (:class:`PluginError`), never skipped silently: a missing extension would change the answers.

A base module (it imports nothing of symabsorb's layers), so every layer may call it.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

from .errors import SymabsorbError

__all__ = ["GROUP", "PluginError", "load", "loaded", "provide", "provided", "reset"]

#: The entry-point group symabsorb reads.
GROUP = "symabsorb.plugins"

_LOADED: dict[str, str] = {}
#: registry name -> a function returning its snapshot, for the tables of the layers above the answer layer
#: (report: the renderers, explore: the scan layouts); a session's snapshot reads them (answer/registries.py).
_PROVIDERS: dict[str, Any] = {}
_DONE: list[bool] = []
_LOCK = threading.RLock()


class PluginError(SymabsorbError):
    """An installed plug-in (an entry point of :data:`GROUP`) failed to load; exit code 2."""


def _may_have_plugins() -> bool:
    """Whether some distribution on ``sys.path`` may declare the group: a ``*.dist-info`` or ``*.egg-info``
    whose ``entry_points.txt`` names it, or a path entry this scan cannot read (a zip file). A cheap
    pre-check: ``importlib.metadata`` costs some 40 ms of CPU per process (its import and every
    distribution's metadata), which a command without plug-ins need not pay."""
    header = f"[{GROUP}]".encode()
    for entry in sys.path:
        path = entry or "."
        if not os.path.isdir(path):
            if os.path.exists(path):
                return True  # a zip or another importable file: only importlib.metadata reads it
            continue
        try:
            names = os.listdir(path)
        except OSError:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            try:
                with open(os.path.join(path, name, "entry_points.txt"), "rb") as f:
                    if header in f.read(1 << 20):
                        return True
            except OSError:
                continue
    return False


def load() -> dict[str, str]:
    """Load every installed plug-in once per process; returns ``{entry point name: its value}`` of those
    loaded so far (:func:`loaded`)."""
    if _DONE:
        return dict(_LOADED)
    with _LOCK:
        if _DONE:
            return dict(_LOADED)
        if not _may_have_plugins():
            _DONE.append(True)
            return dict(_LOADED)
        from importlib.metadata import entry_points

        found = sorted(entry_points(group=GROUP), key=lambda ep: (ep.name, ep.value))
        for ep in found:
            if ep.name in _LOADED:
                continue  # the same name from two distributions on the path: the first (by value) wins
            try:
                obj: Any = ep.load()
                if callable(obj):
                    obj()
            except SymabsorbError:
                raise
            except Exception as exc:  # any failure of third-party code is reported, never swallowed
                raise PluginError(f"the symabsorb plug-in `{ep.name}` ({ep.value}) failed to load: "
                                  f"{type(exc).__name__}: {exc}") from exc
            _LOADED[ep.name] = ep.value
        _DONE.append(True)
        return dict(_LOADED)


def provide(name: str, snapshot: Any) -> None:
    """Let a registry of a layer above the answer layer be part of every session's snapshot: ``snapshot()``
    returns an immutable copy of it as it is now. Kept here, in a base module, so that a renderer's module
    registering its table imports nothing of the answer layer."""
    _PROVIDERS[name] = snapshot


def provided() -> dict[str, Any]:
    """Every provided registry's snapshot, by name (sorted)."""
    return {name: snapshot() for name, snapshot in sorted(_PROVIDERS.items())}


def loaded() -> dict[str, str]:
    """The plug-ins loaded in this process: entry point name -> its value (``module`` or ``module:attr``)."""
    return dict(_LOADED)


def reset() -> None:
    """Forget that plug-ins were loaded, so :func:`load` reads the entry points again (for tests that
    install a fake distribution; the registrations a plug-in made stay)."""
    with _LOCK:
        _DONE.clear()
        _LOADED.clear()
