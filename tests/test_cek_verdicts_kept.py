"""Issue 40 grew the CEK language (a stricter reader, define, cond, and, or, let*, when,
unless, variadic lambda, five primitives); the SPE theorem's objects and every verdict
about them stay as they were. The expected values below were taken from the code
before that change (tests/golden/cek/verdicts_before_issue40.txt: the contrast table's
rows of the CEK-based architectures, machine | question | verdict | method | checked)."""

from pathlib import Path

import pytest

from agentic_machines.cek import first_boundary, loader, seed_program, seed_state
from agentic_machines.cek.stepper import kont_text
from agentic_machines.drawing.contrast import contrast_rows, to_markdown

BEFORE = Path(__file__).parent / "golden" / "cek" / "verdicts_before_issue40.txt"


def test_the_seed_state_is_the_same():
    assert seed_program() == '(let ((y (llm "Write a program."))) (eval y))'
    assert repr(seed_state()) == 'Boundary(prompt="Write a program.", depth=1)'


@pytest.mark.parametrize(
    "program, prompt, context, loaded",
    [
        ('(if (llm "ok?") 1 2)', "ok?", "(if [] 1 2)", '(if (llm "ok?") 1 2)'),
        (
            '(let ((k 7)) (begin (llm "q") k))',
            "q",
            "(begin [] k)",
            '((lambda (k) (begin (llm "q") k)) 7)',
        ),
        (
            '(letrec ((f (lambda (n) (if (= n 0) (llm "q") (+ 1 (f (- n 1))))))) (f 3))',
            "q",
            "(+ 1 (+ 1 (+ 1 [])))",
            '(+ 1 (+ 1 (+ 1 (llm "q"))))',
        ),
    ],
)
def test_boundary_states_and_their_loader_are_the_same(program, prompt, context, loaded):
    b = first_boundary(program)
    assert (b.prompt, kont_text(b.kont), loader(b)) == (prompt, context, loaded)


def test_the_verdicts_of_the_contrast_table_are_the_same():
    rows = to_markdown(contrast_rows(["spe", "spell"])).splitlines()[2:]
    now = []
    for line in rows:
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        now.append(" | ".join([cells[0], cells[1], cells[2], cells[3], cells[5]]))
    assert now == BEFORE.read_text(encoding="utf-8").splitlines()
