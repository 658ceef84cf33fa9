"""``symabsorb verify REPORT.json``: re-check every certificate of a report against the weight files.

Nothing of the report is trusted but the certificate itself and the names of the file and tensors:
the weights are read again (the same untrusted-input reader as ``prove``), their SHA-256 is
compared, and the certificate's claim is checked from scratch in exact integer arithmetic
(:func:`symabsorb.weights.certify.check_certificate`). The verdict must be one the certificate
supports: ``absorbable`` needs an index set; ``not-absorbable`` a proof that none exists and
nondegenerate weights (recomputed exactly).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..dsl.errors import SpecValueError, SymabsorbError
from .certify import Certificate, CertificateError, certificate_from_dict, check_certificate, file_digest

__all__ = ["CheckedQuery", "verify_report"]

#: Largest report read (bytes).
MAX_REPORT_BYTES = 1 << 30


@dataclass(frozen=True)
class CheckedQuery:
    query: str
    verdict: str
    ok: bool
    detail: str


def _load_weights(cert: Certificate, base: Path) -> tuple[Any, Any]:
    import numpy as np

    from .io import checked_matrix, read_tensors

    info = cert.weights
    name = info.get("file")
    if not isinstance(name, str) or not name:
        raise CertificateError("the certificate names no weights file")
    path = base / name
    tensors = read_tensors(path, None, keys=[k for k in (info.get("up"), info.get("down")) if isinstance(k, str)])
    want = info.get("sha256")
    if want and file_digest(str(path)) != want:
        raise CertificateError(f"`{name}` has changed since the report (SHA-256 differs)")
    up_key, down_key = info.get("up"), info.get("down")
    if up_key not in tensors or down_key not in tensors:
        raise CertificateError(f"`{name}` lacks the tensors `{up_key}` / `{down_key}`")
    up = checked_matrix(tensors[up_key], str(up_key), path, None)
    down = checked_matrix(tensors[down_key], str(down_key), path, None)
    if info.get("transpose"):
        up, down = np.ascontiguousarray(up.T), np.ascontiguousarray(down.T)
    return up, down


def _consistent(verdict: str, cert: Certificate) -> str | None:
    if verdict == "absorbable" and cert.kind != "index-set":
        return "the verdict is absorbable but the certificate does not exhibit an index set"
    if verdict == "not-absorbable":
        if cert.kind not in ("separating", "exact-search", "nondegenerate"):
            return "the verdict is not-absorbable but the certificate does not prove that no index set exists"
        if cert.nondegenerate is not None and not cert.nondegenerate.get("holds"):
            return "the verdict is not-absorbable but the weights are recorded as degenerate"
    return None


def verify_report(report: Path, weights_dir: Path | None = None, blas: bool = False) -> list[CheckedQuery]:
    """Every certificate in ``report`` re-checked; raises SpecValueError on an unreadable report.

    Unless ``blas``, the exact products run in int64 without floating point (:func:`.exact.integer_only`):
    the check then shares no arithmetic with the float64-BLAS path that made the certificate."""
    import contextlib

    from .exact import integer_only

    with contextlib.nullcontext() if blas else integer_only():
        return _verify(report, weights_dir)


def _verify(report: Path, weights_dir: Path | None) -> list[CheckedQuery]:
    from ..paths import read_input

    raw = read_input(report, None, "report", max_bytes=MAX_REPORT_BYTES, expected="a JSON report of symabsorb prove")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise SpecValueError(f"`{report}` is not a JSON report: {type(err).__name__}", None, "not JSON",
                             "the output of `symabsorb prove --format json`") from None
    if not isinstance(data, dict) or not isinstance(data.get("queries"), list):
        raise SpecValueError(f"`{report}` is not a symabsorb report", None, "no `queries` list",
                             "the output of `symabsorb prove --format json`")
    spec_path = (data.get("spec") or {}).get("path") if isinstance(data.get("spec"), dict) else None
    base = weights_dir if weights_dir is not None else (
        Path(spec_path).parent if isinstance(spec_path, str) and spec_path else report.parent)
    out: list[CheckedQuery] = []
    for q in data["queries"]:
        if not isinstance(q, dict) or not isinstance(q.get("derivation"), dict):
            continue
        d = q["derivation"]
        raw_cert = d.get("certificate")
        if raw_cert is None:
            continue
        name = str(q.get("query", "?"))
        verdict = str(d.get("verdict", "?"))
        try:
            cert = certificate_from_dict(raw_cert)
            problem = _consistent(verdict, cert)
            if problem:
                raise CertificateError(problem)
            up, down = _load_weights(cert, base)
            detail = check_certificate(cert, up, down)
            about = "" if cert.kind == "nondegenerate" else cert.describe_target() + ": "
            out.append(CheckedQuery(name, verdict, True, about + detail))
        except CertificateError as err:
            out.append(CheckedQuery(name, verdict, False, str(err)))
        except SymabsorbError as err:
            out.append(CheckedQuery(name, verdict, False, str(err).splitlines()[0] if str(err) else type(err).__name__))
    return out
