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
