"""The prover: try the library's results in order, first one whose hypotheses all hold decides.

Every candidate is checked (facts are cached, so this is cheap) so that a derivation can list why
each other result did not apply, and tests can assert that no two results of opposite verdicts
both apply.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

import sympy as sp

from ..analysis.budget import DEFAULT_BUDGET
from ..analysis.engine import analyze
from ..analysis.facts import Evidence
from ..analysis.fold import fold_target
from ..model.activation import Activation, AnyActivation, GatedActivation
from ..model.block import M_WIDTH, Block, D, Question, Skip, Stack
from ..model.domain import NonReal, domain_gap, nonreal_stretches
from .derivation import (
    CandidateOutcome,
    Derivation,
    DerivationStep,
    HypothesisCheck,
    HypStatus,
    NodeState,
    Scope,
    Verdict,
)
from .hypotheses import Subject, check
from .library import Library, Result
from .proof import SIZES_NOTE, WIDTH_HYPOTHESES, Attempt, Proof, WidthProof
from .skips import is_identity_like, is_stream_skip, skip_latex, target_latex, target_plain

__all__ = ["BIAS_FREE", "SIZES_NOTE", "Attempt", "Proof", "WidthProof", "attempts", "check_result", "check_stack",
           "classify", "derive", "prove", "setting_text", "width_proof"]


BIAS_FREE = "bias-free blocks (the paper's setting)"


def _questions(subject: Subject) -> list[Question]:
    return [b.question for b in subject.blocks()]


def setting_text(questions: Iterable[Question]) -> str:
    """The question answered, in words: ``BIAS_FREE`` for the paper's bare setting."""
    qs = list(dict.fromkeys(questions))
    if all(q.bare for q in qs):
        return BIAS_FREE
    return "; ".join(q.describe() for q in qs)


def _setting_check(result: Result, questions: list[Question]) -> HypothesisCheck | None:
    """A refuted check when ``result`` does not hold in the setting of the question (None: it does)."""
    for q in questions:
        if not result.admits(q.bias_label, q.norm):
            allowed = ", ".join(result.biases)
            norms = ", ".join(result.norms)
            return HypothesisCheck("setting", HypStatus.REFUTED, "the result holds in this setting",
                                   reason=f"proved only for biases in {{{allowed}}}, normalisation in {{{norms}}}; "
                                   f"this question has biases `{q.bias_label}`, normalisation `{q.norm}`")
    return None


def attempts(subject: Subject, library: Library, stop_at_failure: bool = True) -> list[Attempt]:
    """Every candidate result for ``subject``, in priority order, with its hypothesis checks. A result
    is tried only in the setting it holds in (``[setting]`` of its file: biases, normalisation)."""
    out = []
    if subject.library is not library:
        subject = replace(subject, library=library)
    questions = _questions(subject)
    for result in library.deciders(subject.kind):
        outside = _setting_check(result, questions)
        if outside is not None:
            out.append(Attempt(result, (outside,)))
            continue
        out.append(check_result(result, subject, stop_at_failure=stop_at_failure))
    return out


def check_result(result: Result, subject: Subject, *, skip: Iterable[str] = (),
                 stop_at_failure: bool = True) -> Attempt:
    """The one checker: ``result``'s hypotheses (but those named in ``skip``) checked on ``subject``, in
    order, with the declarations the library was loaded against (``subject.library``); the first that
    does not hold ends the attempt with ``stop_at_failure``."""
    skipped = set(skip)
    checks: list[HypothesisCheck] = []
    for h in result.hypotheses:
        if h.name in skipped:
            continue
        c = check(h.name, subject, dict(h.params))
        checks.append(c)
        if stop_at_failure and not c.status.holds:
            break
    return Attempt(result, tuple(checks))


