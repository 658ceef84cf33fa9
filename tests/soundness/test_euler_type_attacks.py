"""Round 3 referee: attacks on the Euler-type results (Cor. R-log, Cor. R-pow, R-no-flip for two kink
exponents), Theorem W and the width query, and the results that landed after them. Each case asserts the
true answer (checked by hand, in exact arithmetic, or by an independent enumeration) or an honest `open`;
docs/referee-attacks.md ("Round 3 referee") has the log."""

from __future__ import annotations

import itertools
import random
import re

import pytest
import sympy as sp

from symabsorb import api

BUDGET = 120
TLOG = "if z >= 0 and z <= 0 then 0 else z*log(abs(z))"


def _verdicts(spec: str) -> dict[str, tuple[str, str | None, str]]:
    report = api.prove(spec, budget=BUDGET)
    return {r.query: (r.verdict, r.decided_by, r.condition or "") for r in report.results}


# ---- Euler type: classify just outside the families -------------------------------------------------------

@pytest.mark.parametrize(("expr", "verdict", "by"), [
    (TLOG, "conditional", "R-log"),
    # gamma = 2: z log z^2 = 2 z log|z|; gamma = 1/log 2: the condition is still the span
    ("if z >= 0 and z <= 0 then 0 else z*log(z^2)", "conditional", "R-log"),
    ("if z >= 0 and z <= 0 then 0 else z*log(abs(z))/log(2)", "conditional", "R-log"),
    ("if z > 0 then z*log(z) else if z < 0 then z*log(-z) else 0", "conditional", "R-log"),
    # a quadratic or tiny cubic polynomial part, a kink or a constant next to t log|t|: the remainder
    # couples other degrees through mu_i (Theorem R's condition is no longer the span): open
    ("if z >= 0 and z <= 0 then 0 else z*log(abs(z)) + z^2", "open", None),
    ("if z >= 0 and z <= 0 then 0 else z*log(abs(z)) + z^3/1000000", "open", None),
    ("if z >= 0 and z <= 0 then 0 else z*log(abs(z)) + abs(z)", "open", None),
    ("if z >= 0 and z <= 0 then 0 else z*log(abs(z)) + 1", "open", None),
    # value 1 at 0: discontinuous
    ("if z >= 0 and z <= 0 then 1 else z*log(abs(z))", "open", None),
    # different log coefficients on the two rays: not gamma t log|t|
    ("if z > 0 then z*log(z) else if z < 0 then 2*z*log(-z) else 0", "open", None),
    # |z| log|z| is even
    ("if z >= 0 and z <= 0 then 0 else abs(z)*log(abs(z))", "impossible", "L-parity"),
    # odd part exactly z (the log term is even): the flip is sufficient, nothing more
    ("if z >= 0 and z <= 0 then 0 else z + z^2*log(abs(z))", "conditional", "L-odd-linear"),
    # R-pow and its neighbours
    ("z + abs(z)^(3/2)", "conditional", "R-pow"),
    ("z + abs(z)^1.5", "conditional", "R-pow"),
    ("z + (z^2)^(3/4)", "conditional", "R-pow"),
    ("z + abs(z)^(3/2) - relu(z)^(3/2)*2", "conditional", "R-pow"),
    ("z + relu(z)^(1/2)", "conditional", "R-pow"),
    # extra terms: a quadratic, a constant, a tiny cubic, a second exponent, a kink off 0
    ("z + abs(z)^(3/2) + z^2", "conditional", "L-odd-linear"),
    ("z + abs(z)^(3/2) + 1", "conditional", "L-odd-linear"),
    ("z + abs(z)^(3/2) + z^3/10^30", "open", None),
    ("z + abs(z)^(3/2) + abs(z)^(5/2)", "conditional", "R-linear-odd"),
    ("z + abs(z)^(3/2) + abs(z)/10^30", "conditional", "R-linear-odd"),
    ("z + abs(z - 1/10^30)^(3/2)", "open", None),
    # c = 0: positively homogeneous of degree 3/2
    ("abs(z)^(3/2)", "impossible", "Prop. 5"),
    # two kink exponents of different parity: Sym(sigma) = {(1, 1)}
    ("abs(z) - z*abs(z)", "impossible", "R-no-flip"),
    ("abs(z) + z*abs(z)", "impossible", "R-no-flip"),
    ("z + relu(z)^2 + relu(-z)^3", "impossible", "R-no-flip"),
])
def test_euler_classify(expr: str, verdict: str, by: str | None) -> None:
    r = api.classify(expr, budget=BUDGET)
    assert r.verdict == verdict
    if by is not None:
        assert by in (r.decided_by or "")
    assert "cor11" not in (getattr(r, "cited", ()) or ())


