"""Issue 28 row 4: every citation in docs/, the result library (theorems/*.toml) and examples/*.absorb
resolves to docs/theorems.md — never to the design notes (``MATH.md §8``, a bare ``§11``), which are not
in the repository — and every anchor cited (``docs/theorems.md#biases``, ``[..](theorems.md#n2)``,
``[..](#ridge)`` inside theorems.md) exists there: an ``<a id="...">`` or a heading's GitHub slug."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
THEOREMS_MD = ROOT / "docs" / "theorems.md"

#: a citation of the design notes: MATH.md, "MATH §8", "MATH Part II"; or a bare section sign with a number that
#: is not a book's (the one book cited, Kuczma's, reads "*Inequalities*, §15.9")
DESIGN_NOTES = re.compile(r"\bMATH(?:\.md\b|\s*§|\s+Part\b|'s)|(?<!\*, )§\s*\d")
CITED = re.compile(r"(?:docs/)?theorems\.md#([A-Za-z0-9_-]+)")
LOCAL = re.compile(r"\]\(#([A-Za-z0-9_-]+)\)")


def _files() -> list[Path]:
    return sorted([*(ROOT / "docs").glob("*.md"), *(ROOT / "theorems").glob("*.toml"),
                   *(ROOT / "examples").glob("*.absorb")])


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set[str]:
    found = set(re.findall(r'<a id="([^"]+)"></a>', text))
    found |= {_slug(m) for m in re.findall(r"(?m)^#{1,6} (.+)$", text)}
    return found


def test_nothing_cites_the_design_notes() -> None:
    bad = [f"{path.relative_to(ROOT)}:{n}: {line.strip()[:120]}" for path in _files()
           for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if DESIGN_NOTES.search(line)]
    assert bad == []


def test_every_cited_anchor_exists() -> None:
    known = anchors(THEOREMS_MD.read_text(encoding="utf-8"))
    cited: dict[str, list[str]] = {}
    for path in _files():
        text = path.read_text(encoding="utf-8")
        names = CITED.findall(text) + (LOCAL.findall(text) if path == THEOREMS_MD else [])
        for name in names:
            cited.setdefault(name, []).append(str(path.relative_to(ROOT)))
    assert len(cited) >= 15  # the library's citations are anchored, not bare file names
    missing = {name: where for name, where in cited.items() if name not in known}
    assert missing == {}


def test_the_checker_sees_a_bad_citation() -> None:
    assert DESIGN_NOTES.search("symabsorb library lemma (MATH.md §9)")
    assert DESIGN_NOTES.search("they change the criterion, §11)")
    assert not DESIGN_NOTES.search("*Functional Equations and Inequalities*, §15.9")
    assert "biases" in anchors('<a id="biases"></a>\n\n## Real layers: biases and normalisation\n')
    assert "real-layers-biases-and-normalisation" in anchors("## Real layers: biases and normalisation\n")
    assert "nope" not in anchors(THEOREMS_MD.read_text(encoding="utf-8"))
