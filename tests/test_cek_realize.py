"""Universality: finite machines realized in the evaluator by the Loop construction."""

import functools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import DIVERGE, HALT, TableMachine
from agentic_machines.cek import Boundary, parse, seed_state
from agentic_machines.cek.expr import compile_program
from agentic_machines.cek.realize import react_toy, realize, realize_react_toy
from agentic_machines.embedding import Embedding
from agentic_machines.generation import completion_generates
from agentic_machines.strategies import examples, table_machines, thorough


def assert_witness(r, completions):
    """Every state loaded in one completion, prompts preserved, commutation on every completion."""
    m, ev, seed = r.machine, r.evaluator, r.seed
    images = {}
    for s in m.states:
        text = r.loader(s)
        compile_program(parse(text))  # a closed program
        image = ev.harness(seed, text)
        assert type(image) is Boundary and image == r.embedding(s)
        assert ev.prompt(image) == m.prompt(s)
        images[s] = image
    assert len(set(images.values())) == len(images)  # injective
    for s in m.states:
        for c in completions:
            assert ev.harness(images[s], c) == r.embedding(m.harness(s, c)), (s, c)


# Up to 8 states in the default run (the witness checks every state and completion, so the
# cost grows with the size, and nothing in realize depends on it); 20 under the thorough
# profile, and test_a_twenty_state_machine_is_realized runs a 20-state machine every time.
@settings(max_examples=examples(15, 500))
@given(
    table_machines(
        max_states=20 if thorough() else 8,
        max_completions=3,
        prompts=("a", "b", 'say "hi"\n', ""),
    )
)
def test_random_finite_machines_are_realized(machine):
    r = realize(machine)
    assert isinstance(r.embedding, Embedding)
    assert_witness(r, machine.completions)


def test_a_twenty_state_machine_is_realized():
    rng = random.Random(20)
    letters = ("0", "1", "2")
    prompts = {s: rng.choice(["a", "b", "c"]) for s in range(20)}
    table = {
        (s, c): rng.choice(list(range(20)) + [HALT, DIVERGE]) for s in range(20) for c in letters
    }
    machine = TableMachine(prompts, table, completions=letters)
    assert_witness(realize(machine), letters)


def test_realize_checks_with_completion_generates():
    m = TableMachine(
        {"start": "left or right?", "mid": "again?", "end": "bye"},
        {
            ("start", "L"): "mid",
            ("start", "R"): "end",
            ("mid", "L"): DIVERGE,
            ("mid", "R"): "start",
            ("end", "L"): HALT,
            ("end", "R"): "end",
        },
    )
    r = realize(m, q="seed prompt")
    verdict = completion_generates(
        r.evaluator, seed_state("seed prompt"), m, embedding=r.embedding, loader=r.loader
    )
    assert verdict.holds is True and verdict.method == "exhaustive"
    assert r.check().holds is True
    # completions outside the alphabet halt (commutation is only claimed on the alphabet)
    assert r.evaluator.harness(r.embedding("start"), "something else") is HALT


def test_the_react_toy_is_realized_by_hand():
    r = realize_react_toy()
    verdict = r.check()
    assert verdict.holds is True and verdict.method == "exhaustive"
    assert verdict.checked >= len(r.machine.states) * len(r.machine.completions)
    assert_witness(r, r.machine.completions)


@settings(max_examples=examples(40, 1000))
@given(
    st.sampled_from(react_toy().states),
    st.one_of(
        st.text(max_size=12),
        st.builds(
            lambda t: f"Search[{t}]",
            st.sampled_from(["Hamlet", "William Shakespeare", "Stratford-upon-Avon", "", "x]"]),
        ),
        st.builds(lambda t: f"Finish[{t}]", st.text(max_size=5)),
        st.sampled_from(["Search[", "Finish]", "Search[Hamlet] ", " Search[Hamlet]"]),
    ),
)
def test_the_react_realization_commutes_on_every_string(state, c):
    r = react_realized()
    assert r.evaluator.harness(r.embedding(state), c) == r.embedding(r.machine.harness(state, c))


# realized once, when the test above first runs (not when the file is collected)
react_realized = functools.cache(realize_react_toy)