@pytest.mark.parametrize(("expr", "verdict"), [
    ("z + abs(z)^(3/2)", "impossible"),          # g(0) = 0 (Prop. 6 or Cor. G2)
    (TLOG, "impossible"),                          # odd gate
    ("if z >= 0 and z <= 0 then 1 else 1 + z*log(abs(z))", "conditional"),  # g(t) + g(-t) = 2: flip only
])
def test_euler_gates(expr: str, verdict: str) -> None:
    assert api.classify(expr, True, budget=BUDGET).verdict == verdict


def test_euler_parameters() -> None:
    """a*z + |z|^(3/2) with a unrestricted contains a = 0 (homogeneous): open; a > 0: R-pow; a free exponent
    k > 1 contains k = 2 (z + z^2) and k = 3: only the flip (sufficient) is claimed."""
    got = _verdicts("""
activation pa(z; a) = a*z + abs(z)^(3/2)
activation pa2(z; a > 0) = a*z + abs(z)^(3/2)
activation pk(z; k > 1) = z + abs(z)^k
activation lg2(z; g != 0) = if z >= 0 and z <= 0 then 0 else z + g*z*log(abs(z))
classify pa
classify pa2
classify pk
classify lg2
""")
    assert [v[0] for v in got.values()] == ["open", "conditional", "conditional", "open"]
    assert "R-pow" in (got["classify pa2"][1] or "") and got["classify pk"][1] == "L-odd-linear"


EULER_WEIGHTS = """
activation tl(z) = if z >= 0 and z <= 0 then 0 else z*log(abs(z))
activation tl3(z) = if z >= 0 and z <= 0 then 0 else z*log(abs(z)) + z^2
activation pw(z) = z + abs(z)^(3/2)
activation pwo(z) = z + sign(z)*abs(z)^(3/2)
activation pwh(z) = -2*z + relu(z)^(1/2)
block l_diag { activation: tl dim: 2 width: 2 W_up: [[1,0],[0,1]] W_down: [[1,0],[0,1]] }
block l_off { activation: tl dim: 2 width: 2 skip: [[0,1],[0,0]] W_up: [[1,0],[0,1]] W_down: [[1,0],[0,1]] }
block l_deg { activation: tl dim: 2 width: 2 skip: [[0,1],[0,0]] W_up: [[1,0],[2,0]] W_down: [[1,0],[0,1]] }
block l_zero { activation: tl dim: 2 width: 2 skip: [[0,1],[0,0]] W_up: [[1,0],[0,1]] W_down: [[1,0],[0,0]] }
block l_r1 { activation: tl dim: 2 width: 1 skip: [[1,1],[1,1]] W_up: [[1,1]] W_down: [[1],[1]] }
block l_poly { activation: tl3 dim: 2 width: 2 W_up: [[1,0],[0,1]] W_down: [[1,0],[0,1]] }
block l_bias { activation: tl dim: 2 width: 2 W_up: [[1,0],[0,1]] W_down: [[1,0],[0,1]] b_up: [1, 0] b_down: [0,0] }
block l_absb { activation: tl dim: 2 width: 2 skip: [[0,1],[0,0]] W_up: [[1,0],[0,1]] W_down: [[1,0],[0,1]] absorber_bias: true }
block ln_a { activation: tl dim: 2 width: 2 W_up: [[1,0],[0,1]] W_down: [[1,1],[0,2]] norm: post-ln }
block ln_b { activation: tl dim: 2 width: 2 W_up: [[1,0],[0,1]] W_down: [[1,1],[0,2]] }
block ln_c { activation: tl dim: 2 width: 2 W_up: [[1,0],[0,1]] W_down: [[1,1],[1,-1]] norm: post-ln }
block l_prms { activation: tl dim: 2 width: 2 skip: [[0,1],[0,0]] W_up: [[1,0],[0,1]] W_down: [[1,0],[0,1]] norm: post-rms }
block l_hc { activation: tl dim: 1 width: 2 skip: hyper(n: 2, mix: [[1, 1], [0, 1]]) W_up: [[1,0],[0,1]] W_down: [[1,0],[0,1]] }
block p_m3 { activation: pw dim: 1 width: 1 skip: scaled(-3) W_up: [[1]] W_down: [[1]] }
block p_m1 { activation: pw dim: 1 width: 1 skip: scaled(-1) W_up: [[1]] W_down: [[1]] }
block po_m3 { activation: pwo dim: 1 width: 1 skip: scaled(-3) W_up: [[1]] W_down: [[1]] }
block po_p { activation: pwo dim: 1 width: 1 skip: scaled(5) W_up: [[1]] W_down: [[1]] }
block ph2 { activation: pwh dim: 1 width: 1 skip: scaled(-3) W_up: [[1]] W_down: [[1]] }
block p_d2 { activation: pw dim: 2 width: 3 skip: [[-5,1],[1,2]] W_up: [[1,0],[0,1],[1,1]] W_down: [[1,0,1],[0,1,1]] }
block p_deg { activation: pw dim: 1 width: 2 skip: scaled(-1) W_up: [[1],[2]] W_down: [[1, 1]] }
block p_bias { activation: pw dim: 1 width: 1 skip: scaled(-3) W_up: [[1]] W_down: [[1]] b_up: [1] }
block ln_p2 { activation: pw dim: 2 width: 2 skip: scaled(-1) W_up: [[1,0],[0,1]] W_down: [[1,1],[0,2]] norm: post-ln }
absorb l_diag
absorb l_off
absorb l_deg
absorb l_zero
absorb l_r1
absorb l_poly
absorb l_bias
absorb l_absb
absorb ln_a
absorb ln_b
absorb ln_c
absorb l_prms
absorb l_hc
absorb p_m3
absorb p_m1
absorb po_m3
absorb po_p
absorb ph2
absorb p_d2
absorb p_deg
absorb p_bias
absorb ln_p2
"""


