"""Keyed divergence decided as far as the search's bound, early stop or not (issue 36, item 3).

``never_diverges(key=...)`` follows a loop that came back to a key as many rounds as the
search records states (``max_states``). A loop capped within that bound runs into its
cap: it holds, whether or not the search stops early. A loop that comes back to the same
keys for longer is refuted only by the key's claim, and its method says so, never
"exhaustive"; on a finite machine within the bound the loop is decided exactly (a run
repeating a loop through R states repeats a state at the same place of the loop, or
stops, within R rounds)."""

from __future__ import annotations

import pytest

from agentic_machines import HALT, FunctionMachine, agent_machine
from agentic_machines.checking import (
    Invariant,
    check_properties,
    never_diverges,
    never_raises,
    unreachable,
)
from agentic_machines.checking.stateful import hypothesis_check


def counter(cap: int | None, ring: int = 100) -> FunctionMachine:
    """'go' counts up, 'stop' halts; the prompt never shows the count. Capped: HALT at
    ``cap``; uncapped: the count goes round a ring of ``ring`` states."""

    def h(n: int, c: str):
        if c == "stop" or n == cap:
            return HALT
        return n + 1 if cap is not None else (n + 1) % ring

    return FunctionMachine(lambda n: "Go on, or stop?", h, initial=0, name=f"cap {cap}")


@pytest.mark.parametrize("stop_early", [True, False])
@pytest.mark.parametrize("cap", [60, 1_000])
def test_a_loop_capped_within_the_bound_holds_early_stop_or_not(cap: int, stop_early: bool) -> None:
    m = counter(cap)
    prop = never_diverges(key=m.prompt)
    r = check_properties(m, properties=[prop], completions=["go", "stop"], stop_early=stop_early)
    verdict = r.results[0].verdict
    assert verdict.holds is True and verdict.method == "exhaustive", r.report()
    assert verdict.reason == f"bound: the whole reachable graph ({cap + 1:,} states)"
    # a property that holds keeps the search going to its end: decided exactly too
    both = check_properties(m, properties=[prop, never_raises()], completions=["go", "stop"])
    assert [x.verdict.status for x in both] == ["holds", "holds"], both.report()


@pytest.mark.parametrize("stop_early", [True, False])
def test_a_loop_capped_past_the_bound_rests_on_the_key_early_stop_or_not(stop_early: bool) -> None:
    m = counter(300)
    r = check_properties(
        m,
        properties=[never_diverges(key=m.prompt)],
        completions=["go", "stop"],
        max_states=200,
        stop_early=stop_early,
    )
    verdict = r.results[0].verdict
    assert verdict.holds is False and verdict.method == "key", r.report()
    assert "200 more rounds" in verdict.reason and "--max-states" in verdict.reason
    assert "by the key, not exhaustive" in r.report().splitlines()[0]
    # the bound raised past the cap decides it
    wider = check_properties(
        m, properties=[never_diverges(key=m.prompt)], completions=["go", "stop"], max_states=400
    )
    assert wider.results[0].verdict.holds is True, wider.report()


def test_an_exact_lasso_past_an_open_keyed_loop_re_checks() -> None:
    # 'go' counts to a cap past the bound, 'back' returns from 1 to 0: the run meets the
    # open loop ('go' from 1) before it closes the real cycle (go, back); the re-check of
    # that exact lasso once failed there, "before its last step"
    def h(n: int, c: str):
        if c == "back":
            return 0 if n == 1 else HALT
        return HALT if n == 60 else n + 1

    m = FunctionMachine(lambda n: "go?", h, initial=0, name="back")
    r = check_properties(
        m,
        properties=[never_diverges(key=m.prompt)],
        completions=["go", "back"],
        max_states=40,
        stop_early=False,
    )
    verdict, cx = r.results[0].verdict, r.results[0].counterexample
    assert verdict.holds is False and verdict.method == "exhaustive", r.report()
    assert cx is not None and cx.completions == ("go", "back") and cx.loop == 0, r.report()


