"""``symabsorb absorb``: decide one block with concrete weights and write the witness."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

__all__ = ["absorb_command"]


def absorb_command(args: argparse.Namespace, read_spec: Callable[[str], Any], library: Callable[[Any], Any],
                   write: Callable[..., None]) -> int:
    from ..dsl.errors import SymabsorbError

    raise SymabsorbError("`symabsorb absorb` needs concrete weights support, which is not built yet")
