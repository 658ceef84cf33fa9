"""The concrete-weights procedures: one registry, keyed by a result's ``[conclusion] concrete`` field.

A conditional result says in its TOML file how concrete weights (inline rationals, or a file's floats
read as exact rationals) are decided under it: ``concrete = "index-set"``. The names live here, in
:data:`PROCEDURES`, the one list the library validates that field (and a ``[width] procedure``) against
at load (a positioned error with a did-you-mean for an unknown name, or for a procedure whose declared
``reads`` the result's hypotheses do not bind). Code never compares a procedure's name: it asks the
:class:`Procedure` (``kind``, ``index_set``, ``any_weights``, its callables) through
:meth:`symabsorb.theory.library.Library.procedure`. The callables live in the concrete-weights layer
(and ``verify``'s re-checks in the answer layer), which attach them to the declared names
(SymPy's ``@EvenPredicate.register(Mul)`` style)::

    @procedure("index-set", file=index_set_file)
    def _index_set_inline(block, derivation, attempt, library): ...

Imports run one way (``theory`` never imports ``weights``), so the built-in procedures are declared here
(:data:`BUILTIN`, with everything the library checks at load) and ``weights/`` attaches their callables
when it is imported; a test checks that every declared name has one. A new procedure, built in or from a
user's module or a plug-in, is one decorated function: :func:`procedure` declares the name if it is new.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

__all__ = ["BUILTIN", "KINDS", "PROCEDURES", "Procedure", "ProcedureRegistry", "procedure"]

#: What a procedure decides: one block's weights, or a deep stack's (dispatched by weights/deepdecide.py).
KINDS = ("block", "stack")
#: The TOML fields that may name a procedure: ``[conclusion] concrete`` and ``[width] procedure``.
FIELDS = ("concrete", "width")


@dataclass(frozen=True)
class Procedure:
    """A concrete-weights procedure: what it is (declared, checked at load) and its callables (attached).

    Declared: ``name``; ``doc`` (what it decides, for docs/theorems.md); ``kind`` (:data:`KINDS`);
    ``fields`` (which TOML fields may name it, :data:`FIELDS`); ``reads`` (the bindings of the deciding
    attempt it reads: the library checks at load that the result's hypotheses bind each of them);
    ``index_set`` (its condition is the index-set condition ``W_down[:,S] W_up[S,:] = T = −M/(2c)``: the
    derivation states the constant ``c``, ``--near`` measures the distance to it, a stack of one block
    leaves it to the composition); ``any_weights`` (it decides any weights of one block, degenerate ones
    too: a file block whose weights are proved degenerate is handed to it); ``final`` (a stack procedure
    whose answer stands, open or not: no later stack step is tried).

    Attached: ``inline`` (the spec's exact rationals: ``(block, derivation, attempt, library) ->
    Derivation``; for a stack procedure ``(stack, derivation, library) -> Derivation``); ``file`` (a
    weights file: ``(FileState, FileBlock) -> FileDecision``; None: a file block under it stays open,
    saying so); ``width`` (the exact smallest width on a block's inline weights: ``(block, result_id) ->
    (lower, upper, steps, witness) | None``); ``width_rule`` (as a ``[width] procedure``: ``(block,
    subject, library) -> WidthBounds``); ``verifier`` (``verify``'s re-check of a report's answer decided
    by it: for a block ``(answer, block, verdict) -> str | None``, for a stack ``(answer, derivation,
    stack) -> str | None``; raises ``CertificateError``)."""

    name: str
    doc: str = ""
    kind: str = "block"
    fields: tuple[str, ...] = ("concrete",)
    reads: tuple[str, ...] = ()
    index_set: bool = False
    any_weights: bool = False
    final: bool = False
    inline: Callable[..., Any] | None = None
    file: Callable[..., Any] | None = None
    width: Callable[..., Any] | None = None
    width_rule: Callable[..., Any] | None = None
    verifier: Callable[..., Any] | None = None

    @property
    def stack(self) -> bool:
        """It decides deep stacks (``kind == "stack"``)."""
        return self.kind == "stack"

    @property
    def attached(self) -> bool:
        """Its callables are attached: an inline one, or a width rule for a width-only procedure."""
        if "concrete" in self.fields:
            return self.inline is not None
        return self.width_rule is not None


#: The callables :meth:`ProcedureRegistry.attach` may set.
_CALLABLES = ("inline", "file", "width", "width_rule", "verifier")

#: The built-in procedures, with what each decides and what the library checks of it at load.
BUILTIN: tuple[Procedure, ...] = (
    Procedure("index-set", "some S with W_down[:,S] W_up[S,:] = T = −M/(2c) (the flip witness)", index_set=True),
    Procedure("rank", "rank(M + c W_down W_up) ≤ m (rank factorization)", fields=("concrete", "width"),
              reads=("c",)),
    Procedure("rescale", "a diagonal D with c W_down D W_up = M (exact linear feasibility)", reads=("c", "k", "q")),
    Procedure("enumerate", "every S against the polynomial identity Σ_{i∈S} a_i 2o(w_i·x) ≡ −Mx (rational weights, "
              "m ≤ 12)", reads=("o2",)),
    Procedure("rescale-signed", "Cor. R-pos: a set N and a diagonal D with c W_down D W_up = M (theory/rpos.py)",
              reads=("c_rpos", "k", "A", "B")),
    Procedure("span", "Cor. R-log (weights/euler_concrete.py)", reads=("gamma_log",)),
    Procedure("rescale-power", "Cor. R-pow (weights/euler_concrete.py)", reads=("c_pow", "k_pow", "even_pow")),
    Procedure("slopes-1d", "Theorem 1D: the slopes F(1), −F(−1) decided exactly (deep stacks, weights/deep.py)",
              kind="stack", final=True),
    Procedure("fold", "Theorem FA's exact fold test (deep stacks, weights/deep.py)", kind="stack"),
    Procedure("degenerate", "Theorem D: any weights of one block, atoms by line or ±v pair (weights/degenerate.py)",
              reads=("c",), any_weights=True),
    Procedure("affine", "σ = az + b: rank(M + a W_down W_up) against m, and the constant R(0) for a bias-free "
              "absorber (rank factorization, exact)", reads=("a", "b")),
)


class ProcedureRegistry:
    """Declared procedures (name -> :class:`Procedure`) with the callables attached to them."""

    def __init__(self, declared: tuple[Procedure | tuple[str, str], ...] = ()) -> None:
        self._builtin = tuple(p if isinstance(p, Procedure) else Procedure(p[0], p[1]) for p in declared)
        self._entries: dict[str, Procedure] = {p.name: p for p in self._builtin}

    def names(self, field: str = "concrete") -> tuple[str, ...]:
        """Every name a result's ``field`` (:data:`FIELDS`) may take, in declaration order."""
        return tuple(n for n, p in self._entries.items() if field in p.fields)

    def doc(self, name: str) -> str:
        return self._entries[name].doc

    def get(self, name: str | None) -> Procedure | None:
        """The procedure declared as ``name`` (None: unknown); its callables may not be attached yet."""
        return self._entries.get(name) if name else None

    def unattached(self) -> tuple[str, ...]:
        """Declared names with no procedure attached (a test keeps this empty once weights/ is imported)."""
        return tuple(n for n, p in self._entries.items() if not p.attached and not p.stack)

    def snapshot(self) -> ProcedureRegistry:
        """A copy: a procedure registered later is not the copy's (a session answers with its snapshot)."""
        copy = ProcedureRegistry()
        copy._builtin, copy._entries = self._builtin, dict(self._entries)
        return copy

    def declare(self, proc: Procedure) -> Procedure:
        """Declare a new procedure (with its callables, if any). Declaring a name twice is an error."""
        if not isinstance(proc.name, str) or not proc.name:
            raise ValueError(f"a procedure name is a non-empty string, not {proc.name!r}")
        if proc.name in self._entries:
            raise ValueError(f"the concrete-weights procedure `{proc.name}` is already registered")
        if proc.kind not in KINDS or not set(proc.fields) <= set(FIELDS) or not proc.fields:
            raise ValueError(f"the procedure `{proc.name}`: kind is one of {KINDS}, fields some of {FIELDS}")
        self._entries[proc.name] = proc
        return proc

    def attach(self, name: str, **callables: Callable[..., Any] | None) -> Procedure:
        """Attach callables (:data:`_CALLABLES`) to the declared ``name``; attaching one twice is an error."""
        proc = self._entries.get(name)
        if proc is None:
            raise ValueError(f"no procedure `{name}` is declared")
        unknown = sorted(set(callables) - set(_CALLABLES))
        if unknown:
            raise ValueError(f"a procedure has no callable {unknown[0]!r} (one of {_CALLABLES})")
        for key, fn in callables.items():
            if fn is not None and getattr(proc, key) is not None:
                raise ValueError(f"the concrete-weights procedure `{name}` is already registered ({key})")
        changes: dict[str, Any] = {k: v for k, v in callables.items() if v is not None}
        proc = replace(proc, **changes)
        self._entries[name] = proc
        return proc

    def register(self, name: str, inline: Callable[..., Any] | None = None, file: Callable[..., Any] | None = None,
                 *, stack: bool = False, doc: str = "", reads: tuple[str, ...] = (),
                 index_set: bool = False, **callables: Callable[..., Any] | None) -> Procedure:
        """Attach ``inline``/``file`` (and other callables) to ``name``, declaring it if new (with ``doc``,
        ``reads``, ``index_set``; ``stack``: a deep-stack procedure). Registering a callable twice is an error."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"a procedure name is a non-empty string, not {name!r}")
        if inline is None and not stack:
            raise ValueError(f"the procedure `{name}` needs an inline callable (or stack=True)")
        if name not in self._entries:
            self.declare(Procedure(name, doc or name, "stack" if stack else "block", reads=reads, index_set=index_set))
        return self.attach(name, inline=inline, file=file, **callables)

    def unregister(self, name: str) -> None:
        """Remove a procedure (a built-in one keeps its declaration, without callables): for tests that add one."""
        builtin = {p.name: p for p in self._builtin}
        if name in builtin:
            self._entries[name] = builtin[name]
        else:
            self._entries.pop(name, None)

    def procedure(self, name: str, *, file: Callable[..., Any] | None = None, doc: str = "",
                  reads: tuple[str, ...] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator: the decorated function is ``name``'s inline procedure (``file``: its file procedure;
        ``reads``: the bindings it reads, checked against a result's hypotheses at load)."""

        def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.register(name, fn, file, doc=doc, reads=reads)
            return fn

        return decorate


#: The one registry of concrete-weights procedures.
PROCEDURES = ProcedureRegistry(BUILTIN)


def procedure(name: str, *, file: Callable[..., Any] | None = None, doc: str = "",
              reads: tuple[str, ...] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``@procedure("index-set", file=...)``: register the decorated function in :data:`PROCEDURES`."""
    return PROCEDURES.procedure(name, file=file, doc=doc, reads=reads)
