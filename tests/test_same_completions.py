"""The same completions give the same verdict on every target (issue 36, item 6):
``check --completions FILE`` on an agent function decides as it does on a factory whose
machine declares that alphabet."""

from __future__ import annotations

import pytest

from agentic_machines.cli import main

AGENTS = """
from agentic_machines import agent_machine

def greet(model):
    name = model("Your name?")
    model("Hello " + name + ", again?")

def build():
    return agent_machine(greet, completions=["a", "b"], isolation="inline")
"""


@pytest.fixture
def agents(tmp_path, monkeypatch):
    (tmp_path / "same_alphabet_agents.py").write_text(AGENTS)
    (tmp_path / "comps.txt").write_text("a\nb\n")
    monkeypatch.chdir(tmp_path)


def _verdict(capsys, target: str) -> str:
    argv = ["check", target, "--completions", "comps.txt", "--isolation", "inline"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    return next(line for line in out.splitlines() if line.startswith("start state"))


def test_an_agent_function_and_a_factory_get_one_verdict(agents, capsys):
    function = _verdict(capsys, "same_alphabet_agents.py:greet")
    factory = _verdict(capsys, "same_alphabet_agents.py:build()")
    assert function == factory
    assert "Refuted" in function and "Method: fact F2" in function and "(2 checks)" in function


def test_the_alphabet_the_check_is_about_is_said(agents, capsys):
    main(["check", "same_alphabet_agents.py:greet", "-c", "a", "--isolation", "inline"])
    first = capsys.readouterr().out.splitlines()[0]
    assert first.endswith("1 completion (the alphabet given by -c/--completions)")
