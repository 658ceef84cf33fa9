"""symabsorb as a Python library: a thin facade over the layers, re-exported by :mod:`symabsorb`.

>>> import symabsorb
>>> symabsorb.classify("tanh").verdict
'impossible'
>>> report = symabsorb.prove(symabsorb.load("block b { activation: relu dim: 2 width: 3 }\\nabsorb b"))
>>> report.verdicts
{'absorb b': 'conditional'}

Every result renders in every format (``result.render("html")``) and shows itself in a notebook
(``_repr_html_`` is a fragment with scoped CSS, ``_repr_markdown_``, ``_repr_latex_`` where it fits).
The command line is a client of these same functions.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sympy as sp

    from .answer import Session
    from .answer.types import QueryAnswer
    from .model.activation import AnyActivation
    from .model.block import Block, ResolvedSpec, Stack
    from .report.formats import Kind
    from .theory.library import Library

from .results import (
    Catalog,
    Exploration,
    Formatted,
    Graph,
    Listing,
    Report,
    Result,
    Scan,
    Verification,
    WidthWitness,
    _check_flag,
    _check_path,
)
from .results import _condition_sympy as _condition_sympy  # tests read it from here

__all__ = ["FORMAT_NAMES", "Catalog", "Exploration", "Formatted", "Graph", "Listing", "Report", "Result", "Scan", "Spec",
           "Verification", "WidthWitness", "absorb", "absorb_width", "catalog", "check", "classify", "decide", "executor",
           "explore", "facts", "fmt", "format_for_path", "format_name", "format_spellings", "format_suffixes", "formats",
           "graph", "library", "load", "missing_packages", "prove", "scan", "select", "verify"]

DEFAULT_BUDGET = 5.0
PathLike = str | os.PathLike[str]


# ---- argument checks at the boundary: wrong types are ArgumentError, never a stray TypeError --------


#: ``budget=``'s default: not given (the deprecated name of ``fact_budget=``).
_UNSET: Any = object()


def _fact_budget(fact_budget: object, budget: object = _UNSET) -> float | None:
    """``fact_budget`` checked (:func:`_check_budget`); ``budget=`` is its deprecated old name, still read
    (a :class:`DeprecationWarning`): the command line's ``--budget`` is per command, so the API's per-fact
    seconds have a name of their own. Both given, with ``fact_budget`` not its default: an ArgumentError."""
    if budget is _UNSET:
        return _check_budget(fact_budget, "fact_budget")
    import warnings

    from .errors import bad_argument

    warnings.warn("budget= is deprecated: it is CPU seconds per fact, now fact_budget= (the command line's "
                  "--budget is the whole command's)", DeprecationWarning, stacklevel=3)
    if fact_budget != DEFAULT_BUDGET:
        raise bad_argument("budget", budget, "give fact_budget= only (budget= is its deprecated name)")
    return _check_budget(budget, "budget")


def _check_budget(budget: object, name: str = "budget") -> float | None:
    """``None`` (no limit of its own) or CPU seconds: a finite real number > 0."""
    import math

    from .errors import bad_argument, check_type

    if budget is None:
        return None
    check_type(name, budget, (int, float), "CPU seconds (a number > 0) or None")
    assert isinstance(budget, (int, float))
    if not math.isfinite(budget) or budget <= 0:
        raise bad_argument(name, budget, "expected CPU seconds, a finite number > 0 (or None "
                            "for no limit of its own)")
    return float(budget)


def _check_dirs(theorems: object) -> list[Path]:
    from .errors import bad_argument

    if isinstance(theorems, (str, os.PathLike)):
        raise bad_argument('theorems', theorems, "expected a sequence of directories, e.g. "
                            f"theorems=[{str(theorems)!r}]")
    if not isinstance(theorems, (Sequence, tuple, list)):
        raise bad_argument('theorems', theorems, "expected a sequence of directories")
    dirs = [_check_path(f"theorems[{i}]", d) for i, d in enumerate(theorems)]
    for i, d in enumerate(dirs):
        if not d.is_dir():
            raise bad_argument(f'theorems[{i}]', theorems[i], "expected a directory of result "
                                "files (.toml); it does not exist or is not a directory")
    return dirs


def library(theorems: Sequence[PathLike] = ()) -> Library:
    """The result library: the built-in one, plus the results in each directory of ``theorems``."""
    from .theory.library import default_library, library_with

    dirs = _check_dirs(theorems)
    return library_with(dirs) if dirs else default_library()


def _lib(lib: Library | None, theorems: Sequence[PathLike]) -> Library:
    from .errors import check_type
    from .theory.library import Library

    if lib is not None:
        check_type("lib", lib, Library, "a symabsorb library (symabsorb.library()) or None")
        return lib
    return library(theorems)


@dataclass(frozen=True, repr=False)
class Spec:
    """A parsed and resolved ``.absorb`` spec (its imports followed, its queries not yet answered)."""

    resolved: ResolvedSpec
    text: str

    @property
    def path(self) -> str:
        return self.resolved.path

    @property
    def activations(self) -> list[str]:
        return [a.name for a in self.resolved.activations]

    @property
    def blocks(self) -> list[str]:
        return [b.name for b in self.resolved.blocks]

    @property
    def stacks(self) -> list[str]:
        return [s.name for s in self.resolved.stacks]

    @property
    def queries(self) -> list[str]:
        return [q.text for q in self.resolved.queries]

    def prove(self, **options: Any) -> Report:
        """Answer every query (same options as :func:`prove`)."""
        return prove(self, **options)

    def _repr_markdown_(self) -> str:
        rows = [("activations", self.activations), ("blocks", self.blocks), ("stacks", self.stacks),
                ("queries", self.queries)]
        lines = [f"**Spec** `{self.path}`", "", "| | |", "|---|---|"]
        lines += [f"| {what} ({len(names)}) | {', '.join(f'`{n}`' for n in names) or '—'} |" for what, names in rows]
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        r = self.resolved
        return (f"<Spec {r.path!r}: {len(r.activations)} activations, {len(r.blocks)} blocks, {len(r.stacks)} stacks, "
                f"{len(r.queries)} queries>")


def _looks_like_path(source: str) -> bool:
    return "\n" not in source and (source.endswith(".absorb") or os.path.isfile(source))


def load(source: PathLike, *, name: str | None = None) -> Spec:
    """A spec from a file path (``"my.absorb"``, a :class:`~pathlib.Path`) or from spec text.

    Text is told apart from a path by containing a newline or not naming a file; its imports are
    relative to the working directory. Errors are :class:`symabsorb.SpecError` with file:line:col.
    """
    from .dsl.loader import load_modules, read_source
    from .errors import check_type
    from .model.resolve import resolve_modules

    check_type("source", source, (str, os.PathLike), "a path to a .absorb file or spec text (str)")
    if name is not None:
        check_type("name", name, str, "the name shown in messages (str) or None")
    if isinstance(source, os.PathLike) or _looks_like_path(str(source)):
        path = Path(source)
        text = read_source(path)
        label = str(source)
    else:
        text = str(source)
        label = name or "<string>"
    return Spec(resolve_modules(load_modules(label, text), label), text)


def _sympy_text(name: str, expr: Any) -> str:
    """A SymPy expression in one symbol as spec text in ``z`` (which then goes through the spec's
    parser and its whitelist of functions, as a string would): ``x*tanh(softplus(x))`` ->
    ``z*tanh(log(exp(z) + 1))``. Floats are refused (not exact), as are other symbols."""
    import sympy as sp

    from .errors import bad_argument
    from .model.spectext import spec_expr

    if not isinstance(expr, sp.Expr) or isinstance(expr, sp.MatrixBase):
        raise bad_argument(name, expr, "expected a SymPy expression in one symbol")
    symbols = sorted(expr.free_symbols, key=str)
    if len(symbols) > 1:
        raise bad_argument(name, expr, "expected an expression in one symbol, it has "
                            f"{', '.join(map(str, symbols))}; substitute values for the others (expr.subs(...)) or "
                            "declare them as parameters in a spec")
    if expr.atoms(sp.Float):
        raise bad_argument(name, expr, "holds floating-point numbers "
                            f"({', '.join(sorted(map(str, expr.atoms(sp.Float))))}), which are not exact: write them "
                            "as sympy.Rational (or sympy.nsimplify(expr))")
    if symbols:
        expr = expr.xreplace({symbols[0]: sp.Symbol("z", real=True)})
    return spec_expr(expr)


def _activation(expr: Any, gated: bool, name: str = "expr") -> AnyActivation:
    import sympy as sp

    from .errors import ArgumentError, check_type
    from .model.activation import Activation, GatedActivation

    if isinstance(expr, sp.Basic):
        text = _sympy_text(name, expr)
        from .errors import SpecError
        from .model.resolve import activation_from_text

        try:
            return activation_from_text(text, gated=_check_flag("gated", gated))
        except SpecError as err:
            summary = str(err).splitlines()[0].split("error: ", 1)[-1]
            raise ArgumentError(f"{name}={expr!r} (type={type(expr).__name__}), read as `{text}`: {summary}",
                                param=name, value=expr, reason=f"read as `{text}`: {summary}") from None
    check_type(name, expr, (str, Activation, GatedActivation),
               "an expression in z (str, e.g. 'z*tanh(z)', or a SymPy expression in one symbol), a built-in name "
               "('gelu') or an activation")
    _check_flag("gated", gated)
    if isinstance(expr, str):
        from .model.resolve import activation_from_text

        return activation_from_text(expr, gated=gated)
    if gated and not isinstance(expr, GatedActivation):
        return GatedActivation(f"gated({expr.name})", expr, expr.source, expr.span)
    return expr


def classify(expr: str | AnyActivation | sp.Expr, gated: bool = False, *, fact_budget: float | None = DEFAULT_BUDGET,
             theorems: Sequence[PathLike] = (), lib: Library | None = None, budget: Any = _UNSET) -> Result:
    """Decide a block with identity skip and generic weights for one activation.

    ``expr``: an expression in ``z`` (``"z*tanh(softplus(z))"``), a built-in name (``"gelu"``,
    ``"swiglu"``) or a parametrised one (``"leaky(alpha = 1/5)"``). ``gated``: ``expr`` is the gate
    ``g`` of ``g(W_gate x) ⊙ (W_up x)``. ``fact_budget``: CPU seconds per fact (``budget=``: its deprecated name).
    """
    from .answer import QueryAnswer, Session

    library_ = _lib(lib, theorems)
    act = _activation(expr, gated)
    d = Session(library_, _fact_budget(fact_budget, budget)).classify(act)
    text = expr if isinstance(expr, str) else act.name
    return Result(QueryAnswer(f"classify {text}" + (" (gated)" if gated else ""), "classify", derivation=d,
                              activation=act), library_)


def facts(expr: str | AnyActivation, gated: bool = False, *, order: int = 8,
          fact_budget: float | None = DEFAULT_BUDGET, budget: Any = _UNSET) -> Result:
    """Every fact about one activation (parity, value and derivatives at 0, Taylor series to
    ``order``, homogeneity, growth, polynomiality, gate symmetry), each with its evidence."""
    from .analysis.engine import analyze
    from .answer.types import QueryAnswer
    from .errors import bad_argument, check_type

    act = _activation(expr, gated)
    from .model.resolve import MAX_SERIES_ORDER  # the bound a spec's `series ... order N` has: one bound

    check_type("order", order, int, f"a Taylor order (an int from 1 to {MAX_SERIES_ORDER})")
    if not 1 <= order <= MAX_SERIES_ORDER:
        raise bad_argument('order', order, f"expected a Taylor order from 1 to {MAX_SERIES_ORDER}")
    f = analyze(act, order=order, budget=_fact_budget(fact_budget, budget))
    text = expr if isinstance(expr, str) else act.name
    return Result(QueryAnswer(f"facts {text}", "facts", facts=f, activation=act, order=order), library())


def _spec(spec: Spec | PathLike) -> Spec:
    from .errors import check_type

    check_type("spec", spec, (Spec, str, os.PathLike), "a Spec (symabsorb.load(...)), a path or spec text")
    return spec if isinstance(spec, Spec) else load(spec)


def _check_progress(progress: object) -> None:
    from .errors import bad_argument

    if progress is not None and not callable(progress):
        raise bad_argument('progress', progress, "expected a callable "
                            "progress(done, total, label) or None")


def _check_near(near: object) -> float | None:
    from .errors import ArgumentError

    if near is None:
        return None
    if isinstance(near, bool) or not isinstance(near, (int, float)) or not near >= 0 or near == float("inf"):
        raise ArgumentError(f"near={near!r}: expected a finite number >= 0 (the relative distance EPS to the "
                            "index-set condition), or None", param="near", value=near,
                            reason="expected a finite number >= 0 (the relative distance EPS to the index-set "
                            "condition), or None")
    return float(near)


def _with_near(answer_: QueryAnswer, target: object, session: Session, near: float | None) -> QueryAnswer:
    """``answer_`` with the ``near`` step (:mod:`symabsorb.weights.near`) when it applies; the verdict unchanged."""
    from dataclasses import replace

    from .model.block import Block

    if near is None or answer_.kind != "absorb" or answer_.derivation is None or not isinstance(target, Block):
        return answer_
    return replace(answer_, derivation=session.near(target, answer_.derivation, near))


def prove(spec: Spec | PathLike, *, fact_budget: float | None = DEFAULT_BUDGET, theorems: Sequence[PathLike] = (),
          lib: Library | None = None, progress: Callable[[int, int, str], None] | None = None,
          keyword: str | None = None, near: float | None = None, budget: Any = _UNSET) -> Report:
    """Answer every query of ``spec`` (a :class:`Spec`, a path, or spec text); with ``keyword``
    only those it selects (pytest's ``-k``, see :func:`select`). With ``near = EPS``, a block
    decided by the index-set condition also says whether it is within ``EPS`` of it (relative Frobenius
    distance), with the certified distance and the flip witness's measured error; verdicts unchanged."""
    from dataclasses import replace

    from .answer import Session

    s = _spec(spec) if keyword is None else select(spec, keyword)
    _check_progress(progress)
    eps = _check_near(near)
    session = Session(_lib(lib, theorems), _fact_budget(fact_budget, budget))
    data = session.report(s.resolved, s.text, progress)
    if eps is not None:
        at = session.with_(base_dir=os.path.dirname(s.resolved.path) or ".")
        data = replace(data, answers=tuple(_with_near(a, q.target, at, eps)
                                           for q, a in zip(s.resolved.queries, data.answers, strict=True)))
    return Report(data)


def _target(s: Spec, name: str) -> Block | Stack:
    from .dsl.errors import SpecNameError, did_you_mean
    from .errors import check_type

    check_type("name", name, str, "the name of a block or stack of the spec (str)")
    targets: dict[str, Block | Stack] = {b.name: b for b in s.resolved.blocks}
    targets.update({t.name: t for t in s.resolved.stacks})
    if name not in targets:
        raise SpecNameError(f"no block or stack `{name}` in {s.path}", None, f"`{name}`",
                            "the name of a block or stack of the spec",
                            did_you_mean(name, targets) or "`symabsorb check SPEC` lists the names")
    return targets[name]


def absorb(spec: Spec | PathLike, name: str, *, fact_budget: float | None = DEFAULT_BUDGET,
           theorems: Sequence[PathLike] = (), lib: Library | None = None, near: float | None = None,
           budget: Any = _UNSET) -> Result:
    """Decide one block or stack of ``spec``, with its weights when it has any; ``result.witness``
    holds the residual-free weights when they exist (``result.write_witness(path)`` saves them).
    ``near = EPS``: as for :func:`prove`."""
    from .answer import Session
    from .model.block import SpecQuery

    eps = _check_near(near)
    s = _spec(spec)
    target = _target(s, name)
    session = Session(_lib(lib, theorems), _fact_budget(fact_budget, budget), _spec_dir(s))
    a = session.answer(SpecQuery("absorb", target, None, f"absorb {name}"))
    return Result(_with_near(a, target, session, eps), session.library)


def absorb_width(spec: Spec | PathLike, name: str, width: int, *, fact_budget: float | None = DEFAULT_BUDGET,
                 theorems: Sequence[PathLike] = (), lib: Library | None = None, budget: Any = _UNSET) -> WidthWitness:
    """Residual-free weights of width ``width`` equal to block ``name`` of ``spec``, from the ``width``
    query's upper bound (its witness padded with units that contribute 0), or none with the reason."""
    from .answer import Session
    from .errors import ArgumentError, bad_argument, check_type
    from .model.block import Block

    s = _spec(spec)
    target = _target(s, name)
    if not isinstance(target, Block):
        raise ArgumentError(f"`{name}` is a stack: a width applies to a block", param="name", value=name,
                            reason=f"`{name}` is a stack: a width applies to a block")
    check_type("width", width, int, "a positive width (int)")
    if isinstance(width, bool) or width < 1:
        raise bad_argument('width', width, "expected a positive width")
    session = Session(_lib(lib, theorems), _fact_budget(fact_budget, budget), _spec_dir(s))
    witness, why = session.width_witness(target, width)
    return WidthWitness(name, width, witness, why)


def _spec_dir(s: Spec) -> str:
    """The directory a spec's weight files are read from (the current one for spec text)."""
    return (os.path.dirname(s.path) if s.path not in ("<string>", "<stdin>") else ".") or "."


def decide(activation: str | AnyActivation, w_up: Any = None, w_down: Any = None, *, w_gate: Any = None,
           b_up: Any = None, b_down: Any = None, b_gate: Any = None, bias: bool | None = None,
           absorber_bias: bool | None = None, norm: str = "none", eps: Any = None, gamma: Any = None,
           file: PathLike | None = None, prefix: str | None = None, up: str | None = None, down: str | None = None,
           gate: str | None = None, up_bias: str | None = None, down_bias: str | None = None,
           gate_bias: str | None = None, transpose: bool = False, skip: Any = "identity",
           fact_budget: float | None = DEFAULT_BUDGET, theorems: Sequence[PathLike] = (),
           lib: Library | None = None, budget: Any = _UNSET) -> Result:
    """Decide a block with concrete weights: numpy arrays (``w_up`` m x d, ``w_down`` d x m, ``w_gate``
    for a gated unit), exact values (nested lists of ints or ``Fraction``), or a weights ``file``
    (``.safetensors``, ``.npz``, PyTorch state dict) with the same keys as a spec's ``weights:``
    (``prefix``, ``up``, ``down``, ``gate``, ``transpose`` for files stored in x out).

    The layer as the model uses it, with the fields of a spec's block (docs/language.md, "Biases and
    normalisation"): ``b_up`` (length m), ``b_down`` (length d), ``b_gate`` (gated units) as arrays, or for a
    ``file`` the tensor names ``up_bias``, ``down_bias``, ``gate_bias``; ``bias=True``: arbitrary biases;
    ``absorber_bias``: may the residual-free block carry biases (default: what the block declares); ``norm``:
    ``"none"``, ``"pre-ln"``, ``"post-ln"``, ``"pre-rms"``, ``"post-rms"`` (``"pre"``/``"post"``: LayerNorm);
    ``eps`` (a number >= 0; a float is read as its decimal ``repr``, as a spec reads ``1e-12``); ``gamma``
    (the norm's scales, length d; for a ``file``, a tensor name). The answer is the one the equivalent
    spec gets.

    ``skip``: ``"identity"`` (``x ↦ x + MLP(x)``), ``"none"``, a number ``s`` (``M = s·I``) or a square matrix
    ``M`` (a spec's ``skip:``). Float arrays are decided like a weights file (float search, witness checked at
    1,000 points); exact values are decided exactly.
    """
    import sympy as sp

    from .answer import Session
    from .dsl.syntax import WeightsDecl
    from .errors import ArgumentError, SpecError, bad_argument, check_type
    from .model.activation import GatedActivation
    from .model.block import Block

    library_ = _lib(lib, theorems)
    act = _activation(activation, False, "activation")
    gated = isinstance(act, GatedActivation)
    seconds = _fact_budget(fact_budget, budget)
    skip_ = _skip_of(skip)
    for key, value in (("prefix", prefix), ("up", up), ("down", down), ("gate", gate), ("up_bias", up_bias),
                       ("down_bias", down_bias), ("gate_bias", gate_bias)):
        if value is not None:
            check_type(key, value, str, "a tensor name or prefix (str) or None")
    _check_flag("transpose", transpose)
    layer = _layer_options(gated, bias, absorber_bias, norm, eps, gamma, file is not None)
    label = activation if isinstance(activation, str) else act.name
    dim = skip_.matrix.rows if skip_.kind == "matrix" and skip_.matrix is not None else \
        sp.Symbol("d", integer=True, positive=True)
    block = Block("weights", act, dim, sp.Symbol("m", integer=True, positive=True), skip_, **layer)

    def run(b: Block, base_dir: str | None) -> Result:
        from .model.block import SpecQuery

        a = Session(library_, seconds, base_dir).answer(SpecQuery("absorb", b, None, f"decide {label}"))
        return Result(a, library_)

    if file is not None:
        if w_up is not None or w_down is not None or w_gate is not None:
            raise ArgumentError("give either arrays (w_up, w_down) or a file, not both", param="file", value=file,
                                reason="give either arrays (w_up, w_down) or a file, not both")
        for key, value in (("b_up", b_up), ("b_down", b_down), ("b_gate", b_gate)):
            if value is not None:
                raise bad_argument(key, value, f"with a file, name its tensor instead: {key.replace('b_', '')}_bias="
                                    "'...'")
        if gate_bias is not None and not gated:
            raise bad_argument("gate_bias", gate_bias, f"`{act.name}` is not a gated unit")
        if gamma is not None and not isinstance(gamma, str):
            raise bad_argument("gamma", gamma, "with a file, the scales are a tensor of it: gamma='NAME'")
        path = _check_path("file", file).absolute()
        decl = WeightsDecl(path.name, prefix, up, down, gate, transpose, up_bias_key=up_bias,
                           down_bias_key=down_bias, gate_bias_key=gate_bias, gamma_key=gamma)
        return run(replace(block, weights=decl), str(path.parent))
    for key, value in (("up_bias", up_bias), ("down_bias", down_bias), ("gate_bias", gate_bias)):
        if value is not None:
            raise bad_argument(key, value, f"a tensor name needs file=...; pass the values as b_{key[:-5]}=")
    if w_up is None or w_down is None:
        raise ArgumentError("decide needs w_up and w_down (arrays or nested lists), or file=...",
                            reason="w_up and w_down (arrays or nested lists), or file=..., are needed")
    if transpose:
        raise bad_argument("transpose", transpose, "applies to a file; pass arrays as w_up (m x d) and w_down "
                            "(d x m), e.g. a Conv1D weight's .T")
    if isinstance(gamma, str):
        raise bad_argument("gamma", gamma, "a tensor name needs file=...; pass the scales as an array")
    given = {"w_up": w_up, "w_down": w_down, "w_gate": w_gate, "b_up": b_up, "b_down": b_down, "b_gate": b_gate,
             "gamma": gamma}
    for key, value in given.items():
        if isinstance(value, (str, bytes)):  # refused before numpy is needed (it is an extra)
            raise bad_argument(key, value, "expected an array or nested lists of numbers")
    if gated and w_gate is None:
        raise ArgumentError(f"`{act.name}` is a gated unit: pass w_gate as well", param="w_gate",
                            reason=f"`{act.name}` is a gated unit: pass w_gate as well")
    if w_gate is not None and not gated:
        raise bad_argument("w_gate", "...", f"`{act.name}` is not a gated unit")
    if b_gate is not None and not gated:
        raise bad_argument("b_gate", b_gate, f"`{act.name}` is not a gated unit")
    if bias is False and any(v is not None for v in (b_up, b_down, b_gate)):
        raise ArgumentError("biases given with bias=False: drop bias=False or the biases", param="bias", value=bias,
                            reason="biases given with bias=False: drop bias=False or the biases")
    arrays = {k: _as_array(k, v) for k, v in given.items() if v is not None}
    vectors = ("b_up", "b_down", "b_gate", "gamma")
    exact = {k: _exact_matrix(_column(v) if k in vectors else v, k) for k, v in arrays.items()}
    shapes = {k: (_shape_of(k, v, k in vectors)) for k, v in arrays.items()}
    _check_shapes(shapes)
    if skip_.kind == "matrix" and shapes["w_up"][1] != block.dim:
        raise ArgumentError(f"skip is {block.dim} x {block.dim}; with w_up {shapes['w_up'][0]} x {shapes['w_up'][1]} "
                            f"(width x dim) it must be {shapes['w_up'][1]} x {shapes['w_up'][1]}", param="skip",
                            reason=f"{block.dim} x {block.dim}, expected {shapes['w_up'][1]} x {shapes['w_up'][1]}")
    if all(e is not None for e in exact.values()):
        m, d = exact["w_up"].shape
        fields: dict[str, Any] = {key: exact[key] for key in ("w_gate", "b_up", "b_down", "b_gate") if key in exact}
        if "gamma" in exact:
            fields["ln_gamma"] = exact["gamma"]
        return run(replace(block, dim=d, width=m, w_up=exact["w_up"], w_down=exact["w_down"], **fields), None)
    import numpy as np

    names = {"w_up": "W_up", "w_down": "W_down", "w_gate": "W_gate", "b_up": "b_up", "b_down": "b_down",
             "b_gate": "b_gate", "gamma": "ln_gamma"}
    floats = {names[k]: _float_values(k, v, exact[k], k in vectors) for k, v in arrays.items()}
    decl = WeightsDecl("arrays.npz", up_bias_key="b_up" if "b_up" in floats else None,
                       down_bias_key="b_down" if "b_down" in floats else None,
                       gate_bias_key="b_gate" if "b_gate" in floats else None,
                       gamma_key="ln_gamma" if "ln_gamma" in floats else None)
    with tempfile.TemporaryDirectory(prefix="symabsorb-") as tmp:
        np.savez(Path(tmp) / "arrays.npz", **floats)  # type: ignore[arg-type]
        try:
            return run(replace(block, weights=decl), tmp)
        except SpecError as err:  # a check of the weights-file reader: about an argument, never the scratch file
            if "arrays.npz" not in str(err):
                raise
            text = str(err).splitlines()[0].removeprefix("error: ")
            param = next((k for k, v in names.items() if f"`{v}`" in text), None)
            shown = text.replace(" in `arrays.npz`", "").replace("`arrays.npz`", "the arrays")
            raise ArgumentError(shown, param=param, reason=shown) from None


_NORM_ALIASES = {"pre": "pre-ln", "post": "post-ln"}


def _skip_of(skip: Any) -> Any:
    """``skip=`` as a spec's ``skip:``: ``"identity"``, ``"none"``, a number ``s`` (``scaled(s)``: M = s·I) or a
    square matrix (M itself); numbers are read exactly (a float is the dyadic rational it is, as weights are)."""
    from fractions import Fraction
    from numbers import Integral

    import sympy as sp

    from .errors import bad_argument
    from .model.block import Skip

    if isinstance(skip, str):
        if skip not in ("identity", "none"):
            raise bad_argument("skip", skip, "expected 'identity', 'none', a number s (M = s·I) or a square matrix "
                               "(Hyper-Connections: write a spec)")
        return Skip(skip)
    if isinstance(skip, bool):
        raise bad_argument("skip", skip, "expected 'identity', 'none', a number or a square matrix")
    if isinstance(skip, (Integral, Fraction, float, sp.Rational)):
        if isinstance(skip, float) and not math.isfinite(skip):
            raise bad_argument("skip", skip, "expected a finite number")
        factor = sp.Rational(skip.numerator, skip.denominator) if isinstance(skip, Fraction) else sp.Rational(skip)
        return Skip("scaled", factor=factor)
    values = _as_array("skip", skip)
    exact = _exact_matrix(values, "skip")
    if exact is None:
        floats = _float_array("skip", values)
        import numpy as np

        if not np.isfinite(floats).all():
            raise bad_argument("skip", skip, "a non-finite entry: the skip is a matrix of finite numbers")
        exact = _in_search_range(sp.ImmutableMatrix([[sp.Rational(float(x)) for x in row] for row in floats]), "skip")
    if exact.rows != exact.cols:
        raise bad_argument("skip", skip, f"a {exact.rows} x {exact.cols} matrix: a skip maps R^d to itself (square)")
    return Skip("matrix", matrix=exact)


def _layer_options(gated: bool, bias: object, absorber_bias: object, norm: object, eps: object, gamma: object,
                   file: bool) -> dict[str, Any]:
    """The block fields of ``bias``, ``absorber_bias``, ``norm`` and ``eps`` (checked as a spec's are); ``gamma``
    is only checked against ``norm`` here (its values are weights)."""
    import sympy as sp

    from .errors import bad_argument, check_type
    from .model.block import NORMS

    out: dict[str, Any] = {}
    if bias is not None:
        out["bias"] = _check_flag("bias", bias)
    if absorber_bias is not None:
        out["absorber_bias"] = _check_flag("absorber_bias", absorber_bias)
    check_type("norm", norm, str, "a normalisation: " + ", ".join(NORMS))
    assert isinstance(norm, str)
    placed = _NORM_ALIASES.get(norm, norm)
    if placed not in NORMS:
        raise bad_argument("norm", norm, "expected one of " + ", ".join(NORMS) + " ('pre'/'post': LayerNorm)")
    out["norm"] = placed
    for key, value in (("eps", eps), ("gamma", gamma)):
        if value is not None and placed == "none":
            raise bad_argument(key, value, "needs a normalisation: norm='post-ln' (or another placement)")
    if eps is not None:
        from fractions import Fraction
        from numbers import Integral

        if isinstance(eps, bool) or not isinstance(eps, (Integral, Fraction, float, sp.Rational)):
            raise bad_argument("eps", eps, "expected a number >= 0 (int, Fraction, float)")
        if isinstance(eps, float):
            if not math.isfinite(eps):
                raise bad_argument("eps", eps, "expected a finite number >= 0")
            value = sp.Rational(repr(eps))  # 1e-12 is 1/10^12, as a spec's `eps: 1e-12`
        elif isinstance(eps, Fraction):
            value = sp.Rational(eps.numerator, eps.denominator)
        else:
            value = sp.Rational(eps)  # type: ignore[arg-type]
        if value < 0:
            raise bad_argument("eps", eps, "expected a number >= 0")
        out["eps"] = value
    return out


def _column(values: Any) -> Any:
    """A vector (1-d array, list) as a one-column matrix, for :func:`_exact_matrix`; other values unchanged."""
    shape = getattr(values, "shape", None)
    if isinstance(shape, tuple) and len(shape) == 1:
        return values.reshape(-1, 1)
    if isinstance(values, Sequence) and not isinstance(values, (str, bytes)) and values and \
            not any(isinstance(x, Sequence) for x in values):
        return [[x] for x in values]
    return values


def _shape_of(name: str, values: Any, vector: bool) -> tuple[int, ...]:
    """The shape of an argument (a vector's as ``(n,)``), or :class:`ArgumentError` naming it."""
    import sympy as sp

    from .errors import bad_argument

    if isinstance(values, sp.MatrixBase):
        shape: tuple[int, ...] = tuple(values.shape)
    elif hasattr(values, "shape") and isinstance(values.shape, tuple):
        shape = tuple(int(n) for n in values.shape)
    elif isinstance(values, Sequence) and values:
        if all(isinstance(r, Sequence) and not isinstance(r, (str, bytes)) for r in values):
            lengths = {len(r) for r in values}
            if len(lengths) != 1:
                raise bad_argument(name, values, f"rows of lengths {sorted(lengths)}: every row the same length")
            shape = (len(values), lengths.pop())
        else:
            shape = (len(values),)
    else:
        raise bad_argument(name, values, "expected " + ("a vector" if vector else "a matrix")
                            + " (a numpy array, a tensor or nested lists of numbers)")
    if vector:
        if len(shape) == 2 and 1 in shape:
            shape = (shape[0] * shape[1],)
        if len(shape) != 1 or shape[0] == 0:
            raise bad_argument(name, values, f"expected a non-empty vector, got shape {shape}")
    elif len(shape) != 2 or 0 in shape:
        raise bad_argument(name, values, f"expected a non-empty 2-d matrix, got shape {shape}")
    return shape


def _check_shapes(shapes: dict[str, tuple[int, ...]]) -> None:
    """Every argument's shape against ``w_up``'s (m x d): an :class:`ArgumentError` naming the argument."""
    from .errors import ArgumentError

    m, d = shapes["w_up"]
    expected = {"w_down": (d, m), "w_gate": (m, d), "b_up": (m,), "b_down": (d,), "b_gate": (m,), "gamma": (d,)}
    what = {"w_down": "dim x width", "w_gate": "width x dim, as w_up", "b_up": "one per hidden unit",
            "b_down": "one per output coordinate", "b_gate": "one per gated unit", "gamma": "one scale per coordinate"}
    for key, want in expected.items():
        got = shapes.get(key)
        if got is None or got == want:
            continue
        hint = ""
        if key == "w_down" and got == (m, d) and m != d:
            hint = ("; it looks stored in x out (a Conv1D weight, GPT-2): pass w_down.T, and w_up.T if w_up is "
                    "stored so too")
        shown = f"shape {got[0]} x {got[1]}" if len(got) == 2 else f"length {got[0]}"
        need = f"{want[0]} x {want[1]}" if len(want) == 2 else f"of length {want[0]}"
        raise ArgumentError(f"{key} has {shown}; with w_up {m} x {d} (width x dim) it must be {need} "
                            f"({what[key]}){hint}", param=key, value=None, reason=f"{shown}, expected {need}")


def _float_values(name: str, values: Any, exact: Any, vector: bool) -> Any:
    """An argument as float64 for the weights-file path: floats as they are (each an exact dyadic
    rational), exact values only when float64 holds them exactly (else :class:`ArgumentError`: mixing a
    ``Fraction(1, 3)`` with float arrays would round it)."""
    import numpy as np

    from .errors import bad_argument

    if exact is not None:
        from fractions import Fraction

        entries = list(exact)
        floats = [float(x) for x in entries]
        if any(Fraction(f) != Fraction(int(x.p), int(x.q)) for f, x in zip(floats, entries, strict=True)):
            raise bad_argument(name, values, "holds exact values float64 cannot represent, beside float "
                                "arguments: pass every argument exact (ints, Fractions) or every one as floats")
        array = np.array(floats, dtype=np.float64).reshape(exact.shape)
    else:
        array = _float_array(name, _column(values) if vector else values)
    if not np.isfinite(array).all():
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(array))[0])
        shown = where[0] if vector else list(where)
        raise bad_argument(name, values, f"a non-finite entry ({array[where]}) at {shown}: weights are finite numbers")
    return array.reshape(-1) if vector else array


