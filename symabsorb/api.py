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
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sympy as sp

    from .analysis.engine import ActivationFacts
    from .answer import Session
    from .answer.types import QueryAnswer
    from .answer.types import Report as ReportData
    from .model.activation import AnyActivation
    from .model.block import Block, ResolvedSpec, Stack
    from .theory.derivation import Derivation, Witness
    from .theory.library import Library

__all__ = ["Catalog", "Exploration", "Report", "Result", "Scan", "Spec", "Verification", "WidthWitness", "absorb",
           "absorb_width", "catalog", "classify", "decide", "executor", "explore", "facts", "library", "load", "prove",
           "scan", "select", "verify"]

DEFAULT_BUDGET = 5.0
PathLike = str | os.PathLike[str]


# ---- argument checks at the boundary: wrong types are ArgumentError, never a stray TypeError --------


def _check_budget(budget: object, name: str = "budget") -> float | None:
    """``None`` (no limit of its own) or CPU seconds: a finite real number > 0."""
    import math

    from .errors import ArgumentError, check_type, describe_argument

    if budget is None:
        return None
    check_type(name, budget, (int, float), "CPU seconds (a number > 0) or None")
    assert isinstance(budget, (int, float))
    if not math.isfinite(budget) or budget <= 0:
        raise ArgumentError(f"{describe_argument(name, budget)}: expected CPU seconds, a finite number > 0 (or None "
                            "for no limit of its own)")
    return float(budget)


def _check_path(name: str, value: object) -> Path:
    from .errors import check_type

    check_type(name, value, (str, os.PathLike), "a path (str or pathlib.Path)")
    assert isinstance(value, (str, os.PathLike))
    return Path(value)


def _check_flag(name: str, value: object) -> bool:
    from .errors import check_type

    check_type(name, value, bool, "True or False")
    return bool(value)


