"""The concrete-weights procedures: one registry, keyed by a result's ``[conclusion] concrete`` field.

A conditional result says in its TOML file how concrete weights (inline rationals, or a file's floats
read as exact rationals) are decided under it: ``concrete = "index-set"``. The names live here, in
:data:`PROCEDURES`, the one list the library validates that field against at load (a positioned error
with a did-you-mean for an unknown name). The callables live in the concrete-weights layer, which
attaches them with the :func:`procedure` decorator (SymPy's ``@EvenPredicate.register(Mul)`` style)::

    @procedure("index-set", file=index_set_file)
    def _index_set_inline(block, derivation, attempt, library): ...

Imports run one way (``theory`` never imports ``weights``), so the built-in names are declared here
(:data:`BUILTIN`) and ``weights/`` attaches their callables when it is imported; a test checks that
every declared name has one. A new procedure, built in or from a user's module, is one decorated
function: :func:`procedure` declares the name if it is new.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["BUILTIN", "PROCEDURES", "Procedure", "ProcedureRegistry", "procedure"]

#: The built-in procedures, with what each decides. ``slopes-1d`` and ``fold`` decide deep stacks
#: (weights/deepdecide.py dispatches on them), the others one block.
BUILTIN: tuple[tuple[str, str], ...] = (
    ("index-set", "some S with W_down[:,S] W_up[S,:] = T = −M/(2c) (the flip witness)"),
    ("rank", "rank(M + c W_down W_up) ≤ m (rank factorization)"),
    ("rescale", "a diagonal D with c W_down D W_up = M (exact linear feasibility)"),
    ("enumerate", "every S against the polynomial identity Σ_{i∈S} a_i 2o(w_i·x) ≡ −Mx (rational weights, m ≤ 12)"),
    ("rescale-signed", "Cor. R-pos: a set N and a diagonal D with c W_down D W_up = M (theory/rpos.py)"),
    ("span", "Cor. R-log (weights/euler_concrete.py)"),
    ("rescale-power", "Cor. R-pow (weights/euler_concrete.py)"),
    ("slopes-1d", "Theorem 1D: the slopes F(1), −F(−1) decided exactly (deep stacks, weights/deep.py)"),
    ("fold", "Theorem FA's exact fold test (deep stacks, weights/deep.py)"),
    ("degenerate", "Theorem D: any weights of one block, atoms by line or ±v pair (weights/degenerate.py)"),
    ("affine", "σ = az + b: rank(M + a W_down W_up) against m, and the constant R(0) for a bias-free absorber "
              "(rank factorization, exact)"),
)


@dataclass(frozen=True)
class Procedure:
    """How a result's conditional verdict is decided for concrete weights: ``inline`` for the spec's
    exact rationals (called with the block the result was applied to, the derivation, the deciding
    attempt with its bindings, the library; returns the refined derivation); ``file`` for a weights
    file (None: inline weights only; a file block under it stays open, saying so). ``stack``: the
    procedure decides deep stacks and is dispatched by the deep-stack decider, not per block."""

    inline: Callable[..., Any] | None = None
    file: Callable[..., Any] | None = None
    stack: bool = False


class ProcedureRegistry:
    """Names (declared) and their callables (attached by the concrete-weights layer)."""

    def __init__(self, declared: tuple[tuple[str, str], ...] = ()) -> None:
        self._docs: dict[str, str] = dict(declared)
        self._entries: dict[str, Procedure] = {}

    def names(self) -> tuple[str, ...]:
        """Every name a result's ``concrete`` field may take, in declaration order."""
        return tuple(self._docs)

    def doc(self, name: str) -> str:
        return self._docs[name]

    def get(self, name: str) -> Procedure | None:
        """The procedure attached to ``name`` (None: unknown, or declared with no callable yet)."""
        return self._entries.get(name)

    def unattached(self) -> tuple[str, ...]:
        """Declared names with no procedure attached (a test keeps this empty once weights/ is imported)."""
        return tuple(n for n in self._docs if n not in self._entries)

    def register(self, name: str, inline: Callable[..., Any] | None = None, file: Callable[..., Any] | None = None,
                 *, stack: bool = False, doc: str = "") -> Procedure:
        """Attach ``inline``/``file`` to ``name`` (declaring it if new). Registering a name twice is an error."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"a procedure name is a non-empty string, not {name!r}")
        if name in self._entries:
            raise ValueError(f"the concrete-weights procedure `{name}` is already registered")
        if inline is None and not stack:
            raise ValueError(f"the procedure `{name}` needs an inline callable (or stack=True)")
        self._docs.setdefault(name, doc or name)
        entry = Procedure(inline, file, stack)
        self._entries[name] = entry
        return entry

    def unregister(self, name: str) -> None:
        """Remove a procedure (and its name, unless built in): for tests that add one."""
        self._entries.pop(name, None)
        if name not in dict(BUILTIN):
            self._docs.pop(name, None)

    def procedure(self, name: str, *, file: Callable[..., Any] | None = None,
                  doc: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator: the decorated function is ``name``'s inline procedure (``file``: its file procedure)."""

        def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.register(name, fn, file, doc=doc)
            return fn

        return decorate


#: The one registry of concrete-weights procedures.
PROCEDURES = ProcedureRegistry(BUILTIN)


def procedure(name: str, *, file: Callable[..., Any] | None = None,
              doc: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``@procedure("index-set", file=...)``: register the decorated function in :data:`PROCEDURES`."""
    return PROCEDURES.procedure(name, file=file, doc=doc)
