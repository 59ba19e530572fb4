"""agent_machine and effect: any synchronous agent loop as an agentic machine."""

from __future__ import annotations

import sys

import pytest
from agentic_machines.models import ScriptedModel

from agentic_machines import DIVERGE, HALT, AgentRaised, agent_machine, effect, run
from agentic_machines.errors import InvalidArgument, InvalidMachine
from agentic_machines.runtime.explore import explore
from agentic_machines.runtime.harness import TraceState

ALPHABET = ["search", "calc", "answer"]


def make_react(counts):
    """A ReAct-style loop with two tools; ``search`` is an effect, ``calc`` is not."""

    @effect
    def search():
        counts["search"] += 1
        return "Paris"

    def calc():
        counts["calc"] += 1
        return "4"

    def react(model, task="capital of France"):
        notes = []
        while True:
            action = model(f"Task: {task}. Notes: {', '.join(notes) or 'none'}. Act.")
            if action == "answer":
                return notes[-1] if notes else "no idea"
            if action == "search":
                notes.append(search())
            elif action == "calc":
                notes.append(calc())
            else:
                notes.append(f"unknown action {action!r}")

    return react


def hand_graph(depth):
    """The graph of the ReAct loop to ``depth``, computed by hand from its definition."""
    note = {"search": "Paris", "calc": "4"}
    nodes, edges = {}, set()
    frontier = [()]
    for d in range(depth + 1):
        nxt = []
        for h in frontier:
            notes = [note[a] for a in h]
            nodes[TraceState(h)] = (
                f"Task: capital of France. Notes: {', '.join(notes) or 'none'}. Act."
            )
            if d == depth:
                continue
            edges.add((TraceState(h), HALT, "answer"))
            for a in ("search", "calc"):
                edges.add((TraceState(h), TraceState(h + (a,)), a))
                nxt.append(h + (a,))
        frontier = nxt
    return nodes, edges


def test_react_loop_explored_equals_the_hand_computed_graph():
    counts = {"search": 0, "calc": 0}
    m = agent_machine(make_react(counts), completions=ALPHABET)
    g = explore(m, max_depth=3)
    nodes, edges = hand_graph(3)
    assert {n: g.nodes[n]["prompt"] for n in g if n is not HALT} == nodes
    got = {(s, t, c) for s, t, e in g.edges(data=True) for c in e["completions"]}
    assert got == edges
    # The effect tool ran exactly once per real step that calls it (one per edge), while
    # the plain tool ran again in every replay of a branch.
    search_edges = sum(1 for _, _, c in edges if c == "search")
    calc_edges = sum(1 for _, _, c in edges if c == "calc")
    assert counts["search"] == search_edges == 7
    assert counts["calc"] > calc_edges


def test_effect_results_are_replayed_not_recomputed():
    sent = []

    @effect
    def send(text):
        sent.append(text)
        return len(sent)

    def mailer(model):
        receipts = []
        while True:
            receipts.append(send(model(f"receipts so far: {receipts}")))

    m = agent_machine(mailer, completions=["a", "b"])
    s1 = m.harness(m.initial, "a")
    s2 = m.harness(s1, "b")
    assert m.prompt(s2) == "receipts so far: [1, 2]"
    # Branching from s1 replays the first step: its send is not called again, and the
    # replayed call returns the recorded receipt.
    s3 = m.harness(s1, "a")
    assert sent == ["a", "b", "a"]
    assert m.prompt(s3) == "receipts so far: [1, 3]"
    # A machine built afresh forgets nothing it should not: a new run really sends.
    assert send("outside") == 4


def test_an_agent_that_raises_is_a_recorded_outcome():
    def fragile(model):
        while True:
            c = model("number?")
            int(c)

    m = agent_machine(fragile, completions=["1", "x"])
    assert m.harness(m.initial, "x") is HALT
    raised = m.raised(m.initial, "x")
    assert raised == AgentRaised("ValueError", "invalid literal for int() with base 10: 'x'")
    assert "int(c)" in raised.traceback
    assert m.raised(m.initial, "1") is None
    trace = run(m, ScriptedModel(["1", "1", "x"]))
    assert trace.end is HALT and len(trace) == 3
    assert isinstance(m.result(trace[-1].state, trace[-1].completion), AgentRaised)