def test_euler_concrete_weights() -> None:
    """By hand: span{e1e1', e2e2'} holds I, not e1e2'; degenerate weights never not-absorbable; post-LN
    asks P in span{P a_i w_i'} (ln_a: yes, while the bare ln_b has I outside [[x, y], [0, 2y]]); a hyper
    mix [[1,1],[0,1]] is not diagonal; R-pow at d = m = 1: D = M/c must be != -1 (even q) or > -1 (odd q):
    M = -3 yes (8 sigma(-x/4)), M = -1 no; odd q: -3 no, 5 yes (216 sigma(x/36)); c = -2, k = 1/2, M = -3:
    D = 3/2 (mu = 25/4); ln_p2 needs D = (-1, -1): no."""
    got = {k.removeprefix("absorb "): v[0] for k, v in _verdicts(EULER_WEIGHTS).items()}
    assert got == {
        "l_diag": "absorbable", "l_off": "not-absorbable", "l_deg": "open", "l_zero": "open",
        "l_r1": "absorbable", "l_poly": "open", "l_bias": "open", "l_absb": "open",
        "ln_a": "absorbable", "ln_b": "not-absorbable", "ln_c": "open", "l_prms": "not-absorbable",
        "l_hc": "not-absorbable", "p_m3": "absorbable", "p_m1": "not-absorbable", "po_m3": "not-absorbable",
        "po_p": "absorbable", "ph2": "absorbable", "p_d2": "absorbable", "p_deg": "open", "p_bias": "open",
        "ln_p2": "not-absorbable"}


