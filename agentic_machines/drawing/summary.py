"""A wide graph summarised for a static picture: the states a row cannot show as one node.

A slide shows a row of a few states; a real agent's graph has dozens at depth 2. The
states of a row (one exploration depth) beyond :data:`WIDTH` become one node,
``… 24 more states at depth 2``, and every edge into or out of them is redirected to it;
edges that then join the same two nodes merge into one, which keeps every completion
(the picture labels it ``6 completions`` and its table lists them). The states kept in a
row come first by role (those a picture marks: chosen, SPE, an embedding's image, ...),
then in exploration order, which is breadth-first, so a kept state's children come before
those of a summarised one (each drawn parent's first child, then their second ...); a
summarised state's children are summarised too when their row is wide. The outcomes (HALT, DIVERGE, a step that raised) are always kept.

>>> import networkx as nx
>>> g = nx.DiGraph(start="r")
>>> g.add_node("r", kind="state", depth=0, prompt="go")
>>> for i in range(5):
...     g.add_node(i, kind="state", depth=1, prompt=f"p{i}")
...     g.add_edge("r", i, completions=[f"c{i}"])
>>> s = summarise(g, width=3)
>>> [n for n in s if not isinstance(n, More)], s.nodes[More(1)]["hidden"]
(['r', 0, 1], 3)
>>> s.edges["r", More(1)]["completions"]
['c2', 'c3', 'c4']
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any

import networkx as nx

from .._outcome import is_end

__all__ = ["WIDTH", "More", "summarise"]

WIDTH = 6
"""The most nodes a row of a static picture shows (the last of them may be the summary
node): at the diagrams' spacing, what a 16:9 slide holds beside its table."""


@dataclass(frozen=True)
class More:
    """The node that stands for the states of row ``depth`` a picture leaves out."""

    depth: int

    def __repr__(self) -> str:
        return f"More({self.depth})"


def summarise(graph: nx.DiGraph, width: int = WIDTH, keep: Iterable[Hashable] = ()) -> nx.DiGraph:
    """``graph`` with each row wider than ``width`` cut to its first ``width - 1`` states
    and a :class:`More` node for the rest; ``graph`` itself when no row is that wide.

    ``keep`` are states kept first in their rows (what the picture marks). A ``More``
    node has ``kind="more"``, ``hidden`` (how many states it stands for), ``depth`` and
    ``expanded`` (False: what lies under it is not drawn state by state). A merged edge
    has the completions of every edge it replaces, ``edges`` (how many) and the first
    one's ``label``.
    """
    if width < 2:
        raise ValueError(f"width={width}: a row needs room for a state and the summary node")
    rows: dict[int, list[Hashable]] = {}
    for n, a in graph.nodes(data=True):
        if not is_end(n):
            rows.setdefault(a.get("depth", 0), []).append(n)
    if all(len(r) <= width for r in rows.values()):
        return graph
    wanted = set(keep)
    start = graph.graph.get("start")
    if start is not None:
        wanted.add(start)
    image: dict[Hashable, Hashable] = {}
    for depth in sorted(rows):
        row = rows[depth]
        if len(row) <= width:
            image.update((n, n) for n in row)
            continue

        # marked states first, then children of states drawn as themselves, taking each
        # such parent's first child before any parent's second (one child under each)
        turn: dict[Hashable, int] = {}
        count: dict[Hashable, int] = {}
        for n in row:
            parents = [p for p in graph.predecessors(n) if p != n and image.get(p) == p]
            if parents:
                count[parents[0]] = count.get(parents[0], 0) + 1
                turn[n] = count[parents[0]]

        order = {n: i for i, n in enumerate(row)}
        keys = {n: (n not in wanted, n not in turn, turn.get(n, 0), order[n]) for n in row}
        shown = set(sorted(row, key=keys.__getitem__)[: width - 1])
        for n in row:
            image[n] = n if n in shown else More(depth)
    for n in graph:
        image.setdefault(n, n)  # the outcomes
    out = nx.DiGraph()
    out.graph.update(graph.graph)
    hidden: dict[More, int] = {}
    for n, a in graph.nodes(data=True):
        m = image[n]
        if isinstance(m, More):
            hidden[m] = hidden.get(m, 0) + 1
            if m not in out:
                out.add_node(m, kind="more", depth=m.depth, prompt=None, expanded=False)
        else:
            out.add_node(n, **a)
    for m, k in hidden.items():
        out.nodes[m]["hidden"] = k
    for u, v, a in graph.edges(data=True):
        key = (image[u], image[v])
        cs = list(a.get("completions") or [])
        if out.has_edge(*key):
            e: dict[str, Any] = out.edges[key]
            e["completions"] = e["completions"] + cs
            e["edges"] += 1
        else:
            out.add_edge(*key, **{**a, "completions": cs, "edges": 1})
    return out
