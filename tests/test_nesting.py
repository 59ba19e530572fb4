"""Nested runs drawn as nested blocks: the depth-2 RLM run shows its nesting."""

from __future__ import annotations

import pytest

from agentic_machines.drawing.geometry import small_texts
from agentic_machines.drawing.labels import MIN_FONT, label_clashes
from agentic_machines.drawing.nesting import Frame, draw_nesting, frames, nesting_mermaid
from agentic_machines.errors import InvalidArgument


def _extents(fig):
    """gid -> pixel extent of every box and frame the figure draws."""
    from agentic_machines.drawing.labels import renderer_of

    renderer = renderer_of(fig)
    return {p.get_gid(): p.get_window_extent(renderer) for p in fig.axes[0].patches if p.get_gid()}


def _inside(a, b) -> bool:
    return a.x0 >= b.x0 and a.x1 <= b.x1 and a.y0 >= b.y0 and a.y1 <= b.y1


def test_frames_of_a_nested_run():
    steps = [(0, "a"), (1, "b"), (2, "c"), (2, "d"), (1, "e"), (0, "f"), (1, "g")]
    assert frames(steps) == [Frame(1, 0, 1, 4), Frame(2, 1, 2, 3), Frame(1, 5, 6, 6)]
    assert frames([(0, "a"), (0, "b")]) == []


@pytest.mark.parametrize(
    "steps, message",
    [
        ([(0, "a"), (2, "b")], "at most one level deeper"),
        ([(0, "a"), ("1", "b")], "a level is an int"),
        ([(0, "a"), [1, "b"]], "give each step as"),
        ([(-1, "a")], "a level is an int >= 0"),
    ],
)
def test_bad_steps_are_refused(steps, message):
    with pytest.raises(InvalidArgument, match=message):
        draw_nesting(steps)


def test_the_depth_two_rlm_run_is_drawn_nested():
    from agentic_machines.drawing.gallery import rlm_depth2_picture

    (picture,) = rlm_depth2_picture()
    fig = picture.figure
    assert label_clashes(fig) == []
    assert small_texts(fig, MIN_FONT) == []  # the frames' captions were 7 pt (issue 41)
    boxes = _extents(fig)
    steps = {
        int(g.split("-")[1]): (int(g.split("-")[3]), b)
        for g, b in boxes.items()
        if g.startswith("step-")
    }
    assert [steps[n][0] for n in sorted(steps)] == [0, 0, 1, 2, 2, 1, 0]
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert "3. child RLM (context of 135 characters), turn 1" in texts
    assert any(
        t.startswith("4. sub-call: Name the river in") and t.endswith("→ 'Seine'") for t in texts
    )
    # the child RLM (steps 3-6) is in a frame under step 2; its sub-calls (4, 5) in a
    # frame inside that one; the root's turns are in no frame
    child, calls = boxes["frame-1-3"], boxes["frame-2-4"]
    assert set(g for g in boxes if g.startswith("frame-")) == {"frame-1-3", "frame-2-4"}
    assert _inside(calls, child)
    for n in (3, 4, 5, 6):
        assert _inside(steps[n][1], child)
    for n in (4, 5):
        assert _inside(steps[n][1], calls)
    for n in (3, 6):
        assert not _inside(steps[n][1], calls)
    for n in (1, 2, 7):
        assert not _inside(steps[n][1], child)
    # deeper is further right, and the frame starts below its caller
    assert steps[1][1].x0 < steps[3][1].x0 < steps[4][1].x0
    assert child.y1 < steps[2][1].y0  # pixels grow upwards
    assert "inside step 2's block" in texts and "inside step 3's block" in texts


def test_the_mermaid_form_nests_subgraphs():
    text = nesting_mermaid([(0, "a"), (1, "b"), (2, "c"), (1, "d"), (0, "e")])
    assert text.splitlines() == [
        "flowchart TD",
        '  n1["1. a"]',
        '  subgraph f2["called from step 1"]',
        '    n2["2. b"]',
        '    subgraph f3["called from step 2"]',
        '      n3["3. c"]',
        "    end",
        '    n4["4. d"]',
        "  end",
        '  n5["5. e"]',
        "  n1 --> n2 --> n3 --> n4 --> n5",
    ]
