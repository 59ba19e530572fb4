"""A figure laid out in inches before it is drawn, and written to a file.

A picture of :mod:`agentic_machines.drawing.diagrams` is a :class:`Page`: a title,
:class:`Panel` areas side by side (one per graph), a column with the roles legend and
the legend table (flowing into more columns, see :func:`flow`, or under wide panels), and
a note at the bottom. Every size is known in inches before matplotlib draws anything, so
:func:`~agentic_machines.drawing.diagrams.draw` can try layouts until one fits
:data:`SLIDE`. :func:`figure_format` and :func:`save_figure` write a finished figure (the
nested-run pictures of :mod:`agentic_machines.drawing.nesting` use them too).

>>> page = Page([Panel(4.0, 3.0, (-1.0, 1.0), (-1.0, 1.0))], [], [("states", ["s0  a"])], "t")
>>> size = page.layout()
>>> round(size["width"], 2), round(size["height"], 2), size["columns"]
(9.39, 3.67, [['STATES', 's0  a']])
>>> fig, axes = page.build()
>>> len(axes), [t.get_text() for t in fig.texts]
(1, ['t', 'STATES\\ns0  a'])
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # matplotlib is imported lazily, when a page is built
    from matplotlib.figure import Figure

from .._files import open_output
from ..errors import InvalidArgument
from .labels import MIN_FONT, MONO, TABLE_CHARS, TABLE_FONT, renderer_of

__all__ = ["Page", "Panel", "flow", "SLIDE", "DPI", "FORMATS", "figure_format", "save_figure"]

FORMATS = ("png", "svg", "pdf")
"""File formats :func:`~agentic_machines.drawing.diagrams.draw` writes (matplotlib's Agg and SVG backends, no system binary)."""

SLIDE = (16.0, 9.0)
"""The largest figure :func:`~agentic_machines.drawing.diagrams.draw` makes when it can, in inches: at the gallery's 120 dpi,
a 16:9 slide 1920 pixels wide (1080 high), so no picture is scaled down on a slide."""

DPI = 120
"""The resolution every saved picture has (:func:`save_figure`: the gallery, and
:func:`~agentic_machines.drawing.diagrams.draw` when given a path)."""

# Sizes in inches.
_MARGIN = 0.15
_GAP = 0.25  # between the graph and the legend column
_LINE = TABLE_FONT * 1.32 / 72  # one line of the legend table (with its leading)
_ITEM = 0.22  # one entry of the roles legend
_COLUMN_GAP = 0.15  # between columns of the legend table


def figure_format(path: str | Path | None, format: str | None) -> str:
    """The file format to write: ``format`` if given, else the path's suffix, else PNG.

    >>> figure_format("g.SVG", None), figure_format(None, None), figure_format("g", "pdf")
    ('svg', 'png', 'pdf')
    >>> figure_format("g.mmd", None)
    Traceback (most recent call last):
    ...
    agentic_machines.errors.InvalidArgument: draw writes png, svg, pdf, not 'mmd'; for text formats use to_dot, to_mermaid or to_json
    """
    fmt = format or (Path(path).suffix.lstrip(".").lower() if path is not None else "") or "png"
    if fmt not in FORMATS:
        raise InvalidArgument(
            f"draw writes {', '.join(FORMATS)}, not {fmt!r}; for text formats use to_dot, to_mermaid or to_json"
        )
    return fmt


def save_figure(fig: Any, path: str | Path, fmt: str) -> None:
    """Write ``fig`` to ``path`` in ``fmt`` at :data:`DPI`, cropped to what is drawn.

    >>> import tempfile, pathlib
    >>> from matplotlib.figure import Figure
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "f.png"
    >>> save_figure(Figure(figsize=(1, 1)), out, "png"); out.read_bytes()[:4]
    b'\\x89PNG'
    """
    # Through open_output: a FIFO with no reader is refused instead of blocking the save.
    with open_output(path, "wb") as fh:
        fig.savefig(fh, format=fmt, bbox_inches="tight", dpi=DPI)


@dataclass
class Panel:
    """One graph's drawing area, in inches, and the data-to-inch scale inside it."""

    width: float
    height: float
    lim_x: tuple[float, float]
    lim_y: tuple[float, float]
    heading: str = ""


@dataclass
class Page:
    """A figure laid out in inches: a title, panels side by side, a column with the
    roles legend and the legend table (flowing into more columns when it is taller than
    a slide), and a note at the bottom."""

    panels: list[Panel]
    handles: list[Any]
    sections: list[tuple[str, list[str]]]
    title: str = ""
    note: str = ""
    footer: float = 0.0  # extra room under the panels (inches)
    below: bool = False  # the legend and the table under the panels, not beside them
    # sections drawn under the panels, in columns as wide as they are (long listings),
    # while the others stay beside
    under: list[tuple[str, list[str]]] | None = None

    def _lines(self, sections: list[tuple[str, list[str]]] | None = None) -> list[str]:
        out: list[str] = []
        for head, lines in self.sections if sections is None else sections:
            if lines:
                out += ([""] if out else []) + [head.upper()] + lines
        return out

    def _under(self, graphs_w: float, column_w: float) -> tuple[list[list[str]], float, float]:
        """The under-sections' columns, their width and height (inches, with the gap)."""
        lines = self._lines(self.under or [])
        if not lines:
            return [], 0.0, 0.0
        fit = max(int((graphs_w + _COLUMN_GAP) // (column_w + _COLUMN_GAP)), 1)
        per = math.ceil(len(lines) / fit)
        columns = flow(lines, per, per)
        while len(columns) > fit:  # entries kept whole made one column more
            per += 1
            columns = flow(lines, per, per)
        width = len(columns) * column_w + _COLUMN_GAP * (len(columns) - 1)
        return columns, width, _GAP + max(len(c) for c in columns) * _LINE

    def layout(self) -> dict[str, Any]:
        """Sizes (inches), wrapped title and note, and the table's lines per column."""
        lines = self._lines()
        if self.under:
            lines = self._lines([s for s in self.sections if s not in self.under])
        column_w = max(1.9, (TABLE_CHARS * TABLE_FONT * 0.61 / 72 + 0.1) if lines else 0.0)
        legend_h = len(self.handles) * _ITEM + 0.15
        heading = 0.3 if any(p.heading for p in self.panels) else 0.0
        graphs_w = sum(p.width for p in self.panels) + 0.2 * (len(self.panels) - 1)
        under, under_w, under_h = self._under(graphs_w, column_w)
        graphs_w = max(graphs_w, under_w)
        graphs_h = max(p.height for p in self.panels) + heading + self.footer + under_h

        def texts(width: float) -> tuple[str, float, str, float]:
            chars = int((width - 2 * _MARGIN) * 72 / ((MIN_FONT + 3) * 0.6))
            title = textwrap.fill(self.title, max(chars, 20)) if self.title else ""
            title_h = (0.25 * (title.count("\n") + 1) + 0.12) if title else 0.05
            note_chars = int((width - 2 * _MARGIN) * 72 / (MIN_FONT * 0.6))
            note = textwrap.fill(self.note, max(note_chars, 20)) if self.note else ""
            note_h = (0.16 * (note.count("\n") + 1) + 0.1) if note else 0.0
            return title, title_h, note, note_h

        one_column = legend_h + len(lines) * _LINE
        if self.below:  # as many columns as a slide's width holds, of equal length
            fit = int((SLIDE[0] - 2 * _MARGIN + _COLUMN_GAP) // (column_w + _COLUMN_GAP))
            per = math.ceil((len(lines) + legend_h / _LINE) / max(fit, 1))
            columns = flow(lines, max(per - int(legend_h / _LINE), 1), per)
            while len(columns) > max(fit, 1):  # entries kept whole made one column more
                per += 1
                columns = flow(lines, max(per - int(legend_h / _LINE), 1), per)
            table_w = len(columns) * column_w + _COLUMN_GAP * (len(columns) - 1)
            table_h = max(
                [legend_h + len(columns[0]) * _LINE if columns else legend_h]
                + [len(c) * _LINE for c in columns[1:]]
            )
            width = _MARGIN * 2 + max(graphs_w, table_w)
            body = graphs_h + _GAP + table_h
            table_x, table_top = _MARGIN, graphs_h + _GAP
        else:
            title, title_h, note, note_h = texts(_MARGIN * 2 + graphs_w + _GAP + column_w)
            room = SLIDE[1] - 2 * _MARGIN - title_h - note_h  # the body's height on a slide
            body = max(graphs_h, room)
            if one_column <= max(graphs_h, room):
                columns = [lines]
                body = max(graphs_h, one_column)
            else:  # flow the table into columns as tall as the body
                columns = flow(lines, int((body - legend_h) / _LINE), int(body / _LINE))
            width = (
                _MARGIN * 2
                + graphs_w
                + _GAP
                + len(columns) * column_w
                + _COLUMN_GAP * (len(columns) - 1)
            )
            table_x, table_top = _MARGIN + graphs_w + _GAP, 0.0
        title, title_h, note, note_h = texts(width)
        height = _MARGIN * 2 + title_h + body + note_h
        return {
            "width": width,
            "height": height,
            "title": title,
            "title_h": title_h,
            "note": note,
            "heading": heading,
            "table_x": table_x,
            "table_top": table_top,
            "column_w": column_w,
            "columns": columns,
            "under": under,
            "under_h": under_h,
        }

    def build(self) -> tuple[Figure, list[Any]]:
        from matplotlib.figure import Figure  # lazy: matplotlib is slow to import

        size = self.layout()
        width, height, title, note = size["width"], size["height"], size["title"], size["note"]
        fig = Figure(figsize=(width, height))
        renderer = renderer_of(fig)
        top = height - _MARGIN - size["title_h"]  # inches from the bottom
        if title:
            fig.text(
                _MARGIN / width, (height - _MARGIN) / height, title, fontsize=MIN_FONT + 3, va="top"
            )
        axes = []
        x = _MARGIN
        for p in self.panels:
            bottom = top - size["heading"] - p.height
            ax = fig.add_axes((x / width, bottom / height, p.width / width, p.height / height))
            ax.set_xlim(*p.lim_x)
            ax.set_ylim(*p.lim_y)
            ax.set_axis_off()
            if p.heading:
                ax.text(
                    0.5,
                    1.0,
                    p.heading,
                    transform=ax.transAxes,
                    fontsize=MIN_FONT + 1,
                    va="bottom",
                    ha="center",
                )
            axes.append(ax)
            x += p.width + 0.2
        column_x = _MARGIN
        for column in size["under"]:  # long listings under the graphs
            y_under = (top - size["heading"] - max(p.height for p in self.panels) - _GAP) / height
            _listing(fig, column_x / width, y_under, column)
            column_x += size["column_w"] + _COLUMN_GAP
        column_x = size["table_x"]
        y = (top - size["table_top"]) / height
        if self.handles:
            legend = fig.legend(
                handles=self.handles,
                loc="upper left",
                bbox_to_anchor=(column_x / width, y),
                fontsize=MIN_FONT,
                frameon=False,
                borderaxespad=0.0,
                borderpad=0.0,
            )
            # the legend places its box when asked (upper left at its anchor): no draw needed
            y = legend.get_window_extent(renderer).y0 / fig.bbox.height - 0.12 / height
        for column in size["columns"]:
            if column:
                _listing(fig, column_x / width, y, column)
            column_x += size["column_w"] + _COLUMN_GAP
            y = (top - size["table_top"]) / height
        if note:
            fig.text(
                _MARGIN / width,
                _MARGIN / height,
                note,
                fontsize=MIN_FONT,
                color="#555555",
                va="bottom",
                ha="left",
            )
        return fig, axes


def _listing(fig: Figure, x: float, y: float, column: list[str]) -> None:
    """One column of a listing (the table beside the graphs, or a long one under them),
    its top-left corner at figure fraction ``(x, y)``."""
    fig.text(
        x,
        y,
        "\n".join(column),
        fontsize=TABLE_FONT,
        family=MONO,
        va="top",
        ha="left",
        linespacing=1.2,
        color="#222222",
    )


def flow(lines: list[str], first: int, rest: int) -> list[list[str]]:
    """``lines`` in columns of ``first`` lines, then ``rest``; a column ends before an
    entry's first line (an unindented line) when one is near, so entries stay whole.

    >>> flow(["a", "  a2", "b", "  b2", "  b3", "c"], 3, 3)
    [['a', '  a2'], ['b', '  b2', '  b3'], ['c']]
    """
    columns: list[list[str]] = []
    i = 0
    while i < len(lines):
        room = max(first if not columns else rest, 1)
        end = min(i + room, len(lines))
        if end < len(lines):
            cut = end
            while cut > i + room // 2 and lines[cut].startswith(" "):
                cut -= 1
            end = cut if cut > i + room // 2 else end
        columns.append(lines[i:end])
        i = end
        while i < len(lines) and not lines[i]:  # no column starts with a blank line
            i += 1
    return columns
