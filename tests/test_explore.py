"""explore(): bounded breadth-first exploration into a networkx DiGraph."""

from __future__ import annotations

from collections import deque

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import DIVERGE, HALT, FunctionMachine, HarnessMachine, TableMachine
from agentic_machines.errors import InvalidArgument, Undecided
from agentic_machines.runtime.explore import edge_label, explore, short_text
from agentic_machines.strategies import examples


def mul() -> TableMachine:
    return TableMachine(
        {0: "⋆", 1: "⋆"}, {(a, b): a * int(b) for a in (0, 1) for b in "01"}, initial=1, name="mul"
    )


def test_nodes_edges_and_attributes():
    m = TableMachine(
        {"a": "pick", "b": "pick"},
        {
            ("a", "x"): "b",
            ("a", "y"): HALT,
            ("b", "x"): "a",
            ("b", "y"): DIVERGE,
            ("a", "z"): "b",
            ("b", "z"): "b",
        },
        initial="a",
    )
    g = explore(m)
    assert list(g.nodes) == ["a", "b", HALT, DIVERGE]
    assert g.nodes["a"] == {"kind": "state", "prompt": "pick", "depth": 0, "expanded": True}
    assert (
        g.nodes[HALT]["kind"] == "halt"
        and g.nodes[HALT]["prompt"] is None
        and g.nodes[HALT]["depth"] == 1
    )
    assert g.nodes[DIVERGE]["kind"] == "diverge" and g.nodes[DIVERGE]["depth"] == 2
    # two completions with the same outcome make one edge that lists both
    assert g.edges["a", "b"] == {"completions": ["x", "z"], "label": "x, z"}
    assert g.edges["b", "b"]["completions"] == ["z"]  # self-loop
    assert g.graph["start"] == "a" and g.graph["roots"] == ["a"]
    stats = g.graph["stats"]
    assert (stats["states"], stats["edges"], stats["transitions"], stats["depth"]) == (2, 5, 6, 2)
    assert stats["truncated"] is False and stats["truncated_reason"] is None
    assert stats["seconds"] >= 0 and stats["states_per_second"] > 0


def test_graph_is_a_consistent_networkx_graph():
    g = explore(mul(), roots=[1, 0])
    h = nx.DiGraph(**g.graph)
    h.add_nodes_from(g.nodes(data=True))
    h.add_edges_from(g.edges(data=True))
    assert nx.utils.graphs_equal(g, h)
    assert set(g.predecessors(0)) == {0, 1} and g.in_degree(1) == 1
    assert nx.utils.graphs_equal(g.copy(), g) and g.reverse().has_edge(0, 1)


def test_default_start_and_roots():
    m = mul()
    assert set(explore(m)) == {0, 1}  # from 1 both states are reachable
    assert set(explore(m, 0)) == {0}  # from 0 only 0 is
    g = explore(m, 0, roots=m.states)
    assert set(g) == {0, 1} and g.graph["start"] == 0 and g.nodes[1]["depth"] == 0
    no_initial = TableMachine({0: "*", 1: "*"}, {(0, "a"): 1, (1, "a"): 1})
    assert set(explore(no_initial)) == {0, 1}  # finite, no initial: every state is a root


def test_completions_as_function_of_prompt():
    def program():
        c = yield "choose a or b"
        yield f"you chose {c}; say stop"

    m = HarnessMachine(program)
    seen_prompts = []

    def alphabet(prompt):
        seen_prompts.append(prompt)
        return ["a", "b"] if prompt.startswith("choose") else ["stop"]

    g = explore(m, completions=alphabet)
    assert g.graph["stats"]["states"] == 3 and HALT in g
    assert explore(m, completions=lambda p: ["a", "a", "stop"]).graph["stats"]["transitions"] == 6
    assert seen_prompts[0] == "choose a or b" and len(seen_prompts) == 3


