"""symabsorb: can a residual block ``x -> Mx + MLP(x)`` be rewritten as a residual-free MLP?

The public API (documented in ``docs/api.md``)::

    import symabsorb
    symabsorb.classify("gelu")                      # a Result: verdict, derivation, render("html")
    symabsorb.facts("z*sigmoid(z)")                 # every fact about one activation
    spec = symabsorb.load("examples/paper.absorb")  # or spec text
    report = symabsorb.prove(spec)                  # every query answered; report.render("tex")
    symabsorb.decide("relu", w_up, w_down)          # concrete weights: arrays, exact values or file=...
    symabsorb.check(spec); symabsorb.fmt(path)      # a spec's listing; its canonical form
    symabsorb.graph().render("mermaid")             # the lemma graph

The package is layered (each layer imports only earlier ones)::

    dsl -> model -> analysis -> theory -> weights -> answer -> explore -> report -> results -> api -> cli

(``results``: the result objects ``api`` returns; the command line reaches the package only through
``api`` and ``runtime``, see ``tests/unit/test_import_layers.py``.)

(``symabsorb.api.explore`` maps spaces of activations: not re-exported, since ``symabsorb.explore``
is the subpackage that does the work.) Importing ``symabsorb`` itself stays cheap: the names above
are loaded on first use, and SymPy only by the layers that need it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name -> module that defines it (loaded on first access)
_LAZY = {
    "load": "api", "classify": "api", "facts": "api", "prove": "api", "absorb": "api", "decide": "api",
    "library": "api", "Spec": "api", "Result": "api", "Report": "api", "catalog": "api", "verify": "api",
    "scan": "api", "executor": "api", "select": "api", "Catalog": "api", "Verification": "api",
    "Exploration": "api", "Scan": "api", "check": "api", "fmt": "api", "graph": "api", "absorb_width": "api",
    "Listing": "api", "Formatted": "api", "Graph": "api", "WidthWitness": "api",
    "SymabsorbError": "errors", "SpecError": "errors", "ArgumentError": "errors", "InternalError": "errors",
}

__all__ = ["ArgumentError", "Catalog", "Exploration", "Formatted", "Graph", "InternalError", "Listing", "Report",
           "Result", "Scan", "Spec", "SpecError", "SymabsorbError", "Verification", "WidthWitness", "__version__", "absorb",
           "absorb_width", "catalog", "check", "classify", "decide", "executor", "facts", "fmt", "graph", "library",
           "load", "prove", "scan", "select", "verify"]

if TYPE_CHECKING:
    from .api import (
        Catalog,
        Exploration,
        Formatted,
        Graph,
        Listing,
        Report,
        Result,
        Scan,
        Spec,
        Verification,
        WidthWitness,
        absorb,
        absorb_width,
        catalog,
        check,
        classify,
        decide,
        executor,
        facts,
        fmt,
        graph,
        library,
        load,
        prove,
        scan,
        select,
        verify,
    )
    from .errors import ArgumentError, InternalError, SpecError, SymabsorbError


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'symabsorb' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
