"""Exact facts about skips: zero, invertible, the target ``T = −M/(2c)``, products along a stack."""

from __future__ import annotations

from typing import Any, TypeVar

import sympy as sp

from ..analysis.identity import exact_zero
from ..model.block import Block, Skip, Stack

__all__ = [
    "SKIP_KINDS",
    "SkipKind",
    "centering",
    "describe_skip",
    "is_identity_like",
    "is_stream_skip",
    "kind_of",
    "post_ln_skip",
    "skip_entries",
    "skip_invertible",
    "skip_is_zero",
    "skip_kind",
    "skip_latex",
    "skip_matrix",
    "skip_rank",
    "stack_skip_product_nonzero",
    "target_latex",
    "target_matrix",
    "target_plain",
]


def _matrix_is_zero(m: sp.MatrixBase) -> bool | None:
    values = [exact_zero(x) for x in m]
    if all(v is True for v in values):
        return True
    if any(v is False for v in values):
        return False
    return None


def _kept(x: sp.Expr) -> bool:
    """Whether an entry of M is listed among its nonzero entries: left out only when proved 0 by the exact sign
    decision (a hidden zero such as ``cosh(1)**2 - sinh(1)**2 - 1`` is 0; an undecided entry stays)."""
    return exact_zero(x) is not True


def _negated(v: bool | None) -> bool | None:
    return None if v is None else not v


def _det(m: sp.MatrixBase) -> sp.Expr:
    return sp.simplify(m.det(method="bareiss"))


def centering(n: int) -> sp.ImmutableMatrix:
    """``P = I − 11ᵀ/n``, the orthogonal projector onto the vectors with zero mean."""
    return sp.ImmutableMatrix(sp.eye(n) - sp.ones(n, n) / n)


class SkipKind:
    """One kind of skip ``x ↦ Mx``: what ``M`` is, exactly, and how a derivation writes it.

    A kind is registered with :func:`skip_kind` under the name a :class:`~symabsorb.model.block.Skip`
    carries (``Skip("identity")``); every question about a skip is asked of its kind, never by comparing
    names. The defaults are the sound "undecided" answers (None), so a new kind need only say what ``M``
    is (:meth:`matrix`) and how it is written (:meth:`latex`, :meth:`describe`): exact decisions then run
    on the explicit matrix when the dimension is numeric.
    """

    name = ""
    #: M = A ⊗ I_d acts on n streams of dimension d (the block maps n·d); results about one stream do not apply.
    streams = False
    #: How the explanation of an invertible M reads ("" when it goes unsaid).
    invertible_how = ""

    def describe(self, skip: Skip) -> str:
        return f"{self.name} skip"

    def latex(self, skip: Skip) -> str:
        raise NotImplementedError(f"skip kind `{self.name}` has no LaTeX form")

    #: The skip of a block reduced from a normalisation after the residual sum (its weights are P·W_down).
    after_norm = False

    def scale(self, skip: Skip) -> sp.Expr | None:
        """``s`` when M = s·I_d (then every question is decided from ``s``, for any dimension, and the results
        stated for multiples of the identity apply), else None."""
        return None

    def matrix(self, skip: Skip, dim: int | sp.Expr | None = None) -> sp.ImmutableMatrix | None:
        """M for a numeric ``dim`` (the stream dimension for a stream skip); None for a symbolic one."""
        s = self.scale(skip)
        return sp.ImmutableMatrix(s * sp.eye(dim)) if s is not None and isinstance(dim, int) else None

    def entries(self, skip: Skip, dim: int) -> tuple[dict[tuple[int, int], Any], int] | None:
        """The nonzero entries of M (``(row, column) -> value``) and its size, without a dense matrix where
        the kind allows (None: M is not known explicitly)."""
        s = self.scale(skip)
        if s is not None:
            s = s if isinstance(s, sp.Basic) else sp.Rational(s or 0)
            return ({(i, i): s for i in range(dim)} if _kept(s) else {}), dim
        m = self.matrix(skip, dim)
        if m is None:
            return None
        return {(i, k): m[i, k] for i in range(m.rows) for k in range(m.cols) if _kept(m[i, k])}, m.rows

    def vanishes(self, skip: Skip, dim: int | sp.Expr | None = None) -> bool | None:
        """Whether M = 0, exactly (None: undecided)."""
        s = self.scale(skip)
        if s is not None:
            return exact_zero(s)
        m = self.matrix(skip, dim) if isinstance(dim, int) else None
        return None if m is None else _matrix_is_zero(m)

    def invertible(self, skip: Skip, dim: int | sp.Expr | None = None) -> bool | None:
        """Whether M is invertible, exactly (None: undecided)."""
        s = self.scale(skip)
        if s is not None:
            return _negated(exact_zero(s))
        m = self.matrix(skip, dim) if isinstance(dim, int) else None
        return None if m is None else _negated(exact_zero(_det(m)))

    #: How a nonzero multiple of I_d reads as a reason for its rank.
    full_rank = "M is a nonzero multiple of I_d"

    def rank(self, skip: Skip, dim: int | sp.Expr) -> tuple[int | sp.Expr | None, str]:
        """rank M, exactly, with how it is known (None: undecided)."""
        from .hyp_sizes import exact_rank

        s = self.scale(skip)
        if s is not None:
            zero = exact_zero(s)
            if zero is False:
                return dim, self.full_rank
            return (0, "M = 0") if zero is True else (None, "the scale is undecided")
        m = self.matrix(skip, dim) if isinstance(dim, int) else None
        r = exact_rank(m) if m is not None else None
        return (r, "rank over Q, computed exactly") if r is not None else (None, "the rank of M is undecided")

    def target_latex(self, skip: Skip, c: sp.Expr) -> str:
        """``−M/(2c)`` in LaTeX (simplified for a multiple of I_d)."""
        s = self.scale(skip)
        if s is None:
            return f"-\\tfrac{{1}}{{2 ({sp.latex(c)})}}\\,{self.latex(skip)}"
        factor = sp.simplify(-s / (2 * c))
        if factor == -1:
            return "-I_d"
        if factor == 1:
            return "I_d"
        return f"{sp.latex(factor)}\\, I_d"

    def target_plain(self, skip: Skip, c: sp.Expr) -> str:
        s = self.scale(skip)
        if s is None:
            return f"-(1/(2*({sp.sstr(c)})))*M"
        factor = sp.simplify(-s / (2 * c))
        if factor == -1:
            return "-I_d"
        if factor == 1:
            return "I_d"
        return f"-{sp.sstr(-factor)}*I_d" if factor.is_negative else f"{sp.sstr(factor)}*I_d"

    def doubly_stochastic(self, skip: Skip) -> bool:
        """M (or its mix A) is exactly doubly stochastic."""
        return False

    def post_ln(self, skip: Skip, d: int) -> Skip | str:
        """The skip of the reduced block under a post-LN normalisation (Lemma PN: ``P·M``), or why there is none."""
        return f"a {self.name} skip with a post-LN normalisation is not supported"


