"""Reading ``.absorb`` files from disk and following their imports.

Files are untrusted: only regular files are read, up to the ``input-bytes`` limit; an import must
name a ``.absorb`` file inside the spec's directory tree (unless ``--allow-outside``); an error
about a file never quotes another file's content.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..budget import current, input_root
from ..paths import confine, read_input
from . import syntax as s
from .errors import Span, SpecError, SpecImportError, SpecLimitError, SpecSyntaxError, SpecSyntaxErrors, did_you_mean
from .parser import STATEMENT_KEYWORDS, parse_text

__all__ = ["load_modules", "read_source"]


def read_source(path: Path, span: Span | None = None, what: str = "spec file") -> str:
    """The text of ``path``; a :class:`SpecError` (never a traceback, never its content) when it
    cannot be read, is not a regular file, is too large or is not UTF-8."""
    data = read_input(path, span, what, expected="an existing .absorb file",
                      hint="paths in `import` are relative to the importing file" if span else "check the path")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SpecError(f"`{path}` is not UTF-8 text", span, f"an invalid byte at offset {err.start}",
                        "a UTF-8 text file") from None


def load_modules(path: str | Path, text: str | None = None) -> tuple[s.Module, ...]:
    """Parse ``path`` and every file it imports, transitively.

    Returns the modules in dependency order (an imported file before its importer, each once),
    so that declarations come before their uses. Import cycles are errors at the ``import``
    that closes the cycle.
    """
    root = Path(path)
    tree = input_root(root)
    limits = current().limits
    done: dict[Path, s.Module] = {}
    order: list[s.Module] = []

    def visit(file: Path, chain: tuple[Path, ...], via: s.Import | None, source: str | None) -> None:
        key = file.resolve()
        if key in chain:
            cycle = " -> ".join(p.name for p in (*chain[chain.index(key):], key))
            assert via is not None
            raise SpecImportError(f"import cycle: {cycle}", via.span, f'`import "{via.path}"`',
                                  "imports that form no cycle",
                                  "move the shared declarations into a file that both import")
        if key in done:
            return
        if via is not None and len(done) + len(chain) >= limits.files:
            raise SpecLimitError(f"too many imported files (more than {limits.files})", via.span,
                                 f'`import "{via.path}"`', f"at most {limits.files} files", limits.hint("files"))
        if source is None:
            source = read_source(file, via.span if via else None, "imported file" if via else "spec file")
        elif len(source.encode("utf-8")) > limits.input_bytes:
            raise SpecLimitError(f"the spec is too large ({len(source.encode('utf-8'))} bytes)",
                                 Span(str(file), 1, 1, 1, 1),
                                 f"{len(source.encode('utf-8'))} bytes", f"at most {limits.input_bytes} bytes",
                                 limits.hint("input_bytes"))
        try:
            module = parse_text(source, str(file))
        except SpecSyntaxError as err:
            if (via is not None and err.span is not None and (err.span.line, err.span.column) == _first_token(source)
                    and not _near_keyword(source, err.span)):
                # An imported file that fails at its very first token is not a spec (a key file, a
                # password file behind a link, with --allow-outside): say so without quoting it.
                raise SpecImportError(f"`{via.path}` is not a spec file", via.span, "a file that does not start "
                                      "with a statement", "a .absorb spec", "check the path of the import") from None
            if via is not None and isinstance(err, SpecSyntaxErrors):
                raise err.errors[0] from None  # an imported file: one quoted line of it, as before
            raise
        for stmt in module.statements:
            if isinstance(stmt, s.Import):
                try:
                    target = _import_target(file, stmt, tree)
                    visit(target, (*chain, key), stmt, None)
                except SpecError as err:
                    if err.span is not None and err.span.file == str(file):
                        err.with_source(source)
                    raise
        done[key] = module
        order.append(module)

    visit(root, (), None, text)
    return tuple(order)


def _first_token(text: str) -> tuple[int, int]:
    """Line and column of the first character that is neither space nor part of a comment."""
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.lstrip()
        if stripped and not stripped.startswith("#"):
            return number, len(line) - len(stripped) + 1
    return 1, 1


def _near_keyword(text: str, span: Span) -> bool:
    """Whether the word at ``span`` is a misspelt statement keyword (a spec with a typo, worth quoting)."""
    line = text.splitlines()[span.line - 1] if text.splitlines() else ""
    m = re.match(r"[A-Za-z_]+", line[span.column - 1:])
    return m is not None and did_you_mean(m.group(), STATEMENT_KEYWORDS) is not None


def _import_target(importer: Path, stmt: s.Import, tree: Path) -> Path:
    if not stmt.path.endswith(".absorb"):
        raise SpecImportError(f"cannot import `{stmt.path}`: not a .absorb file", stmt.span, f"`{stmt.path}`",
                              'a file name ending in `.absorb`', "only spec files can be imported")
    confine(importer.parent, stmt.path, tree, stmt.span, "imported file")
    return importer.parent / stmt.path
