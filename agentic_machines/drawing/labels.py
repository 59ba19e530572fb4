"""What a picture writes and where: node and edge labels, the legend table, label clashes.

A state diagram has little room: a node holds a few characters, an edge label a dozen.
:func:`plan_labels` decides, for every node and edge of an explored graph, what is
written on the picture and what moves to the numbered legend table beside it, so that
nothing is cut:

- inside a node: the state when it is short (``0``, ``a``, ``⟨⟩``), else its id (``s3``);
  ``1`` and ``↑`` for the sentinels, with ``HALT`` and ``DIVERGE`` under them;
- under a node: its name or its prompt when either is short;
- on an edge: its completions when short, else a tag ``c1``, ``c2``, ... whose full
  completions the table lists;
- in the table, one entry per state: its id (and what the node shows when that is not the
  id: ``s2  (drawn as ⟨ hmm⟩)``), how it was reached (``← s1 by c3``), its
  prompt as the difference from the state it was reached from (``s1's prompt + "…"``),
  and, when two states the picture cannot tell apart show the same prompt, a hint of
  what differs.

:func:`label_clashes` measures the text a figure draws (matplotlib's own text extents)
and names every pair of labels that overlap and every label that runs outside the
figure; the test suite runs it on every gallery picture.

>>> from agentic_machines.runtime.explore import explore
>>> from agentic_machines.architectures import react
>>> g = explore(react.machine(), completions=react.diagram_completions, max_depth=1,
...             progress=False)
>>> from agentic_machines.drawing.diagrams import node_names
>>> plan = plan_labels(g, node_names(g))
>>> [plan.edges[e] for e in g.edges]
['c1', ' hmm']
>>> for line in plan.completions: print(line)
c1  s0 → s1: " I need to find the city where the Eiffel Tower stands.⏎Action 1:
  Search[Eiffel Tower]"
"""

from __future__ import annotations

import textwrap
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from .._outcome import is_end
from .._text import clip_prompt, graph_context, short_text
from ..machine import DIVERGE, HALT

__all__ = [
    "LabelPlan",
    "plan_labels",
    "label_clashes",
    "text_artists",
    "one_line",
    "glyph_style",
]

MONO = "DejaVu Sans Mono"
"""The legend table's font: fixed width, so its width in inches is known in advance."""
MIN_FONT = 8.0
"""The smallest text a state diagram draws, in points: at the pictures' 120 dpi on a
1920 x 1080 slide (the figure is never larger, so never scaled down), 13 pixels, the
size of a projector's small print; tested on every drawn figure."""
TABLE_FONT = MIN_FONT
"""Font size (points) of the legend table."""
TABLE_CHARS = 70
"""Characters per line of the legend table."""
INSIDE = 6
"""Longest text drawn inside a node."""
UNDER = 16
"""Longest text drawn under a node."""
INLINE = 14
"""Longest completion text drawn on an edge; a longer one gets a tag and a table entry."""
PROMPT_CHARS = 5 * (TABLE_CHARS - 8)
"""The most of one prompt (or of what it added) the table shows; a longer one is cut by
the one rule of :func:`~agentic_machines._text.clip_prompt` (what differs is kept)."""


SMALL_GLYPHS = "⋆"
"""Characters DejaVu Sans (matplotlib's default font) draws too small to read: its ``⋆``
(the F2 fixtures' prompt) is a dot at label sizes."""


def glyph_style(text: str, size: float) -> dict[str, Any]:
    """Text properties that draw ``text`` legibly at ``size`` points.

    A text with one of ``SMALL_GLYPHS`` is drawn in STIX (shipped with matplotlib, whose
    ``⋆`` is a star) at 1.5 times the size, DejaVu Sans standing in for any character
    STIX lacks; any other text keeps the default font.

    >>> glyph_style("⋆", 6.5)
    {'fontsize': 9.75, 'family': ['STIXGeneral', 'DejaVu Sans']}
    >>> glyph_style("s1", 6.5)
    {'fontsize': 6.5}
    """
    if any(c in SMALL_GLYPHS for c in text):
        return {"fontsize": size * 1.5, "family": ["STIXGeneral", "DejaVu Sans"]}
    return {"fontsize": size}


