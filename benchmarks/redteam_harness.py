# ruff: noqa  (a scratch harness of attacks: lambdas bound in loops, long literal payloads)
"""Round-3 adversarial harness (docs/referee-attacks.md, "Round 3 (fresh review)").

Runs hostile inputs against the command line (one subprocess each, CPU time measured with
``os.wait4``'s rusage, a hard RLIMIT_CPU as a safety net) and checks each outcome against the
promises: no traceback, no exit 3 for bad input, exit 2 with a message for bad input, CPU within
``--budget`` (plus the interpreter's start), no file outside what was named, escaped output.

    python benchmarks/redteam_harness.py [--only CLASS] [--jobs N] [--scratch /tmp/redteam]

Prints one line per attack and a table of counts per class and outcome. Scratch files live in
``--scratch``; nothing is written elsewhere.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import threading
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

PY = sys.executable
START_CPU = 3.0  # interpreter + imports, beyond --budget


@dataclass
class Outcome:
    rc: int
    out: str
    err: str
    cpu: float
    killed: bool


@dataclass
class Attack:
    cls: str
    name: str
    argv: list[str]
    setup: Callable[[Path], None] | None = None
    stdin: bytes | None = None
    expect: tuple[int, ...] = (0, 1, 2)
    budget: float | None = None  # CPU seconds allowed (beyond START_CPU)
    check: Callable[[Path, Outcome], str | None] | None = None
    env: dict[str, str] = field(default_factory=dict)
    hard: float = 120.0
    py: str | None = None  # run `python -c py` instead of the command line


def run(attack: Attack, root: Path) -> tuple[str, str]:
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in attack.name)[:60]
    work = root / attack.cls / f"{ATTACKS.index(attack):04d}-{safe}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    cache = work / ".cache"
    cache.mkdir(mode=0o700)
    if attack.setup is not None:
        try:
            attack.setup(work)
        except Exception as err:  # a setup failure is the harness's bug
            return "setup-error", f"{type(err).__name__}: {err}"
    env = dict(os.environ, SYMABSORB_CACHE_DIR=str(cache), SYMABSORB_NO_REPLAY="1", COLUMNS="100")
    env.update(attack.env)
    limit = attack.hard

    def pre() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (int(limit), int(limit) + 5))
        resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
        os.setsid()

    argv = [PY, "-m", "symabsorb", *[a.replace("@W", str(work)) for a in attack.argv]]
    if attack.py is not None:
        argv = [PY, "-c", attack.py.replace("@W", str(work))]
    proc = subprocess.Popen(argv, cwd=work, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=pre)
    bufs: dict[str, bytes] = {}

    def pump(name: str, stream: object) -> None:
        bufs[name] = stream.read()  # type: ignore[attr-defined]

    readers = [threading.Thread(target=pump, args=("out", proc.stdout)),
               threading.Thread(target=pump, args=("err", proc.stderr))]
    for t in readers:
        t.start()
    try:
        assert proc.stdin is not None
        proc.stdin.write(attack.stdin or b"")
        proc.stdin.close()
    except BrokenPipeError:
        pass
    watchdog = threading.Timer(max(limit * 3, 60), lambda: os.killpg(proc.pid, 9))
    watchdog.start()
    start = time.monotonic()
    _, status_, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    watchdog.cancel()
    for t in readers:
        t.join()
    rc = os.waitstatus_to_exitcode(status_)
    proc.returncode = rc
    cpu = usage.ru_utime + usage.ru_stime
    o = Outcome(rc, bufs.get("out", b"").decode("utf-8", "replace"), bufs.get("err", b"").decode("utf-8", "replace"),
                cpu, rc < 0)
    problems = []
    if "Traceback (most recent call last)" in o.err:
        problems.append("traceback")
    if rc == 3:
        problems.append("exit3")
    if rc < 0:
        problems.append(f"signal{-rc}")
    if rc not in attack.expect and rc >= 0 and rc != 3:
        problems.append(f"rc={rc} not in {attack.expect}")
    if rc == 2 and not o.err.strip():
        problems.append("exit2-silent")
    if attack.budget is not None and cpu > attack.budget + START_CPU:
        problems.append(f"cpu={cpu:.1f}s>budget {attack.budget}")
    if attack.check is not None:
        msg = attack.check(work, o)
        if msg:
            problems.append(msg)
    status = "FINDING" if problems else "ok"
    detail = f"rc={rc} cpu={cpu:.1f}s wall={wall:.1f}s " + ("; ".join(problems) if problems else "")
    if problems:
        detail += " | " + (o.err.strip().splitlines() or [""])[-1][:200]
    return status, detail


# ---- helpers -------------------------------------------------------------------------------------

def w(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)


def spec(text: str, name: str = "s.absorb") -> Callable[[Path], None]:
    return lambda d: w(d / name, text)


def no_file(*names: str) -> Callable[[Path, Outcome], str | None]:
    def check(d: Path, o: Outcome) -> str | None:
        for n in names:
            if (d / n).exists() or Path(n).is_absolute() and Path(n).exists():
                return f"wrote {n}"
        return None
    return check


def unchanged(name: str, content: bytes) -> Callable[[Path, Outcome], str | None]:
    def check(d: Path, o: Outcome) -> str | None:
        p = d / name
        if not p.exists() or p.read_bytes() != content:
            return f"{name} changed"
        return None
    return check


def absent_in_output(*needles: str, files: tuple[str, ...] = ()) -> Callable[[Path, Outcome], str | None]:
    def check(d: Path, o: Outcome) -> str | None:
        texts = {"stdout": o.out, "stderr": o.err}
        for f in files:
            p = d / f
            if p.exists():
                texts[f] = p.read_text("utf-8", "replace")
        for where, t in texts.items():
            for n in needles:
                if n in t:
                    return f"{n!r} raw in {where}"
        return None
    return check


def all_checks(*checks: Callable[[Path, Outcome], str | None]) -> Callable[[Path, Outcome], str | None]:
    def check(d: Path, o: Outcome) -> str | None:
        for c in checks:
            m = c(d, o)
            if m:
                return m
        return None
    return check


ATTACKS: list[Attack] = []


def A(*args: object, **kw: object) -> None:
    ATTACKS.append(Attack(*args, **kw))  # type: ignore[arg-type]


# ATTACKS-BEGIN
BAD = (2,)
GOOD = "block b { activation: relu dim: 2 width: 3 }\nabsorb b\n"
PLANTED = ("block p { activation: relu dim: 2 width: 3\n W_up: [[1, 0], [0, 1], [1, 1]]\n"
           " W_down: [[-1, 0, 1/2], [0, -1, 1/3]] }\nabsorb p\n")

# ---- code from data: spec text that would run code if it reached eval/sympify ------------------
CODE_EXPRS = [
    "__import__('os').system('touch PWNED')", "exec(z)", "eval(z)", "lambda: z", "z.__class__", "os.system(z)",
    "Symbol(z)", "S(1)", "Integer(3)", "sympify(z)", "open(z)", "z if 1 else 2", "getattr(z, 1)",
    "Function('f')(z)", "E**z", "I*z", "oo", "zoo", "nan", "factorial(z)", "Lambda(z, z)", "Subs(z, z, 1)",
    "Integral(z, z)", "diff(z, z)", "__builtins__", "z[0]", "{z}", "`z`", "\"z\"", "z @ z", "z; import os",
    "Heaviside(z)", "DiracDelta(z)", "gamma(z)", "zeta(z)", "besselj(1, z)", "Piecewise((z, z > 0))",
    "exp(1)(z)", "relu(z)(z)", "relu(z; __class__ = 1)", "relu(z; z = 1)", "max()", "min(z)", "sign()",
]
for i, e in enumerate(CODE_EXPRS):
    for cmd in (["classify"], ["facts"]):
        A("code", f"{cmd[0]}-expr-{i}", [*cmd, e, "--budget", "20"], expect=BAD + (0, 1),
          check=no_file("PWNED"), budget=20)
    A("code", f"spec-expr-{i}", ["prove", "s.absorb", "--budget", "20"],
      setup=spec(f"activation f(z) = {e}\nclassify f\n"), expect=BAD + (0, 1), check=no_file("PWNED"), budget=20)

# a pickle planted as every weights format: must be refused, never unpickled
PICKLE = (b"\x80\x04\x95\x1f\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94\x8c\x06system\x94\x93\x94"
          b"\x8c\x0btouch PWNED\x94\x85\x94R\x94.")


def _pickle_bytes() -> bytes:
    import pickle

    class P:
        def __reduce__(self) -> tuple[object, ...]:
            return (os.system, ("touch PWNED",))
    return pickle.dumps({"W_up": P(), "W_down": P()})


def _torch_zip_pickle(d: Path, name: str) -> None:
    import io
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", _pickle_bytes())
        zf.writestr("archive/version", "3\n")
        zf.writestr("archive/byteorder", "little")
    w(d / name, buf.getvalue())


def _npz_pickle(d: Path) -> None:
    import io
    import zipfile
    import numpy as np
    arr = np.array([object(), 1], dtype=object)
    del arr
    header = b"\x93NUMPY\x01\x00" + (b"{'descr': '|O', 'fortran_order': False, 'shape': (2,), }").ljust(118) + b"\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("W_up.npy", header + _pickle_bytes())
        zf.writestr("W_down.npy", header + _pickle_bytes())
    w(d / "w.npz", buf.getvalue())


for ext in ("pt", "pth", "bin"):
    A("code", f"torch-pickle-raw-{ext}", ["prove", "s.absorb", "--budget", "20"],
      setup=lambda d, ext=ext: (w(d / f"w.{ext}", _pickle_bytes()),
                                w(d / "s.absorb", f'block b {{ activation: relu weights: "w.{ext}" }}\nabsorb b\n')),
      expect=BAD, check=no_file("PWNED"))
    A("code", f"torch-pickle-zip-{ext}", ["prove", "s.absorb", "--budget", "20"],
      setup=lambda d, ext=ext: (_torch_zip_pickle(d, f"w.{ext}"),
                                w(d / "s.absorb", f'block b {{ activation: relu weights: "w.{ext}" }}\nabsorb b\n')),
      expect=BAD, check=no_file("PWNED"))
    A("code", f"scan-torch-pickle-{ext}", ["scan", "ck", "--in-process", "--budget", "30"],
      setup=lambda d, ext=ext: (_torch_zip_pickle(d / "ck", f"w.{ext}") if (d / "ck").mkdir() is None else None),
      expect=(0, 1, 2), check=no_file("PWNED"))
A("code", "npz-object-pickle", ["prove", "s.absorb", "--budget", "20"],
  setup=lambda d: (_npz_pickle(d), w(d / "s.absorb", 'block b { activation: relu weights: "w.npz" }\nabsorb b\n')),
  expect=BAD, check=no_file("PWNED"))
A("code", "scan-npz-object-pickle", ["scan", "ck", "--in-process", "--budget", "30"],
  setup=lambda d: ((d / "ck").mkdir(), _npz_pickle(d / "ck")), expect=(0, 1, 2), check=no_file("PWNED"))

# ---- budgets and hangs in spec text ---------------------------------------------------------------
HEAVY = [
    "z^(10^10)", "(z+1)^100000", "2^2^2^2^2^2", "10^(10^10)*z", "exp(exp(exp(exp(exp(z)))))", "z^(1/3)^(1/3)^(1/3)",
    "(1+z)^4096*(1-z)^4096", "sin(z)^200 + cos(z)^200", "z*" + "*".join(["sigmoid(z)"] * 60),
    "+".join(f"max(0, z - {k}/7)" for k in range(300)), "if z > 0 then " * 90 + "z" + " else 0" * 90,
    "erf(erf(erf(erf(erf(erf(erf(erf(z))))))))", "tanh(z)^(10^5)", "(z^2+1)^(1/7)^(1/9)", "exp(z^(10^3))",
    "1" + "0" * 3990 + "*z", "0." + "0" * 3990 + "1*z", "z^(" + "9" * 4000 + ")", "exp(" + "9" * 3000 + "*z)",
    "z*sigmoid(z*10^4000)", "log(1 + exp(z^4096))", "sqrt(z^2 + 1)^(10^6)", "abs(z)^(4097/2)",
    "z^2^2^2^2^2^2^2^2", "sinh(sinh(sinh(sinh(sinh(z)))))", "z + 1e-4000*z^2", "z*(1 + 1e4000)",
]
for i, e in enumerate(HEAVY):
    for b in ("2", "6"):
        A("budget", f"facts-heavy-{i}-b{b}", ["facts", e, "--budget", b, "--no-cache"], budget=float(b))
        A("budget", f"classify-heavy-{i}-b{b}", ["classify", e, "--budget", b, "--no-cache"], budget=float(b))
    A("budget", f"prove-heavy-{i}", ["prove", "s.absorb", "--budget", "4", "--no-cache", "-o", "r.tex"],
      setup=spec(f"activation f(z) = {e}\nblock b {{ activation: f dim: 3 width: 5 }}\nabsorb b\nwidth b\n"
                 "stack s = b ^ 7\nabsorb s\n"), budget=4.0)
SIZES = ["dim: 10^100 width: 10^101", "dim: 99999999999 width: 3", "dim: 2 width: 10^4000", "dim: d width: d^(10^9)",
         "dim: 0 width: 0", "dim: -1 width: 2", "dim: 1/2 width: 3", "dim: 2^64 width: 2^65", "dim: d width: 10^9*d",
         "dim: 3000 width: 3000", "dim: 2 width: 3 skip: hyper(n: 10^9, mix: [[1]])",
         "dim: 2 width: 3 skip: scaled(10^4000)", "dim: 2 width: 3 skip: [[1, 0], [0]]", "dim: 400 width: 400"]
for i, sz in enumerate(SIZES):
    for act in ("relu", "swiglu", "z + z^2", "silu"):
        decl = f"activation a(z) = {act}\n" if "z" in act else ""
        name = "a" if "z" in act else act
        A("budget", f"size-{i}-{act[:5]}", ["prove", "s.absorb", "--budget", "4", "--no-cache"],
          setup=spec(f"{decl}block b {{ activation: {name} {sz} }}\nabsorb b\nwidth b\nstack s = b ^ 10^9\n"
                     "absorb s\n"), budget=4.0)
A("budget", "stack-huge-depth", ["prove", "s.absorb", "--budget", "3"],
  setup=spec("block b { activation: relu dim: 2 width: 3 }\nstack s = b ^ " + "9" * 4000 + "\nabsorb s\n"), budget=3)
A("budget", "facts-order-huge", ["facts", "tanh", "--order", "1000000000", "--budget", "3"], budget=3)
A("budget", "facts-order-4000", ["facts", "gelu", "--order", "4000", "--budget", "3", "--no-cache"], budget=3)
A("budget", "facts-order-neg", ["facts", "gelu", "--order", "-5"], expect=BAD)
A("budget", "facts-order-str", ["facts", "gelu", "--order", "1e3"], expect=BAD)
for bud in ("0", "-1", "nan", "inf", "-inf", "1e-300", "1e308", "0x10", "", "1_000"):
    A("budget", f"budget-value-{bud or 'empty'}", ["classify", "relu", "--budget", bud], expect=BAD + (0,), budget=10)
for lim in ("depth=1000000", "digits=100000000", "exponent=10000000000", "tokens=100000000000", "files=-1",
            "input-bytes=0", "nonsense=3", "depth", "depth=1e9", "depth=0"):
    A("budget", f"limit-{lim}", ["prove", "s.absorb", "--limit", lim, "--budget", "5"],
      setup=spec("activation f(z) = " + "(" * 5000 + "z" + ")" * 5000 + "\nclassify f\n"), expect=BAD + (0, 1),
      budget=5)
A("budget", "deep-parens-raised-limit", ["classify", "(" * 50000 + "z" + ")" * 50000, "--limit", "depth=10000000",
                                         "--limit", "tokens=10000000", "--budget", "5"], expect=BAD + (0,), budget=5)
A("budget", "deep-neg-raised", ["classify", "-" * 30000 + "z", "--limit", "depth=10000000", "--budget", "5"],
  expect=BAD + (0,), budget=5)
A("budget", "deep-pow-raised", ["classify", "^".join(["z"] * 20000), "--limit", "depth=10000000",
                                "--limit", "exponent=100000000", "--budget", "5"], expect=BAD + (0,), budget=5)
A("budget", "deep-if-raised", ["prove", "s.absorb", "--limit", "depth=10000000", "--budget", "5"],
  setup=spec("activation f(z) = " + "if z > 0 then " * 3000 + "z" + " else 0" * 3000 + "\nclassify f\n"),
  expect=BAD + (0, 1), budget=5)
A("budget", "digits-raised", ["classify", "9" * 200000 + "*z", "--limit", "digits=100000000",
                              "--limit", "input-bytes=100000000", "--budget", "5"], expect=BAD + (0,), budget=5)
A("budget", "exponent-raised", ["classify", "z^(10^100000)", "--limit", "exponent=1000000000000",
                                "--limit", "digits=100000000", "--budget", "5"], expect=BAD + (0,), budget=5)
A("budget", "rational-raised", ["classify", "(" + "9" * 100000 + "/7)^(10^5)*z", "--limit", "exponent=1000000000",
                                "--limit", "digits=100000000", "--budget", "5"], expect=BAD + (0,), budget=5)
A("budget", "many-queries", ["prove", "s.absorb", "--budget", "5", "--no-cache"],
  setup=spec("".join(f"activation f{i}(z) = z*sigmoid({i+1}*z) + {i}/7*z^2\nclassify f{i}\n" for i in range(400))),
  budget=5)
A("budget", "many-blocks-weights", ["prove", "s.absorb", "--budget", "5", "--no-cache"],
  setup=spec("".join(f"block b{i} {{ activation: relu W_up: [[{i}, 1], [1, {i+1}], [2, 3]] "
                     f"W_down: [[1, 0, {i}], [0, 1, 1]] }}\nabsorb b{i}\n" for i in range(500))), budget=5)
A("budget", "big-inline-weights", ["prove", "s.absorb", "--budget", "5", "--no-cache"],
  setup=spec("block b { activation: relu W_up: [" + ",".join("[" + ",".join(str((i * 7 + j) % 13 - 6) for j in range(40))
             + "]" for i in range(60)) + "] W_down: [" + ",".join("[" + ",".join(str((i * 5 + j) % 11 - 5)
             for j in range(60)) + "]" for i in range(40)) + "] }\nabsorb b\n"), budget=5)
A("budget", "inline-huge-rationals", ["prove", "s.absorb", "--budget", "4", "--no-cache"],
  setup=spec("block b { activation: relu W_up: [" + ",".join("[" + ",".join(f"{'7'*3000}/{'3'*2999}{j}"
             for j in range(3)) + "]" for i in range(5)) + "] W_down: [" + ",".join("[" + ",".join(
                 f"-{'1'*3000}/{'9'*2999}{j}" for j in range(5)) + "]" for i in range(3)) + "] }\nabsorb b\n"),
  budget=4, expect=BAD + (0, 1))
A("budget", "planted-near", ["prove", "s.absorb", "--near", "1e-300", "--budget", "4"], setup=spec(PLANTED), budget=4)
for near in ("nan", "-1", "inf", "0", "1e999"):
    A("budget", f"near-{near}", ["prove", "s.absorb", "--near", near, "--budget", "4"], setup=spec(PLANTED),
      expect=BAD + (0,), budget=4)
A("budget", "keyword-bomb", ["prove", "s.absorb", "-k", "(" * 5000 + "a" + ")" * 5000], setup=spec(GOOD),
  expect=BAD + (0, 1), budget=10)
A("budget", "keyword-not-chain", ["prove", "s.absorb", "-k", "not " * 100000 + "a"], setup=spec(GOOD),
  expect=BAD + (0, 1), budget=10)
A("budget", "keyword-garbage", ["prove", "s.absorb", "-k", "a and or ) ("], setup=spec(GOOD), expect=BAD)
A("budget", "tokens-bomb", ["check", "s.absorb", "--budget", "5"],
  setup=spec("activation f(z) = " + "+".join(["z"] * 200000) + "\n"), expect=BAD, budget=5)
A("budget", "space-grid-huge", ["explore", "s.absorb", "--in-process", "--budget", "5", "--no-evidence"],
  setup=spec("space s = { family: a*z + b*abs(z)\n range a: [-1, 1]\n range b: [-1, 1]\n grid: 1000000000 }\n"),
  expect=BAD + (0, 1), budget=5)
A("budget", "space-size-huge", ["explore", "s.absorb", "--in-process", "--budget", "5", "--no-evidence"],
  setup=spec("space s = { primitives: [tanh, sigmoid, exp, erf, relu, abs]\n constants: [1/2, 2, 3, 5]\n size: 40 }\n"),
  expect=BAD + (0, 1), budget=5)
A("budget", "space-size-1e9", ["explore", "s.absorb", "--in-process", "--budget", "5", "--no-evidence"],
  setup=spec("space s = { primitives: [tanh]\n constants: [2]\n size: 1000000000 }\n"), expect=BAD + (0, 1), budget=5)
for opt in (["--sizes", "1000x1000"], ["--sizes", "99999999999x2"], ["--sizes", "0x0"], ["--sizes", "2x"],
            ["--starts", "1000000000"], ["--starts", "-1"], ["--case-budget", "1e308"], ["--case-budget", "nan"],
            ["--evidence-budget", "-3"], ["--workers", "100000"], ["--workers", "0"], ["--workers", "-2"],
            ["--workers", "abc"]):
    A("budget", f"explore-opt-{'-'.join(opt)[:30]}", ["explore", "s.absorb", "--budget", "6", "--in-process", *opt],
      setup=spec("space s = { family: a*z + abs(z)\n range a: [-1, 1]\n grid: 3 }\n"), expect=BAD + (0, 1),
      budget=6, hard=60)
for addr in ("tcp://10.255.255.1:8786", "tcp://127.0.0.1:1", "tcp://[::1]:1", "inproc://x", "ucx://127.0.0.1:1",
             "tls://127.0.0.1:1", "ws://127.0.0.1:1", "tcp://127.0.0.1:99999", "file:///etc/passwd", "127.0.0.1",
             "tcp://" + "a" * 300 + ":1", "tcp://localhost:8786\n", "\x1b[2J"):
    A("hang", f"scheduler-{addr[:24]}", ["explore", "s.absorb", "--budget", "4", "--scheduler", addr],
      setup=spec("space s = { family: a*z + abs(z)\n range a: [-1, 1]\n grid: 3 }\n"), expect=BAD + (0, 1),
      budget=4, hard=60)
    A("hang", f"scan-scheduler-{addr[:24]}", ["scan", "ck", "--budget", "4", "--scheduler", addr],
      setup=lambda d: (d / "ck").mkdir(), expect=BAD + (0, 1), budget=4, hard=60)


def _fifo(name: str) -> Callable[[Path], None]:
    def setup(d: Path) -> None:
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(d / name)
    return setup


def both(*fs: Callable[[Path], None]) -> Callable[[Path], None]:
    def setup(d: Path) -> None:
        for f in fs:
            f(d)
    return setup


A("hang", "fifo-spec", ["prove", "s.absorb", "--budget", "3"], setup=_fifo("s.absorb"), expect=BAD, budget=3, hard=30)
A("hang", "fifo-import", ["prove", "s.absorb", "--budget", "3"],
  setup=both(_fifo("i.absorb"), spec('import "i.absorb"\n' + GOOD)), expect=BAD, budget=3, hard=30)
for ext in ("npz", "safetensors", "pt"):
    A("hang", f"fifo-weights-{ext}", ["prove", "s.absorb", "--budget", "3"],
      setup=both(_fifo(f"w.{ext}"), spec(f'block b {{ activation: relu weights: "w.{ext}" }}\nabsorb b\n')),
      expect=BAD, budget=3, hard=30)
    A("hang", f"fifo-scan-{ext}", ["scan", "ck", "--in-process", "--budget", "3"], setup=_fifo(f"ck/w.{ext}"),
      expect=BAD + (0, 1), budget=3, hard=30)
A("hang", "fifo-theorem", ["prove", "s.absorb", "--theorems", "th", "--budget", "3"],
  setup=both(_fifo("th/x.toml"), spec(GOOD)), expect=BAD + (0, 1), budget=3, hard=30)
A("hang", "fifo-report", ["verify", "r.json", "--budget", "3"], setup=_fifo("r.json"), expect=BAD, budget=3, hard=30)
A("hang", "fifo-results-record", ["explore", "s.absorb", "--in-process", "--results", "res", "--budget", "20",
                                  "--no-evidence"],
  setup=both(spec("space s = { family: a*z + abs(z)\n range a: [-1, 1]\n grid: 3 }\n"),
             lambda d: (d / "res").mkdir(), _fifo("res/records.jsonl"), _fifo("res/cases.jsonl"),
             _fifo("res/enumeration.json")), expect=BAD + (0, 1), budget=20, hard=60)
A("hang", "fifo-cache-key", ["classify", "relu", "--budget", "3"], setup=_fifo(".cache/key"), expect=(0,), budget=3,
  hard=30)
A("hang", "dev-zero-spec", ["prove", "/dev/zero", "--budget", "3"], expect=BAD, budget=3, hard=30)
A("hang", "dev-stdin-spec", ["prove", "/dev/stdin", "--budget", "3"], stdin=GOOD.encode(), expect=BAD + (0,), budget=3,
  hard=30)
A("hang", "proc-spec", ["prove", "/proc/self/environ", "--budget", "3"], expect=BAD, budget=3, hard=30)
A("hang", "dev-zero-import", ["prove", "s.absorb", "--budget", "3", "--allow-outside"],
  setup=spec('import "/dev/zero"\n' + GOOD), expect=BAD, budget=3, hard=30)
A("hang", "dev-zero-weights", ["prove", "s.absorb", "--budget", "3", "--allow-outside"],
  setup=spec('block b { activation: relu weights: "/dev/zero.npz" }\nabsorb b\n'), expect=BAD, budget=3, hard=30)
A("hang", "dev-zero-results", ["explore", "s.absorb", "--results", "/dev/zero", "--budget", "3", "--in-process"],
  setup=spec("space s = { family: a*z + abs(z)\n range a: [-1, 1]\n grid: 3 }\n"), expect=BAD, budget=3, hard=30)
A("hang", "dev-null-output", ["prove", "s.absorb", "-o", "/dev/null", "--budget", "5"], setup=spec(GOOD),
  expect=BAD + (0,), budget=5)
A("hang", "dev-full-output", ["prove", "s.absorb", "-o", "/dev/full", "--budget", "5"], setup=spec(GOOD),
  expect=BAD, budget=5)
A("hang", "stdin-huge", ["prove", "-", "--budget", "5"], stdin=b"#" * 50_000_000, expect=BAD, budget=5)
A("hang", "stdin-twice", ["prove", "-", "-", "--budget", "5"], stdin=GOOD.encode(), expect=BAD + (0,), budget=5)
A("hang", "stdin-binary", ["prove", "-", "--budget", "5"], stdin=os.urandom(5000), expect=BAD, budget=5)
A("hang", "stdin-nul", ["prove", "-", "--budget", "5"], stdin=b"block b\x00 { }", expect=BAD, budget=5)
A("hang", "glob-bomb", ["prove", "**/**/**/**/*.absorb", "--budget", "5"],
  setup=lambda d: [(d / ("x/" * k)).mkdir(parents=True, exist_ok=True) for k in range(1, 30)], expect=BAD, budget=5)
A("hang", "glob-symlink-loop", ["prove", "**/*.absorb", "--budget", "5"],
  setup=lambda d: ((d / "a").mkdir(), os.symlink("..", d / "a" / "loop"), w(d / "a" / "s.absorb", GOOD)),
  expect=BAD + (0,), budget=5)

# ---- files beyond what was named -------------------------------------------------------------------
OUTSIDE = "/tmp/redteam-outside"


def _outside(d: Path) -> None:
    Path(OUTSIDE).mkdir(exist_ok=True)
    w(Path(OUTSIDE) / "o.absorb", GOOD)
    import numpy as np
    np.savez(Path(OUTSIDE) / "w.npz", W_up=np.eye(3, 2), W_down=-np.eye(2, 3))


for imp in ("/tmp/redteam-outside/o.absorb", "../../../../../../tmp/redteam-outside/o.absorb", "link/o.absorb",
            "lnk.absorb", "/etc/passwd", "sub/../../o.absorb", "./\u202eo.absorb", "%2e%2e/o.absorb", "~/o.absorb",
            "//tmp/redteam-outside/o.absorb", "sub/hard.absorb"):
    def setup(d: Path, imp: str = imp) -> None:
        _outside(d)
        os.symlink(OUTSIDE, d / "link")
        os.symlink(OUTSIDE + "/o.absorb", d / "lnk.absorb")
        (d / "sub").mkdir()
        w(d / "s.absorb", f'import "{imp}"\nabsorb b\n')
    A("files", f"import-{imp[:30]}", ["prove", "s.absorb"], setup=setup, expect=BAD)
for wf in ("/tmp/redteam-outside/w.npz", "../../../../tmp/redteam-outside/w.npz", "link/w.npz", "lnk.npz",
           "sub/../link/w.npz"):
    def setup(d: Path, wf: str = wf) -> None:
        _outside(d)
        os.symlink(OUTSIDE, d / "link")
        os.symlink(OUTSIDE + "/w.npz", d / "lnk.npz")
        (d / "sub").mkdir()
        w(d / "s.absorb", f'block b {{ activation: relu weights: "{wf}" }}\nabsorb b\n')
    A("files", f"weights-{wf[:30]}", ["prove", "s.absorb"], setup=setup, expect=BAD)
    A("files", f"absorb-weights-{wf[:24]}", ["absorb", "s.absorb", "--block", "b", "-o", "x.npz"], setup=setup,
      expect=BAD, check=no_file("x.npz"))
A("files", "scan-symlink-out", ["scan", "ck", "--in-process", "--json", "o.json"],
  setup=lambda d: (_outside(d), (d / "ck").mkdir(), os.symlink(OUTSIDE + "/w.npz", d / "ck" / "w.npz"),
                   os.symlink(OUTSIDE, d / "ck" / "dir")),
  expect=(0, 1, 2), check=absent_in_output("W_up", files=("o.json",)))
A("files", "scan-dir-symlink", ["scan", "lnk", "--in-process"],
  setup=lambda d: (_outside(d), os.symlink(OUTSIDE, d / "lnk")), expect=(0, 1, 2))
A("files", "theorems-symlink-out", ["prove", "s.absorb", "--theorems", "th"],
  setup=lambda d: ((d / "th").mkdir(), w(Path(OUTSIDE) / "x.toml", "id = 'x'\n"),
                   os.symlink(OUTSIDE + "/x.toml", d / "th" / "x.toml"), w(d / "s.absorb", GOOD)),
  expect=BAD + (0,))
A("files", "theorems-dir-symlink-loop", ["prove", "s.absorb", "--theorems", "th"],
  setup=lambda d: ((d / "th").mkdir(), os.symlink(".", d / "th" / "loop"), w(d / "s.absorb", GOOD)), expect=BAD + (0,))


def _same_out(args: list[str], target: str, prep: Callable[[Path], None]) -> None:
    def setup(d: Path) -> None:
        prep(d)
    A("files", f"out-onto-{target}-{args[0]}-{len(ATTACKS)}", args, setup=setup, expect=BAD,
      check=lambda d, o: None if (d / target).exists() and b"symabsorb" not in (d / target).read_bytes()[:0] and
      (d / target).read_bytes() == (d / ".orig").read_bytes() else f"{target} replaced")


def _keep(name: str, content: str | bytes) -> Callable[[Path], None]:
    def setup(d: Path) -> None:
        w(d / name, content)
        w(d / ".orig", content)
    return setup


_same_out(["prove", "s.absorb", "-o", "s.absorb"], "s.absorb", _keep("s.absorb", GOOD))
_same_out(["prove", "s.absorb", "-o", "h.md"], "s.absorb",
          both(_keep("s.absorb", GOOD), lambda d: os.link(d / "s.absorb", d / "h.md")))
_same_out(["prove", "s.absorb", "-o", "l.md"], "s.absorb",
          both(_keep("s.absorb", GOOD), lambda d: os.symlink("s.absorb", d / "l.md")))
_same_out(["prove", "s.absorb", "-o", "i.absorb"], "i.absorb",
          both(_keep("i.absorb", GOOD), spec('import "i.absorb"\n')))
_same_out(["prove", "s.absorb", "-o", "ii.md"], "ii.absorb",
          both(_keep("ii.absorb", GOOD), lambda d: w(d / "i.absorb", 'import "ii.absorb"\n'),
               spec('import "i.absorb"\n'), lambda d: os.link(d / "ii.absorb", d / "ii.md")))
_same_out(["prove", "s.absorb", "-o", "./"], "s.md", both(_keep("s.md", "x"), spec(GOOD),
                                                           lambda d: os.rename(d / "s.md", d / "s.md")))
_same_out(["prove", "s.absorb", "-o", "d/"], "d/s.md",
          both(_keep("d/s.md", GOOD), lambda d: w(d / "s.absorb", 'import "d/s.md"\n')))
_same_out(["prove", "s.absorb", "--theorems", "th", "-o", "th/x.toml"], "th/x.toml",
          both(_keep("th/x.toml", (Path(__file__).resolve().parent.parent / "theorems" / "L-linear.toml").read_text()
                     .replace('"L-linear"', '"X-linear"').replace("priority = 5", "priority = 99")), spec(GOOD)))
_same_out(["prove", "s.absorb", "-o", "w.json"], "w.npz",
          both(spec('block b { activation: relu weights: "w.npz" }\nabsorb b\n'),
               lambda d: __import__("numpy").savez(d / "w.npz", W_up=__import__("numpy").eye(3, 2),
                                                    W_down=-__import__("numpy").eye(2, 3)),
               lambda d: w(d / ".orig", (d / "w.npz").read_bytes()), lambda d: os.link(d / "w.npz", d / "w.json")))
_same_out(["absorb", "s.absorb", "--block", "b", "-o", "w2.npz"], "w.npz",
          both(spec('block b { activation: relu weights: "w.npz" }\nabsorb b\n'),
               lambda d: __import__("numpy").savez(d / "w.npz", W_up=__import__("numpy").eye(3, 2),
                                                    W_down=-__import__("numpy").eye(2, 3)),
               lambda d: w(d / ".orig", (d / "w.npz").read_bytes()), lambda d: os.link(d / "w.npz", d / "w2.npz")))
_same_out(["scan", "ck", "--in-process", "--json", "ck/w.npz"], "ck/w.npz",
          both(lambda d: (d / "ck").mkdir(),
               lambda d: __import__("numpy").savez(d / "ck/w.npz", **{"layer.0.mlp.fc1.weight": __import__("numpy")
                                                   .eye(3, 2), "layer.0.mlp.fc2.weight": -__import__("numpy").eye(2, 3)}),
               lambda d: w(d / ".orig", (d / "ck/w.npz").read_bytes())))
_same_out(["scan", "ck", "--in-process", "--json", "j.json"], "ck/w.npz",
          both(lambda d: (d / "ck").mkdir(),
               lambda d: __import__("numpy").savez(d / "ck/w.npz", **{"layer.0.mlp.fc1.weight": __import__("numpy")
                                                   .eye(3, 2), "layer.0.mlp.fc2.weight": -__import__("numpy").eye(2, 3)}),
               lambda d: w(d / ".orig", (d / "ck/w.npz").read_bytes()), lambda d: os.link(d / "ck/w.npz", d / "j.json")))
_same_out(["explore", "s.absorb", "--in-process", "--no-evidence", "-o", "s.absorb"], "s.absorb",
          _keep("s.absorb", "space s = { family: a*z + abs(z)\n range a: [-1, 1]\n grid: 3 }\n"))
_same_out(["explore", "s.absorb", "--in-process", "--no-evidence", "-o", "x.md", "--results", "r"], "s.absorb",
          both(_keep("s.absorb", "space s = { family: a*z + abs(z)\n range a: [-1, 1]\n grid: 3 }\n"),
               lambda d: os.link(d / "s.absorb", d / "x.md")))
_same_out(["graph", "--spec", "s.absorb", "-o", "s.absorb"], "s.absorb", _keep("s.absorb", GOOD))
_same_out(["graph", "--theorems", "th", "-o", "th/x.toml"], "th/x.toml",
          _keep("th/x.toml", (Path(__file__).resolve().parent.parent / "theorems" / "L-linear.toml").read_text()
                .replace('"L-linear"', '"X-linear"').replace("priority = 5", "priority = 99")))
_same_out(["prove", "s.absorb", "-o", ".cache/key"], ".cache/key", _keep(".cache/key", b"k" * 32))
_same_out(["fmt", "s.absorb", "-o", "i.absorb"], "i.absorb",
          both(_keep("i.absorb", GOOD), spec('import "i.absorb"\nabsorb b\n'))) if False else None
A("files", "explore-results-is-file", ["explore", "s.absorb", "--in-process", "--results", "s.absorb"],
  setup=spec("space s = { family: a*z + abs(z)\n range a: [-1, 1]\n grid: 3 }\n"), expect=BAD,
  check=unchanged("s.absorb", b"space s = { family: a*z + abs(z)\n range a: [-1, 1]\n grid: 3 }\n"))
A("files", "explore-results-symlink-out", ["explore", "s.absorb", "--in-process", "--results", "r", "--no-evidence"],
  setup=both(spec("space s = { family: a*z + abs(z)\n range a: [-1, 1]\n grid: 3 }\n"),
             lambda d: (Path(OUTSIDE + "/res").mkdir(parents=True, exist_ok=True), os.symlink(OUTSIDE + "/res", d / "r"))),
  expect=BAD + (0, 1), check=lambda d, o: "wrote outside" if any(Path(OUTSIDE + "/res").iterdir()) else None)
A("files", "explore-results-record-symlink", ["explore", "s.absorb", "--in-process", "--results", "r", "--no-evidence"],
  setup=both(spec("space s = { family: a*z + abs(z)\n range a: [-1, 1]\n grid: 3 }\n"),
             lambda d: ((d / "r").mkdir(), w(Path(OUTSIDE) / "victim", "v"),
                        *[os.symlink(OUTSIDE + "/victim", d / "r" / n) for n in
                          ("records.jsonl", "cases.jsonl", "enumeration.json", "atlas.md", "atlas.json", "atlas.html",
                           "results.jsonl", "evidence.jsonl")])),
  expect=BAD + (0, 1), check=lambda d, o: "victim changed" if Path(OUTSIDE + "/victim").read_text() != "v" else None)
A("files", "cache-dir-symlink", ["classify", "relu"],
  setup=lambda d: (Path(OUTSIDE + "/c").mkdir(mode=0o700, parents=True, exist_ok=True),),
  env={"SYMABSORB_CACHE_DIR": OUTSIDE + "/clink"}, expect=(0,))
A("files", "cache-dir-world-writable", ["classify", "relu"],
  setup=lambda d: os.chmod(d / ".cache", 0o777), expect=(0,),
  check=lambda d, o: "cache used" if any(p.name != "key" for p in (d / ".cache").iterdir()) else None)
A("files", "cache-entry-symlink-out", ["classify", "relu"],
  setup=lambda d: None, expect=(0,))

# ---- injection: strings from strangers into md/html/tex/dot/mermaid/terminal -------------------------
EVIL = ["\x1b]0;PWNED\x07", "\x1b[2J", "\x9b31m", "\u202eevil", "\u2066x\u2069", "<script>alert(1)</script>",
        "</code><img src=x onerror=alert(1)>", "\\input{/etc/passwd}", "\\write18{touch PWNED}", "^^5cinput{/etc/passwd}",
        "$\\input{/etc/passwd}$", "\\csname input\\endcsname{/etc/passwd}", "\\catcode`\\@=0 @input{/etc/passwd}",
        "[x](javascript:alert(1))", "| a | b |\n|---|", "\"]; evil [label=\"", "-->|x| evil", "\u0000", "\r\x1b[1A",
        "\\openin5=/etc/passwd", "\\include{x}", "\\verbatiminput{/etc/passwd}", "\\usepackage{x}",
        "<!--", "]]><![CDATA[", "{{7*7}}", "\u2028", "\x85", "\\lstinputlisting{/etc/passwd}", "\\def\\x{\\input}\\x{a}",
        "\\immediate\\write18{id}", "\\special{x}", "\\directlua{os.execute('id')}", "\\pdffiledump{/etc/passwd}"]
ESC_NEEDLES = ["\x1b", "\x9b", "\u202e", "\u2066", "<script", "onerror=", "\\input{", "\\write18", "^^5c",
               "\\csname", "\\catcode", "javascript:", "\\openin", "\\verbatiminput", "\\lstinputlisting",
               "\\directlua", "\\pdffiledump", "\\immediate", "\\special", "\\include{", "\\usepackage{"]


def _lemma(text: str, field_: str) -> str:
    base = (Path(__file__).resolve().parent.parent / "theorems" / "L-linear.toml").read_text()
    base = base.replace('"L-linear"', '"X-evil"').replace("priority = 5", "priority = 1")
    esc = json.dumps(text)
    if field_ == "title":
        return base.replace('title = "Linear activations absorb any skip when m >= d"', f"title = {esc}")
    if field_ == "citation":
        return base.replace('citation = "symabsorb library lemma"', f"citation = {esc}")
    if field_ == "statement":
        return base.replace(base[base.index("statement = "):base.index("uses = []")], f"statement = {esc}\n")
    if field_ == "label":
        return base.replace('label = "L-linear"', f"label = {esc}")
    if field_ == "step":
        return base.replace("steps = [\n", f"steps = [\n  {esc},\n")
    if field_ == "id":
        return base.replace('id = "X-evil"', f"id = {esc}")
    if field_ == "all":
        for f in ("title", "citation", "statement", "label", "step"):
            base = _lemma_on(base, text, f)
        return base
    return base


def _lemma_on(base: str, text: str, field_: str) -> str:
    esc = json.dumps(text)
    if field_ == "title":
        return base.replace('title = "Linear activations absorb any skip when m >= d"', f"title = {esc}")
    if field_ == "citation":
        return base.replace('citation = "symabsorb library lemma"', f"citation = {esc}")
    if field_ == "statement":
        return base.replace(base[base.index("statement = "):base.index("uses = []")], f"statement = {esc}\n")
    if field_ == "label":
        return base.replace('label = "L-linear"', f"label = {esc}")
    return base.replace("steps = [\n", f"steps = [\n  {esc},\n")


def _tex_safe(d: Path, o: Outcome) -> str | None:
    for p in list(d.glob("*.tex")) + list(d.glob("*.md")) + list(d.glob("*.html")) + list(d.glob("*.dot")) + \
            list(d.glob("*.mmd")) + list(d.glob("*.json")):
        t = p.read_text("utf-8", "replace")
        for n in ESC_NEEDLES:
            if n in t and not (p.suffix == ".json" and n.startswith("\\")):
                return f"{n!r} raw in {p.name}"
    for where, t in (("stdout", o.out), ("stderr", o.err)):
        for n in ("\x1b", "\x9b", "\u202e", "\u2066", "\x85", "\u2028"):
            if n in t:
                return f"{n!r} raw in {where}"
    if (d / "PWNED").exists():
        return "PWNED"
    return None


for i, ev in enumerate(EVIL):
    for field_ in ("all", "id"):
        for fmt in ("md", "html", "tex", "json", "terminal"):
            if field_ in ("label", "id") and fmt in ("json",):
                continue
            out = [] if fmt == "terminal" else ["-o", f"r.{fmt}"]
            A("inject", f"lemma-{field_}-{fmt}-{i}", ["prove", "s.absorb", "--theorems", "th", "-v", *out,
                                                       "--format", fmt, "--no-cache"],
              setup=both(spec("activation lin(z) = 3*z\nblock b { activation: lin dim: 2 width: 3 }\nabsorb b\n"),
                         lambda d, ev=ev, f=field_: w(d / "th" / "x.toml", _lemma(ev, f))),
              expect=BAD + (0,), check=_tex_safe)
        for gfmt in ("dot", "mermaid", "html"):
            A("inject", f"graph-{field_}-{gfmt}-{i}", ["graph", "--theorems", "th", "--format", gfmt, "-o", f"g.{gfmt}"],
              setup=lambda d, ev=ev, f=field_: w(d / "th" / "x.toml", _lemma(ev, f)), expect=BAD + (0,),
              check=_tex_safe)
# spec file names and tensor names and weight-file names land in reports and scan tables
NAMES = ["a$b.absorb", "a\\input{x}.absorb", "a<script>.absorb", "a\x1b[2Jb.absorb", "a\u202eb.absorb",
         "a`b`|c.absorb", "a%b#c&d_e^f~g.absorb", "a\nb.absorb", "a\x9bb.absorb", "a]]b.absorb"]
for i, nm in enumerate(NAMES):
    for fmt in ("md", "html", "tex", "terminal", "json"):
        out = [] if fmt == "terminal" else ["-o", f"r.{fmt}"]
        A("inject", f"specname-{fmt}-{i}", ["prove", nm, "--no-cache", "--format", fmt, *out], setup=spec(PLANTED, nm),
          expect=(0,), check=_tex_safe)
    A("inject", f"specname-outdir-{i}", ["prove", nm, "--no-cache", "-o", "od/", "--format", "tex"],
      setup=spec(PLANTED, nm), expect=(0, 2), check=lambda d, o: _tex_safe(d / "od", o) if (d / "od").exists() else None)
    A("inject", f"specname-error-{i}", ["prove", nm], setup=spec("block { x", nm), expect=BAD, check=_tex_safe)
    A("inject", f"specname-missing-{i}", ["prove", nm], expect=BAD, check=_tex_safe)


def _npz_named(d: Path, names: tuple[str, str], fname: str = "w.npz") -> None:
    import numpy as np
    (d / fname).parent.mkdir(parents=True, exist_ok=True)
    np.savez(d / fname, **{names[0]: np.array([[1.0, 0], [0, 1], [1, 1]]),
                           names[1]: np.array([[-1.0, 0, 0.5], [0, -1, 1 / 3]])})


TENSOR_EVIL = ["\x1b]0;x\x07", "\u202e", "<script>", "\\input{/etc/passwd}", "|", "\n", "\x9b", "$", "`", "&lt;"]
for i, ev in enumerate(TENSOR_EVIL):
    up, down = f"layer.0.mlp{ev}.fc1.weight", f"layer.0.mlp{ev}.fc2.weight"
    A("inject", f"scan-tensorname-{i}", ["scan", "ck", "--in-process", "--json", "s.json"],
      setup=lambda d, up=up, down=down: _npz_named(d, (up, down), "ck/w.npz"), expect=(0, 1, 2), check=_tex_safe)
    A("inject", f"scan-filename-{i}", ["scan", "ck", "--in-process"],
      setup=lambda d, ev=ev: _npz_named(d, ("layer.0.mlp.fc1.weight", "layer.0.mlp.fc2.weight"),
                                        f"ck/w{ev.replace('/', '_')}.npz"), expect=(0, 1, 2), check=_tex_safe)
    for fmt in ("md", "tex", "html", "terminal"):
        out = [] if fmt == "terminal" else ["-o", f"r.{fmt}"]
        esc_key = ev.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        A("inject", f"weights-key-{fmt}-{i}", ["prove", "s.absorb", "--format", fmt, *out],
          setup=both(lambda d, up=up, down=down: _npz_named(d, (up, down)),
                     spec(f'block b {{ activation: relu weights: "w.npz" up: "{esc_key}" }}\nabsorb b\n')),
          expect=(0, 1, 2), check=_tex_safe)
        A("inject", f"weights-fname-{fmt}-{i}", ["prove", "s.absorb", "--format", fmt, *out],
          setup=both(lambda d, ev=ev: _npz_named(d, ("W_up", "W_down"), f"w{ev.replace('/', '_')}.npz"),
                     spec(f'block b {{ activation: relu weights: "w{esc_key}.npz" }}\nabsorb b\n')),
          expect=(0, 1, 2), check=_tex_safe)
# a spec's comments/strings with control characters: errors must not echo them raw
for i, ev in enumerate(EVIL[:20]):
    src = f'block b {{ activation: relu weights: "{ev}" }}\nabsorb b\n'
    A("inject", f"error-echo-{i}", ["prove", "s.absorb"], setup=spec(src), expect=BAD, check=_tex_safe)
    A("inject", f"error-echo-name-{i}", ["prove", "s.absorb"], setup=spec(f"absorb x{ev}\n"), expect=BAD,
      check=_tex_safe)
    A("inject", f"classify-echo-{i}", ["classify", f"z{ev}"], expect=BAD, check=_tex_safe)
    A("inject", f"keyword-echo-{i}", ["prove", "s.absorb", "-k", f"a{ev}"], setup=spec(GOOD), expect=BAD + (0, 1),
      check=_tex_safe)
    A("inject", f"activation-arg-echo-{i}", ["scan", "ck", "--in-process", "--activation", f"x{ev}"],
      setup=lambda d: (d / "ck").mkdir(), expect=BAD, check=_tex_safe)
# ATTACKS-PART2

# ---- forged answers: caches, replay entries, results directories --------------------------------------
def _fresh(args: list[str]) -> str:
    """The output of a fresh run (no cache), computed once per argument list."""
    key = json.dumps(args)
    if key not in _FRESH:
        env = dict(os.environ, SYMABSORB_NO_CACHE="1", SYMABSORB_NO_REPLAY="1", COLUMNS="100")
        _FRESH[key] = subprocess.run([PY, "-m", "symabsorb", *args], capture_output=True, text=True, env=env).stdout
    return _FRESH[key]


_FRESH: dict[str, str] = {}


def _prime(args_list: list[list[str]], mutate: Callable[[Path], None], replay: bool = False) -> Callable[[Path], None]:
    def setup(d: Path) -> None:
        env = dict(os.environ, SYMABSORB_CACHE_DIR=str(d / ".cache"), COLUMNS="100")
        if not replay:
            env["SYMABSORB_NO_REPLAY"] = "1"
        for args in args_list:
            subprocess.run([PY, "-m", "symabsorb", *args], capture_output=True, env=env, cwd=d)
        mutate(d / ".cache")
    return setup


def _entries(cache: Path, pattern: str = "*.facts.json") -> list[Path]:
    return sorted(p for p in cache.rglob(pattern) if "replay" not in p.parts)


def _swap(cache: Path, pattern: str = "*.facts.json") -> None:
    es = _entries(cache, pattern)
    if len(es) >= 2:
        a, b = es[0].read_bytes(), es[1].read_bytes()
        es[0].write_bytes(b)
        es[1].write_bytes(a)


def _all_to_first(cache: Path, pattern: str = "*.facts.json") -> None:
    es = _entries(cache, pattern)
    for e in es[1:]:
        e.write_bytes(es[0].read_bytes())


def _edit_payload(cache: Path, old: bytes, new: bytes, pattern: str = "*.facts.json") -> None:
    for e in _entries(cache, pattern):
        e.write_bytes(e.read_bytes().replace(old, new))


def _rekey(cache: Path) -> None:
    (cache / "key").write_bytes(os.urandom(32))


def _truncate(cache: Path, pattern: str = "*.json") -> None:
    for e in cache.rglob(pattern):
        e.write_bytes(e.read_bytes()[: len(e.read_bytes()) // 2])


def _bloat(cache: Path, pattern: str = "*.json") -> None:
    for e in cache.rglob(pattern):
        with open(e, "ab") as fh:
            fh.write(b" " * 300_000_000)


def _fifo_entries(cache: Path, pattern: str = "*.json") -> None:
    for e in list(cache.rglob(pattern)):
        e.unlink()
        os.mkfifo(e)


def _symlink_entries(cache: Path, pattern: str = "*.json") -> None:
    es = sorted(cache.rglob(pattern))
    for e in es[1:]:
        e.unlink()
        os.symlink(es[0], e)


def _deep_json(cache: Path, pattern: str = "*.json") -> None:
    for e in cache.rglob(pattern):
        head, _, _ = e.read_bytes().partition(b"\n")
        e.write_bytes(head + b"\n" + b"[" * 100000 + b"]" * 100000)


def _same_output(args: list[str]) -> Callable[[Path, Outcome], str | None]:
    def check(d: Path, o: Outcome) -> str | None:
        fresh = _fresh(args)
        return None if o.out == fresh else "output differs from a fresh run (forged answer believed?)"
    return check


CACHE_CMDS = [["classify", "tanh"], ["classify", "relu"], ["classify", "gelu"], ["facts", "tanh", "--json"],
              ["facts", "z^3"], ["catalog"], ["graph", "--format", "mermaid"]]
MUTATIONS = {"swap": _swap, "all-first": _all_to_first, "rekey": _rekey, "truncate": _truncate,
             "fifo": _fifo_entries, "symlink": _symlink_entries, "deep": _deep_json,
             "edit-odd": lambda c: _edit_payload(c, b'"odd"', b'"even"'),
             "edit-verdict": lambda c: _edit_payload(c, b"impossible", b"absorbable", "*.json"),
             "swap-replay": lambda c: _swap(c / "replay", "*.json") if (c / "replay").exists() else None,
             "allfirst-replay": lambda c: _all_to_first(c / "replay", "*.json") if (c / "replay").exists() else None,
             "truncate-replay": lambda c: _truncate(c / "replay") if (c / "replay").exists() else None,
             "edit-replay": lambda c: _edit_payload(c / "replay", b"impossible", b"absorbable", "*.json")
             if (c / "replay").exists() else None,
             "bloat": _bloat}
for mname, mut in MUTATIONS.items():
    for cmd in CACHE_CMDS:
        replay = "replay" in mname
        env = {} if not replay else {"SYMABSORB_NO_REPLAY": "0"}
        prime = [["classify", "tanh"], ["classify", "relu"], ["classify", "gelu"], cmd]
        A("forge", f"cache-{mname}-{'-'.join(cmd)[:24]}", cmd, setup=_prime(prime, mut, replay), env=env,
          expect=(0,), check=_same_output(cmd), budget=60, hard=90)
# the replay key: a replayed output must follow a changed input file
for mname in ("edit-spec", "swap-spec-same-mtime"):
    def setup(d: Path, mname: str = mname) -> None:
        w(d / "s.absorb", "block b { activation: relu dim: 2 width: 3 }\nabsorb b\n")
        st = os.stat(d / "s.absorb")
        env = dict(os.environ, SYMABSORB_CACHE_DIR=str(d / ".cache"), COLUMNS="100")
        subprocess.run([PY, "-m", "symabsorb", "prove", "s.absorb"], capture_output=True, env=env, cwd=d)
        w(d / "s.absorb", "block b { activation: tanh dim: 2 width: 3 }\nabsorb b\n")
        if "mtime" in mname:
            os.utime(d / "s.absorb", ns=(st.st_atime_ns, st.st_mtime_ns))
    A("forge", f"replay-{mname}", ["prove", "s.absorb"], setup=setup, env={"SYMABSORB_NO_REPLAY": "0"}, expect=(0,),
      check=lambda d, o: None if "impossible" in o.out else "stale replay")


# results directories: edited, swapped, forged records
EXPLORE_SPEC = "space s = { primitives: [tanh, relu]\n constants: [2]\n size: 3 }\n"


def _prime_results(mutate: Callable[[Path], None], spec_text: str = EXPLORE_SPEC,
                   extra: tuple[str, ...] = ("--no-evidence", "--no-stacks")) -> Callable[[Path], None]:
    def setup(d: Path) -> None:
        w(d / "s.absorb", spec_text)
        env = dict(os.environ, SYMABSORB_CACHE_DIR=str(d / ".cache"), SYMABSORB_NO_REPLAY="1", COLUMNS="100")
        subprocess.run([PY, "-m", "symabsorb", "explore", "s.absorb", "--in-process", "--results", "res", *extra,
                        "-o", "first.json"], capture_output=True, env=env, cwd=d)
        mutate(d / "res")
    return setup


def _lines_edit(res: Path, f: Callable[[list[bytes]], list[bytes]]) -> None:
    p = res / "cases.jsonl"
    if p.exists():
        p.write_bytes(b"\n".join(f(p.read_bytes().splitlines())) + b"\n")


def _flip_verdicts(lines: list[bytes]) -> list[bytes]:
    return [ln.replace(b'"impossible"', b'"absorbable"') for ln in lines]


def _forge_mac(lines: list[bytes]) -> list[bytes]:
    out = []
    for ln in lines:
        try:
            r = json.loads(ln)
        except ValueError:
            out.append(ln)
            continue
        r["verdict"] = "absorbable"
        r["mac"] = "0" * 64
        out.append(json.dumps(r).encode())
    return out


def _swap_bodies(lines: list[bytes]) -> list[bytes]:
    recs = [json.loads(ln) for ln in lines if ln.strip()]
    if len(recs) >= 2:
        a, b = recs[0], recs[1]
        a["id"], b["id"] = b["id"], a["id"]
    return [json.dumps(r).encode() for r in recs]


def _dup_with_other(lines: list[bytes]) -> list[bytes]:
    recs = [json.loads(ln) for ln in lines if ln.strip()]
    return [json.dumps(r).encode() for r in recs] + [json.dumps({**recs[0], "verdict": "absorbable"}).encode()]


def _garbage(lines: list[bytes]) -> list[bytes]:
    return lines + [b"\xff\xfe", b"[" * 50000, b'{"id": 1}', b"1e999999", b'{"id": "' + b"9" * 5000 + b'", "mac": ""}',
                    b"9" * 100000, b"NaN", b'{"id": "x", "mac": "y", "verdict": {"a": ' * 900 + b"1" + b"}" * 900]


def _huge_line(lines: list[bytes]) -> list[bytes]:
    return lines + [b'{"id": "' + b"a" * 300_000_000 + b'"}']


RESULT_MUTS = {"flip": lambda r: _lines_edit(r, _flip_verdicts), "forge-mac": lambda r: _lines_edit(r, _forge_mac),
               "swap-ids": lambda r: _lines_edit(r, _swap_bodies), "dup": lambda r: _lines_edit(r, _dup_with_other),
               "garbage": lambda r: _lines_edit(r, _garbage), "huge-line": lambda r: _lines_edit(r, _huge_line),
               "rekey": lambda r: (r.parent / ".cache" / "key").write_bytes(os.urandom(32)),
               "enum-edit": lambda r: [p.write_bytes(p.read_bytes().replace(b"tanh", b"relu"))
                                       for p in r.glob("enumeration*")],
               "enum-fifo": lambda r: [(p.unlink(), os.mkfifo(p)) for p in r.glob("enumeration*")],
               "cases-symlink": lambda r: (shutil.move(r / "cases.jsonl", r.parent / "elsewhere.jsonl"),
                                           os.symlink(r.parent / "elsewhere.jsonl", r / "cases.jsonl")),
               "cases-dir": lambda r: ((r / "cases.jsonl").unlink(), (r / "cases.jsonl").mkdir()),
               "cases-hardlink-spec": lambda r: ((r / "cases.jsonl").unlink(),
                                                 os.link(r.parent / "s.absorb", r / "cases.jsonl"))}


def _atlas_same(d: Path, o: Outcome) -> str | None:
    a, b = d / "first.json", d / "second.json"
    if not (a.exists() and b.exists()):
        return None if o.rc == 2 else "no atlas"
    ja, jb = json.loads(a.read_text()), json.loads(b.read_text())
    strip = ("resumed", "cpu", "results")

    def clean(x: object) -> object:
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items() if not any(s in k for s in strip)}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x
    return None if clean(ja) == clean(jb) else "atlas differs from the first run (forged record counted?)"


for mname, mut in RESULT_MUTS.items():
    A("forge", f"results-{mname}", ["explore", "s.absorb", "--in-process", "--results", "res", "--no-evidence",
                                    "--no-stacks", "-o", "second.json", "--budget", "200"],
      setup=_prime_results(mut), expect=(0, 1, 2), check=_atlas_same if "hardlink" not in mname else None,
      hard=300)
A("forge", "results-family-flip", ["explore", "s.absorb", "--in-process", "--results", "res", "--no-evidence",
                                   "--no-stacks", "-o", "second.json"],
  setup=_prime_results(lambda r: _lines_edit(r, _flip_verdicts),
                       "space s = { family: a*z + b*abs(z)\n range a: [-1, 1]\n range b: [-1, 1]\n grid: 3 }\n"),
  expect=(0, 1), check=_atlas_same, hard=300)
A("forge", "results-other-space-same-name", ["explore", "s.absorb", "--in-process", "--results", "res", "--no-evidence",
                                             "--no-stacks", "-o", "second.json"],
  setup=both(_prime_results(lambda r: None, "space s = { primitives: [tanh]\n constants: [2]\n size: 2 }\n"),
             lambda d: (w(d / "s.absorb", "space s = { primitives: [relu]\n constants: [2]\n size: 2 }\n"),
                        subprocess.run([PY, "-m", "symabsorb", "explore", "s.absorb", "--in-process", "--no-evidence",
                                        "--no-stacks", "-o", "first.json"], capture_output=True, cwd=d,
                                       env=dict(os.environ, SYMABSORB_CACHE_DIR=str(d / ".c2"), SYMABSORB_NO_REPLAY="1"))
                        if (d / ".c2").mkdir(mode=0o700) is None else None)),
  expect=(0, 1), check=_atlas_same, hard=300)


# scan results: a file with other weights but the same size and mtime must not reuse the record
def _scan_stale(d: Path) -> None:
    import numpy as np
    (d / "ck").mkdir()
    np.savez(d / "ck/w.npz", W_up=np.array([[1.0, 0], [0, 1], [1, 1]]), W_down=np.array([[-1.0, 0, 0.5], [0, -1, 1 / 3]]))
    env = dict(os.environ, SYMABSORB_CACHE_DIR=str(d / ".cache"), SYMABSORB_NO_REPLAY="1")
    subprocess.run([PY, "-m", "symabsorb", "scan", "ck", "--in-process", "--results", "res", "--activation", "relu"],
                   capture_output=True, env=env, cwd=d)
    st = os.stat(d / "ck/w.npz")
    np.savez(d / "ck/w.npz", W_up=np.array([[1.0, 2], [3, -1], [1, 1]]), W_down=np.array([[1.0, 0, 2], [-1, 1, 1]]))
    os.utime(d / "ck/w.npz", ns=(st.st_atime_ns, st.st_mtime_ns))


A("forge", "scan-same-size-mtime", ["scan", "ck", "--in-process", "--results", "res", "--activation", "relu"],
  setup=_scan_stale, expect=(0, 1), check=lambda d, o: None if "not-absorbable" in o.out else "stale scan record")
for mname in ("flip", "forge-mac", "garbage", "swap-ids"):
    def setup(d: Path, mname: str = mname) -> None:
        import numpy as np
        (d / "ck").mkdir()
        np.savez(d / "ck/w.npz", W_up=np.array([[1.0, 2], [3, -1], [1, 1]]), W_down=np.array([[1.0, 0, 2], [-1, 1, 1]]))
        np.savez(d / "ck/v.npz", W_up=np.array([[1.0, 0], [0, 1], [1, 1]]), W_down=np.array([[-1.0, 0, 0.5], [0, -1, 1]]))
        env = dict(os.environ, SYMABSORB_CACHE_DIR=str(d / ".cache"), SYMABSORB_NO_REPLAY="1")
        subprocess.run([PY, "-m", "symabsorb", "scan", "ck", "--in-process", "--results", "res", "--activation",
                        "relu"], capture_output=True, env=env, cwd=d)
        RESULT_MUTS[mname](d / "res")
    A("forge", f"scan-results-{mname}", ["scan", "ck", "--in-process", "--results", "res", "--activation", "relu"],
      setup=setup, expect=(0, 1),
      check=lambda d, o: None if o.out == subprocess.run(
          [PY, "-m", "symabsorb", "scan", "ck", "--in-process", "--activation", "relu"], capture_output=True, text=True,
          cwd=d, env=dict(os.environ, SYMABSORB_NO_CACHE="1", SYMABSORB_NO_REPLAY="1")).stdout else "scan differs")


# ---- verify: hostile reports -----------------------------------------------------------------------------
def _report_dir(d: Path) -> dict[str, object]:
    import numpy as np
    np.savez(d / "w.npz", W_up=np.array([[1.0, 0], [0, 1], [1, 1]]), W_down=np.array([[-1.0, 0, 0.5], [0, -1, 1 / 3]]))
    np.savez(d / "g.npz", W_up=np.array([[1.0, 2], [3, -1], [1, 1]]), W_down=np.array([[1.0, 0, 2], [-1, 1, 1]]))
    w(d / "s.absorb", 'block b { activation: relu weights: "w.npz" }\nblock g { activation: relu weights: "g.npz" }\n'
      "block i { activation: relu W_up: [[1, 0], [0, 1], [1, 1]] W_down: [[-1, 0, 1/2], [0, -1, 1/3]] }\n"
      "absorb b\nabsorb g\nabsorb i\n")
    if not _REPORT:
        env = dict(os.environ, SYMABSORB_CACHE_DIR=str(d / ".cache"), SYMABSORB_NO_REPLAY="1")
        subprocess.run([PY, "-m", "symabsorb", "prove", "s.absorb", "-o", "r.json"], capture_output=True, env=env, cwd=d)
        _REPORT.append((d / "r.json").read_text())
    return json.loads(_REPORT[0])


_REPORT: list[str] = []


def _report(mut: Callable[[dict[str, object]], object], raw: bool = False) -> Callable[[Path], None]:
    def setup(d: Path) -> None:
        data = _report_dir(d)
        out = mut(data)
        if isinstance(out, (bytes, str)):
            w(d / "r.json", out)
        else:
            w(d / "r.json", json.dumps(data))
    return setup


def _q(data: dict[str, object], i: int) -> dict[str, object]:
    return data["queries"][i]["derivation"]  # type: ignore[index]


def _cert(data: dict[str, object], i: int) -> dict[str, object]:
    return _q(data, i)["certificate"]  # type: ignore[return-value]


def _nest(depth: int, leaf: str = "1", open_: str = "[", close: str = "]") -> str:
    return open_ * depth + leaf + close * depth


def _raw_replace(data: dict[str, object], path_: str, raw: str) -> str:
    """The report's JSON with the value at a marker replaced by raw text."""
    marker = "__RAW_MARKER__"
    obj: object = data
    keys = path_.split(".")
    for k in keys[:-1]:
        obj = obj[int(k)] if isinstance(obj, list) else obj[k]  # type: ignore[index]
    last = keys[-1]
    if isinstance(obj, list):
        obj[int(last)] = marker
    else:
        obj[last] = marker  # type: ignore[index]
    return json.dumps(data).replace(json.dumps(marker), raw)


