"""``verify`` on deep stacks (issue 25, the referee's findings): every stack query is re-derived from the embedded
spec; a tampered verdict, scope, witness or certificate number fails; Theorems 1D and FA's procedures refuse a σ
that is not bias-free ReLU whatever the deciding result's hypotheses say."""

from __future__ import annotations

import json
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

import symabsorb
from symabsorb.theory.derivation import Verdict
from tests.helpers import ROOT

pytest.importorskip("numpy", reason="numpy (verify reads reports with the weights extra)")

SPEC = """
block relu_4d { activation: relu dim: d width: 4*d }
stack relu_equal = relu_4d ^ L
block a  { activation: relu dim: 1 width: 2 W_up: [[1], [-1]] W_down: [[2, 3]] }
block b  { activation: relu dim: 1 width: 1 W_up: [[1]] W_down: [[1]] }
block up { activation: relu dim: 1 width: 2 W_up: [[1], [-1]] W_down: [[1, -3]] }
stack d1_fold_yes = [a, b]
stack d1_fold_no  = [up, b]
block p  { activation: relu dim: 2 width: 4 W_up: [[1, 0], [0, 1], [-1, 0], [0, -1]]
           W_down: [[3, 3, 3, 3], [1, 1, 1, 1]] }
block q  { activation: relu dim: 2 width: 6 W_up: [[1, 0], [0, 1], [1, 1], [1, 2], [2, 1], [1, -1]]
           W_down: [[1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 0, 1]] }
block q2 { activation: relu dim: 2 width: 6 W_up: [[1, 0], [0, 1], [1, 1], [1, 2], [2, 1], [1, -3]]
           W_down: [[1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 0, 1]] }
stack fold_yes = [p, q]
stack fold_no  = [p, q2]
block n1 { activation: relu dim: 2 width: 4 W_up: [[1, 0], [0, 1], [1, 1], [1, -1]]
           W_down: [[1/10, 0, 1/20, 0], [0, 1/10, 0, 1/30]] }
block n2 { activation: relu dim: 2 width: 4 W_up: [[1, 2], [2, -1], [1, 3], [3, -1]]
           W_down: [[1/10, 0, 1/20, 1/50], [0, 1/10, 1/70, 1/30]] }
stack near_identity = [n1, n2]
block f1 { activation: relu dim: 2 width: 4 W_up: [[1, 0], [0, 1], [1, 1], [1, -1]]
           W_down: [[-1, 0, 1/3, 1/5], [0, -1, 1/7, -1/4]] }
block f2 { activation: relu dim: 2 width: 4 W_up: [[2, 1], [1, 3], [1, 1], [1, -2]]
           W_down: [[-3/5, 1/5, 1/4, 1/6], [1/5, -2/5, -1/3, 1/2]] }
stack flips = [f1, f2]
absorb relu_equal
absorb d1_fold_yes
absorb d1_fold_no
absorb fold_yes
absorb fold_no
absorb near_identity
absorb flips
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    from symabsorb.model import resolve_text
    from symabsorb.report.jsonout import render_json
    from tests.helpers import build_report

    tmp = tmp_path_factory.mktemp("deepverify")
    path = tmp / "deep.absorb"
    path.write_text(SPEC, encoding="utf-8")
    out = tmp / "deep.json"
    out.write_text(render_json(build_report(resolve_text(SPEC, str(path)), SPEC)), encoding="utf-8")
    return out, json.loads(out.read_text(encoding="utf-8"))


def _verify(report: tuple[Path, dict[str, Any]], edit: Callable[[dict[str, dict[str, Any]]], None]) -> dict[str, Any]:
    from tests.helpers import verify_report

    path, data = report
    bad = json.loads(json.dumps(data))
    edit({q["query"].removeprefix("absorb "): q["derivation"] for q in bad["queries"]})
    p = path.parent / "tampered.json"
    p.write_text(json.dumps(bad), encoding="utf-8")
    return {c.query.removeprefix("absorb "): c for c in verify_report(p)}


def test_the_untampered_report_verifies(report: tuple[Path, dict[str, Any]]) -> None:
    got = _verify(report, lambda q: None)
    assert all(c.ok for c in got.values()), got
    # every concrete stack is re-checked (the composed witness of `flips` too); the symbolic one is re-derived only
    assert set(got) == {"d1_fold_yes", "d1_fold_no", "fold_yes", "fold_no", "near_identity", "flips"}


def _set(name: str, **changes: Any) -> Callable[[dict[str, dict[str, Any]]], None]:
    def edit(q: dict[str, dict[str, Any]]) -> None:
        q[name].update(changes)
    return edit


def _entry(name: str, layer: int, value: str, blank: bool = False) -> Callable[[dict[str, dict[str, Any]]], None]:
    def edit(q: dict[str, dict[str, Any]]) -> None:
        q[name]["witness"]["layers"][layer]["W_down"][0][0] = value
        if blank:
            q[name]["witness"]["description"] = ""
    return edit


def _cert(**changes: Any) -> Callable[[dict[str, dict[str, Any]]], None]:
    def edit(q: dict[str, dict[str, Any]]) -> None:
        q["near_identity"]["depth_certificate"].update(changes)
    return edit


@pytest.mark.parametrize(("name", "edit"), [
    ("flips", _entry("flips", 0, "99")),  # a composed witness (L-depth-witness) is re-checked
    ("fold_yes", _entry("fold_yes", 1, "99", blank=True)),  # blanking the description switches nothing off
    ("near_identity", _set("near_identity", verdict="not-absorbable", scope="these weights", depth_certificate=None)),
    ("d1_fold_no", _set("d1_fold_no", verdict="absorbable")),
    ("fold_no", _set("fold_no", verdict="absorbable")),
    ("fold_no", _set("fold_no", scope="almost every weight near these")),
    ("relu_equal", _set("relu_equal", verdict="not-absorbable")),
    ("near_identity", _cert(rank=999)),
    ("near_identity", _cert(d_free=0)),
    ("fold_yes", _set("fold_yes", witness=None)),  # absorbable without its witness
])
def test_a_tampered_stack_query_fails(report: tuple[Path, dict[str, Any]], name: str,
                                      edit: Callable[[dict[str, dict[str, Any]]], None]) -> None:
    pytest.importorskip("flint", reason="python-flint (the FD certificate's rank modulo a prime)")
    got = _verify(report, edit)
    assert name in got and not got[name].ok, got.get(name)
    assert all(c.ok for n, c in got.items() if n != name)


LEAKY = """
block p  { activation: leaky_relu(alpha = 1/2) dim: 2 width: 4 W_up: [[1, 0], [0, 1], [-1, 0], [0, -1]]
           W_down: [[3, 3, 3, 3], [1, 1, 1, 1]] }
