"""The interactive graph view: one self-contained HTML file for a graph of any size.

:func:`graph_html` writes an explored graph into one HTML page that needs no network: the
page's JavaScript (``view.js``, shipped in this package) and the graph's data are inlined.
The layout is the static diagrams' layered one (rows by depth), the colours and legend
are theirs (:mod:`~agentic_machines.drawing.roles`). In the page: pan (drag) and zoom
(wheel); click a state for its full prompt with the part added to its parent's
highlighted, its completions and their outcomes (raised, halt, diverge, undecided,
clock-dependent, stuck, each marked apart) and the path from the start; search prompts;
filter edges by completion; collapse a subtree; group states by their prompt or a node
attribute. A path (a counterexample of ``check``/``test``) opens highlighted.

``agentic-machines view TARGET`` and ``diagram --format html`` write it, ``--serve``
serves it on 127.0.0.1; :func:`view` shows it in a notebook. A prompt is stored as what
it keeps of its parent's prompt and what it adds, so a graph of growing transcripts stays
small (the page rebuilds each prompt when it is asked for). See docs/viewing.md.

>>> from agentic_machines.runtime.explore import explore
>>> from agentic_machines.fixtures import fixture
>>> page = graph_html(explore(fixture("f2-mul"), roots=[0, 1]), title="f2-mul")
>>> page.startswith("<!DOCTYPE html>"), "http" in page.split("AM_DATA")[0].replace("http-equiv", "")
(True, False)
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import networkx as nx

from .._outcome import Raised, is_end
from .._text import counted, graph_context, short_text
from ..machine import DIVERGE, HALT
from ..runtime.tracefile import prompt_gain
from .roles import COLORS, find_roles, node_names

__all__ = ["graph_html", "view_data", "write_html", "path_of", "view", "GraphView"]

STATE_TEXT = 300
"""The most characters of a state's repr the page keeps (prompts are kept whole)."""

GROUP_TEXT = 80
"""The most characters of a prompt (or an attribute's value) a line of the group list shows."""

_SHAPES = {"halt": "s", "diverge": "D", "raised": "h"}


