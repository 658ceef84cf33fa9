"""Resumable results: one JSON line per finished case, appended as soon as the case finishes.

A second run reads the file and skips every case already recorded, so an interrupted or repeated
run resumes where it stopped. The enumeration of each space is cached next to it
(``enumeration-NAME.json``), keyed by the space's canonical text.

A results directory is untrusted input (it may have been copied, shared or edited): every record
carries an HMAC under the user's secret key (:func:`symabsorb.userdirs.seal`) over its id and its
content, and a record whose HMAC fails (forged, edited, written by another user, or a line cut by
a kill mid-write) is dropped, so its case is recomputed and never counted. The enumeration cache
is sealed the same way. Files are opened without following symbolic links and non-blocking
(a FIFO cannot hang a run); ``cases.jsonl`` is read up to a size cap; a results path that is not
a directory, or whose files are links, devices or one of the command's inputs, is a clean error.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from ..paths import OutputError, check_output
from ..userdirs import read_entry, seal, secret_key, unseal, write_atomically

__all__ = ["MAX_RESULTS_BYTES", "ResultStore", "record_mac"]

CASES = "cases.jsonl"
#: ``cases.jsonl`` files larger than this are not read (every record is recomputed).
MAX_RESULTS_BYTES = 256 * 2**20
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def record_mac(record: dict[str, Any]) -> str:
    """The HMAC of one record (without its ``mac`` field) under the user's key, bound to its id."""
    body = {k: v for k, v in record.items() if k != "mac"}
    text = json.dumps(body, sort_keys=True, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    message = b"case\0" + str(record.get("id")).encode("utf-8", "replace") + b"\0" + text.encode("ascii")
    return hmac.new(secret_key(), message, hashlib.sha256).hexdigest()


def _authentic(record: object) -> bool:
    if not isinstance(record, dict) or not isinstance(record.get("id"), str) or not isinstance(record.get("mac"), str):
        return False
    try:
        return hmac.compare_digest(record["mac"], record_mac(record))
    except (TypeError, ValueError, RecursionError):
        return False


class ResultStore:
    def __init__(self, directory: Path, protect: Sequence[Path] = ()) -> None:
        self.directory = directory
        self.protect = tuple(protect)
        try:
            info = os.stat(directory)
        except FileNotFoundError:
            info = None
        except OSError as err:
            raise OutputError(f"cannot use the results directory `{directory}`: {err.strerror}") from None
        if info is not None and not stat.S_ISDIR(info.st_mode):
            raise OutputError(f"the results path `{directory}` is not a directory; name a directory with --results DIR")
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise OutputError(f"cannot create the results directory `{directory}`: {err.strerror}") from None
        self.path = directory / CASES
        check_output(self.path, self.protect)
        self.records: dict[str, dict[str, Any]] = {}
        self.rejected = 0  # records whose HMAC failed: recomputed
        data = self._read_cases()
        for line in data.splitlines():
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if _authentic(record):
                self.records[record["id"]] = record
            else:
                self.rejected += 1
        self._fh = self._open_append()

    def _read_cases(self) -> bytes:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW | getattr(os, "O_NOCTTY", 0))
        except FileNotFoundError:
            return b""
        except OSError as err:
            raise OutputError(f"cannot read `{self.path}`: {err.strerror} (a symbolic link is not followed)") from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise OutputError(f"`{self.path}` is not a regular file; remove it or choose another --results DIR")
            if info.st_size > MAX_RESULTS_BYTES:
                return b""
            chunks: list[bytes] = []
            total = 0
            while total <= MAX_RESULTS_BYTES:
                block = os.read(fd, 1 << 20)
                if not block:
                    break
                chunks.append(block)
                total += len(block)
            return b"".join(chunks) if total <= MAX_RESULTS_BYTES else b""
        finally:
            os.close(fd)

    def _open_append(self) -> TextIO:
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | _NOFOLLOW, 0o644)
        except OSError as err:
            raise OutputError(f"cannot write `{self.path}`: {err.strerror} (a symbolic link is not followed)") from None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            raise OutputError(f"`{self.path}` is not a regular file; remove it or choose another --results DIR")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "a", encoding="utf-8")

    def __contains__(self, case_id: str) -> bool:
        return case_id in self.records

    def add(self, record: dict[str, Any]) -> None:
        record = {k: v for k, v in record.items() if k != "mac"}
        record["mac"] = record_mac(record)
        self.records[record["id"]] = record
        self._fh.write(json.dumps(record, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()

    def of_kind(self, kind: str, space: str | None = None) -> list[dict[str, Any]]:
        out = [r for r in self.records.values() if r.get("kind") == kind and (space is None or r.get("space") == space)]
        return sorted(out, key=lambda r: (str(r.get("label")), bool(r.get("gated")), r["id"]))

    # -- the enumeration cache
    def _enum_path(self, space: str) -> Path:
        return self.directory / f"enumeration-{space}.json"

    def load_enumeration(self, space: str, key: str) -> dict[str, Any] | None:
        payload = unseal("enumeration", f"{space}\0{key}", read_entry(self._enum_path(space), private=False))
        if payload is None:
            return None
        try:
            data = json.loads(payload)
        except (ValueError, RecursionError):
            return None
        return data if isinstance(data, dict) and data.get("key") == key else None

    def save_enumeration(self, space: str, data: dict[str, Any]) -> None:
        path = self._enum_path(space)
        check_output(path, self.protect)
        payload = (json.dumps(data, sort_keys=True, ensure_ascii=True) + "\n").encode("ascii")
        write_atomically(path, seal("enumeration", f"{space}\0{data.get('key')}", payload))
