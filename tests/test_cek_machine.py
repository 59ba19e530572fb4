"""The CEK machine: canonical states, acyclic closures, deep recursion, cycles, fuel."""

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import DIVERGE, HALT, AgenticMachine
from agentic_machines.cek import (
    AgenticEvaluator,
    Boundary,
    EvaluationError,
    ProgramDiverged,
    Undecided,
    evaluate,
    first_boundary,
    loader,
    unparse,
)
from agentic_machines.cek.evaluator import start_state as start_state_of
from agentic_machines.cek.expr import EMPTY_SEQ, Branches, Const
from agentic_machines.cek.machine import ArgsK, BeginK, EvalK, Halted, IfK, LlmK, kont_depth, step
from agentic_machines.cek.strategies import (
    ERRORING_PROGRAMS,
    LOOPING_PROGRAMS,
    completions,
    programs,
)
from agentic_machines.cek.values import Closure
from agentic_machines.errors import MalformedProgram, ParseError, WrongType
from agentic_machines.models import ScriptedModel


def test_states_of_the_same_computation_are_equal():
    # Unused bindings and already-evaluated source leave no trace in the state.
    a = first_boundary('(let ((x 1) (unused "zzz")) (+ x (string-length (llm "q"))))')
    b = first_boundary('(+ ((lambda (y) y) 1) (string-length (llm "q")))')
    c = first_boundary('(+ 1 (string-length (llm (string-append "" "q"))))')
    assert a == b == c and hash(a) == hash(b) == hash(c)
    assert loader(a) == loader(b) == '(+ 1 (string-length (llm "q")))'


def test_closures_capture_only_their_free_variables():
    f = evaluate('(let ((a 1) (b "big unused value")) (lambda (x) (+ x a)))')
    assert isinstance(f, Closure) and f.env == (1,) and f.group.fv == ("a",)
    g = evaluate("(let ((a 1)) (lambda (x) (+ x a)))")
    assert f == g


def test_letrec_closures_do_not_carry_siblings_they_cannot_reach():
    # g is dead once f is chosen: its captured b must not make the states differ.
    a = first_boundary(
        '(let ((a 1) (b 2)) (letrec ((f (lambda () a)) (g (lambda () b))) (f (llm "q"))))'
    )
    b = first_boundary(
        '(let ((a 1) (b 3)) (letrec ((f (lambda () a)) (g (lambda () b))) (f (llm "q"))))'
    )
    c = first_boundary('(let ((a 1)) (letrec ((f (lambda () a))) (f (llm "q"))))')
    assert a == b == c and hash(a) == hash(c)
    # mutual recursion keeps the members it reaches, and only those
    pair = evaluate(
        "(let ((a 1) (b 2)) (letrec ((e (lambda (n) (if (= n 0) a (o (- n 1))))) "
        "(o (lambda (n) (if (= n 0) b (e (- n 1))))) (h (lambda () (e 3))) (dead (lambda () 0))) (list e h)))"
    )
    e, h = pair.car, pair.cdr.car
    assert (
        e.group.names == ("e", "o")
        and h.group.names == ("e", "o", "h")
        and e.env == h.env == (1, 2)
    )
    assert evaluate(unparse(pair)) == pair and evaluate(f"((car (cdr {unparse(pair)})))") == 2


def test_recursive_closures_are_acyclic_and_print_back_as_source():
    f = evaluate(
        "(letrec ((even (lambda (n) (if (= n 0) #t (odd (- n 1))))) (odd (lambda (n) (if (= n 0) #f (even (- n 1)))))) odd)"
    )
    text = unparse(f)
    assert text.startswith("(letrec ((even (lambda (n)") and text.endswith(" odd)")
    assert evaluate(text) == f
    assert pickle.loads(pickle.dumps(f)) == f  # no cycle to trip over
    # calling the printed closure works
    assert unparse(evaluate(f"({text} 7)")) == "#t"


def test_values_with_procedures_inside_lists_print_back():
    v = evaluate("(let ((k 5)) (list 1 (lambda (x) (+ x k)) car '(a)))")
    assert evaluate(unparse(v)) == v


