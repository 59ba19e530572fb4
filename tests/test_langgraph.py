"""LangGraph graphs as agentic machines, driven without network (the adapter's chat model)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

pytest.importorskip("langgraph", reason='needs the extra: pip install -e ".[langgraph]"')

from langchain_core.tools import tool  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from typing_extensions import TypedDict  # noqa: E402

from agentic_machines import HALT, AgentRaised, run  # noqa: E402
from agentic_machines.adapters.langgraph import (  # noqa: E402
    chat_model,
    checkpoint_key,
    machine,
    structure,
)
from agentic_machines.checking import check_properties, never_diverges  # noqa: E402
from agentic_machines.models import ScriptedModel  # noqa: E402
from agentic_machines.runtime.explore import explore  # noqa: E402

with warnings.catch_warnings():  # moved to langchain.agents in LangGraph 1.0, still here
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import create_react_agent

CALL = json.dumps({"tool_calls": [{"name": "book", "arguments": {"city": "Paris"}}]})
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def booking_agent(booked):
    @tool
    def book(city: str) -> str:
        """Book a table in a city."""
        booked.append(city)
        return f"booked #{len(booked)} in {city}"

    return create_react_agent(chat_model(), [book])


def test_tool_call_then_reply_halts_with_the_graph_state_and_runs_the_tool_once():
    booked = []
    m = machine(booking_agent(booked), "Book Paris.")
    trace = run(m, ScriptedModel([CALL, "Done."]))
    assert trace.end is HALT and len(trace) == 2
    assert m.result(trace[-1].state, "Done.")["messages"][-1].content == "Done."
    assert trace.prompts[1].endswith(
        '[tool call call_1_0] book {"city": "Paris"}\n[tool result call_1_0] booked #1 in Paris'
    )
    # exploring replays runs from the start: the tool node's tool is an effect, so the
    # booking happens once per real step (three tool steps at depth 3), not per replay
    booked.clear()
    # inline: the tool's list is this process's (in worker processes each has its own)
    m = machine(booking_agent(booked), "Book Paris.", isolation="inline")
    explore(m, completions=[CALL, "Done."], max_depth=3)
    assert booked == ["Paris"] * 3


def test_an_unknown_tool_and_the_recursion_limit_are_raised_outcomes():
    m = machine(booking_agent([]), "Book Paris.", recursion_limit=3)
    bad = json.dumps({"tool_calls": [{"name": "nope", "arguments": {}}]})
    s = m.harness(m.initial, bad)  # the tool node answers an unknown tool with an error message
    assert "[tool result call_1_0] Error: nope is not a valid tool" in m.prompt(s)
    assert m.harness(s, CALL) is HALT
    assert isinstance(m.raised(s, CALL), AgentRaised)
    assert m.raised(s, CALL).type == "GraphRecursionError"


class Guess(TypedDict):
    guess: str


def guessing_graph():
    model = chat_model()

    def ask(state: Guess) -> dict:
        return {"guess": model.invoke(f"Guess a colour. Last: {state['guess']}").content}

    builder = StateGraph(Guess)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    builder.add_conditional_edges(
        "ask", lambda s: END if s["guess"] == "blue" else "ask", ["ask", END]
    )
    return builder.compile(name="guess")


def guessing(recursion_limit: int, isolation: str):
    return machine(
        guessing_graph(),
        {"guess": "none"},
        completions=["red", "blue"],
        recursion_limit=recursion_limit,
        isolation=isolation,
    )


@pytest.mark.parametrize("isolation", ["process", "inline"])
def test_keyed_never_diverges_finds_the_loop_back_to_the_same_graph_state(isolation):
    # a recursion limit past the rounds the check follows a keyed loop (its max_states);
    # the graph's states are read where the graph runs: a worker process, or this one
    m = guessing(500, isolation)
    plain = check_properties(m, properties=[never_diverges()], max_depth=4)
    assert plain["never_diverges()"].verdict.holds is True  # histories never repeat
    key = never_diverges(key=checkpoint_key(m))
    keyed = check_properties(m, properties=[key], max_depth=4, max_states=30)
    (r,) = keyed.results
    assert r.verdict.holds is False and r.verdict.method == "key"
    assert r.counterexample.completions == ("red", "red") and r.counterexample.loop == 1


@pytest.mark.parametrize("isolation", ["process", "inline"])
def test_the_recursion_limit_caps_a_keyed_loop(isolation):
    # the limit ends the loop within the rounds followed: no divergence, early stop or not
    m = guessing(12, isolation)
    keyed = check_properties(m, properties=[never_diverges(key=checkpoint_key(m))])
    assert keyed.results[0].verdict.holds is True, keyed.report()


def test_structure_shows_the_graphs_nodes_and_its_conditional_edge():
    g = structure(guessing_graph())
    assert set(g.nodes) == {"__start__", "ask", "__end__"}
    assert {(a, b) for a, b, c in g.edges(data="conditional") if c} == {
        ("ask", "ask"),
        ("ask", "__end__"),
    }


def test_the_diagram_draws_the_graphs_own_structure_beside_the_explored_states(tmp_path, capsys):
    from agentic_machines.cli.commands import main
    from agentic_machines.drawing.diagrams import draw

    booked = []
    m = machine(booking_agent(booked), "Book Paris.", completions=[CALL, "Done."])
    explored = explore(m, max_depth=2)
    g = m.framework_structure(explored)
    states = [n for n, a in explored.nodes(data=True) if a.get("prompt")]
    # every explored state's model call was made by the node "agent"
    assert dict(g.nodes(data="states")) == {
        "__start__": None,
        "agent": len(states),
        "tools": None,
        "__end__": None,
    }
    fig = draw(explored, beside=g)
    left, right = fig.axes
    shown = {t.get_text() for t in left.texts}
    assert {"__start__", f"agent\n{len(states)} states", "tools", "__end__"} <= shown
    assert "explored states" in {t.get_text() for t in right.texts}
    dashed = [c for c in left.patches if c.get_linestyle() in ("--", "dashed")]
    assert len(dashed) == 2  # agent -> tools and agent -> __end__: the router's edges
    # from the command line, and refused in one line where a machine has no structure
    out = tmp_path / "react.png"
    target = f"{EXAMPLES / 'langgraph_react.py'}:build()"
    assert main(["diagram", target, "--depth", "1", "--structure", "-o", str(out)]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG"
    capsys.readouterr()
    assert main(["diagram", "f2-add", "--depth", "1", "--structure", "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--structure" in err and "LangGraph" in err


def test_refuses_what_is_not_a_compiled_graph():
    with pytest.raises(Exception, match="compiled LangGraph graph"):
        machine(StateGraph(Guess), "hi")
