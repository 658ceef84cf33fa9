"""Witnesses of real layers: the flip with biases (Cor. R-aff-1) and its numeric check, for inline
(exact) weights and for float weights from a file, with the normalisation where the model has it.

``σ(−u) = σ(u) − 2c·u`` gives, for the units ``S`` flipped together with their hidden biases,
``B'(x) = B(x) − 2c W_S x − 2c W_down[:,S] b_S``; the output bias ``c' = c + 2c W_down[:,S] b_S``
absorbs the constant (MATH.md §8). A post-LN layer compares ``LN(·)`` of both sides, which depends
only on the centred vector ``P u``; the checks here compare ``P(B'(x) − R(x))``.
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import mpmath
import sympy as sp

from ..analysis.numeric import evaluate
from ..model.block import Block
from ..theory.skips import skip_matrix

__all__ = ["biased_flip", "block_fields", "exact_max_error", "float_biases_of_flip", "float_layer_error",
           "load_layer_extras"]


def _col(v: sp.MatrixBase | None, n: int) -> sp.Matrix:
    return sp.Matrix(v) if v is not None else sp.zeros(n, 1)


def biased_flip(block: Block, index_set: tuple[int, ...], c: sp.Expr) -> tuple[sp.ImmutableMatrix, sp.ImmutableMatrix,
                                                                             sp.ImmutableMatrix, sp.ImmutableMatrix]:
    """Ungated block with inline weights: rows and hidden biases ``S`` negated, ``W_down`` kept, the
    output bias ``b_down + 2c W_down[:,S] b_S``. Returns ``(W'_up, W'_down, b'_up, b'_down)``."""
    assert block.w_up is not None and block.w_down is not None
    m = block.w_up.rows
    w_up = sp.Matrix(block.w_up)
    b_up = _col(block.b_up, m)
    b_down = _col(block.b_down, block.w_down.rows)
    for j in index_set:
        w_up[j, :] = -w_up[j, :]
        b_down += 2 * c * sp.Matrix(block.w_down[:, j]) * b_up[j]
        b_up[j] = -b_up[j]
    return sp.ImmutableMatrix(w_up), sp.ImmutableMatrix(block.w_down), sp.ImmutableMatrix(b_up), \
        sp.ImmutableMatrix(b_down)


def _mp(q: Any) -> Any:
    r = sp.Rational(q)
    return mpmath.mpf(int(r.p)) / int(r.q)


def _output(block: Block, w_up: Any, w_down: Any, b_up: Any, b_down: Any, xs: list[Any], digits: int) -> list[Any]:
    act = block.ungated_activation
    assert act is not None
    m, d = w_up.shape
    hidden = []
    for j in range(m):
        pre = mpmath.fsum(_mp(w_up[j, k]) * xs[k] for k in range(d)) + (_mp(b_up[j]) if b_up is not None else 0)
        hidden.append(evaluate(act.expr, pre, digits))
    return [mpmath.fsum(_mp(w_down[i, j]) * hidden[j] for j in range(m)) + (_mp(b_down[i]) if b_down is not None
                                                                           else 0) for i in range(w_down.rows)]


def exact_max_error(block: Block, w_up: Any, w_down: Any, b_up: Any, b_down: Any, points: int = 200,
                    seed: int = 0, digits: int = 40) -> float:
    """max over random rational x of ‖B'(x) − R(x)‖ / max(‖R(x)‖, 1) at ``digits`` digits, biases included
    (``block`` is the block of the ordinary question: for post-LN, the reduced one)."""
    rng = random.Random(seed)
    assert block.w_up is not None and block.w_down is not None
    d = block.w_up.cols
    skip = skip_matrix(block)
    assert skip is not None
    worst = 0.0
    with mpmath.workdps(digits):
        for _ in range(points):
            xs = [mpmath.mpf(rng.randint(-3000, 3000)) / 1000 for _ in range(d)]
            r = _output(block, block.w_up, block.w_down, block.b_up, block.b_down, xs, digits)
            r = [v + mpmath.fsum(_mp(skip[i, k]) * xs[k] for k in range(d)) for i, v in enumerate(r)]
            b = _output(block, w_up, w_down, b_up, b_down, xs, digits)
            num = max(abs(u - v) for u, v in zip(r, b, strict=True))
            worst = max(worst, float(num / max(max(abs(u) for u in r), 1)))
    return worst


def float_biases_of_flip(w_down: Any, b_up: Any, b_down: Any, index_set: tuple[int, ...], c: Fraction
                         ) -> tuple[Any, Any, bool]:
    """Float weights: the witness's hidden and output biases (``b_S`` negated, ``b_down + 2c W_down[:,S] b_S``),
    and whether the output bias is exactly representable in float64 (computed exactly, then rounded)."""
    import numpy as np

    m = w_down.shape[1]
    up = np.zeros(m) if b_up is None else np.array(b_up, dtype=np.float64, copy=True)
    down = np.zeros(w_down.shape[0]) if b_down is None else np.array(b_down, dtype=np.float64, copy=True)
    s = list(index_set)
    exact = True
    if s and b_up is not None:
        shift = [Fraction(0)] * w_down.shape[0]
        two_c = 2 * c
        for j in s:
            bj = Fraction(float(up[j]))
            if bj:
                col = w_down[:, j]
                for i in range(w_down.shape[0]):
                    if col[i]:
                        shift[i] += two_c * Fraction(float(col[i])) * bj
        for i in range(w_down.shape[0]):
            total = Fraction(float(down[i])) + shift[i]
            down[i] = float(total)
            exact = exact and Fraction(float(down[i])) == total
        up[s] = -up[s]
    return up, down, exact


# ---- file weights: bias tensors, the normalisation's scales, the float check ------------------------------


def load_layer_extras(block: Block, up_shape: tuple[int, int], base_dir: Any) -> dict[str, Any]:
    """The bias tensors and LayerNorm/RMSNorm scales a file block names (``up_bias:``, ``down_bias:``,
    ``gate_bias:``, ``ln_gamma:``), read as untrusted input and checked: 1-D, finite, of the right
    length. Returns ``{"b_up", "b_down", "b_gate", "gamma": float64 arrays or None, "names": {...}}``."""
    from pathlib import Path

    import numpy as np

    from ..dsl.errors import SpecShapeError, SpecValueError
    from .io import read_tensors

    decl = block.weights
    assert decl is not None
    m, d = up_shape
    prefix = decl.prefix or ""
    wanted = {"b_up": (decl.up_bias_key, m, "up_bias"), "b_down": (decl.down_bias_key, d, "down_bias"),
              "b_gate": (decl.gate_bias_key, m, "gate_bias"), "gamma": (decl.gamma_key, d, "ln_gamma")}
    out: dict[str, Any] = {"b_up": None, "b_down": None, "b_gate": None, "gamma": None, "names": {}}
    keys = {role: prefix + key for role, (key, _, _) in wanted.items() if key is not None}
    if not keys:
        return out
    path = Path(base_dir) / decl.file
    tensors = read_tensors(path, decl.span, sorted(set(keys.values())))
    for role, key in keys.items():
        _, length, field_name = wanted[role]
        if tensors.get(key) is None:
            from ..dsl.errors import did_you_mean

            raise SpecValueError(f"`{path.name}` has no tensor `{key[:60]}` (for `{field_name}:`)", decl.span,
                                 f"`{key[:60]}` missing", f"one of {len(tensors)} tensors in the file",
                                 did_you_mean(key, tensors) or f"name the tensor with `{field_name}:`")
        array = tensors[key]
        if array.ndim != 1 or array.shape[0] != length:
            raise SpecShapeError(f"tensor `{key[:60]}` in `{path.name}` has shape {tuple(array.shape)}", decl.span,
                                 str(tuple(array.shape)), f"a vector of length {length}",
                                 "biases of the hidden units have length width, the output bias and the scales length "
                                 "dim")
        values = np.ascontiguousarray(array, dtype=np.float64)
        if not np.isfinite(values).all():
            i = int(np.flatnonzero(~np.isfinite(values))[0])
            raise SpecValueError(f"tensor `{key[:60]}` in `{path.name}` has a non-finite entry at [{i}]", decl.span,
                                 str(values[i]), "finite numbers")
        out[role] = values
        out["names"][field_name] = key
    return out


def block_fields(extras: dict[str, Any]) -> dict[str, Any]:
    """What the loaded tensors change in the block: nonzero biases make it biased; the scales are exact."""
    fields: dict[str, Any] = {}
    if any(extras[k] is not None and bool((extras[k] != 0).any()) for k in ("b_up", "b_down", "b_gate")):
        fields["bias"] = True
    if extras["gamma"] is not None:
        fields["ln_gamma"] = sp.ImmutableMatrix([[sp.Rational(Fraction(float(g)).numerator,
                                                              Fraction(float(g)).denominator)]
                                                 for g in extras["gamma"]])
    return fields


def float_layer_error(block: Block, w_up: Any, w_down: Any, b_up: Any, b_down: Any, skip: Any,
                      witness: tuple[Any, Any, Any, Any], projector: str | None, points: int = 1000,
                      seed: int = 0) -> float:
    """max over random x of ‖(P)(B'(x) − R(x))‖ relative to the size of the computation, float64, biases
    included. Points are scaled so pre-activations stay of size ~1 (the identity holds for every x)."""
    import numpy as np

    from ..analysis.numeric import evaluate_array

    act = block.ungated_activation
    assert act is not None
    rng = np.random.default_rng(seed)
    d = w_up.shape[1]
    top = float(np.abs(w_up).max()) * np.sqrt(d) or 1.0
    xs = rng.standard_normal((points, d)) / top
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        def out(up: Any, down: Any, bu: Any, bd: Any) -> tuple[Any, Any]:
            pre = xs @ up.T + (0.0 if bu is None else bu)
            hidden = evaluate_array(act.expr, pre)
            y = hidden @ down.T + (0.0 if bd is None else bd)
            return y, np.abs(hidden) @ np.abs(down).T + (0.0 if bd is None else np.abs(bd))

        r, r_size = out(w_up, w_down, b_up, b_down)
        r = r + xs @ np.asarray(skip, dtype=np.float64).T
        b, b_size = out(*witness)
        gap = b - r
        if projector == "centering":
            gap = gap - gap.mean(axis=1, keepdims=True)
        size = np.maximum(np.maximum(np.linalg.norm(r, axis=1), np.linalg.norm(r_size, axis=1)),
                          np.linalg.norm(b_size, axis=1))
        err = np.linalg.norm(gap, axis=1) / np.where(size > 0, size, 1.0)
    return float(err.max())
