"""Conformance of the CEK language, in the style of a Scheme test list: for every form and
primitive, expected values and expected errors (arity and type errors included), and
tail calls 100,000 deep. Each case runs four ways that must agree: the machine's run
loop (``run``), one ``step`` at a time (``run_by_steps``), the stepper of ``eval
--step``, and ``agentic-machines eval`` on the command line. ``COUNTS`` gives the number
of cases per form (the issue's closing note quotes it)."""

from __future__ import annotations

import io
from collections import Counter

import pytest

from agentic_machines.cek import unparse
from agentic_machines.cek.evaluator import run_program, start_state
from agentic_machines.cek.machine import Boundary, Failed, Halted, Ret, run_by_steps
from agentic_machines.cli.commands import main
from agentic_machines.cli.step_eval import step_program
from agentic_machines.errors import EvaluationError, MalformedProgram, ParseError

E, M, P = EvaluationError, MalformedProgram, ParseError

# (form, program, completions, expected): expected is the printed value, or
# (error class, words the one-line message must contain).
CASES = [
    # define: top level, internal, procedures (mutually recursive), values, errors
    (
        "define",
        "(define (fact n) (if (< n 2) 1 (* n (fact (- n 1))))) (fact 20)",
        [],
        "2432902008176640000",
    ),
    ("define", "(define x 5) (define y (* x 2)) (+ x y)", [], "15"),
    (
        "define",
        "(define (ev? n) (if (= n 0) #t (od? (- n 1)))) (define (od? n) (if (= n 0) #f (ev? (- n 1)))) (ev? 7)",
        [],
        "#f",
    ),
    ("define", "(define (f) (define a 1) (define (g) (+ a 1)) (g)) (f)", [], "2"),
    ("define", "(define f (lambda (x) (* x x))) (f 9)", [], "81"),
    ("define", "(define (f . xs) xs) (f 1 2)", [], "(1 2)"),
    ("define", "(define (f a . xs) (cons a xs)) (f 1)", [], "(1)"),
    ("define", "(define x 1)", [], (M, "must end with an expression")),
    ("define", "(+ 1 (define x 1))", [], (M, "may only begin a body")),
    ("define", "(define x 1) x (define y 2) y", [], (M, "before the expressions")),
    ("define", "(define x 1) (define x 2) x", [], (M, "bound twice")),
    ("define", "(define car 1) car", [], (M, "reserved")),
    ("define", "(define (f x) x) (f)", [], (E, "1 argument was called with 0")),
    ("define", "(define x)", [], (M, "define")),
    # cond
    ("cond", "(cond ((> 1 2) 'a) (else 'b))", [], "b"),
    ("cond", "(cond ((< 1 2) 'a) (else 'b))", [], "a"),
    ("cond", "(cond (#f 1) ((= 1 1) 2 3) (else 4))", [], "3"),
    ("cond", "(cond (#f 1) (7))", [], "7"),
    ("cond", "(cond (#f 1))", [], "nil"),
    ("cond", "(cond (else 5))", [], "5"),
    ("cond", "(let ((n 0)) (cond ((< n 0) 'neg) ((= n 0) 'zero) (else 'pos)))", [], "zero"),
    ("cond", "(cond ((llm \"ok?\") 'yes) (else 'no))", ["x"], "yes"),
    ("cond", "(cond)", [], (M, "at least one clause")),
    ("cond", "(cond (else 1) (#t 2))", [], (M, "else must be the last")),
    ("cond", "(cond (1 => car))", [], (M, "=> clauses are not supported")),
    ("cond", "(cond (#t (car nil)))", [], (E, "car: expected a non-empty list")),
    # and / or
    ("and", "(and)", [], "#t"),
    ("and", "(and 1)", [], "1"),
    ("and", "(and 1 2 3)", [], "3"),
    ("and", "(and 1 #f (car nil))", [], "#f"),
    ("and", "(and #t (car nil))", [], (E, "car")),
    ("and", '(and (= 1 1) (llm "q"))', ["z"], '"z"'),
    ("or", "(or)", [], "#f"),
    ("or", "(or #f)", [], "#f"),
    ("or", "(or #f 2 (car nil))", [], "2"),
    ("or", "(or #f #f)", [], "#f"),
    ("or", "(or #f (car 1))", [], (E, "car")),
    ("or", "(let ((x 3)) (or (< x 0) x))", [], "3"),
    # let*
    ("let*", "(let* ((a 1) (b (+ a 1)) (c (* b 3))) (list a b c))", [], "(1 2 6)"),
    ("let*", "(let* () 5)", [], "5"),
    ("let*", "(let* ((x 1) (x (+ x 1))) x)", [], "2"),
    ("let*", "(let* ((x 1)) (define y 2) (+ x y))", [], "3"),
    ("let*", "(let* ((x)) x)", [], (M, "let")),
    ("let*", "(let* x 1)", [], (M, "bindings must be a list")),
    # sequential binding: a later init sees the earlier ones (also through a closure made
    # before a shadowing), the outer variable until it is shadowed, and nothing after it
    ("let*", "(let* ((n 3) (f (lambda (k) (* n k))) (n 10)) (f n))", [], "30"),
    ("let*", "(let ((x 5)) (let* ((y x) (x 1) (z (+ x y))) (list x y z)))", [], "(1 5 6)"),
    ("let*", "(let* ((a b) (b 1)) a)", [], (M, "unbound variable `b`")),
    ("let*", "(let* () (define a 2) a (* a 3))", [], "6"),
    ("let*", "(let* ((a 1)) a (+ a 1) (list a))", [], "(1)"),
    ("let*", "(let* ((a 1) (b (let* ((a 2)) (+ a 1)))) (list a b))", [], "(1 3)"),
    ("let*", '(let* ((a (llm "x?")) (b (string-append a a))) b)', ["ab"], '"abab"'),
    ("let*", "(let* ((a 1) (b (car a))) b)", [], (E, "car: expected a non-empty list")),
    ("let*", "(let* ((car 1)) car)", [], (M, "reserved")),
    ("let*", "(let* ((x 1 2)) x)", [], (M, "not a (name expression) pair")),
    ("let*", "(let* ((x 1)))", [], (M, "binding list and a body")),
    # when / unless
    ("when", "(when (< 1 2) 'a 'b)", [], "b"),
    ("when", "(when (> 1 2) (car nil))", [], "nil"),
    ("when", "(when #t)", [], (M, "at least one expression")),
    ("unless", "(unless (> 1 2) 'a 'b)", [], "b"),
    ("unless", "(unless (< 1 2) (car nil))", [], "nil"),
    ("unless", "(unless #f)", [], (M, "at least one expression")),
    # bodies of several forms
    ("body", "((lambda (x) (+ x 1) (* x 2)) 5)", [], "10"),
    ("body", "(let ((x 2)) x (+ x 1))", [], "3"),
    ("body", "(letrec ((f (lambda () 1))) (f) (+ (f) 1))", [], "2"),
    ("body", "(let () (define a 2) (define (sq) (* a a)) (sq))", [], "4"),
    ("body", "(begin (define a 1) (+ a 1))", [], "2"),
    ("body", "(lambda (x))", [], (M, "parameter list and a body")),
    # variadic lambda
    ("lambda-rest", "((lambda (a . rest) rest) 1 2 3)", [], "(2 3)"),
    ("lambda-rest", "((lambda args args) 1 2 3)", [], "(1 2 3)"),
    ("lambda-rest", "((lambda args args))", [], "nil"),
    ("lambda-rest", "((lambda (a b . c) (list a b c)) 1 2)", [], "(1 2 nil)"),
    ("lambda-rest", "((lambda (x y . z) z) 3 4 5 6)", [], "(5 6)"),
    ("lambda-rest", "((lambda (a . rest) rest))", [], (E, "at least 1 argument was called with 0")),
    ("lambda-rest", "((lambda (a b . r) r) 1)", [], (E, "at least 2 arguments was called with 1")),
    ("lambda-rest", "(lambda (a . b c) 1)", [], (P, "exactly one item after")),
    ("lambda-rest", "(lambda (a . 1) 1)", [], (M, "cannot be bound")),
    ("lambda-rest", "(let ((f (lambda xs (length xs)))) (f 1 2 3 4))", [], "4"),
    # the primitives a test list uses
    ("length", "(length '(1 2 3))", [], "3"),
    ("length", "(length '())", [], "0"),
    ("length", "(length 5)", [], (E, "length: expected a list")),
    ("length", "(length '(1) '(2))", [], (E, "length: expected 1 argument, got 2")),
    ("append", "(append '(1 2) '(3) '() '(4 5))", [], "(1 2 3 4 5)"),
    ("append", "(append)", [], "nil"),
    ("append", "(append '(1))", [], "(1)"),
    ("append", "(append '(1) 2)", [], (E, "append: every argument must be a list")),
    ("list?", "(list? '(1 2))", [], "#t"),
    ("list?", "(list? '())", [], "#t"),
    ("list?", "(list? 1)", [], "#f"),
    ("list?", "(list?)", [], (E, "list?: expected 1 argument")),
    ("<=", "(<= 1 2 2 3)", [], "#t"),
    ("<=", "(<= 2 1)", [], "#f"),
    ("<=", "(<= 1)", [], (E, "at least two integers")),
    ("<=", '(<= 1 "2")', [], (E, "expected an integer")),
    (">=", "(>= 3 3 1)", [], "#t"),
    (">=", "(>= 1 2)", [], "#f"),
    (">=", "(>= 'a 1)", [], (E, "expected an integer")),
    (">", "(> 2 1)", [], "#t"),
    (">", "(> 1 1)", [], "#f"),
    (">", "(> 1)", [], (E, ">: expected at least two integers")),
    (">", '(> "a" 1)', [], (E, ">: expected an integer")),
    # the forms the language had before, and its other primitives
    ("quote", '\'(a (b "c") #t)', [], '(a (b "c") #t)'),
    ("quote", "(quote)", [], (M, "exactly one datum")),
    ("lambda", "((lambda (x y) (- x y)) 5 3)", [], "2"),
    ("lambda", "((lambda (x) x))", [], (E, "1 argument was called with 0")),
    ("lambda", "((lambda (x x) x) 1 2)", [], (M, "bound twice")),
    ("let", "(let ((x 1) (y 2)) (+ x y))", [], "3"),
    ("let", "(let ((x 1)) y)", [], (M, "unbound variable `y`")),
    ("letrec", "(letrec ((f (lambda (n) (if (= n 0) 0 (f (- n 1)))))) (f 10))", [], "0"),
    ("letrec", "(letrec ((x 1)) x)", [], (M, "must be a lambda")),
    ("if", "(if #f 1 2)", [], "2"),
    ("if", "(if 0 1 2)", [], "1"),
    ("if", "(if #t 1)", [], (M, "a test, a then-branch and an else-branch")),
    ("begin", "(begin 1 2 3)", [], "3"),
    ("begin", "(begin)", [], (M, "at least one expression")),
    ("llm", '(string-append "Dear " (llm "name?"))', ["Ada"], '"Dear Ada"'),
    ("llm", "(llm 5)", [], (E, "the prompt must be a string")),
    ("eval", "(eval '(+ 1 2))", [], "3"),
    ("eval", '(eval "(* 6 7)")', [], "42"),
    ("eval", '(eval "(define x 1) x")', [], (P, "end of the program")),
    ("+", "(+ 1 2 3)", [], "6"),
    ("+", '(+ 1 "a")', [], (E, "+: expected an integer")),
    ("-", "(- 10 3 2)", [], "5"),
    ("-", "(-)", [], (E, "at least one argument")),
    ("*", "(* 2 3 4)", [], "24"),
    ("*", "(* 2 'a)", [], (E, "*: expected an integer")),
    ("=", "(= 1 1 1)", [], "#t"),
    ("=", "(= 1 #t)", [], (E, "=: expected an integer")),
    ("<", "(< 1 2 3)", [], "#t"),
    ("<", "(<)", [], (E, "<: expected at least two integers")),
    ("string-append", '(string-append "a" "b")', [], '"ab"'),
    ("string-append", '(string-append "a" 1)', [], (E, "string-append: expected a string")),
    ("string-length", '(string-length "abc")', [], "3"),
    ("string-length", "(string-length 1)", [], (E, "expected a string")),
    ("substring", '(substring "hello" 1 3)', [], '"el"'),
    ("substring", '(substring "hi" 1 5)', [], (E, "substring: need")),
    ("string=?", '(string=? "a" "a")', [], "#t"),
    ("string=?", '(string=? "a")', [], (E, "string=?: expected at least two strings")),
    ("number->string", "(number->string 42)", [], '"42"'),
    ("number->string", '(number->string "a")', [], (E, "number->string: expected an integer")),
    ("equal?", "(equal? '(1 (2)) (list 1 (list 2)))", [], "#t"),
    ("equal?", "(equal? 1 #t)", [], "#f"),
    ("equal?", "(equal? 1)", [], (E, "equal?: expected 2 arguments, got 1")),
    ("not", "(not #f)", [], "#t"),
    ("not", "(not 1 2)", [], (E, "not: expected 1 argument, got 2")),
    ("list", "(list 1 2)", [], "(1 2)"),
    ("list", "(list)", [], "nil"),  # any number of any values: list has no error
    ("cons", "(cons 1 '(2))", [], "(1 2)"),
    ("cons", "(cons 1 2)", [], (E, "second argument must be a list")),
    ("car", "(car '(1 2))", [], "1"),
    ("car", "(car nil)", [], (E, "car: expected a non-empty list")),
    ("cdr", "(cdr '(1 2))", [], "(2)"),
    ("cdr", "(cdr 5)", [], (E, "cdr: expected a non-empty list")),
    ("null?", "(null? nil)", [], "#t"),
    ("null?", "(null?)", [], (E, "null?: expected 1 argument, got 0")),
    ("pair?", "(pair? nil)", [], "#f"),
    ("pair?", "(pair? 1 2)", [], (E, "pair?: expected 1 argument, got 2")),
    ("string?", '(string? "s")', [], "#t"),
    ("string?", "(string?)", [], (E, "string?: expected 1 argument, got 0")),
    ("number?", "(number? 's)", [], "#f"),
    ("number?", "(number?)", [], (E, "number?: expected 1 argument, got 0")),
    ("symbol?", "(symbol? 's)", [], "#t"),
    ("symbol?", "(symbol? 1 2)", [], (E, "symbol?: expected 1 argument, got 2")),
    ("procedure?", "(procedure? car)", [], "#t"),
    ("procedure?", "(procedure?)", [], (E, "procedure?: expected 1 argument, got 0")),
    ("apply", "(1 2)", [], (E, "is not a procedure")),
    # what the reader refuses (one line naming the construct)
    ("reader", "(cdr '(1 . 2))", [], (P, "dotted pairs")),
    ("reader", "2.0", [], (P, "not an integer")),
    ("reader", "`(a ,b)", [], (P, "quasiquote")),
    ("reader", "#\\a", [], (P, "character")),
    ("reader", "#(1 2)", [], (P, "vector")),
    ("reader", "(cdr (car (cdr '(define (f . x) 1))))", [], (P, "dotted pairs")),
]

