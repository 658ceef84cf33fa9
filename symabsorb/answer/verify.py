"""``symabsorb verify REPORT.json``: re-check every certificate and witness of a report.

Nothing of the report is trusted but the certificates and witnesses themselves, and each is bound
to what it claims to answer:

* **The question comes from the embedded spec**, resolved again as if it lay beside the report
  (``spec.path`` is not followed: imports and weights files are confined to the report's directory
  tree, or to ``--weights-dir``, unless ``--allow-outside``). For each ``absorb`` query the block's
  own declaration says which file, which tensors (prefix included) and which layout are meant.
* **A certificate must match that declaration**: the same file name, SHA-256 (required, and
  compared with the file read now), tensor names and ``transpose``; a certificate copied from
  another block, tensor or file fails. Its sizes are checked against the block before anything
  is decoded, so a report cannot make verify allocate more than the weights themselves need.
  A layer's biases and normalisation scales are read from the file again and the question re-derived
  with them (biased or not; every ``γ_k ≠ 0`` compared exactly); the bias and scale tensor names,
  the norm placement and its ``ε`` recorded in the certificate must be the block's.
* **The verdict must be one the library's data supports** for the re-derived deciding result:
  ``absorbable`` needs an index set under a result whose ``concrete`` procedure is ``index-set``
  with sufficiency proved; ``not-absorbable`` from "no index set exists" needs the result's
  necessity ``proved`` (its ``[conclusion] necessary`` in the TOML) and, for a result scoped to
  nondegenerate weights, nondegeneracy recomputed exactly; a nondegeneracy-only certificate needs a
  result that says ``impossible`` for all nondegenerate weights. Then the claim is checked from
  scratch in exact integer arithmetic (:func:`symabsorb.weights.certify.check_certificate`).
* **Witnesses are re-checked exactly**: an inline block's flip witness must be the flip of the
  spec's exact weights over its index set and satisfy ``W_down[:,S] W_up[S,:] = T`` in exact
  rationals; a file block's witness (when the report repeats it) must be the flip of the file's
  tensors, float for float, over the certificate's index set. A witness that is not a flip (a rescaling, a rank
  factorisation, an enumerated flip) is re-checked by the identity ``B'(x) = Mx + B(x)`` itself, for σ polynomial
  or of Euler type (:mod:`symabsorb.answer.verify_identity`), whatever result found it.
* **An inline block's answer without a witness is decided again** from the spec, as ``prove`` decides it (as a
  stack's is): another verdict or scope, or an absorbable verdict whose witness was dropped, fails.
* The command's ``--budget`` bounds the whole check (it is never swallowed per query).

Queries verify cannot re-check (symbolic blocks, stacks, verdicts with nothing to check) are
counted; a report with nothing checkable is "nothing to check" (exit code 1 in the CLI).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..budget import BudgetExhausted
from ..dsl.errors import SpecValueError, SymabsorbError
from ..theory.skips import is_stream_skip
from ..weights.certify import Certificate, CertificateError, certificate_from_dict, check_certificate
from .session import Session, in_force

__all__ = ["CheckedQuery", "VerifyOutcome", "verify_report"]

#: Largest report read (bytes).
MAX_REPORT_BYTES = 256 * 2**20
#: Limbs of a separating matrix a certificate may carry (the same bound as the certificate reader).
MAX_LIMBS = 64


@dataclass(frozen=True)
class CheckedQuery:
    query: str
    verdict: str
    ok: bool
    detail: str


class VerifyOutcome(list[CheckedQuery]):
    """The checked queries (a list), how many queries of the report had nothing to re-check, and which
    library re-derived the questions (compared with the one the report names)."""

    unchecked: int = 0
    library: str = ""


def _library_note(data: dict[str, Any]) -> str:
    """Which library re-derives the questions, and whether the report was proved with the same one
    (its ``tool.library.sha256``): a user's lemma the report used must be passed again (``--theorems``)."""
    library = in_force().library
    note = f"questions re-derived with {library.describe()}"
    tool = data.get("tool")
    recorded = tool.get("library") if isinstance(tool, dict) else None
    sha = recorded.get("sha256") if isinstance(recorded, dict) else None
    if not isinstance(sha, str):
        return note + " (the report does not say which library proved it)"
    if sha == library.fingerprint()["sha256"]:
        return note + ", the library the report was proved with"
    user = recorded.get("user_results") if isinstance(recorded, dict) else None
    named = [u for u in user if isinstance(u, str)][:8] if isinstance(user, list) else []
    return (note + "; the report was proved with another library"
            + (f" (its user results: {', '.join(_shown(u) for u in named)}; pass their directory with --theorems)"
               if named else " (another version of symabsorb's results)"))


