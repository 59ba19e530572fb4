"""Regression tests of the wrong answers issue 21 found at the edges a user reaches first:
each one fixed at its cause (a signature guess, an unchecked target state, duplicate
states, a witness outranking the exact decision, a stuck run counted as ended, two
alphabet conventions)."""

from __future__ import annotations

import pytest

from agentic_machines import HALT, AgenticMachine, FunctionMachine, TableMachine
from agentic_machines.checking import (
    check_properties,
    halts_within,
    never_diverges,
    unreachable,
    unreachable_prompt,
)
from agentic_machines.embedding import Embedding, check_embedding, find_embeddings, identity
from agentic_machines.errors import InvalidArgument
from agentic_machines.fixtures import fixture
from agentic_machines.generation import (
    completion_generates,
    is_spe_state,
    prompt_obstruction,
    spe_states,
)
from agentic_machines.runtime.explore import explore


def line(n: int) -> TableMachine:
    """0 -> 1 -> ... -> n-1 -> HALT on 'go'; 'stop' halts."""
    table = {(i, "go"): (i + 1 if i + 1 < n else HALT) for i in range(n)}
    table.update({(i, "stop"): HALT for i in range(n)})
    return TableMachine({i: f"at {i}" for i in range(n)}, table, initial=0, name="line")


# -- unreachable: one documented argument, never a guess from the signature ----------------


def test_unreachable_passes_the_state_even_to_a_loop_capture_default() -> None:
    m = line(4)
    for bad in range(4):
        r = check_properties(m, properties=[unreachable(lambda s, bad=bad: s == bad)])
        assert r.results[0].verdict.holds is False, bad
        assert r.counterexample(r.results[0].property.name).states[-1] == bad


def test_unreachable_prompt_is_the_prompt_predicate() -> None:
    m = line(4)
    r = check_properties(m, properties=[unreachable_prompt(lambda p: p == "at 2", name="two")])
    cx = r.counterexample("unreachable_prompt(two)")
    assert cx.states == (0, 1, 2) and cx.prompts[-1] == "at 2"
    ok = check_properties(m, properties=[unreachable_prompt(lambda p: p == "at 9")])
    assert ok.results[0].verdict.holds is True


# -- prompt_obstruction: the target state must be a state ----------------------------------


def test_prompt_obstruction_rejects_a_target_state_that_is_not_a_state() -> None:
    grow = FunctionMachine(lambda s: s, lambda s, c: s + c, name="grow")
    add = fixture("f2-add")
    with pytest.raises(InvalidArgument, match="not a state of the target"):
        prompt_obstruction(
            grow,
            "a",
            add,
            7,  # f2-add's states are 0 and 1
            invariant=lambda p, q: q.startswith(p),
            invariant_text="prefix",
            proof="proofs/F3_prompt_monotone.md",
            completions=[f"w{i}" for i in range(60)],
        )
    with pytest.raises(InvalidArgument):
        prompt_obstruction(
            grow,
            "a",
            add,
            HALT,
            invariant=lambda p, q: q.startswith(p),
            invariant_text="prefix",
            proof="proofs/F3_prompt_monotone.md",
            completions=["x"],
        )


# -- duplicates: S and C are sets --------------------------------------------------------


class Listed(AgenticMachine):
    """f2-add (h(a, b) = a + b mod 2) with its states and completions listed twice."""

    name = "listed"
    states = [0, 1, 0, 1]
    completions = ["0", "1", "1"]
    initial = 0

    def prompt(self, state):
        return "⋆"

    def harness(self, state, completion):
        return (state + int(completion)) % 2


def test_a_state_listed_twice_is_one_state_for_every_decider() -> None:
    m = Listed()
    assert spe_states(m) == frozenset({0, 1})
    v = is_spe_state(m, 0)
    assert v.holds is True and v.checked <= 3
    assert completion_generates(m, 0, m).holds is True
    assert completion_generates(fixture("f2-add"), 0, m).holds is True
    assert bool(check_embedding(identity(m)))
    assert len(list(find_embeddings(m, m))) == 2


def test_explore_does_not_double_the_edges_of_a_state_listed_twice() -> None:
    class NoStart(Listed):
        initial = None

    g = explore(NoStart())
    assert sorted(g.nodes) == [0, 1]
    assert g.edges[0, 1]["completions"] == ["1"]


def test_a_mutated_state_list_is_read_afresh() -> None:
    m = Listed()
    m.states = [0, 1]
    assert is_spe_state(m, 0).holds is True
    m.states.append(2)  # in place: a cache keyed on the list object would go stale
    v = is_spe_state(m, 0)  # 2 is a state now, and no completion of 0 reaches it
    assert v.holds is False and v.obstruction.state == 2
    assert spe_states(m) == frozenset()


# -- a finite machine is decided exactly, whatever hint is given ---------------------------


