"""Growth at ±∞ by a bound calculus over the expression tree, and local boundedness.

Each outer piece of the piecewise normal form is bounded at ``+∞`` (and, mirrored, at ``−∞``) by
rules that are theorems about eventual behaviour: for ``f = O(z^a)`` and ``g = O(z^b)``,
``f·g = O(z^{a+b})``; a sum of terms with the same eventual sign is at least its largest term;
``|tanh| ≤ 1``; ``exp(g) ≤ 1`` when ``g`` is eventually negative; and so on (:class:`Size`).
Nothing is a limit: SymPy's ``limit`` answered ``0`` for ``max(0,z)·(1 + (cosh² z − sinh² z −
1)/(1+z²))``, which is ReLU. Where a rule does not apply the growth is ``unknown``, never guessed.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from ..model.functions import Z
from .facts import Evidence, Stage, Step, proved, unknown
from .identity import exact_sign
from .piecewise import piecewise_form
from .realness import not_proved_real
from .structure import locally_bounded

__all__ = ["GROWTH_ORDER", "GrowthFact", "Size", "growth_fact", "size_at_infinity"]

GROWTH_ORDER = ("bounded", "sublinear", "at most linear", "linear", "superlinear")

INF = math.inf
#: An order ``z^a (log z)^b``, compared lexicographically; ``a`` may be ±∞.
Order = tuple[float | Fraction, Fraction]
_ONE: Order = (Fraction(0), Fraction(0))
_LOG: Order = (Fraction(0), Fraction(1))
_LIN: Order = (Fraction(1), Fraction(0))
_TINY: Order = (-INF, Fraction(0))
_HUGE: Order = (INF, Fraction(0))


def _add(p: Order, q: Order) -> Order | None:
    if {p[0], q[0]} == {INF, -INF}:
        return None
    if p[0] in (INF, -INF):
        return (p[0], Fraction(0))
    if q[0] in (INF, -INF):
        return (q[0], Fraction(0))
    return (p[0] + q[0], p[1] + q[1])


def _scale(p: Order, r: Fraction) -> Order:
    if p[0] in (INF, -INF):
        return ((p[0] if r > 0 else -p[0]), Fraction(0))
    return (p[0] * r, p[1] * r)


@dataclass(frozen=True)
class Size:
    """Eventual size of ``f(z)`` as ``z → +∞`` (every field proved, or None when unknown).

    ``up``: ``|f| = O(z^a (log z)^b)``; ``(+∞, 0)`` means no polynomial bound is known.
    ``low``: ``|f| ≥ c·z^a (log z)^b`` eventually for some ``c > 0`` (so ``f`` is eventually nonzero).
    ``sign``: the eventual sign of ``f`` (0: ``f`` is identically 0).
    ``log_up``: ``log|f| = O(z^a (log z)^b)`` (useful when ``up`` is ``+∞``).
    """

    up: Order | None
    low: Order | None
    sign: int | None
    log_up: Order | None

    @property
    def zero(self) -> bool:
        return self.sign == 0


_ZERO = Size(_TINY, None, 0, _TINY)


def _const(c: sp.Expr) -> Size:
    s = exact_sign(c)
    if s == 0:
        return _ZERO
    if s is None:
        return Size(_ONE, None, None, _LOG)
    return Size(_ONE, _ONE, s, _LOG)


def _bounded(sign: int | None = None, low: Order | None = None) -> Size:
    return Size(_ONE, low, sign, _LOG)


def _sum(parts: list[Size]) -> Size:
    parts = [p for p in parts if not p.zero]
    if not parts:
        return _ZERO
    ups = [p.up for p in parts]
    up = None if any(u is None for u in ups) else max(ups)  # type: ignore[type-var]
    logs = [p.log_up for p in parts]
    log_up = None if any(g is None for g in logs) else max(logs)  # type: ignore[type-var]
    low, sign = None, None
    for i, p in enumerate(parts):
        others = [q.up for j, q in enumerate(parts) if j != i]
        if p.low is not None and p.sign is not None and all(u is not None and p.low > u for u in others):
            low, sign = p.low, p.sign
            break
    else:
        signs = {p.sign for p in parts}
        lows = [p.low for p in parts if p.low is not None]
        if len(signs) == 1 and None not in signs and lows:
            low, sign = max(lows), next(iter(signs))
    return Size(up, low, sign, log_up)


def _product(parts: list[Size]) -> Size:
    if any(p.zero for p in parts):
        return _ZERO
    up: Order | None = _ONE
    low: Order | None = _ONE
    sign: int | None = 1
    log_up: Order | None = _TINY
    for p in parts:
        up = None if (up is None or p.up is None) else _add(up, p.up)
        low = None if (low is None or p.low is None) else _add(low, p.low)
        sign = None if (sign is None or p.sign is None) else sign * p.sign
        log_up = None if (log_up is None or p.log_up is None) else max(log_up, p.log_up)
    if low is not None and low[0] == -INF:
        low = None
    return Size(up, low, sign, log_up)


def _power(base: Size, r: Fraction) -> Size | None:
    if r == 0:
        return _bounded(1, _ONE)
    if base.zero:
        return _ZERO if r > 0 else None
    integer = r.denominator == 1
    if base.sign == 1:
        sign: int | None = 1
    elif base.sign == -1 and integer:
        sign = 1 if r.numerator % 2 == 0 else -1
    else:
        return None  # a real power of a base not known to be positive
    if r > 0:
        up = None if base.up is None else _scale(base.up, r)
        low = None if base.low is None else _scale(base.low, r)
    else:
        up = None if base.low is None else _scale(base.low, r)
        low = None if (base.up is None or base.up[0] == INF) else _scale(base.up, r)
        if base.low is None:
            return None  # 1/f needs f bounded away from 0
    log_up = base.log_up if r > 0 else (_LOG if base.low is not None and base.low[0] > -INF else None)
    return Size(up, low, sign, log_up)


def _exp(g: Size) -> Size:
    if g.zero or (g.up is not None and g.up <= _ONE):
        return _bounded(1, _ONE)  # e^{-C} ≤ exp(g) ≤ e^{C}
    if g.sign == -1:
        if g.low is not None and g.low > _LOG:
            return Size(_TINY, None, 1, g.up)  # decays faster than every power of z
        return _bounded(1)  # 0 < exp(g) ≤ 1
    if g.sign == 1 and g.low is not None and g.low > _LOG:
        return Size(_HUGE, _HUGE, 1, g.up)  # grows faster than every power of z
    return Size(None, None, 1, g.up)


def _log(g: Size) -> Size | None:
    if g.sign != 1 or g.low is None or g.up is None:
        return None
    if g.up <= _ONE and g.low >= _ONE:
        return _bounded()  # log of a function between two positive constants
    if g.up[0] < INF:
        up: Order | None = _LOG
    else:
        up = g.log_up
        if up is None:
            return None
        up = max(up, _LOG)
    if g.low[0] > 0:
        return Size(up, _LOG, 1, _LOG)
    return Size(up, None, None, _LOG)


def _tends_to_infinity(g: Size) -> int | None:
    """+1 / −1 when ``g → ±∞`` is proved (``|g| ≥ c·z^a`` with ``a > 0``), else None."""
    if g.sign in (1, -1) and g.low is not None and g.low[0] > 0:
        return g.sign
    return None


def size_at_infinity(e: sp.Expr) -> Size | None:
    """The proved :class:`Size` of a smooth expression in ``z`` as ``z → +∞``, or None."""
    try:
        return _size(e)
    except RecursionError:
        return None


@functools.lru_cache(maxsize=4096)
def _size(e: sp.Expr) -> Size | None:
    if not e.has(Z):
        return _const(e)
    if e == Z:
        return Size(_LIN, _LIN, 1, _LOG)
    if isinstance(e, sp.Add):
        parts = [_size(a) for a in e.args]
        return None if any(p is None for p in parts) else _sum(parts)  # type: ignore[arg-type]
    if isinstance(e, sp.Mul):
        parts = [_size(a) for a in e.args]
        return None if any(p is None for p in parts) else _product(parts)  # type: ignore[arg-type]
    if isinstance(e, sp.Pow):
        base, exp = e.args
        if exp.has(Z):
            return _exp_size(exp * sp.log(base)) if (not base.has(Z) and exact_sign(base) == 1) else None
        if not exp.is_Rational:
            return None
        b = _size(base)
        return None if b is None else _power(b, Fraction(int(exp.p), int(exp.q)))
    if isinstance(e, sp.exp):
        return _exp_size(e.args[0])
    if isinstance(e, sp.log):
        g = _size(e.args[0])
        return None if g is None else _log(g)
    if isinstance(e, (sp.tanh, sp.erf, sp.atan, sp.sin, sp.cos, sp.erfc, sp.sinh, sp.cosh)) and \
            not_proved_real(e.args[0]) is not None:
        return None  # the bounds below hold for a real argument only (erf(i·z) is unbounded)
    if isinstance(e, (sp.tanh, sp.erf, sp.atan)):
        g = _size(e.args[0])
        to = None if g is None else _tends_to_infinity(g)
        return _bounded(to, _ONE if to is not None else None)
    if isinstance(e, (sp.sin, sp.cos)):
        return _bounded()
    if isinstance(e, sp.erfc):
        g = _size(e.args[0])
        to = None if g is None else _tends_to_infinity(g)
        if to == 1:
            return Size(_TINY, None, 1, None)  # erfc(g) ≤ exp(−g²) decays faster than every power
        return _bounded(1, _ONE if to == -1 else None)  # 0 < erfc < 2, → 2 when g → −∞
    if isinstance(e, (sp.sinh, sp.cosh)):
        g = _size(e.args[0])
        if g is None:
            return None
        if g.zero or (g.up is not None and g.up <= _ONE):
            return _bounded(1 if isinstance(e, sp.cosh) else None, _ONE if isinstance(e, sp.cosh) else None)
        to = _tends_to_infinity(g)
        if to is not None and g.low is not None and g.low > _LOG:
            return Size(_HUGE, _HUGE, 1 if isinstance(e, sp.cosh) else to, g.up)
        return None
    if isinstance(e, sp.Abs):
        g = _size(e.args[0])
        return None if g is None else Size(g.up, g.low, 0 if g.zero else 1, g.log_up)
    return None


def _exp_size(arg: sp.Expr) -> Size | None:
    g = _size(arg)
    return None if g is None else _exp(g)


def _order_text(p: Order) -> str:
    a, b = p
    if a == INF:
        return "faster than every power of z"
    if a == -INF:
        return "faster than every negative power of z (→ 0)"
    z = "1" if a == 0 else ("z" if a == 1 else f"z^{a}")
    return z if b == 0 else (f"log(z)^{b}" if a == 0 else f"{z}·log(z)^{b}")


def _classify(s: Size) -> str | None:
    if s.up is None:
        return None
    if s.up <= _ONE:
        return "bounded"
    if s.up < _LIN:
        return "sublinear"
    if s.up <= _LIN:
        return "linear" if (s.low is not None and s.low >= _LIN) else "at most linear"
    if s.low is not None and s.low > _LIN:
        return "superlinear"
    return None


@dataclass(frozen=True)
class GrowthFact:
    """``evidence`` covers both ends; ``growth_class`` is the faster of the two."""

    evidence: Evidence
    plus_infinity: str | None
    minus_infinity: str | None
    growth_class: str | None
    locally_bounded: bool

    @property
    def sublinear(self) -> bool:
        """Proved ``σ(z) = o(|z|)`` at both ends."""
        return self.growth_class in ("bounded", "sublinear")

    @property
    def degree_bound(self) -> int | None:
        """A proved ``N`` with ``|σ(z)| = O(|z|^N)`` at both ends (0 or 1), else None."""
        if self.growth_class in ("bounded",):
            return 0
        if self.growth_class in ("sublinear", "linear", "at most linear"):
            return 1
        return None


def _end(e: sp.Expr, direction: int) -> tuple[str | None, list[Step]]:
    label = "+∞" if direction > 0 else "−∞"
    mirrored = e if direction > 0 else e.xreplace({Z: -Z})
    size = size_at_infinity(mirrored)
    cls = None if size is None else _classify(size)
    if cls is None and mirrored.has(sp.sinh, sp.cosh, sp.tanh):
        # hidden zeros such as cosh² − sinh² − 1 cancel exactly once written with exp (an identity)
        alt = sp.expand(mirrored.rewrite(sp.exp))
        if alt != mirrored:
            size = size_at_infinity(alt)
            cls = None if size is None else _classify(size)
    if cls is None or size is None or size.up is None:
        return None, [Step(f"no bound at {label} follows from the bound rules for σ(z) = {sp.sstr(e)}")]
    text = f"at {label}, |σ(z)| = O({_order_text(size.up)})"
    if size.low is not None and cls in ("linear", "superlinear"):
        text += f" and |σ(z)| ≥ c·{_order_text(size.low)}"
    return cls, [Step(text + f" by the bound rules (sums, products, powers, exp, log, bounded functions): {cls}")]


@functools.lru_cache(maxsize=512)
def growth_fact(expr: sp.Expr) -> GrowthFact:
    why = not_proved_real(expr)
    if why is not None:
        return GrowthFact(unknown(f"σ is not proved real-valued and finite on R: {why}"), None, None, None, False)
    bounded_locally = locally_bounded(expr)
    form = piecewise_form(expr)
    if form is None:
        return GrowthFact(unknown("the case splits of σ could not be decided exactly"), None, None, None,
                          bounded_locally)
    plus, plus_steps = _end(form.pieces[-1].expr, 1)
    minus, minus_steps = _end(form.pieces[0].expr, -1)
    steps = plus_steps + minus_steps
    if plus is None or minus is None:
        return GrowthFact(unknown("no growth bound at infinity follows from the bound rules", *steps), plus, minus,
                          None, bounded_locally)
    cls = max(plus, minus, key=GROWTH_ORDER.index)
    steps.append(Step(f"growth: {plus} at +∞, {minus} at −∞, so {cls} overall"))
    steps.append(Step("σ is locally bounded (continuous, or with finitely many bounded jumps)" if bounded_locally
                      else "local boundedness of σ is not shown"))
    return GrowthFact(proved(Stage.SYMBOLIC, *steps), plus, minus, cls, bounded_locally)