def test_a_deep_recursion_runs(deep):
    program = f"(letrec ((f (lambda (n) (if (= n 0) 0 (+ 1 (f (- n 1))))))) (f {deep}))"
    assert evaluate(program) == deep


def test_a_boundary_deep_in_frames_is_loaded_exactly(deep):
    program = (
        f'(letrec ((f (lambda (n) (if (= n 0) (llm "bottom") (+ 1 (f (- n 1))))))) (f {deep}))'
    )
    beta = first_boundary(program, fuel=10 * deep)
    assert type(beta) is Boundary and kont_depth(beta.kont) == deep
    text = loader(beta)
    assert text == "(+ 1 " * deep + '(llm "bottom")' + ")" * deep
    from agentic_machines.cek import seed_state

    again = AgenticEvaluator(fuel=10 * deep).harness(seed_state(), text)
    assert again == beta and again is not beta and hash(again) == hash(beta)
    assert AgenticEvaluator(fuel=10 * deep).harness(beta, "x") is HALT  # (+ 1 "x") fails: HALT


@pytest.mark.parametrize(
    "program",
    [
        "(letrec ((f (lambda () (f)))) (f))",
        "(letrec ((f (lambda (x) (g x))) (g (lambda (x) (f x)))) (f 1))",
        "(letrec ((f (lambda (a b) (f b a)))) (f 1 2))",
        '(letrec ((f (lambda () (eval "(letrec ((g (lambda () (g)))) (g))")))) (f))',
        "(letrec ((f (lambda (n) (if (< n 3) (f (+ n 1)) (f 0))))) (f 0))",
    ],
)
def test_loops_that_repeat_a_state_are_detected_exactly(program):
    with pytest.raises(ProgramDiverged):
        evaluate(program, fuel=100_000)
    assert first_boundary(program) is DIVERGE


def test_a_loop_after_a_boundary_is_divergence_of_the_harness():
    ev = AgenticEvaluator(fuel=10_000)
    beta = first_boundary('(begin (llm "go") (letrec ((f (lambda () (f)))) (f)))')
    assert ev.harness(beta, "anything") is DIVERGE


def test_growing_computations_run_out_of_fuel_as_undecided():
    with pytest.raises(Undecided, match="fuel"):
        evaluate("(letrec ((f (lambda (n) (f (+ n 1))))) (f 0))", fuel=5_000)
    ev = AgenticEvaluator(fuel=5_000)
    beta = first_boundary('(eval (llm "program?"))')
    with pytest.raises(Undecided):
        ev.harness(beta, "(letrec ((f (lambda (n) (+ 1 (f n))))) (f 0))")


def test_evaluate_with_a_model_and_without_one():
    program = '(string-append (llm "first?") "+" (llm "second?"))'
    model = ScriptedModel(["a", "b"])
    assert evaluate(program, model) == "a+b"
    with pytest.raises(EvaluationError, match="no model was given"):
        evaluate(program)


def test_the_evaluator_is_an_agentic_machine_on_boundary_states():
    ev = AgenticEvaluator()
    assert isinstance(ev, AgenticMachine) and ev.states is None and ev.completions is None
    beta = first_boundary('(let ((n (llm "n?"))) (if (string=? n "again") (llm "n?") n))')
    assert ev.prompt(beta) == "n?"
    assert ev.harness(beta, "stop") is HALT and ev.last_record.value == "stop"
    nxt = ev.harness(beta, "again")
    assert type(nxt) is Boundary and ev.prompt(nxt) == "n?"
    # the error behind a HALT is kept in the run record, not in the outcome
    b2 = first_boundary('(+ 1 (llm "number?"))')
    assert ev.harness(b2, "x") is HALT
    assert isinstance(ev.last_record.error, EvaluationError) and ev.last_record.value is None
    with pytest.raises(TypeError):
        ev.harness("not a state", "c")