def test_a_witness_and_a_sample_never_turn_a_finite_decision_into_sampled() -> None:
    mul = fixture("f2-mul")
    v = is_spe_state(mul, 0, embedding=identity(mul), loader={0: "0"}, states=[0])
    assert v.holds is False and v.method == "fact:F1" and v.obstruction.state == 1
    v = completion_generates(mul, 0, mul, embedding=identity(mul), loader={0: "0"}, states=[0])
    assert v.holds is False and v.method != "sampled"
    good = is_spe_state(mul, 1, states=[0])
    assert good.holds is True and good.method == "fact:F1"


# -- stuck is an outcome of its own ---------------------------------------------------------


def test_a_run_the_completions_function_leaves_stuck_has_not_halted() -> None:
    m = line(5)

    def offer(prompt: str) -> list[str]:
        return [] if prompt == "at 2" else ["go"]

    r = check_properties(m, properties=[halts_within(4), never_diverges()], completions=offer)
    hw = r.results[0]
    assert hw.verdict.holds is False
    cx = r.counterexample("halts_within(4)")
    assert cx.states == (0, 1, 2) and "stuck" in cx.explanation
    assert r.coverage.stuck == 1
    assert r.results[1].verdict.holds is True  # stuck is not divergence either


# -- one alphabet convention: commutation on the source's alphabet --------------------------


def test_a_larger_target_alphabet_is_treated_alike_finite_or_not() -> None:
    add = fixture("f2-add")

    def h(s, c):
        return (s + int(c)) % 2 if c in ("0", "1") else s

    bigger = FunctionMachine(
        lambda s: "⋆", h, states=[0, 1], completions=["0", "1", "2"], name="bigger"
    )
    every = FunctionMachine(lambda s: "⋆", h, states=[0, 1], name="every")
    finite = check_embedding(Embedding(add, bigger, {0: 0, 1: 1}))
    infinite = check_embedding(Embedding(add, every, {0: 0, 1: 1}))
    assert finite.holds is True and infinite.holds is True
    assert finite.method == infinite.method == "exhaustive"
    assert "source's alphabet" in finite.reason and "source's alphabet" in infinite.reason
    assert len(list(find_embeddings(add, bigger))) == len(list(find_embeddings(add, add))) == 2
    # the other way round a source completion is missing from the target: refuted
    back = check_embedding(Embedding(bigger, add, {0: 0, 1: 1}))
    assert back.holds is False and back.obstruction.completion == "2"
    assert list(find_embeddings(bigger, add)) == []


# -- liveness: a cycle is returned as its lasso ------------------------------------------


def test_halts_within_returns_the_lasso_of_a_cycle_after_four_steps() -> None:
    table = {(i, "a"): i + 1 for i in range(4)}
    table[(4, "a")] = 4  # from step 4 on, 'a' for ever
    table.update({(i, "b"): HALT for i in range(5)})
    m = TableMachine({i: f"at {i}" for i in range(5)}, table, initial=0, name="stem")
    r = check_properties(m, properties=[halts_within(50)])
    cx = r.counterexample("halts_within(50)")
    assert cx.completions == ("a",) * 5 and cx.loop == 4 and cx.states[-1] == 4
    assert "cycle" in cx.explanation
    short = check_properties(m, properties=[halts_within(3)]).counterexample("halts_within(3)")
    assert len(short) == 3 and short.loop is None  # three steps say enough here


# -- crashes ---------------------------------------------------------------------------------


def test_no_decider_crashes_on_empty_states_or_alphabets() -> None:
    shapes = [([], []), ([], ["a"]), ([0], []), ([0], ["a"]), ([0, 1], ["a", "b"])]
    machines = [
        FunctionMachine(lambda s: "x", lambda s, c: s, states=st, completions=cs, name=f"{st}{cs}")
        for st, cs in shapes
    ] + [TableMachine({}, {}, completions=[]), TableMachine({}, {})]
    for a in machines:
        for b in machines:
            found = list(find_embeddings(a, b))
            assert all(bool(check_embedding(e)) for e in found)
            for into in ([], [0]):
                list(find_embeddings(a, b, into=into))
            if a.states:
                assert completion_generates(a, 0, b).holds in (True, False)
        if a.states:
            assert is_spe_state(a, 0).holds in (True, False)
        assert spe_states(a) <= frozenset(a.states)


def test_a_loader_completion_outside_the_alphabet_is_a_wrong_witness() -> None:
    add = fixture("f2-add")
    words = FunctionMachine(lambda w: "⋆", lambda w, c: w, name="words")  # infinite target
    e = Embedding(words, add, lambda w: 0)
    v = completion_generates(add, 0, words, embedding=e, loader=lambda w: "7", states=["a"])
    assert v.holds is None and "not in the alphabet" in v.reason


def test_none_is_never_a_node_of_an_explored_graph() -> None:
    from agentic_machines.errors import InvalidMachine

    forgetful = FunctionMachine(lambda s: "p", lambda s, c: None, initial=0, name="forgetful")
    with pytest.raises(InvalidMachine, match="returned None"):
        explore(forgetful, completions=["a"]).copy()