def test_missing_alphabet_and_bad_arguments_are_clear():
    infinite = FunctionMachine(lambda n: str(n), lambda n, c: n + 1, initial=0, name="counter")
    with pytest.raises(InvalidArgument, match="completions=\\[...\\]"):
        explore(infinite)
    with pytest.raises(InvalidArgument, match="no initial state"):
        explore(FunctionMachine(lambda n: str(n), lambda n, c: n + 1), completions=["1"])
    with pytest.raises(InvalidArgument, match="single string"):
        explore(infinite, completions="ab")
    with pytest.raises(InvalidArgument, match="sentinel"):
        explore(infinite, HALT, completions=["1"])
    with pytest.raises(InvalidArgument, match="max_states"):
        explore(infinite, completions=["1"], max_states=0)
    with pytest.raises(InvalidArgument, match="single string"):
        explore(infinite, completions=lambda p: "1", max_depth=2)


def test_max_states_truncates_and_marks_unexpanded():
    counter = FunctionMachine(lambda n: f"at {n}", lambda n, c: n + int(c), initial=0)
    g = explore(counter, completions=["1", "2"], max_states=5)
    stats = g.graph["stats"]
    assert (
        stats["states"] == 5 and stats["truncated"] and "max_states=5" in stats["truncated_reason"]
    )
    assert all(isinstance(n, int) for n in g) and len(g) == 5
    assert not all(g.nodes[n]["expanded"] for n in g)


def test_max_depth_zero_and_depths_are_shortest_distances():
    counter = FunctionMachine(lambda n: f"at {n}", lambda n, c: n + int(c), initial=0)
    g0 = explore(counter, completions=["1"], max_depth=0)
    assert list(g0) == [0] and g0.graph["stats"]["truncated"]
    g = explore(counter, completions=["1", "3"], max_depth=3)
    assert {n: g.nodes[n]["depth"] for n in g} == {
        n: d for n, d in _bfs_depths(counter, 0, ["1", "3"], 3).items()
    }


def _bfs_depths(machine, start, comps, max_depth):
    depth = {start: 0}
    queue = deque([start])
    while queue:
        s = queue.popleft()
        if depth[s] == max_depth or s is HALT or s is DIVERGE:
            continue
        for c in comps:
            t = machine.harness(s, c)
            if t not in depth:
                depth[t] = depth[s] + 1
                queue.append(t)
    return depth


def test_undecided_is_recorded_not_raised():
    def harness(s, c):
        if c == "loop":
            raise Undecided("fuel ran out after 100 steps")
        return HALT

    m = FunctionMachine(lambda s: "go", harness, initial="s", name="fuel")
    g = explore(m, completions=["ok", "loop"])
    assert g.nodes["s"]["undecided"] == ["loop"] and "fuel" in g.nodes["s"]["undecided_reason"]
    assert g.graph["stats"]["undecided"] == 1 and g.has_edge("s", HALT)


def test_progress_callback_gets_status_lines(monkeypatch):
    import agentic_machines.runtime.search as ex

    monkeypatch.setattr(ex, "PROGRESS_AFTER", 0.0)
    monkeypatch.setattr(ex, "PROGRESS_EVERY", 0.0)
    monkeypatch.setattr(ex, "CHECK_CLOCK_EVERY", 1)
    seen = []
    counter = FunctionMachine(lambda n: "", lambda n, c: n + 1, initial=0)
    explore(counter, completions=["+"], max_states=5, progress=seen.append)
    assert seen and seen[-1]["final"] and seen[-1]["states"] == 5
    assert {"states", "edges", "depth", "states_per_second", "queued"} <= set(seen[0])


def test_progress_is_logged_and_only_the_cli_prints_it_on_stderr(monkeypatch, capsys, caplog):
    import logging

    import agentic_machines.runtime.search as ex
    from agentic_machines.cli.commands import _progress_to_stderr

    monkeypatch.setattr(ex, "PROGRESS_AFTER", 0.0)
    monkeypatch.setattr(ex, "CHECK_CLOCK_EVERY", 1)
    log = logging.getLogger("agentic_machines")
    monkeypatch.setattr(log, "handlers", [])  # as in a process where no command ran

    def go():
        explore(
            FunctionMachine(lambda n: "", lambda n, c: n + 1, initial=0),
            completions=["+"],
            max_states=3,
        )

    with caplog.at_level(logging.INFO, logger="agentic_machines"):
        go()  # a library call: the lines go to the logger, nothing to stderr
        assert capsys.readouterr().err == ""
        text = "\n".join(r.getMessage() for r in caplog.records)
        assert "agentic-machines: exploring:" in text and "explored: 3 states" in text
        _progress_to_stderr()  # what the command line does
        go()
    err = capsys.readouterr().err
    assert "agentic-machines: exploring:" in err and "explored: 3 states" in err


