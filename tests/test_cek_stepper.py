"""The CEK stepper: ⟨e, ρ, κ⟩ lines, continuations as programs with a hole, and
``eval --step`` (its output for a small program is the golden file
tests/golden/cek/step.txt; regenerate with AGENTIC_MACHINES_UPDATE_GOLDEN=1)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from agentic_machines.cek import first_boundary, parse, run_program
from agentic_machines.cek.expr import compile_program, to_datum
from agentic_machines.cek.machine import HALT_K, Boundary, Halted, Ret, run_by_steps, step
from agentic_machines.cek.reader import parse_program
from agentic_machines.cek.stepper import kont_text, rule_of, show_state, start_state
from agentic_machines.cek.syntax import printed
from agentic_machines.cli.commands import main
from agentic_machines.cli.step_eval import step_program
from agentic_machines.testing import check_golden

GOLDEN = Path(__file__).parent / "golden" / "cek" / "step.txt"

PROGRAM = '(let ((n 2)) (if (llm "go?") (+ n (string-length (llm "word?"))) 0))'


def stepped(program: str, completions: list[str]) -> tuple[int, str]:
    lines: list[str] = []
    code = step_program(program, completions, None, io.StringIO(), lines.append)
    return code, "\n".join(lines) + "\n"


def test_the_golden_stepper_output():
    code, text = stepped(PROGRAM, ["yes", "four"])
    assert code == 0
    check_golden(GOLDEN, text)


def test_stepping_agrees_with_the_machine_run():
    # The stepper takes the machine's own steps: the value and the count of steps between
    # boundaries are the run's.
    code, text = stepped(PROGRAM, ["yes", "four"])
    assert text.splitlines()[-1] == "HALT (1): the value is 6 after 16 steps"
    assert run_program(PROGRAM, ["yes", "four"]).value == 6
    state = start_state(parse(PROGRAM))
    b, n = run_by_steps(state, fuel=1000)
    assert type(b) is Boundary and f'{n:>4}  llm  ⟨(llm "go?")' in text


@pytest.mark.parametrize(
    "program",
    [
        '(string-append "Dear " (llm "name?"))',
        '(begin (llm "a") 2)',
        '(if (llm "ok?") 1 2)',
        '(eval (llm "code?"))',
        '(llm (llm "q"))',
        '(let ((x 1)) (+ x (string-length (llm "w"))))',
        '(let* ((a 1) (b (string-length (llm "w"))) (c (+ b 1))) c)',
        '(let* ((a (llm "w"))) a)',
    ],
)
def test_the_hole_is_where_the_boundary_was(program):
    # Plugging the llm call back into the continuation's hole gives the source context of
    # the call (with the values computed so far in place of what was evaluated).
    b = first_boundary(program)
    context = kont_text(b.kont)
    assert context.count("[]") == 1
    plugged = context.replace("[]", f'(llm "{b.prompt}")')
    assert first_boundary(plugged).prompt == b.prompt


def test_no_state_or_frame_repr_shows_an_address():
    state = start_state(parse(PROGRAM))
    seen = []
    while type(state) is not Halted:
        seen.append(state)
        state = Ret("yes", state.kont) if type(state) is Boundary else step(state)
    texts = [repr(s) for s in seen] + [repr(s.kont) for s in seen] + [show_state(s) for s in seen]
    frames = [s.kont for s in seen if s.kont is not HALT_K]
    texts += [
        repr(getattr(f, name)) for f in frames for name in ("rest", "branches") if hasattr(f, name)
    ]
    assert frames and not [t for t in texts if re.search(r"0x[0-9a-f]{6,}", t)]


def test_start_state_takes_parsed_programs_only():
    # A str is a parsed program too: the string literal, never parsed again.
    assert step(start_state("(+ 1 2)")) == Ret("(+ 1 2)", HALT_K)


def test_eval_step_on_the_command_line(tmp_path, capsys, monkeypatch):
    script = tmp_path / "s.txt"
    script.write_text("yes\nfour\n")
    assert main(["eval", "--step", PROGRAM, "--script", str(script)]) == 0
    assert capsys.readouterr().out == GOLDEN.read_text(encoding="utf-8")
    # without --script the completions are read from the input
    monkeypatch.setattr("sys.stdin", io.StringIO("yes\nfour\n"))
    assert main(["eval", "--step", PROGRAM]) == 0
    assert capsys.readouterr().out == GOLDEN.read_text(encoding="utf-8")


def test_eval_step_ends(tmp_path, capsys, monkeypatch):
    assert main(["eval", "--step", "(letrec ((f (lambda () (f)))) (f))"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("DIVERGE (↑): step ")
    assert main(["eval", "--step", "(car nil)"]) == 1  # the program's error is its outcome
    out, err = capsys.readouterr()
    assert err == "" and out.count("car: expected") == 1
    assert out.splitlines()[-1].startswith("HALT (1): error: EvaluationError: car: expected")
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["eval", "--step", '(llm "x")']) == 2
    assert "the input ended" in capsys.readouterr().err
    assert (
        main(["eval", "--step", "(letrec ((f (lambda (n) (f (+ n 1))))) (f 0))", "--fuel", "50"])
        == 2
    )
    assert "--fuel" in capsys.readouterr().err


FACT = "(define (fact n) (if (< n 2) 1 (* n (fact (- n 1))))) (fact 20)"
FACT_LETREC = "(letrec ((fact (lambda (n) (if (< n 2) 1 (* n (fact (- n 1))))))) (fact 20))"


@pytest.mark.parametrize(
    "program, rule",
    [
        (FACT, "define"),
        (FACT_LETREC, "letrec"),
        ("(define (f) 1) (define (g) (f)) (g)", "define"),
        ("(define x 5) (define y (* x 2)) (+ x y)", "define"),
        ("(cond ((> 1 2) 'a) (else 'b))", "cond"),
        ("(let* ((a 1) (b (+ a 1))) b)", "let*"),
        ("(let* () 1)", "let*"),
        ("((lambda (a . rest) rest) 1 2 3)", "application (rest parameter)"),
    ],
)
def test_eval_step_names_each_forms_rule(program, rule, capsys):
    # The first line of eval --step names the rule that moves the start state on: a
    # procedure define has its own, not letrec's (issue 40, item 2).
    assert rule_of(start_state(parse_program(program))) == rule
    assert main(["eval", "--step", program]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith(f"; {rule}")


def test_define_and_letrec_differ_only_in_their_rule():
    # One step later the two runs are in the same state: define binds as letrec does, so
    # the verdicts of programs written either way cannot differ past the first step.
    d, r = start_state(parse_program(FACT)), start_state(parse_program(FACT_LETREC))
    assert d != r and type(d.expr).__name__ == "Define"
    assert step(d) == step(r)
    assert run_program(FACT).value == run_program(FACT_LETREC).value == 2432902008176640000
    # the printer writes a define back as program text that compiles to the same node
    again = compile_program(parse_program(printed(to_datum(d.expr))))
    assert again == d.expr
    # a value define runs as the let it is bound like, step for step
    v, let = (
        start_state(parse_program(p)) for p in ("(define x 5) (+ x 1)", "(let ((x 5)) (+ x 1))")
    )
    assert v != let and type(v.expr).__name__ == "DefineValue" and step(v) == step(let)
    nested = "(define x (+ 1 2)) (define (f) x) (define y (f)) (list x y)"
    e = start_state(parse_program(nested)).expr
    assert compile_program(parse_program(printed(to_datum(e)))) == e
    assert run_program(nested).value == run_program("(let ((x 3)) (list x x))").value