block q  { activation: leaky_relu(alpha = 1/2) dim: 2 width: 6 W_up: [[1, 0], [0, 1], [1, 1], [1, 2], [2, 1], [1, -1]]
           W_down: [[1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 0, 1]] }
stack lk = [p, q]
block la { activation: leaky_relu(alpha = 1/2) dim: 1 width: 2 W_up: [[1], [-1]] W_down: [[2, 3]] }
block lb { activation: leaky_relu(alpha = 1/2) dim: 1 width: 1 W_up: [[1]] W_down: [[1]] }
stack lk1 = [la, lb]
"""


@pytest.mark.parametrize(("rid", "stack"), [("thm-FA", "lk"), ("thm-1D-c3", "lk1")])
def test_fold_and_slopes_refuse_a_sigma_that_is_not_relu(tmp_path: Path, rid: str, stack: str) -> None:
    """A user's copy of Theorem FA / 1D without the ReLU hypothesis: the procedure itself refuses leaky ReLU."""
    import tomllib

    from symabsorb.model import resolve_text
    from symabsorb.theory.library import library_with
    from tests.helpers import decide

    src = ROOT / "symabsorb" / "theorems" / f"{rid}.toml"
    text = src.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    assert any(h["name"] == "each_bias_free_relu" for h in data["hypotheses"])
    user = tmp_path / "user"
    user.mkdir()
    lines, out, skip = text.splitlines(), [], False
    for i, line in enumerate(lines):
        if line.strip() == "[[hypotheses]]" and i + 1 < len(lines) and "each_bias_free_relu" in lines[i + 1]:
            skip = True
            continue
        if skip and (line.startswith("[") or not line.strip()):
            skip = False
            if not line.strip():
                continue
        if not skip:
            out.append(line.replace(f'id = "{rid}"', f'id = "{rid}-user"'))
    (user / f"{rid}-user.toml").write_text("\n".join(out) + "\n", encoding="utf-8")
    library = library_with([user])
    target = next(s for s in resolve_text(LEAKY, str(tmp_path / "lk.absorb")).stacks if s.name == stack)
    d = decide(target, library)
    assert d.decided_by == f"{rid}-user", d.decided_by  # the user's copy decides (its hypotheses hold)
    assert d.verdict is Verdict.OPEN and "bias-free ReLU only" in " ".join(d.notes), d.verdict