def test_an_agent_loop_capped_past_the_old_fifty_rounds_holds_with_the_defaults() -> None:
    def agent(model):
        for _ in range(75):
            if model("Go on, or stop?") == "stop":
                return "stopped"
        return "out of turns"

    m = agent_machine(agent, name="capped agent")
    r = check_properties(m, m.initial, [never_diverges(key=m.prompt)], completions=["go", "stop"])
    assert r.results[0].verdict.holds is True and r.coverage.truncated is None, r.report()


def test_following_a_loop_takes_an_agent_step_not_a_fork() -> None:
    # the follow goes on in the step's own process: forks stay a few, not one per round
    def agent(model):
        while model("Go on, or stop?") != "stop":
            pass

    m = agent_machine(agent, name="endless agent")
    r = check_properties(
        m, m.initial, [never_diverges(key=m.prompt)], completions=["go", "stop"], max_states=3_000
    )
    assert (
        r.results[0].verdict.method == "key" and "3,000 more rounds" in r.results[0].verdict.reason
    )
    assert m._pool is not None and m._pool.forks < 20, m._pool.forks


def test_an_uncapped_finite_loop_is_refuted_exactly() -> None:
    m = counter(None)
    r = check_properties(
        m, properties=[never_diverges(key=m.prompt)], completions=["go", "stop"], stop_early=False
    )
    verdict, cx = r.results[0].verdict, r.results[0].counterexample
    assert verdict.holds is False and verdict.method == "exhaustive", r.report()
    assert cx is not None and cx.completions == ("go",) and cx.loop == 0
    assert "after 100 rounds, the run is in state 1 again: it never ends" in cx.explanation


def test_a_loop_through_a_completion_the_machine_is_not_offered_is_no_divergence() -> None:
    # 'go' counts up for ever, but only while the prompt offers it (below 3): every run halts
    def h(n: int, c: str):
        return HALT if c == "halt" else n + 1

    m = FunctionMachine(lambda n: "go?" if n < 3 else "done?", h, initial=0, name="offered")

    def offered(prompt: str) -> list[str]:
        return ["go"] if prompt == "go?" else ["halt"]

    r = check_properties(m, properties=[never_diverges(key=lambda n: "same")], completions=offered)
    assert r.results[0].verdict.holds is True, r.report()
    assert r.coverage.states == 4


def test_a_cycle_the_key_loop_misses_still_refutes_exactly() -> None:
    # the key changes every step, so no keyed loop is followed; the reachable cycle is one
    m = counter(None, ring=3)
    r = check_properties(
        m, properties=[never_diverges(key=lambda n: n)], completions=["go", "stop"]
    )
    verdict = r.results[0].verdict
    assert verdict.holds is False and verdict.method == "exhaustive"


def test_hypothesis_runs_say_a_keyed_refutation_rests_on_the_key() -> None:
    m = agent_machine(lambda model: [model("Go on?") for _ in iter(int, 1)], name="forever")
    r = hypothesis_check(
        m,
        m.initial,
        [never_diverges(key=m.prompt)],
        max_examples=5,
        max_steps=3,
        seed=1,
        keyed_rounds=500,
    )
    assert r.results[0].verdict.method == "key", r.report()
    assert "500 more rounds" in r.results[0].verdict.reason


def test_hypothesis_runs_follow_a_capped_loop_to_its_cap() -> None:
    def agent(model):
        for _ in range(80):
            if model("Go on?") == "stop":
                return "stopped"

    m = agent_machine(agent, name="capped")
    r = hypothesis_check(m, m.initial, [never_diverges(key=m.prompt)], max_examples=10, seed=1)
    assert r.results[0].verdict.holds is True, r.report()


def test_reasons_name_a_property_as_it_is_reported() -> None:
    m = counter(5)
    below = [unreachable(lambda n: n == 9), unreachable(lambda n: n == 2)]
    r = check_properties(m, properties=below, completions=["go", "stop"])
    second = r["unreachable(<lambda>)#2"]
    assert second.verdict.holds is False
    assert second.counterexample.explanation.startswith("unreachable(<lambda>)#2 is false")
    twin = [Invariant("small", lambda n, p: n < 9), Invariant("small", lambda n, p: n < 1)]
    h = hypothesis_check(m, properties=twin, completions=None, max_examples=20, seed=1)
    assert "small#2 is false" in h["small#2"].verdict.reason, h.report()