@dataclass(frozen=True)
class LabelPlan:
    """What a picture writes: ``inside``/``under`` per node, ``edges`` per edge, and the
    legend table as lines (``states`` and ``completions``, wrapped to ``TABLE_CHARS``);
    ``short`` is an edge label's shorter form (``c3`` for ``6 completions (c3)``), drawn
    when the long one finds no clear place."""

    inside: dict[Hashable, str]
    under: dict[Hashable, str]
    edges: dict[tuple[Hashable, Hashable], str]
    states: list[str]
    completions: list[str]
    short: dict[tuple[Hashable, Hashable], str] = field(default_factory=dict)

    @property
    def has_table(self) -> bool:
        """Whether the picture needs its legend table.

        >>> LabelPlan({}, {}, {}, [], []).has_table
        False
        """
        return bool(self.states or self.completions)


def one_line(text: str) -> str:
    """``text`` on one line: newlines as ``⏎`` (runs of them as one), tabs as spaces.

    >>> one_line("Thought 1:\\n\\nAction 1: go\\n")
    'Thought 1:⏎Action 1: go⏎'
    """
    out = text.replace("\r\n", "\n").replace("\t", " ")
    while "\n\n" in out:
        out = out.replace("\n\n", "\n")
    return out.replace("\n", "⏎")


def _fits(text: str, limit: int) -> bool:
    return 0 < len(text) <= limit and "\n" not in text


def _quote(text: str) -> str:
    return '"' + one_line(text) + '"'


def _cut(text: str, limit: int, context: list[str]) -> str:
    """``text`` quoted, cut by the one rule (:func:`~agentic_machines._text.clip_prompt`:
    what follows the longest prefix it shares with ``context``, its siblings' texts),
    and its whole length (the ``…`` mark where it is cut).

    >>> _cut("Q: a fox jumps.", 8, ["Q: a dog jumps."])
    '"…fox ju…" (15 chars)'
    >>> _cut("short", 8, [])
    '"short"'
    """
    if len(text) <= limit:
        return _quote(text)
    return f"{_quote(clip_prompt(text, limit, context))} ({len(text)} chars)"


def _tree(graph: nx.DiGraph) -> dict[Hashable, tuple[Hashable, tuple[Hashable, Hashable]]]:
    """Each node's first predecessor one level up (how exploration first reached it)."""
    depth = {n: a.get("depth", 0) for n, a in graph.nodes(data=True)}
    out = {}
    for n in graph:
        for p in graph.predecessors(n):
            if p != n and depth.get(p, 0) < depth.get(n, 0):
                out[n] = (p, (p, n))
                break
    return out


