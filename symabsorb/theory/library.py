"""The result library: ``theorems/*.toml`` loaded, validated, and arranged as a graph.

Each file holds one result (a paper result or a library lemma). At load, duplicate ids,
unknown hypothesis names, dangling ``uses`` and cycles are errors naming the file and line.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..dsl.errors import Span, SpecError

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
    "load_library",
]

KINDS = ("theorem", "lemma", "proposition", "corollary", "definition", "open-problem")
SOURCES = ("paper", "library")
SCOPES = ("all weights", "nondegenerate weights", "generic weights", "these weights")
VERDICTS = ("impossible", "conditional", "absorbable", "not-absorbable", "open", "reduction", "support")
ROLES = ("decide", "reduction", "support")
#: ``[setting] biases``: which of block / residual-free block carry biases (``none`` is the paper's setting).
BIAS_SETTINGS = ("none", "block", "absorber", "both")
#: ``[setting] norm``: where the normalisation sits.
NORM_SETTINGS = ("none", "pre-ln", "post-ln", "pre-rms", "post-rms")
TARGETS = ("block", "stack", "any")


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
    necessary: str | None = None  # "proved" | "conjectured" | "open"
    degenerate: str | None = None  # for scope "nondegenerate weights": what is known for degenerate weights
    concrete: str | None = None  # how concrete weights are decided: "index-set" (T = -M/(2c)) | "rank"


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

    def admits(self, biases: str, norm: str) -> bool:
        """Whether the result holds for a question with these biases and this normalisation."""
        return biases in self.biases and norm in self.norms


@dataclass(frozen=True)
class Library:
    results: Mapping[str, Result]

    @functools.cached_property
    def graph(self) -> nx.DiGraph:
        """The lemma graph (an edge ``u -> v`` when ``v`` uses ``u``); networkx is imported only here."""
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

    def deciders(self, target_kind: str) -> list[Result]:
        """Results that can decide a query on a ``block`` or ``stack``, in priority order."""
        found = [r for r in self.results.values()
                 if r.role == "decide" and r.applies_to in (target_kind, "any")]
        return sorted(found, key=lambda r: (r.priority, r.id))

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


def _line_of(text: str, needle: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    return 1


def _err(file: str, text: str, needle: str, summary: str, expected: str, hint: str | None = None) -> LibraryError:
    line = _line_of(text, needle)
    lines = text.splitlines()
    col = max(lines[line - 1].find(needle) + 1, 1) if lines else 1
    err = LibraryError(summary, Span(file, line, col, line, col + max(len(needle), 1)), f"`{needle}`", expected, hint)
    return err.with_source(text)  # type: ignore[return-value]


def _parse_result(file: str, text: str, known_hypotheses: Iterable[str]) -> Result:
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
    for key, allowed in (("kind", KINDS), ("source", SOURCES)):
        if data[key] not in allowed:
            raise _err(file, text, str(data[key]), f"unknown {key} `{data[key]}`", "one of " + ", ".join(allowed))
    role = data.get("role", "decide")
    if role not in ROLES:
        raise _err(file, text, role, f"unknown role `{role}`", "one of " + ", ".join(ROLES))
    applies_to = data.get("applies_to", "block")
    if applies_to not in TARGETS:
        raise _err(file, text, applies_to, f"unknown applies_to `{applies_to}`", "one of " + ", ".join(TARGETS))
    known = set(known_hypotheses)
    hyps = []
    for h in data.get("hypotheses", []):
        name = h.get("name", "")
        if name not in known:
            from ..dsl.errors import did_you_mean

            raise _err(file, text, f'"{name}"', f"unknown hypothesis `{name}`", "a registered hypothesis name",
                       did_you_mean(name, known))
        hyps.append(Hypothesis(name, tuple(sorted(h.get("params", {}).items()))))
    c = data["conclusion"]
    if c.get("verdict") not in VERDICTS:
        raise _err(file, text, str(c.get("verdict")), f"unknown verdict `{c.get('verdict')}`",
                   "one of " + ", ".join(VERDICTS))
    scope = c.get("scope", "all weights")
    if scope not in SCOPES:
        raise _err(file, text, str(scope), f"unknown scope `{scope}`", "one of " + ", ".join(SCOPES))
    if scope == "nondegenerate weights" and role == "decide" and not c.get("degenerate"):
        raise _err(file, text, "nondegenerate weights", "a result scoped to nondegenerate weights must say what is "
                   "known for degenerate ones", "`degenerate = \"...\"` in [conclusion]")
    conclusion = Conclusion(c["verdict"], scope, c.get("condition"), c.get("condition_plain"),
                            c.get("sufficient"), c.get("necessary"), c.get("degenerate"), c.get("concrete"))
    proof = tuple(data.get("proof", {}).get("steps", []))
    setting = data.get("setting", {})
    chosen: dict[str, tuple[str, ...]] = {}
    settings: tuple[tuple[str, tuple[str, ...]], ...] = (("biases", BIAS_SETTINGS), ("norm", NORM_SETTINGS))
    for key, options in settings:
        values = setting.get(key, ["none"]) if isinstance(setting, dict) else None
        if not isinstance(values, list) or not values or any(v not in options for v in values):
            raise _err(file, text, key if isinstance(setting, dict) and key in setting else "setting",
                       f"[setting] {key} must be a non-empty list", "a list of " + ", ".join(options))
        chosen[key] = tuple(values)
    return Result(data["id"], data["label"], data["title"], data["kind"], data["source"], data["citation"], role,
                  applies_to, int(data.get("priority", 100)), data["statement"], tuple(data.get("uses", [])),
                  tuple(hyps), conclusion, proof, file, chosen["biases"], chosen["norm"])


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


def load_library(directories: Iterable[Path | Any], known_hypotheses: Iterable[str]) -> Library:
    """Load every ``*.toml`` under ``directories`` (later directories may add results)."""
    known = list(known_hypotheses)
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
            result = _parse_result(file, text, known)
            if result.id in results:
                raise _err(file, text, f'"{result.id}"', f"duplicate result id `{result.id}`", "a new id",
                           f"`{result.id}` is already defined in {results[result.id].file}")
            from ..untrusted import id_collisions

            for first, _second in id_collisions([*results, result.id]):
                raise _err(file, text, f'"{result.id}"', f"result id `{result.id}` collides with `{first}`", "a new id",
                           f"`{first}` ({results[first].file}) names the same graph node and anchor")
            results[result.id] = result
            texts[result.id] = text
    for r in results.values():
        for used in r.uses:
            if used not in results:
                from ..dsl.errors import did_you_mean

                raise _err(r.file, texts[r.id], f'"{used}"', f"`{r.id}` uses unknown result `{used}`",
                           "the id of a loaded result", did_you_mean(used, results))
    cycle = _find_cycle(results)
    if cycle:
        first = cycle[1]
        path = " -> ".join(cycle)
        raise _err(results[first].file, texts[first], f'"{cycle[0]}"', f"the `uses` graph has a cycle: {path}",
                   "results that do not depend on themselves")
    return Library(results)


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


@functools.cache
def default_library() -> Library:
    """The results shipped inside the package (``symabsorb/theorems``)."""
    from .hypotheses import REGISTRY

    return load_library([resources.files("symabsorb.theorems")], REGISTRY)


def library_with(extra: Iterable[Path]) -> Library:
    """The shipped results plus those in ``extra`` directories (``--theorems DIR``)."""
    from .hypotheses import REGISTRY

    return load_library([resources.files("symabsorb.theorems"), *extra], REGISTRY)
