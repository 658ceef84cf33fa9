"""Imports run one way: dsl -> model -> analysis -> theory -> weights -> explore -> report -> api -> cli."""

from __future__ import annotations

import ast
from pathlib import Path

import symabsorb

LAYERS = ["dsl", "model", "analysis", "theory", "weights", "explore", "report", "api", "cli"]  # api: the facade beside cli
PACKAGE = Path(symabsorb.__file__).parent


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "symabsorb" or len(parts) < 2:
        return None
    name = parts[1]
    return LAYERS.index(name) if name in LAYERS else None


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
