"""hypothesis_test / hypothesis_check: shrinking, adversarial strategies, replay."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import run_state_machine_as_test

from agentic_machines import HALT, FunctionMachine, HarnessMachine, run
from agentic_machines.checking import (
    Raised,
    halts_within,
    never_diverges,
    never_raises,
    prompt_length_at_most,
)
from agentic_machines.checking.adversarial import adversarial_completions
from agentic_machines.checking.stateful import (
    PropertyViolation,
    hypothesis_check,
    hypothesis_test,
)
from agentic_machines.errors import InvalidArgument
from agentic_machines.runtime.local_models import ScriptedModel


def _step3_bug():
    """Crashes on the completion 'boom' given at step 3 (index 2), and only there."""

    def h(n, c):
        if n == 2 and c == "boom":
            raise IndexError("no action to take")
        return HALT if c == "stop" else n + 1

    return FunctionMachine(lambda n: f"step {n}", h, initial=0, name="step3")


def test_a_bug_at_step_3_shrinks_to_three_completions():
    noisy = st.one_of(st.text(max_size=30).filter(lambda c: c != "stop"), st.just("boom"))
    result = hypothesis_check(
        _step3_bug(), properties=[never_raises()], completions=noisy, max_examples=300
    )
    cx = result.counterexample("never_raises()")
    assert cx is not None
    assert len(cx) == 3 and cx.completions[2] == "boom"
    assert isinstance(cx.end, Raised)


def test_the_shrunk_run_is_a_runnable_snippet():
    result = hypothesis_check(
        _step3_bug(),
        properties=[never_raises()],
        completions=st.sampled_from(["go", "boom"]),
        max_examples=200,
    )
    cx = result.counterexample("never_raises()")
    namespace = {"machine": _step3_bug()}
    with pytest.raises(IndexError):
        exec(cx.snippet(), namespace)


def test_the_rule_based_state_machine_runs_as_a_test_case():
    cls = hypothesis_test(
        _step3_bug(), properties=[never_raises()], completions=st.sampled_from(["go", "boom"])
    )
    with pytest.raises(PropertyViolation) as info:
        run_state_machine_as_test(cls)
    assert "run(machine, ScriptedModel(" in str(info.value)
    assert hasattr(cls, "TestCase")


def test_properties_that_hold_are_sampled_not_proved():
    m = FunctionMachine(lambda n: "?", lambda n, c: HALT, initial=0)
    result = hypothesis_check(m, properties=[halts_within(1), never_raises()], max_examples=20)
    assert result.status == "holds" and result.method == "sampled"
    v = result["halts_within(1)"].verdict
    assert v.method == "sampled" and "not a proof" in str(v)


def test_a_loop_in_one_run_is_a_lasso():
    m = FunctionMachine(lambda n: str(n), lambda n, c: (n + 1) % 3, initial=0)
    result = hypothesis_check(
        m, properties=[never_diverges()], completions=st.just("x"), max_examples=20
    )
    cx = result.counterexample("never_diverges()")
    assert cx.loop == 0 and cx.states == (0, 1, 2, 0)


def _guard(max_len):
    def program():
        history = ""
        while True:
            c = yield "history:" + history[-max_len:] if max_len else "history:" + history
            if c == "quit":
                return "bye"
            history += c

    return program


def test_adversarial_completions_find_a_growing_prompt_and_huge_inputs():
    unbounded = HarnessMachine(_guard(0), name="unbounded")
    result = hypothesis_check(
        unbounded,
        properties=[prompt_length_at_most(10_000)],
        completions=adversarial_completions(unbounded),
        max_examples=100,
        max_steps=5,
    )
    cx = result.counterexample("prompt_length_at_most(10000)")
    # The shrunk run still breaks the bound (which run Hypothesis settles on is its own).
    assert cx is not None and 1 <= len(cx) <= 5
    assert len("history:" + "".join(cx.completions)) > 10_000
    bounded = HarnessMachine(_guard(100), name="bounded")
    result = hypothesis_check(
        bounded,
        properties=[prompt_length_at_most(10_000)],
        completions=adversarial_completions(bounded),
        max_examples=30,
        max_steps=5,
    )
    assert result.status == "holds"


def test_a_counterexample_replays_through_run():
    result = hypothesis_check(
        _step3_bug(),
        properties=[halts_within(2)],
        completions=st.sampled_from(["go", "stop"]),
        max_examples=50,
    )
    cx = result.counterexample("halts_within(2)")
    assert cx.completions == ("go", "go")
    trace = run(_step3_bug(), ScriptedModel(list(cx.completions)), 0, max_steps=len(cx))
    assert trace == cx.trace()


def test_bad_arguments():
    with pytest.raises(InvalidArgument, match="at least one property"):
        hypothesis_test(_step3_bug(), properties=[])
    with pytest.raises(InvalidArgument, match="strategy"):
        hypothesis_test(_step3_bug(), properties=[never_raises()], completions=42)
