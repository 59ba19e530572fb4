"""Model output printed as text never carries a terminal control sequence to the terminal."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agentic_machines.cli.commands import main

sys.path.insert(0, str(Path(__file__).parent))

from _helpers import cli  # noqa: E402

HOSTILE = "Thought 1: \x1b[2J\x1b]0;owned\x07cleared\rover\x9b31m"


def test_run_full_escapes_model_output(tmp_path, capsys):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([HOSTILE, "Thought 2: done\nAction 2: Finish[x]"]))
    main(["run", "react", "--script", str(script), "--full"])
    out = capsys.readouterr().out
    assert "cleared" in out  # the completion is shown, in the next prompt too
    assert not any(c in out for c in "\x1b\x07\r\x9b"), repr(out)
    assert "\\x1b[2J" in out


def test_explore_escapes_model_output(capsys):
    main(["explore", "react", "-c", HOSTILE, "--depth", "1"])
    out = capsys.readouterr().out
    assert not any(c in out for c in "\x1b\x07\r\x9b"), repr(out)


CONTROLS = "\x1b\x07\r\x9b"  # ESC (CSI, OSC), BEL, carriage return, the one-byte CSI


def _raw_controls(text: str) -> list[str]:
    return [c for c in CONTROLS if c in text]


def test_test_prints_a_counterexample_with_escapes(tmp_path, capsys):
    # The harness raises with the completion in its message: the verdict, the
    # counterexample's explanation and the snippet's comment all quote it unrepr'd.
    target = tmp_path / "hostile_target.py"
    target.write_text(
        "from agentic_machines import FunctionMachine\n"
        "def harness(state, completion):\n"
        "    raise ValueError('cannot parse ' + completion)\n"
        "machine = FunctionMachine(lambda s: 'go?', harness, initial=0, name='hostile')\n"
    )
    status = main(
        ["test", f"{target}:machine", "-c", HOSTILE, "-p", "never_raises", "--isolation", "inline"]
    )
    out = capsys.readouterr().out
    assert status == 1 and "counterexample to never_raises" in out, out
    assert not _raw_controls(out), repr(out)
    assert "cannot parse Thought 1: \\x1b[2J\\x1b]0;owned\\x07cleared" in out  # escaped


def test_check_result_report_escapes_a_raised_message():
    from agentic_machines import FunctionMachine
    from agentic_machines.checking import check_properties, never_raises

    def harness(state, completion):
        raise ValueError(completion)

    m = FunctionMachine(lambda s: "go?", harness, initial=0, name="hostile")
    result = check_properties(m, 0, [never_raises()], completions=[HOSTILE])
    report = result.report()
    assert not result and not _raw_controls(report), repr(report)
    assert "\\x1b[2J" in report


def _eval_out(capsys, argv: list[str]) -> tuple[int, str, str]:
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_eval_escapes_a_completion_value_steps_and_errors(tmp_path, capsys):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([HOSTILE]))
    # the value is the completion
    status, out, _ = _eval_out(capsys, ["eval", '(llm "x")', "--script", str(script)])
    assert status == 0 and "cleared" in out and not _raw_controls(out), repr(out)
    assert "\\x1b[2J" in out
    # every CEK step shows it
    status, out, _ = _eval_out(capsys, ["eval", "--step", '(llm "x")', "--script", str(script)])
    assert status == 0 and "cleared" in out and not _raw_controls(out), repr(out)
    # an error of the program that quotes it (on stdout: an outcome of the program)
    program = '(+ 1 (llm "x"))'
    status, out, err = _eval_out(capsys, ["eval", program, "--script", str(script)])
    assert "cleared" in out + err and not _raw_controls(out + err), repr(out + err)


def test_eval_spell_escapes_the_model_turns_and_the_value(tmp_path, capsys):
    script = tmp_path / "script.json"
    script.write_text(json.dumps(['(quote "\x1b[2J\x1b]0;owned\x07done")']))
    program = '(quine completion (eval (do \'(!llm-self "Pick."))))'
    status, out, err = _eval_out(capsys, ["eval", "--spell", program, "--script", str(script)])
    assert status == 0 and "owned" in out and not _raw_controls(out + err), repr(out + err)


def test_play_echoes_piped_input_with_its_controls_escaped(tmp_path, monkeypatch, capsys):
    # a completion piped into play (taken from a model's output) is echoed after its '>'
    import io
    import sys

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO(HOSTILE.replace("\r", "") + "\nquit\n"))
    main(["play", "react"])
    out = capsys.readouterr().out
    assert "cleared" in out and "\\x1b[2J" in out
    assert _raw_controls(out) == [], repr(out)


def _hostile_machine_file(folder) -> tuple[str, str]:
    """A machine file whose name, state ids, prompts and completions carry control
    sequences (a model wrote it, or a file a model's output went into), and a script."""
    title, clear = "\x1b]0;pwned\x07", "\x1b[2J"
    doc = {
        "format": "agentic-machines/machine",
        "version": 1,
        "name": "esc" + clear,
        "initial": "s" + title,
        "states": [
            {
                "id": "s" + title,
                "prompt": "title " + HOSTILE + "\nnext line\rover",
                "on": {"go" + title: "t" + clear, "stop\x9b31m": "HALT"},
            },
            {
                "id": "t" + clear,
                "prompt": "second " + clear + title,
                "on": {"go" + title: "s" + title, "stop\x9b31m": "DIVERGE"},
            },
        ],
    }
    machine, script = folder / "hostile.json", folder / "script.json"
    machine.write_text(json.dumps(doc))
    script.write_text(json.dumps(["go" + title, "go" + title, "stop\x9b31m"]))
    return str(machine), str(script)


def test_a_machine_files_text_is_printed_escaped_by_every_verb(tmp_path, capsys):
    # run (its steps, and --full's whole prompts), check (the verdicts name the machine and
    # its states), explore's listing and diagram's text formats (labels, the graph's name)
    machine, script = _hostile_machine_file(tmp_path)
    for argv in (
        ["run", machine, "--script", script],
        ["run", machine, "--script", script, "--full"],
        ["check", machine],
        ["explore", machine],
        ["diagram", machine, "--format", "mermaid"],
        ["diagram", machine, "--format", "dot"],
        ["diagram", machine, "--format", "json"],
    ):
        status = main(argv)
        captured = capsys.readouterr()
        printed = captured.out + captured.err
        assert status == 0, (argv, printed)
        assert not _raw_controls(printed), (argv, repr(printed))
        # shown, escaped (JSON's own escape is \u001b; DOT doubles a backslash)
        assert "pwned" in printed and ("x1b" in printed or "u001b" in printed), (argv, printed)
        if argv[0] in ("run", "check"):
            assert "esc\\x1b[2J" in printed, (argv, printed)  # the name, in the header


def test_run_full_escapes_a_machine_files_text_in_the_installed_command(tmp_path):
    # the same through the command as a user runs it, its bytes as the terminal gets them
    machine, script = _hostile_machine_file(tmp_path)
    done = cli(tmp_path, "run", machine, "--script", script, "--full")
    assert done.returncode == 0, done.stderr
    assert not _raw_controls(done.stdout + done.stderr), repr(done.stdout)
    assert "title Thought 1: \\x1b[2J\\x1b]0;owned\\x07cleared\\x0dover\\x9b31m" in done.stdout


def test_check_of_a_machine_with_infinitely_many_states_escapes_its_text(tmp_path, capsys):
    # check's sampled verdict (-c completions) names the machine and the start state
    target = tmp_path / "endless.py"
    target.write_text(
        "from agentic_machines import FunctionMachine, HALT\n"
        "machine = FunctionMachine(lambda s: 'go ' + s, lambda s, c: HALT if len(s) > 30 "
        "else s + c, initial='\\x1b[2J', name='endless\\x1b]0;pwned\\x07')\n"
    )
    status = main(["check", f"{target}:machine", "-c", HOSTILE, "--isolation", "inline"])
    out = capsys.readouterr().out
    assert status == 0 and "SPE state of endless\\x1b]0;pwned\\x07" in out, out
    assert not _raw_controls(out), repr(out)
