"""AdaPlanner as an agentic machine: the golden episode (a plan with an in-plan question,
an assertion that fails, a revised plan resumed at step 2), the refinement bound,
isolation by default, the verdicts.

Golden files live in tests/golden/adaplanner/; regenerate them with
``AGENTIC_MACHINES_UPDATE_GOLDEN=1 python -m pytest tests/test_adaplanner.py``.
"""

from agentic_machines import HALT
from agentic_machines.architectures import adaplanner
from agentic_machines.runtime.local_models import ScriptedModel
from agentic_machines.runtime.run import run

M = adaplanner.machine(isolation="inline")
FAIL = adaplanner.valid_completions()[0]


def test_scripted_model_refines_and_resumes_golden_trace(solve_default_task):
    solved = solve_default_task(adaplanner, M)
    assert solved.result == adaplanner.AdaPlannerResult(True, 1, 1)
    kinds = [adaplanner.prompt_kind(s.prompt) for s in solved.trace.steps]
    assert kinds == ["plan", "ask", "refine"]
    refine = solved.trace.steps[2].prompt
    assert "Feedback: AssertionError: Error in [Step 2]" in refine
    assert "> put apple 1 in/on sidetable 1\n> go to cabinet 2\n" in refine  # done, kept


def test_resume_skips_the_steps_already_done():
    m = adaplanner.machine(isolation="inline")
    s = m.harness(m.harness(adaplanner.initial, adaplanner.SCRIPT[0]), adaplanner.SCRIPT[1])
    whole = adaplanner.SCRIPT[0].replace(
        "obs = act('go to cabinet 2')",
        "act('go to cabinet 2')\n        obs = act('open cabinet 2')",
    )
    # resumed at step 2, step 1 (with its in-plan question) does not run again
    assert m.harness(s, "# resume from step 2\n" + whole) is HALT
    again = m.harness(s, "# resume from step 1\n" + whole)
    assert adaplanner.prompt_kind(m.prompt(again)) == "ask"  # step 1 runs: a new question


def test_the_refinement_bound_ends_the_episode():
    trace = run(
        adaplanner.machine(isolation="inline", max_refinements=2), ScriptedModel([FAIL] * 3)
    )
    assert trace.end is HALT and len(trace) == 3
    last = trace.steps[-1]
    assert adaplanner.machine(isolation="inline", max_refinements=2).result(
        last.state, last.completion
    ) == adaplanner.AdaPlannerResult(False, 2, 0)


def test_default_isolation_is_strongest():
    m = adaplanner.machine()
    assert m.kwargs["options"].isolation in ("process", "namespace")
    s = m.harness(adaplanner.initial, adaplanner.SCRIPT[0])
    assert adaplanner.prompt_kind(m.prompt(s)) == "ask"


def test_verdicts():
    v = adaplanner.analysis()
    assert v.holds is False and v.method == "fact:F2" and v.conditional
    assert adaplanner.refinement_count(M.prompt(v.obstruction.state)) == 2
    assert adaplanner.embeds_react().holds is False
    assert (
        adaplanner.analysis(adaplanner.machine(isolation="inline", max_refinements=None)).holds
        is None
    )
