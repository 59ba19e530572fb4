"""Model output printed as text never carries a terminal control sequence to the terminal."""

from __future__ import annotations

import json

from agentic_machines.cli.commands import main

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