def plan_labels(
    graph: nx.DiGraph,
    names: Mapping[Hashable, tuple[str, str]],
    *,
    prompt_chars: int = PROMPT_CHARS,
) -> LabelPlan:
    """Decide what every node and edge of ``graph`` shows, and the legend table.

    ``names`` is :func:`agentic_machines.drawing.diagrams.node_names` of the graph. A
    graph whose labels all fit (the F2 fixtures) gets no table. ``prompt_chars`` is the
    most of one prompt (or of what a step added to it) an entry shows: a longer one is
    cut where it differs from its siblings, saying how much is shown (a big graph is drawn with less, so that
    it fits a slide).

    >>> from agentic_machines.runtime.explore import explore
    >>> from agentic_machines.fixtures import fixture
    >>> from agentic_machines.drawing.diagrams import node_names
    >>> g = explore(fixture("f2-mul"), roots=[0, 1])
    >>> p = plan_labels(g, node_names(g))
    >>> p.inside, p.under, p.has_table
    ({0: '0', 1: '1'}, {0: '⋆', 1: '⋆'}, False)
    """
    parents = _tree(graph)
    inside: dict[Hashable, str] = {}
    under: dict[Hashable, str] = {}
    for n, a in graph.nodes(data=True):
        ident, label = names[n]
        if n is HALT or n is DIVERGE:
            inside[n], under[n] = ("1", "HALT") if n is HALT else ("↑", "DIVERGE")
            continue
        if a.get("kind") == "more":  # a summary node: how many, and what it stands for
            inside[n], under[n] = (
                str(a.get("hidden", "")),
                label.replace(" states ", " states\n", 1),
            )
            continue
        if is_end(n):  # a step that raised: "!", and the exception under it
            message = " ".join(str(a.get("message", "")).split())
            inside[n], under[n] = "!", short_text(f"{a.get('type')}: {message}", 2 * UNDER)
            continue
        inside[n] = label if _fits(label, INSIDE) else ident
        prompt = one_line(a.get("prompt") or "")
        if inside[n] == ident and label != ident and _fits(label, UNDER):
            under[n] = label
        elif prompt and _fits(prompt, UNDER):
            under[n] = prompt

    def table_name(n: Hashable) -> str:
        # a summary node is drawn as its count: the table names it as the figure shows it
        a = graph.nodes[n]
        return f"(… {a.get('hidden', '')} more)" if a.get("kind") == "more" else names[n][0]

    edges: dict[tuple[Hashable, Hashable], str] = {}
    rows: list[tuple[str, str]] = []  # (tag, full text) of edges with a tag
    # One tag per distinct completion (or list of them), however many edges it labels:
    # in a tree of turns the same reply recurs on many edges, and says the same thing.
    tagged: dict[tuple[str, ...], list[tuple[Hashable, Hashable]]] = {}
    short: dict[tuple[Hashable, Hashable], str] = {}
    for u, v, a in graph.edges(data=True):
        cs = [str(c) for c in a.get("completions") or []]
        shown = ", ".join(cs) if cs else str(a.get("label", ""))
        if _fits(shown, INLINE) and len(cs) <= 3:
            edges[(u, v)] = shown
        else:
            tagged.setdefault(tuple(cs) if cs else (shown,), []).append((u, v))
    noun = graph.graph.get("edge_noun", "completions")
    for k, (cs_key, tagged_edges) in enumerate(tagged.items(), 1):
        tag = f"c{k}"
        for e in tagged_edges:
            # parallel completions are one edge: say how many, and where the table lists them
            edges[e] = f"{len(cs_key)} {noun} ({tag})" if len(cs_key) > 1 else tag
            if len(cs_key) > 1:
                short[e] = tag
        u, v = tagged_edges[0]
        where = f"{table_name(u)} → {table_name(v)}"
        if len(tagged_edges) > 1:
            where = f"{len(tagged_edges)} edges ({where}, …)"
        if len(cs_key) > 1:
            rows.append((tag, f"{tag}  {where}: {len(cs_key)} {noun}"))
            seen: dict[str, int] = {}
            for c in cs_key:  # a summary node's edge repeats completions: each once, counted
                seen[c] = seen.get(c, 0) + 1
            rows += [
                (tag, "  · " + _quote(c) + (f" (×{m})" if m > 1 else "")) for c, m in seen.items()
            ]
        else:
            rows.append((tag, f"{tag}  {where}: " + _quote(cs_key[0])))
    completions = _wrap([text for _, text in rows])

    need = bool(rows) or any(
        (a.get("prompt") and under.get(n) != one_line(a["prompt"]))
        or names[n][1] not in (inside[n], under.get(n))
        for n, a in graph.nodes(data=True)
        if not is_end(n)
    )
    named = {**edges, **short}  # the table names an edge by its tag, not its count
    tags = {named[e] for group in tagged.values() for e in group}
    states = _state_rows(graph, names, parents, named, inside, tags, prompt_chars) if need else []
    return LabelPlan(inside, under, edges, states, completions, short)


