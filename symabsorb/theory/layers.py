"""Real layers in the prover: a normalisation after the residual sum reduces the question to an
ordinary one (Lemma PN for LayerNorm, injectivity for RMSNorm), decided by the results of the
reduced block's own setting. Which lemma justifies a reduction is data (a ``reduction`` result whose
``[setting] norm`` names the placement); this module only builds the reduced block."""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from ..model.block import Block
from .skips import centering, post_ln_skip

__all__ = ["centering", "reduced_block"]


def reduced_block(block: Block) -> Block | str:
    """The block whose ordinary (un-normalised) question is the question of ``block`` (post-LN:
    skip ``PM``, output weights ``P·W_down``, output bias ``P·b_down``; post-RMSNorm: the block
    itself without the norm), or why it cannot be built."""
    if block.norm == "post-rms":
        return replace(block, norm="none", eps=None, ln_gamma=None)
    if block.norm != "post-ln":
        return "only a normalisation after the residual sum reduces to the ordinary question"
    d = block.dim
    if not isinstance(d, int):
        return ("the reduction uses the centring P = I − 11ᵀ/d, which needs a numeric `dim:` "
                "(give the dimension, or inline or file weights)")
    skip = block.skip
    new = post_ln_skip(skip, d)
    if isinstance(new, str):
        return new
    p = centering(d) if block.w_down is not None or block.b_down is not None else None
    w_down = sp.ImmutableMatrix(p * block.w_down) if p is not None and block.w_down is not None else block.w_down
    b_down = sp.ImmutableMatrix(p * block.b_down) if p is not None and block.b_down is not None else block.b_down
    return replace(block, skip=new, w_down=w_down, b_down=b_down, norm="none", eps=None, ln_gamma=None,
                   absorber_bias=block.question.absorber_biases)
