"""Constants proved rational, written as the rational before any check reads σ.

A hidden zero (``cosh(1)^2 − sinh(1)^2 − 1``, ``log 6 − log 2 − log 3``) is the number 0; written in
an exponent (``exp(h·z)``) or as a coefficient it made every fact exhaust its budget, since no
decision procedure sees through it (issue 29). The spec resolver folds such constants in the sums it
builds (``model/resolve.py``); an activation handed over as SymPy (an ``Activation`` built by a
caller, a test's mutant) meets :func:`fold_constants` where it enters the prover (``theory.prover.derive``)
or the facts (:func:`~.engine.analyze`).

Sound by construction: a symbol-free subexpression is replaced only when

* a rigorous enclosure (:mod:`.enclosure`) of it is finite — every division, logarithm and root in
  it is defined — and tight around a rational ``q`` (a float only *suggests* ``q``), and
* the exact sign decision proves ``c − q = 0`` (:func:`.identity.exact_zero`).

Anything else, including a decision that runs out of its bounds, leaves the subexpression as written.
The work is bounded: at most :data:`MAX_DECISIONS` exact decisions, :data:`MAX_SCREENS` enclosures and
:data:`FOLD_SECONDS` of CPU per expression.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import sympy as sp

from ..budget import BudgetExhausted, Timeout, deadline
from ..model.activation import Activation, AnyActivation, GatedActivation
from ..model.block import Block, Stack
from .enclosure import NotNumeric, enclose_constant
from .identity import exact_zero

__all__ = ["FOLD_SECONDS", "MAX_DECISIONS", "MAX_SCREENS", "fold_activation", "fold_constants", "fold_target"]

#: CPU seconds the folding of one expression may take (past it: the rest is left as written).
FOLD_SECONDS = 5.0
#: Exact decisions (each a bounded ``simplify`` at most) per expression.
MAX_DECISIONS = 24
#: Enclosures that screen a candidate, per expression (the bound that holds off the main thread too,
#: where no CPU deadline can interrupt).
MAX_SCREENS = 256
#: Working precision (bits) of the enclosure that screens a candidate.
_SCREEN_BITS = 256
#: Largest denominator of a candidate rational.
_MAX_DENOMINATOR = 10**12

_UNDEFINED = (sp.nan, sp.zoo, sp.oo, -sp.oo)
_CACHE: dict[sp.Basic, sp.Basic] = {}
_CACHE_SIZE = 2048


class _OutOfDecisions(Exception):
    pass


class _Folder:
    def __init__(self) -> None:
        self.decisions = 0
        self.screens = 0
        self.seen: dict[sp.Basic, sp.Rational | None] = {}

    def rational(self, c: sp.Expr) -> sp.Rational | None:
        """The rational ``c`` is proved equal to, or None (not shown)."""
        if c in self.seen:
            return self.seen[c]
        q = self._rational(c)
        self.seen[c] = q
        return q

    def _rational(self, c: sp.Expr) -> sp.Rational | None:
        if _plain_constant(c) or c.has(sp.Float, sp.I, *_UNDEFINED):
            return None
        if isinstance(c, (sp.Add, sp.Mul)):
            # 1.0507… + h (a long rational written plus a hidden zero): the rational part as it is
            r, rest = c.as_coeff_Add() if isinstance(c, sp.Add) else c.as_coeff_Mul()
            if r.is_Rational and r != (0 if isinstance(c, sp.Add) else 1):
                q = self.rational(rest)
                return None if q is None else (r + q if isinstance(c, sp.Add) else r * q)
        if self.screens >= MAX_SCREENS:
            raise _OutOfDecisions
        self.screens += 1
        q = _candidate(c)
        if q is None:
            return None
        if self.decisions >= MAX_DECISIONS:
            raise _OutOfDecisions
        self.decisions += 1
        return q if exact_zero(c - q) is True else None

    def fold(self, e: sp.Basic) -> sp.Basic:
        if e.is_Atom or not e.args:
            return e
        if isinstance(e, sp.Expr) and not e.free_symbols and not e.is_Rational:
            q = self.rational(e)
            if q is not None:
                return q
        args = tuple(self.fold(a) for a in e.args)
        if all(a is b for a, b in zip(args, e.args, strict=True)):
            out = e
        else:
            try:
                out = e.func(*args)
            except (TypeError, ValueError):  # a node SymPy refuses to rebuild: left as written
                return e
            if out.has(*_UNDEFINED) and not e.has(*_UNDEFINED):
                return e  # 1/h, log(h) for a hidden zero h: not a value; the checks meet it as written
        if isinstance(out, (sp.Add, sp.Mul)) and out.free_symbols:
            out = self._constant_part(out)
        return out

    def _constant_part(self, e: sp.Add | sp.Mul) -> sp.Expr:
        """``e`` with its constant summand (factor) replaced by the rational it is proved to equal:
        ``z + cosh(1)^2 − sinh(1)^2 − 1`` holds no single node for the constant part."""
        add = isinstance(e, sp.Add)
        op = sp.Add if add else sp.Mul
        const, rest = e.as_independent(*e.free_symbols, as_Add=add)
        parts = op.make_args(const)
        if const.is_Rational or len(parts) < 2:
            return e
        q = self.rational(const)
        if q is None:
            # √2·(cosh 1 − sinh 1)(cosh 1 + sinh 1): the part that is not plainly irrational on its own
            plain = [a for a in parts if _plain_constant(a)]
            other = [a for a in parts if not _plain_constant(a)]
            if not plain or len(other) < 2:
                return e
            q = self.rational(op(*other))
            if q is None:
                return e
            const = op(q, *plain)
        else:
            const = q
        return const + rest if add else const * rest


def _plain_constant(c: sp.Expr) -> bool:
    """``π``, ``e``, ``√2``, ``3·√2/2``: nothing to fold (SymPy writes a rational power of a rational
    that is rational as the rational itself). Only a shortcut: it claims nothing about ``c``."""
    factors = sp.Mul.make_args(c)
    return all(f.is_Rational or f.is_NumberSymbol or (isinstance(f, sp.Pow) and f.base.is_Rational
                                                         and f.exp.is_Rational) for f in factors)


def _candidate(c: sp.Expr) -> sp.Rational | None:
    """The rational a tight, finite enclosure of ``c`` suggests, or None. The enclosure is finite
    only when every operation in ``c`` is defined (no division by a ball holding 0, no logarithm of
    one), so a suggested ``q`` is the value of a well-defined real constant if ``c − q`` is proved 0."""
    try:
        ball = enclose_constant(c, _SCREEN_BITS)
    except NotNumeric:
        return None
    v = ball.value
    if not v.is_finite() or v.rad() > 2 ** -(_SCREEN_BITS // 2):
        return None
    man, exp = v.mid().man_exp()
    mid = Fraction(int(man)) * Fraction(2) ** int(exp)
    q = mid.limit_denominator(_MAX_DENOMINATOR)
    r = sp.Rational(q.numerator, q.denominator)
    return r if v.contains(_arb(r)) else None


def _arb(q: sp.Rational) -> object:
    import flint

    return flint.arb(flint.fmpq(int(q.p), int(q.q)))


def fold_constants(expr: sp.Basic) -> sp.Basic:
    """``expr`` with every symbol-free subexpression proved equal to a rational replaced by it
    (hidden zeros become 0); a subexpression not proved rational is left as written. Bounded by
    :data:`MAX_DECISIONS` exact decisions and :data:`FOLD_SECONDS` of CPU."""
    if not isinstance(expr, sp.Basic) or expr.is_Atom:
        return expr
    hit = _CACHE.get(expr)
    if hit is not None:
        return hit
    folder = _Folder()
    out = expr
    try:
        with deadline(FOLD_SECONDS):
            out = folder.fold(expr)
    except BudgetExhausted:
        raise
    except (_OutOfDecisions, Timeout):
        # each replacement is proved: apply the ones decided before the bound was reached (kept for the
        # process, so that the next query on this σ does not spend the bound again)
        done = {c: q for c, q in folder.seen.items() if q is not None}
        out = expr.xreplace(done) if done else expr
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    _CACHE[expr] = out
    _CACHE[out] = out
    return out


def fold_activation(act: AnyActivation) -> AnyActivation:
    """``act`` with its expression (a gated unit's gate) folded by :func:`fold_constants`; ``act``
    itself when nothing changed."""
    if isinstance(act, GatedActivation):
        gate = _fold_plain(act.gate)
        return act if gate is act.gate else dataclasses.replace(act, gate=gate)
    return _fold_plain(act)


def _fold_plain(act: Activation) -> Activation:
    expr = fold_constants(act.expr)
    # the fold's cache may hand back an equal tree built for another activation: nothing changed, same object
    return act if expr is act.expr or expr == act.expr else dataclasses.replace(act, expr=expr)


def _fold_block(block: Block) -> Block:
    act = fold_activation(block.activation)
    return block if act is block.activation else dataclasses.replace(block, activation=act)


def fold_target(target: Block | Stack) -> Block | Stack:
    """A block (each block of a stack) with its activation folded; ``target`` itself when nothing changed."""
    if isinstance(target, Block):
        return _fold_block(target)
    blocks = tuple(_fold_block(b) for b in target.blocks)
    if all(a is b for a, b in zip(blocks, target.blocks, strict=True)):
        return target
    return dataclasses.replace(target, blocks=blocks)

