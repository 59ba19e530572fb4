"""Agents that touch their process cannot touch the checker (issue 35).

The agents of tests/hostile_agents/hostile.py redirect stdout and stderr around a model
call, change folder, set environment variables, lower the recursion limit, install
signal handlers, edit sys.path and sys.modules, exit, crash the interpreter, count their
calls in a global, leave temporary files, draw unseeded random numbers, leave threads
running and block. For each: in-process API calls and every verb of the command line
(run in this process) leave the host's state as it was, every completion sequence has
the same outcome alone, after other runs and in any order, and the command line (also
run in a subprocess, as a user runs it) prints its whole output, writes its files where
asked and exits with the right status.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import signal
import sys
from pathlib import Path

import pytest
from _helpers import cli

from agentic_machines import HALT, agent_machine, is_sentinel, run
from agentic_machines.checking import parse_property
from agentic_machines.checking.check import check_properties
from agentic_machines.models import ScriptedModel
from agentic_machines.runtime.agent import AgentMachine  # noqa: E402
from agentic_machines.runtime.explore import explore

# The worker processes of issue 35 (agent_machine(fn, isolation="process"), each step's
# prints kept by AgentMachine.output) are what these tests are of.
pytestmark = pytest.mark.skipif(
    not hasattr(AgentMachine, "output"), reason="agent functions run in this process here"
)

AGENTS = Path(__file__).parent / "hostile_agents" / "hostile.py"
# imported from its file: a module named like the agents on sys.path could shadow it
_spec = importlib.util.spec_from_file_location("_hostile_agents", AGENTS)
agents = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(agents)
HOSTS = [
    "redirect_stdout",
    "redirect_stderr",
    "chdir",
    "environ",
    "recursion_limit",
    "signal_handler",
    "sys_path",
    "sys_modules",
    "exits",
    "os_exit",
    "segfault",
    "counter",
    "temp_files",
    "unseeded_random",
    "threads",
]
SEQUENCES = [s for n in (1, 2) for s in itertools.product("ab", repeat=n)]


def host_state() -> dict:
    """What an agent could change in the process that checks it."""
    handlers = {}
    for sig in signal.valid_signals():
        try:
            handlers[sig] = signal.getsignal(sig)
        except (OSError, ValueError):
            pass
    return {
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "stdout": sys.stdout,
        "stderr": sys.stderr,
        "recursion": sys.getrecursionlimit(),
        "signals": handlers,
        "path": list(sys.path),
        "hostile_module": "hostile_module" in sys.modules,
        "json": sys.modules.get("json"),
        "calls": agents.CALLS,
    }


def outcome(machine, sequence) -> tuple:
    """The prompts a completion sequence shows and where it ends."""
    state, seen = machine.initial, []
    for c in sequence:
        seen.append(machine.prompt(state))
        nxt = machine.harness(state, c)
        if is_sentinel(nxt):
            return (*seen, str(nxt), str(machine.result(state, c)))
        state = nxt
    return (*seen, repr(state))


@pytest.mark.parametrize("name", HOSTS)
def test_api_calls_leave_the_host_as_it_was(name):
    before = host_state()
    machine = agent_machine(getattr(agents, name))
    graph = explore(machine, completions=["a", "b"], max_depth=2, progress=False)
    check_properties(
        machine, machine.initial, [parse_property("never_raises")], completions=["a", "b"]
    )
    trace = run(machine, ScriptedModel(["b", "b"]))
    assert host_state() == before
    assert graph.graph["stats"]["states"] >= 2 and trace.end is HALT


@pytest.mark.parametrize("name", HOSTS)
def test_each_sequence_has_one_outcome_in_every_order(name):
    fn = getattr(agents, name)
    forward, backward = agent_machine(fn), agent_machine(fn)
    first = {s: outcome(forward, s) for s in SEQUENCES}
    again = {s: outcome(backward, s) for s in reversed(SEQUENCES)}
    alone = {s: outcome(agent_machine(fn), s) for s in SEQUENCES[-2:]}
    for _ in range(50):  # many runs later, on the same machine
        outcome(forward, ("b", "b"))
    later = {s: outcome(forward, s) for s in SEQUENCES}
    assert first == again == later
    assert all(first[s] == alone[s] for s in alone)


# -- the command line, as a user runs it -----------------------------------------------------
def target(name: str) -> str:
    return f"{AGENTS}:{name}"


VERBS = {
    # verb: (arguments after the target, exit status, text the whole output holds)
    "run": (["--script", "script.txt", "--save", "trace.jsonl"], 0, "agent returned 'ab'"),
    "explore": (["-c", "a", "-c", "b"], 0, "'b' -> HALT (1)"),
    "check": (["-c", "a", "-c", "b"], 0, "start state TraceState()"),
    "test": (["-c", "a", "-c", "b", "-p", "never_raises"], 0, "coverage: 3 states"),
    "diagram": (["-c", "a", "-c", "b", "-o", "out.mmd"], 0, "wrote out.mmd (mermaid): 3 states"),
    "play": (["--save", "played.jsonl"], 0, "HALT (1): agent returned 'ab' (after 2 steps)"),
}
WRITES = {"run": "trace.jsonl", "diagram": "out.mmd", "play": "played.jsonl"}


def run_verb(tmp_path, verb, name, *extra):
    (tmp_path / "script.txt").write_text("a\nb\n")
    args, _, _ = VERBS[verb]
    return cli(tmp_path, verb, target(name), *args, *extra, stdin="a\nb\n")


def verb_host_state() -> dict:
    """host_state(), but for the target's folder, which the verb itself puts on sys.path
    (once) to import the target: that is not the agent's doing."""
    state = host_state()
    state["path"] = [p for p in state["path"] if p != str(AGENTS.parent)]
    return state