DEEP_SITES = ["queries.0.derivation.certificate.distance_lower_bound", "queries.0.derivation.certificate.index_set",
              "queries.1.derivation.certificate.Y", "queries.1.derivation.certificate.inner",
              "queries.0.derivation.certificate.target", "queries.0.derivation.certificate.weights.d",
              "queries.0.derivation.verdict", "queries.0.query", "schema_version", "queries.0.derivation.witness",
              "queries.2.derivation.witness", "spec.text", "queries.1.derivation.certificate.nondegenerate",
              "queries.0.derivation.certificate.target.nonzero", "queries.0.derivation"]
for site in DEEP_SITES:
    for depth in (500, 900, 3000, 100000):
        A("crash", f"verify-deep-{depth}-{site[-28:]}", ["verify", "r.json", "--budget", "10"],
          setup=_report(lambda data, site=site, depth=depth: _raw_replace(data, site, _nest(depth))),
          expect=(1, 2), budget=10)
    A("crash", f"verify-deepobj-{site[-28:]}", ["verify", "r.json", "--budget", "10"],
      setup=_report(lambda data, site=site: _raw_replace(data, site, _nest(950, "1", '{"a":', "}"))),
      expect=(1, 2), budget=10)
    for raw in ("1" + "0" * 5000, "1e999", "-1e999", "NaN", "Infinity", "-0", "1.5", "true", "null", '"x"', "[]",
                "{}", "-1", "18446744073709551617", "1" + "0" * 100000, "0." + "0" * 5000 + "1", '"\\ud800"',
                '"' + "\\u202e" * 10 + '"', '"\\u001b[2J"'):
        A("crash", f"verify-val-{site[-24:]}-{raw[:12]}", ["verify", "r.json", "--budget", "10"],
          setup=_report(lambda data, site=site, raw=raw: _raw_replace(data, site, raw)), expect=(0, 1, 2), budget=10,
          check=lambda d, o: None if "\x1b" not in o.out + o.err and "\u202e" not in o.out + o.err else "raw control")
