"""The language: every construct parses and resolves to the right mathematics."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import sympy as sp

from symabsorb.dsl.errors import SpecError, SpecImportError, SpecNameError
from symabsorb.dsl.formatter import format_module
from symabsorb.dsl.parser import parse_text
from symabsorb.model import GatedActivation, Z, activation_from_text, load_spec, resolve_text
from symabsorb.model.block import L_DEPTH, D
from tests.helpers import EXAMPLES, ROOT


def test_grammar_comes_from_the_installed_package() -> None:
    import symabsorb.grammar

    path = Path(symabsorb.grammar.__file__).parent / "absorb.lark"
    assert path.is_file()
    from symabsorb.dsl.parser import grammar_text

    assert grammar_text() == path.read_text(encoding="utf-8")


def test_activation_with_parameters_and_override() -> None:
    spec = resolve_text("""
activation leaky(z; alpha = 1/100) = max(z, alpha*z)
block b { activation: leaky(alpha = 1/5) }
classify leaky
""")
    (act,) = spec.activations
    assert act.expr == sp.Max(Z, Z / 100)
    assert spec.blocks[0].activation.expr == sp.Max(Z, Z / 5)
    assert spec.queries[0].target.expr == sp.Max(Z, Z / 100)


def test_any_variable_name_and_symbolic_parameter() -> None:
    spec = resolve_text("activation p(t; a > 0) = t*sigmoid(a*t)")
    act = spec.activations[0]
    (param,) = act.params
    assert param.symbol.is_positive
    assert act.expr.free_symbols == {Z, param.symbol}


def test_numbers_are_exact() -> None:
    spec = resolve_text("activation f(z) = 0.1*z + 3/4 + 2e-3 + pi + e")
    assert spec.activations[0].expr == Z / 10 + sp.Rational(3, 4) + sp.Rational(2, 1000) + sp.pi + sp.E


def test_if_then_else_and_comparisons() -> None:
    spec = resolve_text("activation f(z) = if z > 0 and z < 1 or z >= 2 then z else if z <= -1 then -1 else 0")
    e = spec.activations[0].expr
    assert isinstance(e, sp.Piecewise)
    assert e.subs(Z, sp.Rational(1, 2)) == sp.Rational(1, 2) and e.subs(Z, 3) == 3 and e.subs(Z, -2) == -1
    assert e.subs(Z, sp.Rational(3, 2)) == 0


def test_builtin_functions_all_resolve() -> None:
    text = ("activation f(z) = exp(z) + log(2 + z^2) + sqrt(1 + z^2) + abs(z) + sign(z) + max(z, 0, 1) + min(z, 1)"
            " + erf(z) + erfc(z) + tanh(z) + sinh(z) + cosh(z) + sin(z) + cos(z) + atan(z) + sigmoid(z)"
            " + softplus(z) + relu(z) + Phi(z)")
    e = resolve_text(text).activations[0].expr
    assert e.has(sp.erf, sp.erfc, sp.atan, sp.Max, sp.Min, sp.sign)


def test_power_operators() -> None:
    a = resolve_text("activation f(z) = z^2 + z**3").activations[0].expr
    assert a == Z**2 + Z**3


def test_gated_forms() -> None:
    spec = resolve_text("gated a gate silu\ngated b gate (u) = u*Phi(u)\ngated c gate leaky_relu(alpha = 1/5)")
    a, b, c = spec.activations
    assert isinstance(a, GatedActivation) and isinstance(b, GatedActivation) and isinstance(c, GatedActivation)
    assert sp.expand(b.gate.expr - Z * (1 + sp.erf(Z / sp.sqrt(2))) / 2) == 0


def test_blocks_skips_and_weights() -> None:
    spec = resolve_text("""
block a { activation: gelu dim: d width: 4*d skip: scaled(1/2) }
block b { activation: relu dim: 2 width: 3 skip: [[2, 1], [0, 1]]
          W_up: [[1, 0], [0, 1], [1, 1]] W_down: [[-1, 0, 0], [0, -1, 0]] }