def _declared(block: Any) -> dict[str, Any]:
    """What the block's own declaration names: file, tensor names (prefix applied), layout."""
    from ..model.activation import GatedActivation

    decl = block.weights
    prefix = decl.prefix or ""
    gated = isinstance(block.activation, GatedActivation)
    return {"file": decl.file, "up": prefix + (decl.up_key or "W_up"), "down": prefix + (decl.down_key or "W_down"),
            "gate": prefix + (decl.gate_key or "W_gate") if gated else None, "transpose": bool(decl.transpose)}


def _bind(cert_weights: Any, block: Any) -> None:
    """The certificate is about the tensors this block declares (found by the adversarial review: a
    genuine certificate of another tensor, prefix or file pasted under a block)."""
    if not isinstance(cert_weights, dict):
        raise CertificateError("the certificate names no weights")
    want = _declared(block)
    for key in ("file", "up", "down", "gate", "transpose"):
        got = cert_weights.get(key)
        if key == "transpose":
            got = bool(got)
        if got != want[key]:
            raise CertificateError(f"the certificate is about {key} `{_shown(got)}`, but the block declares "
                                   f"`{_shown(want[key])}`")
    digest = cert_weights.get("sha256")
    if not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest):
        raise CertificateError("the certificate records no SHA-256 of the weights file")
    _bind_layer(cert_weights, block)


def _bind_layer(cert_weights: dict[str, Any], block: Any) -> None:
    """The layer's extras: the bias and scale tensors, the normalisation and its ε recorded in the
    certificate are the block's own (a report whose spec names another scale tensor, drops it, or
    changes ε or the placement no longer matches the certificate it carries)."""
    decl = block.weights
    prefix = decl.prefix or ""
    declared = {name: prefix + key for name, key in (("up_bias", decl.up_bias_key), ("down_bias", decl.down_bias_key),
                                                     ("gate_bias", decl.gate_bias_key), ("ln_gamma", decl.gamma_key))
                if key is not None}
    if (cert_weights.get("tensors") or {}) != declared:
        raise CertificateError("the certificate's bias and scale tensors are not the ones the block declares")
    if cert_weights.get("norm", "none") != block.norm:
        raise CertificateError(f"the certificate is about a layer with norm `{_shown(cert_weights.get('norm'))}`, "
                               f"but the block declares `{block.norm}`")
    if block.norm != "none" and cert_weights.get("eps") != (None if block.eps is None else str(block.eps)):
        raise CertificateError(f"the certificate records ε = `{_shown(cert_weights.get('eps'))}`, but the block "
                               f"declares `{block.eps}`")


def _shown(value: Any) -> str:
    from ..untrusted import shown

    return shown(str(value))


@contextlib.contextmanager
def _opened_once(block: Any, base: Path, root: Path) -> Iterator[None]:
    """The block's weights file, confined to ``root`` (a Hugging Face snapshot's link into its own
    repository's blobs included), opened once by the name the block gives it; inside, every read of
    that name (tensors, biases, scales, the SHA-256) is served from the bytes read once from it."""
    from ..paths import confine, confine_descriptor, pinned
    from ..weights.io import read_weights_once

    decl = block.weights
    confine(base, decl.file, root, decl.span, "weights file")
    name = base / decl.file  # read by the name (a link keeps its suffix; its target is a blob's hash)
    # the file opened (not the name) must lie in root; its bytes are read once and every read below
    # (tensors, biases, scales, the SHA-256) is served from them: an in-place rewrite changes nothing
    data, _digest = read_weights_once(
        name, decl.span, check=lambda fd: confine_descriptor(fd, root, decl.file, "weights file", decl.span))
    with pinned({name: data}):
        yield


