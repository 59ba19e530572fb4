"""Every public decider and property against a brute force written here, from the
definitions (issue 21), on random small machines with the edges users reach first:
states and completions listed twice, empty state sets and alphabets, stuck runs,
target states that are not states, targets over every string, sampled checks.

The brute force knows nothing of F1-F6 or of the search: an embedding is tried as every
injective map, completion-generation as every embedding into the successors, a
property as every run. The default profile runs a few dozen machines per test,
``HYPOTHESIS_PROFILE=thorough`` many more.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import DIVERGE, HALT, AgenticMachine, FunctionMachine
from agentic_machines.checking import (
    check_properties,
    halts_within,
    never_diverges,
    never_raises,
    unreachable,
)
from agentic_machines.embedding import Embedding, check_embedding, find_embeddings
from agentic_machines.errors import InvalidArgument
from agentic_machines.generation import (
    completion_generates,
    is_spe_state,
    prompt_obstruction,
    spe_states,
)
from agentic_machines.strategies import examples

N = examples(40, 400)


class Listed(AgenticMachine):
    """A machine given by tables, whose ``states`` and ``completions`` may list an entry
    twice (as a hand-written subclass may): the deciders must read them as sets."""

    def __init__(self, name, states, alphabet, prompts, table, twice):
        self.name = name
        self.S, self.C, self.prompts, self.table = list(states), list(alphabet), prompts, table
        self.states = self.S + self.S[:twice]  # duplicates, in a mutable list
        self.completions = self.C + self.C[:twice]

    def prompt(self, state):
        return self.prompts[state]

    def harness(self, state, completion):
        return self.table[(state, completion)]


@st.composite
def machines(draw, name="M", alphabet=None, max_states=3):
    n = draw(st.integers(0, max_states))
    states = list(range(n))
    if alphabet is None:
        alphabet = ["a", "b", "c"][: draw(st.integers(0, 3))]
    prompts = {s: draw(st.sampled_from(["p", "q"])) for s in states}
    outcomes = states + [HALT, DIVERGE]
    table = {(s, c): draw(st.sampled_from(outcomes)) for s in states for c in alphabet}
    return Listed(name, states, alphabet, prompts, table, draw(st.integers(0, 2)))


# -- the brute force, from the definitions --------------------------------------------------


def succ(m, x):
    return {m.table[(x, c)] for c in m.C} - {HALT, DIVERGE}


def embeds(src, tgt, e) -> bool:
    """Injective, prompt-keeping, commuting on the source's alphabet (inside the target's)."""
    if len(set(e.values())) != len(e) or any(t not in tgt.S for t in e.values()):
        return False
    if src.S and not set(src.C) <= set(tgt.C):
        return False
    for s in src.S:
        if src.prompts[s] != tgt.prompts[e[s]]:
            return False
        for c in src.C:
            inner = src.table[(s, c)]
            if tgt.table[(e[s], c)] != (inner if inner in (HALT, DIVERGE) else e[inner]):
                return False
    return True


def all_embeddings(src, tgt, pool=None) -> list[dict]:
    pool = tgt.S if pool is None else [t for t in tgt.S if t in pool]
    found = []
    for images in itertools.permutations(pool, len(src.S)):
        e = dict(zip(src.S, images))
        if embeds(src, tgt, e):
            found.append(e)
    return found


def generates(m, x, target) -> bool:
    return bool(all_embeddings(target, m, succ(m, x)))


# -- the deciders ------------------------------------------------------------------------------


@settings(max_examples=N, deadline=None)
@given(machines("S"), machines("T"))
def test_find_embeddings_finds_exactly_the_embeddings(src, tgt):
    got = sorted(sorted(e.mapping.items()) for e in find_embeddings(src, tgt))
    want = sorted(sorted(e.items()) for e in all_embeddings(src, tgt))
    assert got == want


@settings(max_examples=N, deadline=None)
@given(machines("S"), machines("T"), st.data())
def test_check_embedding_agrees_on_any_map(src, tgt, data):
    if not tgt.S and src.S:
        return
    e = {s: data.draw(st.sampled_from(tgt.S)) for s in src.S}
    v = check_embedding(Embedding(src, tgt, e))
    assert v.holds is embeds(src, tgt, e), str(v)
    assert v.method == "exhaustive"
    if v.holds is False:  # the certificate names a real state of the source
        assert v.obstruction.state in src.S


@settings(max_examples=N, deadline=None)
@given(machines("X"), machines("T"), st.data())
def test_completion_generates_and_spe_states_agree(m, target, data):
    if not m.S:
        assert spe_states(m) == frozenset()
        return
    x = data.draw(st.sampled_from(m.S))
    v = completion_generates(m, x, target)
    assert v.holds is generates(m, x, target), str(v)
    assert v.method != "sampled"
    if v.holds:  # the witness is checked: the loader reaches each image
        for s in target.S:
            assert m.table[(x, v.witness.load(s))] == v.witness.embedding(s)
    spe = is_spe_state(m, x)
    assert spe.holds is generates(m, x, m), str(spe)
    if spe.holds is False and spe.obstruction.kind == "successor":
        assert spe.obstruction.state not in succ(m, x)  # a true certificate
    assert spe_states(m) == frozenset(s for s in m.S if generates(m, s, m))
    # a witness and a sample never turn a finite decision into a sampled one
    if target.S and m.S:
        e = Embedding(target, m, {s: m.S[0] for s in target.S})
        hinted = completion_generates(
            m, x, target, embedding=e, loader={s: "zz" for s in target.S}, states=target.S[:1]
        )
        assert hinted.holds is v.holds and hinted.method == v.method


@settings(max_examples=N, deadline=None)
@given(machines("X"), machines("T"))
def test_prompt_obstruction_refuses_a_non_state_target(m, target):
    if not m.S:
        return
    with pytest.raises(InvalidArgument):
        prompt_obstruction(
            m,
            m.S[0],
            target,
            99,
            invariant=lambda p, q: True,
            invariant_text="anything",
            proof="proofs/F2_prompt_obstruction.md",
            completions=m.C,
        )


@settings(max_examples=N, deadline=None)
@given(machines("T", max_states=2), st.data())
def test_an_infinite_alphabet_host_is_sampled_and_agrees_on_the_sample(target, data):
    # X accepts every string: h(s, c) = the state c names (an int), else HALT. A witness is
    # checked on a sample only, so the verdict is sampled, and holds iff the brute force
    # finds the loader and the commutation right on that sample.
    if not target.S:
        return
    host = FunctionMachine(
        lambda s: target.prompts[s] if s in target.S else "p",
        lambda s, c: (
            int(c) if c.isdigit() and int(c) in target.S else target.table.get((s, c), HALT)
        ),
        name="host",
    )
    image = {s: s for s in target.S}
    loader = {s: str(s) for s in target.S}
    sample = data.draw(st.lists(st.sampled_from(target.S), min_size=1, unique=True))
    v = completion_generates(
        host,
        target.S[0],
        target,
        embedding=Embedding(target, host, image),
        loader=loader,
        states=sample,
    )
    assert v.method == "sampled"
    assert v.holds is True, str(v)  # the identity commutes by construction, on any sample


# -- the properties --------------------------------------------------------------------------


def runs(m, start, k, offered):
    """Every run of at most k steps: (completions, outcomes), ending early at HALT, DIVERGE
    or a stuck state (no completion offered)."""
    out = [((), (start,))]
    frontier = [((), (start,))]
    for _ in range(k):
        nxt = []
        for comps, states in frontier:
            last = states[-1]
            if last in (HALT, DIVERGE):
                continue
            for c in offered(m.prompts[last]):
                nxt.append((comps + (c,), states + (m.table[(last, c)],)))
        out += nxt
        frontier = nxt
    return out


@settings(max_examples=N, deadline=None)
@given(machines("M"), st.integers(0, 4), st.booleans(), st.data())
def test_liveness_and_safety_agree_with_every_run(m, k, stuck_on_q, data):
    if not m.S:
        return
    start = m.S[0]
    offered = (lambda p: [] if p == "q" else m.C) if stuck_on_q else (lambda p: m.C)
    target = data.draw(st.sampled_from(m.S))
    # the alphabet as a function, or (when every prompt is offered all of it) as the list,
    # possibly empty: an empty alphabet leaves every run stuck at its start
    r = check_properties(
        m,
        start,
        [halts_within(k), never_diverges(), never_raises(), unreachable(lambda s: s == target)],
        completions=offered if stuck_on_q or data.draw(st.booleans()) else m.completions,
    )
    everything = runs(m, start, max(k, len(m.S) + 1), offered)

    def ended(s):
        return s in (HALT, DIVERGE)

    # halts_within(k): some run within k steps diverges, is stuck, or is still going at k
    bad_halt = any(
        (states[-1] is DIVERGE and len(comps) <= k)
        or (not ended(states[-1]) and len(comps) == k)
        or (not ended(states[-1]) and len(comps) < k and not offered(m.prompts[states[-1]]))
        for comps, states in everything
        if len(comps) <= k
    )
    assert r[f"halts_within({k})"].verdict.holds is (not bad_halt)
    # never_diverges: DIVERGE reachable, or a state repeats along a run
    bad_div = any(
        states[-1] is DIVERGE or (not ended(states[-1]) and states[-1] in states[:-1])
        for _, states in everything
    )
    assert r["never_diverges()"].verdict.holds is (not bad_div)
    assert r["never_raises()"].verdict.holds is True
    reach = any(states[-1] == target for _, states in everything)
    name = next(x.name for x in r if x.name.startswith("unreachable"))
    assert r[name].verdict.holds is (not reach)
    assert r.coverage.stuck == (
        sum(
            1
            for s in {st for _, sts in everything for st in sts if not ended(st)}
            if not offered(m.prompts[s])
        )
    )
    for prop, cx in r.counterexamples.items():  # every counterexample is a run of m
        state = cx.states[0]
        for i, c in enumerate(cx.completions):
            assert c in offered(m.prompts[state])
            state = m.table[(state, c)]
            assert state == cx.states[i + 1], prop
