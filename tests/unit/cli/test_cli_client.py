"""The command line as a client of the API (issue 27 item 5, issue 28's width hint): check, fmt and graph
have API functions; API argument errors reach the command line naming the flag (``ArgumentError.param``);
``--budget`` is the command's and the API's ``fact_budget`` a fact's; ``--help`` imports no SymPy."""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import symabsorb
from symabsorb import api, cli
from tests.helpers import EXAMPLES, ROOT, run_cli

COMMANDS = ("check", "fmt", "facts", "classify", "catalog", "graph", "prove", "absorb", "verify", "explore", "scan")


# ---- --help imports neither the renderers nor SymPy --------------------------------------------------------


def test_help_of_every_command_imports_no_sympy() -> None:
    code = ("import argparse, sys\nfrom symabsorb.cli import build_parser, main\n"
            "commands = [c for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction) for c in a.choices]\n"
            "assert set(sys.argv[1:]) <= set(commands), commands\n"
            "for words in [['--help']] + [[c, '--help'] for c in commands]:\n"
            "    try:\n        main(words)\n    except SystemExit:\n        pass\n"
            "bad = sorted(m for m in ('sympy', 'symabsorb.report.formats', 'symabsorb.report.render') if m in sys.modules)\n"
            "sys.stderr.write(repr(bad))\n")
    done = subprocess.run([sys.executable, "-c", code, *COMMANDS], capture_output=True, text=True, check=True)
    assert done.stderr == "[]"
    assert "md, html, tex, json, terminal, text" in done.stdout  # prove's --format help names the formats


def test_the_static_format_names_are_the_renderers_table() -> None:
    from symabsorb.report.formats import RENDERERS

    for kind, names in api.FORMAT_NAMES.items():
        assert names == RENDERERS.names(kind), kind  # type: ignore[arg-type]
        assert api.formats(kind) == names


# ---- check, fmt, graph in the API ---------------------------------------------------------------------------


def test_check_fmt_graph_are_api_functions() -> None:
    for name in ("check", "fmt", "graph"):
        assert name in api.__all__ and name in symabsorb.__all__ and callable(getattr(symabsorb, name))
    listing = symabsorb.check(EXAMPLES / "weights.absorb")
    assert listing.render("text").startswith(f"{EXAMPLES / 'weights.absorb'}: OK")
    assert "queries" in listing.render("text")

    messy = "block   b {activation: relu dim: 2 width: 3}\nabsorb    b\n"
    formatted = symabsorb.fmt(messy)
    assert formatted.changed and formatted.text != messy and formatted.render() == formatted.text
    assert symabsorb.fmt(formatted.text).changed is False
    assert symabsorb.fmt(messy, check=True).render() == "<string> would be reformatted\n"
    assert formatted.diff().startswith("--- <string> (original)")

    graph = symabsorb.graph()
    assert graph.render("dot").startswith("digraph") and graph.results > 10
    assert graph.render("json").lstrip().startswith("{")
    with pytest.raises(symabsorb.ArgumentError) as caught:
        graph.render("tex")  # a report format, not a graph one
    assert caught.value.param == "fmt"


def test_fmt_write_rewrites_a_file(tmp_path: Path) -> None:
    path = tmp_path / "s.absorb"
    path.write_text("block   b {activation: relu dim: 2 width: 3}\nabsorb    b\n")
    formatted = symabsorb.fmt(path)
    assert formatted.write() is True
    assert path.read_text() == formatted.text and symabsorb.fmt(path).changed is False


def test_scan_renders_its_table_files() -> None:
    record = {"file": "m.safetensors", "layer": "0", "activation": "gelu", "verdict": "open", "d": 4, "m": 16}
    result = api.Scan((record,), ())
    assert result.render("csv").startswith('"model / file","layer"')
    assert result.render("md").startswith("| model / file |") and "\\begin{tabular}" in result.render("tex")
    assert result.render("markdown") == result.render("md")  # an alias of the scan table's formats


# ---- errors carry their argument; the command line names the flag ------------------------------------------


def test_argument_errors_carry_param_and_value() -> None:
    with pytest.raises(symabsorb.ArgumentError) as caught:
        symabsorb.select("block b { activation: relu dim: 2 width: 3 }\nabsorb b\n", "relu and")
    assert (caught.value.param, caught.value.value) == ("keyword", "relu and")
    with pytest.raises(symabsorb.ArgumentError) as caught:
        symabsorb.classify("relu", fact_budget=-1)
    assert (caught.value.param, caught.value.value) == ("fact_budget", -1)
    with pytest.raises(symabsorb.ArgumentError) as caught:
        symabsorb.library(["/nonexistent/dir"])
    assert caught.value.param == "theorems[0]"
    import pickle

    again = pickle.loads(pickle.dumps(caught.value))
    assert (again.param, again.value, str(again)) == (caught.value.param, caught.value.value, str(caught.value))


@pytest.mark.parametrize(("argv", "start"), [
    (("prove", str(EXAMPLES / "weights.absorb"), "-k", "relu and"), "error: -k 'relu and': it ends where"),
    (("prove", str(EXAMPLES / "weights.absorb"), "-k", "nothing_matches_this"), "error: -k 'nothing_matches_this': "
                                                                                "no query of"),
    (("scan", str(EXAMPLES), "--workers", "4096"), "error: --workers 4096: this machine has"),
    (("scan", str(EXAMPLES), "--in-process", "--scheduler", "tcp://127.0.0.1:1"),
     "error: --scheduler 'tcp://127.0.0.1:1': --in-process and a scheduler exclude each other"),
])
def test_an_api_argument_error_names_the_flag(argv: tuple[str, ...], start: str) -> None:
    code, out, err, _ = run_cli(*argv)
    assert code == 2 and out == ""
    assert err.startswith(start), err


