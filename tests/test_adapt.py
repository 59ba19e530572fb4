"""ADaPT as an agentic machine: the golden episode (the executor fails, the planner
splits the task, the executor does each step), AND/OR plans, the depth limit, the
verdicts.

Golden files live in tests/golden/adapt/; regenerate them with
``AGENTIC_MACHINES_UPDATE_GOLDEN=1 python -m pytest tests/test_adapt.py``.
"""

from _helpers import reachable
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import HALT
from agentic_machines.architectures import adapt
from agentic_machines.checking.sampling import completion_strategy
from agentic_machines.runtime.local_models import ScriptedModel
from agentic_machines.runtime.run import run
from agentic_machines.strategies import examples

M = adapt.machine()
FAIL = " task failed"
PLAN = "Step 1: first part\nStep 2: second part\nExecution order: Step 1 {op} Step 2"


def test_scripted_model_decomposes_as_needed_golden_trace(solve_default_task):
    solved = solve_default_task(adapt, M)
    assert solved.result == adapt.AdaptResult(True, True, 1)
    kinds = [adapt.prompt_kind(s.prompt) for s in solved.trace.steps]
    assert kinds.count("planner") == 1 and kinds[3] == "planner"  # only after the failure
    assert solved.trace.steps[4].prompt.endswith(
        "Your task is to: put apple 1 in/on sidetable 1\n> "
    )


def _result(m, script):
    trace = run(m, ScriptedModel(script))
    last = trace.steps[-1]
    return trace, m.result(last.state, last.completion)


def test_and_stops_at_the_first_failure_or_at_the_first_success():
    trace, r = _result(M, [FAIL, PLAN.format(op="AND"), FAIL, FAIL, "no plan"])
    assert trace.end is HALT and r == adapt.AdaptResult(False, False, 1)
    trace, r = _result(M, [FAIL, PLAN.format(op="OR"), FAIL, "no plan", " task completed"])
    assert trace.end is HALT and r == adapt.AdaptResult(True, False, 1)


def test_depth_limit_and_executor_budget():
    m = adapt.machine(max_depth=1, executor_steps=2)
    same = "Step 1: put 2 apple in/on sidetable 1\nExecution order: Step 1"
    trace, r = _result(m, [" look", " look", same, FAIL])  # out of actions, then d_max
    assert r == adapt.AdaptResult(False, False, 1) and len(trace) == 4


def test_parse_plan_rejects_mixed_or_misnumbered_orders():
    assert adapt.parse_plan("Step 1: a\nStep 2: b\nExecution order: Step 1 AND Step 2") == (
        ["a", "b"],
        "AND",
    )
    assert adapt.parse_plan("Step 1: a\nStep 3: b\nExecution order: Step 1 AND Step 3") is None
    assert adapt.parse_plan("Step 1: a\nStep 2: b\nExecution order: Step 2 AND Step 1") is None


def replies() -> st.SearchStrategy[str]:
    return completion_strategy(adapt.valid_completions() + list(adapt.SCRIPT))


@settings(max_examples=examples(30, 1000))
@given(reachable(M, replies(), 10), replies())
def test_successor_prompt_invariant_and_totality(step_keeps_invariant, state, c):
    step_keeps_invariant(adapt, M, state, c)


def test_analysis_and_react():
    v = adapt.analysis()
    assert v.holds is False and v.method == "fact:F2" and v.conditional
    assert adapt.actions_in(M.prompt(v.obstruction.state)) == 2
    e = adapt.embeds_react()
    assert e.holds is False and e.obstruction.kind == "prompt"


def test_quality_no_depth_limit_is_outside_the_proof():
    assert adapt.analysis(adapt.machine(max_depth=None), n=60).holds is None
