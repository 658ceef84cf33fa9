"""JSON: the whole report as data, with a ``schema_version`` (schema: ``report.schema.json``)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from .. import __version__
from ..analysis.serialize import facts_to_dict
from ..answer.types import QueryAnswer, Report
from ..theory.library import Library
from ..theory.serialize import derivation_to_dict, graph_to_dict
from .common import shown_source
from .escape import json_safe
from .formats import RenderOptions, renderer

__all__ = ["SCHEMA_VERSION", "answer_to_dict", "library_fingerprint", "render_answer_json", "render_json", "report_to_dict",
           "schema"]

SCHEMA_VERSION = "1.2"  # 1.1: scope "nondegenerate weights", degenerate_case; 1.2: width verdicts


def answer_to_dict(a: QueryAnswer) -> dict[str, Any]:
    out: dict[str, Any] = {"query": a.query, "kind": a.kind}
    if a.derivation is not None:
        out["derivation"] = derivation_to_dict(a.derivation)
        out["derivation"]["verdict"] = a.verdict  # a width answer's own word (schema 1.2), else the same
        if getattr(a.derivation, "certificate", None) is not None:
            from ..weights.certify import certificate_to_dict

            out["derivation"]["certificate"] = certificate_to_dict(a.derivation.certificate)
    if a.facts is not None:
        out["facts"] = facts_to_dict(a.facts)
        out["order"] = a.order
    return out


def library_fingerprint(library: Library) -> dict[str, Any]:
    """Which library a report was proved with (:meth:`~symabsorb.theory.library.Library.fingerprint`)."""
    return library.fingerprint()


def report_to_dict(report: Report) -> dict[str, Any]:
    states = report.node_states()
    graph = graph_to_dict(report.library, states)
    for node in graph.get("nodes", ()):  # a --theorems result is the user's, whatever its file claims
        if node.get("id") in report.library.results:
            node["source"] = shown_source(report.library.results[node["id"]])
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "symabsorb", "version": __version__, "library": library_fingerprint(report.library)},
        "spec": {"path": report.spec_path, "text": report.spec_text},
        "queries": [answer_to_dict(a) for a in report.answers],
        "references": [{"id": rid, "label": report.library.results[rid].label,
                        "source": shown_source(report.library.results[rid]),
                        "citation": report.library.results[rid].citation,
                        "statement": report.library.results[rid].statement} for rid in report.cited()],
        "graph": graph,
    }


@renderer("json", suffixes=(".json",))
def render_json(report: Report, opts: RenderOptions | None = None) -> str:
    return json_safe(json.dumps(report_to_dict(report), indent=2, ensure_ascii=False, sort_keys=False)) + "\n"


@renderer("json", kind="answer")
def render_answer_json(answer: QueryAnswer, library: Any = None, opts: RenderOptions | None = None) -> str:
    return json_safe(json.dumps(answer_to_dict(answer), indent=2, ensure_ascii=False)) + "\n"


def schema() -> dict[str, Any]:
    """The JSON Schema shipped with the package."""
    text = resources.files("symabsorb.report").joinpath("report.schema.json").read_text(encoding="utf-8")
    result: dict[str, Any] = json.loads(text)
    return result