def view_data(
    graph: nx.DiGraph,
    *,
    title: str | None = None,
    path: Sequence[Any] = (),
    path_title: str = "counterexample",
    **marks: Any,
) -> dict[str, Any]:
    """The page's data: nodes (with layered positions, colours, the prompt as kept/added
    against the BFS parent's), edges (all their completions), the legend and the path.

    A node's ``short`` is its prompt as the group list shows it, on one line and cut by
    the one prompt rule (:func:`~agentic_machines._text.short_text`) among its parents'
    and siblings' prompts, where it differs (``keys_short`` the same for its attributes'
    values); it is there only when it is not the prompt itself. The state's repr is cut
    the same way among theirs.

    ``path`` is a list of graph nodes (see :func:`path_of`); ``marks`` are
    :func:`~agentic_machines.drawing.diagrams.draw`'s (``spe_states=``, ``highlight=`` ...).

    >>> from agentic_machines.runtime.explore import explore
    >>> from agentic_machines.fixtures import fixture
    >>> d = view_data(explore(fixture("halt1")))
    >>> [(n["id"], n["kind"], n["shape"]) for n in d["nodes"]], d["edges"][0]["c"]
    ([('s0', 'state', 'o'), ('HALT', 'halt', 's')], ['0', '1'])
    """
    from .diagrams import layered, legend_items  # the static diagrams' own layout

    roles = find_roles(graph, **marks)
    names = node_names(graph)
    order = list(graph)
    index = {n: i for i, n in enumerate(order)}
    pos = layered(graph) if len(graph) else {}
    parent = _bfs_parents(graph, index)
    nodes = []
    reprs = {n: repr(n) for n in graph if not is_end(n)}
    for n, a in graph.nodes(data=True):
        near = graph_context(graph, n, nodes=True)
        kind = "raised" if type(n) is Raised else a.get("kind", "state")
        role, color = roles.fill(n, kind)
        prompt = a.get("prompt")
        up = parent[index[n]]
        base = graph.nodes[order[up]].get("prompt") if up >= 0 else None
        kept, added = prompt_gain(base, prompt) if isinstance(prompt, str) else (0, "")
        entry: dict[str, Any] = {
            "id": names[n][0],
            "label": names[n][1],
            "kind": kind,
            "role": role,
            "color": color,
            "shape": _SHAPES.get(kind, "o"),
            "depth": a.get("depth", 0),
            "x": pos[n][0],
            "y": pos[n][1],
            "parent": up,
            "prompt": prompt if isinstance(prompt, str) else None,
            "kept": kept,
            "added": added,
            "expanded": a.get("expanded", True),
            "initial": n in roles.initial,
        }
        if isinstance(prompt, str):
            _short(entry, "short", prompt, [graph.nodes[m].get("prompt") for m in near])
        if not is_end(n):
            entry["state"] = short_text(
                reprs[n], STATE_TEXT, [reprs[m] for m in near if m in reprs]
            )
        if type(n) is Raised:
            entry["ending"] = f"the step raised {n.type}: {n.message}"
        undecided = a.get("undecided") or []
        if undecided:
            reason = str(a.get("undecided_reason", ""))
            clock = "clock" in reason.lower() or "deadline" in reason.lower()
            sort = "clock-dependent" if clock else "undecided"
            entry["undecided"] = [{"c": c, "kind": sort, "reason": reason} for c in undecided]
        keys = {k: v for k, v in a.items() if k not in _OWN and isinstance(v, (str, int, bool))}
        if keys:
            entry["keys"] = keys
            cut: dict[str, str] = {}
            for k, v in keys.items():
                if isinstance(v, str):
                    _short(cut, k, v, [graph.nodes[m].get(k) for m in near])
            if cut:
                entry["keys_short"] = cut
        nodes.append(entry)
    # Only the prompt of the root of each chain is stored whole; the others as their gain.
    for entry in nodes:
        if entry["parent"] >= 0 and entry["prompt"] is not None:
            entry["prompt"] = ""
    edges = [
        {
            "s": index[u],
            "t": index[v],
            "c": list(a.get("completions", [])),
            "label": a.get("label", ""),
        }
        for u, v, a in graph.edges(data=True)
    ]
    legend = [_legend_entry(h) for h in legend_items(graph, roles)]
    if path:
        legend.append(["counterexample path", COLORS["highlight"], "line"])
    stats = graph.graph.get("stats") or {}
    note = f"truncated: {stats['truncated_reason']}" if stats.get("truncated") else ""
    starts = [r for r in graph.graph.get("roots") or [graph.graph.get("start")] if r in index]
    attributes = sorted({k for e in nodes for k in e.get("keys", {})})
    return {
        "title": title or graph.graph.get("name") or "graph",
        "nodes": nodes,
        "edges": edges,
        "roots": [index[r] for r in starts] or ([0] if nodes else []),
        "legend": legend,
        "colors": COLORS,
        "path": [index[p] for p in path if p in index],
        "path_title": path_title,
        "note": note,
        "keys": attributes,
    }


def _short(into: dict[str, Any], field: str, text: str, around: list[Any]) -> None:
    """Store ``text`` as a line of the group list shows it, cut among ``around`` (the
    same value of its parents and siblings) by the one prompt rule, unless that is
    ``text`` itself (the page then shows the value it has)."""
    shown = short_text(text, GROUP_TEXT, [t for t in around if isinstance(t, str)])
    if shown != text:
        into[field] = shown


_OWN = {"kind", "prompt", "depth", "expanded", "label", "undecided", "undecided_reason"}


def _bfs_parents(graph: nx.DiGraph, index: dict[Any, int]) -> list[int]:
    """Each node's parent in a breadth-first tree from the roots (-1 for a root or a node
    no root reaches): the state whose prompt its own is compared with."""
    parent = [-1] * len(index)
    roots = graph.graph.get("roots") or [graph.graph.get("start")]
    frontier = [r for r in roots if r in index]
    seen = set(frontier)
    while frontier:
        nxt = []
        for u in frontier:
            for v in graph.successors(u):
                if v not in seen:
                    seen.add(v)
                    parent[index[v]] = index[u]
                    nxt.append(v)
        frontier = nxt
    return parent


