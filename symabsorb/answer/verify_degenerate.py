"""`symabsorb verify` for Theorem D (MATH.md §15) on inline weights: the report is untrusted, so the question
is re-derived from the spec (the prover must decide the block by the result whose ``concrete`` is
``degenerate``), an ``absorbable`` witness is proved equal to ``Mx + B(x)`` in exact rationals (equal normal
forms: linear part, atom coefficients, constant), and a ``not-absorbable`` certificate is re-derived by running
the exact search again (every independent ``J`` must fail)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..theory.skips import is_stream_skip
from ..weights.certify import CertificateError
from .session import in_force

__all__ = ["check_inline_degenerate", "check_pair_witness", "is_theorem_d_witness"]

#: The longest entry of a witness matrix accepted from a report (characters).
MAX_ENTRY = 4000


def _matrix(rows: Any, shape: tuple[int, int], what: str) -> list[list[Fraction]]:
    if not (isinstance(rows, list) and len(rows) == shape[0] and all(
            isinstance(r, list) and len(r) == shape[1] and all(isinstance(x, str) and len(x) <= MAX_ENTRY for x in r)
            for r in rows)):
        raise CertificateError(f"the witness's {what} is not a {shape[0]} x {shape[1]} matrix of exact numbers")
    try:
        return [[Fraction(x) for x in r] for r in rows]
    except (ValueError, ZeroDivisionError):
        raise CertificateError(f"an entry of the witness's {what} is not an exact rational") from None


def _witness_matrices(witness: dict[str, Any], m: int, dim: int) -> tuple[list[list[Fraction]], list[list[Fraction]]]:
    """A Theorem D witness's ``W_up`` (m × dim) and ``W_down`` (dim × m) as exact rationals, checked to be of the
    block's width and free of a gate and of biases (:class:`CertificateError` otherwise)."""
    up = witness.get("W_up")
    width = len(up) if isinstance(up, list) else -1
    if width != m:
        raise CertificateError(f"the witness has {width} units, not the block's {m}")
    rows = _matrix(up, (m, dim), "W_up")
    cols = _matrix(witness.get("W_down"), (dim, m), "W_down")
    if witness.get("W_gate") is not None or any(witness.get(k) is not None for k in ("b_up", "b_down", "b_gate")):
        raise CertificateError("a Theorem D witness has no gate and no biases")
    return rows, cols


def check_inline_degenerate(d: dict[str, Any], block: Any, verdict: str) -> str | None:
    """Re-check an inline block's Theorem D verdict; a failure raises :class:`CertificateError`.

    Under a normalisation after the residual sum the question is the reduced block's (Lemma PN: skip ``PM``,
    outputs ``P·W_down``; post-RMSNorm: the block without the norm), exactly as the prover decides it; the
    verdict is re-derived by Theorem D's exact search on that block and must be the claimed one (referee of
    issue 30, F1/F2: the untransformed block was searched and the re-derived verdict never compared)."""
    from ..weights.degenerate import _frac_rows, atoms_of, decide_width, same_function, sigma_at_zero_sign, sigma_kind

    if verdict not in ("absorbable", "not-absorbable"):
        return None
    norm = block.norm
    if norm != "none":
        from ..theory.layers import reduced_block

        reduced = reduced_block(block)
        if isinstance(reduced, str):
            raise CertificateError(f"the block's question does not reduce: {reduced}")
        block = reduced
    session = in_force()
    library = session.library
    proof = session.derive(block)
    result = library.results.get(proof.derivation.decided_by or "")
    proc = library.procedure(result)
    if result is None or proc is None or not proc.any_weights or proof.attempt is None:
        raise CertificateError(f"the block's question is not decided by Theorem D's procedure (decided by "
                               f"{proof.derivation.decided_by or 'no result'})")
    q = block.question
    if not result.admits(q.bias_label, q.norm):
        raise CertificateError(f"`{result.id}` does not cover this setting (biases {q.bias_label}, "
                               f"normalisation {q.norm})")
    c: Any = proof.attempt.bindings().get("c")
    kind, why = sigma_kind(block)
    from ..theory.skips import skip_matrix

    w_up, w_down, skip = _frac_rows(block.w_up), _frac_rows(block.w_down), _frac_rows(skip_matrix(block))
    if kind is None or c is None or not getattr(c, "is_Rational", False) or w_up is None or w_down is None \
            or skip is None:
        raise CertificateError(f"Theorem D's procedure does not apply to the spec's block ({why or 'not rational'})")
    sign0, _ = sigma_at_zero_sign(block)
    a = atoms_of(w_up, w_down, skip, Fraction(int(c.p), int(c.q)), kind, sign0)
    if a.eps is None:
        raise CertificateError("the sign of σ(0) is undecided: Theorem D decides nothing here")
    m, dim = len(w_up), len(skip)
    res = decide_width(a, m)
    derived = {True: "absorbable", False: "not-absorbable"}.get(res.found) if res.found is not None else None
    if derived != verdict:
        raise CertificateError(f"re-running Theorem D's exact search gives {derived or 'no verdict'}"
                               f"{'' if res.found is not None else f' ({res.reason})'}, not `{verdict}`")
    reduced_text = {"none": "", "post-ln": " for the reduced block (skip PM, output weights P W_down; Lemma PN)"}.get(
        norm, " for the block without its normalisation")
    if verdict == "absorbable":
        witness = d.get("witness")
        if not isinstance(witness, dict):
            raise CertificateError("an absorbable Theorem D verdict without its witness")
        rows, cols = _witness_matrices(witness, m, dim)
        if not same_function(w_up, w_down, skip, rows, cols, a.c, kind, sign0 == 0):
            raise CertificateError(f"the witness is not equal to Mx + B(x){reduced_text}: its normal form (linear "
                                   "part, atom coefficients, constant) differs (exact)")
        return (f"Theorem D witness of width {m}: equal to Mx + B(x){reduced_text} for every x (normal forms "
                "compared in exact rationals)")
    return (f"Theorem D certificate re-derived{reduced_text}: k + δ = {a.k + a.eps}, every independent J fails at "
            f"width {m} ({len(res.certificate)} cases, exact ranks)")


