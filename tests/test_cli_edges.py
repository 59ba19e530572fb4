"""The command's edges (issue 10): large or odd inputs, file errors, exit codes."""

from __future__ import annotations

import json

import pytest

from agentic_machines.cli.commands import MAX_INPUT_BYTES, MAX_MESSAGE, main


def error_line(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("agentic-machines") and "error:" in lines[0]
    assert "Traceback" not in captured.err + captured.out
    return lines[0]


def test_a_script_larger_than_the_limit_is_refused_and_dev_zero_ends(tmp_path, capsys):
    assert main(["run", "f2-mul", "--script", "/dev/zero"]) == 2
    assert "/dev/zero is larger than 10 MiB" in error_line(capsys)
    big = tmp_path / "big.txt"
    big.write_bytes(b"0\n" * (MAX_INPUT_BYTES // 2 + 1))
    assert main(["eval", "(llm 1)", "--script", str(big)]) == 2
    assert "big.txt is larger than" in error_line(capsys)
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
    bad.write_bytes(b"\xff\xfe\x00binary")
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
    assert "the limit for a machine file" in error_line(capsys)
    assert main(["run", "f2-mul", "--replay", "/dev/zero"]) == 2
    assert "/dev/zero:1: binary data" in error_line(capsys)
    (tmp_path / "s.txt").write_text("0\n", encoding="utf-8")
    assert main(["run", "f2-mul", "--script", str(tmp_path / "s.txt"), "--save", "/dev/full"]) == 2
    assert "cannot use /dev/full" in capsys.readouterr().err