def test_euler_witnesses_in_50_digits() -> None:
    """The witnesses of l_r1 (t log|t|, mu = e) and p_d2 (z + |z|^(3/2), mu = -1/25, 1/4, 1/4) reproduce
    Mx + B(x) at random rational points to 40 digits."""
    import mpmath as mp

    mp.mp.dps = 50
    spec = api.load(EULER_WEIGHTS)

    def tl(t: mp.mpf) -> mp.mpf:
        return mp.mpf(0) if t == 0 else t * mp.log(abs(t))

    def pw(t: mp.mpf) -> mp.mpf:
        return t + abs(t) ** mp.mpf(1.5)

    cases = {"l_r1": (tl, [[1, 1], [1, 1]], [[1, 1]], [[1], [1]]),
             "p_d2": (pw, [[-5, 1], [1, 2]], [[1, 0], [0, 1], [1, 1]], [[1, 0, 1], [0, 1, 1]])}
    rng = random.Random(3)
    for name, (f, m_skip, up, down) in cases.items():
        w = api.absorb(spec, name, budget=BUDGET).witness
        assert w is not None
        up2 = [[mp.mpf(sp.N(x, 60)) for x in row] for row in sp.Matrix(w.w_up).tolist()]
        down2 = [[mp.mpf(sp.N(x, 60)) for x in row] for row in sp.Matrix(w.w_down).tolist()]
        for _ in range(5):
            x = [mp.mpf(rng.randint(-50, 50)) / rng.randint(1, 9) for _ in range(2)]

            def block(u: list, dn: list, x: list = x, f=f) -> list:  # type: ignore[no-untyped-def]
                h = [f(sum(mp.mpf(r[j]) * x[j] for j in range(2))) for r in u]
                return [sum(mp.mpf(dn[i][k]) * h[k] for k in range(len(h))) for i in range(2)]

            lhs = block(up2, down2)
            rhs = [a + b for a, b in zip([sum(m_skip[i][j] * x[j] for j in range(2)) for i in range(2)],
                                         block(up, down), strict=True)]
            assert all(abs(a - b) < mp.mpf(10) ** -40 for a, b in zip(lhs, rhs, strict=True))


# ---- Theorem W: the enumeration against an independent implementation -------------------------------------

def _n1(wu: sp.Matrix, wd: sp.Matrix) -> bool:
    for i in range(wu.rows):
        if wu.row(i).is_zero_matrix or wd.col(i).is_zero_matrix:
            return False
        if any(sp.Matrix.vstack(wu.row(i), wu.row(j)).rank() < 2 for j in range(i)):
            return False
    return True


def _wstar(wu: sp.Matrix, wd: sp.Matrix, m_skip: sp.Matrix, c: sp.Rational) -> int:
    """min over labellings (keep, flip = S, two units = J) of m + |J| + 2 dim N_S(ker W_J)."""
    m, d = wu.rows, wu.cols
    best = None
    for lab in itertools.product((0, 1, 2), repeat=m):
        s = [i for i in range(m) if lab[i] == 1]
        j = [i for i in range(m) if lab[i] == 2]
        n = m_skip + 2 * c * (wd[:, s] * wu[s, :] if s else sp.zeros(d, d))
        if j:
            ker = wu[j, :].nullspace()
            r = (n * sp.Matrix.hstack(*ker)).rank() if ker else 0
        else:
            r = n.rank()
        best = len(j) + 2 * r if best is None else min(best, len(j) + 2 * r)
    assert best is not None
    return m + best


def _mat(a: sp.Matrix) -> str:
    return "[" + ",".join("[" + ",".join(str(x) for x in a.row(i)) + "]" for i in range(a.rows)) + "]"


@pytest.mark.parametrize("seed", [1, 2])
def test_width_enumeration_matches_an_independent_one(seed: int) -> None:
    rng = random.Random(seed)
    acts = [("relu", sp.Rational(1, 2)), ("gelu", sp.Rational(1, 2)), ("lk", sp.Rational(3, 4)),
            ("lk3", sp.Integer(-1))]
    lines = ["activation lk(z) = if z >= 0 then z else z/2", "activation lk3(z) = if z >= 0 then z else -3*z"]
    cases = []
    while len(cases) < 12:
        d = rng.choice([2, 2, 3])
        m = rng.choice([1, 2, 3]) if d == 2 else rng.choice([1, 2])
        wu = sp.Matrix(m, d, lambda i, j: rng.randint(-2, 2))
        wd = sp.Matrix(d, m, lambda i, j: rng.choice([-1, 0, 1, sp.Rational(1, 2), -sp.Rational(1, 2)]))
        act, c = rng.choice(acts)
        s = [i for i in range(m) if rng.random() < 0.5]
        m_skip = (sp.eye(d) if rng.random() < 0.4 else
                  -2 * c * (wd[:, s] * wu[s, :] if s else sp.zeros(d, d))
                  + sp.Matrix(d, 1, lambda i, j: rng.randint(-1, 1)) * sp.Matrix(1, d, lambda i, j: rng.randint(-1, 1)))
        if m_skip.is_zero_matrix or not _n1(wu, wd):
            continue
        name = f"b{len(cases)}"
        lines.append(f"block {name} {{ activation: {act} dim: {d} width: {m} skip: {_mat(m_skip)} "
                     f"W_up: {_mat(wu)} W_down: {_mat(wd)} }}\nwidth {name}")
        cases.append((name, _wstar(wu, wd, m_skip, c)))
    got = _verdicts("\n".join(lines) + "\n")
    for name, want in cases:
        verdict, _, cond = got[f"width {name}"]
        assert verdict == "minimal-width" and re.fullmatch(rf"w\* = {want}", cond), (name, want, cond)