def width_proof(block: Block, base: Derivation, library: Library, budget: float | None = DEFAULT_BUDGET) -> WidthProof:
    """What the width procedures refine for ``block`` decided as ``base``: :data:`WIDTH_HYPOTHESES` checked
    (``odd_linear`` not for a gated block), and Theorem W's attempt (the result providing ``width-exact``,
    nondegeneracy left to its procedure, which checks it on the weights exactly)."""
    subject = Subject(block=block, budget=budget, library=library)
    names = [n for n in WIDTH_HYPOTHESES if not (n == "odd_linear" and block.gated)]
    checks = {name: check(name, subject, {}) for name in names}
    exact = None
    try:
        result = library.get(library.provider("width-exact"))
    except KeyError:
        result = None
    q = block.question
    if result is not None and result.admits(q.bias_label, q.norm) and not block.gated:
        exact = check_result(result, subject, skip=("nondegenerate",))
    return WidthProof(base, checks, exact, subject)


def check_stack(name: str, stack: Stack) -> HypothesisCheck:
    """One hypothesis about ``stack`` checked by the one checker (the deep-stack procedures are handed it)."""
    return check(name, Subject(stack=stack), {})


def _fill(template: str, values: dict[str, str]) -> str:
    """``template`` with each placeholder ``@{key}`` replaced by its value (any other brace is TeX and
    stays). Where the placeholder is a macro's argument (after ``^``, ``_``, ``}`` or a control word:
    ``\\tfrac{1}@{c}``, ``z^@{k}``), the value is braced, so ``c = 2/3`` gives ``\\tfrac{1}{\\frac{2}{3}}``,
    not ``\\tfrac{1}\\frac{2}{3}``."""
    for key, value in values.items():
        placeholder = "@{" + key + "}"
        parts = template.split(placeholder)
        out = parts[0]
        for part in parts[1:]:
            argument = out.endswith(("^", "_", "}")) or re.search(r"\\[A-Za-z]+\s*$", out) is not None
            # `{M}x` with M = I_d: TeX reads `I_dx` as I_d x, plain text as a subscript `dx`; a space says it
            gap = " " if re.search(r"[_^][A-Za-z0-9]$", value) and part[:1].isalpha() else ""
            out += ("{" + value + "}" if argument else value) + gap + part
        template = out
    return template


def _latex_values(attempt: Attempt, skip: Skip | None) -> tuple[dict[str, str], dict[str, str], sp.Expr | None]:
    b = attempt.bindings()
    latex: dict[str, str] = {}
    plain: dict[str, str] = {}
    for key, value in b.items():
        if isinstance(value, str):
            latex[key] = plain[key] = value
        elif isinstance(value, sp.Basic):
            latex[key] = sp.latex(value)
            plain[key] = sp.sstr(value)
    constant: sp.Expr | None = None
    if skip is not None:
        latex["M"] = skip_latex(skip)
        c = b.get("c")
        if c is None and "g0" in b:
            c = b["g0"]
        if c is None and "c_lin" in b:
            # the linear part of a polynomial flip remainder: T is stated, but the concrete-weight
            # search must not treat the condition as the whole criterion (no condition constant)
            c_lin = b["c_lin"]
            if isinstance(c_lin, sp.Expr) and c_lin != 0:
                latex["T"] = target_latex(skip, c_lin)
                plain["T"] = target_plain(skip, c_lin)
            return latex, plain, None
        if isinstance(c, sp.Expr) and c != 0:
            latex["T"] = target_latex(skip, c)
            plain["T"] = target_plain(skip, c)
            constant = c
    return latex, plain, constant


