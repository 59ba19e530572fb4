"""`--isolation`, `--line-budget` and `--step-timeout`: one definition, on every verb that
runs a target's code, and they reach the agent function's machine."""

from __future__ import annotations

import pytest
from _helpers import cli

from agentic_machines.cli import main
from agentic_machines.cli._args import AgentOptions
from agentic_machines.cli.commands import build_parser
from agentic_machines.cli.targets import resolve_target

VERBS = ("check", "diagram", "explore", "run", "play", "test", "view", "export")

AGENTS = """
from agentic_machines import agent_machine

def spin(model):
    model("go")
    while True:
        pass

def echo(model):
    return model("say")

def busy(model):
    first = model("go?")
    for _ in range(5000):  # some 10,000 lines between the model calls
        pass
    return first + model("done?")

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
    extra = {"run": ["--script", "s.txt"], "export": ["-o", "m.json"]}.get(verb, [])
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
        "isolation: inline (the agent function runs in this process, which it can "
        "change: docs/determinism.md)"
    ]
    assert "'hi' -> HALT" in out


def test_no_message_without_inline(agents, capsys):
    assert main(["explore", f"{agents}:echo", "-c", "hi"]) == 0
    assert "isolation:" not in capsys.readouterr().err


NOTE = "ran out of their line budget"


def test_divergent_steps_that_take_the_time_are_said(agents, capsys):
    # one divergent step of a million traced lines: the note comes
    million = ["--line-budget", "1000000"]
    assert main(["explore", f"{agents}:spin", "-c", "a", *million]) == 0
    err = capsys.readouterr().err
    assert "1 of 1 step ran out of their line budget" in err and "--line-budget" in err
    assert main(["test", f"{agents}:spin", "-c", "a", "-p", "never_raises", *million]) == 0
    assert NOTE in capsys.readouterr().out


def test_a_small_budget_makes_no_note(agents, capsys):
    assert main(["explore", f"{agents}:spin", "-c", "a", "--line-budget", "3000"]) == 0
    assert NOTE not in capsys.readouterr().err
    assert (
        main(["diagram", f"{agents}:spin", "-c", "a", "--line-budget", "3000", "--format", "json"])
        == 0
    )
    assert NOTE not in capsys.readouterr().err


HIDER = """
import contextlib, io, time

def hider(model):
    print("before")
    with contextlib.redirect_stdout(io.StringIO()):
        first = model("first?")
    return first + model("second?")

def blocker(model):
    model("go")
    time.sleep(3600)

def hiding_blocker(model):
    with contextlib.redirect_stdout(io.StringIO()):
        if model("first?") == "a":
            time.sleep(3600)  # a tool that never answers, while stdout is the agent's
    return model("second?")

def factory():
    from agentic_machines import agent_machine
    return agent_machine(hider, isolation="inline")
"""


def _cli(tmp_path, *argv, stdin=None):
    (tmp_path / "hider.py").write_text(HIDER)
    return cli(tmp_path, *argv, stdin=stdin)


@pytest.mark.parametrize("target", ["hider.py:hider", "hider.py:factory()"])
def test_an_inline_agent_that_redirects_stdout_cannot_take_the_verbs_output(tmp_path, target):
    # suspended at its model call inside redirect_stdout, the agent has the verb's stdout
    # put back while it waits: the verb prints all of its output and exits as it should
    flag = ["--isolation", "inline"] if "()" not in target else []  # a factory's own level
    result = _cli(tmp_path, "check", target, "-c", "a", "-c", "b", *flag)
    assert result.returncode == 0, result.stderr
    assert "start state TraceState(): Refuted" in result.stdout and "error" not in result.stderr


def test_an_inline_step_the_clock_ended_inside_a_redirect_leaves_the_output_whole(tmp_path):
    (tmp_path / "s.txt").write_text("a\n")
    inline = ["--isolation", "inline", "--step-timeout", "0.5"]
    ran = _cli(tmp_path, "run", "hider.py:hiding_blocker", "--script", "s.txt", *inline)
    assert ran.returncode == 0, ran.stderr
    assert "outcome     DIVERGE (↑) (clock)" in ran.stdout and "error" not in ran.stderr
    explored = _cli(tmp_path, "explore", "hider.py:hiding_blocker", "-c", "a", "-c", "b", *inline)
    assert explored.returncode == 0, explored.stderr
    assert "'a' -> undecided" in explored.stdout and "'b' -> HALT (1)" in explored.stdout


def test_a_step_the_clock_ended_ends_run_and_play(tmp_path):
    (tmp_path / "s.txt").write_text("a\n")
    ran = _cli(tmp_path, "run", "hider.py:blocker", "--script", "s.txt", "--step-timeout", "0.5")
    assert ran.returncode == 0 and "(clock)" in ran.stdout
    played = _cli(tmp_path, "play", "hider.py:blocker", "--step-timeout", "0.5", stdin="a\n")
    assert played.returncode == 0 and "came from the clock" in played.stdout
    assert "trace saved to" in played.stdout


@pytest.mark.parametrize("verb", VERBS)
def test_every_verb_says_the_three_options_in_its_help(verb, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args([verb, "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "--isolation" in shown and "--line-budget N" in shown and "--step-timeout S" in shown
    assert "undecided, not a hang" in shown


def test_view_and_export_build_the_agent_with_the_options(agents, tmp_path, capsys):
    pages = tmp_path / "default.html", tmp_path / "small.html"
    assert main(["view", f"{agents}:busy", "-c", "a", "-o", str(pages[0])]) == 0
    assert (
        main(["view", f"{agents}:busy", "-c", "a", "-o", str(pages[1]), "--line-budget", "3000"])
        == 0
    )
    assert capsys.readouterr().out.count("wrote") == 2
    # the first step runs 10,000 lines: within the default budget, past a budget of 3,000
    assert ["DIVERGE" in page.read_text() for page in pages] == [False, True]
    # export takes them too; an agent function has no finite machine file: one line, exit 2
    assert main(["export", f"{agents}:build()", "-o", "m.json", "--line-budget", "5"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not finite" in err
    assert main(["export", f"{agents}:echo", "-o", "m.json", "--isolation", "namespace"]) == 2
    assert "--isolation namespace is a level for model-written code" in capsys.readouterr().err


MOVER = """
import os, tempfile
from agentic_machines import HALT, FunctionMachine

def prompt(state):
    os.chdir(tempfile.mkdtemp(prefix="mover-"))  # and never back
    return "go?"

machine = FunctionMachine(prompt, lambda state, completion: HALT, initial=0)
"""


def test_a_target_that_leaves_the_folder_changed_is_refused_in_one_line(tmp_path, monkeypatch):
    # not an agent function (those have it put back): a machine's own code in this process
    (tmp_path / "mover.py").write_text(MOVER)
    monkeypatch.chdir(tmp_path)
    result = cli(tmp_path, "explore", "mover.py:machine", "-c", "a")
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert result.returncode == 2 and len(errors) == 1, result.stderr
    assert "changed the working folder of this process and did not put it back" in errors[0]
