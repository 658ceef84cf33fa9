"""Blocks whose weights come from a file (float weights, possibly a trained model's layer)."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..analysis.numeric import evaluate_array
from ..errors import InternalError
from ..model.activation import GatedActivation
from ..model.block import Block
from ..theory.derivation import Derivation, DerivationStep, Verdict, Witness
from ..theory.library import Library
from ..theory.skips import dim_name, is_stream_skip, skip_entries, skip_matrix
from .certify import Certificate, Target, decide_exactly, exact_nondegeneracy
from .floatsearch import FloatSearch, Nondegeneracy, float_nondegeneracy
from .io import LoadedWeights, load_block_weights, weights_digest
from .search import floor_text

__all__ = ["FileBlock", "FileDecision", "FileState", "WitnessCheckError", "file_prelude", "float_max_relative_error",
           "index_set_file", "inline_only", "load_file_block"]

#: A witness whose float64 check exceeds this is a bug (the condition was checked exactly).
WITNESS_TOLERANCE = 1e-6


class WitnessCheckError(InternalError):
    """A witness built from an exactly checked condition failed its numeric check: an internal error
    (exit code 3), never a verdict."""


@dataclass(frozen=True)
class FileDecision:
    derivation: Derivation
    weights: LoadedWeights
    nondegeneracy: Nondegeneracy
    search: FloatSearch | None  # released (FloatSearch.released): the summary, not the m x m factor
    certificate: Certificate | None = None


def float_max_relative_error(block: Block, w: LoadedWeights, witness: Witness, points: int = 1000,
                             seed: int = 0, skip: Any = None) -> float:
    """max over ``points`` random x of ‖B'(x) − R(x)‖ relative to the size of the computation, in float64.

    The points are scaled so that no pre-activation exceeds ~1 in size (the identity must hold for
    every x, and huge weights would otherwise overflow the activation), and the error is divided by
    max(‖R(x)‖, ‖|M||x|‖ + ‖|W_down| |hidden|‖, 1): rounding in a sum of large cancelling terms is
    not mistaken for a failing witness.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    d = w.w_up.shape[1]
    if skip is None:  # M as a float matrix (callers that know T = -M/(2c) pass it: no d x d SymPy matrix)
        exact_skip = skip_matrix(replace(block, dim=d // (block.skip.n or 1) if is_stream_skip(block.skip) else d))
        assert exact_skip is not None
        skip = np.array([[float(x) for x in row] for row in exact_skip.tolist()], dtype=np.float64)
    m_skip: Any = np.asarray(skip, dtype=np.float64)
    act = block.activation
    expr = act.gate.expr if isinstance(act, GatedActivation) else act.expr
    biggest = 1.0  # the largest row norm of W_up (and W_gate), computed without overflow
    for mat in (w.w_up, w.w_gate):
        if mat is not None and mat.size:
            top = np.abs(mat).max(axis=1)
            safe = np.where(top > 0, top, 1.0)
            norms = top * np.sqrt(np.einsum("ij,ij->i", mat / safe[:, None], mat / safe[:, None]))
            biggest = max(biggest, float(norms.max()))
    xs = rng.standard_normal((points, d)) / biggest  # pre-activations of size ~1 at most

    def out(up: Any, down: Any, gate: Any) -> tuple[Any, Any]:
        pre = xs @ up.T
        hidden = evaluate_array(expr, xs @ gate.T) * pre if isinstance(act, GatedActivation) else \
            evaluate_array(expr, pre)
        return hidden @ down.T, np.abs(hidden) @ np.abs(down).T

    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        linear = xs @ m_skip.T
        r_out, r_size = out(w.w_up, w.w_down, w.w_gate)
        r = linear + r_out
        b, b_size = out(np.asarray(witness.w_up), np.asarray(witness.w_down),
                        None if witness.w_gate is None else np.asarray(witness.w_gate))
        size = np.maximum.reduce([_row_norms(r), _row_norms(np.abs(xs) @ np.abs(m_skip).T) + _row_norms(r_size),
                                  _row_norms(b_size)])
        gap = _row_norms(b - r)
        err = np.where(size > 0, gap / np.where(size > 0, size, 1.0), np.where(gap > 0, np.inf, 0.0))
    return float(err.max())  # NaN (an evaluation failed) propagates: callers treat it as a failed check


def _row_norms(x: Any) -> Any:
    """Euclidean norms of the rows, without underflow or overflow (entries may be ~1e-300 or ~1e300)."""
    import numpy as np

    top = np.abs(x).max(axis=1)
    safe = np.where(top > 0, top, 1.0)
    scaled = x / safe[:, None]
    return np.where(top > 0, top * np.sqrt(np.einsum("ij,ij->i", scaled, scaled)), 0.0)


def _target(block: Block, c: Any) -> Target | None:
    """``T = −M/(2c)`` as exact rationals, built from the skip without a dense SymPy matrix (None: not rational)."""
    import sympy as sp

    assert isinstance(block.dim, int)
    known = skip_entries(block)
    if known is None:
        return None
    entries, dim = known
    scale = -sp.Integer(1) / (2 * c)
    out = []
    for (i, k), v in sorted(entries.items()):
        t = v * scale
        if not t.is_Rational:
            t = sp.simplify(t)
        if not t.is_Rational:
            return None
        if t != 0:
            out.append((i, k, Fraction(int(t.p), int(t.q))))
    return Target(dim, tuple(out))


def _check_declared_sizes(block: Block, w: LoadedWeights, d: int, m: int) -> None:
    """A declared ``dim:``/``width:`` must be the file's; ``up``/``down`` given the wrong way round
    (``W_up`` narrower than it is long) is an error unless ``dim:`` confirms a narrowing block."""
    from ..dsl.errors import SpecShapeError

    assert block.weights is not None
    span, up = block.weights.span, w.keys[0]
    if block.weights.transpose:
        swapped = (f"`{w.keys[0]}` is {m} x {d} and `{w.keys[1]}` {d} x {m}: up and down look swapped (W_up is "
                   "width x dim, one row per hidden unit; PyTorch's nn.Linear.weight is already so): exchange `up:` "
                   "and `down:`, or drop `transpose: true` (it is for in x out layouts)")
    else:  # both tensors the other way round: an in x out file (GPT-2's Conv1D) first, not a swap that fits
        conv1d = any(key and re.search(r"(^|\.)c_(fc|proj)(\.|$)", key) for key in w.keys[:2])
        swapped = (f"`{w.keys[0]}` is {m} x {d} and `{w.keys[1]}` {d} x {m}: the file looks stored in x out"
                   + (" (GPT-2's Conv1D `c_fc`/`c_proj` are)" if conv1d else "") + ": add `transpose: true`"
                   + ("" if conv1d else "; or, if `up:` and `down:` name each other's tensor (W_up is width x dim, "
                      "like nn.Linear.weight), exchange them"))
    for what, declared, actual in (("dim", block.dim, d), ("width", block.width, m)):
        if isinstance(declared, int) and declared != actual:
            other = m if what == "dim" else d
            raise SpecShapeError(f"`{what}: {declared}` does not match the weights file, whose {what} is {actual}",
                                 span, f"`{up}`: {m} x {d} (width x dim)", f"{what} {declared}",
                                 swapped if declared == other else f"remove `{what}:` to take it from the file")
    if not isinstance(block.dim, int) and not isinstance(block.width, int) and m < d:
        raise SpecShapeError(f"`{up}` has fewer rows ({m} hidden units) than columns ({d} dimensions)", span,
                             f"{m} x {d}", "W_up as width x dim with width >= dim",
                             swapped + f"; for a block that really narrows, declare `dim: {d}`")


@dataclass(frozen=True)
class FileBlock:
    """A block whose weights file was read and checked: ``block`` as the spec states it, the loaded
    weights, the layer's extra tensors (biases, scales), and ``concrete``: the block with the file's
    sizes and biases, the one the prover proves (once)."""

    block: Block
    weights: LoadedWeights
    extras: dict[str, Any]
    concrete: Block

    @property
    def projector(self) -> str | None:
        """A post-LN layer asks P(W_S - T) = 0 (Lemma PN): every exact check then works on the centred condition."""
        return "centering" if self.concrete.norm == "post-ln" else None


def load_file_block(block: Block, base_dir: Path) -> FileBlock:
    """Read and check the weights file of ``block`` (its shapes, declared sizes, extra tensors): what
    the answer layer needs before proving the block with the file's dimensions."""
    assert block.weights is not None
    from .io import pinned_weights, read_weights_once

    path = base_dir / block.weights.file
    data, digest = read_weights_once(path, block.weights.span)  # one read: the weights, the extras and the hash
    with pinned_weights(path, data, digest):
        return _load_file_block(block, base_dir)


def _load_file_block(block: Block, base_dir: Path) -> FileBlock:
    assert block.weights is not None
    w = load_block_weights(block.weights, base_dir, block.gated)
    m, d = w.w_up.shape
    if is_stream_skip(block.skip):
        assert block.skip.n is not None
        if d % block.skip.n:
            from ..dsl.errors import SpecValueError

            raise SpecValueError(f"W_up has {d} columns, not a multiple of n = {block.skip.n} streams",
                                 block.weights.span, str(d), f"a multiple of {block.skip.n}")
        d_block = d // block.skip.n
    else:
        d_block = d
    _check_declared_sizes(block, w, d_block, m)
    from .layers import block_fields, load_layer_extras

    extras = load_layer_extras(block, (m, d), base_dir)
    return FileBlock(block, w, extras, replace(block, dim=d_block, width=m, **block_fields(extras)))


@dataclass
class FileState:
    """A file block's derivation after the steps every procedure shares (the weights described,
    nondegeneracy checked exactly where the result needs it): ``done`` when that already decided."""

    derivation: Derivation
    steps: list[DerivationStep]
    nondeg: Nondegeneracy
    exact_nd: dict[str, Any] | None
    done: FileDecision | None = None


def file_prelude(derivation: Derivation, fb: FileBlock, library: Library) -> FileState:
    """The steps of a file block's decision that do not depend on its result's procedure, on the one
    derivation of ``fb.concrete``: the weights read, exact nondegeneracy where the result needs it
    (an "impossible (nondegenerate weights)" verdict becomes "not absorbable" with its certificate),
    the biases named. ``done`` is set unless the derivation is still a condition to decide."""
    block, w, extras, concrete, projector = fb.block, fb.weights, fb.extras, fb.concrete, fb.projector
    assert block.weights is not None
    d = int(w.w_up.shape[1])
    m = int(w.w_up.shape[0])
    nondeg = float_nondegeneracy(w.w_up, w.w_down)
    steps = list(derivation.steps)
    steps.insert(1, DerivationStep(f"Weights from `{Path(w.file).name}` (tensors `{w.keys[0]}`, `{w.keys[1]}`"
                                   + (f", `{w.keys[2]}`" if w.keys[2] else "") + f"; dtype {w.dtype}): "
                                   f"${dim_name(block)} = {d}$, $m = {m}$; all entries finite. Every entry is an "
                                   "exact rational "
                                   "(a dyadic number), and the weights are decided as such.", kind="setting"))
    notes = list(derivation.notes)
    assumptions = list(derivation.assumptions)
    necessary = derivation.necessary
    rid0 = derivation.decided_by or ""
    result = library.results.get(rid0)
    needs_nondeg = (result is not None and result.nondegeneracy is not None) \
        or str(derivation.scope) == "nondegenerate weights" \
        or any(a.startswith("nondegenerate") for a in derivation.assumptions)
    exact_nd: dict[str, Any] | None = None
    nd_certificate: Certificate | None = None
    verdict, scope = derivation.verdict, derivation.scope
    if needs_nondeg and verdict in (Verdict.CONDITIONAL, Verdict.IMPOSSIBLE):
        exact_nd = exact_nondegeneracy(w.w_up, w.w_down, projector)
        if block.gated and w.w_gate is not None:
            # gated nondegeneracy (Theorem G): the gate rows are the ones that must be non-collinear
            on_gate = exact_nondegeneracy(w.w_gate, w.w_down, projector)
            zero_up = [i for i, row in enumerate(w.w_up) if not (row != 0).any()]
            if on_gate["holds"] and zero_up:
                exact_nd = {"holds": False, "reason": f"row {zero_up[0]} of W_up is zero (exact)", "pair": None}
            else:
                exact_nd = {**on_gate, "reason": on_gate["reason"].replace("W_up", "W_gate") + (
                    "; rows of W_up nonzero" if on_gate["holds"] else "")}
        if exact_nd["holds"]:
            assumptions = [a for a in assumptions if not a.startswith("nondegenerate")]
            checked = DerivationStep(f"Hypothesis of [{rid0}]: the block is nondegenerate — checked exactly on these "
                                     f"weights: {exact_nd['reason']}.", (rid0,), kind="hypothesis")
            # the check replaces the hypothesis the generic derivation could only assume
            assumed = [i for i, st in enumerate(steps) if st.kind == "hypothesis" and "nondegenerate" in st.text
                       and "assumed" in st.text]
            if assumed:
                steps[assumed[0]] = replace(checked, evidence=steps[assumed[0]].evidence)
            else:
                steps.insert(2, checked)
            if verdict is Verdict.IMPOSSIBLE:
                steps.append(DerivationStep(f"These weights are nondegenerate (checked exactly), so by [{rid0}] they "
                                            "are not absorbable.", (rid0,), kind="conclusion"))
                verdict, scope = Verdict.NOT_ABSORBABLE, "these weights"
                nd_certificate = Certificate("nondegenerate", Target(d, ()), method="exact: primitive integer rows",
                                             proof=exact_nd["reason"], weights=_weights_info(block, w, extras),
                                             nondegenerate=exact_nd, projector=projector)
        elif verdict is Verdict.CONDITIONAL:
            necessary = "open"  # degenerate weights: a ±w pair absorbs a linear term with no index set
            notes.append(f"outside the necessity part of [{rid0}]: {exact_nd['reason']}; only the sufficient "
                         "direction applies")
        else:
            why = (f"[{rid0}] is proved for nondegenerate weights only, and these are degenerate: "
                   f"{exact_nd['reason']}")
            steps.append(DerivationStep(f"So the question stays open for these weights: {why}.", (rid0,),
                                        kind="conclusion"))
            notes.append(why)
            verdict, scope = Verdict.OPEN, "these weights"
    unnamed = [b for b in w.biases if b not in extras["names"].values()]
    if unnamed:
        notes.append("the file also holds biases this block does not name (" + ", ".join(unnamed) + "): the "
                     "question answered is the one the block states (" + concrete.question.describe() + "); name them "
                     "with `up_bias:` / `down_bias:` to ask about the layer as the model uses it")
    if extras["names"]:
        steps.insert(2, DerivationStep("Biases and scales read from the file: " + ", ".join(
            f"`{field}: {key}`" for field, key in sorted(extras["names"].items())) + " (checked: vectors of the right "
            "length, finite).", kind="setting"))
    derivation = replace(derivation, steps=tuple(steps), notes=tuple(notes), assumptions=tuple(assumptions),
                         necessary=necessary, verdict=verdict, scope=scope)
    c = derivation.condition_constant
    state = FileState(derivation, steps, nondeg, exact_nd)
    if nd_certificate is not None:
        state.done = FileDecision(_with_certificate(derivation, nd_certificate), w, nondeg, None, nd_certificate)
    elif derivation.verdict is not Verdict.CONDITIONAL or c is None:
        state.done = FileDecision(derivation, w, nondeg, None)
    return state


def inline_only(state: FileState, fb: FileBlock) -> FileDecision:
    """File weights under a procedure that exists for inline exact weights only: the question stays open."""
    derivation, steps = state.derivation, state.steps
    rid = derivation.decided_by or ""
    why = (f"the condition of [{rid}] is not the plain index-set condition; symabsorb decides it for inline "
           "exact weights only")
    steps.append(DerivationStep(f"So the question stays open for these weights: {why}.", (rid,), kind="conclusion"))
    return FileDecision(replace(derivation, verdict=Verdict.OPEN, scope="these weights", steps=tuple(steps),
                                notes=(*derivation.notes, why)), fb.weights, state.nondeg, None)


def index_set_file(state: FileState, fb: FileBlock) -> FileDecision:
    """The ``index-set`` procedure on file weights: the condition ``W_down[:,S] W_up[S,:] = T`` decided
    exactly on the rationals the floats are (:mod:`.certify`); "absorbable" needs an exactly checked
    index set and a witness that passes its numeric check, "not absorbable" an exactly checked
    separating certificate and, where the result needs it, nondegeneracy checked exactly."""
    block, w, extras, concrete, projector = fb.block, fb.weights, fb.extras, fb.concrete, fb.projector
    assert block.weights is not None
    derivation, steps, nondeg, exact_nd = state.derivation, state.steps, state.nondeg, state.exact_nd
    necessary = derivation.necessary
    c = derivation.condition_constant
    assert c is not None  # file_prelude decided every derivation without a condition constant
    rid = derivation.decided_by or ""
    target = _target(concrete, c)
    if target is None:
        why = "the target T = -M/(2c) is not rational, so it cannot be compared exactly with the (rational) weights"
        steps.append(DerivationStep(f"So the question stays open for these weights: {why}.", (rid,), kind="conclusion"))
        return FileDecision(replace(derivation, verdict=Verdict.OPEN, scope="these weights", steps=tuple(steps),
                                    notes=(*derivation.notes, why)), w, nondeg, None)
    decision = decide_exactly(w.w_up, w.w_down, target, projector)
    cert = decision.certificate
    if cert is not None:
        cert = replace(cert, weights=_weights_info(block, w, extras), nondegenerate=exact_nd if decision.found is False
                       else None)
    search = decision.search.released() if decision.search is not None else None  # the m x m factor is done with
    distance_text = ""
    if cert is not None and not cert.found:
        distance_text = (" Certified distance in criterion space (not a distance in weight space): "
                         f"$\\min_S \\|W_{{\\mathrm{{down}}}}[:,S]W_{{\\mathrm{{up}}}}[S,:] - T\\|_F "
                         f"\\ge {floor_text(cert.distance)}$ (a true lower bound, from the certificate).")
    elif search is not None and decision.found is None:
        distance_text = f" Float least-squares distance (not certified): {search.distance:.6g}."
    what = cert.proof if cert is not None else decision.reason
    steps.append(DerivationStep(
        f"Exact index-set search on the rational values of the weights (candidates from "
        f"{search.method if search else 'the exact search'}): {what}.{distance_text}", (rid,)))
    if decision.found:
        assert cert is not None
        s = cert.index_set
        up, down = w.w_up.copy(), w.w_down.copy()
        gate = w.w_gate.copy() if w.w_gate is not None else None
        if gate is not None:
            gate[list(s), :] *= -1
            down[:, list(s)] *= -1
        else:
            up[list(s), :] *= -1
        witness = Witness(s, up, down, gate)
        skip_float = target.dense_float() * float(-2 * c)
        exact_bias = True
        if gate is None and (extras["b_up"] is not None or extras["b_down"] is not None or projector is not None):
            from .layers import float_biases_of_flip, float_layer_error

            c_frac = Fraction(int(sp_rational(c).p), int(sp_rational(c).q))
            b_up, b_down, exact_bias = float_biases_of_flip(w.w_down, extras["b_up"], extras["b_down"], s, c_frac)
            witness = Witness(s, up, down, gate, b_up=b_up if extras["b_up"] is not None else None, b_down=b_down)
            error = float_layer_error(concrete, w.w_up, w.w_down, extras["b_up"], extras["b_down"], skip_float,
                                      (up, down, witness.b_up, b_down), projector)
        elif gate is not None and (extras["b_up"] is not None or extras["b_gate"] is not None):
            raise WitnessCheckError("a biased gated layer reached the flip witness; no result covers it")
        else:
            error = float_max_relative_error(concrete, w, witness, skip=skip_float)
        names = {"W_up": w.keys[0], "W_down": w.keys[1], "W_gate": w.keys[2],
                 "b_up": ((block.weights.prefix or "") + block.weights.up_bias_key) if block.weights.up_bias_key else None,
                 "b_down": ((block.weights.prefix or "") + block.weights.down_bias_key)
                 if block.weights.down_bias_key else None}
        witness = replace(witness, names=tuple((k, v) for k, v in names.items() if v), dtype=w.dtype,
                          transpose=bool(block.weights.transpose))
        if not error <= WITNESS_TOLERANCE:
            raise WitnessCheckError(f"the flip witness for `{block.name}` (S of size {len(s)}) fails its "
                                    f"numeric check (max relative error {error:.3g} > {WITNESS_TOLERANCE:g}) although "
                                    "the index-set condition holds exactly; no verdict is given")
        claim = "P\\,W_{\\mathrm{down}}[:,S]W_{\\mathrm{up}}[S,:] = P\\,T" if projector else \
            "W_{\\mathrm{down}}[:,S]W_{\\mathrm{up}}[S,:] = T"
        verified = (f"exactly: ${claim}$ in integer arithmetic on the "
                    f"weights' exact values, with the identity of [{rid}]; numerically: max relative error {error:.2e} "
                    "at 1,000 random points (float64" + (", centred: LN sees P u only" if projector else "") + ")")
        if witness.b_down is not None:
            verified += ("; the witness's output bias $b_{\\mathrm{down}} + 2c\\,W_{\\mathrm{down}}[:,S]\\,b_S$ is "
                         + ("exactly representable in float64" if exact_bias else
                            "computed exactly and rounded to float64 (the exact value is not representable: the "
                            "rounded witness is exact only up to that rounding)"))
        steps.append(DerivationStep(f"Witness: flip the units $S$ ($|S| = {len(s)}$, units numbered from 0); "
                                    f"verified {verified}.", (rid,)))
        steps.append(DerivationStep(f"Therefore [{rid}]: these weights are absorbable.", (rid,), kind="conclusion"))
        d2 = replace(derivation, verdict=Verdict.ABSORBABLE, scope="these weights", steps=tuple(steps),
                     witness=replace(witness, verified=verified))
    elif decision.found is False and necessary == "proved":
        steps.append(DerivationStep(f"Therefore [{rid}]: no index set satisfies the condition (certificate checked "
                                    "exactly), which is necessary for these nondegenerate weights: not absorbable.",
                                    (rid,), kind="conclusion"))
        d2 = replace(derivation, verdict=Verdict.NOT_ABSORBABLE, scope="these weights", steps=tuple(steps))
    else:
        why = ("no index set satisfies the sufficient condition (certificate checked exactly); necessity is not proved "
               "here" if decision.found is False else "the index-set search could not decide: " + decision.reason)
        steps.append(DerivationStep(f"So the question stays open for these weights: {why}.", (rid,), kind="conclusion"))
        d2 = replace(derivation, verdict=Verdict.OPEN, scope="these weights", steps=tuple(steps),
                     notes=(*derivation.notes, why))
    if cert is not None:
        d2 = _with_certificate(d2, cert)
    return FileDecision(d2, w, nondeg, search, cert)


def _with_certificate(d: Derivation, cert: Certificate) -> Derivation:
    if "certificate" in {f.name for f in fields(d)}:
        return replace(d, certificate=cert)  # type: ignore[call-arg]
    return d


def _weights_info(block: Block, w: LoadedWeights, extras: dict[str, Any] | None = None) -> dict[str, Any]:
    assert block.weights is not None
    digest = w.sha256 or weights_digest(Path(w.file))  # the bytes the arrays were read from
    info: dict[str, Any] = {"file": block.weights.file, "sha256": digest, "up": w.keys[0], "down": w.keys[1],
            "gate": w.keys[2], "transpose": bool(block.weights.transpose), "dtype": w.dtype,
            "d": int(w.w_up.shape[1]), "m": int(w.w_up.shape[0])}
    if extras is not None and extras["names"]:
        info["tensors"] = dict(sorted(extras["names"].items()))
    if block.norm != "none":
        info["norm"] = block.norm
        info["eps"] = None if block.eps is None else str(block.eps)  # bound by verify to the spec's ε
    return info


def sp_rational(c: Any) -> Any:
    import sympy as sp

    return sp.Rational(c)