COUNTS = Counter(form for form, *_ in CASES)


def _ids():
    seen: Counter = Counter()
    out = []
    for form, *_ in CASES:
        seen[form] += 1
        out.append(f"{form}-{seen[form]}")
    return out


def _by_steps(text, completions):
    # The definition of a run: step() once per transition, boundaries answered in order.
    state = start_state(text)
    for reply in [None, *completions]:
        if reply is not None:
            state = Ret(reply, state.kont)
        outcome, _ = run_by_steps(state, fuel=5_000_000)
        if type(outcome) is not Boundary:
            return outcome
        state = outcome
    raise AssertionError("the case has fewer completions than llm calls")


def _stepper(text, completions):
    # eval --step: a value ends with "HALT (1): the value is v after n steps" (status 0),
    # a run-time error with "HALT (1): error: Type: message at step n" (status 1), and a
    # program that does not read raises its error.
    lines: list[str] = []
    try:
        code = step_program(text, completions, None, io.StringIO(), lines.append)
    except (MalformedProgram, ParseError) as err:
        return ("error", type(err).__name__, str(err))
    last = lines[-1]
    if code == 0:
        assert last.startswith("HALT"), last
        return ("value", last.split("the value is ", 1)[1].rsplit(" after ", 1)[0])
    assert code == 1 and last.startswith("HALT (1): error: "), last
    kind, message = last[len("HALT (1): error: ") :].rsplit(" at step ", 1)[0].split(": ", 1)
    return ("error", kind, message)