def _load_weights(block: Any, base: Path, root: Path, digest: str) -> Any:
    """The block's weights, read as ``prove`` reads them, from inside ``root`` (within
    :func:`_opened_once`); the file's SHA-256 must be the certificate's."""
    from ..model.activation import GatedActivation
    from ..weights.io import load_block_weights, weights_digest

    decl = block.weights
    loaded = load_block_weights(decl, base, isinstance(block.activation, GatedActivation))
    if (loaded.sha256 or weights_digest(Path(loaded.file))) != digest:
        raise CertificateError(f"`{_shown(decl.file)}` has changed since the report (SHA-256 differs)")
    return loaded


def _check_sizes(raw: Any, d: int, m: int) -> None:
    """Sizes declared in a certificate, against the block's, before anything is decoded."""
    if not isinstance(raw, dict):
        raise CertificateError("malformed certificate: not an object")
    target = raw.get("target")
    if not isinstance(target, dict) or target.get("rows") != d or target.get("cols") != d:
        raise CertificateError(f"the certificate's T is not {d} x {d} (the block's dim)")
    nonzero = target.get("nonzero")
    if not isinstance(nonzero, list) or len(nonzero) > d * d:
        raise CertificateError("the certificate's T lists more entries than it has")
    index_set = raw.get("index_set")
    if not isinstance(index_set, list) or len(index_set) > m:
        raise CertificateError("the certificate's index set is larger than the width")
    y = raw.get("Y")
    parts = (y or {}).get("sum_of", []) if isinstance(y, dict) or y is None else None
    if not isinstance(parts, list) or len(parts) > MAX_LIMBS:
        raise CertificateError("malformed certificate: Y")
    for part in parts:
        if not isinstance(part, dict) or part.get("shape") != [d, d]:
            raise CertificateError(f"a limb of Y is not {d} x {d}")
        data = part.get("data")
        if not isinstance(data, str) or len(data) > 8 * (4 * d * d + 1024):
            raise CertificateError("a limb of Y is larger than a d x d matrix can be")


def _exact(value: Any, what: str) -> Fraction:
    """A number of the report as an exact rational, its size bounded before it is built
    (:func:`symabsorb.untrusted.exact_fraction`): ``"1e999999999"`` fails at once."""
    from ..untrusted import exact_fraction

    try:
        return exact_fraction(value)
    except ValueError as err:
        raise CertificateError(f"{what} `{_shown(value)[:40]}` is not a number verify reads: {err}") from None


def _check_numbers(raw: dict[str, Any]) -> None:
    """Every rational a certificate writes (T's entries, ⟨Y,T⟩ and the sums), bounded before the
    certificate reader builds any of them."""
    for entry in raw["target"]["nonzero"]:
        if not isinstance(entry, list) or len(entry) != 3:
            raise CertificateError("malformed certificate: an entry of T is not [i, k, value]")
        _exact(entry[2], "an entry of the certificate's T")
    for name in ("inner", "positive_sum", "negative_sum"):
        if raw.get(name) is not None:
            _exact(raw[name], f"the certificate's `{name}`")


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


def _declared_dir(block: Any, root: Path) -> Path:
    """Where a block's weights file is named relative to: the directory of the file that declares it, as
    ``prove`` reads it (an imported file's own directory), when that lies in ``root``; else ``root``
    (``--weights-dir``: every file is there)."""
    span = block.weights.span if block.weights is not None else None
    if span is not None and span.file and not span.file.startswith("<"):
        declared = Path(span.file).absolute().parent
        if declared.is_relative_to(root.absolute()):
            return declared
    return root


def _blocks_of(data: dict[str, Any], report: Path) -> dict[str, Any] | None:
    """The blocks of the report's embedded spec, resolved again as a file beside the report (None:
    no spec text). ``spec.path`` only names it: imports are relative to, and confined to, the
    report's own directory tree."""
    from ..model import resolve_text
    from ..model.block import Block

    spec = data.get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("text"), str):
        return None
    recorded = spec.get("path")
    name = Path(recorded).name if isinstance(recorded, str) and Path(recorded).name else report.name
    resolved = resolve_text(spec["text"], str(report.absolute().parent / name))
    return {f"absorb {b.name}": b for b in resolved.blocks if isinstance(b, Block)}


