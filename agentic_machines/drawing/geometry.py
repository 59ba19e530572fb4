"""Where a drawn figure's nodes and arrowheads are, measured from what matplotlib draws.

A state diagram is legible only if every arrow shows its head: an arrow whose head ends
under a node (or under the ring of the initial state) points nowhere a reader can see.
:func:`node_outlines` reads the outline of every node marker a figure draws (the
``PathCollection`` markers, rings included) in pixels; :func:`arrowheads` reads the head
triangle of every arrow (``FancyArrowPatch``, ``ConnectionPatch`` included);
:func:`hidden_arrowheads` names every head that lies under a node. The drawing code uses
:func:`rim_distance` to end each arrow on the rim of what is drawn, and the test suite
runs :func:`hidden_arrowheads` on every gallery picture. :class:`EdgePaths` measures every
edge's drawn path once, for the label placer's many questions of which edges cross a box.

>>> from matplotlib.figure import Figure
>>> fig = Figure(figsize=(3, 2)); ax = fig.add_axes((0, 0, 1, 1)); ax.set_axis_off()
>>> ax.set_xlim(-1, 2); ax.set_ylim(-1, 1)
(-1.0, 2.0)
(-1.0, 1.0)
>>> _ = ax.scatter([1.0], [0.0], s=1500)
>>> from matplotlib.patches import FancyArrowPatch
>>> _ = ax.add_patch(FancyArrowPatch((-0.5, 0), (1.0, 0), arrowstyle="-|>", mutation_scale=14))
>>> hidden_arrowheads(fig)
['arrow 1 in axes 0: its head is under a node at (1, 0)']
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from matplotlib.collections import PathCollection
from matplotlib.patches import FancyArrowPatch
from matplotlib.path import Path
from matplotlib.transforms import Affine2D

from .labels import renderer_of

__all__ = [
    "node_outlines",
    "arrowheads",
    "hidden_arrowheads",
    "rim_distance",
    "crossed_by",
    "EdgePaths",
    "labels_on_other_edges",
    "edge_points",
    "overlaps",
    "small_texts",
    "labels_far_from_edges",
]


def node_outlines(ax: Any) -> list[tuple[tuple[float, float], Path]]:
    """Every node marker ``ax`` draws: (centre, outline), both in pixels.

    Markers of every ``PathCollection`` with offsets (what ``networkx`` and ``scatter``
    draw), at their drawn size and shape: circles, squares, diamonds, rings.

    >>> from matplotlib.figure import Figure
    >>> fig = Figure(dpi=72); ax = fig.add_axes((0, 0, 1, 1))
    >>> _ = ax.scatter([0.5], [0.5], s=100, marker="s")
    >>> [(c, round(float(p.get_extents().width))) for c, p in node_outlines(ax)]
    [((230.4, 172.8), 10)]
    """
    # Marker sizes are in points²; scaled here with the figure's dpi (the collection
    # itself rescales only when drawn, so its transforms are stale before that).
    dpi = ax.figure.dpi
    found = []
    for coll in ax.collections:
        if not isinstance(coll, PathCollection) or not coll.get_visible():
            continue
        offsets = coll.get_offset_transform().transform(coll.get_offsets())
        paths, sizes = coll.get_paths(), coll.get_sizes()
        for i, (x, y) in enumerate(offsets):
            path = paths[i % len(paths)]
            side = math.sqrt(float(sizes[i % len(sizes)])) * dpi / 72 if len(sizes) else 1.0
            outline = path.transformed(Affine2D().scale(side) + Affine2D().translate(x, y))
            found.append(((round(float(x), 3), round(float(y), 3)), outline))
    return found


def arrowheads(fig: Any) -> list[tuple[Any, Any, list[tuple[float, float]]]]:
    """Every arrow of ``fig`` with a head: (axes or None, patch, head corners in pixels).

    The head is the last closed piece of the drawn arrow (``-|>`` style): its two back
    corners and its tip, in that order.

    >>> from matplotlib.figure import Figure
    >>> from matplotlib.patches import FancyArrowPatch
    >>> fig = Figure(dpi=72); ax = fig.add_axes((0, 0, 1, 1))
    >>> _ = ax.add_patch(FancyArrowPatch((0.1, 0.5), (0.9, 0.5), arrowstyle="-|>", mutation_scale=10))
    >>> [len(head) for _, _, head in arrowheads(fig)]
    [3]
    """

    renderer_of(fig)
    fig.draw_without_rendering()  # annotations and connection patches find their ends
    owners = [(ax, p) for ax in fig.axes for p in ax.patches] + [(None, a) for a in fig.artists]
    owners += [
        (ax, t.arrow_patch) for ax in fig.axes for t in ax.texts if getattr(t, "arrow_patch", None)
    ]
    found = []
    for ax, patch in owners:
        if not isinstance(patch, FancyArrowPatch) or not patch.get_visible():
            continue
        # Any: the stubs type a Path's arrays as any array-like
        path: Any = patch.get_transform().transform_path(patch.get_path())
        codes = [int(c) for c in path.codes] if path.codes is not None else []
        starts = [i for i, c in enumerate(codes) if c == Path.MOVETO]
        if len(starts) < 2 or codes[-1] != Path.CLOSEPOLY:
            continue  # a line without a closed head
        vertices = path.vertices.tolist()
        head = [(float(x), float(y)) for x, y in vertices[starts[-1] : len(codes) - 1]]
        found.append((ax, patch, head))
    return found


def hidden_arrowheads(fig: Any, tolerance: float = 1.0) -> list[str]:
    """Name every arrowhead of ``fig`` that lies under a node or a ring.

    A head is hidden, wholly or in part, when one of its corners (the tip included) or
    its centre lies inside a node's drawn outline by more than ``tolerance`` pixels:
    nodes are drawn above edges, so that part of the head is covered. The tip may touch
    the rim. An empty list: every head shows whole.

    >>> from matplotlib.figure import Figure
    >>> hidden_arrowheads(Figure())
    []
    """
    outlines = {id(ax): node_outlines(ax) for ax in fig.axes}
    every = [o for found in outlines.values() for o in found]
    problems = []
    for k, (ax, _patch, head) in enumerate(arrowheads(fig), 1):
        if len(head) < 3:
            continue
        centre = (sum(x for x, _ in head) / len(head), sum(y for _, y in head) / len(head))
        points = [centre, *head]
        for (cx, cy), outline in every:
            if any(_inside(outline, p, tolerance) for p in points):
                where = f"axes {fig.axes.index(ax)}" if ax is not None else "the figure"
                x, y = _data_of(ax, (cx, cy)) if ax is not None else (cx, cy)
                problems.append(
                    f"arrow {k} in {where}: its head is under a node at ({x:.3g}, {y:.3g})"
                )
                break
    return problems


def _inside(outline: Path, point: tuple[float, float], tolerance: float) -> bool:
    # inside and not within `tolerance` of the rim: the point and its four neighbours at
    # that distance are all inside
    x, y = point
    probes = [
        (x, y),
        (x + tolerance, y),
        (x - tolerance, y),
        (x, y + tolerance),
        (x, y - tolerance),
    ]
    return all(outline.contains_point(p) for p in probes)


def _data_of(ax: Any, xy: tuple[float, float]) -> tuple[float, float]:
    x, y = ax.transData.inverted().transform(xy)
    return float(x), float(y)


def rim_distance(
    outlines: list[Path], centre: tuple[float, float], direction: tuple[float, float]
) -> float:
    """How far (pixels) from ``centre`` along ``direction`` the last of ``outlines`` ends.

    Bisection on the drawn outlines, so a square, a diamond and a ring all end where
    they are drawn.

    >>> circle = Path.circle((0, 0), 10)
    >>> round(rim_distance([circle], (0, 0), (1, 1)), 1)
    10.0
    """
    dx, dy = direction
    norm = math.hypot(dx, dy) or 1.0
    dx, dy = dx / norm, dy / norm
    far = max((max(o.get_extents().width, o.get_extents().height) for o in outlines), default=0)
    lo, hi = 0.0, float(far) + 1.0
    for _ in range(30):
        mid = (lo + hi) / 2
        p = (centre[0] + dx * mid, centre[1] + dy * mid)
        if any(o.contains_point(p) for o in outlines):
            lo = mid
        else:
            hi = mid
    return hi


def crossed_by(ax: Any, box: Any, own: str | None = None) -> list[str]:
    """The gids of the edges (patches with a gid ``edge-<k>``) of ``ax`` whose drawn path
    passes through ``box`` (pixels), leaving out the edge ``own``. To ask about many
    boxes, measure the edges once with :class:`EdgePaths` and ask it.

    >>> from matplotlib.figure import Figure
    >>> from matplotlib.patches import FancyArrowPatch
    >>> from matplotlib.transforms import Bbox
    >>> fig = Figure(dpi=72); ax = fig.add_axes((0, 0, 1, 1))
    >>> _ = ax.add_patch(FancyArrowPatch((0, 0.5), (1, 0.5), gid="edge-1"))
    >>> crossed_by(ax, Bbox([[200, 150], [260, 180]])), crossed_by(ax, Bbox([[0, 0], [9, 9]]))
    (['edge-1'], [])
    """
    return EdgePaths(ax).crossing(box, own)


class EdgePaths:
    """The drawn paths (pixels) of the visible edges of ``ax`` (patches with a gid
    ``edge-<k>``), measured once: an arrow recomputes its path (its cut at both ends,
    its head) each time it is asked, so a label placer asking of every trial box
    measured every edge again. The edges must not change while it is used.

    >>> from matplotlib.figure import Figure
    >>> from matplotlib.patches import FancyArrowPatch
    >>> from matplotlib.transforms import Bbox
    >>> fig = Figure(dpi=72); ax = fig.add_axes((0, 0, 1, 1))
    >>> _ = ax.add_patch(FancyArrowPatch((0, 0.5), (1, 0.5), gid="edge-1"))
    >>> edges = EdgePaths(ax)
    >>> edges.crossing(Bbox([[200, 150], [260, 180]])), edges.crossing(Bbox([[0, 0], [9, 9]]))
    (['edge-1'], [])
    """

    def __init__(self, ax: Any) -> None:
        # Each edge as (gid, [(piece, its extent x0, y0, x1, y1)]), in drawing order.
        self.edges: list[tuple[str, list[tuple[Path, tuple[float, float, float, float]]]]] = []
        for patch in ax.patches:
            name = patch.get_gid() or ""
            if not name.startswith("edge-") or not patch.get_visible():
                continue
            path = patch.get_transform().transform_path(patch.get_path())
            # piece by piece: a head's CLOSEPOLY vertex is (0, 0), and intersects_bbox
            # counted a line to it (an edge at the top of a picture "crossed" a label at
            # its bottom)
            pieces = []
            for piece in path.to_polygons(closed_only=False):
                if len(piece):
                    (x0, y0), (x1, y1) = piece.min(axis=0), piece.max(axis=0)
                    pieces.append((Path(piece), (float(x0), float(y0), float(x1), float(y1))))
            self.edges.append((name, pieces))

    def crossing(self, box: Any, own: str | None = None) -> list[str]:
        """The gids of the edges whose drawn path passes through ``box`` (pixels), in
        drawing order, leaving out the edge ``own``."""
        found = []
        for name, pieces in self.edges:
            if name == own:
                continue
            # a piece whose extent misses the box cannot cross it: only the rest are measured
            if any(
                x0 <= box.x1
                and box.x0 <= x1
                and y0 <= box.y1
                and box.y0 <= y1
                and piece.intersects_bbox(box, filled=False)
                for piece, (x0, y0, x1, y1) in pieces
            ):
                found.append(name)
        return found


def _edge_labels(ax: Any) -> Iterator[tuple[Any, str]]:
    """Each edge label of ``ax`` (a non-empty text with gid ``edge-label-<k>``) and the
    gid of its own edge (``edge-<k>``)."""
    for text in ax.texts:
        name = text.get_gid() or ""
        if name.startswith("edge-label-") and text.get_text().strip():
            yield text, "edge-" + name[len("edge-label-") :]


def labels_on_other_edges(fig: Any) -> list[str]:
    """Name every edge label (text with gid ``edge-label-<k>``) that another edge's
    drawn path runs through: such a label sits on a crossing, or on the wrong edge.

    >>> from matplotlib.figure import Figure
    >>> labels_on_other_edges(Figure())
    []
    """

    renderer = renderer_of(fig)
    # drawn at the figure's own dpi first: an arrow keeps the pixel scale of its last
    # drawing (a save at another dpi), and its path is measured with that scale
    fig.draw_without_rendering()
    problems = []
    for ax in fig.axes:
        edges = EdgePaths(ax)
        for text, own in _edge_labels(ax):
            others = edges.crossing(text.get_window_extent(renderer), own)
            if others:
                problems.append(f"{text.get_text()!r} lies on {', '.join(others)}")
    return problems


def edge_points(ax: Any, name: str | None = None, step: float = 2.0) -> dict[str, list[Any]]:
    """The drawn line of every edge of ``ax`` (patches with a gid ``edge-<k>``) as
    points in pixels, at most ``step`` pixels apart, its arrowhead left out; only the
    edge ``name`` when given.

    >>> from matplotlib.figure import Figure
    >>> fig = Figure(dpi=72); ax = fig.add_axes((0, 0, 1, 1))
    >>> _ = ax.add_patch(FancyArrowPatch((0, 0.5), (1, 0.5), gid="edge-1"))
    >>> fig.draw_without_rendering(); len(edge_points(ax)["edge-1"]) > 100
    True
    """
    found = {}
    for patch in ax.patches:
        gid = patch.get_gid() or ""
        if not gid.startswith("edge-") or (name is not None and gid != name):
            continue
        path: Any = patch.get_transform().transform_path(patch.get_path())
        # curves flattened to polylines; the first is the line, the next ones its head
        polygons = path.to_polygons(closed_only=False)
        line = polygons[0].tolist() if len(polygons) else []
        points: list[Any] = []
        for a, b in zip(line, line[1:]):
            n = max(1, int(math.dist(a, b) / step) + 1)
            points += [
                (a[0] + (b[0] - a[0]) * i / n, a[1] + (b[1] - a[1]) * i / n) for i in range(n)
            ]
        points += line[-1:]
        found[gid] = points
    return found


def overlaps(fig: Any, tolerance: float = 1.0) -> list[str]:
    """What a reader cannot see because something covers it, measured on the drawn
    figure: two nodes that overlap, a text on a node (other than the text drawn inside
    it), and an edge through a node or through a caption (a text with a gid
    ``caption-<k>``, under its node).

    An edge passes through a node when a point of its line lies inside the node's
    outline by more than ``tolerance`` pixels (edges end on the rims, so an edge's own
    ends do not count), through a caption when a point lies inside the caption's box.
    With :func:`~agentic_machines.drawing.labels.label_clashes` (texts on texts),
    :func:`labels_on_other_edges` and :func:`hidden_arrowheads`, the geometry tests of
    the diagrams. An empty list: nothing is covered.

    >>> from matplotlib.figure import Figure
    >>> fig = Figure(dpi=72); ax = fig.add_axes((0, 0, 1, 1)); ax.set_axis_off()
    >>> _ = ax.scatter([0.2, 0.8], [0.5, 0.5], s=400)
    >>> _ = ax.add_patch(FancyArrowPatch((0.1, 0.2), (0.3, 0.8), gid="edge-1"))
    >>> overlaps(fig)
    ['edge-1 runs through the node at (0.2, 0.5)']
    """
    renderer = renderer_of(fig)
    fig.draw_without_rendering()
    problems = []
    for ax in fig.axes:
        nodes = node_outlines(ax)
        for i, (c, a) in enumerate(nodes):
            for d, b in nodes[i + 1 :]:
                if c == d:
                    continue  # a ring drawn around its own node
                va: Any = a.vertices  # Any: the stubs type a Path's arrays as array-like
                vb: Any = b.vertices
                corners_a, corners_b = va.tolist(), vb.tolist()
                if any(_inside(b, (p[0], p[1]), tolerance) for p in corners_a) or any(
                    _inside(a, (p[0], p[1]), tolerance) for p in corners_b
                ):
                    x, y = _data_of(ax, c)
                    u, v = _data_of(ax, d)
                    problems.append(
                        f"the nodes at ({x:.3g}, {y:.3g}) and ({u:.3g}, {v:.3g}) overlap"
                    )
        for text in ax.texts:
            if not text.get_visible() or not text.get_text().strip():
                continue
            box = text.get_window_extent(renderer)
            cx, cy = (box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2
            for (x, y), outline in nodes:
                if outline.contains_point((cx, cy)):
                    continue  # the node's own text, drawn inside it
                inner = box.expanded(1.0, 1.0)
                inner = type(box).from_extents(
                    box.x0 + tolerance, box.y0 + tolerance, box.x1 - tolerance, box.y1 - tolerance
                )
                if outline.intersects_bbox(inner, filled=True):
                    u, v = _data_of(ax, (x, y))
                    problems.append(f"{text.get_text()!r} lies on the node at ({u:.3g}, {v:.3g})")
        lines = edge_points(ax)
        for name, points in lines.items():
            for (x, y), outline in nodes:
                if any(_inside(outline, tuple(p), tolerance) for p in points):
                    u, v = _data_of(ax, (x, y))
                    problems.append(f"{name} runs through the node at ({u:.3g}, {v:.3g})")
            for text in ax.texts:
                if not (text.get_gid() or "").startswith("caption-"):
                    continue
                box = text.get_window_extent(renderer)
                if any(
                    box.x0 + tolerance < px < box.x1 - tolerance
                    and box.y0 + tolerance < py < box.y1 - tolerance
                    for px, py in points
                ):
                    problems.append(f"{name} runs through the caption {text.get_text()!r}")
    return problems


def small_texts(fig: Any, points: float) -> list[str]:
    """Every text of ``fig`` drawn smaller than ``points`` (as rendered: its size in
    points, and the height of one of its lines on the canvas, in pixels at the figure's
    dpi, against what that size gives); an empty list when none is.

    >>> from matplotlib.figure import Figure
    >>> fig = Figure(dpi=120); _ = fig.text(0.1, 0.5, "tiny", fontsize=5)
    >>> _ = fig.text(0.5, 0.5, "fine", fontsize=9)
    >>> small_texts(fig, 8)
    ["'tiny' is drawn at 5 pt"]
    """
    from .labels import text_artists  # the texts label_clashes measures

    renderer = renderer_of(fig)
    fig.draw_without_rendering()
    problems = []
    for t in text_artists(fig):
        size = float(t.get_fontsize())
        lines = t.get_text().count("\n") + 1
        # the canvas height of a line: a font's line is at least its size (ascent+descent)
        height = t.get_window_extent(renderer).height / lines * 72 / fig.dpi
        if size < points or height < points * 0.95:
            problems.append(f"{t.get_text()[:40]!r} is drawn at {size:g} pt")
    return problems


def labels_far_from_edges(fig: Any, heights: float = 1.0) -> list[str]:
    """Name every edge label (text with gid ``edge-label-<k>``) whose box lies farther
    from its own edge's drawn line (gid ``edge-<k>``) than ``heights`` times the label's
    own height: such a label passes the overlap checks but a reader cannot tell which
    edge it names. Distances in pixels, from the box (0 inside it) to the nearest point
    of the line (:func:`edge_points`).

    >>> from matplotlib.figure import Figure
    >>> fig = Figure(dpi=72); ax = fig.add_axes((0, 0, 1, 1)); ax.set_axis_off()
    >>> _ = ax.add_patch(FancyArrowPatch((0, 0.5), (1, 0.5), gid="edge-1"))
    >>> _ = ax.text(0.5, 0.52, "on", gid="edge-label-1")
    >>> _ = ax.text(0.5, 0.9, "far", gid="edge-label-1")
    >>> labels_far_from_edges(fig)
    ["'far' is 13 of its heights from edge-1"]
    """
    renderer = renderer_of(fig)
    fig.draw_without_rendering()
    problems = []
    for ax in fig.axes:
        lines = edge_points(ax)
        for text, own in _edge_labels(ax):
            box = text.get_window_extent(renderer)
            points = lines.get(own, [])
            if not points:
                problems.append(f"{text.get_text()!r} has no edge {own}")
                continue
            far = min(
                math.hypot(max(box.x0 - x, 0.0, x - box.x1), max(box.y0 - y, 0.0, y - box.y1))
                for x, y in points
            )
            if far > heights * box.height:
                problems.append(
                    f"{text.get_text()!r} is {far / box.height:.2g} of its heights from {own}"
                )
    return problems
