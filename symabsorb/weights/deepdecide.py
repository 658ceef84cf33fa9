"""Concrete deep stacks (MATH.md Part III): the derivation of a stack refined for its inline exact weights.

:func:`refine_deep` runs after the per-block composition (:func:`.concrete.refine_stack`): a stack that composition
already absorbs stays absorbed. Then the deciding result's stack procedure (its ``[conclusion] concrete`` field,
a :class:`~symabsorb.theory.procedures.Procedure` of kind ``stack``; weights/concrete.py attaches these):

* ``slopes-1d`` (Theorem 1D): ``α``, ``β`` exact; the case's condition decided by the exact sign decision; a
  witness whose slopes are compared exactly with ``(α, β)``; ``not-absorbable`` when the condition (necessary and
  sufficient) fails; ``open`` when a sign is undecided.
* ``fold`` (Theorem FA): the exact fold test; the witness, proved equal to ``N R_1`` exactly; when the test fails
  the question stays ``open`` (the condition is sufficient only).

Finally a stack still ``open`` (bias-free ReLU, ``d ≥ 2``, rational weights) gets Theorem FD's certificate when it
succeeds: verdict ``open``, scope ``almost every weight near these`` — never ``not-absorbable``.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any

import sympy as sp

from ..model.block import Stack
from ..theory.derivation import Derivation, DerivationStep, HypothesisCheck, HypStatus, Scope, Verdict, Witness
from ..theory.hyp_deep import profile
from ..theory.library import Library
from ..theory.skips import is_stream_skip
from .deep import (
    FDCertificate,
    Layer,
    _slope_pair_of_free,
    check_fold_witness,
    fd_certificate,
    fold_test,
    fold_witness,
    layers_of,
    slopes_1d,
    witness_1d,
)

__all__ = ["FD_WORDING", "bias_free_relu", "decide_1d", "decide_fold", "fd_step_text", "layers_value", "limit_layers",
           "refine_deep"]

#: §14.3's wording, exactly.
FD_WORDING = "almost every weight near these is not absorbable (Theorem FD, certificate: rank {r} > D_free = {f}); " \
             "these weights themselves are not decided"


def _sp(m: list[list[Fraction]]) -> sp.ImmutableMatrix:
    return sp.ImmutableMatrix([[sp.Rational(x.numerator, x.denominator) for x in row] for row in m]) if m and m[0] \
        else sp.ImmutableMatrix(sp.zeros(len(m), 0))


def _stack_witness(blocks: list[tuple[Any, Any]], verified: str, description: str) -> Witness:
    layers = tuple(Witness((), sp.ImmutableMatrix(up), sp.ImmutableMatrix(down), None, verified) for up, down in blocks)
    return Witness((), None, None, None, verified, layers, description=description)


def bias_free_relu(relu: HypothesisCheck | None) -> str:
    """Why the stack is not proved bias-free ReLU (the arithmetic of Theorems 1D and FA's procedures), or ``""``.

    ``relu``: the hypothesis ``each_bias_free_relu`` checked on the stack by the prover's checker (the answer layer
    hands it here; None: not checked, so not proved). Asked here, not left to the deciding result's hypotheses: a
    user's copy of a result without them must not make these procedures decide another σ."""
    if relu is not None and relu.status is HypStatus.PROVED:
        return ""
    why = (relu.reason or relu.status.value) if relu is not None else "not checked"
    return f"the exact procedure computes with bias-free ReLU only, and this stack is not proved one ({why})"


