"""Blocks whose weights come from a file (float weights, possibly a trained model's layer)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..analysis.numeric import evaluate_array
from ..model.activation import GatedActivation
from ..model.block import Block
from ..theory.derivation import Derivation, DerivationStep, Verdict, Witness
from ..theory.library import Library
from ..theory.prover import prove
from ..theory.skips import skip_matrix
from .floatsearch import FloatSearch, Nondegeneracy, float_nondegeneracy, float_search
from .io import LoadedWeights, load_block_weights

__all__ = ["FileDecision", "decide_file_block", "float_max_relative_error"]

NEEDS_NONDEGENERATE = ("thm8", "thm10")


@dataclass(frozen=True)
class FileDecision:
    derivation: Derivation
    weights: LoadedWeights
    nondegeneracy: Nondegeneracy
    search: FloatSearch | None


def float_max_relative_error(block: Block, w: LoadedWeights, witness: Witness, points: int = 1000,
                             seed: int = 0) -> float:
    """max over ``points`` random x of ‖B'(x) − R(x)‖ / max(‖R(x)‖, 1), in float64."""
    import numpy as np

    rng = np.random.default_rng(seed)
    d = w.w_up.shape[1]
    skip = skip_matrix(replace(block, dim=d // (block.skip.n or 1) if block.skip.kind == "hyper" else d))
    assert skip is not None
    m_skip: Any = np.array([[float(x) for x in row] for row in skip.tolist()], dtype=np.float64)
    act = block.activation
    expr = act.gate.expr if isinstance(act, GatedActivation) else act.expr
    xs = rng.standard_normal((points, d))

    def out(up: Any, down: Any, gate: Any) -> Any:
        pre = xs @ up.T
        if isinstance(act, GatedActivation):
            return (evaluate_array(expr, xs @ gate.T) * pre) @ down.T
        return evaluate_array(expr, pre) @ down.T

    r = xs @ m_skip.T + out(w.w_up, w.w_down, w.w_gate)
    b = out(np.asarray(witness.w_up), np.asarray(witness.w_down),
            None if witness.w_gate is None else np.asarray(witness.w_gate))
    err = np.linalg.norm(b - r, axis=1) / np.maximum(np.linalg.norm(r, axis=1), 1.0)
    return float(err.max())


def decide_file_block(block: Block, base_dir: Path, library: Library) -> FileDecision:
    """Load, check and decide a block whose weights are in a file."""
    import numpy as np

    assert block.weights is not None
    w = load_block_weights(block.weights, base_dir, block.gated)
    m, d = w.w_up.shape
    if block.skip.kind == "hyper":
        assert block.skip.n is not None
        if d % block.skip.n:
            from ..dsl.errors import SpecValueError

            raise SpecValueError(f"W_up has {d} columns, not a multiple of n = {block.skip.n} streams",
                                 block.weights.span, str(d), f"a multiple of {block.skip.n}")
        d_block = d // block.skip.n
    else:
        d_block = d
    concrete = replace(block, dim=d_block, width=m)
    derivation = prove(concrete, library=library)
    nondeg = float_nondegeneracy(w.w_up, w.w_down)
    steps = list(derivation.steps)
    steps.insert(1, DerivationStep(f"Weights from `{Path(w.file).name}` (tensors `{w.keys[0]}`, `{w.keys[1]}`"
                                   + (f", `{w.keys[2]}`" if w.keys[2] else "") + f"; dtype {w.dtype}): "
                                   f"$d = {d}$, $m = {m}$; all entries finite.", kind="setting"))
    notes = list(derivation.notes)
    assumptions = [a for a in derivation.assumptions if not a.startswith("nondegenerate weights")]
    necessary = derivation.necessary
    if derivation.decided_by in NEEDS_NONDEGENERATE:
        if nondeg.holds:
            steps.insert(2, DerivationStep(f"Nondegeneracy checked on these weights: {nondeg.reason}.",
                                           (derivation.decided_by,), kind="hypothesis"))
        else:
            necessary = "conjectured"
            notes.append(f"outside Thms. 8/10: {nondeg.reason}; only the sufficient direction applies")
    if w.biases:
        notes.append("the file has biases (" + ", ".join(w.biases) + "): the results are about the bias-free block; "
                     "with biases the flip witness still absorbs when the condition holds (the output bias absorbs "
                     "the constant -W_down[:,S] b_S), and nothing else is covered")
    derivation = replace(derivation, steps=tuple(steps), notes=tuple(notes), assumptions=tuple(assumptions),
                         necessary=necessary)
    if derivation.verdict is not Verdict.CONDITIONAL or derivation.condition_constant is None:
        return FileDecision(derivation, w, nondeg, None)
    c = derivation.condition_constant
    m_skip = skip_matrix(concrete)
    assert m_skip is not None
    target = np.array((-m_skip / (2 * c)).evalf(20).tolist(), dtype=float)
    result = float_search(w.w_up, w.w_down, target)
    rid = derivation.decided_by or ""
    steps.append(DerivationStep(
        f"Index-set search ({result.method}): {result.proof}. Least-squares distance: "
        f"$\\min_S \\|W_{{\\mathrm{{down}}}}[:,S]W_{{\\mathrm{{up}}}}[S,:] - T\\|_F \\ge {result.distance:.6g}$ "
        f"({result.relative_distance:.4g} relative to $\\|T\\|_F$).", (rid,)))
    if result.found:
        s = result.index_set
        up, down = w.w_up.copy(), w.w_down.copy()
        gate = w.w_gate.copy() if w.w_gate is not None else None
        if gate is not None:
            gate[list(s), :] *= -1
            down[:, list(s)] *= -1
        else:
            up[list(s), :] *= -1
        witness = Witness(s, up, down, gate)
        error = float_max_relative_error(concrete, w, witness)
        verified = f"numerically: max relative error {error:.2e} at 1,000 random points (float64)"
        steps.append(DerivationStep(f"Witness: flip the units $S$ ($|S| = {len(s)}$); verified {verified}.", (rid,)))
        steps.append(DerivationStep(f"Therefore [{rid}]: these weights are absorbable.", (rid,), kind="conclusion"))
        d2 = replace(derivation, verdict=Verdict.ABSORBABLE, scope="these weights", steps=tuple(steps),
                     witness=replace(witness, verified=verified))
    elif result.found is False and necessary == "proved":
        steps.append(DerivationStep(f"Therefore [{rid}]: no index set satisfies the condition, which is necessary for "
                                    "these nondegenerate weights: not absorbable.", (rid,), kind="conclusion"))
        d2 = replace(derivation, verdict=Verdict.NOT_ABSORBABLE, scope="these weights", steps=tuple(steps))
    else:
        why = ("no index set satisfies the sufficient condition; necessity is not proved here"
               if result.found is False else "the index-set search could not decide")
        steps.append(DerivationStep(f"So the question stays open for these weights: {why}.", (rid,), kind="conclusion"))
        d2 = replace(derivation, verdict=Verdict.OPEN, scope="these weights", steps=tuple(steps),
                     notes=(*derivation.notes, why))
    return FileDecision(d2, w, nondeg, result)