def _library_result(result_id: str | None) -> Any:
    return in_force().library.results.get(result_id) if result_id else None


def _question(block: Any, m: int, d_in: int, cert: Certificate, verdict: str,
              extras: dict[str, Any] | None = None) -> tuple[str | None, Any]:
    """Re-derive from the spec what the certificate must answer: the deciding result and
    ``T = −M/(2c)``; the library's data for that result decides which verdicts a certificate may
    back. ``extras``: the layer's biases and scales read from the file now (the question is the
    layer's as ``prove`` asked it: biased or not, every scale ``γ_k ≠ 0`` checked exactly again).
    Returns (a problem, or None; the re-derived derivation)."""
    from ..theory.derivation import Verdict
    from ..weights.filedecide import _target
    from ..weights.layers import block_fields

    n = block.skip.matrix.rows if is_stream_skip(block.skip) and block.skip.matrix is not None else 1
    concrete = replace(block, dim=d_in // n if n > 1 else d_in, width=m,
                       **(block_fields(extras) if extras is not None else {}))
    derivation = in_force().prove(concrete)
    result = _library_result(derivation.decided_by)
    decided = derivation.decided_by or "no result"
    # a post-LN layer's certificate speaks of P·W_S (Lemma PN); any other block's of W_S itself
    if cert.projector != ("centering" if block.norm == "post-ln" else None):
        return "the certificate's reduction (projector) is not the one the block's normalisation gives", derivation
    if cert.kind == "nondegenerate":
        if (derivation.verdict is not Verdict.IMPOSSIBLE or "nondegenerate" not in str(derivation.scope)
                or result is None or result.conclusion.verdict != "impossible"):
            return ("a nondegeneracy certificate backs a verdict only for results proved for all nondegenerate "
                    f"weights; for this block the library's answer is {derivation.verdict.value} ({decided})"), derivation
        return None, derivation
    conclusion = result.conclusion if result is not None else None
    proc = in_force().library.procedure(result)
    if conclusion is None or proc is None or not proc.index_set or derivation.condition_constant is None:
        return f"the block's question is not an index-set condition (decided by {decided})", derivation
    if verdict == "absorbable" and conclusion.sufficient != "proved":
        return f"`{decided}` does not prove that its condition suffices", derivation
    if verdict == "not-absorbable":
        if conclusion.necessary != "proved":
            return (f"`{decided}` does not prove that its condition is necessary (necessity: "
                    f"{conclusion.necessary or 'not stated'}), so no index set is not a proof of not-absorbable"), derivation
        if conclusion.scope == "nondegenerate weights" and not (cert.nondegenerate or {}).get("holds"):
            return f"`{decided}` proves necessity only for nondegenerate weights", derivation
    target = _target(concrete, derivation.condition_constant)
    if target is None or target != cert.target:
        return "the certificate's target T is not −M/(2c) of the block in the report's spec", derivation
    return None, derivation


def _norm(target: Any) -> float:
    """‖T‖_F rounded up (every index-set distance is at most this: S = ∅)."""
    import math

    total = sum((v * v for _, _, v in target.entries), Fraction(0))
    return math.nextafter(math.sqrt(float(total)), math.inf)


def verify_report(report: Path, session: Session, weights_dir: Path | None = None, blas: bool = False) -> VerifyOutcome:
    """Every certificate and witness in ``report`` re-checked, every question re-derived with
    ``session``'s library; raises SpecValueError on an unreadable report.

    Unless ``blas``, the exact products run in int64 without floating point (:func:`.exact.integer_only`):
    the check then shares no arithmetic with the float64-BLAS path that made the certificate."""
    import contextlib

    from ..weights.exact import integer_only

    with session.installed(), contextlib.nullcontext() if blas else integer_only():
        return _verify(report, weights_dir)