def refine_deep(target: Stack, derivation: Derivation, library: Library, relu: HypothesisCheck | None,
                fd: bool = True) -> Derivation:
    """``derivation`` (the stack's, after the block composition) refined by Part III for inline exact weights
    (``fd=False``: without Theorem FD's certificate, which ``verify`` re-checks from the report's points).
    ``relu``: ``each_bias_free_relu`` checked on ``target`` by the prover's checker (None: the stack has no
    inline weights, and nothing here asks it)."""
    blocks, symbolic = profile(target)
    derivation = _unrolled_witness(target, derivation, len(blocks), symbolic)
    if symbolic or len(blocks) < 2 or not all(b.has_inline_weights for b in blocks):
        return derivation
    if derivation.verdict is Verdict.ABSORBABLE and derivation.witness is not None:
        # composed block witnesses: the stack result's condition (e.g. Theorem FA's fold condition) is not theirs
        return replace(derivation, condition=None, condition_plain=None, condition_constant=None, sufficient=None,
                       necessary=None)
    if derivation.verdict in (Verdict.NOT_ABSORBABLE, Verdict.IMPOSSIBLE):
        return derivation
    proc = library.procedure(derivation.decided_by)
    if proc is not None and proc.stack and proc.inline is not None:  # Theorem 1D's slopes, Theorem FA's fold test
        if why := bias_free_relu(relu):
            return _open_these(derivation, derivation.decided_by or "", why)
        derivation = proc.inline(target, derivation, library)
        if proc.final:
            return derivation
    if derivation.verdict is Verdict.OPEN:
        derivation = _transfer_1d(target, derivation, library, relu)
    if derivation.verdict is Verdict.OPEN and fd:
        derivation = _fd(target, derivation, library, relu)
    return derivation


def _unrolled_witness(target: Stack, derivation: Derivation, depth: int, symbolic: bool) -> Derivation:
    """A composed witness has one residual-free block per block of the stack as written (``f ^ 3``: one); the
    stack is that list repeated, so the witness is too (``absorb -o`` writes every layer)."""
    w = derivation.witness
    if symbolic or w is None or not w.layers or len(w.layers) == depth or not isinstance(target.repeat, int) \
            or len(w.layers) * target.repeat != depth:
        return derivation
    return replace(derivation, witness=replace(w, layers=tuple(w.layers) * target.repeat))


def _transfer_1d(target: Stack, derivation: Derivation, library: Library, relu: HypothesisCheck | None) -> Derivation:
    """``d = 1``, σ with the tropical limit ``α₊·ReLU`` (not ReLU itself): Theorem 1D's not-absorbable side through
    Lemma T — the bias-free ReLU stack with the same matrices (``W_k`` scaled by ``α₊``) failing its case's condition
    proves the σ-stack not absorbable. The absorbable side never transfers (the verdict then stays open)."""
    found = limit_layers(target, relu)
    if found is None or not found[1] or len(found[0][0].m) != 1:
        return derivation
    layers, transfer = found
    if any(layer.m[0][0] == 0 for layer in layers):
        return derivation
    widths = [layer.width for layer in layers]
    case = "first-one" if widths[0] == 1 else ("wide-then-one" if 1 in widths[1:] else "all-wide")
    if case == "all-wide":
        return derivation
    rid = next((r.id for r in library.results_with(lambda p: p.stack and p.final)
                if any(h.name == "width_profile_1d" and h.param("case") == case for h in r.hypotheses)), None)
    try:
        lt = library.provider("tropical-limit")
    except KeyError:
        return derivation
    if rid is None:
        return derivation
    one = Fraction(1)
    alpha, beta = layers_value(layers, one), -layers_value(layers, -one)
    prod = alpha * beta
    fails = prod != 0 if case == "first-one" else prod > 0
    if not fails:
        return derivation
    cond = "\\alpha\\beta = 0" if case == "first-one" else "\\alpha\\beta \\le 0"
    steps = [DerivationStep(f"By [{lt}], an absorption of this stack (any biases) would give one of the bias-free ReLU "
                            f"stack with the same matrices ({transfer}). That $d = 1$ stack has, exactly, "
                            f"$\\alpha = {alpha}$ and $\\beta = {beta}$: the condition ${cond}$ of [{rid}] fails, and it "
                            "is necessary.", (lt, rid), kind="argument"),
             DerivationStep(f"Therefore, by [{lt}] and [{rid}]: these weights are not absorbable (only this side of "
                            "Theorem 1D transfers to σ).", (lt, rid), kind="conclusion")]
    return replace(derivation, verdict=Verdict.NOT_ABSORBABLE, scope=Scope.THESE, decided_by=rid,
                   source=library.get(rid).source, steps=(*derivation.steps, *steps),
                   cited=tuple(dict.fromkeys([*derivation.cited, *library.closure([rid, lt])])))


