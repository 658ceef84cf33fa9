"""The prover: try the library's results in order, first one whose hypotheses all hold decides.

Every candidate is checked (facts are cached, so this is cheap) so that a derivation can list why
each other result did not apply, and tests can assert that no two results of opposite verdicts
both apply.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import sympy as sp

from ..analysis.budget import DEFAULT_BUDGET
from ..model.activation import Activation, AnyActivation, GatedActivation
from ..model.block import M_WIDTH, Block, D, Skip, Stack
from .derivation import (
    CandidateOutcome,
    Derivation,
    DerivationStep,
    HypothesisCheck,
    HypStatus,
    NodeState,
    Verdict,
)
from .hypotheses import Subject, check
from .library import Library, Result, default_library
from .skips import is_identity_like, skip_latex, target_latex, target_plain

__all__ = ["BIAS_FREE", "Attempt", "attempts", "classify", "prove"]

BIAS_FREE = "bias-free blocks (the paper's setting)"


@dataclass(frozen=True)
class Attempt:
    """One candidate result, checked against one subject."""

    result: Result
    checks: tuple[HypothesisCheck, ...]

    @property
    def holds(self) -> bool:
        return all(c.status.holds for c in self.checks) and len(self.checks) == len(self.result.hypotheses)

    @property
    def failure(self) -> HypothesisCheck | None:
        for c in self.checks:
            if not c.status.holds:
                return c
        return None

    def bindings(self) -> dict[str, object]:
        out: dict[str, object] = {}
        for c in self.checks:
            out.update({k: v for k, v in c.bindings if v is not None})
        return out


def attempts(subject: Subject, library: Library, stop_at_failure: bool = True) -> list[Attempt]:
    """Every candidate result for ``subject``, in priority order, with its hypothesis checks."""
    out = []
    for result in library.deciders(subject.kind):
        checks: list[HypothesisCheck] = []
        for h in result.hypotheses:
            c = check(h.name, subject, dict(h.params))
            checks.append(c)
            if stop_at_failure and not c.status.holds:
                break
        out.append(Attempt(result, tuple(checks)))
    return out


def _fill(template: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template


def _latex_values(attempt: Attempt, skip: Skip | None) -> tuple[dict[str, str], dict[str, str], sp.Expr | None]:
    b = attempt.bindings()
    latex: dict[str, str] = {}
    plain: dict[str, str] = {}
    for key in ("k", "c", "g0"):
        if key in b:
            latex[key] = sp.latex(b[key])
            plain[key] = sp.sstr(b[key])
    constant: sp.Expr | None = None
    if skip is not None:
        latex["M"] = skip_latex(skip)
        c = b.get("c")
        if c is None and "g0" in b:
            c = b["g0"]
        if c is None and attempt.result.id in ("thm8", "thm10"):
            c = sp.Rational(1, 2)
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
    # a size left symbolic is named, not equated with itself ("$d = d$")
    dim = "$d$" if isinstance(block.stream_dim, sp.Symbol) and block.stream_dim.name == "d" else \
        f"$d = {sp.latex(block.stream_dim)}$"
    width = "$m$" if isinstance(block.width, sp.Symbol) and block.width.name == "m" else f"$m = {sp.latex(block.width)}$"
    text = (f"Block `{block.name}`: $R(x) = Mx + {form}$ with {unit}; dimension {dim}, width {width}, "
            f"$M = {skip_latex(block.skip)}$; {weights}.")
    return DerivationStep(text, kind="setting")


def _describe_stack(stack: Stack) -> DerivationStep:
    names = ", ".join(f"`{b.name}`" for b in stack.blocks)
    rep = "" if stack.repeat == 1 else f" repeated ${sp.latex(stack.repeat)}$ times"
    return DerivationStep(f"Stack `{stack.name}`: the composition of {names}{rep} (depth $L = {sp.latex(stack.depth)}$); "
                          "it is compared with compositions of residual-free blocks of the same kinds and widths.",
                          kind="setting")


def _hyp_step(c: HypothesisCheck, rid: str) -> DerivationStep:
    how = {"proved": "proved", "assumed": "assumed (stated below)"}.get(c.status.value, c.status.value)
    return DerivationStep(f"Hypothesis of [{rid}]: {c.statement} — {how}.", (rid,), c.evidence, "hypothesis")


def _open(query: str, target: str, kind: str, act: AnyActivation | None, outcomes: list[CandidateOutcome],
          setting: DerivationStep, note: str) -> Derivation:
    steps = [setting]
    for o in outcomes:
        steps.append(DerivationStep(f"[{o.id}] does not apply: {o.reason}.", (o.id,), kind="remark"))
    steps.append(DerivationStep(f"No result of the library decides this {kind}: the answer is open. {note}".strip(),
                                kind="conclusion"))
    return Derivation(query, target, kind, Verdict.OPEN, "all weights", None, None,
                      act.name if act else "", _expr(act), isinstance(act, GatedActivation),
                      assumptions=(BIAS_FREE,), steps=tuple(steps), candidates=tuple(outcomes), cited=())


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


def prove(target: Block | Stack, query: str = "", library: Library | None = None,
          budget: float | None = DEFAULT_BUDGET) -> Derivation:
    """Decide whether ``target``'s skip connection can be absorbed, with the derivation."""
    library = library or default_library()
    if isinstance(target, Stack) and target.uniform and target.repeat == 1:
        return prove(target.blocks[0], query, library, budget)
    if isinstance(target, Stack):
        subject = Subject(stack=target, budget=budget)
        setting = _describe_stack(target)
        act: AnyActivation | None = target.blocks[0].activation if len({b.activation for b in target.blocks}) == 1 \
            else None
        kind = "stack"
    else:
        subject = Subject(block=target, budget=budget)
        setting = _describe_block(target)
        act = target.activation
        kind = "block"
    query = query or f"absorb {target.name}"
    tried = attempts(subject, library)
    chosen = next((a for a in tried if a.holds), None)
    outcomes = _outcomes(tried, chosen)
    if chosen is None:
        return _open(query, target.name, kind, act, outcomes, setting, "")
    return _derive(query, target, kind, act, chosen, outcomes, setting, library)


