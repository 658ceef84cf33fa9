"""Derivations and the lemma graph as plain data (JSON of ``classify``, ``prove``, ``graph``)."""

from __future__ import annotations

from typing import Any

import sympy as sp

from ..analysis.serialize import evidence_to_dict, expr_text
from .derivation import Derivation, NodeState
from .library import Library

__all__ = ["derivation_to_dict", "graph_to_dict"]


#: Witness matrices with more entries than this are not repeated in the JSON (a flip witness is the
#: input weights with the rows ``index_set`` negated; ``symabsorb absorb -o`` writes it as a file).
WITNESS_JSON_ENTRIES = 65536


def _vector(v: Any) -> list[Any] | None:
    if v is None:
        return None
    return [row[0] for row in (_matrix(v) or [])] if isinstance(v, sp.MatrixBase) else [repr(float(x)) for x in v]


def _layer(layer: Any) -> dict[str, Any]:
    """One block of a stack's witness: its matrices, and its biases and description when it has them (a biased
    block's flip carries ``b_up``, ``b_down``; verify re-checks them)."""
    out: dict[str, Any] = {"index_set": list(layer.index_set), "W_up": _matrix(layer.w_up),
                           "W_down": _matrix(layer.w_down)}
    if layer.w_gate is not None:
        out["W_gate"] = _matrix(layer.w_gate)
    for key in ("b_up", "b_down", "b_gate"):
        if getattr(layer, key) is not None:
            out[key] = _vector(getattr(layer, key))
    if layer.description:
        out["description"] = layer.description
    return out


def _witness(d: Derivation) -> dict[str, Any]:
    w = d.witness
    assert w is not None
    entries = sum(0 if m is None else int(m.shape[0]) * int(m.shape[1]) for m in (w.w_up, w.w_down, w.w_gate))
    out: dict[str, Any] = {"index_set": list(w.index_set), "verified": w.verified}
    if entries > WITNESS_JSON_ENTRIES:
        out.update({"W_up": None, "W_down": None, "W_gate": None,
                    "omitted": f"{entries} entries: the input weights with the units in index_set flipped; "
                               "`symabsorb absorb SPEC --block NAME -o FILE` writes them"})
    else:
        out.update({"W_up": _matrix(w.w_up), "W_down": _matrix(w.w_down), "W_gate": _matrix(w.w_gate)})
    if w.description:
        out["description"] = w.description
    if w.layers:  # a stack's residual-free blocks, one per block (each with its index set when it is a flip)
        out["layers"] = [_layer(layer) for layer in w.layers]
    for key, vector in (("b_up", w.b_up), ("b_down", w.b_down), ("b_gate", w.b_gate)):
        if vector is not None:  # the residual-free block's biases (a biased layer's witness)
            out[key] = _vector(vector)
    return out


def derivation_to_dict(d: Derivation) -> dict[str, Any]:
    return {
        "query": d.query,
        "target": d.target,
        "target_kind": d.target_kind,
        "activation": d.activation,
        "expression": expr_text(d.activation_expr),
        "gated": d.gated,
        "verdict": d.verdict.value,
        "scope": str(d.scope),
        "degenerate_case": d.degenerate,
        "decided_by": d.decided_by,
        "source": d.source,
        "condition": d.condition_plain,
        "condition_latex": d.condition,
        "condition_constant": expr_text(d.condition_constant),
        "sufficient": d.sufficient,
        "necessary": d.necessary,
        "assumptions": list(d.assumptions),
        "steps": [{"text": s.text, "kind": s.kind, "cites": list(s.cites),
                   "evidence": [{"fact": label, **evidence_to_dict(ev)} for label, ev in s.evidence]}
                  for s in d.steps],
        "candidates": [{"id": c.id, "status": c.state.value, "reason": c.reason} for c in d.candidates],
        "cited": list(d.cited),
        "witness": None if d.witness is None else _witness(d),
        "notes": list(d.notes),
        **({} if d.width is None else {"width": {"upper": d.width[0], "lower": d.width[1], "never": d.width[2],
                                                 "lower_scope": d.width[3]}}),
        **({} if d.depth_certificate is None else {"depth_certificate": _depth_certificate(d.depth_certificate)}),
    }


def _depth_certificate(c: Any) -> dict[str, Any]:
    """Theorem FD's certificate as data (``symabsorb.weights.deep.FDCertificate``): the points as exact fractions."""
    return {"rank": c.rank, "d_free": c.d_free, "d_res": c.d_res, "columns": c.columns, "prime": c.prime,
            "sectors": c.sectors, "certified": c.certified,
            "points": [[str(v) for v in point] for point in c.points],
            "claim": "rank of the exact Jacobian of (F(x))_{x in points} in (U, W) > d_free"}


def _matrix(m: Any) -> list[list[str]] | None:
    if m is None:
        return None
    if isinstance(m, sp.MatrixBase):
        return [[sp.sstr(x) for x in m.row(i)] for i in range(m.rows)]
    return [[repr(float(x)) for x in row] for row in m]


def graph_to_dict(library: Library, states: dict[str, NodeState] | None = None) -> dict[str, Any]:
    states = states or {}
    nodes = []
    for rid in sorted(library.results):
        r = library.results[rid]
        nodes.append({"id": r.id, "label": r.label, "title": r.title, "kind": r.kind, "source": r.source,
                      "citation": r.citation, "role": r.role, "verdict": r.conclusion.verdict,
                      "hypotheses": [h.name for h in r.hypotheses],
                      "state": states.get(rid, NodeState.NOT_TRIED).value})
    edges = [{"from": u, "to": v} for u, v in sorted(library.graph.edges)]
    return {"nodes": nodes, "edges": edges}
