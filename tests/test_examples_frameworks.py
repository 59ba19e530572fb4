"""The frameworks' own examples in examples/: explored, checked, and each planted bug found
by ``agentic-machines test`` with a counterexample that ``run --replay`` reproduces."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import pytest

from agentic_machines.cli.commands import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# file, the framework module it needs (its extra), depth, explored states, the properties
# that hold on build(), and the property the planted bug breaks
CASES = [
    ("langgraph_react.py", "langgraph", 3, 15, ["never_raises", "never_diverges"], "never_raises"),
    ("langgraph_calculator.py", "langgraph", 3, 15, ["never_raises"], "never_raises"),
    ("pydantic_ai_roulette.py", "pydantic_ai", 3, 15, ["never_raises"], "never_raises"),
    ("pydantic_ai_sql.py", "pydantic_ai", 3, 7, ["halts_within:3"], "never_raises"),
    ("smolagents_weather.py", "smolagents", 2, 7, ["never_raises"], "never_raises"),
    # a worker for the code at every step (its REPL replayed in each branch): slow
    pytest.param(
        "smolagents_code.py",
        "smolagents",
        2,
        12,
        ["never_raises"],
        "never_raises",
        marks=pytest.mark.slow,
    ),
]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():  # LangGraph's create_react_agent moved (a notice only)
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


@pytest.mark.parametrize(("name", "needs", "depth", "states", "holds", "broken"), CASES)
def test_example_explored_checked_and_its_planted_bug_replayed(
    name, needs, depth, states, holds, broken, tmp_path, capsys
):
    if importlib.util.find_spec(needs) is None:
        pytest.skip(f'needs the extra of {needs}: pip install -e ".[{needs}]"')
    target = f"{EXAMPLES / name}:build()"
    assert main(["explore", target, "--depth", str(depth)]) == 0
    assert capsys.readouterr().out.split(": ", 1)[1].startswith(f"{states} states")
    args = [a for p in holds for a in ("-p", p)]
    assert main(["test", target, *args, "--depth", str(depth)]) == 0, capsys.readouterr().out
    capsys.readouterr()
    buggy = f"{EXAMPLES / name}:build_buggy()"
    saved = tmp_path / "bug.trace"
    assert main(["test", buggy, "-p", broken, "--depth", str(depth), "--save", str(saved)]) == 1
    assert f"FAIL {broken}()" in capsys.readouterr().out
    assert main(["run", buggy, "--replay", str(saved)]) == 1
    assert "still fails" in capsys.readouterr().out