def _state_rows(
    graph: nx.DiGraph,
    names: Mapping[Hashable, tuple[str, str]],
    parents: Mapping[Hashable, tuple[Hashable, tuple[Hashable, Hashable]]],
    edges: Mapping[tuple[Hashable, Hashable], str],
    inside: Mapping[Hashable, str],
    tags: set[str],
    prompt_chars: int = PROMPT_CHARS,
) -> list[str]:
    start = graph.graph.get("start")
    prompts = {n: a.get("prompt") or "" for n, a in graph.nodes(data=True)}
    first_with: dict[str, Hashable] = {}

    def path(n: Hashable) -> str:
        steps = []
        while n in parents and len(steps) < 8:
            p, e = parents[n]
            steps.append(edges[e] if edges[e] in tags else _quote(edges[e]))
            n = p
        return "·".join(reversed(steps)) or "the start"

    lines = []
    for n in graph:
        if is_end(n) or graph.nodes[n].get("kind") == "more":
            continue
        ident, label = names[n]
        head = ident
        if label not in (ident, inside[n]):
            head += f"  {label}"
        # The picture writes the state itself when it is short: say which node is which id.
        notes = [f"drawn as {inside[n]}"] if inside[n] != ident else []
        if n == start:
            notes.append("initial")
        if notes:
            head += f"  ({', '.join(notes)})"
        prompt = prompts[n]
        if n in parents:
            p, e = parents[n]
            tag = edges[e]
            head += f"  ← {names[p][0]} by " + (tag if tag in tags else _quote(tag))
            around = graph_context(graph, n)
            body = _prompt_delta(prompt, prompts[p], names[p][0], prompt_chars, around)
        else:
            shown = clip_prompt(prompt, prompt_chars)
            body = f"prompt ({len(prompt)} chars): " + _quote(shown)
        lines.append(head)
        lines.append("    " + body)
        twin = first_with.setdefault(prompt, n)
        if twin != n and inside[n] == ident:
            lines.append(
                # the harness state keeps what the prompt does not show: how each was reached
                f"    same prompt as {names[twin][0]} (reached by {path(n)}, not {path(twin)})"
            )
    return _wrap(lines)


def _prompt_delta(
    prompt: str, before: str, who: str, limit: int = PROMPT_CHARS, around: Sequence[str] = ()
) -> str:
    """A prompt as its difference from the prompt of the state it was reached from; a
    long difference is cut by the one rule, ``around`` being the prompts of its
    parents and siblings (:func:`~agentic_machines._text.graph_context`).

    >>> _prompt_delta("Q? Thought 1: hmm", "Q? Thought 1:", "s0")
    'prompt = s0\\'s + " hmm"'
    >>> _prompt_delta("a", "Write a program.", "s0")
    'prompt: "a" (new: it does not extend s0\\'s)'
    """
    if prompt == before:
        return f"prompt: the same as {who}'s"
    k = 0
    for x, y in zip(prompt, before):
        if x != y:
            break
        k += 1
    if k < 8:  # a fresh prompt: show it whole
        return f"prompt: {_cut(prompt, limit, list(around))} (new: it does not extend {who}'s)"
    # what the siblings add after the same k characters: the cut keeps what differs
    rest = _cut(prompt[k:], limit, [o[k:] for o in around if o[:k] == prompt[:k]])
    if k == len(before):
        return f"prompt = {who}'s + {rest}"
    return f"prompt = the first {k} chars of {who}'s + {rest}"


