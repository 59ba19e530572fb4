"""Every property kind against a brute force written here, several at once (issue 36,
item 9): random small machines whose steps may raise, properties with duplicate names,
the search with stop_early on and off, and every counterexample replayed on the machine.

The brute force enumerates runs from the definitions. On a finite machine a keyed
``never_diverges`` is refuted exactly when the unkeyed one is: a loop followed for ever
through finitely many states goes round a cycle of states, and a cycle repeats its keys.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import DIVERGE, HALT, AgenticMachine
from agentic_machines.checking import (
    Raised,
    Transition,
    check_properties,
    halts_within,
    never_diverges,
    never_raises,
    unreachable,
)
from agentic_machines.strategies import examples

N = examples(30, 300)
RAISE = "raise"  # a table entry on which the harness raises


class Table(AgenticMachine):
    def __init__(self, n, alphabet, prompts, table):
        self.name, self.S, self.C, self.prompts, self.table = (
            "T",
            list(range(n)),
            alphabet,
            prompts,
            table,
        )
        self.states, self.completions, self.initial = self.S, alphabet, 0

    def prompt(self, state):
        return self.prompts[state]

    def harness(self, state, completion):
        out = self.table[(state, completion)]
        if out == RAISE:
            raise ValueError(f"no step from {state} by {completion}")
        return out


@st.composite
def tables(draw):
    n = draw(st.integers(1, 4))
    alphabet = ["a", "b", "c"][: draw(st.integers(1, 3))]
    outcomes = list(range(n)) + [HALT, DIVERGE, RAISE]
    table = {(s, c): draw(st.sampled_from(outcomes)) for s in range(n) for c in alphabet}
    return Table(n, alphabet, {s: draw(st.sampled_from(["p", "q"])) for s in range(n)}, table)


def runs(m, k):
    """Every run of at most k steps from 0, as (completions, outcomes)."""
    out = frontier = [((), (0,))]
    for _ in range(k):
        frontier = [
            (cs + (c,), ss + (m.table[(ss[-1], c)],))
            for cs, ss in frontier
            if type(ss[-1]) is int
            for c in m.C
        ]
        out = out + frontier
    return out


def replays(m, cx) -> bool:
    state = cx.states[0]
    for i, c in enumerate(cx.completions):
        out = m.table[(state, c)]
        want = cx.states[i + 1]
        if out == RAISE:
            return type(want) is Raised and i == len(cx) - 1
        if out is not want and out != want:
            return False
        state = out
    return True


@settings(max_examples=N, deadline=None)
@given(tables(), st.integers(0, 4), st.data())
def test_every_property_kind_agrees_with_every_run(m, k, data):
    t1, t2 = data.draw(st.integers(0, len(m.S))), data.draw(st.integers(0, len(m.S)))
    props = [
        halts_within(k),
        never_diverges(),
        never_diverges(key=lambda s: s % 2),
        never_raises(),
        unreachable(lambda s: s == t1),  # two properties with one name: both checked
        unreachable(lambda s: s == t2),
        Transition("no halt at q", lambda s, c, o: not (o is HALT and m.prompts[s] == "q")),
    ]
    everything = runs(m, max(k, len(m.S) + 1))
    ends = [ss[-1] for _, ss in everything]
    raised = any(o == RAISE for o in ends)
    diverges = any(
        ss[-1] is DIVERGE or (type(ss[-1]) is int and ss[-1] in ss[:-1]) for _, ss in everything
    )
    bad_halt = any(
        (ss[-1] is DIVERGE and len(cs) <= k) or (type(ss[-1]) is int and len(cs) == k)
        for cs, ss in everything
        if len(cs) <= k
    )
    halts_at_q = any(
        ss[i + 1] is HALT and m.prompts[ss[i]] == "q"
        for _, ss in everything
        for i in range(len(ss) - 1)
    )
    expected = [
        not bad_halt,
        not diverges,
        not diverges,
        not raised,
        t1 not in ends,
        t2 not in ends,
        not halts_at_q,
    ]
    results = {}
    for early in (True, False):
        r = check_properties(m, properties=props, completions=m.C, stop_early=early)
        assert [x.name for x in r][4:6] == ["unreachable(<lambda>)", "unreachable(<lambda>)#2"]
        assert [x.verdict.holds for x in r] == expected, (early, r.report())
        for name, cx in r.counterexamples.items():
            assert replays(m, cx), (name, cx)
        results[early] = r
    # the safety properties' counterexamples are shortest either way
    for i in (3, 4, 5, 6):
        a, b = results[True].results[i], results[False].results[i]
        assert (a.counterexample is None) == (b.counterexample is None)
        if a.counterexample is not None:
            assert len(a.counterexample) == len(b.counterexample)
