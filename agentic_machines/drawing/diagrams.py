"""State diagrams of explored machines, drawn with matplotlib: :func:`draw` and
:func:`draw_embedding`.

Every renderer takes the ``networkx.DiGraph`` that :func:`~agentic_machines.runtime.explore.explore`
returns. :func:`draw` renders it with matplotlib alone (PNG, SVG or PDF, no Graphviz
binary). The text exports of the same graph, :func:`to_dot`, :func:`to_mermaid` and
:func:`to_json`, live in :mod:`agentic_machines.drawing.textforms` and are exported here
too. Nodes get a stable string id (``s0``, ``s1``, ... in exploration order, ``HALT``,
``DIVERGE``) and a short label (:func:`node_names`, from
:mod:`agentic_machines.drawing.roles`); every renderer shares both, so a state has the same
name in every format.

The pictures mark, each in its own style: the initial state (a double green ring), a
chosen state (``highlight``, an orange ring), the successors of a state (green fill and
green edges), the image of an embedding (blue fill), SPE states (gold fill), an
obstruction state (red fill), the sentinels ``HALT`` (grey square) and ``DIVERGE``
(purple diamond), and states a bound left unexpanded (dashed outline).

>>> from agentic_machines.runtime.explore import explore
>>> from agentic_machines.fixtures import fixture
>>> fig = draw(explore(fixture("halt1")))
>>> sorted(t.get_text() for t in fig.axes[0].texts)  # states, the sentinel, an edge, a prompt
['0', '0, 1', '1', 'HALT', '⋆']
>>> from agentic_machines.drawing import textforms
>>> to_mermaid is textforms.to_mermaid
True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import networkx as nx

if TYPE_CHECKING:  # matplotlib is imported lazily, when a picture is drawn
    from matplotlib.figure import Figure

    from .geometry import EdgePaths

from .._outcome import is_end
from .._text import counted, plural, short_text
from ..errors import InvalidArgument
from ..machine import HALT, is_sentinel
from .labels import (
    MIN_FONT,
    PROMPT_CHARS,
    glyph_style,
    overlap_of,
    plan_labels,
    renderer_of,
)
from .page import FORMATS, SLIDE, Page, Panel, figure_format, save_figure
from .roles import COLORS, Roles, find_roles, node_names
from .summary import WIDTH, summarise
from .textforms import to_dot, to_json, to_mermaid  # exported here too: their first home

__all__ = [
    "draw",
    "draw_embedding",
    "to_dot",
    "to_mermaid",
    "to_json",
    "node_names",
    "FORMATS",
    "SLIDE",
]

LAYOUTS = ("auto", "layered", "spring", "circular", "shell")


# ---------------------------------------------------------------------------- layout
def _layout(
    graph: nx.DiGraph, layout: str | Mapping[Any, tuple[float, float]]
) -> dict[Any, tuple[float, float]]:
    if isinstance(layout, Mapping):
        missing = [n for n in graph if n not in layout]
        if missing:
            raise InvalidArgument(
                f"the layout has no position for {counted(len(missing), 'node')}, e.g. {missing[0]!r}"
            )
        return dict(layout)
    if layout not in LAYOUTS:
        raise InvalidArgument(
            f"unknown layout {layout!r}; use one of {', '.join(LAYOUTS)} or a dict node -> (x, y)"
        )
    if len(graph) == 0:
        return {}
    if layout == "auto":
        layout = "layered" if all("depth" in a for _, a in graph.nodes(data=True)) else "spring"
    if layout == "layered":
        return layered(graph)
    if layout == "spring":
        return {n: tuple(p) for n, p in nx.spring_layout(graph, seed=0).items()}
    if layout == "circular":
        return {n: tuple(p) for n, p in nx.circular_layout(graph).items()}
    return {n: tuple(p) for n, p in nx.shell_layout(graph).items()}


def layered(graph: nx.DiGraph) -> dict[Any, tuple[float, float]]:
    """Rows by exploration depth (sentinels in a last row), ordered to cut crossings.

    One downward barycenter sweep: a node sits near the mean position of its
    predecessors in earlier rows, which keeps a tree-like exploration untangled. The
    interactive view (:mod:`agentic_machines.drawing.interactive`) uses it too.

    >>> from agentic_machines.runtime.explore import explore
    >>> from agentic_machines.fixtures import fixture
    >>> layered(explore(fixture("halt1")))
    {0: (0.0, -0.0), 1: (0.0, -1.0)}
    """
    depth = {n: a.get("depth", 0) for n, a in graph.nodes(data=True)}
    states = [n for n in graph if not is_end(n)]
    bottom = max((depth[n] for n in states), default=0) + 1
    rows: dict[int, list[Any]] = {}
    for n in graph:
        rows.setdefault(bottom if is_end(n) else depth[n], []).append(n)
    pos: dict[Any, tuple[float, float]] = {}
    for level in sorted(rows):
        row = rows[level]
        order = {n: i for i, n in enumerate(row)}

        def key(n: Any, order: dict[Any, int] = order) -> tuple[float, int]:
            xs = [pos[p][0] for p in graph.predecessors(n) if p in pos]
            return (sum(xs) / len(xs) if xs else math.inf, order[n])

        row.sort(key=key)
        width = len(row)
        for i, n in enumerate(row):
            pos[n] = (i - (width - 1) / 2, -float(level))
    return pos


# ------------------------------------------------------------------------------ draw
# Sizes in inches: a picture is laid out in inches first, so every label's room is known.
_COL = 1.8  # between neighbouring nodes of a row
_ROW = 1.35  # between rows
_NODE = 1500  # node size, points²


def draw(
    graph: nx.DiGraph,
    path: str | Path | None = None,
    *,
    highlight: Any = None,
    successors_of: Any = None,
    embedding_image: Any = None,
    spe_states: Iterable[Any] | None = None,
    obstruction: Any = None,
    title: str | None = None,
    format: str | None = None,
    layout: str | Mapping[Any, tuple[float, float]] = "auto",
    legend: Sequence[tuple[str, str, str]] | None = None,
    width: int = WIDTH,
    beside: nx.DiGraph | None = None,
) -> Figure:
    """Draw an explored graph with matplotlib; save it to ``path`` when given.

    ``format`` is ``"png"``, ``"svg"`` or ``"pdf"`` (default: from the file suffix, else
    PNG). ``layout`` is ``"auto"`` (rows by depth for explored graphs), ``"layered"``,
    ``"spring"``, ``"circular"``, ``"shell"`` or a dict node -> (x, y). ``obstruction``
    may be a state, an :class:`~agentic_machines.verdict.Obstruction` or a refuting
    :class:`~agentic_machines.verdict.Verdict`; ``embedding_image`` a list of states, a
    dict, or an :class:`~agentic_machines.embedding.Embedding` with a dict mapping.
    States asked for but absent from the graph are named in a note under the picture.

    Long prompts and completions move to a numbered table beside the graph (see
    :mod:`agentic_machines.drawing.labels`), and edge labels are placed where they
    overlap no other label and no other edge; arrows end on the rim of what is drawn at
    their nodes (the initial state's ring included). The figure fits :data:`SLIDE`
    when it can: the table flows into columns (or under a wide graph), the graph's
    spacing tightens, and, last, the table's prompt excerpts shorten (each cut where it
    differs from its siblings, saying how much it shows). A table beside the graph is
    one column at most (:data:`TABLE_SHARE` of a slide's width): a longer one is shortened, then
    drawn under the graph. ``legend`` replaces the roles legend with entries
    ``(text, colour, marker)``, marker ``"o"``, ``"s"``, ``"D"`` or ``"-"`` for a line
    (for graphs whose nodes are not states, such as a tree of REPLs). A row (an
    exploration depth) of more than ``width`` states shows its first ``width - 1`` (the
    marked ones first) and one node ``… N more states at depth d``; edges that then join
    the same two nodes are one edge, labelled ``N completions`` (see
    :mod:`agentic_machines.drawing.summary`). No text is smaller than
    :data:`~agentic_machines.drawing.labels.MIN_FONT` points. ``beside`` is a
    framework's own graph (``structure`` of the LangGraph adapter), drawn left of the
    explored states: its nodes with the explored states each one's model calls made
    (node attribute ``states``), its conditional edges dashed. Returns the
    matplotlib ``Figure`` (made without pyplot, so no window and no global state).

    >>> from agentic_machines.runtime.explore import explore
    >>> from agentic_machines.fixtures import fixture
    >>> m = fixture("f2-mul")
    >>> fig = draw(explore(m, roots=m.states), spe_states=[1], successors_of=1)
    >>> import io
    >>> buf = io.BytesIO(); fig.savefig(buf, format="png"); buf.getvalue()[:4]
    b'\\x89PNG'
    >>> from agentic_machines.drawing.labels import label_clashes
    >>> label_clashes(fig)
    []
    """
    fmt = figure_format(path, format)
    roles = find_roles(graph, highlight, successors_of, embedding_image, spe_states, obstruction)
    names = node_names(graph)  # the whole graph's ids: the same as in every other format
    if not isinstance(layout, Mapping):
        graph, roles, names = _summary(graph, roles, names, width)
    pos = _layout(graph, layout)
    handles = legend_items(graph, roles) if legend is None else _custom_legend(legend)
    heading = title if title is not None else graph.graph.get("name")
    side = _structure_panel(beside) if beside is not None else None
    plan, panel, page = _fit(
        graph, pos, layout, names, handles, heading, _note(graph, roles), side and side[1]
    )
    fig, axes = page.build()
    ax = axes[-1]
    if side is not None:
        _draw_structure(axes[0], side[0], side[2])
    _draw_graph(ax, graph, pos, roles, plan, panel)
    if path is not None:
        save_figure(fig, path, fmt)
    return fig


def _summary(graph: nx.DiGraph, roles: Roles, names: dict, width: int) -> tuple[Any, Roles, dict]:
    """The graph as drawn (:func:`~agentic_machines.drawing.summary.summarise`, the marked
    states kept), its roles and its names (the whole graph's ids, and the summary nodes')."""
    marked = set().union(
        roles.initial, roles.highlight, roles.successors, roles.image, roles.spe, roles.obstruction
    )
    shown = summarise(graph, width, keep=marked)
    if shown is graph:
        return graph, roles, names
    more = node_names(shown)
    names = {n: names[n] if n in names else more[n] for n in shown}
    kept = Roles(
        **{  # type: ignore[arg-type]  # each field keeps its own type
            f: (
                {e for e in getattr(roles, f) if shown.has_edge(*e)}
                if f in ("successor_edges", "marked_edges")
                else getattr(roles, f)
                if f == "missing"
                else {n for n in getattr(roles, f) if n in shown}
            )
            for f in Roles.__dataclass_fields__
        }
    )
    return shown, kept, names


TABLE_SHARE = 0.35
"""The most of a slide's width the legend table takes beside a graph: one column (its
70 characters at 8 pt are 30%); a longer table is shortened, then put under the graph."""
_PROMPT_LEVELS = (PROMPT_CHARS, 150, 90, 50)  # the table's prompt excerpts, longest first
_SQUEEZE_MIN = (0.45, 0.5)  # the tightest column and row spacing (of _COL, _ROW)


def _fit(
    graph: nx.DiGraph,
    pos: dict,
    layout: Any,
    names: dict,
    handles: list[Any],
    heading: Any,
    note: str,
    first: Panel | None = None,
) -> tuple[Any, Panel, Page]:
    """The label plan, panel and page of the first layout that fits :data:`SLIDE`.

    Tried in order: the table beside the graph in one column (a wider one would take
    more than :data:`TABLE_SHARE` of the slide from the graph), with whole prompt
    excerpts and the graph's spacing tightened step by step (columns when too wide, rows
    when too tall) down to ``_SQUEEZE_MIN``, then with shorter excerpts; then the same
    with the completions (long listings) under the graph and the states beside it; then
    with the whole table under the graph (for wide graphs). A graph that fits no layout is
    drawn with the last one tried. ``first`` is a panel drawn left of the graph's (a
    framework's own graph).
    """
    page: Page | None = None
    modes = [(c, m) for m in ("beside", "split", "below") for c in _PROMPT_LEVELS]
    for chars, mode in modes:
        below = mode == "below"
        plan = plan_labels(graph, names, prompt_chars=chars)
        listing = (_edge_heading(graph), plan.completions)
        sections = [("states", plan.states), listing]
        sx = sy = 1.0
        while True:
            panel = _panel_size(graph, pos, layout, (sx, sy))
            if first is not None:
                panel.heading = "explored states"
            panels = [panel] if first is None else [first, panel]
            page = Page(
                panels,
                handles,
                sections,
                str(heading) if heading else "",
                note,
                below=below,
                under=[listing] if mode == "split" and plan.completions else None,
            )
            size = page.layout()
            if not below and len(size["columns"]) * size["column_w"] > TABLE_SHARE * SLIDE[0]:
                break  # a tighter graph leaves the table as tall: shorter excerpts next
            if size["width"] <= SLIDE[0] and size["height"] <= SLIDE[1]:
                return plan, panel, page
            if size["width"] > SLIDE[0] and sx > _SQUEEZE_MIN[0]:
                sx = max(_SQUEEZE_MIN[0], sx * 0.85)
            elif size["height"] > SLIDE[1] and sy > _SQUEEZE_MIN[1]:
                sy = max(_SQUEEZE_MIN[1], sy * 0.85)
            else:
                break
    assert page is not None
    return plan, panel, page


def _edge_heading(graph: nx.DiGraph) -> str:
    return str(graph.graph.get("edge_heading", "completions (edge tags)"))


def _panel_size(
    graph: nx.DiGraph, pos: dict, layout: Any, squeeze: tuple[float, float] = (1.0, 1.0)
) -> Panel:
    """The panel a graph needs; ``squeeze`` scales the spacing of columns and rows (a
    picture too big for a slide is drawn tighter)."""
    if not pos:
        return Panel(2.0, 1.5, (-1.0, 1.0), (-1.0, 1.0))
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    dx, dy = max(xs) - min(xs), max(ys) - min(ys)
    if layout in ("auto", "layered"):
        ux, uy = _COL * squeeze[0], _ROW * squeeze[1]  # inches per data unit
    else:
        side = 1.4 * math.sqrt(len(graph)) + 0.6
        ux, uy = side * squeeze[0] / max(dx, 1e-9), side * squeeze[1] / max(dy, 1e-9)
    loops = any(u == v for u, v in graph.edges)
    # Room around the outer nodes for a node, its labels and a self-loop with its label.
    pad_x = 1.0 + (0.9 if loops else 0.0)
    pad_y = 0.75 + (0.45 if loops else 0.0)
    width = min(dx * ux + 2 * pad_x, 40.0)
    height = min(dy * uy + 2 * pad_y, 30.0)
    ux = (width - 2 * pad_x) / dx if dx else ux
    uy = (height - 2 * pad_y) / dy if dy else uy
    return Panel(
        width,
        height,
        (min(xs) - pad_x / ux, max(xs) + pad_x / ux),
        (min(ys) - pad_y / uy, max(ys) + pad_y / uy),
    )


def _draw_graph(
    ax: Any, graph: nx.DiGraph, pos: dict, roles: Roles, plan: Any, panel: Panel
) -> None:
    small = len(graph) <= 30
    size = _NODE
    if roles.initial:  # an outer ring behind the initial state
        nx.draw_networkx_nodes(
            graph,
            pos,
            nodelist=list(roles.initial),
            node_size=size * 1.55,
            node_color="white",
            edgecolors=COLORS["initial"],
            linewidths=2.5,
            ax=ax,
        )
    shapes = {"state": "o", "halt": "s", "diverge": "D", "raised": "h", "more": "o"}
    for kind, shape in shapes.items():
        nodes = [n for n, a in graph.nodes(data=True) if a.get("kind", "state") == kind]
        for dashed in (False, True):
            group = [n for n in nodes if (not graph.nodes[n].get("expanded", True)) == dashed]
            if not group:
                continue
            coll = nx.draw_networkx_nodes(
                graph,
                pos,
                nodelist=group,
                node_shape=shape,
                node_size=[size * (0.75 if kind != "state" else 1) for _ in group],
                node_color=[roles.fill(n, kind)[1] for n in group],
                edgecolors=[
                    COLORS["highlight"] if n in roles.highlight else "#333333" for n in group
                ],
                linewidths=[3.0 if n in roles.highlight else 1.0 for n in group],
                ax=ax,
            )
            if dashed:
                coll.set_linestyle("--")
    font = MIN_FONT + 1 if small else MIN_FONT
    placed = []
    for k, n in enumerate(graph):
        x, y = pos[n]
        placed.append(
            ax.text(
                x,
                y,
                plan.inside[n],
                ha="center",
                va="center",
                zorder=4,
                **glyph_style(plan.inside[n], font),
            )
        )
        if plan.under.get(n):
            # under the node's rim (or its initial ring): sentinels are smaller than states
            scale = 0.75 if is_end(n) else (1.55 if n in roles.initial else 1.0)
            drop = math.sqrt(size * scale) / 2 + (4 if n in roles.initial else 2)
            placed.append(
                ax.annotate(
                    plan.under[n],
                    xy=(x, y),
                    xytext=(0, -drop),
                    textcoords="offset points",
                    color="#333333",
                    **glyph_style(plan.under[n], MIN_FONT),
                    ha="center",
                    va="top",
                    linespacing=1.0,
                    zorder=4,
                    gid=f"caption-{k}",
                )
            )
    _draw_edges(ax, graph, pos, roles, plan, size, small, placed)


def _captions(ax: Any) -> dict[tuple[float, float], Any]:
    """Each caption's box (pixels), by the data position of its node."""
    renderer = renderer_of(ax.figure)
    return {
        tuple(t.xy): t.get_window_extent(renderer)
        for t in ax.texts
        if (t.get_gid() or "").startswith("caption-")
    }