def test_an_agent_that_calls_sys_exit_is_a_recorded_outcome_not_the_end_of_the_process():
    # Found by review: SystemExit went through the harness and ended the CLI with its status.
    def quitter(model):
        if model("quit?") == "yes":
            sys.exit(4)
        return "stayed"

    m = agent_machine(quitter)
    assert m.harness(m.initial, "yes") is HALT
    assert m.raised(m.initial, "yes") == AgentRaised("SystemExit", "4")
    assert m.result(m.initial, "no") == "stayed"


def test_an_agent_that_loops_without_calling_the_model_diverges():
    def stuck(model):
        if model("go?") == "go":
            while True:
                pass
        return "stopped"

    m = agent_machine(stuck, line_budget=20_000)
    assert m.harness(m.initial, "go") is DIVERGE
    assert m.result(m.initial, "go") is DIVERGE
    assert m.harness(m.initial, "stop") is HALT
    assert m.result(m.initial, "stop") == "stopped"
    trace = run(m, ScriptedModel(["go"]))
    assert trace.end is DIVERGE


def test_a_long_linear_run_and_replays_agree():
    def counter(model, limit):
        total = 0
        for i in range(limit):
            total += int(model(f"step {i}, total {total}"))
        return total

    m = agent_machine(counter, 500)
    trace = run(m, ScriptedModel(["1", "2"] * 250), max_steps=600)
    assert trace.end is HALT and len(trace) == 500
    assert m.result(trace[-1].state, trace[-1].completion) == 750
    # A state far down the run, asked of a fresh machine, is replayed to the same prompt.
    state = trace[300].state
    assert agent_machine(counter, 500).prompt(state) == trace[300].prompt


def test_bad_inputs_are_clear_errors():
    with pytest.raises(InvalidMachine, match="before its first model call"):
        agent_machine(lambda model: 42)
    with pytest.raises(InvalidMachine, match="before its first model call"):
        agent_machine(lambda model: 1 / 0)
    m = agent_machine(lambda model: model("once"))
    with pytest.raises(InvalidArgument, match="not a state"):
        m.prompt(TraceState(("a", "b")))
    with pytest.raises(InvalidArgument, match="C = str"):
        m.harness(m.initial, 3)
    # A prompt that is not a string is the agent's bug: an outcome, not a crash.
    bad = agent_machine(lambda model: model("first") and model(["not", "a", "string"]))
    assert bad.harness(bad.initial, "x") is HALT
    assert bad.raised(bad.initial, "x").type == "WrongType"  # a TypeError, named for what is wrong


def test_asyncio_agents_suspend_and_branch():
    from test_agent_linear import async_agent  # the linear path's tests use it too

    m = agent_machine(async_agent, 2, completions=["a", "b"])
    g = explore(m)
    assert g.graph["stats"]["states"] == 3 and HALT in g
    assert m.result(TraceState(("b",)), "a") == ["b", "a"]


def counter_agent(model, limit):
    total = 0
    for i in range(limit):
        total += int(model(f"step {i}, total {total}"))
    return total


def test_a_machine_pickles_as_the_agent_started_afresh():
    import pickle

    m = agent_machine(counter_agent, 3, name="counter", completions=["1", "2"])
    s = m.harness(m.harness(m.initial, "1"), "2")
    copy = pickle.loads(pickle.dumps(m))
    assert (copy.name, copy.completions, copy.line_budget) == ("counter", ("1", "2"), 1_000_000)
    assert copy.prompt(s) == m.prompt(s) == "step 2, total 3"
    assert copy.harness(s, "2") is HALT and copy.result(s, "2") == 5