def _read_report(report: Path) -> dict[str, Any]:
    from ..paths import read_input

    raw = read_input(report, None, "report", max_bytes=MAX_REPORT_BYTES, expected="a JSON report of symabsorb prove",
                     hint="a report path is relative to the working directory; `symabsorb prove SPEC -o REPORT.json` "
                          "writes one")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:  # ValueError: also an integer of > 4300 digits
        raise SpecValueError(f"`{report}` is not a JSON report: {type(err).__name__}", None, "not JSON",
                             "the output of `symabsorb prove --format json`") from None
    if not isinstance(data, dict) or not isinstance(data.get("queries"), list):
        raise SpecValueError(f"`{report}` is not a symabsorb report", None, "no `queries` list",
                             "the output of `symabsorb prove --format json`")
    return data


def _verify(report: Path, weights_dir: Path | None) -> VerifyOutcome:
    data = _read_report(report)
    root = (weights_dir if weights_dir is not None else report.absolute().parent).resolve()
    # the embedded spec is resolved as a file beside the report, or, with --weights-dir, in that directory
    # (its weights files are named relative to it: the weights are there)
    anchor = weights_dir / report.name if weights_dir is not None else report
    try:
        blocks = _blocks_of(data, anchor)
    except BudgetExhausted:
        raise
    except SymabsorbError as err:
        raise SpecValueError(f"the spec embedded in `{report}` does not resolve: {str(err).splitlines()[0]}", None,
                             "a spec that does not resolve", "verify re-derives each question from the spec",
                             "positions are in the report's embedded spec (`spec.text`), resolved as if it were a "
                             "file beside the report (no such file is needed); for weights files in another directory, pass "
                             "--weights-dir DIR (the spec is then resolved there); for weights files outside the report's "
                             "directory, write the report in (or above) their directory, or pass --allow-outside") from None
    if blocks is None:
        raise SpecValueError(f"`{report}` embeds no spec text", None, "no `spec.text`",
                             "the output of `symabsorb prove --format json`, which embeds its spec")
    out = VerifyOutcome()
    out.library = _library_note(data)
    for q in data["queries"]:
        if not isinstance(q, dict) or not isinstance(q.get("derivation"), dict):
            out.unchecked += 1
            continue
        d = q["derivation"]
        name = _shown(q.get("query", "?"))
        verdict = _shown(d.get("verdict", "?"))
        block = blocks.get(str(q.get("query")))
        try:
            if block is not None and block.weights is not None:
                checked = _check_file_query(d, block, verdict, root)
            elif block is not None and block.w_up is not None:
                checked = _check_inline_query(d, block, verdict)
            elif block is None:  # a stack: Theorem FD certificates, Theorem 1D / FA witnesses (MATH Part III)
                from .verify_stack import check_stack_query

                checked = check_stack_query(data, q, anchor)
            else:
                checked = None
            if checked is None:
                out.unchecked += 1
            else:
                out.append(CheckedQuery(name, verdict, True, checked))
        except BudgetExhausted:
            raise  # the command's budget ends the command (never swallowed per query)
        except CertificateError as err:
            out.append(CheckedQuery(name, verdict, False, _shown(err)))
        except SymabsorbError as err:
            out.append(CheckedQuery(name, verdict, False, _shown(str(err).splitlines()[0] if str(err)
                                                                  else type(err).__name__)))
    return out


def _for_all_weights(block: Any, verdict: str) -> str | None:
    """The claimed verdict re-derived for arbitrary weights of the block's sizes (its question unchanged: biases,
    normalisation): when the library proves it for all weights, the weights need no certificate (the trivial
    answers: no skip, a zero skip). None otherwise."""
    from ..theory.derivation import Scope

    derivation = in_force().prove(replace(block, weights=None, w_up=None, w_down=None, w_gate=None))
    if derivation.verdict.value == verdict and str(derivation.scope) == str(Scope.ALL):
        return (f"re-derived for arbitrary weights: {verdict} by {derivation.decided_by or 'no result'} "
                f"({derivation.scope}), so these weights need no certificate")
    return None


