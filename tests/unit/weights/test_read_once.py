"""The verdict and the hash describe the very same bytes (issue 26 §2, F1/F2).

A weights file rewritten *in place* (same inode, ``os.pwrite``) between the read that hashes it and
a read that decides must not bind a verdict to the hash of other bytes. No real race is needed:
``os.fdopen`` (every read of :func:`symabsorb.paths.open_regular` goes through it) is wrapped so
that the file's content is swapped in place as soon as it has been opened once more than the
decision may: a second read would see the other weights."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import require_module, run_cli

np = require_module("numpy", "weights")

D, M_A, M_B = 4, 6, 9


def _npz(path: Path, m: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    np.savez(path, W_up=rng.standard_normal((m, D)), W_down=rng.standard_normal((D, m)))
    return path.read_bytes()


class _Swapper:
    """Counts the opens of ``target``'s inode; from the ``after``-th on, rewrites it in place with ``other``."""

    def __init__(self, target: Path, other: bytes, after: int) -> None:
        self.inode = os.stat(target).st_ino
        self.target, self.other, self.after, self.opens, self.armed = target, other, after, 0, False

    def wrap(self, real: Any) -> Any:
        def fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
            if self.armed and os.fstat(fd).st_ino == self.inode:
                self.opens += 1
                if self.opens > self.after:  # in place: the same inode, other bytes
                    out = os.open(self.target, os.O_WRONLY | os.O_TRUNC)
                    try:
                        os.pwrite(out, self.other, 0)
                    finally:
                        os.close(out)
            return real(fd, *args, **kwargs)

        return fdopen


@pytest.fixture
def swapper(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Any]:
    made: list[_Swapper] = []

    def make(target: Path, other: bytes, after: int) -> _Swapper:
        s = _Swapper(target, other, after)
        monkeypatch.setattr(os, "fdopen", s.wrap(os.fdopen))
        made.append(s)
        return s

    yield make


def test_scan_decides_the_bytes_it_hashed(tmp_path: Path, swapper: Any) -> None:
    """The decision of a listed layer opens the file once; rewritten after that open, the layer is
    still decided on the listed bytes (width M_A), never on the others with the listed hash."""
    import symabsorb
    from symabsorb.explore.executors import InProcessExecutor

    d = tmp_path / "d"
    d.mkdir()
    other = _npz(tmp_path / "b.npz", M_B, 2)
    target = d / "m.npz"
    _npz(target, M_A, 1)
    s = swapper(target, other, 1)

    class Armed(InProcessExecutor):
        def run(self, jobs: Any, on_result: Any) -> None:
            s.armed = True  # listed: from now on, a second open of the file sees the other bytes
            super().run(jobs, on_result)

    result = symabsorb.scan(d, executor=Armed(), case_budget=30)
    (record,) = result.layers
    assert s.opens == 1, "the decision read the file more than once"
    assert record["status"] == "done", record
    assert record["m"] == M_A


def test_scan_refuses_bytes_changed_before_the_decision_read_them(tmp_path: Path, swapper: Any) -> None:
    """Rewritten in place before the decision's only read: not decided (the hash differs)."""
    import symabsorb
    from symabsorb.explore.executors import InProcessExecutor

    d = tmp_path / "d"
    d.mkdir()
    other = _npz(tmp_path / "b.npz", M_B, 2)
    target = d / "m.npz"
    _npz(target, M_A, 1)
    s = swapper(target, other, 0)

    class Armed(InProcessExecutor):
        def run(self, jobs: Any, on_result: Any) -> None:
            s.armed = True
            super().run(jobs, on_result)

    result = symabsorb.scan(d, executor=Armed(), case_budget=30)
    (record,) = result.layers
    assert record["status"] == "error" and "changed after it was listed" in record["error"], record
    assert record.get("m") is None


def test_prove_hashes_the_bytes_it_decided(tmp_path: Path, swapper: Any) -> None:
    """prove reads the weights file once: the certificate's SHA-256 is of the bytes decided."""
    import hashlib

    spec = tmp_path / "s.absorb"
    spec.write_text('block b { activation: gelu weights: "m.npz" }\nabsorb b\n', encoding="utf-8")
    original = _npz(tmp_path / "m.npz", M_A, 1)
    s = swapper(tmp_path / "m.npz", _npz(tmp_path / "b.npz", M_B, 2), 1)
    s.armed = True
    code, _out, err, _ = run_cli("prove", str(spec), "--format", "json", "-o", str(tmp_path / "r.json"))
    assert code == 0, err
    assert s.opens == 1
    (query,) = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["queries"]
    cert = query["derivation"]["certificate"]
    assert cert["weights"]["sha256"] == hashlib.sha256(original).hexdigest()
    assert cert["weights"]["m"] == M_A


def test_verify_checks_the_bytes_it_hashed(tmp_path: Path, swapper: Any) -> None:
    """verify reads the weights once: rewritten after that read, the certificate is checked against
    the bytes whose hash matched (and passes); rewritten before, the hash differs (exit 1)."""
    spec = tmp_path / "s.absorb"
    spec.write_text('block b { activation: gelu weights: "m.npz" }\nabsorb b\n', encoding="utf-8")
    original = _npz(tmp_path / "m.npz", M_A, 1)
    report = tmp_path / "r.json"
    code, _out, err, _ = run_cli("prove", str(spec), "--format", "json", "-o", str(report))
    assert code == 0, err
    other = _npz(tmp_path / "b.npz", M_A, 3)  # same shape, other values: the certificate is false for it
    s = swapper(tmp_path / "m.npz", other, 1)
    s.armed = True
    code, out, err, _ = run_cli("verify", str(report))
    assert s.opens == 1
    assert code == 0, out + err
    (tmp_path / "m.npz").write_bytes(original)
    s.opens, s.after = 0, 0
    code, out, err, _ = run_cli("verify", str(report))
    assert code == 1 and "SHA-256" in out + err, out + err


def test_read_whole_reads_all_and_stops_one_byte_past_the_cap(tmp_path: Path) -> None:
    import io

    from symabsorb.paths import InputError, read_once, read_whole

    small = tmp_path / "s.bin"
    small.write_bytes(b"x" * 10)
    assert read_once(small, max_bytes=10) == b"x" * 10
    with pytest.raises(InputError, match="too large"):
        read_once(small, max_bytes=9)
    # a stream longer than its size said (no descriptor to ask): read on, in chunks, to the cap
    assert read_whole(io.BytesIO(b"y" * 3000), small, max_bytes=3000) == b"y" * 3000
    with pytest.raises(InputError, match="too large"):
        read_whole(io.BytesIO(b"y" * 3001), small, max_bytes=3000)