def _structure_panel(structure: nx.DiGraph) -> tuple[nx.DiGraph, Panel, dict]:
    """A framework graph laid out in rows by distance from its start node (nodes it
    cannot reach last), and the panel it needs."""
    g = nx.DiGraph(structure)
    starts = [n for n in g if n == "__start__"] or [n for n in g if g.in_degree(n) == 0]
    far = nx.multi_source_dijkstra_path_length(g, starts) if starts else {}
    bottom = max(far.values(), default=0) + 1
    for n in g:
        g.nodes[n]["depth"] = far.get(n, bottom)
    pos = layered(g)
    panel = _panel_size(g, pos, "layered")
    panel.heading = f"{structure.graph.get('name') or 'the graph'}: nodes (dashed: conditional)"
    return g, panel, pos


def _draw_structure(ax: Any, g: nx.DiGraph, pos: dict) -> None:
    """The framework's nodes as boxes (with the explored states their model calls made)
    and its edges, conditional ones dashed."""
    for conditional in (False, True):
        edges = [(a, b) for a, b, c in g.edges(data="conditional") if bool(c) == conditional]
        if edges:
            nx.draw_networkx_edges(
                g,
                pos,
                edgelist=edges,
                style="dashed" if conditional else "solid",
                edge_color="#555555",
                node_size=_NODE * 1.6,
                node_shape="s",
                arrows=True,
                arrowsize=12,
                connectionstyle="arc3,rad=0.12",
                ax=ax,
            )
    nx.draw_networkx_nodes(
        g,
        pos,
        node_shape="s",
        node_size=_NODE * 1.6,
        node_color="#eef2f7",
        edgecolors="#333333",
        linewidths=1.0,
        ax=ax,
    )
    for n, (x, y) in pos.items():
        count = g.nodes[n].get("states")
        text = short_text(str(n), 14) + (f"\n{count} states" if count else "")
        ax.text(x, y, text, ha="center", va="center", zorder=4, fontsize=MIN_FONT)