#: The registered skip kinds, by the name a :class:`~symabsorb.model.block.Skip` carries.
SKIP_KINDS: dict[str, SkipKind] = {}

K = TypeVar("K", bound=type[SkipKind])


def skip_kind(cls: K) -> K:
    """Register a :class:`SkipKind` subclass under its ``name`` (a class decorator)."""
    if not cls.name or cls.name in SKIP_KINDS:
        raise ValueError(f"a skip kind needs a new name, not {cls.name!r}")
    SKIP_KINDS[cls.name] = cls()
    return cls


def kind_of(skip: Skip) -> SkipKind:
    """The registered kind of ``skip``."""
    try:
        return SKIP_KINDS[skip.kind]
    except KeyError:
        raise ValueError(f"unknown skip kind {skip.kind!r}: register it with @skip_kind "
                         f"(known: {', '.join(sorted(SKIP_KINDS))})") from None


class _Multiple(SkipKind):
    """M = s·I_d for a scale s the kind fixes or carries: every question is decided from s."""

    def scale(self, skip: Skip) -> sp.Expr:
        raise NotImplementedError

    def post_ln(self, skip: Skip, d: int) -> Skip | str:
        return Skip("centered", factor=self.scale(skip), n=d, span=skip.span)


@skip_kind
class IdentityKind(_Multiple):
    """M = I_d."""

    name = "identity"
    invertible_how = "the identity"
    full_rank = "M = I_d"

    def describe(self, skip: Skip) -> str:
        return "identity skip M = I"

    def latex(self, skip: Skip) -> str:
        return "I_d"

    def scale(self, skip: Skip) -> sp.Expr:
        return sp.Integer(1)

    def doubly_stochastic(self, skip: Skip) -> bool:
        return True

    def post_ln(self, skip: Skip, d: int) -> Skip | str:
        return Skip("centered", factor=sp.Integer(1), n=d, span=skip.span)


