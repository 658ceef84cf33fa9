"""Resumable results: one JSON line per finished case, appended as soon as the case finishes.

A second run reads the file and skips every case already recorded, so an interrupted or repeated
run resumes where it stopped. Lines that do not parse (a run killed mid-write) are ignored.
The enumeration of each space is cached next to it (``enumeration-NAME.json``), keyed by the
space's canonical text.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["ResultStore"]

CASES = "cases.jsonl"


class ResultStore:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / CASES
        self.records: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            with self.path.open(encoding="utf-8") as fh:
                for line in fh:
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError:
                        continue
                    if isinstance(record, dict) and isinstance(record.get("id"), str):
                        self.records[record["id"]] = record
        self._fh = self.path.open("a", encoding="utf-8")

    def __contains__(self, case_id: str) -> bool:
        return case_id in self.records

    def add(self, record: dict[str, Any]) -> None:
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
        path = self._enum_path(space)
        if not path.exists():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None
        return data if isinstance(data, dict) and data.get("key") == key else None

    def save_enumeration(self, space: str, data: dict[str, Any]) -> None:
        path = self._enum_path(space)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, path)
