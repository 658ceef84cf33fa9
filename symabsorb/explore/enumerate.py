"""Enumerate a space's expressions bottom-up by size, dropping duplicates as QuickSpec does.

Size counts nodes: ``z`` and constants are 1, ``f(t)`` is ``1 + size(t)``, ``a op b`` is
``1 + size(a) + size(b)``. A subterm free of ``z`` is always a single constant (``tanh(2)`` or
``2*2`` add nothing). New terms are built only from the surviving representatives of smaller sizes,
so a proved duplicate never spawns more terms (a term built from it equals one built from its
representative).

Duplicates, in rising cost: SymPy's structural equality (after its automatic canonical form);
then the semantic fingerprint (:mod:`.fingerprint`) puts the rest in buckets, where two terms merge
only if their balls overlap at every point **and** the exact identity check proves them equal. A
pair that overlaps everywhere without a proof stays as two survivors, listed as *unresolved*.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import sympy as sp

from ..model.functions import Z
from ..model.space import Space
from .budget import run_with_cpu_budget
from .fingerprint import Fingerprint, certainly_different, fingerprint
from .terms import Term

__all__ = ["IDENTITY_BUDGET", "Enumeration", "Survivor", "enumerate_space"]

#: CPU seconds for one exact identity check between two candidates of a bucket.
IDENTITY_BUDGET = 5.0


@dataclass(frozen=True)
class Survivor:
    """A semantically distinct expression: its first term, its expression and fingerprint."""

    term: Term
    expr: sp.Expr
    text: str
    fingerprint: Fingerprint = field(compare=False, repr=False)


@dataclass(frozen=True)
class Enumeration:
    space: str
    size: int
    generated: int  # every term built (candidates), including those dropped below
    constant: int  # free of z after SymPy's evaluation (``z - z``)
    structural: int  # equal as SymPy expressions to an earlier term
    proved: int  # merged after an exact identity proof
    survivors: tuple[Survivor, ...]
    merges: tuple[tuple[str, str], ...] = ()  # (dropped term, kept survivor), proved equal
    unresolved: tuple[tuple[str, str], ...] = ()  # overlapping everywhere, equality not proved
    per_size: tuple[tuple[int, int, int], ...] = ()  # (size, generated, survivors)
    merged_exprs: tuple[tuple[sp.Expr, sp.Expr], ...] = field(default=(), compare=False, repr=False)

    @property
    def candidates(self) -> int:
        return self.generated


def _identical(a: sp.Expr, b: sp.Expr) -> str:
    """``proved`` / ``refuted`` / ``unknown`` (exact steps only prove; the budget is CPU time)."""
    from ..analysis.engine import identical

    outcome = run_with_cpu_budget(lambda: identical(a, b, "the earlier candidate"), IDENTITY_BUDGET)
    if outcome.exceeded or outcome.value is None:
        return "unknown"
    return str(outcome.value.status.value)


def _pairs(left: list[tuple[int, Term, sp.Expr]], right: list[tuple[int, Term, sp.Expr]],
           commutative: bool) -> Iterator[tuple[Term, sp.Expr, Term, sp.Expr]]:
    for oa, ta, ea in left:
        for ob, tb, eb in right:
            if not (ta.has_z or tb.has_z):
                continue
            if commutative and oa > ob:
                continue
            if oa == ob and ta == tb and not commutative:
                continue  # t - t
            yield ta, ea, tb, eb


def enumerate_space(space: Space, progress: Callable[[int, int], None] | None = None,
                    identity: Callable[[sp.Expr, sp.Expr], str] = _identical) -> Enumeration:
    """Every distinct expression of ``space`` up to its size (see the module docstring)."""
    ordinal = 0
    consts: list[tuple[int, Term, sp.Expr]] = []
    for i, c in enumerate(space.constants):
        consts.append((-len(space.constants) + i, Term("c", i), c))
    reps: dict[int, list[tuple[int, Term, sp.Expr]]] = {}
    seen: set[sp.Expr] = set()
    buckets: dict[tuple[str, ...], list[Survivor]] = {}
    survivors: list[Survivor] = []
    merges: list[tuple[str, str]] = []
    merged_exprs: list[tuple[sp.Expr, sp.Expr]] = []
    unresolved: list[tuple[str, str]] = []
    generated = constant = structural = proved = 0
    per_size = []

    def pool(k: int) -> list[tuple[int, Term, sp.Expr]]:
        return reps.get(k, []) + (consts if k == 1 else [])

    for n in range(1, space.size + 1):
        fresh: list[tuple[Term, sp.Expr]] = []
        if n == 1:
            fresh.append((Term("z"), Z))
        else:
            for _, t, e in reps.get(n - 1, []):
                for i, prim in enumerate(space.primitives):
                    fresh.append((Term("p", i, (t,)), prim(e)))
            for i in range(1, n - 1):
                j = n - 1 - i
                for op in space.operators:
                    for ta, ea, tb, eb in _pairs(pool(i), pool(j), op in "+*"):
                        value = ea + eb if op == "+" else ea - eb if op == "-" else ea * eb
                        fresh.append((Term(op, 0, (ta, tb)), value))
        level: list[tuple[int, Term, sp.Expr]] = []
        made = len(survivors)
        for term, expr in fresh:
            generated += 1
            if not expr.has(Z):
                constant += 1
                continue
            if expr in seen:
                structural += 1
                continue
            seen.add(expr)
            fp = fingerprint(expr)
            text = term.text(space)
            kept = None
            for other in buckets.get(fp.key, []):
                if certainly_different(fp, other.fingerprint) is not None:
                    continue
                status = identity(expr, other.expr)
                if status == "proved":
                    kept = other
                    break
                if status == "unknown":
                    unresolved.append((text, other.text))
            if kept is not None:
                proved += 1
                merges.append((text, kept.text))
                merged_exprs.append((expr, kept.expr))
                continue
            survivor = Survivor(term, expr, text, fp)
            buckets.setdefault(fp.key, []).append(survivor)
            survivors.append(survivor)
            level.append((ordinal, term, expr))
            ordinal += 1
            if progress is not None:
                progress(len(survivors), generated)
        reps[n] = level
        per_size.append((n, len(fresh), len(survivors) - made))
    return Enumeration(space.name, space.size, generated, constant, structural, proved, tuple(survivors),
                       tuple(merges), tuple(unresolved), tuple(per_size), tuple(merged_exprs))
