"""Theorem D under a normalisation after the residual sum (referee of issue 30: F1-F7).

Theorem D decides the *reduced* block of Lemma PN (skip ``PM``, output weights ``P·W_down``, ``P = I − 11ᵀ/d``),
never the untransformed one. Independent oracle for the block ``n1`` of the referee's ``wln.absorb`` (ReLU,
``W_up = I``, ``W_down = [[1, 1], [1, 1]]``, ``M = I``, post-LN): ``P·W_down = 0``, so ``P(Mx + B(x)) = Px =
((x₁ − x₂)/2)(1, −1)``, a nonzero linear map, and LN(u) = LN(v) iff ``Pu = Pv`` (ε > 0). One unit ``b·relu(uᵀx)``
is never a nonzero linear function (it vanishes on a half-space), so width 1 fails; ``relu(t) − relu(−t) = t``
gives width 2: ``w* = 2`` (the untransformed block has ``w* = 4``).
"""

from __future__ import annotations

import json
import random
from fractions import Fraction
from typing import Any

import pytest

import symabsorb
from symabsorb.theory.library import default_library
from tests.helpers import decide, width_witness

F = Fraction

WLN = """block n1 { activation: relu
  W_up: [[1, 0], [0, 1]]
  W_down: [[1, 1], [1, 1]]
  norm: post-ln }
absorb n1
width n1
"""


def _relu(t: Fraction) -> Fraction:
    return t if t > 0 else F(0)


def _centre(v: list[Fraction]) -> list[Fraction]:
    mean = sum(v, F(0)) / len(v)
    return [x - mean for x in v]


def test_post_ln_width_uses_the_reduced_block() -> None:
    rep = symabsorb.prove(symabsorb.load(WLN))
    absorb, width = rep.results
    assert width.verdict == "minimal-width" and width.decided_by == "Theorem D"
    assert width.condition == "w* = 2"  # was w* = 4: Theorem D on the untransformed W_down
    block = symabsorb.load(WLN).resolved.blocks[0]
    base = decide(block, default_library())
    witness, why = width_witness(block, base, 2)
    assert witness is not None, why
    up = [[F(str(x)) for x in witness.w_up.tolist()[i]] for i in range(witness.w_up.rows)]
    down = [[F(str(x)) for x in witness.w_down.tolist()[i]] for i in range(witness.w_down.rows)]
    assert len(up) == 2
    rng = random.Random(7)
    for _ in range(50):  # P·B'(x) == P·(x + B(x)) exactly: the same LayerNorm output
        x = [F(rng.randint(-50, 50), rng.randint(1, 9)) for _ in range(2)]
        h = [_relu(sum((r[j] * x[j] for j in range(2)), F(0))) for r in up]
        b_prime = [sum((down[i][j] * h[j] for j in range(len(h))), F(0)) for i in range(2)]
        target = [x[i] + _relu(x[0]) + _relu(x[1]) for i in range(2)]
        assert _centre(b_prime) == _centre(target)
    assert absorb.verdict == "absorbable"


def test_post_rms_width_uses_the_block_without_the_norm() -> None:
    # degenerate (collinear rows of W_up): Theorem D decides both; the post-RMSNorm reduction is the block
    # without the norm, so the two width answers agree
    spec = WLN.replace("[[1, 0], [0, 1]]", "[[1, 0], [2, 0]]")
    normed = symabsorb.prove(symabsorb.load(spec.replace("post-ln", "post-rms"))).results[1]
    plain = symabsorb.prove(symabsorb.load(spec.replace("\n  norm: post-ln", ""))).results[1]
    assert plain.decided_by == normed.decided_by == "Theorem D"
    assert normed.condition == plain.condition


# ---- verify: the reduced block, the re-derived verdict compared (F1, F2), a sandwich witness (F5) ----------

PLN = """block postln { activation: relu
  W_up: [[3, 3], [-3, -3]]
  W_down: [[1, 0], [0, 1]]
  norm: post-ln }
absorb postln
"""

# the referee's sw34.absorb: GELU-tanh, degenerate (zero rows), decided by Cor. D-sandwich's sufficient half
SW34 = """block b34 { activation: gelu_tanh
 skip: [[1, 1], [0, -1]]
 W_up: [[0, 0], [0, 0], [0, -3], [0, 1], [-2, -3]]
 W_down: [[0, -2, -2, 3, -2], [-2, 3, 2, -2, -1]] }
absorb b34
"""


def _report(tmp_path: Any, text: str) -> tuple[Any, dict[str, Any]]:
    from symabsorb.cli import main

    spec = tmp_path / "s.absorb"
    spec.write_text(text)
    report = tmp_path / "r.json"
    assert main(["prove", str(spec), "-o", str(report), "--no-cache"]) in (0, 1)
    return report, json.loads(report.read_text())


def _verify(report: Any, data: dict[str, Any]) -> int:
    from symabsorb.cli import main

    report.write_text(json.dumps(data))
    return main(["verify", str(report), "--no-cache"])  # type: ignore[no-any-return]


def test_verify_post_ln_theorem_d(tmp_path: Any) -> None:
    pytest.importorskip("numpy", reason="verify needs numpy (the extras)")
    report, data = _report(tmp_path, PLN)
    d = data["queries"][0]["derivation"]
    # P W_down = P, rows ±(3, 3) lie in ker P: the reduced block is absorbable (the referee's pln.json)
    assert d["decided_by"] == "thm-D" and d["verdict"] == "absorbable"
    assert _verify(report, data) == 0  # F1: was rejected (witness compared with the untransformed block)
    bad = json.loads(json.dumps(data))
    bad["queries"][0]["derivation"]["verdict"] = "not-absorbable"
    bad["queries"][0]["derivation"]["witness"] = None
    assert _verify(report, bad) == 1  # F2: was accepted (the untransformed block is not absorbable at width 2)


