"""Reflexion as an agentic machine: the golden episode (fail, reflect, succeed), the
memory window, the invariant, the SPE verdict and the ReAct embedding verdicts.

Golden files live in tests/golden/reflexion/; regenerate them with
``AGENTIC_MACHINES_UPDATE_GOLDEN=1 python -m pytest tests/test_reflexion.py``.
"""

from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import HALT, is_sentinel
from agentic_machines.architectures import react, reflexion
from agentic_machines.architectures._invariants import reach
from agentic_machines.checking.sampling import completion_strategy
from agentic_machines.errors import InvalidArgument
from agentic_machines.runtime.local_models import ScriptedModel
from agentic_machines.runtime.run import run
from agentic_machines.strategies import examples

M = reflexion.machine()
WRONG = " A guess.\nAction 1: Finish[Thames]"


def test_scripted_model_fails_reflects_and_solves_golden_trace(solve_default_task):
    solved = solve_default_task(reflexion, M)
    assert solved.result == reflexion.ReflexionResult(
        "Seine", 1, 2, (" ".join(reflexion.SCRIPT[2].split()),)
    )
    prompts = [s.prompt for s in solved.trace.steps]
    kinds = [reflexion.prompt_kind(p) for p in prompts]
    assert kinds == ["actor", "actor", "reflect"] + ["actor+memory"] * 4
    # the reflection prompt shows the failed trajectory, with the environment's verdict
    assert "Action 2: Finish[Paris]\nObservation 2: Episode finished, reward = 0" in prompts[2]
    # the second trial starts afresh (short-term memory) with the reflection (long-term)
    assert (
        "Thought 1: I need to find the city" not in prompts[3]
        and "- I answered with the city" in prompts[3]
    )


def test_first_trial_prompts_are_reacts():
    r = react.machine()
    s, t = reflexion.initial, react.initial
    for c in react.SCRIPT[:3]:
        assert M.prompt(s) == r.prompt(t)
        s, t = M.harness(s, c), r.harness(t, c)


def test_memory_is_a_sliding_window_of_reflections():
    m = reflexion.machine(max_trials=4, memory_size=2)
    script = [WRONG, "first lesson", WRONG, "second\nlesson", WRONG, "third lesson", WRONG]
    trace = run(m, ScriptedModel(script))
    assert trace.end is HALT
    last = trace.steps[-1]
    result = m.result(last.state, last.completion)
    assert result == reflexion.ReflexionResult("Thames", 0, 4, ("second lesson", "third lesson"))
    assert (
        "- first lesson" not in last.prompt and "- second lesson\n- third lesson\n" in last.prompt
    )


def test_no_reflection_after_the_last_trial_and_step_limit_counts_as_failure():
    m = reflexion.machine(max_trials=2, max_steps=1)
    s = m.harness(reflexion.initial, " look\nAction 1: Search[Paris]")  # step limit: failure
    assert reflexion.prompt_kind(m.prompt(s)) == "reflect"
    s = m.harness(s, "Finish faster.")
    assert m.harness(s, WRONG) is HALT  # the second (last) trial: no reflection
    assert m.result(s, WRONG) == reflexion.ReflexionResult("Thames", 0, 2, ("Finish faster.",))


def test_bad_options_are_clear_errors():
    for bad in (dict(max_trials=0), dict(memory_size=True), dict(max_trials="3")):
        try:
            reflexion.machine(**bad)
        except InvalidArgument as exc:
            assert "must be an integer >= 1" in str(exc)
        else:
            raise AssertionError(bad)


@st.composite
def reachable(draw):
    state = reflexion.initial
    for _ in range(draw(st.integers(0, 8))):
        nxt = M.harness(state, draw(step_completions(M.prompt(state))))
        if is_sentinel(nxt):
            break
        state = nxt
    return state


def step_completions(prompt: str) -> st.SearchStrategy[str]:
    k = react.step_label(prompt) or 1
    valid = react.valid_completions(k) + list(reflexion.SCRIPT) + [WRONG.replace("1", str(k))]
    return completion_strategy(valid, extra=["x" * 20_000])


@settings(max_examples=examples(40, 1000))
@given(reachable(), st.data())
def test_successor_prompt_invariant_and_totality(step_keeps_invariant, state, data):
    c = data.draw(step_completions(M.prompt(state)))
    step_keeps_invariant(reflexion, M, state, c)


def test_analysis_refutes_at_the_memory_free_third_step():
    v = reflexion.analysis()
    assert v.holds is False and v.method == "fact:F2" and v.conditional
    assert v.obstruction.state == reach(M, reflexion.initial, react.SCRIPT[:2])
    assert v.premise.proof == "proofs/reflexion_invariant.md"


def test_quality_a_reflection_that_never_fires_is_not_refuted():
    broken = reflexion.machine(reflect=False)
    s = broken.harness(reflexion.initial, WRONG)  # failed trial 1: straight to trial 2
    assert reflexion.prompt_kind(broken.prompt(s)) == "actor"
    v = reflexion.analysis(broken)
    assert v.holds is None and "reflect=False" in v.reason
    assert reflexion.embeds_react(broken).holds is None


def test_embeds_react_refuted_with_trials_and_holds_with_one():
    v = reflexion.embeds_react()
    assert v.holds is False and v.obstruction.kind == "commutation"
    assert v.obstruction.state == react.initial and v.checked >= 20
    assert react.machine().harness(react.initial, v.obstruction.completion) is HALT
    assert reflexion.prompt_kind(M.prompt(M.harness(M.initial, v.obstruction.completion))) == (
        "reflect"
    )
    one = reflexion.embeds_react(reflexion.machine(max_trials=1))
    assert one.holds is True and one.method == "sampled" and one.checked > 1000
