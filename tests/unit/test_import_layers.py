"""Imports run one way: dsl -> model -> analysis -> theory -> weights -> answer -> explore -> report -> keyword ->
results -> runtime -> api -> cli;
report/ only renders (it imports neither the prover nor the concrete-weight decisions)."""

from __future__ import annotations

import ast
from pathlib import Path

import symabsorb

# api: the facade beside cli; keyword (the -k parser) and results (the result objects, which render
# through report/) are the facade's own modules; runtime: what the command line needs from below the API
LAYERS = ["dsl", "model", "analysis", "theory", "weights", "answer", "explore", "report", "keyword", "results",
          "runtime", "api", "cli"]
PACKAGE = Path(symabsorb.__file__).parent


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "symabsorb" or len(parts) < 2:
        return None
    name = parts[1]
    return LAYERS.index(name) if name in LAYERS else None


def _imports(path: Path) -> list[tuple[int, str]]:
    rel = path.relative_to(PACKAGE)
    package = ["symabsorb", *rel.parts[:-1]]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                out.append((node.lineno, ".".join(base + ([node.module] if node.module else []))))
            else:
                out.append((node.lineno, node.module or ""))
        elif isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name) for alias in node.names)
    return out


#: What report/ may read from the layers that decide: data types and their serialisation only.
_RENDER_ONLY = ("symabsorb.theory.prover", "symabsorb.weights.width", "symabsorb.weights.widththm", "symabsorb.weights.concrete",
                "symabsorb.weights.decide", "symabsorb.weights.filedecide", "symabsorb.weights.search",
                "symabsorb.answer.session")


def test_report_only_renders() -> None:
    """The answer layer (symabsorb/answer.py) orchestrates a query; report/ never proves or decides."""
    bad = [f"{path.relative_to(PACKAGE)}:{line} imports {target}"
           for path in sorted((PACKAGE / "report").rglob("*.py")) for line, target in _imports(path)
           if target.startswith(_RENDER_ONLY)]
    assert bad == []


def test_imports_point_to_earlier_layers() -> None:
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        own_name = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        if own_name not in LAYERS:
            continue
        own = LAYERS.index(own_name)
        package = ["symabsorb", *rel.parts[:-1]]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                layer = _layer(target)
                if layer is not None and layer > own:
                    bad.append(f"{rel}:{node.lineno} imports {target}")
    assert bad == []


#: The one door (issue 27): only the answer layer reaches the prover and the procedures that refine a
#: proof for concrete weights; every other module asks a ``Session``.
_DOOR = ("symabsorb.theory.prover", "symabsorb.weights.concrete")


def test_only_the_answer_layer_imports_the_prover_and_the_procedures() -> None:
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] == "answer" or str(rel) in ("theory/prover.py", "weights/concrete.py"):
            continue
        bad += [f"{rel}:{line} imports {target}" for line, target in _imports(path) if target.startswith(_DOOR)]
    assert bad == []


def _calls(path: Path, name: str) -> list[int]:
    return [node.lineno for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Call) and (getattr(node.func, "id", None) == name
                                               or getattr(node.func, "attr", None) == name)]


def test_no_default_library_below_the_api() -> None:
    """The library in force comes from the session (``--theorems`` reaches every command); only the API,
    the CLI, and the library module that defines the built-in library name it. Two renderers still
    read the built-in labels of a stored record's result ids (a scan's or an explore run's records
    carry ids, not labels): a user result there shows as its id."""
    allowed = {"api.py", "cli.py", "theory/library.py", "report/scantable.py", "report/atlas.py"}
    bad = [f"{path.relative_to(PACKAGE)}:{line}" for path in sorted(PACKAGE.rglob("*.py"))
           if str(path.relative_to(PACKAGE)) not in allowed for line in _calls(path, "default_library")]
    assert bad == []


#: What the command line may import from symabsorb (issue 27): it is a client of the API. Each entry says why.
_CLI_ALLOWED = {
    "symabsorb": "the package itself, for __version__ only",
    "symabsorb.api": "the facade: every question, every result object, the format names",
    "symabsorb.runtime": "what legitimately stays below the API, in one public module: error types, the run's "
                         "budget and --limit parsing, atomic writes, replay, terminal-safe text",
}


def test_the_cli_imports_only_the_api_and_its_allow_list() -> None:
    path = PACKAGE / "cli.py"
    bad = [f"cli.py:{line} imports {target}" for line, target in _imports(path)
           if target.startswith("symabsorb") and target not in _CLI_ALLOWED]
    assert bad == []
    # `from . import NAME` is an import of symabsorb.NAME: only __version__ (a name, not a module) and api
    names = {alias.name for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module is None for alias in node.names}
    assert names <= {"__version__", "api"}, names


def test_no_procedure_is_asked_by_its_name() -> None:
    """Code asks a result's procedure (theory/procedures.Procedure: kind, index_set, any_weights, its callables),
    never compares the name its TOML gives (``concrete == "degenerate"``, ``procedure == "rank"``)."""
    import re

    compare = re.compile(r"""(concrete|procedure|proc)\s*(==|!=|\bin\b)\s*\(?\s*["']""")
    bad = [f"{path.relative_to(PACKAGE)}:{i}" for path in sorted(PACKAGE.rglob("*.py"))
           for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if compare.search(line)]
    assert bad == []


def test_width_and_deep_procedures_take_checked_hypotheses() -> None:
    """weights/width.py, widththm.py and deepdecide.py refine a proof whose hypotheses the prover checked
    (theory/prover.width_proof, check_stack, called by the answer layer): they never import the checker."""
    bad = [f"{name}:{line} imports {target}" for name in ("width.py", "widththm.py", "deepdecide.py")
           for line, target in _imports(PACKAGE / "weights" / name)
           if target in ("symabsorb.theory.hypotheses", "symabsorb.theory.checks")]
    # Theorem D's procedures: the Lemma-T sandwich takes its result's hypotheses checked (weights/concrete.py)
    bad += [f"degenerate.py:{line} imports {target}" for line, target in _imports(PACKAGE / "weights" / "degenerate.py")
            if target == "symabsorb.theory.hypotheses"]
    assert bad == []
