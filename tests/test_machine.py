"""Unit tests of agentic_machines.machine: the sentinels, and the validation of
TableMachine and FunctionMachine when they are built."""

import copy
import pickle

import pytest

from agentic_machines import DIVERGE, HALT, FunctionMachine, InvalidMachine, TableMachine


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
