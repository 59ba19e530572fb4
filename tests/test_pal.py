"""PAL as an agentic machine: the golden episode (one program, run once), scoring,
isolation by default, the one-shot verdicts.

Golden files live in tests/golden/pal/; regenerate them with
``AGENTIC_MACHINES_UPDATE_GOLDEN=1 python -m pytest tests/test_pal.py``.
"""

from pathlib import Path

from agentic_machines import DIVERGE, HALT
from agentic_machines.architectures import pal
from agentic_machines.testing import check_golden

M = pal.machine(isolation="inline")
GOLDEN = Path(__file__).parent / "golden" / "pal"


def test_scripted_model_writes_the_program_golden_trace(solve_default_task):
    solved = solve_default_task(pal, M)
    assert solved.result == pal.PalResult("23", True)
    assert len(solved.trace) == 1  # one model call: the program runs once, unseen


def test_prompt_is_golden_and_few_shot():
    prompt = M.prompt(pal.initial)
    check_golden(GOLDEN / "prompt.txt", prompt)
    assert prompt.count("# solution in Python:\n") == 3 and prompt.count("def solution():") == 2


def test_every_program_ends_the_run_and_failures_are_scored_wrong():
    outcomes = {c: M.harness(pal.initial, c) for c in pal.valid_completions()}
    loop = "def solution():\n    while True:\n        pass\n"
    assert outcomes.pop(loop) is DIVERGE  # past the line budget
    assert set(outcomes.values()) == {HALT}
    results = {c: M.result(pal.initial, c) for c in outcomes}
    assert [r.correct for r in results.values()] == [True, False, False, False, False, True, False]
    assert results["def solution():\n    return 1 / 0\n"].error.startswith("ZeroDivisionError")


def test_default_isolation_is_strongest_and_runs_the_program():
    m = pal.machine()
    assert m.kwargs["options"].isolation in ("process", "namespace")
    assert m.harness(pal.initial, pal.SCRIPT[0]) is HALT
    assert m.result(pal.initial, pal.SCRIPT[0]) == pal.PalResult("23", True)
    # model code cannot reach the host's files
    r = m.result(pal.initial, "def solution():\n    return open('/etc/hostname').read()\n")
    assert r.answer is None and "open" in r.error


def test_analysis_refutes_at_the_initial_state_itself():
    v = pal.analysis()
    assert v.holds is False and v.method == "fact:F2" and v.conditional
    assert v.obstruction.state == pal.initial and v.premise.proof == "proofs/pal_one_shot.md"


def test_quality_planted_crash_is_outside_the_proof():
    broken = pal.machine(isolation="inline", strict_answer=True)
    assert pal.analysis(broken, n=60).holds is None
    assert pal.embeds_react(broken, n=60).holds is None


def test_react_does_not_embed():
    v = pal.embeds_react()
    assert v.holds is False and v.obstruction.kind == "prompt" and v.conditional
    assert v.method == "fact:prompt-keeping" and v.premise.tested >= 50
