"""The result library: ``theorems/*.toml`` loaded, validated, and arranged as a graph.

Each file holds one result (a paper result or a library lemma). At load, duplicate ids,
unknown hypothesis names, dangling ``uses`` and cycles are errors naming the file and line.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..dsl.errors import Span, SpecError
from .procedures import PROCEDURES, Procedure, ProcedureRegistry

if TYPE_CHECKING:
    import networkx as nx

__all__ = [
    "KINDS",
    "SCOPES",
    "SOURCES",
    "VERDICTS",
    "Conclusion",
    "Hypothesis",
    "Library",
    "LibraryError",
    "Result",
    "default_library",
    "library_with",
    "load_library",
    "results_digest",
]

KINDS = ("theorem", "lemma", "proposition", "corollary", "definition", "open-problem")
SOURCES = ("paper", "library", "user")  # user: a --theorems lemma (shown as user whatever it says)
SCOPES = ("all weights", "nondegenerate weights", "generic weights", "these weights", "almost every weight near these")
VERDICTS = ("impossible", "conditional", "absorbable", "not-absorbable", "open", "reduction", "support")
ROLES = ("decide", "reduction", "support")
#: ``[setting] biases``: which of block / residual-free block carry biases (``none`` is the paper's setting).
BIAS_SETTINGS = ("none", "block", "absorber", "both")
#: ``[setting] norm``: where the normalisation sits.
NORM_SETTINGS = ("none", "pre-ln", "post-ln", "pre-rms", "post-rms")
TARGETS = ("block", "stack", "any")
#: How concrete weights are decided under a conditional result (``[conclusion] concrete``): the names of the
#: one registry :data:`symabsorb.theory.procedures.PROCEDURES`, read at load (not copied here).
#: Kinds of nondegeneracy an "only if" (or a nondegenerate-scope impossibility) may need. ``N1``: rows of W_up
#: nonzero and pairwise non-collinear, columns of W_down nonzero (MATH.md §6); ``gated-N1``: gate rows nonzero and
#: pairwise non-collinear, every up row and every column nonzero (MATH.md §10); ``N2``: rows of W_up nonzero, pairs
#: (w_i, b_i) pairwise non-collinear in R^{d+1}, columns of W_down nonzero (MATH.md §8, parallel hyperplanes).
NONDEGENERACY = ("N1", "gated-N1", "N2")
#: Roles a support result may fill for a procedure of the code, which cites whichever result provides it.
PROVIDES = ("width-free", "width-rank", "width-pairs", "width-lines", "width-exact", "width-dilates", "composition",
            "doubly-stochastic-product", "depth-certificate",
            "tropical-limit", "degenerate-sandwich")
#: Facts whose evidence a remark may attach (ungated blocks): ``symmetry`` is Sym(σ).
REMARK_EVIDENCE = ("symmetry",)

_TOP_KEYS = ("id", "label", "title", "kind", "source", "citation", "role", "applies_to", "priority", "statement",
             "uses", "hypotheses", "conclusion", "proof", "provides", "setting", "remarks", "width", "reduction")
_CONCLUSION_KEYS = ("verdict", "scope", "condition", "condition_plain", "sufficient", "necessary", "degenerate",
                    "concrete", "nondegeneracy")
_SECTION_KEYS = {
    "hypotheses": ("name", "params"),
    "proof": ("steps",),
    "setting": ("biases", "norm"),
    "remarks": ("cite", "text", "when", "evidence", "generic"),
    "width": ("uses_width", "procedure", "upper", "step"),
    "reduction": ("step", "verdicts", "skip"),
}


class LibraryError(SpecError):
    """A malformed result file, or a graph that does not hold together."""


@dataclass(frozen=True)
class Hypothesis:
    name: str
    params: tuple[tuple[str, Any], ...] = ()

    def param(self, key: str, default: Any = None) -> Any:
        return dict(self.params).get(key, default)


@dataclass(frozen=True)
class Conclusion:
    verdict: str
    scope: str
    condition: str | None = None  # LaTeX template, placeholders such as {T}
    condition_plain: str | None = None
    sufficient: str | None = None  # "proved"
    necessary: str | None = None  # "proved" | "open"
    degenerate: str | None = None  # for scope "nondegenerate weights": what is known for degenerate weights
    concrete: str | None = None  # a name of theory.procedures.PROCEDURES: how concrete weights are decided
    nondegeneracy: str | None = None  # one of NONDEGENERACY: what the "only if" (or the impossibility) needs


@dataclass(frozen=True)
class Remark:
    """A citation the derivation prints after the conclusion (a special case, genericity, ...):
    ``text`` (a LaTeX template) citing ``cite``, printed when every hypothesis of ``when`` is proved;
    ``evidence`` names facts (:data:`REMARK_EVIDENCE`) whose steps it shows; ``generic`` marks a remark
    about generic weights (genericity), not printed for concrete weights."""

    cite: str
    text: str
    when: tuple[Hypothesis, ...] = ()
    evidence: tuple[str, ...] = ()
    generic: bool = False


@dataclass(frozen=True)
class WidthRule:
    """What the `width` query may use of a decider: ``uses_width = false`` (an impossibility whose proof
    never uses the width: no width absorbs), ``procedure`` (a procedure of the registry that may be named
    in ``[width]``: :meth:`~.procedures.ProcedureRegistry.names` ``("width")``), or ``upper`` (a
    width at which the result's construction absorbs, explained by ``step``)."""

    uses_width: bool = True
    procedure: str | None = None
    upper: int | None = None
    step: str | None = None


@dataclass(frozen=True)
class Reduction:
    """A ``role = "reduction"`` result (Lemma 4): a decider that uses it prints ``step`` (a template
    filled with the decider's values) when its verdict is one of ``verdicts`` and the skip is not the
    identity (``skip = "not-identity"``)."""

    step: str
    verdicts: tuple[str, ...] = ("conditional",)
    skip: str = "not-identity"


@dataclass(frozen=True)
class Result:
    id: str
    label: str
    title: str
    kind: str
    source: str
    citation: str
    role: str
    applies_to: str
    priority: int
    statement: str
    uses: tuple[str, ...]
    hypotheses: tuple[Hypothesis, ...]
    conclusion: Conclusion
    proof: tuple[str, ...]
    file: str = field(default="", compare=False)
    # the setting the result holds in (``[setting]``); a file that says nothing holds for the bare,
    # bias-free block only, so no result is ever applied outside the setting it was proved in
    biases: tuple[str, ...] = ("none",)
    norms: tuple[str, ...] = ("none",)
    remarks: tuple[Remark, ...] = ()
    width: WidthRule = WidthRule()
    reduction: Reduction | None = None
    provides: tuple[str, ...] = ()

    def admits(self, biases: str, norm: str) -> bool:
        """Whether the result holds for a question with these biases and this normalisation."""
        return biases in self.biases and norm in self.norms

    @property
    def nondegeneracy(self) -> str | None:
        """The nondegeneracy the "only if" (or an impossibility) of this result needs, or None."""
        return self.conclusion.nondegeneracy


@dataclass(frozen=True)
class Library:
    """The results in force and the hypothesis declarations they were checked against at load (a snapshot:
    a hypothesis declared after the load is not this library's; the prover checks with these)."""

    results: Mapping[str, Result]
    hypotheses: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    procedures: ProcedureRegistry = field(default=PROCEDURES, compare=False, repr=False)

    def procedure(self, result: Result | str | None, key: str = "concrete") -> Procedure | None:
        """The procedure a result names (``key``: its ``[conclusion] concrete``, or its ``[width]
        procedure`` with ``key="width"``), from the registry this library was checked against; None when it
        names none (``result``: a result or its id; an unknown id is None too)."""
        r = self.results.get(result) if isinstance(result, str) else result
        if r is None:
            return None
        return self.procedures.get(r.conclusion.concrete if key == "concrete" else r.width.procedure)

    def results_with(self, test: Callable[[Procedure], bool]) -> list[Result]:
        """The results whose concrete procedure passes ``test`` (``lambda p: p.any_weights``), sorted by id."""
        return [r for r in sorted(self.results.values(), key=lambda r: r.id)
                if (p := self.procedure(r)) is not None and test(p)]

    @functools.cached_property
    def graph(self) -> nx.DiGraph:
        """The lemma graph (an edge ``u -> v`` when ``v`` uses ``u``), for drawing; networkx is imported
        only here. It does not order the candidates (see :meth:`deciders`)."""
        import networkx

        graph = networkx.DiGraph()
        for r in self.results.values():
            graph.add_node(r.id, label=r.label, title=r.title, source=r.source, kind=r.kind, role=r.role)
        for r in self.results.values():
            for used in r.uses:
                graph.add_edge(used, r.id)
        return graph

    def get(self, result_id: str) -> Result:
        return self.results[result_id]

    def user_results(self) -> list[str]:
        """The ids of the results loaded from outside the package (``--theorems``), sorted."""
        return [rid for rid in sorted(self.results) if shown_source(self.results[rid]) == "user"]

    def fingerprint(self) -> dict[str, Any]:
        """Which library this is: how many results, the ids of the user's (``--theorems``), and a SHA-256
        over every result's id and the bytes of its file, so two answers can be told to come from the
        same library (or not)."""
        import hashlib

        digest = hashlib.sha256()
        for rid in sorted(self.results):
            try:
                data = Path(self.results[rid].file).read_bytes()
            except (OSError, ValueError):
                data = b""
            digest.update(rid.encode("utf-8") + b"\0" + hashlib.sha256(data).digest())
        return {"results": len(self.results), "user_results": self.user_results(), "sha256": digest.hexdigest()}

    def describe(self) -> str:
        """The library in words: ``the built-in library (84 results)``, or with the user's results named."""
        user = self.user_results()
        if not user:
            return f"the built-in library ({len(self.results)} results)"
        return (f"the built-in library and {len(user)} user result{'s' if len(user) != 1 else ''} "
                f"({', '.join(user)}): {len(self.results)} results")

    def deciders(self, target_kind: str) -> list[Result]:
        """Results that can decide a query on a ``block`` or ``stack``, in the order they are tried: by the
        ``priority`` each file gives (smaller first), ties broken by id. The first whose hypotheses all hold
        decides; the priorities put a result with a stronger or more specific conclusion before a weaker one
        that may also apply (docs/theorems.md, "The order results are tried in")."""
        found = [r for r in self.results.values()
                 if r.role == "decide" and r.applies_to in (target_kind, "any")]
        return sorted(found, key=lambda r: (r.priority, r.id))

    def provider(self, role: str) -> str:
        """The id of the result that provides ``role`` (one of :data:`PROVIDES`) for a procedure to cite."""
        for r in sorted(self.results.values(), key=lambda r: r.id):
            if role in r.provides:
                return r.id
        raise KeyError(f"no loaded result provides `{role}`")

    def closure(self, ids: Iterable[str]) -> list[str]:
        """``ids`` and every result they use, transitively, in a stable order."""
        seen: dict[str, None] = {}
        stack = list(ids)
        while stack:
            rid = stack.pop(0)
            if rid in seen or rid not in self.results:
                continue
            seen[rid] = None
            stack.extend(self.results[rid].uses)
        return list(seen)


#: A placeholder of a template: ``@{name}``, filled with the value the result's hypotheses bind to ``name``.
#: Every other brace is TeX (``\\tfrac{a}{c}`` stays ``\\tfrac{a}{c}`` even where ``c`` is bound).
_PLACEHOLDER = re.compile(r"@\{([A-Za-z_][A-Za-z0-9_]*)\}")
#: The old syntax ``{name}``: a group that is not the argument of a control word, a sub- or superscript, or
#: the next argument of a macro (``\\tfrac{1}{c}``): refused at load for a name some hypothesis binds.
_OLD_PLACEHOLDER = re.compile(r"(?<!@)\{([A-Za-z_][A-Za-z0-9_]*)\}")
_LATEX_GROUP = re.compile(r"(\\[A-Za-z]+\s*|[_^}])$")


def placeholders(template: str) -> list[str]:
    """The placeholders of a template: every ``@{name}``, in order, once each."""
    return list(dict.fromkeys(m.group(1) for m in _PLACEHOLDER.finditer(template)))


def unfilled(template: str) -> str:
    """``template`` as TeX with each placeholder shown as a marked slot, ``@{c}`` -> ``⟨c⟩`` (in math mode,
    as ``$\\langle\\mathtt{c}\\rangle$`` where it stands in text): a result's own text printed outside a
    derivation (the blueprint export's proofs), where no hypothesis has supplied the value yet. Never the
    bare name, which would read as a symbol (``c = c``, ``= T``, ``Dcond``)."""
    def slot(m: re.Match[str]) -> str:
        mark = "{\\langle\\mathtt{" + m.group(1).replace("_", "\\_") + "}\\rangle}"  # a group: t^@{k} is t^{⟨k⟩}
        in_math = template[:m.start()].replace("\\$", "").count("$") % 2 == 1
        return mark if in_math else f"${mark}$"

    return _PLACEHOLDER.sub(slot, template)


def old_placeholders(template: str, known: Iterable[str]) -> list[str]:
    """``{name}`` groups written as the old placeholder syntax: ``name`` is one some hypothesis binds
    (``known``) and the group is no TeX argument (after a control word, ``_``, ``^`` or ``}``)."""
    names = set(known)
    return list(dict.fromkeys(m.group(1) for m in _OLD_PLACEHOLDER.finditer(template)
                              if m.group(1) in names and not _LATEX_GROUP.search(template[:m.start()])))


class _Source:
    """A result file's text, for positioned errors: the line of a key, of a value after a line, of the
    ``n``-th ``[[table]]``."""

    def __init__(self, file: str, text: str) -> None:
        self.file, self.text = file, text
        self.lines = text.splitlines()

    def error(self, summary: str, needle: str, expected: str, hint: str | None = None, *, after: int = 0,
              found: str | None = None) -> LibraryError:
        line = self.line_of(needle, after)
        row = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        col = max(row.find(needle) + 1, 1)
        err = LibraryError(summary, Span(self.file, line, col, line, col + max(len(needle), 1)),
                           found if found is not None else f"`{needle}`", expected, hint)
        return err.with_source(self.text)  # type: ignore[return-value]

    def line_of(self, needle: str, after: int = 0) -> int:
        for number, line in enumerate(self.lines, start=1):
            if number > after and needle in line:
                return number
        for number, line in enumerate(self.lines, start=1):
            if needle in line:
                return number
        return max(after, 1)

    def table(self, name: str, index: int) -> int:
        """The line of the ``index``-th ``[[name]]`` header (else the line of ``name =``)."""
        seen = -1
        for number, line in enumerate(self.lines, start=1):
            if line.strip() == f"[[{name}]]":
                seen += 1
                if seen == index:
                    return number
        return self.line_of(f"{name} =")

    def section(self, name: str) -> int:
        for number, line in enumerate(self.lines, start=1):
            if line.strip() == f"[{name}]":
                return number
        return self.line_of(f"{name} =")


def _err(file: str, text: str, needle: str, summary: str, expected: str, hint: str | None = None) -> LibraryError:
    return _Source(file, text).error(summary, needle, expected, hint)


def _unknown_keys(src: _Source, data: Mapping[str, Any], allowed: Iterable[str], where: str, after: int = 0) -> None:
    from ..dsl.errors import did_you_mean

    keys = tuple(allowed)
    for key in data:
        if key not in keys:
            raise src.error(f"unknown key `{key}` in {where}", key, "one of " + ", ".join(keys),
                            did_you_mean(key, keys), after=after)


def _choice(src: _Source, value: Any, allowed: Iterable[str], what: str, after: int = 0) -> None:
    from ..dsl.errors import did_you_mean

    options = tuple(allowed)
    if not isinstance(value, str) or value not in options:
        raise src.error(f"unknown {what} `{value}`", str(value), "one of " + ", ".join(options),
                        did_you_mean(str(value), options), after=after)


def _typed(src: _Source, value: Any, kind: type, what: str, expected: str, after: int = 0) -> Any:
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise src.error(f"`{what}` has the wrong type", what, expected, after=after, found=repr(value))
    return value


def _hypotheses(src: _Source, entries: Any, declared: Mapping[str, Any], where: str, target: str,
                after: int = 0) -> tuple[Hypothesis, ...]:
    """``[[hypotheses]]`` entries (or a remark's ``when``) checked against the declarations: names,
    parameter names and types, and what the hypothesis is about."""
    from ..dsl.errors import did_you_mean

    if not isinstance(entries, list):
        raise src.error(f"`{where}` is not a list of tables", where, "a list of `{ name = \"...\" }` tables",
                        after=after)
    out = []
    for i, h in enumerate(entries):
        at = src.table("hypotheses", i) - 1 if where == "hypotheses" else after
        if not isinstance(h, dict):
            raise src.error(f"entry {i + 1} of `{where}` is not a table", where, "`{ name = \"...\" }`", after=at)
        _unknown_keys(src, h, _SECTION_KEYS["hypotheses"], f"a hypothesis of `{where}`", after=at)
        name = h.get("name", "")
        if name not in declared:
            raise src.error(f"unknown hypothesis `{name}`", f'"{name}"', "a declared hypothesis name",
                            did_you_mean(str(name), declared), after=at)
        decl = declared[name]
        params = h.get("params", {})
        if not isinstance(params, dict):
            raise src.error(f"the parameters of `{name}` are not a table", "params", "`params = { key = value }`",
                            after=at)
        problems = decl.problems(params) if hasattr(decl, "problems") else []
        if problems:
            p = problems[0]
            at_name = src.line_of(f'"{name}"', at) - 1
            raise src.error(p.summary, p.key, p.expected, p.hint, after=at_name, found=p.found)
        subject = getattr(decl, "subject", "any")
        if subject != "any" and target != subject:
            raise src.error(f"hypothesis `{name}` is about a {subject}, and this result applies to "
                            f"{'blocks and stacks' if target == 'any' else target + 's'}", f'"{name}"',
                            f"a hypothesis about a {target}" if target != "any" else "a hypothesis about either",
                            after=at)
        out.append(Hypothesis(name, tuple(sorted(params.items()))))
    return tuple(out)


def _binds(hyps: Iterable[Hypothesis], declared: Mapping[str, Any], target: str) -> set[str]:
    """Every placeholder a template of a result with these hypotheses may use."""
    names: set[str] = set()
    for h in hyps:
        names |= set(getattr(declared.get(h.name), "binds", ()))
    if target != "stack":
        names.add("M")
        if names & {"c", "g0", "c_lin"}:
            names.add("T")  # T = −M/(2c) (c from odd_linear, the gate's g(0), or the linear part of a flip)
    return names


def _check_templates(src: _Source, templates: Iterable[tuple[str, str]], bound: set[str],
                     all_binds: set[str]) -> None:
    for key, template in templates:
        at = max(src.line_of(key) - 1, 0)
        for name in placeholders(template):
            if name not in bound:
                shown = ", ".join(f"@{{{b}}}" for b in sorted(bound)) or "none"
                raise src.error(f"the placeholder `@{{{name}}}` is bound by no hypothesis of this result",
                                "@{" + name + "}", f"a placeholder its hypotheses bind: {shown}",
                                "add the hypothesis whose checker binds it, or write the value out", after=at)
        for name in old_placeholders(template, all_binds):
            raise src.error(f"`{{{name}}}` is the old placeholder syntax (it collides with TeX grouping)",
                            "{" + name + "}", f"`@{{{name}}}` for the value bound to `{name}`, or TeX",
                            f"write `@{{{name}}}` to fill in the value; a TeX group stays as written "
                            f"(`\\tfrac{{a}}{{{name}}}` is never filled)", after=at)


def _check_reads(src: _Source, proc: Procedure | None, bound: set[str], declared: Mapping[str, Any], at: int) -> None:
    """A procedure's declared ``reads`` are bound by the result's hypotheses (checked only against real
    declarations: a load with hypothesis names alone cannot know what they bind)."""
    if proc is None or not declared or any(v is None for v in declared.values()):
        return
    missing = [name for name in proc.reads if name not in bound]
    if missing:
        raise src.error(f"the procedure `{proc.name}` reads {', '.join(f'`{n}`' for n in missing)}, which no "
                        "hypothesis of this result binds", f'"{proc.name}"',
                        f"hypotheses binding {', '.join(proc.reads)}",
                        "add the hypothesis that binds it, or name another procedure", after=at)


def _parse_result(file: str, text: str, declared: Mapping[str, Any],
                  procedures: ProcedureRegistry = PROCEDURES) -> Result:
    src = _Source(file, text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LibraryError(f"{file} is not valid TOML: {exc}", Span(file, 1, 1, 1, 1)) from None
    from ..untrusted import check_result_data  # lemma files are untrusted input: ids, text, types

    problem = check_result_data(data)
    if problem is not None:
        raise _err(file, text, *problem)
    required = ("id", "label", "title", "kind", "source", "citation", "statement", "conclusion")
    for key in required:
        if key not in data:
            raise LibraryError(f"result file {file} has no `{key}`", Span(file, 1, 1, 1, 1), f"no `{key}`",
                               f"`{key} = ...`", "see docs/theorems.md for the format")
    _unknown_keys(src, data, _TOP_KEYS, "a result file")
    for key in ("id", "label", "title", "citation", "statement"):
        _typed(src, data[key], str, key, "a string")
    for key, allowed in (("kind", KINDS), ("source", SOURCES)):
        _choice(src, data[key], allowed, key)
    role = data.get("role", "decide")
    _choice(src, role, ROLES, "role")
    applies_to = data.get("applies_to", "block")
    _choice(src, applies_to, TARGETS, "applies_to")
    priority = _typed(src, data.get("priority", 100), int, "priority", "an integer")
    uses = _typed(src, data.get("uses", []), list, "uses", "a list of result ids")
    hyps = _hypotheses(src, data.get("hypotheses", []), declared, "hypotheses", applies_to)
    provides = tuple(_typed(src, data.get("provides", []), list, "provides", "a list of roles"))
    for role_name in provides:
        _choice(src, role_name, PROVIDES, "role in `provides`")

    c = _typed(src, data["conclusion"], dict, "conclusion", "a [conclusion] table")
    at = src.section("conclusion") - 1
    _unknown_keys(src, c, _CONCLUSION_KEYS, "[conclusion]", after=at)
    _choice(src, c.get("verdict"), VERDICTS, "verdict", after=at)
    scope = c.get("scope", "all weights")
    _choice(src, scope, SCOPES, "scope", after=at)
    for key in ("sufficient", "necessary"):
        if key in c:
            _choice(src, c[key], ("proved", "open"), f"`{key}` status", after=at)
    if "concrete" in c:
        _choice(src, c["concrete"], procedures.names("concrete"), "concrete-weights procedure", after=at)
    nondeg = c.get("nondegeneracy", "N1" if scope == "nondegenerate weights" else None)
    if nondeg is not None:
        _choice(src, nondeg, NONDEGENERACY, "nondegeneracy", after=at)
    # N2 is checked by its own hypothesis: a result declaring it must check it, and only such a result may
    n2_checked = any(h.name == "n2_nondegenerate" for h in hyps)
    if (nondeg == "N2") != n2_checked:
        raise src.error("`nondegeneracy = \"N2\"` and the hypothesis `n2_nondegenerate` go together",
                        "nondegeneracy" if nondeg == "N2" else "n2_nondegenerate",
                        "both, or neither", after=at if nondeg == "N2" else 0)
    if scope == "nondegenerate weights" and role == "decide" and not c.get("degenerate"):
        raise src.error("a result scoped to nondegenerate weights must say what is known for degenerate ones",
                        "nondegenerate weights", "`degenerate = \"...\"` in [conclusion]")
    conclusion = Conclusion(c["verdict"], scope, c.get("condition"), c.get("condition_plain"), c.get("sufficient"),
                            c.get("necessary"), c.get("degenerate"), c.get("concrete"), nondeg)

    proof_table = _typed(src, data.get("proof", {}), dict, "proof", "a [proof] table")
    _unknown_keys(src, proof_table, _SECTION_KEYS["proof"], "[proof]", after=src.section("proof") - 1)
    proof = tuple(_typed(src, proof_table.get("steps", []), list, "steps", "a list of strings"))

    s = _typed(src, data.get("setting", {}), dict, "setting", "a [setting] table")
    at = src.section("setting") - 1
    _unknown_keys(src, s, _SECTION_KEYS["setting"], "[setting]", after=at)
    chosen: dict[str, tuple[str, ...]] = {}
    for key, options, what in (("biases", BIAS_SETTINGS, "bias setting"), ("norm", NORM_SETTINGS, "normalisation")):
        values = _typed(src, s.get(key, ["none"]), list, key, "a non-empty list of " + ", ".join(options), after=at)
        if not values:
            raise src.error(f"[setting] {key} is empty", key, "a non-empty list of " + ", ".join(options), after=at)
        for v in values:
            _choice(src, v, options, what, after=at)
        chosen[key] = tuple(values)

    remarks = []
    for i, r in enumerate(_typed(src, data.get("remarks", []), list, "remarks", "[[remarks]] tables")):
        at = src.table("remarks", i) - 1
        if not isinstance(r, dict):
            raise src.error("a remark is not a table", "remarks", "[[remarks]] tables", after=at)
        _unknown_keys(src, r, _SECTION_KEYS["remarks"], "a [[remarks]] table", after=at)
        for key in ("cite", "text"):
            if not isinstance(r.get(key), str):
                raise src.error(f"a remark has no `{key}` string", "[[remarks]]", f"`{key} = \"...\"`", after=at)
        when = _hypotheses(src, r.get("when", []), declared, "when", applies_to, after=at)
        evidence = tuple(_typed(src, r.get("evidence", []), list, "evidence", "a list of fact names", after=at))
        for e in evidence:
            _choice(src, e, REMARK_EVIDENCE, "remark evidence", after=at)
        generic = _typed(src, r.get("generic", False), bool, "generic", "true or false", after=at)
        remarks.append(Remark(r["cite"], r["text"], when, evidence, generic))

    w = _typed(src, data.get("width", {}), dict, "width", "a [width] table")
    at = src.section("width") - 1
    _unknown_keys(src, w, _SECTION_KEYS["width"], "[width]", after=at)
    if "procedure" in w:
        _choice(src, w["procedure"], procedures.names("width"), "width procedure", after=at)
    uses_width = _typed(src, w.get("uses_width", True), bool, "uses_width", "true or false", after=at)
    if not uses_width and (conclusion.verdict != "impossible" or scope != "all weights"):
        raise src.error("`uses_width = false` is for impossibility results on all weights", "uses_width",
                        "verdict \"impossible\", scope \"all weights\"", after=at)
    upper = w.get("upper")
    if upper is not None:
        _typed(src, upper, int, "upper", "an integer width", after=at)
        if not isinstance(w.get("step"), str):
            raise src.error("`[width] upper` needs the `step` that explains it", "upper", "`step = '''...'''`",
                            after=at)
    width = WidthRule(uses_width, w.get("procedure"), upper, w.get("step"))

    reduction = None
    if "reduction" in data:
        red = _typed(src, data.get("reduction", {}), dict, "reduction", "a [reduction] table")
        at = src.section("reduction") - 1
        _unknown_keys(src, red, _SECTION_KEYS["reduction"], "[reduction]", after=at)
        if role != "reduction" or not isinstance(red.get("step"), str):  # (a reduction may also have none)
            raise src.error("a reduction is a result with `role = \"reduction\"` and a [reduction] table with its "
                            "`step`", "role", "`role = \"reduction\"` and `[reduction] step = '''...'''`")
        verdicts = tuple(_typed(src, red.get("verdicts", ["conditional"]), list, "verdicts", "a list of verdicts",
                                after=at))
        for v in verdicts:
            _choice(src, v, VERDICTS, "verdict", after=at)
        _choice(src, red.get("skip", "not-identity"), ("not-identity",), "reduction skip condition", after=at)
        reduction = Reduction(red["step"], verdicts)

    all_binds = {b for d in declared.values() for b in getattr(d, "binds", ())} | {"M", "T"}
    bound = _binds(hyps, declared, applies_to)
    # what a concrete procedure reads is the deciding attempt's bindings (a `[width] procedure` reads the width
    # proof's own checks, theory/proof.WidthProof, not the result's)
    _check_reads(src, procedures.get(c.get("concrete")), bound, declared, src.section("conclusion") - 1)
    templates = [("steps", t) for t in proof]
    templates += [(key, v) for key in ("condition", "condition_plain", "degenerate")
                  if isinstance(v := c.get(key), str)]
    for r in remarks:
        _check_templates(src, [("text", r.text)], bound | _binds(r.when, declared, applies_to), all_binds)
    templates += [("step", width.step)] if width.step else []
    _check_templates(src, templates, bound, all_binds)
    if reduction is not None:
        _check_templates(src, [("step", reduction.step)], {"M"}, all_binds)
    return Result(data["id"], data["label"], data["title"], data["kind"], data["source"], data["citation"], role,
                  applies_to, priority, data["statement"], tuple(uses), hyps, conclusion, proof, file,
                  chosen["biases"], chosen["norm"], tuple(remarks), width, reduction, provides)


def _check_count(directory: Path, count: int) -> None:
    from ..budget import current

    cap = current().limits.files
    if count > cap:
        raise LibraryError(f"--theorems `{directory}` holds {count} .toml files", Span(str(directory), 1, 1, 1, 1),
                           f"{count} files", f"at most {cap}",
                           f"the limit `files` is {cap}; raise it with `--limit files=N`")


def _check_inside(directory: Path, path: Path) -> None:
    """A file of a ``--theorems`` directory must stay inside it (a symbolic link out is refused
    before anything is read, so no line of another file reaches an error message)."""
    try:
        inside = path.resolve().parent == directory.resolve() or directory.resolve() in path.resolve().parents
    except (OSError, RuntimeError):
        inside = False
    if not inside:
        # no span: an error with a position would print the first line of the file it leads to
        raise LibraryError(f"theorem file `{path}` leads outside `{directory}`", None,
                           "a symbolic link out of the directory", f"a result file inside `{directory}`",
                           "copy the file into the directory instead of linking to it")


def _read_user_file(path: Path) -> str:
    """A result file from a ``--theorems`` directory: a regular file (never a FIFO or a device), within
    the ``input-bytes`` limit, UTF-8."""
    from ..paths import read_input

    data = read_input(path, None, "theorem file", expected="a TOML result file", hint="the format is in docs/theorems.md")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[:err.start].count(b"\n") + 1
        raise LibraryError(f"theorem file `{path}` is not UTF-8 text", Span(str(path), line, 1, line, 2),
                           f"the byte 0x{data[err.start]:02x}", "UTF-8 text", "save the file as UTF-8") from None


def load_library(directories: Iterable[Path | Any], known_hypotheses: Mapping[str, Any] | Iterable[str],
                 procedures: ProcedureRegistry = PROCEDURES) -> Library:
    """Load every ``*.toml`` under ``directories`` (later directories may add results), each checked
    against the hypothesis declarations ``known_hypotheses`` (name -> :class:`~.hypdecl.Declaration`;
    a bare iterable of names checks the names only) and the procedure registry ``procedures`` (names,
    and the bindings each reads)."""
    known: Mapping[str, Any] = known_hypotheses if isinstance(known_hypotheses, Mapping) else \
        {name: None for name in known_hypotheses}
    results: dict[str, Result] = {}
    texts: dict[str, str] = {}
    for directory in directories:
        entries = sorted((p for p in directory.iterdir() if p.name.endswith(".toml")), key=lambda p: p.name)
        if isinstance(directory, Path):
            _check_count(directory, len(entries))
        for path in entries:
            # the package's own files are trusted; a --theorems directory is input like a spec
            if isinstance(path, Path):
                _check_inside(directory, path)
            text = _read_user_file(path) if isinstance(path, Path) else path.read_text(encoding="utf-8")
            file = str(path)
            result = _parse_result(file, text, known, procedures)
            if result.id in results:
                raise _err(file, text, f'"{result.id}"', f"duplicate result id `{result.id}`", "a new id",
                           f"`{result.id}` is already defined in {results[result.id].file}")
            from ..untrusted import id_collisions

            for first, _second in id_collisions([*results, result.id]):
                raise _err(file, text, f'"{result.id}"', f"result id `{result.id}` collides with `{first}`", "a new id",
                           f"`{first}` ({results[first].file}) names the same graph node and anchor")
            results[result.id] = result
            texts[result.id] = text
    from ..dsl.errors import did_you_mean

    for r in results.values():
        for used in r.uses:
            if used not in results:
                raise _err(r.file, texts[r.id], f'"{used}"', f"`{r.id}` uses unknown result `{used}`",
                           "the id of a loaded result", did_you_mean(used, results))
        for remark in r.remarks:
            if remark.cite not in results:
                raise _err(r.file, texts[r.id], f'"{remark.cite}"', f"a remark of `{r.id}` cites unknown result "
                           f"`{remark.cite}`", "the id of a loaded result", did_you_mean(remark.cite, results))
    providers: dict[str, str] = {}
    for r in sorted(results.values(), key=lambda r: r.id):
        for role in r.provides:
            if role in providers:
                raise _err(r.file, texts[r.id], f'"{role}"', f"`{role}` is provided twice", "one result per role",
                           f"`{providers[role]}` already provides it")
            providers[role] = r.id
    cycle = _find_cycle(results)
    if cycle:
        first = cycle[1]
        path = " -> ".join(cycle)
        raise _err(results[first].file, texts[first], f'"{cycle[0]}"', f"the `uses` graph has a cycle: {path}",
                   "results that do not depend on themselves")
    return Library(results, {k: v for k, v in known.items() if v is not None}, procedures)


def _find_cycle(results: Mapping[str, Result]) -> list[str]:
    """A cycle ``[a, b, …, a]`` of the ``uses`` graph (edges ``used -> user``), or ``[]``."""
    users: dict[str, list[str]] = {rid: [] for rid in results}
    for r in sorted(results.values(), key=lambda r: r.id):
        for used in r.uses:
            users[used].append(r.id)
    state: dict[str, int] = {}  # 1 on the current path, 2 finished
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in users[node]:
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return []

    for rid in sorted(results):
        if rid not in state:
            found = visit(rid)
            if found:
                return found
    return []


_PACKAGE_THEOREMS = (Path(__file__).resolve().parent.parent / "theorems").resolve()  # a link in a checkout


def shown_source(result: Any) -> str:
    """Where a result comes from, for a reader: ``paper`` or ``library`` for the package's own results
    (proved in symabsorb's docs/theorems.md), ``user`` for one loaded from a ``--theorems`` directory, whatever
    its file claims (the README defines "library" as proved in symabsorb's documentation)."""
    try:
        inside = Path(result.file).resolve().is_relative_to(_PACKAGE_THEOREMS)
    except (OSError, ValueError, TypeError):
        inside = False
    return result.source if inside else "user"  # type: ignore[no-any-return]


@functools.cache
def default_library() -> Library:
    """The results shipped inside the package (``symabsorb/theorems``), checked against the registries
    after the installed plug-ins are loaded (:mod:`symabsorb.plugins`)."""
    from .. import plugins
    from .hypotheses import REGISTRY

    plugins.load()

    return load_library([resources.files("symabsorb.theorems")], REGISTRY)


def library_with(extra: Iterable[Path | str]) -> Library:
    """The shipped results plus those in ``extra`` directories (``--theorems DIR``); with none, the
    shipped library (:func:`default_library`, loaded once per process). The installed plug-ins are
    loaded first, so a result may name a plug-in's procedure or hypothesis."""
    from .. import plugins
    from .hypotheses import REGISTRY

    plugins.load()

    dirs = [Path(d) for d in extra]
    if not dirs:
        return default_library()
    return load_library([resources.files("symabsorb.theorems"), *dirs], REGISTRY)


def results_digest(extra: Iterable[Path | str]) -> str:
    """A SHA-256 of every file in the ``extra`` result directories (names and bytes), so that a result
    cached under one library is never read back under another ("" with no directory)."""
    import hashlib

    dirs = [Path(d) for d in extra]
    if not dirs:
        return ""
    h = hashlib.sha256()
    for d in dirs:
        h.update(str(d.resolve()).encode("utf-8", "surrogateescape") + b"\0")
        for f in sorted(d.iterdir()) if d.is_dir() else ():
            if f.is_file() and f.suffix in (".toml", ".py"):
                h.update(f.name.encode("utf-8", "surrogateescape") + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()
