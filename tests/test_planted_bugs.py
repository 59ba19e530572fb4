"""experiments/planted_bugs.py: each planted bug is found by its property, and the
unmodified machine passes the same check; the counterexamples replay."""

from __future__ import annotations

from pathlib import Path

import pytest
from _helpers import experiment

from agentic_machines.checking import Raised

ROOT = Path(__file__).resolve().parent.parent


planted = experiment("planted_bugs")


def test_at_least_twelve_cases_of_architectures_and_agent_loops():
    assert len(planted.CASES) >= 12
    subjects = {c.subject for c in planted.CASES}
    assert {
        "ReAct",
        "RLM",
        "THREAD",
        "Reflexion",
        "PAL",
        "CodeAct",
        "ADaPT",
        "Tree of Thoughts",
        "AdaPlanner",
    }
    assert "agent loop" in subjects <= subjects


def _marked(case):
    # 200 Hypothesis runs of an agent function take a while: with the slow tests (CI, thorough)
    slow = case.subject == "agent function" and case.hypothesis
    return pytest.param(case, marks=pytest.mark.slow) if slow else case


@pytest.mark.parametrize("case", [_marked(c) for c in planted.CASES], ids=lambda c: c.name)
def test_the_bug_is_found_and_the_unmodified_machine_passes(case):
    row = planted.run_case(case)
    assert row.buggy_status == "refuted", case.name
    assert row.fixed_status == "holds", case.name
    cx = row.counterexample
    # the counterexample is a run of the buggy machine: its snippet reruns it
    namespace = {"machine": case.buggy()}
    if isinstance(cx.end, Raised) and cx.end.recorded:  # an agent function halts, recording it
        exec(cx.snippet(), namespace)
        trace, expected = namespace["trace"], cx.trace()
        assert (trace.steps, trace.end, trace.message) == (
            expected.steps,
            expected.end,
            expected.message,
        )
    elif isinstance(cx.end, Raised):
        with pytest.raises(Exception) as info:
            exec(cx.snippet(), namespace)
        assert type(info.value).__name__ == cx.end.type
    else:
        exec(cx.snippet(), namespace)
        trace, expected = namespace["trace"], cx.trace()
        assert (trace.steps, trace.end) == (expected.steps, expected.end)


def test_the_docs_table_is_current():
    text = (ROOT / "docs" / "planted_bugs.md").read_text(encoding="utf-8")
    for case in planted.CASES:
        assert f"`{case.name}`" in text, f"rerun experiments/planted_bugs.py: {case.name} missing"


# The zoo architectures' planted bugs, found from the command line: `agentic-machines test
# experiments/planted_bugs.py:BUGGY --property P --alphabet FILE` exits 1 with a
# counterexample, and the same command on the unmodified machine exits 0.
CLI_CASES = [
    ("reflexion_trials_by_memory", "reflexion_fixed", "halts_within:6", ["REFLEXION_WRONG"]),
    ("pal_strict_answer", "pal_fixed", "never_raises", ["PAL_TEXT_ANSWER"]),
    ("codeact_free_chat", "codeact_fixed", "halts_within:5", ["CODEACT_CHAT"]),
    ("adapt_no_depth_limit", "adapt_fixed", "halts_within:6", ["ADAPT_FAIL", "ADAPT_RESTATE"]),
    ("tot_revisit", "tot_fixed", "halts_within:5", ["TOT_DEAD_END", "TOT_LIKELY"]),
    ("adaplanner_unbounded", "adaplanner_fixed", "halts_within:5", ["ADAPLANNER_FAILING_PLAN"]),
]


@pytest.mark.parametrize("buggy,fixed,prop,words", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_the_command_line_test_finds_the_zoo_bugs(buggy, fixed, prop, words, tmp_path, capsys):
    import json

    from agentic_machines.cli.commands import main

    alphabet = tmp_path / "alphabet.json"
    alphabet.write_text(json.dumps([getattr(planted, w) for w in words]), encoding="utf-8")
    target = str(ROOT / "experiments" / "planted_bugs.py")
    args = ["--property", prop, "--alphabet", str(alphabet)]
    assert main(["test", f"{target}:{buggy}()", *args]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "counterexample" in out
    assert main(["test", f"{target}:{fixed}()", *args]) == 0


# The three agent-function bugs from the command line, both ways: exhaustive over a small
# alphabet, and --hypothesis 200 driven by the agent's own commands; each counterexample
# saved and replayed with `run --replay`, which checks the property again: exit 1, "still
# fails", for every property (issue 36, item 5).
AGENT_CLI = [
    ("unknown_item", "never_raises", ["buy apple", "buy kiwi", "done"], 1),
    ("retried_payment", "effects_at_most_once:charge", ["pay", "retry", "done"], 1),
    ("think_forever", "halts_within:4", ["think", "done"], 1),
]


@pytest.mark.parametrize(
    "factory,prop,alphabet,replay_exit",
    [pytest.param(*c, marks=pytest.mark.slow) if c[0] != "unknown_item" else c for c in AGENT_CLI],
    ids=[c[0] for c in AGENT_CLI],
)
@pytest.mark.parametrize("mode", ["exhaustive", "hypothesis"])
def test_the_command_line_test_finds_the_agent_bugs_and_they_replay(
    factory, prop, alphabet, replay_exit, mode, tmp_path, capsys
):
    import json

    from agentic_machines.cli.commands import main

    target = f"{ROOT / 'experiments' / 'planted_bugs.py'}:{factory}()"
    saved = tmp_path / "cx.jsonl"
    if mode == "exhaustive":
        file = tmp_path / "alphabet.json"
        file.write_text(json.dumps(alphabet), encoding="utf-8")
        how = ["--alphabet", str(file), "--max-depth", "5"]
        assert main(["test", target, "--property", prop, *how, "--save", str(saved)]) == 1
    else:
        # One seed: a seeded search is the same in every process (tests/test_hypothesis_seed.py)
        how = ["--hypothesis", "200", "--seed", "0"]
        assert main(["test", target, "--property", prop, *how, "--save", str(saved)]) == 1
    assert "FAIL" in capsys.readouterr().out
    assert main(["run", target, "--replay", str(saved)]) == replay_exit
    assert "still fails (" in capsys.readouterr().out