def layers_value(layers: list[Layer], t: Fraction) -> Fraction:
    """``F(t)`` of a ``d = 1`` stack of exact layers."""
    y = [t]
    for layer in layers:
        y = layer(y)
    return y[0]


# ---- Theorem 1D ---------------------------------------------------------------------------------------------------


def _case(derivation: Derivation, library: Library) -> str:
    r = library.get(derivation.decided_by or "")
    return next((str(h.param("case")) for h in r.hypotheses if h.name == "width_profile_1d"), "")


def decide_1d(target: Stack, derivation: Derivation, library: Library) -> Derivation:
    rid = derivation.decided_by or ""
    blocks, _ = profile(target)
    widths = [int(b.width) for b in blocks]
    sl = slopes_1d(target)
    case = _case(derivation, library)
    if sl.alpha is None or sl.beta is None or sl.sign_alpha is None or sl.sign_beta is None:
        if case == "all-wide":
            return derivation  # absorbable for all weights; only the explicit witness needs the slopes
        why = sl.how or "the sign of α or β is not decided exactly"
        step = DerivationStep(f"For these weights: {why}; the stack is not decided.", (rid,), kind="conclusion")
        return replace(derivation, verdict=Verdict.OPEN, scope=Scope.THESE, steps=(*derivation.steps, step),
                       notes=(*derivation.notes, why))
    a, b = sp.latex(sl.alpha), sp.latex(sl.beta)
    prod = sl.sign_alpha * sl.sign_beta
    holds = {"first-one": prod == 0, "all-wide": True, "wide-then-one": prod <= 0}[case]
    slopes = DerivationStep(f"Exactly (every ReLU decided by the exact sign decision): $\\alpha = F(1) = {a}$, "
                            f"$\\beta = -F(-1) = {b}$, so $\\alpha\\beta$ is "
                            f"{ {1: 'positive', 0: 'zero', -1: 'negative'}[prod] }.", (rid,), kind="argument")
    if not holds:
        cond = "$\\alpha\\beta = 0$" if case == "first-one" else "$\\alpha\\beta \\le 0$"
        step = DerivationStep(f"The condition {cond} fails, and by [{rid}] it is necessary: these weights are not "
                              "absorbable.", (rid,), kind="conclusion")
        return replace(derivation, verdict=Verdict.NOT_ABSORBABLE, scope=Scope.THESE,
                       steps=(*derivation.steps, slopes, step))
    wit = witness_1d(widths, sl)
    got = _slope_pair_of_free(wit) if wit is not None else None
    from ..analysis.identity import exact_sign
    from .deep import as_expr

    ok = got is not None and exact_sign(as_expr(got[0] - sl.alpha)) == 0 and \
        exact_sign(as_expr(got[1] - sl.beta)) == 0
    if wit is None or not ok:
        why = "the witness of Theorem 1D could not be built or checked exactly"
        step = DerivationStep(f"For these weights: {why}; no verdict is given.", (rid,), kind="conclusion")
        return replace(derivation, verdict=Verdict.OPEN, scope=Scope.THESE, steps=(*derivation.steps, slopes, step),
                       notes=(*derivation.notes, why))
    verified = ("exact: the witness stack's slopes (F'(1), -F'(-1)) equal (alpha, beta), and a d = 1 stack is "
                "determined by its two slopes")
    description = ("Theorem 1D's residual-free blocks (block 1 realises the slopes, every later block passes its "
                   "input); `absorb -o` writes them")
    step = DerivationStep(f"Witness: the first residual-free block realises $(\\alpha, \\beta)$ and every later one passes "
                          f"the image (the identity, or one unit on a half-line); its slopes equal $(\\alpha, \\beta)$ "
                          f"exactly. Therefore [{rid}]: these weights are absorbable.", (rid,), kind="conclusion")
    return replace(derivation, verdict=Verdict.ABSORBABLE, scope=Scope.THESE, steps=(*derivation.steps, slopes, step),
                   witness=_stack_witness(wit, verified, description))


