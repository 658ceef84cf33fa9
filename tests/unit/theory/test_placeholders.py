"""Lemma-file placeholders are ``@{name}``: every other brace is TeX, so ``\\tfrac{a}{c}`` is printed as
written even where the result binds ``c``; the old ``{name}`` syntax is refused at load with a hint."""

from __future__ import annotations

from pathlib import Path

import pytest

from symabsorb.answer import Session
from symabsorb.model import resolve_text
from symabsorb.theory.library import LibraryError, library_with, old_placeholders, placeholders
from symabsorb.theory.prover import _fill
from tests.helpers import ROOT

THEOREMS = ROOT / "symabsorb" / "theorems"
# z/3 + z^2: odd part c z with c = 1/3 (L-odd-linear binds c), decided by the user copy of L-odd-linear
SPEC = "activation f(z) = z/3 + z^2\nblock b { activation: f }\nabsorb b\n"
STEP = "The odd part of $\\sigma$ is exactly $c\\,z$ with $c = @{c}$, so"


def _user(tmp_path: Path, old: str, new: str) -> Path:
    text = (THEOREMS / "L-odd-linear.toml").read_text(encoding="utf-8")
    assert old in text
    text = text.replace('id = "L-odd-linear"', 'id = "U-odd-linear"', 1).replace("priority = 50", "priority = 1", 1)
    path = tmp_path / "U-odd-linear.toml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def test_a_tex_group_named_like_a_binding_is_printed_as_written(tmp_path: Path) -> None:
    _user(tmp_path, STEP, STEP.replace("so", "and $\\tfrac{a}{c} \\ne 0$, so"))
    library = library_with([tmp_path])
    spec = resolve_text(SPEC, str(tmp_path / "s.absorb"))
    d = Session(library, base_dir=str(tmp_path)).answer(spec.queries[0]).derivation
    assert d is not None and d.decided_by == "U-odd-linear"
    step = next(s.text for s in d.steps if "odd part of" in s.text)
    assert "$\\tfrac{a}{c} \\ne 0$" in step  # not \tfrac{a}{\frac{1}{3}}
    assert "c = \\frac{1}{3}" in step  # the placeholder is filled


def test_the_old_syntax_is_refused_with_a_position_and_a_hint(tmp_path: Path) -> None:
    path = _user(tmp_path, STEP, STEP.replace("@{c}", "{c}"))
    with pytest.raises(LibraryError) as info:
        library_with([tmp_path])
    message = str(info.value)
    assert "`{c}` is the old placeholder syntax" in message and "@{c}" in message
    span = info.value.span
    assert span is not None and "{c}" in path.read_text(encoding="utf-8").splitlines()[span.line - 1]


def test_an_unbound_placeholder_is_refused(tmp_path: Path) -> None:
    _user(tmp_path, STEP, STEP.replace("so", "with @{k}, so"))
    with pytest.raises(LibraryError, match="the placeholder `@\\{k\\}` is bound by no hypothesis"):
        library_with([tmp_path])


def test_placeholder_scanning_and_filling() -> None:
    template = "\\tfrac{a}{c} + \\tfrac{1}@{c} = @{T}, z^@{k}, \\mathrm{T}, {T}"
    assert placeholders(template) == ["c", "T", "k"]
    assert old_placeholders(template, {"c", "T", "k"}) == ["T"]  # only the bare `{T}`: the rest is TeX
    assert _fill(template, {"c": "\\frac{1}{3}", "T": "-I", "k": "2"}) == \
        "\\tfrac{a}{c} + \\tfrac{1}{\\frac{1}{3}} = -I, z^{2}, \\mathrm{T}, {T}"


def test_the_shipped_library_uses_the_new_syntax_only() -> None:
    from symabsorb.theory.library import default_library

    default_library()  # loads: no old placeholder in any shipped template
    assert any("@{T}" in p.read_text(encoding="utf-8") for p in THEOREMS.glob("*.toml"))


def test_the_blueprint_shows_placeholders_by_name() -> None:
    """The blueprint export prints each result's proof outside any derivation: ``@{c}`` is a marked slot,
    ``⟨c⟩`` (never the bare name, which read as ``c = c``, ``= T``, ``Dcond`` to a new user), in math mode
    wherever it stands; ``\\tfrac{a}{c}`` stays TeX."""
    from symabsorb.report.latex import render_blueprint
    from symabsorb.theory.library import default_library, unfilled

    assert unfilled("$c = @{c}$, with @{Dcond}, \\tfrac{a}{c}") == \
        "$c = {\\langle\\mathtt{c}\\rangle}$, with ${\\langle\\mathtt{Dcond}\\rangle}$, \\tfrac{a}{c}"
    assert unfilled("$x$ and @{c_rpos}, $t^@{k}$") == \
        "$x$ and ${\\langle\\mathtt{c\\_rpos}\\rangle}$, $t^{\\langle\\mathtt{k}\\rangle}$"
    text = render_blueprint(default_library())
    assert "@{" not in text and "c = {\\langle\\mathtt{c}\\rangle}" in text and "\\textbackslash" not in text
    assert "{Dcond}" not in text.replace("\\mathtt{Dcond}", "") and "= {T}" not in text


def test_checkers_bind_values_and_the_toml_writes_the_latex() -> None:
    """R-pow's constants are bound as values (c_pow, k_pow): the LaTeX template shows them as LaTeX and the
    plain one as plain text (a pre-rendered LaTeX binding put `\\frac{1}{2}` into the plain condition)."""
    import symabsorb

    d = symabsorb.classify("z/2 + max(z,0)^(3/2)").answer.derivation
    assert d is not None and d.decided_by == "R-pow"
    assert d.condition_plain is not None and d.condition_plain.endswith("(c = 1/2, k = 3/2)")
    assert d.condition is not None and "c = \\frac{1}{2},\\ k = \\frac{3}{2}" in d.condition
    from symabsorb.theory.hypotheses import REGISTRY

    for name in ("power_linear_form", "r_pos_form", "log_linear_form"):
        assert not {"cpow", "kpow", "cval", "clog"} & set(REGISTRY[name].binds), name