def is_theorem_d_witness(d: dict[str, Any]) -> bool:
    """Whether the report's witness is a Theorem D construction (no index set: not a flip of units of B), e.g.
    the sufficient half of Theorem D used by Cor. D-sandwich; it is then checked by :func:`check_pair_witness`."""
    from ..weights.degenerate import DESCRIPTION

    witness = d.get("witness")
    return isinstance(witness, dict) and witness.get("description") == DESCRIPTION


def check_pair_witness(d: dict[str, Any], block: Any, verdict: str) -> str:
    """An ``absorbable`` verdict backed by a Theorem D witness, proved from the spec alone: ``σ(t) − σ(−t) = 2ct``
    with ``c ≠ 0`` re-proved for the spec's σ, then equal pair-atom normal forms (linear part, the coefficient of
    each pair ``{v, −v}``, constant) in exact rationals, which makes the two blocks the same function for every
    such σ (Theorem D's "if", MATH.md §15). Only bias-free blocks; under a normalisation after the sum, the
    reduced block (referee of issue 30, F5: such a witness was checked as a flip)."""
    from ..theory.checks import Subject
    from ..theory.derivation import HypStatus
    from ..theory.hypotheses import check
    from ..theory.skips import skip_matrix
    from ..weights.degenerate import _frac_rows, same_function, sigma_at_zero_sign

    if verdict != "absorbable":
        raise CertificateError(f"a Theorem D witness backs `absorbable`, not `{verdict}`")
    if block.gated or block.question.bias_label != "none":
        raise CertificateError("a Theorem D witness covers ungated bias-free blocks only")
    if block.norm != "none":
        from ..theory.layers import reduced_block

        reduced = reduced_block(block)
        if isinstance(reduced, str):
            raise CertificateError(f"the block's question does not reduce: {reduced}")
        block = reduced
    odd = check("odd_linear", Subject(block=block), {})
    c: Any = odd.binding("c")
    if odd.status is not HypStatus.PROVED or c is None or not getattr(c, "is_Rational", False):
        raise CertificateError("σ(t) − σ(−t) = 2ct with a rational c ≠ 0 is not proved for the spec's σ")
    w_up, w_down, skip = _frac_rows(block.w_up), _frac_rows(block.w_down), _frac_rows(skip_matrix(block))
    if w_up is None or w_down is None or skip is None:
        raise CertificateError("the spec's block has no rational weights and skip")
    witness = d.get("witness")
    assert isinstance(witness, dict)
    m, dim = len(w_up), len(skip)
    rows, cols = _witness_matrices(witness, m, dim)
    sign0, _ = sigma_at_zero_sign(block)  # σ(0) dropped only when proved 0; otherwise the constants must agree
    if not same_function(w_up, w_down, skip, rows, cols, Fraction(int(c.p), int(c.q)), "dilates", sign0 == 0):
        raise CertificateError("the witness is not equal to Mx + B(x): its pair-atom normal form (linear part, "
                               "pair coefficients, constant) differs (exact)")
    return (f"Theorem D witness of width {m}: equal to Mx + B(x) for every x and every σ with σ(t) − σ(−t) = 2ct "
            f"(c = {c}; pair-atom normal forms compared in exact rationals)")