def _cli(text, completions, tmp_path, capsys):
    # agentic-machines eval: the value (status 0), a run-time error as the run's ending
    # (status 1), or a program that does not read as one line on stderr (status 2).
    argv = ["eval", text]
    if completions:
        script = tmp_path / "script.txt"
        script.write_text("".join(c + "\n" for c in completions))
        argv += ["--script", str(script)]
    code = main(argv)
    out, err = capsys.readouterr()
    if code == 0:
        return ("value", out.splitlines()[-1])
    if code == 1:
        last = out.splitlines()[-1]
        assert last.startswith("HALT (1): error: "), last
        kind, message = last[len("HALT (1): error: ") :].split(": ", 1)
        return ("error", kind, message)
    assert code == 2 and err.count("\n") == 1, (code, err)
    return ("error", err.strip())


@pytest.mark.parametrize("form, text, completions, expected", CASES, ids=_ids())
def test_case(form, text, completions, expected, tmp_path, capsys):
    result = run_program(text, completions, fuel=5_000_000)
    cli = _cli(text, completions, tmp_path, capsys)
    stepped = _stepper(text, completions)
    if isinstance(expected, str):
        assert result.error is None, result.error
        value = unparse(result.value)
        assert value == expected
        by_steps = _by_steps(text, completions)
        assert type(by_steps) is Halted and unparse(by_steps.value) == expected
        assert stepped == ("value", expected)
        assert cli == ("value", expected)
        return
    kind, words = expected
    assert isinstance(result.error, kind), (result.error, result.value)
    message = str(result.error)
    assert words in message and "\n" not in message, message
    assert stepped == ("error", kind.__name__, message)
    if kind is EvaluationError:  # a run-time error: the step-by-step run fails alike
        by_steps = _by_steps(text, completions)
        assert type(by_steps) is Failed and by_steps.message == message
        assert cli == ("error", kind.__name__, message)
    else:
        assert cli[0] == "error" and message in cli[-1]