block c { activation: swiglu dim: 2 width: 1 skip: none W_up: [[1, 0]] W_gate: [[0, 1]] W_down: [[1], [0]] }
block h { activation: gelu dim: 2 width: 4 skip: hyper(n: 2, mix: [[1, 1], [0, 1]]) }
block w { activation: gelu skip: identity }
""")
    a, b, c, h, w = spec.blocks
    assert a.dim == D and a.width == 4 * D and a.skip.kind == "scaled" and a.skip.factor == sp.Rational(1, 2)
    assert b.skip.matrix == sp.Matrix([[2, 1], [0, 1]]) and b.w_up.shape == (3, 2)
    assert c.skip.kind == "none" and c.w_gate is not None
    assert h.skip.n == 2 and h.stream_dim == 4
    assert w.skip.kind == "identity"


def test_width_is_inferred_from_weights() -> None:
    b = resolve_text("block b { activation: relu W_up: [[1, 0], [0, 1], [1, 1]] W_down: [[1, 0, 0], [0, 1, 0]] }").blocks[0]
    assert (b.dim, b.width) == (2, 3)


def test_stacks() -> None:
    spec = resolve_text("""
block a { activation: relu }
block b { activation: gelu }
stack s = a ^ L
stack t = [a, b, a]
stack u = b ^ 3
""")
    s, t, u = spec.stacks
    assert s.repeat == L_DEPTH and s.depth == L_DEPTH
    assert [x.name for x in t.blocks] == ["a", "b", "a"] and t.depth == 3
    assert u.depth == 3


def test_queries() -> None:
    spec = resolve_text("""
block a { activation: relu }
absorb a
classify gelu
series silu order 6
parity hardswish
facts swiglu
""")
    assert [q.kind for q in spec.queries] == ["absorb", "classify", "series", "parity", "facts"]
    assert spec.queries[2].order == 6


def test_import_relative_to_the_importing_file(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "acts.absorb").write_text("activation sq(z) = z^2\n")
    (tmp_path / "main.absorb").write_text('import "lib/acts.absorb"\nblock b { activation: sq }\nabsorb b\n')
    spec = load_spec(tmp_path / "main.absorb")
    assert spec.blocks[0].activation.expr == Z**2
    assert spec.imports == ("lib/acts.absorb",)


def test_import_cycle_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.absorb").write_text('import "b.absorb"\n')
    (tmp_path / "b.absorb").write_text('import "a.absorb"\n')
    with pytest.raises(SpecImportError, match="import cycle"):
        load_spec(tmp_path / "a.absorb")


def test_user_definitions_shadow_the_catalog() -> None:
    spec = resolve_text("activation gelu(z) = z*sigmoid(1.702*z)\nblock b { activation: gelu }")
    assert spec.blocks[0].activation.expr == Z / (1 + sp.exp(-sp.Rational(1702, 1000) * Z))


def test_classify_expression_variable_is_guessed() -> None:
    assert activation_from_text("x*sigmoid(x)").expr == Z / (1 + sp.exp(-Z))
    assert activation_from_text("gelu").name == "gelu"
    assert isinstance(activation_from_text("sigmoid", gated=True), GatedActivation)


def test_did_you_mean() -> None:
    with pytest.raises(SpecNameError) as info:
        resolve_text("activation f(z) = tahn(z)")
    assert info.value.hint is not None and "`tanh`" in info.value.hint


@pytest.mark.parametrize("text", [
    "activation f(z) = 2^100000",
    "block b { activation: relu dim: d W_up: [[1]] W_down: [[1]] }",
    "block b { activation: relu dim: 2 skip: [[1, 0], [0, 1], [1, 1]] }",
    "block b { activation: relu prefix: \"x\" }",
    "stack s = [a]",
])
def test_more_bad_inputs(text: str) -> None:
    with pytest.raises(SpecError) as info:
        resolve_text(text, "bad.absorb")
    assert info.value.span is not None


def test_every_example_checks() -> None:
    for path in sorted(EXAMPLES.glob("*.absorb")):
        load_spec(path)


def test_language_reference_examples_parse(tmp_path: Path) -> None:
    """Every ```absorb block in docs/language.md parses and resolves (beside the files it names)."""
    text = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```absorb\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 10
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "lib").mkdir()
    (tmp_path / "docs" / "layer3.npz").write_bytes(b"")
    shutil.copy(EXAMPLES / "activations.absorb", tmp_path / "docs" / "lib" / "activations.absorb")
    for i, block in enumerate(blocks):
        path = tmp_path / "docs" / f"example{i}.absorb"
        path.write_text(block, encoding="utf-8")
        load_spec(path)


def test_paper_example_formats_stably() -> None:
    text = (EXAMPLES / "paper.absorb").read_text(encoding="utf-8")
    formatted = format_module(parse_text(text))
    assert parse_text(formatted).statements == parse_text(text).statements
    assert "# The classification of Mijoski" in formatted  # comments are kept
