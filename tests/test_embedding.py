"""Embeddings: the three conditions, the smallest counterexample, and the F6 search.

``find_embeddings`` is compared with a brute force over every injection on random
machines of up to 4 states and 3 completions.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import (
    DIVERGE,
    HALT,
    Embedding,
    FunctionMachine,
    TableMachine,
    check_embedding,
    compose,
    find_embeddings,
    identity,
)
from agentic_machines.errors import InvalidArgument, InvalidEmbedding
from agentic_machines.fixtures import fixture
from agentic_machines.strategies import embeddings_into, examples, table_machines

ALPHABET = ("0", "1", "2")


def brute_force(source, target, into=None):
    """Every injection S' -> S (inside ``into``) that passes the exhaustive check."""
    pool = list(target.states if into is None else into)
    found = set()
    for image in itertools.permutations(pool, len(source.states)):
        mapping = dict(zip(source.states, image))
        if check_embedding(Embedding(source, target, mapping)).holds:
            found.add(frozenset(mapping.items()))
    return found


def searched(source, target, into=None):
    return {frozenset(e.mapping.items()) for e in find_embeddings(source, target, into=into)}


same_alphabet = st.sampled_from([1, 2, 3]).flatmap(
    lambda k: st.tuples(
        table_machines(4, completions=ALPHABET[:k]), table_machines(4, completions=ALPHABET[:k])
    )
)


# -- identity and composition ----------------------------------------------------------


@settings(max_examples=examples(100, 2000))
@given(table_machines())
def test_identity_is_an_embedding(m):
    v = check_embedding(identity(m))
    assert v.holds is True and v.method == "exhaustive"


@settings(max_examples=examples(60, 1000))
@given(
    table_machines(5)
    .flatmap(embeddings_into)
    .flatmap(lambda pair: st.tuples(st.just(pair), embeddings_into(pair[0])))
)
def test_composition_of_embeddings_is_an_embedding(pairs):
    (mid, outer), (inner_src, inner) = pairs
    assert check_embedding(outer).holds and check_embedding(inner).holds
    both = compose(outer, inner)
    assert both.source is inner_src and both.target is outer.target
    assert check_embedding(both).holds


def test_compose_refuses_mismatched_machines():
    a, b = fixture("f2-add"), fixture("f2-mul")
    with pytest.raises(InvalidArgument, match="compose"):
        compose(identity(a), identity(b))


def test_callable_embeddings_map_sentinels_to_themselves():
    m = fixture("f2-add")
    e = Embedding(m, m, lambda s: 1 - s)
    assert (e(0), e(HALT), e(DIVERGE)) == (1, HALT, DIVERGE)
    assert check_embedding(e).holds  # a callable on a finite source is still checked exhaustively


def test_bad_mapping_argument_says_what_to_pass():
    with pytest.raises(InvalidEmbedding, match="dict state -> state or a callable"):
        Embedding(fixture("f2-add"), fixture("f2-add"), [0, 1])


# -- failures carry the smallest counterexample ------------------------------------------


def test_smallest_commutation_counterexample_is_reported():
    # Two copies of a 3-cycle; the map is a rotation that only breaks at states 1 and 2.
    cyc = TableMachine(
        {0: "p", 1: "p", 2: "p"}, {(0, "a"): 1, (1, "a"): 2, (2, "a"): 0}, completions=["a"]
    )
    broken = TableMachine(
        {0: "p", 1: "p", 2: "p"}, {(0, "a"): 1, (1, "a"): 0, (2, "a"): 0}, completions=["a"]
    )
    v = check_embedding(Embedding(cyc, broken, {0: 0, 1: 1, 2: 2}))
    assert v.holds is False and v.obstruction.kind == "commutation"
    assert (v.obstruction.state, v.obstruction.completion) == (1, "a")
    assert "h(e(1), 'a') = h(1, 'a') = 0 but e(h'(1, 'a')) = e(2) = 2" in v.obstruction.explanation


def test_missing_image_and_sentinel_image_are_domain_failures():
    m = fixture("f2-add")
    assert check_embedding(Embedding(m, m, {0: 0})).obstruction.kind == "domain"
    v = check_embedding(Embedding(m, m, {0: HALT, 1: 1}))
    assert v.obstruction.kind == "domain" and v.obstruction.state == 0