# ---- Theorem FA -------------------------------------------------------------------------------------------------


def decide_fold(target: Stack, derivation: Derivation) -> Derivation:
    rid = derivation.decided_by or ""
    layers = layers_of(target)
    if layers is None:
        why = "the weights are not all rational: the fold test runs in exact rational arithmetic only"
        return _open_these(derivation, rid, why)
    fold = fold_test(layers)
    if fold.state != "fold":
        why = (f"the fold condition (sufficient only) fails: {fold.reason}" if fold.state == "no-fold" else fold.reason)
        return _open_these(derivation, rid, why + "; the question stays open for these weights")
    widths = [layer.width for layer in layers]
    wit = fold_witness(layers, fold, widths)
    if wit is None or not check_fold_witness(layers, fold, wit):
        return _open_these(derivation, rid, "Theorem FA's witness could not be built or checked exactly")
    strict = " with strict signs (so also on an open neighbourhood of these weights)" if fold.strict else \
        " (weak signs: some row vanishes on an image ray; pointwise only)"
    steps = [
        DerivationStep(f"Exact fold test (§14.5): $\\operatorname{{rank}} U_1 = d$ with $U_1[S,:]$ invertible for "
                       f"$S = \\{{{', '.join(map(str, fold.s))}\\}}$; every row of every later block has one sign on the "
                       f"images of the {fold.rays} vertex rays of the first layer{strict}. So $F = N R_1$ with "
                       "$N = N_L \\cdots N_2$.", (rid,), kind="argument"),
        DerivationStep(f"Witness: identity blocks and one block $N R_1$ of width $m_1 + d$; proved equal to $N R_1$ "
                       f"exactly (linear parts and the coefficient of every $|p \\cdot x|$ compared in rational "
                       f"arithmetic). Therefore [{rid}]: these weights are absorbable.", (rid,), kind="conclusion"),
    ]
    verified = ("exact: fold test at the vertex rays, and every witness block equals the identity or N R_1 "
                "(rational arithmetic)")
    description = "Theorem FA's residual-free blocks (identities and one block N R_1); `absorb -o` writes them"
    return replace(derivation, verdict=Verdict.ABSORBABLE, scope=Scope.THESE,
                   steps=(*derivation.steps, *steps),
                   witness=_stack_witness([(_sp(u), _sp(w)) for u, w in wit], verified, description))


def _open_these(derivation: Derivation, rid: str, why: str) -> Derivation:
    step = DerivationStep(f"For these weights: {why}.", (rid,), kind="conclusion")
    return replace(derivation, verdict=Verdict.OPEN, scope=Scope.THESE, steps=(*derivation.steps, step),
                   notes=(*derivation.notes, why))


# ---- Theorem FD ---------------------------------------------------------------------------------------------------


