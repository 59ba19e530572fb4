"""Nested runs drawn as nested blocks: a step's block holds the steps it called.

A run whose steps nest (an RLM at depth 2: the root's block starts a child RLM, whose
block asks sub-calls) is a list of ``(level, text)`` steps in order, level 0 at the top;
a step one level deeper than the step before it was called from that step's block.
:func:`draw_nesting` draws each step as a numbered box indented by its level, and every
stretch of steps deeper than ``k`` inside a frame of depth ``k`` under the step that
called it, with an arrow from the caller into the frame and an arrow from the frame's
last step back to the step that goes on; :func:`nesting_mermaid` writes the same
frames as Mermaid subgraphs. :func:`frames` computes the frames both draw.

>>> steps = [(0, "root, turn 1"), (1, "child, turn 1"), (2, "sub-call"), (1, "child, turn 2"),
...          (0, "root, turn 2")]
>>> [(f.depth, f.caller, f.first, f.last) for f in frames(steps)]
[(1, 0, 1, 3), (2, 1, 2, 2)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidArgument

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["Frame", "frames", "draw_nesting", "nesting_mermaid"]

_ROW = 0.34  # inches per row
_INDENT = 0.5  # inches per level
_BOX_CHARS = 72  # characters a step's box holds
_FONT = 8  # points: MIN_FONT, the smallest text the diagrams draw


@dataclass(frozen=True)
class Frame:
    """The steps ``first..last`` (indexes, inclusive), all deeper than ``depth - 1``,
    called from the block of step ``caller`` (at level ``depth - 1``)."""

    depth: int
    caller: int
    first: int
    last: int


def _checked(steps: Sequence[tuple[int, str]]) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for i, step in enumerate(steps):
        if not (isinstance(step, tuple) and len(step) == 2):
            raise InvalidArgument(f"step {i} is {step!r}; give each step as (level, text)")
        level, text = step
        if type(level) is not int or level < 0 or not isinstance(text, str):
            raise InvalidArgument(
                f"step {i} is {step!r}; a level is an int >= 0 and a text is a str"
            )
        previous = out[-1][0] if out else -1
        if level > previous + 1:
            raise InvalidArgument(
                f"step {i} is at level {level} after a step at level {previous}: a step is "
                "at most one level deeper than the step whose block called it"
            )
        out.append((level, text))
    return out


def frames(steps: Sequence[tuple[int, str]]) -> list[Frame]:
    """The frames of a nested run: for every depth k ≥ 1, each maximal stretch of steps
    at level ≥ k, with the step before it (its caller). Ordered by first step, then depth.

    >>> frames([(0, "a"), (1, "b"), (0, "c"), (1, "d"), (1, "e")])
    [Frame(depth=1, caller=0, first=1, last=1), Frame(depth=1, caller=2, first=3, last=4)]
    >>> frames([(1, "x")])
    Traceback (most recent call last):
      ...
    agentic_machines.errors.InvalidArgument: step 0 is at level 1 after a step at level -1: a step is at most one level deeper than the step whose block called it
    """
    checked = _checked(steps)
    found = []
    for k in range(1, max((lv for lv, _ in checked), default=0) + 1):
        i = 0
        while i < len(checked):
            if checked[i][0] >= k:
                j = i
                while j + 1 < len(checked) and checked[j + 1][0] >= k:
                    j += 1
                found.append(Frame(k, i - 1, i, j))
                i = j + 1
            else:
                i += 1
    return sorted(found, key=lambda f: (f.first, f.depth))


def _box_text(i: int, text: str) -> str:
    line = f"{i + 1}. {text}"
    return line if len(line) <= _BOX_CHARS else line[: _BOX_CHARS - 1] + "…"


def draw_nesting(
    steps: Sequence[tuple[int, str]],
    path: str | Path | None = None,
    *,
    title: str | None = None,
    frame_label: str = "called from step {caller}",
    format: str | None = None,
) -> Figure:
    """Draw a nested run: numbered step boxes indented by level, each nested stretch in
    a frame under the step that called it; save to ``path`` when given.

    ``steps`` is a sequence of ``(level, text)``; a step is at most one level deeper
    than the one before it. ``frame_label`` is a format string with ``{caller}`` (the
    caller's step number) and ``{depth}``. Each box's artist has the ``gid``
    ``step-<n>-level-<k>``, each frame's ``frame-<depth>-<first step>``, so a test (or a
    reader of the SVG) can find the nesting. A long step text is cut with ``…`` (the
    boxes hold the summary of a step, not its prompt).

    >>> fig = draw_nesting([(0, "root, turn 1"), (1, "child, turn 1"), (0, "root, turn 2")])
    >>> sorted(p.get_gid() for p in fig.axes[0].patches if p.get_gid())
    ['frame-1-2', 'step-1-level-0', 'step-2-level-1', 'step-3-level-0']
    """
    from matplotlib.figure import Figure  # lazy: matplotlib is slow to import
    from matplotlib.patches import FancyBboxPatch  # lazy: matplotlib is slow to import

    from .labels import renderer_of  # lazy: imports networkx
    from .page import figure_format, save_figure  # lazy: loads networkx (through labels)

    fmt = figure_format(path, format)
    checked = _checked(steps)
    found = frames(checked)
    # One row per step, plus one caption row above each frame.
    row_of: dict[int, int] = {}
    caption_row: dict[Frame, int] = {}
    row = 0
    for i in range(len(checked)):
        for f in (f for f in found if f.first == i):
            caption_row[f] = row
            row += 1
        row_of[i] = row
        row += 1
    depth = max((lv for lv, _ in checked), default=0)
    box_w = _BOX_CHARS * _FONT * 0.6 / 72 + 0.2
    width = 0.3 + depth * _INDENT + box_w + 0.3 + 0.1 * depth
    head = 0.45 if title else 0.15
    height = head + max(row, 1) * _ROW + 0.2
    fig = Figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)  # y grows downwards: rows read top to bottom
    ax.set_axis_off()
    if title:
        ax.text(0.15, 0.12, title, fontsize=10, va="top", ha="left")

    def top(r: int) -> float:
        return head + r * _ROW

    right = width - 0.2
    palette = ["#e8eef7", "#fff4d6", "#e3f2e1", "#f4e1f0"]
    for f in found:  # frames first, deepest on top
        x0 = 0.2 + f.depth * _INDENT - 0.12
        y0 = top(caption_row[f]) + 0.04
        y1 = top(row_of[f.last]) + _ROW - 0.02 + 0.06 * _depth_below(f, found)
        ax.add_patch(
            FancyBboxPatch(
                (x0, y0),
                right - x0 - 0.05 * (f.depth - 1),
                y1 - y0,
                boxstyle="round,pad=0.0,rounding_size=0.08",
                fc=palette[f.depth % len(palette)],
                ec="#555555",
                lw=1.0,
                zorder=f.depth,
                gid=f"frame-{f.depth}-{f.first + 1}",
            )
        )
        ax.text(
            x0 + 0.1,
            y0 + _ROW / 2,
            frame_label.format(caller=f.caller + 1, depth=f.depth),
            fontsize=_FONT,
            style="italic",
            color="#444444",
            va="center",
            ha="left",
            zorder=depth + 2,
        )
    boxes = []
    for i, (level, text) in enumerate(checked):
        x = 0.2 + level * _INDENT
        y = top(row_of[i]) + 0.05
        ax.add_patch(
            FancyBboxPatch(
                (x, y),
                box_w,
                _ROW - 0.1,
                boxstyle="round,pad=0.0,rounding_size=0.05",
                fc="white",
                ec="#333333",
                lw=0.8,
                zorder=depth + 2,
                gid=f"step-{i + 1}-level-{level}",
            )
        )
        boxes.append(
            ax.text(
                x + 0.08,
                y + (_ROW - 0.1) / 2,
                _box_text(i, text),
                fontsize=_FONT,
                va="center",
                ha="left",
                zorder=depth + 3,
            )
        )
    # The call into a frame and the answer out of it, on the frame's left edge.
    for f in found:
        x = 0.2 + (f.depth - 1) * _INDENT + 0.2
        start = top(row_of[f.caller]) + _ROW - 0.05
        end = top(row_of[f.first]) + _ROW / 2
        _arrow(ax, (x, start), (0.2 + f.depth * _INDENT, end), "#1f5fbf", depth + 4)
        after = f.last + 1
        if after < len(checked) and checked[after][0] == f.depth - 1:
            back = top(row_of[after]) + _ROW / 2
            leave = top(row_of[f.last]) + _ROW / 2
            _arrow(
                ax,
                (0.2 + f.depth * _INDENT, leave),
                (x, back - _ROW / 2 + 0.05),
                "#e67e00",
                depth + 4,
            )
    renderer_of(fig)
    if path is not None:
        save_figure(fig, path, fmt)
    return fig


def _depth_below(frame: Frame, found: list[Frame]) -> int:
    # frames that end on the same step as this one, nested inside it: leave them room
    return sum(1 for f in found if f.depth > frame.depth and f.last == frame.last)


def _arrow(
    ax: Any, start: tuple[float, float], end: tuple[float, float], color: str, z: int
) -> None:
    from matplotlib.patches import FancyArrowPatch  # lazy: matplotlib is slow to import

    ax.add_patch(
        FancyArrowPatch(
            start,
            end,
            arrowstyle="-|>",
            mutation_scale=10,
            connectionstyle="angle,angleA=-90,angleB=180,rad=4",
            color=color,
            lw=1.2,
            zorder=z,
        )
    )


def nesting_mermaid(
    steps: Sequence[tuple[int, str]], *, frame_label: str = "called from step {caller}"
) -> str:
    """The nested run as a Mermaid flowchart: the steps in order, each frame a subgraph
    (captioned with ``frame_label``, as in :func:`draw_nesting`).

    >>> print(nesting_mermaid([(0, "root, turn 1"), (1, "child"), (0, "root, turn 2")]))
    flowchart TD
      n1["1. root, turn 1"]
      subgraph f2["called from step 1"]
        n2["2. child"]
      end
      n3["3. root, turn 2"]
      n1 --> n2 --> n3
    """
    from .textforms import mermaid_text  # lazy: imports networkx

    checked = _checked(steps)
    found = frames(checked)
    lines = ["flowchart TD"]
    open_frames: list[Frame] = []
    for i, (_level, text) in enumerate(checked):
        while open_frames and open_frames[-1].last < i:
            open_frames.pop()
            lines.append("  " * (len(open_frames) + 1) + "end")
        for f in (f for f in found if f.first == i):
            caption = mermaid_text(frame_label.format(caller=f.caller + 1, depth=f.depth))
            lines.append("  " * (len(open_frames) + 1) + f'subgraph f{i + 1}["{caption}"]')
            open_frames.append(f)
        lines.append(
            "  " * (len(open_frames) + 1) + f'n{i + 1}["{mermaid_text(_box_text(i, text))}"]'
        )
    while open_frames:
        open_frames.pop()
        lines.append("  " * (len(open_frames) + 1) + "end")
    if len(checked) > 1:
        lines.append("  " + " --> ".join(f"n{i + 1}" for i in range(len(checked))))
    return "\n".join(lines)