def _as_array(name: str, values: Any) -> Any:
    """A tensor of another library as a numpy array holding the same numbers exactly; nested lists,
    SymPy matrices and numpy arrays unchanged. PyTorch tensors (any float dtype: bfloat16 goes through
    float32, which holds every bfloat16 exactly; detached, moved to the CPU), anything with
    ``__array__`` (JAX, xarray, pandas...) or DLPack (``__dlpack__``: CuPy, JAX, TensorFlow...).
    Complex values and non-numeric dtypes are an :class:`ArgumentError`, never silently cut to reals."""
    from .errors import ArgumentError, bad_argument

    if values is None or isinstance(values, (list, tuple, str, bytes)):
        return values
    import sympy as sp

    if isinstance(values, sp.MatrixBase):
        return values
    module = type(values).__module__.split(".")[0]
    is_torch = module == "torch" and hasattr(values, "detach")
    if not is_torch and not hasattr(values, "__array__") and not hasattr(values, "__dlpack__"):
        return values  # nested sequences of another kind, or a bad value: the usual checks say which
    try:
        import numpy as np
    except ImportError:
        raise bad_argument(name, values, f"reading a {module} array needs numpy "
                            "(pip install 'symabsorb[weights]'), or pass nested lists") from None
    if isinstance(values, np.ndarray):
        array = values
    else:
        try:
            array = _foreign_array(name, values, is_torch)
        except ArgumentError:
            raise
        except Exception as err:  # a foreign library's own error: name the argument, say what works
            raise bad_argument(name, values, "cannot read it as a matrix of numbers "
                                f"({type(err).__name__}: {err}); pass a numpy array or nested lists") from None
    kind = array.dtype.kind
    if kind == "c":
        raise bad_argument(name, values, f"complex entries (dtype {array.dtype}): "
                            "weights are real; pass the real part if that is what you mean")
    if kind == "V":
        try:  # ml_dtypes' bfloat16 (JAX): every value is exact in float32
            array, kind = array.astype(np.float32), "f"
        except (TypeError, ValueError):
            kind = "?"
    if kind not in "biufO":  # object arrays: nested numbers (Fractions are decided exactly)
        raise bad_argument(name, values, f"entries of dtype {array.dtype}: expected "
                            "numbers (float, int)")
    return array