def _check_file_query(d: dict[str, Any], block: Any, verdict: str, root: Path) -> str | None:
    raw_cert = d.get("certificate")
    if raw_cert is None:
        if verdict in ("absorbable", "not-absorbable"):
            holds = _for_all_weights(block, verdict)
            if holds is not None:
                return holds
            raise CertificateError("a verdict on file weights without its certificate")
        return None
    if not isinstance(raw_cert, dict):
        raise CertificateError("malformed certificate: not an object")
    if raw_cert.get("kind") == "theorem-D":  # degenerate weights (Theorem D): re-derived from the file
        from .verify_degenerate import check_file_degenerate

        return check_file_degenerate(d, raw_cert, block, verdict, root)
    _bind(raw_cert.get("weights"), block)
    with _opened_once(block, _declared_dir(block, root), root):
        return _check_opened(d, raw_cert, block, verdict, root)


def _check_opened(d: dict[str, Any], raw_cert: dict[str, Any], block: Any, verdict: str, root: Path) -> str:
    loaded = _load_weights(block, _declared_dir(block, root), root, raw_cert["weights"]["sha256"])
    up, down = loaded.w_up, loaded.w_down
    m, d_in = int(up.shape[0]), int(up.shape[1])
    _check_sizes(raw_cert, d_in, m)
    _check_numbers(raw_cert)
    cert = certificate_from_dict(raw_cert)
    problem = _consistent(verdict, cert)
    if problem:
        raise CertificateError(problem)
    from ..weights.layers import load_layer_extras

    extras = load_layer_extras(replace(block, weights=replace(block.weights, file=Path(loaded.file).name)), (m, d_in),
                               Path(loaded.file).parent)
    problem, _derivation = _question(block, m, d_in, cert, verdict, extras)
    if problem:
        raise CertificateError(problem)
    if cert.kind != "nondegenerate" and cert.distance > _norm(cert.target):
        raise CertificateError(f"the claimed distance {cert.distance} exceeds ‖T‖_F (S = ∅ is that close)")
    detail = check_certificate(cert, up, down)
    witness = d.get("witness")
    if isinstance(witness, dict):
        detail += "; " + _check_file_witness(witness, cert, loaded, block)
    elif verdict == "absorbable" and witness is not None:
        raise CertificateError("malformed witness")
    about = "" if cert.kind == "nondegenerate" else cert.describe_target() + ": "
    return about + detail


def _matrix_of(rows: Any, shape: tuple[int, int], what: str) -> list[list[str]]:
    if not (isinstance(rows, list) and len(rows) == shape[0]
            and all(isinstance(r, list) and len(r) == shape[1] and all(isinstance(x, str) and len(x) <= 4000 for x in r)
                    for r in rows)):
        raise CertificateError(f"the witness's {what} is not a {shape[0]} x {shape[1]} matrix")
    return rows


def _check_file_witness_biases(witness: dict[str, Any], cert: Certificate, loaded: Any, block: Any) -> None:
    """A biased layer's witness biases: the file's hidden biases negated on S, the output bias
    b_down + 2c W_down[:,S] b_S (computed exactly from the file, rounded once to float64)."""
    from fractions import Fraction

    from ..weights.layers import float_biases_of_flip, load_layer_extras

    if block.weights is None or loaded.w_gate is not None:
        raise CertificateError("the witness has biases the block does not")
    base = Path(loaded.file).parent
    extras = load_layer_extras(replace(block, weights=replace(block.weights, file=Path(loaded.file).name)),
                               tuple(loaded.w_up.shape), base)
    m, d_in = loaded.w_up.shape
    derivation = in_force().prove(replace(block, dim=d_in, width=m))
    c = derivation.condition_constant
    if c is None or not getattr(c, "is_Rational", False):
        raise CertificateError("the block's condition constant is not rational")
    up, down, _ = float_biases_of_flip(loaded.w_down, extras["b_up"], extras["b_down"], tuple(cert.index_set),
                                       Fraction(int(c.p), int(c.q)))
    for what, want, have in (("b_up", up, extras["b_up"]), ("b_down", down, True)):
        got = witness.get(what)
        if have is None:
            if got is not None:
                raise CertificateError(f"the witness has a {what} the block does not")
            continue
        try:
            same = isinstance(got, list) and len(got) == len(want) and all(
                float(x) == float(v) for x, v in zip(got, want, strict=True))
        except (ValueError, TypeError):
            same = False
        if not same:
            raise CertificateError(f"the witness's {what} is not that of the biased flip of the file's layer over S")