def test_a_stack_given_a_width_names_the_block_flag(tmp_path: Path) -> None:
    spec = tmp_path / "s.absorb"
    spec.write_text((EXAMPLES / "weights.absorb").read_text() + "\nstack two = [planted, planted]\n")
    code, _, err, _ = run_cli("absorb", str(spec), "--block", "two", "--width", "8")
    assert code == 2 and err.startswith("error: --block 'two': `two` is a stack"), err


def test_every_flag_of_the_table_exists() -> None:
    flags = {o for action in cli.build_parser()._actions if isinstance(action, argparse._SubParsersAction)
             for sub in action.choices.values() for a in sub._actions for o in a.option_strings}
    assert {f for f in cli.CLI_NAMES.values() if f.startswith("-")} <= flags


def test_the_option_message_reads_param_not_the_text() -> None:
    err = symabsorb.ArgumentError("anything at all", param="case_budget", value=0.0, reason="expected > 0")
    assert cli._option_message(err) == "--case-budget 0.0: expected > 0"
    err = symabsorb.ArgumentError("theorems[2]='x' (type=str): expected a directory", param="theorems[2]", value="x",
                                  reason="expected a directory")
    assert cli._option_message(err) == "--theorems 'x': expected a directory"
    assert cli._option_message(symabsorb.ArgumentError("no param here")) == "no param here"


# ---- one meaning of "budget" per name ---------------------------------------------------------------------


def test_the_command_budget_is_the_runs_and_the_api_gets_no_per_fact_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    from symabsorb.runtime import current

    seen: dict[str, Any] = {}
    real = api.prove

    def prove(spec: Any, **options: Any) -> Any:
        seen.update(api_budget=options["fact_budget"], old_name="budget" in options, command=current().seconds,
                    per_fact=current().per_fact())
        return real(spec, **options)

    monkeypatch.setattr(api, "prove", prove)
    code, _, err, _ = run_cli("prove", str(EXAMPLES / "weights.absorb"), "-k", "planted", "--budget", "200",
                              "--no-cache")
    assert code == 0, err
    assert seen == {"api_budget": None, "old_name": False, "command": 200.0, "per_fact": 10.0}


def test_the_budget_help_says_what_each_budget_is() -> None:
    code, out, _, _ = run_cli("prove", "--help")
    text = " ".join(out.split())
    assert code == 0 and "CPU seconds for the whole command" in text and "budget= is seconds per fact" in text
    page = " ".join((ROOT / "docs" / "api.md").read_text(encoding="utf-8").split())
    assert "`fact_budget=` is CPU seconds **per fact**" in page and "`--budget` is CPU seconds for the **whole command**" in page


# ---- issue 28: absorb points at the minimal-width question ----------------------------------------------------


def test_absorb_suggests_the_width_question() -> None:
    spec = str(EXAMPLES / "weights.absorb")
    code, out, _, _ = run_cli("absorb", spec, "--block", "generic", "--no-cache")
    assert code == 1
    hint = out.strip().splitlines()[-1]
    assert hint.startswith("hint: a residual-free block of another width may equal `generic`"), hint
    assert "`width generic`" in hint and "-k 'width and generic'" in hint and "--width W" in hint
    assert "add it to the spec" in hint  # weights.absorb does not ask it
    code, out, _, _ = run_cli("absorb", spec, "--block", "planted", "--no-cache")
    assert code == 0 and out.strip().splitlines()[-1].startswith("hint: a narrower residual-free block may equal")


def test_the_width_hint_when_the_spec_asks_it() -> None:
    hint = cli.width_hint("my spec.absorb", "b", "not-absorbable", asks_width=True)
    assert hint is not None and "symabsorb prove 'my spec.absorb' -k 'width and b'" in hint
    assert "add it to the spec" not in hint
    for verdict in ("open", "conditional", "impossible", None):
        assert cli.width_hint("s.absorb", "b", verdict, asks_width=False) is None


def test_fmt_names_the_file_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("s.absorb").write_text("block   b {activation: relu dim: 2 width: 3}\nabsorb    b\n")
    code, out, err, _ = run_cli("fmt", "--check", "--diff", "./s.absorb")
    assert code == 1 and err == "./s.absorb would be reformatted\n" and out.startswith("--- ./s.absorb (original)")
    assert symabsorb.fmt(Path("s.absorb"), check=True, name="shown").render() == "shown would be reformatted\n"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_prove_in_a_terminal_suggests_the_width_question(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = str(EXAMPLES / "weights.absorb")
    for words, last in ((("-k", "generic"), "hint: a residual-free block of another width may equal `generic`: "),
                        ((), "hint: a residual-free block of another width may equal `planted`, `generic`, "
                             "`silu_skip`: the query `width NAME`")):
        out = _Terminal()
        monkeypatch.setattr(sys, "stdout", out)
        assert cli.main(["prove", spec, *words, "--no-cache"]) == 0
        assert out.getvalue().strip().splitlines()[-1].startswith(last)
    code, out_text, _, _ = run_cli("prove", spec, "--no-cache")  # piped: the report only
    assert code == 0 and "hint:" not in out_text
    asked = symabsorb.load((EXAMPLES / "weights.absorb").read_text() + "\nwidth generic\nwidth planted\n"
                           "width silu_skip\n")
    assert "width generic" in asked.queries  # a spec that asks every width gets no hint
    out = _Terminal()
    monkeypatch.setattr(sys, "stdout", out)
    selected = symabsorb.select(asked, "absorb")
    cli._prove_width_hint("s.absorb", asked, selected, symabsorb.prove(selected))
    assert out.getvalue() == ""