LANDMARK = {
    # verb: text its output holds whatever the agent does (crashes included)
    "run": "Trace of",
    "explore": "depth 2 (complete)",
    "check": "start state TraceState()",
    "test": "coverage:",
    "diagram": "wrote out.mmd (mermaid)",
    "play": "trace saved to played.jsonl",
}


@pytest.mark.slow
@pytest.mark.parametrize("verb", list(VERBS))
@pytest.mark.parametrize("name", HOSTS)
def test_every_verb_leaves_the_host_as_it_was_and_prints_its_output(
    tmp_path, monkeypatch, capsys, name, verb
):
    # in this process, as the command runs: its state is what the agent must not change
    import io

    from agentic_machines.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO("a\nb\n"))
    (tmp_path / "script.txt").write_text("a\nb\n")
    args, status, whole = VERBS[verb]
    before = verb_host_state()
    returned = main([verb, target(name), *args])
    out = capsys.readouterr().out
    assert verb_host_state() == before
    assert LANDMARK[verb] in out
    if name not in CRASHES:  # the same output as any agent of this shape
        assert returned == status and whole in out
    else:  # the step that crashes is an outcome; test refutes never_raises
        assert returned == (1 if verb == "test" else 0)
    if verb in WRITES:
        assert (tmp_path / WRITES[verb]).stat().st_size > 0


@pytest.mark.parametrize("verb", list(VERBS))
def test_the_redirecting_agent_prints_the_whole_output(tmp_path, verb):
    result = run_verb(tmp_path, verb, "redirect_stdout")
    _, status, whole = VERBS[verb]
    assert result.returncode == status, result.stderr
    assert whole in result.stdout
    printed = result.stdout.count("before the call")
    # run and play show the agent's prints once, with their step; the others never
    assert printed == (1 if verb in ("run", "play") else 0)
    if verb in WRITES:
        written = tmp_path / WRITES[verb]
        assert written.is_file() and written.stat().st_size > 0
    if verb == "run":
        lines = (tmp_path / "trace.jsonl").read_text().splitlines()
        assert json.loads(lines[1])["output"] == "before the call\nafter the call\n"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["redirect_stdout", "chdir"])