def _check_file_witness(witness: dict[str, Any], cert: Certificate, loaded: Any, block: Any) -> str:
    """The report's witness is the flip of the file's tensors over the certificate's index set."""
    import numpy as np

    s = witness.get("index_set")
    if not isinstance(s, list) or [int(j) for j in s if isinstance(j, int)] != list(cert.index_set) or \
            not all(isinstance(j, int) for j in s):
        raise CertificateError("the witness's index set is not the certificate's")
    if any(witness.get(k) is not None for k in ("b_up", "b_down", "b_gate")):
        _check_file_witness_biases(witness, cert, loaded, block)
    if witness.get("W_up") is None and witness.get("W_down") is None:
        return "witness: the flip over S (not repeated in the report)"
    up, down = np.array(loaded.w_up), np.array(loaded.w_down)
    gate = None if loaded.w_gate is None else np.array(loaded.w_gate)
    for j in cert.index_set:
        if gate is not None:
            gate[j, :] = -gate[j, :]
            down[:, j] = -down[:, j]
        else:
            up[j, :] = -up[j, :]
    for what, want in (("W_up", up), ("W_down", down), ("W_gate", gate)):
        got = witness.get(what)
        if want is None:
            if got is not None:
                raise CertificateError(f"the witness has a {what} the block does not")
            continue
        rows = _matrix_of(got, (int(want.shape[0]), int(want.shape[1])), what)
        try:
            same = all(float(x) == float(w) for row, wrow in zip(rows, want.tolist(), strict=True)
                       for x, w in zip(row, wrow, strict=True))
        except ValueError:
            same = False
        if not same:
            raise CertificateError(f"the witness's {what} is not the flip of the file's weights over S")
    return "witness: exactly the flip of the file's weights over S"


def _rederived(d: dict[str, Any], block: Any, verdict: str) -> str | None:
    """An inline block's verdict with no witness (not-absorbable by an exact rank, a verdict for all weights, or a
    report that dropped its witness) decided again from the spec as ``prove`` decides it: a different verdict or
    scope FAILS; the same decided verdict is re-derived exactly; an undecided one (open, conditional) is not
    re-checkable."""
    again = in_force().with_(base_dir=None).decide(block, str(d.get("query") or f"absorb {block.name}"))
    if again.verdict.value != verdict or str(again.scope) != str(d.get("scope")):
        raise CertificateError(f"re-derived from the spec: {again.verdict.value} ({again.scope}) by "
                               f"{again.decided_by or 'no result'}, not {verdict} ({d.get('scope')})")
    if verdict == "absorbable" and again.witness is not None:
        raise CertificateError("the verdict absorbable needs its witness (the re-derivation gives one); the report "
                               "has none")
    if verdict not in ("absorbable", "not-absorbable", "impossible"):
        return None
    return f"re-derived exactly from the spec: {verdict} ({again.scope}) by {again.decided_by or 'no result'}"


