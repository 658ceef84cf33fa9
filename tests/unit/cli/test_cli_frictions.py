"""Issue 28 row 14 and 10: did-you-mean for a mistyped command, one warning line for a missing
extra (never a raw Python warning after it), a warning for a --theorems directory with no result."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

import symabsorb.api
import symabsorb.results
from tests.helpers import EXAMPLES, ROOT, require_module, run_cli


def test_a_mistyped_command_gets_did_you_mean() -> None:
    code, out, err, _ = run_cli("prov", "examples/paper.absorb")
    assert code == 2 and out == ""
    assert "unknown command `prov`" in err and "did you mean `prove`?" in err
    code, _, err, _ = run_cli("zzzz")
    assert code == 2 and "symabsorb --help" in err


def test_an_empty_theorems_directory_warns(tmp_path: Path) -> None:
    empty = tmp_path / "lemmas"
    empty.mkdir()
    code, out, err, _ = run_cli("classify", "relu", "--theorems", str(empty))
    assert code == 0 and "conditional" in out
    assert "holds no .toml result file" in err


def test_a_missing_extra_is_said_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    monkeypatch.setattr(symabsorb.results, "_WARNED", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, _, err, _ = run_cli("prove", str(EXAMPLES / "paper.absorb"), "-k", "gelu_once", "-o",
                                  str(tmp_path / "r.html"))
    assert code == 0, err
    assert err.count("matplotlib is missing") == 1 and err.startswith("warning: ")
    assert not [w for w in caught if "matplotlib" in str(w.message)]  # no raw UserWarning as well


def test_make_demo_prints_the_verdicts() -> None:

    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    demo = makefile.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    lines = [line.strip() for line in demo.splitlines()[1:]]
    assert "$(BIN)/symabsorb prove examples/paper.absorb" in lines  # the summary table on screen
    assert any(line.endswith("-o report.md") for line in lines)


def test_gpt2_conv1d_names_get_transpose_first(tmp_path: Path) -> None:
    """Issue 28 row 2: swapping up and down gives a valid-shaped, wrong block; GPT-2's Conv1D
    `c_fc`/`c_proj` store in x out, so the hint is `transpose: true`."""
    import pytest as _pytest

    np = _pytest.importorskip("numpy")
    safetensors = _pytest.importorskip("safetensors.numpy")
    rng = np.random.default_rng(0)
    d, m = 3, 12
    safetensors.save_file({"h.0.mlp.c_fc.weight": rng.standard_normal((d, m)),
                           "h.0.mlp.c_proj.weight": rng.standard_normal((m, d))}, str(tmp_path / "gpt2.safetensors"))
    spec = tmp_path / "g.absorb"
    spec.write_text('block b { activation: gelu weights: "gpt2.safetensors" prefix: "h.0.mlp." '
                    'up: "c_fc.weight" down: "c_proj.weight" }\nabsorb b\n', encoding="utf-8")
    code, _, err, _ = run_cli("prove", str(spec))
    assert code == 2
    assert "GPT-2's Conv1D" in err and "add `transpose: true`" in err and "exchange" not in err
    spec.write_text(spec.read_text(encoding="utf-8").replace('down: "c_proj.weight"',
                                                             'down: "c_proj.weight" transpose: true'), encoding="utf-8")
    code, _, err, _ = run_cli("prove", str(spec))
    assert code in (0, 1), err


def test_prove_o_dir_slash_makes_the_directory(tmp_path: Path) -> None:
    """`-o reports/` names a directory (the help says so): it is made when missing (a new user's report: it
    asked to create it first); its parent must exist, and a file of that name is refused."""
    spec = tmp_path / "p.absorb"
    spec.write_text((EXAMPLES / "paper.absorb").read_text(encoding="utf-8"), encoding="utf-8")
    code, _, err, _ = run_cli("prove", str(spec), "-o", str(tmp_path / "reports") + "/")
    assert code == 0 and (tmp_path / "reports" / "p.md").is_file(), err
    code, _, err, _ = run_cli("prove", str(spec), "-o", str(tmp_path / "a" / "b") + "/")
    assert code == 2 and "cannot create the directory" in err
    (tmp_path / "file").write_text("", encoding="utf-8")
    code, _, err, _ = run_cli("prove", str(spec), "-o", str(tmp_path / "file") + "/")
    assert code == 2 and "not a directory" in err, err


def test_absorb_of_a_block_absorbable_without_built_weights_answers_as_asked(tmp_path: Path) -> None:
    """A block with no skip is absorbable for every weights, by a result that builds no weights: `absorb`
    says so and exits 0 (it said 'no witness' and exited 1, a referee's finding); asked to write weights (-o),
    it writes nothing and exits 1."""
    spec = tmp_path / "s.absorb"
    spec.write_text("block b { activation: relu  skip: none  W_up: [[1, 0], [0, 1], [1, 1]]  "
                    "W_down: [[1, 0, 1], [0, 1, 1]] }\nabsorb b\n", encoding="utf-8")
    code, out, err, _ = run_cli("absorb", str(spec), "--block", "b")
    assert code == 0 and "is absorbable (all weights), by a result that builds no explicit weights" in out, err
    require_module("numpy", "weights")  # writing weights (-o) needs numpy
    code, out, _, _ = run_cli("absorb", str(spec), "--block", "b", "-o", str(tmp_path / "w.npz"))
    assert code == 1 and "nothing written" in out and not (tmp_path / "w.npz").exists()
