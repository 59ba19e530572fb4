"""`agentic-machines eval PROGRAM [--script FILE]`: value, boundaries passed, clean errors."""

import json

from agentic_machines import HALT
from agentic_machines.cli.commands import main
from agentic_machines.errors import ParseError


def run_cli(capsys, *argv):
    status = main(["eval", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_eval_prints_the_value(capsys):
    status, out, err = run_cli(
        capsys, "(letrec ((f (lambda (n) (if (= n 0) 1 (* n (f (- n 1))))))) (f 5))"
    )
    assert (status, out.strip(), err) == (0, "120", "")


def test_eval_prints_the_boundaries_and_the_value(capsys, tmp_path):
    script = tmp_path / "script.txt"
    script.write_text("Ada\nLovelace\n", encoding="utf-8")
    program = '(string-append (llm "first name?") " " (llm "last name?"))'
    status, out, err = run_cli(capsys, program, "--script", str(script))
    lines = out.strip().splitlines()
    assert status == 0 and err == ""
    assert "first name?" in lines[0] and "Ada" in lines[0]
    assert "last name?" in lines[1] and "Lovelace" in lines[1]
    assert lines[-1] == '"Ada Lovelace"'


def test_eval_runs_a_completion_as_a_program_through_the_seed(capsys, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps(['(string-append "got " (llm "again?"))', "it"]), encoding="utf-8")
    status, out, _ = run_cli(
        capsys, '(let ((y (llm "program?"))) (eval y))', "--script", str(script)
    )
    assert status == 0 and out.strip().splitlines()[-1] == '"got it"'
    assert "again?" in out


def test_eval_reads_a_program_file(capsys, tmp_path):
    path = tmp_path / "prog.lisp"
    path.write_text('; a comment\n(list 1 \'two "three")\n', encoding="utf-8")
    status, out, _ = run_cli(capsys, str(path))
    assert (status, out.strip()) == (0, '(1 two "three")')


def test_bad_programs_are_one_line_with_status_2(capsys):
    for program, words in [
        ("(+ 1", "unclosed"),
        ("(undefined 1)", "unbound variable"),
        ('(llm "q")', "script"),
    ]:
        status, out, err = run_cli(capsys, program)
        assert status == 2, program
        assert err.count("\n") == 1 and "error" in err and words in err, (program, err)
        assert "Traceback" not in err


def test_a_run_time_error_of_the_program_is_its_outcome_once_with_status_1(capsys, tmp_path):
    status, out, err = run_cli(capsys, "(car nil)")
    assert (status, err) == (1, "")
    assert (
        out.strip() == "HALT (1): error: EvaluationError: car: expected a non-empty list, got nil"
    )
    # ... also when the error is in a completion the program evaluates (the model's code)
    script = tmp_path / "s.json"
    script.write_text(json.dumps(["((("]), encoding="utf-8")
    status, out, err = run_cli(capsys, '(eval (llm "code?"))', "--script", str(script))
    assert (status, err) == (1, "")
    assert out.strip().splitlines()[-1] == (
        "HALT (1): error: ParseError: eval: the text \"(((\" is not a program: unclosed '(' "
        "(line 1, column 3)"
    )
    assert out.count("unclosed") == 1


def test_a_completion_that_does_not_read_is_reported_without_the_readers_advice(capsys, tmp_path):
    # The reader's advice ("add ')' to close it") speaks to a programmer writing a file;
    # for a model's completion the run has ended (h returns 1): say what is wrong, not how
    # the user should fix text the model wrote.
    from agentic_machines.cek import AgenticEvaluator, seed_state

    for completion, problem in [
        ("(((", "unclosed '('"),
        ("(car 1))", "unexpected ')': there is no '(' to close"),
        ("1 2", "expected the end of the program after the first expression, found `2`"),
        ("2.5", "`2.5` is not an integer, and the language has no other numbers"),
        ('"open', "unterminated string"),
    ]:
        ev = AgenticEvaluator()
        assert ev.harness(seed_state(), completion) == HALT
        error = ev.last_record.error
        assert type(error) is ParseError and str(error).startswith("eval: the text "), error
        assert error.reason.endswith(": " + problem), (completion, error.reason)
        for advice in ("add ')'", "remove it", "(begin", "write an integer", "add a closing"):
            assert advice not in str(error), (completion, str(error))
    # the same text in a file the user wrote keeps the advice (exit 2, bad input)
    status, _out, err = run_cli(capsys, "(((")
    assert status == 2 and "add ')' to close it" in err


def test_eval_fuel_bounds_the_run(capsys):
    from agentic_machines.cli.commands import main

    assert (
        main(
            [
                "eval",
                "(letrec ((f (lambda (n) (if (= n 0) 0 (f (- n 1)))))) (f 100000))",
                "--fuel",
                "100",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "fuel" in err[0]
    assert main(["eval", "(+ 1 2)", "--fuel", "1000"]) == 0
    assert capsys.readouterr().out.strip() == "3"


def test_eval_spell_runs_a_session_with_the_script(capsys, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["50", "42"]), encoding="utf-8")
    program = (
        '(quine completion (eval (do (defn play (g) (if (= g 42) "won" (play (!llm-self "again"))))'
        ' \'(play (!llm-self "Guess")))))'
    )
    status, out, err = run_cli(capsys, "--spell", program, "--script", str(script))
    lines = out.strip().splitlines()
    assert (status, err) == (0, "")
    assert lines[0].startswith("turn 1 (self): ") and '"Guess"' in lines[0]
    assert lines[-1] == '"won"'


def test_eval_spell_errors_are_one_line_with_status_2(capsys):
    status, out, err = run_cli(capsys, "--spell", '(quine completion (eval (do (!llm-self "x"))))')
    assert (
        status == 2
        and err.startswith("agentic-machines: error: ")
        and len(err.strip().splitlines()) == 1
    )
    assert "unbound symbol `!llm-self`" in out  # the recovery it tried is shown


def test_eval_spell_with_tools_from_a_module_or_a_file(capsys, tmp_path):
    program = '(quine completion (eval (do \'(shout "hi"))))'
    status, out, err = run_cli(
        capsys, "--spell", program, "--tools", "agentic_machines.spell.spell_machine:EXAMPLE_TOOLS"
    )
    assert (status, err, out.strip()) == (0, "", '"HI!"')
    tools = tmp_path / "tools.py"
    tools.write_text("TOOLS = {'double': lambda n: 2 * n}\n", encoding="utf-8")
    status, out, err = run_cli(
        capsys,
        "--spell",
        "(quine completion (eval (do '(double 21))))",
        "--tools",
        f"{tools}:TOOLS",
    )
    assert (status, out.strip()) == (0, "42")
    # without the tools, the same program's tool is an unbound symbol
    status, out, err = run_cli(capsys, "--spell", program)
    assert status == 2 and "unbound symbol `shout`" in out  # recovered, then no script left


def test_eval_tools_errors_are_one_line_with_status_2(capsys):
    for argv in (
        ["--spell", "(quine q 1)", "--tools", "agentic_machines.spell.spell_machine:RETRY_BUDGET"],
        ["--spell", "(quine q 1)", "--tools", "agentic_machines.spell.spell_machine:NO_SUCH"],
        [
            "(quine q 1)",
            "--tools",
            "agentic_machines.spell.spell_machine:EXAMPLE_TOOLS",
        ],  # no --spell
    ):
        status, out, err = run_cli(capsys, *argv)
        assert status == 2 and len(err.strip().splitlines()) == 1, (argv, err)
        assert err.startswith("agentic-machines: error: ")
