"""The one door to the prover and the concrete-weights procedures: a :class:`Session`.

A session (as pySMT's ``Environment``) holds what an answer depends on besides its question: the
library in force (built-in results, plus a user's ``--theorems`` directories), the CPU seconds one
fact may take, and where a block's ``weights:`` file is read from. Every question goes through it:
``Session.answer(query)`` for a spec query, and :meth:`~Session.derive`, :meth:`~Session.classify`,
:meth:`~Session.attempts`, :meth:`~Session.decide`, :meth:`~Session.decide_file`,
:meth:`~Session.width`, :meth:`~Session.near` and :meth:`~Session.report` for the commands built on
them (``classify``, ``catalog``, ``scan``, ``explore``, ``verify``, ``absorb --width``). Only this
package imports the prover (:mod:`symabsorb.theory.prover`) and the procedures that refine a proof for
concrete weights (:mod:`symabsorb.weights.concrete`); ``tests/unit/test_import_layers.py`` enforces it.

A block is proved once: a weights file's shapes are read first, so the block is proved with the sizes
the file gives, then refined for the file's floats (exact dyadic rationals) or the spec's inline
rationals; the width query builds on that derivation; a stack's blocks are decided one by one and
their witnesses composed. :mod:`symabsorb.report` only renders what this layer returns.

The command-wide state (its CPU budget, size limits, cache policy and the ledger of files read) is the
run in force (:func:`symabsorb.context.current`), which every layer reads; a session does not copy it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..analysis.budget import DEFAULT_BUDGET
from ..analysis.engine import analyze
from ..context import Run, running
from ..errors import InternalError
from ..model.activation import AnyActivation, GatedActivation
from ..model.block import Block, ResolvedSpec, SpecQuery, Stack
from ..theory.derivation import Derivation, DerivationStep, Verdict, Witness
from ..theory.hypotheses import Subject
from ..theory.library import Library
from ..theory.proof import Attempt, Proof
from ..theory.prover import attempts as _attempts
from ..theory.prover import check_stack
from ..theory.prover import classify as _classify
from ..theory.prover import derive as _derive
from ..theory.prover import width_proof as _width_proof
from ..weights.concrete import refine_file, refine_inline
from ..weights.decide import WITNESS_TOLERANCE, float_stack_error, format_index_set, stack_max_relative_error
from ..weights.filedecide import FileDecision, WitnessCheckError, load_file_block
from .registries import Registries
from .types import QueryAnswer, Report

__all__ = ["Session", "in_force"]


@dataclass(frozen=True)
class Session:
    """The library in force and what one answer may spend, for every question of a command.

    ``library``: the results the prover may use (``symabsorb.library(theorems)`` at the API).
    ``budget``: CPU seconds per fact (None: unlimited), under the run's command budget. ``base_dir``:
    the directory a block's ``weights:`` file is read from (a spec's directory); None: file weights
    are not read (a block is answered for arbitrary weights of its sizes). ``run``: the command's
    :class:`~symabsorb.context.Run` (CPU budget, limits, cache, ledger), installed while the session
    answers (:meth:`answer`, :meth:`report`, :meth:`installed`); None: the run in force at that time.
    ``registries``: the snapshot of the registries it answers with (:class:`.registries.Registries`),
    taken when the session is made, after the installed plug-ins are loaded (:mod:`symabsorb.plugins`).
    """

    library: Library
    budget: float | None = DEFAULT_BUDGET
    base_dir: str | None = None
    run: Run | None = None
    registries: Registries = field(default_factory=Registries, compare=False, repr=False)

    def __post_init__(self) -> None:
        from .. import plugins

        plugins.load()  # a worker building its session the way the command does sees the same plug-ins
        if self.registries.procedures is None:
            object.__setattr__(self, "registries", Registries.of(self.library))

    @classmethod
    def make(cls, theorems: tuple[str | Path, ...] = (), budget: float | None = DEFAULT_BUDGET,
             base_dir: str | None = None, run: Run | None = None) -> Session:
        """A session with the built-in results plus the ``theorems`` directories, the installed plug-ins
        loaded first (so a result may name a plug-in's procedure or hypothesis)."""
        from .. import plugins
        from ..theory.library import library_with

        plugins.load()
        return cls(library_with(theorems), budget, base_dir, run)

    def with_(self, **changes: Any) -> Session:
        """This session with some fields changed (``budget=None``, ``base_dir=...``)."""
        return replace(self, **changes)

    @contextmanager
    def installed(self) -> Iterator[Session]:
        """Install this session (and its run, if it has one) for the code that runs inside (``verify``'s
        checkers read it with :func:`in_force` rather than taking it through every call), as
        :func:`symabsorb.context.running` installs a run."""
        token = _IN_FORCE.set(self)
        try:
            with self._running():
                yield self
        finally:
            _IN_FORCE.reset(token)

    @contextmanager
    def _running(self) -> Iterator[None]:
        """The session's run installed for the body (nothing changes when it has none)."""
        if self.run is None:
            yield
        else:
            with running(self.run):
                yield

    # ---- the prover: arbitrary weights of the target's sizes --------------------------------------

    def derive(self, target: Block | Stack, query: str = "") -> Proof:
        """The proof of ``target`` for arbitrary weights of its sizes, with the deciding attempt."""
        return _derive(target, self.library, query, self.budget)

    def prove(self, target: Block | Stack, query: str = "") -> Derivation:
        """:meth:`derive`'s derivation."""
        return self.derive(target, query).derivation

    def classify(self, act: AnyActivation) -> Derivation:
        """One block with identity skip, generic weights and symbolic sizes, for ``act``."""
        return _classify(act, self.library, self.budget)

    def attempts(self, block: Block, stop_at_failure: bool = True) -> list[Attempt]:
        """Every candidate result for ``block``, each with its hypothesis checks (all of them with
        ``stop_at_failure=False``)."""
        return _attempts(Subject(block=block, budget=self.budget, library=self.library), self.library,
                         stop_at_failure)

    # ---- concrete weights: proved once, refined -------------------------------------------------

    def decide_file(self, block: Block, base_dir: str | Path | None = None, query: str = "") -> FileDecision:
        """Read ``block``'s weights file (from ``base_dir``, else the session's), prove the block once
        with the file's sizes, refine the proof for the file's weights."""
        fb = load_file_block(block, _weights_dir(block, base_dir if base_dir is not None else self.base_dir or "."))
        return refine_file(_derive(fb.concrete, self.library, query, self.budget), fb, self.library)

    def decide(self, target: Block | Stack, query: str = "", *, fd: bool = True) -> Derivation:
        """``target`` proved once and decided for its weights: a file's when it names one and the
        session has a ``base_dir`` (the file's derivation is proved with the query left to its
        default), else inline ones; without weights, the derivation for arbitrary weights. ``fd``:
        whether a deep stack may be decided by Theorem FD's certificate (``verify`` re-checks that
        certificate from the report's own points instead)."""
        if isinstance(target, Block) and target.weights is not None and self.base_dir is not None:
            return self.decide_file(target).derivation
        proof = self.derive(target, query)
        if isinstance(target, Block):
            return refine_inline(proof, self.library)
        # a stack of one block is proved as that block; its condition is left to the composition below
        composed = self._compose(target, refine_inline(proof, self.library, index_set=False))
        from ..weights.deepdecide import refine_deep  # deep stacks, MATH Part III: Theorems 1D, FA, FD

        # the hypothesis Part III's exact procedures compute under, checked here (they take it checked)
        relu = check_stack("each_bias_free_relu", target) if all(b.has_inline_weights for b in target.blocks) else None
        return refine_deep(target, composed, self.library, relu, fd=fd)  # type: ignore[no-any-return]

    def _compose(self, target: Stack, derivation: Derivation) -> Derivation:
        """A stack whose every block has weights: each block decided on its own (proved once), and,
        when every one is absorbable, the composition of their witnesses (cites the result providing
        ``composition``); else ``derivation`` unchanged."""
        base_dir = self.base_dir
        concrete = all(b.has_inline_weights or (b.weights is not None and base_dir is not None)
                       for b in target.blocks)
        if not concrete or not isinstance(target.repeat, int):
            return derivation
        if any(b.norm != "none" for b in target.blocks):
            # the numeric check of a composition evaluates bare blocks; with a normalisation in the stack it
            # would reject a sound composition (an internal error): no composition is claimed instead
            return derivation
        library = self.library
        per_block = []
        originals: list[tuple[Any, Any, Any]] = []
        for b in target.blocks:
            if b.has_inline_weights:
                per_block.append(refine_inline(_derive(b, library), library))
                originals.append((b.w_up, b.w_down, b.w_gate))
            else:
                decision = self.decide_file(b)
                per_block.append(decision.derivation)
                originals.append((decision.weights.w_up, decision.weights.w_down, decision.weights.w_gate))
        if not all(d.verdict is Verdict.ABSORBABLE and d.witness is not None for d in per_block):
            return derivation
        layers = tuple(d.witness for d in per_block if d.witness is not None)
        steps = [*derivation.steps[:1]]
        for b, d in zip(target.blocks, per_block, strict=True):
            shown = (d.witness.description if d.witness is not None and d.witness.description  # not a flip (Thm D)
                     else f"$S = {format_index_set(d.witness.index_set)}$")  # type: ignore[union-attr]
            steps.append(DerivationStep(f"Block `{b.name}` is absorbable with these weights by [{d.decided_by}] "
                                        f"(witness {shown}).", (d.decided_by or "",), kind="argument"))
        if all(b.has_inline_weights for b in target.blocks):
            error = stack_max_relative_error(target, layers)
            how = "50 random points, 40 digits"
        else:
            error = float_stack_error(target, originals, layers)
            how = "1,000 random points, float64"
        if not error <= WITNESS_TOLERANCE:
            raise WitnessCheckError(f"the composed witnesses of `{target.name}` fail their numeric check (max "
                                    f"relative error {error:.3g} > {WITNESS_TOLERANCE:g}); no verdict is given")
        composition = library.provider("composition")
        steps.append(DerivationStep(f"By [{composition}], composing the block witnesses absorbs the whole stack "
                                    f"(checked numerically: max relative error {error:.2e} at {how}).",
                                    (composition,), kind="conclusion"))
        return replace(derivation, verdict=Verdict.ABSORBABLE, scope="these weights", decided_by=composition,
                       source=library.get(composition).source, steps=tuple(steps),
                       witness=Witness((), None, None, None, f"every block's witness verified; the composition: max "
                                       f"relative error {error:.2e}", layers),
                       cited=tuple(dict.fromkeys([*derivation.cited, composition,
                                                  *(d.decided_by or "" for d in per_block)])))

    # ---- what builds on a decision -------------------------------------------------------------

    def width(self, block: Block, query: str) -> Derivation:
        """The answer to ``width NAME``: the proved bounds on the minimal width ``w*``."""
        from ..weights.width import width_derivation

        base = self.decide(block, f"absorb {block.name}")
        proof = _width_proof(block, base, self.library, self.budget)
        return width_derivation(block, proof, query, self.library, self.base_dir)

    def width_witness(self, block: Block, width: int) -> tuple[Witness | None, str]:
        """Residual-free weights of width ``width`` equal to ``block`` (``absorb --width``), or None
        with the reason."""
        from ..weights.width import width_witness

        base = self.decide(block, f"absorb {block.name}")
        proof = _width_proof(block, base, self.library, self.budget)
        return width_witness(block, proof, width, self.library, self.base_dir)

    def near(self, block: Block, derivation: Derivation, eps: float) -> Derivation:
        """``derivation`` with the near-witness step (``--near EPS``) when it applies; verdict unchanged."""
        from ..weights.near import near_derivation

        return near_derivation(block, derivation, self.library, eps, self.base_dir or ".")

    # ---- queries and reports -------------------------------------------------------------------

    def answer(self, q: SpecQuery) -> QueryAnswer:
        """The answer to ``q``: a derivation (absorb, width, classify) or the activation's facts."""
        with self._running():
            return self._answer(q)

    def _answer(self, q: SpecQuery) -> QueryAnswer:
        target = q.target
        if q.kind == "absorb":
            assert isinstance(target, (Block, Stack))
            return QueryAnswer(q.text, "absorb", derivation=self.decide(target, q.text))
        if q.kind == "width":
            assert isinstance(target, Block)
            return QueryAnswer(q.text, "width", derivation=self.width(target, q.text))
        assert not isinstance(target, (Block, Stack))
        if q.kind == "classify":
            return QueryAnswer(q.text, "classify", derivation=self.classify(target), activation=target)
        order = q.order if q.kind == "series" and q.order is not None else 8
        act = target.gate if isinstance(target, GatedActivation) and q.kind != "facts" else target
        return QueryAnswer(q.text, q.kind, facts=analyze(act, order=order, budget=self.budget), activation=act,
                           order=order)

    def report(self, spec: ResolvedSpec, text: str,
               progress: Callable[[int, int, str], None] | None = None) -> Report:
        """Every query of ``spec`` answered (weight files read next to the spec), as a :class:`Report`."""
        session = self.with_(base_dir=os.path.dirname(spec.path) or ".")
        answers = []
        total = len(spec.queries)
        with self._running():
            for i, q in enumerate(spec.queries):
                if progress is not None:
                    progress(i, total, q.text)
                answers.append(session.answer(q))
        if progress is not None:
            progress(total, total, "")
        name = os.path.basename(spec.path)
        return Report(f"symabsorb report: {name}", spec.path, text, tuple(answers), self.library)


def _weights_dir(block: Block, default: str | Path) -> Path:
    """Where ``block``'s ``weights:`` file is named relative to: the directory of the spec file that declares it
    (an imported file's own directory, as its imports are), else ``default`` (spec text, API arrays)."""
    span = block.weights.span if block.weights is not None else None
    if span is not None and span.file and not span.file.startswith("<"):
        return Path(span.file).parent
    return Path(default)


_IN_FORCE: ContextVar[Session | None] = ContextVar("symabsorb_session", default=None)


def in_force() -> Session:
    """The session installed by :meth:`Session.installed`; there is no silent default (a caller that
    installs none has no library in force, a bug)."""
    session = _IN_FORCE.get()
    if session is None:
        raise InternalError("no symabsorb session is installed: answer through Session.installed()")
    return session