def _foreign_array(name: str, values: Any, is_torch: bool) -> Any:
    """A numpy copy of a PyTorch tensor, an ``__array__`` object or a DLPack capsule provider."""
    import numpy as np

    from .errors import bad_argument

    if is_torch:
        import torch

        tensor = values.detach()
        if tensor.is_complex():
            raise bad_argument(name, values, f"complex entries (dtype {tensor.dtype}): "
                                "weights are real; pass the real part if that is what you mean")
        if tensor.layout != torch.strided:
            tensor = tensor.to_dense()
        if tensor.dtype == torch.bfloat16:
            tensor = tensor.float()  # exact: float32 holds every bfloat16 value
        return tensor.cpu().numpy()
    if hasattr(values, "__array__"):
        return np.asarray(values)
    return np.from_dlpack(values)


def _float_array(name: str, values: Any) -> Any:
    """``values`` as a float64 matrix, or :class:`ArgumentError` (a string, ragged rows, objects...)."""
    import numpy as np

    from .errors import ArgumentError, bad_argument

    if isinstance(values, (str, bytes)):
        raise bad_argument(name, values, "expected a matrix (a numpy array or nested lists)")
    from .weights.io import MAX_TENSOR_BYTES

    shape = getattr(values, "shape", None)
    if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape) and math.prod(shape) * 8 > MAX_TENSOR_BYTES:
        # the cap a weights file's tensor has (checked before the float64 copy is made)
        raise ArgumentError(f"{name}: shape {shape} has {math.prod(shape)} entries: at most {MAX_TENSOR_BYTES // 8} "
                            "(raise the cap with the environment variable SYMABSORB_MAX_TENSOR_BYTES)", param=name,
                            value=values, reason=f"shape {shape} has {math.prod(shape)} entries: at most "
                            f"{MAX_TENSOR_BYTES // 8}")
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as err:
        raise bad_argument(name, values, f"expected a matrix of numbers ({err})") from None
    if array.ndim != 2 or 0 in array.shape:
        raise bad_argument(name, values, "expected a non-empty 2-d matrix, got shape "
                            f"{array.shape}")
    return array