REPEAT = """
block f1 { activation: relu dim: 2 width: 4 W_up: [[1, 0], [0, 1], [1, 1], [1, -1]]
           W_down: [[-1, 0, 1/3, 1/5], [0, -1, 1/7, -1/4]] }
block g6 { activation: relu dim: 2 width: 6 W_up: [[1, 0], [0, 1], [1, 1], [1, -1], [2, 1], [1, 2]]
           W_down: [[-1, 0, 1/3, 1/5, 1/2, 1/9], [0, -1, 1/7, -1/4, 1/3, 1/5]] }
stack f1x3 = f1 ^ 3
stack wflips = [f1, g6]
"""


def test_a_repeated_stack_has_one_witness_layer_per_block(tmp_path: Path) -> None:
    from symabsorb.model import resolve_text
    from symabsorb.theory.library import default_library
    from symabsorb.weights.export import witness_arrays
    from tests.helpers import decide

    stack = next(s for s in resolve_text(REPEAT, str(tmp_path / "r.absorb")).stacks if s.name == "f1x3")
    d = decide(stack, default_library())
    assert d.verdict is Verdict.ABSORBABLE and d.witness is not None and len(d.witness.layers) == 3
    assert {k.split(".")[1] for k in witness_arrays(d.witness)} == {"0", "1", "2"}


def test_a_composed_witness_does_not_show_the_stack_results_condition(tmp_path: Path) -> None:
    from symabsorb.model import resolve_text
    from symabsorb.theory.library import default_library
    from tests.helpers import decide

    stack = next(s for s in resolve_text(REPEAT, str(tmp_path / "r.absorb")).stacks if s.name == "wflips")
    d = decide(stack, default_library())  # a widening profile (Theorem FA's), absorbed by composing flips
    assert d.verdict is Verdict.ABSORBABLE and d.witness is not None and d.witness.layers
    assert d.condition is None and d.sufficient is None and d.necessary is None


def test_the_fd_text_says_which_points_were_used() -> None:
    from symabsorb.weights.deep import FDCertificate
    from symabsorb.weights.deepdecide import fd_step_text

    pts = tuple((Fraction(i), Fraction(1)) for i in range(22))
    text = fd_step_text(FDCertificate(24, 20, 24, pts, None, 13, True, 32))
    assert "22 rational points" in text and "the 4 where a pre-activation vanishes are left out" in text
    assert "2 in each of the 13 sectors" not in text


def test_a_composed_theorem_d_witness_verifies(tmp_path: Path) -> None:
    """A block absorbed by Theorem D (collinear units, not a flip) inside a composed witness: re-checked as a
    function, exactly (it was refused as 'not an index-set condition')."""
    from symabsorb.model import resolve_text
    from symabsorb.report.jsonout import render_json
    from tests.helpers import build_report, verify_report

    spec = ("block t1 { activation: relu dim: 2 width: 4 W_up: [[1, 0], [2, 0], [0, 1], [0, -1]] "
            "W_down: [[-1, 0, 0, 0], [0, 0, -1, 0]] }\nstack td = t1 ^ 2\nabsorb td\n")
    path = tmp_path / "td.absorb"
    path.write_text(spec, encoding="utf-8")
    out = tmp_path / "td.json"
    out.write_text(render_json(build_report(resolve_text(spec, str(path)), spec)), encoding="utf-8")
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["queries"][0]["derivation"]["verdict"] == "absorbable"
    got = verify_report(out)
    assert len(got) == 1 and got[0].ok and "as functions" in got[0].detail, got
    data["queries"][0]["derivation"]["witness"]["layers"][1]["W_down"][1][2] = "-2"
    out.write_text(json.dumps(data), encoding="utf-8")
    assert not verify_report(out)[0].ok


def test_the_embedded_spec_is_resolved_once_per_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every stack query of a report shares one resolution of its embedded spec (it was resolved once per stack
    query: a report with many stacks ran out of verify's budget)."""
    import symabsorb.model as model

    spec = tmp_path / "s.absorb"
    spec.write_text("""block a { activation: relu  W_up: [[1]]  W_down: [[-1]] }
stack s1 = [a, a]
stack s2 = [a, a, a]
absorb s1
absorb s2
""", encoding="utf-8")
    report = tmp_path / "r.json"
    report.write_text(symabsorb.prove(spec).render("json"), encoding="utf-8")
    calls: list[str] = []
    real = model.resolve_text

    def counting(text: str, path: str, *args: object, **kwargs: object) -> object:
        calls.append(path)
        return real(text, path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(model, "resolve_text", counting)
    symabsorb.verify(report)
    stack_resolutions = len(calls)
    assert stack_resolutions <= 2, calls  # the blocks' resolution and the stacks' one, not one per stack query