def _check_dirs(theorems: object) -> list[Path]:
    from .errors import ArgumentError, describe_argument

    if isinstance(theorems, (str, os.PathLike)):
        raise ArgumentError(f"{describe_argument('theorems', theorems)}: expected a sequence of directories, e.g. "
                            f"theorems=[{str(theorems)!r}]")
    if not isinstance(theorems, (Sequence, tuple, list)):
        raise ArgumentError(f"{describe_argument('theorems', theorems)}: expected a sequence of directories")
    dirs = [_check_path(f"theorems[{i}]", d) for i, d in enumerate(theorems)]
    for i, d in enumerate(dirs):
        if not d.is_dir():
            raise ArgumentError(f"{describe_argument(f'theorems[{i}]', theorems[i])}: expected a directory of result "
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


_WARNED: set[str] = set()


def _warn_missing(fmt: str, plots: bool = True) -> None:
    """Once per process and line: what ``fmt`` would use and is not installed (a ``UserWarning``)."""
    import warnings

    from .report.render import missing_extras

    for line in missing_extras(fmt, plots):
        if line not in _WARNED:
            _WARNED.add(line)
            warnings.warn(line, stacklevel=3)


def _check_format(fmt: object, fragment: object = False, color: object = False, width: object = 100,
                  choices: Sequence[str] | None = None) -> str:
    """The canonical format name, or :class:`~symabsorb.errors.ArgumentError` naming the choices."""
    from .errors import ArgumentError, check_type, describe_argument
    from .report.formats import RENDERERS, UnknownFormat

    names = tuple(choices or RENDERERS.names("report"))  # the renderers' own table
    check_type("fmt", fmt, str, "a format name: " + ", ".join(names))
    assert isinstance(fmt, str)
    try:
        key = RENDERERS.normalize(fmt, "report")
    except UnknownFormat:
        key = None
    if key is None or key not in names:
        raise ArgumentError(f"{describe_argument('fmt', fmt)}: expected one of " + ", ".join(names))
    _check_flag("fragment", fragment)
    _check_flag("color", color)
    check_type("width", width, int, "a number of columns (an int, e.g. 100)")
    assert isinstance(width, int)
    if not 20 <= width <= 10_000:
        raise ArgumentError(f"{describe_argument('width', width)}: expected between 20 and 10000 columns")
    return key


class _Renderable:
    """What every result shares: ``render(fmt)`` and the notebook hooks built on it."""

    def render(self, fmt: str = "md", *, fragment: bool = False, color: bool = False, width: int = 100) -> str:
        """This result as text: ``md``, ``html``, ``tex``, ``json``, ``terminal`` (``rich`` when installed) or
        ``text``. ``fragment``: HTML as a ``<div>`` with scoped CSS, LaTeX without the preamble. Results
        and reports also take ``verbose`` (terminal, text): each candidate with its reason."""
        raise NotImplementedError

    def _repr_markdown_(self) -> str:
        return self.render("md", fragment=True)

    def _repr_html_(self) -> str:
        return self.render("html", fragment=True)

    def __str__(self) -> str:
        return self.render("text")


@dataclass(frozen=True, repr=False)
class Result(_Renderable):
    """One answer: a verdict with its derivation (``classify``, ``absorb``, ``decide``) or the facts
    about one activation (``facts``)."""

    answer: QueryAnswer
    library: Library = field(compare=False)

    @property
    def query(self) -> str:
        return self.answer.query

    @property
    def derivation(self) -> Derivation | None:
        """The derivation as data (verdict, steps, candidates, witness), or None for facts."""
        return self.answer.derivation

    @property
    def facts(self) -> ActivationFacts | None:
        """The facts about the activation, or None for a verdict."""
        return self.answer.facts

    @property
    def verdict(self) -> str | None:
        """``impossible``, ``conditional``, ``absorbable``, ``not-absorbable``, ``open`` (None for facts)."""
        d = self.answer.derivation
        return None if d is None else d.verdict.value

    @property
    def scope(self) -> str | None:
        """For which weights the verdict holds: ``all weights``, ``nondegenerate weights``, ``generic weights``,
        ``these weights``, or ``almost every weight near these`` (Theorem FD's certificate of a deep stack: the
        verdict then stays ``open``, never ``not-absorbable``). None for facts."""
        d = self.answer.derivation
        return None if d is None else str(d.scope)

    @property
    def decided_by(self) -> str | None:
        """The label of the deciding result (``Thm. 8``, ``L-growth``), or None."""
        d = self.answer.derivation
        return self.library.results[d.decided_by].label if d is not None and d.decided_by else None

    @property
    def condition(self) -> str | None:
        """The condition of a conditional verdict, in plain text."""
        d = self.answer.derivation
        return None if d is None else d.condition_plain

    @property
    def condition_sympy(self) -> Any:
        """The condition as SymPy, when it is the index-set condition ``W_down[:,S] W_up[S,:] = T``:
        ``Eq(W_down_S * W_up_S, T)`` with ``W_down_S`` a ``d x k`` and ``W_up_S`` a ``k x d``
        ``MatrixSymbol`` (``k = |S|``) and ``T`` a ``Matrix`` or a multiple of ``Identity(d)`` (or of
        ``Identity(d) - OneMatrix(d, d)/d``, the centred skip). None for any other condition (read
        :attr:`condition` then): the text is never evaluated, only these forms are recognised."""
        d = self.answer.derivation
        return None if d is None or not d.condition_plain else _condition_sympy(d.condition_plain)

    @property
    def witness(self) -> Witness | None:
        """Residual-free weights (flip the units ``witness.index_set``, numbered from 0), when found."""
        d = self.answer.derivation
        return None if d is None else d.witness

    def write_witness(self, path: PathLike) -> Path:
        """Write the residual-free weights to ``path`` (``.safetensors`` or ``.npz``; needs numpy)."""
        from .errors import ArgumentError
        from .weights.export import write_witness

        target = _check_path("path", path)
        if self.witness is None:
            raise ArgumentError(f"no witness: the verdict for `{self.query}` is {self.verdict}")
        write_witness(target, self.witness)
        return target

    def render(self, fmt: str = "md", *, fragment: bool = False, color: bool = False, width: int = 100,
               verbose: bool = False) -> str:
        from .report.render import render_answer

        fmt = _check_format(fmt, fragment, color, width)
        _warn_missing(fmt, plots=False)
        return render_answer(self.answer, self.library, fmt, fragment=fragment, color=color, width=width,
                             verbose=_check_flag("verbose", verbose))

    def _repr_latex_(self) -> str:
        """The verdict (or the activation) as one line of math, for LaTeX/PDF export of a notebook."""
        import sympy as sp

        from .report.common import VERDICT_TEXT
        from .report.escape import is_safe_math

        d, f = self.answer.derivation, self.answer.facts
        if d is not None:
            body = f"\\text{{{VERDICT_TEXT[d.verdict]}}}"
            if d.decided_by:  # a label may come from a --theorems file: text, never TeX (`\\input{...}`)
                body += f"\\ \\text{{({_tex_text(self.library.results[d.decided_by].label)})}}"
            if d.condition:
                body += f":\\ {d.condition}" if is_safe_math(d.condition) else \
                    f":\\ \\text{{{_tex_text(d.condition)}}}"
            return f"$\\texttt{{{_tex_text(self.query)}}}\\colon\\ {body}$"
        assert f is not None
        return f"${'g' if f.gated else chr(92) + 'sigma'}(z) = {sp.latex(f.expr)}$"

    def __repr__(self) -> str:
        if self.verdict is not None:
            by = f", decided_by={self.decided_by!r}" if self.decided_by else ""
            return f"<Result {self.query!r}: {self.verdict}{by}>"
        return f"<Result {self.query!r}: facts>"


_INDEX_SET = re.compile(r"W_down\[:,S\] W_up\[S,:\] = (.+)")
_RATIONAL = r"-?\d+(?:/\d+)?"


def _condition_sympy(plain: str) -> Any:
    """``W_down[:,S] W_up[S,:] = T`` as a SymPy ``Eq`` (see :attr:`Result.condition_sympy`), else None."""
    import sympy as sp

    m = _INDEX_SET.fullmatch(plain.strip())
    if m is None:
        return None
    rhs = m.group(1).strip()
    d = sp.Symbol("d", integer=True, positive=True)
    target: Any = None
    scaled = re.fullmatch(rf"(-)?(?:({_RATIONAL})\*)?(I_d|\(I_d - 11ᵀ/d\))", rhs)
    if scaled is not None:
        factor = sp.Rational(scaled.group(2) or 1) * (-1 if scaled.group(1) else 1)
        base = sp.Identity(d) if scaled.group(3) == "I_d" else sp.Identity(d) - sp.OneMatrix(d, d) / d
        target = base if factor == 1 else factor * base
    elif re.fullmatch(rf"\[\[{_RATIONAL}(?:, {_RATIONAL})*\](?:, \[{_RATIONAL}(?:, {_RATIONAL})*\])*\]", rhs):
        rows = [[sp.Rational(x) for x in re.findall(_RATIONAL, row)] for row in re.findall(r"\[([^\[\]]*)\]", rhs)]
        if len({len(r) for r in rows}) == 1 and len(rows) == len(rows[0]):
            target = sp.ImmutableMatrix(rows)
            d = target.rows
    if target is None:
        return None
    k = sp.Symbol("k", integer=True, nonnegative=True)  # |S|
    w_down_s, w_up_s = sp.MatrixSymbol("W_down[:,S]", d, k), sp.MatrixSymbol("W_up[S,:]", k, d)
    return sp.Eq(w_down_s * w_up_s, target, evaluate=False)


def _tex_text(text: str) -> str:
    return "".join("\\" + ch if ch in "#$%&_{}" else ch for ch in text if ch not in "\\^~")


@dataclass(frozen=True, repr=False)
class Report(_Renderable):
    """Every query of a spec answered: ``results`` one by one, ``render(fmt)`` as one report."""

    data: ReportData

    @cached_property
    def results(self) -> tuple[Result, ...]:
        return tuple(Result(a, self.data.library) for a in self.data.answers)

    @property
    def verdicts(self) -> dict[str, str]:
        """Query text -> verdict (queries about facts are left out)."""
        return {r.query: r.verdict for r in self.results if r.verdict is not None}

    @property
    def open(self) -> int:
        """How many queries stayed open."""
        return sum(1 for v in self.verdicts.values() if v == "open")

    def render(self, fmt: str = "md", *, fragment: bool = False, color: bool = False, width: int = 110,
               verbose: bool = False) -> str:
        """As :meth:`Result.render`; ``verbose`` (terminal, text): every derivation in full after the summary."""
        from .report.render import render_report

        fmt = _check_format(fmt, fragment, color, width)
        _warn_missing(fmt)
        return render_report(self.data, fmt, fragment=fragment, color=color, width=width,
                             verbose=_check_flag("verbose", verbose))

    def _repr_html_(self) -> str:
        """A compact summary for a notebook: the verdicts in a table, each derivation folded
        (``render("html", fragment=True)`` is the whole report)."""
        from .report.render import render_summary

        _warn_missing("html", plots=False)
        return render_summary(self.data, "html")

    def _repr_markdown_(self) -> str:
        from .report.render import render_summary

        return render_summary(self.data, "md")

    def __repr__(self) -> str:
        return f"<Report {self.data.spec_path!r}: {len(self.data.answers)} queries, {self.open} open>"


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

    from .errors import ArgumentError, describe_argument
    from .report.plainmath import plain_expr

    if not isinstance(expr, sp.Expr) or isinstance(expr, sp.MatrixBase):
        raise ArgumentError(f"{describe_argument(name, expr)}: expected a SymPy expression in one symbol")
    symbols = sorted(expr.free_symbols, key=str)
    if len(symbols) > 1:
        raise ArgumentError(f"{describe_argument(name, expr)}: expected an expression in one symbol, it has "
                            f"{', '.join(map(str, symbols))}; substitute values for the others (expr.subs(...)) or "
                            "declare them as parameters in a spec")
    if expr.atoms(sp.Float):
        raise ArgumentError(f"{describe_argument(name, expr)}: holds floating-point numbers "
                            f"({', '.join(sorted(map(str, expr.atoms(sp.Float))))}), which are not exact: write them "
                            "as sympy.Rational (or sympy.nsimplify(expr))")
    if symbols:
        expr = expr.xreplace({symbols[0]: sp.Symbol("z", real=True)})
    return plain_expr(expr)


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
            raise ArgumentError(f"{name}={expr!r} (type={type(expr).__name__}), read as `{text}`: {summary}") from None
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


def classify(expr: str | AnyActivation | sp.Expr, gated: bool = False, *, budget: float | None = DEFAULT_BUDGET,
             theorems: Sequence[PathLike] = (), lib: Library | None = None) -> Result:
    """Decide a block with identity skip and generic weights for one activation.

    ``expr``: an expression in ``z`` (``"z*tanh(softplus(z))"``), a built-in name (``"gelu"``,
    ``"swiglu"``) or a parametrised one (``"leaky(alpha = 1/5)"``). ``gated``: ``expr`` is the gate
    ``g`` of ``g(W_gate x) ⊙ (W_up x)``. ``budget``: seconds per fact.
    """
    from .answer import QueryAnswer, Session

    library_ = _lib(lib, theorems)
    act = _activation(expr, gated)
    d = Session(library_, _check_budget(budget)).classify(act)
    text = expr if isinstance(expr, str) else act.name
    return Result(QueryAnswer(f"classify {text}" + (" (gated)" if gated else ""), "classify", derivation=d,
                              activation=act), library_)


def facts(expr: str | AnyActivation, gated: bool = False, *, order: int = 8,
          budget: float | None = DEFAULT_BUDGET) -> Result:
    """Every fact about one activation (parity, value and derivatives at 0, Taylor series to
    ``order``, homogeneity, growth, polynomiality, gate symmetry), each with its evidence."""
    from .analysis.engine import analyze
    from .answer.types import QueryAnswer
    from .errors import ArgumentError, check_type, describe_argument

    act = _activation(expr, gated)
    check_type("order", order, int, "a Taylor order (an int from 1 to 40)")
    if not 1 <= order <= 40:
        raise ArgumentError(f"{describe_argument('order', order)}: expected a Taylor order from 1 to 40")
    f = analyze(act, order=order, budget=_check_budget(budget))
    text = expr if isinstance(expr, str) else act.name
    return Result(QueryAnswer(f"facts {text}", "facts", facts=f, activation=act, order=order), library())


def _spec(spec: Spec | PathLike) -> Spec:
    from .errors import check_type

    check_type("spec", spec, (Spec, str, os.PathLike), "a Spec (symabsorb.load(...)), a path or spec text")
    return spec if isinstance(spec, Spec) else load(spec)


def _check_progress(progress: object) -> None:
    from .errors import ArgumentError, describe_argument

    if progress is not None and not callable(progress):
        raise ArgumentError(f"{describe_argument('progress', progress)}: expected a callable "
                            "progress(done, total, label) or None")


def _check_near(near: object) -> float | None:
    from .errors import ArgumentError

    if near is None:
        return None
    if isinstance(near, bool) or not isinstance(near, (int, float)) or not near >= 0 or near == float("inf"):
        raise ArgumentError(f"near={near!r}: expected a finite number >= 0 (the relative distance EPS to the "
                            "index-set condition), or None")
    return float(near)


def _with_near(answer_: QueryAnswer, target: object, session: Session, near: float | None) -> QueryAnswer:
    """``answer_`` with the ``near`` step (:mod:`symabsorb.weights.near`) when it applies; the verdict unchanged."""
    from dataclasses import replace

    from .model.block import Block

    if near is None or answer_.kind != "absorb" or answer_.derivation is None or not isinstance(target, Block):
        return answer_
    return replace(answer_, derivation=session.near(target, answer_.derivation, near))


def prove(spec: Spec | PathLike, *, budget: float | None = DEFAULT_BUDGET, theorems: Sequence[PathLike] = (),
          lib: Library | None = None, progress: Callable[[int, int, str], None] | None = None,
          keyword: str | None = None, near: float | None = None) -> Report:
    """Answer every query of ``spec`` (a :class:`Spec`, a path, or spec text); with ``keyword``
    only those it selects (pytest's ``-k``, see :func:`select`). With ``near = EPS``, a block
    decided by the index-set condition also says whether it is within ``EPS`` of it (relative Frobenius
    distance), with the certified distance and the flip witness's measured error; verdicts unchanged."""
    from dataclasses import replace

    from .answer import Session

    s = _spec(spec) if keyword is None else select(spec, keyword)
    _check_progress(progress)
    eps = _check_near(near)
    session = Session(_lib(lib, theorems), _check_budget(budget))
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


def absorb(spec: Spec | PathLike, name: str, *, budget: float | None = DEFAULT_BUDGET,
           theorems: Sequence[PathLike] = (), lib: Library | None = None, near: float | None = None) -> Result:
    """Decide one block or stack of ``spec``, with its weights when it has any; ``result.witness``
    holds the residual-free weights when they exist (``result.write_witness(path)`` saves them).
    ``near = EPS``: as for :func:`prove`."""
    from .answer import Session
    from .model.block import SpecQuery

    eps = _check_near(near)
    s = _spec(spec)
    target = _target(s, name)
    session = Session(_lib(lib, theorems), _check_budget(budget), _spec_dir(s))
    a = session.answer(SpecQuery("absorb", target, None, f"absorb {name}"))
    return Result(_with_near(a, target, session, eps), session.library)


@dataclass(frozen=True)
class WidthWitness:
    """Residual-free weights of a chosen width for one block (``absorb NAME --width W``): ``witness``
    (None when there is none, with ``reason``), the width asked for and the block's name."""

    name: str
    width: int
    witness: Witness | None
    reason: str

    @property
    def ok(self) -> bool:
        return self.witness is not None

    def write_witness(self, path: PathLike) -> Path:
        """Write the residual-free weights to ``path`` (``.safetensors`` or ``.npz``; needs numpy)."""
        from .errors import ArgumentError
        from .weights.export import write_witness

        target = _check_path("path", path)
        if self.witness is None:
            raise ArgumentError(f"no witness of width {self.width} for `{self.name}`: {self.reason}")
        write_witness(target, self.witness)
        return target

    def __repr__(self) -> str:
        shown = f"a residual-free block of {self.reason}" if self.ok else f"no witness: {self.reason}"
        return f"<WidthWitness {self.name!r} at width {self.width}: {shown}>"


def absorb_width(spec: Spec | PathLike, name: str, width: int, *, budget: float | None = DEFAULT_BUDGET,
                 theorems: Sequence[PathLike] = (), lib: Library | None = None) -> WidthWitness:
    """Residual-free weights of width ``width`` equal to block ``name`` of ``spec``, from the ``width``
    query's upper bound (its witness padded with units that contribute 0), or none with the reason."""
    from .answer import Session
    from .errors import ArgumentError, check_type, describe_argument
    from .model.block import Block

    s = _spec(spec)
    target = _target(s, name)
    if not isinstance(target, Block):
        raise ArgumentError(f"`{name}` is a stack: a width applies to a block")
    check_type("width", width, int, "a positive width (int)")
    if isinstance(width, bool) or width < 1:
        raise ArgumentError(f"{describe_argument('width', width)}: expected a positive width")
    session = Session(_lib(lib, theorems), _check_budget(budget), _spec_dir(s))
    witness, why = session.width_witness(target, width)
    return WidthWitness(name, width, witness, why)


def _spec_dir(s: Spec) -> str:
    """The directory a spec's weight files are read from (the current one for spec text)."""
    return (os.path.dirname(s.path) if s.path not in ("<string>", "<stdin>") else ".") or "."


def decide(activation: str | AnyActivation, w_up: Any = None, w_down: Any = None, *, w_gate: Any = None,
           file: PathLike | None = None, prefix: str | None = None, up: str | None = None, down: str | None = None,
           gate: str | None = None, transpose: bool = False, skip: str = "identity",
           budget: float | None = DEFAULT_BUDGET, theorems: Sequence[PathLike] = (),
           lib: Library | None = None) -> Result:
    """Decide a block with concrete weights: numpy arrays (``w_up`` m x d, ``w_down`` d x m, ``w_gate``
    for a gated unit), exact values (nested lists of ints or ``Fraction``), or a weights ``file``
    (``.safetensors``, ``.npz``, PyTorch state dict) with the same keys as a spec's ``weights:``
    (``prefix``, ``up``, ``down``, ``gate``, ``transpose`` for files stored in x out).

    ``skip``: ``"identity"`` (``x ↦ x + MLP(x)``) or ``"none"``. Float arrays are decided like a weights
    file (float search, witness checked at 1,000 points); exact values are decided exactly.
    """
    import sympy as sp

    from .answer import Session
    from .dsl.syntax import WeightsDecl
    from .errors import ArgumentError, check_type, describe_argument
    from .model.activation import GatedActivation
    from .model.block import Block, Skip

    library_ = _lib(lib, theorems)
    act = _activation(activation, False, "activation")
    gated = isinstance(act, GatedActivation)
    budget = _check_budget(budget)
    if skip not in ("identity", "none"):
        raise ArgumentError(f"{describe_argument('skip', skip)}: expected 'identity' or 'none' (other skips: write a "
                            "spec)")
    for key, value in (("prefix", prefix), ("up", up), ("down", down), ("gate", gate)):
        if value is not None:
            check_type(key, value, str, "a tensor name or prefix (str) or None")
    _check_flag("transpose", transpose)
    label = activation if isinstance(activation, str) else act.name
    block = Block("weights", act, sp.Symbol("d", integer=True, positive=True),
                  sp.Symbol("m", integer=True, positive=True), Skip(skip))

    def run(b: Block, base_dir: str | None) -> Result:
        from .model.block import SpecQuery

        a = Session(library_, budget, base_dir).answer(SpecQuery("absorb", b, None, f"decide {label}"))
        return Result(a, library_)

    if file is not None:
        if w_up is not None or w_down is not None:
            raise ArgumentError("give either arrays (w_up, w_down) or a file, not both")
        path = _check_path("file", file).absolute()
        decl = WeightsDecl(path.name, prefix, up, down, gate, transpose)
        return run(replace(block, weights=decl), str(path.parent))
    if w_up is None or w_down is None:
        raise ArgumentError("decide needs w_up and w_down (arrays or nested lists), or file=...")
    for key, value in (("w_up", w_up), ("w_down", w_down), ("w_gate", w_gate)):
        if isinstance(value, (str, bytes)):  # refused before numpy is needed (it is an extra)
            raise ArgumentError(f"{describe_argument(key, value)}: expected an array or nested lists of numbers")
    if gated and w_gate is None:
        raise ArgumentError(f"`{act.name}` is a gated unit: pass w_gate as well")
    w_up, w_down = _as_array("w_up", w_up), _as_array("w_down", w_down)
    w_gate = _as_array("w_gate", w_gate) if w_gate is not None else None
    exact = (_exact_matrix(w_up, "w_up"), _exact_matrix(w_down, "w_down"),
             _exact_matrix(w_gate, "w_gate") if w_gate is not None else None)
    if exact[0] is not None and exact[1] is not None and (w_gate is None or exact[2] is not None):
        ex_up, ex_down = exact[0], exact[1]
        m, d = ex_up.shape
        if ex_down.shape != (d, m):
            raise ArgumentError(f"w_down has shape {ex_down.shape}; with w_up {m} x {d} it must be {d} x {m}")
        return run(replace(block, dim=d, width=m, w_up=ex_up, w_down=ex_down, w_gate=exact[2]), None)
    import numpy as np

    arrays = {"W_up": _float_array("w_up", w_up), "W_down": _float_array("w_down", w_down)}
    if w_gate is not None:
        arrays["W_gate"] = _float_array("w_gate", w_gate)
    with tempfile.TemporaryDirectory(prefix="symabsorb-") as tmp:
        np.savez(Path(tmp) / "arrays.npz", **arrays)  # type: ignore[arg-type]
        return run(replace(block, weights=WeightsDecl("arrays.npz")), tmp)


def _as_array(name: str, values: Any) -> Any:
    """A tensor of another library as a numpy array holding the same numbers exactly; nested lists,
    SymPy matrices and numpy arrays unchanged. PyTorch tensors (any float dtype: bfloat16 goes through
    float32, which holds every bfloat16 exactly; detached, moved to the CPU), anything with
    ``__array__`` (JAX, xarray, pandas...) or DLPack (``__dlpack__``: CuPy, JAX, TensorFlow...).
    Complex values and non-numeric dtypes are an :class:`ArgumentError`, never silently cut to reals."""
    from .errors import ArgumentError, describe_argument

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
        raise ArgumentError(f"{describe_argument(name, values)}: reading a {module} array needs numpy "
                            "(pip install 'symabsorb[weights]'), or pass nested lists") from None
    if isinstance(values, np.ndarray):
        array = values
    else:
        try:
            array = _foreign_array(name, values, is_torch)
        except ArgumentError:
            raise
        except Exception as err:  # a foreign library's own error: name the argument, say what works
            raise ArgumentError(f"{describe_argument(name, values)}: cannot read it as a matrix of numbers "
                                f"({type(err).__name__}: {err}); pass a numpy array or nested lists") from None
    kind = array.dtype.kind
    if kind == "c":
        raise ArgumentError(f"{describe_argument(name, values)}: complex entries (dtype {array.dtype}): "
                            "weights are real; pass the real part if that is what you mean")
    if kind == "V":
        try:  # ml_dtypes' bfloat16 (JAX): every value is exact in float32
            array, kind = array.astype(np.float32), "f"
        except (TypeError, ValueError):
            kind = "?"
    if kind not in "biufO":  # object arrays: nested numbers (Fractions are decided exactly)
        raise ArgumentError(f"{describe_argument(name, values)}: entries of dtype {array.dtype}: expected "
                            "numbers (float, int)")
    return array


def _foreign_array(name: str, values: Any, is_torch: bool) -> Any:
    """A numpy copy of a PyTorch tensor, an ``__array__`` object or a DLPack capsule provider."""
    import numpy as np

    from .errors import ArgumentError, describe_argument

    if is_torch:
        import torch

        tensor = values.detach()
        if tensor.is_complex():
            raise ArgumentError(f"{describe_argument(name, values)}: complex entries (dtype {tensor.dtype}): "
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

    from .errors import ArgumentError, describe_argument

    if isinstance(values, (str, bytes)):
        raise ArgumentError(f"{describe_argument(name, values)}: expected a matrix (a numpy array or nested lists)")
    from .weights.io import MAX_TENSOR_BYTES

    shape = getattr(values, "shape", None)
    if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape) and math.prod(shape) * 8 > MAX_TENSOR_BYTES:
        # the cap a weights file's tensor has (checked before the float64 copy is made)
        raise ArgumentError(f"{name}: shape {shape} has {math.prod(shape)} entries: at most {MAX_TENSOR_BYTES // 8} "
                            "(raise the cap with the environment variable SYMABSORB_MAX_TENSOR_BYTES)")
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as err:
        raise ArgumentError(f"{describe_argument(name, values)}: expected a matrix of numbers ({err})") from None
    if array.ndim != 2 or 0 in array.shape:
        raise ArgumentError(f"{describe_argument(name, values)}: expected a non-empty 2-d matrix, got shape "
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
                            "every row the same length")
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
                                "between 10^-100 and 10^100 (or 0); rescale the weights")
    return matrix