@skip_kind
class NoneKind(_Multiple):
    """M = 0 (no skip connection)."""

    name = "none"

    def describe(self, skip: Skip) -> str:
        return "no skip (M = 0)"

    def latex(self, skip: Skip) -> str:
        return "0"

    def scale(self, skip: Skip) -> sp.Expr:
        return sp.Integer(0)

    def vanishes(self, skip: Skip, dim: int | sp.Expr | None = None) -> bool | None:
        return True

    def invertible(self, skip: Skip, dim: int | sp.Expr | None = None) -> bool | None:
        return False

    def rank(self, skip: Skip, dim: int | sp.Expr) -> tuple[int | sp.Expr | None, str]:
        return 0, "M = 0"

    def post_ln(self, skip: Skip, d: int) -> Skip | str:
        return skip


@skip_kind
class ScaledKind(_Multiple):
    """M = s·I_d for a constant s (`scaled(s)`)."""

    name = "scaled"
    invertible_how = "a nonzero multiple of the identity"

    def describe(self, skip: Skip) -> str:
        return f"scaled skip M = {sp.sstr(skip.factor)}·I"

    def latex(self, skip: Skip) -> str:
        return f"{sp.latex(skip.factor)}\\, I_d"

    def scale(self, skip: Skip) -> sp.Expr:
        assert skip.factor is not None
        return skip.factor


@skip_kind
class MatrixKind(SkipKind):
    """M given explicitly (a d × d matrix of constants)."""

    name = "matrix"
    invertible_how = "nonzero determinant, computed exactly"

    def describe(self, skip: Skip) -> str:
        return f"matrix skip M = {_mat(skip.matrix)}"

    def latex(self, skip: Skip) -> str:
        return sp.latex(skip.matrix)

    def matrix(self, skip: Skip, dim: int | sp.Expr | None = None) -> sp.ImmutableMatrix | None:
        return skip.matrix

    def vanishes(self, skip: Skip, dim: int | sp.Expr | None = None) -> bool | None:
        assert skip.matrix is not None
        return _matrix_is_zero(skip.matrix)

    def invertible(self, skip: Skip, dim: int | sp.Expr | None = None) -> bool | None:
        assert skip.matrix is not None
        return _negated(exact_zero(_det(skip.matrix)))

    def rank(self, skip: Skip, dim: int | sp.Expr) -> tuple[int | sp.Expr | None, str]:
        from .hyp_sizes import exact_rank

        r = exact_rank(skip.matrix)
        return (None, "the skip has irrational entries") if r is None else (r, "rank over Q, computed exactly")

    def target_latex(self, skip: Skip, c: sp.Expr) -> str:
        assert skip.matrix is not None
        return sp.latex(sp.ImmutableMatrix(skip.matrix * sp.simplify(-1 / (2 * c))))

    def target_plain(self, skip: Skip, c: sp.Expr) -> str:
        assert skip.matrix is not None
        return _plain_matrix(skip.matrix * sp.simplify(-1 / (2 * c)))

    def doubly_stochastic(self, skip: Skip) -> bool:
        return skip.matrix is not None and _is_doubly_stochastic(skip.matrix)

    def entries(self, skip: Skip, dim: int) -> tuple[dict[tuple[int, int], Any], int] | None:
        a = skip.matrix
        assert a is not None
        return {(i, k): a[i, k] for i in range(a.rows) for k in range(a.cols) if _kept(a[i, k])}, a.rows

    def post_ln(self, skip: Skip, d: int) -> Skip | str:
        assert skip.matrix is not None
        return Skip("matrix", matrix=sp.ImmutableMatrix(centering(d) * skip.matrix), span=skip.span)


