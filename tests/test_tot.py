"""Tree of Thoughts as an agentic machine: the golden BFS episode, a DFS episode that
backtracks, step validation, the verdicts.

Golden files live in tests/golden/tot/; regenerate them with
``AGENTIC_MACHINES_UPDATE_GOLDEN=1 python -m pytest tests/test_tot.py``.
"""

from fractions import Fraction

import pytest
from _helpers import reachable
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import HALT
from agentic_machines.architectures import tot
from agentic_machines.checking.sampling import completion_strategy
from agentic_machines.errors import InvalidArgument
from agentic_machines.runtime.local_models import ScriptedModel
from agentic_machines.runtime.run import run
from agentic_machines.strategies import examples

M = tot.machine()
SOLUTION = ("9 - 8 = 1 (left: 1 4 6)", "4 * 6 = 24 (left: 1 24)", "24 * 1 = 24 (left: 24)")


def test_scripted_bfs_solves_the_puzzle_golden_trace(solve_default_task):
    solved = solve_default_task(tot, M)
    assert solved.result == tot.TotResult(SOLUTION, 5)
    shown = [tot.numbers_shown(s.prompt) for s in solved.trace.steps]
    assert shown == [4, 3, 3, 3, 2, 2, 2, 1]


def test_dfs_backtracks_from_a_dead_end_and_prunes_impossible():
    script = [
        tot.SCRIPT[0],
        "likely",  # 1 4 6
        "sure",  # 2 4 9: judged best, explored first
        "2 + 4 = 6 (left: 6 9)",
        "impossible",  # pruned: a dead end, back to 1 4 6
        "4 * 6 = 24 (left: 1 24)",
        "sure",
        "24 * 1 = 24 (left: 24)",
        "sure",
    ]
    m = tot.machine(search="dfs")
    trace = run(m, ScriptedModel(script))
    assert trace.end is HALT and len(trace) == len(script)
    last = trace.steps[-1]
    assert m.result(last.state, last.completion) == tot.TotResult(SOLUTION, 5)
    assert [tot.numbers_shown(s.prompt) for s in trace.steps][3:6] == [3, 2, 3]  # backtracked


def test_invalid_and_duplicate_steps_are_dropped():
    root = tuple(Fraction(n) for n in (4, 6, 8, 9))
    assert tot.parse_step("4 * 6 = 25 (left: 8 9 25)", root) is None
    assert tot.parse_step("4 * 4 = 16 (left: 6 8 9 16)", root) is None
    s = M.harness(tot.initial, "9 - 8 = 1 (left: 1 4 6)\n9 - 8 = 1 (left: 1 4 6)\nnonsense")
    assert tot.numbers_shown(M.prompt(s)) == 3
    assert M.harness(s, "sure") is not HALT  # one value call only: the next level's propose
    assert M.prompt(M.harness(s, "sure")).startswith(tot.PROPOSE_HEADER)


def test_bad_options_are_clear_errors():
    for bad in (dict(search="beam"), dict(breadth=0), dict(numbers=(4,))):
        with pytest.raises(InvalidArgument):
            tot.machine(**bad)


def replies() -> st.SearchStrategy[str]:
    return completion_strategy(tot.valid_completions() + list(tot.SCRIPT))


DFS = tot.machine(search="dfs")


@settings(max_examples=examples(30, 600))
@given(
    st.sampled_from([M, DFS]).flatmap(lambda m: st.tuples(st.just(m), reachable(m, replies(), 8))),
    replies(),
)
def test_successor_prompt_invariant_and_totality(step_keeps_invariant, pair, c):
    machine, state = pair
    step_keeps_invariant(tot, machine, state, c)


def test_analysis_and_react():
    for m in (M, DFS):
        v = tot.analysis(m)
        assert v.holds is False and v.method == "fact:F2" and v.conditional
    assert tot.embeds_react().holds is False


def test_quality_a_search_that_revisits_is_outside_the_proof():
    assert tot.analysis(tot.machine(search="dfs", revisit=True), n=60).holds is None
