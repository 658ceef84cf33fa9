"""Issue 28 leftovers: `prove`'s plain summary table (what the terminal gets when stdout is not a TTY)
fits the terminal's width: a long "decided by" label (a user's lemma) wraps inside its column, nothing
is truncated, and no line runs past COLUMNS."""

from __future__ import annotations

from pathlib import Path

import pytest

from symabsorb.report.terminal import plain_table
from tests.helpers import USER_LEMMA, run_cli

LABEL = "A very long user lemma label about bounded activations and their growth"


def _words(text: str) -> list[str]:
    return text.split()


def _in_order(words: list[str], text: str) -> bool:
    """Every word of ``words`` appears in ``text``'s words, in order (columns wrapped side by side interleave)."""
    it = iter(_words(text))
    return all(any(w == x for x in it) for w in words)


@pytest.mark.parametrize("columns", [80, 60])
def test_summary_wraps_to_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, columns: int) -> None:
    lemmas = tmp_path / "lemmas"
    lemmas.mkdir()
    (lemmas / "mine.toml").write_text(USER_LEMMA.replace('label = "My lemma"', f'label = "{LABEL}"'),
                                      encoding="utf-8")
    spec = tmp_path / "s.absorb"
    spec.write_text("block t { activation: tanh dim: d width: 4*d }\nabsorb t\nclassify relu\n", encoding="utf-8")
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _, _ = run_cli("prove", str(spec), "--theorems", str(lemmas))
    assert code == 0
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= columns, out
    assert _in_order(_words(LABEL), out)  # wrapped in its column, every word kept, in order
    assert _in_order(_words("impossible for all weights"), out) and _in_order(["necessary:", "proved)"], out)


def test_plain_table_keeps_every_word_and_the_width() -> None:
    rows = [("absorb a_block_with_a_long_name", "impossible", LABEL, "x " * 60),
            ("classify relu", "conditional", "Thm. 8", "W_down[:,S] W_up[S,:] = -I_d")]
    for width in (40, 80, 120):
        lines = plain_table(rows, width)
        assert max(len(line) for line in lines) <= width
        assert _words(" ".join(lines)).count("x") == 60
        if width >= 80:  # room enough: words are never broken
            assert _in_order(_words(LABEL), "\n".join(lines))