def _exact_matrix(values: Any, name: str = "matrix") -> Any:
    """An exact SymPy matrix when ``values`` holds only ints/Fractions/SymPy rationals, else None."""
    from fractions import Fraction
    from numbers import Integral

    import sympy as sp

    if isinstance(values, sp.MatrixBase):
        return _in_search_range(sp.ImmutableMatrix(values), name)
    dtype = getattr(values, "dtype", None)
    if dtype is not None:
        if getattr(dtype, "kind", None) not in ("i", "u", "O"):
            return None
        values = values.tolist()
    if not isinstance(values, Sequence) or not values or not all(isinstance(r, Sequence) for r in values):
        return None
    rows = [list(r) for r in values]
    if len({len(r) for r in rows}) != 1 or not rows[0]:
        from .errors import ArgumentError

        raise ArgumentError(f"{name}: rows of lengths {sorted({len(r) for r in rows})}: expected a non-empty matrix, "
                            "every row the same length", param=name, value=values,
                            reason="expected a non-empty matrix, every row the same length")
    if not all(isinstance(x, (Integral, Fraction, sp.Rational)) and not isinstance(x, bool) for r in rows for x in r):
        return None
    return _in_search_range(sp.ImmutableMatrix([[sp.Rational(x.numerator, x.denominator) if isinstance(x, Fraction)
                                                 else sp.Integer(x) if isinstance(x, Integral) else x for x in r]
                                                for r in rows]), name)


