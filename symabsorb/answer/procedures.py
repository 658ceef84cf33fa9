"""The answer layer's callables of the built-in procedures: ``verify``'s re-check of a report's answer.

A procedure carries its own verifier (:attr:`symabsorb.theory.procedures.Procedure.verifier`), as it carries
its inline and file callables (attached by :mod:`symabsorb.weights.concrete`): ``verify`` asks the procedure
that decided a query, never its name. The verifiers live in this layer (they re-derive through the session),
so they are attached here, imported with :mod:`symabsorb.answer`; each imports its module on first use.
"""

from __future__ import annotations

from typing import Any

from ..theory.procedures import PROCEDURES

__all__: list[str] = []


def _degenerate(d: dict[str, Any], block: Any, verdict: str) -> str | None:
    """Theorem D (any weights): :func:`.verify_degenerate.check_inline_degenerate`."""
    from .verify_degenerate import check_inline_degenerate

    return check_inline_degenerate(d, block, verdict)


def _slopes_1d(d: dict[str, Any], again: Any, stack: Any) -> str | None:
    """Theorem 1D's witness: :func:`.verify_stack.check_1d`."""
    from .verify_stack import check_1d

    return check_1d(d, again)


def _fold(d: dict[str, Any], again: Any, stack: Any) -> str | None:
    """Theorem FA's witness: :func:`.verify_stack.check_fa`."""
    from .verify_stack import check_fa

    return check_fa(d, stack)


PROCEDURES.attach("degenerate", verifier=_degenerate)
PROCEDURES.attach("slopes-1d", verifier=_slopes_1d)
PROCEDURES.attach("fold", verifier=_fold)
