"""Issue 28 row 14: a misspelt option after a command gets a did-you-mean (exit 2, one line, no usage dump)."""

from __future__ import annotations

from tests.helpers import run_cli


def test_a_misspelt_option_gets_a_did_you_mean() -> None:
    code, out, err, _ = run_cli("graph", "--fromat", "json")
    assert code == 2 and out == ""
    assert "unknown option `--fromat` for `symabsorb graph`; did you mean `--format`?" in err, err


def test_an_abbreviation_and_an_unknown_option() -> None:
    code, out, _err, _ = run_cli("graph", "--form", "json")  # argparse's abbreviations still work
    assert code == 0 and out.lstrip().startswith("{")
    code, _out, err, _ = run_cli("graph", "--xyzzy")
    assert code == 2 and "`symabsorb graph --help` lists them" in err
