"""Quality checks: plant bugs and assert the checkers catch each with the right reason.

A checker that says "fine" to everything would pass most happy-path tests; these tests
break one condition at a time and demand the matching obstruction.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import (
    HALT,
    Embedding,
    FunctionMachine,
    TableMachine,
    cardinality_obstruction,
    check_embedding,
    prompt_obstruction,
)
from agentic_machines.strategies import embeddings_into, examples, table_machines


def _retarget(machine, **changes):
    """A copy of a table machine with some prompts or transitions replaced."""
    prompts = {**machine.prompts, **changes.get("prompts", {})}
    table = {**machine.transitions, **changes.get("transitions", {})}
    return TableMachine(
        prompts, table, completions=machine.completions, name=machine.name + "-bugged"
    )


# A chain 0 -> 1 -> 2 -> 3 -> HALT with distinct prompts, and a correct embedding of it.
chain = TableMachine(
    {i: f"step {i}" for i in range(4)},
    {**{(i, c): i + 1 for i in range(3) for c in "ab"}, (3, "a"): HALT, (3, "b"): HALT},
    name="chain",
)


def test_planted_non_injective_map_is_caught_as_injectivity():
    twin = TableMachine({0: "p", 1: "p"}, {(0, "a"): 0, (1, "a"): 1}, name="twin")
    v = check_embedding(Embedding(twin, twin, {0: 0, 1: 0}))
    assert v.holds is False and v.obstruction.kind == "injectivity"
    assert "states 0 and 1 both map to 0" in v.obstruction.explanation


def test_planted_broken_prompt_is_caught_as_prompt():
    bugged = _retarget(chain, prompts={2: "step two"})
    v = check_embedding(Embedding(chain, bugged, {i: i for i in range(4)}))
    assert v.holds is False and v.obstruction.kind == "prompt" and v.obstruction.state == 2
    assert "'step 2'" in v.obstruction.explanation and "'step two'" in v.obstruction.explanation


def test_planted_commutation_bug_on_exactly_one_completion():
    bugged = _retarget(chain, transitions={(1, "b"): 1})
    v = check_embedding(Embedding(chain, bugged, {i: i for i in range(4)}))
    assert v.holds is False and v.obstruction.kind == "commutation"
    assert (v.obstruction.state, v.obstruction.completion) == (1, "b")


@settings(max_examples=examples(100, 2000))
@given(table_machines(4, 3, prompts=("a", "b", "c")).flatmap(embeddings_into), st.data())
def test_random_single_bugs_are_caught(pair, data):
    sub, e = pair
    target = e.target
    s = data.draw(st.sampled_from(sorted(sub.states)))
    bug = data.draw(st.sampled_from(["prompt", "commutation", "injectivity"]))
    if bug == "prompt":
        bugged = _retarget(target, prompts={e(s): target.prompt(e(s)) + "!"})
        v = check_embedding(Embedding(sub, bugged, e.mapping))
    elif bug == "commutation":
        c = data.draw(st.sampled_from(list(sub.completions)))
        wrong = HALT if target.harness(e(s), c) is not HALT else e(s)
        if wrong == target.harness(e(s), c):
            return
        bugged = _retarget(target, transitions={(e(s), c): wrong})
        v = check_embedding(Embedding(sub, bugged, e.mapping))
        if v.obstruction.kind == "commutation":
            assert v.obstruction.completion is not None
    else:
        if len(sub.states) < 2:
            return
        other = data.draw(st.sampled_from([t for t in sorted(sub.states) if t != s]))
        v = check_embedding(Embedding(sub, target, {**e.mapping, s: e(other)}))
    assert v.holds is False and v.obstruction.kind == bug


# -- prompt_obstruction must not refute when its premise is false -----------------------------


def grow_program(leak):
    """Prompt-monotone machine; with ``leak`` the completion "reset" returns to the empty prompt."""

    def h(s, c):
        if leak and c == "reset":
            return ""
        return HALT if c == "stop" else s + c

    return FunctionMachine(lambda s: s, h, name="grow" + ("-leaky" if leak else ""))


MONOTONE = dict(
    invariant=lambda p, q: q.startswith(p) and len(q) > len(p),
    invariant_text="p(x) is a proper prefix of p(y)",
    proof="proofs/F3_prompt_monotone.md",
)


WORDS = [f"word {i}" for i in range(60)]


def test_prompt_obstruction_refutes_when_the_invariant_holds():
    m = grow_program(leak=False)
    v = prompt_obstruction(
        m, "ab", m, "ab", completions=["a", "b", "reset", "stop"] + WORDS, **MONOTONE
    )
    assert v.holds is False and v.method == "fact:F2" and v.checked == 64 and v.conditional
    assert v.obstruction.kind == "prompt" and v.obstruction.state == "ab"
    assert "proofs/F3_prompt_monotone.md" in v.obstruction.explanation
    assert v.details["sentinel_outcomes"] == 1


def test_prompt_obstruction_with_a_false_premise_is_undecided_not_refuted():
    m = grow_program(leak=True)
    v = prompt_obstruction(m, "ab", m, "ab", completions=["a", "b", "reset"], **MONOTONE)
    assert v.holds is None and "premise refuted" in v.reason and "'reset'" in v.reason


def test_prompt_obstruction_that_does_not_exclude_the_state_is_undecided():
    m = grow_program(leak=False)
    v = prompt_obstruction(m, "ab", m, "abc", completions=["a"], **MONOTONE)
    assert v.holds is None and "does not exclude" in v.reason


def test_cardinality_obstruction_checks_its_premise():
    m = FunctionMachine(lambda s: "⋆", lambda s, c: s + 1, name="tick")
    v = cardinality_obstruction(
        m,
        0,
        m,
        reason="the continuation discards the completion",
        completions=["a", "b", "c"] + WORDS,
        target_states=[1, 2],
        proof="proofs/F5_cardinality.md",
    )
    assert v.holds is False and v.method == "fact:F5" and v.obstruction.state == 2
    leaky = FunctionMachine(lambda s: "⋆", lambda s, c: s + len(c), name="leaky")
    v = cardinality_obstruction(
        leaky, 0, leaky, reason="claimed constant", completions=["a", "bb"], target_states=[1, 2]
    )
    assert v.holds is None and "premise refuted" in v.reason
    assert (
        cardinality_obstruction(m, 0, m, reason="r", completions=["a"], target_states=[1, 1]).holds
        is None
    )