FORGES = {
    "g-absorbable": lambda data: (_q(data, 1).update(verdict="absorbable"),
                                  _q(data, 1).update(certificate=dict(_cert(data, 0)))),
    "g-absorbable-wfile": lambda data: (_q(data, 1).update(verdict="absorbable"),
                                        _q(data, 1).update(certificate={**_cert(data, 0), "weights": {
                                            **_cert(data, 0)["weights"], "file": "g.npz"}})),  # type: ignore[dict-item]
    "b-not-absorbable": lambda data: (_q(data, 0).update(verdict="not-absorbable"),
                                      _q(data, 0).update(certificate=dict(_cert(data, 1)))),
    "b-impossible": lambda data: _q(data, 0).update(verdict="impossible"),
    "g-decided-other": lambda data: _q(data, 1).update(decided_by="prop5"),
    "g-index-set-all": lambda data: (_q(data, 1).update(verdict="absorbable"), _cert(data, 1).update(
        kind="index-set", index_set=[0, 1, 2])),
    "i-witness-edit": lambda data: json.dumps(data).replace('"1/2"', '"1/3"'),
    "weights-etc-passwd": lambda data: _cert(data, 0)["weights"].update(file="/etc/passwd"),  # type: ignore[union-attr]
    "weights-dotdot": lambda data: _cert(data, 0)["weights"].update(file="../../../tmp/x.npz"),  # type: ignore[union-attr]
    "spec-import-out": lambda data: data["spec"].update(text='import "/etc/passwd"\n'),  # type: ignore[union-attr]
    "spec-weights-out": lambda data: data["spec"].update(  # type: ignore[union-attr]
        text='block b { activation: relu weights: "/tmp/redteam-outside/w.npz" }\nabsorb b\n'),
    "spec-weights-dotdot": lambda data: data["spec"].update(  # type: ignore[union-attr]
        text='block b { activation: relu weights: "../../../../tmp/redteam-outside/w.npz" }\nabsorb b\n'),
    "spec-heavy": lambda data: data["spec"].update(  # type: ignore[union-attr]
        text="activation f(z) = (z+1)^100000\nblock b { activation: f dim: 2 width: 3 }\nabsorb b\n"),
    "spec-huge": lambda data: data["spec"].update(text="#" * 50_000_000),  # type: ignore[union-attr]
    "spec-path-evil": lambda data: data["spec"].update(path="/etc/passwd"),  # type: ignore[union-attr]
    "sizes-huge": lambda data: _cert(data, 1)["weights"].update(d=10**12, m=10**12),  # type: ignore[union-attr]
    "target-huge": lambda data: _cert(data, 0)["target"].update(rows=10**9, cols=10**9),  # type: ignore[union-attr]
    "index-huge": lambda data: _cert(data, 0).update(index_set=list(range(10**6))),
    "index-neg": lambda data: _cert(data, 0).update(index_set=[-1, -2]),
    "index-big": lambda data: _cert(data, 0).update(index_set=[10**30]),
    "index-bool": lambda data: _cert(data, 0).update(index_set=[True, False]),
    "index-str": lambda data: _cert(data, 0).update(index_set=["0", "1"]),
    "Y-huge": lambda data: _cert(data, 1).update(Y=[[10**4000] * 2] * 2),
    "Y-limbs": lambda data: _cert(data, 1).update(Y={"limbs": [[1] * 10**6]}),
    "Y-shape": lambda data: _cert(data, 1).update(Y=[[1] * 100000] * 100),
    "queries-many": lambda data: data.update(queries=data["queries"] * 20000),  # type: ignore[operator]
    "queries-dict": lambda data: data.update(queries={"a": 1}),
    "no-spec": lambda data: data.pop("spec"),
    "cert-list": lambda data: _q(data, 0).update(certificate=[1, 2]),
    "cert-empty": lambda data: _q(data, 0).update(certificate={}),
    "weights-none": lambda data: _cert(data, 0).update(weights=None),
    "sha-wrong": lambda data: _cert(data, 0)["weights"].update(sha256="0" * 64),  # type: ignore[union-attr]
    "sha-int": lambda data: _cert(data, 0)["weights"].update(sha256=5),  # type: ignore[union-attr]
    "query-evil": lambda data: data["queries"][0].update(query="absorb b\x1b]0;x\x07\u202e"),  # type: ignore[index]
    "verdict-evil": lambda data: _q(data, 0).update(verdict="\x1b[2J\u202eabsorbable"),
    "bom": lambda data: "\ufeff" + json.dumps(data),
    "utf16": lambda data: json.dumps(data).encode("utf-16"),
    "dup-keys": lambda data: json.dumps(data)[:-1] + ', "queries": []}',
    "trailing": lambda data: json.dumps(data) + " garbage",
    "empty": lambda data: "",
    "list": lambda data: "[]",
    "huge-string": lambda data: json.dumps(data)[:-1] + ', "x": "' + "a" * 200_000_000 + '"}',
    "distance-neg": lambda data: _cert(data, 1).update(distance_lower_bound=-1.0),
    "distance-huge": lambda data: _cert(data, 1).update(distance_lower_bound=1e308),
    "witness-huge": lambda data: _q(data, 0).update(witness={"w_up": [[1.0] * 3000] * 3000}),
    "witness-str": lambda data: _q(data, 0).update(witness="x"),
}
for fname, fmut in FORGES.items():
    A("forge" if not fname.startswith(("spec-heavy", "spec-huge", "queries-many", "huge", "index-huge", "Y-",
                                       "witness-huge", "sizes", "target")) else "budget",
      f"verify-{fname}", ["verify", "r.json", "--budget", "10"], setup=_report(fmut), expect=(1, 2), budget=10,
      check=lambda d, o: None if "\x1b" not in o.out + o.err and "\u202e" not in o.out + o.err else "raw control")
