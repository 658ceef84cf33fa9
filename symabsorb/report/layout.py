"""A layered drawing of a directed acyclic graph (Sugiyama's method), in pure Python and deterministic.

1. **Layers**: a width-bounded greedy layering in topological order (longest path to a sink first), so
   that no layer holds more than ``max_per_layer`` nodes, then every node moves as close to its first
   user as room allows (short edges instead of a crowded top row).
2. **Crossing reduction**: an edge spanning several layers becomes a chain of dummy nodes; barycentric
   sweeps down and up, each followed by adjacent swaps while they remove crossings; the order with the
   fewest crossings wins.
3. **Coordinates**: alternate sweeps pull each node towards the mean of its neighbours in the previous
   layer, as a weighted isotonic regression under the minimum-separation constraints (exact, by pool
   adjacent violators), so long edges run straight through their dummies.

Edges come out as polylines through their dummies; renderers draw them as smooth curves.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Layout", "count_crossings", "layout_dag"]


@dataclass(frozen=True)
class Layout:
    """Node centres (x) and tops (y), the layers, each edge's points from ``u``'s bottom to ``v``'s top."""

    x: Mapping[str, float]
    y: Mapping[str, float]
    widths: Mapping[str, float]
    node_height: float
    layers: tuple[tuple[str, ...], ...]  # real nodes only, left to right
    edges: tuple[tuple[str, str, tuple[tuple[float, float], ...]], ...]
    width: float
    height: float
    crossings: int


