"""Static diagrams of wide graphs (issue 41, item 2): a row too wide is summarised, parallel
completions are one labelled edge, no text is smaller than MIN_FONT, nothing covers a node
or a caption, and the legend shows exactly the styles the picture draws. Every check is
measured on the drawn figure (matplotlib's own extents and paths)."""

from __future__ import annotations

import io
import struct

import pytest

from agentic_machines import HALT, FunctionMachine, TableMachine
from agentic_machines.drawing.diagrams import TABLE_SHARE, draw
from agentic_machines.drawing.geometry import (
    hidden_arrowheads,
    labels_far_from_edges,
    labels_on_other_edges,
    overlaps,
    small_texts,
)
from agentic_machines.drawing.labels import MIN_FONT, label_clashes
from agentic_machines.drawing.summary import More, summarise
from agentic_machines.fixtures import fixture
from agentic_machines.runtime.explore import explore


def problems(fig) -> list[str]:
    return (
        overlaps(fig)
        + label_clashes(fig)
        + labels_on_other_edges(fig)
        + labels_far_from_edges(fig)
        + hidden_arrowheads(fig)
        + small_texts(fig, MIN_FONT)
    )


def png_size(fig) -> tuple[int, int]:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight", dpi=120)
    return struct.unpack(">II", buf.getvalue()[16:24])


def wide() -> FunctionMachine:
    """A transcript agent with five actions that grow the prompt and one that ends it:
    31 states at depth 2, as the support agent of the issue."""
    actions = ["look", "ask", "check", "wait", "retry", "stop"]

    def harness(state: str, c: str):
        return HALT if c == "stop" else f"{state}|{c}"

    return FunctionMachine(
        prompt=lambda s: "You help a customer. Actions so far: " + s,
        harness=harness,
        completions=actions,
        initial="start",
        name="wide",
    )


def texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


@pytest.fixture(scope="module")
def wide_drawn():
    """The wide graph explored two steps deep and its figure, drawn once for the tests that
    only measure it (drawing is nearly all of their time)."""
    g = explore(wide(), max_depth=2, progress=False)
    return g, draw(g)


def test_a_wide_row_becomes_its_first_states_and_a_more_node(wide_drawn):
    g, fig = wide_drawn
    assert len(g) == 1 + 5 + 25 + 1
    drawn = texts(fig)
    assert "… 20 more states\nat depth 2" in drawn  # 25 states at depth 2: 5 drawn, 20 not
    assert "20" in drawn  # inside the summary node
    assert any("completions" in t for t in drawn)  # the merged edges say how many
    table = "\n".join(t.get_text() for t in fig.texts)
    # the table names the summary node as the figure draws it, never by an internal id
    assert "(… 20 more)" in table and "MORE2" not in table and "4 completions" in table
    width, height = png_size(fig)
    assert width <= 1920 and height <= 1080
    assert label_clashes(fig) == [] and labels_on_other_edges(fig) == []
    assert hidden_arrowheads(fig) == [] and small_texts(fig, MIN_FONT) == []


def test_nothing_covers_a_node_or_caption_of_the_wide_graph(wide_drawn):
    # the start's edge to HALT crosses two full rows whose states all have captions: no
    # bend clears them, so it goes around the outside of the rows
    fig = wide_drawn[1]
    assert overlaps(fig) == []
    assert labels_far_from_edges(fig) == []


def test_a_prompt_entry_keeps_what_tells_it_from_its_siblings():
    # issue 36, item 7: the one rule of _text.clip_prompt (what follows the longest
    # prefix shared with a sibling, the cut marked): the old cut kept the beginning and
    # the end, which two such states share, and dropped the middle, where they differ
    base, tail = "You help a customer. " * 20, " and then the ticket is closed." * 10
    states = {"q": "Which?", "a": base + "Observation: refund" + tail}
    states["b"] = base + "Observation: replace" + tail
    table = {("q", "x"): "a", ("q", "y"): "b"}
    table.update({(s, c): HALT for s in "ab" for c in "xy"})
    m = TableMachine(states, table, initial="q", name="twins")
    table = "\n".join(t.get_text() for t in draw(explore(m, max_depth=1)).texts)
    flat = " ".join(table.split())
    # each entry starts where the two part ("re|fund", "re|place"), the cut marked
    assert '"…fund and then' in flat and '"…place and then' in flat


def test_every_edge_label_lies_near_its_own_edge():
    # issue 41: labels 2.4 label-widths from their edge passed the overlap checks; the
    # check is a label's height, and it can fail
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyArrowPatch

    fig = Figure(dpi=100)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.add_patch(FancyArrowPatch((0.1, 0.5), (0.9, 0.5), gid="edge-1"))
    ax.text(0.5, 0.8, "far", gid="edge-label-1")
    assert labels_far_from_edges(fig) != []
    g = explore(fixture("f2-mul"), roots=[0, 1])
    assert labels_far_from_edges(draw(g, spe_states=[1], successors_of=1)) == []