A("forge", "verify-genuine", ["verify", "r.json"], setup=_report(lambda data: None), expect=(0,))


# ---- scan / weights archives: bombs, shared storage, odd headers ------------------------------------------
def _torch_shared(d: Path, n: int = 3000, size: int = 1 << 20) -> None:
    import torch
    (d / "ck").mkdir(exist_ok=True)
    base = torch.zeros(size, dtype=torch.float32)
    sd = {}
    for i in range(n):
        sd[f"model.layers.{i}.mlp.up_proj.weight"] = base[: 8].view(4, 2)
        sd[f"model.layers.{i}.mlp.down_proj.weight"] = base[8:16].view(2, 4)
        sd[f"model.layers.{i}.mlp.gate_proj.weight"] = base[16:24].view(4, 2)
    torch.save(sd, d / "ck" / "model.pt")


def _torch_shared_big(d: Path) -> None:
    import torch
    (d / "ck").mkdir(exist_ok=True)
    base = torch.zeros(200 << 20, dtype=torch.float32)  # 800 MB storage shared by every tensor
    sd = {}
    for i in range(200):
        sd[f"model.layers.{i}.mlp.up_proj.weight"] = base.view(-1)[: 8].view(4, 2)
        sd[f"model.layers.{i}.mlp.down_proj.weight"] = base.view(-1)[8:16].view(2, 4)
    torch.save(sd, d / "ck" / "model.pt")