# ---- the other commands: catalog, verify, explore, scan (the command line calls these) -----------------


@dataclass(frozen=True, repr=False)
class Catalog(_Renderable):
    """The verdict for every built-in activation: ``rows`` (one dict per activation, the JSON of
    ``symabsorb catalog --json``), ``render("text")`` the table."""

    rows: tuple[dict[str, Any], ...]

    @property
    def verdicts(self) -> dict[str, str]:
        return {str(r["activation"]): str(r["verdict"]) for r in self.rows}

    def render(self, fmt: str = "text", *, fragment: bool = False, color: bool = False, width: int = 100) -> str:
        import json

        from .report.escape import json_safe

        fmt = _check_format(fmt, fragment, color, width, choices=("json", "terminal", "text"))
        if fmt == "json":
            return json_safe(json.dumps(list(self.rows), indent=2, ensure_ascii=False)) + "\n"
        from .report.terminal import catalog_table

        return catalog_table(self.rows)

    def __repr__(self) -> str:
        return f"<Catalog: {len(self.rows)} activations>"


def catalog(*, budget: float | None = DEFAULT_BUDGET, theorems: Sequence[PathLike] = (),
            lib: Library | None = None) -> Catalog:
    """Classify every built-in activation (``symabsorb catalog``). ``budget``: seconds per fact."""
    from .answer import Session
    from .model.catalog import CATALOG
    from .model.resolve import activation_from_text
    from .theory.proof import SIZES_NOTE as _SIZES_NOTE

    library_ = _lib(lib, theorems)
    session = Session(library_, _check_budget(budget))
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


