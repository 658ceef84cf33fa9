"""``--near EPS``: how far concrete weights are from the index-set condition, without changing the verdict.

Weights planted in floating point (``W_down[:, :d] = -inv(W_up[:d])`` in numpy) miss the condition
``W_down[:,S] W_up[S,:] = T`` by rounding, so the exact verdict is "not absorbable", which is right
but unhelpful. With ``near = EPS`` the derivation also says whether the nearest index set found lies
within ``EPS`` of the condition, measured as ``‖W_down[:,S] W_up[S,:] − T‖_F / ‖T‖_F``, beside:

* the **certified** distance of the exact decision (a true lower bound on that norm over *every* S),
  which is why the exact verdict stands;
* the flip witness of that ``S``, and its **measured** error ``max ‖B'(x) − R(x)‖ / max(‖R(x)‖, 1)``
  (exact rationals for inline weights, float64 for file weights).

Only a step and a note are added: verdict, scope and witness are never changed. Which derivations
qualify is data: the deciding result's ``concrete = "index-set"`` (its TOML), a condition constant
``c``, and a block with inline or file weights."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import sympy as sp

from ..model.activation import GatedActivation
from ..model.block import Block
from ..theory.derivation import Derivation, DerivationStep, Verdict, Witness
from ..theory.library import Library
from ..theory.skips import is_stream_skip, skip_matrix

__all__ = ["NearCheck", "near_check", "near_derivation"]


@dataclass(frozen=True)
class NearCheck:
    eps: float
    within: bool
    index_set: tuple[int, ...]
    distance: float  # measured ‖W_down[:,S] W_up[S,:] − T‖_F for the nearest S found
    relative: float  # distance / ‖T‖_F
    certified: float | None  # certified lower bound over every S (None: not computed)
    witness_error: float | None
    witness_how: str
    target_norm: float = 1.0  # ‖T‖_F

    def text(self) -> str:
        head = (f"Near the condition (`--near {self.eps:g}`): the nearest index set found, $|S| = {len(self.index_set)}$, "
                f"has $\\|W_{{\\mathrm{{down}}}}[:,S]W_{{\\mathrm{{up}}}}[S,:] - T\\|_F = {_sci(self.distance)}$ "
                f"({self.relative:.3g} relative to $\\|T\\|_F$, measured), ")
        head += (f"within $\\varepsilon = {_sci(self.eps)}$ of the condition" if self.within
                 else f"not within $\\varepsilon = {_sci(self.eps)}$ of the condition")
        if self.certified is not None:
            head += (f"; certified: every index set is at distance $\\ge {_sci(self.certified)}$ from it "
                     f"({self.certified / self.target_norm:.3g} relative), so the exact verdict stands")
        if self.witness_error is not None:
            head += (f"; the flip witness of this $S$ reproduces $Mx + B(x)$ up to a measured max relative error of "
                     f"{self.witness_error:.2e} ({self.witness_how})")
        return head + "."

    def note(self) -> str:
        where = "within" if self.within else "not within"
        return (f"{where} {self.eps:g} of the condition: nearest S at relative distance {self.relative:.3g} (certified "
                f"lower bound over every S: {self.certified / self.target_norm:.3g} relative)" if self.certified is not None else
                f"{where} {self.eps:g} of the condition: nearest S at relative distance {self.relative:.3g}") + (
                    f", flip witness error {self.witness_error:.2e}" if self.witness_error is not None else "")


def _sci(v: float) -> str:
    """``v`` for LaTeX math: ``1.52 \\cdot 10^{-15}``."""
    if v == 0 or 1e-3 <= abs(v) < 1e4:
        return f"{v:.3g}"
    mantissa, exp = f"{v:.2e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa} \\cdot 10^{{{int(exp)}}}"


def _float(m: Any) -> Any:
    import numpy as np

    if isinstance(m, np.ndarray):
        return np.asarray(m, dtype=np.float64)
    return np.array([[float(x) for x in row] for row in m.tolist()], dtype=np.float64)


def near_check(block: Block, derivation: Derivation, eps: float, base_dir: str | Path = ".") -> NearCheck | None:
    """The nearest index set to the condition of ``derivation`` on ``block``'s weights (None: not applicable)."""
    c = derivation.condition_constant
    if c is None or not (block.has_inline_weights or block.weights is not None):
        return None
    import numpy as np

    from .floatsearch import float_search

    if block.weights is not None:
        from .io import load_block_weights

        w = load_block_weights(block.weights, Path(base_dir), block.gated)
        up, down, gate = w.w_up, w.w_down, w.w_gate
    else:
        assert block.w_up is not None and block.w_down is not None
        w = None
        up, down = _float(block.w_up), _float(block.w_down)
        gate = _float(block.w_gate) if block.w_gate is not None else None
    m, d = up.shape
    if is_stream_skip(block.skip):
        return None  # the stream structure is decided elsewhere; no plain target here
    concrete = replace(block, dim=d, width=m)
    m_skip = skip_matrix(concrete)
    if m_skip is None or not all(x.is_Rational for x in m_skip) or not _is_rational(c):
        return None
    target_exact = sp.ImmutableMatrix(-m_skip / (2 * c))
    target = _float(target_exact)
    search = float_search(up, down, target)
    s = tuple(int(j) for j in search.index_set)
    distance = float(np.linalg.norm(down[:, list(s)] @ up[list(s), :] - target)) if s else float(np.linalg.norm(target))
    t_norm = float(np.linalg.norm(target)) or 1.0
    certified: float | None = None
    cert = derivation.certificate
    if cert is not None and getattr(cert, "distance", None) is not None and not getattr(cert, "found", False):
        certified = float(cert.distance)
    elif w is None:
        from .search import exact_search

        assert block.w_up is not None and block.w_down is not None
        result = exact_search(block.w_up, block.w_down, target_exact)
        certified = 0.0 if result.found else float(result.distance)
    witness_error: float | None = None
    how = ""
    if s:
        flip_up, flip_down = up.copy(), down.copy()
        flip_gate = gate.copy() if gate is not None else None
        if isinstance(block.activation, GatedActivation):
            assert flip_gate is not None
            flip_gate[list(s), :] *= -1
            flip_down[:, list(s)] *= -1
        else:
            flip_up[list(s), :] *= -1
        if w is not None:
            from .filedecide import float_max_relative_error

            witness_error = float_max_relative_error(concrete, w, Witness(s, flip_up, flip_down, flip_gate),
                                                     skip=_float(m_skip))
            how = "1,000 random points, float64"
        else:
            from .witness import check_witness, flip_witness

            check = check_witness(concrete, Witness(s, *flip_witness(concrete, s)), points=200)
            witness_error, how = check.error, check.text().split(" at ", 1)[1]
    return NearCheck(eps, distance <= eps * t_norm, s, distance, distance / t_norm, certified, witness_error, how,
                     t_norm)


def near_derivation(block: Block, derivation: Derivation, library: Library, eps: float,
                    base_dir: str | Path = ".") -> Derivation:
    """``derivation`` with the :func:`near_check` step and note added, when its result decides concrete
    weights by the index-set condition and the verdict is not "absorbable"; otherwise unchanged."""
    rid = derivation.decided_by
    proc = library.procedure(rid)
    if rid is None or proc is None or not proc.index_set or derivation.verdict is Verdict.ABSORBABLE:
        return derivation
    check = near_check(block, derivation, eps, base_dir)
    if check is None:
        return derivation
    steps = list(derivation.steps)
    at = len(steps) - 1 if steps and steps[-1].kind == "conclusion" else len(steps)
    steps.insert(at, DerivationStep(check.text(), (rid,), kind="argument"))
    return replace(derivation, steps=tuple(steps), notes=(*derivation.notes, check.note()))


def _is_rational(c: object) -> bool:
    """``c`` is an exact rational (a SymPy number or a Python int); no string is ever converted."""
    if isinstance(c, bool):
        return False
    if isinstance(c, int):
        return True
    return isinstance(c, sp.Basic) and bool(c.is_Rational)