def _topological(nodes: Sequence[str], preds: Mapping[str, list[str]], succs: Mapping[str, list[str]],
                 key: Mapping[str, tuple[float, str]]) -> list[str]:
    indegree = {v: len(preds[v]) for v in nodes}
    ready = [(key[v], v) for v in nodes if indegree[v] == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        _, v = heapq.heappop(ready)
        order.append(v)
        for s in succs[v]:
            indegree[s] -= 1
            if indegree[s] == 0:
                heapq.heappush(ready, (key[s], s))
    if len(order) != len(nodes):
        raise ValueError("the graph has a cycle")  # the library rejects cycles when it loads
    return order


def _layers(nodes: Sequence[str], preds: Mapping[str, list[str]], succs: Mapping[str, list[str]],
            cap: int) -> dict[str, int]:
    height: dict[str, int] = {}
    plain = {v: (0.0, v) for v in nodes}
    for v in reversed(_topological(nodes, preds, succs, plain)):
        height[v] = max((height[s] + 1 for s in succs[v]), default=0)
    # isolated nodes last, so they fill the gaps the connected part leaves
    key = {v: (1.0 if not preds[v] and not succs[v] else 0.0 - height[v], v) for v in nodes}
    order = _topological(nodes, preds, succs, key)
    layer: dict[str, int] = {}
    count: dict[int, int] = {}
    for v in order:
        at = max((layer[p] + 1 for p in preds[v]), default=0)
        while count.get(at, 0) >= cap:
            at += 1
        layer[v] = at
        count[at] = count.get(at, 0) + 1
    for v in reversed(order):  # pull towards the first user
        if not succs[v]:
            continue
        target = min(layer[s] for s in succs[v]) - 1
        for at in range(target, layer[v], -1):
            if count.get(at, 0) < cap:
                count[layer[v]] -= 1
                layer[v] = at
                count[at] = count.get(at, 0) + 1
                break
    used = sorted(set(layer.values()))  # close empty layers
    rank = {at: i for i, at in enumerate(used)}
    return {v: rank[at] for v, at in layer.items()}


def count_crossings(order: Sequence[Sequence[str]], down: Mapping[str, list[str]]) -> int:
    """Edge crossings between consecutive layers of ``order`` (``down``: each node's lower neighbours)."""
    total = 0
    for upper, lower in itertools.pairwise(order):
        pos = {v: i for i, v in enumerate(lower)}
        pairs = [(i, pos[w]) for i, v in enumerate(upper) for w in down[v] if w in pos]
        for k, (a1, b1) in enumerate(pairs):
            for a2, b2 in pairs[k + 1:]:
                if (a1 - a2) * (b1 - b2) < 0:
                    total += 1
    return total


def _isotonic(values: Sequence[float], weights: Sequence[float]) -> list[float]:
    """The weighted least-squares non-decreasing fit of ``values`` (pool adjacent violators)."""
    blocks: list[list[float]] = []  # [mean, weight, count]
    for v, w in zip(values, weights, strict=True):
        blocks.append([v, w, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, w2, c2 = blocks.pop()
            m1, w1, c1 = blocks.pop()
            blocks.append([(m1 * w1 + m2 * w2) / (w1 + w2), w1 + w2, c1 + c2])
    out: list[float] = []
    for mean, _, count in blocks:
        out.extend([mean] * int(count))
    return out


def layout_dag(nodes: Sequence[str], edges: Sequence[tuple[str, str]], widths: Mapping[str, float], *,
               node_height: float = 34.0, gap_x: float = 22.0, gap_y: float = 58.0, margin: float = 12.0,
               max_per_layer: int | None = None, sweeps: int = 24) -> Layout:
    """Lay out the DAG ``nodes``/``edges`` (``u -> v``: ``u`` drawn above ``v``), each node ``widths[v]`` wide.

    Without ``max_per_layer``, the layer widths around ``sqrt(n)`` are tried and the drawing with the
    fewest crossings wins (ties: the one closest to a 3:2 landscape)."""
    if max_per_layer is not None:
        return _layout(nodes, edges, widths, node_height, gap_x, gap_y, margin, max_per_layer, sweeps)
    root = math.ceil(math.sqrt(max(len(set(nodes)), 1)))
    tries = [_layout(nodes, edges, widths, node_height, gap_x, gap_y, margin, cap, sweeps)
             for cap in range(max(3, root - 2), max(3, root + 2) + 1)]
    return min(tries, key=lambda t: (t.crossings, abs(math.log(max(t.width, 1.0) / max(t.height, 1.0) / 1.5))))


def _layout(nodes: Sequence[str], edges: Sequence[tuple[str, str]], widths: Mapping[str, float],
            node_height: float, gap_x: float, gap_y: float, margin: float, cap: int, sweeps: int) -> Layout:
    nodes = sorted(set(nodes))
    edges = sorted({(u, v) for u, v in edges if u != v})
    preds: dict[str, list[str]] = {v: [] for v in nodes}
    succs: dict[str, list[str]] = {v: [] for v in nodes}
    for u, v in edges:
        succs[u].append(v)
        preds[v].append(u)
    layer = _layers(nodes, preds, succs, cap)
    depth = max(layer.values(), default=-1) + 1

    # dummy chains for long edges
    up: dict[str, list[str]] = {v: [] for v in nodes}
    down: dict[str, list[str]] = {v: [] for v in nodes}
    width: dict[str, float] = {v: float(widths[v]) for v in nodes}
    at: dict[str, int] = dict(layer)
    chains: dict[tuple[str, str], list[str]] = {}
    for u, v in edges:
        chain = [u]
        for k in range(layer[u] + 1, layer[v]):
            d = f"\x00{u}\x00{v}\x00{k}"  # cannot clash with a result id (no NUL in TOML keys)
            up[d], down[d], width[d], at[d] = [], [], 6.0, k
            chain.append(d)
        chain.append(v)
        for a, b in itertools.pairwise(chain):
            down[a].append(b)
            up[b].append(a)
        chains[(u, v)] = chain

    # initial order: depth-first from the roots, so connected parts start together
    order: list[list[str]] = [[] for _ in range(depth)]
    seen: set[str] = set()

    def visit(v: str) -> None:
        stack = [v]
        while stack:
            w = stack.pop()
            if w in seen:
                continue
            seen.add(w)
            order[at[w]].append(w)
            stack.extend(sorted(down[w], reverse=True))

    for v in sorted(nodes, key=lambda n: (layer[n], n)):
        if not up[v]:
            visit(v)
    for v in sorted(at):  # (every node is reachable from a root in a DAG; kept for safety)
        if v not in seen:
            visit(v)

    def pair_crossings(a: str, b: str, pos_up: dict[str, int], pos_down: dict[str, int]) -> int:
        """Crossings among the edges of ``a`` and ``b`` (neighbours on both sides) with ``a`` left of ``b``."""
        total = 0
        for nb, pos in ((up, pos_up), (down, pos_down)):
            pa = [pos[w] for w in nb[a] if w in pos]
            pb = [pos[w] for w in nb[b] if w in pos]
            total += sum(1 for i in pa for j in pb if i > j)
        return total

    def transpose(lay: list[list[str]]) -> None:
        improved, rounds = True, 0
        while improved and rounds < 8:
            improved, rounds = False, rounds + 1
            for i, row in enumerate(lay):
                pos_up = {v: k for k, v in enumerate(lay[i - 1])} if i > 0 else {}
                pos_down = {v: k for k, v in enumerate(lay[i + 1])} if i + 1 < len(lay) else {}
                for j in range(len(row) - 1):
                    a, b = row[j], row[j + 1]
                    if pair_crossings(b, a, pos_up, pos_down) < pair_crossings(a, b, pos_up, pos_down):
                        row[j], row[j + 1] = b, a
                        improved = True

    best = [list(r) for r in order]
    best_count = count_crossings(best, down)
    for sweep in range(sweeps):
        if best_count == 0:
            break
        downward = sweep % 2 == 0
        rows = range(1, depth) if downward else range(depth - 2, -1, -1)
        for i in rows:
            ref = order[i - 1] if downward else order[i + 1]
            pos = {v: k for k, v in enumerate(ref)}
            neighbours = up if downward else down

            scale = len(ref) / max(len(order[i]), 1)

            def bary(item: tuple[int, str], pos: dict[str, int] = pos, neighbours: dict[str, list[str]] = neighbours,
                     scale: float = scale) -> tuple[float, int]:
                k, v = item
                ps = [pos[w] for w in neighbours[v] if w in pos]
                return (sum(ps) / len(ps) if ps else float(k) * scale, k)

            order[i] = [v for _, v in sorted(enumerate(order[i]), key=bary)]
        transpose(order)
        now = count_crossings(order, down)
        if now < best_count:
            best, best_count = [list(r) for r in order], now
    order = best

    # coordinates
    def offsets(row: list[str]) -> list[float]:
        out = [0.0]
        for a, b in itertools.pairwise(row):
            dummy = a not in widths or b not in widths
            out.append(out[-1] + (width[a] + width[b]) / 2 + (gap_x / 2 if dummy else gap_x))
        return out

    # block-coordinate descent on sum over edge segments of weight * (x_a - x_b)^2 plus a weak pull to
    # the middle (which keeps separate components together): each layer is solved exactly in turn
    x: dict[str, float] = {}
    for row in order:
        c = offsets(row)
        for v, o in zip(row, c, strict=True):
            x[v] = o - c[-1] / 2
    pull = 0.02
    for sweep in range(2 * sweeps):
        rows = range(depth) if sweep % 2 == 0 else range(depth - 1, -1, -1)
        for i in rows:
            row = order[i]
            desired, weights = [], []
            for v in row:
                total, weight = 0.0, pull
                for w in up[v] + down[v]:
                    ew = 4.0 if v not in widths and w not in widths else 1.0  # keep long edges straight
                    total += ew * x[w]
                    weight += ew
                desired.append(total / weight)
                weights.append(weight)
            c = offsets(row)
            fit = _isotonic([d - o for d, o in zip(desired, c, strict=True)], weights)
            for v, z, o in zip(row, fit, c, strict=True):
                x[v] = z + o
    left = min((x[v] - width[v] / 2 for v in x), default=0.0)
    for v in x:
        x[v] += margin - left
    right = max((x[v] + width[v] / 2 for v in x), default=0.0) + margin
    top = {i: margin + i * (node_height + gap_y) for i in range(depth)}

    routed = []
    for (u, v), chain in sorted(chains.items()):
        pts = [(x[u], top[at[u]] + node_height)]
        for d in chain[1:-1]:
            pts += [(x[d], top[at[d]]), (x[d], top[at[d]] + node_height)]
        pts.append((x[v], top[at[v]]))
        routed.append((u, v, tuple((round(px, 1), round(py, 1)) for px, py in pts)))
    return Layout(x={v: round(x[v], 1) for v in nodes}, y={v: top[layer[v]] for v in nodes},
                  widths={v: width[v] for v in nodes}, node_height=node_height,
                  layers=tuple(tuple(v for v in row if v in widths) for row in order), edges=tuple(routed),
                  width=round(right, 1), height=margin * 2 + depth * node_height + max(depth - 1, 0) * gap_y,
                  crossings=best_count)
