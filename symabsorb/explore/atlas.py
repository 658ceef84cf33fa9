"""The atlas: what an exploration found, as data for the renderers (``report.atlas``).

* counts of verdicts per deciding result, ungated and gated;
* every open case grouped by its *nearest misses*: the results about activations (not about the
  setting) with the fewest hypotheses that fail or stay undecided;
* the frontier: for each (result, hypothesis), how many open cases it is the **only** obstacle for,
  i.e. how many a proof of that undecided fact, or a result without that hypothesis, would close;
* conjectures with their evidence (never counted as decided);
* for a family: verdicts over the parameter grid and their check against the symbolic split;
* depth-2 stacks: evidence about the paper's open problem.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..model.space import Space
from .family import cell_of, grid_points, point_values

__all__ = ["Atlas", "CountRow", "FamilyMap", "FrontierItem", "OpenCase", "OpenGroup", "SpaceAtlas", "build_atlas"]

_EXAMPLES = 6


@dataclass(frozen=True)
class CountRow:
    gated: bool
    verdict: str
    decided_by: str | None
    count: int


@dataclass(frozen=True)
class OpenCase:
    id: str
    label: str
    expr: str
    gated: bool
    status: str  # done | budget | error
    misses: tuple[tuple[str, str, str, str], ...]  # (result, hypothesis, status, reason) of the nearest misses
    conjecture: dict[str, Any] | None  # the evidence record, if searched
    not_searched: str | None = None  # why no evidence was searched, when none was


@dataclass(frozen=True)
class OpenGroup:
    """Open cases with the same obstacles: ``result`` is the kind of unit (gated/ungated), ``hypothesis``
    the failing facts (``name status``, comma-separated), ``status`` refuted/unknown (some fact is
    only undecided)/budget/error."""

    result: str
    hypothesis: str
    status: str
    reason: str
    cases: tuple[str, ...]  # labels (gated ones prefixed "gated ")


@dataclass(frozen=True)
class FrontierItem:
    kind: str  # "undecided fact" | "missing result"
    result: str
    verdict: str  # what the result concludes when it applies
    hypothesis: str
    reason: str
    closes: int
    examples: tuple[str, ...]


@dataclass(frozen=True)
class FamilyMap:
    params: tuple[str, ...]
    axes: tuple[tuple[str, ...], ...]  # exact values per parameter
    points: tuple[tuple[tuple[str, ...], bool, str, str | None], ...]  # (values, gated, verdict, decided_by)
    cells: tuple[tuple[tuple[str, ...], bool, str, str | None], ...]  # (signs, gated, verdict, decided_by)
    agree: int
    refined: int  # the cell is open symbolically, the point is decided
    both_open: int
    point_open: int  # the cell is decided, the point is not (the engine lost information on a number)
    conflicts: tuple[tuple[str, bool, str, str], ...]  # (point, gated, point verdict, cell verdict)


@dataclass(frozen=True)
class SpaceAtlas:
    name: str
    source: str
    parametric: bool
    enumeration: dict[str, Any] | None
    counts: tuple[CountRow, ...]
    cases: int
    open_cases: tuple[OpenCase, ...]
    groups: tuple[OpenGroup, ...]
    frontier: tuple[FrontierItem, ...]
    family: FamilyMap | None
    cpu_s: float


@dataclass(frozen=True)
class Atlas:
    title: str
    spaces: tuple[SpaceAtlas, ...]
    stacks: tuple[dict[str, Any], ...]
    run: dict[str, Any]

    @property
    def conjectures(self) -> int:
        return sum(1 for s in self.spaces for c in s.open_cases if c.conjecture is not None)


def _label(r: dict[str, Any]) -> str:
    return ("gated " if r.get("gated") else "") + str(r.get("label"))


def _misses(r: dict[str, Any]) -> tuple[tuple[str, str, str, str], ...]:
    outcomes = [o for o in r.get("outcomes", []) if not o["setting"] and o["blockers"]]
    if not outcomes:
        return ()
    least = min(len(o["blockers"]) for o in outcomes)
    out = []
    for o in outcomes:
        if len(o["blockers"]) == least:
            for b in o["blockers"]:
                out.append((o["result"], b["hypothesis"], b["status"], b["reason"]))
    return tuple(out)


def _profile(r: dict[str, Any]) -> dict[tuple[str, str], str]:
    """Every (hypothesis, status) that blocks a result about activations, with an example reason."""
    out: dict[tuple[str, str], str] = {}
    for o in r.get("outcomes", []):
        if o["setting"]:
            continue
        for b in o["blockers"]:
            out.setdefault((b["hypothesis"], b["status"]), b["reason"])
    return out


def _groups(records: list[dict[str, Any]]) -> tuple[OpenGroup, ...]:
    """Open cases partitioned by their obstacle profile: the facts that failed or stayed undecided.
    Facts that fail in every open case of the same kind (gated or not) are left out of the key: they
    tell nothing apart (``σ is not ReLU``)."""
    profiles = {r["id"]: _profile(r) for r in records}
    common: dict[bool, set[tuple[str, str]]] = {}
    for gated in (False, True):
        mine = [set(profiles[r["id"]]) for r in records if bool(r.get("gated")) == gated and r.get("status") == "done"]
        common[gated] = set.intersection(*mine) if len(mine) > 1 else set()
    members: dict[tuple[bool, str, tuple[tuple[str, str], ...]], list[str]] = defaultdict(list)
    reasons: dict[tuple[bool, str, tuple[tuple[str, str], ...]], str] = {}
    for r in records:
        gated = bool(r.get("gated"))
        key: tuple[bool, str, tuple[tuple[str, str], ...]]
        if r.get("status") != "done":
            key = (gated, str(r.get("status")), ())
            reasons[key] = str(r.get("error") or r.get("status"))
        else:
            prof = profiles[r["id"]]
            facts = tuple(sorted(k for k in prof if k not in common[gated]))
            key = (gated, "done", facts)
            shown = facts or tuple(sorted(k for k in prof if k[0] != "same_function"))
            reasons.setdefault(key, ("" if facts else "only the obstacles every open case shares: ")
                               + "; ".join(f"{prof[k]} ({k[1]})" for k in shown))
        members[key].append(_label(r))
    groups = [OpenGroup("gated" if k[0] else "ungated",
                        ", ".join(f"{h} {s}" for h, s in k[2]) or ("common obstacles only" if k[1] == "done" else k[1]),
                        k[1] if k[1] != "done" else ("unknown" if any(s == "unknown" for _, s in k[2]) else "refuted"),
                        reasons[k], tuple(sorted(v))) for k, v in members.items()]
    return tuple(sorted(groups, key=lambda g: (-len(g.cases), g.result, g.hypothesis)))


def _frontier(records: list[dict[str, Any]], groups: tuple[OpenGroup, ...]) -> tuple[FrontierItem, ...]:
    """Undecided facts that are the only obstacle of a result, by the number of open cases a proof
    would close; then the missing results: one per obstacle profile, closing that profile's cases."""
    closes: Counter[tuple[str, str, str]] = Counter()
    examples: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    reasons: dict[tuple[str, str, str], str] = {}
    for r in records:
        seen = set()
        for o in r.get("outcomes", []):
            if o["setting"] or len(o["blockers"]) != 1 or o["blockers"][0]["status"] != "unknown":
                continue
            b = o["blockers"][0]
            key = (o["result"], o["verdict"], b["hypothesis"])
            if key in seen:
                continue
            seen.add(key)
            closes[key] += 1
            examples[key].append(_label(r))
            reasons.setdefault(key, b["reason"])
    items = [FrontierItem("undecided fact", k[0], k[1], k[2], reasons[k], n, tuple(sorted(examples[k])[:_EXAMPLES]))
             for k, n in closes.items()]
    items.sort(key=lambda i: (-i.closes, i.result, i.hypothesis))
    missing = [FrontierItem("missing result", f"new result, {g.result} units", "—", g.hypothesis, g.reason, len(g.cases),
                            g.cases[:_EXAMPLES]) for g in groups if g.status in ("refuted", "unknown")]
    return tuple(items) + tuple(missing)