def _wrap(lines: list[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        indent = " " * (len(line) - len(line.lstrip(" ")) + 2)
        out += textwrap.wrap(
            line,
            TABLE_CHARS,
            subsequent_indent=indent,
            break_on_hyphens=False,
        ) or [""]
    return [line.rstrip() for line in out]


# ----------------------------------------------------------------------- measuring
def text_artists(fig: Any) -> list[Any]:
    """Every non-empty, visible text a figure draws: figure texts, axes texts, titles,
    annotations and legend entries (tick labels of hidden axes are not drawn).

    >>> from matplotlib.figure import Figure
    >>> fig = Figure(); ax = fig.add_subplot(); ax.set_axis_off(); _ = ax.text(0, 0, "hi")
    >>> [t.get_text() for t in text_artists(fig)]
    ['hi']
    """
    found = list(fig.texts)
    for legend in fig.legends:
        found += legend.get_texts()
    for ax in fig.axes:
        found += list(ax.texts) + [ax.title]
        legend = ax.get_legend()
        if legend is not None:
            found += legend.get_texts()
        if ax.axison:
            found += ax.get_xticklabels() + ax.get_yticklabels()
    return [t for t in found if t.get_visible() and t.get_text().strip()]


def renderer_of(fig: Any) -> Any:
    """An Agg renderer for ``fig`` (attaching an Agg canvas when it has none).

    >>> from matplotlib.figure import Figure
    >>> type(renderer_of(Figure())).__name__
    'RendererAgg'
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # lazy: matplotlib is slow

    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    return fig.canvas.get_renderer()


def overlap(a: Any, b: Any) -> float:
    """The area (pixels²) two bounding boxes share; 0 when they only touch.

    >>> from matplotlib.transforms import Bbox
    >>> overlap(Bbox([[0, 0], [2, 2]]), Bbox([[1, 1], [3, 3]])), overlap(Bbox([[0, 0], [1, 1]]), Bbox([[1, 0], [2, 1]]))
    (1.0, 0.0)
    """
    return overlap_of(a.extents, b.extents)


def overlap_of(a: Sequence[float], b: Sequence[float]) -> float:
    """:func:`overlap` of two extents ``(x0, y0, x1, y1)``: a label placer measures each
    trial box against every obstacle, and a box's corners read as floats once are cheaper
    than a ``Bbox``'s properties read each time.

    >>> overlap_of((0.0, 0.0, 2.0, 2.0), (1.0, 1.0, 3.0, 3.0))
    1.0
    """
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return float(w * h) if w > 0 and h > 0 else 0.0


def label_clashes(fig: Any, tolerance: float = 1.0) -> list[str]:
    """Name every pair of overlapping labels and every label outside ``fig``.

    Extents come from matplotlib's renderer (``Text.get_window_extent``), in pixels;
    two labels clash when they share more than ``tolerance`` pixels in both directions.
    An empty list means the picture is legible in this sense.

    >>> from matplotlib.figure import Figure
    >>> fig = Figure(figsize=(2, 1)); ax = fig.add_axes((0, 0, 1, 1)); ax.set_axis_off()
    >>> _ = ax.text(0.1, 0.5, "one"); _ = ax.text(0.12, 0.5, "two"); _ = ax.text(0.9, 0.5, "far out")
    >>> for problem in label_clashes(fig): print(problem)
    'far out' runs outside the figure
    'one' overlaps 'two'
    """
    renderer = renderer_of(fig)
    fig.draw_without_rendering()  # legends and annotations find their place when drawn
    boxes = [(t, t.get_window_extent(renderer)) for t in text_artists(fig)]
    frame = fig.bbox
    problems = []
    for t, b in boxes:
        if (
            b.x0 < frame.x0 - tolerance
            or b.y0 < frame.y0 - tolerance
            or b.x1 > frame.x1 + tolerance
            or b.y1 > frame.y1 + tolerance
        ):
            problems.append(f"{t.get_text()!r} runs outside the figure")
    for i, (t, a) in enumerate(boxes):
        for u, b in boxes[i + 1 :]:
            w = min(a.x1, b.x1) - max(a.x0, b.x0)
            h = min(a.y1, b.y1) - max(a.y0, b.y0)
            if w > tolerance and h > tolerance:
                problems.append(f"{t.get_text()!r} overlaps {u.get_text()!r}")
    return problems
