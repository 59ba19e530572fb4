"""The `test` command, counterexample snippets and trace files, `run --replay`."""

from __future__ import annotations

import json

from agentic_machines import HALT, FunctionMachine, HarnessMachine, run
from agentic_machines.checking import check_properties, halts_within, never_raises
from agentic_machines.cli.commands import main
from agentic_machines.cli.test_cmd import replay_trace
from agentic_machines.runtime import search as search_module
from agentic_machines.runtime.local_models import ScriptedModel
from agentic_machines.runtime.run import Trace


def test_exit_0_when_all_hold_1_when_one_fails_2_on_bad_input(capsys):
    assert main(["test", "f2-add", "--property", "never_raises"]) == 0
    assert "PASS never_raises()" in capsys.readouterr().out
    assert main(["test", "f2-mul", "-p", "never_diverges", "-p", "halts_within:3"]) == 1
    out = capsys.readouterr().out
    assert "FAIL never_diverges()" in out and "lasso" in out
    # halts_within:3 is refuted by the same self-loop, shown as its lasso (one step, for ever)
    assert "FAIL halts_within(3)" in out
    assert out.count("run(machine, ScriptedModel(['0']), machine.initial, max_steps=1)") == 2
    assert main(["test", "f2-mul", "-p", "halts_within"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agentic-machines: error: halts_within needs a number")
    assert main(["test", "no-such", "-p", "never_raises"]) == 2
    assert main(["test", "f2-mul", "-p", "sometimes"]) == 2
    assert "unknown property" in capsys.readouterr().err


def test_alphabet_file_and_depth(tmp_path, capsys):
    alphabet = tmp_path / "alphabet.json"
    alphabet.write_text(json.dumps(["1"]))
    assert main(["test", "f2-add", "--alphabet", str(alphabet), "-p", "halts_within:5"]) == 1
    # 0 -> 1 -> 0 on '1': the run never halts, shown as the 2-step lasso (not 5 steps of it)
    assert "(2 steps, lasso)" in capsys.readouterr().out
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert main(["test", "f2-add", "--alphabet", str(empty)]) == 2


def test_test_takes_the_completions_every_verb_takes(tmp_path, capsys):
    # -c and --completions as for check, diagram and explore; --alphabet is the old spelling
    alphabet = tmp_path / "alphabet.json"
    alphabet.write_text(json.dumps(["1"]))
    assert main(["test", "f2-add", "-c", "1", "-p", "halts_within:5"]) == 1
    by_flag = capsys.readouterr()
    assert "(2 steps, lasso)" in by_flag.out and "deprecated" not in by_flag.out
    assert main(["test", "f2-add", "--completions", str(alphabet), "-p", "halts_within:5"]) == 1
    assert capsys.readouterr().out == by_flag.out
    assert main(["test", "f2-add", "--alphabet", str(alphabet), "-p", "halts_within:5"]) == 1
    old = capsys.readouterr().out
    assert old.startswith("(note: --alphabet FILE is deprecated; write --completions FILE)\n")
    assert old.split("\n", 1)[1] == by_flag.out


def test_save_and_replay_reproduce_the_counterexample(tmp_path, capsys):
    path = tmp_path / "cx.jsonl"
    assert main(["test", "f2-mul", "-p", "halts_within:2", "--save", str(path)]) == 1
    assert "--replay" in capsys.readouterr().out
    saved = Trace.load(path)
    assert saved.completions == ["0"] and saved.end == "max_steps"  # the self-loop's lasso
    # a counterexample file is a test: the property is checked again (issue 36, item 5)
    assert main(["run", "f2-mul", "--replay", str(path)]) == 1
    assert "halts_within(2) still fails (" in capsys.readouterr().out
    # replayed on another machine, it says so, and checks the property there
    assert main(["run", "f2-add", "--replay", str(path)]) in (0, 1)
    assert "(recorded on 'f2-mul', re-checked on 'f2-add')" in capsys.readouterr().out
    # a plain trace file (no property recorded) is replayed step by step as before
    trace = tmp_path / "plain.jsonl"
    Trace.load(path).save(trace)
    assert main(["run", "f2-mul", "--replay", str(trace)]) == 0
    assert "every step as recorded" in capsys.readouterr().out


def test_react_exhaustive_on_its_diagram_alphabet(capsys):
    code = main(["test", "react", "-p", "halts_within:8", "-p", "never_raises", "--max-depth", "9"])
    assert code == 0
    out = capsys.readouterr().out
    assert "the whole reachable graph" in out and "coverage:" in out


def _crashy():
    def h(n, c):
        if c == "bad":
            raise IndexError("malformed action")
        return HALT if c == "stop" else n + 1

    return FunctionMachine(lambda n: f"at {n}", h, initial=0, name="crashy")


def test_a_crash_counterexample_saves_and_replays(tmp_path, capsys):
    result = check_properties(_crashy(), properties=[never_raises()], completions=["go", "bad"])
    cx = result.counterexample("never_raises()")
    assert cx.completions == ("bad",)
    path = tmp_path / "crash.jsonl"
    cx.save(path)
    loaded = Trace.load(path)
    assert loaded.pending == ("at 0", "bad") and "IndexError" in loaded.message
    assert replay_trace(_crashy(), str(path)) == 1
    assert "as recorded, the harness raised IndexError" in capsys.readouterr().out


def test_snippets_run_and_give_the_counterexample_trace():
    def program():
        n = 0
        while True:
            c = yield f"n={n}"
            if c == "stop":
                return n
            n += 1

    machine = HarnessMachine(program, name="counter")
    result = check_properties(machine, properties=[halts_within(3)], completions=["up", "stop"])
    cx = result.counterexample("halts_within(3)")
    namespace = {"machine": machine}
    exec(cx.snippet(), namespace)
    assert namespace["trace"] == cx.trace()
    again = run(machine, ScriptedModel(list(cx.completions)), machine.initial, max_steps=len(cx))
    assert again == cx.trace()


def test_a_progress_line_for_long_checks(monkeypatch):
    monkeypatch.setattr(search_module, "PROGRESS_AFTER", 0.0)
    monkeypatch.setattr(search_module, "PROGRESS_EVERY", 0.0)
    seen = []
    m = FunctionMachine(lambda n: str(n), lambda n, c: n + 1, initial=0)
    check_properties(
        m, properties=[never_raises()], completions=["a"], max_depth=200, progress=seen.append
    )
    assert seen and seen[-1]["final"] and seen[-1]["states"] == 201
    assert {"states", "transitions", "states_per_second", "seconds"} <= set(seen[0])


def test_help_lists_the_test_command(capsys):
    assert main(["test", "--help"]) == 0
    assert "--hypothesis" in capsys.readouterr().out