def _in_search_range(matrix: Any, name: str) -> Any:
    """``matrix`` if every rational entry is 0 or of a magnitude the searches handle (the bound a
    spec's inline weights have), else :class:`ArgumentError` (was an OverflowError from the float guess)."""
    from .errors import ArgumentError
    from .model.resolve import _HUGE_WEIGHT, _TINY_WEIGHT

    for v in matrix:
        if getattr(v, "is_Rational", False) and v != 0 and not (_TINY_WEIGHT <= abs(v) <= _HUGE_WEIGHT):
            raise ArgumentError(f"{name}: an entry is out of the range the searches handle: expected a magnitude "
                                "between 10^-100 and 10^100 (or 0); rescale the weights", param=name, value=matrix,
                                reason="an entry is out of the range the searches handle (10^-100 to 10^100, or 0)")
    return matrix



# ---- check, fmt, graph: what `symabsorb check`, `fmt` and `graph` print --------------------------------


def check(spec: Spec | PathLike, *, name: str | None = None) -> Listing:
    """``spec`` parsed and resolved (a :class:`Spec`, a path or spec text): a :class:`Listing` whose
    ``render("text")`` lists what it declares and asks (``symabsorb check``), under ``name`` (default:
    the spec's path). Errors are :class:`symabsorb.SpecError` with file:line:col."""
    from .errors import check_type

    if name is not None:
        check_type("name", name, str, "the name the listing shows (str) or None")
    s = _spec(spec)
    return Listing(name if name is not None else s.path, s.resolved)