# Tail calls through each form: the loop runs 100,000 times in constant continuation
# depth (the slow run; the default run goes 1,000 deep the same way).
TAIL = {
    "define": "(define (loop n) (if (= n 0) 'done (loop (- n 1)))) (loop {n})",
    "cond": "(define (loop n) (cond ((= n 0) 'done) (else (loop (- n 1))))) (loop {n})",
    "and": "(define (loop n) (and #t (if (= n 0) 'done (loop (- n 1))))) (loop {n})",
    "or": "(define (loop n) (or #f (if (= n 0) 'done (loop (- n 1))))) (loop {n})",
    "when": "(define (loop n) (if (= n 0) 'done (when #t (loop (- n 1))))) (loop {n})",
    "unless": "(define (loop n) (if (= n 0) 'done (unless #f (loop (- n 1))))) (loop {n})",
    "let*": "(define (loop n) (let* ((m n) (m (- m 1)) (stop (< m 0))) m (if stop 'done (let* () (loop m))))) (loop {n})",
    "body": "(define (loop n) (define m (- n 1)) 0 (if (< m 0) 'done (loop m))) (loop {n})",
    "lambda-rest": "(define (loop n . xs) (if (= n 0) 'done (loop (- n 1) 1 2))) (loop {n})",
    "mutual": "(define (ev n) (if (= n 0) 'done (od (- n 1)))) (define (od n) (ev (- n 1))) (ev {n})",
}
COUNTS.update({form: 1 for form in TAIL})