@dataclass(frozen=True, repr=False)
class Verification(_Renderable):
    """Every certificate of a JSON report re-checked (``symabsorb verify``): ``checks`` one per
    query, ``failed`` how many did not hold."""

    report: Path
    checks: tuple[Any, ...]
    unchecked: int = 0  # queries whose verdict carries nothing to re-check (symbolic blocks, stacks...)

    @property
    def failed(self) -> int:
        return sum(1 for c in self.checks if not c.ok)

    @property
    def ok(self) -> bool:
        """Something was checked and every check held."""
        return bool(self.checks) and not self.failed

    def render(self, fmt: str = "text", *, fragment: bool = False, color: bool = False, width: int = 100) -> str:
        _check_format(fmt, fragment, color, width, choices=("terminal", "text"))
        from .report.terminal import verification_text

        return verification_text(str(self.report), self.checks, self.unchecked)

    def __repr__(self) -> str:
        return f"<Verification {str(self.report)!r}: {len(self.checks)} checked, {self.failed} failed>"


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
    return Verification(path, tuple(outcome), int(getattr(outcome, "unchecked", 0)))


def executor(*, scheduler: str | None = None, workers: int = 2, in_process: bool = False) -> Any:
    """Where :func:`explore` and :func:`scan` run their cases: in this process, on a local Dask
    cluster of ``workers`` processes (the default when ``dask.distributed`` is installed; else in
    this process, with a ``UserWarning``), or on a running scheduler (``tcp://host:8786``). The
    cluster starts on first use; ``close()`` it when done."""
    import warnings

    from .errors import ArgumentError, check_type, describe_argument
    from .explore.executors import DaskExecutor, InProcessExecutor, LazyExecutor, dask_available

    if scheduler is not None:
        check_type("scheduler", scheduler, str, "a Dask scheduler address (tcp://host:8786) or None")
    check_type("workers", workers, int, "a number of worker processes (an int >= 1)")
    if _check_flag("in_process", in_process):
        if scheduler:
            raise ArgumentError(f"{describe_argument('scheduler', scheduler)}: in_process=True and a scheduler "
                                "exclude each other")
        return InProcessExecutor()
    if not dask_available():
        if scheduler:
            raise ArgumentError(f"{describe_argument('scheduler', scheduler)}: a scheduler needs dask.distributed: "
                                "pip install 'symabsorb[explore]'")
        warnings.warn("dask.distributed is not installed; running in this process (pip install 'symabsorb[explore]')",
                      stacklevel=2)
        return InProcessExecutor()
    if workers < 1:
        raise ArgumentError(f"{describe_argument('workers', workers)}: expected at least 1 worker")
    import os

    cpus = os.cpu_count() or 1
    if workers > cpus:
        raise ArgumentError(f"{describe_argument('workers', workers)}: this machine has {cpus} CPUs; use at most "
                            f"{cpus} workers")
    where = f"dask scheduler {scheduler}" if scheduler else f"dask local cluster ({workers} workers)"
    return LazyExecutor(where, lambda: DaskExecutor(scheduler, workers))


