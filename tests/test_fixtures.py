"""The named machines (the F2 fixtures) and their verdicts."""

from __future__ import annotations

import pytest

from agentic_machines import (
    DIVERGE,
    HALT,
    check_embedding,
    completion_generates,
    identity,
    is_spe_state,
)
from agentic_machines.errors import InvalidArgument
from agentic_machines.fixtures import FIXTURES, STAR, fixture


def test_fixture_names_and_tables():
    assert set(FIXTURES) == {"f2-add", "f2-mul", "f2-const", "halt1", "diverge1"}
    for name in FIXTURES:
        m = fixture(name)
        assert m.name == name and m.is_finite and set(m.completions) == {"0", "1"}
        assert all(m.prompt(s) == STAR for s in m.states)
    add, mul, const = fixture("f2-add"), fixture("f2-mul"), fixture("f2-const")
    for a in (0, 1):
        for b in (0, 1):
            assert add.harness(a, str(b)) == (a + b) % 2
            assert mul.harness(a, str(b)) == a * b
            assert const.harness(a, str(b)) == a
    assert (
        fixture("halt1").harness(0, "0") is HALT and fixture("diverge1").harness(0, "1") is DIVERGE
    )


def test_unknown_fixture_lists_the_names():
    with pytest.raises(
        InvalidArgument, match="known fixtures: diverge1, f2-add, f2-const, f2-mul, halt1"
    ):
        fixture("nope")


def test_each_call_builds_a_fresh_machine():
    assert fixture("f2-add") is not fixture("f2-add")


def test_design_2_7_add_every_state_is_spe():
    m = fixture("f2-add")
    for x in (0, 1):
        v = is_spe_state(m, x)
        assert v.holds is True and v.witness.loader == {0: str(x), 1: str(1 - x)}


def test_design_2_7_mul():
    m = fixture("f2-mul")
    assert is_spe_state(m, 1).holds is True
    v = is_spe_state(m, 0)
    assert (
        v.holds is False
        and v.obstruction.state == 1
        and "State 1 is not a successor of 0" in str(v)
    )


def test_design_2_7_const_identity_embeds_but_no_spe_state():
    m = fixture("f2-const")
    assert check_embedding(identity(m)).holds is True
    for x in (0, 1):
        v = is_spe_state(m, x)
        assert v.holds is False and v.obstruction.state == 1 - x
        assert f"State {1 - x} is not a successor of {x}" in v.obstruction.explanation


def test_diverge1_does_not_completion_generate_halt1():
    v = completion_generates(fixture("diverge1"), 0, fixture("halt1"))
    assert v.holds is False and v.obstruction.state == 0
    assert "no successor states" in v.obstruction.explanation
    # and the other way round, halting is not diverging either
    assert completion_generates(fixture("halt1"), 0, fixture("diverge1")).holds is False