WIDTH_EDGES = """
activation r0(z) = if z >= 0 and z <= 0 then 1 else max(0, z)
activation rr(z) = max(0,z) + max(0, z - 1) + max(0, -z - 1)
activation g2(z) = z^2 + z*Phi(z)
activation pr(z; a) = if z >= 0 then z else a*z
# B = 0 (w2 = 2 w1, a2 = -a1/2): true w* = 2 rank M = 4; degenerate, so no lower bound above it
block deg0 { activation: relu dim: 2 width: 2 W_up: [[1,0],[2,0]] W_down: [[1,-1/2],[0,0]] }
block val0 { activation: r0 dim: 2 width: 2 W_up: [[1,0],[0,1]] W_down: [[1,0],[0,1]] }
block rrb { activation: rr dim: 2 width: 2 W_up: [[1,0],[0,1]] W_down: [[1,0],[0,1]] }
block g2b { activation: g2 dim: 2 width: 2 W_up: [[1,0],[0,1]] W_down: [[1,0],[0,1]] }
block mish { activation: mish dim: 2 width: 2 W_up: [[1,0],[0,1]] W_down: [[1,0],[0,1]] }
block gat { activation: swiglu dim: 2 width: 2 W_gate: [[1,0],[0,1]] W_up: [[1,0],[0,1]] W_down: [[1,0],[0,1]] }
block prb { activation: pr dim: 2 width: 2 W_up: [[1,0],[0,1]] W_down: [[1,0],[0,1]] }
block sym1 { activation: relu dim: 2 width: 1 }
block sym3 { activation: relu dim: 1 width: 2 }
block sym4 { activation: gelu dim: d width: 4*d }
block sym6 { activation: relu dim: 2 width: 3 skip: [[1,0],[0,0]] }
block sym12 { activation: relu dim: 2 width: 2 skip: scaled(0) }
width deg0
width val0
width rrb
width g2b
width mish
width gat
width prb
width sym1
width sym3
width sym4
width sym6
width sym12
"""


def test_width_edges() -> None:
    """rrb: relu + relu(z-1) + relu(-z-1) has odd part z/2 and kinks at +-1 (DI): Theorem W, w* = 4 by the
    enumeration; g2b: z^2 + GELU has odd part z/2 and DI (erf): Theorem W holds (the quadratic parts cancel
    inside each exact identity); generic: m + 2d - min(m, d), m + min(2r, d); Mish, SwiGLU: no width."""
    got = {k.removeprefix("width "): (v[0], v[2]) for k, v in _verdicts(WIDTH_EDGES).items()}
    # deg0's units cancel (C = 0): the block is x, and Theorem D (issue 30) gives the exact w* = 2·rank(I) = 4
    assert got["deg0"] == ("minimal-width", "w* = 4")
    assert got["val0"] == ("width-bounds", "w* <= 4")
    assert got["rrb"] == ("minimal-width", "w* = 4") and got["g2b"] == ("minimal-width", "w* = 4")
    assert got["mish"][0] == "impossible" and got["gat"][0] == "impossible" and got["prb"][0] == "open"
    assert got["sym1"][1] == "w* = 4" and got["sym3"][1] == "w* <= 2" and got["sym4"][1] == "w* = 5*d"
    assert got["sym6"][1] == "w* = 5" and got["sym12"][1] == "w* = 2"