def test_checking_messages_count_in_words() -> None:
    from agentic_machines import DIVERGE

    m = FunctionMachine(lambda n: "?", lambda n, c: DIVERGE, initial=0, name="gone")
    from agentic_machines.checking import halts_within

    r = check_properties(m, properties=[halts_within(3)], completions=["a"])
    assert "after 1 model call" in r.counterexample("halts_within(3)").explanation
    assert "call(s)" not in r.report()


def test_a_failing_test_says_a_keyed_refutation_rests_on_the_key() -> None:
    from agentic_machines.checking.report import Settings, check_agent

    m = counter(60)
    within = check_agent(m, [never_diverges(key=m.prompt)], Settings(), completions=["go", "stop"])
    assert within.failure is None, within.failure  # capped within the bound: it holds
    out = check_agent(
        m, [never_diverges(key=m.prompt)], Settings(max_states=40), completions=["go", "stop"]
    )
    assert out.failure is not None
    head = out.failure.splitlines()[0]
    assert "(by the key, not exhaustive, " in head and "(exhaustive" not in head, head


@pytest.mark.parametrize("cap", [60, None])
def test_a_keyed_counterexample_snippet_claims_no_exact_return(cap: int | None) -> None:
    # the run comes back to a key, not to the state step 0 started in: the snippet's
    # comment must not say the run is back there and "never ends" (cap 60 halts)
    m = counter(cap)
    r = check_properties(
        m, properties=[never_diverges(key=m.prompt)], completions=["go", "stop"], max_states=40
    )
    cx = r.results[0].counterexample
    assert cx is not None and cx.loop == 0 and cx.end == 1
    comment = cx.snippet().splitlines()[3]
    assert "back where step 0 started" not in comment and "never ends" not in comment, comment
    assert "key" in comment, comment


def capped_60() -> FunctionMachine:
    """The CLI's target (``tests.test_keyed_divergence:capped_60()``)."""
    return counter(60)


@pytest.mark.parametrize(
    "flags, holds",
    [
        ([], True),
        (["--no-stop-early"], True),
        (["--max-states", "40"], False),
        (["--max-states", "40", "--no-stop-early"], False),
    ],
)
def test_the_cli_decides_a_keyed_loop_within_its_state_bound(capsys, flags, holds) -> None:
    from agentic_machines.cli.commands import main

    target = "tests.test_keyed_divergence:capped_60()"
    code = main(["test", target, "-p", "never_diverges:prompt", "-c", "go", "-c", "stop", *flags])
    out = capsys.readouterr().out
    head = (
        "PASS never_diverges(key=prompt): Holds: "
        if holds
        else "FAIL never_diverges(key=prompt): Refuted: "
    )
    assert head in out, out
    assert code == (0 if holds else 1)
    method = "Method: exhaustive" if holds else "Method: by the key, not exhaustive"
    assert method in out, out
    if not holds:  # the hint names the knob of the command line too
        assert "a larger max_states (--max-states) follows it further" in out, out


def test_a_failing_test_decides_a_keyed_loop_exactly_without_the_early_stop(tmp_path) -> None:
    from agentic_machines.checking.report import Settings, check_agent

    m, props = counter(60), [never_diverges(key=counter(60).prompt)]
    whole = Settings(depth=None, stop_early=False)
    out = check_agent(m, props, whole, completions=["go", "stop"], database=tmp_path)
    assert out.failure is None and out.result is not None
    assert out.result.results[0].verdict.method == "exhaustive", out.result.report()


def test_the_saved_keyed_run_tried_first_still_says_it_rests_on_the_key(tmp_path) -> None:
    from agentic_machines.checking.report import Settings, check_agent

    m = counter(60)
    props = [never_diverges(key=m.prompt)]
    few = Settings(max_states=40)
    first = check_agent(m, props, few, completions=["go", "stop"], database=tmp_path)
    second = check_agent(m, props, few, completions=["go", "stop"], database=tmp_path)
    assert first.failure is not None and second.failure is not None
    head = second.failure.splitlines()[0]
    assert "(by the key, not exhaustive, the saved failing run, tried first)" in head, head