def _torch_view_of_huge(d: Path) -> None:
    import torch
    base = torch.zeros(100 << 20, dtype=torch.float32)
    torch.save({"W_up": base.as_strided((3, 2), (0, 0)), "W_down": base.as_strided((2, 3), (0, 0))}, d / "w.pt")
    w(d / "s.absorb", 'block b { activation: relu weights: "w.pt" }\nabsorb b\n')


def _safetensors(d: Path, header: dict[str, object] | bytes, data: bytes = b"", name: str = "ck/m.safetensors",
                 claimed: int | None = None) -> None:
    import struct
    h = header if isinstance(header, bytes) else json.dumps(header).encode()
    w(d / name, struct.pack("<Q", len(h) if claimed is None else claimed) + h + data)


def _st_many(d: Path, n: int = 200000) -> None:
    hdr = {f"model.layers.{i}.mlp.up_proj.weight": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}
           for i in range(n)}
    _safetensors(d, hdr, b"\0" * 16)


def _st_shared_layers(d: Path, n: int = 3000) -> None:
    hdr: dict[str, object] = {}
    for i in range(n):
        hdr[f"model.layers.{i}.mlp.up_proj.weight"] = {"dtype": "F32", "shape": [4, 2], "data_offsets": [0, 32]}
        hdr[f"model.layers.{i}.mlp.down_proj.weight"] = {"dtype": "F32", "shape": [2, 4], "data_offsets": [0, 32]}
    import struct
    data = struct.pack("<8f", 1, 0, 0, 1, 1, 1, 2, 3)
    _safetensors(d, hdr, data)


