"""Completion-generation and SPE states: exact on finite machines, honest elsewhere.

The exact deciders are compared with F1 and with a brute force over every injection on
random machines of up to 4 states and 3 completions; F4 (invariance) and F5
(cardinality) are checked on random triples.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import (
    HALT,
    Embedding,
    FunctionMachine,
    check_embedding,
    completion_generates,
    is_sentinel,
    is_spe_state,
    spe_states,
    successors,
)
from agentic_machines.errors import InvalidArgument
from agentic_machines.fixtures import fixture
from agentic_machines.strategies import embeddings_into, examples, states_of, table_machines

ALPHABET = ("0", "1", "2")


def generates_by_brute_force(machine, x, target):
    """Some injection of the target's states into succ(x) ∩ S passes the embedding check."""
    succ = {y for y in successors(machine, x).values() if not is_sentinel(y)}
    for image in itertools.permutations(sorted(succ), len(target.states)):
        if check_embedding(Embedding(target, machine, dict(zip(target.states, image)))).holds:
            return True
    return False


def machine_and_state(**kw):
    return table_machines(**kw).flatmap(lambda m: st.tuples(st.just(m), states_of(m)))


# One prompt half of the time, so that prompts do not refute most pairs at once.
triples = st.tuples(st.sampled_from([1, 2, 3]), st.sampled_from([("a",), ("a", "b")])).flatmap(
    lambda kp: st.tuples(
        machine_and_state(completions=ALPHABET[: kp[0]], prompts=kp[1]),
        st.one_of(
            table_machines(4, completions=ALPHABET[: kp[0]], prompts=kp[1]),
            # sub-machines of a random machine: often embeddable, sometimes not
            table_machines(4, completions=ALPHABET[: kp[0]], prompts=kp[1])
            .flatmap(embeddings_into)
            .map(lambda p: p[0]),
        ),
    )
)


def assert_certified(v, machine, x, target):
    """A positive verdict carries a working witness; a negative one names a target state."""
    if v.holds:
        e, loader = v.witness.embedding, v.witness.loader
        assert check_embedding(e).holds
        for s in target.states:
            assert machine.harness(x, loader[s]) == e(s)
    else:
        assert v.obstruction is not None and v.obstruction.state in target.states
        assert repr(v.obstruction.state) in v.obstruction.explanation
        if v.obstruction.kind == "behaviour":  # a concrete distinguishing sequence is named
            assert "for example after the completions" in v.obstruction.explanation


# -- SPE states: F1 and brute force -----------------------------------------------------


@settings(max_examples=examples(200, 3000))
@given(machine_and_state())
def test_is_spe_state_agrees_with_f1_and_with_brute_force(pair):
    m, x = pair
    v = is_spe_state(m, x)
    f1 = set(m.states) <= set(successors(m, x).values())
    assert v.holds is f1
    assert v.method == "fact:F1"
    assert generates_by_brute_force(m, x, m) is f1
    assert_certified(v, m, x, m)
    # The general search decides the same question without F1.
    assert completion_generates(m, x, m).holds is f1
    assert (x in spe_states(m)) is f1


@settings(max_examples=examples(200, 3000))
@given(triples)
def test_completion_generates_agrees_with_brute_force(triple):
    (m, x), target = triple
    v = completion_generates(m, x, target)
    assert v.holds is generates_by_brute_force(m, x, target)
    assert v.method in ("exhaustive", "fact:F2", "fact:F5")
    assert_certified(v, m, x, target)


@settings(max_examples=examples(100, 2000))
@given(triples)
def test_f5_more_target_states_than_successor_states_refutes(triple):
    (m, x), target = triple
    succ = {y for y in successors(m, x).values() if not is_sentinel(y)}
    if len(target.states) > len(succ):
        assert completion_generates(m, x, target).holds is False


@settings(max_examples=examples(100, 2000))
@given(
    st.sampled_from([1, 2, 3]).flatmap(
        lambda k: st.tuples(
            table_machines(4, completions=ALPHABET[:k])
            .flatmap(embeddings_into)
            .flatmap(lambda pair: st.tuples(st.just(pair), states_of(pair[0]))),
            table_machines(3, completions=ALPHABET[:k]),
        )
    )
)
def test_f4_invariance_under_embeddings(triple):
    ((y_machine, e), y0), z = triple
    x_machine = e.target
    assert (
        completion_generates(x_machine, e(y0), z).holds
        is completion_generates(y_machine, y0, z).holds
    )


# -- the F2 fixtures and edge cases--------------------------------------------------------


@pytest.mark.parametrize(
    "name, expected",
    [
        ("f2-add", {0: True, 1: True}),
        ("f2-mul", {0: False, 1: True}),
        ("f2-const", {0: False, 1: False}),
    ],
)
def test_f2_fixture_verdicts(name, expected):
    m = fixture(name)
    for x, holds in expected.items():
        v = is_spe_state(m, x)
        assert v.holds is holds
        assert_certified(v, m, x, m)
    assert spe_states(m) == frozenset(x for x, holds in expected.items() if holds)


def test_spe_states_of_a_machine_with_more_states_than_completions_is_empty():
    m = fixture("f2-add")
    assert spe_states(fixture("halt1")) == frozenset()
    assert spe_states(m) == {0, 1}


def test_unknown_state_and_infinite_machine_errors_say_what_to_do():
    with pytest.raises(InvalidArgument, match="not a state"):
        is_spe_state(fixture("f2-add"), 7)
    with pytest.raises(InvalidArgument, match="completions="):
        successors(FunctionMachine(lambda s: "", lambda s, c: s), 0)
    with pytest.raises(InvalidArgument, match="finite machine"):
        spe_states(FunctionMachine(lambda s: "", lambda s, c: s))


