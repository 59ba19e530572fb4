"""The SPE theorem, executable: h(x*, loader(β)) == β, totality of h, and F5 inside SPE."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import DIVERGE, HALT
from agentic_machines.cek import (
    AgenticEvaluator,
    Boundary,
    Undecided,
    first_boundary,
    loader,
    parse,
    seed_state,
)
from agentic_machines.cek.expr import compile_program
from agentic_machines.cek.machine import HALT_K, ArgsK, BeginK, EvalK, IfK, LlmK, kont_depth
from agentic_machines.cek.strategies import (
    ERRORING_PROGRAMS,
    LOOPING_PROGRAMS,
    completions,
    programs,
)
from agentic_machines.cek.values import Closure
from agentic_machines.embedding import identity
from agentic_machines.generation import cardinality_obstruction, is_spe_state
from agentic_machines.strategies import examples

FUEL = 20_000
EV = AgenticEvaluator(fuel=FUEL)
SEED = seed_state()


def boundaries(program, script):
    """The boundary states a program passes under a script (stops at HALT, ↑ or Undecided)."""
    try:
        beta = first_boundary(program, fuel=FUEL)
    except Undecided:
        return []
    seen = []
    script = list(script)
    while type(beta) is Boundary:
        seen.append(beta)
        if not script:
            break
        try:
            beta = EV.harness(beta, script.pop(0))
        except Undecided:
            break
    return seen


def check_loader(beta):
    text = loader(beta)
    program = compile_program(parse(text))  # it parses and is closed
    assert "llm" in text
    assert (
        first_boundary(program, fuel=FUEL) == beta
    )  # no llm call before β: its first boundary is β
    assert EV.harness(SEED, text) == beta


@pytest.mark.parametrize(
    "program",
    [
        '(let ((z 3)) (cond ((= z 1) 0) ((llm "q") z) ((< z 0))))',
        '(let ((k 4)) (and (llm "q") k 2))',
        '(let ((k 4)) (or (llm "q") k))',
        '(let ((n 5)) (when (llm "q") n 1))',
        '(let ((n 5)) (unless (llm "q") n))',
        '(let ((w 9)) (let* ((a 1) (x (string-append (llm "q") "!")) (y (+ a w))) (list x y a)))',
        '(let* ((a 2) (b (+ a 1))) (let* ((c (llm "q")) (a c)) (list a b)))',
    ],
)
def test_the_loader_loads_states_inside_the_frames_of_cond_and_or_and_let_star(program):
    # The generated programs do not write these forms; their frames load all the same.
    check_loader(first_boundary(program, fuel=FUEL))


def test_the_loader_loads_every_reached_boundary_state_from_the_seed():
    """The central property: h(x*, loader(β)) == β for every boundary state β reached by a
    generated program under generated completions; then the same states, in every context,
    feed is_spe_state with the loader as witness."""
    reached: dict = {}  # boundary state -> None, in the order first reached
    seen: set = set()

    # completions of every kind, plus programs that call llm again (boundaries inside eval)
    @settings(max_examples=examples(500, 20_000))
    @given(programs(), st.lists(st.one_of(completions(), programs(max_depth=2)), max_size=5))
    def loads(program, script):
        before = None
        for i, beta in enumerate(boundaries(program, script)):
            check_loader(beta)
            reached.setdefault(beta)
            seen.update(name for name, predicate in CONTEXTS.items() if predicate(beta, i))
            if before is not None and _inside_evaluated_completion(before, beta):
                seen.add("inside eval (a completion)")
            before = beta

    loads()
    assert sorted(set(CONTEXTS) - seen) == [], "the generated programs missed these contexts"
    # every 1 in k states, at most ~1000, keeps the verdict cheap under the thorough profile
    states = list(reached)[:: max(1, len(reached) // 1000)]
    verdict = is_spe_state(
        EV,
        SEED,
        embedding=identity(EV),
        loader=loader,
        states=states,
        completions=["x", "(car nil)"],
    )
    assert verdict.holds is True and verdict.method == "sampled", verdict
    assert verdict.checked >= len(states) >= 200 and verdict.witness.loader is loader


def _inside_evaluated_completion(before, beta):
    """β was reached inside the program text of the completion that resumed ``before``:
    ``before`` hands its completion to eval, and β's continuation still ends in what was
    under that eval (eval runs in tail position, so the program's frames sit on top)."""
    if type(before.kont) is not EvalK:
        return False
    rest, k = before.kont.next, beta.kont
    extra = kont_depth(k) - kont_depth(rest)
    if extra < 0:
        return False
    for _ in range(extra):
        k = k.next
    return k == rest


def test_the_seed_loads_itself_and_states_from_completed_programs():
    check_loader(SEED)
    # a completion that is itself a program: the boundary it reaches is loadable too
    beta = EV.harness(
        SEED, '(let ((n (string-length (llm "name?")))) (if (< n 3) (llm "short") (llm "long")))'
    )
    check_loader(beta)
    check_loader(EV.harness(beta, "Alexander"))


def _frames(beta):
    k = beta.kont
    while k is not HALT_K:
        yield k
        k = k.next


def _captures(b):
    values = [v for f in _frames(b) for v in getattr(f, "done", ()) + getattr(f, "env", ())]
    return any(type(v) is Closure and v.env for v in values)


def _values(b):
    return [v for f in _frames(b) for v in getattr(f, "done", ()) + getattr(f, "env", ())]


CONTEXTS = {
    "operand position": lambda b, i: type(b.kont) is ArgsK and len(b.kont.done) > 0,
    "operator position": lambda b, i: any(type(f) is ArgsK and not f.done for f in _frames(b)),
    "primitive argument": lambda b, i: (
        type(b.kont) is ArgsK and b.kont.done and type(b.kont.done[0]).__name__ == "Prim"
    ),
    "if test": lambda b, i: any(type(f) is IfK for f in _frames(b)),
    "begin": lambda b, i: any(type(f) is BeginK for f in _frames(b)),
    "llm prompt": lambda b, i: any(type(f) is LlmK for f in _frames(b)),
    "eval argument": lambda b, i: any(type(f) is EvalK for f in _frames(b)),
    "let body (captured environment)": lambda b, i: any(getattr(f, "env", ()) for f in _frames(b)),
    "letrec body (recursive closure)": lambda b, i: any(
        type(v) is Closure and v.group.names for v in _values(b)
    ),
    "recursion frames": lambda b, i: sum(1 for _ in _frames(b)) >= 4,
    "closure capturing values": lambda b, i: any(type(v) is Closure and v.env for v in _values(b)),
    "inside eval (quoted data or text)": lambda b, i: (
        b.prompt[:1] == "e" and b.prompt[1:].isdigit()
    ),
    "inside eval (a completion)": lambda b, i: b.prompt == "in eval",
    "after earlier llm calls": lambda b, i: i >= 2,
}
SCRIPT = ("a", '(llm "in eval")', "yes", "b")


def test_the_program_strategy_reaches_boundaries_in_every_context():
    seen = set()

    @settings(max_examples=examples(300, 3_000), database=None)
    @given(programs())
    def explore(program):
        for i, b in enumerate(boundaries(program, SCRIPT)):
            seen.update(name for name, predicate in CONTEXTS.items() if predicate(b, i))

    explore()
    assert sorted(set(CONTEXTS) - seen) == []


SAMPLE_PROGRAMS = [
    '(string-append "a" (llm "q1") (llm "q2"))',
    '((if (string=? (llm "op?") "x") (lambda (a) a) (lambda (a) (string-append a "!"))) (llm "arg?"))',
    '(let ((f (let ((cap "c")) (lambda (s) (string-append cap s))))) (f (llm "z")))',
    '(letrec ((even (lambda (n) (if (= n 0) (llm "even") (odd (- n 1))))) (odd (lambda (n) (if (= n 0) (llm "odd") (even (- n 1)))))) (list 1 (even 5)))',
    '(letrec ((f (lambda (n) (if (= n 0) (llm "bottom") (+ 1 (f (- n 1))))))) (f 20))',
    '(eval (quote (+ 1 (string-length (llm "inner")))))',
    '(begin (llm "a") (llm "b"))',
    '(if (llm "t?") (llm "then") 0)',
    '(eval (llm "program?"))',
]
COMPLETIONS = [
    "x",
    "yes",
    '"quoted"',
    '(llm "again")',
    "(car nil)",
    "42",
    "(+ 1",
    "",
    '((lambda (q) (llm q)) "p")',
]


def sample_states():
    states = [SEED]
    for program in SAMPLE_PROGRAMS:
        states.extend(boundaries(program, COMPLETIONS[:3]))
    return states


def test_is_spe_state_holds_for_the_seed_with_the_loader_as_witness():
    states = sample_states()
    verdict = is_spe_state(
        EV, SEED, embedding=identity(EV), loader=loader, states=states, completions=COMPLETIONS
    )
    assert verdict.holds is True and verdict.method == "sampled"
    assert verdict.checked >= len(set(states))
    assert verdict.witness.load(states[3]) == loader(states[3])


def test_a_non_spe_state_inside_spe_is_refuted_by_cardinality():
    beta = first_boundary('(begin (llm "a") (llm "b"))')
    rng = random.Random(5)
    tries = COMPLETIONS + [
        "".join(rng.choice("()'\" abλ") for _ in range(rng.randint(0, 12))) for _ in range(50)
    ]
    others = sample_states()
    verdict = cardinality_obstruction(
        EV,
        beta,
        EV,
        reason='(begin (llm "a") (llm "b")) discards the first completion, so every completion leads to the llm "b" state',
        completions=tries,
        target_states=others,
        proof="proofs/spe_theorem.md",
    )
    assert verdict.holds is False and verdict.method == "fact:F5"
    assert verdict.obstruction.kind == "cardinality"
    assert "injective" in verdict.obstruction.explanation
    assert {EV.harness(beta, c) for c in tries} == {Boundary("b", HALT_K)}
    # ... whereas the seed has many different successors
    assert len({EV.harness(SEED, loader(s)) for s in others}) == len(set(others))


# ---------------------------------------------------------------- totality


def _random_completion(rng: random.Random, pool: list[str]) -> str:
    kind = rng.randrange(100)
    if kind < 20:
        return "".join(chr(rng.randrange(32, 127)) for _ in range(rng.randint(0, 30)))
    if kind < 35:  # arbitrary unicode, lone surrogates included
        return "".join(chr(rng.randrange(0, 0x110000)) for _ in range(rng.randint(0, 20)))
    if kind < 50:  # unbalanced parentheses and quotes
        return "".join(rng.choice("()\"'; \\a1#") for _ in range(rng.randint(1, 40)))
    if kind < 52:  # huge nesting, balanced or not
        n = rng.randint(1_000, 20_000)
        return "(" * n + ")" * (n - rng.randint(0, 1))
    if kind < 62:
        return rng.choice(LOOPING_PROGRAMS)
    if kind < 72:
        return rng.choice(ERRORING_PROGRAMS)
    if kind < 90:
        return rng.choice(pool)
    # a valid program with a random fragment spliced in
    text = rng.choice(pool)
    i = rng.randrange(len(text) + 1)
    return text[:i] + rng.choice(["(", ")", '"', '(llm "x")', "'", " 1 "]) + text[i:]


def test_the_harness_is_total_on_random_completions():
    rng = random.Random(2024)
    pool = SAMPLE_PROGRAMS + COMPLETIONS + ['(llm "next")', '(eval (llm "deeper"))', "(list 1 2)"]
    states = sample_states()
    ev = AgenticEvaluator(fuel=3_000)
    counts = {"state": 0, "halt": 0, "diverge": 0, "undecided": 0}
    for _ in range(10_000):
        beta = rng.choice(states)
        c = _random_completion(rng, pool)
        try:
            out = ev.harness(beta, c)
        except Undecided:
            counts["undecided"] += 1
            continue
        if out is HALT:
            counts["halt"] += 1
        elif out is DIVERGE:
            counts["diverge"] += 1
        else:
            assert type(out) is Boundary
            counts["state"] += 1
            if len(states) < 200:
                states.append(out)
    assert all(counts.values()), counts
