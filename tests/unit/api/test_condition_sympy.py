"""`Result.condition_sympy` for the Hyper-Connection (⊗) and post-LN (P W_down[:,S] W_up[S,:]) forms of the
index-set condition (issue 28 row 9); rescale conditions stay None by design (an Eq would drop D_ii > −1)."""

from __future__ import annotations

import sympy as sp
from sympy.matrices.expressions.kronecker import KroneckerProduct

import symabsorb

SPEC = """activation sq(z) = z + z*abs(z)
block hc { activation: relu dim: 2 skip: hyper(n: 2, mix: [[1, 1/2], [0, 1]]) }
block pln { activation: relu dim: 3 norm: post-ln }
block resc { activation: sq dim: 2 width: 3 }
absorb hc
absorb pln
absorb resc
"""


def test_kronecker_post_ln_and_rescale_conditions() -> None:
    hc, pln, resc = symabsorb.prove(symabsorb.load(SPEC)).results
    d = sp.Symbol("d", integer=True, positive=True)
    eq = hc.condition_sympy
    assert isinstance(eq, sp.Eq) and hc.condition.endswith("⊗ I_d")
    assert isinstance(eq.rhs, KroneckerProduct)
    mix, ident = eq.rhs.args
    assert sp.Matrix(mix) == sp.Matrix([[-1, -sp.Rational(1, 2)], [0, -1]]) and ident == sp.Identity(d)
    assert eq.lhs.shape == (2 * d, 2 * d)  # W_down[:,S] is n·d x k on the whole stream
    eq = pln.condition_sympy
    assert isinstance(eq, sp.Eq) and pln.condition.startswith("P W_down[:,S] W_up[S,:]")
    p = sp.MatrixSymbol("P", d, d)
    assert eq.lhs.args[0] == p and eq.lhs.shape == (d, d)
    assert eq.rhs == -(sp.Identity(d) - sp.OneMatrix(d, d) / d)
    # P substituted: the centring projection itself
    assert eq.lhs.subs(p, sp.Identity(d) - sp.OneMatrix(d, d) / d).shape == (d, d)
    assert resc.verdict == "conditional" and resc.condition.startswith("c W_down D W_up = M")
    assert resc.condition_sympy is None
