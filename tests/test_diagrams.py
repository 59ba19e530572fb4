"""diagrams: PNG/SVG pictures with matplotlib, and DOT, Mermaid and JSON exports."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import networkx as nx
import pytest

from agentic_machines import DIVERGE, HALT, FunctionMachine, HarnessMachine, TableMachine
from agentic_machines.drawing.diagrams import (
    draw,
    draw_embedding,
    node_names,
    to_dot,
    to_json,
    to_mermaid,
)
from agentic_machines.drawing.labels import label_clashes
from agentic_machines.errors import InvalidArgument
from agentic_machines.fixtures import fixture
from agentic_machines.runtime.explore import explore
from agentic_machines.verdict import Obstruction

PNG = b"\x89PNG\r\n\x1a\n"


def busy() -> nx.DiGraph:
    """States, both sentinels, a self-loop, opposite edges, merged completions, nasty text."""
    m = TableMachine(
        {"a": 'say "hi" | <b> #1', "b": "pick\nnext", "c": "x" * 80},
        {
            ("a", "x"): "b",
            ("a", "y"): HALT,
            ("b", "x"): "a",
            ("b", "y"): "c",
            ("c", "x"): DIVERGE,
            ("c", "y"): "c",
            ("a", "z"): "b",
            ("b", "z"): "b",
            ("c", "z"): "a",
        },
        initial="a",
        name="busy",
    )
    return explore(m)


def test_png_and_svg_files(tmp_path):
    g = busy()
    png, svg = tmp_path / "g.png", tmp_path / "g.svg"
    draw(
        g,
        png,
        highlight="b",
        successors_of="a",
        spe_states=["a"],
        obstruction="c",
        embedding_image=["b"],
        title="t",
    )
    draw(g, svg)
    assert png.read_bytes()[:8] == PNG
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    text = svg.read_text()
    for label in ("HALT", "DIVERGE", "x, z"):
        assert label in text, label  # SVG keeps text as text: the labels are drawn


def test_format_argument_and_bad_format(tmp_path):
    out = tmp_path / "noext"
    draw(busy(), out, format="svg")
    assert out.read_text().lstrip().startswith("<?xml")
    with pytest.raises(InvalidArgument, match="to_mermaid"):
        draw(busy(), tmp_path / "g.mmd")
    with pytest.raises(InvalidArgument, match="layout"):
        draw(busy(), layout="nope")


def test_every_layout_and_the_returned_figure():
    g = busy()
    for layout in (
        "auto",
        "layered",
        "spring",
        "circular",
        "shell",
        {n: (i, 0) for i, n in enumerate(g)},
    ):
        fig = draw(g, layout=layout)
        assert fig.texts[0].get_text() == "busy"
        assert label_clashes(fig) == [], layout


def test_roles_accept_verdict_like_objects_and_note_missing_states(tmp_path):
    g = busy()
    obstruction = Obstruction(kind="prompt", state="c", explanation="no successor has p(c)")
    fig = draw(g, obstruction=obstruction, spe_states=["zzz"])
    notes = [t.get_text() for t in fig.texts]
    assert any("not in this graph" in t and "zzz" in t for t in notes)


def test_unexpanded_states_and_truncation_note():
    counter = FunctionMachine(lambda n: f"at {n}", lambda n, c: n + 1, initial=0)
    g = explore(counter, completions=["+1"], max_depth=2)
    fig = draw(g)
    assert any("truncated" in t.get_text() for t in fig.texts)
    assert 'style="filled,dashed"' in to_dot(g)


def test_node_names_are_stable_unique_and_short():
    m = TableMachine({"1": "*", 1: "*"}, {("1", "a"): 1, (1, "a"): HALT}, initial="1")
    names = node_names(explore(m))
    assert [i for i, _ in names.values()] == ["s0", "s1", "HALT"]
    labels = [label for _, label in names.values()]
    assert len(set(labels)) == 3  # the string "1", the int 1 and HALT stay distinguishable

    def prog():
        c = yield "p"
        yield "q" + c

    h = HarnessMachine(prog)
    g = explore(h, completions=["x", "a long completion that is much too long"], max_depth=1)
    assert [label for _, label in node_names(g).values()] == ["⟨⟩", "⟨x⟩", "s2"]


def test_mermaid_is_valid_and_escaped():
    g = busy()
    text = to_mermaid(g, successors_of="a", obstruction="c")
    lines = text.splitlines()
    assert lines[0] == "flowchart TD"
    node_line = re.compile(r'^  (s\d+|HALT|DIVERGE)(\(\[".*"\]\)|\["[^"]*"\]|\{\{"[^"]*"\}\})$')
    edge_line = re.compile(r'^  (s\d+|HALT|DIVERGE) -->\|"[^"|]*"\| (s\d+|HALT|DIVERGE)$')
    class_line = re.compile(r"^  (classDef \w+ [\w:#,.-]+|class [\w,]+ \w+)$")
    for line in lines[1:]:
        assert node_line.match(line) or edge_line.match(line) or class_line.match(line), line
    # every node and every edge label is there; the nasty prompt is escaped
    assert all(f"  {n}" in text for n in ("s0", "s1", "s2", "HALT", "DIVERGE"))
    assert '-->|"x, z"|' in text and "#quot;hi#quot; #124; #lt;b#gt; #35;1" in text
    assert "pick⏎next" in text  # prompts are shown on one line
    assert "class s2 obstruction" in text and "class s0 initial" in text


def test_mermaid_direction():
    assert to_mermaid(busy(), direction="LR").startswith("flowchart LR")
    with pytest.raises(InvalidArgument):
        to_mermaid(busy(), direction="sideways")


def test_dot_escapes_and_styles():
    text = to_dot(busy(), successors_of="a")
    assert text.startswith('digraph "busy" {') and text.rstrip().endswith("}")
    assert '\\"hi\\"' in text and "a\\nsay" in text
    assert '"HALT" [label="1 halt", shape=box' in text and "shape=diamond" in text
    assert '"s0" -> "s1" [label="x, z", color=' in text


def test_json_round_trip():
    g = busy()
    data = json.loads(to_json(g))
    back = nx.node_link_graph(data, directed=True, multigraph=False, edges="edges")
    names = node_names(g)
    assert set(back.nodes) == {i for i, _ in names.values()}
    for u, v, a in g.edges(data=True):
        assert back.edges[names[u][0], names[v][0]]["completions"] == a["completions"]
    for n, a in g.nodes(data=True):
        b = back.nodes[names[n][0]]
        assert (b["prompt"], b["kind"], b["depth"], b["state"]) == (
            a["prompt"],
            a["kind"],
            a["depth"],
            repr(n),
        )
    assert back.graph["start"] == "s0" and back.graph["stats"]["states"] == 3


def test_json_is_safe_for_odd_states():
    m = FunctionMachine(lambda s: "*", lambda s, c: HALT, initial=frozenset({1}), completions=["c"])
    data = json.loads(to_json(explore(m)))
    assert data["nodes"][0]["state"] == "frozenset({1})"


def test_draw_embedding(tmp_path):
    add = fixture("f2-add")
    g = explore(add, roots=add.states)
    path = tmp_path / "emb.png"
    fig = draw_embedding(g, g, {0: 1, 1: 0}, path, title="swap")
    assert path.read_bytes()[:8] == PNG and len(fig.axes) == 3  # source, target, square
    dashed = [a for a in fig.artists if type(a).__name__ == "ConnectionPatch"]
    assert len(dashed) == 2
    assert label_clashes(fig) == []
    assert len(draw_embedding(g, g, {0: 1, 1: 0}, square=False).axes) == 2
    with pytest.raises(InvalidArgument, match="no edge"):
        draw_embedding(g, g, {0: 1, 1: 0}, square=(0, "nope"))


def test_a_square_that_does_not_commute_says_so():
    add = fixture("f2-add")
    g = explore(add, roots=add.states)
    fig = draw_embedding(g, g, {0: 0, 1: 0}, square=(0, "1"))  # not an embedding
    caption = fig.axes[2].texts[-1].get_text()
    assert "✗ the square does not commute" in caption


def test_long_texts_move_to_the_legend_table_and_nothing_clashes():
    g = busy()
    fig = draw(g, successors_of="a")
    table = "\n".join(t.get_text() for t in fig.texts)
    assert '"' + "x" * 80 + '"' in re.sub(r"\n +", "", table)  # the whole prompt, wrapped
    assert label_clashes(fig) == []


# -- polished for a class: arrowheads, glyphs, ids ------------------------------------------
def test_arrowheads_end_outside_the_initial_ring_and_every_node():
    from agentic_machines.drawing.geometry import arrowheads, hidden_arrowheads, node_outlines

    m = fixture("f2-mul")
    fig = draw(explore(m, roots=m.states), spe_states=[1])
    assert hidden_arrowheads(fig) == []
    # measured, not assumed: every head's tip is outside the ring of the initial state 0
    ax = fig.axes[0]
    ring = max((o for _, o in node_outlines(ax)), key=lambda o: o.get_extents().width)
    heads = arrowheads(fig)
    assert len(heads) == 3  # two loops and the edge 1 -> 0
    assert not any(ring.contains_point(p) for _, _, head in heads for p in head)
    for g in (busy(), explore(fixture("halt1")), explore(fixture("diverge1"))):
        assert hidden_arrowheads(draw(g, successors_of=g.graph["start"])) == []


def test_the_hidden_arrowhead_check_sees_a_head_under_a_node():
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyArrowPatch

    from agentic_machines.drawing.geometry import hidden_arrowheads

    fig = Figure(figsize=(3, 2))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(-1, 2)
    ax.set_ylim(-1, 1)
    ax.scatter([1.0], [0.0], s=1500 * 1.55, marker="o")  # a ring's size
    ax.add_patch(FancyArrowPatch((-0.5, 0.3), (1.0, 0.0), arrowstyle="-|>", shrinkB=20))
    assert len(hidden_arrowheads(fig)) == 1  # 20 points from the centre: inside the ring
    ax.patches[0].set_visible(False)
    ax.add_patch(FancyArrowPatch((-0.5, 0.3), (1.0, 0.0), arrowstyle="-|>", shrinkB=40))
    assert hidden_arrowheads(fig) == []


def test_the_star_prompt_is_drawn_in_a_font_whose_star_is_a_star():
    m = fixture("f2-add")
    fig = draw(explore(m, roots=m.states))
    stars = [t for t in fig.axes[0].texts if t.get_text() == "⋆"]
    assert len(stars) == 2
    assert all(t.get_fontfamily()[0] == "STIXGeneral" and t.get_fontsize() > 6.5 for t in stars)


def test_the_table_says_which_node_each_id_is():
    from agentic_machines.architectures import react

    g = explore(react.machine(), completions=react.diagram_completions, max_depth=1, progress=False)
    table = "\n".join(t.get_text() for t in draw(g).texts)
    assert "s0  (drawn as ⟨⟩, initial)" in table
    assert "s2  (drawn as ⟨ hmm⟩)" in table


def test_the_crossing_check_sees_a_label_on_another_edge():
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyArrowPatch

    from agentic_machines.drawing.geometry import labels_on_other_edges

    fig = Figure(figsize=(3, 2))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.add_patch(FancyArrowPatch((0.1, 0.5), (0.9, 0.5), gid="edge-1"))
    ax.add_patch(FancyArrowPatch((0.5, 0.1), (0.5, 0.9), gid="edge-2"))
    ax.text(0.5, 0.5, "on the crossing", gid="edge-label-1", ha="center", va="center")
    ax.text(0.2, 0.5, "on its own edge", gid="edge-label-1", ha="center", va="center")
    assert labels_on_other_edges(fig) == ["'on the crossing' lies on edge-2"]