def _draw_edges(
    ax: Any,
    graph: nx.DiGraph,
    pos: dict,
    roles: Roles,
    plan: Any,
    size: float,
    small: bool,
    placed: list,
) -> None:
    from matplotlib.path import Path as MplPath  # lazy: matplotlib is slow to import

    from .geometry import node_outlines  # lazy: imports matplotlib

    loops = [(u, v) for u, v in graph.edges if u == v]
    captions = _captions(ax)
    # A pair of opposite edges would be drawn on top of each other: bend both (the same
    # rad bends them to opposite sides). An edge whose straight line would run through
    # another node or caption is arced, to whichever side keeps clear of them.
    rads = {
        (u, v): _bend(
            ax, pos, u, v, size, captions, (0.18, 0.35, 0.5) if graph.has_edge(v, u) else None
        )
        for u, v in graph.edges
        if u != v
    }
    color = {e: _edge_color(e, roles) for e in graph.edges}
    width = {e: 2.2 if color[e] != COLORS["edge"] else 1.1 for e in graph.edges}
    font = MIN_FONT
    box = {"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85}
    # The outlines as drawn (rings and sentinel shapes included): every arrow ends on the
    # rim of what covers its node, so no head is hidden under a ring or a square's corner.
    outlines: dict[Any, list[Any]] = {}
    drawn = node_outlines(ax)
    for n, xy in pos.items():
        cx, cy = ax.transData.transform(xy)
        outlines[n] = [o for c, o in drawn if math.hypot(c[0] - cx, c[1] - cy) < 0.5]
        cap = captions.get(tuple(xy))
        if cap is not None:  # edges leave and end beyond the caption, never across it
            outlines[n].append(MplPath.unit_rectangle().transformed(_box_transform(cap)))
    # Every edge and its label share a gid (edge-<k>, edge-label-<k>): labels are placed
    # off the other edges, and a test can check that from the figure.
    gid = {e: f"edge-{k}" for k, e in enumerate(graph.edges, 1)}
    for e in loops:
        n = e[0]
        others = [pos[m] for m in (*graph.successors(n), *graph.predecessors(n)) if m != n]
        placed.append(
            _self_loop(
                ax,
                pos[n],
                plan.edges[e],
                _outer_radius(ax, outlines[n]),
                color[e],
                width[e],
                font,
                box,
                _free_side(pos[n], others),
            )
        )
        ax.patches[-1].set_gid(gid[e])
        placed[-1].set_gid(gid[e].replace("edge", "edge-label"))
    for (u, v), rad in rads.items():
        _edge_arrow(ax, pos[u], pos[v], rad, outlines[u], outlines[v], color[(u, v)], width[(u, v)])
        ax.patches[-1].set_gid(gid[(u, v)])
    _place_edge_labels(ax, pos, plan, rads, font, box, size, placed, gid)


def _edge_color(e: tuple, roles: Roles) -> str:
    if e in roles.marked_edges:
        return COLORS["highlight"]
    if e in roles.successor_edges:
        return COLORS["successor_edge"]
    return COLORS["edge"]


def _place_edge_labels(
    ax: Any,
    pos: dict,
    plan: Any,
    rads: dict,
    font: float,
    box: dict,
    size: float,
    placed: list,
    gid: dict,
) -> None:
    """Put each edge's label on its edge where it overlaps no label and no node, and
    no other edge (a label on a crossing hides which edge it belongs to).

    Positions along the drawn curve are tried from the middle outwards; the first
    clear one wins, else the one crossing the fewest other edges, then the least
    crowded. Extents are measured by matplotlib's renderer and the edges' drawn paths,
    so what is checked is what will be drawn.
    """
    renderer = renderer_of(ax.figure)
    # An arrow's path scales its shrink and head with the dpi of its last drawing (1 until
    # drawn): draw the edges once, so the paths measured here are the ones the picture
    # shows (only they: the whole figure's draw cost as much as placing its labels).
    for patch in ax.patches:
        if (patch.get_gid() or "").startswith("edge-"):
            ax.draw_artist(patch)
    to_px = ax.transData
    r = math.sqrt(size) / 2 * ax.figure.dpi / 72
    obstacles = [t.get_window_extent(renderer) for t in placed]
    from matplotlib.transforms import Bbox  # lazy: matplotlib is slow to import

    for xy in pos.values():
        cx, cy = to_px.transform(xy)
        obstacles.append(Bbox([[cx - r, cy - r], [cx + r, cy + r]]))
    back = to_px.inverted()
    from .geometry import EdgePaths  # lazy: imports matplotlib

    edges = EdgePaths(ax)  # measured once: placing labels moves no edge
    # Longer labels first: they have fewer places to go.
    for (u, v), rad in sorted(rads.items(), key=lambda item: -len(plan.edges[item[0]])):
        curve = _curve(to_px.transform(pos[u]), to_px.transform(pos[v]), rad)
        best = None
        # The full label first; a count's short form (its tag alone: the table says how
        # many) only when the full one finds no clear place.
        labels = [plan.edges[(u, v)]]
        if plan.short.get((u, v)):
            labels.append(plan.short[(u, v)])
        for label in labels:
            text = ax.text(
                0,
                0,
                label,
                ha="center",
                va="center",
                bbox=box,
                zorder=5,
                gid=gid[(u, v)].replace("edge", "edge-label"),
                **glyph_style(label, font),
            )
            found = _label_place(ax, text, curve, obstacles, edges, gid[(u, v)])
            if best is None or found[0] < best[0]:
                if best is not None:
                    best[3].remove()
                best = (*found, text)
            else:
                text.remove()
            if best[0] == (False, 0, 0):
                break
        assert best is not None
        best[3].set_position(tuple(back.transform(best[1])))
        obstacles.append(best[2])


def _label_place(
    ax: Any,
    text: Any,
    curve: Callable[[float], tuple[tuple[float, float], tuple[float, float]]],
    obstacles: list[Any],
    edges: EdgePaths,
    own: str,
) -> tuple[tuple[bool, int, float], tuple[float, float], Any]:
    """The best place (score, pixels, extent) for ``text`` on ``curve`` (t -> its point
    and tangent, in pixels; :func:`_curve`): clear of the other labels and nodes first,
    then of the other edges (``edges``, a :class:`~agentic_machines.drawing.geometry.EdgePaths`)."""
    renderer = renderer_of(ax.figure)
    back = ax.transData.inverted()
    frame = ax.figure.bbox
    corners = [tuple(map(float, o.extents)) for o in obstacles]
    best = None
    # Not nearer the ends than a fifth (a label there would cover the arrowhead); then
    # beside the edge, when every place on it touches another edge.
    ts = [0.5, 0.4, 0.6, 0.32, 0.68, 0.45, 0.55, 0.36, 0.64, 0.28, 0.72, 0.25, 0.75, 0.2, 0.8]
    ts += [0.42, 0.58, 0.3, 0.7, 0.22, 0.78, 0.17, 0.83]
    # Beside it at most a label's height away (labels_far_from_edges checks that bound):
    # farther, a reader cannot tell which edge a label names.
    beside = [(t, d) for d in (1.0, -1.0, 1.5, -1.5, 2.0, -2.0) for t in ts]
    for t, side in [(t, 0.0) for t in ts] + beside:
        (px, py), (tx, ty) = curve(t)
        if side:  # the label's half size and a gap off the curve, square to its tangent
            norm = math.hypot(tx, ty) or 1.0
            text.set_position(tuple(back.transform((px, py))))
            half = text.get_window_extent(renderer)
            gap = 3 + (abs(side) - 1) * (half.height - 6)  # 3 px up to a height less 3
            reach = (abs(half.width * ty) + abs(half.height * tx)) / norm / 2 + gap
            reach = math.copysign(reach, side)
            px, py = px - ty / norm * reach, py + tx / norm * reach
        text.set_position(tuple(back.transform((px, py))))
        extent = text.get_window_extent(renderer)
        box = tuple(map(float, extent.extents))
        covered = sum(overlap_of(box, o) for o in corners)
        score = (
            # a label on a node or a text hides it: worse than one on an edge
            covered > 0
            or not frame.contains(extent.x0, extent.y0)
            or not frame.contains(extent.x1, extent.y1),
            len(edges.crossing(extent, own)),
            covered,
        )
        if best is None or score < best[0]:
            best = (score, (px, py), extent)
        if score == (False, 0, 0):
            break
    assert best is not None
    return best


def _arc3_control(
    a: tuple[float, float], b: tuple[float, float], rad: float
) -> tuple[float, float]:
    """The control point of matplotlib's ``arc3`` curve from ``a`` to ``b`` (as it
    computes it): the curve leaves ``a`` towards it and enters ``b`` from it.

    >>> _arc3_control((0.0, 0.0), (2.0, 0.0), 0.5)
    (1.0, -1.0)
    """
    (x1, y1), (x2, y2) = a, b
    return (x1 + x2) / 2 + rad * (y2 - y1), (y1 + y2) / 2 - rad * (x2 - x1)


def _on_curve(
    a: tuple[float, float], c: tuple[float, float], b: tuple[float, float], t: float
) -> tuple[float, float]:
    """The point at ``t`` (0 at ``a``, 1 at ``b``) of the quadratic curve with control
    point ``c``: where an edge drawn with ``arc3`` passes.

    >>> _on_curve((0.0, 0.0), (1.0, -1.0), (2.0, 0.0), 0.5)
    (1.0, -0.5)
    """
    (x1, y1), (cx, cy), (x2, y2) = a, c, b
    return (
        (1 - t) ** 2 * x1 + 2 * (1 - t) * t * cx + t**2 * x2,
        (1 - t) ** 2 * y1 + 2 * (1 - t) * t * cy + t**2 * y2,
    )


Route = float | tuple[tuple[float, float], ...]
"""How an edge is drawn: an ``arc3`` bend (its rad), or a way around the rows between
its ends (:func:`_outside_route`: the eight points, in pixels, of a cubic path)."""


def _bend(
    ax: Any,
    pos: dict,
    u: Any,
    v: Any,
    size: float,
    captions: Mapping[tuple[float, float], Any],
    choices: tuple[float, ...] | None = None,
) -> Route:
    """How to draw the edge u -> v: straight when the line passes clear of every other
    node and caption (inside its panel), else the first bend, either side, that does; else a way around the
    outside of the rows between them (when one is clear); else the bend or way passing
    the fewest, then the clearest. Measured on the drawn curve, in pixels."""
    to_px = ax.transData
    a, b = to_px.transform(pos[u]), to_px.transform(pos[v])
    others = [to_px.transform(xy) for n, xy in pos.items() if n != u and n != v]
    room = math.sqrt(size) / 2 * ax.figure.dpi / 72 * 1.25  # node radius and a margin
    own = [captions.get(tuple(pos[n])) for n in (u, v)]
    boxes = [b.expanded(1.0, 1.0).padded(3) for c in captions.values() for b in [c]]
    boxes = [box for box, c in zip(boxes, captions.values()) if c is not own[0] and c is not own[1]]

    frame = ax.bbox  # an edge drawn outside its panel is cut off there

    def cost(route: Route) -> tuple[int, float]:
        curve = _curve(a, b, route)
        worst, hits = math.inf, 0
        for k in range(1, 60):
            (px, py), _ = curve(k / 60)
            hits += not (frame.x0 < px < frame.x1 and frame.y0 < py < frame.y1)
            for ox, oy in others:
                d = math.hypot(px - ox, py - oy)
                worst = min(worst, d)
                hits += d <= room
            hits += sum(box.x0 < px < box.x1 and box.y0 < py < box.y1 for box in boxes)
        return hits, -worst

    options: list[Route] = list(
        choices or (0.0, 0.15, -0.15, 0.3, -0.3, 0.45, -0.45, 0.6, -0.6, 0.8, -0.8)
    )
    for rad in options:
        if cost(rad)[0] == 0:
            return rad
    if choices is None:
        options += _outside_routes(a, b, others, room, boxes)
    return min(options, key=cost)


def _outside_routes(
    a: Any, b: Any, others: list[Any], room: float, boxes: list[Any]
) -> list[Route]:
    """Ways from ``a`` to ``b`` (pixels) around the left and the right of every node and
    caption between their rows: down (or up) into the gap under ``a``'s row, along it
    past the outermost of them, straight on beside them, and in through the gap above
    ``b``'s row. None when the two are in neighbouring rows (nothing lies between).

    >>> len(_outside_routes((0, 300), (0, 0), [(0, 150)], 20, []))
    2
    >>> _outside_routes((0, 100), (0, 0), [], 20, [])
    []
    """
    (x1, y1), (x2, y2) = a, b
    down = 1.0 if y2 < y1 else -1.0
    lo, hi = min(y1, y2) + room, max(y1, y2) - room
    between = [(x, y) for x, y in others if lo < y < hi]
    if not between:
        return []
    # what lies between the two rows, as (left, right, low, high) in pixels
    blocks = [(x - room, x + room, y - room, y + room) for x, y in between]
    blocks += [(box.x0, box.x1, box.y0, box.y1) for box in boxes if box.y1 > lo and box.y0 < hi]
    first = max(k[3] for k in blocks) if down > 0 else min(k[2] for k in blocks)
    last = min(k[2] for k in blocks) if down > 0 else max(k[3] for k in blocks)
    # the corners turn in the gaps under a's row and above b's, clear of the blocks
    ya, yb = (y1 + first) / 2, (y2 + last) / 2
    turn = min(abs(ya - first), abs(yb - last)) * 0.6 * down
    if (ya - yb) * down <= 2 * abs(turn):
        return []
    routes: list[Route] = []
    for x in (min(k[0] for k in blocks) - room / 2, max(k[1] for k in blocks) + room / 2):
        routes.append(
            (
                (x1, y1),
                ((x1 + x) / 2, ya),
                (x, ya),
                (x, ya - turn),
                (x, yb + turn),
                (x, yb),
                ((x2 + x) / 2, yb),
                (x2, y2),
            )
        )
    return routes


def _curve(
    a: Any, b: Any, route: Route
) -> Callable[[float], tuple[tuple[float, float], tuple[float, float]]]:
    """The drawn line of an edge from ``a`` to ``b`` (pixels) as ``t -> (point,
    tangent)``, ``t`` from 0 at ``a`` to 1 at ``b``: the ``arc3`` curve of a bend, or a
    way around (two cubic pieces joined by a straight one), by its length.

    >>> f = _curve((0.0, 0.0), (2.0, 0.0), 0.5)
    >>> f(0.5)
    ((1.0, -0.5), (2.0, 0.0))
    """
    (x1, y1), (x2, y2) = a, b
    if isinstance(route, (int, float)):
        cx, cy = _arc3_control((x1, y1), (x2, y2), route)

        def quadratic(t: float) -> tuple[tuple[float, float], tuple[float, float]]:
            tangent = (
                2 * (1 - t) * (cx - x1) + 2 * t * (x2 - cx),
                2 * (1 - t) * (cy - y1) + 2 * t * (y2 - cy),
            )
            return _on_curve((x1, y1), (cx, cy), (x2, y2), t), tangent

        return quadratic
    points = _route_points(route)
    lengths = [0.0]
    for p, q in zip(points, points[1:]):
        lengths.append(lengths[-1] + math.dist(p, q))

    def along(t: float) -> tuple[tuple[float, float], tuple[float, float]]:
        want = min(max(t, 0.0), 1.0) * lengths[-1]
        k = next((i for i in range(1, len(points)) if lengths[i] >= want), len(points) - 1)
        p, q = points[k - 1], points[k]
        step = lengths[k] - lengths[k - 1] or 1.0
        f = (want - lengths[k - 1]) / step
        return (p[0] + (q[0] - p[0]) * f, p[1] + (q[1] - p[1]) * f), (q[0] - p[0], q[1] - p[1])

    return along


def _route_points(route: tuple[tuple[float, float], ...], n: int = 30) -> list[Any]:
    """A way around as points: its two cubic pieces sampled ``n`` times each."""

    def cubic(p0: Any, p1: Any, p2: Any, p3: Any) -> list[tuple[float, float]]:
        return [
            (
                (1 - t) ** 3 * p0[0]
                + 3 * (1 - t) ** 2 * t * p1[0]
                + 3 * (1 - t) * t**2 * p2[0]
                + t**3 * p3[0],
                (1 - t) ** 3 * p0[1]
                + 3 * (1 - t) ** 2 * t * p1[1]
                + 3 * (1 - t) * t**2 * p2[1]
                + t**3 * p3[1],
            )
            for t in (k / n for k in range(n + 1))
        ]

    return cubic(*route[:4]) + cubic(*route[4:])


def _box_transform(box: Any) -> Any:
    """The transform that maps the unit square onto ``box`` (pixels)."""
    from matplotlib.transforms import BboxTransformTo  # lazy: matplotlib is slow to import

    return BboxTransformTo(box)


def _free_side(xy: tuple[float, float], others: list[tuple[float, float]]) -> float:
    """The direction (radians) among right/up/left/down farthest from every neighbour."""
    angles = [math.atan2(o[1] - xy[1], o[0] - xy[0]) for o in others if o != xy]

    def clearance(theta: float) -> float:
        return min(
            (abs((theta - a + math.pi) % (2 * math.pi) - math.pi) for a in angles), default=math.pi
        )

    return max((0.0, math.pi / 2, math.pi, -math.pi / 2), key=clearance)


def _edge_arrow(
    ax: Any,
    a: tuple[float, float],
    b: tuple[float, float],
    rad: Route,
    outline_a: list[Any],
    outline_b: list[Any],
    color: str,
    width: float,
) -> None:
    """The arrow a -> b (an ``arc3`` curve, or a way around: :data:`Route`), cut where
    it leaves a's drawn outline and where it enters b's, measured along the curve's end
    directions."""
    from matplotlib.patches import FancyArrowPatch  # lazy: matplotlib is slow to import
    from matplotlib.path import Path as MplPath  # lazy: matplotlib is slow to import

    to_px = ax.transData
    (x1, y1), (x2, y2) = to_px.transform(a), to_px.transform(b)
    style: dict[str, Any] = {
        "arrowstyle": "-|>",
        "mutation_scale": 14,
        "color": color,
        "linewidth": width,
    }
    if not isinstance(rad, (int, float)):  # a way around: cut at the rims, in pixels
        verts = [list(p) for p in rad]
        for end, toward, outline in ((0, 1, outline_a), (7, 6, outline_b)):
            cx, cy = verts[end]
            dx, dy = verts[toward][0] - cx, verts[toward][1] - cy
            d = _exit_distance(outline, (cx, cy), (dx, dy)) + 1.5 * ax.figure.dpi / 72
            norm = math.hypot(dx, dy) or 1.0
            verts[end] = [cx + dx / norm * d, cy + dy / norm * d]
        data = to_px.inverted().transform(verts)
        c4 = MplPath.CURVE4
        codes = [MplPath.MOVETO, c4, c4, c4, MplPath.LINETO, c4, c4, c4]
        ax.add_patch(FancyArrowPatch(path=MplPath(data, codes), zorder=1, **style))
        return
    # arc3's control point (as matplotlib computes it): the ends leave towards it
    cx, cy = _arc3_control((x1, y1), (x2, y2), rad)
    points = 72 / ax.figure.dpi
    shrink_a = _exit_distance(outline_a, (x1, y1), (cx - x1, cy - y1)) * points + 1.5
    shrink_b = _exit_distance(outline_b, (x2, y2), (cx - x2, cy - y2)) * points + 1.5
    ax.add_patch(
        FancyArrowPatch(
            a,
            b,
            connectionstyle=f"arc3,rad={rad}",
            shrinkA=shrink_a,
            shrinkB=shrink_b,
            zorder=1,
            **style,
        )
    )


def _exit_distance(
    outlines: list[Any], centre: tuple[float, float], direction: tuple[float, float]
) -> float:
    """How far (pixels) from ``centre`` along ``direction`` the last of ``outlines`` ends,
    walked a pixel at a time: a node's caption is apart from its rim, so the drawn
    region is not one piece (:func:`~agentic_machines.drawing.geometry.rim_distance`
    bisects one piece)."""
    from .geometry import rim_distance  # lazy: imports matplotlib

    rim = rim_distance(outlines[:1], centre, direction) if outlines else 0.0
    dx, dy = direction
    norm = math.hypot(dx, dy) or 1.0
    dx, dy = dx / norm, dy / norm
    far = max(
        (math.hypot(x - centre[0], y - centre[1]) for o in outlines for x, y in o.vertices),
        default=0.0,
    )
    last = rim
    d = rim
    while d <= far:
        if any(o.contains_point((centre[0] + dx * d, centre[1] + dy * d)) for o in outlines):
            last = d
        d += 1.0
    return last


def _outer_radius(ax: Any, outlines: list[Any]) -> float:
    """The radius (points) of the largest outline drawn at a node: its ring, if any."""
    extents = [o.get_extents() for o in outlines]
    px = max((max(e.width, e.height) / 2 for e in extents), default=0.0)
    return px * 72 / ax.figure.dpi


def _self_loop(
    ax: Any,
    xy: tuple[float, float],
    label: str,
    radius: float,
    color: str,
    width: float,
    font: float,
    box: dict,
    side: float = 0.0,
) -> Any:
    """A loop beside a node, sized in inches rather than data units; returns its label.

    networkx sizes self-loops by the vertical extent of the drawing, so they grow with
    the graph (and explode on a one-row graph). Here the loop's shape is in inches,
    placed at the node's data position: the same size in every picture and at every dpi.
    It leaves and re-enters the node at ``radius`` (points: the node's outermost drawn
    rim, the initial state's ring included), so its head is never under the ring.
    """
    from matplotlib.patches import FancyArrowPatch  # lazy: matplotlib is slow to import
    from matplotlib.path import Path as MplPath  # lazy: matplotlib is slow to import
    from matplotlib.transforms import ScaledTranslation  # lazy: matplotlib is slow to import

    r = (radius + 2.0) / 72  # in inches, a little outside the rim and its line
    # Drawn to the right, then turned to the side where no other edge leaves the node.
    a, b = math.radians(30), math.radians(-30)
    verts = [
        (r * math.cos(a), r * math.sin(a)),
        (r + 0.62, 0.42),
        (r + 0.62, -0.42),
        (r * math.cos(b), r * math.sin(b)),
    ]
    cos, sin = math.cos(side), math.sin(side)
    verts = [(x * cos - y * sin, x * sin + y * cos) for x, y in verts]
    path = MplPath(verts, [MplPath.MOVETO, MplPath.CURVE4, MplPath.CURVE4, MplPath.CURVE4])
    fig = ax.figure
    where = fig.dpi_scale_trans + ScaledTranslation(xy[0], xy[1], ax.transData)
    ax.add_patch(
        FancyArrowPatch(
            path=path,
            arrowstyle="-|>",
            mutation_scale=14,
            color=color,
            linewidth=width,
            transform=where,
            zorder=1,
        )
    )
    reach = (r + 0.5) * 72
    return ax.annotate(
        label,
        xy=xy,
        xytext=(reach * cos, reach * sin),
        textcoords="offset points",
        ha="center" if abs(cos) < 0.5 else ("left" if cos > 0 else "right"),
        va="center" if abs(sin) < 0.5 else ("bottom" if sin > 0 else "top"),
        bbox=box,
        **glyph_style(label, font),
        zorder=3,
    )


def _marker(
    label: str, color: str, shape: str = "o", edge: str = "#333333", width: float = 1.0
) -> Any:
    from matplotlib.lines import Line2D  # lazy: matplotlib is slow to import

    if shape == "-":
        return Line2D([], [], color=color, linewidth=2, label=label)
    return Line2D(
        [],
        [],
        linestyle="none",
        marker=shape,
        markersize=10,
        markerfacecolor=color,
        markeredgecolor=edge,
        markeredgewidth=width,
        label=label,
    )


def _custom_legend(entries: Sequence[tuple[str, str, str]]) -> list[Any]:
    return [_marker(text, color, shape) for text, color, shape in entries]


_KIND_TEXT = {
    "state": "state",
    "halt": "HALT (1)",
    "diverge": "DIVERGE (↑)",
    "raised": "RAISED (the step raised)",
    "more": "states not drawn one by one (… N more)",
}
_ROLE_TEXT = {
    "successor": "successor",
    "image": "embedding image",
    "spe": "SPE state",
    "obstruction": "obstruction state",
}
_SHAPES = {"state": "o", "halt": "s", "diverge": "D", "raised": "h", "more": "o"}


def legend_items(graph: nx.DiGraph, roles: Roles) -> list[Any]:
    """One entry per style the picture draws, and only those: each (shape, fill) pair
    its nodes use (a HALT drawn green as a successor is a green square), the rings, the
    dashed outline, and the edges' colours (the interactive view shows the same).

    >>> from agentic_machines.runtime.explore import explore
    >>> from agentic_machines.fixtures import fixture
    >>> g = explore(fixture("halt1"))
    >>> [h.get_label() for h in legend_items(g, find_roles(g))]
    ['state', 'HALT (1)', 'initial state', 'a step (its completions)']
    """
    from matplotlib.lines import Line2D  # lazy: matplotlib is slow to import

    items = []
    seen: list[tuple[str, str]] = []
    for n, a in graph.nodes(data=True):
        kind = a.get("kind", "state")
        style = (kind, roles.fill(n, kind)[0])
        if style not in seen:
            seen.append(style)
    # states first, then the outcomes, each kind's plain fill before its marked ones
    order = list(_KIND_TEXT)
    seen.sort(key=lambda ks: (order.index(ks[0]) if ks[0] in order else 9, ks[1] != ks[0]))
    for kind, role in seen:
        text = _KIND_TEXT.get(kind, kind)
        if role in _ROLE_TEXT:
            text = _ROLE_TEXT[role] if kind == "state" else f"{text}, a {_ROLE_TEXT[role]}"
        items.append(_marker(text, COLORS[role], _SHAPES.get(kind, "o")))
    if roles.initial:
        items.append(_marker("initial state", "white", edge=COLORS["initial"], width=2.5))
    if roles.highlight:
        items.append(_marker("chosen state", COLORS["state"], edge=COLORS["highlight"], width=3))
    if any(not a.get("expanded", True) for _, a in graph.nodes(data=True)):
        items.append(Line2D([], [], linestyle="--", color="#333333", label="not expanded (bound)"))
    colours = {_edge_color(e, roles) for e in graph.edges}
    if COLORS["edge"] in colours:
        items.append(_marker("a step (its completions)", COLORS["edge"], "-"))
    if COLORS["successor_edge"] in colours:
        items.append(_marker("a step to a successor", COLORS["successor_edge"], "-"))
    return items


def _note(graph: nx.DiGraph, roles: Roles) -> str:
    parts = []
    stats = graph.graph.get("stats") or {}
    if stats.get("truncated"):
        parts.append(f"truncated: {stats.get('truncated_reason')}")
    if stats.get("undecided"):
        parts.append(f"{counted(stats['undecided'], 'transition')} undecided (fuel)")
    if roles.missing:
        parts.append("not in this graph (explore further): " + "; ".join(roles.missing[:4]))
    return " · ".join(parts)


def draw_embedding(
    source_graph: nx.DiGraph,
    target_graph: nx.DiGraph,
    mapping: Mapping[Any, Any] | Callable[[Any], Any],
    path: str | Path | None = None,
    *,
    title: str | None = None,
    format: str | None = None,
    square: tuple[Any, str] | bool = True,
) -> Figure:
    """Draw two graphs side by side, the embedding as arrows between them, and one
    commuting square.

    ``mapping`` is a dict, a function or an :class:`~agentic_machines.embedding.Embedding`;
    it is applied to every state of ``source_graph`` (and ``e(1) = 1``, ``e(↑) = ↑``). The
    image in ``target_graph`` is filled blue. ``square`` is a pair ``(state, completion)``
    of the source: a third panel draws ``s → e(s)``, ``s → h'(s, c)``,
    ``e(s) → h(e(s), c)`` and ``h'(s, c) → e(h'(s, c))``, says whether the square
    commutes (``e(h'(s, c)) = h(e(s), c)``) and whether the prompts agree, and the two
    ``c`` edges are drawn orange in the graphs. The default ``True`` picks the first
    source transition that leaves its state; ``False`` draws no square. Returns the
    ``Figure``; saves it when ``path`` is given.

    >>> from agentic_machines.runtime.explore import explore
    >>> from agentic_machines.fixtures import fixture
    >>> g = explore(fixture("f2-add"), roots=[0, 1])
    >>> fig = draw_embedding(g, g, {0: 1, 1: 0})
    >>> print(len(fig.axes), fig.axes[2].texts[-1].get_text())
    3 e(h′(0, c)) = 0,  h(e(0), c) = 0
    ✓ the square commutes
    p′(0) = p(1) = '⋆'
    """
    from matplotlib.patches import ConnectionPatch  # lazy: matplotlib is slow to import

    fmt = figure_format(path, format)
    apply = (
        mapping if callable(mapping) and not isinstance(mapping, Mapping) else mapping.__getitem__
    )
    pairs = [(s, s if is_sentinel(s) else apply(s)) for s in source_graph]
    chosen = _square_of(source_graph, target_graph, pairs, square)
    src_roles = find_roles(source_graph)
    tgt_roles = find_roles(
        target_graph, embedding_image=[t for s, t in pairs if not is_sentinel(s)]
    )
    if chosen is not None:
        s, c, s_next, t, t_next, _ = chosen
        src_roles.marked_edges.add((s, s_next))
        if t_next is not None:
            tgt_roles.marked_edges.add((t, t_next))
    pos_src, pos_tgt = _layout(source_graph, "auto"), _layout(target_graph, "auto")
    names_src, names_tgt = node_names(source_graph), node_names(target_graph)
    plan_src, plan_tgt = plan_labels(source_graph, names_src), plan_labels(target_graph, names_tgt)
    panels = [
        _panel_size(source_graph, pos_src, "auto"),
        _panel_size(target_graph, pos_tgt, "auto"),
    ]
    panels[0].heading = f"source: {source_graph.graph.get('name', '')}"
    panels[1].heading = f"target: {target_graph.graph.get('name', '')}"
    if chosen is not None:
        panels.append(Panel(3.0, max(2.6, panels[1].height), (-0.6, 1.6), (-0.9, 1.35)))
        panels[2].heading = f"one commuting square (c = {short_text(chosen[1], 12)})"
    handles = legend_items(target_graph, tgt_roles)
    handles.append(_marker("e: source state → its image", _MAP, "-"))
    if chosen is not None:
        handles.append(_marker("the square's completion c", COLORS["highlight"], "-"))
    sections = [
        ("source states", plan_src.states),
        ("source " + _edge_heading(source_graph), plan_src.completions),
        ("target states", plan_tgt.states),
        ("target " + _edge_heading(target_graph), plan_tgt.completions),
    ]
    missing = [t for s, t in pairs if t not in pos_tgt]
    note = (
        f"{counted(len(missing), 'image state')} {plural(len(missing), 'is', 'are')} not in the target graph"
        if missing
        else ""
    )
    page = Page(panels, handles, sections, title or "", note)
    fig, axes = page.build()
    _draw_graph(axes[0], source_graph, pos_src, src_roles, plan_src, panels[0])
    _draw_graph(axes[1], target_graph, pos_tgt, tgt_roles, plan_tgt, panels[1])
    shrink = math.sqrt(_NODE) / 2 + 2  # from rim to rim, in points
    for s, t in pairs:
        if t in pos_tgt:
            fig.add_artist(
                ConnectionPatch(
                    xyA=pos_src[s],
                    coordsA=axes[0].transData,
                    xyB=pos_tgt[t],
                    coordsB=axes[1].transData,
                    arrowstyle="-|>",
                    mutation_scale=14,
                    shrinkA=shrink,
                    shrinkB=shrink,
                    linestyle=(0, (6, 3)),
                    color=_MAP,
                    linewidth=1.8,
                    alpha=0.45 if is_sentinel(s) else 1.0,
                    zorder=0,
                )
            )
    if chosen is not None:
        _draw_square(axes[2], chosen, names_src, names_tgt, source_graph, target_graph)
    if path is not None:
        save_figure(fig, path, fmt)
    return fig


_MAP = "#1f5fbf"  # the embedding's arrows


def _square_of(
    source: nx.DiGraph, target: nx.DiGraph, pairs: list, square: tuple[Any, str] | bool
) -> tuple | None:
    """(s, c, h'(s, c), e(s), h(e(s), c), e(h'(s, c))) for the chosen square, or None."""
    if square is False:
        return None
    image = dict(pairs)

    def step(graph: nx.DiGraph, state: Any, c: str) -> Any:
        for v in graph.successors(state) if state in graph else ():
            if c in graph.edges[state, v].get("completions", ()):
                return v
        return None

    if square is True:
        for u, v, a in source.edges(data=True):
            if u != v and a.get("completions"):
                square = (u, a["completions"][0])
                break
        else:
            return None
    s, c = square
    if s not in source or s not in image:
        raise InvalidArgument(f"square=({s!r}, {c!r}): {s!r} is not a state of the source graph")
    s_next = step(source, s, c)
    if s_next is None:
        raise InvalidArgument(
            f"square=({s!r}, {c!r}): the source graph has no edge from {s!r} on {c!r}; "
            "pick a completion it explored"
        )
    return s, c, s_next, image[s], step(target, image[s], c), image.get(s_next)


def _draw_square(
    ax: Any, chosen: tuple, names_src: dict, names_tgt: dict, src: nx.DiGraph, tgt: nx.DiGraph
) -> None:
    """The square e(h'(s, c)) = h(e(s), c): four corners, four arrows, and a caption saying
    whether it commutes and whether the prompts agree, as computed from the two graphs."""
    s, c, s_next, t, t_next, e_next = chosen

    def name(names: dict, state: Any) -> str:
        if state is None or state not in names:
            return "(not explored)"
        if is_sentinel(state):
            return "HALT (1)" if state is HALT else "DIVERGE (↑)"
        ident, label = names[state]
        return label if len(label) <= 10 else ident

    corners = {
        (0.0, 1.0): (name(names_src, s), COLORS["state"]),
        (1.0, 1.0): (name(names_tgt, t), COLORS["image"]),
        (0.0, 0.0): (name(names_src, s_next), COLORS["state"]),
        (1.0, 0.0): (name(names_tgt, t_next), COLORS["image"]),
    }
    boxes = {}
    for (x, y), (text, fill) in corners.items():
        boxes[(x, y)] = ax.text(
            x,
            y,
            text,
            ha="center",
            va="center",
            fontsize=MIN_FONT + 1,
            bbox={"boxstyle": "round,pad=0.3", "fc": fill, "ec": "#333333"},
            zorder=3,
        )
    arrows = [
        ((0.0, 1.0), (1.0, 1.0), _MAP, "e", (0.5, 1.07), "bottom", "center"),
        ((0.0, 0.0), (1.0, 0.0), _MAP, "e", (0.5, -0.07), "top", "center"),
        (
            (0.0, 1.0),
            (0.0, 0.0),
            COLORS["highlight"],
            f"h′(·, {short_text(c, 10)})",
            (-0.09, 0.5),
            "center",
            "right",
        ),
        (
            (1.0, 1.0),
            (1.0, 0.0),
            COLORS["highlight"],
            f"h(·, {short_text(c, 10)})",
            (1.09, 0.5),
            "center",
            "left",
        ),
    ]
    for start, end, color, label, at, va, ha in arrows:
        ax.annotate(
            "",
            xy=end,
            xytext=start,
            arrowprops={
                "arrowstyle": "-|>",
                "color": color,
                "lw": 1.8,
                # from box edge to box edge, however wide the corner's name
                "patchA": boxes[start].get_bbox_patch(),
                "patchB": boxes[end].get_bbox_patch(),
                "shrinkA": 2,
                "shrinkB": 2,
                "mutation_scale": 14,
            },
        )
        ax.text(*at, label, fontsize=MIN_FONT, va=va, ha=ha, color=color)
    a, b = name(names_src, s), name(names_tgt, t)
    commutes = t_next is not None and e_next == t_next
    lines = [
        f"e(h′({a}, c)) = {name(names_tgt, e_next)},  h(e({a}), c) = {name(names_tgt, t_next)}",
        "✓ the square commutes" if commutes else "✗ the square does not commute",
    ]
    p_src, p_tgt = src.nodes[s].get("prompt"), tgt.nodes[t].get("prompt") if t in tgt else None
    if p_src == p_tgt:
        lines.append(f"p′({a}) = p({b}) = {short_text(repr(p_src), 20)}")
    else:
        lines.append(f"✗ p′({a}) ≠ p({b})")
    ax.text(0.5, -0.3, "\n".join(lines), fontsize=MIN_FONT, ha="center", va="top", linespacing=1.5)
