"""The agentic-machines command: main([...]) in process, plus one subprocess run of --help."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from _helpers import error_line

from agentic_machines.cli.commands import main, read_script

ROOT = Path(__file__).resolve().parent.parent
PNG = b"\x89PNG\r\n\x1a\n"


def test_help_everywhere(capsys):
    assert main(["--help"]) == 0
    assert "demo" in capsys.readouterr().out
    for command in ("demo", "check", "diagram", "run", "eval", "explain"):
        assert main([command, "--help"]) == 0
        assert "usage: agentic-machines " + command in capsys.readouterr().out
    assert main([]) == 0 and "COMMAND" in capsys.readouterr().out


def test_diagram_png_of_f2_mul(tmp_path, capsys):
    out = tmp_path / "out.png"
    assert main(["diagram", "f2-mul", "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == PNG
    assert "2 states, 3 edges" in capsys.readouterr().out


def test_diagram_svg_shows_both_states_sentinels_and_edge_labels(tmp_path):
    out = tmp_path / "mul.svg"
    assert main(["diagram", "f2-mul", "-o", str(out)]) == 0
    ET.parse(out)
    text = out.read_text()
    # matplotlib's SVG keeps every drawn text as a comment next to its glyphs
    drawn = set(re.findall(r"<!-- (.*?) -->", text))
    assert {"0", "1", "⋆"} <= drawn  # both states, with their prompt
    assert {"0, 1", "SPE state", "initial state"} <= drawn  # merged edge label, legend
    halt = tmp_path / "halt.svg"
    assert main(["diagram", "halt1", "-o", str(halt)]) == 0
    assert "<!-- HALT -->" in halt.read_text()  # the sentinel is drawn when reachable


def test_diagram_mermaid_to_stdout(capsys):
    assert main(["diagram", "f2-mul", "--format", "mermaid"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("flowchart TD")
    assert 's0(["0<br/>⋆"])' in out and 's1(["1<br/>⋆"])' in out
    assert '-->|"0, 1"|' in out and "class s1 spe" in out


def test_diagram_text_formats_to_files(tmp_path):
    for fmt, suffix in (("dot", ".dot"), ("json", ".json"), ("mermaid", ".mmd")):
        out = tmp_path / f"g{suffix}"
        assert main(["diagram", "diverge1", "-o", str(out)]) == 0  # format from the suffix
        text = out.read_text()
        assert "DIVERGE" in text, fmt
    data = json.loads((tmp_path / "g.json").read_text())
    assert [n["id"] for n in data["nodes"]] == ["s0", "DIVERGE"]


def test_diagram_of_an_architecture(tmp_path, capsys):
    out = tmp_path / "react.mmd"
    assert main(["diagram", "react", "-o", str(out), "--depth", "2"]) == 0
    text = out.read_text()
    assert "class s0 initial" in text and "successor" in text and "obstruction" in text
    assert "truncated" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["check", "nope"], "unknown machine 'nope'"),
        (["diagram", "f2-mull", "--format", "mermaid"], "did you mean f2-mul"),
        (["diagram", "f2-mul"], "needs a file"),
        (["diagram", "f2-mul", "--format", "bmp"], "unknown --format 'bmp'"),
        (["diagram", "f2-mul", "--depth", "-1", "--format", "dot"], "0 or more"),
        (["run", "f2-mul", "--script", "/nonexistent/script.txt"], "/nonexistent/script.txt"),
        (["eval", "(+ 1"], "unclosed"),
        (["eval", "/nonexistent/prog.lisp"], "prog.lisp"),
        (["eval", '(llm "x")'], "script has only 0"),
        (["explain", "embeding"], "did you mean embedding"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, needle, capsys):
    assert main(argv) == 2
    assert needle in error_line(capsys)


def test_check_fixture_and_architecture(capsys):
    assert main(["check", "f2-mul"]) == 0
    out = capsys.readouterr().out
    assert "state 0: Refuted" in out and "state 1: Holds" in out and "SPE states: {1}" in out
    assert "identity embedding: Holds" in out
    assert main(["check", "f2-const"]) == 0
    assert "SPE states: none" in capsys.readouterr().out
    assert main(["check", "react"]) == 0
    assert "refuted" in capsys.readouterr().out


def test_run_with_script(tmp_path, capsys):
    script = tmp_path / "s.txt"
    script.write_text("1\n0\n")
    assert main(["run", "f2-mul", "--script", str(script), "--max-steps", "2"]) == 0
    out = capsys.readouterr().out
    assert "2 steps" in out and "'1'" in out
    js = tmp_path / "s.json"
    js.write_text(json.dumps(["1", "multi\nline"]))
    assert read_script(js) == ["1", "multi\nline"]
    bad = tmp_path / "bad.json"
    bad.write_text('["a", 3]')
    assert main(["run", "f2-mul", "--script", str(bad)]) == 2
    assert "list of strings" in error_line(capsys)


@pytest.mark.parametrize("name,label", [("halt1", "HALT (1)"), ("diverge1", "DIVERGE (↑)")])
def test_outcomes_are_named_in_text_output(name, label, tmp_path, capsys):
    # halt1's state is 0 and its outcome HALT prints as 1: text output must not let
    # the outcome read as a state, in run's table, its head line, and explore's listing.
    script = tmp_path / "s.txt"
    script.write_text("0\n")
    assert main(["run", name, "--script", str(script)]) == 0
    out = capsys.readouterr().out
    assert f"ended with {label}." in out.splitlines()[0]
    assert out.splitlines()[-1].rstrip().endswith(label)
    assert main(["explore", name]) == 0
    assert f"'0' -> {label}" in capsys.readouterr().out


def test_eval_text_file_and_script(tmp_path, capsys):
    assert main(["eval", "(let ((x 20)) (+ x 22))"]) == 0
    assert capsys.readouterr().out.strip() == "42"
    prog = tmp_path / "p.lisp"
    prog.write_text('(string-append (llm "name?") "!")')
    script = tmp_path / "s.txt"
    script.write_text("Ada\n")
    assert main(["eval", str(prog), "--script", str(script)]) == 0
    out = capsys.readouterr().out
    assert 'llm call 1: "name?"' in out and '"Ada!"' in out


def test_explain(capsys):
    assert main(["explain", "spe", "state"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("SPE state") and "In symbols:" in out and "Example" in out
    assert main(["explain"]) == 0
    assert "completion-generation" in capsys.readouterr().out


def test_demo(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "f2-mul" in out and "SPE states: {1}" in out
    assert (tmp_path / "f2-mul.png").read_bytes()[:8] == PNG
    assert (tmp_path / "f2-mul.mmd").read_text().startswith("flowchart TD")


def test_python_dash_m_help():
    proc = subprocess.run(
        [sys.executable, "-m", "agentic_machines", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and "usage: agentic-machines" in proc.stdout


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["check", "halt1", "-c", "zzz", "--depth", "7"], "would change nothing"),
        (["check", "react", "--depth", "3"], "would change nothing"),
        (["check", "halt1", "-c", "zzz"], "would change nothing"),
        (["explore", "halt1", "-c", "zzz"], "'zzz' is not in the completion alphabet"),
        (["test", "halt1", "-c", "zzz"], "'zzz' is not in the completion alphabet"),
        (["diagram", "halt1", "-c", "zzz", "--format", "json"], "not in the completion alphabet"),
    ],
)
def test_options_that_do_not_apply_are_refused_not_ignored(argv, needle, capsys):
    assert main(argv) == 2
    assert needle in error_line(capsys)