def test_step_refuses_what_does_not_step_with_a_clear_error():
    # a user error (errors.WrongType, still a TypeError), saying what steps instead
    b = first_boundary('(llm "q")')
    with pytest.raises(WrongType, match=r"Boundary is not a running state.*Ret\(completion"):
        step(b)
    with pytest.raises(WrongType, match="Halted is not a running state"):
        step(Halted(1))


@pytest.mark.parametrize(
    "program, frame, context",
    [
        ('(string-append "a" (llm "q") "b")', ArgsK, '(string-append "a" (llm "q") "b")'),
        ('((llm "q") 1)', ArgsK, '((llm "q") 1)'),
        ('(if (llm "q") 1 2)', IfK, '(if (llm "q") 1 2)'),
        ('(begin (llm "q") 2)', BeginK, '(begin (llm "q") 2)'),
        ('(llm (llm "q"))', LlmK, '(llm (llm "q"))'),
        ('(eval (llm "q"))', EvalK, '(eval (llm "q"))'),
        ('(let ((k 7)) (if (llm "q") k 0))', IfK, '((lambda (k) (if (llm "q") k 0)) 7)'),
    ],
)
def test_each_frame_is_rebuilt_by_its_source_context(program, frame, context):
    beta = first_boundary(program)
    assert type(beta.kont) is frame
    assert loader(beta) == context
    assert first_boundary(loader(beta)) == beta


def test_purity_of_lists_is_cached_so_nested_eval_of_quoted_code_stays_linear():
    from agentic_machines.cek import parse

    assert parse('(1 (a "s") #t nil)').pure is True
    assert evaluate("(list 1 (list (lambda (x) x)))").pure is False
    assert (
        evaluate("(cons 1 (list car))").pure is False
        and evaluate("(cdr (list car 1))").pure is True
    )
    # each level compiles only its own list: O(depth) overall, not O(depth²)
    assert evaluate("(eval '" * 20_000 + "7" + ")" * 20_000) == 7
    assert evaluate('(eval "' + "(eval '" * 20_000 + "7" + ")" * 20_000 + '")') == 7


def test_deep_values_copy_as_themselves(deep):
    import copy

    from agentic_machines.cek import parse

    v = parse("(" * deep + ")" * deep)  # deeper than the recursion limit
    assert copy.deepcopy(v) is v and copy.copy(v) is v


# ---------------------------------------------------------------- run's register form


def _same_outcome(a, b):
    # Failed keeps the exception object: compare its class and message, the rest exactly.
    (x, n), (y, m) = a, b
    if type(x).__name__ == "Failed" or type(y).__name__ == "Failed":
        return (type(x), type(getattr(x, "error", None)), str(x.message)) == (
            type(y),
            type(getattr(y, "error", None)),
            str(y.message),
        ) and n == m
    return type(x) is type(y) and x == y and n == m


def _both(state, fuel, detect_cycles=True):
    from agentic_machines.cek.fast import run
    from agentic_machines.cek.machine import run_by_steps

    out = []
    for fn in (run, run_by_steps):
        try:
            out.append(("ok", fn(state, fuel=fuel, detect_cycles=detect_cycles)))
        except Undecided as err:
            out.append(("undecided", str(err)))
    return out


def _check_run_equals_steps(text, replies, fuel):
    from agentic_machines.cek.evaluator import start_state
    from agentic_machines.cek.machine import Boundary, Ret

    try:
        state = start_state(text)
    except (MalformedProgram, ParseError):
        return  # rejected before any step: nothing to run
    for reply in [None, *replies]:
        if reply is not None:
            state = Ret(reply, state.kont)
        (k1, a), (k2, b) = _both(state, fuel)
        assert k1 == k2, (text, a, b)
        if k1 == "undecided":
            assert a == b
            return
        assert _same_outcome(a, b), (text, a, b)
        if type(a[0]) is not Boundary:
            return
        state = a[0]


