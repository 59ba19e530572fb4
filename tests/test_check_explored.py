"""check_properties on an explored graph (issue 39, item 1): the verdicts, counterexamples
and bounds of checking the machine itself, without calling its harness again."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import HALT, FunctionMachine
from agentic_machines.checking import (
    Transition,
    check_properties,
    effects_at_most_once,
    halts_within,
    never_diverges,
    never_raises,
    unreachable,
    unreachable_prompt,
)
from agentic_machines.errors import InvalidArgument
from agentic_machines.runtime.explore import explore
from agentic_machines.strategies import examples, table_machines

N = examples(40, 400)


def _properties(k: int, bad: int, whole: bool = True) -> list:
    """Properties of every kind; a keyed ``never_diverges`` only on a whole graph: on the
    machine it replays its loop past a bound, where a cut graph has no steps to replay."""
    keyed = [never_diverges(key=lambda s: s % 2)] if whole else []
    return [
        halts_within(k),
        never_diverges(),
        *keyed,
        never_raises(),
        unreachable(lambda s: s == bad, name=f"never {bad}"),
        unreachable_prompt(lambda p: p == "b"),
        Transition("moves", lambda s, c, t: t != s),
    ]


def _seen(result) -> list:
    """What a check says, without its timing: per property its status, reason and run."""
    out = []
    for r in result:
        cx = r.counterexample
        run = None if cx is None else (cx.completions, cx.states, cx.prompts, cx.loop)
        out.append((r.name, r.verdict.status, r.verdict.reason, run))
    return out


@settings(max_examples=N, deadline=None)
@given(
    table_machines(max_states=5, max_completions=3),
    st.integers(0, 6),
    st.integers(0, 4),
    st.sampled_from([None, 1, 2, 3]),
    st.booleans(),
)
def test_a_graph_checks_as_its_machine(m, k, bad, depth, stop_early):
    props = _properties(k, bad, whole=depth is None)
    on_machine = check_properties(m, 0, props, max_depth=depth, stop_early=stop_early)
    graph = explore(m, 0, max_depth=depth, max_states=None)
    on_graph = check_properties(graph, properties=props, stop_early=stop_early)
    assert _seen(on_graph) == _seen(on_machine)
    assert on_graph.bound == on_machine.bound
    assert on_graph.coverage.states == on_machine.coverage.states


@settings(max_examples=N // 2, deadline=None)
@given(table_machines(max_states=6, max_completions=2, min_states=3), st.integers(1, 4))
def test_a_graph_cut_by_its_state_bound_checks_as_the_machine_with_that_bound(m, cap):
    props = _properties(3, 2, whole=False)
    on_machine = check_properties(m, 0, props, max_states=cap, stop_early=False)
    on_graph = check_properties(explore(m, 0, max_states=cap), properties=props, stop_early=False)
    assert _seen(on_graph) == _seen(on_machine)
    assert on_graph.bound == on_machine.bound


def test_the_harness_is_not_called_again():
    calls = []

    def h(n, c):
        calls.append((n, c))
        return HALT if n >= 3 else n + 1

    m = FunctionMachine(lambda n: f"at {n}", h, initial=0, completions=["go"])
    graph = explore(m)
    before = len(calls)
    result = check_properties(graph, properties=[halts_within(4), never_diverges()])
    assert len(calls) == before
    assert [r.verdict.status for r in result] == ["holds", "holds"]


def test_a_function_alphabet_is_read_from_the_graph():
    m = FunctionMachine(lambda n: "even" if n % 2 == 0 else "odd", lambda n, c: n + len(c))
    choose = lambda p: ["a"] if p == "even" else ["bb", "c"]  # noqa: E731
    graph = explore(m, 0, choose, max_depth=3)
    on_machine = check_properties(m, 0, [halts_within(2)], completions=choose, max_depth=3)
    on_graph = check_properties(graph, properties=[halts_within(2)])
    assert _seen(on_graph) == _seen(on_machine)


def test_undecided_steps_stay_undecided():
    from agentic_machines.errors import Undecided

    def h(n, c):
        if c == "x":
            raise Undecided("fuel ran out")
        return HALT

    m = FunctionMachine(lambda n: "p", h, initial=0, completions=["x", "y"])
    result = check_properties(explore(m), properties=[halts_within(1)])
    assert result["halts_within(1)"].verdict.status == "undecided"
    assert "fuel ran out" in result["halts_within(1)"].verdict.reason


def test_refusals_say_what_to_do():
    import networkx as nx

    with pytest.raises(InvalidArgument, match="explore the machine first"):
        check_properties(nx.DiGraph(), properties=[never_raises()])
    m = FunctionMachine(lambda n: "p", lambda n, c: HALT, initial=0, completions=["x"])

    class Tool:
        calls: list = []

    with pytest.raises(InvalidArgument, match="check it on the machine"):
        check_properties(explore(m), properties=[effects_at_most_once(Tool())])


def test_the_checker_records_its_prompts_in_the_kernels_record():
    from agentic_machines.checking import check as check_module
    from agentic_machines.runtime.search import plan

    m = FunctionMachine(lambda n: f"at {n}", lambda n, c: HALT if n >= 2 else n + 1)
    task = plan(m, 0, ["go"], what="check_properties", every_state=False)
    search = check_module._Search(task, [halts_within(5)], False)
    search.run(stop_early=False)
    assert search.record.prompts == {0: "at 0", 1: "at 1", 2: "at 2"}


def test_the_checker_keeps_the_graph_only_in_the_kernels_record():
    # One place records each fact: the loop records every state's depth, prompt and
    # breadth-first parent; the check reads its counterexamples from there and keeps no
    # list of states of its own.
    from agentic_machines.checking import Invariant, effects_at_most_once
    from agentic_machines.checking import check as check_module
    from agentic_machines.runtime.search import plan

    class Send:
        def __init__(self):
            self.calls = []

        def __call__(self, n):
            self.calls.append(n)

    send = Send()

    def h(n, c):
        if c == "send":
            send(n)
        return HALT if n >= 2 else n + 1

    m = FunctionMachine(lambda n: f"at {n}", h)
    task = plan(m, 0, ["go", "send"], what="check_properties", every_state=False)
    prop = effects_at_most_once(send)
    search = check_module._Search(task, [prop, Invariant("below 2", lambda n, p: n < 2)], False)
    result = search.run(stop_early=False)
    record = search.record
    assert record.parent == {1: (0, "go", 1), 2: (1, "go", 2)}
    assert record.executed[0] == (frozenset(),)
    assert record.executed[1] == (frozenset(),)  # "go" executed nothing on the way to 1
    assert send.calls == [0, 1, 2]  # "send" from each state, once: no replay here
    assert result.counterexample("below 2").completions == ("go", "go")
    assert result.coverage.states == len(record.prompts) == 3
    # its lists are the properties by kind, the alphabet and the effect logs, none by state
    lists = {k for k, v in vars(search).items() if isinstance(v, list)}
    assert lists <= {
        "props",
        "fixed",
        "parts",
        "invariants",
        "transitions",
        "effects",
        "halting",
        "diverging",
        "raising",
        "keyed",
        "looping",
        "logs",
    }, lists