def _executor_or_default(value: Any) -> Any:
    from .explore.executors import InProcessExecutor

    if value is None:
        return InProcessExecutor(), True
    from .errors import ArgumentError, describe_argument

    if not callable(getattr(value, "run", None)) or not callable(getattr(value, "close", None)):
        raise ArgumentError(f"{describe_argument('executor', value)}: expected symabsorb.executor(...) or None")
    return value, False


@dataclass(frozen=True, repr=False)
class Exploration(_Renderable):
    """The atlas of a spec's spaces (``symabsorb explore``): ``atlas`` as data, ``render`` in md,
    html or json, ``write()`` the atlas files next to the results."""

    atlas: Any
    results: Path
    phases: tuple[Any, ...]
    executor: str

    def render(self, fmt: str = "md", *, fragment: bool = False, color: bool = False, width: int = 100) -> str:
        from .report.atlas import render_atlas
        from .report.formats import RENDERERS

        return render_atlas(self.atlas, _check_format(fmt, fragment, color, width, choices=RENDERERS.names("atlas")))

    def write(self) -> list[Path]:
        """``atlas.md``, ``atlas.html``, ``atlas.json`` and each family's map (SVG) in the results directory."""
        from .paths import write_output
        from .report.atlas import family_svg, render_atlas

        written = []
        for kind in ("md", "html", "json"):
            written.append(self.results / f"atlas.{kind}")
            write_output(written[-1], render_atlas(self.atlas, kind))
        for s in self.atlas.spaces:
            if s.family is not None:
                for gated in (False, True):
                    written.append(self.results / f"atlas-{s.name}-{'gated' if gated else 'ungated'}.svg")
                    write_output(written[-1], family_svg(s.family, gated, f"{s.name}: {'gated g' if gated else 'σ'}"))
        return written

    def summary(self) -> str:
        from .report.terminal import exploration_summary

        return exploration_summary(self.atlas)

    def __repr__(self) -> str:
        return f"<Exploration {str(self.results)!r}: {len(self.atlas.spaces)} spaces>"


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
    from .errors import ArgumentError, check_type, describe_argument
    from .explore.atlas import build_atlas
    from .explore.run import ExploreSettings
    from .explore.run import explore as _explore

    s = _spec(spec)
    if not s.resolved.spaces:
        raise ArgumentError(f"`{s.path}` declares no `space`; add e.g. `space s = {{ primitives: [tanh, exp], size: 4 }}`")
    names = {sp_.name for sp_ in s.resolved.spaces}
    if spaces is not None:
        check_type("spaces", spaces, (list, tuple), "a list of space names or None")
        for name in spaces:
            if name not in names:
                raise ArgumentError(f"no space `{name}` in {s.path}; it declares " + ", ".join(sorted(names)))
    outdir = _check_path("results", results) if results is not None else Path(Path(s.path).stem + "-explore")
    seconds = _check_budget(case_budget, "case_budget"), _check_budget(evidence_budget, "evidence_budget")
    check_type("starts", starts, int, "optimisation starts per size (an int >= 1)")
    if starts < 1:
        raise ArgumentError(f"{describe_argument('starts', starts)}: expected at least 1 start")
    for d, m in sizes:
        if not (1 <= d <= 8 and d <= m <= 32):
            raise ArgumentError(f"{describe_argument('sizes', sizes)}: each size (d, m) needs 1 <= d <= 8, d <= m <= 32")
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


