"""Issue 26 §2's classes as hostile property tests (round 4): Hypothesis builds scan directories of
files, links in and out, Hugging Face snapshot links, kernel files and odd configs, and forges the
numbers of reports. Every run ends with its safe outcome: a layer is reported only under a name in
the scanned directory and decided on the file that name designates; nothing outside is read
without ``--allow-outside``; no traceback, no exit 3, never the whole budget."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import require_module, run_cli
from tests.hostile.test_links_and_pseudo_files import _blob, _save, _weights

FAST = settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

#: What one entry of the scanned directory is.
KINDS = ["file", "link-in", "link-out", "hub-blob", "dangling", "loop", "proc", "dev", "fifo"]
#: What config.json is.
CONFIGS = ["none", "good", "link-out", "proc", "huge-int", "huge-float", "deep", "not-json", "fifo"]


def _entry(ck: Path, outside: Path, repo: Path | None, i: int, kind: str) -> int | None:
    """Create entry ``i`` of ``kind``; the width of the layer its name designates, if it is ours to read."""
    name = ck / f"f{i}.safetensors"
    width = 3 + i  # each file its own width: the record tells which file was decided
    if kind == "file":
        _save(name, _weights(i, m=width))
        return width
    if kind == "link-in":
        _save(ck / "real" / f"r{i}.safetensors", _weights(i, m=width))
        os.symlink(Path("real") / f"r{i}.safetensors", name)
        return width
    if kind == "link-out":
        _save(outside / f"o{i}.safetensors", _weights(i, m=width, prefix="model.decoder.layers.7."))
        os.symlink(outside / f"o{i}.safetensors", name)
        return None
    if kind == "hub-blob":
        assert repo is not None
        scratch = outside / f"h{i}.safetensors"
        _save(scratch, _weights(i, m=width))
        sha = _blob(repo, scratch.read_bytes())
        os.symlink(os.path.join("..", "..", "blobs", sha), name)
        return width
    if kind == "dangling":
        os.symlink(ck / "nowhere.safetensors", name)
    elif kind == "loop":
        os.symlink(name.name, name)
    elif kind == "proc":
        os.symlink("/proc/self/status", name)
    elif kind == "dev":
        os.symlink("/dev/zero", name)
    elif kind == "fifo":
        os.mkfifo(name)
    return None


def _config(ck: Path, outside: Path, kind: str) -> None:
    path = ck / "config.json"
    good = {"model_type": "opt", "activation_function": "relu"}
    if kind == "good":
        path.write_text(json.dumps(good))
    elif kind == "link-out":
        (outside / "config.json").write_text(json.dumps({**good, "activation_function": "silu"}))
        os.symlink(outside / "config.json", path)
    elif kind == "proc":
        os.symlink("/proc/self/status", path)
    elif kind == "huge-int":
        path.write_text('{"model_type": "opt", "layer_norm_eps": ' + "7" * 5000 + "}")
    elif kind == "huge-float":
        path.write_text('{"model_type": "opt", "layer_norm_eps": 1e999999999, "x": 0.' + "1" * 5000 + "}")
    elif kind == "deep":
        path.write_text("[" * 100_000 + "]" * 100_000)
    elif kind == "not-json":
        path.write_bytes(b"\xff\xfe{")
    elif kind == "fifo":
        os.mkfifo(path)


@FAST
@given(kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=4), config=st.sampled_from(CONFIGS),
       hub=st.booleans(), allow=st.booleans())
def test_scan_reads_only_its_directory_and_decides_the_named_file(kinds: list[str], config: str, hub: bool,
                                                                   allow: bool) -> None:
    require_module("safetensors", "weights")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        outside = root / "outside"
        outside.mkdir()
        repo = None
        if hub or "hub-blob" in kinds:
            repo = root / "models--org--name"
            ck = repo / "snapshots" / "abc123"
        else:
            ck = root / "ck"
        ck.mkdir(parents=True)
        widths = {f"f{i}.safetensors": _entry(ck, outside, repo, i, k) for i, k in enumerate(kinds)}
        # a link's target inside the directory is listed under its own name too
        widths.update({f"real/r{i}.safetensors": 3 + i for i, k in enumerate(kinds) if k == "link-in"})
        _config(ck, outside, config)
        out_json = root / "o.json"
        argv = ["scan", str(ck), "--in-process", "--budget", "30", "--json", str(out_json)]
        if allow:
            argv.append("--allow-outside")
        code, out, err, _ = run_cli(*argv)
        assert code in (0, 1, 2), out + err
        assert "Traceback" not in err and "internal error" not in err.lower()
        if code == 2:  # nothing to decide at all is still no traceback; a clean message
            assert err.strip(), out
            return
        data = json.loads(out_json.read_text())
        for r in data["layers"]:
            rel = Path(r["file"]).relative_to(ck.resolve()).as_posix()  # reported under its name in DIR
            assert rel in widths, r["file"]
            if r.get("status") == "done":
                want = widths[rel]
                if want is None:  # only an outside file, read through --allow-outside
                    assert allow and kinds[int(Path(rel).stem[1:])] == "link-out", r
                else:
                    assert r["m"] == want, (r, kinds)  # the file the name designates, no other
        if not allow:
            assert "layers.7" not in out and "layers.7" not in out_json.read_text()
        for i, k in enumerate(kinds):
            if k in ("link-out", "dangling", "loop", "proc", "dev", "fifo") and not (k == "link-out" and allow):
                assert not any(Path(r["file"]).name == f"f{i}.safetensors" and r.get("status") == "done"
                               for r in data["layers"]), (k, data["layers"])


NUMBERS = st.one_of(
    st.sampled_from(["1e999999999", "-1e-999999999", "1e+0000000000000000001", "9" * 30000, "1/" + "0" * 5,
                     "nan", "inf", "-0x1p3", "1_000", "١٢", "1e4000", "  -1/2 ", "1.5e-3", ""]),
    st.integers(-(10**4000), 10**4000),
    st.from_regex(r"-?[0-9]{1,6}(\.[0-9]{0,6})?([eE][+-]?[0-9]{1,12})?", fullmatch=True),
    st.from_regex(r"-?[0-9]{1,40}/[0-9]{1,40}", fullmatch=True),
)


@pytest.fixture(scope="module")
def certified_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    np = require_module("numpy", "weights")
    ck = tmp_path_factory.mktemp("ck")
    _save(ck / "w.safetensors", {"W_up": np.array([[1, 0], [0, 1], [1, 1]], dtype=np.float32),
                                 "W_down": np.array([[-1, 0, 1], [0, -1, 2]], dtype=np.float32)})
    code, out, err, _ = run_cli("scan", str(ck), "--in-process", "--activation", "relu", "--json",
                                str(ck / "scan.json"))
    assert code == 0, out + err
    return ck, json.loads((ck / "scan.json").read_text())


@FAST
@given(where=st.sampled_from(["target", "inner", "positive_sum", "negative_sum"]), value=NUMBERS)
def test_verify_bounds_every_forged_number_before_building_it(certified_report: tuple[Path, dict[str, Any]],
                                                               where: str, value: Any) -> None:
    ck, genuine = certified_report
    data = json.loads(json.dumps(genuine))
    (query,) = [q for q in data["queries"] if q["derivation"]["certificate"] is not None]
    cert = query["derivation"]["certificate"]
    if where == "target":
        cert["target"]["nonzero"][0][2] = value
    else:
        cert[where] = value
    fd, name = tempfile.mkstemp(suffix=".json", dir=ck)  # beside the weights, as scan wrote it
    os.close(fd)
    report = Path(name)
    try:
        report.write_text(json.dumps(data))
        code, out, err, _ = run_cli("verify", str(report), "--budget", "5")
    finally:
        report.unlink()
    assert code in (0, 1, 2), out + err
    assert "Traceback" not in err and "budget" not in (out + err).lower(), out + err
