"""The command line is the API (issue 18) and `prove` navigates (issue 21 item 7): each command calls
symabsorb.api, each shared option is declared once, `-k` selects queries, `-v` prints whole
derivations, `--format terminal|text`, and several specs with `-o DIR` give one report each."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import symabsorb
import symabsorb.api as api
from symabsorb import cli
from tests.helpers import EXAMPLES, run_cli

SPEC = """\
block relu_net { activation: relu  dim: 2  width: 3 }
block tanh_net { activation: tanh  dim: 2  width: 3 }
stack relu_deep = relu_net ^ 2
absorb relu_net
absorb tanh_net
absorb relu_deep
classify gelu
"""


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "nets.absorb"
    path.write_text(SPEC, encoding="utf-8")
    return path


def test_shared_options_are_declared_once() -> None:
    source = Path(cli.__file__).read_text(encoding="utf-8")
    for option in ("--theorems", "--budget", "--limit", "--allow-outside", "--no-cache", "--gated", "--strict",
                   "--scheduler", "--workers", "--in-process", "--results"):
        assert len(re.findall(rf"(?:add_argument|_flag)\(\"{option}\"", source)) == 1, option
    parser = cli.build_parser()
    for command in ("classify", "catalog", "graph", "prove", "absorb"):  # ...and every command that took it still does
        args = parser.parse_args([command, *(["x"] if command in ("classify", "prove", "absorb") else []),
                                  *(["--block", "b"] if command == "absorb" else []), "--theorems", "d"])
        assert args.theorems == ["d"], command


def test_the_format_names_are_the_renderers() -> None:
    from symabsorb.report.formats import RENDERERS

    choices = cli.FormatNames()  # a value is checked against the renderers' table; --help lists FORMAT_NAMES,
    # a constant (no renderer import) equal to the table (tests/unit/cli/test_cli_client.py)
    assert list(choices) == list(RENDERERS.names("report")) == ["md", "html", "tex", "json", "terminal", "text"]
    assert all(name in choices for name in RENDERERS.spellings("report")) and "csv" not in choices


@pytest.mark.parametrize(("command", "argv", "function"), [
    ("catalog", ["catalog", "--json"], "catalog"),
    ("verify", ["verify", "report.json"], "verify"),
    ("scan", ["scan", ".", "--in-process"], "scan"),
    ("explore", ["explore", str(EXAMPLES / "explore.absorb"), "--in-process"], "explore"),
    ("check", ["check", str(EXAMPLES / "weights.absorb")], "check"),
    ("fmt", ["fmt", str(EXAMPLES / "weights.absorb")], "fmt"),
    ("graph", ["graph"], "graph"),
    ("graph", ["graph", "--spec", str(EXAMPLES / "weights.absorb")], "graph"),
    ("prove", ["prove", str(EXAMPLES / "weights.absorb")], "prove"),
    ("absorb", ["absorb", str(EXAMPLES / "weights.absorb"), "--block", "planted"], "absorb"),
    ("absorb", ["absorb", str(EXAMPLES / "weights.absorb"), "--block", "planted", "--width", "4"], "absorb_width"),
    ("classify", ["classify", "relu"], "classify"),
    ("facts", ["facts", "relu"], "facts"),
])
def test_each_command_calls_the_api(command: str, argv: list[str], function: str, monkeypatch: pytest.MonkeyPatch,
                                    tmp_path: Path) -> None:
    calls: list[tuple[Any, ...]] = []

    class Stop(symabsorb.SymabsorbError):
        pass

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        raise Stop(f"error: {function} reached the API")

    monkeypatch.setattr(api, function, spy)
    monkeypatch.chdir(tmp_path)
    code, _, err, _ = run_cli(*argv, "--no-cache")
    assert calls and code == 2 and f"{function} reached the API" in err, err


def test_api_catalog_is_the_catalog_command() -> None:
    catalog = symabsorb.catalog()
    code, out, _, _ = run_cli("catalog", "--json", "--no-cache")
    assert code == 0 and json.loads(out) == list(catalog.rows)
    assert catalog.verdicts["tanh"] == "impossible"
    code, text, _, _ = run_cli("catalog", "--no-cache")
    assert text == catalog.render("text") and text.startswith("activation")


def test_api_verify_and_scan_and_explore_take_checked_arguments(tmp_path: Path) -> None:
    with pytest.raises(symabsorb.ArgumentError, match=r"report=3 \(type=int\)"):
        symabsorb.verify(3)  # type: ignore[arg-type]
    with pytest.raises(symabsorb.ArgumentError, match="expected a directory"):
        symabsorb.scan(tmp_path / "missing")
    with pytest.raises(symabsorb.ArgumentError, match="declares no `space`"):
        api.explore(SPEC)
    with pytest.raises(symabsorb.ArgumentError, match="exclude each other"):
        symabsorb.executor(scheduler="tcp://127.0.0.1:1", in_process=True)
    code, _, err, _ = run_cli("scan", str(tmp_path), "--in-process", "--scheduler", "tcp://127.0.0.1:1")
    assert code == 2 and err.startswith("error: --scheduler 'tcp://127.0.0.1:1': --in-process and a scheduler")
    empty = symabsorb.scan(tmp_path, results=tmp_path / "results")
    assert empty.layers == () and empty.render("text").startswith("file:layer")


# ---- prove -k / -v / --format / -o DIR -----------------------------------------------------------------------


def _queries(text_output: str) -> list[str]:
    return [q for q in ("absorb relu_net", "absorb tanh_net", "absorb relu_deep", "classify gelu") if q in text_output]


def test_prove_k_selects_queries_as_pytest_does(spec: Path) -> None:
    code, out, err, _ = run_cli("prove", str(spec), "-k", "relu", "--no-cache")
    assert code == 0, err
    assert _queries(out) == ["absorb relu_net", "absorb relu_deep"]
    code, out, _, _ = run_cli("prove", str(spec), "-k", "RELU and not deep", "--no-cache")
    assert _queries(out) == ["absorb relu_net"]
    code, out, _, _ = run_cli("prove", str(spec), "-k", "tanh or (gelu and classify)", "--no-cache")
    assert _queries(out) == ["absorb tanh_net", "classify gelu"]
    assert symabsorb.prove(spec, keyword="tanh").verdicts == {"absorb tanh_net": "impossible"}


@pytest.mark.parametrize(("pattern", "message"), [
    ("sigmoid", "no query of"),
    ("relu and", "ends where a word was expected"),
    ("relu deep", "follows a complete expression"),
    ("(relu", "is not closed"),
])
def test_prove_k_errors_say_what_is_asked(spec: Path, pattern: str, message: str) -> None:
    code, out, err, _ = run_cli("prove", str(spec), "-k", pattern, "--no-cache")
    assert code == 2 and out == "" and message in err and "Traceback" not in err
    assert err.startswith(f"error: -k {pattern!r}")
    if message == "no query of":
        assert "absorb relu_net; absorb tanh_net; absorb relu_deep; classify gelu" in err


def test_prove_v_prints_whole_derivations(spec: Path) -> None:
    code, summary, _, _ = run_cli("prove", str(spec), "-k", "relu_net", "--no-cache")
    code_v, full, _, _ = run_cli("prove", str(spec), "-k", "relu_net", "-v", "--no-cache")
    assert code == code_v == 0
    report = symabsorb.prove(spec, keyword="relu_net")
    assert full == report.render("text", width=100, verbose=True) and summary == report.render("text", width=100)
    assert len(full) > len(summary) and report.results[0].render("text").splitlines()[0] in full
    code, _, err, _ = run_cli("prove", str(spec), "-v", "--format", "md", "--no-cache")
    assert code == 2 and "-v prints whole derivations in the terminal" in err


def test_prove_format_terminal_and_text(spec: Path) -> None:
    report = symabsorb.prove(spec)
    for fmt in ("text", "terminal"):  # (stdout is not a terminal here: `terminal` is plain text, no escapes)
        code, out, _, _ = run_cli("prove", str(spec), "--format", fmt, "--no-cache")
        assert code == 0 and out == report.render("text", width=100) and "\x1b[" not in out


def test_several_specs_with_o_dir_write_one_report_each(spec: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.absorb"
    other.write_text("classify tanh\n", encoding="utf-8")
    out_dir = tmp_path / "reports"
    out_dir.mkdir()
    code, _, err, _ = run_cli("prove", str(spec), str(other), "-o", str(out_dir), "--no-cache")
    assert code == 0, err
    assert sorted(p.name for p in out_dir.iterdir()) == ["nets.md", "other.md"]
    for source in (spec, other):
        single = tmp_path / f"single-{source.stem}.md"
        assert run_cli("prove", str(source), "-o", str(single), "--no-cache")[0] == 0
        assert (out_dir / f"{source.stem}.md").read_bytes() == single.read_bytes()
    code, _, _, _ = run_cli("prove", str(spec), str(other), "-o", f"{out_dir}/", "--format", "json", "--no-cache")
    assert code == 0 and json.loads((out_dir / "other.json").read_text(encoding="utf-8"))["queries"]
    code, _, err, _ = run_cli("prove", str(spec), str(other), "-o", str(tmp_path / "one.md"), "--no-cache")
    assert code == 2 and "give a directory (-o DIR/)" in err
    code, _, err, _ = run_cli("prove", str(spec), "-o", str(tmp_path / "missing" / "deeper") + "/", "--no-cache")
    assert code == 2 and "cannot create the directory" in err  # `-o DIR/` is made, but only inside an existing one
    twin = tmp_path / "sub"
    twin.mkdir()
    (twin / "nets.absorb").write_text("classify tanh\n", encoding="utf-8")
    code, _, err, _ = run_cli("prove", str(spec), str(twin / "nets.absorb"), "-o", str(out_dir), "--no-cache")
    assert code == 2 and "would both be written to" in err