def test_gc_state_is_restored():
    import gc

    gc.disable()
    try:
        explore(mul())
        assert not gc.isenabled()
    finally:
        gc.enable()
    explore(mul())
    assert gc.isenabled()


def test_labels():
    assert short_text("a\nb") == "a⏎b" and short_text("x" * 30, 10) == "x" * 9 + "…"
    assert edge_label(["0", "1", "2", "3"], most=2) == "0, 1 +2"


machines = st.integers(1, 6).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(st.sampled_from([*range(n), HALT, DIVERGE]), min_size=2 * n, max_size=2 * n),
    )
)


@settings(max_examples=examples(60, 1000))
@given(machines)
def test_explore_agrees_with_a_plain_bfs(data):
    n, outs = data
    table = {(s, c): outs[2 * s + i] for s in range(n) for i, c in enumerate("ab")}
    m = TableMachine({s: f"p{s % 2}" for s in range(n)}, table, initial=0)
    g = explore(m)
    reach = _bfs_depths(m, 0, ["a", "b"], 10**9)
    assert {k: v for k, v in reach.items() if k not in (HALT, DIVERGE)} == {
        k: g.nodes[k]["depth"] for k in g if g.nodes[k]["kind"] == "state"
    }
    for s in g:
        if g.nodes[s]["kind"] == "state":
            for c in "ab":
                assert c in g.edges[s, m.harness(s, c)]["completions"]
    assert (
        sum(len(d["completions"]) for _, _, d in g.edges(data=True))
        == 2 * g.graph["stats"]["states"]
    )


def test_machine_state_labels_are_used():
    class Named(FunctionMachine):
        def state_label(self, state):
            return f"step {state}"

    m = Named(lambda n: "go", lambda n, c: n + 1 if n < 2 else HALT, initial=0)
    g = explore(m, completions=["c"])
    assert [g.nodes[n].get("label") for n in g] == ["step 0", "step 1", "step 2", None]


@settings(max_examples=examples(60, 1000))
@given(machines, st.sampled_from(["ab", "aab", "abc"]), st.sampled_from([None, 1, 2, 3]))
def test_explore_fills_networkx_like_its_public_api(data, alphabet, max_states):
    # explore fills networkx's adjacency dicts directly (benchmarks/bench_explore.py):
    # the result must be the graph add_node/add_edge would build, with each edge's
    # attribute dict shared by the successor and predecessor maps, and exact stats.
    n, outs = data
    table = {(s, c): outs[(2 * s + i) % len(outs)] for s in range(n) for i, c in enumerate("abc")}
    m = TableMachine({s: f"p{s}" for s in range(n)}, table, initial=0)
    g = explore(m, completions=list(alphabet), max_states=max_states)
    h = nx.DiGraph(**g.graph)
    h.add_nodes_from(g.nodes(data=True))
    h.add_edges_from(g.edges(data=True))
    assert nx.utils.graphs_equal(g, h)
    for s, t, d in g.edges(data=True):
        assert g.succ[s][t] is g.pred[t][s]
        cs = d["completions"]
        assert d["label"] == (edge_label(cs) if len(cs) > 1 else short_text(cs[0], 16))
        if g.nodes[s]["expanded"]:
            assert cs == [c for c in dict.fromkeys(alphabet) if m.harness(s, c) == t]
    stats = g.graph["stats"]
    assert stats["edges"] == g.number_of_edges()
    assert stats["transitions"] == sum(len(d["completions"]) for _, _, d in g.edges(data=True))
    assert stats["states"] == sum(1 for v in g if g.nodes[v]["kind"] == "state")
