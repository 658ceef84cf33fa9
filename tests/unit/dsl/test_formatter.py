"""`symabsorb fmt` (issue 21, item 11): end-of-line comments stay in place, `--diff`, several files."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from symabsorb.cli import main
from symabsorb.dsl.formatter import format_module
from symabsorb.dsl.parser import parse_text

MESSY = """# header comment
activation f(z; 0<a<1) = a*z   # the mix
block B {   # the block
  activation: relu   # unit
  # the size
  dim: 2, width: 3   # two fields
  W_up: [[1, 0],   # row 1
         [0, 1], [1,1]]   # rows 2-3
  W_down: [[-1, 0, 0], [0, -1, 0]]
  # last words
}   # closing
space s = { primitives: [tanh]  # prims
  size: 3 }
absorb B  # query
# tail
"""

CANONICAL = """# header comment
activation f(z; 0 < a < 1) = a*z  # the mix

block B {  # the block
    activation: relu  # unit
    # the size
    dim: 2
    width: 3  # two fields
    W_up: [[1, 0], [0, 1], [1, 1]]  # row 1  # rows 2-3
    W_down: [[-1, 0, 0], [0, -1, 0]]
    # last words
}  # closing

space s = {
    primitives: [tanh]  # prims
    size: 3
}

absorb B  # query

# tail
"""


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_comments_stay_on_their_lines() -> None:
    formatted = format_module(parse_text(MESSY))
    assert formatted == CANONICAL
    assert format_module(parse_text(formatted)) == formatted  # stable
    assert parse_text(formatted) == parse_text(MESSY)  # same spec
    # every comment survives, exactly once
    comments = [line[line.index("#"):] for line in MESSY.splitlines() if "#" in line]
    for c in comments:
        assert formatted.count(c.split("#")[1].strip()) == 1, c


def test_comment_inside_a_one_line_statement_goes_above_it() -> None:
    text = "activation f(z) = z +  # half\n  tanh(z)\n"
    assert format_module(parse_text(text)) == "# half\nactivation f(z) = z + tanh(z)\n"


def test_diff_check_and_several_files(tmp_path: Path) -> None:
    messy = tmp_path / "messy.absorb"
    messy.write_text(MESSY, encoding="utf-8")
    clean = tmp_path / "clean.absorb"
    clean.write_text(CANONICAL, encoding="utf-8")
    code, out, _ = run("fmt", "--diff", str(messy), str(clean))
    assert code == 0
    assert out.startswith(f"--- {messy} (original)\n+++ {messy} (formatted)\n@@")
    assert "\n-activation f(z; 0<a<1) = a*z   # the mix\n" in out
    assert "\n+activation f(z; 0 < a < 1) = a*z  # the mix\n" in out
    assert str(clean) not in out  # nothing to change, nothing printed
    code, out, err = run("fmt", "--check", "--diff", str(tmp_path / "*.absorb"))
    assert code == 1 and f"{messy} would be reformatted" in err and "+++" in out
    assert run("fmt", str(messy), str(clean))[0] == 2  # two specs printed one after the other: refused
    assert run("fmt", "--write", str(tmp_path / "*.absorb"))[0] == 0
    assert messy.read_text(encoding="utf-8") == CANONICAL
    assert run("fmt", "--check", str(messy), str(clean)) == (0, "", "")


def test_an_error_in_one_file_does_not_stop_the_others(tmp_path: Path) -> None:
    bad = tmp_path / "a.absorb"
    bad.write_text("activation f(z) = 2z\n", encoding="utf-8")
    good = tmp_path / "b.absorb"
    good.write_text("absorb   B\n", encoding="utf-8")
    code, _, err = run("fmt", "--write", str(bad), str(good))
    assert code == 2 and "a.absorb:1:20" in err and "`2*z`" in err
    assert good.read_text(encoding="utf-8") == "absorb B\n"


def test_comment_inside_a_one_line_statement_formats_idempotently() -> None:
    """A comment written inside a one-line statement goes above it with the blank line it gets when
    read back as a leading comment (found by test_properties.test_format_round_trip)."""
    from symabsorb.dsl.formatter import format_module
    from symabsorb.dsl.parser import parse_text

    text = 'import"a.absorb"# c\nimport"a.absorb"import# c\n"a.absorb"import "a.absorb"'
    once = format_module(parse_text(text, "gen.absorb"))
    assert format_module(parse_text(once, "gen.absorb")) == once
    assert "\n\n# c\nimport" in once