@skip_kind
class HyperKind(MatrixKind):
    """Hyper-Connections: M = A ⊗ I_d on n streams, A the n × n mix."""

    name = "hyper"
    streams = True
    invertible_how = "$A \\otimes I_d$ with $\\det A \\ne 0$, computed exactly"

    def describe(self, skip: Skip) -> str:
        structured = "; Hyper-Connection-structured weights W_down = β ⊗ W⁰" if skip.structured else ""
        return f"Hyper-Connection skip M = A ⊗ I_d with n = {skip.n}, A = {_mat(skip.matrix)}{structured}"

    def latex(self, skip: Skip) -> str:
        return f"{sp.latex(skip.matrix)} \\otimes I_d"

    def matrix(self, skip: Skip, dim: int | sp.Expr | None = None) -> sp.ImmutableMatrix | None:
        if not isinstance(dim, int):
            return None
        assert skip.matrix is not None
        return sp.ImmutableMatrix(sp.kronecker_product(skip.matrix, sp.eye(dim)))

    def rank(self, skip: Skip, dim: int | sp.Expr) -> tuple[int | sp.Expr | None, str]:
        from .hyp_sizes import exact_rank

        r = exact_rank(skip.matrix)
        if r is None:
            return None, "the skip has irrational entries"
        return r * dim, f"rank(A ⊗ I_d) = rank(A)·d with rank A = {r} over Q"

    def target_latex(self, skip: Skip, c: sp.Expr) -> str:
        return f"{super().target_latex(skip, c)} \\otimes I_d"

    def target_plain(self, skip: Skip, c: sp.Expr) -> str:
        return f"{super().target_plain(skip, c)} ⊗ I_d"

    def entries(self, skip: Skip, dim: int) -> tuple[dict[tuple[int, int], Any], int] | None:
        a = skip.matrix
        assert a is not None
        n = a.rows
        return ({(p * dim + i, q * dim + i): a[p, q] for p in range(n) for q in range(n) if _kept(a[p, q])
                 for i in range(dim)}, n * dim)

    def post_ln(self, skip: Skip, d: int) -> Skip | str:
        return SkipKind.post_ln(self, skip, d)


@skip_kind
class CenteredKind(SkipKind):
    """M = s·P with P = I − 11ᵀ/n on n coordinates: the skip a post-LN question reduces to."""

    name = "centered"
    after_norm = True

    def describe(self, skip: Skip) -> str:
        return f"centred skip M = {sp.sstr(skip.factor)}·(I - 11ᵀ/{skip.n})"

    def latex(self, skip: Skip) -> str:
        return _centered_latex(skip.factor)

    def matrix(self, skip: Skip, dim: int | sp.Expr | None = None) -> sp.ImmutableMatrix | None:
        return sp.ImmutableMatrix(skip.factor * centering(dim)) if isinstance(dim, int) else None

    def vanishes(self, skip: Skip, dim: int | sp.Expr | None = None) -> bool | None:
        assert skip.factor is not None  # factor·P, and P = 0 exactly when n = 1
        return True if skip.n == 1 else exact_zero(skip.factor)

    def invertible(self, skip: Skip, dim: int | sp.Expr | None = None) -> bool | None:
        return False  # P·1 = 0

    def rank(self, skip: Skip, dim: int | sp.Expr) -> tuple[int | sp.Expr | None, str]:
        zero = exact_zero(skip.factor)
        if zero is False:
            return dim - 1, "M is a nonzero multiple of I − 11ᵀ/d, of rank d − 1"
        return (0, "M = 0") if zero is True else (None, "the scale is undecided")

    def target_latex(self, skip: Skip, c: sp.Expr) -> str:
        return _centered_latex(sp.simplify(sp.simplify(-1 / (2 * c)) * skip.factor))

    def target_plain(self, skip: Skip, c: sp.Expr) -> str:
        scale = sp.simplify(sp.simplify(-1 / (2 * c)) * skip.factor)
        p = "(I_d - 11ᵀ/d)"
        return p if scale == 1 else f"-{p}" if scale == -1 else f"{sp.sstr(scale)}*{p}"


def _mat(m: sp.ImmutableMatrix | None) -> str:
    if m is None:
        return "?"
    return "[" + ", ".join("[" + ", ".join(sp.sstr(x) for x in m.row(i)) + "]" for i in range(m.rows)) + "]"


def _plain_matrix(mat: sp.MatrixBase) -> str:
    return "[" + ", ".join("[" + ", ".join(sp.sstr(x) for x in mat.row(i)) + "]" for i in range(mat.rows)) + "]"


def _is_doubly_stochastic(a: sp.MatrixBase) -> bool:
    if a.rows != a.cols or not all(x.is_Rational and x >= 0 for x in a):
        return False
    return all(sum(a.row(i)) == 1 for i in range(a.rows)) and all(sum(a.col(j)) == 1 for j in range(a.cols))


# ---- the questions every layer asks, each answered by the skip's kind ---------------------------------


def describe_skip(skip: Skip) -> str:
    """``skip`` in words (``identity skip M = I``)."""
    return kind_of(skip).describe(skip)


def is_stream_skip(skip: Skip) -> bool:
    """Whether M = A ⊗ I_d acts on several streams (a Hyper-Connection): the block maps n·d."""
    return kind_of(skip).streams


def skip_is_zero(skip: Skip) -> bool | None:
    return kind_of(skip).vanishes(skip)