def _max_depth_by_steps(text):
    from agentic_machines.cek.machine import step

    state = start_state(text)
    deepest = 0
    while type(state) is not Halted:
        state = step(state)
        kont = getattr(state, "kont", None)
        if kont is not None:
            deepest = max(deepest, kont.depth)
    return state.value, deepest


def _tail(form, n, capsys):
    text = TAIL[form].format(n=n * 2 if form == "mutual" else n)
    assert unparse(run_program(text, [], fuel=50_000_000).value) == "done"
    value, deepest = _max_depth_by_steps(text)
    assert unparse(value) == "done" and deepest <= 4, deepest  # tail calls: no frames pile up
    assert main(["eval", text]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "done"


@pytest.mark.parametrize("form", sorted(TAIL))
def test_tail_calls_run_in_constant_space(form, capsys):
    _tail(form, 1_000, capsys)


@pytest.mark.slow
@pytest.mark.parametrize("form", sorted(TAIL))
def test_tail_calls_100000_deep(form, capsys):
    _tail(form, 100_000, capsys)


def test_every_form_and_primitive_has_cases():
    from agentic_machines.cek.expr import SPECIAL_FORMS
    from agentic_machines.cek.values import PRIMITIVES

    assert set(SPECIAL_FORMS) | set(PRIMITIVES) <= set(COUNTS)
    assert all(COUNTS[f] >= 2 for f in ["define", "cond", "and", "or", "let*", "when", "unless"])
    # an expected value and an expected error for each (list takes any values: no error)
    values = {form for form, _, _, expected in CASES if isinstance(expected, str)}
    errors = {form for form, _, _, expected in CASES if not isinstance(expected, str)}
    assert set(SPECIAL_FORMS) | set(PRIMITIVES) <= values
    assert (set(SPECIAL_FORMS) | set(PRIMITIVES)) - {"list"} <= errors


# The run loop keeps states in registers and takes some steps in place; it must reach
# the same outcome at the same step as step() at every fuel, through the new frames and
# the rest-parameter rule, on runs that end, fail, and loop (a repeated state).
AGREEMENT = [
    "(define (f n) (cond ((= n 0) 'z) ((< n 0) (car n)) (else (f (- n 1))))) (f 6)",
    "(define (f n) (cond ((= n 0) (f n)) (else (f (- n 1))))) (f 3)",
    "(define (f . xs) (f)) (f)",
    "(define (f n) (and #t (or #f (f n)))) (f 1)",
    "(define (f a . r) (if (null? r) a (f (+ a (car r))))) (f 1 2)",
    "(let* ((a (or #f 2)) (b (and a (+ a 1)))) (when (> b a) (unless #f (list a b))))",
    "(let* ((a 1) (b (+ a 1)) (a (* b 3))) (let* () a (list a b)))",
    "(define (f n) (let* ((m (- n 1)) (g (lambda () m))) (if (< m 0) (f n) (f (g))))) (f 3)",
    "(let* ((a 1) (b (car a))) b)",
    '(let* ((a (llm "q")) (b a)) b)',
    "(define (g n) (when (> n 0) (g (- n 1)))) (g 5)",
    "((lambda (a . r) (cond ((null? r) a) (r))) 1 2 3)",
    "(and 1 (or #f (car '())))",
]


@pytest.mark.parametrize("text", AGREEMENT)
def test_the_run_loop_and_step_agree_at_every_fuel(text):
    from agentic_machines.cek.fast import run
    from agentic_machines.errors import Undecided

    state = start_state(text)
    total = run_by_steps(state, fuel=100_000)[1]
    for fuel in range(1, total + 3):
        outs = []
        for fn in (run, run_by_steps):
            try:
                outs.append(fn(state, fuel=fuel))
            except Undecided as err:
                outs.append(str(err))
        a, b = outs
        if isinstance(a, str) or isinstance(b, str):
            assert a == b, (fuel, a, b)
        else:
            assert type(a[0]) is type(b[0]) and a[1] == b[1], (fuel, a, b)
            if type(a[0]) is Failed:
                assert a[0].message == b[0].message
            else:
                assert a[0] == b[0], (fuel, a, b)