def _legend_entry(handle: Any) -> list[str]:
    """A matplotlib legend handle as (text, colour, shape) for the page's legend."""
    label = handle.get_label()
    style = handle.get_linestyle()
    if style == "--":  # "not expanded": a dashed rim
        return [label, handle.get_color(), "dashed"]
    if style not in ("None", "", " "):  # an edge's colour
        return [label, handle.get_color(), "line"]
    marker = handle.get_marker()
    face = handle.get_markerfacecolor()
    edge = handle.get_markeredgecolor()
    if handle.get_markeredgewidth() >= 2:  # the initial and chosen states: a coloured ring
        return [label, edge, "ring"]
    return [label, face if isinstance(face, str) else "#888888", marker if marker in "sDh" else "o"]


def path_of(graph: nx.DiGraph, completions: Sequence[str], start: Any = None) -> list[Any]:
    """The graph's nodes along the run from ``start`` (the graph's start by default) that
    answers ``completions`` in order; it stops where the graph does (a bound).

    >>> from agentic_machines.runtime.explore import explore
    >>> from agentic_machines.fixtures import fixture
    >>> path_of(explore(fixture("f2-mul"), roots=[0, 1]), ["1", "0"], start=1)
    [1, 1, 0]
    """
    node = graph.graph.get("start") if start is None else start
    if node not in graph:
        return []
    path = [node]
    for c in completions:
        nxt = next(
            (v for v in graph.successors(node) if c in graph.edges[node, v].get("completions", ())),
            None,
        )
        if nxt is None:
            break
        path.append(nxt)
        node = nxt
        if node is HALT or node is DIVERGE or type(node) is Raised:
            break
    return path


def graph_html(graph: nx.DiGraph, **options: Any) -> str:
    """The whole page, as text (options as for :func:`view_data`)."""
    data = view_data(graph, **options)
    script = resources.files(__package__).joinpath("view.js").read_text(encoding="utf-8")
    style = resources.files(__package__).joinpath("view.css").read_text(encoding="utf-8")
    # </script> inside a prompt must not close the data's script element.
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    title = html.escape(data["title"])
    keys = "".join(
        f'<option value="{html.escape(k)}">{html.escape(k)}</option>' for k in data["keys"]
    )
    return _PAGE.format(
        title=title,
        style=style,
        data=payload,
        script=script,
        keys=keys,
        count=f"{counted(len(data['nodes']), 'node')}, {counted(len(data['edges']), 'edge')}",
    )


def write_html(graph: nx.DiGraph, file: str | Path, **options: Any) -> Path:
    """Write :func:`graph_html` to ``file``; return its path."""
    from .._files import open_output  # the CLI's guarded writer (a FIFO is refused)

    with open_output(str(file)) as fh:
        fh.write(graph_html(graph, **options))
    return Path(file)


class GraphView:
    """A notebook output: the page in a sandboxed ``iframe`` (``.html`` is the page).

    >>> from agentic_machines.runtime.explore import explore
    >>> from agentic_machines.fixtures import fixture
    >>> "<iframe" in view(explore(fixture("halt1")))._repr_html_()
    True
    """

    def __init__(self, page: str, height: int = 640) -> None:
        self.html = page
        self.height = height

    def _repr_html_(self) -> str:
        return (
            f'<iframe srcdoc="{html.escape(self.html)}" style="width:100%;height:{self.height}px;'
            'border:1px solid #ccc" sandbox="allow-scripts"></iframe>'
        )


def view(graph: nx.DiGraph, **options: Any) -> GraphView:
    """The interactive view of ``graph`` for a notebook cell (options as for :func:`view_data`)."""
    return GraphView(graph_html(graph, **options))


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>{title}</title><style>{style}</style></head>
<body>
<div id="canvasbox"><canvas id="graph"></canvas></div>
<aside id="panel">
<h1>{title}</h1><div class="kv">{count}</div>
<div class="row"><input id="search" type="search" placeholder="search prompts"><button id="fit">fit</button></div>
<div id="results"></div>
<div class="row"><input id="filter" type="search" placeholder="filter edges by completion"></div>
<div class="row"><label>group by <select id="groupby"><option value="">(none)</option><option value="prompt">prompt</option>{keys}</select></label></div>
<ul id="groups"></ul>
<div id="counterexample"></div>
<div id="details"><p>Click a state for its prompt, completions and path. Drag to pan, wheel to zoom.</p></div>
<h3>legend</h3><ul id="legend"></ul><div id="note" class="kv"></div>
</aside>
<script>window.AM_DATA = {data};</script>
<script>{script}</script>
</body></html>
"""
