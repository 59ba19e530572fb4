"""Shared test configuration: Hypothesis profiles, the ``slow`` marker, and the
architecture tests' shared preamble.

``ci`` (the default) keeps the whole suite under five minutes on two cores and is
derandomized, so a CI run is reproducible; ``thorough`` runs many more examples for
releases: ``HYPOTHESIS_PROFILE=thorough pytest``.
"""

import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import pytest
from hypothesis import HealthCheck, settings

from agentic_machines import HALT, AgenticMachine, Trace, is_sentinel, run

# Support modules beside the tests (attack_corpus.py, attack_suite.py) import each other by
# name; --doctest-modules imports them too, before any test module could set the path.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from agentic_machines.testing import check_golden, render_trace

settings.register_profile(
    "ci",
    max_examples=100,
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",
    max_examples=2_000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# -- the slow marker --------------------------------------------------------------------------


def run_slow_tests() -> bool:
    """Tests marked ``slow`` run under the thorough profile and in CI (``CI`` set)."""
    ci = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
    return ci or os.environ.get("HYPOTHESIS_PROFILE") == "thorough"


# The longest tests of the README's command, marked slow here by their measured time (issue
# 39: that command must stay under three minutes on a quiet two-core machine). Each took 25 s
# or more of a serial run of the whole suite (3.12, `--durations`, a loaded machine: about
# four times a quiet one's); CI and the thorough profile still run them. One list, because
# some are parameters of a shared test or doctests, where no decorator can go.
SLOW_BY_MEASUREMENT = frozenset(
    {
        "tests/test_agent_machine.py::test_a_long_linear_run_and_replays_agree",
        "tests/test_docs.py::test_markdown_examples_run[docs/tutorial/05_architectures.md]",
        "tests/test_docs.py::test_markdown_examples_run[proofs/reflexion_invariant.md]",
        "tests/test_docs.py::test_markdown_examples_run[docs/openai-agents.md]",
        "tests/test_docs.py::test_markdown_examples_run[docs/contrast.md]",
        "tests/test_planted_bugs.py::test_the_command_line_test_finds_the_agent_bugs_and_they_replay[hypothesis-unknown_item]",
        "tests/test_reflexion.py::test_embeds_react_refuted_with_trials_and_holds_with_one",
        "tests/test_cli.py::test_demo",
        "tests/test_stop_early.py::test_four_properties_with_one_step_counterexamples_stop_after_the_first_level",
        "tests/test_soundness.py::test_analysis_of_a_wrapped_harness_is_never_a_refutation[repl_plan]",
        "tests/test_soundness.py::test_analysis_of_a_wrapped_harness_is_never_a_refutation[rlm]",
        "agentic_machines/architectures/reflexion.py::agentic_machines.architectures.reflexion.embeds_react",
        "tests/test_gallery.py::test_every_picture_fits_a_16_9_slide_1920_pixels_wide",
        "tests/test_pytest_plugin.py::test_a_failing_agent_is_reported_saved_run_first_and_passes_once_fixed",
        "tests/test_pytest_plugin.py::test_options_and_off_switch",
        "tests/test_adapt.py::test_successor_prompt_invariant_and_totality",
        # The two gallery doctests redraw what tests/test_gallery.py's fixture draws in every
        # run (draw_gallery draws each group), where each picture's graph is compared with
        # its committed Mermaid file: about 10 s of a 2-core run's CPU, for a list of names.
        "agentic_machines/drawing/gallery.py::agentic_machines.drawing.gallery.architecture_pictures",
        "agentic_machines/drawing/gallery.py::agentic_machines.drawing.gallery.deep_pictures",
        # Four of the five longest calls of a quiet run of the README's command at 5fc1fca
        # (186 s against 180): 12.0, 5.3, 5.0 and 4.1 s. The strongest column of the attack
        # suite, another LangGraph example and the other planted bugs still run every time.
        "tests/test_attack_corpus.py::test_the_corpus_is_contained[namespace-each-block-once]",
        "tests/test_examples_frameworks.py::test_example_explored_checked_and_its_planted_bug_replayed[langgraph_react.py-langgraph-3-15-holds0-never_raises]",
        "tests/test_parallel.py::test_bad_workers_and_an_unreachable_scheduler_are_one_line_errors",
        "tests/test_planted_bugs.py::test_the_bug_is_found_and_the_unmodified_machine_passes[rlm-no-turn-limit]",
        # 11-16 s alone and 40-56 s in two runs of the README's command on a loaded machine,
        # for about 1 s of CPU: most of it waits on the agent's worker process, stepped once
        # per round of the keyed loop. (The attack corpus in the strongest column, 12.6 s,
        # is marked in tests/test_attack_suite.py: its id names this host's column.)
        "tests/test_keyed_divergence.py::test_hypothesis_runs_say_a_keyed_refutation_rests_on_the_key",
    }
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid in SLOW_BY_MEASUREMENT:
            item.add_marker(pytest.mark.slow)
    if run_slow_tests():
        return
    skip = pytest.mark.skip(reason="slow: runs with HYPOTHESIS_PROFILE=thorough or CI=true")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(
    params=[
        pytest.param(5 * sys.getrecursionlimit(), id="deep"),
        pytest.param(100_000, id="100000", marks=pytest.mark.slow),
    ]
)
def deep(request: pytest.FixtureRequest) -> int:
    """A nesting depth for the no-recursion tests: five times Python's recursion limit
    always (enough to catch any recursion on the Python stack), and 100 000 in the slow
    run (which also catches recursion inside C code, such as a nested hash or repr)."""
    return request.param


# Per-test example counts that differ by profile: agentic_machines.strategies.examples.


# -- the architecture tests' shared preamble --------------------------------------------------

GOLDEN = Path(__file__).parent / "golden"
"""Golden files, one folder per architecture; regenerate them with
``AGENTIC_MACHINES_UPDATE_GOLDEN=1 python -m pytest tests/test_<architecture>.py``."""


class SolvedTask(NamedTuple):
    trace: Trace
    result: Any


@pytest.fixture
def solve_default_task() -> Callable[..., SolvedTask]:
    """Run an architecture's default machine with its ``scripted_model()`` and pin the run.

    Checks what every architecture promises (the run halts after exactly ``SCRIPT``'s
    completions) and compares the rendered trace with ``golden/<name>/trace.txt``. The
    result is the harness's return value, or ``result(machine)`` when the machine keeps
    its result elsewhere (the SPE machine's run record).
    """

    def solve(
        module: ModuleType,
        machine: AgenticMachine | None = None,
        result: Callable[[AgenticMachine], Any] | None = None,
    ) -> SolvedTask:
        m = machine if machine is not None else module.machine()
        trace = run(m, module.scripted_model())
        assert trace.end is HALT and len(trace) == len(module.SCRIPT)
        last = trace.steps[-1]
        value = result(m) if result is not None else m.result(last.state, last.completion)
        name = module.__name__.rsplit(".", 1)[-1]
        check_golden(GOLDEN / name / "trace.txt", render_trace(trace, value))
        return SolvedTask(trace, value)

    return solve


@pytest.fixture(scope="session")  # session scope: Hypothesis tests may use it
def follow_completions() -> Callable[[AgenticMachine, Any, list[str]], Any]:
    """Feed completions to a machine from a state and check that the harness is total.

    Every step must give a state with a string prompt, ``HALT`` or ``DIVERGE``, never an
    exception; the walk stops at the first sentinel. Returns the last outcome.
    """

    def follow(machine: AgenticMachine, state: Any, completions: list[str]) -> Any:
        for c in completions:
            state = machine.harness(state, c)
            if is_sentinel(state):
                return state
            assert isinstance(machine.prompt(state), str)
        return state

    return follow


@pytest.fixture(scope="session")  # session scope: Hypothesis tests may use it
def step_keeps_invariant() -> Callable[..., Any]:
    """One harness step from ``state`` with completion ``c``: it must not raise, must give
    a state of the same kind, ``HALT`` or ``DIVERGE``, and a state's prompt must satisfy
    the architecture's ``successor_invariant(prompt, successor_prompt)``."""

    def step(module: ModuleType, machine: AgenticMachine, state: Any, c: str) -> Any:
        prompt = machine.prompt(state)
        nxt = machine.harness(state, c)
        assert is_sentinel(nxt) or type(nxt) is type(state), nxt
        if not is_sentinel(nxt):
            assert module.successor_invariant(prompt, machine.prompt(nxt))
        return nxt

    return step
