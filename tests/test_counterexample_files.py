"""A counterexample file is a test (issue 36, item 5): ``test --save`` records the property
and each step's effects; ``run --replay`` checks that property again on the machine as it
is now: "still fails (why)", exit 1, or "no longer fails", exit 0, for every property."""

from __future__ import annotations

import json
import re

import pytest

from agentic_machines import effect
from agentic_machines.checking.result import load_check
from agentic_machines.cli.commands import main

FIXED = {"on": False}


def mailer(model):
    """Sends a mail on "send"; the buggy version sends it twice (a retry that forgot the
    first send went through); on "crash" it raises; "again" asks the same thing forever."""

    @effect
    def send_email(to: str) -> str:
        return "sent"

    while True:
        reply = model("What now? (send, crash, again, done)").strip()
        if reply == "send":
            send_email("r1")
            if not FIXED["on"]:
                send_email("r1")
            return "done"
        if reply == "crash" and not FIXED["on"]:
            raise RuntimeError("mail server down")
        if reply == "again" and FIXED["on"]:
            return "asked once"
        if reply == "done":
            return "bye"


TARGET = "tests.test_counterexample_files:mailer"
COMPLETIONS = ["-c", "send", "-c", "crash", "-c", "again", "-c", "done"]


@pytest.fixture(autouse=True)
def buggy():
    FIXED["on"] = False
    yield
    FIXED["on"] = False


def save(tmp_path, capsys, spec):
    path = tmp_path / "cx.jsonl"
    assert main(["test", TARGET, *COMPLETIONS, "-p", spec, "--save", str(path)]) == 1
    capsys.readouterr()
    return path


def test_the_saved_file_records_the_property_and_the_effects(tmp_path, capsys) -> None:
    path = save(tmp_path, capsys, "effects_at_most_once:send_email")
    check = load_check(path)
    assert check["property"] == "effects_at_most_once:send_email"
    assert [[tool.rsplit(".", 1)[-1] for tool, _ in step] for step in check["effects"]] == [
        ["send_email", "send_email"]
    ]
    end = json.loads(path.read_text().splitlines()[-1])
    assert end["kind"] == "end" and "check" in end


def test_replaying_a_double_send_still_fails_then_no_longer_fails(tmp_path, capsys) -> None:
    path = save(tmp_path, capsys, "effects_at_most_once:send_email")
    assert main(["run", TARGET, "--replay", str(path)]) == 1
    out = capsys.readouterr().out
    assert re.search(r"still fails \(send_email ran 2× for request .*'r1'.* in step 0\)", out)
    FIXED["on"] = True
    assert main(["run", TARGET, "--replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert "effects_at_most_once(send_email) no longer fails" in out
    assert "(the run of 1 step breaks nothing)" in out  # counted in words, not "step(s)"


@pytest.mark.parametrize("spec", ["never_raises", "never_diverges:prompt", "halts_within:0"])
def test_every_property_replays_the_same_way(tmp_path, capsys, spec) -> None:
    path = save(tmp_path, capsys, spec)
    assert main(["run", TARGET, "--replay", str(path)]) == 1
    assert "still fails (" in capsys.readouterr().out
    if spec == "halts_within:0":
        return  # the start is no halt, whatever the machine
    FIXED["on"] = True
    assert main(["run", TARGET, "--replay", str(path)]) == 0
    assert "no longer fails" in capsys.readouterr().out


def test_full_shows_every_prompt_whole(tmp_path, capsys) -> None:
    path = save(tmp_path, capsys, "never_raises")
    main(["run", TARGET, "--replay", str(path), "--full"])
    assert "What now? (send, crash, again, done)" in capsys.readouterr().out


def long_prompt_agent(model):
    """One long one-line prompt: the part that names the choices is past any width."""
    reply = model("Context: " + "lorem ipsum " * 20 + "-- choose: fine or crash").strip()
    if reply == "crash":
        raise RuntimeError("crashed")
    return "ok"


def test_full_shows_a_long_one_line_prompt_whole(tmp_path, capsys) -> None:
    path = tmp_path / "cx.jsonl"
    target = "tests.test_counterexample_files:long_prompt_agent"
    argv = ["test", target, "-c", "fine", "-c", "crash", "-p", "never_raises", "--save", str(path)]
    assert main(argv) == 1
    capsys.readouterr()
    assert main(["run", target, "--replay", str(path)]) == 1
    assert "-- choose: fine or crash" not in capsys.readouterr().out  # cut to the width
    assert main(["run", target, "--replay", str(path), "--full"]) == 1
    assert "lorem ipsum -- choose: fine or crash'" in capsys.readouterr().out
