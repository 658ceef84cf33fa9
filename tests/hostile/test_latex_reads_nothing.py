"""A hostile report compiled by pdflatex in -no-shell-escape mode reads no file outside the report's
directory (other than TeX's own trees): the `^^5c` trick in a weights file name and a tensor key
must not turn into `\\input`."""

from __future__ import annotations

import io
import subprocess
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from symabsorb.cli import main
from tests.helpers import require_module, require_program

PAYLOAD = "$^^5cinput{^^2fetc^^2fhostname}$"


def _tex_roots(kpsewhich: str) -> list[Path]:
    roots = []
    for var in ("TEXMFROOT", "TEXMFDIST", "TEXMFMAIN", "TEXMFLOCAL", "TEXMFSYSVAR", "TEXMFSYSCONFIG", "TEXMFVAR",
                "TEXMFCONFIG", "TEXMFHOME"):
        value = subprocess.run([kpsewhich, f"-var-value={var}"], capture_output=True, text=True).stdout.strip()
        roots += [Path(v).resolve() for v in value.split(":") if v.startswith("/")]
    return [*roots, Path("/usr/share/texmf").resolve(), Path("/usr/share/texlive").resolve(),
            Path("/var/lib/texmf").resolve(), Path("/etc/texmf").resolve()]


def test_hostile_report_reads_no_file_outside_its_directory(tmp_path: Path) -> None:
    pdflatex = require_program("pdflatex", "texlive-latex-base")
    kpsewhich = require_program("kpsewhich", "texlive-binaries")
    np = require_module("numpy", "weights")
    name = f"{PAYLOAD}.npz"
    np.savez(tmp_path / name, **{PAYLOAD: np.array([[1.0, 2.0], [3.0, 5.0]]), "W_down": np.eye(2)})
    spec = tmp_path / "s.absorb"
    spec.write_text(f'block b {{ activation: leaky_relu weights: "{name}" up: "{PAYLOAD}" down: "W_down" }}\n'
                    "absorb b\nclassify leaky_relu\n", encoding="utf-8")
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()) as err:
        code = main(["prove", str(spec), "-o", str(tmp_path / "r.tex")])
    assert code in (0, 1), err.getvalue()
    tex = (tmp_path / "r.tex").read_text(encoding="utf-8")
    assert "\\input" not in tex
    subprocess.run([pdflatex, "-no-shell-escape", "-interaction=nonstopmode", "-halt-on-error", "-recorder", "r.tex"],
                   cwd=tmp_path, capture_output=True, timeout=300)
    fls = (tmp_path / "r.fls").read_text(encoding="utf-8", errors="replace")
    pwd = next((line[4:].strip() for line in fls.splitlines() if line.startswith("PWD ")), str(tmp_path))
    roots = [tmp_path.resolve(), *_tex_roots(kpsewhich)]
    outside = []
    for line in fls.splitlines():
        if not line.startswith("INPUT "):
            continue
        path = Path(line[6:].strip())
        path = (Path(pwd) / path).resolve() if not path.is_absolute() else path.resolve()
        if not any(path == root or root in path.parents for root in roots):
            outside.append(str(path))
    assert outside == [], outside
    assert "hostname" not in fls
