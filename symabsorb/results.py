"""The result objects of :mod:`symabsorb.api`: each one renders itself (``render(fmt)``) and shows
itself in a notebook. Re-exported by :mod:`symabsorb.api` and :mod:`symabsorb` (``symabsorb.Result``).

A result holds data computed by the layers below; rendering goes through the renderers' one table
(:mod:`symabsorb.report.formats`), imported only when a result is rendered.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .analysis.engine import ActivationFacts
    from .answer.types import QueryAnswer
    from .answer.types import Report as ReportData
    from .report.formats import Kind
    from .theory.derivation import Derivation, Witness
    from .theory.library import Library

__all__ = ["Catalog", "Exploration", "Formatted", "Graph", "Listing", "Report", "Result", "Scan", "Verification",
           "WidthWitness"]

PathLike = str | os.PathLike[str]


def _check_path(name: str, value: object) -> Path:
    from .errors import check_type

    check_type(name, value, (str, os.PathLike), "a path (str or pathlib.Path)")
    assert isinstance(value, (str, os.PathLike))
    return Path(value)


def _check_flag(name: str, value: object) -> bool:
    from .errors import check_type

    check_type(name, value, bool, "True or False")
    return bool(value)



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
                  choices: Sequence[str] | None = None, kind: Kind = "report") -> str:
    """The canonical format name, or :class:`~symabsorb.errors.ArgumentError` naming the choices."""
    from .errors import bad_argument, check_type
    from .report.formats import RENDERERS, UnknownFormat

    names = tuple(choices or RENDERERS.names(kind))  # the renderers' own table
    check_type("fmt", fmt, str, "a format name: " + ", ".join(names))
    assert isinstance(fmt, str)
    try:
        key = RENDERERS.normalize(fmt, kind)
    except UnknownFormat:
        key = None
    if key is None or key not in names:
        raise bad_argument('fmt', fmt, "expected one of " + ", ".join(names))
    _check_flag("fragment", fragment)
    _check_flag("color", color)
    check_type("width", width, int, "a number of columns (an int, e.g. 100)")
    assert isinstance(width, int)
    if not 20 <= width <= 10_000:
        raise bad_argument('width', width, "expected between 20 and 10000 columns")
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
        """``impossible``, ``conditional``, ``absorbable``, ``not-absorbable``, ``open``; a ``width`` answer that
        proved a width: ``minimal-width`` (``w*`` proved) or ``width-bounds`` (an upper bound); None for facts."""
        return self.answer.verdict

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
        """The condition as SymPy, when it is the index-set condition ``W_down[:,S] W_up[S,:] = T`` (for some
        index set ``S``): ``Eq(W_down_S * W_up_S, T)`` with ``W_down_S`` a ``d x k`` and ``W_up_S`` a ``k x d``
        ``MatrixSymbol`` (``k = |S|``) and ``T`` a ``Matrix``, a multiple of ``Identity(d)`` or of
        ``Identity(d) - OneMatrix(d, d)/d`` (the centred skip), or ``KroneckerProduct(A, Identity(d))``
        (Hyper-Connections on ``n`` streams: ``W_down_S`` is then ``n·d x k``). A post-LN layer's reduced
        condition (Lemma PN) is ``Eq(P * W_down_S * W_up_S, T)`` with ``P`` the ``MatrixSymbol`` of the
        centring projection ``I − 11ᵀ/d`` (``.subs(P, Identity(d) - OneMatrix(d, d)/d)`` to expand it).

        None for every other condition (read :attr:`condition` then): the text is never evaluated, only these
        forms are recognised. Not an equation in matrices, so None by design: the rescaling conditions
        (``c W_down D W_up = M`` for some diagonal ``D`` with ``D_ii > −1``: an equation alone would drop the
        inequalities on ``D``), rank conditions (``rank(...) <= m``), span and fold conditions."""
        d = self.answer.derivation
        return None if d is None or not d.condition_plain else _condition_sympy(d.condition_plain)

    @property
    def witness(self) -> Witness | None:
        """Residual-free weights, when found: a flip of the units ``witness.index_set`` (numbered from 0), or,
        when ``witness.description`` is set, the construction it names (no index set)."""
        d = self.answer.derivation
        return None if d is None else d.witness

    def write_witness(self, path: PathLike) -> Path:
        """Write the residual-free weights to ``path`` (``.safetensors`` or ``.npz``; needs numpy)."""
        from .errors import ArgumentError
        from .weights.export import write_witness

        target = _check_path("path", path)
        if self.witness is None:
            raise ArgumentError(f"no witness: the verdict for `{self.query}` is {self.verdict}",
                                reason=f"the verdict is {self.verdict}: there is no witness to write")
        write_witness(target, self.witness)
        return target

    def render(self, fmt: str = "md", *, fragment: bool = False, color: bool = False, width: int = 100,
               verbose: bool = False) -> str:
        from .report.render import render_answer

        fmt = _check_format(fmt, fragment, color, width)
        _warn_missing(fmt, plots=False)
        return render_answer(self.answer, self.library, fmt, fragment=fragment, color=color, width=width,
                             verbose=_check_flag("verbose", verbose))

    def witness_note(self, exact_in: str | None = None) -> str | None:
        """What writing the witness as float32/float64 rounds, when it rounds anything (``exact_in``:
        where the exact values are kept); None when nothing is rounded or there is no witness."""
        from .weights.export import rounding_note

        return rounding_note(self.witness, exact_in) if self.witness is not None else None

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON document: the facts (``docs/facts-json.md``) or the derivation
        (``docs/classify-json.md``); ``symabsorb facts --json`` and ``classify --json`` print it."""
        if self.answer.facts is not None:
            from .analysis.serialize import facts_to_dict

            act = self.answer.activation
            return facts_to_dict(self.answer.facts, act.name if act is not None else None)
        from .theory.serialize import derivation_to_dict

        assert self.answer.derivation is not None
        return derivation_to_dict(self.answer.derivation)

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text (indented, non-ASCII kept, terminal controls escaped)."""
        import json

        from .report.escape import json_safe

        return json_safe(json.dumps(self.to_dict(), indent=2, ensure_ascii=False))

    def facts_table(self, steps: bool = False) -> str:
        """The facts as ``symabsorb facts`` prints them (``steps``: every derivation step)."""
        from .errors import ArgumentError
        from .report.terminal import facts_table

        f, act = self.answer.facts, self.answer.activation
        if f is None or act is None:
            raise ArgumentError(f"`{self.query}` is a verdict, not facts: render it instead",
                                reason="a verdict has no facts table: render it instead")
        return facts_table(f, act.name, _check_flag("steps", steps))

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


_INDEX_SET = re.compile(r"(P )?W_down\[:,S\] W_up\[S,:\] = (.+)")
_RATIONAL = r"-?\d+(?:/\d+)?"
_ROWS = rf"\[\[{_RATIONAL}(?:, {_RATIONAL})*\](?:, \[{_RATIONAL}(?:, {_RATIONAL})*\])*\]"


def _square(text: str) -> Any:
    """``[[1, 0], [0, 1]]`` (rationals only, square) as an immutable SymPy matrix, else None."""
    import sympy as sp

    rows = [[sp.Rational(x) for x in re.findall(_RATIONAL, row)] for row in re.findall(r"\[([^\[\]]*)\]", text)]
    if rows and len({len(r) for r in rows}) == 1 and len(rows) == len(rows[0]):
        return sp.ImmutableMatrix(rows)
    return None


def _condition_sympy(plain: str) -> Any:
    """The index-set condition as a SymPy ``Eq`` (see :attr:`Result.condition_sympy`), else None."""
    import sympy as sp
    from sympy.matrices.expressions.kronecker import KroneckerProduct

    m = _INDEX_SET.fullmatch(plain.strip())
    if m is None:
        return None
    projected, rhs = m.group(1) is not None, m.group(2).strip()
    d = sp.Symbol("d", integer=True, positive=True)
    rows: Any = d  # the rows of W_down[:,S] (the stream: n·d for Hyper-Connections)
    target: Any = None
    scaled = re.fullmatch(rf"(-)?(?:({_RATIONAL})\*)?(I_d|\(I_d - 11ᵀ/d\))", rhs)
    kron = re.fullmatch(rf"({_ROWS}) ⊗ I_d", rhs)
    if scaled is not None:
        factor = sp.Rational(scaled.group(2) or 1) * (-1 if scaled.group(1) else 1)
        base = sp.Identity(d) if scaled.group(3) == "I_d" else sp.Identity(d) - sp.OneMatrix(d, d) / d
        target = base if factor == 1 else factor * base
    elif kron is not None:  # Hyper-Connections: T = A' ⊗ I_d on n streams of d coordinates
        mix = _square(kron.group(1))
        if mix is not None:
            target = KroneckerProduct(mix, sp.Identity(d))
            rows = mix.rows * d
    elif re.fullmatch(_ROWS, rhs):
        target = _square(rhs)
        if target is not None:
            d = rows = target.rows
    if target is None:
        return None
    k = sp.Symbol("k", integer=True, nonnegative=True)  # |S|
    w_down_s, w_up_s = sp.MatrixSymbol("W_down[:,S]", rows, k), sp.MatrixSymbol("W_up[S,:]", k, rows)
    lhs = w_down_s * w_up_s
    if projected:  # post-LN (Lemma PN): the centring P = I − 11ᵀ/d applied to the product
        lhs = sp.MatrixSymbol("P", rows, rows) * lhs
    return sp.Eq(lhs, target, evaluate=False)


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
            raise ArgumentError(f"no witness of width {self.width} for `{self.name}`: {self.reason}",
                                reason=f"no witness of width {self.width}: {self.reason}")
        write_witness(target, self.witness)
        return target

    def witness_note(self) -> str | None:
        """What writing the witness rounds, when it rounds anything (see :meth:`Result.witness_note`)."""
        from .weights.export import rounding_note

        return rounding_note(self.witness) if self.witness is not None else None

    def __repr__(self) -> str:
        shown = f"a residual-free block of {self.reason}" if self.ok else f"no witness: {self.reason}"
        return f"<WidthWitness {self.name!r} at width {self.width}: {shown}>"



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



@dataclass(frozen=True, repr=False)
class Verification(_Renderable):
    """Every certificate of a JSON report re-checked (``symabsorb verify``): ``checks`` one per
    query, ``failed`` how many did not hold."""

    report: Path
    checks: tuple[Any, ...]
    unchecked: int = 0  # queries whose verdict carries nothing to re-check (symbolic blocks, stacks...)
    library: str = ""  # which library re-derived the questions, and whether the report was proved with it

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

        return verification_text(str(self.report), self.checks, self.unchecked, self.library)

    def __repr__(self) -> str:
        return f"<Verification {str(self.report)!r}: {len(self.checks)} checked, {self.failed} failed>"



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



@dataclass(frozen=True, repr=False)
class Scan(_Renderable):
    """Every MLP layer of every weight file under a directory, decided (``symabsorb scan``):
    ``layers`` one record per layer, ``skipped`` the files that could not be read, with the reason."""

    layers: tuple[dict[str, Any], ...]
    skipped: tuple[tuple[str, str], ...]
    library: dict[str, Any] = field(default_factory=dict)  # the library's fingerprint (Library.fingerprint)

    def render(self, fmt: str = "text", *, fragment: bool = False, color: bool = False, width: int = 100,
               beside: PathLike | None = None) -> str:
        """``beside``: the directory the JSON will be written to (``symabsorb verify`` resolves the
        embedded spec there); default: the scanned directory."""
        import json

        from .report.formats import RENDERERS

        if isinstance(fmt, str) and fmt.lower() in RENDERERS.spellings("scan"):  # the table as a file: md, tex, csv
            from .report.scantable import render_scan_table

            key = _check_format(fmt, fragment, color, width, choices=RENDERERS.names("scan"), kind="scan")
            return render_scan_table(self.layers, self.skipped, key)
        fmt = _check_format(fmt, fragment, color, width, choices=("json", "terminal", "text"))
        if fmt == "json":
            from . import __version__
            from .explore.scan import verify_view
            from .report.escape import json_safe

            data: dict[str, Any] = {"layers": list(self.layers), "skipped": [list(s) for s in self.skipped]}
            if self.library:  # which library decided the layers: verify compares it with its own
                data["tool"] = {"name": "symabsorb", "version": __version__, "library": self.library}
            # the layers as a spec and queries: `symabsorb verify` re-checks it
            view = verify_view(self.layers, Path(beside) if beside is not None else None)
            if view is not None:
                data.update(view)
            return json_safe(json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True)) + "\n"
        from .report.terminal import scan_table

        return scan_table(self.layers, self.skipped, width)

    def __repr__(self) -> str:
        return f"<Scan: {len(self.layers)} layers, {len(self.skipped)} files skipped>"


@dataclass(frozen=True, repr=False)
class Listing(_Renderable):
    """A spec parsed and resolved (``symabsorb check``): ``render("text")`` lists what it declares
    and asks, under ``path`` (the name the spec was given as)."""

    path: str
    spec: Any  # the resolved spec (symabsorb.model.block.ResolvedSpec)

    def render(self, fmt: str = "text", *, fragment: bool = False, color: bool = False, width: int = 100) -> str:
        from .report.terminal import spec_listing

        _check_format(fmt, fragment, color, width, choices=("terminal", "text"))
        return spec_listing(self.path, self.spec)

    def __repr__(self) -> str:
        return f"<Listing {self.path!r}: {len(self.spec.queries)} queries>"


@dataclass(frozen=True, repr=False)
class Formatted(_Renderable):
    """A spec file in canonical form (``symabsorb fmt``): ``original`` and ``text`` (the canonical form),
    ``changed``, ``diff()``; ``render()`` is the canonical text, or with ``check`` the line saying the
    file would be reformatted (empty when it is canonical); ``write()`` rewrites the file."""

    path: str
    original: str
    text: str
    check: bool = False

    @property
    def changed(self) -> bool:
        return self.text != self.original

    def diff(self) -> str:
        """A unified diff of the file against its canonical form (empty when they are equal)."""
        import difflib

        return "".join(difflib.unified_diff(self.original.splitlines(keepends=True), self.text.splitlines(keepends=True),
                                            f"{self.path} (original)", f"{self.path} (formatted)"))

    def render(self, fmt: str = "text", *, fragment: bool = False, color: bool = False, width: int = 100) -> str:
        _check_format(fmt, fragment, color, width, choices=("terminal", "text"))
        if self.check:
            return f"{self.path} would be reformatted\n" if self.changed else ""
        return self.text

    def write(self) -> bool:
        """Rewrite the file in canonical form (atomically; through a symbolic link, the file it names).
        Returns whether it changed; a file already canonical is not touched."""
        from .errors import ArgumentError
        from .paths import write_output

        if self.path in ("<string>", "<stdin>", "-"):
            raise ArgumentError(f"`{self.path}` is not a file: nothing to rewrite", param="source", value=self.path,
                                reason="not a file: nothing to rewrite")
        if self.changed:
            write_output(Path(self.path).resolve(), self.text, rewrites_input=True)
        return self.changed

    def __repr__(self) -> str:
        return f"<Formatted {self.path!r}: {'changed' if self.changed else 'canonical'}>"


@dataclass(frozen=True, repr=False)
class Graph(_Renderable):
    """The library's lemma graph (``symabsorb graph``): ``render(fmt)`` in any graph format (dot, mermaid,
    json, html, blueprint); ``states`` colours each result by what proving a spec did with it."""

    library: Library
    states: dict[str, Any] | None = None

    @property
    def results(self) -> int:
        """How many results the graph has."""
        return len(self.library.results)

    def render(self, fmt: str = "dot", *, fragment: bool = False, color: bool = False, width: int = 100) -> str:
        from .report.formats import RENDERERS
        from .report.graph import render_graph

        key = _check_format(fmt, fragment, color, width, choices=RENDERERS.names("graph"), kind="graph")
        return render_graph(self.library, key, self.states)

    def _repr_markdown_(self) -> str:
        return "```mermaid\n" + self.render("mermaid") + "```\n"

    def _repr_html_(self) -> str:
        return self.render("html")

    def __str__(self) -> str:
        return self.render("dot")

    def __repr__(self) -> str:
        return f"<Graph: {self.results} results>"
