"""``symabsorb verify`` for deep stacks (MATH.md Part III): Theorem FD certificates and Theorem 1D / FA witnesses.

Nothing of the report is trusted: the stack is resolved again from the report's embedded spec, its question is
re-derived (:func:`symabsorb.theory.prover.prove`), and

* a **Theorem FD certificate** is re-checked by recomputing the exact Jacobian at the certificate's points (each
  checked X-regular exactly), its rank (modulo the same prime with python-flint, a lower bound; over Q without
  it) and Lemma F's general ``D_free`` from the stack's widths; the verdict must be ``open`` with the scope
  ``almost every weight near these`` (never ``not-absorbable``);
* a **Theorem 1D** decision is re-derived from the exact slopes; an absorbable one's witness must be the
  re-derived witness entry by entry, with the stack's widths;
* a **Theorem FA** witness (rational entries) is re-checked by the exact fold test on the spec's weights and the
  exact one-layer equality of every witness block with the identity or ``N R_1``.

:func:`check_stack_query` returns the detail line, ``None`` when there is nothing of this kind to check, and
raises :class:`~.certify.CertificateError` when a check fails.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from .certify import CertificateError

__all__ = ["MAX_POINTS", "check_stack_query"]

#: Points of an FD certificate verify accepts (each costs one exact Jacobian).
MAX_POINTS = 4096


def _stacks(data: dict[str, Any], report: Any) -> dict[str, Any]:
    from pathlib import Path

    from ..model import resolve_text

    spec = data.get("spec") or {}
    recorded = spec.get("path")
    name = Path(recorded).name if isinstance(recorded, str) and Path(recorded).name else Path(report).name
    resolved = resolve_text(spec["text"], str(Path(report).absolute().parent / name))
    return {f"absorb {s.name}": s for s in resolved.stacks}


def _fraction(x: Any, what: str) -> Fraction:
    if not isinstance(x, str) or len(x) > 400:
        raise CertificateError(f"{what}: not an exact number")
    try:
        return Fraction(x)
    except (ValueError, ZeroDivisionError):
        raise CertificateError(f"{what}: `{x[:40]}` is not an exact rational") from None


def _matrix(rows: Any, shape: tuple[int, int], what: str) -> list[list[Fraction]]:
    if not isinstance(rows, list) or len(rows) != shape[0] or \
            not all(isinstance(r, list) and len(r) == shape[1] for r in rows):
        raise CertificateError(f"{what} is not a {shape[0]}×{shape[1]} matrix")
    return [[_fraction(x, what) for x in r] for r in rows]


def check_stack_query(data: dict[str, Any], q: dict[str, Any], report: Any) -> str | None:
    d = q.get("derivation")
    if not isinstance(d, dict):
        return None
    witness = d.get("witness") if isinstance(d.get("witness"), dict) else None
    has_layers = witness is not None and isinstance(witness.get("layers"), list) and bool(witness.get("description"))
    if d.get("depth_certificate") is None and not has_layers and d.get("verdict") != "not-absorbable":
        return None
    stack = _stacks(data, report).get(str(q.get("query")))
    if stack is None:
        return None
    from ..theory.library import default_library
    from ..theory.prover import prove

    library = default_library()
    base = prove(stack, library=library)
    result = library.results.get(base.decided_by or "")
    concrete = result.conclusion.concrete if result is not None else None
    if d.get("depth_certificate") is not None:
        return _check_fd(d, stack)
    if concrete == "slopes-1d":
        return _check_1d(d, stack, library, base)
    if concrete == "fold" and d.get("verdict") == "not-absorbable":
        raise CertificateError("Theorem FA's condition is sufficient only: it never proves a stack not absorbable")
    if concrete == "fold" and has_layers:
        return _check_fa(d, stack)
    if has_layers:
        raise CertificateError(f"the stack's question is not decided by Theorem 1D or FA (decided by "
                               f"{base.decided_by or 'no result'}), so its witness is not one verify can re-check")
    return None


def _check_fd(d: dict[str, Any], stack: Any) -> str:
    from ..theory.hyp_deep import d_free
    from .deep import MAX_FD_ENTRIES, _rank_mod_p, _rref_rank, jacobian_rows
    from .deepdecide import limit_layers

    cert = d["depth_certificate"]
    if d.get("verdict") != "open" or d.get("scope") != "almost every weight near these":
        raise CertificateError("a Theorem FD certificate backs only the verdict open with the scope 'almost every "
                               "weight near these' (it never decides the weights)")
    found = limit_layers(stack)
    if found is None:
        raise CertificateError("Theorem FD's certificate is for bias-free ReLU stacks (or σ with the tropical limit "
                               "α₊·ReLU, through Lemma T) with inline rational weights; this stack is not one")
    layers = found[0]
    dim = len(layers[0].m)
    points = cert.get("points") if isinstance(cert, dict) else None
    if not isinstance(points, list) or not points or len(points) > MAX_POINTS:
        raise CertificateError("the certificate has no points (or too many)")
    columns = 2 * dim * sum(layer.width for layer in layers)
    if len(points) * dim * columns > MAX_FD_ENTRIES:
        raise CertificateError(f"the certificate's Jacobian would have more than {MAX_FD_ENTRIES} entries")
    rows: list[list[Fraction]] = []
    for i, p in enumerate(points):
        if not isinstance(p, list) or len(p) != dim:
            raise CertificateError(f"point {i} is not a vector of dimension {dim}")
        r = jacobian_rows(layers, [_fraction(x, f"point {i}") for x in p])
        if r is None:
            raise CertificateError(f"point {i} is not X-regular: a pre-activation is 0 there (exact)")
        rows.extend(r)
    rank, prime = _rank_mod_p(rows)
    free = d_free(dim, [layer.width for layer in layers])
    if rank <= free:
        rank_q, _ = _rref_rank(rows) if prime is not None else (rank, None)
        if rank_q <= free:
            raise CertificateError(f"recomputed: rank {rank_q} ≤ D_free = {free}; the certificate fails")
        rank = rank_q
    how = f"modulo {prime}" if prime else "over Q"
    return (f"Theorem FD certificate: the exact Jacobian at {len(points)} X-regular points has rank {rank} ({how}) "
            f"> D_free = {free} (Lemma F, general formula), recomputed from the spec")


def _check_1d(d: dict[str, Any], stack: Any, library: Any, base: Any) -> str:
    import sympy as sp

    from .concrete import decide

    again = decide(stack, library)
    if again.verdict.value != d.get("verdict") or str(again.scope) != d.get("scope"):
        raise CertificateError(f"re-derived from the exact slopes: {again.verdict.value} ({again.scope}), not "
                               f"{d.get('verdict')} ({d.get('scope')})")
    if again.verdict.value != "absorbable":
        return f"Theorem 1D: re-derived exactly from the slopes ({again.verdict.value})"
    assert again.witness is not None
    layers = (d.get("witness") or {}).get("layers")
    if not isinstance(layers, list) or len(layers) != len(again.witness.layers):
        raise CertificateError("the witness does not have one residual-free block per block of the stack")
    for i, (got, want) in enumerate(zip(layers, again.witness.layers, strict=True)):
        for key, mat in (("W_up", want.w_up), ("W_down", want.w_down)):
            rows = got.get(key) if isinstance(got, dict) else None
            expect = [[sp.sstr(x) for x in mat.row(r)] for r in range(mat.rows)]
            if rows != expect:
                try:
                    same = _matrix(rows, (mat.rows, mat.cols), f"block {i + 1} {key}") == \
                        [[Fraction(int(sp.Rational(x).p), int(sp.Rational(x).q)) for x in mat.row(r)]
                         for r in range(mat.rows)]
                except (CertificateError, TypeError):
                    same = False
                if not same:
                    raise CertificateError(f"the witness's block {i + 1} {key} is not Theorem 1D's witness for these "
                                           "weights")
    return "Theorem 1D: the slopes re-derived exactly, and the witness's slopes equal them (exact)"


def _check_fa(d: dict[str, Any], stack: Any) -> str:
    from .deep import check_fold_witness, fold_test, layers_of

    layers = layers_of(stack)
    if layers is None:
        raise CertificateError("the stack has no inline rational weights")
    fold = fold_test(layers)
    if fold.state != "fold":
        raise CertificateError(f"the fold test fails on the spec's weights: {fold.reason}")
    dim = len(layers[0].m)
    got = (d.get("witness") or {}).get("layers")
    if not isinstance(got, list) or len(got) != len(layers):
        raise CertificateError("the witness does not have one residual-free block per block of the stack")
    parsed = []
    for i, (g, layer) in enumerate(zip(got, layers, strict=True)):
        if not isinstance(g, dict):
            raise CertificateError(f"block {i + 1} of the witness is not a table")
        parsed.append((_matrix(g.get("W_up"), (layer.width, dim), f"block {i + 1} W_up"),
                       _matrix(g.get("W_down"), (dim, layer.width), f"block {i + 1} W_down")))
    if not check_fold_witness(layers, fold, parsed):
        raise CertificateError("a witness block is neither the identity nor N R_1 (exact)")
    return (f"Theorem FA: the fold test holds on the spec's weights ({fold.rays} vertex rays) and every witness block "
            "is the identity or N R_1 (exact)")