def fmt(source: PathLike, *, check: bool = False, name: str | None = None) -> Formatted:
    """A spec in canonical form (``symabsorb fmt``): ``source`` a path (always one when it is a
    :class:`~pathlib.Path`) or spec text. The :class:`Formatted` holds the original and the canonical
    text (``changed``, ``diff()``, ``write()`` rewrites the file); ``check=True``: ``render()`` says
    whether the file would be reformatted instead of printing it (``fmt --check``). ``name``: the name
    messages, the diff and ``write()`` use (default: the path as given, or ``<string>``)."""
    from .dsl.formatter import format_module
    from .dsl.loader import read_source
    from .dsl.parser import parse_text
    from .errors import check_type

    check_type("source", source, (str, os.PathLike), "a path to a .absorb file or spec text (str)")
    _check_flag("check", check)
    if name is not None:
        check_type("name", name, str, "the name shown in messages (str) or None")
    if isinstance(source, os.PathLike) or _looks_like_path(str(source)):
        label, text = name or str(source), read_source(Path(source))
    else:
        label, text = name or "<string>", str(source)
    return Formatted(label, text, format_module(parse_text(text, label)), check)


def graph(spec: Spec | PathLike | None = None, *, fact_budget: float | None = DEFAULT_BUDGET,
          theorems: Sequence[PathLike] = (), lib: Library | None = None, budget: Any = _UNSET) -> Graph:
    """The lemma graph of the library (the built-in one plus ``theorems``): a :class:`Graph` whose
    ``render(fmt)`` is dot, mermaid, json, html (one interactive page) or blueprint (a leanblueprint
    chapter). With ``spec``, each result is coloured by what proving its queries did with it
    (applied, hypothesis failed, undecided, cited, not tried); ``fact_budget`` as for :func:`prove`."""
    library_ = _lib(lib, theorems)
    seconds = _fact_budget(fact_budget, budget)
    states = prove(spec, fact_budget=seconds, lib=library_).data.node_states() if spec is not None else None
    return Graph(library_, states)


