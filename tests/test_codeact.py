"""CodeAct as an agentic machine: the golden episode (look, a typo whose error comes back,
the fix), observations, the reminder, isolation by default, the verdicts.

Golden files live in tests/golden/codeact/; regenerate them with
``AGENTIC_MACHINES_UPDATE_GOLDEN=1 python -m pytest tests/test_codeact.py``.
"""

from _helpers import reachable
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import HALT
from agentic_machines.architectures import codeact
from agentic_machines.checking.sampling import completion_strategy
from agentic_machines.runtime.local_models import ScriptedModel
from agentic_machines.runtime.run import run
from agentic_machines.strategies import examples

M = codeact.machine(isolation="inline")


def test_scripted_model_solves_the_household_golden_trace(solve_default_task):
    solved = solve_default_task(codeact, M)
    assert solved.result == codeact.CodeActResult(None, True, 3)
    second_observation = solved.trace.steps[2].prompt
    assert "NameError: name 'acts' is not defined" in second_observation  # fed back
    assert "You put the apple 1 in/on the sidetable 1." in second_observation


def test_the_namespace_persists_across_turns():
    s = M.harness(codeact.initial, "<execute>\nx = 41\n</execute>")
    s = M.harness(s, "<execute>\nprint(x + 1)\n</execute>")
    assert M.prompt(s).endswith("Observation:\n42\n\nYou have 6 steps left.\n")


def test_reminder_solution_and_turn_limit():
    s = M.harness(codeact.initial, "Hmm.")
    assert codeact.REMINDER in M.prompt(s) and codeact.steps_left(M.prompt(s)) == 7
    assert M.harness(s, "<solution>two apples</solution>") is HALT
    assert M.result(s, "<solution>two apples</solution>") == codeact.CodeActResult(
        "two apples", False, 2
    )
    trace = run(codeact.machine(isolation="inline", max_turns=2), ScriptedModel(["a", "b"]))
    assert trace.end is HALT and len(trace) == 2


def test_output_is_cut_and_default_isolation_is_strongest():
    s = M.harness(codeact.initial, "<execute>\nprint('x' * 5000)\n</execute>")
    assert len(M.prompt(s)) < len(M.prompt(codeact.initial)) + 2_400
    m = codeact.machine()
    assert m.kwargs["options"].isolation in ("process", "namespace")
    s = m.harness(codeact.initial, codeact.SCRIPT[0])
    assert "You are in the kitchen." in m.prompt(s)


def replies() -> st.SearchStrategy[str]:
    return completion_strategy(codeact.valid_completions() + list(codeact.SCRIPT), text_size=30)


@settings(max_examples=examples(15, 400), deadline=None)
@given(reachable(M, replies(), 4), replies())
def test_successor_prompt_invariant_and_totality(step_keeps_invariant, state, c):
    step_keeps_invariant(codeact, M, state, c)


def test_analysis_refutes_two_turns_deep():
    v = codeact.analysis()
    assert v.holds is False and v.method == "fact:F2" and v.conditional
    assert codeact.steps_left(M.prompt(v.obstruction.state)) == codeact.DEFAULT_MAX_TURNS - 2


def test_quality_planted_free_chat_is_outside_the_proof():
    broken = codeact.machine(isolation="inline", count_chat=False)
    s = broken.harness(codeact.initial, "Hmm.")
    assert codeact.steps_left(broken.prompt(s)) == codeact.DEFAULT_MAX_TURNS  # no step used
    assert codeact.analysis(broken, n=60).holds is None


def test_react_does_not_embed():
    v = codeact.embeds_react()
    assert v.holds is False and v.obstruction.kind == "prompt" and v.conditional