def skip_invertible(skip: Skip) -> bool | None:
    return kind_of(skip).invertible(skip)


def is_identity_like(skip: Skip) -> bool:
    """M = I_d exactly as written (the identity, or a scale written as 1)."""
    scale = kind_of(skip).scale(skip)
    return scale is not None and scale == 1


def skip_matrix(block: Block) -> sp.ImmutableMatrix | None:
    """M as an explicit matrix when the dimension is numeric."""
    dim = block.dim
    return kind_of(block.skip).matrix(block.skip, dim)  # type: ignore[arg-type]


def skip_rank(block: Any) -> tuple[int | sp.Expr | None, str]:
    """rank M, exactly (a symbol for identity-like skips of symbolic size), with how it is known."""
    return kind_of(block.skip).rank(block.skip, block.dim if is_stream_skip(block.skip) else block.stream_dim)


def skip_entries(block: Block) -> tuple[dict[tuple[int, int], Any], int] | None:
    """The nonzero entries of a block's M and its size (the block's numeric dimension), sparse where possible."""
    assert isinstance(block.dim, int)
    return kind_of(block.skip).entries(block.skip, block.dim)


def dim_name(block: Any) -> str:
    """The symbol of the dimension a block maps: ``d``, or ``nd`` for a Hyper-Connection, whose
    ``d`` is the stream dimension (``dim:``) so that ``M = A ⊗ I_d`` is ``nd × nd``."""
    return "nd" if is_stream_skip(block.skip) else "d"


def skip_latex(skip: Skip) -> str:
    return kind_of(skip).latex(skip)


_P_LATEX = "(I_d - \\tfrac{1}{d}\\mathbf{1}\\mathbf{1}^\\top)"


def _centered_latex(factor: sp.Expr | None) -> str:
    if factor == 1:
        return _P_LATEX
    if factor == -1:
        return "-" + _P_LATEX
    return f"{sp.latex(factor)}\\,{_P_LATEX}"


def target_matrix(block: Block, c: sp.Expr) -> sp.ImmutableMatrix | None:
    m = skip_matrix(block)
    return None if m is None else sp.ImmutableMatrix(-m / (2 * c))


def target_latex(skip: Skip, c: sp.Expr) -> str:
    """``−M/(2c)`` in LaTeX, simplified for identity and scaled skips."""
    return kind_of(skip).target_latex(skip, c)


def target_plain(skip: Skip, c: sp.Expr) -> str:
    return kind_of(skip).target_plain(skip, c)


def post_ln_skip(skip: Skip, d: int) -> Skip | str:
    """The reduced block's skip ``P·M`` under a post-LN normalisation (Lemma PN), or why there is none."""
    return kind_of(skip).post_ln(skip, d)


def _doubly_stochastic(skip: Skip) -> bool:
    """``M = A ⊗ I_d`` (or ``M = A``) with ``A`` exactly doubly stochastic: entries ≥ 0, rows and columns sum to 1."""
    return kind_of(skip).doubly_stochastic(skip)


def stack_skip_product_nonzero(stack: Stack, cite: str = "") -> tuple[bool | None, str]:
    """Whether ``M_L ⋯ M_1 ≠ 0``, with the reason (``cite``: the result proving that products of doubly
    stochastic mixes are nonzero)."""
    invertible = [skip_invertible(b.skip) for b in stack.blocks]
    if all(v is True for v in invertible):
        return True, "every skip is invertible, so their product is invertible, hence nonzero"
    if any(skip_is_zero(b.skip) for b in stack.blocks):
        return False, "a skip is zero, so the product is zero"
    if all(_doubly_stochastic(b.skip) for b in stack.blocks):
        return True, ("every skip is A ⊗ I_d with A doubly stochastic (an mHC mix); products of doubly stochastic "
                      f"matrices are doubly stochastic, hence nonzero{f' [{cite}]' if cite else ''}")
    if not isinstance(stack.repeat, int):
        return None, "a skip is singular and the depth is symbolic"
    mats = [skip_matrix(b) for b in stack.blocks]
    if any(m is None for m in mats):
        return None, "a skip is singular and the dimension is symbolic"
    product = sp.eye(mats[0].rows)  # type: ignore[union-attr]
    for _ in range(stack.repeat):
        for m in mats:
            product = m * product
    zero = _matrix_is_zero(product)
    if zero is False:
        return True, "the product of the skips, computed exactly, is nonzero"
    if zero is True:
        return False, "the product of the skips, computed exactly, is zero"
    return None, "the product of the skips could not be decided"