def _describe_block(block: Block) -> DerivationStep:
    act = block.activation
    if isinstance(act, GatedActivation):
        unit = (f"gated units $g(w^\\top x)\\,(v^\\top x)$ with $g(z) = {sp.latex(act.gate.expr)}$ "
                f"(`{act.name}`)")
        form = "W_{\\mathrm{down}}[g(W_{\\mathrm{gate}}x) \\odot W_{\\mathrm{up}}x]"
    else:
        unit = f"$\\sigma(z) = {sp.latex(act.expr)}$ (`{act.name}`)"
        form = "W_{\\mathrm{down}}\\,\\sigma(W_{\\mathrm{up}}x)"
    weights = "concrete weights given in the spec" if block.has_inline_weights else (
        f"weights from `{block.weights.file}`" if block.weights else "arbitrary weights")
    if block.skip.structured and not block.has_inline_weights:  # the question declared: hyper(..., structured: true)
        weights = "Hyper-Connection-structured weights $W_{\\mathrm{down}} = \\beta \\otimes W^0$, otherwise arbitrary"
    # a size left symbolic is named, not equated with itself ("$d = d$")
    dim = "dimension $d$" if isinstance(block.stream_dim, sp.Symbol) and block.stream_dim.name == "d" else \
        f"dimension $d = {sp.latex(block.stream_dim)}$"
    if is_stream_skip(block.skip):  # d is the stream dimension: M = A ⊗ I_d is nd x nd
        d = "" if isinstance(block.dim, sp.Symbol) and block.dim.name == "d" else f" = {sp.latex(block.dim)}"
        total = "" if not isinstance(block.stream_dim, int | sp.Integer) else f" = {sp.latex(block.stream_dim)}"
        dim = f"stream dimension $d{d}$, $n = {block.skip.n}$ streams, block dimension $nd{total}$"
    width = "$m$" if isinstance(block.width, sp.Symbol) and block.width.name == "m" else f"$m = {sp.latex(block.width)}$"
    text = (f"Block `{block.name}`: $R(x) = Mx + {form}$ with {unit}; {dim}, width {width}, "
            f"$M = {skip_latex(block.skip)}$; {weights}.")
    q = block.question
    if not q.bare:
        text += f" The question answered: {q.describe()}."
    return DerivationStep(text, kind="setting")


def _describe_stack(stack: Stack) -> DerivationStep:
    names = ", ".join(f"`{b.name}`" for b in stack.blocks)
    rep = "" if stack.repeat == 1 else f" repeated ${sp.latex(stack.repeat)}$ times"
    # a symbolic depth is named, not equated with itself ("depth $L = L$")
    depth = "depth $L$" if isinstance(stack.depth, sp.Symbol) and stack.depth.name == "L" else \
        f"depth $L = {sp.latex(stack.depth)}$"
    text = (f"Stack `{stack.name}`: the composition of {names}{rep} ({depth}); "
            "it is compared with compositions of residual-free blocks of the same kinds and widths.")
    if not all(b.question.bare for b in stack.blocks):
        text += f" The question answered: {setting_text(b.question for b in stack.blocks)}."
    return DerivationStep(text, kind="setting")


def _hyp_step(c: HypothesisCheck, rid: str) -> DerivationStep:
    how = {"proved": "proved", "assumed": "assumed (stated below)"}.get(c.status.value, c.status.value)
    return DerivationStep(f"Hypothesis of [{rid}]: {c.statement} — {how}.", (rid,), c.evidence, "hypothesis")


def _open(query: str, target: str, kind: str, act: AnyActivation | None, outcomes: list[CandidateOutcome],
          setting: DerivationStep, note: str, question: str = BIAS_FREE) -> Derivation:
    steps = [setting]
    # each candidate and its reason is listed once, with the other candidates: the steps say what kept it open
    failed = sum(1 for o in outcomes if o.state is NodeState.FAILED)
    undecided: dict[str, list[str]] = {}
    for o in outcomes:
        if o.state is not NodeState.FAILED:
            undecided.setdefault(o.reason.removeprefix("undecided: "), []).append(o.id)
    if failed:
        steps.append(DerivationStep(f"{failed} of the {len(outcomes)} candidate results have a hypothesis that fails "
                                    "(each listed with its reason below).", kind="remark"))
    for reason, ids in undecided.items():
        steps.append(DerivationStep(f"{', '.join(f'[{i}]' for i in ids)} {'is' if len(ids) == 1 else 'are'} not "
                                    f"decided: {reason}.", tuple(ids), kind="remark"))
    steps.append(DerivationStep(f"No result of the library decides this {kind}: the answer is open. {note}".strip(),
                                kind="conclusion"))
    return Derivation(query, target, kind, Verdict.OPEN, "all weights", None, None,
                      act.name if act else "", _expr(act), isinstance(act, GatedActivation),
                      assumptions=(question,), steps=tuple(steps), candidates=tuple(outcomes), cited=())