def test_summarise_keeps_marked_states_and_every_completion():
    g = explore(wide(), max_depth=2, progress=False)
    last = [n for n in g if g.nodes[n].get("depth") == 2]
    s = summarise(g, width=4, keep=[last[-1]])
    row = [n for n in s if s.nodes[n].get("depth") == 2]
    assert last[-1] in row and More(2) in row and len(row) == 4
    assert s.nodes[More(2)]["hidden"] == 25 - 3
    count = sum(len(a["completions"]) for _, _, a in g.edges(data=True))
    assert sum(len(a["completions"]) for _, _, a in s.edges(data=True)) == count
    assert summarise(g, width=40) is g  # nothing to summarise: the graph itself


def test_parallel_completions_are_one_edge_labelled_with_their_count():
    six = [f"answer {i}" for i in range(6)]
    m = TableMachine({"q": "Question?"}, {("q", c): HALT for c in six}, initial="q", name="six")
    fig = draw(explore(m))
    labels = [
        t.get_text() for t in fig.axes[0].texts if (t.get_gid() or "").startswith("edge-label")
    ]
    assert labels == ["6 completions (c1)"]
    table = "\n".join(t.get_text() for t in fig.texts)
    assert all(f'"{c}"' in table for c in six)
    assert problems(fig) == []


def test_no_text_is_smaller_than_the_minimum():
    m = fixture("f2-mul")
    fig = draw(explore(m, roots=m.states), spe_states=[1], successors_of=1)
    assert small_texts(fig, MIN_FONT) == []
    assert small_texts(fig, 30) != []  # the measure can fail: texts are not all 30 pt


def legend_of(fig) -> list[str]:
    return [t.get_text() for t in fig.legends[0].get_texts()]


def test_the_legend_shows_the_styles_drawn_and_only_those():
    g = explore(fixture("halt1"))
    # HALT is a successor of s0 here: it is drawn green, and the legend says so
    legend = legend_of(draw(g, successors_of=0))
    assert "HALT (1), a successor" in legend and "HALT (1)" not in legend
    assert "a step to a successor" in legend and "a step (its completions)" not in legend
    assert "successor" not in legend  # no state is a successor: no green circle
    plain = legend_of(draw(g))
    assert "HALT (1)" in plain and "not expanded (bound)" not in plain
    assert "chosen state" not in plain and "a step (its completions)" in plain


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ["adaplanner", "--depth", "3"],
        ["spe", "--depth", "3"],
        ["spell", "--depth", "3"],
        [
            "docs/examples/support_agent.py:support",
            "--depth",
            "2",
            *[
                a
                for c in ("order 42", "refund 42", "refund 7", "refund 8", "refund 9", "escalate")
                for a in ("-c", c)
            ],
        ],
    ],
    ids=["adaplanner", "spe", "spell", "wide-support-agent"],
)
def test_the_architectures_at_depth_3_fit_a_slide_with_nothing_covered(argv, monkeypatch, tmp_path):
    # the pictures, drawn as `agentic-machines diagram` draws them
    import agentic_machines.drawing.diagrams as diagrams
    from agentic_machines.cli.commands import main

    drawn = []
    real = diagrams.draw

    def keep(*args, **kwargs):
        drawn.append(real(*args, **kwargs))
        return drawn[-1]

    monkeypatch.setattr(diagrams, "draw", keep)
    assert main(["diagram", *argv, "-o", str(tmp_path / "g.png")]) == 0
    (fig,) = drawn
    width, height = png_size(fig)
    assert width <= 1920 and height <= 1080
    assert problems(fig) == []
    # the legend table beside the graph takes at most 35% of a slide's width; the
    # issue's adaplanner figure gave it 60% of its own (two columns of 7 pt text)
    beside = table_share(fig)
    assert beside * width <= TABLE_SHARE * 1920
    if argv[0] == "adaplanner":
        assert 0 < beside <= TABLE_SHARE


def table_share(fig) -> float:
    """The share of the figure's width the legend table's texts beside the graph take,
    measured on the drawn figure (the texts right of the graph's axes)."""
    from agentic_machines.drawing.labels import MONO, renderer_of

    renderer = renderer_of(fig)
    right = max(ax.get_window_extent(renderer).x1 for ax in fig.axes)
    boxes = [
        t.get_window_extent(renderer)
        for t in fig.texts
        if MONO in t.get_fontfamily() and t.get_window_extent(renderer).x0 >= right
    ]
    if not boxes:
        return 0.0
    return (max(b.x1 for b in boxes) - min(b.x0 for b in boxes)) / fig.bbox.width