# ---- Findings: the width query outside the bare setting (fixed in theory/width.py, L-pre-norm.toml) -------

WIDTH_SETTINGS = """
# pre-norm: B'(N(x)) is bounded for every width (Lemma N): no width absorbs it
block preln { activation: relu dim: 2 width: 2 W_up: [[1,0],[0,1]] W_down: [[1,0],[0,1]] norm: pre-ln }
block prelns { activation: gelu dim: d width: 4*d norm: pre-rms }
# post-LN with every P a_i = 0: LN(x + B(x)) = LN(x), absorbed by the pair u(relu(v.x) - relu(-v.x)),
# u = (1,-1), v = (1,-1)/2: true w* = 2 < m = 3
block plnz { activation: relu dim: 2 width: 3 W_up: [[1,0],[0,1],[1,1]] W_down: [[1,1,1],[1,1,1]] norm: post-ln }
# B biased, B' bias-free: B' is positively homogeneous (relu) or vanishes at 0 (gelu), R(0) = (sigma(1), 0):
# no width absorbs it, so no upper bound may be claimed
block babf { activation: relu dim: 2 width: 2 W_up: [[1,0],[0,1]] W_down: [[1,0],[0,1]] b_up: [1, 0] absorber_bias: false }
block babfg { activation: gelu dim: 2 width: 2 W_up: [[1,0],[0,1]] W_down: [[1,0],[0,1]] b_up: [1, 0] absorber_bias: false }
block babfs { activation: relu dim: 2 width: 2 bias: true absorber_bias: false }
# both biased: the pairs construction (B's units + bias-free pairs) stands
block bias1 { activation: relu dim: 2 width: 2 W_up: [[1,0],[0,1]] W_down: [[1,0],[0,1]] b_up: [1, 0] }
width preln
width prelns
width plnz
width babf
width babfg
width babfs
width bias1
"""


def test_width_outside_the_bare_setting() -> None:
    """Were: preln 'absorbable, 2 <= w* <= 4' (decided by Lemma N!), plnz '3 <= w* <= 5' (the true w* is 2),
    babf/babfg '2 <= w* <= 4' and babfs '2 <= w* <= 6' (no width works): the generic constructions and the
    line count ignored the biases and the norm placement."""
    got = {k.removeprefix("width "): (v[0], v[2]) for k, v in _verdicts(WIDTH_SETTINGS).items()}
    assert got["preln"][0] == "impossible" and got["prelns"][0] == "impossible"
    _verdict, cond = got["plnz"]
    low = re.match(r"(\d+) <= w\*", cond)
    assert low is None or int(low.group(1)) <= 2
    for name in ("babf", "babfg", "babfs"):
        assert got[name][0] in ("open", "impossible"), name
    assert got["bias1"][0] == "width-bounds"


