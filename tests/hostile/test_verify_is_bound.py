"""`verify` is bound to what it verifies (issue 18) and reads only inside the report's tree (issue 22).

The two forged reports of issue 18 (a genuine certificate of another tensor pasted under a block;
`not-absorbable` under a result whose necessity is not proved, backed by a true nondegeneracy
record), paths the report chooses, witnesses, sizes, budgets and exit codes."""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import EXAMPLES, require_module, run_cli

np = require_module("numpy", "weights")


def _prove(spec: Path, report: Path) -> dict[str, Any]:
    code, _out, err, _ = run_cli("prove", str(spec), "--format", "json", "-o", str(report))
    assert code == 0, err
    return json.loads(report.read_text(encoding="utf-8"))


def _verify(report: Path, *extra: str) -> tuple[int, str]:
    code, out, err, _ = run_cli("verify", str(report), *extra)
    assert "Traceback" not in out + err
    return code, out + err


def _write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture
def two_blocks(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A GELU report with two blocks on different tensors of one file (both not-absorbable)."""
    rng = np.random.default_rng(4)
    np.savez(tmp_path / "r.npz", W_up=rng.standard_normal((12, 4)), W_down=rng.standard_normal((4, 12)),
             other_up=rng.standard_normal((12, 4)), other_down=rng.standard_normal((4, 12)))
    np.savez(tmp_path / "r2.npz", W_up=rng.standard_normal((12, 4)), W_down=rng.standard_normal((4, 12)))
    spec = tmp_path / "s.absorb"
    spec.write_text('block b { activation: gelu weights: "r.npz" }\n'
                    'block c { activation: gelu weights: "r.npz" up: "other_up" down: "other_down" }\n'
                    'block e { activation: gelu weights: "r2.npz" }\n'
                    "absorb b\nabsorb c\nabsorb e\n")
    report = tmp_path / "r.json"
    data = _prove(spec, report)
    assert [q["derivation"]["certificate"]["kind"] for q in data["queries"]] == ["separating"] * 3
    assert _verify(report)[0] == 0
    return report, data


def test_a_certificate_of_another_tensor_or_file_fails(two_blocks: tuple[Path, dict[str, Any]]) -> None:
    report, data = two_blocks
    for source in (1, 2):  # c: the same file, other tensors; e: another file
        forged = json.loads(json.dumps(data))
        forged["queries"][0]["derivation"]["certificate"] = data["queries"][source]["derivation"]["certificate"]
        code, text = _verify(_write(report.with_name(f"forged{source}.json"), forged))
        assert code == 1 and "FAILED absorb b" in text and "the block declares" in text, text


@pytest.mark.parametrize("change", [{"transpose": True}, {"file": "../r.npz"}, {"file": "/etc/passwd"},
                                    {"sha256": None}, {"up": "other_up"}])
def test_a_certificate_must_name_the_declared_weights(two_blocks: tuple[Path, dict[str, Any]],
                                                      change: dict[str, Any]) -> None:
    report, data = two_blocks
    forged = json.loads(json.dumps(data))
    forged["queries"][0]["derivation"]["certificate"]["weights"].update(change)
    code, text = _verify(_write(report.with_name("forged.json"), forged))
    assert code == 1 and "FAILED absorb b" in text, text


def test_not_absorbable_needs_a_result_whose_necessity_is_proved(tmp_path: Path) -> None:
    from symabsorb.weights.certify import exact_nondegeneracy

    rng = np.random.default_rng(5)
    w_up, w_down = rng.standard_normal((8, 3)), rng.standard_normal((3, 8))
    np.savez(tmp_path / "g.npz", W_up=w_up, W_down=w_down, W_gate=rng.standard_normal((8, 3)))
    spec = tmp_path / "g.absorb"   # polynomial gate: L-gate-flip, converse open (Theorem G needs g non-polynomial)
    spec.write_text('gated gg gate (u) = 1 + u\nblock b { activation: gg weights: "g.npz" }\nabsorb b\n')
    report = tmp_path / "g.json"
    data = _prove(spec, report)
    d = data["queries"][0]["derivation"]
    assert d["verdict"] == "open" and d["certificate"]["kind"] == "separating"
    assert _verify(report)[0] == 0  # the genuine report: the certificate backs "open"
    nondegenerate = exact_nondegeneracy(w_up, w_down)
    assert nondegenerate["holds"]  # a true record
    d.update(verdict="not-absorbable")
    d["certificate"]["nondegenerate"] = nondegenerate
    code, text = _verify(_write(tmp_path / "forged.json", data))
    assert code == 1 and "necessary" in text, text


def test_weights_outside_the_reports_tree_are_not_read(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    inside = tmp_path / "work"
    inside.mkdir()
    np.savez(tmp_path / "outside.npz", W_up=rng.standard_normal((12, 4)), W_down=rng.standard_normal((4, 12)))
    (inside / "s.absorb").write_text('block b { activation: gelu weights: "../outside.npz" }\nabsorb b\n')
    code, _out, err, _ = run_cli("prove", str(inside / "s.absorb"), "--format", "json", "-o",
                                 str(inside / "r.json"), "--allow-outside")
    assert code == 0, err
    code, text = _verify(inside / "r.json")
    assert code == 2 and "outside the spec's directory" in text, text
    assert _verify(inside / "r.json", "--allow-outside")[0] == 0


def test_the_spec_path_in_a_report_does_not_choose_where_imports_are_read(tmp_path: Path) -> None:
    (tmp_path / "lib.absorb").write_text("activation mine(z) = max(0, z)\n")  # outside the report's tree
    work = tmp_path / "work"
    work.mkdir()
    report = {"schema_version": 1, "spec": {"path": str(tmp_path / "s.absorb"),
                                            "text": 'import "lib.absorb"\nclassify mine\n'}, "queries": []}
    code, text = _verify(_write(work / "r.json", report))
    assert code == 2 and "does not resolve" in text, text


def test_nothing_to_check_is_exit_code_one(tmp_path: Path) -> None:
    spec = tmp_path / "c.absorb"
    spec.write_text("classify gelu\n")
    _prove(spec, tmp_path / "c.json")
    code, text = _verify(tmp_path / "c.json")
    assert code == 1 and "nothing to check" in text


def test_inline_witnesses_are_rechecked_exactly(tmp_path: Path) -> None:
    report = tmp_path / "w.json"
    data = _prove(EXAMPLES / "weights.absorb", report)
    code, text = _verify(report)
    assert code == 0 and "OK     absorb planted" in text and "witness" in text, text
    planted = next(q for q in data["queries"] if q["query"] == "absorb planted")["derivation"]
    assert planted["verdict"] == "absorbable" and planted["witness"]["W_up"]

    def forged(mutate: Any) -> tuple[int, str]:
        copy = json.loads(json.dumps(data))
        mutate(next(q for q in copy["queries"] if q["query"] == "absorb planted")["derivation"]["witness"])
        return _verify(_write(tmp_path / "forged.json", copy))

    def entry(w: dict[str, Any]) -> None:
        w["W_up"][2][0] = "7/3"

    for mutate in (entry, lambda w: w.update(index_set=[0]), lambda w: w.update(index_set=[0, 1, 2]),
                   lambda w: w.update(index_set=[0, 0, 1]), lambda w: w.update(W_up=[["1"]]),
                   lambda w: w.update(index_set=["0", 1])):
        code, text = forged(mutate)
        assert code == 1 and "FAILED absorb planted" in text, text


def test_a_certificate_cannot_make_verify_allocate(two_blocks: tuple[Path, dict[str, Any]]) -> None:
    report, data = two_blocks
    n = 100_000
    bomb = base64.b64encode(zlib.compress(b"\0" * (1 << 22))).decode()
    forged = json.loads(json.dumps(data))
    cert = forged["queries"][0]["derivation"]["certificate"]
    cert["target"] = {"rows": n, "cols": n, "nonzero": [[i, i, "-1"] for i in range(1000)]}
    cert["Y"] = {"sum_of": [{"exp": 0, "shape": [n, n], "dtype": "int32-le", "encoding": "zlib+base64",
                             "data": bomb}] * 64}
    code, text = _verify(_write(report.with_name("bomb.json"), forged))
    assert code == 1 and "4 x 4" in text, text


def test_the_budget_is_not_swallowed_per_query(two_blocks: tuple[Path, dict[str, Any]],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from symabsorb.answer import verify
    from symabsorb.budget import BudgetExhausted

    def spent(*args: object) -> str:
        raise BudgetExhausted("the command's budget of 5 CPU seconds is spent")

    monkeypatch.setattr(verify, "check_certificate", spent)
    report, _ = two_blocks
    code, text = _verify(report, "--budget", "5")
    assert code == 2 and "budget" in text and "FAILED" not in text and "OK " not in text, text


def test_names_from_the_report_reach_the_terminal_without_control_characters(
        two_blocks: tuple[Path, dict[str, Any]]) -> None:
    report, data = two_blocks
    forged = json.loads(json.dumps(data))
    forged["queries"][0]["derivation"]["verdict"] = "\x1b]0;pwned\x07not-absorbable\u202e"
    forged["queries"][0]["derivation"]["certificate"]["weights"]["file"] = "\x1b[2J\x9b2Jr.npz"
    code, text = _verify(_write(report.with_name("esc.json"), forged))
    assert code == 1 and not any(c in text for c in "\x1b\x07\x9b\u202e")


def test_a_verdict_for_all_weights_needs_no_certificate_and_a_forged_one_still_fails(tmp_path: Path) -> None:
    """A file block with no skip is absorbable for every weights (trivial-no-skip): verify re-derives that
    and passes it (it said FAILED: 'without its certificate', a referee's finding); a forged verdict, or an
    identity skip claimed absorbable without a certificate, still fails."""
    import json

    np = require_module("numpy", "weights")
    np.savez(tmp_path / "w.npz", W_up=np.ones((3, 2)), W_down=np.ones((2, 3)))
    for skip, claim, ok in (("none", None, True), ("none", "not-absorbable", False), ("identity", "absorbable", False)):
        spec = tmp_path / f"{skip}.absorb"
        spec.write_text(f'block b {{ activation: relu  skip: {skip}  weights: "w.npz" }}\nabsorb b\n', encoding="utf-8")
        report = tmp_path / f"{skip}-{claim}.json"
        code, _, err, _ = run_cli("prove", str(spec), "-o", str(report))
        assert code in (0, 1), err
        if claim is not None:
            data = json.loads(report.read_text(encoding="utf-8"))
            data["queries"][0]["derivation"].update(verdict=claim, certificate=None)
            report.write_text(json.dumps(data), encoding="utf-8")
        code, out, err, _ = run_cli("verify", str(report))
        assert (code == 0) is ok and (("OK" in out) is ok), (skip, claim, out, err)


def test_weights_dir_is_where_the_embedded_spec_is_resolved(tmp_path: Path) -> None:
    """`verify --weights-dir DIR` resolves the embedded spec in DIR, so its weights files are found there (the
    spec failed to resolve beside the report first, and the option had no effect: a referee's finding)."""
    np = require_module("numpy", "weights")
    weights, reports = tmp_path / "weights", tmp_path / "reports"
    weights.mkdir()
    reports.mkdir()
    np.savez(weights / "p.npz", W_up=np.array([[1.0, 0], [0, 1], [1, 1]]), W_down=np.array([[-1.0, 0, 1], [0, -1, 1]]))
    spec = weights / "c.absorb"
    spec.write_text('block c { activation: relu  weights: "p.npz" }\nabsorb c\n', encoding="utf-8")
    report = reports / "c.json"
    code, _, err, _ = run_cli("prove", str(spec), "-o", str(report))
    assert code == 0, err
    code, _, err, _ = run_cli("verify", str(report))
    assert code == 2 and "--weights-dir DIR" in err, err
    code, out, err, _ = run_cli("verify", str(report), "--weights-dir", str(weights))
    assert code == 0 and out.startswith("OK"), (out, err)
