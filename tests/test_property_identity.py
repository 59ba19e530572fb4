"""A property is its object, never its name (issue 36, item 1): properties with one name
but different tools, predicates or keys are all checked and all reported, under names
made unique (``name#2``), in ``check_properties``, ``all_of``, the CLI's ``-p`` and the
Hypothesis check."""

from __future__ import annotations

import pytest

from agentic_machines import HALT, FunctionMachine, agent_machine, effect
from agentic_machines.checking import (
    all_of,
    check_properties,
    effects_at_most_once,
    never_diverges,
    unreachable,
)
from agentic_machines.checking.run_check import recheck
from agentic_machines.checking.stateful import hypothesis_check
from agentic_machines.cli.commands import main


def biller(model):
    pinged, charged = [], []

    @effect
    def ping(n: int) -> str:
        pinged.append(n)
        return "pong"

    @effect
    def charge(n: int) -> str:
        charged.append(n)
        return "ok"

    reply = model("What next? (pay, or done)").strip()
    if reply == "pay":
        ping(1)
        charge(1)
        charge(1)  # the planted bug: the same request charged twice
    return "bye"


def counter() -> FunctionMachine:
    return FunctionMachine(
        lambda n: f"at {n}", lambda n, c: HALT if n == 2 else n + 1, initial=0, name="counter"
    )


def test_two_effects_properties_on_different_tools_are_both_checked() -> None:
    m = agent_machine(biller, name="biller")
    result = check_properties(
        m,
        m.initial,
        [effects_at_most_once("ping"), effects_at_most_once("charge")],
        completions=["pay", "done"],
    )
    assert [r.name for r in result] == [
        "effects_at_most_once(ping)",
        "effects_at_most_once(charge)",
    ]
    assert result["effects_at_most_once(ping)"].verdict.holds is True
    assert result["effects_at_most_once(charge)"].verdict.holds is False


@pytest.mark.parametrize("order", [(1, 5), (5, 1)])
def test_two_unnamed_unreachable_lambdas_are_each_decided(order) -> None:
    a, b = order
    props = [unreachable(lambda s, a=a: s == a), unreachable(lambda s, b=b: s == b)]
    result = check_properties(counter(), properties=props, completions=["go"])
    names = [r.name for r in result]
    assert names == ["unreachable(<lambda>)", "unreachable(<lambda>)#2"]
    # state 1 is reachable, state 5 is not: each verdict is its own predicate's
    assert [r.verdict.holds for r in result] == [a != 1, b != 1]
    assert result.counterexamples.keys() == {names[order.index(1)]}
    assert result.counterexample(names[order.index(1)]).property == names[order.index(1)]


def test_all_of_keeps_parts_with_one_name_apart() -> None:
    both = all_of(unreachable(lambda s: s == 5), unreachable(lambda s: s == 1))
    result = check_properties(counter(), properties=[both], completions=["go"])
    assert result.failed == [both.name]
    assert result.counterexample(both.name).states[-1] == 1


def test_keyed_never_diverges_with_different_keys_are_both_reported() -> None:
    props = [never_diverges(key=lambda s: 1 // 0), never_diverges(key=lambda s: s)]
    result = check_properties(counter(), properties=props, completions=["go"])
    assert [r.name for r in result] == [
        "never_diverges(key=<lambda>)",
        "never_diverges(key=<lambda>)#2",
    ]
    assert [r.verdict.holds for r in result] == [False, True]


def test_the_hypothesis_check_reports_both_too() -> None:
    props = [unreachable(lambda s: s == 5), unreachable(lambda s: s == 1)]
    result = hypothesis_check(counter(), properties=props, completions=["go"], max_examples=20)
    assert [(r.name, r.verdict.holds) for r in result] == [
        ("unreachable(<lambda>)", True),
        ("unreachable(<lambda>)#2", False),
    ]


def test_the_cli_checks_two_effects_properties(capsys) -> None:
    code = main(
        [
            "test",
            "tests.test_property_identity:biller",
            "-c",
            "pay",
            "-c",
            "done",
            "-p",
            "effects_at_most_once:ping",
            "-p",
            "effects_at_most_once:charge",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "PASS effects_at_most_once(ping)" in out
    assert "FAIL effects_at_most_once(charge)" in out


def test_effects_messages_name_the_tool_not_the_label() -> None:
    # the messages once sliced the tool out of the property's name, so a custom name
    # ("billing") was cut to "ll" and named the wrong thing
    m = agent_machine(biller, name="biller")
    prop = effects_at_most_once("charge", name="billing")
    (r,) = check_properties(m, m.initial, [prop], completions=["pay", "done"])
    assert r.name == "effects_at_most_once(billing)"
    assert r.verdict.holds is False
    assert "of charge twice" in r.verdict.claim
    assert r.counterexample is not None
    assert "charge executed the request" in r.counterexample.explanation
    again = recheck(m, prop, m.initial, r.counterexample.completions)
    assert again is not None and again.startswith("charge ran 2× for request")
