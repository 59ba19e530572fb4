"""THREAD as an agentic machine: prompts, the solved trace, spawning, the invariant, the verdict.

Golden files live in tests/golden/thread/; regenerate them with
``AGENTIC_MACHINES_UPDATE_GOLDEN=1 python -m pytest tests/test_thread.py``.
"""

from pathlib import Path

from agentic_machines.models import ScriptedModel
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import HALT
from agentic_machines.architectures import thread
from agentic_machines.architectures.goldens import check_golden
from agentic_machines.architectures.sampling import completion_strategy
from agentic_machines.runtime.run import run
from agentic_machines.strategies import examples

GOLDEN = Path(__file__).parent / "golden" / "thread"
M = thread.machine()
VALID = thread.valid_completions() + list(thread.SCRIPT)

completions = completion_strategy(VALID, cut=40, extra=["y" * 50_000, "=>" * 1000, "\n" * 500])
# Completions that keep the root thread running (actions), so states stay in the root thread.
root_steps = st.sampled_from(
    ["> search[Paris]=>", "> lookup[river]=>", "> dance=>", "> search[Nowhere]=>"]
)


@st.composite
def root_states(draw):
    state = thread.initial
    for _ in range(draw(st.integers(0, 6))):
        state = M.harness(state, draw(root_steps))
    return state


def test_initial_and_child_prompts_are_golden():
    child = M.harness(thread.initial, thread.SCRIPT[0])
    text = (
        "== initial prompt ==\n"
        + M.prompt(thread.initial)
        + "\n== child prompt ==\n"
        + M.prompt(child)
    )
    check_golden(GOLDEN / "prompts.txt", text)
    assert thread.is_fresh_child_prompt(M.prompt(child))


def test_scripted_model_solves_the_task_golden_trace(solve_default_task):
    trace, result = solve_default_task(thread, M)
    assert result == thread.ThreadResult("Seine", "end", 6)
    # ψ spliced the child's printed answer into the root's response
    assert "Find the city where the Eiffel Tower stands=>Paris<=\n\n" in trace.steps[3].prompt


def test_global_budget_stops_every_thread():
    m = thread.machine(max_calls=4)
    trace = run(m, ScriptedModel(["sub=>"] * 4))  # each generation spawns a deeper child
    assert trace.end is HALT and len(trace) == 4
    assert m.result(trace.steps[-1].state, "sub=>") == thread.ThreadResult(None, "budget", 4)


def test_environment_done_stops_every_thread():
    s = M.harness(thread.initial, "Answer it=>")
    assert M.harness(s, "> finish[Seine]=>") is HALT
    assert M.result(s, "> finish[Seine]=>") == thread.ThreadResult("Seine", "done", 2)


@settings(max_examples=examples(100, 2000))
@given(root_states(), completions)
def test_root_successor_prompt_invariant_and_totality(step_keeps_invariant, state, c):
    step_keeps_invariant(thread, M, state, c)


@settings(max_examples=examples(50, 1000))
@given(st.lists(completions, max_size=8))
def test_harness_is_total_on_any_trace(follow_completions, cs):
    follow_completions(M, thread.initial, cs)


def test_analysis_refutes_with_a_child_state():
    v = thread.analysis()
    assert v.holds is False and v.method == "fact:F2" and v.checked == 300
    s = v.obstruction.state
    assert s == thread.initial.then(thread.SCRIPT[0]).then(thread.SCRIPT[1])
    assert "Prompt:\nFind the city where the Eiffel Tower stands=>" in M.prompt(s)
    assert v.details["initial_state"].holds is False