def fd_step_text(cert: FDCertificate) -> str:
    how = f"modulo the prime {cert.prime} (a lower bound of the rank over Q)" if cert.prime else "over Q"
    if cert.sectors and len(cert.points) == 2 * cert.sectors:
        pts = (f"{len(cert.points)} rational points, 2 in each of the {cert.sectors} sectors of the refined kink "
               "arrangement")
    elif cert.sectors:
        pts = (f"{len(cert.points)} rational points (2 were taken in each of the {cert.sectors} sectors of the "
               f"refined kink arrangement; the {2 * cert.sectors - len(cert.points)} where a pre-activation vanishes "
               "are left out)")
    else:
        pts = f"{len(cert.points)} rational points"
    return (f"Theorem FD's certificate: {pts}, every pre-activation at every layer decided nonzero exactly; the exact "
            f"Jacobian in $(U, W)$ ({cert.columns} columns) has rank {cert.rank} {how}, and "
            f"Lemma F's bound (general formula, $r_k = \\min(d, m_k, m_{{k+1}})$) is $D_{{\\mathrm{{free}}}} = "
            f"{cert.d_free}$.")


def _fd(target: Stack, derivation: Derivation, library: Library, relu: HypothesisCheck | None) -> Derivation:
    try:
        fd = library.provider("depth-certificate")
    except KeyError:
        return derivation
    found = limit_layers(target, relu)
    if found is None:
        return derivation
    layers, transfer = found
    if len(layers[0].m) < 2:
        return derivation
    cert = fd_certificate(layers)
    if cert.reason:
        step = DerivationStep(f"Theorem FD's certificate was not computed: {cert.reason}.", (fd,), kind="remark")
        return replace(derivation, steps=(*derivation.steps, step))
    if not cert.certified:
        step = DerivationStep(fd_step_text(cert) + " The rank does not exceed $D_{\\mathrm{free}}$: the certificate "
                              "fails, which proves nothing.", (fd,), kind="remark")
        return replace(derivation, steps=(*derivation.steps, step))
    wording = FD_WORDING.format(r=cert.rank, f=cert.d_free)
    text = fd_step_text(cert)
    if transfer:
        text += (" By Lemma T the certificate is computed on the bias-free ReLU stack with the same matrices "
                 f"({transfer}); an absorption of the σ-stack, with or without biases, would absorb that ReLU stack, "
                 "so the null set transfers (Fubini over the bias coordinates).")
    steps = [DerivationStep(text, (fd, *library.get(fd).uses), kind="argument"),
             DerivationStep(f"Therefore [{fd}]: {wording}. The verdict for these weights stays open: absorbable "
                            "stacks inside $\\Omega$ exist.", (fd,), kind="conclusion")]
    return replace(derivation, verdict=Verdict.OPEN, scope=Scope.NEAR, decided_by=fd,
                   source=library.get(fd).source, steps=(*derivation.steps, *steps),
                   notes=(*derivation.notes, wording), depth_certificate=cert,
                   cited=tuple(dict.fromkeys([*derivation.cited, *library.closure([fd])])))


def limit_layers(target: Stack, relu: HypothesisCheck | None) -> tuple[list[Layer], str] | None:
    """The exact layers Theorem FD's certificate is computed on: the stack itself when every block is bias-free
    ReLU; through Lemma T, for ungated blocks whose σ has the tropical limit ``α₊·ReLU`` (GELU, SiLU, softplus, …,
    biases or not), the bias-free ReLU stack with the same matrices and ``W_k`` scaled by ``α₊`` (the text says
    so); None otherwise. ``relu``: ``each_bias_free_relu`` checked on ``target`` by the prover's checker."""
    from ..theory.hyp_depth import _tropical_relu

    layers = layers_of(target)
    if layers is None:
        return None
    if relu is not None and relu.status is HypStatus.PROVED:
        return layers, ""
    blocks, _ = profile(target)
    out, shown = [], []
    for block, layer in zip(blocks, layers, strict=True):
        if block.gated or is_stream_skip(block.skip) or block.norm != "none":
            return None
        alpha, _why = _tropical_relu(block)
        if alpha is None:
            return None
        a = Fraction(int(alpha.p), int(alpha.q))
        out.append(Layer(layer.m, [[a * x for x in row] for row in layer.w], layer.u))
        shown.append(f"{block.name}: α₊ = {alpha}")
    return out, "; ".join(dict.fromkeys(shown))
