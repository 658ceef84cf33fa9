"""No structural zero test on a SymPy value outside a reviewed allow-list (issue 26 §1).

A SymPy value written as a hidden zero (``cosh(1)^2 - sinh(1)^2 - 1``, ``log 6 - log 2 - log 3``) is
not ``== 0``, not ``.is_zero`` and truthy: a test of that kind on a coefficient assumes "nonzero"
where the library can prove nothing, and Theorem SDI once called ReLU impossible that way. Every
zero/sign decision on a SymPy value goes through the exact sign decision
(``analysis.identity.exact_sign`` / ``prove_zero`` / ``proved_nonzero``); this test scans the
package's syntax tree for the structural tests and fails on any occurrence that is not in
:data:`ALLOWED` with the reason it is safe. An allow-listed line that no longer occurs fails too, so
the list stays the reviewed one.

Flagged (pragmatic, syntactic): ``x == 0`` / ``x != 0`` (also against ``0.0``, ``sp.S.Zero``,
``S.Zero``, ``sp.Integer(0)``), ``.is_zero``, ``.is_nonzero``, and the truth value of a call that
returns a SymPy expression (``if sp.simplify(e):``, ``not simplified(e)``). Comparisons whose other
side is visibly a Python integer (``len(...)``, ``x % n``, ``int(...)``, ``.count(...)``) are not
flagged.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

from tests.helpers import ROOT

PACKAGE = ROOT / "symabsorb"

#: Calls whose result is a SymPy expression: their truth value is a structural nonzero test.
_SYMPY_RESULT_CALLS = {"simplify", "simplified", "expand", "together", "cancel", "nsimplify", "factor", "radsimp",
                       "trigsimp", "powsimp", "expand_log", "sympify"}

_ZERO_NAMES = {"Zero"}


@dataclass(frozen=True)
class Hit:
    path: str  # relative to the package, with '/'
    line: int
    text: str  # the stripped source line
    kind: str

    def show(self) -> str:
        return f"symabsorb/{self.path}:{self.line}: {self.kind}: {self.text}"


def _is_zero_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant) and not isinstance(node.value, bool) and node.value == 0 \
            and isinstance(node.value, (int, float)):
        return True
    if isinstance(node, ast.Attribute) and node.attr in _ZERO_NAMES:
        return True  # sp.S.Zero, S.Zero
    if isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)) and len(node.args) == 1:
        name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
        arg = node.args[0]
        if name in ("Integer", "S", "Rational", "sympify") and isinstance(arg, ast.Constant) and arg.value == 0:
            return True
    return False


def _visibly_int(node: ast.expr) -> bool:
    """An expression that is a Python int whatever its operands are."""
    if isinstance(node, ast.Call):
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        return name in ("len", "int", "count", "sum_int", "round", "ord")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return True
    return False


def _call_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Name):
            return f.id
        if isinstance(f, ast.Attribute):
            return f.attr
    return None


def scan_source(path: str, source: str) -> list[Hit]:
    tree = ast.parse(source)
    lines = source.splitlines()
    hits: list[Hit] = []

    def hit(node: ast.AST, kind: str) -> None:
        lineno = getattr(node, "lineno", 0)
        hits.append(Hit(path, lineno, lines[lineno - 1].strip(), kind))

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                if not isinstance(op, (ast.Eq, ast.NotEq)):
                    continue
                a, b = operands[i], operands[i + 1]
                for zero, other in ((a, b), (b, a)):
                    if _is_zero_literal(zero) and not _visibly_int(other):
                        hit(node, "== 0" if isinstance(op, ast.Eq) else "!= 0")
                        break
        elif isinstance(node, ast.Attribute) and node.attr in ("is_zero", "is_nonzero"):
            hit(node, "." + node.attr)
        elif isinstance(node, (ast.If, ast.IfExp, ast.While, ast.Assert)):
            if _call_name(node.test) in _SYMPY_RESULT_CALLS:
                hit(node, "truth value of a SymPy expression")
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            if _call_name(node.operand) in _SYMPY_RESULT_CALLS:
                hit(node, "not <SymPy expression>")
        elif isinstance(node, ast.BoolOp):
            for v in node.values:
                if _call_name(v) in _SYMPY_RESULT_CALLS:
                    hit(node, "truth value of a SymPy expression")
    return hits


@functools.cache
def scan_package() -> tuple[Hit, ...]:
    out: list[Hit] = []
    for file in sorted(PACKAGE.rglob("*.py")):
        rel = file.relative_to(PACKAGE).as_posix()
        out.extend(scan_source(rel, file.read_text(encoding="utf-8")))
    return tuple(out)


# Reasons shared by many entries.
SIGN = 'an int from exact_sign (the exact sign decision), not a SymPy value'
ARB = 'a python-flint arb ball, and only when it is exact: an exact 0'
NUMPY = 'numpy float/integer arrays of file weights (floats only find candidates; exact checks decide)'
FRAC = "Fractions/ints of exact weight arithmetic (Python's exact rationals)"
INT = 'a Python int (index, count, degree or exponent)'
TEXT = 'text layout or parsing: ints and strings, no SymPy value'
GIVES_UP = 'a structural test whose failure only gives up (returns None/unknown): a hidden zero can make it miss, never claim'
LITERAL_ZERO = 'True only for a literal 0, which is 0: the other outcome proves nothing and is not used as a claim'
RATIONAL = 'an exact Rational (checked is_Rational / exact rational weights): == 0 is exact there'
DISPLAY = 'display only (how a value is printed), no decision rests on it'
CANONICAL = 'canonical after the exact sign decision (breakpoints, exponents and remainders hold the literal 0 for a proved zero)'
DEDUCTIVE = "SymPy's deductive assumption: True only when proved, None (undecided) on hidden zeros"

# (file relative to symabsorb/, stripped line content, why it is safe); generated once, then reviewed by hand
ALLOWED: tuple[tuple[str, str, str], ...] = (
    ('analysis/dilates.py',
     'exp_sides = {k: {lam: p for lam, p in v.items() if lam != 0} for k, v in sides.items() if v is not None}',
     'exponents from exponential_polynomial are canonical: exactly S.Zero when proved 0 (exact_sign)'),
    ('analysis/dilates.py',
     'if sp.expand(arg - omega * Z) != 0 or omega.has(Z):',
     GIVES_UP),
    ('analysis/dilates.py',
     'if sp.expand(n.args[0] - k * Z) == 0 and k.is_Integer:',
     GIVES_UP),
    ('analysis/dilates.py',
     'if sp.expand(poly + poly.xreplace({Z: -Z})) != 0:',
     GIVES_UP),
    ('analysis/enclosure.py',
     'elif v.is_exact() and v == 0:',
     ARB),
    ('analysis/enclosure.py',
     'if ball.value.is_exact() and ball.value == 0:',
     ARB),
    ('analysis/enclosure.py',
     'if man == 0:',
     'the integer mantissa of an exact binary number'),
    ('analysis/enclosure.py',
     'if s.is_exact() and s == 0:',
     ARB),
    ('analysis/enclosure.py',
     'if v.is_exact() and v == 0:',
     ARB),
    ('analysis/enclosure.py',
     'return {"<": s < 0, "<=": s <= 0, ">": s > 0, ">=": s >= 0, "==": s == 0, "!=": s != 0}[c.rel_op]',
     SIGN),
    ('analysis/engine.py',
     'pts += [b for b in form.breakpoints if b.is_Rational and b != 0]',
     RATIONAL),
    ('analysis/euler.py',
     'if am != 0:',
     DISPLAY),
    ('analysis/euler.py',
     'if any(e == 0 for e, _, _ in powers):',
     'exponents are Rationals (checked is_Rational): exact'),
    ('analysis/euler.py',
     'if ap != 0:',
     DISPLAY),
    ('analysis/euler.py',
     'if kink != 0 and exact_sign(kink) != 0:',
     'the literal test is a shortcut; exact_sign(kink) != 0 decides'),
    ('analysis/euler.py',
     'if term == 0:',
     'skips a literal 0 term; a hidden zero term is kept and decided by exact_sign below'),
    ('analysis/euler.py',
     'parts = [sp.sstr(self.poly)] if self.poly != 0 else []',
     DISPLAY),
    ('analysis/euler.py',
     'return ({k: v for k, v in out_p.items() if exact_sign(v) != 0},',
     SIGN),
    ('analysis/euler.py',
     'return None if s is None else s != 0',
     SIGN),
    ('analysis/euler.py',
     'return poly.degree() <= 1 and exact_sign(poly.coeff_monomial(1)) == 0',
     SIGN),
    ('analysis/euler.py',
     '{k: v for k, v in out_l.items() if exact_sign(v) != 0})',
     SIGN),
    ('analysis/growth.py',
     'if r == 0:',
     'a Fraction exponent: exact'),
    ('analysis/growth.py',
     'if s == 0:',
     SIGN),
    ('analysis/growth.py',
     'return self.sign == 0',
     SIGN),
    ('analysis/growth.py',
     'return z if b == 0 else (f"log(z)^{b}" if a == 0 else f"{z}·log(z)^{b}")',
     'display only (how a value is printed), no decision rests on it (Fraction exponents)'),
    ('analysis/growth.py',
     'z = "1" if a == 0 else ("z" if a == 1 else f"z^{a}")',
     'display only (how a value is printed), no decision rests on it (Fraction exponents)'),
    ('analysis/homogeneity.py',
     '"for every t > 0" + ("" if k_sign == 0 else " (and σ(0) = 0)"),',
     SIGN),
    ('analysis/homogeneity.py',
     'if k_sign != 0 and not prove_zero(value0):',
     SIGN),
    ('analysis/homogeneity.py',
     'if v1.is_exact() and v1 == 0 and not v2.contains(0):',
     ARB),
    ('analysis/identity.py',
     'if cheap == 0 or (not cheap.has(Z) and cheap.is_Number):',
     LITERAL_ZERO),
    ('analysis/identity.py',
     'if e == 0:',
     LITERAL_ZERO),
    ('analysis/identity.py',
     'if e.has(sp.sinh, sp.cosh, sp.tanh, sp.sin, sp.cos, sp.tan) and sp.expand(e.rewrite(sp.exp)) == 0:',
     'True only for a literal 0, which is 0: the other outcome proves nothing and is not used as'
     ' a claim (rewrite and expand are identities)'),
    ('analysis/identity.py',
     'if e.is_zero:',
     "SymPy's deductive assumption: True only when proved, None (undecided) on hidden zeros (par"
     "ameters' declared assumptions)"),
    ('analysis/identity.py',
     'if out != 0 and out.has(sp.exp, sp.log):',
     'only chooses which equal form to keep; a form that is not 0 proves nothing'),
    ('analysis/identity.py',
     'if s.is_zero or s == 0:',
     LITERAL_ZERO),
    ('analysis/identity.py',
     'return bool(e.has(sp.log) and sp.expand(sp.logcombine(e, force=False)) == 0)',
     'True only for a literal 0, which is 0: the other outcome proves nothing and is not used as'
     ' a claim (logcombine without force is an identity)'),
    ('analysis/identity.py',
     'return bool(simplified(e) == 0)',
     'True only for a literal 0, which is 0: the other outcome proves nothing and is not used as'
     ' a claim (simplify is an identity: 0 proves 0)'),
    ('analysis/identity.py',
     'return e == 0',
     "an int or Fraction (exact_zero's Python-number case)"),
    ('analysis/identity.py',
     'return sign != 0',
     SIGN),
    ('analysis/identity.py',
     'return sign == 0',
     SIGN),
    ('analysis/parity.py',
     'cuts = [c for i, c in enumerate(ordered) if i == 0 or compare(ordered[i - 1], c) != 0]',
     'compare() is an int from the exact sign decision'),
    ('analysis/parity.py',
     'pts += [abs(b) for b in form.breakpoints if b.is_Rational and b != 0]',
     RATIONAL),
    ('analysis/piecewise.py',
     'cuts = [r for i, r in enumerate(ordered) if i == 0 or compare(ordered[i - 1], r) != 0]  # equal, written apart',
     'compare() is an int from the exact sign decision'),
    ('analysis/piecewise.py',
     'if coeff != 0 and rest != k:',
     "as_coeff_Mul's coefficient is a SymPy Number (exact); a hidden zero factor stays in rest"),
    ('analysis/piecewise.py',
     'if not alpha.has(Z) and not beta.has(Z) and sp.expand(alpha * w + beta - lin) == 0 \\',
     'True only for a literal 0, which is 0: the other outcome proves nothing and is not used as'
     ' a claim; alpha itself is decided by exact_sign'),
    ('analysis/piecewise.py',
     'r = sp.S.Zero if sign == 0 else r',
     SIGN),
    ('analysis/piecewise.py',
     'return {"<": s < 0, "<=": s <= 0, ">": s > 0, ">=": s >= 0, "==": s == 0, "!=": s != 0}[c.rel_op]',
     SIGN),
    ('analysis/posdilates.py',
     'hits = [b for b in found if exact_sign(abs(b) - biggest) == 0]',
     SIGN),
    ('analysis/posdilates.py',
     'if beta.free_symbols or q.free_symbols - {Z} or q.degree() != 2 or q.coeff_monomial(Z) != 0:',
     GIVES_UP),
    ('analysis/posdilates.py',
     'if len(d_w.terms()) < 2 or sum(d_w.all_coeffs()) == 0 or sp.gcd(n_w, d_w).degree() > 0 or n_w.is_zero:',
     'polynomials over QQ/ZZ (domain checked above): exact'),
    ('analysis/posdilates.py',
     'if not lam.is_Rational or lam == 0:',
     RATIONAL),
    ('analysis/posdilates.py',
     'if pd.degree(Z) != 0:',
     INT),
    ('analysis/structure.py',
     'return bool(e.is_nonzero) or bool(e.is_positive)',
     DEDUCTIVE),
    ('analysis/structure.py',
     'return bool(v.is_nonzero) or exact_sign(v) in (-1, 1)',
     "SymPy's deductive assumption: True only when proved, None (undecided) on hidden zeros, then exact_sign"),
    ('analysis/symaff.py',
     'if side != 0:',
     SIGN),
    ('analysis/symmetry.py',
     '(r,) = [r for r in self.remainders() if r != 0]',
     'canonical after the exact sign decision (breakpoints, exponents and remainders hold the li'
     'teral 0 for a proved zero) (only reached once kind() decided every coefficient)'),
    ('analysis/symmetry.py',
     'if all(any(exact_sign(lam + other) == 0 for other in lams) for lam in lams):',
     SIGN),
    ('analysis/symmetry.py',
     'if all(exact_sign(c) == 0 for c in lin):',
     SIGN),
    ('analysis/symmetry.py',
     'if all(sg == 0 for sg in signs):',
     SIGN),
    ('analysis/symmetry.py',
     'if any(k % 2 == 0 and exact_sign(c) != 0 for (k,), c in poly.terms()):',
     SIGN),
    ('analysis/symmetry.py',
     'if any(sg is None for sg in signs.values()) or {k for k, sg in signs.items() if sg != 0} != {1}:',
     SIGN),
    ('analysis/symmetry.py',
     'if b == 0:',
     CANONICAL),
    ('analysis/symmetry.py',
     'if not lams or any(sg is None or sg == 0 for sg in signs):',
     SIGN),
    ('analysis/symmetry.py',
     'if same == 0:',
     SIGN),
    ('analysis/symmetry.py',
     'if sign != 0:',
     SIGN),
    ('analysis/symmetry.py',
     'if sp.expand(lin - k * Z) != 0 or k.has(Z) or k.is_real is not True:',
     GIVES_UP),
    ('analysis/symmetry.py',
     'key = sp.S.Zero if sign == 0 else lam',
     SIGN),
    ('analysis/symmetry.py',
     'lam0 = next(lam for lam in lams if all(exact_sign(lam + other) != 0 for other in lams))',
     SIGN),
    ('analysis/symmetry.py',
     'lams = [lam for lam in form if lam != 0]',
     CANONICAL),
    ('analysis/symmetry.py',
     'lin = [sp.Poly(r, Z).coeff_monomial(Z) if r != 0 else sp.S.Zero for r in rems]',
     'canonical after the exact sign decision (breakpoints, exponents and remainders hold the li'
     'teral 0 for a proved zero); the coefficients are then decided by exact_sign'),
    ('analysis/symmetry.py',
     'nonzero = [r for r in rems if r != 0]',
     'canonical after the exact sign decision (breakpoints, exponents and remainders hold the li'
     'teral 0 for a proved zero); an undecided one is rejected by the exact_sign checks that fol'
     'low'),
    ('analysis/symmetry.py',
     'nonzero = [r for r, sg in zip(rems, signs, strict=True) if sg != 0]',
     SIGN),
    ('analysis/symmetry.py',
     'return "polynomial-odd" if any(sgn != 0 for sgn in higher) else "linear-odd"',
     SIGN),
    ('analysis/symmetry.py',
     'return 0 if inner == 0 else 1',
     INT),
    ('analysis/symmetry.py',
     'return next(r for r in self.remainders() if r != 0)',
     'canonical after the exact sign decision (breakpoints, exponents and remainders hold the li'
     'teral 0 for a proved zero) (only reached once gate_kind decided every sign)'),
    ('analysis/symmetry.py',
     'return s != 0',
     SIGN),
    ('analysis/symmetry.py',
     'return tuple(sp.Poly(r, Z).coeff_monomial(Z) if r != 0 else sp.S.Zero for r in self.remainders())',
     CANONICAL),
    ('analysis/symmetry.py',
     'signs = [exact_sign(c) if not c.free_symbols else (0 if c == 0 else None) for c in at0]',
     'True only for a literal 0, which is 0: the other outcome proves nothing and is not used as'
     ' a claim (else undecided: None)'),
    ('analysis/taylor.py',
     'if coeff != 0:',
     'skips adding a literal 0 (an optimisation); a hidden zero is added, which changes nothing'),
    ('analysis/taylor.py',
     'if sign is None or sign == 0 or (not r.is_Integer and sign < 0):',
     SIGN),
    ('analysis/taylor.py',
     'return (0, 1) if k == 0 else _poly_mul(_poly_derivative(_tanh_poly(k - 1)), (1, 0, -1))',
     INT),
    ('analysis/taylor.py',
     'terms = [a[i] * b[k - i] for i in range(k + 1) if a[i] != 0 and b[k - i] != 0]',
     'skips literal 0 factors in a series product (an optimisation); hidden zeros are multiplied in, which changes nothing'),
    ('analysis/tropical.py',
     '"rules)" if rest != 0 else f"σ is {sp.sstr(piece)} near {end}")',
     DISPLAY),
    ('analysis/tropical.py',
     'if beta.free_symbols or not (rest == 0 or _vanishing(rest)):',
     'True only for a literal 0, which is 0: the other outcome proves nothing and is not used as'
     ' a claim; otherwise _vanishing decides'),
    ('api.py',
     'if getattr(v, "is_Rational", False) and v != 0 and not (_TINY_WEIGHT <= abs(v) <= _HUGE_WEIGHT):',
     RATIONAL),
    ('dsl/parser.py',
     'if tok.type != "NAME" or pos is None or pos == 0 or not (text[pos - 1].isdigit() or text[pos - 1] == "."):',
     TEXT),
    ('dsl/parser.py',
     'items = list(children) if end == 0 else list(reversed(list(children)))',
     TEXT),
    ('explore/executors.py',
     'elif self._workers() == 0:',
     'a count of Dask workers (int)'),
    ('explore/executors.py',
     'if self._workers() == 0:',
     'a count of Dask workers (int)'),
    ('explore/family.py',
     'return "<0" if v < 0 else "=0" if v == 0 else ">0"',
     'a Rational grid value (typed sp.Rational): exact'),
    ('explore/fingerprint.py',
     'if mid.is_zero():',
     'a python-flint arb midpoint method (not a SymPy value)'),
    ('explore/search.py',
     'if (np.abs(down).sum(axis=0) == 0).any() or not _nondegenerate(np, up):',
     NUMPY),
    ('explore/search.py',
     'if (np.abs(w).sum(axis=1) == 0).any():',
     NUMPY),
    ('explore/verify.py',
     'first = next(n for n in u if n != 0)',
     INT),
    ('explore/verify.py',
     'if all(sp.expand(e) == 0 for e in total):',
     'True only for a literal 0, which is 0: the other outcome proves nothing and is not used as'
     ' a claim (a check: failing only withholds a confirmation)'),
    ('explore/verify.py',
     'if all(x == 0 for x in v):',
     FRAC),
    ('explore/verify.py',
     'k = next(i for i, n in enumerate(u) if n != 0)',
     INT),
    ('explore/verify.py',
     'return e == 0 or bool(prove_zero(e))',
     'True only for a literal 0, which is 0: the other outcome proves nothing and is not used as'
     ' a claim; prove_zero decides the rest'),
    ('model/block.py',
     'inline = any(b is not None and any(x != 0 for x in b) for b in (self.b_up, self.b_down, self.b_gate))',
     'inline biases are exact rationals (resolve refuses anything else)'),
    ('model/resolve.py',
     'if node.op != "/" or not isinstance(node.right, s.Number) or node.right.value == 0:',
     "the parser's literal number (int/Fraction): exact"),
    ('model/resolve.py',
     'if rational and v != 0 and not (_TINY_WEIGHT <= abs(v) <= _HUGE_WEIGHT):',
     RATIONAL),
    ('model/resolve.py',
     'if v.has(sp.log) and sp.expand(sp.logcombine(v, force=False)) == 0:',
     'True only for a literal 0, which is 0: the other outcome proves nothing and is not used as'
     ' a claim (logcombine without force is an identity)'),
    ('model/resolve.py',
     'if v.has(sp.sinh, sp.cosh, sp.tanh, sp.sin, sp.cos, sp.tan) and sp.expand(v.rewrite(sp.exp)) == 0:',
     'True only for a literal 0, which is 0: the other outcome proves nothing and is not used as'
     ' a claim (rewrite and expand are identities)'),
    ('model/resolve.py',
     'return bool(sp.simplify(v) == 0)',
     'True only for a literal 0, which is 0: the other outcome proves nothing and is not used as'
     ' a claim (simplify is an identity, bounded in CPU time)'),
    ('model/resolve.py',
     'return v.is_zero is True',
     "a Rational (exact) or SymPy's deductive assumption on parameters (True only when proved)"),
    ('paths.py',
     'what = "the spec" if i == 0 else "the input"',
     TEXT),
    ('report/atlas.py',
     'if axis == 0:',
     TEXT),
    ('report/common.py',
     'if sp.count_ops(simpler) < sp.count_ops(value) and sp.simplify(simpler - value) == 0:',
     'display only (how a value is printed), no decision rests on it (a simpler equal form is sh'
     'own only when simplify proves it equal)'),
    ('report/latex.py',
     'minus = (ch == "-" and (i == 0 or text[i - 1] in " ([,=") and text[i + 1:i + 2] != ""',
     TEXT),
    ('report/layout.py',
     'if best_count == 0:',
     TEXT),
    ('report/layout.py',
     'if indegree[s] == 0:',
     TEXT),
    ('report/layout.py',
     'ready = [(key[v], v) for v in nodes if indegree[v] == 0]',
     TEXT),
    ('report/plainmath.py',
     'if depth == 0:',
     TEXT),
    ('report/terminal.py',
     'if m and indent == 0:',
     TEXT),
    ('report/terminal.py',
     'terms = sp.Poly(poly, Z).terms() if poly != 0 else []',
     DISPLAY),
    ('theory/hyp_activation.py',
     'degrees = sorted(k for k, sign in signs.items() if sign != 0 and k != 1)',
     SIGN),
    ('theory/hyp_activation.py',
     'degrees = sorted({k for side in signs for k, sign in side.items() if sign != 0 and k != 1})',
     SIGN),
    ('theory/hyp_activation.py',
     'if signs.get(1, 0) == 0 or len(degrees) != 1 or degrees[0] < 2:',
     SIGN),
    ('theory/hyp_activation.py',
     'return True if proved_nonzero(diff) else (False if sign == 0 else None)',
     SIGN),
    ('theory/hyp_activation.py',
     'return True if sign == 0 else (False if proved_nonzero(diff) else None)',
     SIGN),
    ('theory/hyp_deep.py',
     'if sign == 0:',
     SIGN),
    ('theory/hyp_depth.py',
     'if _dm(piece).det() == 0:',
     'a DomainMatrix determinant over QQ (rational weights): exact'),
    ('theory/hyp_euler.py',
     '"the linear coefficient c is 0" if exact_sign(c) == 0 else "the sign of c is undecided")',
     SIGN),
    ('theory/hyp_euler.py',
     'return simple("power_linear_form", HypStatus.REFUTED if exact_sign(c) == 0 else HypStatus.UNKNOWN, statement,',
     SIGN),
    ('theory/hyp_gated.py',
     'if all(x == 0 for x in w_up.row(i)):',
     'inline weights are exact rationals (resolve refuses anything else)'),
    ('theory/hyp_layers.py',
     'if len(pieces) != 2 or pieces[0].lo != -sp.oo or pieces[0].hi != 0 or pieces[1].hi != sp.oo:',
     CANONICAL),
    ('theory/hyp_layers.py',
     'if not e.is_polynomial(Z) or sp.degree(e, Z) > 1 or e.subs(Z, 0) != 0:',
     GIVES_UP),
    ('theory/hyp_layers.py',
     'if sign == 0:',
     SIGN),
    ('theory/hyp_ridge.py',
     'degrees = {m[0] for p in polys for m, coeff in p.terms() if m[0] != 1 and exact_sign(coeff) != 0}',
     'an int from exact_sign (the exact sign decision), not a SymPy value (and m[0] an int exponent)'),
    ('theory/hyp_ridge.py',
     'if exact_sign(c_plus - c_minus) != 0 or exact_sign(c_plus) in (0, None):',
     SIGN),
    ('theory/hyp_ridge.py',
     'if exact_sign(expr.xreplace({Z: sp.S.Zero})) != 0:',
     SIGN),
    ('theory/hyp_sizes.py',
     'if all(x == 0 for x in c):',
     'DomainMatrix entries (exact domain elements) or exact rational weights'),
    ('theory/hyp_sizes.py',
     'if all(x == 0 for x in r):',
     'DomainMatrix entries (exact domain elements) or exact rational weights'),
    ('theory/hyp_sizes.py',
     'if all(x == 0 for x in w_down.col(j)):',
     'inline weights are exact rationals (resolve refuses anything else)'),
    ('theory/hyp_sizes.py',
     'if all(x == 0 for x in w_up.row(i)):',
     'inline weights are exact rationals (resolve refuses anything else)'),
    ('theory/directions.py',
     'lead = next((n for n in ray if n != 0), 1)',
     INT),
    ('theory/directions.py',
     'first = next(i for i, n in enumerate(p) if n != 0)',
     INT),
    ('analysis/realness.py',
     'if base.is_nonzero is True or (z is Z and proved_nonzero_on_reals(base)):',
     'only a SymPy assumption answering True is used (a proof), or exact real-root isolation; None and False '
     'fall to "not proved"'),
    ('model/domain.py',
     'if not v.imag.is_zero() or v.real.contains(0):',
     'python-flint ball predicates (exact on the ball), not SymPy values'),
    ('model/domain.py',
     'if not all(v.imag.is_zero() for v in vals):',
     'python-flint ball predicates (exact on the ball), not SymPy values'),
    ('model/domain.py',
     'if not v.imag.is_zero() or not v.real.is_finite():',
     'python-flint ball predicates (exact on the ball), not SymPy values: the sign of a side condition is '
     'taken only from a real ball excluding 0'),
    ('model/domain.py',
     'return bool(v.imag.is_zero() and v.real.is_finite() and v.real.contains(0))',
     'python-flint ball predicates (exact on the ball), not SymPy values: only selects a point for the exact '
     'decision (_proved_zero), proves nothing itself'),
    ('weights/deepdecide.py',
     'ok = got is not None and exact_sign(as_expr(got[0] - sl.alpha)) == 0 and \\',
     SIGN),
    ('weights/deepdecide.py',
     'exact_sign(as_expr(got[1] - sl.beta)) == 0',
     SIGN),
    ('theory/polyrescale.py',
     'if f == 0:',
     INT),
    ('theory/polyrescale.py',
     'if res.status == 0:',
     "scipy's integer status code"),
    ('theory/polyrescale.py',
     'return all(sp.expand(e) == 0 for e in diff)',
     'True only for a literal 0, which is 0: the other outcome proves nothing and is not used as'
     ' a claim (a witness check over rational weights and c; failing only withholds the witness)'),
    ('theory/prover.py',
     'if isinstance(c, sp.Expr) and c != 0:',
     "display only (how a value is printed), no decision rests on it (the condition's text; c wa"
     's proved nonzero by its hypothesis)'),
    ('theory/prover.py',
     'if isinstance(c_lin, sp.Expr) and c_lin != 0:',
     "display only (how a value is printed), no decision rests on it (the condition's text; c wa"
     's proved nonzero by its hypothesis)'),
    ('theory/rpos.py',
     '"with the sign conditions" + ("" if a_plus_b == 0 or not flipped else',
     DISPLAY),
    ('theory/rpos.py',
     'if a_plus_b != 0 and flipped:',
     'a Rational (checked is_Rational on entry): exact'),
    ('theory/rpos.py',
     'if any(sp.expand(e) != 0 for e in deg):',
     'polynomials with rational coefficients (rational weights), expanded: canonical, exact'),
    ('theory/rpos.py',
     'if f == 0:',
     INT),
    ('theory/rpos.py',
     'if res.status == 0:',
     "scipy's integer status code"),
    ('theory/widthexact.py',
     'if all(skip[i][k] == 0 for i in range(d) for k in range(d) if i != k):',
     FRAC),
    ('theory/widthexact.py',
     'if best == 0:',
     INT),
    ('theory/widthexact.py',
     'nonzero = mant != 0',
     NUMPY),
    ('theory/widthexact.py',
     'nz = odd != 0',
     NUMPY),
    ('theory/widthexact.py',
     'pivots = [next(k for k, x in enumerate(row) if x != 0) for row in r_rows]',
     FRAC),
    ('weights/certify.py',
     'if fs.recheck <= 1e-6 * t_norm or small or (t_norm == 0 and not fs.index_set):',
     'numpy float/integer arrays of file weights (floats only find candidates; exact checks decide); Fractions'),
    ('weights/certify.py',
     'zero_cols = np.flatnonzero(~(w_down != 0).any(axis=0))',
     'numpy float/integer arrays of file weights (floats only find candidates; exact checks decide); Fractions'),
    ('weights/certify.py',
     'zero_rows = np.flatnonzero(~(w_up != 0).any(axis=1))',
     'numpy float/integer arrays of file weights (floats only find candidates; exact checks decide); Fractions'),
    ('weights/concrete.py',
     'if expanded == 0:',
     'True only for a literal 0, which is 0: the other outcome proves nothing and is not used as'
     ' a claim (otherwise undecided or decided exactly below)'),
    ('weights/deep.py',
     'elif sa == 0:',
     FRAC),
    ('weights/deep.py',
     'elif sb == 0:',
     FRAC),
    ('weights/deep.py',
     'if all(x == 0 for x in row) or all(x == 0 for x in col):',
     FRAC),
    ('weights/deep.py',
     'if any(p == 0 for p in pre):',
     FRAC),
    ('weights/deep.py',
     'if any(x != 0 for x in row):',
     FRAC),
    ('weights/deep.py',
     'if any(x != 0 for x in v):',
     FRAC),
    ('weights/deep.py',
     'if half == 0:',
     FRAC),
    ('weights/deep.py',
     'if m[r][c] != 0:',
     FRAC),
    ('weights/deep.py',
     'if n == 0:',
     FRAC),
    ('weights/deep.py',
     'if r != c and aug[r][c] != 0:',
     FRAC),
    ('weights/deep.py',
     'if r[col] != 0:',
     FRAC),
    ('weights/deep.py',
     'if y > 0 or (y == 0 and x > 0):',
     FRAC),
    ('weights/deep.py',
     'kint = next(x for x in key if x != 0)',
     FRAC),
    ('weights/deep.py',
     'lead = next((n for n in ints if n != 0), 1)',
     FRAC),
    ('weights/deep.py',
     'lead = next(x for x in row if x != 0)',
     FRAC),
    ('weights/deep.py',
     'p = next((r for r in range(c, n) if aug[r][c] != 0), None)',
     FRAC),
    ('weights/deep.py',
     'p = next((r for r in range(c, n) if m[r][c] != 0), None)',
     FRAC),
    ('weights/deep.py',
     'piv = next((j for j, x in enumerate(r) if x != 0), None)',
     FRAC),
    ('weights/deep.py',
     'return linear, {k: v for k, v in even.items() if any(x != 0 for x in v)}',
     FRAC),
    ('weights/deep.py',
     'return v if any(x != 0 for x in v) else None',
     FRAC),
    ('weights/deep.py',
     'rows = [r for r in u1 if any(x != 0 for x in r)]',
     FRAC),
    ('weights/deep.py',
     'signs = {s for s in (sa, -sb) if s != 0}  # the signs of the values of block 1 (t > 0: α t; t < 0: β t)',
     FRAC),
    ('weights/deepdecide.py',
     'exact_sign(sp.sympify(got[1] - sl.beta)) == 0',
     SIGN),
    ('weights/deepdecide.py',
     'fails = prod != 0 if case == "first-one" else prod > 0',
     FRAC),
    ('weights/deepdecide.py',
     'holds = {"first-one": prod == 0, "all-wide": True, "wide-then-one": prod <= 0}[case]',
     SIGN),
    ('weights/deepdecide.py',
     'if any(layer.m[0][0] == 0 for layer in layers):',
     FRAC),
    ('weights/deepdecide.py',
     'ok = got is not None and exact_sign(sp.sympify(got[0] - sl.alpha)) == 0 and \\',
     SIGN),
    ('weights/degenerate.py',
     'assert rank == 0, "the 0/1 system\'s solution must leave no rank"',
     FRAC),
    ('weights/degenerate.py',
     'built = witness_for(block, a, mw.choice, mw.upper, w_up, w_down, skip, sign0 == 0)',
     SIGN),
    ('weights/degenerate.py',
     'built = witness_for(block, a, res.choice, width, w_up, w_down, skip, sign0 == 0)',
     SIGN),
    ('weights/degenerate.py',
     'built = witness_for(block, pairs, res.choice, width, w_up, w_down, skip, sign0 == 0)',
     SIGN),
    ('weights/degenerate.py',
     'eps = None if sigma0_sign is None else (0 if sigma0_sign == 0 else 1)',
     SIGN),
    ('weights/degenerate.py',
     'f"$\\\\sigma(0) = {sp.latex(value0)}$, decided " + ("zero" if sign0 == 0 else "nonzero") +',
     SIGN),
    ('weights/degenerate.py',
     'first = next(i for i, v in enumerate(p) if v != 0)',
     FRAC),
    ('weights/degenerate.py',
     'if all(x == 0 for x in cols[i]):',
     FRAC),
    ('weights/degenerate.py',
     'if all(x == 0 for x in w_up[i]):',
     FRAC),
    ('weights/degenerate.py',
     'if any(x != 0 for r in p for x in r):',
     FRAC),
    ('weights/degenerate.py',
     'if not rows or ncols == 0:',
     FRAC),
    ('weights/degenerate.py',
     'if not same_function(w_up, w_down, skip, rows, cols, a.c, kind, sign0 == 0):',
     SIGN),
    ('weights/degenerate.py',
     'if r_max == 0:',
     FRAC),
    ('weights/degenerate.py',
     'lead = next(v for v in ints if v != 0)',
     FRAC),
    ('weights/degenerate.py',
     'nonzero = any(x != 0 for x in constant)',
     FRAC),
    ('weights/degenerate.py',
     'ok = all(x == 0 for r in target for x in r)',
     FRAC),
    ('weights/degenerate.py',
     'piv = [next(q for q in range(d) if f[q] != 0) for f in factors]',
     FRAC),
    ('weights/degenerate.py',
     'return any(x != 0 for x in self.coeff)',
     FRAC),
    ('answer/verify_degenerate.py',
     'if not same_function(w_up, w_down, skip, rows, cols, Fraction(int(c.p), int(c.q)), "dilates", sign0 == 0):',
     SIGN),
    ('answer/verify_degenerate.py',
     'if not same_function(w_up, w_down, skip, rows, cols, a.c, kind, sign0 == 0):',
     SIGN),
    ('weights/exact.py',
     'first = np.argmax(prim != 0, axis=1)',
     NUMPY),
    ('weights/exact.py',
     'g = np.where(g == 0, 1, g)',
     NUMPY),
    ('weights/exact.py',
     'gg = (g[None, :] if axis == 0 else g[:, None]).astype(np.int32)',
     NUMPY),
    ('weights/exact.py',
     'if y_l.size == 0 or not y_l.any():',
     NUMPY),
    ('weights/exact.py',
     'lead = np.where(lead == 0, 1, lead)',
     NUMPY),
    ('weights/filedecide.py',
     'if t != 0:',
     'an exact Rational (checked is_Rational / exact rational weights): == 0 is exact there (non'
     '-rational t returns None above)'),
    ('weights/filedecide.py',
     'zero_up = [i for i, row in enumerate(w.w_up) if not (row != 0).any()]',
     'exact rational skip entries'),
    ('weights/floatsearch.py',
     'cols = np.where((w_down != 0).any(axis=0), cols, 0.0)',
     NUMPY),
    ('weights/floatsearch.py',
     'rows = np.where((w_up != 0).any(axis=1), rows, 0.0)',
     NUMPY),
    ('weights/layers.py',
     'if any(extras[k] is not None and bool((extras[k] != 0).any()) for k in ("b_up", "b_down", "b_gate")):',
     NUMPY),
    ('weights/near.py',
     'if v == 0 or 1e-3 <= abs(v) < 1e4:',
     'a Python float of a file weight'),
    ('weights/search.py',
     'if x == 0 or x != x or x in (float("inf"), float("-inf")):',
     'a Python float of a file weight'),
    ('weights/search.py',
     'pivots.append(next(j for j, x in enumerate(row) if x != 0))',
     "Fractions/ints of exact weight arithmetic (Python's exact rationals) (exact rank arithmetic)"),
    ('weights/search.py',
     'return [next(j for j in range(ncols) if backend.entry(red, i, j) != 0) for i in range(rank)]',
     "Fractions/ints of exact weight arithmetic (Python's exact rationals) (exact rank arithmetic)"),
    ('answer/verify.py',
     'if product.shape != target.shape or any(sp.expand(x) != 0 for x in product - target):',
     'products of exact rational weights, expanded: canonical'),
    ('weights/width.py',
     'elif b.lower is not None and sp.simplify(sp.Integer(0) + b.upper - b.lower) == 0:',
     'True only for a literal 0, which is 0: the other outcome proves nothing and is not used as'
     ' a claim (equal bounds make the width exact; otherwise a range is reported)'),
    ('weights/width.py',
     'exact = b.lower is not None and sp.simplify(sp.Integer(0) + b.upper - b.lower) == 0',
     'True only for a literal 0, which is 0: the other outcome proves nothing and is not used as'
     ' a claim (equal bounds make the width exact; otherwise a range is reported)'),
    ('weights/width.py',
     'if extra == 0:',
     INT),
    ('weights/widththm.py',
     'if isinstance(rank, int) and rank == 0:',
     "Fractions/ints of exact weight arithmetic (Python's exact rationals); numpy integer mantissas"),
    ('weights/widththm.py',
     'if skip is None or m == 0:',
     "Fractions/ints of exact weight arithmetic (Python's exact rationals); numpy integer mantissas"),
    ('weights/widththm.py',
     'nonzero = mant != 0',
     "Fractions/ints of exact weight arithmetic (Python's exact rationals); numpy integer mantissas"),
    ('weights/widththm.py',
     'pivots = [next(k for k, x in enumerate(row) if x != 0) for row in r_rows]',
     "Fractions/ints of exact weight arithmetic (Python's exact rationals); numpy integer mantissas"),
    ('weights/witness.py',
     '"==": lambda a: a == 0, "!=": lambda a: a != 0}',
     'evaluated on exact rational values of a polynomial at rational points'),
    ('weights/witness.py',
     'live = [k for k in inputs if any(v != 0 for v in diff[k])]',
     'exact rational weight differences'),
    ('api.py',
     'if len(shape) != 1 or shape[0] == 0:',
     'a numpy shape: Python ints'),
    ('weights/concrete.py',
     'if r == 0:',
     'a rank: a Python int'),
    ('weights/concrete.py',
     'if not all(x.is_Rational for x in k_const) or c0 == 0:',
     'sp.Rational values (checked is_Rational first): == 0 on a Rational is the exact decision'),
    ('weights/concrete.py',
     'if k_const is None or c0 == 0 or not all(x.is_Rational for x in k_const):',
     'sp.Rational values: == 0 on a Rational is the exact decision (c0.is_Rational is checked where bound)'),
    ('weights/concrete.py',
     'if not (isinstance(a, sp.Expr) and isinstance(c0, sp.Expr) and a.is_Rational and c0.is_Rational and a != 0) \\',
     'sp.Rational values (checked is_Rational first): == 0 on a Rational is the exact decision'),
    ('weights/concrete.py',
     'if ev.status is not Status.PROVED or not (isinstance(a, sp.Expr) and a.is_Rational and a != 0 and c0.is_Rational):',
     'sp.Rational values (checked is_Rational first): == 0 on a Rational is the exact decision'),
    ('weights/concrete.py',
     'j = next(i for i, x in enumerate(y) if x != 0)',
     'an exact solution over Q (rational entries of a rational system)'),
    ('weights/io.py',
     'part = array[chunk.index * step:(chunk.index + 1) * step] if chunk.dim == 0 else \\',
     'a tensor axis: a Python int'),
)


def _allowed_keys() -> dict[tuple[str, str], str]:
    return {(f, text): why for f, text, why in ALLOWED}


def test_allow_list_entries_have_reasons() -> None:
    for f, text, why in ALLOWED:
        assert len(why.strip()) >= 10, f"allow-list entry without a reason: {f}: {text}"
    keys = [(f, text) for f, text, _ in ALLOWED]
    assert len(keys) == len(set(keys)), "duplicate allow-list entries"


def test_no_unreviewed_zero_test_on_sympy_values() -> None:
    allowed = _allowed_keys()
    new = [h for h in scan_package() if (h.path, h.text) not in allowed]
    assert not new, ("structural zero tests on (possibly) SymPy values, not in the reviewed allow-list of "
                     "tests/soundness/test_sympy_zero_tests.py: use analysis.identity.exact_sign / prove_zero / proved_nonzero, "
                     "or allow-list the line with the reason it is safe:\n" + "\n".join(h.show() for h in new))


#: Where a stale entry fails the test: the layers swept for issue 26 (elsewhere other work moves lines
#: often; an entry left behind there allows nothing new).
STRICT = ("analysis/", "theory/", "model/")


def test_allow_list_has_no_stale_entries() -> None:
    found = {(h.path, h.text) for h in scan_package()}
    stale = [f"{f}: {text}" for f, text, _ in ALLOWED
             if (f, text) not in found and f.startswith(STRICT) and (PACKAGE / f).exists()]
    assert not stale, "allow-listed lines that no longer occur (remove them):\n" + "\n".join(stale)


def test_the_scanner_finds_each_kind() -> None:
    src = ("import sympy as sp\n"
           "def f(c, e):\n"
           "    if c == 0:\n"
           "        pass\n"
           "    if sp.S.Zero != c:\n"
           "        pass\n"
           "    if c == sp.Integer(0) or c.is_zero or e.is_nonzero:\n"
           "        pass\n"
           "    if sp.simplify(e):\n"
           "        pass\n"
           "    return not simplified(e), len(e) == 0, e % 2 == 0\n")
    kinds = sorted(h.kind for h in scan_source("x.py", src))
    assert kinds == sorted(["== 0", "!= 0", "== 0", ".is_zero", ".is_nonzero", "truth value of a SymPy expression",
                            "not <SymPy expression>"])