@dataclass(frozen=True, repr=False)
class Scan(_Renderable):
    """Every MLP layer of every weight file under a directory, decided (``symabsorb scan``):
    ``layers`` one record per layer, ``skipped`` the files that could not be read, with the reason."""

    layers: tuple[dict[str, Any], ...]
    skipped: tuple[tuple[str, str], ...]

    def render(self, fmt: str = "text", *, fragment: bool = False, color: bool = False, width: int = 100,
               beside: PathLike | None = None) -> str:
        """``beside``: the directory the JSON will be written to (``symabsorb verify`` resolves the
        embedded spec there); default: the scanned directory."""
        import json

        fmt = _check_format(fmt, fragment, color, width, choices=("json", "terminal", "text"))
        if fmt == "json":
            from .explore.scan import verify_view
            from .report.escape import json_safe

            data: dict[str, Any] = {"layers": list(self.layers), "skipped": [list(s) for s in self.skipped]}
            # the layers as a spec and queries: `symabsorb verify` re-checks it
            view = verify_view(self.layers, Path(beside) if beside is not None else None)
            if view is not None:
                data.update(view)
            return json_safe(json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True)) + "\n"
        from .report.terminal import scan_table

        return scan_table(self.layers, self.skipped)

    def __repr__(self) -> str:
        return f"<Scan: {len(self.layers)} layers, {len(self.skipped)} files skipped>"