# -- infinite machines ------------------------------------------------------------------


# The "stack" machine: a state is a tuple of bits; completion "push b" adds b, anything
# else pops. From the empty tuple the completion "load:<bits>" jumps anywhere: an SPE-like
# seed with an infinite state space.
def _h(s, c):
    if s == () and c.startswith("load:"):
        return tuple(int(b) for b in c[5:])
    if c.startswith("push "):
        return s + (int(c[5:]),)
    return s[:-1] if s else HALT


stack = FunctionMachine(lambda s: "stack " + "".join(map(str, s)), _h, name="stack")
samples = [(), (0,), (1,), (0, 1), (1, 1, 0)]
loader = lambda s: "load:" + "".join(map(str, s))  # noqa: E731


def test_infinite_machine_with_witness_is_sampled():
    v = is_spe_state(
        stack,
        (),
        embedding=Embedding(stack, stack, lambda s: s),
        loader=loader,
        states=samples,
        completions=["push 0", "push 1", "pop"],
    )
    assert v.holds is True and v.method == "sampled" and v.checked > len(samples)


def test_infinite_machine_with_a_wrong_loader_is_undecided_not_refuted():
    bad = lambda s: "load:" + "".join(map(str, s)) + "0"  # noqa: E731
    v = is_spe_state(
        stack,
        (),
        embedding=Embedding(stack, stack, lambda s: s),
        loader=bad,
        states=samples,
        completions=["pop"],
    )
    assert v.holds is None and "loader fails" in v.reason


def test_infinite_machine_without_witness_is_undecided():
    v = is_spe_state(stack, ())
    assert v.holds is None and "embedding=" in v.reason


def test_finite_alphabet_infinite_states_is_decided_exactly():
    # S = all ints, C = {"0", "1"}: succ(x) is finite, so the search still decides.
    walk = FunctionMachine(
        lambda n: "⋆", lambda n, c: (n + int(c)) % 2 + 2 * (n // 2), completions=["0", "1"]
    )
    v = completion_generates(walk, 4, fixture("f2-add"))
    assert v.holds is True and v.method == "exhaustive" and v.witness.loader == {0: "0", 1: "1"}
    assert completion_generates(walk, 4, fixture("f2-mul")).holds is False


def test_a_wrong_witness_on_a_finite_machine_falls_back_to_the_search():
    m = fixture("f2-add")
    v = completion_generates(
        m, 0, m, embedding=Embedding(m, m, {0: 1, 1: 0}), loader={0: "0", 1: "1"}
    )
    assert v.holds is True and "witness was not accepted" in v.reason


# -- infinite targets: F2 and F5 refute when succ(x) can be listed ----------------------

# An infinite target: every word is a state, its prompt is '⋆' for words of length < 2.
words = FunctionMachine(
    lambda w: "⋆" if len(w) < 2 else "say " + w, lambda w, c: w + c, name="words"
)


def test_infinite_target_refuted_by_f2_on_a_sampled_state():
    v = completion_generates(fixture("f2-add"), 0, words, states=["a", "abc"])
    assert v.holds is False and v.method == "fact:F2"
    assert (
        v.obstruction.kind == "prompt"
        and v.obstruction.state == "abc"
        and "'abc'" in v.obstruction.explanation
    )


def test_infinite_target_refuted_by_f5_when_too_few_successors_share_a_prompt():
    # f2-mul: succ(0) = {0}, one state with prompt '⋆'; three sampled words need three images.
    v = completion_generates(fixture("f2-mul"), 0, words, states=["", "a", "b"])
    assert v.holds is False and v.method == "fact:F5" and v.obstruction.kind == "cardinality"
    assert v.obstruction.state in ("", "a", "b")
    # f2-add: succ(0) = {0, 1}, so two sampled words are not enough to refute: undecided.
    v = completion_generates(fixture("f2-add"), 0, words, states=["", "a"])
    assert v.holds is None and "do not refute" in v.reason
    assert (
        completion_generates(fixture("f2-add"), 0, words).holds is None
    )  # no sample: nothing to test


def test_infinite_alphabet_host_is_undecided_and_says_what_to_pass():
    v = completion_generates(stack, (), fixture("halt1"))
    assert v.holds is None and v.method == "sampled"
    assert "prompt_obstruction" in v.reason and "embedding=" in v.reason


def test_a_rejected_witness_on_an_infinite_target_still_refutes_by_f2():
    m = fixture("f2-add")
    e = Embedding(words, m, lambda w: len(w) % 2)
    v = completion_generates(m, 0, words, embedding=e, loader=lambda w: "0", states=["a", "abc"])
    assert v.holds is False and v.method == "fact:F2" and "witness was not accepted" in v.reason


def test_a_witness_into_an_infinite_host_is_sampled_unless_the_whole_finite_target_is_checked():
    # stack is infinite and accepts every string; the finite target is its empty-stack state alone.
    tiny = FunctionMachine(
        lambda s: "stack ", lambda s, c: HALT, states=[()], completions=["pop"], name="tiny"
    )
    e = Embedding(tiny, stack, {(): ()})
    full = completion_generates(stack, (), tiny, embedding=e, loader={(): "load:"})
    assert full.holds is True and full.method == "exhaustive"
    assert "claimed on that alphabet" in full.witness.description
    part = completion_generates(stack, (), tiny, embedding=e, loader={(): "load:"}, states=[()])
    assert part.holds is True and part.method == "sampled" and "not a proof" in str(part)