def _npz_bomb(d: Path, name: str = "ck/w.npz") -> None:
    import io
    import zipfile
    (d / name).parent.mkdir(parents=True, exist_ok=True)
    hdr = b"\x93NUMPY\x01\x00" + b"{'descr': '<f8', 'fortran_order': False, 'shape': (16384, 16384), }".ljust(118) + b"\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("W_up.npy", "w", force_zip64=True) as f:
            f.write(hdr)
            chunk = b"\0" * (1 << 24)
            for _ in range(128):
                f.write(chunk)
        zf.writestr("W_down.npy", hdr)
    w(d / name, buf.getvalue())


def _npz_lie(d: Path) -> None:
    """A zip whose central directory claims a small size while the deflate stream inflates hugely."""
    import io
    import zipfile
    hdr = b"\x93NUMPY\x01\x00" + b"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }".ljust(118) + b"\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("W_up.npy", hdr + b"\0" * (1 << 28))
        zf.writestr("W_down.npy", hdr + b"\0" * 48)
    raw = bytearray(buf.getvalue())
    w(d / "w.npz", bytes(raw))
    w(d / "s.absorb", 'block b { activation: relu weights: "w.npz" }\nabsorb b\n')


def _zip_many_members(d: Path, n: int = 200000) -> None:
    import io
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for i in range(n):
            zf.writestr(f"m{i}.npy", b"")
    w(d / "ck/w.npz", buf.getvalue())


