"""SPE as an architecture: the seed prompt, the solved trace, totality, the verdicts.

Golden files live in tests/golden/spe/; regenerate them with
``AGENTIC_MACHINES_UPDATE_GOLDEN=1 python -m pytest tests/test_spe_arch.py``.
"""

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import DIVERGE, HALT
from agentic_machines.architectures import spe
from agentic_machines.cek import Boundary, first_boundary, loader
from agentic_machines.checking.sampling import completion_strategy
from agentic_machines.strategies import examples
from agentic_machines.testing import check_golden

GOLDEN = Path(__file__).parent / "golden" / "spe"
M = spe.machine()

completions = completion_strategy(
    list(spe.SAMPLE_COMPLETIONS) + list(spe.SAMPLE_PROGRAMS) + list(spe.SCRIPT),
    text_size=40,
    cut=80,
)


def test_prompts_are_golden():
    beta = M.harness(spe.initial, spe.SCRIPT[0])
    check_golden(
        GOLDEN / "prompts.txt",
        "== x* ==\n"
        + M.prompt(spe.initial)
        + "\n== after the first completion ==\n"
        + M.prompt(beta),
    )


def test_scripted_model_solves_the_task_golden_trace(solve_default_task):
    solved = solve_default_task(spe, M, result=lambda m: m.last_record.value)
    assert solved.result == "The river is the Seine"


@settings(max_examples=examples(100, 2000))
@given(st.sampled_from(spe.sample_states(depth=1)), completions)
def test_harness_is_total(state, c):
    y = M.harness(state, c)
    assert y is HALT or y is DIVERGE or type(y) is Boundary


@settings(max_examples=examples(60, 1000))
@given(st.sampled_from(spe.sample_states()))
def test_loader_loads_every_sampled_state_from_the_seed(beta):
    assert M.harness(spe.initial, loader(beta)) == beta


def test_seed_program_loads_the_seed_itself():
    assert M.harness(spe.initial, spe.diagram_completions("")[-1]) == spe.initial


def test_analysis_holds_sampled_with_a_witness():
    v = spe.analysis()
    assert v.holds is True and v.method == "sampled" and v.witness is not None
    assert v.details["states_checked"] >= 40


def test_non_spe_state_inside_spe_is_refuted_by_cardinality():
    v = spe.non_spe_state()
    assert v.holds is False and v.method == "fact:F5"
    assert v.obstruction.kind == "cardinality"
    assert first_boundary(spe.NON_SPE_PROGRAM).prompt == "a"