def test_a_source_completion_missing_from_the_target_cannot_embed():
    # One convention (issue 21): commutation is checked on the source's alphabet, which must
    # lie inside the target's; a target's extra completions are not compared.
    a = fixture("f2-add")
    b = TableMachine({0: "⋆", 1: "⋆"}, {(s, c): s for s in (0, 1) for c in "012"})
    v = check_embedding(Embedding(b, a, {0: 0, 1: 1}))
    assert v.holds is False and v.obstruction.completion == "2"
    assert list(find_embeddings(b, a)) == []
    # the other way, f2-add's completions are all b's, and commutation fails on '1'
    w = check_embedding(Embedding(a, b, {0: 0, 1: 1}))
    assert w.holds is False and w.obstruction.completion == "1"
    assert list(find_embeddings(a, b)) == []


def test_sentinel_mismatch_breaks_commutation():
    v = check_embedding(Embedding(fixture("halt1"), fixture("diverge1"), {0: 0}))
    assert v.obstruction.kind == "commutation" and "= ↑ but" in v.obstruction.explanation


# -- infinite machines: sampled, or undecided --------------------------------------------

counter = FunctionMachine(
    lambda n: "count", lambda n, c: n + 1 if c == "+" else HALT, name="counter"
)
shifted = FunctionMachine(
    lambda n: "count", lambda n, c: n + 1 if c == "+" else HALT, name="shifted"
)


def test_infinite_source_is_sampled_never_exhaustive():
    shift = Embedding(counter, shifted, lambda n: n + 10)
    v = check_embedding(shift, states=range(20), completions=["+", "stop"])
    assert v.holds is True and v.method == "sampled" and v.checked == 40
    assert "not a proof" in str(v)


def test_infinite_source_with_nothing_to_check_is_undecided():
    v = check_embedding(Embedding(counter, shifted, lambda n: n))
    assert v.holds is None and "states=" in v.reason
    assert not v


def test_sampled_failure_is_a_refutation_with_the_smallest_state():
    double = Embedding(
        counter, shifted, lambda n: 2 * n
    )  # injective, prompts agree, commutation fails
    v = check_embedding(double, states=[7, 3, 5], completions=["+"])
    assert v.holds is False and v.method == "sampled" and v.obstruction.state == 3


# -- the F6 search against brute force --------------------------------------------------


@settings(max_examples=examples(150, 3000))
@given(same_alphabet)
def test_find_embeddings_finds_exactly_the_brute_force_embeddings(pair):
    source, target = pair
    found = list(find_embeddings(source, target))
    assert all(check_embedding(e).holds for e in found)
    assert len(found) == len(set(found))  # no embedding twice
    assert searched(source, target) == brute_force(source, target)


@settings(max_examples=examples(100, 2000))
@given(same_alphabet, st.data())
def test_find_embeddings_into_a_subset(pair, data):
    source, target = pair
    into = data.draw(st.sets(st.sampled_from(list(target.states))))
    assert searched(source, target, into) == brute_force(source, target, into)


def test_fixture_automorphisms():
    assert len(searched(fixture("f2-add"), fixture("f2-add"))) == 2
    assert searched(fixture("f2-mul"), fixture("f2-mul")) == {frozenset({(0, 0), (1, 1)})}
    assert len(searched(fixture("f2-const"), fixture("f2-const"))) == 2


def test_find_embeddings_into_an_infinite_target_needs_into():
    ring = FunctionMachine(
        lambda n: "⋆", lambda n, c: (n + int(c)) % 2 + 10 * (n // 10), completions=["0", "1"]
    )
    with pytest.raises(InvalidArgument, match="into="):
        list(find_embeddings(fixture("f2-add"), ring))
    found = searched(fixture("f2-add"), ring, into=[20, 21, 5])
    assert found == {frozenset({(0, 20), (1, 21)}), frozenset({(0, 21), (1, 20)})}


def test_search_on_a_larger_machine_is_exact():
    # A 12-cycle embeds into itself in 12 ways (rotations), and into a 6-cycle in none.
    def cycle(n):
        return TableMachine(
            {i: "p" for i in range(n)}, {(i, "a"): (i + 1) % n for i in range(n)}, completions=["a"]
        )

    assert len(list(find_embeddings(cycle(12), cycle(12)))) == 12
    assert list(find_embeddings(cycle(12), cycle(6))) == []


def test_function_machines_with_finite_states_are_searched_and_checked_exactly():
    parity = FunctionMachine(
        lambda s: "⋆", lambda s, c: (s + int(c)) % 2, states=[0, 1], completions=["0", "1"]
    )
    assert len(searched(parity, fixture("f2-add"))) == 2
    assert (
        check_embedding(Embedding(parity, fixture("f2-add"), {0: 1, 1: 0})).method == "exhaustive"
    )
    leaky = FunctionMachine(
        lambda s: "⋆", lambda s, c: s + int(c), states=[0, 1], completions=["0", "1"]
    )
    with pytest.raises(Exception, match="not one of its declared states"):
        list(find_embeddings(leaky, fixture("f2-add")))
