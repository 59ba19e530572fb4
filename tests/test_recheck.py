"""Certificates re-checked before they are returned (issue 21): every counterexample a
check returns is replayed on the machine and its property checked again on the replayed
run; one that does not re-check is a ``CertificateError`` naming the property, never a
silently wrong certificate."""

from __future__ import annotations

import pickle
from dataclasses import replace

import pytest

from agentic_machines import HALT, FunctionMachine, TableMachine
from agentic_machines.checking import (
    Counterexample,
    Invariant,
    check_properties,
    halts_within,
    never_diverges,
    never_raises,
    unreachable,
)
from agentic_machines.checking.check import _Search
from agentic_machines.checking.run_check import confirm
from agentic_machines.checking.stateful import hypothesis_check
from agentic_machines.errors import CertificateError, Undecided


def _fickle() -> FunctionMachine:
    """h is not a function: the second time a step is made it goes elsewhere."""
    made: dict = {}

    def h(n: int, c: str) -> object:
        if c == "stop":
            return HALT
        made[n] = made.get(n, 0) + 1
        return n + 1 if made[n] == 1 else n + 5

    return FunctionMachine(lambda n: f"at {n}", h, initial=0, name="fickle")


def test_a_harness_that_is_not_a_function_is_an_internal_error_naming_the_property():
    with pytest.raises(CertificateError) as info:
        check_properties(
            _fickle(), properties=[unreachable(lambda s: s == 2)], completions=["go", "stop"]
        )
    assert info.value.property == "unreachable(<lambda>)"
    assert "step 1 ('go' in 0) gives 5 on replay, but the counterexample records 1" in str(
        info.value
    )
    assert "the harness is a function" in str(info.value)


def test_the_sampled_check_re_checks_its_shrunk_counterexample_too(monkeypatch):
    from hypothesis import strategies as st

    from agentic_machines.checking import stateful

    m = FunctionMachine(lambda n: f"at {n}", lambda n, c: n + 1, initial=0, name="count")
    kwargs = {"completions": st.sampled_from(["go"]), "max_examples": 5}
    cx = hypothesis_check(m, properties=[halts_within(1)], **kwargs).counterexample(
        "halts_within(1)"
    )
    assert cx.states == (0, 1)  # every run breaks it at its first step: confirmed
    real = stateful._fields

    def tampered(cx):  # the run as a broken shrinker might report it: another end state
        fields = real(cx)
        return (fields[0], fields[1][:-1] + (7,), *fields[2:])

    monkeypatch.setattr(stateful, "_fields", tampered)
    with pytest.raises(
        CertificateError, match="gives 1 on replay, but the counterexample records 7"
    ):
        hypothesis_check(m, properties=[halts_within(1)], **kwargs)


LOOP = TableMachine(
    {0: "go?", 1: "again?"},
    {(0, "a"): 1, (0, "b"): HALT, (1, "a"): 1, (1, "b"): HALT},
    initial=0,
    name="loop",
)


def test_a_wrong_search_result_is_caught_at_the_return_point(monkeypatch):
    # A search that names the wrong run (here: the path to the start, not to the state
    # that breaks the invariant) is refused instead of returned.
    real = _Search._path_cx

    def wrong(self, q, i, c, t, why, loop=None):
        return real(self, q, 0, None, None, why, loop)

    monkeypatch.setattr(_Search, "_path_cx", wrong)
    with pytest.raises(CertificateError) as info:
        check_properties(LOOP, properties=[Invariant("never 1", lambda s, p: s != 1)])
    assert info.value.property == "never 1"
    assert "ends in 0 and breaks nothing" in str(info.value)


@pytest.mark.parametrize(
    "cx, problem",
    [
        # the run halts: it does not show that some run has not halted after 2 calls
        (
            Counterexample("halts_within(2)", ("b",), (0, HALT), ("go?",), ""),
            r"ends in HALT \(1\) and breaks nothing",
        ),
        # a lasso that does not come back where it says
        (
            Counterexample("halts_within(2)", ("a",), (0, 1), ("go?", "again?"), "", loop=0),
            "ends in 1 and breaks nothing",
        ),
        # a completion outside the alphabet checked
        (Counterexample("halts_within(2)", ("z",), (0, 1), ("go?",), ""), "does not offer"),
    ],
)
def test_a_counterexample_that_does_not_break_the_property_is_refused(cx, problem):
    result = check_properties(LOOP, properties=[halts_within(2)])["halts_within(2)"]
    assert confirm(LOOP, result, lambda _p: ["a", "b"]) is result  # the true one re-checks
    with pytest.raises(CertificateError, match=problem):
        confirm(LOOP, replace(result, counterexample=cx), lambda _p: ["a", "b"])


