"""``agentic-machines play``: played in a pseudo-terminal, as a student would, and piped.

The pty sessions use only the standard library (``os.openpty`` and ``subprocess``): the
child's stdin and stdout are a terminal, so the terminal's own line editing, echo and
Ctrl-D (end of input on an empty line) are what the session meets.
"""

from __future__ import annotations

import io
import os
import select
import subprocess
import sys
from pathlib import Path

import pytest

from agentic_machines.architectures.catalog import resolve
from agentic_machines.cli.commands import main
from agentic_machines.cli.play import PlaySession
from agentic_machines.runtime.run import Trace, prompt_gain

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")


class Terminal:
    """A child process on a pseudo-terminal: send lines, wait for text."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        self.master, slave = os.openpty()
        env = dict(os.environ, COLUMNS="100", PYTHONPATH=str(ROOT))
        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env, close_fds=True
        )
        os.close(slave)
        self.seen = ""

    def expect(self, text: str, timeout: float = 60.0) -> str:
        """Read until ``text`` appears (the generous timeout is a hang guard, not a measure)."""
        while text not in self.seen:
            ready, _, _ = select.select([self.master], [], [], timeout)
            assert ready, f"no {text!r} within {timeout}s; the terminal shows:\n{self.seen}"
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # the child closed the terminal
                chunk = b""
            assert chunk, f"the session ended before {text!r}; the terminal shows:\n{self.seen}"
            self.seen += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
        at = self.seen.index(text) + len(text)
        shown, self.seen = self.seen[:at], self.seen[at:]
        return shown

    def send(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def ctrl_d(self) -> None:
        os.write(self.master, b"\x04")

    def close(self) -> int:
        code = self.proc.wait(timeout=60)
        os.close(self.master)
        return code


# (target, the three completions as typed (each a list of lines), their values)
SESSIONS = [
    ("f2-mul", [["#2"], ["1"], ["0"]], ["1", "1", "0"]),
    (
        "react",
        [
            ['"""', " I need the city.", "Action 1: Search[Eiffel Tower]", '"""'],
            ['"""', " Paris.", "Action 2: Search[Paris]", '"""'],
            ['"""', " The Seine.", "Action 3: Finish[Seine]", '"""'],
        ],
        [
            " I need the city.\nAction 1: Search[Eiffel Tower]",
            " Paris.\nAction 2: Search[Paris]",
            " The Seine.\nAction 3: Finish[Seine]",
        ],
    ),
    (
        "spe",
        [['(eval (llm "more"))'], ["(eval", '  (llm "and"))'], ['"done"']],
        ['(eval (llm "more"))', '(eval\n  (llm "and"))', '"done"'],
    ),
    (
        "spell",
        [
            [" '(!llm-self (reopen completion))"],
            [""" '(!call-now todo (read-file "todo.txt"))"""],
            [" 42"],
        ],
        [
            " '(!llm-self (reopen completion))",
            """ '(!call-now todo (read-file "todo.txt"))""",
            " 42",
        ],
    ),
]


@pytest.mark.parametrize("target,typed,completions", SESSIONS, ids=[s[0] for s in SESSIONS])
def test_a_three_step_session_in_a_terminal(target, typed, completions, tmp_path):
    term = Terminal(
        [sys.executable, "-m", "agentic_machines", "play", target, "--save", "out.jsonl"],
        tmp_path,
    )
    try:
        term.expect("turn 0")
        term.expect("> ")
        # step 1, then a wrong step 2 taken back with :back
        for line in typed[0]:
            term.send(line)
        term.expect("turn 1")
        term.expect("> ")
        for line in typed[1]:
            term.send(line)
        term.expect("turn 2")
        term.expect("> ")
        term.send(":back")
        term.expect("turn 1")
        term.expect("> ")
        term.send(":state")
        term.expect("> ")
        for line in typed[1]:
            term.send(line)
        term.expect("turn 2")
        term.expect("> ")
        term.send(":save mid.jsonl")
        term.expect("saved 2 steps to mid.jsonl")
        term.expect("> ")
        for line in typed[2]:
            term.send(line)
        term.expect("> ")
        term.send(":script")
        term.expect(f"ScriptedModel({completions!r})")
        term.expect("> ")
        term.ctrl_d()
        term.expect("trace saved to out.jsonl (3 steps)")
    finally:
        code = term.close()
    assert code == 0
    mid, out = Trace.load(tmp_path / "mid.jsonl"), Trace.load(tmp_path / "out.jsonl")
    assert mid.completions == completions[:2] and mid.end == "incomplete"
    assert out.completions == completions
    # The saved trace is a run's trace: replaying it on the machine checks every state,
    # prompt and outcome (a state saved as its repr is compared by its encoding).
    entry = resolve(target)
    machine = entry.machine()
    again = out.replay(machine, entry.start(machine))
    assert again.completions == completions and [s.prompt for s in again] == out.prompts