def _counts(records: list[dict[str, Any]]) -> tuple[CountRow, ...]:
    c = Counter((bool(r.get("gated")), str(r.get("verdict")), r.get("decided_by")) for r in records)
    order = {"impossible": 0, "conditional": 1, "absorbable": 2, "not-absorbable": 3, "open": 4}
    rows = [CountRow(g, v, d, n) for (g, v, d), n in c.items()]
    return tuple(sorted(rows, key=lambda x: (x.gated, order.get(x.verdict, 9), -x.count, x.decided_by or "")))


def _family(space: Space, grid: list[dict[str, Any]], cells: list[dict[str, Any]]) -> FamilyMap:
    names = tuple(str(r.symbol) for r in space.ranges)
    axes = tuple(tuple(dict.fromkeys(str(p.values[i]) for p in grid_points(space))) for i in range(len(names)))
    cell_verdict = {(tuple(r["params"].values()), bool(r["gated"])): (r["verdict"], r.get("decided_by")) for r in cells}
    points = []
    agree = refined = both_open = point_open = 0
    conflicts = []
    for r in grid:
        values = tuple(str(v) for v in r["params"].values())
        gated = bool(r["gated"])
        points.append((values, gated, r["verdict"], r.get("decided_by")))
        cell = cell_verdict.get((cell_of(tuple(point_values(r))), gated))
        if cell is None:
            continue
        cv = cell[0]
        if cv == "open":
            if r["verdict"] == "open":
                both_open += 1
            else:
                refined += 1
        elif r["verdict"] == "open":
            point_open += 1
        elif r["verdict"] == cv:
            agree += 1
        else:
            conflicts.append((r["label"], gated, r["verdict"], cv))
    cell_rows = tuple(sorted(((tuple(r["params"].values()), bool(r["gated"]), r["verdict"], r.get("decided_by"))
                              for r in cells), key=lambda x: (x[1], x[0])))
    return FamilyMap(names, axes, tuple(sorted(points, key=lambda p: (p[1], [Fraction(v) for v in p[0]]))), cell_rows,
                     agree, refined, both_open, point_open, tuple(conflicts))