def _derive(query: str, target: Block | Stack, kind: str, act: AnyActivation | None, chosen: Attempt,
            outcomes: list[CandidateOutcome], setting: DerivationStep, library: Library) -> Derivation:
    r = chosen.result
    skip = target.skip if isinstance(target, Block) else None
    latex, plain, constant = _latex_values(chosen, skip)
    steps: list[DerivationStep] = [setting]
    steps.extend(_hyp_step(c, r.id) for c in chosen.checks)
    cited = [r.id]
    lemma4 = r.conclusion.verdict == "conditional" and skip is not None and "lemma4" in r.uses \
        and not is_identity_like(skip)
    if lemma4:
        cited.append("lemma4")
        steps.append(DerivationStep(
            f"Since $M = {latex.get('M', 'M')}$ is invertible, [lemma4] reduces the question to the block "
            "$x + M^{-1}B(x)$, whose output weights are $M^{-1}W_{\\mathrm{down}}$; the criterion then reads with "
            "$-M$ in place of $-I_d$.", ("lemma4",)))
    for used in r.uses:
        if used not in cited and used != "lemma4":
            cited.append(used)
    for template in r.proof:
        steps.append(DerivationStep(_fill(template, latex), (r.id,)))
    verdict = Verdict(r.conclusion.verdict)
    condition = _fill(r.conclusion.condition, latex) if r.conclusion.condition else None
    condition_plain = _fill(r.conclusion.condition_plain, plain) if r.conclusion.condition_plain else None
    conclusion = {
        Verdict.IMPOSSIBLE: "no residual-free block of the same kind and width equals it, for any weights",
        Verdict.ABSORBABLE: "a residual-free block of the same kind and width equals it",
        Verdict.CONDITIONAL: f"absorbable when ${condition}$ for some index set $S$ (sufficient: "
                             f"{r.conclusion.sufficient}; necessary: {r.conclusion.necessary})",
        Verdict.OPEN: "the question is open",
        Verdict.NOT_ABSORBABLE: "not absorbable for these weights",
    }[verdict]
    steps.append(DerivationStep(f"Therefore [{r.id}]: {conclusion}.", (r.id,), kind="conclusion"))
    if verdict is Verdict.CONDITIONAL and r.id in ("thm8", "thm10"):
        cited.append("cor11")
        steps.append(DerivationStep("By [cor11], the condition fails for almost every choice of weights.", ("cor11",),
                                    kind="remark"))
    assumptions = [BIAS_FREE] + [c.assumption for c in chosen.checks if c.assumption]
    for c in chosen.checks:
        if c.status is HypStatus.ASSUMED and not c.assumption:
            assumptions.append(c.statement)
    if isinstance(target, Block) and not isinstance(target.dim, int):
        assumptions.append("the derivation holds for every size satisfying the stated assumptions")
    return Derivation(query, target.name, kind, verdict, r.conclusion.scope, r.id, r.source,
                      act.name if act else "", _expr(act), isinstance(act, GatedActivation), condition,
                      condition_plain, constant if verdict is Verdict.CONDITIONAL else None,
                      r.conclusion.sufficient, r.conclusion.necessary, tuple(dict.fromkeys(assumptions)),
                      tuple(steps), tuple(outcomes), tuple(library.closure(cited)))


def classify(act: AnyActivation, library: Library | None = None, budget: float | None = DEFAULT_BUDGET) -> Derivation:
    """A single block with identity skip, generic weights, symbolic ``d >= 2`` and ``m >= d``."""
    block = Block(act.name, act, D, M_WIDTH, Skip("identity"))
    kind = "gated " if isinstance(act, GatedActivation) else ""
    return prove(block, f"classify {kind}{act.name}", library, budget)


_ = Activation
