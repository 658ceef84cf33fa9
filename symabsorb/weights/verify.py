"""``symabsorb verify REPORT.json``: re-check every certificate of a report against the weight files.

Nothing of the report is trusted but the certificate itself and the names of the file and tensors:
the weights are read again (the same untrusted-input reader as ``prove``), their SHA-256 is
compared, and the certificate's claim is checked from scratch in exact integer arithmetic
(:func:`symabsorb.weights.certify.check_certificate`). The verdict must be one the certificate
supports: ``absorbable`` needs an index set; ``not-absorbable`` a proof that none exists and
nondegenerate weights (recomputed exactly). The question itself is re-derived from the spec the
report embeds: the deciding result and ``T = −M/(2c)`` for the block (so a certificate for another
target, or a nondegeneracy-only certificate where the library needs an index-set condition, fails),
and a verdict on file weights without a certificate fails.
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
    if verdict not in ("absorbable", "not-absorbable", "open"):
        return f"a certificate can only back `absorbable` or `not-absorbable` (or go with `open`), not `{verdict}`"
    if verdict == "absorbable" and cert.kind != "index-set":
        return "the verdict is absorbable but the certificate does not exhibit an index set"
    if verdict == "not-absorbable":
        if cert.kind not in ("separating", "exact-search", "nondegenerate"):
            return "the verdict is not-absorbable but the certificate does not prove that no index set exists"
        if cert.nondegenerate is None:
            return "the verdict is not-absorbable but the certificate records no nondegeneracy check"
        if not cert.nondegenerate.get("holds"):
            return "the verdict is not-absorbable but the weights are recorded as degenerate"
    return None


def _blocks_of(data: dict[str, Any], report: Path) -> dict[str, Any] | None:
    """The blocks of the report's embedded spec, resolved again (None: no spec text in the report)."""
    from ..model import resolve_text
    from ..model.block import Block

    spec = data.get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("text"), str):
        return None
    path = spec["path"] if isinstance(spec.get("path"), str) else str(report)
    resolved = resolve_text(spec["text"], str(path))
    return {f"absorb {b.name}": b for b in resolved.blocks if isinstance(b, Block)}


def _question(block: Any, up: Any, cert: Certificate) -> str | None:
    """Re-derive from the spec what the certificate must answer: the deciding result and
    ``T = −M/(2c)``. A problem (text) when the certificate answers another question."""
    from dataclasses import replace

    from ..theory.derivation import Verdict
    from ..theory.prover import prove
    from .filedecide import INDEX_SET_RESULTS, _target

    m, d = int(up.shape[0]), int(up.shape[1])
    n = block.skip.matrix.rows if block.skip.kind == "hyper" and block.skip.matrix is not None else 1
    concrete = replace(block, dim=d // n if n > 1 else d, width=m)
    derivation = prove(concrete)
    if cert.kind == "nondegenerate":
        if derivation.verdict is not Verdict.IMPOSSIBLE or "nondegenerate" not in str(derivation.scope):
            return ("a nondegeneracy certificate backs a verdict only for results proved for all nondegenerate "
                    f"weights; for this block the library's answer is {derivation.verdict.value} "
                    f"({derivation.decided_by or 'no result'})")
        return None
    if derivation.decided_by not in INDEX_SET_RESULTS or derivation.condition_constant is None:
        return (f"the block's question is not an index-set condition (decided by {derivation.decided_by or 'no result'})")
    target = _target(concrete, derivation.condition_constant)
    if target is None or target != cert.target:
        return "the certificate's target T is not −M/(2c) of the block in the report's spec"
    return None


def _norm(target: Any) -> float:
    """‖T‖_F rounded up (every index-set distance is at most this: S = ∅)."""
    import math
    from fractions import Fraction

    total = sum((v * v for _, _, v in target.entries), Fraction(0))
    return math.nextafter(math.sqrt(float(total)), math.inf)


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
    try:
        blocks = _blocks_of(data, report)
    except SymabsorbError as err:
        raise SpecValueError(f"the spec embedded in `{report}` does not resolve: {str(err).splitlines()[0]}", None,
                             "a spec that does not resolve", "verify re-derives each question from the spec") from None
    if blocks is None:
        raise SpecValueError(f"`{report}` embeds no spec text", None, "no `spec.text`",
                             "the output of `symabsorb prove --format json`, which embeds its spec")
    out: list[CheckedQuery] = []
    for q in data["queries"]:
        if not isinstance(q, dict) or not isinstance(q.get("derivation"), dict):
            continue
        d = q["derivation"]
        raw_cert = d.get("certificate")
        name = str(q.get("query", "?"))
        verdict = str(d.get("verdict", "?"))
        block = blocks.get(name)
        if raw_cert is None:
            if block is not None and block.weights is not None and verdict in ("absorbable", "not-absorbable"):
                out.append(CheckedQuery(name, verdict, False, "a verdict on file weights without its certificate"))
            continue
        try:
            cert = certificate_from_dict(raw_cert)
            problem = _consistent(verdict, cert)
            if problem:
                raise CertificateError(problem)
            if block is None or block.weights is None:
                raise CertificateError("the report's spec has no block with a weights file for this query")
            up, down = _load_weights(cert, base)
            problem = _question(block, up, cert)
            if problem:
                raise CertificateError(problem)
            if cert.kind != "nondegenerate" and cert.distance > _norm(cert.target):
                raise CertificateError(f"the claimed distance {cert.distance} exceeds ‖T‖_F (S = ∅ is that close)")
            detail = check_certificate(cert, up, down)
            about = "" if cert.kind == "nondegenerate" else cert.describe_target() + ": "
            out.append(CheckedQuery(name, verdict, True, about + detail))
        except CertificateError as err:
            out.append(CheckedQuery(name, verdict, False, str(err)))
        except SymabsorbError as err:
            out.append(CheckedQuery(name, verdict, False, str(err).splitlines()[0] if str(err) else type(err).__name__))
    return out
