"""``--near EPS`` (issue 21 item 16): a float-planted block is exactly not absorbable, and the report
says it is within EPS of the condition, with the certified distance and the flip witness's measured
error; the verdict never changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import symabsorb
from symabsorb.errors import SymabsorbError
from tests.helpers import require_module, run_cli

SPEC = 'block b { activation: relu weights: "layer.npz" }\nabsorb b\n'


@pytest.fixture()
def float_planted(tmp_path: Path) -> Path:
    np = require_module("numpy", "weights")
    rng = np.random.default_rng(0)
    d, m = 6, 24
    up, down = rng.standard_normal((m, d)), rng.standard_normal((d, m))
    down[:, :d] = -np.linalg.inv(up[:d])  # the condition, up to float rounding
    assert not (down[:, :d] @ up[:d] == -np.eye(d)).all()
    np.savez(tmp_path / "layer.npz", W_up=up, W_down=down)
    spec = tmp_path / "near.absorb"
    spec.write_text(SPEC, encoding="utf-8")
    return spec


def _near_steps(report: Any) -> list[str]:
    d = report.data.answers[0].derivation
    return [s.text for s in d.steps if s.text.startswith("Near the condition")]


def test_float_planted_block_is_near_but_stays_not_absorbable(float_planted: Path) -> None:
    plain = symabsorb.prove(float_planted)
    near = symabsorb.prove(float_planted, near=1e-9)
    assert plain.verdicts == near.verdicts == {"absorb b": "not-absorbable"}
    assert _near_steps(plain) == []
    (step,) = _near_steps(near)
    assert "within $\\varepsilon = 1 \\cdot 10^{-9}$ of the condition" in step and "$|S| = 6$" in step
    assert "certified: every index set is at distance" in step and "so the exact verdict stands" in step
    assert "measured max relative error" in step
    a, b = plain.data.answers[0].derivation, near.data.answers[0].derivation
    assert (a.verdict, a.scope, a.witness) == (b.verdict, b.scope, b.witness)
    assert (a.certificate.kind, a.certificate.distance) == (b.certificate.kind, b.certificate.distance) == (
        "separating", a.certificate.distance) and a.certificate.distance > 0
    assert len(b.steps) == len(a.steps) + 1 and b.steps[-1] == a.steps[-1]  # the conclusion is unchanged
    assert any(n.startswith("within 1e-09 of the condition") for n in b.notes)
    tight = symabsorb.prove(float_planted, near=1e-30)
    assert tight.verdicts == plain.verdicts and "not within" in _near_steps(tight)[0]


def test_near_on_the_cli_prove_and_absorb(float_planted: Path) -> None:
    code, out, _, _ = run_cli("prove", str(float_planted), "--near", "1e-9", "--format", "md")
    assert code == 0 and "Near the condition (`--near 1e-09`)" in out and "**Verdict: not absorbable**" in out
    code, out, _, _ = run_cli("absorb", str(float_planted), "--block", "b", "--near", "1e-9")
    assert code == 1 and "within 1e-09 of the condition" in out and "no witness" in out
    code, _, err, _ = run_cli("prove", str(float_planted), "--near", "-1")
    assert code == 2 and "--near" in err


def test_near_leaves_exact_and_symbolic_answers_alone() -> None:
    require_module("numpy", "weights")  # the nearest index set is found by the float search
    spec = ("block planted { activation: relu dim: 2 width: 3 W_up: [[1, 0], [0, 1], [1, 1]] "
            "W_down: [[-1, 0, 1/2], [0, -1, 1/3]] }\n"
            "block generic { activation: relu W_up: [[1, 2], [3, -1], [1, 1]] W_down: [[1, 0, 2], [-1, 1, 1]] }\n"
            "block sym { activation: relu dim: d width: 4*d }\n"
            "absorb planted\nabsorb generic\nabsorb sym\n")
    plain, near = symabsorb.prove(spec), symabsorb.prove(spec, near=0.5)
    assert plain.verdicts == near.verdicts
    assert _near_steps(near) == []  # absorbable: nothing to add
    generic = [s.text for s in near.data.answers[1].derivation.steps if s.text.startswith("Near the condition")]
    assert len(generic) == 1 and "certified: every index set is at distance" in generic[0]
    assert near.data.answers[2].derivation == plain.data.answers[2].derivation  # symbolic weights


@pytest.mark.parametrize("bad", [-1.0, float("inf"), float("nan"), "1e-9", True])
def test_near_must_be_a_finite_nonnegative_number(bad: Any) -> None:
    with pytest.raises(SymabsorbError, match="near="):
        symabsorb.prove("block b { activation: relu dim: d width: 4*d }\nabsorb b\n", near=bad)
