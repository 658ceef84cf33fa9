"""Hostile input, round 2 (issue 22): lemma-file strings are escaped for every format they land in
(DOT, Mermaid, Markdown, HTML, LaTeX, terminal) and refused at load when no format should get them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from symabsorb.report.escape import dot_string, mermaid_text, terminal_text
from symabsorb.untrusted import check_result_data, id_collisions, text_problem
from tests.helpers import ROOT, run_cli

#: A label no format may take raw: closes a DOT attribute, opens HTML, reads a file in TeX.
PAYLOAD = 'LBL \\input{/etc/passwd} <script>alert(1)</script> " ] [image="/etc/passwd", URL="javascript:x" `x` #x;'


def _lemma_dir(tmp_path: Path, **fields: str) -> Path:
    """A copy of L-linear under a new id, with some fields replaced (TOML basic strings)."""
    import json

    text = (ROOT / "theorems" / "L-linear.toml").read_text(encoding="utf-8")
    text = text.replace('id = "L-linear"', 'id = "X-linear"').replace("priority = 5", "priority = 1")
    for key, value in fields.items():
        text = re.sub(rf"(?m)^{key} = .*$", lambda _m, k=key, v=value: f"{k} = {json.dumps(v)}", text, count=1)
    directory = tmp_path / "lemmas"
    directory.mkdir(exist_ok=True)
    (directory / "X-linear.toml").write_text(text, encoding="utf-8")
    return directory


_DOT_ATTRIBUTE = re.compile(r'\s*(\w+)=("(?:[^"\\]|\\.)*"|[\w.]+)\s*,?')


def _dot_attributes(line: str) -> list[str]:
    """The attribute names of one DOT node statement, parsed as Graphviz would."""
    body = line[line.index("[") + 1: line.rindex("]")]
    names, pos = [], 0
    while pos < len(body):
        m = _DOT_ATTRIBUTE.match(body, pos)
        assert m is not None, body[pos:]
        names.append(m.group(1))
        pos = m.end()
    return names


def test_dot_labels_cannot_close_their_attribute(tmp_path: Path) -> None:
    lemmas = _lemma_dir(tmp_path, label=PAYLOAD, title=PAYLOAD, citation=PAYLOAD)
    code, out, err, _ = run_cli("graph", "--theorems", str(lemmas), "--format", "dot")
    assert code == 0, err
    (line,) = [ln for ln in out.splitlines() if ln.strip().startswith("n_X_linear [")]
    assert set(_dot_attributes(line)) == {"label", "color", "fillcolor", "style", "penwidth", "tooltip"}
    assert "image=" not in "".join(_dot_attributes(line))


def test_mermaid_labels_are_entity_coded(tmp_path: Path) -> None:
    lemmas = _lemma_dir(tmp_path, label=PAYLOAD)
    code, out, err, _ = run_cli("graph", "--theorems", str(lemmas), "--format", "mermaid")
    assert code == 0, err
    (line,) = [ln for ln in out.splitlines() if ln.strip().startswith("n_X_linear[")]
    inside = line.strip()[len('n_X_linear["'):-2]
    assert not set(inside) & set('"<>`[]')


def test_lemma_strings_in_reports_are_escaped(tmp_path: Path) -> None:
    lemmas = _lemma_dir(tmp_path, label=PAYLOAD, title=PAYLOAD, citation=PAYLOAD)
    spec = tmp_path / "s.absorb"
    spec.write_text("activation lin(z) = 2*z\nblock b { activation: lin dim: 2 width: 3 }\nabsorb b\n")
    for fmt in ("md", "html", "tex"):
        out = tmp_path / f"r.{fmt}"
        code, _out, err, _ = run_cli("prove", str(spec), "--theorems", str(lemmas), "--format", fmt, "-o", str(out))
        assert code == 0, err
        text = out.read_text(encoding="utf-8")
        assert "X-linear" in text or "X\\-linear" in text or "X_linear" in text
        assert "<script>alert" not in text, fmt
        if fmt == "tex":
            assert "\\input{" not in text
        if fmt == "md":
            mermaid = text[text.index("```mermaid"):]
            assert '"] [image=' not in mermaid and "<script>" not in mermaid


def test_escape_functions() -> None:
    assert dot_string('a"b\\c\nd') == 'a\\"b\\\\c d'
    assert mermaid_text('a"<b>`[x]') == "a#quot;#lt;b#gt;#96;#91;x#93;"
    for ch in ("\x1b", "\x00", "\x9b", "\u202e", "\u2066", "\u200f", "\x07"):
        assert ch not in terminal_text(f"x{ch}[31my") and ch not in dot_string(ch) and ch not in mermaid_text(ch)


# ---- the loader's checks (symabsorb/untrusted.py) ------------------------------------------------

def _base() -> dict[str, object]:
    import tomllib

    return tomllib.loads((ROOT / "theorems" / "L-linear.toml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("change,needle", [
    ({"priority": "high"}, "priority"),
    ({"priority": True}, "priority"),
    ({"uses": "L-parity"}, "uses"),
    ({"label": 5}, "label"),
    ({"id": "L_linear"}, "L_linear"),
    ({"id": "../../etc/passwd"}, "../../etc/passwd"),
    ({"id": "x" * 65}, "x" * 65),
    ({"title": "a\x1b[2Jb"}, "title"),
    ({"citation": "a\u202eb"}, "citation"),
    ({"label": "a\x9bb"}, "label"),
    ({"statement": "a\x00b"}, "statement"),
    ({"conclusion": {"verdict": "absorbable", "scope": "all weights", "sufficient": ["proved"]}}, "sufficient"),
    ({"conclusion": {"verdict": "absorbable", "scope": "all weights", "necessary": "a\x1bb"}}, "necessary"),
    ({"proof": {"steps": "one"}}, "steps"),
])
def test_bad_result_data_is_refused(change: dict[str, object], needle: str) -> None:
    data = {**_base(), **change}
    problem = check_result_data(data)
    assert problem is not None and problem[0] == needle, problem


def test_good_result_data_and_every_shipped_file_pass() -> None:
    import tomllib

    for path in sorted((ROOT / "theorems").glob("*.toml")):
        assert check_result_data(tomllib.loads(path.read_text(encoding="utf-8"))) is None, path.name
    assert text_problem("σ(z) = c·z, $\\frac{1}{2}$\n\tok") is None


def test_ids_that_share_a_graph_node_collide() -> None:
    assert id_collisions(["L-linear", "L_linear"]) == [("L-linear", "L_linear")]
    assert id_collisions(["L-linear", "l-Linear", "thm8"]) == [("L-linear", "l-Linear")]
    assert id_collisions(["L-linear", "L-linear-rank"]) == []


# ---- the loader refuses them with a positioned error (exit 2) -----------------------------------

@pytest.mark.parametrize("field,value,shown", [
    ("priority", '"high"', "priority"), ("id", '"L_linear"', "L_linear"), ("label", '"a\\u001b[2Jb"', "label"),
    ("title", '"x\\u009bq"', "title"), ("citation", '"x\\u202ey"', "citation"),
])
def test_a_bad_lemma_file_is_a_positioned_error(tmp_path: Path, field: str, value: str, shown: str) -> None:
    text = (ROOT / "theorems" / "L-linear.toml").read_text(encoding="utf-8").replace('id = "L-linear"', 'id = "X-lin"')
    text = re.sub(rf"(?m)^{field} = .*$", lambda _m: f"{field} = {value}", text, count=1)
    (tmp_path / "bad.toml").write_text(text, encoding="utf-8")
    code, _out, err, _ = run_cli("classify", "relu", "--theorems", str(tmp_path))
    assert code == 2 and "bad.toml:" in err and shown in err, err
    assert not any(c in err for c in "\x1b\x9b\u202e")


def test_ids_colliding_on_a_graph_node_are_refused(tmp_path: Path) -> None:
    text = (ROOT / "theorems" / "L-linear.toml").read_text(encoding="utf-8").replace('id = "L-linear"',
                                                                                    'id = "l-Linear"')
    (tmp_path / "dup.toml").write_text(text, encoding="utf-8")
    code, _out, err, _ = run_cli("graph", "--theorems", str(tmp_path))
    assert code == 2 and "collides with `L-linear`" in err, err


def test_a_symlink_out_of_the_theorems_directory_is_refused(tmp_path: Path) -> None:
    private = tmp_path / "private.txt"
    private.write_text("root:secret-first-line\n")
    lemmas = tmp_path / "lemmas"
    lemmas.mkdir()
    (lemmas / "x.toml").symlink_to(private)
    code, _out, err, _ = run_cli("classify", "relu", "--theorems", str(lemmas))
    assert code == 2 and "leads outside" in err and "secret" not in err, err