def _torch_legacy_huge_storage(d: Path) -> None:
    """A legacy (non-zip) torch file whose storage claims 2^40 elements."""
    import io
    import torch
    buf = io.BytesIO()
    torch.save({"W_up": torch.zeros(3, 2), "W_down": torch.zeros(2, 3)}, buf, _use_new_zipfile_serialization=False)
    raw = buf.getvalue()
    w(d / "w.pt", raw)
    w(d / "s.absorb", 'block b { activation: relu weights: "w.pt" }\nabsorb b\n')


def _torch_legacy_lie(d: Path) -> None:
    import io
    import struct
    import torch
    buf = io.BytesIO()
    torch.save({"W_up": torch.zeros(3, 2), "W_down": torch.zeros(2, 3)}, buf, _use_new_zipfile_serialization=False)
    raw = bytearray(buf.getvalue())
    # the storage element count (int64 little endian 6) precedes its data near the end: claim 2^37
    idx = raw.rfind(struct.pack("<q", 6))
    if idx > 0:
        raw[idx:idx + 8] = struct.pack("<q", 1 << 37)
    w(d / "w.pt", bytes(raw))
    w(d / "s.absorb", 'block b { activation: relu weights: "w.pt" }\nabsorb b\n')


def _torch_zip_claim(d: Path) -> None:
    """A torch zip whose storage entry is small but whose pickle claims a huge tensor view."""
    import torch
    t = torch.zeros(8)
    torch.save({"W_up": t[:6].view(3, 2), "W_down": t[:6].view(2, 3)}, d / "w.pt")
    raw = (d / "w.pt").read_bytes()
    w(d / "w.pt", raw)
    w(d / "s.absorb", 'block b { activation: relu weights: "w.pt" }\nabsorb b\n')


SCAN_BOMBS: dict[str, Callable[[Path], None]] = {
    "torch-3000-shared": _torch_shared,
    "torch-200-shared-800MB": _torch_shared_big,
    "st-200k-tensors": _st_many,
    "st-3000-shared-offsets": _st_shared_layers,
    "npz-bomb-2GB": _npz_bomb,
    "zip-200k-members": _zip_many_members,
    "st-deep-header": lambda d: _safetensors(d, b"[" * 100000 + b"]" * 100000),
    "st-deep-meta": lambda d: _safetensors(d, b'{"__metadata__": ' + b'{"a":' * 5000 + b"1" + b"}" * 5000 + b"}"),
    "st-huge-claim": lambda d: _safetensors(d, {"a": 1}, claimed=1 << 62),
    "st-huge-shape": lambda d: _safetensors(d, {"model.layers.0.mlp.up_proj.weight": {
        "dtype": "F32", "shape": [1 << 40, 1 << 40], "data_offsets": [0, 0]},
        "model.layers.0.mlp.down_proj.weight": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}}, b"\0" * 16),
    "st-neg-shape": lambda d: _safetensors(d, {"W_up": {"dtype": "F32", "shape": [-1, -4], "data_offsets": [0, 16]},
                                               "W_down": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}},
                                           b"\0" * 16),
    "st-float-shape": lambda d: _safetensors(d, {"W_up": {"dtype": "F32", "shape": [2.0, 2], "data_offsets": [0, 16]},
                                                 "W_down": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}},
                                             b"\0" * 16),
    "st-bigint-shape": lambda d: _safetensors(d, b'{"W_up": {"dtype": "F32", "shape": [' + b"9" * 5000 +
                                              b'], "data_offsets": [0, 16]}}', b"\0" * 16),
    "st-many-dims": lambda d: _safetensors(d, {"W_up": {"dtype": "F32", "shape": [1] * 100000, "data_offsets": [0, 4]},
                                               "W_down": {"dtype": "F32", "shape": [1, 1], "data_offsets": [0, 4]}},
                                           b"\0" * 4),
    "st-zero-dims": lambda d: _safetensors(d, {"W_up": {"dtype": "F32", "shape": [0, 1 << 62], "data_offsets": [0, 0]},
                                               "W_down": {"dtype": "F32", "shape": [1 << 62, 0], "data_offsets": [0, 0]}}),
    "st-nan": lambda d: _safetensors(d, {"W_up": {"dtype": "F32", "shape": [1, 1], "data_offsets": [0, 4]},
                                         "W_down": {"dtype": "F32", "shape": [1, 1], "data_offsets": [0, 4]}},
                                     b"\0\0\xc0\x7f"),
    "st-header-not-utf8": lambda d: _safetensors(d, b"\xff\xfe{}"),
    "st-header-100MB": lambda d: _safetensors(d, b'{"a": "' + b"x" * (99 << 20) + b'"}'),
    "many-files": lambda d: [_safetensors(d, {"W_up": {"dtype": "F32", "shape": [1, 1], "data_offsets": [0, 4]}},
                                          b"\0" * 4, f"ck/f{i}.safetensors") for i in range(3000)],
    "deep-dirs": lambda d: _safetensors(d, {"W_up": {"dtype": "F32", "shape": [1, 1], "data_offsets": [0, 4]}},
                                        b"\0" * 4, "ck/" + "d/" * 300 + "f.safetensors"),
    "dir-symlink-loop": lambda d: ((d / "ck").mkdir(exist_ok=True), os.symlink("..", d / "ck" / "up"), os.symlink(".", d / "ck" / "s")),
    "config-deep": lambda d: (_npz_named(d, ("layer.0.mlp.fc1.weight", "layer.0.mlp.fc2.weight"), "ck/w.npz"),
                              w(d / "ck/config.json", "[" * 100000 + "]" * 100000)),
    "config-fifo": lambda d: (_npz_named(d, ("layer.0.mlp.fc1.weight", "layer.0.mlp.fc2.weight"), "ck/w.npz"),
                              os.mkfifo(d / "ck/config.json")),
    "config-huge": lambda d: (_npz_named(d, ("layer.0.mlp.fc1.weight", "layer.0.mlp.fc2.weight"), "ck/w.npz"),
                              w(d / "ck/config.json", '{"a": "' + "x" * 300_000_000 + '"}')),
    "config-bigint": lambda d: (_npz_named(d, ("layer.0.mlp.fc1.weight", "layer.0.mlp.fc2.weight"), "ck/w.npz"),
                                w(d / "ck/config.json", '{"eps": ' + "9" * 5000 + ', "hidden_act": "gelu"}')),
    "config-eps-nan": lambda d: (_npz_named(d, ("layer.0.mlp.fc1.weight", "layer.0.mlp.fc2.weight"), "ck/w.npz"),
                                 w(d / "ck/config.json", '{"layer_norm_eps": NaN, "hidden_act": "gelu"}')),
    "config-eps-str": lambda d: (_npz_named(d, ("layer.0.mlp.fc1.weight", "layer.0.mlp.fc2.weight"), "ck/w.npz"),
                                 w(d / "ck/config.json", '{"layer_norm_eps": "1e-5\\"} evil", "hidden_act": "gelu"}')),
    "config-act-evil": lambda d: (_npz_named(d, ("layer.0.mlp.fc1.weight", "layer.0.mlp.fc2.weight"), "ck/w.npz"),
                                  w(d / "ck/config.json", '{"hidden_act": "relu }\\nactivation x(z) = z^(10^9)"}')),
    "config-eps-tiny": lambda d: (_npz_named(d, ("layer.0.mlp.fc1.weight", "layer.0.mlp.fc2.weight"), "ck/w.npz"),
                                  w(d / "ck/config.json", '{"layer_norm_eps": 1e-320, "hidden_act": "gelu"}')),
    "config-eps-huge": lambda d: (_npz_named(d, ("layer.0.mlp.fc1.weight", "layer.0.mlp.fc2.weight"), "ck/w.npz"),
                                  w(d / "ck/config.json", '{"layer_norm_eps": 1e308, "hidden_act": "gelu"}')),
    "prefix-quote": lambda d: _npz_named(d, ('a"b.mlp.fc1.weight', 'a"b.mlp.fc2.weight'), "ck/w.npz"),
    "prefix-inject": lambda d: _npz_named(d, ('x" }\nactivation q(z) = z^(10^9)\nblock y { weights: "w.npz'
                                              '.mlp.fc1.weight', 'x" }\nactivation q(z) = z^(10^9)\nblock y { weights: '
                                              '"w.npz.mlp.fc2.weight'), "ck/w.npz"),
    "filename-quote": lambda d: _npz_named(d, ("layer.0.mlp.fc1.weight", "layer.0.mlp.fc2.weight"), 'ck/a"b.npz'),
}
for bname, bsetup in SCAN_BOMBS.items():
    for bud in ("5", "30"):
        A("budget" if "config" not in bname else "crash", f"scan-{bname}-b{bud}",
          ["scan", "ck", "--in-process", "--budget", bud, "--case-budget", "5", "--json", "o.json"],
          setup=(lambda d, bsetup=bsetup: ((d / "ck").mkdir(exist_ok=True), bsetup(d))), expect=(0, 1, 2),
          budget=float(bud), hard=120, check=_tex_safe)
for bname, bsetup in {"npz-lie": _npz_lie, "torch-legacy": _torch_legacy_huge_storage,
                      "torch-legacy-lie": _torch_legacy_lie, "torch-view-of-huge": _torch_view_of_huge,
                      "torch-zip-claim": _torch_zip_claim,
                      "npz-bomb": lambda d: (_npz_bomb(d, "w.npz"), w(d / "s.absorb", 'block b { activation: relu '
                                                                       'weights: "w.npz" }\nabsorb b\n'))}.items():
    for cmd in (["prove", "s.absorb"], ["absorb", "s.absorb", "--block", "b", "-o", "x.npz"]):
        A("budget", f"{cmd[0]}-{bname}", [*cmd, "--budget", "5"], setup=bsetup, expect=(0, 1, 2), budget=5, hard=120)

