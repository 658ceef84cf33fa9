"""symabsorb explore: spaces in the language, the enumerator's dedupe, the evidence search, the atlas,
resumable runs, and the Dask path against the in-process path. Tiny spaces only (seconds)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import sympy as sp

from symabsorb.dsl.errors import SpecError
from symabsorb.dsl.formatter import format_module
from symabsorb.dsl.parser import parse_text
from symabsorb.model.functions import Z, sigmoid
from symabsorb.model.resolve import resolve_text
from tests.helpers import require_module

SMALL = """
space small = { primitives: [tanh, sigmoid, relu, abs], constants: [1/2, 2], size: 4 }
"""
TINY = """
space tiny = { primitives: [tanh, abs], constants: [2], operators: [+, *], size: 3 }
space leaky = {
    family: a*z + b*abs(z)
    range a: [-1, 1]
    range b: [0, 1]
    grid: 3
}
"""


def _space(text: str, name: str | None = None) -> Any:
    spaces = resolve_text(text).spaces
    return spaces[0] if name is None else next(s for s in spaces if s.name == name)


# ---- the language ----------------------------------------------------------------------------------------


def test_space_declarations_parse_format_and_resolve() -> None:
    module = parse_text(SMALL + TINY)
    again = parse_text(format_module(module))
    assert again == module
    small = _space(SMALL)
    assert [p.name for p in small.primitives] == ["tanh", "sigmoid", "relu", "abs"]
    assert small.constants == (sp.Rational(1, 2), sp.Integer(2)) and small.size == 4
    leaky = _space(TINY, "leaky")
    assert leaky.parametric and [str(r.symbol) for r in leaky.ranges] == ["a", "b"]
    assert leaky.family == sp.Symbol("a", real=True) * Z + sp.Symbol("b", real=True) * sp.Abs(Z)


@pytest.mark.parametrize("text, message", [
    ("space s = { primitives: [tanh], size: 40 }", "size 40 is out of range"),
    ("space s = { primitives: [tahn], size: 3 }", "unknown activation `tahn`"),
    ("space s = { primitives: [swiglu], size: 3 }", "gated unit"),
    ("space s = { family: a*z, range a: [1, -1] }", "low < high"),
    ("space s = { family: a*z, primitives: [tanh], range a: [0, 1] }", "mixes `family:`"),
    ("space s = { family: a*z + c }", "one or two `range` lines"),
    ("space s = { size: 3, size: 4 }", "appears twice"),
])
def test_bad_spaces_are_positioned_errors(text: str, message: str) -> None:
    with pytest.raises(SpecError) as err:
        resolve_text(text)
    assert message in str(err.value)


# ---- enumeration and fingerprints ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def enumeration() -> Any:
    pytest.importorskip("flint")
    from symabsorb.explore.enumerate import enumerate_space

    return enumerate_space(_space(SMALL))


def test_merged_duplicates_are_really_equal(enumeration: Any) -> None:
    from symabsorb.analysis.engine import identical

    assert enumeration.proved > 0 and len(enumeration.merged_exprs) == enumeration.proved
    for dropped, kept in enumeration.merged_exprs:
        assert identical(dropped, kept, "kept").status.value == "proved", (dropped, kept)
    assert ("tanh(relu(z))", "relu(tanh(z))") in enumeration.merges


def test_distinct_survivors_really_differ(enumeration: Any) -> None:
    from symabsorb.explore.fingerprint import certainly_different

    survivors = enumeration.survivors
    assert len({s.expr for s in survivors}) == len(survivors)
    unresolved = {frozenset(p) for p in enumeration.unresolved}
    for i, a in enumerate(survivors):
        for b in survivors[:i]:
            differ = certainly_different(a.fingerprint, b.fingerprint) is not None
            assert differ or frozenset((a.text, b.text)) in unresolved, (a.text, b.text)


def test_enclosures_contain_the_true_value() -> None:
    pytest.importorskip("flint")
    import mpmath

    from symabsorb.explore.enclosure import NotEnclosable, enclose

    expr = Z * sigmoid(Z) + sp.erf(sp.Max(0, Z)) - sp.tanh(2 * Z) ** 2
    for p in (Fraction(-3, 2), Fraction(1, 3), Fraction(5, 2)):
        ball = enclose(expr, p)
        x = mpmath.mpf(p.numerator) / p.denominator
        true = x / (1 + mpmath.exp(-x)) + mpmath.erf(max(x, 0)) - mpmath.tanh(2 * x) ** 2
        assert float(ball.lower()) - 1e-15 <= float(true) <= float(ball.upper()) + 1e-15 and float(ball.rad()) < 1e-12
    with pytest.raises(NotEnclosable):
        enclose(sp.log(Z), Fraction(-1))


# ---- the evidence search -----------------------------------------------------------------------------


def test_a_planted_absorbable_block_is_found_and_verified_exactly() -> None:
    np = require_module("numpy", "explore")
    require_module("scipy", "explore")
    from symabsorb.explore.search import BlockProblem, search_block
    from symabsorb.explore.verify import verify_candidate

    # ReLU, units 0 and 1 satisfy W_down[:,S] W_up[S,:] = -I: the flip witness absorbs the skip.
    relu = sp.Max(0, Z)
    planted = BlockProblem(2, 3, np.array([[1, 0], [0, 1], [1, 1]]), np.array([[-1, 0, 1], [0, -1, 2]]), None)
    outcome = search_block(relu, planted, 4, np.random.default_rng(1))
    assert outcome.candidate
    witness = verify_candidate(relu, planted, outcome)
    assert witness is not None and witness.proof.startswith("exact")
    # the witness really absorbs: B'(x) = x + B(x) at exact rational points
    up = sp.Matrix([[sp.Rational(Fraction(v)) for v in row] for row in witness.w_up])
    down = sp.Matrix([[sp.Rational(Fraction(v)) for v in row] for row in witness.w_down])
    for x in (sp.Matrix([3, -2]), sp.Matrix([sp.Rational(-1, 3), sp.Rational(5, 7)])):
        lhs = down * (up * x).applyfunc(lambda t: sp.Max(0, t))
        rhs = x + sp.Matrix(planted.w_down.tolist()) * (sp.Matrix(planted.w_up.tolist()) * x).applyfunc(
            lambda t: sp.Max(0, t))
        assert sp.simplify(lhs - rhs) == sp.zeros(2, 1)
    # gated (GLU): the gate-flip condition planted, found and verified
    glu = BlockProblem(2, 3, np.array([[1, 0], [0, 1], [1, 1]]), np.array([[-1, 0, 1], [0, -1, 2]]),
                       np.array([[1, 1], [1, -1], [2, 1]]))
    outcome = search_block(sigmoid(Z), glu, 4, np.random.default_rng(3))
    assert outcome.candidate and verify_candidate(sigmoid(Z), glu, outcome) is not None


def test_generic_weights_give_no_witness() -> None:
    np = require_module("numpy", "explore")
    require_module("scipy", "explore")
    from symabsorb.explore.search import make_problem, search_block

    rng = np.random.default_rng(0)
    problem = make_problem(rng, 2, 2, False)
    outcome = search_block(Z + sp.tanh(Z), problem, 2, rng)
    assert not outcome.candidate and outcome.best_residual > 1e-4


def test_cpu_budget_stops_a_case() -> None:
    from symabsorb.explore.classify import ClassifyTask, classify_task
    from symabsorb.explore.wire import to_wire

    hard = to_wire(sp.tanh(sp.exp(sp.erf(Z))))
    record = classify_task(ClassifyTask("b", "classify", "s", "hard", hard, False, 0.01))
    assert record["status"] == "budget" and record["verdict"] == "open"


# ---- whole runs: in-process, Dask, resume, atlas -----------------------------------------------------------


def _settings() -> Any:
    from symabsorb.explore.run import ExploreSettings

    return ExploreSettings(budget=60.0, evidence_budget=60.0, sizes=((2, 2),), starts=2, stacks=False)


def _records(directory: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for line in (directory / "cases.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record.pop("cpu_s")
        record.pop("mac")  # an HMAC over the record, cpu_s included
        out[record["id"]] = record
    return out


@pytest.fixture(scope="module")
def in_process_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    require_module("numpy", "explore")
    require_module("scipy", "explore")
    pytest.importorskip("flint")
    from symabsorb.explore.executors import InProcessExecutor
    from symabsorb.explore.run import explore

    out = tmp_path_factory.mktemp("inproc")
    result = explore(resolve_text(TINY), out, InProcessExecutor(), _settings())
    result.store.close()
    return out, result


def test_second_run_resumes_without_running_a_case(in_process_run: tuple[Path, Any]) -> None:
    from symabsorb.explore.executors import InProcessExecutor
    from symabsorb.explore.run import explore

    out, first = in_process_run
    assert sum(p.ran for p in first.phases) > 0
    again = explore(resolve_text(TINY), out, InProcessExecutor(), _settings())
    again.store.close()
    assert [p.ran for p in again.phases] == [0] * len(again.phases)
    assert all(p.resumed == p.total for p in again.phases)


def test_atlas_counts_frontier_family_and_conjectures(in_process_run: tuple[Path, Any]) -> None:
    from symabsorb.explore.atlas import build_atlas
    from symabsorb.report.atlas import family_svg, render_atlas

    _, result = in_process_run
    atlas = build_atlas("t", result.spaces, result.store.records, result.enumerations, {})
    tiny, leaky = atlas.spaces
    assert tiny.cases == 2 * tiny.enumeration["survivors"]
    decided = sum(r.count for r in tiny.counts if r.verdict != "open")
    assert decided + len(tiny.open_cases) == tiny.cases  # a conjecture never moves a case out of `open`
    assert all(c.conjecture is not None for c in tiny.open_cases if c.status == "done")
    assert sum(len(g.cases) for g in tiny.groups) == len(tiny.open_cases)
    assert leaky.family is not None and leaky.family.conflicts == ()
    assert leaky.family.agree > 0
    svg = family_svg(leaky.family, False, "leaky")
    assert svg.startswith("<svg") and svg.count("<rect") >= 9
    md = render_atlas(atlas, "md")
    assert "### Frontier" in md and "Verdict regions" in md
    data = json.loads(render_atlas(atlas, "json"))
    assert data["conjectures_counted_as_decided"] == 0
    assert "<svg" in render_atlas(atlas, "html")


@pytest.mark.slow  # starts a local Dask cluster (seconds of start-up)
def test_dask_and_in_process_give_identical_results(in_process_run: tuple[Path, Any], tmp_path: Path) -> None:
    require_module("distributed", "explore")
    from symabsorb.explore.executors import DaskExecutor
    from symabsorb.explore.run import explore

    out, _ = in_process_run
    executor = DaskExecutor(None, workers=1)
    try:
        result = explore(resolve_text(TINY), tmp_path, executor, _settings())
        result.store.close()
    finally:
        executor.close()
    assert _records(tmp_path) == _records(out)


def test_scan_finds_layers_by_tensor_names(tmp_path: Path) -> None:
    np = require_module("numpy", "explore")
    require_module("scipy", "explore")
    from symabsorb.explore.executors import InProcessExecutor
    from symabsorb.explore.scan import scan
    from symabsorb.explore.store import ResultStore

    rng = np.random.default_rng(0)
    layers = {}
    for i in range(2):
        layers[f"encoder.layer.{i}.intermediate.dense.weight"] = rng.standard_normal((6, 3))
        layers[f"encoder.layer.{i}.output.dense.weight"] = rng.standard_normal((3, 6))
        layers[f"encoder.layer.{i}.attention.output.dense.weight"] = rng.standard_normal((3, 3))
    np.savez(tmp_path / "bert.npz", **layers)
    flip = {"W_up": np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), "W_down": np.array([[-1.0, 0.0, 1.0],
                                                                                          [0.0, -1.0, 2.0]])}
    np.savez(tmp_path / "tiny.npz", **flip)
    (tmp_path / "notes.npz").write_bytes(b"not a zip file")
    store = ResultStore(tmp_path / "results")
    records, skipped = scan(tmp_path, store, InProcessExecutor(), None, 120.0)
    store.close()
    assert [(Path(r["file"]).name, r["layer"]) for r in records] == [
        ("bert.npz", "encoder.layer.0."), ("bert.npz", "encoder.layer.1."), ("tiny.npz", "")]
    assert all(r["status"] == "done" for r in records), records
    assert records[2]["verdict"] == "absorbable"  # gelu (the default): W_down[:,S] W_up[S,:] = -I for S = {0, 1}
    assert [Path(p).name for p, _ in skipped] == ["notes.npz"]


def test_cli_explore_writes_the_atlas_and_resumes(tmp_path: Path) -> None:
    require_module("numpy", "explore")
    require_module("scipy", "explore")
    pytest.importorskip("flint")
    from symabsorb.cli import main

    spec = tmp_path / "s.absorb"
    spec.write_text("space s = { primitives: [tanh, abs], constants: [2], size: 2 }\n", encoding="utf-8")
    args = [str(spec), "--in-process", "--no-stacks", "--sizes", "2x2", "--starts", "1",
            "--results", str(tmp_path / "r"), "-o", str(tmp_path / "atlas.html")]
    assert main(["explore", *args]) == 0
    assert (tmp_path / "r" / "atlas.md").exists() and (tmp_path / "atlas.html").read_text().startswith("<!DOCTYPE")
    lines = (tmp_path / "r" / "cases.jsonl").read_text().splitlines()
    assert main(["explore", *args]) == 0
    assert (tmp_path / "r" / "cases.jsonl").read_text().splitlines() == lines


def test_expressions_cross_to_workers_as_data() -> None:
    from symabsorb.explore.wire import from_wire, to_wire

    a = sp.Symbol("a", positive=True)
    for e in (Z * sigmoid(Z) + sp.erf(sp.Max(0, Z)) - sp.tanh(2 * Z) ** 2, a * Z + sp.Abs(Z) / 3,
              sp.Piecewise((Z**2, Z > 1), (sp.pi * Z, True)), sp.sqrt(1 + Z**2) - sp.E):
        assert from_wire(json.loads(json.dumps(to_wire(e)))) == e
    with pytest.raises(ValueError):
        to_wire(sp.gamma(Z))
