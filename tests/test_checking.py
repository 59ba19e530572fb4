"""check_properties against a brute force on random finite machines.

The brute force enumerates every completion sequence up to a length that covers the
machine (number of states + 2) and computes, per property, the length of a shortest
violating run. The checker must agree on the verdict, return a counterexample of
exactly that length, and the counterexample must replay on the machine and break the
property. A reachable non-halting cycle must always give a lasso whose loop closes.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import DIVERGE, HALT, FunctionMachine, TableMachine
from agentic_machines.checking import (
    Invariant,
    Raised,
    Transition,
    check_properties,
    effects_at_most_once,
    halts_within,
    never_diverges,
    never_raises,
    prompt_length_at_most,
    unreachable,
)
from agentic_machines.errors import InvalidArgument
from agentic_machines.strategies import examples, table_machines


def _runs(machine, start, max_len):
    """Every run of at most ``max_len`` steps: (completions, states), states ending at
    the first sentinel or raised outcome."""
    alphabet = machine.completions
    todo = [((), (start,))]
    while todo:
        comps, states = todo.pop()
        yield comps, states
        last = states[-1]
        if last is HALT or last is DIVERGE or isinstance(last, Raised) or len(comps) == max_len:
            continue
        for c in alphabet:
            try:
                t = machine.harness(last, c)
            except Exception as exc:  # noqa: BLE001
                t = Raised.of(exc)
            todo.append((comps + (c,), states + (t,)))


def _brute(machine, start, kind, arg=None):
    """The length of a shortest violating run (None: no violation within the bound)."""
    n = len(machine.states)
    bound = n + 2 if kind != "halts" else arg
    best = None
    for comps, states in _runs(machine, start, bound):
        k = len(comps)
        last = states[-1]
        bad = False
        if kind == "invariant":
            bad = (
                not (last is HALT or last is DIVERGE or isinstance(last, Raised))
                and arg(last, machine.prompt(last)) is False
            )
        elif kind == "transition":
            bad = k > 0 and arg(states[-2], comps[-1], last) is False
        elif kind == "raises":
            bad = isinstance(last, Raised)
        elif kind == "halts":
            bad = last is DIVERGE or (k == arg and not (last is HALT or isinstance(last, Raised)))
        elif kind == "diverges":
            # DIVERGE, or a run that repeats a state (the model can repeat the loop)
            bad = last is DIVERGE or (
                not (last is HALT or isinstance(last, Raised)) and last in states[:-1]
            )
        if bad and (best is None or k < best):
            best = k
    return best


def _replays(machine, cx):
    """The counterexample is a real run of the machine."""
    state = cx.states[0]
    for i, c in enumerate(cx.completions):
        assert machine.prompt(state) == cx.prompts[i]
        try:
            t = machine.harness(state, c)
        except Exception as exc:  # noqa: BLE001
            t = Raised.of(exc)
        assert t == cx.states[i + 1], (i, t, cx.states[i + 1])
        state = t


machines = table_machines(max_states=5, max_completions=3, prompts=("a", "bb", "ccc"))


@settings(max_examples=examples(150, 1500))
@given(machines, st.data())
def test_safety_counterexamples_are_shortest(machine, data):
    start = 0
    target = data.draw(st.sampled_from(sorted(machine.states)))
    inv = unreachable(lambda s: s == target, name=f"state {target}")
    bad_c = data.draw(st.sampled_from(machine.completions))
    trans = Transition("no halt on bad", lambda s, c, o: not (o is HALT and c == bad_c))
    result = check_properties(machine, start, [inv, trans, prompt_length_at_most(2)])
    for prop, kind, fn in (
        (inv, "invariant", inv.fn),
        (trans, "transition", trans.fn),
        (prompt_length_at_most(2), "invariant", lambda s, p: len(p) <= 2),
    ):
        expected = _brute(machine, start, kind, fn)
        r = result[prop.name]
        if expected is None:
            assert r.verdict.holds is True, (prop.name, str(r.verdict))
            assert r.counterexample is None
        else:
            assert r.verdict.holds is False
            assert len(r.counterexample) == expected
            _replays(machine, r.counterexample)


@settings(max_examples=examples(150, 1500))
@given(machines, st.integers(0, 6))
def test_liveness_agrees_with_brute_force_and_lassos_close(machine, k):
    start = 0
    result = check_properties(machine, start, [halts_within(k), never_diverges()])
    expected_halts = _brute(machine, start, "halts", k)
    r = result[f"halts_within({k})"]
    if expected_halts is None:
        assert r.verdict.holds is True, str(r.verdict)
    else:
        assert r.verdict.holds is False
        if r.counterexample.loop is None:
            assert len(r.counterexample) == expected_halts
        else:  # a reachable cycle's lasso, returned when it is no longer than the shortest run
            assert len(r.counterexample) <= expected_halts
            assert r.counterexample.states[r.counterexample.loop] == r.counterexample.end
        _replays(machine, r.counterexample)
    r = result["never_diverges()"]
    expected = _brute(machine, start, "diverges")
    assert (r.verdict.holds is False) == (expected is not None), str(r.verdict)
    if r.counterexample is not None:
        cx = r.counterexample
        _replays(machine, cx)
        if cx.loop is not None:  # a lasso: the loop returns to where it started
            assert cx.states[cx.loop] == cx.states[-1]
            assert cx.end is not HALT and cx.end is not DIVERGE
        else:
            assert cx.end is DIVERGE
    # a lasso is reported whenever a reachable cycle exists (no DIVERGE needed)
    cyclic = any(
        s in states[:-1]
        for _, states in _runs(machine, start, len(machine.states) + 1)
        for s in states[-1:]
        if not (s is HALT or s is DIVERGE)
    )
    no_diverge = TableMachine(
        machine.prompts,
        {k2: (HALT if v is DIVERGE else v) for k2, v in machine.transitions.items()},
        completions=machine.completions,
    )
    r2 = check_properties(no_diverge, start, never_diverges())["never_diverges()"]
    assert (r2.counterexample is not None and r2.counterexample.loop is not None) == cyclic


@settings(max_examples=examples(100, 1000))
@given(machines, st.data())
def test_raises_are_outcomes_and_found_shortest(machine, data):
    pairs = sorted(machine.transitions, key=repr)
    boom = set(data.draw(st.lists(st.sampled_from(pairs), max_size=3)))

    def h(s, c):
        if (s, c) in boom:
            raise IndexError(f"no action in {c!r}")
        return machine.harness(s, c)

    crashy = FunctionMachine(
        machine.prompt, h, states=machine.states, completions=machine.completions
    )
    result = check_properties(crashy, 0, [never_raises()])
    expected = _brute(crashy, 0, "raises")
    r = result["never_raises()"]
    if expected is None:
        assert r.verdict.holds is True
    else:
        assert len(r.counterexample) == expected
        assert isinstance(r.counterexample.end, Raised)
        _replays(crashy, r.counterexample)


def _counter():
    def h(n, c):
        if c == "stop":
            return HALT
        return n + 1

    return FunctionMachine(lambda n: "." * n, h, initial=0, name="grow")


def test_bounds_are_named_and_never_hold_without_them():
    result = check_properties(
        _counter(), properties=[prompt_length_at_most(100)], completions=["go", "stop"], max_depth=5
    )
    v = result["prompt_length_at_most(100)"].verdict
    assert v.holds is True and "every run of at most 5 steps" in v.reason
    assert result.bound == "every run of at most 5 steps"
    result = check_properties(
        _counter(), properties=[prompt_length_at_most(100)], completions=["go"], max_states=10
    )
    assert "max_states=10" in result.coverage.truncated
    assert result.bound.startswith("every run of at most")


def test_halts_within_is_undecided_when_the_depth_bound_is_below_k():
    result = check_properties(
        _counter(), properties=[halts_within(8)], completions=["stop"], max_depth=3
    )
    assert result["halts_within(8)"].verdict.holds is True  # every run stops at once
    result = check_properties(
        _counter(), properties=[halts_within(8)], completions=["go", "stop"], max_depth=3
    )
    v = result["halts_within(8)"].verdict
    assert v.holds is None and "did not expand" in v.reason
    result = check_properties(
        _counter(), properties=[halts_within(3)], completions=["go", "stop"], max_depth=3
    )
    assert len(result.counterexample("halts_within(3)")) == 3


def test_undecided_steps_make_verdicts_undecided():
    from agentic_machines.errors import Undecided

    def h(n, c):
        if c == "think":
            raise Undecided("fuel ran out")
        return HALT

    m = FunctionMachine(lambda n: "?", h, initial=0)
    result = check_properties(m, properties=[never_raises()], completions=["think", "stop"])
    v = result["never_raises()"].verdict
    assert v.holds is None and "Undecided" in v.reason
    assert result.coverage.undecided == 1


def test_conjunction_takes_the_shortest_counterexample():
    m = _counter()
    both = prompt_length_at_most(2) & halts_within(10)
    result = check_properties(m, properties=[both], completions=["go", "stop"])
    cx = result.counterexample(both.name)
    assert len(cx) == 3 and cx.property == both.name


def test_effects_at_most_once_sees_a_replayed_side_effect():
    from agentic_machines import HarnessMachine

    class Charge:
        def __init__(self):
            self.calls = []

        def __call__(self, order):
            self.calls.append(order)
            return "charged"

    def shop(charge, wrap):
        done = {}
        c = yield "order?"
        while True:
            if c.startswith("buy "):
                order = c[4:]
                if wrap and order in done:
                    result = done[order]
                else:
                    result = done[order] = charge(order)
                c = yield f"{result} {order}; next?"
            elif c == "quit":
                return "bye"
            else:
                c = yield "say buy X or quit"

    # each replay of the program runs charge again for the orders along the run
    charge = Charge()
    m = HarnessMachine(shop, charge, False, name="shop")
    r = check_properties(
        m,
        properties=[effects_at_most_once(charge, name="charge")],
        completions=["buy a", "buy b", "quit"],
        max_depth=3,
    )
    cx = r.counterexample("effects_at_most_once(charge)")
    assert cx is not None and "a second time" in cx.explanation


def test_bad_arguments_are_refused_with_a_fix():
    with pytest.raises(InvalidArgument, match="at least one property"):
        check_properties(_counter(), properties=[], completions=["a"])
    with pytest.raises(InvalidArgument, match="no finite completion alphabet"):
        check_properties(_counter(), properties=[never_raises()])
    with pytest.raises(InvalidArgument, match="not a property"):
        check_properties(_counter(), properties=["never_raises"], completions=["a"])
    with pytest.raises(InvalidArgument, match="name string first"):
        Invariant(lambda s, p: True, "x")


def test_coverage_counts_and_unreached_prompts():
    m = TableMachine(
        {0: "start", 1: "middle", 2: "island"},
        {(0, "a"): 1, (0, "b"): 1, (1, "a"): HALT, (1, "b"): 0, (2, "a"): 0, (2, "b"): 0},
        initial=0,
    )
    r = check_properties(m, properties=[never_raises()])
    cov = r.coverage
    assert (cov.states, cov.transitions, cov.edges) == (2, 4, 3)
    assert cov.alphabet_share == {0: 0.5, 1: 1.0}
    assert cov.unreached_prompts == ("island",)


def test_every_pair_of_a_small_machine_is_checked_once():
    seen = []

    def h(s, c):
        seen.append((s, c))
        return (s + int(c)) % 3

    m = FunctionMachine(lambda s: str(s), h, initial=0)
    check_properties(m, properties=[never_raises()], completions=["1", "2"])
    assert sorted(seen) == sorted(itertools.product(range(3), ["1", "2"]))
