"""State diagrams of explored machines: matplotlib pictures, DOT, Mermaid and JSON.

Every renderer takes the ``networkx.DiGraph`` that :func:`~agentic_machines.runtime.explore.explore`
returns. :func:`draw` renders it with matplotlib alone (PNG or SVG, no Graphviz
binary); :func:`to_dot`, :func:`to_mermaid` and :func:`to_json` export the same graph as
text. Nodes get a stable string id (``s0``, ``s1``, ... in exploration order, ``HALT``,
``DIVERGE``) and a short label; the renderers share both, so a state has the same name in
every format.

The pictures mark, each in its own style: the initial state (a double green ring), a
chosen state (``highlight``, an orange ring), the successors of a state (green fill and
green edges), the image of an embedding (blue fill), SPE states (gold fill), an
obstruction state (red fill), the sentinels ``HALT`` (grey square) and ``DIVERGE``
(purple diamond), and states a bound left unexpanded (dashed outline).

>>> from agentic_machines.runtime.explore import explore
>>> from agentic_machines.fixtures import fixture
>>> g = explore(fixture("f2-mul"), roots=[0, 1])
>>> print(to_mermaid(g))  # doctest: +ELLIPSIS
flowchart TD
  s0(["0<br/>⋆"])
  s1(["1<br/>⋆"])
  s0 -->|"0, 1"| s0
  s1 -->|"0"| s0
  s1 -->|"1"| s1
  classDef initial stroke:#1b7f3b,stroke-width:4px
  class s0 initial
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import networkx as nx

if TYPE_CHECKING:  # matplotlib is imported lazily, when a picture is drawn
    from matplotlib.figure import Figure

from ..errors import InvalidArgument
from ..machine import DIVERGE, HALT, is_sentinel
from ..runtime.explore import short_text
from ..runtime.harness import TraceState

__all__ = ["draw", "draw_embedding", "to_dot", "to_mermaid", "to_json", "node_names", "FORMATS"]

FORMATS = ("png", "svg", "pdf")
"""File formats :func:`draw` writes (matplotlib's Agg and SVG backends, no system binary)."""

LAYOUTS = ("auto", "layered", "spring", "circular", "shell")

# One colour per role, used by every renderer so the picture and the Mermaid/DOT text agree.
COLORS = {
    "state": "#e8eef7",
    "successor": "#c9f0c9",
    "image": "#bcd4ff",
    "spe": "#ffd966",
    "obstruction": "#ff9b9b",
    "halt": "#bdbdbd",
    "diverge": "#d5c4ec",
    "initial": "#1b7f3b",
    "highlight": "#e67e00",
    "edge": "#6b6b6b",
    "successor_edge": "#2e9e45",
}


# ----------------------------------------------------------------------------- names
def node_names(graph: nx.DiGraph) -> dict[Hashable, tuple[str, str]]:
    """For every node, its stable id and its short, unique label.

    Ids are ``s0, s1, ...`` in the graph's node order (exploration order, so the same
    exploration gives the same ids), ``HALT`` and ``DIVERGE``. Labels are the state
    itself when it is short, the completions of a short trace state as ``⟨a·b⟩``, else
    the id; a node attribute ``label`` overrides them. Sentinels read ``1 halt`` and
    ``↑ diverge``.

    >>> from agentic_machines import TableMachine, HALT
    >>> from agentic_machines.runtime.explore import explore
    >>> g = explore(TableMachine({"start": "go"}, {("start", "x"): HALT}, initial="start"))
    >>> node_names(g)
    {'start': ('s0', 'start'), 1: ('HALT', '1 halt')}
    """
    names: dict[Hashable, tuple[str, str]] = {}
    used: set[str] = set()
    index = 0
    for node, attrs in graph.nodes(data=True):
        if node is HALT:
            ident, label = "HALT", "1 halt"
        elif node is DIVERGE:
            ident, label = "DIVERGE", "↑ diverge"
        else:
            ident = f"s{index}"
            index += 1
            label = attrs.get("label") or _state_text(node, ident)
        if label in used:  # e.g. the state "1" and the state 1: keep labels unique
            label = f"{label} ({ident})"
        used.add(label)
        names[node] = (ident, label)
    return names


def _state_text(state: Any, ident: str, limit: int = 18) -> str:
    if isinstance(state, TraceState):
        cs = state.completions
        text = "⟨" + "·".join(short_text(c, 8) for c in cs) + "⟩"
        return (
            text if len(text) <= limit and all(len(c) <= 8 and "\n" not in c for c in cs) else ident
        )
    text = state if isinstance(state, str) else repr(state)
    return text if 0 < len(text) <= limit and "\n" not in text else ident


def _prompt_text(prompt: str | None, limit: int = 22) -> str:
    """The *end* of a prompt: long prompts share their beginning, their end differs.

    Trailing blank lines are dropped and runs of newlines shown as one ``⏎``.

    >>> _prompt_text("Question: where?\\n\\nThought 1:\\n\\n", 16)
    '…ere?⏎Thought 1:'
    """
    if not prompt:
        return ""
    one_line = short_text(prompt.rstrip() or prompt, 10**9)
    while "⏎⏎" in one_line:
        one_line = one_line.replace("⏎⏎", "⏎")
    return one_line if len(one_line) <= limit else "…" + one_line[-(limit - 1) :]


# ------------------------------------------------------------------------ highlights
@dataclass
class _Roles:
    """Which nodes play which role in a picture; shared by draw, to_dot and to_mermaid."""

    initial: set = field(default_factory=set)
    highlight: set = field(default_factory=set)
    successors: set = field(default_factory=set)
    successor_edges: set = field(default_factory=set)
    image: set = field(default_factory=set)
    spe: set = field(default_factory=set)
    obstruction: set = field(default_factory=set)
    missing: list = field(default_factory=list)

    def fill(self, node: Hashable, kind: str) -> tuple[str, str]:
        """(role, colour) of the node's fill: the most specific role wins."""
        for role in ("obstruction", "spe", "image", "successor"):
            members = self.successors if role == "successor" else getattr(self, role)
            if node in members:
                return role, COLORS[role]
        if kind in ("halt", "diverge"):
            return kind, COLORS[kind]
        return "state", COLORS["state"]


def _roles(
    graph: nx.DiGraph,
    highlight: Any = None,
    successors_of: Any = None,
    embedding_image: Any = None,
    spe_states: Iterable[Any] | None = None,
    obstruction: Any = None,
) -> _Roles:
    roles = _Roles()
    start = graph.graph.get("start")
    if start is not None and start in graph:
        roles.initial.add(start)

    def keep(target: set, states: Iterable[Any], what: str) -> None:
        for s in states:
            if s in graph:
                target.add(s)
            else:
                roles.missing.append(f"{what} {short_text(repr(s), 30)}")

    if highlight is not None:
        keep(roles.highlight, [highlight], "highlighted state")
    if successors_of is not None:
        if successors_of in graph:
            for t in graph.successors(successors_of):
                roles.successors.add(t)
                roles.successor_edges.add((successors_of, t))
            if not graph.nodes[successors_of].get("expanded", True):
                roles.missing.append("successors of an unexpanded state")
        else:
            roles.missing.append(f"state {short_text(repr(successors_of), 30)} (successors)")
    if embedding_image is not None:
        keep(roles.image, _image_states(embedding_image), "image state")
    if spe_states is not None:
        keep(roles.spe, spe_states, "SPE state")
    if obstruction is not None:
        keep(roles.obstruction, [_obstruction_state(obstruction)], "obstruction state")
    return roles


def _image_states(image: Any) -> list[Any]:
    mapping = getattr(image, "mapping", image) if not isinstance(image, Mapping) else image
    if mapping is None:
        raise InvalidArgument(
            "this embedding maps states with a function, so its image cannot be listed; "
            "pass embedding_image=[e(s) for s in the states you explored]"
        )
    if isinstance(mapping, Mapping):
        return list(mapping.values())
    return list(mapping)


def _obstruction_state(obstruction: Any) -> Any:
    # Accept a Verdict, an Obstruction, or the state itself.
    inner = getattr(obstruction, "obstruction", None)
    if inner is not None:
        obstruction = inner
    return (
        getattr(obstruction, "state", obstruction)
        if hasattr(obstruction, "explanation")
        else obstruction
    )


# ---------------------------------------------------------------------------- layout
def _layout(
    graph: nx.DiGraph, layout: str | Mapping[Any, tuple[float, float]]
) -> dict[Any, tuple[float, float]]:
    if isinstance(layout, Mapping):
        missing = [n for n in graph if n not in layout]
        if missing:
            raise InvalidArgument(
                f"the layout has no position for {len(missing)} node(s), e.g. {missing[0]!r}"
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
        return _layered(graph)
    if layout == "spring":
        return {n: tuple(p) for n, p in nx.spring_layout(graph, seed=0).items()}
    if layout == "circular":
        return {n: tuple(p) for n, p in nx.circular_layout(graph).items()}
    return {n: tuple(p) for n, p in nx.shell_layout(graph).items()}


def _layered(graph: nx.DiGraph) -> dict[Any, tuple[float, float]]:
    """Rows by exploration depth (sentinels in a last row), ordered to cut crossings.

    One downward barycenter sweep: a node sits near the mean position of its
    predecessors in earlier rows, which keeps a tree-like exploration untangled.
    """
    depth = {n: a.get("depth", 0) for n, a in graph.nodes(data=True)}
    states = [n for n in graph if not is_sentinel(n)]
    bottom = max((depth[n] for n in states), default=0) + 1
    rows: dict[int, list[Any]] = {}
    for n in graph:
        rows.setdefault(bottom if is_sentinel(n) else depth[n], []).append(n)
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
) -> Figure:
    """Draw an explored graph with matplotlib; save it to ``path`` when given.

    ``format`` is ``"png"``, ``"svg"`` or ``"pdf"`` (default: from the file suffix, else
    PNG). ``layout`` is ``"auto"`` (rows by depth for explored graphs), ``"layered"``,
    ``"spring"``, ``"circular"``, ``"shell"`` or a dict node -> (x, y). ``obstruction``
    may be a state, an :class:`~agentic_machines.verdict.Obstruction` or a refuting
    :class:`~agentic_machines.verdict.Verdict`; ``embedding_image`` a list of states, a
    dict, or an :class:`~agentic_machines.embedding.Embedding` with a dict mapping.
    States asked for but absent from the graph are named in a note under the picture.
    Returns the matplotlib ``Figure`` (made without pyplot, so no window and no global
    state).

    >>> from agentic_machines.runtime.explore import explore
    >>> from agentic_machines.fixtures import fixture
    >>> m = fixture("f2-mul")
    >>> fig = draw(explore(m, roots=m.states), spe_states=[1], successors_of=1)
    >>> import io
    >>> buf = io.BytesIO(); fig.savefig(buf, format="png"); buf.getvalue()[:4]
    b'\\x89PNG'
    """
    fmt = _format(path, format)
    fig = _figure(graph, layout)
    ax = fig.add_subplot(1, 1, 1)
    roles = _roles(graph, highlight, successors_of, embedding_image, spe_states, obstruction)
    _draw_graph(ax, graph, _layout(graph, layout), roles)
    _legend(ax, graph, roles)
    heading = title if title is not None else graph.graph.get("name")
    if heading:
        ax.set_title(str(heading), fontsize=10)
    note = _note(graph, roles)
    if note:
        ax.text(
            0.0,
            0.0,
            note,
            transform=ax.transAxes,
            fontsize=7,
            color="#555555",
            ha="left",
            va="top",
            wrap=True,
        )
    if path is not None:
        fig.savefig(path, format=fmt, bbox_inches="tight", dpi=120)
    return fig


def _format(path: str | Path | None, format: str | None) -> str:
    fmt = format or (Path(path).suffix.lstrip(".").lower() if path is not None else "") or "png"
    if fmt not in FORMATS:
        raise InvalidArgument(
            f"draw writes {', '.join(FORMATS)}, not {fmt!r}; for text formats use to_dot, to_mermaid or to_json"
        )
    return fmt


def _figure(graph: nx.DiGraph, layout: Any, columns: int = 1):
    from matplotlib.figure import Figure  # no pyplot: no backend selection, no global figure list

    rows: dict[int, int] = {}
    for _, a in graph.nodes(data=True):
        rows[a.get("depth", 0)] = rows.get(a.get("depth", 0), 0) + 1
    widest = max(rows.values(), default=1)
    if layout == "auto" or layout == "layered":
        w, h = 1.9 * widest + 1.5, 1.5 * (len(rows) + 1) + 0.8
    else:
        side = 2.2 * math.sqrt(max(len(graph), 1)) + 2
        w, h = side, side
    return Figure(figsize=(min(max(w, 4.0), 40.0) * columns, min(max(h, 3.0), 30.0)))


def _draw_graph(ax: Any, graph: nx.DiGraph, pos: dict, roles: _Roles, size: float = 1500) -> None:
    names = node_names(graph)
    small = len(graph) <= 30
    _limits(ax, pos)
    shapes = {"state": "o", "halt": "s", "diverge": "D"}
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
    for kind, shape in shapes.items():
        nodes = [n for n, a in graph.nodes(data=True) if a.get("kind", "state") == kind]
        if not nodes:
            continue
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
    prompts = (
        {n: _prompt_text(a.get("prompt"), 18) for n, a in graph.nodes(data=True) if a.get("prompt")}
        if small
        else {}
    )
    for above, nodes in (
        (True, [n for n in graph if n in prompts]),
        (False, [n for n in graph if n not in prompts]),
    ):
        if nodes:  # a name with a prompt under it sits above the centre; alone, on it
            nx.draw_networkx_labels(
                graph,
                pos,
                labels={n: names[n][1] for n in nodes},
                font_size=8 if small else 6,
                verticalalignment="bottom" if above else "center",
                ax=ax,
            )
    if prompts:  # the prompt's end under the state's name, smaller
        nx.draw_networkx_labels(
            graph,
            pos,
            labels=prompts,
            font_size=6.5,
            font_color="#333333",
            verticalalignment="top",
            ax=ax,
        )
    _draw_edges(ax, graph, pos, roles, size, small)
    ax.set_axis_off()
    _limits(ax, pos)


def _limits(ax: Any, pos: dict) -> None:
    """Fix the data limits before drawing: networkx sizes self-loops from the current
    axes transform, and a one-row layout would otherwise have a zero-height y range."""
    if not pos:
        return
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    width, height = max(xs) - min(xs), max(ys) - min(ys)
    # Room for a node, its labels and a self-loop (about 0.9 inch) around the outer nodes.
    pad_x = max(0.9, 0.2 * width)
    pad_y = max(0.8, 0.2 * height)
    ax.set_xlim(min(xs) - pad_x, max(xs) + pad_x)
    ax.set_ylim(min(ys) - pad_y, max(ys) + pad_y)


def _draw_edges(
    ax: Any, graph: nx.DiGraph, pos: dict, roles: _Roles, size: float, small: bool
) -> None:
    loops = [(u, v) for u, v in graph.edges if u == v]
    # A pair of opposite edges would be drawn on top of each other: bend both.
    curved = [(u, v) for u, v in graph.edges if u != v and graph.has_edge(v, u)]
    bent = set(curved)
    # An edge that skips a row would run straight through the nodes between: arc it.
    long = [
        (u, v) for u, v in graph.edges if u != v and (u, v) not in bent and _skips(pos[u], pos[v])
    ]
    bent.update(long)
    straight = [(u, v) for u, v in graph.edges if u != v and (u, v) not in bent]
    color = {
        e: COLORS["successor_edge"] if e in roles.successor_edges else COLORS["edge"]
        for e in graph.edges
    }
    width = {e: 2.2 if e in roles.successor_edges else 1.1 for e in graph.edges}
    font = 7 if small else 5
    box = {"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85}
    text = {e: _edge_text(graph.edges[e], compact=len(graph) > 8) for e in graph.edges}
    for edges, style in ((straight, "arc3"), (curved, "arc3,rad=0.18"), (long, "arc3,rad=0.3")):
        if not edges:
            continue
        nx.draw_networkx_edges(
            graph,
            pos,
            edgelist=edges,
            ax=ax,
            arrows=True,
            arrowsize=14,
            node_size=size,
            connectionstyle=style,
            edge_color=[color[e] for e in edges],
            width=[width[e] for e in edges],
        )
        # Labels of edges leaving one row all sit at mid-height: stagger them along
        # their edges so that neighbours do not print on top of each other.
        for k, where in enumerate((0.5, 0.32, 0.68)):
            group = edges[k::3]
            if group:
                nx.draw_networkx_edge_labels(
                    graph,
                    pos,
                    edge_labels={e: text[e] for e in group},
                    label_pos=where,
                    ax=ax,
                    font_size=font,
                    connectionstyle=style,
                    node_size=size,
                    rotate=False,
                    bbox=box,
                )
    for e in loops:
        n = e[0]
        others = [pos[m] for m in (*graph.successors(n), *graph.predecessors(n)) if m != n]
        _self_loop(
            ax, pos[n], text[e], size, color[e], width[e], font, box, _free_side(pos[n], others)
        )


def _edge_text(attrs: Mapping[str, Any], compact: bool) -> str:
    """An edge's label in a picture: when crowded or long, the first completion and a count."""
    cs = attrs.get("completions")
    label = attrs.get("label", "")
    if not cs or (not compact and len(label) <= 24):
        return label
    return short_text(cs[0], 14) + (f" +{len(cs) - 1}" if len(cs) > 1 else "")


def _skips(a: tuple[float, float], b: tuple[float, float]) -> bool:
    dx, dy = abs(a[0] - b[0]), abs(a[1] - b[1])
    return dy > 1.01 and dx < 0.5 * dy or (dy < 0.01 and dx > 1.01)


def _free_side(xy: tuple[float, float], others: list[tuple[float, float]]) -> float:
    """The direction (radians) among right/up/left/down farthest from every neighbour."""
    angles = [math.atan2(o[1] - xy[1], o[0] - xy[0]) for o in others if o != xy]

    def clearance(theta: float) -> float:
        return min(
            (abs((theta - a + math.pi) % (2 * math.pi) - math.pi) for a in angles), default=math.pi
        )

    return max((0.0, math.pi / 2, math.pi, -math.pi / 2), key=clearance)


def _self_loop(
    ax: Any,
    xy: tuple[float, float],
    label: str,
    size: float,
    color: str,
    width: float,
    font: float,
    box: dict,
    side: float = 0.0,
) -> None:
    """A loop beside a node, sized in inches rather than data units.

    networkx sizes self-loops by the vertical extent of the drawing, so they grow with
    the graph (and explode on a one-row graph). Here the loop's shape is in inches,
    placed at the node's data position: the same size in every picture and at every dpi.
    """
    from matplotlib.patches import FancyArrowPatch
    from matplotlib.path import Path as MplPath
    from matplotlib.transforms import ScaledTranslation

    r = math.sqrt(size) / 2 / 72  # node radius in inches (node_size is in points²)
    # Drawn to the right, then turned to the side where no other edge leaves the node.
    a, b = math.radians(28), math.radians(-28)
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
    ax.annotate(
        label,
        xy=xy,
        xytext=(reach * cos, reach * sin),
        textcoords="offset points",
        ha="center" if abs(cos) < 0.5 else ("left" if cos > 0 else "right"),
        va="center" if abs(sin) < 0.5 else ("bottom" if sin > 0 else "top"),
        fontsize=font,
        bbox=box,
        zorder=3,
    )


def _legend(ax: Any, graph: nx.DiGraph, roles: _Roles) -> None:
    from matplotlib.lines import Line2D

    def marker(
        label: str, color: str, shape: str = "o", edge: str = "#333333", width: float = 1.0
    ) -> Line2D:
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

    kinds = {a.get("kind") for _, a in graph.nodes(data=True)}
    items = [marker("state", COLORS["state"])]
    if roles.initial:
        items.append(marker("initial state", "white", edge=COLORS["initial"], width=2.5))
    if roles.highlight:
        items.append(marker("chosen state", COLORS["state"], edge=COLORS["highlight"], width=3))
    if roles.successors:
        items.append(marker("successor", COLORS["successor"]))
    if roles.image:
        items.append(marker("embedding image", COLORS["image"]))
    if roles.spe:
        items.append(marker("SPE state", COLORS["spe"]))
    if roles.obstruction:
        items.append(marker("obstruction state", COLORS["obstruction"]))
    if "halt" in kinds:
        items.append(marker("HALT (1)", COLORS["halt"], "s"))
    if "diverge" in kinds:
        items.append(marker("DIVERGE (↑)", COLORS["diverge"], "D"))
    if any(not a.get("expanded", True) for _, a in graph.nodes(data=True)):
        items.append(Line2D([], [], linestyle="--", color="#333333", label="not expanded (bound)"))
    ax.legend(handles=items, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)


def _note(graph: nx.DiGraph, roles: _Roles) -> str:
    parts = []
    stats = graph.graph.get("stats") or {}
    if stats.get("truncated"):
        parts.append(f"truncated: {stats.get('truncated_reason')}")
    if stats.get("undecided"):
        parts.append(f"{stats['undecided']} transition(s) undecided (fuel)")
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
) -> Figure:
    """Draw two graphs side by side with an embedding as dashed lines between them.

    ``mapping`` is a dict, a function or an :class:`~agentic_machines.embedding.Embedding`;
    it is applied to every state of ``source_graph``. The image in ``target_graph`` is
    filled blue. Returns the ``Figure``; saves it when ``path`` is given.

    >>> from agentic_machines.runtime.explore import explore
    >>> from agentic_machines.fixtures import fixture
    >>> g = explore(fixture("f2-add"), roots=[0, 1])
    >>> fig = draw_embedding(g, g, {0: 1, 1: 0})
    >>> len(fig.axes)
    2
    """
    from matplotlib.patches import ConnectionPatch

    fmt = _format(path, format)
    apply = (
        mapping if callable(mapping) and not isinstance(mapping, Mapping) else mapping.__getitem__
    )
    pairs = [(s, apply(s)) for s in source_graph if not is_sentinel(s)]
    big = source_graph if len(source_graph) >= len(target_graph) else target_graph
    fig = _figure(big, "layered", columns=2)
    ax_src = fig.add_subplot(1, 2, 1)
    ax_tgt = fig.add_subplot(1, 2, 2)
    pos_src, pos_tgt = _layout(source_graph, "auto"), _layout(target_graph, "auto")
    _draw_graph(ax_src, source_graph, pos_src, _roles(source_graph))
    tgt_roles = _roles(target_graph, embedding_image=[t for _, t in pairs])
    _draw_graph(ax_tgt, target_graph, pos_tgt, tgt_roles)
    ax_src.set_title(f"source: {source_graph.graph.get('name', '')}", fontsize=10)
    ax_tgt.set_title(f"target: {target_graph.graph.get('name', '')}", fontsize=10)
    for s, t in pairs:
        if t in pos_tgt:
            fig.add_artist(
                ConnectionPatch(
                    xyA=pos_src[s],
                    coordsA=ax_src.transData,
                    xyB=pos_tgt[t],
                    coordsB=ax_tgt.transData,
                    linestyle="--",
                    color=COLORS["image"],
                    linewidth=1.6,
                    alpha=0.9,
                )
            )
    if title:
        fig.suptitle(title, fontsize=11)
    missing = [t for _, t in pairs if t not in pos_tgt]
    if missing:
        fig.text(
            0.01, 0.01, f"{len(missing)} image state(s) are not in the target graph", fontsize=7
        )
    if path is not None:
        fig.savefig(path, format=fmt, bbox_inches="tight", dpi=120)
    return fig


# ------------------------------------------------------------------------ text forms
def to_mermaid(graph: nx.DiGraph, *, direction: str = "TD", **highlights: Any) -> str:
    """The graph as a Mermaid ``flowchart``, with the same roles as :func:`draw`.

    Labels are quoted and escaped with Mermaid entity codes, so any prompt or
    completion text is safe. ``highlights`` takes the keyword arguments of :func:`draw`
    (``highlight``, ``successors_of``, ``embedding_image``, ``spe_states``,
    ``obstruction``).

    >>> from agentic_machines import TableMachine
    >>> from agentic_machines.runtime.explore import explore
    >>> g = explore(TableMachine({"a": 'say "hi" | <b>'}, {("a", "x#1"): "a"}, initial="a"))
    >>> print(to_mermaid(g).splitlines()[1:3])
    ['  s0(["a<br/>say #quot;hi#quot; #124; #lt;b#gt;"])', '  s0 -->|"x#35;1"| s0']
    """
    if direction not in ("TD", "TB", "LR", "RL", "BT"):
        raise InvalidArgument(f"direction must be TD, TB, LR, RL or BT, not {direction!r}")
    names = node_names(graph)
    roles = _roles(graph, **highlights)
    lines = [f"flowchart {direction}"]
    for n, a in graph.nodes(data=True):
        ident, label = names[n]
        prompt = _prompt_text(a.get("prompt"), 40)
        text = _mermaid_text(label) + (f"<br/>{_mermaid_text(prompt)}" if prompt else "")
        kind = a.get("kind", "state")
        shape = {"halt": '["{}"]', "diverge": '{{{{"{}"}}}}'}.get(kind, '(["{}"])')
        lines.append(f"  {ident}{shape.format(text)}")
    for u, v, a in graph.edges(data=True):
        lines.append(f'  {names[u][0]} -->|"{_mermaid_text(a.get("label", ""))}"| {names[v][0]}')
    styles = _role_styles(graph, roles)
    for role, (members, css) in styles.items():
        lines.append(f"  classDef {role} {css}")
        lines.append(f"  class {','.join(names[n][0] for n in members)} {role}")
    return "\n".join(lines)


def _role_styles(graph: nx.DiGraph, roles: _Roles) -> dict[str, tuple[list[Any], str]]:
    """Mermaid/DOT classes: role -> (nodes, Mermaid CSS). Sentinels and roles only."""
    out: dict[str, tuple[list[Any], str]] = {}
    fills: dict[str, list[Any]] = {}
    for n, a in graph.nodes(data=True):
        role, _ = roles.fill(n, a.get("kind", "state"))
        if role != "state":
            fills.setdefault(role, []).append(n)
    for role, members in fills.items():
        out[role] = (members, f"fill:{COLORS[role]},stroke:#333")
    if roles.highlight:
        out["chosen"] = (
            sorted(roles.highlight, key=list(graph).index),
            f"stroke:{COLORS['highlight']},stroke-width:4px",
        )
    if roles.initial:
        out["initial"] = (list(roles.initial), f"stroke:{COLORS['initial']},stroke-width:4px")
    return out


def _mermaid_text(text: str) -> str:
    # '#' first: it starts every entity code that the other replacements insert.
    for raw, code in (
        ("#", "#35;"),
        ('"', "#quot;"),
        ("<", "#lt;"),
        (">", "#gt;"),
        ("|", "#124;"),
        ("`", "#96;"),
        ("[", "#91;"),
        ("]", "#93;"),
        ("{", "#123;"),
        ("}", "#125;"),
    ):
        text = text.replace(raw, code)
    return text.replace("\n", "<br/>")


def to_dot(graph: nx.DiGraph, **highlights: Any) -> str:
    """The graph in Graphviz DOT, with the same ids, labels and roles as :func:`draw`.

    >>> from agentic_machines.runtime.explore import explore
    >>> from agentic_machines.fixtures import fixture
    >>> print(to_dot(explore(fixture("halt1"))))
    digraph "halt1" {
      rankdir=TB;
      node [shape=ellipse, style=filled, fillcolor="#e8eef7", fontname="Helvetica"];
      "s0" [label="0\\n⋆", penwidth=3, color="#1b7f3b"];
      "HALT" [label="1 halt", shape=box, fillcolor="#bdbdbd"];
      "s0" -> "HALT" [label="0, 1"];
    }
    """
    names = node_names(graph)
    roles = _roles(graph, **highlights)
    lines = [
        f"digraph {_dot_text(str(graph.graph.get('name', 'machine')))} {{",
        "  rankdir=TB;",
        '  node [shape=ellipse, style=filled, fillcolor="#e8eef7", fontname="Helvetica"];',
    ]
    for n, a in graph.nodes(data=True):
        ident, label = names[n]
        prompt = _prompt_text(a.get("prompt"), 40)
        attrs = [f"label={_dot_text(label + (chr(10) + prompt if prompt else ''))}"]
        kind = a.get("kind", "state")
        if kind == "halt":
            attrs.append("shape=box")
        elif kind == "diverge":
            attrs.append("shape=diamond")
        role, color = roles.fill(n, kind)
        if role != "state":
            attrs.append(f'fillcolor="{color}"')
        if n in roles.highlight:
            attrs.append(f'penwidth=3, color="{COLORS["highlight"]}"')
        elif n in roles.initial:
            attrs.append(f'penwidth=3, color="{COLORS["initial"]}"')
        if not a.get("expanded", True):
            attrs.append('style="filled,dashed"')
        lines.append(f"  {_dot_text(ident)} [{', '.join(attrs)}];")
    for u, v, a in graph.edges(data=True):
        extra = (
            f', color="{COLORS["successor_edge"]}", penwidth=2'
            if (u, v) in roles.successor_edges
            else ""
        )
        lines.append(
            f"  {_dot_text(names[u][0])} -> {_dot_text(names[v][0])} [label={_dot_text(a.get('label', ''))}{extra}];"
        )
    lines.append("}")
    return "\n".join(lines)


def _dot_text(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_json(graph: nx.DiGraph, *, indent: int | None = None) -> str:
    """The graph as networkx node-link JSON, with string ids and JSON-safe attributes.

    Each node keeps ``id``, ``label``, ``state`` (the state's ``repr``), ``kind``,
    ``prompt``, ``depth`` and ``expanded``; each edge ``source``, ``target``,
    ``completions`` and ``label``; the graph keeps its name, ``start``/``roots`` (as ids)
    and ``stats``. ``networkx.node_link_graph(json.loads(text), edges="edges")`` reads it
    back.

    >>> from agentic_machines.runtime.explore import explore
    >>> from agentic_machines.fixtures import fixture
    >>> data = json.loads(to_json(explore(fixture("diverge1"))))
    >>> [n["id"] for n in data["nodes"]], data["edges"][0]["completions"]
    (['s0', 'DIVERGE'], ['0', '1'])
    """
    names = node_names(graph)
    nodes = []
    for n, a in graph.nodes(data=True):
        ident, label = names[n]
        entry = {"id": ident, "label": label, "state": repr(n)}
        entry.update({k: _jsonable(v) for k, v in a.items() if k != "label"})
        nodes.append(entry)
    edges = [
        {"source": names[u][0], "target": names[v][0], **{k: _jsonable(x) for k, x in a.items()}}
        for u, v, a in graph.edges(data=True)
    ]
    meta = {}
    for k, v in graph.graph.items():
        if k == "start":
            meta[k] = names[v][0] if v in names else _jsonable(v)
        elif k == "roots":
            meta[k] = [names[r][0] if r in names else _jsonable(r) for r in v]
        else:
            meta[k] = _jsonable(v)
    data = {"directed": True, "multigraph": False, "graph": meta, "nodes": nodes, "edges": edges}
    return json.dumps(data, ensure_ascii=False, indent=indent)


def _jsonable(value: Any) -> Any:
    """``value`` as plain JSON data; anything else becomes its ``repr``."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return repr(value)