#: The formats each kind of output is rendered in, by canonical name, as the renderers' table has them
#: (:mod:`symabsorb.report.formats`; a test keeps the two equal). A constant, so that the command
#: line's ``--help`` names them without importing the renderers (and SymPy).
FORMAT_NAMES: dict[str, tuple[str, ...]] = {
    "report": ("md", "html", "tex", "json", "terminal", "text"),
    "graph": ("dot", "mermaid", "json", "html", "blueprint"),
    "atlas": ("md", "html", "json"),
    "scan": ("md", "tex", "csv"),
}


def formats(kind: str = "report") -> tuple[str, ...]:
    """The canonical names of the formats ``kind`` (report, graph, atlas, scan) renders in, from the
    renderers' table (a renderer registered with ``@renderer`` included)."""
    from .report.formats import RENDERERS

    return RENDERERS.names(_kind(kind))


def format_spellings(kind: str = "report") -> tuple[str, ...]:
    """Every name and alias ``kind``'s formats accept (``markdown``, ``htm``, ``latex``...)."""
    from .report.formats import RENDERERS

    return RENDERERS.spellings(_kind(kind))


def format_name(name: str, kind: str = "report") -> str:
    """The canonical name of the format ``name`` (``markdown`` -> ``md``); an ArgumentError naming the choices."""
    from .errors import bad_argument, check_type
    from .report.formats import RENDERERS, UnknownFormat

    check_type("fmt", name, str, "a format name (str)")
    try:
        return RENDERERS.normalize(name, _kind(kind))
    except UnknownFormat:
        raise bad_argument("fmt", name, "expected one of " + ", ".join(RENDERERS.names(_kind(kind)))) from None


def format_for_path(path: PathLike, kind: str = "report") -> str | None:
    """The format a file's suffix names (``report.html`` -> ``html``), or None when it names none of ``kind``'s."""
    from .report.formats import RENDERERS, UnknownFormat

    try:
        return RENDERERS.by_suffix(Path(path).suffix, _kind(kind)).name
    except UnknownFormat:
        return None


def format_suffixes(kind: str = "report") -> tuple[str, ...]:
    """The file suffix of each of ``kind``'s formats that has one (``.md``, ``.html``...), in table order."""
    from .report.formats import RENDERERS

    return tuple(f.suffixes[0] for f in RENDERERS if _kind(kind) in f.entries and f.suffixes)


def _kind(kind: str) -> Kind:
    from .errors import bad_argument

    if kind not in FORMAT_NAMES:
        raise bad_argument("kind", kind, "expected one of " + ", ".join(FORMAT_NAMES))
    return kind  # type: ignore[return-value]


def missing_packages(fmt: str) -> list[str]:
    """What rendering ``fmt`` would use and is not installed, one line each, each line once per process:
    a line returned here is not warned about again when a result renders (the command line prints it)."""
    from . import results
    from .report.render import missing_extras

    lines = [line for line in missing_extras(format_name(fmt)) if line not in results._WARNED]
    results._WARNED.update(lines)  # the set the results' own warning reads
    return lines


# ---- the other commands: catalog, verify, explore, scan (the command line calls these) -----------------


def catalog(*, fact_budget: float | None = DEFAULT_BUDGET, theorems: Sequence[PathLike] = (),
            lib: Library | None = None, budget: Any = _UNSET) -> Catalog:
    """Classify every built-in activation (``symabsorb catalog``). ``fact_budget``: CPU seconds per fact."""
    from .answer import Session
    from .model.catalog import CATALOG
    from .model.resolve import activation_from_text
    from .theory.proof import SIZES_NOTE as _SIZES_NOTE

    library_ = _lib(lib, theorems)
    session = Session(library_, _fact_budget(fact_budget, budget))
    rows = []
    for name, entry in CATALOG.items():
        d = session.classify(activation_from_text(name, gated=False))
        r = library_.results.get(d.decided_by) if d.decided_by else None
        rows.append({"activation": name, "gated": entry.gated, "verdict": d.verdict.value, "scope": str(d.scope),
                     "sufficient": d.sufficient, "necessary": d.necessary,
                     "decided_by": d.decided_by, "label": r.label if r else None,
                     "source": r.source if r else None, "condition": d.condition_plain, "used_in": entry.used_in,
                     # what the verdict assumes beyond the setting (the first assumption): identity's m >= d
                     "assumes": [a for a in d.assumptions[1:] if a != _SIZES_NOTE]})
    return Catalog(tuple(rows))


def verify(report: PathLike, *, weights_dir: PathLike | None = None, blas: bool = False,
           theorems: Sequence[PathLike] = (), lib: Library | None = None) -> Verification:
    """Re-check every certificate of ``report`` (a JSON report of :func:`prove`) exactly against the
    weight files and witnesses (in ``weights_dir``, default: the report's own directory), every
    question re-derived with the library (the built-in one plus ``theorems``, as :func:`prove` was given).
    ``ok``: something was checked and every check held (the command line exits 1 otherwise)."""
    from .answer import Session
    from .answer.verify import verify_report

    path = _check_path("report", report)
    directory = _check_path("weights_dir", weights_dir) if weights_dir is not None else None
    outcome = verify_report(path, Session(_lib(lib, theorems)), directory, _check_flag("blas", blas))
    return Verification(path, tuple(outcome), int(getattr(outcome, "unchecked", 0)), str(getattr(outcome, "library", "")))


def executor(*, scheduler: str | None = None, workers: int = 2, in_process: bool = False) -> Any:
    """Where :func:`explore` and :func:`scan` run their cases: in this process, on a local Dask
    cluster of ``workers`` processes (the default when ``dask.distributed`` is installed; else in
    this process, with a ``UserWarning``), or on a running scheduler (``tcp://host:8786``). The
    cluster starts on first use; ``close()`` it when done."""
    import warnings

    from .errors import bad_argument, check_type
    from .explore.executors import DaskExecutor, InProcessExecutor, LazyExecutor, dask_available

    if scheduler is not None:
        check_type("scheduler", scheduler, str, "a Dask scheduler address (tcp://host:8786) or None")
    check_type("workers", workers, int, "a number of worker processes (an int >= 1)")
    if workers < 1:  # checked before dask's presence: the same input is refused on every machine
        raise bad_argument('workers', workers, "expected at least 1 worker")
    import os

    cpus = os.cpu_count() or 1
    if workers > cpus:
        raise bad_argument('workers', workers, f"this machine has {cpus} CPUs; use at most "
                            f"{cpus} workers")
    if _check_flag("in_process", in_process):
        if scheduler:
            raise bad_argument('scheduler', scheduler, "in_process=True and a scheduler "
                                "exclude each other")
        return InProcessExecutor()
    if not dask_available():
        if scheduler:
            raise bad_argument('scheduler', scheduler, "a scheduler needs dask.distributed: "
                                "pip install 'symabsorb[explore]'")
        warnings.warn("dask.distributed is not installed; running in this process (pip install 'symabsorb[explore]')",
                      stacklevel=2)
        return InProcessExecutor()
    where = f"dask scheduler {scheduler}" if scheduler else f"dask local cluster ({workers} workers)"
    return LazyExecutor(where, lambda: DaskExecutor(scheduler, workers))


