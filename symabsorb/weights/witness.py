"""Flip witnesses: the residual-free weights that absorb a block, and their verification."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
import sympy as sp

from ..analysis.numeric import evaluate
from ..model.activation import GatedActivation
from ..model.block import Block
from ..theory.derivation import Witness
from ..theory.skips import skip_matrix

__all__ = ["WitnessCheck", "block_output", "check_witness", "flip_witness", "max_relative_error", "rescaled_units"]


def _negate(m: sp.MatrixBase, index: tuple[int, ...], rows: bool) -> sp.ImmutableMatrix:
    """``m`` with the rows (or columns) ``index`` negated, through SymPy's DomainMatrix (a product with
    a diagonal ±1 matrix: element-wise assignment into a SymPy matrix costs seconds at m = 128)."""
    from sympy.polys.matrices import DomainMatrix

    rep = getattr(m, "_rep", None)
    if not isinstance(rep, DomainMatrix):
        rep = DomainMatrix.from_Matrix(sp.Matrix(m))
    n = rep.shape[0] if rows else rep.shape[1]
    flip = set(index)
    sign = DomainMatrix.diag([rep.domain(-1 if j in flip else 1) for j in range(n)], rep.domain, (n, n))
    return sp.ImmutableMatrix((sign * rep if rows else rep * sign).to_Matrix())


def flip_witness(block: Block, index_set: tuple[int, ...]) -> tuple[sp.ImmutableMatrix, sp.ImmutableMatrix,
                                                                     sp.ImmutableMatrix | None]:
    """Ungated: negate the rows ``S`` of ``W_up``. Gated: negate the rows ``S`` of ``W_gate`` and
    the columns ``S`` of ``W_down``."""
    assert block.w_up is not None and block.w_down is not None
    w_up, w_down = sp.ImmutableMatrix(block.w_up), sp.ImmutableMatrix(block.w_down)
    w_gate = sp.ImmutableMatrix(block.w_gate) if block.w_gate is not None else None
    if isinstance(block.activation, GatedActivation):
        assert w_gate is not None
        return w_up, _negate(w_down, index_set, rows=False), _negate(w_gate, index_set, rows=True)
    return _negate(w_up, index_set, rows=True), w_down, w_gate


def _entry(v: Any) -> Any:
    r = sp.Rational(v)
    return mpmath.mpf(int(r.p)) / int(r.q)


def rescaled_units(negative: tuple[int, ...]) -> str:
    """How a rescaling witness reads (it is not a flip): every unit rescaled, those with a negative scale named."""
    shown = "{" + ", ".join(map(str, negative)) + "}"
    return ("rescale every unit i: row μ_i w_i, column a_i/κ_i" +
            (f"; μ_i < 0 for the units {shown} (numbered from 0)" if negative else ", every μ_i > 0"))


def block_output(block: Block, w_up: sp.MatrixBase, w_down: sp.MatrixBase, w_gate: sp.MatrixBase | None,
                 x: list[Fraction], residual: bool, digits: int = 40,
                 biases: tuple[Any, Any, Any] = (None, None, None)) -> list[Any]:
    """``B(x)`` (or ``Mx + B(x)``) at a rational point, evaluated with mpmath at ``digits``; ``biases`` are
    ``(b_up, b_down, b_gate)`` (each None when absent): the hidden, output and gate biases of these weights."""
    b_up, b_down, b_gate = (None if b is None else list(b) for b in biases)
    with mpmath.workdps(digits):
        xs = [mpmath.mpf(v.numerator) / v.denominator for v in x]
        m, d = w_up.shape
        hidden = []
        act = block.activation
        for j in range(m):
            pre = mpmath.fsum(_entry(w_up[j, k]) * xs[k] for k in range(d)) + (_entry(b_up[j]) if b_up else 0)
            if isinstance(act, GatedActivation):
                assert w_gate is not None
                g_in = mpmath.fsum(_entry(w_gate[j, k]) * xs[k] for k in range(d)) + (_entry(b_gate[j]) if b_gate
                                                                                       else 0)
                hidden.append(evaluate(act.gate.expr, g_in, digits) * pre)
            else:
                hidden.append(evaluate(act.expr, pre, digits))
        out = []
        skip = skip_matrix(block) if residual else None
        for i in range(w_down.shape[0]):
            v = mpmath.fsum(_entry(w_down[i, j]) * hidden[j] for j in range(m)) + (_entry(b_down[i]) if b_down else 0)
            if skip is not None:
                v += mpmath.fsum(mpmath.mpf(int(sp.Rational(skip[i, k]).p)) / int(sp.Rational(skip[i, k]).q) * xs[k]
                                 for k in range(d))
            out.append(v)
        return out


@dataclass(frozen=True)
class WitnessCheck:
    """The witness check at random rational points: ``error`` = max ‖R(x) − B'(x)‖∞ / max(‖R(x)‖∞, 1),
    exactly, or (``exact`` false) an upper bound of it."""

    error: float
    points: int
    exact: bool  # every value exact rational arithmetic (else rigorous arb enclosures, error an upper bound)
    cancelled: int  # hidden units equal in both blocks, cancelled exactly before any evaluation

    def text(self) -> str:
        how = "exact rational arithmetic" if self.exact else "rigorous enclosures (an upper bound)"
        return f"max relative error {self.error:.2e} at {self.points} random rational points ({how})"


def _fmpq(q: Any) -> Any:
    import flint

    r = q if isinstance(q, sp.Rational) else sp.Rational(q)
    return flint.fmpq(int(r.p), int(r.q))


def _fmpq_rows(m: sp.MatrixBase) -> list[list[Any]]:
    """The rows of a rational matrix as flint ``fmpq`` (through SymPy's DomainMatrix over QQ, whose
    elements already are ``fmpq`` under SymPy's flint ground types)."""
    import flint
    from sympy import QQ
    from sympy.polys.matrices import DomainMatrix

    rep = getattr(m, "_rep", None)  # a SymPy matrix's own DomainMatrix (rebuilding one costs more than the check)
    dm = rep if isinstance(rep, DomainMatrix) else DomainMatrix.from_Matrix(sp.Matrix(m))
    rows = (dm if dm.domain == QQ else dm.convert_to(QQ)).to_list()
    return [[e if isinstance(e, flint.fmpq) else flint.fmpq(int(e.numerator), int(e.denominator)) for e in row]
            for row in rows]


def _fmpq_mat(m: sp.MatrixBase) -> Any:
    import flint

    return flint.fmpq_mat(m.rows, m.cols, [v for row in _fmpq_rows(m) for v in row])


def _exact_evaluator(expr: sp.Basic) -> Callable[[Any], Any] | None:
    """``expr`` (in ``z``) as an exact function of a flint ``fmpq`` when it is piecewise polynomial with
    rational coefficients and rational polynomial conditions (ReLU, leaky ReLU, hardtanh, polynomials),
    else None."""
    import flint

    from ..model.functions import Z

    try:
        folded = sp.piecewise_fold(expr.rewrite(sp.Piecewise))
    except Exception:  # SymPy's own error on an unusual expression: no exact evaluator
        return None
    if set(folded.free_symbols) - {Z}:
        return None
    pieces = folded.args if isinstance(folded, sp.Piecewise) else ((folded, sp.true),)

    def poly(e: sp.Basic) -> Any:
        try:
            p = sp.Poly(e, Z)
        except sp.PolynomialError:
            return None
        coeffs = p.all_coeffs()[::-1]
        if not all(c.is_Rational for c in coeffs):
            return None
        return flint.fmpq_poly([_fmpq(c) for c in coeffs])

    def condition(c: sp.Basic) -> Callable[[Any], bool] | None:
        if c is sp.true:
            return lambda v: True
        if c is sp.false:
            return lambda v: False
        if isinstance(c, (sp.And, sp.Or)):
            parts = [condition(a) for a in c.args]
            if any(part is None for part in parts):
                return None
            every = all if isinstance(c, sp.And) else any
            return lambda v: every(part(v) for part in parts)  # type: ignore[misc]
        if isinstance(c, sp.Not):
            inner = condition(c.args[0])
            return None if inner is None else (lambda v: not inner(v))
        if isinstance(c, sp.core.relational.Relational):
            p = poly(c.lhs - c.rhs)
            ops = {">": lambda a: a > 0, ">=": lambda a: a >= 0, "<": lambda a: a < 0, "<=": lambda a: a <= 0,
                   "==": lambda a: a == 0, "!=": lambda a: a != 0}
            op = ops.get(c.rel_op)
            if p is None or op is None:
                return None
            return lambda v: bool(op(p(v)))
        return None

    compiled = []
    for e, c in pieces:
        p, test = poly(e), condition(c)
        if p is None or test is None:
            return None
        compiled.append((p, test))

    def value(v: Any) -> Any:
        for p, test in compiled:
            if test(v):
                return p(v)
        raise ValueError("no piece of the activation holds")  # Piecewise without a default: not exact here

    return value


def _units(w_up: sp.MatrixBase, w_down: sp.MatrixBase, w_gate: sp.MatrixBase | None) -> dict[Any, list[Any]]:
    """Hidden units keyed by their input rows (up, gate; as integer pairs, cheap to hash), each with
    ``[up row, gate row, output column]`` in flint ``fmpq`` (equal keys: their columns summed)."""
    def pairs(rows: list[list[Any]]) -> list[tuple[tuple[int, int], ...]]:
        return [tuple((int(v.p), int(v.q)) for v in row) for row in rows]

    up_q = _fmpq_rows(w_up)
    gate_q = _fmpq_rows(w_gate) if w_gate is not None else None
    ups, gates = pairs(up_q), (pairs(gate_q) if gate_q is not None else None)
    cols = [list(c) for c in zip(*_fmpq_rows(w_down), strict=True)]
    units: dict[Any, list[Any]] = {}
    for j, up in enumerate(ups):
        key = (up, gates[j] if gates is not None else None)
        if key in units:
            units[key][2] = [a + b for a, b in zip(units[key][2], cols[j], strict=True)]
        else:
            units[key] = [up_q[j], gate_q[j] if gate_q is not None else None, cols[j]]
    return units


def check_witness(block: Block, witness: Witness, points: int = 200, seed: int = 0) -> WitnessCheck:
    """R(x) = Mx + B(x) against B'(x) at random rational points, without rounding.

    Hidden units that are equal in both blocks (same input rows, same output column) contribute the
    same values and cancel exactly; so do the parts of units shared with other coefficients. The
    rest, R(x) itself (for the denominator) and the linear parts are matrix products over Q
    (python-flint ``fmpq_mat``); the activation is evaluated exactly where it is piecewise polynomial
    over Q and by rigorous arb enclosures otherwise (the error is then an upper bound)."""
    import flint

    from ..analysis.enclosure import PRECISIONS, NotNumeric, enclose

    assert block.w_up is not None and block.w_down is not None
    act = block.activation
    gated = isinstance(act, GatedActivation)
    expr = act.gate.expr if gated else act.expr  # type: ignore[union-attr]
    exact_value = _exact_evaluator(expr)
    rng = random.Random(seed)
    d = block.w_up.cols
    xs = [[Fraction(rng.randint(-3000, 3000), 1000) for _ in range(d)] for _ in range(points)]
    x = flint.fmpq_mat(points, d, [flint.fmpq(v.numerator, v.denominator) for row in xs for v in row])

    original = _units(block.w_up, block.w_down, block.w_gate)
    other = _units(witness.w_up, witness.w_down, witness.w_gate)
    zero = [flint.fmpq(0)] * d
    inputs: dict[Any, tuple[Any, Any]] = {}  # key -> (up row, gate row)
    diff: dict[Any, list[Any]] = {}
    for k in [*original, *(k for k in other if k not in original)]:
        unit = original.get(k) or other[k]
        inputs[k] = (unit[0], unit[1])
        a = original[k][2] if k in original else zero
        b = other[k][2] if k in other else zero
        diff[k] = [u - v for u, v in zip(a, b, strict=True)]
    live = [k for k in inputs if any(v != 0 for v in diff[k])]
    cancelled = len(inputs) - len(live)

    def hidden(units: list[Any]) -> tuple[Any, bool]:
        """The hidden values (points x units) as an fmpq_mat, or arb values as a list of rows."""
        if not units:
            return flint.fmpq_mat(points, 0), True
        ups = [inputs[k][0] for k in units]
        pre = x * flint.fmpq_mat(d, len(units), [u[i] for i in range(d) for u in ups])
        gates = [inputs[k][1] for k in units]
        gate_pre = x * flint.fmpq_mat(d, len(units), [g[i] for i in range(d) for g in gates]) if gated else None
        arg = gate_pre if gate_pre is not None else pre
        if exact_value is not None:
            try:
                vals = [exact_value(arg[i, j]) for i in range(points) for j in range(len(units))]
                if gated:
                    vals = [v * pre[i, j] for (i, j), v in zip(
                        ((i, j) for i in range(points) for j in range(len(units))), vals, strict=True)]
                return flint.fmpq_mat(points, len(units), vals), True
            except ValueError:
                pass
        rows = []
        for i in range(points):
            row = []
            for j in range(len(units)):
                t = arg[i, j]
                ball = flint.arb("nan")
                for prec in PRECISIONS:  # tighter until the radius is negligible (cancellation in σ)
                    try:
                        ball = enclose(expr, Fraction(int(t.p), int(t.q)), prec).value
                    except NotNumeric:
                        break
                    if float(ball.rad()) <= 1e-15 * max(1.0, abs(float(ball.mid()))):
                        break
                row.append(ball * flint.arb(pre[i, j]) if gated else ball)
            rows.append(row)
        return rows, False

    def combine(units: list[Any], coeff: dict[Any, list[Any]], with_skip: bool) -> tuple[list[list[Any]], bool]:
        h, exact = hidden(units)
        cols = [coeff[k] for k in units]
        out_mat = flint.fmpq_mat(d, len(units), [c[i] for i in range(d) for c in cols])
        skip = skip_matrix(block) if with_skip else None
        lin = x * _fmpq_mat(sp.Matrix(skip)).transpose() if skip is not None else flint.fmpq_mat(points, d)
        if exact:
            total = h * out_mat.transpose() + lin
            return [[total[i, k] for k in range(d)] for i in range(points)], True
        rows = []
        for i in range(points):
            rows.append([sum((h[i][j] * flint.arb(out_mat[k, j]) for j in range(len(units))), flint.arb(lin[i, k]))
                         for k in range(d)])
        return rows, False

    saved = flint.ctx.prec
    flint.ctx.prec = max(saved, 128)  # the arb sums and products of the enclosure path
    try:
        gap, exact = combine(live, diff, True)
    finally:
        flint.ctx.prec = saved
    if exact:
        nums = [float(max((abs(v) for v in row), default=flint.fmpq(0))) for row in gap]
    else:
        nums = [max((float(abs(v).upper()) for v in row), default=0.0) for row in gap]
    # the denominator max(‖R(x)‖, 1), needed only where the gap is not exactly 0: exact when the
    # activation is; else 1, its lower bound, so that the error stays an upper bound
    full = combine(list(original), {k: u[2] for k, u in original.items()}, True)[0] \
        if exact and any(nums) else None
    worst = 0.0
    for i, num in enumerate(nums):
        den = max(float(max((abs(v) for v in full[i]), default=flint.fmpq(0))), 1.0) if full is not None else 1.0
        worst = max(worst, num / den)
    return WitnessCheck(worst, points, exact, cancelled)


def max_relative_error(block: Block, witness: Witness, points: int = 200, seed: int = 0) -> float:
    """max over random rational points of ‖B'(x) − R(x)‖ / max(‖R(x)‖, 1) (:func:`check_witness`)."""
    return check_witness(block, witness, points, seed).error
