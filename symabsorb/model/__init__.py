"""Activations, gated units, blocks and stacks as mathematics; the built-in catalog."""

from .activation import Activation, AnyActivation, GatedActivation, Parameter
from .block import Block, ResolvedSpec, Skip, SpecQuery, Stack
from .catalog import CATALOG, CatalogEntry
from .functions import Z
from .resolve import activation_from_text, catalog_scope, load_spec, resolve_text

__all__ = [
    "CATALOG",
    "Activation",
    "AnyActivation",
    "Block",
    "CatalogEntry",
    "GatedActivation",
    "Parameter",
    "ResolvedSpec",
    "Skip",
    "SpecQuery",
    "Stack",
    "Z",
    "activation_from_text",
    "catalog_scope",
    "load_spec",
    "resolve_text",
]