# ---- API misuse -------------------------------------------------------------------------------------------
API = [
    "symabsorb.prove(123)", "symabsorb.prove(None)", "symabsorb.prove(b'x')", "symabsorb.prove('nonexistent.absorb')",
    "symabsorb.prove('block b {')", "symabsorb.classify(None)", "symabsorb.classify(3)", "symabsorb.classify('')",
    "symabsorb.classify('relu', gated='yes')", "symabsorb.classify('relu', budget=-1)",
    "symabsorb.classify('relu', budget=float('nan'))", "symabsorb.classify('relu', budget='5')",
    "symabsorb.classify('relu', budget=True)", "symabsorb.facts('relu', order=-1)",
    "symabsorb.facts('relu', order=10**9, budget=2)", "symabsorb.facts('relu', order='3')",
    "symabsorb.facts('relu', order=2.5)", "symabsorb.classify('relu').render('pdf')",
    "symabsorb.classify('relu').render(None)", "symabsorb.classify('relu').render('md', fragment='x')",
    "symabsorb.prove('block b { activation: relu dim: 2 width: 3 }\\nabsorb b\\n').render('html', width=-1)",
    "symabsorb.prove('block b { activation: relu dim: 2 width: 3 }\\nabsorb b\\n', theorems='theorems')",
    "symabsorb.prove('block b { activation: relu dim: 2 width: 3 }\\nabsorb b\\n', theorems=[3])",
    "symabsorb.prove('block b { activation: relu dim: 2 width: 3 }\\nabsorb b\\n', keyword=3)",
    "symabsorb.prove('block b { activation: relu dim: 2 width: 3 }\\nabsorb b\\n', keyword='((')",
    "symabsorb.prove('block b { activation: relu dim: 2 width: 3 }\\nabsorb b\\n', near=-1)",
    "symabsorb.prove('block b { activation: relu dim: 2 width: 3 }\\nabsorb b\\n', near='x')",
    "symabsorb.prove('block b { activation: relu dim: 2 width: 3 }\\nabsorb b\\n', progress=3)",
    "symabsorb.prove('block b { activation: relu dim: 2 width: 3 }\\nabsorb b\\n', bogus=1)",
    "symabsorb.absorb('block b { activation: relu dim: 2 width: 3 }\\nabsorb b\\n', 'nope')",
    "symabsorb.absorb('block b { activation: relu dim: 2 width: 3 }\\nabsorb b\\n', 3)",
    "symabsorb.absorb('block b { activation: relu dim: 2 width: 3 }\\nabsorb b\\n', None)",
    "symabsorb.decide('relu', [[1, 0]], [[1]])", "symabsorb.decide('relu', [[1, 0], [0, 1]], None)",
    "symabsorb.decide('relu', 'abc', 'def')", "symabsorb.decide('relu', [[float('nan')]], [[1.0]])",
    "symabsorb.decide('relu', [[float('inf')]], [[1.0]])", "symabsorb.decide('relu', [[1, 2], [3]], [[1, 2]])",
    "symabsorb.decide('relu', [], [])", "symabsorb.decide('relu', [[[1]]], [[[1]]])",
    "symabsorb.decide('relu', [[10**5000]], [[1]])", "symabsorb.decide('relu', [['1/0']], [['1']])",
    "symabsorb.decide('relu', [[1+2j]], [[1]])", "symabsorb.decide('relu', [[None]], [[1]])",
    "symabsorb.decide('relu', [[True]], [[1]])", "symabsorb.decide(3, [[1]], [[1]])",
    "symabsorb.decide('relu', file=3)", "symabsorb.decide('relu', file='/etc/passwd')",
    "symabsorb.decide('relu', file='nonexistent.npz')", "symabsorb.decide('relu', [[1]], [[1]], w_gate=[[1]])",
    "symabsorb.decide('swiglu', [[1]], [[1]])", "symabsorb.decide('relu', __import__('numpy').zeros((3, 2)), "
    "__import__('numpy').zeros((2, 3)), prefix=3)",
    "symabsorb.decide('relu', __import__('numpy').zeros((3, 2), dtype=object), __import__('numpy').zeros((2, 3)))",
    "symabsorb.decide('relu', __import__('numpy').zeros((3, 2), dtype='U3'), __import__('numpy').zeros((2, 3)))",
    "symabsorb.decide('relu', __import__('numpy').zeros((100000, 100000), dtype='f1') if False else "
    "__import__('numpy').broadcast_to(1.0, (60000, 60000)), __import__('numpy').broadcast_to(1.0, (60000, 60000)))",
    "symabsorb.verify(3)", "symabsorb.verify('nonexistent.json')", "symabsorb.verify('.', weights_dir=3)",
    "symabsorb.verify('/dev/zero')", "symabsorb.scan(3)", "symabsorb.scan('/nonexistent')", "symabsorb.scan('.', "
    "activation=3)", "symabsorb.scan('.', case_budget=-1)", "symabsorb.scan('.', executor='x')",
    "symabsorb.executor(workers=0)", "symabsorb.executor(workers=10**9)", "symabsorb.executor(workers='2')",
    "symabsorb.executor(scheduler=3)", "symabsorb.executor(scheduler='tcp://10.255.255.1:1')",
    "symabsorb.api.explore(3)", "symabsorb.api.explore('space s = { family: a*z\\n range a: [-1, 1]\\n grid: 2 }', "
    "spaces='s')", "symabsorb.api.explore('space s = { family: a*z\\n range a: [-1, 1]\\n grid: 2 }', spaces=['t'])",
    "symabsorb.api.explore('space s = { family: a*z\\n range a: [-1, 1]\\n grid: 2 }', results=3)",
    "symabsorb.load(3)", "symabsorb.load(None)", "symabsorb.load('')", "symabsorb.load('x', name=3)",
    "symabsorb.load(__import__('pathlib').Path('/etc'))", "symabsorb.select('absorb x', 3)",
    "symabsorb.select(3, 'a')", "symabsorb.catalog(budget=0)", "symabsorb.catalog(theorems=['/nonexistent'])",
    "symabsorb.library(theorems=3)", "symabsorb.library(theorems=['/etc/passwd'])",
    "symabsorb.classify('relu').derivation.steps.append(1)",
    "symabsorb.prove('block b { activation: relu dim: 2 width: 3 }\\nabsorb b\\n').verdicts['nope']",
    "symabsorb.classify('z' * 200000)", "symabsorb.classify('relu\\x00')", "symabsorb.facts('relu', gated=3)",
    "symabsorb.classify(__import__('sympy').Symbol('z'))", "symabsorb.classify(__import__('sympy').sin)",
    "symabsorb.classify(object())", "symabsorb.classify(['relu'])", "symabsorb.prove(['a.absorb'])",
    "symabsorb.prove(__import__('pathlib').Path('.'))",
    "symabsorb.decide('relu', [[1, 0], [0, 1], [1, 1]], [[-1, 0, 0], [0, -1, 0]]).write_witness(3)",
    "symabsorb.decide('relu', [[1, 0], [0, 1], [1, 1]], [[-1, 0, 0], [0, -1, 0]]).write_witness('/dev/null')",
    "symabsorb.decide('relu', [[1, 0], [0, 1], [1, 1]], [[-1, 0, 0], [0, -1, 0]]).write_witness('x.txt')",
    "symabsorb.decide('relu', [[1, 2], [3, -1], [1, 1]], [[1, 0, 2], [-1, 1, 1]]).write_witness('x.npz')",
]
API_WRAP = """
import sys, symabsorb, symabsorb.api
from symabsorb.errors import SymabsorbError, InternalError
try:
    r = {expr}
    if hasattr(r, 'render'):
        r.render('md')
    print('RESULT', type(r).__name__)
except InternalError as e:
    print('INTERNAL', e); sys.exit(5)
except SymabsorbError as e:
    print('CLEAN', type(e).__name__, str(e).splitlines()[0][:120])
except (KeyError, IndexError, AttributeError) as e:
    if 'verdicts' in {expr!r} or 'append' in {expr!r}:
        print('OK-python', type(e).__name__)
    else:
        print('STRAY', type(e).__name__, e); sys.exit(4)
except BaseException as e:
    print('STRAY', type(e).__name__, str(e)[:200]); sys.exit(4)
"""
for i, expr in enumerate(API):
    A("api", f"api-{i}-{expr[10:40]}", [], py=API_WRAP.replace("{expr}", expr).replace("{expr!r}", repr(expr)),
      expect=(0,), budget=30, hard=60)

# ---- round 4 (issue 26 §2): links, Hugging Face snapshots, kernel files, waits, forged numbers ---------
R4_OUT = "/tmp/redteam-outside-r4"


def _st(path: Path, m: int, prefix: str = "model.decoder.layers.0.") -> None:
    import numpy as np
    from safetensors.numpy import save_file
    rng = np.random.default_rng(m)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file({prefix + "fc1.weight": (rng.integers(-8, 9, size=(m, 3)) / 8).astype(np.float32),
               prefix + "fc2.weight": (rng.integers(-8, 9, size=(3, m)) / 8).astype(np.float32),
               prefix + "final_layer_norm.weight": np.ones(3, dtype=np.float32)}, str(path))


def _r4_outside(d: Path) -> None:
    _st(Path(R4_OUT) / "secret.safetensors", 6, prefix="model.decoder.layers.7.")
    w(Path(R4_OUT) / "config.json", '{"model_type": "opt", "activation_function": "silu"}')


def _hub(d: Path) -> None:
    """models--org--name/{blobs,refs/main,snapshots/<rev>/...}: every snapshot file a link to a blob."""
    import hashlib
    repo = d / "models--org--name"
    snap = repo / "snapshots" / "rev0"
    for rel, m in (("model.safetensors", 4), ("text_encoder/model.safetensors", 5), ("unet/model.safetensors", 7)):
        tmp = d / "scratch" / rel
        _st(tmp, m)
        data = tmp.read_bytes()
        sha = hashlib.sha256(data).hexdigest()
        w(repo / "blobs" / sha, data)
        (snap / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(os.path.join(*[".."] * (len(Path(rel).parts) + 1), "blobs", sha), snap / rel)
    w(repo / "refs" / "main", "rev0")
    shutil.rmtree(d / "scratch")


def _hub_names(d: Path, o: Outcome) -> str | None:
    try:
        layers = json.loads((d / "o.json").read_text())["layers"]
    except Exception as err:
        return f"no JSON ({type(err).__name__})"
    got = {Path(r["file"]).relative_to(d / "models--org--name/snapshots/rev0").as_posix(): r.get("m") for r in layers}
    want = {"model.safetensors": 4, "text_encoder/model.safetensors": 5, "unet/model.safetensors": 7}
    return None if got == want else f"layers {got} (want {want})"


A("files", "r4-hub-snapshot", ["scan", "models--org--name/snapshots/rev0", "--in-process", "--json", "o.json"],
  setup=_hub, expect=(0,), check=all_checks(_hub_names, absent_in_output("blobs", files=("o.json",))))
A("files", "r4-scan-link-out", ["scan", "ck", "--in-process", "--json", "o.json"],
  setup=lambda d: (_r4_outside(d), _st(d / "ck" / "model.safetensors", 4),
                   os.symlink(R4_OUT + "/secret.safetensors", d / "ck" / "evil.safetensors")),
  expect=(1,), check=absent_in_output("layers.7", files=("o.json",)))
A("files", "r4-scan-config-link-out", ["scan", "ck", "--in-process", "--json", "o.json"],
  setup=lambda d: (_r4_outside(d), _st(d / "ck" / "model.safetensors", 4),
                   os.symlink(R4_OUT + "/config.json", d / "ck" / "config.json")),
  expect=(1,), check=absent_in_output("silu", files=("o.json",)))
A("files", "r4-scan-subfolder-same-basename", ["scan", "ck", "--in-process", "--json", "o.json"],
  setup=lambda d: (_st(d / "ck" / "model.safetensors", 4), _st(d / "ck" / "unet" / "model.safetensors", 7)),
  expect=(0,), check=lambda d, o: None if sorted(r["m"] for r in json.loads((d / "o.json").read_text())["layers"])
  == [4, 7] else "a subfolder's file decided as another")
for target in ("/proc/kmsg", "/proc/self/status", "/proc/self/mem", "/sys/kernel/mm/transparent_hugepage/enabled",
               "/dev/zero", "/dev/stdin", "/dev/tty"):
    A("hang", f"r4-config-{target}", ["scan", "ck", "--in-process", "--budget", "3", "--allow-outside"],
      setup=lambda d, t=target: (_st(d / "ck" / "model.safetensors", 4), os.symlink(t, d / "ck" / "config.json")),
      expect=(0, 1), budget=3, hard=30)
    A("hang", f"r4-weights-{target}", ["scan", "ck", "--in-process", "--budget", "3", "--allow-outside"],
      setup=lambda d, t=target: ((d / "ck").mkdir(), os.symlink(t, d / "ck" / "w.safetensors")),
      expect=(0, 1), budget=3, hard=30)
    A("hang", f"r4-spec-weights-{target}", ["prove", "s.absorb", "--budget", "3", "--allow-outside"],
      setup=spec(f'block b {{ activation: relu weights: "{target}.npz" }}\nabsorb b\n'), expect=BAD, budget=3,
      hard=30)
A("exit3", "r4-config-4301-digits", ["scan", "ck", "--in-process", "--budget", "10"],
  setup=lambda d: (_st(d / "ck" / "model.safetensors", 4),
                   w(d / "ck" / "config.json", '{"model_type": "opt", "layer_norm_eps": ' + "9" * 5000 + "}")),
  expect=(0, 1), budget=10)


def _forged_report(value: str) -> Callable[[Path], None]:
    def setup(d: Path) -> None:
        import numpy as np
        from safetensors.numpy import save_file
        (d / "ck").mkdir()
        save_file({"W_up": np.array([[1, 0], [0, 1], [1, 1]], dtype=np.float32),
                   "W_down": np.array([[-1, 0, 1], [0, -1, 2]], dtype=np.float32)}, str(d / "ck" / "w.safetensors"))
        subprocess.run([PY, "-m", "symabsorb", "scan", "ck", "--in-process", "--activation", "relu", "--json",
                        "ck/r.json"], cwd=d, capture_output=True, env=dict(os.environ, SYMABSORB_NO_REPLAY="1"))
        data = json.loads((d / "ck" / "r.json").read_text())
        for q in data["queries"]:
            if q["derivation"].get("certificate"):
                q["derivation"]["certificate"]["target"]["nonzero"][0][2] = value
        (d / "ck" / "r.json").write_text(json.dumps(data))
    return setup


for value in ("1e999999999", "-1e-999999999", "9" * 9999 + "e9999", "1e0000000000000000000001"):
    A("slow", f"r4-verify-forged-{value[:16]}", ["verify", "ck/r.json", "--budget", "5"], setup=_forged_report(value),
      expect=(1,), budget=5, hard=60)
# ATTACKS-END-PART2
# ATTACKS-END


def _safe_run(attack: Attack, root: Path) -> tuple[str, str]:
    try:
        return run(attack, root)
    except Exception as err:
        return "harness-error", f"{type(err).__name__}: {err}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", action="append")
    ap.add_argument("--name")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--scratch", default="/tmp/redteam")
    args = ap.parse_args()
    root = Path(args.scratch)
    root.mkdir(parents=True, exist_ok=True)
    attacks = [a for a in ATTACKS if (not args.only or a.cls in args.only) and (not args.name or args.name in a.name)]
    counts: Counter[tuple[str, str]] = Counter()
    with ThreadPoolExecutor(args.jobs) as pool:
        for attack, (status, detail) in zip(attacks, pool.map(lambda a: _safe_run(a, root), attacks)):
            counts[(attack.cls, status)] += 1
            print(f"{status:8} {attack.cls:10} {attack.name:40} {detail}", flush=True)
    print()
    for (cls, status), n in sorted(counts.items()):
        print(f"{cls:12} {status:12} {n}")
    print("total", sum(counts.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