def _undefined(target: Block | Stack) -> tuple[str, sp.Expr] | None:
    """An activation of ``target`` (or its gate) with a real point where it has no value."""
    from ..analysis.continuity import undefined_point

    blocks = target.blocks if isinstance(target, Stack) else (target,)
    for b in blocks:
        expr = _expr(b.activation)
        point = None if expr is None else undefined_point(expr)
        if point is not None:
            return b.activation.name, point
    return None


def _domain_gap(target: Block | Stack) -> str | None:
    """Why an activation of ``target`` as written may have no value at a real point that its simplified form
    hides (a divisor SymPy cancelled: ``z^2/z``), when that is not proved harmless."""
    blocks = target.blocks if isinstance(target, Stack) else (target,)
    for b in blocks:
        act = b.activation
        gap = domain_gap((act.gate if isinstance(act, GatedActivation) else act).conditions)
        if gap is not None:
            return gap.sentence(act.name)
    return None


def _nonreal(target: Block | Stack) -> tuple[str, NonReal] | None:
    """An activation of ``target`` (or its gate) proved non-real at a point."""
    blocks = target.blocks if isinstance(target, Stack) else (target,)
    for b in blocks:
        expr = _expr(b.activation)
        found = () if expr is None else nonreal_stretches(expr)
        if found:
            return b.activation.name, found[0]
    return None


def _expr(act: AnyActivation | None) -> sp.Expr | None:
    if act is None:
        return None
    return act.gate.expr if isinstance(act, GatedActivation) else act.expr


def _outcomes(tried: Iterable[Attempt], chosen: Attempt | None) -> list[CandidateOutcome]:
    out = []
    for a in tried:
        if chosen is not None and a.result.id == chosen.result.id:
            out.append(CandidateOutcome(a.result.id, NodeState.APPLIED, "every hypothesis holds"))
        elif a.holds:
            out.append(CandidateOutcome(a.result.id, NodeState.APPLICABLE,
                                        "every hypothesis holds too (an earlier result decided)"))
        else:
            f = a.failure
            assert f is not None
            state = NodeState.FAILED if f.status is HypStatus.REFUTED else NodeState.UNDECIDED
            reason = f.reason or f.statement
            out.append(CandidateOutcome(a.result.id, state,
                                        f"{'fails' if state is NodeState.FAILED else 'undecided'}: {reason}"))
    return out


def prove(target: Block | Stack, library: Library, query: str = "",
          budget: float | None = DEFAULT_BUDGET) -> Derivation:
    """Decide whether ``target``'s skip connection can be absorbed, with the derivation, for
    arbitrary weights of its sizes: concrete weights are the concern of :mod:`symabsorb.weights.concrete`
    (the answer layer hands it this derivation)."""
    return derive(target, library, query, budget).derivation