def test_verify_sandwich_witness(tmp_path: Any) -> None:
    pytest.importorskip("numpy", reason="verify needs numpy (the extras)")
    report, data = _report(tmp_path, SW34)
    d = data["queries"][0]["derivation"]
    assert d["decided_by"] == "cor-D-sandwich" and d["verdict"] == "absorbable"
    assert _verify(report, data) == 0  # F5: was rejected (checked as a flip witness with S = ∅)
    bad = json.loads(json.dumps(data))
    bad["queries"][0]["derivation"]["witness"]["W_down"][0][0] = "1"
    assert _verify(report, bad) == 1
    bad = json.loads(json.dumps(data))
    bad["queries"][0]["derivation"]["verdict"] = "not-absorbable"
    assert _verify(report, bad) == 1


# ---- verify: a file witness compared exactly (F4) --------------------------------------------------------

FLK = """block flk { activation: leaky_relu(alpha = 1/3)
  dim: 2
  skip: [[1, 2], [0, -1]]
  weights: "lk.npz" }
absorb flk
"""


def test_verify_file_witness_exactly(tmp_path: Any) -> None:
    np = pytest.importorskip("numpy", reason="file weights need numpy (the extras)")
    np.savez(tmp_path / "lk.npz", W_up=np.array([[1.0, 2.0], [-2.0, -4.0], [0.0, 0.0], [1.0, 1.0], [3.0, 3.0]]),
             W_down=np.array([[1.0, 2.0, 5.0, 0.0, 1.0], [3.0, -1.0, 7.0, 1.0, -1.0]]))
    report, data = _report(tmp_path, FLK)
    d = data["queries"][0]["derivation"]
    assert d["decided_by"] == "thm-D" and d["verdict"] == "absorbable"
    assert _verify(report, data) == 0
    bad = json.loads(json.dumps(data))
    entry = bad["queries"][0]["derivation"]["witness"]["W_up"][0][0]
    assert Fraction(entry) == 1
    # rounds to the same float64, is not the same number: the referee's f_t2.json (was accepted)
    bad["queries"][0]["derivation"]["witness"]["W_up"][0][0] = "1.000000000000000000000000001"
    assert _verify(report, bad) == 1


# ---- absorb -o: rounding a non-dyadic exact witness is said (F6) -----------------------------------------

ND = """block nd { activation: leaky_relu(alpha = 1/5)
  W_up: [[3, 3], [-3, -3]]
  W_down: [[1, 0], [0, 1]] }
width nd
"""


def test_absorb_output_says_it_rounds(tmp_path: Any, capsys: Any) -> None:
    np = pytest.importorskip("numpy", reason="absorb -o needs numpy (the extras)")
    from symabsorb.cli import main

    spec = tmp_path / "nd.absorb"
    spec.write_text(ND)
    out = tmp_path / "nd.npz"
    assert main(["absorb", str(spec), "--block", "nd", "--width", "4", "-o", str(out), "--no-cache"]) == 0
    text = capsys.readouterr().out
    assert "not float64 numbers (in W_down)" in text  # 41/12 and the like (was silent)
    assert np.load(out)["W_down"].shape == (2, 4)
    spec.write_text(WLN)
    assert main(["absorb", str(spec), "--block", "n1", "--width", "2", "-o", str(out), "--no-cache"]) == 0
    assert "float64 numbers" not in capsys.readouterr().out  # an exact float64 witness: no note


def test_verify_post_rms_theorem_d(tmp_path: Any) -> None:
    pytest.importorskip("numpy", reason="verify needs numpy (the extras)")
    # without the norm: one line atom ±(1, 1) with C = 3(e1 + e2) ≠ 0 needs a unit, T has rank 2: not at width 2
    report, data = _report(tmp_path, PLN.replace("post-ln", "post-rms"))
    d = data["queries"][0]["derivation"]
    assert d["decided_by"] == "thm-D" and d["verdict"] == "not-absorbable"
    assert _verify(report, data) == 0
    bad = json.loads(json.dumps(data))
    bad["queries"][0]["derivation"]["verdict"] = "absorbable"
    bad["queries"][0]["derivation"]["witness"] = {"index_set": [], "W_up": [["3", "3"], ["-3", "-3"]],
                                                  "W_down": [["1", "0"], ["0", "1"]], "W_gate": None}
    assert _verify(report, bad) == 1


def test_theorem_d_extra_unit_is_delta_not_the_layernorm_epsilon() -> None:
    """Issue 28 leftover: Theorem D's extra unit for a nonzero constant and LayerNorm's ε met in one
    post-LN derivation under one letter; Theorem D's is δ in its statement, its proof and the
    procedure's steps, in every format, while LayerNorm keeps ε."""
    import re

    rep = symabsorb.prove(symabsorb.load(WLN))
    for fmt in ("md", "html", "tex", "json"):
        out = re.sub(r"\s+", "", re.sub(r"<[^>]+>", "", rep.render(fmt)))  # HTML's MathML: its text
        out = out.replace("\\\\", "\\") if fmt == "json" else out  # JSON's escaped backslash
        assert re.search(r"k\+(\\delta|δ)", out), fmt  # Theorem D's count k + δ
        assert re.search(r"(\\delta|δ)=0", out), fmt  # the procedure's step: no zero-row constant
        assert not re.search(r"k\+(\\varepsilon|ε)|(\\varepsilon|ε)=[01](?![0-9.])|k[-−](\\varepsilon|ε)", out), fmt
        assert re.search(r"\\varepsilon|ε", out), fmt  # LayerNorm's ε is still there
    assert "- k - delta" in default_library().results["thm-D"].conclusion.condition_plain
