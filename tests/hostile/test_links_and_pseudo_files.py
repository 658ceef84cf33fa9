"""Issue 26 §2, hostile input round 4: files, links, pseudo-files and waits.

* ``scan DIR`` reads only what lies in ``DIR``: a link out of it is skipped with its reason (exit 1,
  nothing of the outside file printed) unless ``--allow-outside``; a ``config.json`` linking out is
  not read (its values not used, the layer says so); a Hugging Face cache snapshot, made of links
  ``snapshots/<rev>/x -> ../../blobs/<sha>``, is scanned and each layer reported under its snapshot
  name, a subfolder's file decided as that file; the decision reads the bytes that were listed;
* readers refuse pseudo-filesystem files (``config.json -> /proc/...`` with ``--allow-outside``
  ends in time); a blocking read is interrupted in wall time; a Dask scheduler with no worker is a
  clean exit 2 naming it;
* a ``config.json`` integer of more than 4,300 digits is a stated problem, not an internal error;
* ``verify`` of a report whose target entry is ``"1e999999999"`` fails at once (no number built).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import require_module, run_cli

D, M = 3, 5


def _weights(seed: int, m: int = M, prefix: str = "model.decoder.layers.0.") -> dict[str, Any]:
    """An OPT-style ReLU layer (pre-LN, biases): tensors named as the OPT layout names them."""
    np = require_module("numpy", "weights")
    rng = np.random.default_rng(seed)
    return {prefix + "fc1.weight": (rng.integers(-8, 9, size=(m, D)) / 8).astype(np.float32),
            prefix + "fc2.weight": (rng.integers(-8, 9, size=(D, m)) / 8).astype(np.float32),
            prefix + "final_layer_norm.weight": np.ones(D, dtype=np.float32)}


def _save(path: Path, tensors: dict[str, Any]) -> None:
    st = require_module("safetensors.numpy", "weights")
    path.parent.mkdir(parents=True, exist_ok=True)
    st.save_file(tensors, str(path))


def _blob(repo: Path, data: bytes) -> str:
    sha = hashlib.sha256(data).hexdigest()
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    (repo / "blobs" / sha).write_bytes(data)
    return sha


CONFIG = {"model_type": "opt", "activation_function": "relu", "do_layer_norm_before": True}


def hub_cache(tmp: Path) -> Path:
    """A real hub-cache layout: ``models--org--name/{blobs,refs/main,snapshots/<rev>/...}``, every
    snapshot file a relative link into ``blobs/``; ``unet/`` holds a layer of another width."""
    repo = tmp / "hub" / "models--org--name"
    rev = "0123456789abcdef0123456789abcdef01234567"
    snap = repo / "snapshots" / rev
    scratch = tmp / "scratch"
    files = {"model.safetensors": _weights(1), "text_encoder/model.safetensors": _weights(2),
             "unet/model.safetensors": _weights(3, m=7)}
    for rel, tensors in files.items():
        _save(scratch / rel, tensors)
    configs = [str(Path(rel).parent / "config.json") for rel in files]  # each folder has its own (diffusers)
    for rel in configs:
        (scratch / rel).write_text(json.dumps(CONFIG))
    for rel in [*files, *configs]:
        sha = _blob(repo, (scratch / rel).read_bytes())
        link = snap / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        depth = len(Path(rel).parts) + 1  # up to the repository: the snapshot directory and its subfolders
        os.symlink(os.path.join(*[".."] * depth, "blobs", sha), link)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(rev)
    shutil.rmtree(scratch)
    return snap


def _scan_json(*argv: str) -> tuple[int, str, str, dict[str, Any] | None]:
    code, out, err, _ = run_cli("scan", *argv)
    data = None
    if "--json" in argv:
        target = Path(argv[list(argv).index("--json") + 1])
        data = json.loads(target.read_text()) if target.exists() else None
    return code, out, err, data


def test_a_hugging_face_snapshot_is_scanned_under_its_own_names(tmp_path: Path) -> None:
    snap = hub_cache(tmp_path)
    out_json = tmp_path / "scan.json"
    code, out, err, data = _scan_json(str(snap), "--in-process", "--budget", "120", "--json", str(out_json))
    assert code == 0, out + err
    assert data is not None
    layers = {Path(r["file"]).relative_to(snap).as_posix(): r for r in data["layers"]}
    assert sorted(layers) == ["model.safetensors", "text_encoder/model.safetensors", "unet/model.safetensors"], layers
    # each decided as that file: unet's layer has its own width, the others the common one
    assert layers["unet/model.safetensors"]["m"] == 7
    assert layers["model.safetensors"]["m"] == M and layers["text_encoder/model.safetensors"]["m"] == M
    assert all(r["status"] == "done" for r in layers.values())
    assert "blobs" not in out and "blobs" not in json.dumps(data["layers"])  # reported under snapshot names
    assert "text_encoder/model.safetensors" in out
    # the config.json link into the repository's blobs was read: the activation is the config's, not assumed
    assert all(not any("activation" in a and "assumed" in a for a in r.get("assumptions", []))
               for r in layers.values())


def test_scan_then_verify_round_trips_in_a_snapshot(tmp_path: Path) -> None:
    """Certified layers in a snapshot's subfolders (each a link into blobs/): ``verify`` of the scan's
    JSON, written in the snapshot, re-checks every certificate against the file it names."""
    np = require_module("numpy", "weights")
    snap = hub_cache(tmp_path)
    repo = snap.parent.parent
    up = np.array([[1, 0], [0, 1], [1, 1]], dtype=np.float32)
    for rel, down in (("vae/model.safetensors", [[-1, 0, 1], [0, -1, 2]]),   # absorbable: S = {0, 1}
                      ("head/model.safetensors", [[1, 0, 1], [0, 1, 2]])):  # no index set
        scratch = tmp_path / "scratch2" / rel
        _save(scratch, {"W_up": up, "W_down": np.array(down, dtype=np.float32)})
        sha = _blob(repo, scratch.read_bytes())
        (snap / rel).parent.mkdir()
        os.symlink(os.path.join("..", "..", "..", "blobs", sha), snap / rel)
    report = snap / "scan.json"
    code, out, err, data = _scan_json(str(snap), "--in-process", "--budget", "120", "--activation", "relu",
                                      "--json", str(report))
    assert code == 0, out + err
    assert data is not None
    by = {Path(r["file"]).relative_to(snap).as_posix(): r for r in data["layers"]}
    assert by["vae/model.safetensors"]["verdict"] == "absorbable"
    assert by["head/model.safetensors"]["verdict"] != "absorbable"
    code, out, err, _ = run_cli("verify", str(report), "--budget", "60")
    assert code == 0, out + err
    assert "FAILED" not in out and out.count("OK") >= 1, out


def _outside_dir(tmp: Path) -> Path:
    outside = tmp / "outside"
    _save(outside / "secret.safetensors", _weights(5, prefix="model.decoder.layers.7."))
    (outside / "config.json").write_text(json.dumps({**CONFIG, "activation_function": "silu"}))
    return outside


def test_a_link_out_of_the_directory_is_skipped_with_its_reason(tmp_path: Path) -> None:
    outside = _outside_dir(tmp_path)
    ck = tmp_path / "ck"
    _save(ck / "model.safetensors", _weights(1))
    os.symlink(outside / "secret.safetensors", ck / "evil.safetensors")
    out_json = tmp_path / "o.json"
    code, out, err, data = _scan_json(str(ck), "--in-process", "--budget", "60", "--json", str(out_json))
    assert code == 1, out + err  # answered, but a file was skipped
    assert "evil.safetensors" in out and "outside the scanned directory" in out and "--allow-outside" in out
    assert "layers.7" not in out and "layers.7" not in json.dumps(data)  # nothing of the outside file
    assert data is not None
    files = [Path(r["file"]).name for r in data["layers"]]
    assert files == ["model.safetensors"]  # the other file is decided under its own name only


def test_allow_outside_reads_the_linked_file_under_the_link_name(tmp_path: Path) -> None:
    outside = _outside_dir(tmp_path)
    ck = tmp_path / "ck"
    ck.mkdir()
    os.symlink(outside / "secret.safetensors", ck / "evil.safetensors")
    _save(ck / "model.safetensors", _weights(1, m=4))  # not the file to decide for the link
    out_json = tmp_path / "o.json"
    code, out, err, data = _scan_json(str(ck), "--in-process", "--budget", "60", "--allow-outside",
                                      "--json", str(out_json))
    assert code == 0, out + err
    assert data is not None
    by_name = {Path(r["file"]).name: r for r in data["layers"]}
    assert by_name["evil.safetensors"]["layer"] == "model.decoder.layers.7."  # the linked file's own layer
    assert by_name["evil.safetensors"]["m"] == M and by_name["model.safetensors"]["m"] == 4


def test_a_config_linking_outside_is_not_read(tmp_path: Path) -> None:
    outside = _outside_dir(tmp_path)
    ck = tmp_path / "ck"
    _save(ck / "model.safetensors", _weights(1))
    os.symlink(outside / "config.json", ck / "config.json")
    out_json = tmp_path / "o.json"
    code, out, err, data = _scan_json(str(ck), "--in-process", "--budget", "60", "--json", str(out_json))
    assert code == 1, out + err
    assert data is not None
    (layer,) = data["layers"]
    assert layer["activation"] == "relu"  # the layout's own, not the outside config's silu
    assert any("config.json" in a and "outside the scanned directory" in a for a in layer["assumptions"])
    assert "config.json" in out and "--allow-outside" in out
    code, out, err, data = _scan_json(str(ck), "--in-process", "--budget", "60", "--allow-outside", "--json",
                                      str(out_json))
    assert code == 0, out + err
    assert data is not None and data["layers"][0]["activation"].startswith("silu")


@pytest.mark.parametrize("target", ["/proc/kmsg", "/proc/self/status", "/sys/kernel/mm/transparent_hugepage/enabled",
                                    "/dev/zero", "/dev/stdin"])
def test_a_config_linking_to_a_kernel_file_ends_in_time(tmp_path: Path, target: str) -> None:
    if not os.path.lexists(target):
        pytest.skip(f"{target} does not exist here")
    ck = tmp_path / "ck"
    _save(ck / "model.safetensors", _weights(1))
    os.symlink(target, ck / "config.json")
    out_json = tmp_path / "o.json"
    code, out, err, data = _scan_json(str(ck), "--in-process", "--budget", "3", "--allow-outside", "--json",
                                      str(out_json))
    assert code in (0, 1), out + err
    assert data is not None
    (layer,) = data["layers"]
    assert any("config.json" in a and "not usable" in a for a in layer["assumptions"]), layer["assumptions"]


def test_a_pseudo_file_and_a_blocking_read_are_refused(tmp_path: Path) -> None:
    from symabsorb.paths import InputError, read_input, wall_limit

    for target in ("/proc/self/status", "/proc/self/environ"):
        with pytest.raises(InputError, match="under /proc"):
            read_input(Path(target))
    link = tmp_path / "w.json"
    os.symlink("/proc/self/status", link)
    with pytest.raises(InputError, match="kernel"):
        read_input(link)
    import threading

    r, w = os.pipe()
    # a guard: if the wall limit cannot arm (SIGALRM owned by a harness such as pytest-timeout's signal
    # method), the read is released after 20 s and the test fails instead of hanging the suite
    guard = threading.Timer(20.0, lambda: os.write(w, b"x"))
    guard.daemon = True
    guard.start()
    try:
        with pytest.raises(InputError, match="wall time"), wall_limit(0.3, "reading a pipe"):
            os.read(r, 1)  # nothing is written before the guard: it would block
    finally:
        guard.cancel()
        os.close(r)
        os.close(w)


def test_the_decision_reads_the_bytes_that_were_listed(tmp_path: Path) -> None:
    """The file is swapped (the name made a link to other weights) after listing, before deciding:
    the layer is not decided on the other file."""
    import symabsorb
    from symabsorb.explore.executors import InProcessExecutor

    ck = tmp_path / "ck"
    _save(ck / "model.safetensors", _weights(1))
    _save(tmp_path / "other" / "model.safetensors", _weights(9, m=6))

    class Swapping(InProcessExecutor):
        def run(self, jobs: Any, on_result: Any) -> None:
            (ck / "model.safetensors").unlink()
            os.symlink(tmp_path / "other" / "model.safetensors", ck / "model.safetensors")
            super().run(jobs, on_result)

    result = symabsorb.scan(ck, executor=Swapping(), case_budget=30)
    (record,) = result.layers
    assert record["status"] == "error" and "changed after it was listed" in record["error"], record
    assert record.get("m") in (None, M)


def test_a_config_integer_of_thousands_of_digits_is_a_stated_problem(tmp_path: Path) -> None:
    ck = tmp_path / "ck"
    _save(ck / "model.safetensors", _weights(1))
    (ck / "config.json").write_text('{"model_type": "opt", "layer_norm_eps": ' + "9" * 5000 + "}")
    out_json = tmp_path / "o.json"
    code, out, err, data = _scan_json(str(ck), "--in-process", "--budget", "60", "--json", str(out_json))
    assert code in (0, 1), out + err
    assert "Traceback" not in err
    assert data is not None
    assert any("5000 digits" in a for a in data["layers"][0]["assumptions"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
@pytest.mark.parametrize("command", ["scan", "explore"])
def test_a_scheduler_without_workers_is_a_clean_error(tmp_path: Path, command: str) -> None:
    require_module("distributed", "cluster")
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
                             str(port), "--no-dashboard"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        else:
            pytest.skip("the Dask scheduler did not start")
        if command == "scan":
            ck = tmp_path / "ck"
            _save(ck / "model.safetensors", _weights(1))
            argv = ["scan", str(ck)]
        else:
            spec = tmp_path / "s.absorb"
            spec.write_text("space s = { family: a*z + abs(z)\n range a: [-1, 1]\n grid: 3 }\n")
            argv = ["explore", str(spec), "--results", str(tmp_path / "res"), "--no-evidence", "--no-stacks"]
        env = dict(os.environ, SYMABSORB_NO_REPLAY="1")
        run = subprocess.run([sys.executable, "-m", "symabsorb", *argv, "--budget", "5", "--scheduler",
                              f"tcp://127.0.0.1:{port}"], capture_output=True, text=True, env=env, timeout=300)
        assert run.returncode == 2, run.stdout + run.stderr
        assert f"tcp://127.0.0.1:{port}" in run.stderr and "no workers" in run.stderr, run.stderr
        assert "Traceback" not in run.stderr
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize("forged", ["1e999999999", "-1e-999999999", "9" * 20000 + "/7", "1/0", "nan", 10**4000])
def test_verify_refuses_a_forged_huge_number_at_once(tmp_path: Path, forged: Any) -> None:
    """A certificate's target entry forged to a number no one could build (a billion-digit power of
    ten) fails that query at once: it is never turned into a number, and the budget is not spent."""
    np = require_module("numpy", "weights")
    ck = tmp_path / "ck"
    _save(ck / "w.safetensors", {"W_up": np.array([[1, 0], [0, 1], [1, 1]], dtype=np.float32),
                                 "W_down": np.array([[-1, 0, 1], [0, -1, 2]], dtype=np.float32)})
    report = ck / "scan.json"
    code, out, err, data = _scan_json(str(ck), "--in-process", "--activation", "relu", "--json", str(report))
    assert code == 0 and data is not None, out + err
    (query,) = [q for q in data["queries"] if q["derivation"]["certificate"] is not None]
    query["derivation"]["certificate"]["target"]["nonzero"][0][2] = forged
    report.write_text(json.dumps(data))
    code, out, err, _ = run_cli("verify", str(report), "--budget", "5")
    assert code == 1, out + err
    assert "FAILED" in out and "budget" not in (out + err).lower(), out + err
    assert "Traceback" not in err


def test_an_assumed_norm_placement_is_said_and_the_other_placement_shown(tmp_path: Path) -> None:
    """Without config.json the OPT layout's usual pre-LN is assumed: the JSON assumptions and the
    table say so, and where post-LN (OPT-350m's placement) answers differently, both verdicts show."""
    np = require_module("numpy", "weights")
    ck = tmp_path / "ck"
    p = "model.decoder.layers.0."
    # absorbable as a post-LN layer (S = {0, 1} flips to -I), impossible as a pre-LN one (L-pre-norm)
    _save(ck / "model.safetensors", {p + "fc1.weight": np.array([[1, 0], [0, 1], [1, 1]], dtype=np.float32),
                                     p + "fc2.weight": np.array([[-1, 0, 1], [0, -1, 2]], dtype=np.float32),
                                     p + "final_layer_norm.weight": np.ones(2, dtype=np.float32)})
    out_json = tmp_path / "o.json"
    code, out, err, data = _scan_json(str(ck), "--in-process", "--json", str(out_json))
    assert code == 0 and data is not None, out + err
    (layer,) = data["layers"]
    assert layer["norm"] == "pre-ln" and layer["norm_assumed"] is True
    assert any("placement pre-ln assumed" in a for a in layer["assumptions"]), layer["assumptions"]
    assert set(layer["placements"]) == {"pre-ln", "post-ln"}
    assert layer["placements"]["pre-ln"] != layer["placements"]["post-ln"], layer["placements"]
    assert layer["alternative"]["norm"] == "post-ln"
    assert f"as post-ln: {layer['alternative']['verdict']}" in out
    assert "pre-ln assumed (no config.json" in out
    # with a config.json naming the architecture nothing is assumed, and one placement is decided
    (ck / "config.json").write_text(json.dumps({**CONFIG, "do_layer_norm_before": False}))
    code, out, err, data = _scan_json(str(ck), "--in-process", "--json", str(out_json))
    assert data is not None, out + err
    (layer,) = data["layers"]
    assert layer["norm"] == "post-ln" and "norm_assumed" not in layer and "placements" not in layer
    assert "assumed (no config.json" not in out


# ---- issue 28 rows 7 and 8: unknown layouts, exit codes, scan then verify in place --------------------------


def test_unknown_and_fused_layouts_are_one_line_per_group_with_a_hint(tmp_path: Path) -> None:
    """A fused up projection no layout knows (``w12``; Phi-3's ``gate_up_proj`` has its own layout now): one
    skipped line per layer group, naming the tensor found where the layout's up projection should be; a file
    of no layer at all: one line; exit 1."""
    np = require_module("numpy", "weights")
    ck = tmp_path / "ck"
    fused = {}
    for i in range(2):
        fused[f"model.layers.{i}.mlp.w12.weight"] = np.ones((8, 2), dtype=np.float32)
        fused[f"model.layers.{i}.mlp.down_proj.weight"] = np.ones((2, 4), dtype=np.float32)
    _save(ck / "phi3.safetensors", fused)
    _save(ck / "emb.safetensors", {"embed.weight": np.ones((2, 2), dtype=np.float32)})
    out_json = tmp_path / "o.json"
    code, out, err, data = _scan_json(str(ck), "--in-process", "--json", str(out_json))
    assert code == 1, out + err
    assert data is not None and data["layers"] == []
    lines = [why for file, why in data["skipped"]]
    phi = [why for file, why in data["skipped"] if file.endswith("phi3.safetensors")]
    assert len(phi) == 2 and all("w12" in why and "hint:" in why for why in phi), phi
    emb = [why for file, why in data["skipped"] if file.endswith("emb.safetensors")]
    assert len(emb) == 1 and "hint:" in emb[0], lines
    assert out.count("skipped ") == 3


def test_an_empty_directory_says_so_and_exits_1(tmp_path: Path) -> None:
    (tmp_path / "ck").mkdir()
    code, out, err, _ = run_cli("scan", str(tmp_path / "ck"), "--in-process")
    assert code == 1 and "no weight files" in out, out + err


@pytest.mark.parametrize("where", ["inside", "cwd-inside", "above"])
def test_scan_then_verify_round_trips_as_is(tmp_path: Path, where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    np = require_module("numpy", "weights")
    ck = tmp_path / "ck"
    _save(ck / "sub" / "w.safetensors", {"W_up": np.array([[1, 0], [0, 1], [1, 1]], dtype=np.float32),
                                         "W_down": np.array([[-1, 0, 1], [0, -1, 2]], dtype=np.float32)})
    if where == "cwd-inside":
        monkeypatch.chdir(ck)
        scanned, report = ".", "scan.json"
    else:
        monkeypatch.chdir(tmp_path)
        scanned, report = "ck", ("ck/scan.json" if where == "inside" else "scan.json")
    code, out, err, _ = run_cli("scan", scanned, "--in-process", "--activation", "relu", "--json", report)
    assert code == 0, out + err
    code, out, err, _ = run_cli("verify", report)
    assert code == 0 and "1 of 1" in out, out + err


def test_a_link_swapped_after_the_check_is_refused_by_the_descriptor(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The name is checked, then opened: a link changed in between would open a file outside DIR.
    The check that counts is on the open descriptor (where the system says the file is)."""
    import symabsorb
    import symabsorb.explore.scan as scan_module

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("the system does not tell where a descriptor is (/proc/self/fd)")
    outside = _outside_dir(tmp_path)
    ck = tmp_path / "ck"
    ck.mkdir()
    os.symlink(outside / "secret.safetensors", ck / "evil.safetensors")
    monkeypatch.setattr(scan_module, "_confined", lambda name, root: (False, None))  # as if checked before a swap
    result = symabsorb.scan(ck, case_budget=30)
    assert result.layers == ()
    (why,) = [why for file, why in result.skipped if file.endswith("evil.safetensors")]
    assert "opened outside the directory" in why