def derive(target: Block | Stack, library: Library, query: str = "",
           budget: float | None = DEFAULT_BUDGET) -> Proof:
    """:func:`prove`, with the deciding attempt and the block it was checked on (:class:`Proof`)."""
    target = fold_target(target)  # constants proved rational (hidden zeros) are numbers before any check reads σ
    if isinstance(target, Stack) and target.uniform and target.repeat == 1:
        return derive(target.blocks[0], library, query, budget)
    if isinstance(target, Stack):
        subject = Subject(stack=target, budget=budget, library=library)
        setting = _describe_stack(target)
        act: AnyActivation | None = target.blocks[0].activation if len({b.activation for b in target.blocks}) == 1 \
            else None
        kind = "stack"
    else:
        subject = Subject(block=target, budget=budget, library=library)
        setting = _describe_block(target)
        act = target.activation
        kind = "block"
    query = query or f"absorb {target.name}"
    nonreal = _nonreal(target)
    if nonreal is not None:
        name, nr = nonreal
        return Proof(_open(query, target.name, kind, act, [], setting, nr.sentence(name)))
    if isinstance(target, Block) and target.norm in ("post-ln", "post-rms"):
        return _post_norm(target, query, library, budget, setting, act)
    hole = _undefined(target)
    if hole is not None:
        name, point = hole
        return Proof(_open(query, target.name, kind, act, [], setting,
                     f"The activation `{name}` has no finite real value at $z = {sp.latex(point)}$, so it is not a "
                     "function on all of R and no result applies (define its value there, e.g. with "
                     "`if z >= a and z <= a then v else ...`)."))
    gap = _domain_gap(target)
    if gap is not None:
        return Proof(_open(query, target.name, kind, act, [], setting, gap))
    tried = attempts(subject, library)
    chosen = next((a for a in tried if a.holds), None)
    outcomes = _outcomes(tried, chosen)
    if chosen is None:
        return Proof(_open(query, target.name, kind, act, outcomes, setting, "", setting_text(_questions(subject))))
    return _derive(query, target, kind, act, chosen, outcomes, setting, library, subject)


def _post_norm(block: Block, query: str, library: Library, budget: float | None, setting: DerivationStep,
               act: AnyActivation | None) -> Proof:
    """A normalisation after the residual sum: the ``reduction`` result for this placement (its
    hypotheses checked: ``ε > 0``, every scale nonzero), then the reduced block's own question."""
    from .layers import reduced_block

    q = block.question
    question = setting_text([q])
    subject = Subject(block=block, budget=budget, library=library)
    reductions = sorted((r for r in library.results.values() if r.role == "reduction" and block.norm in r.norms
                         and r.admits(q.bias_label, block.norm)), key=lambda r: (r.priority, r.id))
    outcomes: list[CandidateOutcome] = []
    for r in reductions:
        checks = [check(h.name, subject, dict(h.params)) for h in r.hypotheses]
        failed = next((c for c in checks if not c.status.holds), None)
        if failed is not None:
            state = NodeState.FAILED if failed.status is HypStatus.REFUTED else NodeState.UNDECIDED
            outcomes.append(CandidateOutcome(r.id, state, f"{'fails' if state is NodeState.FAILED else 'undecided'}: "
                                             f"{failed.reason or failed.statement}"))
            continue
        reduced = reduced_block(block)
        if isinstance(reduced, str):
            outcomes.append(CandidateOutcome(r.id, NodeState.UNDECIDED, f"undecided: {reduced}"))
            continue
        proof = derive(reduced, library, query, budget)
        sub = proof.derivation
        what = ("the skip $PM$ (here $M = " + skip_latex(reduced.skip) + "$), output weights "
                "$P\\,W_{\\mathrm{down}}$ and output bias $P\\,c$, where $P = I_d - \\tfrac1d\\mathbf{1}\\mathbf{1}^\\top$"
                if block.norm == "post-ln" else "the same block without the normalisation")
        later = [replace(s, text="Reduced block: " + s.text) if s.kind == "setting" else s for s in sub.steps]
        if block.norm == "post-ln":  # the reduced block's output weights are P W_down: every later step says so,
            # so that no step quoted alone reads as a criterion on W_down itself (issue 28 row 3)
            what += " (below, $a_i$ is column $i$ of $P\\,W_{\\mathrm{down}}$)"
            later = [replace(s, text=_with_centring(s.text)) for s in later]
        steps = [setting, *(_hyp_step(c, r.id) for c in checks),
                 DerivationStep(f"By [{r.id}], the question is the ordinary one for the block with {what}; it is "
                                "decided below in the setting of that block.", (r.id,), kind="argument"),
                 *later]
        centred = _with_centring if block.norm == "post-ln" else (lambda text: text)
        assumptions = [question, *(c.assumption for c in checks if c.assumption),
                       *(centred(a) for a in sub.assumptions if a != BIAS_FREE and not a.startswith("the block has"))]
        condition, plain = sub.condition, sub.condition_plain
        if block.norm == "post-ln" and condition and plain:
            condition = condition.replace("W_{\\mathrm{down}}[:,S]", "P\\,W_{\\mathrm{down}}[:,S]")
            plain = plain.replace("W_down[:,S]", "P W_down[:,S]")
        return replace(proof, derivation=replace(
            sub, query=query, steps=tuple(steps), assumptions=tuple(dict.fromkeys(assumptions)),
            condition=condition, condition_plain=plain, notes=tuple(centred(n) for n in sub.notes),
            degenerate=centred(sub.degenerate) if sub.degenerate else sub.degenerate,
            candidates=(CandidateOutcome(r.id, NodeState.APPLIED, "every hypothesis holds"), *sub.candidates),
            cited=tuple(library.closure([r.id, *sub.cited]))))
    note = "" if reductions else f"No result of the library reduces a `{block.norm}` block."
    return Proof(_open(query, block.name, "block", act, outcomes, setting, note, question))