def test_quit_leaves_with_the_trace_saved_in_a_terminal(tmp_path):
    term = Terminal([sys.executable, "-m", "agentic_machines", "play", "halt1"], tmp_path)
    try:
        term.expect("> ")
        term.send("#1")
        term.expect("HALT (1) (after 1 step)")
        term.expect("> ")
        term.send("quit")
        term.expect("trace saved to halt1-play.jsonl (1 step)")
    finally:
        assert term.close() == 0
    trace = Trace.load(tmp_path / "halt1-play.jsonl")
    assert trace.completions == ["0"] and trace.end is trace.final


def test_piped_input_plays_and_echoes(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO("#2\n:help\n0\n:back\n:trace\nexit\n"))
    assert main(["play", "f2-mul", "--save", "p.jsonl"]) == 0
    out = capsys.readouterr().out
    assert "> #2\n" in out and "undo the last step" in out  # echoed input, help text
    assert "1 step, incomplete" in out and "trace saved to p.jsonl (1 step)" in out
    assert Trace.load(tmp_path / "p.jsonl").completions == ["1"]


def test_refused_completions_and_commands_keep_the_state():
    entry = resolve("f2-mul")
    session = PlaySession(entry.name, entry.machine(), 0)
    out = io.StringIO()
    session.play(io.StringIO("nope\n#9\n:back\n:save\n:frob\n::x\n"), out)
    text = out.getvalue()
    assert "h refused it: InvalidMachine" in text  # 'nope' is not in {'0', '1'}
    assert text.count("h refused it") == 2  # ... and neither is ':x'
    assert "#9: the list has 2 completions, #1 to #2" in text
    assert "nothing to undo" in text and ":save needs a file name" in text
    assert "unknown command :frob" in text and session.steps == []


def test_the_ended_run_refuses_more_and_back_reopens_it():
    entry = resolve("halt1")
    session = PlaySession(entry.name, entry.machine(), 0)
    assert session.take("1") is None and session.ended
    assert "the run ended with HALT (1)" in session.take("0")
    assert session.trace().end is session.state
    assert session.back() and not session.ended and session.script() == "ScriptedModel([])"


def test_diff_shows_what_the_prompt_gained():
    entry = resolve("react")
    machine = entry.machine()
    session = PlaySession(entry.name, machine, entry.start(machine), diff=True)
    out = io.StringIO()
    session.play(io.StringIO(" I think.\n"), out)
    first = machine.prompt(entry.start(machine))
    assert f"prompt: ({len(first)} characters as before) + ' I think." in out.getvalue()
    assert prompt_gain("abc", "abXY") == (2, "XY") and prompt_gain("", "a") == (0, "a")


