"""Reading ``.absorb`` files from disk and following their imports."""

from __future__ import annotations

from pathlib import Path

from . import syntax as s
from .errors import Span, SpecError, SpecImportError
from .parser import parse_text

__all__ = ["load_modules", "read_source"]


def read_source(path: Path, span: Span | None = None) -> str:
    """The text of ``path``; a :class:`SpecError` (never a traceback) when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecImportError(f"cannot find `{path}`", span, f"`{path}`", "an existing .absorb file",
                              "paths in `import` are relative to the importing file") from None
    except IsADirectoryError:
        raise SpecImportError(f"`{path}` is a directory", span, "a directory", "a .absorb file") from None
    except UnicodeDecodeError as err:
        raise SpecError(f"`{path}` is not UTF-8 text", span, f"byte {err.start}: {err.reason}",
                        "a UTF-8 text file") from None
    except OSError as err:
        raise SpecImportError(f"cannot read `{path}`: {err.strerror}", span) from None


def load_modules(path: str | Path, text: str | None = None) -> tuple[s.Module, ...]:
    """Parse ``path`` and every file it imports, transitively.

    Returns the modules in dependency order (an imported file before its importer, each once),
    so that declarations come before their uses. Import cycles are errors at the ``import``
    that closes the cycle.
    """
    root = Path(path)
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
        if source is None:
            source = read_source(file, via.span if via else None)
        module = parse_text(source, str(file))
        for stmt in module.statements:
            if isinstance(stmt, s.Import):
                target = file.parent / stmt.path
                try:
                    visit(target, (*chain, key), stmt, None)
                except SpecError as err:
                    if err.span is not None and err.span.file == str(file):
                        err.with_source(source)
                    raise
        done[key] = module
        order.append(module)

    visit(root, (), None, text)
    return tuple(order)
