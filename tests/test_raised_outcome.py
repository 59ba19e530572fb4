"""A step that raised is an outcome of its own everywhere (issue 36, item 4): explore's
graph and listing, the diagram (its own node and legend entry), Mermaid, DOT, JSON and
``explore --json`` show it as raised, with the exception's type and message, never as
a plain HALT; so do run's trace (its table, description and Markdown, saved, loaded and
replayed) and play's end line."""

from __future__ import annotations

import json

from agentic_machines import HarnessMachine, agent_machine
from agentic_machines.cli.commands import main
from agentic_machines.cli.explore import describe_graph
from agentic_machines.drawing.diagrams import draw, to_dot, to_json, to_mermaid
from agentic_machines.runtime.explore import explore


def raiser(model):
    reply = model("n?")
    if reply == "x":
        raise ValueError("bad x")
    return reply


def graph():
    return explore(agent_machine(raiser, name="raiser"), completions=["1", "x"])


def test_the_explored_graph_has_a_raised_node_beside_halt() -> None:
    g = graph()
    kinds = {g.nodes[n]["kind"]: g.nodes[n] for n in g}
    assert set(kinds) == {"state", "halt", "raised"}
    assert (kinds["raised"]["type"], kinds["raised"]["message"]) == ("ValueError", "bad x")
    (start,) = [n for n in g if g.nodes[n]["kind"] == "state"]
    assert [g.edges[start, t]["completions"] for t in g.successors(start)] == [["1"], ["x"]]


def test_every_halt_raised_leaves_no_halt_node() -> None:
    g = explore(agent_machine(raiser, name="raiser"), completions=["x"])
    assert sorted(a["kind"] for _, a in g.nodes(data=True)) == ["raised", "state"]


def test_a_harness_machine_that_keeps_its_error_shows_it_raised() -> None:
    def prog():
        yield "go"
        raise KeyError("gone")

    g = explore(HarnessMachine(prog, on_error="halt"), completions=["a"])
    assert [a["type"] for _, a in g.nodes(data=True) if a["kind"] == "raised"] == ["KeyError"]


def test_listing_json_mermaid_and_dot_say_raised() -> None:
    g = graph()
    assert "'x' -> RAISED (ValueError: bad x)" in describe_graph(g)
    assert "'1' -> HALT (1)" in describe_graph(g)
    nodes = json.loads(to_json(g))["nodes"]
    raised = [n for n in nodes if n["kind"] == "raised"]
    assert [(n["id"], n["type"], n["message"]) for n in raised] == [
        ("RAISED", "ValueError", "bad x")
    ]
    mermaid = to_mermaid(g)
    assert 'RAISED>"raised ValueError: bad x"]' in mermaid and "class RAISED raised" in mermaid
    assert '"RAISED" [label="raised ValueError: bad x", shape=octagon' in to_dot(g)


def test_the_picture_has_a_raised_node_and_legend_entry() -> None:
    from matplotlib.text import Text

    texts = [t.get_text() for t in draw(graph()).findobj(Text)]
    assert "RAISED (the step raised)" in texts and "HALT (1)" in texts  # the legend
    assert "!" in texts and "ValueError: bad x" in texts  # the node and its exception


def test_explore_json_from_the_cli(capsys) -> None:
    assert (
        main(["explore", "tests.test_raised_outcome:raiser", "-c", "1", "-c", "x", "--json"]) == 0
    )
    nodes = json.loads(capsys.readouterr().out)["nodes"]
    assert {n["kind"] for n in nodes} == {"state", "halt", "raised"}


def test_run_trace_shows_a_raised_step_as_raised(tmp_path) -> None:
    from agentic_machines import run
    from agentic_machines.models import ScriptedModel
    from agentic_machines.runtime.run import Trace

    m = agent_machine(raiser, name="raiser")
    trace = run(m, ScriptedModel(["x"]))
    path = tmp_path / "t.jsonl"
    trace.save(path)
    for t in (trace, Trace.load(path), trace.replay(m)):
        views = {
            "table": str(t),
            "describe": t.describe(),
            "markdown": t._repr_markdown_(),
        }
        for name, text in views.items():
            assert "ended with RAISED (ValueError: bad x)" in text, (name, text)
            assert "HALT (1)" not in text, (name, text)  # the outcome column, the header
        assert "outcome     RAISED (ValueError: bad x)" in t.describe()
    assert run(m, ScriptedModel(["1"])).raised is None  # a normal halt stays HALT
    assert "HALT (1)" in str(run(m, ScriptedModel(["1"])))


def test_a_harness_machine_that_keeps_its_error_runs_to_raised() -> None:
    from agentic_machines import run
    from agentic_machines.models import ScriptedModel

    def prog():
        yield "go"
        raise KeyError("gone")

    trace = run(HarnessMachine(prog, on_error="halt"), ScriptedModel(["a"]))
    assert (trace.raised.type, trace.raised.message) == ("KeyError", "'gone'")
    assert "RAISED (KeyError: 'gone')" in str(trace)


def test_play_ends_raised_and_saves_it(tmp_path) -> None:
    from agentic_machines.cli.play import PlaySession
    from agentic_machines.runtime.run import Trace

    m = agent_machine(raiser, name="raiser")
    session = PlaySession("raiser", m, m.initial)
    assert session.take("x") is None
    assert session.end_line() == "RAISED (ValueError: bad x) (after 1 step)"
    assert session.take("y").startswith("the run ended with RAISED (ValueError: bad x);")
    session.save(tmp_path / "p.jsonl")
    assert "RAISED (ValueError: bad x)" in str(Trace.load(tmp_path / "p.jsonl"))
    session.back()
    assert session.take("1") is None and session.end_line().startswith("HALT (1)")