def test_an_agent_function_is_played(tmp_path, monkeypatch, capsys):
    (tmp_path / "lamp.py").write_text(
        "def agent(model):\n"
        "    on = False\n"
        "    while (c := model('The lamp is ' + ('on' if on else 'off') + '.')) != 'stop':\n"
        "        on = not on\n"
        "    return on\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "stdin", io.StringIO("press\nstop\n"))
    assert main(["play", "lamp.py:agent", "--save", "a.jsonl"]) == 0
    out = capsys.readouterr().out
    assert (
        "prompt: 'The lamp is on.'" in out
        and "HALT (1): agent returned True (after 2 steps)" in out
    )
    assert Trace.load(tmp_path / "a.jsonl").completions == ["press", "stop"]


def test_a_machine_file_is_played(tmp_path, monkeypatch, capsys):
    (tmp_path / "m.json").write_text(
        '{"name": "toggle", "initial": "off", "states": ['
        '{"id": "off", "prompt": "The lamp is off.", "on": {"press": "on", "stop": "HALT"}},'
        '{"id": "on", "prompt": "The lamp is on.", "on": {"press": "off", "stop": "HALT"}}]}'
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO("press\n#2\n"))
    assert main(["play", "m.json", "--save", "m.jsonl"]) == 0
    out = capsys.readouterr().out
    assert "completions: #1 'press'   #2 'stop'" in out and "state 'on'" in out
    trace = Trace.load(tmp_path / "m.jsonl")
    assert trace.completions == ["press", "stop"] and trace.end is trace.final


AGENTS = """\
def opener(model):
    answer = model("Open or close?")
    return "closed" if answer == "close" else "open"


def lookup(model):
    return {"a": 1}[model("Which key?")]
"""


@pytest.mark.parametrize(
    "agent,typed,end",
    [
        ("opener", "close", "HALT (1): agent returned 'closed' (after 1 step)"),
        ("lookup", "zz", "RAISED (KeyError: 'zz') (after 1 step)"),
    ],
)
def test_the_end_line_says_what_the_agent_returned_or_raised(agent, typed, end, tmp_path):
    (tmp_path / "agents.py").write_text(AGENTS)
    term = Terminal(
        [sys.executable, "-m", "agentic_machines", "play", f"agents.py:{agent}"], tmp_path
    )
    try:
        term.expect("> ")
        term.send(":state")
        term.expect("trace state: 0 completions so far ()")
        term.expect("> ")
        term.send(typed)
        term.expect(end)
        term.expect("> ")
        term.send(":state")  # the ended run's state says the same
        term.expect(end)
        term.expect("> ")
        term.ctrl_d()
        term.expect("trace saved")
    finally:
        assert term.close() == 0


def test_state_in_play_spe_shows_the_environment_and_the_continuation(tmp_path):
    term = Terminal([sys.executable, "-m", "agentic_machines", "play", "spe"], tmp_path)
    try:
        term.expect("> ")
        term.send('(let ((n 2)) (+ (eval (llm "more?")) n))')
        term.expect("turn 1")
        term.expect("> ")
        term.send(":state")
        term.expect('⟨(llm "more?"), {n ↦ 2}, (+ (eval []) n)⟩')
        term.expect("> ")
        term.send("(car 1)")
        term.expect("HALT (1): error: EvaluationError: car: expected a non-empty list, got 1")
        term.expect("> ")
        term.send("quit")
        term.expect("trace saved")
    finally:
        assert term.close() == 0


def test_a_program_file_is_played_from_another_state_too(tmp_path, monkeypatch, capsys):
    (tmp_path / "hello.lisp").write_text('(string-append "Hello, " (llm "name?"))\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO("Ada\n"))
    assert main(["play", "hello.lisp"]) == 0
    assert 'HALT (1): value: "Hello, Ada" (after 1 step)' in capsys.readouterr().out
    monkeypatch.setattr(sys, "stdin", io.StringIO(":state\n"))
    assert main(["play", "f2-mul", "--from", "1"]) == 0
    assert "turn 0  state 1\n" in capsys.readouterr().out
    assert main(["play", "f2-mul", "--from", "7"]) == 2
    assert "none of the machine's states (0, 1)" in capsys.readouterr().err


def test_small_defects_of_a_session_stay_fixed():
    entry = resolve("react")
    machine = entry.machine()
    session = PlaySession(entry.name, machine, entry.start(machine))
    out = io.StringIO()
    # the default shows a grown long prompt as its gain; :back shows the gain again, not ''
    session.play(io.StringIO(" I think.\n:back\n I think.\n"), out)
    text = out.getvalue()
    assert text.count("+ ' I think.") == 2 and "+ ''" not in text
    f2 = PlaySession("f2-mul", resolve("f2-mul").machine(), 0)
    out = io.StringIO()
    f2.play(io.StringIO("#7\nclear\n"), out)
    text = out.getvalue()
    assert "#7: the list has 2 completions, #1 to #2" in text and "not in the alphabet" not in text
    assert "\x1b[2J" in text and f2.steps == []  # clear clears the screen, it is no completion