@pytest.mark.parametrize("verb", list(VERBS))
def test_inline_the_verb_keeps_its_output_and_folder_whatever_the_agent_does(tmp_path, verb, name):
    # the agent waits at its model call with stdout, or the folder, its own: the verb has
    # its own put back meanwhile (cli._args.Watched), so it works as in process mode
    result = run_verb(tmp_path, verb, name, "--isolation", "inline")
    _, status, whole = VERBS[verb]
    assert result.stderr.count("isolation: inline") == 1  # said, once, on stderr
    assert result.returncode == status and "error" not in result.stderr, result.stderr
    assert whole in result.stdout
    if verb in WRITES:
        assert (tmp_path / WRITES[verb]).is_file()


@pytest.mark.slow
@pytest.mark.parametrize("verb", ["run", "diagram", "play"])
def test_files_go_where_asked_when_the_agent_changes_folder(tmp_path, verb):
    result = run_verb(tmp_path, verb, "chdir")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / WRITES[verb]).is_file()


CRASHES = {
    # agent: what the step that crashes ends with (an outcome of its own, never a HALT)
    "exits": "SystemExit: 3",
    "os_exit": "AgentDied: the worker process exited with status 7",
    "segfault": "AgentDied: the worker process killed by signal SIGSEGV",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CRASHES))
def test_an_agent_that_exits_or_crashes_is_an_outcome(tmp_path, name):
    (tmp_path / "a.txt").write_text("a\n")
    ran = cli(tmp_path, "run", target(name), "--script", "a.txt")
    assert ran.returncode == 0, ran.stderr
    assert CRASHES[name] in ran.stdout
    explored = cli(tmp_path, "explore", target(name), "-c", "a", "-c", "b")
    assert explored.returncode == 0, explored.stderr
    assert CRASHES[name] in explored.stdout and "'b' -> HALT (1)" in explored.stdout
    tested = cli(tmp_path, "test", target(name), "-c", "a", "-c", "b", "-p", "never_raises")
    assert tested.returncode == 1  # refuted: the agent raised, or its worker died
    assert "FAIL never_raises" in tested.stdout and "coverage:" in tested.stdout


def graph_of(text: str) -> tuple:
    """An explored graph's JSON, its node ids replaced by the states they name."""
    data = json.loads(text)
    names = {n["id"]: n.get("state", n["id"]) for n in data["nodes"]}
    nodes = sorted((n.get("state", n["id"]), n.get("prompt")) for n in data["nodes"])
    key = "edges" if "edges" in data else "links"
    edges = sorted(
        (names[e["source"]], names[e["target"]], tuple(sorted(e["completions"]))) for e in data[key]
    )
    return nodes, edges


@pytest.mark.slow
def test_a_global_counter_explores_to_one_graph(tmp_path):
    args = ["explore", target("counter"), "--depth", "3", "--json"]
    serial = cli(tmp_path, *args, "-c", "a", "-c", "b")
    pooled = cli(tmp_path, *args, "-c", "a", "-c", "b", "--workers", "2")
    reverse = cli(tmp_path, *args, "-c", "b", "-c", "a")
    assert serial.returncode == pooled.returncode == reverse.returncode == 0
    assert graph_of(serial.stdout) == graph_of(pooled.stdout) == graph_of(reverse.stdout)
    assert "call 1: first?" in serial.stdout


@pytest.mark.slow
@pytest.mark.parametrize("verb", list(VERBS))
def test_a_blocking_tool_ends_the_verb_with_the_step_undecided(tmp_path, verb):
    (tmp_path / "script.txt").write_text("a\n")
    args = {
        "run": ["--script", "script.txt"],
        "explore": ["-c", "a"],
        "check": ["-c", "a"],
        "test": ["-c", "a", "-p", "never_raises"],
        "diagram": ["-c", "a", "-o", "out.mmd"],
        "play": [],
    }[verb]
    result = cli(tmp_path, verb, target("blocking_tool"), *args, "--step-timeout", "1", stdin="a\n")
    undecided = {
        "run": "(clock)",
        "explore": "'a' -> undecided",
        "check": "start state",
        "test": "UNDECIDED never_raises",
        "diagram": "wrote out.mmd",
        "play": "came from the clock",
    }[verb]
    assert undecided in result.stdout, (result.stdout, result.stderr)
