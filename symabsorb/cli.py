"""The command line: a client of :mod:`symabsorb.api`. Heavy imports happen inside the commands,
so ``symabsorb --help`` stays fast. One place (:func:`main`) maps errors to exit codes, the same
for every command (:data:`EXIT_CODES`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import __version__

__all__ = ["build_parser", "entry", "main"]

FORMATS = {"md": "md", "markdown": "md", "html": "html", "htm": "html", "tex": "tex", "latex": "tex", "json": "json"}
# (the renderers' own table, with terminal and text, is symabsorb.report.render.FORMATS)


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
    from .paths import write_output

    write_output(path, text, protect, rewrites_input)


def _inputs(spec_path: str, spec: Any) -> list[Path]:
    """The files a command read, which its output may never replace: the spec, its imports, its weights."""
    base = Path(spec_path).parent
    paths = [Path(spec_path), *(base / imp for imp in spec.imports)]
    paths += [base / b.weights.file for b in spec.blocks if getattr(b, "weights", None) is not None]
    return paths


def _library(args: argparse.Namespace) -> Any:
    from .theory.library import default_library, library_with

    dirs = [Path(d) for d in (getattr(args, "theorems", None) or [])]
    for d in dirs:
        if not d.is_dir():
            raise UsageError(f"--theorems `{d}` is not a directory")
    return library_with(dirs) if dirs else default_library()


def _read_spec(path: str) -> tuple[Any, str]:
    from .api import load

    if path == "-":
        from .budget import current

        # At most one byte past the size limit: the loader then refuses it with the limit's name.
        spec = load(sys.stdin.read(current().limits.input_bytes + 1), name="<stdin>")
    else:
        spec = load(Path(path))
    return spec.resolved, spec.text


def _each_spec(args: argparse.Namespace, run: Callable[[str], int]) -> int:
    """Run ``run`` on every spec argument; an error in one spec is reported and the others still run.
    The exit code is the worst one."""
    from .dsl.errors import SymabsorbError

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
    from .dsl.errors import SpecError, SymabsorbError

    if isinstance(err, SpecError) and err.span is not None and err.source_line is None:
        from .dsl.loader import read_source

        try:
            err.with_source(read_source(Path(err.span.file)))
        except SymabsorbError:
            pass
    print(str(err), file=sys.stderr)


# ---- commands ---------------------------------------------------------------------------------------


def _constraint(p: Any) -> str:
    """A parameter's constraint as written (``k > 1``); a sign constraint kept only as an assumption
    on the symbol (``k > 0`` makes ``k`` positive) is spelled out too."""
    import sympy as sp

    from .report.plainmath import plain_expr

    text = p.describe() if hasattr(p, "describe") else ""
    if text:
        return " with " + text
    c = p.constraint
    if c is not None and c is not sp.true and isinstance(c, sp.Basic):
        return " with " + plain_expr(c)
    sym = p.symbol
    for attr, text in (("is_positive", "> 0"), ("is_negative", "< 0"), ("is_nonnegative", ">= 0"),
                       ("is_nonpositive", "<= 0")):
        if getattr(sym, attr):
            return f" with {sym} {text}"
    return ""


def cmd_check(args: argparse.Namespace) -> int:
    return _each_spec(args, _check_one)


def _check_one(path: str) -> int:
    from .model.activation import GatedActivation
    from .report.plainmath import plain_expr

    spec, _ = _read_spec(path)
    out = [f"{path}: OK"]
    if spec.imports:
        out.append("imports: " + ", ".join(spec.imports))
    out.append(f"activations ({len(spec.activations)}):")
    for a in spec.activations:
        if isinstance(a, GatedActivation):
            out.append(f"  gated {a.name}: g(z) = {plain_expr(a.gate.expr)}")
        else:
            params = "".join(f"  [parameter {p.symbol}{_constraint(p)}]" for p in a.params)
            out.append(f"  {a.name}(z) = {plain_expr(a.expr)}{params}")
    out.append(f"blocks ({len(spec.blocks)}):")
    for b in spec.blocks:
        weights = " inline weights" if b.has_inline_weights else (f' weights "{b.weights.file}"' if b.weights else "")
        out.append(f"  {b.name}: {b.activation.name}, dim {b.dim}, width {b.width}, {b.skip.describe()}{weights}")
    out.append(f"stacks ({len(spec.stacks)}):")
    for s in spec.stacks:
        out.append(f"  {s.name}: [{', '.join(b.name for b in s.blocks)}] x {s.repeat} (depth {s.depth})")
    out.append(f"queries ({len(spec.queries)}):")
    for q in spec.queries:
        out.append(f"  {q.text}")
    if spec.spaces:
        out.append(f"spaces ({len(spec.spaces)}):")
        for sp_ in spec.spaces:
            if sp_.parametric:
                ranges = ", ".join(f"{r.symbol} in [{r.low}, {r.high}]" for r in sp_.ranges)
                out.append(f"  {sp_.name}: family {plain_expr(sp_.family)}, {ranges}, grid {sp_.grid}")
            else:
                out.append(f"  {sp_.name}: size {sp_.size}, primitives {', '.join(p.name for p in sp_.primitives)}, "
                           f"constants {', '.join(plain_expr(c) for c in sp_.constants)}, operators {' '.join(sp_.operators)}")
    print("\n".join(out))
    return 0


def cmd_fmt(args: argparse.Namespace) -> int:
    from .dsl.formatter import format_module
    from .dsl.loader import read_source
    from .dsl.parser import parse_text

    text = read_source(Path(args.file))
    formatted = format_module(parse_text(text, args.file))
    if args.check:
        if formatted != text:
            print(f"{args.file} would be reformatted", file=sys.stderr)
            return 1
        return 0
    if args.write:
        if formatted != text:
            _write_atomic(Path(args.file).resolve(), formatted, rewrites_input=True)  # through a symlink: the spec it names
        return 0
    sys.stdout.write(formatted)
    return 0


def _activation(text: str, gated: bool) -> Any:
    from .model.resolve import activation_from_text

    return activation_from_text(text, gated=gated)


def cmd_facts(args: argparse.Namespace) -> int:
    import json

    from . import api
    from .analysis.serialize import facts_to_dict

    result = api.facts(args.expr, args.gated, order=args.order, budget=args.budget)
    act, facts = result.answer.activation, result.facts
    assert act is not None and facts is not None
    data = facts_to_dict(facts, act.name)
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    from .report.common import facts_rows
    from .report.plainmath import plain_expr

    g = "g" if facts.gated else "σ"
    print(f"{act.name}: {g}(z) = {plain_expr(facts.expr)}")
    for name, ev, value in facts_rows(facts):
        print(f"  {name:34s} {ev.status.value:8s} {value}   [{ev.decided_by.value}]")
        if args.steps or ev.reason:
            if ev.reason:
                print(f"      reason: {ev.reason}")
            for s in ev.steps if args.steps else ():
                claim = f": {plain_expr(s.claim)}" if s.claim is not None else ""
                print(f"      - {s.text}{claim}")
    return 0


def _terminal_format() -> str:
    return "terminal" if sys.stdout.isatty() else "text"


def _width() -> int:
    import shutil

    return max(60, min(130, shutil.get_terminal_size((100, 24)).columns))


def cmd_classify(args: argparse.Namespace) -> int:
    import json

    from . import api
    from .theory.serialize import derivation_to_dict

    result = api.classify(args.expr, args.gated, budget=args.budget, lib=_library(args))
    assert result.derivation is not None
    if args.json:
        print(json.dumps(derivation_to_dict(result.derivation), indent=2, ensure_ascii=False))
    else:
        fmt = FORMATS[args.format] if args.format else _terminal_format()
        _warn_missing(fmt)
        sys.stdout.write(result.render(fmt, fragment=True, color=sys.stdout.isatty(), width=_width()))
    return EXIT_NEGATIVE if args.strict and result.verdict == "open" else EXIT_OK


def _warn_missing(fmt: str) -> None:
    """One warning line per optional package the format would use and that is missing."""
    from .report.render import missing_extras

    for line in missing_extras(fmt):
        print(f"warning: {line}", file=sys.stderr)


def cmd_catalog(args: argparse.Namespace) -> int:
    import json

    from .model.catalog import CATALOG
    from .theory.prover import classify

    library = _library(args)
    rows = []
    for name, entry in CATALOG.items():
        act = _activation(name, False)
        d = classify(act, library, args.budget)
        r = library.results.get(d.decided_by) if d.decided_by else None
        rows.append({"activation": name, "gated": entry.gated, "verdict": d.verdict.value, "scope": str(d.scope),
                     "sufficient": d.sufficient, "necessary": d.necessary,
                     "decided_by": d.decided_by, "label": r.label if r else None,
                     "source": r.source if r else None, "condition": d.condition_plain, "used_in": entry.used_in})
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    header = f"{'activation':13s} {'verdict':40s} {'decided by':16s} {'source':8s} condition"
    print(header)
    print("-" * len(header))
    for row in rows:
        verdict = str(row["verdict"])
        if row["verdict"] == "conditional":
            verdict += " (iff" if row["necessary"] == "proved" else " (if"
            verdict += ", nondegenerate weights)" if row["scope"] == "nondegenerate weights" else ")"
        elif row["scope"] == "nondegenerate weights":
            verdict += " (nondegenerate weights)"
        print(f"{row['activation']:13s} {verdict:40s} {row['label'] or '—':16s} {row['source'] or '—':8s} "
              f"{row['condition'] or ''}")
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    from .report.graph import render_graph

    library = _library(args)
    states = None
    if args.spec:
        from . import api

        spec, text = _read_spec(args.spec)
        states = api.prove(api.Spec(spec, text), budget=args.budget, lib=library).data.node_states()
    fmt = args.format or ("html" if args.output and Path(args.output).suffix.lower() in (".html", ".htm") else "dot")
    out = render_graph(library, fmt, states)
    if args.output:
        _write_atomic(Path(args.output), out, protect=[Path(args.spec)] if args.spec and args.spec != "-" else [])
        print(f"wrote {args.output} ({fmt}, {len(library.results)} results)")
    else:
        sys.stdout.write(out)
    return 0


def _format_for(args: argparse.Namespace) -> str:
    if args.format:
        return FORMATS[args.format]
    if args.output:
        suffix = Path(args.output).suffix.lstrip(".").lower()
        if suffix not in FORMATS:
            raise UsageError(f"cannot tell the format of `{args.output}` from its extension; use --format "
                             "md|html|tex|json")
        return FORMATS[suffix]
    return "terminal"


def _render(report: Any, fmt: str, fragment: bool) -> str:
    from .report.render import render_report

    if fmt == "terminal" and not sys.stdout.isatty():
        fmt = "text"
    return render_report(report, fmt, fragment=fragment, color=sys.stdout.isatty(), width=_width())


def cmd_prove(args: argparse.Namespace) -> int:
    fmt = _format_for(args)
    specs = expand_specs(args.spec)
    if args.output and len(specs) > 1:
        raise UsageError(f"-o FILE takes one spec, not {len(specs)}; run `prove` once per spec, or leave out -o")
    _warn_missing(fmt)
    library = _library(args)
    return _each_spec(args, lambda path: _prove_one(args, path, fmt, library))


def _prove_one(args: argparse.Namespace, path: str, fmt: str, library: Any) -> int:
    from . import api

    spec, text = _read_spec(path)
    progress = _progress_bar(len(spec.queries)) if fmt == "terminal" or args.output else None
    report = api.prove(api.Spec(spec, text), budget=args.budget, lib=library, progress=progress).data
    rendered = _render(report, fmt, args.fragment)
    if args.output:
        _write_atomic(Path(args.output), rendered, protect=_inputs(path, spec) if path != "-" else [])
        print(f"wrote {args.output} ({fmt}, {len(report.answers)} queries)")
    else:
        sys.stdout.write(rendered)
    undecided = sum(1 for a in report.answers if a.derivation is not None and a.derivation.verdict.value == "open")
    return EXIT_NEGATIVE if args.strict and undecided else EXIT_OK


def _progress_bar(total: int) -> Callable[[int, int, str], None] | None:
    if total < 4 or not sys.stderr.isatty():
        return None
    try:
        from rich.console import Console
        from rich.progress import Progress
    except ImportError:
        return None
    from .replay import unrecorded

    # On standard error, and never recorded for replay (a replay has nothing to wait for).
    progress = Progress(transient=True, console=Console(file=unrecorded(sys.stderr)))
    task = progress.add_task("proving", total=total)
    progress.start()

    def update(done: int, all_: int, label: str) -> None:
        progress.update(task, completed=done, description=label or "done")
        if done >= all_:
            progress.stop()

    return update


# ---- parser ------------------------------------------------------------------------------------------


def _budget_seconds(text: str) -> float:
    from .budget import parse_budget

    try:
        return parse_budget(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _budget(parser: argparse.ArgumentParser) -> argparse.Action:
    from .budget import DEFAULT_COMMAND_SECONDS, LIMIT_HELP, Limits

    action = parser.add_argument("--budget", type=_budget_seconds, default=DEFAULT_COMMAND_SECONDS, metavar="SECONDS",
                        help="CPU seconds for the whole command (parse, facts, proofs, searches, rendering); a fact "
                        "gets a twentieth of it, at least 5 s; a fact out of time is 'unknown (timeout)'. Must be > 0; "
                        f"there is no unlimited (default: {DEFAULT_COMMAND_SECONDS:g})")
    defaults = Limits()
    parser.add_argument("--limit", action="append", default=[], metavar="NAME=N",
                        help="raise a size limit checked before any work: " + "; ".join(
                            f"{name} ({doc}, default {getattr(defaults, name.replace('-', '_'))})"
                            for name, doc in LIMIT_HELP.items()))
    parser.add_argument("--allow-outside", action="store_true",
                        help="let imports and weights files lie outside the spec's directory tree")
    parser.add_argument("--no-cache", action="store_true",
                        help="neither read nor write the facts cache (~/.cache/symabsorb; safe to delete)")
    return action


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="symabsorb", description="Can a residual block x -> Mx + MLP(x) be rewritten as "
                                "a residual-free MLP of the same width? Exact answers with step-by-step derivations.",
                                epilog=EPILOG)
    p.add_argument("--version", action="version", version=f"symabsorb {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    c = sub.add_parser("check", help="parse and resolve specs; list what each declares and asks", epilog=EPILOG)
    c.add_argument("spec", nargs="+", metavar="SPEC", help="a .absorb file, a glob, or - for standard input")
    _budget(c)
    c.set_defaults(func=cmd_check)

    f = sub.add_parser("fmt", help="print a spec in canonical form")
    f.add_argument("file", help="a .absorb file")
    g = f.add_mutually_exclusive_group()
    g.add_argument("--check", action="store_true", help="exit 1 if the file is not in canonical form")
    g.add_argument("--write", action="store_true", help="rewrite the file in place (atomically)")
    _budget(f)
    f.set_defaults(func=cmd_fmt)

    fa = sub.add_parser("facts", help="every fact about one activation, with status and steps")
    fa.add_argument("expr", metavar="EXPR_OR_NAME", help="an expression in z (e.g. 'z*sigmoid(z)') or a built-in name")
    fa.add_argument("--gated", action="store_true", help="EXPR is the gate g of a gated unit")
    fa.add_argument("--json", action="store_true", help="print JSON (schema in docs/facts-json.md)")
    fa.add_argument("--steps", action="store_true", help="print every derivation step")
    fa.add_argument("--order", type=int, default=8, help="Taylor order (default: 8)")
    _budget(fa)
    fa.set_defaults(func=cmd_facts)

    cl = sub.add_parser("classify", help="decide one block with identity skip and generic weights")
    cl.add_argument("expr", metavar="EXPR", help="an expression in z or a built-in name (gelu, swiglu, ...)")
    cl.add_argument("--gated", action="store_true", help="EXPR is the gate g of a gated unit g(W_gate x)*(W_up x)")
    cl.add_argument("--json", action="store_true", help="print JSON (schema in docs/classify-json.md)")
    cl.add_argument("--format", choices=sorted(FORMATS), help="md, html, tex or json (default: the terminal)")
    cl.add_argument("--strict", action="store_true", help="exit 1 when the verdict is open")
    cl.add_argument("--theorems", action="append", metavar="DIR", help="add the results in DIR (repeatable)")
    _budget(cl)
    cl.set_defaults(func=cmd_classify)

    ca = sub.add_parser("catalog", help="the verdict for every built-in activation")
    ca.add_argument("--json", action="store_true")
    ca.add_argument("--theorems", action="append", metavar="DIR")
    _budget(ca)
    ca.set_defaults(func=cmd_catalog)

    gr = sub.add_parser("graph", help="print the lemma graph")
    gr.add_argument("--format", choices=("dot", "mermaid", "json", "html"),
                    help="dot (default), mermaid, json, or html: one self-contained interactive page "
                    "(the default for -o FILE.html)")
    gr.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    gr.add_argument("--theorems", action="append", metavar="DIR")
    gr.add_argument("--spec", metavar="SPEC", help="colour each result by its state after proving SPEC's queries "
                    "(applied, hypothesis failed, undecided, cited, not tried)")
    _budget(gr)
    gr.set_defaults(func=cmd_graph)

    pr = sub.add_parser("prove", help="answer every query of specs and write a report", epilog=EPILOG)
    pr.add_argument("spec", nargs="+", metavar="SPEC", help="a .absorb file, a glob, or - for standard input")
    pr.add_argument("--format", choices=sorted(FORMATS), help="md, html, tex or json (default: from -o, else a "
                    "terminal summary)")
    pr.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE (atomically)")
    pr.add_argument("--fragment", action="store_true", help="LaTeX: only the body, to paste into a paper")
    pr.add_argument("--strict", action="store_true", help="exit 1 when some query stays open")
    pr.add_argument("--theorems", action="append", metavar="DIR")
    _budget(pr)
    pr.set_defaults(func=cmd_prove)

    from_absorb = sub.add_parser("absorb", help="find and write the absorbing weights of one block")
    from_absorb.add_argument("spec")
    from_absorb.add_argument("--block", required=True, metavar="NAME", help="the block (or stack) to absorb")
    from_absorb.add_argument("-o", "--output", metavar="FILE", help="witness.safetensors or witness.npz")
    from_absorb.add_argument("--theorems", action="append", metavar="DIR")
    _budget(from_absorb)
    from_absorb.set_defaults(func=cmd_absorb)

    ve = sub.add_parser("verify", help="re-check the certificates of a JSON report against the weight files")
    ve.add_argument("report", help="a report written by `symabsorb prove --format json`")
    ve.add_argument("--weights-dir", metavar="DIR", help="where the weight files are (default: the report's own "
                    "directory; files are read only inside it unless --allow-outside)")
    ve.add_argument("--blas", action="store_true", help="exact products through float64 BLAS (exact by a size "
                    "argument, ~10x faster) instead of int64 arithmetic without floating point")
    _budget(ve)
    ve.set_defaults(func=cmd_verify)

    ex = sub.add_parser("explore", help="map the spaces of a spec: classify every expression, conjectures with "
                        "evidence, the atlas (Dask)", epilog=EPILOG)
    ex.add_argument("spec", help="a .absorb file with `space` declarations")
    ex.add_argument("--space", action="append", metavar="NAME", help="explore only this space (repeatable)")
    ex.add_argument("-o", "--output", metavar="FILE", help="also write the atlas to FILE (.md, .html or .json)")
    ex.add_argument("--format", choices=("md", "html", "json"), help="the format of -o FILE (default: its extension)")
    ex.add_argument("--case-budget", type=_budget_seconds, default=60.0, metavar="SECONDS",
                    help="CPU seconds per classification case (default: 60)")
    ex.add_argument("--evidence-budget", type=_budget_seconds, default=120.0, metavar="SECONDS",
                    help="CPU seconds per evidence search, all sizes of one open case (default: 120)")
    ex.add_argument("--sizes", type=_sizes, default=((2, 2), (2, 3), (2, 4), (3, 3), (3, 4), (3, 5), (3, 6)),
                    metavar="DxM,...", help="sizes searched for absorbing weights (default: d = 2..3, m = d..2d)")
    ex.add_argument("--starts", type=int, default=6, help="optimisation starts per size (default: 6)")
    ex.add_argument("--no-evidence", action="store_true", help="skip the search for absorbing weights")
    ex.add_argument("--no-stacks", action="store_true", help="skip the depth-2 ReLU/GELU evidence")
    ex.add_argument("--stacks", action="store_true", help="run the depth-2 ReLU/GELU evidence with --space too "
                    "(without --space it runs unless --no-stacks)")
    _cluster_options(ex)
    ex.set_defaults(func=cmd_explore)

    sc = sub.add_parser("scan", help="decide every MLP layer of every weight file under a directory (Dask)",
                        epilog=EPILOG)
    sc.add_argument("dir", metavar="DIR", help="a directory of .safetensors / .npz / .pt files")
    sc.add_argument("--activation", metavar="NAME", help="the activation of every layer (default: from the tensor "
                    "names: swiglu with a gate, else gelu or the family's usual one)")
    sc.add_argument("--case-budget", type=_budget_seconds, default=300.0, metavar="SECONDS",
                    help="CPU seconds per layer (default: 300)")
    sc.add_argument("--json", metavar="FILE", help="also write the table as JSON")
    _cluster_options(sc)
    sc.set_defaults(func=cmd_scan)
    return p


# ---- explore and scan (symabsorb.explore; Dask imported only when used) --------------------------------


def _executor(args: argparse.Namespace) -> Any:
    from .explore.executors import DaskExecutor, InProcessExecutor, dask_available

    if args.in_process:
        if args.scheduler:
            raise UsageError("--in-process and --scheduler exclude each other")
        return InProcessExecutor()
    if not dask_available():
        if args.scheduler:
            raise UsageError("--scheduler needs dask.distributed: pip install 'symabsorb[explore]'")
        print("note: dask.distributed is not installed; running in this process (pip install 'symabsorb[explore]')",
              file=sys.stderr)
        return InProcessExecutor()
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    from .explore.executors import LazyExecutor

    where = f"dask scheduler {args.scheduler}" if args.scheduler else f"dask local cluster ({args.workers} workers)"
    return LazyExecutor(where, lambda: DaskExecutor(args.scheduler, args.workers))


def _phase_progress() -> Any:
    from .explore.progress import PhaseProgress

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

    from .explore.atlas import build_atlas
    from .explore.run import ExploreSettings, explore
    from .report.atlas import family_svg, render_atlas

    spec, _ = _read_spec(args.spec)
    if not spec.spaces:
        raise UsageError(f"`{args.spec}` declares no `space`; add e.g. `space s = {{ primitives: [tanh, exp], size: 4 }}`")
    names = {s.name for s in spec.spaces}
    for name in args.space or ():
        if name not in names:
            raise UsageError(f"no space `{name}` in {args.spec}; it declares " + ", ".join(sorted(names)))
    outdir = Path(args.results or (Path(args.spec).stem + "-explore"))
    fmt = _format_for(args) if args.output else "md"
    if fmt not in ("md", "html", "json"):
        raise UsageError("the atlas is written as md, html or json")
    if args.stacks and args.no_stacks:
        raise UsageError("--stacks and --no-stacks exclude each other")
    # the stack phase is about ReLU/GELU, not the chosen spaces: with --space only when asked
    stacks = args.stacks or (not args.space and not args.no_stacks)
    settings = ExploreSettings(args.case_budget, args.evidence_budget, args.sizes, args.starts, not args.no_evidence,
                               stacks)
    start = time.perf_counter()
    executor = _executor(args)
    progress = _phase_progress()
    try:
        result = explore(spec, outdir, executor, settings, args.space, progress)
    finally:
        progress.close()
        executor.close()
    wall = time.perf_counter() - start
    run = {"executor": result.executor, "results": str(outdir / "cases.jsonl"),
           "case budget (CPU s)": args.case_budget, "evidence budget (CPU s)": args.evidence_budget,
           "evidence sizes (d, m)": " ".join(f"{d}x{m}" for d, m in args.sizes), "starts": args.starts}
    for ph in result.phases:
        run[f"phase {ph.phase}"] = f"{ph.total} cases, {ph.resumed} resumed, {ph.ran} run, {ph.wall_s} s"
    atlas = build_atlas(f"Atlas: {Path(args.spec).name}", result.spaces, result.store.records, result.enumerations,
                        run, evidence=not args.no_evidence)
    result.store.close()
    for kind in ("md", "html", "json"):
        _write_atomic(outdir / f"atlas.{kind}", render_atlas(atlas, kind))
    for s in atlas.spaces:
        if s.family is not None:
            for gated in (False, True):
                name = f"atlas-{s.name}-{'gated' if gated else 'ungated'}.svg"
                _write_atomic(outdir / name, family_svg(s.family, gated, f"{s.name}: {'gated g' if gated else 'σ'}"))
    if args.output:
        _write_atomic(Path(args.output), render_atlas(atlas, fmt), protect=[Path(args.spec)])
    for s in atlas.spaces:
        decided = sum(r.count for r in s.counts if r.verdict != "open")
        print(f"{s.name}: {s.cases} cases, {decided} decided, {len(s.open_cases)} open"
              + (f", {s.enumeration['generated']} candidates, {s.enumeration['survivors']} distinct"
                 if s.enumeration else "")
              + (f", {len(s.family.conflicts)} contradictions with the symbolic split" if s.family else ""))
    print(f"atlas written to {outdir}/atlas.md, atlas.html, atlas.json ({wall:.1f} s wall)")
    return EXIT_OK


def cmd_scan(args: argparse.Namespace) -> int:
    from .explore.scan import scan
    from .explore.store import ResultStore

    directory = Path(args.dir)
    if not directory.is_dir():
        raise UsageError(f"`{args.dir}` is not a directory")
    store = ResultStore(Path(args.results or (directory.name + "-scan")))
    executor = _executor(args)
    try:
        records, skipped = scan(directory, store, executor, args.activation, args.case_budget, _phase_progress())
    finally:
        executor.close()
        store.close()
    header = f"{'file:layer':48s} {'act':8s} {'d':>5s} {'m':>6s} {'verdict':15s} {'decided by':14s} rel. distance"
    lines = [header, "-" * len(header)]
    for r in records:
        dist = r.get("relative_distance") if r["verdict"] != "absorbable" else None  # a lower bound; 0 when absorbed
        lines.append(f"{r['label'][:48]:48s} {r['activation'][:8]:8s} {r.get('d', '?')!s:>5s} {r.get('m', '?')!s:>6s} "
                     f"{r['verdict']:15s} {str(r.get('decided_by') or r.get('error', '—'))[:14]:14s} "
                     + ("—" if dist is None else f"{dist:.3g}"))
    for path, why in skipped:
        lines.append(f"skipped {path}: {why}")
    print("\n".join(lines))
    if args.json:
        import json

        _write_atomic(Path(args.json), json.dumps({"layers": records, "skipped": skipped}, indent=1,
                                                  ensure_ascii=False, sort_keys=True) + "\n")
    return EXIT_OK


def _cluster_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler (tcp://host:8786); default: "
                        "a local cluster")
    parser.add_argument("--workers", type=int, default=2, help="worker processes of the local cluster (default: 2)")
    parser.add_argument("--in-process", action="store_true", help="run every case in this process (no Dask)")
    parser.add_argument("--results", metavar="DIR", help="results directory (one JSON line per case; a second run "
                        "resumes from it)")
    _budget(parser).help = ("CPU seconds of this command's own process (enumeration, scheduling, the atlas; with "
                            "--in-process the cases too); each case is bounded by --case-budget (and, for explore, "
                            "--evidence-budget), and workers are other processes (default: 1e7, no limit in practice)")
    parser.set_defaults(budget=1e7)  # the command's own CPU (cases have --case-budget; workers are other processes)


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
    from .api import Spec, absorb
    from .weights.export import write_witness

    if args.output:
        _witness_needs(args.output)
    spec, text = _read_spec(args.spec)
    result = absorb(Spec(spec, text), args.block, budget=args.budget, lib=_library(args))
    sys.stdout.write(result.render(_terminal_format(), color=sys.stdout.isatty(), width=_width()))
    if result.verdict != "absorbable" or result.witness is None:
        print(f"\nno witness: the verdict for `{args.block}` is {result.verdict}")
        return EXIT_NEGATIVE
    if args.output:
        from .paths import write_output

        witness = result.witness
        write_output(Path(args.output), lambda tmp: write_witness(tmp, witness), protect=_inputs(args.spec, spec))
        print(f"\nwrote the residual-free weights to {args.output}")
    return EXIT_OK


def cmd_verify(args: argparse.Namespace) -> int:
    """Exact re-check of every certificate and witness; trusts only them and the weight files.
    Exit 0: every check passed; 1: a check failed, or nothing to check; 2: bad input."""
    from .weights.verify import verify_report

    results = verify_report(Path(args.report), Path(args.weights_dir) if args.weights_dir else None, args.blas)
    skipped = (f"; {results.unchecked} other quer{'y' if results.unchecked == 1 else 'ies'} not re-checkable "
               "(symbolic blocks, stacks, verdicts without a certificate or witness)") if results.unchecked else ""
    if not results:
        print(f"{args.report}: nothing to check (only decisions on weights carry certificates or witnesses){skipped}")
        return EXIT_NEGATIVE
    for r in results:
        print(f"{'OK    ' if r.ok else 'FAILED'} {r.query} ({r.verdict}): {r.detail}")
    failed = sum(1 for r in results if not r.ok)
    print(f"{len(results) - failed} of {len(results)} certificates and witnesses checked exactly"
          + (f"; {failed} FAILED" if failed else "") + skipped)
    return EXIT_OK if not failed else EXIT_NEGATIVE


def _run_or_replay(args: argparse.Namespace) -> int:
    """Run the command, or replay its stored output when nothing it depends on changed
    (:mod:`symabsorb.replay`; off with --no-cache)."""
    from . import replay

    if args.command not in replay.COMMANDS:
        return int(args.func(args))
    specs = expand_specs(args.spec) if args.command == "prove" else [args.spec] if getattr(args, "spec", None) else []
    key = replay.key_for(args.command, vars(args), specs)
    if key is None:
        return int(args.func(args))
    stored = replay.lookup(key, [args.output] if getattr(args, "output", None) else [])
    if stored is not None:
        return replay.replay(stored)
    with replay.record() as recording:
        result = int(args.func(args))
    replay.store(key, recording, result)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from .budget import Budget, Limits, installed, parse_limit
    from .errors import SymabsorbError

    try:
        limits = Limits()
        for text in getattr(args, "limit", None) or ():
            limits = parse_limit(text, limits)
    except ValueError as err:
        parser.error(str(err))
    budget = Budget(getattr(args, "budget", None) or Budget().seconds, limits, bool(getattr(args, "allow_outside", False)))
    try:
        from .paths import tracking_inputs
        from .userdirs import cache_off

        with cache_off(bool(getattr(args, "no_cache", False))), installed(budget), tracking_inputs():
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