def _why_not_searched(r: dict[str, Any], parametric: bool, evidence: bool) -> str:
    """Why an open case has no evidence record (the evidence phase skips these, see ``run._evidence_jobs``)."""
    if parametric:
        return ("a family's grid points are classified, not searched (the evidence search runs on enumerated "
                "spaces; write the point as its own space or block to search it)")
    if r.get("status") == "budget":
        return "the classification ran out of its CPU budget (open for lack of time): raise --case-budget first"
    if r.get("status") == "error":
        return "the classification failed (see the JSON record)"
    if not evidence:
        return "the evidence phase was skipped (--no-evidence)"
    return "not searched yet (the run stopped before it; a second run resumes)"


def build_atlas(title: str, spaces: tuple[Space, ...], records: dict[str, dict[str, Any]],
                enumerations: dict[str, dict[str, Any]], run: dict[str, Any], evidence: bool = True) -> Atlas:
    """The atlas of ``spaces`` from the results' records (sorted: the output is deterministic).
    ``evidence``: whether the evidence phase ran (it says why an open case has no conjecture)."""
    searched = {r["of"]: r for r in records.values() if r.get("kind") == "evidence" and "of" in r}
    out = []
    for space in spaces:
        mine = sorted((r for r in records.values() if r.get("space") == space.name),
                      key=lambda r: (_label(r), r["id"]))
        if space.parametric:
            grid = [r for r in mine if r.get("kind") == "grid"]
            cells = [r for r in mine if r.get("kind") == "cell"]
            considered = grid
            family: FamilyMap | None = _family(space, grid, cells)
        else:
            considered = [r for r in mine if r.get("kind") == "classify"]
            family = None
        open_records = [r for r in considered if r.get("verdict") == "open"]
        open_cases = tuple(OpenCase(r["id"], str(r["label"]), str(r.get("expr", "")), bool(r["gated"]),
                                    str(r.get("status")), _misses(r), searched.get(r["id"]),
                                    None if r["id"] in searched else _why_not_searched(r, space.parametric, evidence))
                           for r in open_records)
        groups = _groups(open_records)
        enum = enumerations.get(space.name)
        summary = None if enum is None else {k: v for k, v in enum.items() if k not in ("survivors", "key")}
        if enum is not None:
            summary = {**(summary or {}), "survivors": len(enum["survivors"])}
        out.append(SpaceAtlas(space.name, space.source, space.parametric, summary, _counts(considered),
                              len(considered), open_cases, groups, _frontier(open_records, groups), family,
                              round(sum(float(r.get("cpu_s", 0.0)) for r in mine), 1)))
    stacks = tuple(sorted((r for r in records.values() if r.get("kind") == "stack"),
                          key=lambda r: (str(r.get("label")), bool(r.get("planted")), r["id"])))
    return Atlas(title, tuple(out), stacks, run)
