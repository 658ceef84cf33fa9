"""The persistent facts cache: a second run reads exactly what the first computed; damaged entries,
timeouts and --no-cache never change an answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sympy as sp

from symabsorb.analysis import cache
from symabsorb.analysis.engine import DEFAULT_ORDER, _compute
from symabsorb.model import Z


def _run(args: list[str], cache_dir: Path, *extra_env: tuple[str, str]) -> str:
    env = {**os.environ, "SYMABSORB_CACHE_DIR": str(cache_dir)}
    env.pop("SYMABSORB_NO_CACHE", None)
    env.update(dict(extra_env))
    code = "import sys; from symabsorb.cli import main; sys.exit(main(sys.argv[1:]))"
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, check=True)
    return out.stdout


def _entries(d: Path) -> list[Path]:
    return sorted(d.rglob("*.facts.json"))


@pytest.mark.slow  # two cold CLI processes (the fast tier's budget: make test-fast <= 60 s)
def test_second_run_reads_identical_facts(tmp_path: Path) -> None:
    first = _run(["facts", "z*tanh(softplus(z))", "--json"], tmp_path)
    assert len(_entries(tmp_path)) == 1
    second = _run(["facts", "z*tanh(softplus(z))", "--json"], tmp_path)
    assert first == second
    assert json.loads(first)["facts"]


@pytest.mark.slow  # two cold CLI processes (the fast tier's budget: make test-fast <= 60 s)
def test_no_cache_writes_nothing(tmp_path: Path) -> None:
    _run(["facts", "gelu", "--no-cache"], tmp_path)
    assert _entries(tmp_path) == []
    _run(["facts", "gelu"], tmp_path, ("SYMABSORB_NO_CACHE", "1"))
    assert _entries(tmp_path) == []


@pytest.mark.slow  # three cold CLI processes (the fast tier's budget: make test-fast <= 60 s)
def test_damaged_entry_is_recomputed(tmp_path: Path) -> None:
    fresh = _run(["facts", "silu", "--json"], tmp_path)
    (entry,) = _entries(tmp_path)
    entry.write_bytes(b"not a pickle")
    assert _run(["facts", "silu", "--json"], tmp_path) == fresh
    entry.write_bytes(entry.read_bytes()[:3])
    assert _run(["facts", "silu", "--json"], tmp_path) == fresh


def test_key_separates_parameters_and_their_constraints() -> None:
    a_pos = sp.Symbol("a", positive=True)
    a_nonneg = sp.Symbol("a", nonnegative=True)
    assert cache.key(Z / (1 + a_pos * Z**2), False, 8) != cache.key(Z / (1 + a_nonneg * Z**2), False, 8)
    assert cache.key(Z, False, 8) != cache.key(Z, True, 8)
    assert cache.key(Z, False, 8) != cache.key(Z, False, 9)


def test_cached_value_equals_fresh_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMABSORB_CACHE_DIR", str(tmp_path))
    expr = sp.Max(0, Z) * sp.tanh(Z)
    fresh = _compute(expr, False, DEFAULT_ORDER, 30.0)
    k = cache.key(expr, False, DEFAULT_ORDER)
    cache.store(k, fresh)
    assert cache.load(k) == fresh


def test_timed_out_facts_are_not_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from symabsorb.analysis import engine

    monkeypatch.setenv("SYMABSORB_CACHE_DIR", str(tmp_path))

    from symabsorb.budget import Timeout

    def slow(expr: sp.Expr) -> object:
        raise Timeout("timeout: not decided within 1 CPU seconds")

    monkeypatch.setattr(engine, "parity_fact", slow)
    engine.analyze_expr.cache_clear()
    parts = engine.analyze_expr(sp.exp(Z) * Z + 7, False, DEFAULT_ORDER, 1.0)
    engine.analyze_expr.cache_clear()
    # the fact carries its own status: out of time (not "unknown" for good), so nothing is stored
    assert parts[0].evidence.timed_out and engine.ran_out_of_time(parts[0])
    assert not any(engine.ran_out_of_time(p) for p in parts[1:])
    assert _entries(tmp_path) == []


def test_facts_that_ran_out_of_memory_are_neither_cached_nor_replayed(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from symabsorb import budget
    from symabsorb.analysis import engine

    monkeypatch.setenv("SYMABSORB_CACHE_DIR", str(tmp_path))

    def out_of_memory(expr: sp.Expr) -> object:
        raise MemoryError

    monkeypatch.setattr(engine, "parity_fact", out_of_memory)
    before = budget.timeouts()
    engine.analyze_expr.cache_clear()
    facts = engine.analyze_expr(sp.exp(Z) * Z + 11, False, DEFAULT_ORDER, 5.0)
    engine.analyze_expr.cache_clear()
    assert "MemoryError" in (facts[0].evidence.reason or "")
    assert _entries(tmp_path) == [] and budget.timeouts() == before + 1


def test_large_witness_matrices_are_not_repeated_in_json() -> None:
    from dataclasses import replace

    from tests.helpers import require_module

    np = require_module("numpy", "weights")
    from symabsorb.model import activation_from_text
    from symabsorb.theory.derivation import Witness
    from symabsorb.theory.serialize import WITNESS_JSON_ENTRIES, derivation_to_dict
    from tests.helpers import classify

    d = classify(activation_from_text("relu"))
    small = replace(d, witness=Witness((0,), np.ones((3, 2)), np.ones((2, 3)), verified="exact"))
    assert len(derivation_to_dict(small)["witness"]["W_up"]) == 3
    m = WITNESS_JSON_ENTRIES // 4 + 1
    big = replace(d, witness=Witness((0, 1), np.ones((m, 2)), np.ones((2, m)), verified="exact"))
    out = derivation_to_dict(big)["witness"]
    assert out["W_up"] is None and out["index_set"] == [0, 1] and "absorb" in out["omitted"]


@pytest.mark.slow  # builds the LALR tables afresh (the fast tier's budget: make test-fast <= 60 s)
def test_parser_tables_are_cached_and_a_damaged_file_is_rebuilt(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from symabsorb.dsl import lalr_tables, parser

    out = _run(["classify", "relu"], tmp_path)
    assert not sorted(tmp_path.glob("parser-*.json"))  # the shipped tables were used
    # another Lark version (the shipped tables do not fit): built once, kept in the cache
    monkeypatch.setenv("SYMABSORB_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(lalr_tables, "KEY", "from another lark")
    parser.get_parser.cache_clear()
    try:
        first = parser.get_parser()
        (tables,) = sorted(tmp_path.glob("parser-*.json"))
        tables.write_bytes(b"garbage")
        parser.get_parser.cache_clear()
        assert parser.get_parser().parse("z*2", start="expr") == first.parse("z*2", start="expr")
        assert tables.read_bytes() != b"garbage"  # rewritten
    finally:
        parser.get_parser.cache_clear()
    assert out
    _run(["classify", "relu", "--no-cache"], tmp_path / "off")
    assert not (tmp_path / "off").exists()