def _same_entry(x: Any, v: Fraction) -> bool:
    """Whether the report's entry ``x`` is exactly the construction's ``v``: equal as rationals (read with the
    bounded parser), or, for a ``v`` that is no float64 number (the file stores the witness as float64: the
    derivation says so), exactly the shortest decimal of ``float(v)`` (referee of issue 30, F4: ``float(x) ==
    float(v)`` accepted entries that only round to it)."""
    from ..untrusted import exact_fraction

    got = exact_fraction(x)
    if got == v:
        return True
    rounded = float(v)
    return Fraction(rounded) != v and got == Fraction(repr(rounded))


def check_file_degenerate(d: dict[str, Any], raw_cert: dict[str, Any], block: Any, verdict: str, root: Any) -> str:
    """Re-check a file block's ``theorem-D`` certificate: the file (bound by its SHA-256) read again, Theorem D's
    exact search run again on its rational values, and the report's witness compared with the one it builds."""
    from dataclasses import replace

    from ..theory.checks import Subject
    from ..theory.derivation import HypStatus
    from ..theory.hyp_width import line_module
    from ..theory.skips import skip_matrix
    from ..weights.degenerate import _frac_rows, atoms_of, construct, decide_width, file_fractions, sigma_at_zero_sign
    from .verify import _bind, _declared_dir, _load_weights, _opened_once

    if verdict not in ("absorbable", "not-absorbable"):
        raise CertificateError(f"a Theorem D certificate backs `absorbable` or `not-absorbable`, not `{verdict}`")
    weights = raw_cert.get("weights")
    if not isinstance(weights, dict) or not isinstance(weights.get("sha256"), str):
        raise CertificateError("malformed certificate: no weights file digest")
    _bind(weights, block)
    base = _declared_dir(block, root)
    with _opened_once(block, base, root):
        loaded = _load_weights(block, base, root, weights["sha256"])
    if loaded.w_gate is not None or is_stream_skip(block.skip):
        raise CertificateError("Theorem D's file procedure covers ungated blocks without Hyper-Connections")
    m, dim = (int(x) for x in loaded.w_up.shape)
    concrete = replace(block, dim=dim, width=m)
    q = concrete.question
    if q.bias_label != "none" or q.norm != "none":
        raise CertificateError("Theorem D covers bias-free blocks without normalisation")
    status, kind, c, _ = line_module(Subject(block=concrete))
    skip = _frac_rows(skip_matrix(concrete))
    if status is not HypStatus.PROVED or c is None or not c.is_Rational or skip is None:
        raise CertificateError("Theorem D's hypotheses are not proved for the spec's block")
    w_up, w_down = file_fractions(loaded.w_up), file_fractions(loaded.w_down)
    sign0, _ = sigma_at_zero_sign(concrete)
    a = atoms_of(w_up, w_down, skip, Fraction(int(c.p), int(c.q)), kind, sign0)
    if a.eps is None:
        raise CertificateError("the sign of σ(0) is undecided: Theorem D decides nothing here")
    res = decide_width(a, m)
    if verdict == "not-absorbable":
        if res.found is not False:
            raise CertificateError("re-running Theorem D's exact search on the file does not prove 'not absorbable'")
        return (f"Theorem D certificate re-derived from the file: k + δ = {a.k + a.eps}, every independent J fails "
                f"at width {m} ({len(res.certificate)} cases, exact ranks)")
    if not res.found or res.choice is None:
        raise CertificateError("re-running Theorem D's exact search on the file finds no residual-free block")
    rows, cols = construct(a, res.choice, m)
    witness = d.get("witness")
    if isinstance(witness, dict) and (witness.get("W_up") is not None or witness.get("W_down") is not None):
        for what, want in (("W_up", rows), ("W_down", cols)):
            got = witness.get(what)
            ok = isinstance(got, list) and len(got) == len(want) and all(
                isinstance(r, list) and len(r) == len(wr) for r, wr in zip(got, want, strict=False))
            try:
                ok = ok and isinstance(got, list) and all(_same_entry(x, v) for r, wr in zip(got, want, strict=True)
                                                          for x, v in zip(r, wr, strict=True))
            except (TypeError, ValueError, OverflowError):
                ok = False
            if not ok:
                raise CertificateError(f"the witness's {what} is not Theorem D's construction for the file")
    return (f"Theorem D re-derived from the file: width {res.choice.width(a)} <= {m}; the witness is its exact "
            "construction (proved equal to Mx + B(x) by normal forms)")