def scan(directory: PathLike, *, activation: str | None = None, case_budget: float = 300.0,
         results: PathLike | None = None, executor: Any = None,
         progress: Callable[[str, int, int], None] | None = None, theorems: Sequence[PathLike] = ()) -> Scan:
    """Decide every MLP layer of every weight file under ``directory`` (``symabsorb scan``); the
    activation is read from the tensor names unless given. Results go to ``results`` (default: a
    temporary directory, removed afterwards: nothing is written into the scanned tree or the
    working directory); a second run with the same ``results`` resumes. ``executor``:
    :func:`symabsorb.executor` (default: this process). ``theorems``: result directories the library
    uses besides the built-in one (as :func:`prove`'s)."""
    from .errors import ArgumentError, check_type, describe_argument
    from .explore.scan import scan as _scan
    from .explore.store import ResultStore

    folder = _check_path("directory", directory)
    if not folder.is_dir():
        raise ArgumentError(f"{describe_argument('directory', directory)}: expected a directory of weight files")
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
    return Scan(tuple(records), tuple(skipped))


# ---- choosing queries: `prove -k PATTERN`, as pytest's -k -----------------------------------------------


def _keyword_matcher(expression: str) -> Callable[[str], bool]:
    """A predicate on query texts from a pytest-style ``-k`` expression: words match as
    case-insensitive substrings, combined with ``and``, ``or``, ``not`` and parentheses."""
    import re

    from .errors import ArgumentError, check_type, describe_argument

    check_type("keyword", expression, str, "a -k expression such as 'relu and not deep' (str)")
    tokens = re.findall(r"\(|\)|[^\s()]+", expression)

    def bad(why: str) -> ArgumentError:
        return ArgumentError(f"{describe_argument('keyword', expression)}: {why}; expected words joined by and, or, "
                             "not and parentheses, e.g. 'relu and not deep'")

    if not tokens:
        raise bad("the expression is empty")
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> str:
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    def primary() -> Callable[[str], bool]:
        token = peek()
        if token is None:
            raise bad("it ends where a word was expected")
        if token == "not":
            take()
            inner = primary()
            return lambda text: not inner(text)
        if token == "(":
            take()
            inner = disjunction()
            if peek() != ")":
                raise bad("a `(` is not closed")
            take()
            return inner
        if token in (")", "and", "or"):
            raise bad(f"`{token}` where a word was expected")
        word = take().lower()
        return lambda text: word in text.lower()

    def conjunction() -> Callable[[str], bool]:
        parts = [primary()]
        while peek() == "and":
            take()
            parts.append(primary())
        return lambda text: all(p(text) for p in parts)

    def disjunction() -> Callable[[str], bool]:
        parts = [conjunction()]
        while peek() == "or":
            take()
            parts.append(conjunction())
        return lambda text: any(p(text) for p in parts)

    matcher = disjunction()
    if pos != len(tokens):
        raise bad(f"`{tokens[pos]}` follows a complete expression (join words with and / or)")
    return matcher


def select(spec: Spec | PathLike, keyword: str) -> Spec:
    """``spec`` with only the queries whose text matches ``keyword`` (pytest's ``-k``: words as
    case-insensitive substrings, ``and``, ``or``, ``not``, parentheses); an ArgumentError listing
    the queries when none matches."""
    from .errors import ArgumentError, describe_argument

    s = _spec(spec)
    matches = _keyword_matcher(keyword)
    chosen = tuple(q for q in s.resolved.queries if matches(q.text))
    if not chosen:
        asked = "; ".join(q.text for q in s.resolved.queries) or "nothing"
        raise ArgumentError(f"{describe_argument('keyword', keyword)}: no query of {s.path} matches; it asks: {asked}")
    return Spec(replace(s.resolved, queries=chosen), s.text)