def _check_inline_query(d: dict[str, Any], block: Any, verdict: str) -> str | None:
    """An inline block's witness, re-checked in exact rationals: the flip of the spec's weights over
    its index set, and ``W_down[:,S] W_up[S,:] = T`` with ``T = −M/(2c)`` re-derived from the spec."""
    from .verify_degenerate import check_pair_witness, is_theorem_d_witness

    rid = d.get("decided_by")
    proc = in_force().library.procedure(rid) if isinstance(rid, str) else None
    if proc is not None and not proc.stack and proc.verifier is not None:
        # the procedure's own verifier (Theorem D: its witness and certificate, re-derived from the spec)
        return proc.verifier(d, block, verdict)  # type: ignore[no-any-return]
    if is_theorem_d_witness(d):  # e.g. Cor. D-sandwich's absorbable: Theorem D's construction, not a flip (F5)
        return check_pair_witness(d, block, verdict)
    witness = d.get("witness")
    if verdict != "absorbable" or not isinstance(witness, dict) or witness.get("W_up") is None:
        return _rederived(d, block, verdict)  # no witness to re-check: the verdict re-derived from the spec
    import sympy as sp

    from ..theory.skips import skip_matrix
    from ..weights.witness import flip_witness

    centred = block.question.norm == "post-ln"  # LN compares outputs after the centring P (Lemma PN)
    if block.norm != "none":  # a post-norm block's question is its reduced block's (Lemma PN, post-RMSNorm)
        from ..theory.layers import reduced_block

        reduced = reduced_block(block)
        if isinstance(reduced, str):
            raise CertificateError(f"the block's question does not reduce: {reduced}")
        block = reduced
    w_up, w_down = sp.Matrix(block.w_up), sp.Matrix(block.w_down)
    m, d_in = w_up.shape
    derivation = in_force().prove(block)
    result = _library_result(derivation.decided_by)
    conclusion = result.conclusion if result is not None else None
    proc = in_force().library.procedure(result)
    if conclusion is None or proc is None or not proc.index_set or conclusion.sufficient != "proved" \
            or derivation.condition_constant is None:
        # not a flip of an index-set condition (a rescaling, a rank factorisation, an enumerated flip): the witness
        # is re-checked by the identity B'(x) = Mx + B(x) it claims, whatever result found it
        from .verify_identity import check_identity_witness

        # (a gated or biased block, σ neither polynomial nor of Euler type: not re-checkable, and not claimed)
        return check_identity_witness(block, witness, centred)
    s = witness.get("index_set")  # a flip: its index set, checked before anything uses it
    if not isinstance(s, list) or not all(isinstance(j, int) and not isinstance(j, bool) and 0 <= j < m for j in s) \
            or len(set(s)) != len(s):
        raise CertificateError("the witness's index set is not a set of units of the block")
    skip = skip_matrix(block)
    if skip is None:
        raise CertificateError("the block has no skip to absorb")
    target = -sp.Matrix(skip) / (2 * derivation.condition_constant)
    product = w_down[:, list(s)] * w_up[list(s), :] if s else sp.zeros(d_in, d_in)
    if product.shape != target.shape or any(sp.expand(x) != 0 for x in product - target):
        raise CertificateError("W_down[:,S] W_up[S,:] ≠ −M/(2c) for the witness's S (exact)")
    flipped = flip_witness(block, tuple(s))
    for what, want in zip(("W_up", "W_down", "W_gate"), flipped, strict=True):
        got = witness.get(what)
        if want is None:
            if got is not None:
                raise CertificateError(f"the witness has a {what} the block does not")
            continue
        rows = _matrix_of(got, (int(want.rows), int(want.cols)), what)
        try:
            same = all(_exact(x, f"an entry of the witness's {what}") == Fraction(int(sp.Rational(w).p),
                                                                                    int(sp.Rational(w).q))
                       for i, row in enumerate(rows) for x, w in zip(row, want.row(i), strict=True))
        except (ValueError, ZeroDivisionError, TypeError):
            same = False
        if not same:
            raise CertificateError(f"the witness's {what} is not the flip of the spec's weights over S")
    biased = any(v is not None for v in (block.b_up, block.b_down, block.b_gate))
    if biased or any(witness.get(k) is not None for k in ("b_up", "b_down", "b_gate")):
        from ..weights.layers import biased_flip

        if block.gated or not biased:
            raise CertificateError("the witness's biases are not those of the flip of the spec's block")
        _, _, b_up, b_down = biased_flip(block, tuple(s), derivation.condition_constant)
        for what, want in (("b_up", b_up), ("b_down", b_down)):
            got = witness.get(what)
            try:
                same = isinstance(got, list) and len(got) == want.rows and all(
                    _exact(x if isinstance(x, int | str) else str(x), f"an entry of the witness's {what}")
                    == Fraction(int(sp.Rational(v).p), int(sp.Rational(v).q))
                    for x, v in zip(got, want, strict=True))
            except (ValueError, ZeroDivisionError, TypeError):
                same = False
            if not same:
                raise CertificateError(f"the witness's {what} is not b_S negated / b_down + 2c W_down[:,S] b_S (exact)")
    return f"witness: W_down[:,S] W_up[S,:] = −M/(2c) exactly for S of size {len(s)}, and the witness is its flip"
