"""ReAct as an agentic machine: prompts, the solved trace, the invariant, the verdict.

Golden files live in tests/golden/react/; regenerate them with
``AGENTIC_MACHINES_UPDATE_GOLDEN=1 python -m pytest tests/test_react.py``.
"""

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import HALT, TraceState, is_sentinel
from agentic_machines.architectures import react
from agentic_machines.checking.sampling import CONTROL_WORDS, completion_strategy
from agentic_machines.models import ScriptedModel
from agentic_machines.runtime.run import run
from agentic_machines.strategies import examples
from agentic_machines.testing import check_golden

GOLDEN = Path(__file__).parent / "golden" / "react"
M = react.machine()


def completions_at(step: int) -> st.SearchStrategy[str]:
    valid = react.valid_completions(step) + list(react.SCRIPT)
    return completion_strategy(valid, extra=["x" * 50_000, "\nObservation 1:" * 100])


@st.composite
def reachable_states(draw):
    """A state reached from the initial state by 0..9 drawn completions."""
    state = react.initial
    for _ in range(draw(st.integers(0, 9))):
        k = react.step_label(M.prompt(state)) or 1
        nxt = M.harness(state, draw(completions_at(k)))
        if is_sentinel(nxt):
            break
        state = nxt
    return state


def test_initial_and_fallback_prompts_are_golden():
    p0 = M.prompt(react.initial)
    fix = M.harness(react.initial, " I am not sure.\nno action here")
    text = (
        "== initial prompt ==\n"
        + p0
        + "\n== fallback prompt after ' I am not sure.\\nno action here' ==\n"
        + M.prompt(fix)
    )
    check_golden(GOLDEN / "prompts.txt", text)
    assert M.prompt(fix) == p0 + " I am not sure.\nAction 1:"


def test_scripted_model_solves_the_task_golden_trace(solve_default_task):
    assert solve_default_task(react, M).result == react.ReactResult("Seine", 1, 4)


def test_stop_sequence_drops_model_written_observations():
    s = M.harness(react.initial, " go\nAction 1: Search[Seine]\nObservation 1: I made this up")
    assert "I made this up" not in M.prompt(s)
    assert "Observation 1: The Seine is a river in northern France." in M.prompt(s)


def test_fallback_makes_a_second_call_cut_at_newline():
    fix = M.harness(react.initial, "thinking\nmore thinking")
    s = M.harness(fix, " Search[Paris]\nignored line")
    assert (
        "Thought 1: thinking\nAction 1: Search[Paris]\nObservation 1: Paris is the capital"
        in M.prompt(s)
    )
    assert "ignored line" not in M.prompt(s)


def test_seven_steps_then_forced_finish():
    script = [f" step\nAction {i}: Search[Paris]" for i in range(1, 8)]
    trace = run(M, ScriptedModel(script))
    assert trace.end is HALT and len(trace) == 7
    assert M.result(trace.steps[-1].state, script[-1]) == react.ReactResult("", 0, 7, forced=True)


def test_empty_action_ends_the_run_with_the_crash_recorded():
    fix = M.harness(react.initial, "no action")
    assert M.harness(fix, "   ") is HALT
    assert "IndexError" in M.result(fix, "   ").error


def test_wrong_answer_gets_reward_zero():
    s = M.harness(react.initial, " guess\nAction 1: Finish[Thames]")
    assert s is HALT and M.result(react.initial, " guess\nAction 1: Finish[Thames]").reward == 0


@settings(max_examples=examples(100, 2000))
@given(reachable_states(), st.data())
def test_successor_prompt_invariant_and_totality(step_keeps_invariant, state, data):
    c = data.draw(completions_at(react.step_label(M.prompt(state)) or 1))
    step_keeps_invariant(react, M, state, c)


def test_analysis_refutes_with_a_reachable_state():
    v = react.analysis()
    assert v.holds is False and v.method == "fact:F2" and v.checked == 300
    s = v.obstruction.state
    assert s == react.initial.then(react.SCRIPT[0]).then(react.SCRIPT[1])
    assert M.prompt(s).endswith("Thought 3:")
    assert "proofs/react_invariant.md" in v.obstruction.explanation
    at_x = v.details["initial_state"]
    assert at_x.holds is False and at_x.obstruction.state == react.initial


def test_quality_reset_variant_is_not_wrongly_refuted():
    broken = react.machine(reset="RESET")
    assert broken.harness(
        broken.harness(broken.initial, " a\nAction 1: Search[Paris]"), "RESET"
    ) == TraceState((" a\nAction 1: Search[Paris]", "RESET"))
    v = react.analysis(broken)
    assert v.holds is None and "premise refuted" in v.reason


@pytest.mark.parametrize("word", ["please start over", "xyzzy"])
def test_quality_reset_word_outside_the_control_words_is_found(word):
    # Random strings would not hit an arbitrary trigger word; the sample adds the harness's
    # own string constants (its code and its arguments), so the planted reset is tried.
    assert word not in CONTROL_WORDS
    v = react.analysis(react.machine(reset=word))
    assert v.holds is None and "premise refuted" in v.reason and repr(word) in v.reason


def test_quality_reset_literal_in_the_harness_code_is_found():
    from agentic_machines import HarnessMachine
    from agentic_machines.architectures._invariants import refute_by_invariant
    from agentic_machines.checking.sampling import completion_sample, harness_strings

    def program():
        transcript = "Q\n"
        while True:
            c = yield transcript + "A:"
            transcript = "Q\n" if c == "begin anew" else transcript + "A:" + c + "\n"

    m = HarnessMachine(program, name="grow+reset")
    grows = lambda p, q: len(q) > len(p) and q.startswith(p)  # noqa: E731
    kwargs = dict(
        deep_script=[],
        invariant=grows,
        invariant_text="grows",
        proof="proofs/F3_prompt_monotone.md",
    )
    blind = refute_by_invariant(m, m.initial, completions=completion_sample(["x"], n=80), **kwargs)
    assert blind.holds is False  # what the fixed sample alone would claim: wrongly refuted
    v = refute_by_invariant(
        m, m.initial, completions=completion_sample(["x"] + harness_strings(m), n=80), **kwargs
    )
    assert v.holds is None and "'begin anew'" in v.reason
