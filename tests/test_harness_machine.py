"""Unit tests of agentic_machines.runtime.harness: HarnessMachine and TraceState.

Costs are counted rather than timed: a linear run starts the harness program once and
resumes it; only branching replays it from the start."""

import pytest

from agentic_machines import DIVERGE, HALT, HarnessMachine, TraceState
from agentic_machines.runtime.harness import HarnessError


def test_linear_runs_resume_and_branching_replays():
    starts = []

    def program():
        starts.append(1)
        n = 0
        while True:
            c = yield f"step {n}"
            if c == "stop":
                return n
            n += 1

    m = HarnessMachine(program)
    assert len(starts) == 1  # built once to check the first prompt
    s = m.initial
    for _ in range(500):
        s = m.harness(s, "go")
        assert m.prompt(s) == f"step {len(s)}"
    assert len(starts) == 1  # the run the build started is resumed for the whole run
    mid = m.initial.then("go").then("go")
    assert m.harness(mid, "other") == mid.then("other") and len(starts) == 2  # a branch replays
    assert m.harness(s, "stop") is HALT and m.result(s, "stop") == 500 and len(starts) == 2


def _counter(limit):
    i = 0
    while True:
        c = yield f"count {i}"
        if c == "spin":
            while True:
                pass
        if c == "boom":
            raise RuntimeError("bug")
        i += 1
        if i >= limit:
            return i


def test_harness_machine_linear_branching_halt_diverge():
    m = HarnessMachine(_counter, 3, line_budget=10_000)
    s1 = m.harness(m.initial, "a")
    s2a = m.harness(s1, "a")
    s2b = m.harness(s1, "b")  # branching replays from the start
    assert s2a != s2b and m.prompt(s2a) == m.prompt(s2b) == "count 2"
    assert m.harness(s2a, "a") is HALT and m.result(s2a, "a") == 3
    assert m.harness(s1, "spin") is DIVERGE
    assert m.prompt(TraceState(("x", "y"))) == "count 2"


def test_harness_machine_reports_harness_bugs():
    m = HarnessMachine(_counter, 3)
    with pytest.raises(HarnessError, match="RuntimeError"):
        m.harness(m.initial, "boom")
    lenient = HarnessMachine(_counter, 3, on_error="halt")
    assert lenient.harness(lenient.initial, "boom") is HALT
    assert isinstance(lenient.result(lenient.initial, "boom"), RuntimeError)


def test_trace_states_hash_and_compare_by_completions():
    a = TraceState().then("x").then("y")
    assert a == TraceState(("x", "y")) and hash(a) == hash(TraceState(("x", "y")))
    assert a != TraceState(("x",)) and a != TraceState(("y", "x"))
    deep = TraceState()
    for _ in range(50_000):
        deep = deep.then("c")
    assert deep == TraceState(("c",) * 50_000)
