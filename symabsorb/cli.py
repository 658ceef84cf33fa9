"""The command line: a thin layer over the library. Heavy imports happen inside the commands,
so ``symabsorb --help`` stays fast. One place (:func:`main`) maps errors to exit codes:
0 done, 1 a query stayed open under ``--strict``, 2 bad input."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import __version__

__all__ = ["build_parser", "main"]

FORMATS = {"md": "md", "markdown": "md", "html": "html", "htm": "html", "tex": "tex", "latex": "tex", "json": "json"}


class UsageError(Exception):
    """A command-line mistake: reported on stderr, exit code 2."""


def _write_atomic(path: Path, text: str, protect: Sequence[Path] = ()) -> None:
    target = path.resolve() if path.exists() else path.absolute()
    for p in protect:
        if p.exists() and target == p.resolve():
            raise UsageError(f"refusing to overwrite the spec `{p}` with the report; choose another -o FILE")
    directory = target.parent
    if not directory.is_dir():
        raise UsageError(f"cannot write `{path}`: the directory `{directory}` does not exist (create it first)")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _library(args: argparse.Namespace) -> Any:
    from .theory.library import default_library, library_with

    dirs = [Path(d) for d in (getattr(args, "theorems", None) or [])]
    for d in dirs:
        if not d.is_dir():
            raise UsageError(f"--theorems `{d}` is not a directory")
    return library_with(dirs) if dirs else default_library()


def _read_spec(path: str) -> tuple[Any, str]:
    from .dsl.loader import load_modules, read_source
    from .model.resolve import resolve_modules

    text = read_source(Path(path))
    spec = resolve_modules(load_modules(path, text), path)
    return spec, text


# ---- commands ---------------------------------------------------------------------------------------


def cmd_check(args: argparse.Namespace) -> int:
    import sympy as sp

    from .model.activation import GatedActivation

    spec, _ = _read_spec(args.spec)
    out = [f"{args.spec}: OK"]
    if spec.imports:
        out.append("imports: " + ", ".join(spec.imports))
    out.append(f"activations ({len(spec.activations)}):")
    for a in spec.activations:
        if isinstance(a, GatedActivation):
            out.append(f"  gated {a.name}: g(z) = {sp.sstr(a.gate.expr)}")
        else:
            params = "".join(f"  [parameter {p.symbol}{' with ' + sp.sstr(p.constraint) if p.constraint else ''}]"
                             for p in a.params)
            out.append(f"  {a.name}(z) = {sp.sstr(a.expr)}{params}")
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
            _write_atomic(Path(args.file), formatted)
        return 0
    sys.stdout.write(formatted)
    return 0


def _activation(text: str, gated: bool) -> Any:
    from .model.resolve import activation_from_text

    return activation_from_text(text, gated=gated)


def cmd_facts(args: argparse.Namespace) -> int:
    import json

    from .analysis.engine import analyze
    from .analysis.serialize import facts_to_dict

    act = _activation(args.expr, args.gated)
    facts = analyze(act, order=args.order, budget=args.budget)
    data = facts_to_dict(facts, act.name)
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    from .report.common import facts_rows

    g = "g" if facts.gated else "σ"
    print(f"{act.name}: {g}(z) = {data['expression']}")
    for name, ev, value in facts_rows(facts):
        print(f"  {name:34s} {ev.status.value:8s} {value}   [{ev.decided_by.value}]")
        if args.steps or ev.reason:
            if ev.reason:
                print(f"      reason: {ev.reason}")
            for s in ev.steps if args.steps else ():
                claim = f": {s.claim}" if s.claim is not None else ""
                print(f"      - {s.text}{claim}")
    return 0


def cmd_classify(args: argparse.Namespace) -> int:
    import json

    from .report.markdown import render_derivation_markdown
    from .theory.prover import classify
    from .theory.serialize import derivation_to_dict

    library = _library(args)
    act = _activation(args.expr, args.gated)
    d = classify(act, library, args.budget)
    if args.json:
        print(json.dumps(derivation_to_dict(d), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(render_derivation_markdown(d, library))
    return 1 if args.strict and d.verdict.value == "open" else 0


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
        rows.append({"activation": name, "gated": entry.gated, "verdict": d.verdict.value,
                     "decided_by": d.decided_by, "label": r.label if r else None,
                     "source": r.source if r else None, "condition": d.condition_plain, "used_in": entry.used_in})
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    header = f"{'activation':13s} {'verdict':12s} {'decided by':16s} {'source':8s} condition"
    print(header)
    print("-" * len(header))
    for row in rows:
        print(f"{row['activation']:13s} {row['verdict']:12s} {row['label'] or '—':16s} {row['source'] or '—':8s} "
              f"{row['condition'] or ''}")
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    from .report.graph import render_graph

    library = _library(args)
    states = None
    if args.spec:
        from .report.build import build_report

        spec, text = _read_spec(args.spec)
        states = build_report(spec, text, library, args.budget).node_states()
    sys.stdout.write(render_graph(library, args.format, states))
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
    if fmt == "md":
        from .report.markdown import render_markdown

        return render_markdown(report)
    if fmt == "json":
        from .report.jsonout import render_json

        return render_json(report)
    if fmt == "html":
        from .report.html import render_html

        return render_html(report)
    if fmt == "tex":
        from .report.latex import render_latex

        return render_latex(report, fragment=fragment)
    from .report.terminal import render_terminal

    return render_terminal(report, color=sys.stdout.isatty())


def cmd_prove(args: argparse.Namespace) -> int:
    from .report.build import build_report

    fmt = _format_for(args)
    spec, text = _read_spec(args.spec)
    library = _library(args)
    progress = _progress_bar(len(spec.queries)) if fmt == "terminal" or args.output else None
    report = build_report(spec, text, library, args.budget, progress)
    rendered = _render(report, fmt, args.fragment)
    if args.output:
        _write_atomic(Path(args.output), rendered, protect=[Path(args.spec)])
        print(f"wrote {args.output} ({fmt}, {len(report.answers)} queries)")
    else:
        sys.stdout.write(rendered)
    undecided = sum(1 for a in report.answers if a.derivation is not None and a.derivation.verdict.value == "open")
    return 1 if args.strict and undecided else 0


def _progress_bar(total: int) -> Callable[[int, int, str], None] | None:
    if total < 4 or not sys.stderr.isatty():
        return None
    try:
        from rich.progress import Progress
    except ImportError:
        return None
    progress = Progress(transient=True)
    task = progress.add_task("proving", total=total)
    progress.start()

    def update(done: int, all_: int, label: str) -> None:
        progress.update(task, completed=done, description=label or "done")
        if done >= all_:
            progress.stop()

    return update


# ---- parser ------------------------------------------------------------------------------------------


def _budget(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--budget", type=float, default=5.0, metavar="SECONDS",
                        help="time budget per fact; undecided facts are 'unknown (timeout)' (default: 5)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="symabsorb", description="Can a residual block x -> Mx + MLP(x) be rewritten as "
                                "a residual-free MLP of the same width? Exact answers with step-by-step derivations.")
    p.add_argument("--version", action="version", version=f"symabsorb {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    c = sub.add_parser("check", help="parse and resolve a spec; list what it declares and asks")
    c.add_argument("spec", help="a .absorb file")
    c.set_defaults(func=cmd_check)

    f = sub.add_parser("fmt", help="print a spec in canonical form")
    f.add_argument("file", help="a .absorb file")
    g = f.add_mutually_exclusive_group()
    g.add_argument("--check", action="store_true", help="exit 1 if the file is not in canonical form")
    g.add_argument("--write", action="store_true", help="rewrite the file in place (atomically)")
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
    gr.add_argument("--format", choices=("dot", "mermaid", "json"), default="dot")
    gr.add_argument("--theorems", action="append", metavar="DIR")
    gr.add_argument("--spec", metavar="SPEC", help="colour each result by its state after proving SPEC's queries "
                    "(applied, hypothesis failed, undecided, cited, not tried)")
    _budget(gr)
    gr.set_defaults(func=cmd_graph)

    pr = sub.add_parser("prove", help="answer every query of a spec and write a report")
    pr.add_argument("spec", help="a .absorb file")
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
    return p


def cmd_absorb(args: argparse.Namespace) -> int:
    from .dsl.errors import SpecNameError, did_you_mean
    from .report.markdown import render_derivation_markdown
    from .theory.prover import prove
    from .weights.decide import decide_concrete
    from .weights.export import write_witness

    spec, _ = _read_spec(args.spec)
    library = _library(args)
    targets = {b.name: b for b in spec.blocks}
    targets.update({s.name: s for s in spec.stacks})
    if args.block not in targets:
        raise SpecNameError(f"no block or stack `{args.block}` in {args.spec}", None, f"`{args.block}`",
                            "the name of a block or stack of the spec",
                            did_you_mean(args.block, targets) or "`symabsorb check SPEC` lists the names")
    target = targets[args.block]
    derivation = prove(target, f"absorb {target.name}", library, args.budget)
    derivation = decide_concrete(target, derivation, library, os.path.dirname(args.spec) or ".")
    sys.stdout.write(render_derivation_markdown(derivation, library))
    if derivation.verdict.value != "absorbable" or derivation.witness is None:
        print(f"\nno witness: the verdict for `{target.name}` is {derivation.verdict.value}")
        return 1
    if args.output:
        write_witness(Path(args.output), derivation.witness)
        print(f"\nwrote the residual-free weights to {args.output}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from .dsl.errors import SymabsorbError

    try:
        result: int = args.func(args)
        return result
    except SymabsorbError as err:
        from .dsl.errors import SpecError

        if isinstance(err, SpecError) and err.span is not None and err.source_line is None:
            try:
                err.with_source(Path(err.span.file).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                pass
        print(str(err), file=sys.stderr)
        return 2
    except UsageError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
