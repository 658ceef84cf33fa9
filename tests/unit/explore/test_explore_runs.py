"""`explore` frictions (issue 21, item 12): inconclusive residuals, the stack phase with --space, counts
and an honest ETA, why open cases were not searched, --budget's help, result labels, Markdown cells."""

from __future__ import annotations

import io
from typing import Any

import pytest

from symabsorb.explore.atlas import OpenCase, SpaceAtlas
from symabsorb.explore.evidence import INCONCLUSIVE_RESIDUAL, _conjecture
from symabsorb.explore.progress import PhaseProgress, eta_text
from symabsorb.explore.search import WITNESS_TOLERANCE


def _rows(*residuals: float) -> list[dict[str, Any]]:
    return [{"d": 2, "m": m, "best_residual": r} for m, r in zip((2, 3, 4), residuals, strict=False)]


def test_a_small_residual_is_inconclusive_not_a_conjecture_against() -> None:
    assert WITNESS_TOLERANCE < INCONCLUSIVE_RESIDUAL == 1e-5
    kind, text = _conjecture(_rows(1e-2, 1.8e-8, 3e-2), True, 6)
    assert kind == "inconclusive" and "not absorbable" not in text and text.startswith("inconclusive")
    assert "1.8e-08" in text and "d=2, m=3" in text
    for best in (9.9e-6, 2e-9):
        assert _conjecture(_rows(1e-2, best), True, 6)[0] == "inconclusive"
    kind, text = _conjecture(_rows(1e-2, 2e-3), True, 6)
    assert kind == "no-witness" and "conjecture: not absorbable" in text


def test_eta_counts_only_the_cases_this_run_finished() -> None:
    now = [100.0]
    out = io.StringIO()
    p = PhaseProgress(out, clock=lambda: now[0], live=False)
    p("classify", 90, 100)  # 90 resumed from the results file: no estimate yet
    assert out.getvalue().splitlines()[-1] == "classify: 90/100, 90 resumed, ETA —"
    now[0] = 110.0
    p("classify", 92, 100)  # 2 cases in 10 s: 8 left take 40 s (a rate over all 92 would say 1 s)
    assert p.eta("classify", 92, 100) == "ETA 40s"
    now[0] = 150.0
    p("classify", 100, 100)
    assert out.getvalue().splitlines()[-1] == "classify: 100/100, 90 resumed, done"
    assert eta_text(1, 100, 90.0) == "ETA 2h30m" and eta_text(3, 2, 90.0) == "ETA 1m00s"


def test_live_bars_show_counts_and_the_eta() -> None:
    pytest.importorskip("rich")
    out = io.StringIO()
    p = PhaseProgress(out, clock=lambda: 0.0, live=True)
    p("evidence", 3, 7)
    assert p.bars is not None
    columns = [type(c).__name__ for c in p.bars.columns]
    assert "MofNCompleteColumn" in columns and "BarColumn" in columns
    task = p.bars.tasks[0]
    assert (task.completed, task.total, task.fields["eta"]) == (3, 7, "ETA —")
    p.close()
    assert p.bars is None


def _space(cases: tuple[OpenCase, ...]) -> SpaceAtlas:
    return SpaceAtlas("fam", "space fam = { family: a*z, range a: [-1, 1], grid: 3 }", True, None, (), len(cases),
                      cases, (), (), None, 0.0)


def test_open_family_cases_say_why_they_were_not_searched() -> None:
    from symabsorb.explore.atlas import _why_not_searched
    from symabsorb.report.atlas import _evidence_text, _not_searched

    why = _why_not_searched({"status": "done"}, True, True)
    assert "grid points are classified, not searched" in why
    assert "--case-budget" in _why_not_searched({"status": "budget"}, False, True)
    assert "--no-evidence" in _why_not_searched({"status": "done"}, False, False)
    cases = (OpenCase("1", "a = 1", "z", True, "done", (), None, why),
             OpenCase("2", "a = 0", "0", False, "done", (), None, why))
    assert _evidence_text(cases[0]) == "not searched: " + why
    (line,) = _not_searched(_space(cases))
    assert line.startswith("2 open cases (1 gated) were not searched for absorbing weights: a family's grid")


def test_markdown_cells_use_labels_and_no_entities() -> None:
    from symabsorb.explore.atlas import Atlas, CountRow, FamilyMap
    from symabsorb.report.atlas import render_atlas_markdown, result_label

    assert result_label("thm10") == "Thm. 10" and result_label(None) == "—" and result_label("nope") == "nope"
    family = FamilyMap(("a",), (("-1", "1"),), ((("-1",), False, "conditional", "thm10"),),
                       ((("<0",), False, "conditional", "thm10"), ((">0",), False, "impossible", "prop5")),
                       1, 0, 0, 0, ())
    space = SpaceAtlas("fam", "space fam = {}", True, None, (CountRow(False, "conditional", "thm10", 1),), 1, (), (),
                       (), family, 0.0)
    text = render_atlas_markdown(Atlas("t", (space,), (), {}))
    assert "&lt;" not in text and "&gt;" not in text and "&amp;" not in text
    assert "| a \\<0 | ungated | conditional | Thm. 10 |" in text
    assert "| ungated | conditional | Thm. 10 | 1 |" in text
    assert "| thm10 " not in text and "Prop. 5" in text


def _explore_args() -> Any:
    from symabsorb.cli import build_parser

    return build_parser()


def test_budget_help_says_what_explore_does_with_it() -> None:
    parser = _explore_args()
    sub = next(a for a in parser._actions if a.dest == "command" or getattr(a, "choices", None))
    explore = sub.choices["explore"]  # type: ignore[union-attr]
    budget = next(a for a in explore._actions if a.dest == "budget")
    assert budget.default == 1e7
    assert "--case-budget" in (budget.help or "") and "default: 100" not in (budget.help or "")
    stacks = next(a for a in explore._actions if a.dest == "stacks")
    assert "--space" in (stacks.help or "")


def test_space_runs_no_stack_phase_unless_asked(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from symabsorb import cli
    from symabsorb.explore import run

    seen: list[bool] = []
    real = run.explore

    def spy(spec: Any, outdir: Any, executor: Any, settings: Any, spaces: Any = None, progress: Any = None) -> Any:
        seen.append(settings.stacks)
        return real(spec, outdir, executor, settings.__class__(**{**settings.__dict__, "stacks": False,
                                                                  "evidence": False}), spaces, progress)

    monkeypatch.setattr(run, "explore", spy)
    spec = tmp_path / "s.absorb"
    spec.write_text("space s = { primitives: [abs], size: 1 }\n", encoding="utf-8")
    base = [str(spec), "--in-process", "--case-budget", "20", "--no-evidence", "--results", str(tmp_path / "r")]
    assert cli.main(["explore", *base, "--space", "s"]) == 0
    assert cli.main(["explore", *base, "--space", "s", "--stacks"]) == 0
    assert cli.main(["explore", *base]) == 0  # --no-evidence: the stack search is evidence too
    assert cli.main(["explore", *base, "--no-stacks"]) == 0
    assert cli.main(["explore", *(a for a in base if a != "--no-evidence")]) == 0  # no space: stacks by default
    assert seen == [False, True, False, False, True]
    assert cli.main(["explore", *base, "--stacks", "--no-stacks"]) == 2
