"""Generated and mutated specs (long, deep, huge literals) through `check`, `prove` and every renderer,
in-process with a small budget: each ends with a result or a positioned error, within the budget
(CPU time) plus slack, and never with a traceback."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import run_cli
from tests.hostile.test_typed_input import GRAMMAR_TEXT, shallow_generation

BUDGET = 1.0
SLACK = 2.5  # CPU seconds for start-up work outside the budget's reach (argument parsing, imports)
POSITIONED = re.compile(r"^\S+:\d+:\d+: error: ", re.M)

SEEDS = [
    "activation f(z) = z*sigmoid(z)\nclassify f\n",
    "activation f(z; a = 1/5) = max(a*z, z)\nblock b { activation: f dim: d width: 4*d }\nabsorb b\n",
    "block b { activation: relu W_up: [[1, 2], [3, 5]] W_down: [[1, 0], [0, 1]] }\nabsorb b\n",
    "block h { activation: gelu dim: 2 skip: hyper(n: 2, mix: [[1, 0], [0, 1]]) }\nstack s = h ^ 3\nabsorb s\n",
    "activation g(z) = if z > 0 then z^2 else -z/2\nseries g order 6\nparity g\nfacts g\n",
    'block w { activation: relu weights: "w.npz" }\nabsorb w\n',
    "gated u gate (z) = tanh(z)\nfacts u\nclassify u\n",
]

_HUGE = st.sampled_from(["9" * 4301, "1e999999999", "1e-99999", "2^4096", "(2^4096)^4096", "10^1000",
                         "0." + "0" * 5000 + "1", "1" * 200 + "." + "1" * 200])


@st.composite
def mutated(draw: st.DrawFn, base: st.SearchStrategy[str]) -> str:
    """A spec text with one to three hostile mutations."""
    text = draw(base)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["repeat", "nest", "huge", "chain", "splice", "truncate", "unary", "calls"]))
        pos = draw(st.integers(0, len(text)))
        variables = [m.start() for m in re.finditer(r"\bz\b", text)
                     if "=" in text[text.rfind("\n", 0, m.start()) + 1:m.start()]]  # in a body, not a declaration
        if variables and kind not in ("repeat", "splice", "truncate") and draw(st.booleans()):
            # at an expression's variable, so the result still parses and reaches the later stages
            at = draw(st.sampled_from(variables))
            text = text[:at] + text[at + 1:]
            pos = at
        if kind == "repeat" and text:
            a = draw(st.integers(0, len(text) - 1))
            piece = text[a:a + draw(st.integers(1, 40))]
            text = text[:pos] + piece * draw(st.integers(2, 3000)) + text[pos:]
        elif kind == "nest":
            n = draw(st.integers(50, 700))
            text = text[:pos] + "(" * n + "z" + ")" * n + text[pos:]
        elif kind == "huge":
            text = text[:pos] + draw(_HUGE) + "*z" + text[pos:]
        elif kind == "chain":
            op = draw(st.sampled_from([" + ", " - ", " * ", " / ", " and z > ", "^"]))
            text = text[:pos] + op.join(["z"] * draw(st.integers(100, 5000))) + text[pos:]
        elif kind == "splice":
            text = text[:pos] + draw(st.text(alphabet="()[]{}^*/+-=<>;:,.\"#\\$`~ \n0123456789ezif", max_size=30)) + \
                text[pos:]
        elif kind == "truncate":
            text = text[:pos]
        elif kind == "unary":
            text = text[:pos] + "-" * draw(st.integers(100, 2000)) + "z" + text[pos:]
        else:
            n = draw(st.integers(20, 400))
            text = text[:pos] + "exp(" * n + "z" + ")" * n + text[pos:]
    return text


SPECS = st.one_of(mutated(st.sampled_from(SEEDS)), mutated(GRAMMAR_TEXT), st.sampled_from(SEEDS))


run = run_cli


def check_command(*argv: str) -> None:
    code, _, err, used = run(*argv, "--budget", str(BUDGET))
    assert "Traceback" not in err and "internal error" not in err, err[-2000:]
    assert code in (0, 1, 2), (code, err[-2000:])
    if code == 2:
        # (a warning line, e.g. a missing optional extra, may come first)
        assert POSITIONED.search(err) or re.search(r"^error: ", err, re.MULTILINE), err[-2000:]
    assert used < 2 * BUDGET + SLACK, (argv, used)


def check_spec(text: str, fmt: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "gen.absorb"
        spec.write_text(text, encoding="utf-8")
        check_command("check", str(spec))
        if fmt == "terminal":
            check_command("prove", str(spec))
        else:
            check_command("prove", str(spec), "-o", str(Path(tmp) / f"report.{fmt}"))


FORMATS = st.sampled_from(["md", "html", "tex", "json", "terminal"])


@shallow_generation
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(SPECS, FORMATS)
@pytest.mark.slow  # a property test, seconds of CPU (the fast tier's budget: make test-fast <= 60 s)
def test_generated_and_mutated_specs_end_cleanly_within_budget(text: str, fmt: str) -> None:
    check_spec(text, fmt)


@pytest.mark.slow
@shallow_generation
@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(SPECS, FORMATS)
def test_many_generated_and_mutated_specs_end_cleanly_within_budget(text: str, fmt: str) -> None:
    check_spec(text, fmt)
