"""Regenerate the tables in docs/ that are built from the code's registries (``make docs``).

Each table sits between ``<!-- generated: NAME -->`` and ``<!-- end generated -->`` in a Markdown file
and is rebuilt from its registry: the declared hypotheses, the concrete-weights procedures, the skip
kinds and the output formats. ``--check`` rewrites nothing and exits 1 when a table is stale (a test
runs it, so a registry and its docs cannot drift apart)."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"


def hypotheses() -> str:
    from symabsorb.theory.hypotheses import hypothesis_table

    return hypothesis_table()


def procedures() -> str:
    import symabsorb.answer  # attaches verify's re-checks (the package is used below)
    import symabsorb.weights.concrete  # noqa: F401  (attaches the built-in callables)
    from symabsorb.theory.procedures import PROCEDURES

    rows = ["| `concrete` | what is decided | reads | inline weights | weights files | also |",
            "|---|---|---|---|---|---|"]
    for name in PROCEDURES.names("concrete"):
        p = PROCEDURES.get(name)
        assert p is not None
        inline = "deep stacks" if p.stack else ("yes" if p.inline is not None else "—")
        file = "yes" if p.file is not None else "—"
        doc = p.doc.replace("|", "\\|")
        reads = ", ".join(f"`@{{{r}}}`" for r in p.reads) or "—"
        also = [what for what, holds in (
            ("the index-set condition (its constant `c`, `--near`)", p.index_set),
            ("any weights (degenerate weight files)", p.any_weights),
            ("a `[width] procedure`", "width" in p.fields), ("the exact width", p.width is not None),
            ("final (no later stack step)", p.final), ("its own `verify` re-check", p.verifier is not None)) if holds]
        rows.append(f"| `{name}` | {doc} | {reads} | {inline} | {file} | {'; '.join(also) or '—'} |")
    return "\n".join(rows)


def skip_kinds() -> str:
    from symabsorb.theory.skips import SKIP_KINDS

    rows = ["| kind | class | M | streams |", "|---|---|---|---|"]
    for name, kind in SKIP_KINDS.items():
        doc = (type(kind).__doc__ or "").strip().splitlines()[0] if type(kind).__doc__ else ""
        rows.append(f"| `{name}` | `{type(kind).__name__}` | {doc} | {'n streams' if kind.streams else '1'} |")
    return "\n".join(rows)


def formats() -> str:
    from symabsorb.report.formats import RENDERERS

    rows = ["| format | also spelled | file suffixes | renders |", "|---|---|---|---|"]
    for f in RENDERERS:
        rows.append(f"| `{f.name}` | {', '.join(f'`{a}`' for a in f.aliases) or '—'} | "
                    f"{', '.join(f'`{s}`' for s in f.suffixes) or '—'} | {', '.join(sorted(f.entries))} |")
    return "\n".join(rows)


TABLES: dict[str, Callable[[], str]] = {"hypotheses": hypotheses, "procedures": procedures,
                                        "skip-kinds": skip_kinds, "formats": formats}
_REGION = re.compile(r"(<!-- generated: ([\w-]+) -->\n)(.*?)(<!-- end generated -->)", re.S)


def regenerate(text: str) -> str:
    def table(m: re.Match[str]) -> str:
        if m.group(2) not in TABLES:
            raise SystemExit(f"unknown generated table `{m.group(2)}` (known: {', '.join(TABLES)})")
        return m.group(1) + TABLES[m.group(2)]() + "\n" + m.group(4)

    return _REGION.sub(table, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a table is stale")
    args = parser.parse_args(argv)
    stale = []
    for path in sorted(DOCS.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        new = regenerate(text)
        if new != text:
            stale.append(path.name)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    verb = "stale" if args.check else "regenerated"
    print(f"{verb}: {', '.join(stale)}" if stale else "every generated table is current")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