def test_width_of_degenerate_file_weights(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Six units on the line e1 with sum_i i*a_i = 0: B = 0 and R(x) = x1 e1 = e1(relu(x1) - relu(-x1)), so
    w* = 2 < m = 6. Was 'w* = m' (the line count assumed nondegenerate file weights)."""
    np = pytest.importorskip("numpy")
    np.savez(tmp_path / "deg6.npz", W_up=np.array([[1.0, 0], [2, 0], [3, 0], [4, 0], [5, 0], [6, 0]]),
             W_down=np.array([[1.0, 1, 1, 1, 1, -2.5], [0, 0, 0, 0, 0, 0]]))
    spec = tmp_path / "d6.absorb"
    spec.write_text('block fdeg6 { activation: relu dim: 2 weights: "deg6.npz" skip: [[1,0],[0,0]] }\nwidth fdeg6\n')
    (r,) = api.prove(spec, budget=BUDGET).results
    assert r.verdict in ("minimal-width", "width-bounds", "open")
    assert "=" not in (r.condition or "").replace("<=", "") and not re.match(r"\S+ <= w", r.condition or "")


def test_width_of_a_linear_post_ln_block() -> None:
    """sigma = 2z, post-LN, M = I, W_up = e1', W_down = e1: LN(x + B(x)) = LN(3x1, x2) needs only
    P(B'(x)) = P diag(3, 1) x, of rank 1 (one unit, v = (3/2, -1/2), b = (1, -1)/2). Was 'w* = 2'
    (the rank of M + c W_down W_up without P). Post-RMSNorm is the ordinary question: rank 2."""
    got = _verdicts("""
activation lin(z) = 2*z
block lpln { activation: lin dim: 2 width: 1 W_up: [[1,0]] W_down: [[1],[0]] norm: post-ln }
block lprms { activation: lin dim: 2 width: 1 W_up: [[1,0]] W_down: [[1],[0]] norm: post-rms }
width lpln
width lprms
absorb lpln
""")
    assert got["width lpln"][0] == "minimal-width" and got["width lpln"][2] == "w* = 1"
    assert got["width lprms"][2] == "w* = 2" and got["absorb lpln"][0] == "absorbable"


AFFINE = """
activation e1(z) = elu(z - 1)
activation e2(z) = elu(z) + 1/(1 + z^2)
activation rg(z) = max(0, z) + exp(-z^2)
activation r1(z) = max(0, z - 1)
activation e4(z) = if z >= 0 then z + exp(-z) - 1 else exp(z) - 1
activation ea(z) = elu(z) + abs(z - 2)/10^20
activation rt(z) = max(0, z) + tanh(z)
block b1 { activation: e1 dim: 2 bias: true }
block b2 { activation: e2 dim: 2 bias: true }
block b3 { activation: rg dim: 2 bias: true }
block b4 { activation: r1 dim: 2 bias: true }
block b8 { activation: e4 dim: 2 bias: true }
block b10 { activation: ea dim: 2 bias: true }
block b12 { activation: elu dim: 2 absorber_bias: true }
block b13 { activation: elu dim: 2 width: 2 W_up: [[1,0],[1,0]] W_down: [[1,-1],[0,0]] bias: true }
block b14 { activation: rt dim: 2 bias: true }
absorb b1
absorb b2
absorb b3
absorb b4
absorb b8
absorb b10
absorb b12
absorb b13
absorb b14
"""


def test_lemma_a_and_r_aff_0() -> None:
    """Lemma A re-derived (kappa = |mu|, nu = (1 - mu)s*). elu(z - 1), elu + 1/(1 + z^2), relu + tanh
    (s* = -2, one kink at 0): Sym_aff trivial, R-aff-0. relu + Gaussian and the odd-part-z ELU-like e4:
    s* = 0, Sym = {(+-1, 1)}, remainder t: W_S = -M (R-aff-1). relu(z - 1) (its kink is its hinge), two
    kinks, degenerate rows: open."""
    got = {k.removeprefix("absorb "): v[:2] for k, v in _verdicts(AFFINE).items()}
    for name in ("b1", "b2", "b12", "b14"):
        assert got[name] == ("impossible", "Cor. R-aff-0"), name
    assert got["b3"] == ("conditional", "Cor. R-aff-1") and got["b8"] == ("conditional", "Cor. R-aff-1")
    for name in ("b4", "b10", "b13"):
        assert got[name][0] == "open", name


def test_euler_parameters_decided_only_on_a_cell() -> None:
    """(a - 1)|z|^(3/2) with a > 0 vanishes at a = 1 (sigma = z): only the flip; a > 1: R-pow. |z| - a z|z|:
    two kink exponents for every a > 0 (R-no-flip); a >= 0 contains the even |z|: open. Gates of Euler type:
    1 + |z| - z|z| has Sym(g) = {(1, 1)} (G2), 1 + |z|^(3/2) a continuum with constant remainders: open."""
    got = _verdicts("""
activation f1(z; a > 0) = z + (a - 1)*abs(z)^(3/2)
activation f4(z; a > 1) = z + (a - 1)*abs(z)^(3/2)
activation f6(z; a > 0) = abs(z) - a*z*abs(z)
activation f7(z; a >= 0) = abs(z) - a*z*abs(z)
classify f1
classify f4
classify f6
classify f7
""")
    assert [v[:2] for v in got.values()] == [("conditional", "L-odd-linear"), ("conditional", "Cor. R-pow"),
                                             ("impossible", "R-no-flip"), ("open", None)]
    assert api.classify("1 + abs(z) - z*abs(z)", True, budget=BUDGET).verdict == "impossible"
    assert api.classify("1 + abs(z)^(3/2)", True, budget=BUDGET).verdict == "open"
