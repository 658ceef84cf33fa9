"""The command line: a client of :mod:`symabsorb.api`, and of :mod:`symabsorb.runtime` for what stays
below the API (error types, the run's budget and limits, atomic writes, replay); nothing else
(``tests/unit/test_import_layers.py`` holds the allow-list). Heavy imports happen inside the commands, so
``symabsorb --help`` imports neither the renderers nor SymPy. One place (:func:`main`) maps errors to
exit codes, the same for every command (:data:`EXIT_CODES`).

Budget words: ``--budget`` is the CPU seconds of the whole command (the run's :class:`Budget`); each
fact gets its share (a twentieth, at least 5 s). The API's ``fact_budget=`` is CPU seconds per fact: the
command line passes ``None`` (no per-fact limit of its own), so the command's share governs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import __version__

__all__ = ["build_parser", "entry", "main"]



class FormatNames:
    """``--format``'s choices. Checking a value reads the renderers' one table (every name and alias,
    a registered renderer included: :func:`symabsorb.api.format_spellings`); listing them (a
    command's help, an invalid choice) reads :data:`symabsorb.api.FORMAT_NAMES`, a constant kept
    equal to the table by a test, so that ``--help`` imports no renderer and no SymPy."""

    def __init__(self, kind: str = "report") -> None:
        self.kind = kind

    def __contains__(self, name: object) -> bool:
        from . import api

        return isinstance(name, str) and name in api.format_spellings(self.kind)

    def __iter__(self) -> Any:
        from .api import FORMAT_NAMES

        return iter(FORMAT_NAMES[self.kind])


EXIT_OK, EXIT_NEGATIVE, EXIT_ERROR, EXIT_INTERNAL = 0, 1, 2, 3
#: Every command: 0 done; 1 answered, but not as asked (a query open under --strict, `absorb` found no
#: witness, `fmt --check` found a file to reformat); 2 bad input or usage (nothing half-done is written);
#: 3 an internal error (a bug in symabsorb: a failed witness check, an unexpected exception).
EXIT_CODES = {EXIT_OK: "done", EXIT_NEGATIVE: "answered, but not as asked: a query stayed open under --strict, "
              "`absorb` found no witness, `fmt --check` found a file to reformat",
              EXIT_ERROR: "bad input or usage: an error message on stderr, no output file written",
              EXIT_INTERNAL: "internal error (a bug in symabsorb; SYMABSORB_DEBUG=1 shows the traceback)"}
EPILOG = "exit codes: " + "; ".join(f"{code} {text}" for code, text in EXIT_CODES.items())


def expand_specs(patterns: Sequence[str]) -> list[str]:
    """Spec arguments: paths, globs (``examples/*.absorb``, also when the shell left them unexpanded)
    and ``-`` (standard input, at most once). A glob that matches nothing is an error."""
    import glob

    out: list[str] = []
    for pattern in patterns:
        if pattern == "-":
            if "-" in out:
                raise UsageError("`-` (standard input) can be given only once")
            out.append(pattern)
        elif glob.has_magic(pattern):
            matches = sorted(glob.glob(pattern, recursive=True))
            if not matches:
                raise UsageError(f"no file matches `{pattern}`")
            out.extend(matches)
        else:
            out.append(pattern)
    return list(dict.fromkeys(out))


class UsageError(Exception):
    """A command-line mistake: reported on stderr, exit code 2."""


def _write_atomic(path: Path, text: str, protect: Sequence[Path] = (), rewrites_input: bool = False) -> None:
    # One writer for every output: refuses inputs (every file the command read) and non-regular
    # files, keeps permissions, cleans its `.NAME.symabsorb-partial-PID` temporary file on every
    # catchable signal.
    from .runtime import write_output

    write_output(path, text, protect, rewrites_input)


def _inputs(spec_path: str, s: Any) -> list[Path]:
    """The files a command read, which its output may never replace: the spec, its imports, its weights."""
    spec = s.resolved
    base = Path(spec_path).parent
    paths = [Path(spec_path), *(base / imp for imp in spec.imports)]
    paths += [base / b.weights.file for b in spec.blocks if getattr(b, "weights", None) is not None]
    return paths


def _shown_path(path: Path) -> str:
    from .runtime import terminal_text

    return terminal_text(str(path))


def _theorem_dirs(args: argparse.Namespace) -> list[Path]:
    """``--theorems DIR`` (repeatable), each checked to be a directory; a warning for one with no result file."""
    dirs = [Path(d) for d in (getattr(args, "theorems", None) or [])]
    for d in dirs:
        if not d.is_dir():
            raise UsageError(f"--theorems `{d}` is not a directory")
        if not any(p.name.endswith(".toml") for p in d.iterdir()):
            print(f"warning: --theorems `{_shown_path(d)}` holds no .toml result file: only the built-in "
                  "library is used", file=sys.stderr)
    return dirs


def _library(args: argparse.Namespace) -> Any:
    from . import api

    return api.library(_theorem_dirs(args))


def _stdin_text(limit: int) -> str:
    """Up to ``limit`` bytes of standard input as UTF-8 text; other bytes are a positioned error
    (never surrogate escapes that fail later)."""
    from .runtime import Span, SpecError

    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        return sys.stdin.read(limit)
    data = stream.read(limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        if err.start >= limit - 4 and len(data) >= limit:
            return data[: err.start].decode("utf-8")  # a character cut by the cap: the size limit reports it
        line = data[: err.start].count(b"\n") + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise SpecError("standard input is not UTF-8 text", Span("<stdin>", line, column, line, column + 1),
                        f"the byte 0x{data[err.start]:02x}", "UTF-8 text", "save the spec as UTF-8") from None


def _read_spec(path: str) -> Any:
    """The :class:`symabsorb.api.Spec` of a spec argument (a path, or ``-``: standard input)."""
    from .api import load

    if path == "-":
        from .runtime import current

        # At most one byte past the size limit: the loader then refuses it with the limit's name.
        return load(_stdin_text(current().limits.input_bytes + 1), name="<stdin>")
    return load(Path(path))


def _each_spec(args: argparse.Namespace, run: Callable[[str], int]) -> int:
    """Run ``run`` on every spec argument; an error in one spec is reported and the others still run.
    The exit code is the worst one."""
    from .runtime import SymabsorbError

    worst = EXIT_OK
    specs = expand_specs(args.spec)
    for i, path in enumerate(specs):
        if len(specs) > 1 and i:
            print()
        try:
            worst = max(worst, run(path))
        except SymabsorbError as err:
            _print_error(err)
            worst = max(worst, int(getattr(err, "exit_code", EXIT_ERROR)))
    return worst


def _print_error(err: Exception) -> None:
    from .runtime import ArgumentError, SpecError, SymabsorbError

    if isinstance(err, SpecError) and err.span is not None and err.source_line is None:
        from .runtime import read_source

        try:
            err.with_source(read_source(Path(err.span.file)))
        except SymabsorbError:
            pass
    text = _option_message(err) if isinstance(err, ArgumentError) else str(err)
    if not isinstance(err, SpecError) and not text.startswith(("error", "internal error")):
        text = f"error: {text}"
    print(text, file=sys.stderr)


# ---- commands: each one calls symabsorb.api and prints what it returns -------------------------------


def cmd_check(args: argparse.Namespace) -> int:
    return _each_spec(args, _check_one)


def _check_one(path: str) -> int:
    from . import api

    sys.stdout.write(api.check(_read_spec(path), name=path).render("text"))  # named as given (`-`, ./x.absorb)
    return 0


def cmd_fmt(args: argparse.Namespace) -> int:
    """Each file in canonical form: printed (one file), checked (``--check``), shown as a unified diff
    (``--diff``, with ``--check`` too) or rewritten (``--write``). An error in one file is reported and
    the others still run; the exit code is the worst one."""
    from . import api
    from .runtime import SymabsorbError

    files = expand_specs(args.file)
    if "-" in files:
        raise UsageError("fmt reads files (it can rewrite them); `-` is not accepted")
    if len(files) > 1 and not (args.check or args.write or args.diff):
        raise UsageError("several files need --check, --diff or --write (printing them one after the other "
                         "would not be a spec)")
    worst = EXIT_OK
    for path in files:
        try:
            formatted = api.fmt(Path(path), check=args.check, name=path)  # named as given (./x.absorb)
        except SymabsorbError as err:
            _print_error(err)
            worst = EXIT_ERROR
            continue
        if args.diff and formatted.changed:
            sys.stdout.write(formatted.diff())
        if args.check:
            if formatted.changed:
                sys.stderr.write(formatted.render("text"))
                worst = max(worst, 1)
        elif args.write:
            formatted.write()  # atomically; through a symlink: the spec it names
        elif not args.diff:
            sys.stdout.write(formatted.render("text"))
    return worst


def cmd_facts(args: argparse.Namespace) -> int:
    from . import api

    result = api.facts(args.expr, args.gated, order=args.order, fact_budget=None)  # --budget is the run's
    if args.json:
        print(result.to_json())
        return 0
    sys.stdout.write(result.facts_table(args.steps))
    return 0


def _terminal_format() -> str:
    return "terminal" if sys.stdout.isatty() else "text"


def _width() -> int:
    import shutil

    return max(60, min(130, shutil.get_terminal_size((100, 24)).columns))


def cmd_classify(args: argparse.Namespace) -> int:
    from . import api

    result = api.classify(args.expr, args.gated, fact_budget=None, lib=_library(args))  # --budget is the run's
    if args.json:
        print(result.to_json())
    else:
        fmt = _chosen_format(args.format) if args.format else _terminal_format()
        _warn_missing(fmt)
        sys.stdout.write(result.render(fmt, fragment=True, color=sys.stdout.isatty(), width=_width()))
    return EXIT_NEGATIVE if args.strict and result.verdict == "open" else EXIT_OK


def _chosen_format(name: str) -> str:
    """``--format NAME`` as the renderers call it; ``terminal`` is plain text unless stdout is a terminal."""
    from . import api

    fmt = api.format_name(name)
    return "text" if fmt == "terminal" and not sys.stdout.isatty() else fmt


def _warn_missing(fmt: str) -> None:
    """One warning line per optional package the format would use and that is missing. Only HTML uses
    optional packages (:func:`symabsorb.api.missing_packages`): any other format imports nothing here."""
    if fmt != "html":
        return
    from . import api

    for line in api.missing_packages(fmt):  # said once: the API's own warning for the same line is then silent
        print(f"warning: {line}", file=sys.stderr)


def cmd_catalog(args: argparse.Namespace) -> int:
    from . import api

    catalog = api.catalog(fact_budget=None, lib=_library(args))  # --budget is the run's
    sys.stdout.write(catalog.render("json" if args.json else "text"))
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    from . import api

    graph = api.graph(_read_spec(args.spec) if args.spec else None, fact_budget=None,  # --budget is the run's
                      lib=_library(args))
    # -o FILE.html: the interactive page; else DOT
    page = args.output and api.format_for_path(args.output, "graph") == "html"
    fmt = args.format or ("html" if page else "dot")
    out = graph.render(fmt)
    if args.output:
        _write_atomic(Path(args.output), out, protect=[Path(args.spec)] if args.spec and args.spec != "-" else [])
        print(f"wrote {args.output} ({fmt}, {graph.results} results)")
    else:
        sys.stdout.write(out)
    return 0


def _format_for(args: argparse.Namespace) -> str:
    from . import api

    if args.format:
        return api.format_name(args.format)
    if args.output and not _output_is_dir(args):
        # a file suffix names a format of the renderers' table (.md, .html...); terminal/text have none
        found = api.format_for_path(args.output)
        if found is None:
            raise UsageError(f"cannot tell the format of `{args.output}` from its extension; use --format "
                             + "|".join(api.format_name(suffix.lstrip(".")) for suffix in api.format_suffixes()))
        return found
    if args.output:
        return "md"
    return "terminal"


def _output_is_dir(args: argparse.Namespace) -> bool:
    """``-o DIR``: a directory (existing, or written with a trailing `/`) gets one report per spec."""
    out = getattr(args, "output", None)
    return out is not None and (Path(out).is_dir() or str(out).endswith(("/", "\\")))


def _report_paths(args: argparse.Namespace, specs: Sequence[str], fmt: str) -> dict[str, Path]:
    """Spec -> the report file it gets under ``-o``: the file itself, or ``DIR/STEM.EXT`` per spec."""
    if not args.output:
        return {}
    if not _output_is_dir(args):
        if len(specs) > 1:
            raise UsageError(f"-o FILE takes one spec, not {len(specs)}; give a directory (-o DIR/) for one report "
                             "per spec, or leave out -o")
        return {specs[0]: Path(args.output)}
    directory = Path(args.output)
    if not directory.is_dir():
        if directory.exists():
            raise UsageError(f"-o {args.output}: `{directory}` exists and is not a directory")
        try:  # `-o reports/` names a directory: made, as `make`'s users expect (its parent must exist)
            directory.mkdir()
        except OSError as err:
            raise UsageError(f"-o {args.output}: cannot create the directory `{directory}` "
                             f"({err.strerror}); create it first") from None
    ext = {"md": "md", "html": "html", "tex": "tex", "json": "json", "text": "txt", "terminal": "txt"}[fmt]
    out: dict[str, Path] = {}
    for spec in specs:
        target = directory / f"{'stdin' if spec == '-' else Path(spec).stem}.{ext}"
        clash = next((other for other, p in out.items() if p == target), None)
        if clash is not None:
            raise UsageError(f"`{clash}` and `{spec}` would both be written to `{target}`; run `prove` on them "
                             "separately")
        out[spec] = target
    return out


def _render(report: Any, fmt: str, fragment: bool, verbose: bool = False) -> str:
    if fmt == "terminal" and not sys.stdout.isatty():
        fmt = "text"
    return str(report.render(fmt, fragment=fragment, color=sys.stdout.isatty(), width=_width(), verbose=verbose))


def cmd_prove(args: argparse.Namespace) -> int:
    fmt = _format_for(args)
    specs = expand_specs(args.spec)
    targets = _report_paths(args, specs, fmt)
    if args.verbose and fmt not in ("terminal", "text"):
        raise UsageError("-v prints whole derivations in the terminal (or text); a report in md, html, tex or json "
                         "always holds them")
    _warn_missing(fmt)
    library = _library(args)
    return _each_spec(args, lambda path: _prove_one(args, path, fmt, library, targets.get(path)))


def _prove_one(args: argparse.Namespace, path: str, fmt: str, library: Any, target: Path | None) -> int:
    from . import api

    spec = _read_spec(path)
    selected = api.select(spec, args.keyword) if args.keyword else spec
    queries = len(selected.queries)
    progress = _progress_bar(queries) if fmt == "terminal" or target else None
    # --budget is the run's (installed by main); the API's per-fact budget is left to the run's share
    report = api.prove(selected, fact_budget=None, lib=library, progress=progress, near=args.near)
    rendered = _render(report, fmt, args.fragment, args.verbose)
    if target is not None:
        _write_atomic(target, rendered, protect=_inputs(path, spec) if path != "-" else [])
        print(f"wrote {target} ({fmt}, {len(report.data.answers)} queries)")
    else:
        sys.stdout.write(rendered)
        if fmt == "terminal" and sys.stdout.isatty():  # in a terminal only: a piped report stays data
            _prove_width_hint(path, spec, selected, report)
    return EXIT_NEGATIVE if args.strict and report.open else EXIT_OK


def _prove_width_hint(path: str, spec: Any, selected: Any, report: Any) -> None:
    """After ``prove`` in a terminal: the minimal-width hint (:func:`width_hint`) for the first block whose
    ``absorb`` answer is absorbable or not-absorbable and whose ``width`` is not asked, naming the others."""
    asked = {q.target.name for q in spec.resolved.queries if q.kind == "width"}
    names = [q.target.name for q, r in zip(selected.resolved.queries, report.results, strict=True)
             if q.kind == "absorb" and q.target.name in spec.blocks and q.target.name not in asked
             and r.verdict in ("absorbable", "not-absorbable")]
    names = list(dict.fromkeys(names))
    if len(names) == 1:
        verdict = next(r.verdict for q, r in zip(selected.resolved.queries, report.results, strict=True)
                       if q.kind == "absorb" and q.target.name == names[0])
        print(f"\n{width_hint(path, names[0], verdict, asks_width=False)}")
    elif names:
        import shlex

        shown = "SPEC" if path == "-" else shlex.quote(path)
        print(f"\nhint: a residual-free block of another width may equal {', '.join(f'`{n}`' for n in names)}: the "
              f"query `width NAME` gives the minimal width (add it to the spec, then symabsorb prove {shown} -k "
              f"'width and NAME'); symabsorb absorb {shown} --block NAME --width W writes one of width W")


def _progress_bar(total: int) -> Callable[[int, int, str], None] | None:
    if total < 4 or not sys.stderr.isatty():
        return None
    try:
        from rich.console import Console
        from rich.progress import Progress
    except ImportError:
        return None
    from .runtime import unrecorded

    # On standard error, and never recorded for replay (a replay has nothing to wait for).
    progress = Progress(transient=True, console=Console(file=unrecorded(sys.stderr)))
    task = progress.add_task("proving", total=total)
    progress.start()

    def update(done: int, all_: int, label: str) -> None:
        progress.update(task, completed=done, description=label or "done")
        if done >= all_:
            progress.stop()

    return update


# ---- options: each declared once; a command lists the groups it takes -------------------------------------


def _budget_seconds(text: str) -> float:
    from .runtime import parse_budget

    try:
        return parse_budget(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


#: --budget of explore and scan: their cases have budgets of their own.
CLUSTER_BUDGET_HELP = ("CPU seconds of this command's own process (enumeration, scheduling, the atlas; with "
                       "--in-process, and for scan without --workers/--scheduler, the cases too); each case is "
                       "bounded by --case-budget (and, for explore, --evidence-budget), and workers are other processes "
                       "(default: 1e7, no limit in practice)")


def _run_options(budget_help: str | None = None) -> argparse.ArgumentParser:
    """What every command takes: its CPU budget, the size limits, where inputs may come from, the cache."""
    from .runtime import DEFAULT_COMMAND_SECONDS, LIMIT_HELP, Limits

    parser = argparse.ArgumentParser(add_help=False)
    group = parser.add_argument_group("run options")
    group.add_argument("--budget", type=_budget_seconds, default=DEFAULT_COMMAND_SECONDS, metavar="SECONDS",
                       help=budget_help or "CPU seconds for the whole command (parse, facts, proofs, searches, "
                       "rendering; the Python API's fact_budget= is seconds per fact instead); a fact gets a twentieth of "
                       "it, at least 5 s; a fact out of time is 'unknown "
                       f"(timeout)'. Must be > 0; there is no unlimited (default: {DEFAULT_COMMAND_SECONDS:g})")
    defaults = Limits()
    group.add_argument("--limit", action="append", default=[], metavar="NAME=N",
                       help="raise a size limit checked before any work: " + "; ".join(
                           f"{name} ({doc}, default {getattr(defaults, name.replace('-', '_'))})"
                           for name, doc in LIMIT_HELP.items()))
    group.add_argument("--allow-outside", action="store_true",
                       help="let imports and weights files lie outside the spec's directory tree")
    group.add_argument("--no-cache", action="store_true",
                       help="neither read nor write the facts cache (~/.cache/symabsorb; safe to delete)")
    return parser


def _flag(name: str, help_: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument(name, action="store_true", help=help_)
    return parser


def _near_eps(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return value


def _option_groups() -> dict[str, argparse.ArgumentParser]:
    """The options several commands share, each declared here once."""
    theorems = argparse.ArgumentParser(add_help=False)
    theorems.add_argument("--theorems", action="append", metavar="DIR",
                          help="add the results in DIR to the library (repeatable)")
    specs = argparse.ArgumentParser(add_help=False)
    specs.add_argument("spec", nargs="+", metavar="SPEC", help="a .absorb file, a glob, or - for standard input")
    report_format = argparse.ArgumentParser(add_help=False)
    report_format.add_argument("--format", choices=FormatNames(), metavar="FORMAT",
                               help="%(choices)s (default: from -o, else the terminal)")
    cluster = argparse.ArgumentParser(add_help=False)
    group = cluster.add_argument_group("where cases run")
    group.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler (tcp://host:8786); default: "
                       "a local cluster (explore), this process (scan)")
    group.add_argument("--workers", type=int, default=None, help="worker processes of a local Dask cluster (default: "
                       "2 for explore; scan runs in this process unless --workers or --scheduler is given)")
    group.add_argument("--in-process", action="store_true", help="run every case in this process (no Dask)")
    group.add_argument("--results", metavar="DIR", help="results directory (one JSON line per case; a second run "
                       "resumes from it)")
    near = argparse.ArgumentParser(add_help=False)
    near.add_argument("--near", type=_near_eps, metavar="EPS",
                      help="for concrete weights decided by an index-set condition: also say whether the nearest "
                      "index set is within EPS of it (relative Frobenius distance), with the certified distance and "
                      "the flip witness's measured error (float-planted weights); the verdict is unchanged")
    return {"run": _run_options(), "cluster-run": _run_options(CLUSTER_BUDGET_HELP), "theorems": theorems,
            "specs": specs, "format": report_format, "cluster": cluster, "near": near,
            "gated": _flag("--gated", "EXPR is the gate g of a gated unit g(W_gate x) * (W_up x)"),
            "strict": _flag("--strict", "exit 1 when a verdict stays open"),
            "json": _flag("--json", "print JSON (docs/facts-json.md, docs/classify-json.md)")}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="symabsorb", description="Can a residual block x -> Mx + MLP(x) be rewritten as "
                                "a residual-free MLP of the same width? Exact answers with step-by-step derivations.",
                                epilog=EPILOG)
    p.add_argument("--version", action="version", version=f"symabsorb {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    opt = _option_groups()

    def command(name: str, help_: str, func: Callable[[argparse.Namespace], int], *groups: str,
                **kwargs: Any) -> argparse.ArgumentParser:
        parser = sub.add_parser(name, help=help_, epilog=EPILOG, parents=[opt[g] for g in groups], **kwargs)
        parser.set_defaults(func=func)
        return parser

    command("check", "parse and resolve specs; list what each declares and asks", cmd_check, "specs", "run")

    f = command("fmt", "print specs in canonical form", cmd_fmt, "run")
    f.add_argument("file", nargs="+", help="one or more .absorb files or globs")
    g = f.add_mutually_exclusive_group()
    g.add_argument("--check", action="store_true", help="exit 1 if some file is not in canonical form")
    g.add_argument("--write", action="store_true", help="rewrite each file in place (atomically)")
    f.add_argument("--diff", action="store_true", help="print a unified diff of each file against its canonical "
                   "form instead of the form itself (with --check: and exit 1 if some differs)")

    fa = command("facts", "every fact about one activation, with status and steps", cmd_facts, "gated", "json", "run")
    fa.add_argument("expr", metavar="EXPR_OR_NAME", help="an expression in z (e.g. 'z*sigmoid(z)') or a built-in name")
    fa.add_argument("--steps", action="store_true", help="print every derivation step")
    fa.add_argument("--order", type=int, default=8, help="Taylor order (default: 8)")

    cl = command("classify", "decide one block with identity skip and generic weights", cmd_classify,
                 "gated", "json", "format", "strict", "theorems", "run")
    cl.add_argument("expr", metavar="EXPR", help="an expression in z or a built-in name (gelu, swiglu, ...)")

    command("catalog", "the verdict for every built-in activation", cmd_catalog, "json", "theorems", "run")

    gr = command("graph", "print the lemma graph", cmd_graph, "theorems", "run")
    gr.add_argument("--format", choices=FormatNames("graph"), metavar="FORMAT",
                    help="dot (default), mermaid, json, html: one self-contained interactive page "
                    "(the default for -o FILE.html), or blueprint: a leanblueprint chapter (LaTeX, \\uses and status)")
    gr.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    gr.add_argument("--spec", metavar="SPEC", help="colour each result by its state after proving SPEC's queries "
                    "(applied, hypothesis failed, undecided, cited, not tried)")

    pr = command("prove", "answer every query of specs and write a report", cmd_prove,
                 "specs", "format", "strict", "theorems", "near", "run")
    pr.add_argument("-o", "--output", metavar="FILE_OR_DIR", help="write the report to FILE (atomically); with a "
                    "directory (existing, or ending in /), one report per spec: DIR/SPEC.md (or --format's extension)")
    pr.add_argument("-k", dest="keyword", metavar="PATTERN", help="only the queries whose text matches PATTERN, as "
                    "pytest -k: words as case-insensitive substrings, and / or / not, parentheses")
    pr.add_argument("-v", "--verbose", action="store_true", help="print every answer's whole derivation in the "
                    "terminal (the default is one summary line per query)")
    pr.add_argument("--fragment", action="store_true", help="LaTeX: only the body, to paste into a paper")

    ab = command("absorb", "find and write the absorbing weights of one block", cmd_absorb, "theorems", "near", "run")
    ab.add_argument("spec")
    ab.add_argument("--block", required=True, metavar="NAME", help="the block (or stack) to absorb")
    ab.add_argument("-o", "--output", metavar="FILE", help="witness.safetensors or witness.npz")
    ab.add_argument("--width", type=int, metavar="W", help="a residual-free block of width W (not the block's own "
                    "width): the witness of the `width` query's upper bound (Theorem W; Theorem D for degenerate "
                    "weights), for W at least that bound")

    ve = command("verify", "re-check the certificates of a JSON report against the weight files", cmd_verify,
                 "theorems", "run")
    ve.add_argument("report", help="a report written by `symabsorb prove --format json`")
    ve.add_argument("--weights-dir", metavar="DIR", help="where the weight files are (default: the report's own "
                    "directory; files are read only inside it unless --allow-outside)")
    ve.add_argument("--blas", action="store_true", help="exact products through float64 BLAS (exact by a size "
                    "argument, ~10x faster) instead of int64 arithmetic without floating point")

    ex = command("explore", "map the spaces of a spec: classify every expression, conjectures with evidence, the atlas "
                 "(Dask)", cmd_explore, "cluster", "theorems", "cluster-run")
    ex.add_argument("spec", help="a .absorb file with `space` declarations")
    ex.add_argument("--space", action="append", metavar="NAME", help="explore only this space (repeatable)")
    ex.add_argument("-o", "--output", metavar="FILE", help="also write the atlas to FILE (.md, .html or .json)")
    ex.add_argument("--format", choices=FormatNames("atlas"), metavar="FORMAT",
                    help="%(choices)s: the format of -o FILE (default: its extension)")
    ex.add_argument("--case-budget", type=_budget_seconds, default=60.0, metavar="SECONDS",
                    help="CPU seconds per classification case (default: 60)")
    ex.add_argument("--evidence-budget", type=_budget_seconds, default=120.0, metavar="SECONDS",
                    help="CPU seconds per evidence search, all sizes of one open case (default: 120)")
    ex.add_argument("--sizes", type=_sizes, default=((2, 2), (2, 3), (2, 4), (3, 3), (3, 4), (3, 5), (3, 6)),
                    metavar="DxM,...", help="sizes searched for absorbing weights (default: d = 2..3, m = d..2d)")
    ex.add_argument("--starts", type=int, default=6, help="optimisation starts per size (default: 6)")
    ex.add_argument("--no-evidence", action="store_true", help="skip the search for absorbing weights (the spaces' "
                    "and the depth-2 ReLU/GELU stacks'; --stacks runs the latter anyway)")
    ex.add_argument("--no-stacks", action="store_true", help="skip the depth-2 ReLU/GELU evidence")
    ex.add_argument("--stacks", action="store_true", help="run the depth-2 ReLU/GELU evidence with --space too "
                    "(without --space it runs unless --no-stacks)")
    ex.set_defaults(budget=1e7)  # the command's own CPU (cases have --case-budget; workers are other processes)

    sc = command("scan", "decide every MLP layer of every weight file under a directory (in this process; Dask with "
                 "--workers/--scheduler)", cmd_scan,
                 "cluster", "theorems", "cluster-run",
                 description="Exit codes: 0 every weight file and layer group under DIR was decided; 1 something was "
                 "skipped, each on one `skipped` line with its reason and a hint (a file not read: a link out of DIR "
                 "without --allow-outside, not a regular file, unreadable; a layer group no layout matches; a layer "
                 "that failed or ran out of budget; no weight file at all); 2 bad input or usage (DIR not a "
                 "directory, an unreachable scheduler or one without workers).")
    sc.add_argument("dir", metavar="DIR", help="a directory of .safetensors / .npz / .pt files")
    sc.add_argument("--activation", metavar="NAME", help="the activation of every layer (default: from the tensor "
                    "names: swiglu with a gate, else gelu or the family's usual one)")
    sc.add_argument("--case-budget", type=_budget_seconds, default=300.0, metavar="SECONDS",
                    help="CPU seconds per layer (default: 300)")
    sc.add_argument("--json", metavar="FILE", help="also write the table as JSON")
    sc.add_argument("-o", "--output", metavar="FILE", help="also write the table as FILE.md (a Markdown table), "
                    ".tex (a booktabs tabular) or .csv (quoted; a cell starting with = + - @ prefixed with ')")
    sc.set_defaults(budget=1e7)
    return p


# ---- explore and scan (symabsorb.explore; Dask imported only when used) --------------------------------


def _executor(args: argparse.Namespace, local: bool = False) -> Any:
    """The executor the options ask for. ``local``: with neither --scheduler nor --workers, this process
    (scan: a layer is BLAS work on numpy arrays, and a local Dask cluster on the same cores only adds
    its start-up, pickling and a second copy of each layer)."""
    import warnings

    from . import api
    from .runtime import ArgumentError

    if args.in_process and args.scheduler:
        raise UsageError(f"--scheduler {args.scheduler!r}: --in-process and a scheduler exclude each other")
    in_process = args.in_process or (local and args.scheduler is None and args.workers is None)
    workers = 2 if args.workers is None else args.workers
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            runner = api.executor(scheduler=args.scheduler, workers=workers, in_process=in_process)
        except ArgumentError as err:
            raise UsageError(_option_message(err)) from None
    for w in caught:
        print(f"note: {w.message}", file=sys.stderr)
    return runner


#: The API's argument names (``ArgumentError.param``) as the command line spells them: the flag or the
#: positional argument each one comes from. Every API argument a command passes from its command line is here.
CLI_NAMES = {
    "keyword": "-k", "budget": "--budget", "theorems": "--theorems", "near": "--near", "width": "--width",
    "name": "--block", "fmt": "--format", "order": "--order", "gated": "--gated", "expr": "EXPR",
    "activation": "--activation", "spec": "SPEC", "source": "FILE", "report": "REPORT", "weights_dir": "--weights-dir",
    "blas": "--blas", "scheduler": "--scheduler", "workers": "--workers", "in_process": "--in-process",
    "case_budget": "--case-budget", "evidence_budget": "--evidence-budget", "sizes": "--sizes", "starts": "--starts",
    "spaces": "--space", "results": "--results", "directory": "DIR", "evidence": "--no-evidence", "stacks": "--stacks",
}


def _option_message(err: Any) -> str:
    """An API :class:`~symabsorb.errors.ArgumentError` as the command line says it: the flag its
    ``param`` came from (:data:`CLI_NAMES`; ``theorems[1]`` is ``--theorems``), the value, the reason."""
    param, reason = getattr(err, "param", None), getattr(err, "reason", None)
    if param is None or reason is None:
        return str(err)
    base = param.split("[", 1)[0]
    flag = CLI_NAMES.get(base, "--" + base.replace("_", "-"))
    value = err.value
    shown = repr(str(value) if hasattr(value, "__fspath__") else value)
    if len(shown) > 80:
        shown = shown[:60] + "…" + shown[-10:]
    return f"{flag} {shown}: {reason}"


def _phase_progress() -> Any:
    from .runtime import PhaseProgress

    return PhaseProgress()


def _sizes(text: str) -> tuple[tuple[int, int], ...]:
    out = []
    for part in text.split(","):
        d, sep, m = part.strip().partition("x")
        if not sep or not d.isdigit() or not m.isdigit() or not (1 <= int(d) <= 8 and int(d) <= int(m) <= 32):
            raise argparse.ArgumentTypeError(f"--sizes: `{part}` is not DxM with 1 <= d <= 8, d <= m <= 32")
        out.append((int(d), int(m)))
    return tuple(out)


def cmd_explore(args: argparse.Namespace) -> int:
    import time

    from . import api

    loaded = _read_spec(args.spec)
    spec = loaded.resolved
    if not spec.spaces:
        raise UsageError(f"`{args.spec}` declares no `space`; add e.g. `space s = {{ primitives: [tanh, exp], size: 4 }}`")
    names = {s.name for s in spec.spaces}
    for name in args.space or ():
        if name not in names:
            raise UsageError(f"no space `{name}` in {args.spec}; it declares " + ", ".join(sorted(names)))
    fmt = _format_for(args) if args.output else "md"
    if fmt not in api.formats("atlas"):
        *first, last = api.formats("atlas")
        raise UsageError(f"the atlas is written as {', '.join(first)} or {last}")
    if args.stacks and args.no_stacks:
        raise UsageError("--stacks and --no-stacks exclude each other")
    # the stack phase is about ReLU/GELU, not the chosen spaces: with --space only when asked; it is an
    # evidence search too, so --no-evidence skips it unless --stacks asks for it
    stacks = args.stacks or (not args.space and not args.no_stacks and not args.no_evidence)
    start = time.perf_counter()
    runner = _executor(args)
    progress = _phase_progress()
    try:
        exploration = api.explore(loaded, spaces=args.space, results=args.results,
                                  case_budget=args.case_budget, evidence_budget=args.evidence_budget, sizes=args.sizes,
                                  starts=args.starts, evidence=not args.no_evidence, stacks=stacks, executor=runner,
                                  progress=progress, theorems=_theorem_dirs(args))
    finally:
        progress.close()
        runner.close()
    wall = time.perf_counter() - start
    exploration.write()
    if args.output:
        _write_atomic(Path(args.output), exploration.render(fmt), protect=[Path(args.spec)])
    outdir = exploration.results
    sys.stdout.write(exploration.summary())
    print(f"atlas written to {outdir}/atlas.md, atlas.html, atlas.json ({wall:.1f} s wall)")
    return EXIT_OK


def cmd_scan(args: argparse.Namespace) -> int:
    from . import api

    if not Path(args.dir).is_dir():
        raise UsageError(f"`{args.dir}` is not a directory")
    table_format = None
    if args.output:
        # the scan table's formats: those of the renderers' table with a scan entry
        table_format = api.format_for_path(args.output, "scan")
        if table_format is None:
            suffixes = api.format_suffixes("scan")
            raise UsageError(f"cannot write the scan table to `{args.output}`: use a " + ", ".join(suffixes[:-1])
                             + f" or {suffixes[-1]} file (--json FILE for JSON)")
    runner = _executor(args, local=True)
    progress = _phase_progress()
    try:
        result = api.scan(args.dir, activation=args.activation, case_budget=args.case_budget, results=args.results,
                          executor=runner, progress=progress, theorems=_theorem_dirs(args))
    finally:
        progress.close()
        runner.close()
    sys.stdout.write(result.render("text", width=_width()))
    if args.json:
        _write_atomic(Path(args.json), result.render("json", beside=Path(args.json).absolute().parent))
    if args.output and table_format is not None:
        _write_atomic(Path(args.output), result.render(table_format))
    return EXIT_NEGATIVE if result.skipped else EXIT_OK  # a file, a layer group or a layer was skipped


def _witness_needs(output: str) -> None:
    """Refuse, before any work is printed, an output the installed packages cannot write."""
    import importlib.util

    suffix = Path(output).suffix.lower()
    if suffix not in (".safetensors", ".npz"):
        raise UsageError(f"cannot write a witness to `{output}`: use a .safetensors or .npz file")
    need = ["numpy"] + (["safetensors"] if suffix == ".safetensors" else [])
    missing = []
    for module in need:
        try:
            found = importlib.util.find_spec(module) is not None
        except ValueError:  # a module set to None in sys.modules
            found = False
        if not found or sys.modules.get(module, True) is None:
            missing.append(module)
    if missing:
        raise UsageError(f"writing `{output}` needs {' and '.join(missing)}: pip install 'symabsorb[weights]'")


def cmd_absorb(args: argparse.Namespace) -> int:
    from . import api
    from .runtime import write_output

    if args.output:
        _witness_needs(args.output)
    spec = _read_spec(args.spec)
    if args.width is not None:
        return _absorb_at_width(args, spec)
    # --budget is the run's (installed by main); the API's per-fact budget is left to the run's share
    result = api.absorb(spec, args.block, fact_budget=None, lib=_library(args), near=args.near)
    sys.stdout.write(result.render(_terminal_format(), color=sys.stdout.isatty(), width=_width()))
    if result.verdict == "absorbable" and result.witness is None:
        # absorbable by a result that builds no weights (no skip at all, σ linear, ...): the answer is the one
        # asked for; only writing weights cannot be done
        print(f"\n`{args.block}` is absorbable ({result.scope}), by a result that builds no explicit weights: its "
              "derivation gives the construction" + ("; nothing written" if args.output else ""))
        _width_hint(args, spec, result.verdict)
        return EXIT_NEGATIVE if args.output else EXIT_OK
    if result.verdict != "absorbable" or result.witness is None:
        print(f"\nno witness: the verdict for `{args.block}` is {result.verdict}")
        _width_hint(args, spec, result.verdict)
        return EXIT_NEGATIVE
    if args.output:
        def write(tmp: Path) -> None:
            result.write_witness(tmp)

        write_output(Path(args.output), write, protect=_inputs(args.spec, spec))
        print(f"\nwrote the residual-free weights to {args.output}")
        _witness_note(result.witness_note("the derivation's witness (`prove -o report.json`: the `absorb` query)"))
    _width_hint(args, spec, result.verdict)
    return EXIT_OK


def width_hint(spec_arg: str, block: str, verdict: str | None, asks_width: bool) -> str | None:
    """The line pointing from an ``absorb`` answer for a block to the minimal-width question (issue 28):
    for ``absorbable``, a narrower residual-free block may exist; for ``not-absorbable``, a wider one is
    what the ``width`` query bounds and ``absorb --width W`` writes. None for any other verdict."""
    import shlex

    if verdict not in ("absorbable", "not-absorbable"):
        return None
    shown = "SPEC" if spec_arg == "-" else shlex.quote(spec_arg)
    prove = f"symabsorb prove {shown} -k {shlex.quote(f'width and {block}')}"
    how = prove if asks_width else f"add it to the spec, then {prove}"
    ask = f"the query `width {block}` gives the minimal width ({how})"
    write = f"symabsorb absorb {shown} --block {shlex.quote(block)} --width W writes one of width W"
    if verdict == "absorbable":
        return f"hint: a narrower residual-free block may equal `{block}`: {ask}; {write}"
    return f"hint: a residual-free block of another width may equal `{block}`: {ask}; {write}"


def _width_hint(args: argparse.Namespace, spec: Any, verdict: str | None) -> None:
    if args.block not in spec.blocks:  # a stack: a width applies to a block
        return
    asks = any(q.kind == "width" and getattr(q.target, "name", None) == args.block for q in spec.resolved.queries)
    hint = width_hint(args.spec, args.block, verdict, asks)
    if hint is not None:
        print(hint)


def _absorb_at_width(args: argparse.Namespace, spec: Any) -> int:
    """``absorb --width W``: the residual-free block of width W from the `width` query's upper bound."""
    from . import api
    from .runtime import write_output

    if args.width < 1:
        raise UsageError(f"--width {args.width}: expected a positive width")
    found = api.absorb_width(spec, args.block, args.width, fact_budget=None, lib=_library(args))  # --budget: the run's
    if found.witness is None:
        print(f"no witness of width {args.width} for `{args.block}`: {found.reason}")
        return EXIT_NEGATIVE
    print(f"`{args.block}`: a residual-free block of {found.reason}; {found.witness.verified}")
    if args.output:
        def write(tmp: Path) -> None:
            found.write_witness(tmp)

        write_output(Path(args.output), write, protect=_inputs(args.spec, spec))
        print(f"wrote the residual-free weights to {args.output}")
        _witness_note(found.witness_note())
    return EXIT_OK


def _witness_note(note: str | None) -> None:
    if note:
        print(f"note: {note}")


def cmd_verify(args: argparse.Namespace) -> int:
    """Exact re-check of every certificate and witness; trusts only them and the weight files.
    Exit 0: every check passed; 1: a check failed, or nothing to check; 2: bad input."""
    from . import api

    result = api.verify(args.report, weights_dir=args.weights_dir, blas=args.blas, lib=_library(args))
    sys.stdout.write(result.render("text"))
    return EXIT_OK if result.ok else EXIT_NEGATIVE


def _written(args: argparse.Namespace, specs: Sequence[str]) -> list[Path]:
    """The files a command writes with -o (one per spec for `prove -o DIR`)."""
    if not getattr(args, "output", None):
        return []
    if args.command == "prove":
        try:
            return list(_report_paths(args, specs, _format_for(args)).values())
        except UsageError:
            return [Path(args.output)]
    return [Path(args.output)]


def _run_or_replay(args: argparse.Namespace) -> int:
    """Run the command, or replay its stored output when nothing it depends on changed
    (:mod:`symabsorb.replay`; off with --no-cache)."""
    from .runtime import replay

    if args.command not in replay.COMMANDS:
        return int(args.func(args))
    specs = expand_specs(args.spec) if args.command == "prove" else [args.spec] if getattr(args, "spec", None) else []
    key = replay.key_for(args.command, vars(args), specs)
    if key is None:
        return int(args.func(args))
    stored = replay.lookup(key, _written(args, specs))
    if stored is not None:
        return replay.replay(stored)
    with replay.record() as recording:
        result = int(args.func(args))
    replay.store(key, recording, result)
    return result


def _command_typo(parser: argparse.ArgumentParser, argv: Sequence[str]) -> str | None:
    """``symabsorb prov``: the message with a did-you-mean, when the first word names no command."""
    import difflib

    first = next((a for a in argv if not a.startswith("-")), None)
    if first is None or argv[0].startswith("-"):
        return None
    commands = [name for action in parser._actions if isinstance(action, argparse._SubParsersAction)
                for name in action.choices]
    if first in commands:
        return None
    close = difflib.get_close_matches(first, commands, n=1, cutoff=0.5)
    hint = f"did you mean `{close[0]}`?" if close else "`symabsorb --help` lists them"
    return f"unknown command `{first}`: expected one of {', '.join(commands)}; {hint}"


def _option_typo(parser: argparse.ArgumentParser, argv: Sequence[str]) -> str | None:
    """``symabsorb graph --fromat json``: the message with a did-you-mean, when a long option after the
    command is none of the command's (nor an abbreviation of one)."""
    import difflib

    first = next((i for i, a in enumerate(argv) if not a.startswith("-")), None)
    if first is None:
        return None
    sub = next((action.choices[argv[first]] for action in parser._actions
                if isinstance(action, argparse._SubParsersAction) and argv[first] in action.choices), None)
    if sub is None:
        return None
    options = sorted({o for action in sub._actions for o in action.option_strings if o.startswith("--")})
    for word in argv[first + 1:]:
        if word == "--":
            break
        if not word.startswith("--") or len(word) < 3:
            continue
        name = word.split("=", 1)[0]
        if any(o.startswith(name) for o in options):
            continue
        close = difflib.get_close_matches(name, options, n=1, cutoff=0.6)
        hint = f"did you mean `{close[0]}`?" if close else f"`symabsorb {argv[first]} --help` lists them"
        return f"unknown option `{name}` for `symabsorb {argv[first]}`; {hint}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    typo = _command_typo(parser, words) or _option_typo(parser, words)
    if typo is not None:
        print(f"error: {typo}", file=sys.stderr)
        return 2
    args = parser.parse_args(words)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from .runtime import SymabsorbError, command_run, parse_limits

    try:
        limits = parse_limits(getattr(args, "limit", None) or ())
    except ValueError as err:
        parser.error(str(err))
    try:
        # One run per command: its budget, its cache policy, and a ledger of the files it reads
        # (no output may replace one), of who is told about them (replay), of its timeouts.
        with command_run(getattr(args, "budget", None), limits, allow_outside=bool(getattr(args, "allow_outside", False)),
                         cache=not getattr(args, "no_cache", False)):
            result: int = _run_or_replay(args)
        return result
    except SymabsorbError as err:
        _print_error(err)
        return int(getattr(err, "exit_code", EXIT_ERROR))
    except (MemoryError, RecursionError) as err:
        what = "memory" if isinstance(err, MemoryError) else "Python's recursion limit"
        print(f"error: the computation ran out of {what} ({type(err).__name__}); the input is too large for the "
              "exact methods. Try a smaller input or a smaller --budget / --limit", file=sys.stderr)
        return 2
    except UsageError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except Exception as err:  # a bug, shown in one line rather than a traceback (SYMABSORB_DEBUG=1 re-raises)
        import os

        if os.environ.get("SYMABSORB_DEBUG"):
            raise
        print(f"internal error: {type(err).__name__}: {str(err)[:200]}\n  this is a bug in symabsorb, not in the "
              "input; rerun with SYMABSORB_DEBUG=1 for the traceback and report it", file=sys.stderr)
        return EXIT_INTERNAL


def entry() -> None:
    """The ``symabsorb`` program (and ``python -m symabsorb``): :func:`main`, then exit.

    Before exiting, every live object is moved out of the garbage collector's reach
    (``gc.freeze``): the interpreter's final collection would otherwise walk SymPy's whole object
    graph, 0.1-0.2 s of CPU for nothing (``atexit`` handlers and finalizers of ordinary objects still
    run). Only for the process entry: a library caller keeps a normal collector."""
    import gc

    code = main()
    sys.stdout.flush()
    gc.freeze()
    sys.exit(code)

