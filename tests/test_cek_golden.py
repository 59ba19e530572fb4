"""Golden tests for the CEK language, in the style of lis.py's test table.

Each row is (program, completions, expected): ``expected`` is the printed value, or an
exception class the run must end with. Completions answer the program's ``llm`` calls
in order.
"""

import pytest

from agentic_machines.cek import run_program, unparse
from agentic_machines.errors import (
    EvaluationError,
    MalformedProgram,
    ParseError,
    ProgramDiverged,
    ScriptExhausted,
    Undecided,
)

E, M, P, D = EvaluationError, MalformedProgram, ParseError, ProgramDiverged

GOLDEN = [
    # literals
    ("42", [], "42"),
    ("-7", [], "-7"),
    ('"hi\\n\\"there\\""', [], '"hi\\n\\"there\\""'),
    ("#t", [], "#t"),
    ("#f", [], "#f"),
    ("nil", [], "nil"),
    ("()", [], "nil"),
    # quote
    ("(quote a)", [], "a"),
    ('\'(1 (2 "x") #f nil)', [], '(1 (2 "x") #f nil)'),
    ("''a", [], "'a"),
    ("(quote)", [], M),
    # arithmetic and comparison
    ("(+ 1 2 3)", [], "6"),
    ("(+)", [], "0"),
    ("(- 10 3 2)", [], "5"),
    ("(- 4)", [], "-4"),
    ("(* 2 3 4)", [], "24"),
    ("(= 2 2)", [], "#t"),
    ("(= 2 3)", [], "#f"),
    ("(< 1 2 3)", [], "#t"),
    ("(< 2 1)", [], "#f"),
    ('(+ 1 "2")', [], E),
    ("(< 1)", [], E),
    # strings
    ('(string-append "ab" "c" "")', [], '"abc"'),
    ('(string-length "héllo")', [], "5"),
    ('(substring "hello" 1 3)', [], '"el"'),
    ('(substring "hello" 3 9)', [], E),
    ('(string=? "a" "a")', [], "#t"),
    ('(string=? "a" "b")', [], "#f"),
    ("(number->string -12)", [], '"-12"'),
    ('(number->string "x")', [], E),
    # equality and not
    ("(equal? '(1 (2)) (list 1 (list 2)))", [], "#t"),
    ("(equal? 1 #t)", [], "#f"),
    ("(equal? (lambda (x) x) (lambda (x) x))", [], "#t"),
    ("(not #f)", [], "#t"),
    ("(not 0)", [], "#f"),
    # lists
    ('(list 1 "a" \'b)', [], '(1 "a" b)'),
    ("(list)", [], "nil"),
    ("(cons 1 '(2 3))", [], "(1 2 3)"),
    ("(cons 1 2)", [], E),
    ("(car '(a b))", [], "a"),
    ("(cdr '(a b))", [], "(b)"),
    ("(car nil)", [], E),
    ("(cdr nil)", [], E),
    ("(null? nil)", [], "#t"),
    ("(null? '(1))", [], "#f"),
    ("(pair? '(1))", [], "#t"),
    ("(pair? nil)", [], "#f"),
    # type predicates
    ('(list (string? "a") (string? 1) (number? 1) (number? "1"))', [], "(#t #f #t #f)"),
    (
        "(list (symbol? 'a) (symbol? \"a\") (procedure? car) (procedure? (lambda () 1)) (procedure? '(lambda () 1)))",
        [],
        "(#t #f #t #t #f)",
    ),
    # lambda and application
    ("((lambda (x y) (+ x y)) 3 4)", [], "7"),
    ("((lambda () 5))", [], "5"),
    ("((lambda (x) x))", [], E),
    ("(5 1)", [], E),
    ("(lambda (x x) x)", [], M),
    ("(lambda (car) car)", [], M),
    ("(lambda (x) x y)", [], M),
    ("(let ((k 10)) (lambda (x) (+ x k)))", [], "((lambda (k) (lambda (x) (+ x k))) 10)"),
    ("car", [], "car"),
    ("((if #t car cdr) '(1 2))", [], "1"),
    # let
    ("(let ((x 2) (y 3)) (* x y))", [], "6"),
    ("(let ((x 1)) (let ((x 2)) x))", [], "2"),
    ("(let ((x 1) (x 2)) x)", [], M),
    ("(let ((x)) x)", [], M),
    ("(let ((if 1)) if)", [], M),
    # letrec, mutual recursion
    ("(letrec ((fact (lambda (n) (if (= n 0) 1 (* n (fact (- n 1))))))) (fact 10))", [], "3628800"),
    (
        "(letrec ((even? (lambda (n) (if (= n 0) #t (odd? (- n 1))))) (odd? (lambda (n) (if (= n 0) #f (even? (- n 1)))))) (list (even? 10) (odd? 7) (even? 3)))",
        [],
        "(#t #t #f)",
    ),
    ("(letrec ((f (lambda (n) n))) f)", [], "(letrec ((f (lambda (n) n))) f)"),
    ("(letrec ((x 5)) x)", [], M),
    ("(letrec ((f (lambda () (f)))) (f))", [], D),
    ("(letrec ((f (lambda (x) (g x))) (g (lambda (x) (f x)))) (f 1))", [], D),
    # if and begin
    ("(if #f 1 2)", [], "2"),
    ("(if nil 1 2)", [], "1"),
    ("(if 0 'yes 'no)", [], "yes"),
    ("(if #t 1)", [], M),
    ("(begin 1 2 3)", [], "3"),
    ("(begin)", [], M),
    # variables
    ("x", [], M),
    ("(let ((f (lambda () y))) 1)", [], M),
    ("if", [], M),
    # llm
    ('(llm "name?")', ["Ada"], '"Ada"'),
    ('(string-append (llm "a") "-" (llm "b"))', ["x", "y"], '"x-y"'),
    ('(let ((n (llm "n?"))) (if (string=? n "1") "one" "other"))', ["1"], '"one"'),
    ("(llm 5)", [], E),
    ('(llm "q")', [], ScriptExhausted),
    ('(begin (llm "a") (llm "b"))', ["1", "2"], '"2"'),
    # eval: program text, quoted data, tail position
    ('(eval "(+ 1 2)")', [], "3"),
    ("(eval '(+ 1 2))", [], "3"),
    ("(eval (list '+ 1 2))", [], "3"),
    ("(eval 7)", [], "7"),
    ('(eval "(+ 1")', [], P),
    ('(eval "x")', [], M),
    ("(let ((x 1)) (eval 'x))", [], M),
    ("(eval (list 'quote (lambda (x) x)))", [], M),
    ('(let ((y (llm "q"))) (eval y))', ['(string-append "got " (llm "again"))', "it"], '"got it"'),
    ('(let ((y (llm "q"))) (eval y))', ["(car nil)"], E),
    ('(let ((y (llm "q"))) (eval y))', ["(+ 1"], P),
    ("(eval (list (list 'lambda '(x) '(* x x)) 7))", [], "49"),
    # eval in tail position: a loop through eval repeats a state, so it is detected
    (
        "(letrec ((f (lambda () (eval '(letrec ((f (lambda () (eval (list 'quote 1))))) (f)))))) (f))",
        [],
        "1",
    ),
    ('(eval "(letrec ((f (lambda () (f)))) (f))")', [], D),
    # deep recursion runs in the heap, not on the Python stack
    ("(letrec ((f (lambda (n) (if (= n 0) 0 (+ 1 (f (- n 1))))))) (f 5000))", [], "5000"),
    # comparisons and list primitives of a lecture (tests/test_cek_conformance.py has more)
    ("(> 2 1)", [], "#t"),
    ("(<= 1 1 2)", [], "#t"),
    ("(>= 1 2)", [], "#f"),
    ("(length '(1 2 3))", [], "3"),
    ("(append '(1) '(2 3))", [], "(1 2 3)"),
    ("(list? '())", [], "#t"),
    # the forms of a lecture: define, cond, and, or, let*, when, unless, variadic lambda
    ("(define (sq x) (* x x)) (sq 7)", [], "49"),
    ("(cond ((> 1 2) 'a) (else 'b))", [], "b"),
    ("(and 1 2)", [], "2"),
    ("(or #f 3)", [], "3"),
    ("(let* ((a 1) (b (+ a 1))) b)", [], "2"),
    ("(when #t 1 2)", [], "2"),
    ("(unless #t 1)", [], "nil"),
    ("((lambda (a . rest) rest) 1 2 3)", [], "(2 3)"),
    # bounds
    ("(letrec ((f (lambda (x) (f (* x x))))) (f 2))", [], E),
    ("(+ 1 99999999999999999999999999999)", [], "100000000000000000000000000000"),
    ("#q", [], P),
    ("(+ 1 2) 3", [], "3"),  # a program of several forms: (begin (+ 1 2) 3)
    ('"abc', [], P),
    ('"\\q"', [], P),
]


