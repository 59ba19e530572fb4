"""The command's edges (issue 10): large or odd inputs, file errors, exit codes."""

from __future__ import annotations

import json
import os

import pytest
from _helpers import error_line

from agentic_machines.cli.commands import MAX_INPUT_BYTES, MAX_MESSAGE, build_parser, main


def test_a_script_larger_than_the_limit_is_refused_and_dev_zero_ends(tmp_path, capsys):
    assert main(["run", "f2-mul", "--script", "/dev/zero"]) == 2
    assert "/dev/zero: is a character device, not a regular file" in error_line(capsys)
    big = tmp_path / "big.txt"
    big.write_bytes(b"0\n" * (MAX_INPUT_BYTES // 2 + 1))
    assert main(["eval", "(llm 1)", "--script", str(big)]) == 2
    assert "big.txt: is larger than 10 MiB, the limit for a script file" in error_line(capsys)
    prog = tmp_path / "big.lisp"
    prog.write_bytes(b" " * (MAX_INPUT_BYTES + 1))
    assert main(["eval", str(prog)]) == 2
    assert "the limit for a program file" in error_line(capsys)


def test_error_messages_do_not_echo_huge_input(tmp_path, capsys):
    assert main(["eval", "(" + "a" * 100_000]) == 2
    assert len(error_line(capsys)) < MAX_MESSAGE + 40
    assert main(["check", "x" * 100_000]) == 2
    assert len(error_line(capsys)) < MAX_MESSAGE + 40
    assert main(["diagram", "f2-mul", "--depth", "z" * 100_000]) == 2
    assert len(error_line(capsys)) < MAX_MESSAGE + 80


def test_a_script_that_is_not_utf8_names_the_file(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfebinary")
    assert main(["run", "f2-mul", "--script", str(bad)]) == 2
    assert "bad.txt is not UTF-8 text" in error_line(capsys)


def test_a_run_failing_on_a_bad_completion_writes_an_end_line(tmp_path, capsys):
    script, save = tmp_path / "s.txt", tmp_path / "t.jsonl"
    script.write_text("1\nnot-a-completion\n", encoding="utf-8")
    assert main(["run", "f2-mul", "--script", str(script), "--save", str(save)]) == 2
    assert "not-a-completion" in error_line(capsys)
    lines = [json.loads(x) for x in save.read_text(encoding="utf-8").splitlines()]
    assert [x["kind"] for x in lines] == ["header", "step", "end"]
    assert (
        lines[-1]["end"] == "harness-error"
        and "not in the completion alphabet" in lines[-1]["message"]
    )
    from agentic_machines import Trace

    assert Trace.load(save).end == "harness-error"


def test_run_exits_non_zero_when_the_script_runs_out(tmp_path, capsys):
    script = tmp_path / "s.txt"
    script.write_text("1\n", encoding="utf-8")
    assert main(["run", "f2-add", "--script", str(script)]) == 2
    captured = capsys.readouterr()
    assert "model-error" in captured.out and "ScriptedModel has only 1" in captured.err


def test_a_directory_given_to_eval_is_reported_as_a_directory(tmp_path, capsys):
    assert main(["eval", str(tmp_path)]) == 2
    assert "is a directory" in error_line(capsys)
    assert main(["run", "f2-mul", "--script", str(tmp_path)]) == 2
    assert "is a directory" in error_line(capsys)


@pytest.mark.parametrize(
    "argv",
    [
        ["diagram", "no-such"],
        ["diagram", "no-such", "--format", "xx"],
        ["diagram", "no-such", "-o", "x.pdf"],
    ],
)
def test_diagram_reports_an_unknown_machine_first(argv, capsys):
    assert main(argv) == 2
    assert "unknown machine 'no-such'" in error_line(capsys)


def test_diagram_writes_a_pdf_or_refuses_the_suffix(tmp_path, capsys):
    pdf = tmp_path / "x.pdf"
    assert main(["diagram", "f2-mul", "-o", str(pdf)]) == 0
    assert pdf.read_bytes().startswith(b"%PDF")
    capsys.readouterr()
    assert main(["diagram", "f2-mul", "-o", str(tmp_path / "x.xyz")]) == 2
    assert "cannot tell the format" in error_line(capsys)
    assert main(["diagram", "f2-mul", "--format", "png", "-o", str(tmp_path / "y.pdf")]) == 2
    assert "make them agree" in error_line(capsys)
    assert not (tmp_path / "x.xyz").exists() and not (tmp_path / "y.pdf").exists()


def test_io_errors_name_the_path(tmp_path, capsys):
    missing = tmp_path / "nope" / "x.png"
    assert main(["diagram", "f2-mul", "-o", str(missing)]) == 2
    assert str(missing.parent) in error_line(capsys)
    assert main(["run", "f2-mul", "--script", str(tmp_path / "none.txt")]) == 2
    assert "none.txt" in error_line(capsys)
    script = tmp_path / "s.txt"
    script.write_text("1\n", encoding="utf-8")
    assert main(["run", "halt1", "--script", str(script), "--save", str(missing)]) == 2
    assert "nope" in error_line(capsys)


def test_divergence_in_eval_is_an_outcome(capsys):
    assert main(["eval", "(letrec ((f (lambda () (f)))) (f))"]) == 0
    captured = capsys.readouterr()
    assert (
        captured.out.startswith("DIVERGE (↑): ")
        and "loops forever" in captured.out
        and not captured.err
    )


def test_deep_or_endless_input_files_are_one_line(tmp_path, capsys):
    deep = tmp_path / "deep.txt"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert main(["run", "f2-mul", "--script", str(deep)]) == 2
    assert "nested too deeply" in error_line(capsys)
    for suffix, text in ((".json", "[" * 100_000), (".toml", "a=" + "[" * 100_000)):
        machine = tmp_path / f"deep{suffix}"
        machine.write_text(text + "]" * 100_000, encoding="utf-8")
        assert main(["check", str(machine)]) == 2
        assert f"deep{suffix}: " in error_line(capsys)
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    assert main(["check", str(zero)]) == 2
    assert "zero.json: is a character device" in error_line(capsys)
    assert main(["run", "f2-mul", "--replay", "/dev/zero"]) == 2
    assert "/dev/zero: is a character device" in error_line(capsys)
    (tmp_path / "s.txt").write_text("0\n", encoding="utf-8")
    assert main(["run", "f2-mul", "--script", str(tmp_path / "s.txt"), "--save", "/dev/full"]) == 2
    assert "cannot use /dev/full" in capsys.readouterr().err


# -- issue 23: special files, the machine-file tracebacks, no echo of file content --------


def _not_regular(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # no writer: a plain open() would block for ever
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    return [str(fifo), "/dev/zero", "/dev/null", str(tmp_path), str(loop)]


def test_every_file_argument_refuses_what_is_not_a_regular_file(tmp_path, capsys):
    links = tmp_path / "links"
    links.mkdir()
    for i, path in enumerate(_not_regular(tmp_path)):
        link = links / f"{i}.json"  # machine files and answers are named by their suffix
        link.symlink_to(path)
        for argv in (
            ["check", str(link)],
            ["exercise", "1.1", str(link)],
            ["run", "f2-mul", "--script", path],
            ["run", "f2-mul", "--replay", path],
            ["test", "f2-mul", "--alphabet", path],
            ["explore", "f2-mul", "--completions", path],
            ["eval", "(llm 1)", "--script", path],
        ):
            assert main(argv) == 2, argv
            line = error_line(capsys)
            assert "not a regular file" in line or "cannot read it" in line, (argv, line)
    fifo = tmp_path / "prog.lisp"
    os.mkfifo(fifo)
    assert main(["eval", str(fifo)]) == 2
    assert "prog.lisp: is a FIFO (named pipe), not a regular file" in error_line(capsys)
    py = tmp_path / "agent.py"
    os.mkfifo(py)
    assert main(["check", f"{py}:machine"]) == 2
    assert "agent.py: is a FIFO (named pipe), not a regular file" in error_line(capsys)
    answer = tmp_path / "answer.py"
    os.mkfifo(answer)
    assert main(["exercise", "1.1", str(answer)]) == 2
    assert "is a FIFO (named pipe), not a regular file" in error_line(capsys)


def test_a_machine_file_with_a_list_as_initial_state_or_completion_is_one_line(tmp_path, capsys):
    # Both were TypeError tracebacks (an unhashable list reached a set or dict lookup).
    doc = {"name": "m", "states": [{"id": 0, "prompt": "p", "on": {"a": "HALT"}}]}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**doc, "initial": [0]}), encoding="utf-8")
    assert main(["check", str(bad)]) == 2
    assert "key initial: is [0]; the initial state is the id of a state" in error_line(capsys)
    bad.write_text(json.dumps({**doc, "completions": [["a"]]}), encoding="utf-8")
    assert main(["check", str(bad)]) == 2
    assert "key completions[0]: is ['a']; completions are strings" in error_line(capsys)


def test_a_replay_whose_start_state_is_a_list_is_one_line(tmp_path, capsys):
    script, save = tmp_path / "s.txt", tmp_path / "t.jsonl"
    script.write_text("1\n0\n", encoding="utf-8")
    main(["run", "f2-mul", "--script", str(script), "--save", str(save)])
    lines = [json.loads(x) for x in save.read_text(encoding="utf-8").splitlines()]
    lines[0]["start"] = []
    save.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    capsys.readouterr()
    assert main(["run", "f2-mul", "--replay", str(save)]) == 2
    assert "the recorded start state [] is not a state of 'f2-mul'" in error_line(capsys)


def test_a_script_error_never_echoes_the_environment(capsys):
    # Was: the error line quoted the first 300 characters of /proc/self/environ.
    assert main(["run", "f2-mul", "--script", "/proc/self/environ"]) == 2
    line = error_line(capsys)
    assert "is binary data (a NUL byte" in line and "PATH=" not in line and "HOME=" not in line


def test_machine_file_messages_escape_and_cut_what_they_quote(tmp_path, capsys):
    doc = {
        "name": "m",
        "\x1b[2J" + "k" * 1000: 1,
        "states": [{"id": "\x1b]0;" + "x" * 5000, "prompt": 7, "on": {"a": "HALT"}}],
    }
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    from agentic_machines.errors import InvalidMachineFile
    from agentic_machines.machinefile import load_machine

    with pytest.raises(InvalidMachineFile) as info:
        load_machine(bad)
    message = str(info.value)
    assert "\x1b" not in message and "\\u001b" in message and len(message) < 600, message
    many = {"name": "m", "states": [{"id": i, "prompt": "p"} for i in range(1000)]}
    bad.write_text(json.dumps(many), encoding="utf-8")
    with pytest.raises(InvalidMachineFile) as info:
        load_machine(bad)
    assert len(info.value.problems) == 1000 and "and 980 more" in str(info.value)
    assert len(str(info.value)) < 4000


def test_the_error_line_escapes_what_a_terminal_would_act_on(capsys):
    assert main(["check", "\x1b[2J\x1b]0;title\x07" + "x" * 1000]) == 2
    line = error_line(capsys)
    assert line.isprintable() and "\\x1b[2J" in line and len(line) < MAX_MESSAGE + 40


REPLAYED = """
from agentic_machines import FunctionMachine, HALT


def _prompt(state):
    return "at " + state.upper()  # a state that is not a string raises AttributeError


machine = FunctionMachine(_prompt, lambda s, c: HALT, initial="a", name="strict")
"""


def test_a_machine_that_raises_on_a_recorded_state_is_a_replay_mismatch(tmp_path, capsys):
    target = tmp_path / "strict.py"
    target.write_text(REPLAYED, encoding="utf-8")
    script, save = tmp_path / "s.txt", tmp_path / "t.jsonl"
    script.write_text("go\n", encoding="utf-8")
    assert main(["run", f"{target}:machine", "--script", str(script), "--save", str(save)]) == 0
    lines = [json.loads(x) for x in save.read_text(encoding="utf-8").splitlines()]
    lines[0]["start"] = 7
    lines[-1]["message"] = "\x1b[2J" + "m" * 10_000
    save.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    capsys.readouterr()
    assert main(["run", f"{target}:machine", "--replay", str(save)]) == 2
    line = error_line(capsys)
    assert "the machine raised AttributeError" in line and "not recorded on this machine" in line


def test_small_things_a_class_hit(tmp_path, capsys):
    from agentic_machines.architectures.catalog import names

    # check --help lists the built-in names it promises
    with pytest.raises(SystemExit):
        build_parser().parse_args(["check", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert all(name in help_text for name in names())
    # the fuel error names the command line's --fuel
    assert main(["eval", "(letrec ((f (lambda (n) (f (+ n 1))))) (f 0))", "--fuel", "100"]) == 2
    err = capsys.readouterr().err
    assert "--fuel N" in err and "fuel=" not in err and err.count("\n") == 1
    # gallery FILE fails before drawing anything
    target = tmp_path / "g.txt"
    target.write_text("x")
    assert main(["gallery", str(target)]) == 2
    out, err = capsys.readouterr()
    assert "is a file, not a folder" in err and "picture" not in out
    # a missing program file is named as missing; a deep exercise answer is one line
    assert main(["eval", str(tmp_path / "missing.lisp")]) == 2
    assert "No such file" in capsys.readouterr().err
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert main(["exercise", "1.1", str(deep)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
