"""`--isolation`, `--line-budget` and `--step-timeout`: one definition, on every verb that
runs a target's code, and they reach the agent function's machine."""

from __future__ import annotations

import pytest

from agentic_machines.cli import main
from agentic_machines.cli._args import AgentOptions
from agentic_machines.cli.commands import build_parser
from agentic_machines.cli.targets import resolve_target

VERBS = ("check", "diagram", "explore", "run", "play", "test")

AGENTS = """
from agentic_machines import agent_machine

def spin(model):
    model("go")
    while True:
        pass

def echo(model):
    return model("say")

def build():
    return agent_machine(spin, line_budget=900_000)
"""


@pytest.fixture
def agents(tmp_path, monkeypatch):
    path = tmp_path / "agents_opts.py"
    path.write_text(AGENTS)
    monkeypatch.chdir(tmp_path)
    return path


@pytest.mark.parametrize("verb", VERBS)
def test_every_verb_takes_the_three_options(verb):
    extra = ["--script", "s.txt"] if verb == "run" else []
    args = build_parser().parse_args(
        [verb, "f2-mul", *extra, "--isolation", "inline", "--line-budget", "7"]
        + ["--step-timeout", "0.5"]
    )
    assert (args.isolation, args.line_budget, args.step_timeout) == ("inline", 7, 0.5)


@pytest.mark.parametrize("bad", [["--line-budget", "0"], ["--step-timeout", "-1"]])
def test_a_bad_bound_is_one_line_and_exit_2(bad, capsys):
    assert main(["explore", "f2-mul", *bad]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "expected a" in err


def test_the_line_budget_reaches_an_agent_function(agents, capsys):
    assert main(["explore", f"{agents}:spin", "-c", "a", "--line-budget", "3000"]) == 0
    assert "'a' -> DIVERGE" in capsys.readouterr().out
    machine = resolve_target(f"{agents}:spin", AgentOptions(line_budget=3000)).machine()
    assert machine.line_budget == 3000


def test_a_factory_built_agent_keeps_its_budget_unless_the_flag_is_given(agents):
    own = resolve_target(f"{agents}:build()", AgentOptions()).machine()
    given = resolve_target(f"{agents}:build()", AgentOptions(line_budget=5000)).machine()
    assert (own.line_budget, given.line_budget) == (900_000, 5000)


def test_every_agent_gets_a_step_timeout(agents):
    assert resolve_target(f"{agents}:echo", AgentOptions()).machine().step_timeout > 0
    machine = resolve_target(f"{agents}:echo", AgentOptions(step_timeout=2.5)).machine()
    assert machine.step_timeout == 2.5


def test_inline_is_said_in_one_line_on_stderr(agents, capsys):
    assert main(["explore", f"{agents}:echo", "-c", "hi", "--isolation", "inline"]) == 0
    out, err = capsys.readouterr()
    assert [line for line in err.splitlines() if line.startswith("isolation:")] == [
        "isolation: inline (the agent function runs in this process; see "
        "docs/reference/agent.md for what it must not do)"
    ]
    assert "'hi' -> HALT" in out


def test_no_message_without_inline(agents, capsys):
    assert main(["explore", f"{agents}:echo", "-c", "hi"]) == 0
    assert "isolation:" not in capsys.readouterr().err


NOTE = "ran out of their line budget"


def test_divergent_steps_that_take_the_time_are_said(agents, capsys):
    # one divergent step at the default budget: a million traced lines, the note comes
    assert main(["explore", f"{agents}:spin", "-c", "a"]) == 0
    err = capsys.readouterr().err
    assert "1 of 1 step ran out of their line budget" in err and "--line-budget" in err
    assert main(["test", f"{agents}:spin", "-c", "a", "-p", "never_raises"]) == 0
    assert NOTE in capsys.readouterr().out


def test_a_small_budget_makes_no_note(agents, capsys):
    assert main(["explore", f"{agents}:spin", "-c", "a", "--line-budget", "3000"]) == 0
    assert NOTE not in capsys.readouterr().err
    assert (
        main(["diagram", f"{agents}:spin", "-c", "a", "--line-budget", "3000", "--format", "json"])
        == 0
    )
    assert NOTE not in capsys.readouterr().err