@settings(max_examples=300, deadline=None, database=None)
@given(
    programs(),
    st.lists(completions(), max_size=4),
    st.one_of(st.sampled_from([3, 40, 100_000]), st.integers(1, 120)),
)
def test_run_in_registers_takes_the_same_steps_as_step(text, replies, fuel):
    # run() keeps the state in registers between steps; run_by_steps() calls step() once
    # per transition. Same boundaries, endings, errors, step counts and out-of-fuel points.
    _check_run_equals_steps(text, replies, fuel)


@pytest.mark.parametrize(
    "text", LOOPING_PROGRAMS + ERRORING_PROGRAMS + ('(string-append "a" (llm "q") "b")',)
)
@pytest.mark.parametrize("fuel", [1, 7, 64, 5_000])
def test_run_in_registers_on_loops_and_errors(text, fuel):
    # cycles are found at the same step with the same period; errors at the same step
    _check_run_equals_steps(text, ["(letrec ((f (lambda () (f)))) (f))", "x"], fuel)
    try:
        state = start_state_of(text)
    except (MalformedProgram, ParseError):
        return
    (k1, a), (k2, b) = _both(state, fuel, detect_cycles=False)
    assert k1 == k2 and (a == b if k1 == "undecided" else _same_outcome(a, b))


# Runs that pass primitive calls in place (an if's primitive test, a primitive argument of
# an application; see fast._run_registers): terminating, looping through such calls
# (a repeated state), failing inside one, and reaching a boundary after them.
IN_PLACE_PROGRAMS = (
    "(letrec ((fib (lambda (n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2))))))) (fib 5))",
    "(letrec ((f (lambda (n) (if (< n 2) (f n) 0)))) (f 1))",
    "(letrec ((f (lambda (n) (f (- n 0))))) (f 5))",
    "(letrec ((f (lambda (n) (if (= n 0) 0 (+ (- n 0) (f (- n 1))))))) (f 5))",
    "(letrec ((f (lambda (n) (if (= n 0) (f (+ n 0)) (f (- n 1)))))) (f 3))",
    "(letrec ((f (lambda (n) (f (car n))))) (f 5))",
    "(letrec ((f (lambda (n) (if (car n) 1 2)))) (f 5))",
    '(string-append (substring "abc" 0 1) (llm (string-append "q" "r")) (number->string (+ 1 2)))',
    '(letrec ((f (lambda (n) (if (= n 0) (llm "q") (+ (- n 1) (f (- n 1))))))) (f 4))',
)


@pytest.mark.parametrize("text", IN_PLACE_PROGRAMS)
@pytest.mark.parametrize("shift", range(6))
def test_primitive_calls_in_place_agree_with_step_on_every_fuel(text, shift):
    # Every fuel from 1 to past the run's end, so the fuel runs out at each state the
    # loop passes in place; the `shift` leading steps (2 per `0` in a begin, 1 per
    # `(if #t ...)`) move Brent's saved states across those states, so a cycle is found
    # from every phase, and run() must find it at the same step with the same period.
    from agentic_machines.cek.evaluator import run_program

    text = "(if #t " * (shift % 2) + f"(begin {'0 ' * (shift // 2)}{text})" + " 0)" * (shift % 2)
    replies = ["7", "x"]
    total = run_program(text, replies, fuel=10_000).steps
    assert total > 0
    for fuel in range(1, total + 3):
        _check_run_equals_steps(text, replies, fuel)
    _check_run_equals_steps(text, replies, 100_000)


def test_frames_hash_on_first_use_as_they_would_when_built(deep):
    # A frame's hash is computed when asked for, down a chain deeper than the recursion
    # limit (100 000 deep in the slow run) without recursion, and equal continuations
    # built apart hash and compare equal.
    from agentic_machines.cek.machine import HALT_K

    def chain(n):
        k = HALT_K
        for i in range(n):
            k = ArgsK((i,), EMPTY_SEQ, (), k) if i % 2 else LlmK(k)
        return k

    a, b = chain(deep), chain(deep)
    assert a._h is None and kont_depth(a) == deep
    assert hash(a) == hash(b) and a == b and a._h is not None
    assert IfK(Branches(Const(1), Const(2)), (), a) != IfK(Branches(Const(1), Const(3)), (), b)