@pytest.mark.parametrize(
    "program, completions, expected", GOLDEN, ids=[row[0][:40] for row in GOLDEN]
)
def test_golden(program, completions, expected):
    result = run_program(program, completions, fuel=500_000)
    if isinstance(expected, type):
        assert isinstance(result.error, expected), (result.error, result.value)
        assert str(result.error)  # every error says something
    else:
        assert result.error is None, result.error
        assert unparse(result.value) == expected


def test_golden_table_is_large_and_covers_every_form_and_primitive():
    from agentic_machines.cek.values import PRIMITIVES

    assert len(GOLDEN) >= 60
    text = " ".join(row[0] for row in GOLDEN)
    forms = "quote lambda let letrec if begin llm eval ' define cond and or let* when unless"
    for name in forms.split():
        assert name in text, name
    required = "+ - * = < string-append string-length substring string=? number->string equal? not list cons car cdr null? pair?"
    assert set(required.split()) <= set(PRIMITIVES)
    for name in PRIMITIVES:  # the list and every other primitive
        assert f"({name} " in text or f"({name})" in text, name


def test_fuel_runs_out_as_undecided():
    result = run_program("(letrec ((f (lambda (n) (f (+ n 1))))) (f 0))", [], fuel=1000)
    assert isinstance(result.error, Undecided)