def test_every_kind_of_counterexample_re_checks():
    # lasso, DIVERGE, stuck run, raise, invariant: each is confirmed by its replay
    from agentic_machines import DIVERGE

    m = TableMachine(
        {0: "?", 1: "?", 2: "?"},
        {(0, "a"): 1, (0, "b"): 2, (1, "a"): 0, (1, "b"): DIVERGE, (2, "a"): HALT, (2, "b"): HALT},
        initial=0,
    )
    props = [halts_within(5), never_diverges(), Invariant("not 2", lambda s, p: s != 2)]
    result = check_properties(m, properties=props, completions=["a", "b"])
    assert result.failed == ["halts_within(5)", "never_diverges()", "not 2"]
    for r in result:
        assert confirm(m, r, lambda _p: ["a", "b"]) is r
    stuck = check_properties(m, properties=[halts_within(5)], completions=lambda p: [])
    cx = stuck.counterexample("halts_within(5)")
    assert len(cx) == 0 and "stuck" in cx.explanation

    def h(n, c):
        if n == 2:
            raise KeyError("two")
        return n + 1

    crashing = FunctionMachine(lambda n: f"at {n}", h, initial=0)
    r = check_properties(crashing, properties=[never_raises()], completions=["x"])
    assert r.counterexample("never_raises()").end.type == "KeyError"


def test_a_replay_that_meets_an_unknown_step_makes_the_verdict_undecided():
    calls = {"n": 0}

    def h(n, c):
        calls["n"] += 1
        if calls["n"] > 2:  # the replay: the clock decided this time
            raise Undecided("the step ran past its deadline on replay")
        return n + 1

    m = FunctionMachine(lambda n: f"at {n}", h, initial=0, name="late")
    r = check_properties(
        m, properties=[unreachable(lambda s: s == 2)], completions=["x"], max_depth=2
    )
    verdict = r["unreachable(<lambda>)"].verdict
    assert verdict.holds is None and r["unreachable(<lambda>)"].counterexample is None
    assert "counterexample" not in verdict.details
    assert "its replay met a step whose outcome is unknown" in verdict.reason
    assert "past its deadline on replay" in verdict.reason


def test_the_error_pickles_and_the_command_line_prints_one_line(tmp_path, capsys):
    exc = pickle.loads(pickle.dumps(CertificateError("p", "broken")))
    assert (exc.property, exc.problem, str(exc)) == (
        "p",
        "broken",
        str(CertificateError("p", "broken")),
    )
    (tmp_path / "fickle.py").write_text(
        "from agentic_machines import HALT, FunctionMachine\n"
        "made = {}\n"
        "def h(n, c):\n"
        "    made[n] = made.get(n, 0) + 1\n"
        "    return n + 1 if made[n] == 1 else n + 5\n"
        "machine = FunctionMachine(lambda n: f'at {n}', h, initial=0, name='fickle')\n",
        encoding="utf-8",
    )
    (tmp_path / "a.json").write_text('["go"]', encoding="utf-8")
    from agentic_machines.cli.commands import main

    argv = ["test", f"{tmp_path / 'fickle.py'}:machine", "-p", "halts_within:2"]
    assert main([*argv, "--alphabet", str(tmp_path / "a.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "counterexample to halts_within(2) did not re-check" in err[0]


# -- the deciders' obstructions ------------------------------------------------------------
def _drifting(first: object, later: object) -> FunctionMachine:
    """A finite machine whose h(0, 'a') is ``first`` the first two times (the closure
    check and the decision read it), and ``later`` after (the re-check reads it)."""
    calls = {"n": 0}

    def h(s, c):
        if (s, c) == (0, "a"):
            calls["n"] += 1
            return first if calls["n"] <= 2 else later
        return HALT

    return FunctionMachine(
        lambda s: f"at {s}", h, states=[0, 1], completions=["a", "b"], initial=0, name="drift"
    )


def test_an_f1_obstruction_is_re_checked_when_it_is_read():
    from agentic_machines import is_spe_state

    honest = is_spe_state(_drifting(0, 0), 0)
    assert honest.holds is False and honest.obstruction.state == 1  # re-checked: nothing wrong
    v = is_spe_state(_drifting(0, 1), 0)  # the re-check reads h(0, 'a') = 1
    assert v.holds is False
    with pytest.raises(
        CertificateError,
        match=r"obstruction to 0 is an SPE state of drift did not re-check: h\(0, 'a'\) = 1",
    ):
        _ = v.obstruction.state  # built (and re-checked) when first read


def test_an_embedding_obstruction_is_re_checked():
    from agentic_machines import Embedding, check_embedding
    from agentic_machines.fixtures import fixture

    m = fixture("f2-mul")
    honest = check_embedding(Embedding(m, m, {0: 1, 1: 0}))
    assert honest.obstruction.kind == "commutation"  # re-checked: the sides differ
    calls = {"n": 0}

    def h(s, c):  # f2-mul's harness, but h(1, '0') is 1 from its second call on
        if (s, c) == (1, "0"):
            calls["n"] += 1
            if calls["n"] > 1:
                return 1
        return m.harness(s, c)

    drifting = FunctionMachine(m.prompt, h, states=[0, 1], completions=["0", "1"], name="drift")
    with pytest.raises(
        CertificateError, match="obstruction to .* did not re-check: h\\(e\\(0\\), '0'\\)"
    ):
        check_embedding(Embedding(m, drifting, {0: 1, 1: 0}))


def test_an_f2_obstruction_is_re_checked():
    from agentic_machines import completion_generates

    target = TableMachine({"t": "at 1"}, {("t", "a"): HALT, ("t", "b"): HALT}, name="target")
    v = completion_generates(_drifting(0, 0), 0, target)
    assert v.holds is False and v.obstruction.kind == "prompt"  # no successor says 'at 1'
    with pytest.raises(CertificateError, match=r"h\(0, 'a'\) = 1 has the prompt 'at 1'"):
        completion_generates(_drifting(0, 1), 0, target)
