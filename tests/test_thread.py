"""THREAD as an agentic machine: prompts, the solved trace, spawning, the invariant, the verdict.

Golden files live in tests/golden/thread/; regenerate them with
``AGENTIC_MACHINES_UPDATE_GOLDEN=1 python -m pytest tests/test_thread.py``.
"""

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import HALT
from agentic_machines.architectures import thread
from agentic_machines.checking.sampling import completion_strategy
from agentic_machines.models import FunctionModel, ScriptedModel
from agentic_machines.runtime.run import run
from agentic_machines.strategies import examples
from agentic_machines.testing import check_golden, render_trace

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
    # a #START# retry repeats the initial prompt, so x itself is no obstruction any more
    assert v.details["initial_state"].holds is None
    assert thread.machine(start_fix=False).prompt(thread.initial) == M.prompt(thread.initial)


# -- variables: `name = value` lines, {name} placeholders, print(name) -----------------------
VARIABLES_SCRIPT = [
    'landmark = "Eiffel Tower"\nFind the city where the {landmark} stands=>',
    "> search[{landmark}]=>",  # the child reads the root's variable: one shared namespace
    'city = "Paris"\nprint(city)\n#END#',
    "> search[{city}]=>",  # the root reads the child's variable
    "> lookup[river]=>",
    'river = "Seine"\nprint(river)\n#END#',
]


def test_variables_fill_placeholders_golden():
    m = thread.machine()
    trace = run(m, ScriptedModel(VARIABLES_SCRIPT))
    last = trace.steps[-1]
    result = m.result(last.state, last.completion)
    assert trace.end is HALT and result == thread.ThreadResult("Seine", "end", 6)
    # φ filled the sub-task; the actions were filled; ψ printed the child's variable
    assert thread.is_fresh_child_prompt(trace.steps[1].prompt)
    assert "Prompt:\nFind the city where the Eiffel Tower stands=>\n" in trace.steps[1].prompt
    assert "=>The Eiffel Tower is a wrought-iron" in trace.steps[2].prompt
    assert "stands=>Paris<=\n\n" in trace.steps[3].prompt
    assert "> search[{city}]=>Paris is the capital" in trace.steps[4].prompt
    check_golden(GOLDEN / "variables.txt", render_trace(trace, result))


def test_unassigned_placeholders_and_non_literals_stay_as_written():
    v: dict = {}
    for line in ["x = compute()", "y = 1 + 2", "z = 'a'", "w = z"]:
        thread.assign(line, v)
    assert v == {"z": "a", "w": "a"}
    assert thread.fill("{x} {z}{w}", v) == "{x} aa"


# -- the #START# fix ------------------------------------------------------------------------
ROOT_STEPS = [thread.SCRIPT[0], thread.SCRIPT[3], thread.SCRIPT[4], thread.SCRIPT[5]]
CHILD_STEPS = [thread.SCRIPT[1], thread.SCRIPT[2]]


def looping_policy(prompt: str) -> str:
    """After every observation, start the response again with #START# (the GPT-4o-mini
    failure the REPL-Plan paper reports), unless the prompt carries the don't-loop line."""
    told = prompt.endswith(thread.DONT_LOOP)
    base = prompt[: -len(thread.DONT_LOOP)] if told else prompt
    context = base.rsplit("\nPrompt:\n", 1)[1].split("\n\n\nResponse:", 1)[0]
    response = base.rsplit("#START#\n", 1)[1]
    steps = ROOT_STEPS if context == thread.TOY_QUESTION else CHILD_STEPS
    if response.endswith("<=\n\n") and not told:
        return "#START#\n" + steps[0]
    return steps[response.count("<=\n\n")]


def test_start_fix_recovers_a_looping_policy_golden():
    m = thread.machine()
    trace = run(m, FunctionModel(looping_policy))
    last = trace.steps[-1]
    result = m.result(last.state, last.completion)
    # 6 useful calls, and after each of the 4 observations one plain retry and one with the note
    assert trace.end is HALT and result == thread.ThreadResult("Seine", "end", 14)
    prompts = [step.prompt for step in trace.steps]
    for k, step in enumerate(trace.steps[:-1]):
        if "#START#" in step.completion:
            nxt = prompts[k + 1]
            assert nxt in (step.prompt, step.prompt + thread.DONT_LOOP)
    assert sum(p.endswith(thread.DONT_LOOP) for p in prompts) == 4
    check_golden(GOLDEN / "start_fix.txt", render_trace(trace, result))


def test_without_the_start_fix_the_same_policy_loops_to_the_budget():
    m = thread.machine(start_fix=False)
    trace = run(m, FunctionModel(looping_policy))
    last = trace.steps[-1]
    assert m.result(last.state, last.completion) == thread.ThreadResult(None, "budget", 30)
    assert trace.steps[-1].prompt.count("#START#") > 10  # the response keeps restarting


def test_start_fix_option_is_checked():
    import pytest

    from agentic_machines.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="start_fix must be True or False"):
        thread.machine(start_fix="yes")
