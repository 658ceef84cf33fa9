"""Issue 29's cold paths: a first ``classify`` or ``prove`` imports nothing its answer does not use.

SymPy's ``simplify`` imports ``sympy.physics.units`` on its first call (about 0.18 s of a cold
``classify gelu``, budgeted at 1.5× ``import sympy``): the quotients the positive-dilates criteria read
(an exponent over z, the argument of erf over z) are decided by rational-function cancellation instead.
Each check runs in a fresh interpreter, since any earlier ``simplify`` in the test process imports it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT


@pytest.mark.slow  # a cold interpreter each
@pytest.mark.parametrize("name", ["relu", "gelu"])
def test_a_cold_classify_does_not_import_the_units_module(name: str, tmp_path: Path) -> None:
    code = ("import sys, symabsorb\n"
            f"print(symabsorb.classify({name!r}).verdict)\n"
            "print('sympy.physics.units' in sys.modules)\n")
    env = {**os.environ, "SYMABSORB_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    verdict, imported = proc.stdout.split()
    assert verdict == "conditional"
    assert imported == "False"


@pytest.mark.slow  # the paper example proved in a cold interpreter, seconds of CPU
def test_a_cold_prove_of_the_paper_example_does_not_import_the_units_module(tmp_path: Path) -> None:
    # SiLU's odd part over z is 1/2 by cancellation; stack sizes are polynomials decided by their assumptions
    code = ("import sys\n"
            "from symabsorb.cli import main\n"
            "code = main(['prove', 'examples/paper.absorb'])\n"
            "print('units imported' if 'sympy.physics.units' in sys.modules else 'not imported', file=sys.stderr)\n"
            "sys.exit(code)\n")
    env = {**os.environ, "SYMABSORB_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT), "SYMABSORB_NO_REPLAY": "1"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr.strip().splitlines()[-1] == "not imported"


def test_the_positive_dilate_criteria_still_decide_gelu_and_the_exponential_quotients() -> None:
    import sympy as sp

    from symabsorb.analysis.facts import Status
    from symabsorb.analysis.posdilates import positive_dilate_fact
    from symabsorb.model.functions import Z

    gelu = Z * (1 + sp.erf(Z * sp.sqrt(2) / 2)) / 2
    assert positive_dilate_fact(gelu).evidence.status is Status.PROVED
    assert positive_dilate_fact(Z / (1 + sp.exp(-Z * sp.Rational(7, 4)))).evidence.status is Status.PROVED