def _with_centring(text: str) -> str:
    """A step of the block reduced by Lemma PN with its output weights written ``P W_down``."""
    return text.replace("W_{\\mathrm{down}}", "P\\,W_{\\mathrm{down}}").replace("W_down", "P W_down")


def _derive(query: str, target: Block | Stack, kind: str, act: AnyActivation | None, chosen: Attempt,
            outcomes: list[CandidateOutcome], setting: DerivationStep, library: Library,
            subject: Subject) -> Proof:
    r = chosen.result
    skip = target.skip if isinstance(target, Block) else None
    latex, plain, constant = _latex_values(chosen, skip)
    steps: list[DerivationStep] = [setting]
    steps.extend(_hyp_step(c, r.id) for c in chosen.checks)
    cited = [r.id]
    reductions = [library.get(u) for u in r.uses if library.get(u).reduction is not None]
    for red in reductions:
        rule = red.reduction
        assert rule is not None
        if r.conclusion.verdict in rule.verdicts and skip is not None and not is_identity_like(skip):
            cited.append(red.id)
            steps.append(DerivationStep(_fill(rule.step, {"M": "M", **latex}), (red.id,)))
    for used in r.uses:
        if used not in cited and library.get(used).reduction is None:
            cited.append(used)
    for template in r.proof:
        steps.append(DerivationStep(_fill(template, latex), (r.id,)))
    verdict = Verdict(r.conclusion.verdict)
    scope = r.conclusion.scope
    condition = _fill(r.conclusion.condition, latex) if r.conclusion.condition else None
    condition_plain = _fill(r.conclusion.condition_plain, plain) if r.conclusion.condition_plain else None
    nondeg = scope == Scope.NONDEGENERATE
    necessary_text = "proved for nondegenerate weights" if nondeg and r.conclusion.necessary == "proved" else \
        r.conclusion.necessary
    sufficient_text = "proved for all weights" if nondeg and r.conclusion.sufficient == "proved" else \
        r.conclusion.sufficient
    iff = r.conclusion.sufficient == "proved" and r.conclusion.necessary == "proved"
    conclusion = {
        Verdict.IMPOSSIBLE: ("no residual-free block of the same kind equals it, for any nondegenerate weights"
                             if nondeg else "no residual-free block of the same kind and width equals it, for any "
                             "weights"),
        Verdict.ABSORBABLE: "a residual-free block of the same kind and width equals it",
        Verdict.CONDITIONAL: f"absorbable {'exactly' if iff else ''} when ${condition}$ "
                             f"{'for some index set $S$ ' if 'S' in (condition_plain or '') else ''}(sufficient: "
                             f"{sufficient_text}; necessary: {necessary_text})".replace("  ", " "),
        Verdict.OPEN: "the question is open",
        Verdict.NOT_ABSORBABLE: "not absorbable for these weights",
    }[verdict]
    steps.append(DerivationStep(f"Therefore [{r.id}]: {conclusion}.", (r.id,), kind="conclusion"))
    degenerate = _fill(r.conclusion.degenerate, latex) if r.conclusion.degenerate else None
    # concrete weights get their own scope (these weights) from weights/decide.py: no generic remark about
    # "almost every weight choice" contradicts what is checked on them
    concrete = isinstance(target, Block) and (target.has_inline_weights or target.weights is not None)
    if nondeg and degenerate and not concrete:
        rows = ("rows of $W_{\\mathrm{gate}}$ nonzero and pairwise non-collinear, rows of $W_{\\mathrm{up}}$ and columns "
                "of $W_{\\mathrm{down}}$ nonzero" if isinstance(act, GatedActivation) else
                "rows of $W_{\\mathrm{up}}$ nonzero and pairwise non-collinear, columns of $W_{\\mathrm{down}}$ nonzero")
        steps.append(DerivationStep(f"Scope: nondegenerate weights ({rows}), which is almost every weight choice; "
                                    f"{degenerate}.", (r.id,), kind="remark"))
    for remark in r.remarks:
        if remark.generic and concrete:
            continue  # a remark about generic weights (Cor. 11) says nothing about these weights
        if not all(check(h.name, subject, dict(h.params)).status is HypStatus.PROVED for h in remark.when):
            continue
        cited.append(remark.cite)
        evidence: tuple[tuple[str, Evidence], ...] = ()
        if "symmetry" in remark.evidence and isinstance(act, Activation):
            evidence = (("Sym(σ)", analyze(act).symmetry.evidence),)
        steps.append(DerivationStep(_fill(remark.text, latex), (remark.cite,), evidence, kind="remark"))
    blocks = target.blocks if isinstance(target, Stack) else (target,)
    assumptions = [setting_text(b.question for b in blocks)] + [c.assumption for c in chosen.checks if c.assumption]
    for c in chosen.checks:
        if c.status is HypStatus.ASSUMED and not c.assumption:
            assumptions.append(c.statement)
    if isinstance(target, Block) and not isinstance(target.dim, int):
        assumptions.append(SIZES_NOTE)
    proc = library.procedure(r)
    constant = constant if verdict is Verdict.CONDITIONAL and proc is not None and proc.index_set else None
    derivation = Derivation(query, target.name, kind, verdict, scope, r.id, r.source,
                            act.name if act else "", _expr(act), isinstance(act, GatedActivation), condition,
                            condition_plain, constant, r.conclusion.sufficient, r.conclusion.necessary,
                            tuple(dict.fromkeys(assumptions)), tuple(steps), tuple(outcomes),
                            tuple(library.closure(cited)), degenerate=degenerate)
    return Proof(derivation, chosen, target if isinstance(target, Block) else None)


def classify(act: AnyActivation, library: Library, budget: float | None = DEFAULT_BUDGET) -> Derivation:
    """A single block with identity skip, generic weights, symbolic ``d >= 2`` and ``m >= d``."""
    block = Block(act.name, act, D, M_WIDTH, Skip("identity"))
    kind = "gated " if isinstance(act, GatedActivation) else ""
    return prove(block, library, f"classify {kind}{act.name}", budget)