@pytest.mark.parametrize("stop_early", [True, False])
def test_with_no_state_bound_an_open_loop_is_decided_when_the_search_ends(
    monkeypatch, stop_early: bool
) -> None:
    from agentic_machines.checking import check as check_module

    # no max_states: a loop still open after the rounds followed (10 here) keeps the
    # search going to its end, so early stop or not the cap at 30 is found
    monkeypatch.setattr(check_module, "KEYED_ROUNDS", 10)
    m = counter(30)
    r = check_properties(
        m,
        properties=[never_diverges(key=m.prompt)],
        completions=["go", "stop"],
        max_states=None,
        stop_early=stop_early,
    )
    verdict = r.results[0].verdict
    assert verdict.holds is True and verdict.method == "exhaustive", r.report()


def test_the_re_check_runs_a_followed_loop_again() -> None:
    from agentic_machines.errors import CertificateError

    # a harness that is no function: it halts from its 61st call on. The search follows
    # the loop 50 rounds (open); its re-check takes those steps again and meets the halt
    calls = [0]

    def h(n: int, c: str):
        calls[0] += 1
        return HALT if calls[0] > 60 else n + 1

    m = FunctionMachine(lambda n: "go?", h, initial=0, name="not a function")
    with pytest.raises(CertificateError, match="did not re-check"):
        check_properties(
            m, properties=[never_diverges(key=m.prompt)], completions=["go"], max_states=50
        )


def test_a_sampled_check_follows_its_own_rounds_and_refuses_a_bad_count() -> None:
    from agentic_machines.checking.stateful import SAMPLED_ROUNDS
    from agentic_machines.errors import InvalidArgument

    m = counter(SAMPLED_ROUNDS + 50)
    r = hypothesis_check(m, properties=[never_diverges(key=m.prompt)], max_examples=5, seed=1)
    assert r.results[0].verdict.method == "key", r.report()
    assert f"{SAMPLED_ROUNDS:,} more rounds" in r.results[0].verdict.reason
    assert "a larger keyed_rounds (--max-states on the command line)" in r.results[0].verdict.reason
    more = hypothesis_check(
        m,
        properties=[never_diverges(key=m.prompt)],
        max_examples=5,
        seed=1,
        keyed_rounds=SAMPLED_ROUNDS + 100,
    )
    assert more.results[0].verdict.holds is True, more.report()
    with pytest.raises(InvalidArgument, match="keyed_rounds must be a positive integer"):
        hypothesis_check(m, properties=[never_diverges(key=m.prompt)], keyed_rounds=0)


def endless_counter() -> FunctionMachine:
    """The CLI's target (``tests.test_keyed_divergence:endless_counter()``): no cap."""
    return counter(None, ring=100_000)


def test_a_replay_follows_a_keyed_loop_at_least_as_far_as_test_does(tmp_path, capsys) -> None:
    from agentic_machines.cli.commands import main

    # saved by a test whose bound (40) the cap (60) is past: a replay follows at least as
    # far as test does by default, so the loop that test passes no longer fails
    path = tmp_path / "loop.jsonl"
    target = "tests.test_keyed_divergence:capped_60()"
    argv = ["test", target, "-p", "never_diverges:prompt", "-c", "go", "-c", "stop"]
    assert main([*argv, "--max-states", "40", "--save", str(path)]) == 1
    capsys.readouterr()
    assert main(["run", target, "--replay", str(path)]) == 0
    assert "no longer fails" in capsys.readouterr().out
    # an endless loop still fails, after the rounds the replay says
    endless = "tests.test_keyed_divergence:endless_counter()"
    argv[1] = endless
    assert main([*argv, "--max-states", "40", "--save", str(path)]) == 1
    capsys.readouterr()
    assert main(["run", endless, "--replay", str(path)]) == 1
    assert "still fails (" in (out := capsys.readouterr().out) and "10,000 more rounds" in out, out