def _executor_or_default(value: Any) -> Any:
    from .explore.executors import InProcessExecutor

    if value is None:
        return InProcessExecutor(), True
    from .errors import bad_argument

    if not callable(getattr(value, "run", None)) or not callable(getattr(value, "close", None)):
        raise bad_argument('executor', value, "expected symabsorb.executor(...) or None")
    return value, False


DEFAULT_SIZES = ((2, 2), (2, 3), (2, 4), (3, 3), (3, 4), (3, 5), (3, 6))


def explore(spec: Spec | PathLike, *, spaces: Sequence[str] | None = None, results: PathLike | None = None,
            case_budget: float = 60.0, evidence_budget: float = 120.0,
            sizes: Sequence[tuple[int, int]] = DEFAULT_SIZES, starts: int = 6, evidence: bool = True,
            stacks: bool = True, executor: Any = None, progress: Callable[[str, int, int], None] | None = None,
            run_info: dict[str, Any] | None = None, theorems: Sequence[PathLike] = ()) -> Exploration:
    """Map the spaces of ``spec`` (``symabsorb explore``): classify every expression, search for
    evidence on the open ones, and build the atlas. Results (one JSON line per case) go to
    ``results`` (default: ``SPEC-explore`` in the working directory); a second run resumes.
    ``executor``: :func:`symabsorb.executor` (default: this process). ``theorems``: result directories
    the library uses besides the built-in one (as :func:`prove`'s)."""
    from .errors import ArgumentError, bad_argument, check_type
    from .explore.atlas import build_atlas
    from .explore.run import ExploreSettings
    from .explore.run import explore as _explore

    s = _spec(spec)
    if not s.resolved.spaces:
        raise ArgumentError(f"`{s.path}` declares no `space`; add e.g. `space s = {{ primitives: [tanh, exp], size: 4 }}`",
                            reason="the spec declares no `space`")
    names = {sp_.name for sp_ in s.resolved.spaces}
    if spaces is not None:
        check_type("spaces", spaces, (list, tuple), "a list of space names or None")
        for name in spaces:
            if name not in names:
                raise ArgumentError(f"no space `{name}` in {s.path}; it declares " + ", ".join(sorted(names)),
                                    param="spaces", value=spaces,
                                    reason=f"no space `{name}`; the spec declares " + ", ".join(sorted(names)))
    outdir = _check_path("results", results) if results is not None else Path(Path(s.path).stem + "-explore")
    seconds = _check_budget(case_budget, "case_budget"), _check_budget(evidence_budget, "evidence_budget")
    check_type("starts", starts, int, "optimisation starts per size (an int >= 1)")
    if starts < 1:
        raise bad_argument('starts', starts, "expected at least 1 start")
    for d, m in sizes:
        if not (1 <= d <= 8 and d <= m <= 32):
            raise bad_argument('sizes', sizes, "each size (d, m) needs 1 <= d <= 8, d <= m <= 32")
    _check_progress(progress)
    settings = ExploreSettings(seconds[0], seconds[1], tuple((int(d), int(m)) for d, m in sizes), starts,
                               _check_flag("evidence", evidence), _check_flag("stacks", stacks),
                               theorems=tuple(str(d.absolute()) for d in _check_dirs(theorems)))
    runner, own = _executor_or_default(executor)
    try:
        result = _explore(s.resolved, outdir, runner, settings, spaces, progress)
    finally:
        if own:
            runner.close()
    run: dict[str, Any] = {"executor": result.executor, "results": str(outdir / "cases.jsonl"),
                           "case budget (CPU s)": case_budget}
    if settings.evidence or settings.stacks:  # the run table lists what ran, not settings nothing used
        run.update({"evidence budget (CPU s)": evidence_budget,
                    "evidence sizes (d, m)": " ".join(f"{d}x{m}" for d, m in sizes), "starts": starts})
    if not settings.evidence:
        run["evidence search"] = "not run (--no-evidence)"
    run.update(run_info or {})
    for ph in result.phases:
        run[f"phase {ph.phase}"] = f"{ph.total} cases, {ph.resumed} resumed, {ph.ran} run, {ph.wall_s} s"
    atlas = build_atlas(f"Atlas: {Path(s.path).name}", result.spaces, result.store.records, result.enumerations, run,
                        evidence=settings.evidence)
    result.store.close()
    return Exploration(atlas, outdir, result.phases, result.executor)


def scan(directory: PathLike, *, activation: str | None = None, case_budget: float = 300.0,
         results: PathLike | None = None, executor: Any = None,
         progress: Callable[[str, int, int], None] | None = None, theorems: Sequence[PathLike] = ()) -> Scan:
    """Decide every MLP layer of every weight file under ``directory`` (``symabsorb scan``); the
    activation is read from the tensor names unless given. Results go to ``results`` (default: a
    temporary directory, removed afterwards: nothing is written into the scanned tree or the
    working directory); a second run with the same ``results`` resumes. ``executor``:
    :func:`symabsorb.executor` (default: this process). ``theorems``: result directories the library
    uses besides the built-in one (as :func:`prove`'s)."""
    from .errors import bad_argument, check_type
    from .explore.scan import scan as _scan
    from .explore.store import ResultStore

    folder = _check_path("directory", directory)
    if not folder.is_dir():
        raise bad_argument('directory', directory, "expected a directory of weight files")
    if activation is not None:
        check_type("activation", activation, str, "an activation name (str) or None")
    seconds = _check_budget(case_budget, "case_budget")
    _check_progress(progress)
    import tempfile

    # nothing is written into the scanned tree or the working directory unless `results` names a place
    scratch = tempfile.TemporaryDirectory(prefix="symabsorb-scan-") if results is None else None
    where = _check_path("results", results) if results is not None else Path(scratch.name)  # type: ignore[union-attr]
    store = ResultStore(where)
    runner, own = _executor_or_default(executor)
    try:
        records, skipped = _scan(folder, store, runner, activation, seconds, progress,
                                 tuple(str(d.absolute()) for d in _check_dirs(theorems)))
    finally:
        if own:
            runner.close()
        store.close()
        if scratch is not None:
            scratch.cleanup()
    return Scan(tuple(records), tuple(skipped), library(theorems).fingerprint())


# ---- choosing queries: `prove -k PATTERN`, as pytest's -k -----------------------------------------------


def select(spec: Spec | PathLike, keyword: str) -> Spec:
    """``spec`` with only the queries whose text matches ``keyword`` (pytest's ``-k``: words as
    case-insensitive substrings, ``and``, ``or``, ``not``, parentheses); an ArgumentError listing
    the queries when none matches."""
    from .errors import bad_argument
    from .keyword import keyword_matcher

    s = _spec(spec)
    matches = keyword_matcher(keyword)
    chosen = tuple(q for q in s.resolved.queries if matches(q.text))
    if not chosen:
        asked = "; ".join(q.text for q in s.resolved.queries) or "nothing"
        raise bad_argument('keyword', keyword, f"no query of {s.path} matches; it asks: {asked}")
    return Spec(replace(s.resolved, queries=chosen), s.text)
