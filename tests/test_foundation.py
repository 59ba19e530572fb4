"""Unit tests for the sentinels, TableMachine validation, line budgets and HarnessMachine."""

import copy
import pickle

import pytest

from agentic_machines import (
    DIVERGE,
    HALT,
    FunctionMachine,
    HarnessMachine,
    InvalidMachine,
    TableMachine,
    TraceState,
)
from agentic_machines.errors import BudgetExceeded
from agentic_machines.execution.budget import LineBudget, checkpoint, restore_tracing
from agentic_machines.runtime.harness import HarnessError


def test_sentinels_are_distinct_singletons():
    assert HALT is not DIVERGE and repr(HALT) == "1" and repr(DIVERGE) == "↑"
    assert pickle.loads(pickle.dumps(HALT)) is HALT
    assert copy.deepcopy(DIVERGE) is DIVERGE
    assert HALT != 1 and DIVERGE != "↑"


def test_table_machine_names_every_problem():
    with pytest.raises(InvalidMachine) as info:
        TableMachine({"a": "p", "b": 3}, {("a", "x"): "c", ("z", "x"): HALT}, initial="q")
    problems = "\n".join(info.value.problems)
    assert "missing transition for ('b', 'x')" in problems
    assert "unknown state 'c'" in problems
    assert "starts from state 'z', which has no prompt" in problems
    assert "'b' has prompt 3" in problems
    assert "initial state 'q'" in problems
    assert "Fix:" in str(info.value)


def test_table_machine_names_completions_outside_the_given_alphabet():
    with pytest.raises(InvalidMachine) as info:
        TableMachine({"a": "p"}, {("a", "x"): "a", ("a", "z"): HALT}, completions=["x", "y"])
    problems = "\n".join(info.value.problems)
    assert "uses completion 'z', which is not in completions=['x', 'y']" in problems
    assert "missing transition for ('a', 'y')" in problems and len(info.value.problems) == 2
    with pytest.raises(InvalidMachine, match=r"pass e.g. \['xy'\]"):
        TableMachine({"a": "p"}, {("a", "xy"): "a"}, completions="xy")


def test_table_machine_rejects_non_string_completions():
    with pytest.raises(InvalidMachine, match="not a string"):
        TableMachine({0: "*"}, {(0, 1): 0})


def test_function_machine_checks_its_arguments():
    with pytest.raises(InvalidMachine, match="two callables"):
        FunctionMachine("p", lambda s, c: s)
    with pytest.raises(InvalidMachine, match="initial state"):
        FunctionMachine(lambda s: "", lambda s, c: s, states=[0], initial=5)


@pytest.mark.parametrize(
    "src", ["while True: pass", "while True:\n    x = 1", "for _ in iter(int, 1): pass"]
)
def test_line_budget_cuts_every_kind_of_loop(src):
    with pytest.raises(BudgetExceeded):
        with LineBudget(500):
            exec(compile(src, "<model>", "exec"), {})


def test_a_spent_budget_cannot_be_swallowed_by_a_handler_that_checkpoints():
    # CPython switches a raising tracer off, so a bare `except BaseException` loop is
    # stopped by checkpoints in its handlers (codeexec inserts them into model code).
    src = "n = 0\nwhile True:\n    try:\n        n += 1\n    except BaseException:\n        checkpoint()"
    for limit in (500, 501, 502, 997):
        with pytest.raises(BudgetExceeded):
            with LineBudget(limit):
                exec(compile(src, "<model>", "exec"), {"checkpoint": checkpoint})


def test_an_enclosing_budget_keeps_counting_after_an_inner_one_is_spent():
    with pytest.raises(BudgetExceeded) as outer_info:
        with LineBudget(5_000) as outer:
            with pytest.raises(BudgetExceeded):
                with LineBudget(100):
                    exec(compile("while True:\n    x = 1", "<model>", "exec"), {})
            restore_tracing()
            exec(compile("while True:\n    x = 1", "<model>", "exec"), {})
    assert outer_info.value.args[0] == 5_000 and outer.exhausted


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
