"""The checker on agent loops (agent_machine): never_raises sees an exception the agent
raised, and effects_at_most_once sees a side effect repeated by the loop itself, while the
effect-wrapped tool replayed by exploration does not count as a repeat."""

from __future__ import annotations

import gc

import pytest

from agentic_machines import HALT, agent_machine, effect
from agentic_machines.checking import effects_at_most_once, never_raises
from agentic_machines.checking.check import check_properties
from agentic_machines.runtime.harness import TraceState


def shop(model, pay_twice: bool = False):
    paid = []

    @effect
    def charge(order: int) -> str:
        paid.append(order)
        return "ok"

    for _turn in range(3):
        reply = model("What next? (pay N, or done)").strip()
        if reply == "done":
            return "bye"
        if reply.startswith("pay "):
            order = int(reply.split()[1])  # a malformed number raises: the planted crash
            charge(order)
            if pay_twice:
                charge(order)  # the planted bug: the same request charged again
    return "turns used up"


ALPHABET = ["pay 1", "pay x", "done"]


def test_never_raises_finds_the_agent_crash_at_its_shortest() -> None:
    m = agent_machine(shop, name="shop")
    result = check_properties(m, m.initial, [never_raises()], completions=ALPHABET)
    assert not result
    cx = result.counterexample("never_raises()")
    assert cx.completions == ("pay x",)


def test_effects_at_most_once_finds_a_repeated_charge_and_passes_the_fixed_loop() -> None:
    buggy = agent_machine(shop, pay_twice=True, name="shop-buggy")
    result = check_properties(
        buggy, buggy.initial, [effects_at_most_once("charge")], completions=["pay 1", "done"]
    )
    assert (
        not result and len(result.counterexample("effects_at_most_once(charge)").completions) == 1
    )
    fixed = agent_machine(shop, name="shop")
    # one step: a second "pay 1" later in the run would be a real second request, which
    # the property (same arguments twice in a run) also flags; the bug is within one step
    ok = check_properties(
        fixed,
        fixed.initial,
        [effects_at_most_once("charge")],
        completions=["pay 1", "done"],
        max_depth=1,
    )
    assert ok, ok.report("fixed")


def test_an_effect_defined_inside_the_agent_runs_once_per_real_step_across_replays() -> None:
    # charge is a new function object on every replay; it is still recognised (by its
    # code), so each "pay 1" step of the search executes it exactly once, and the
    # property sees no repeat where the loop itself makes none
    m = agent_machine(shop, name="shop")
    result = check_properties(
        m, m.initial, [effects_at_most_once("charge")], completions=["pay 1", "done"], max_depth=1
    )
    assert result
    assert [(len(s), tool.rsplit(".", 1)[-1]) for s, tool, _, _ in m.effect_log()] == [
        (1, "charge")
    ]
    # deeper, each pay step is one execution: the log grows with the steps, never with replays
    deep = agent_machine(shop, name="shop")
    check_properties(
        deep, deep.initial, [never_raises()], completions=["pay 1", "pay 2", "done"], max_depth=3
    )
    pay_steps = 2 + 2 * 2 + 2 * 2 * 2  # states reached by a pay completion, depth 1 to 3
    assert len(deep.effect_log()) == pay_steps
    assert len(deep.effect_log(5)) == pay_steps - 5


def test_a_never_raises_counterexample_of_an_agent_replays(tmp_path, capsys) -> None:
    from agentic_machines.cli.test_cmd import replay_trace
    from agentic_machines.models import ScriptedModel
    from agentic_machines.runtime.run import Trace, run

    m = agent_machine(shop, name="shop")
    result = check_properties(m, m.initial, [never_raises()], completions=ALPHABET)
    cx = result.counterexample("never_raises()")
    path = tmp_path / "crash.jsonl"
    cx.save(path)
    saved = Trace.load(path)
    assert saved.completions == ["pay x"] and saved.message.startswith("raised ValueError: ")
    assert replay_trace(agent_machine(shop, name="shop"), str(path)) == 1
    out = capsys.readouterr().out
    assert "as recorded, the program raised ValueError: invalid literal" in out
    # run says it too: in its trace's message (and so in the file), and in its output
    trace = run(m, ScriptedModel(["pay x"]))
    assert trace.message == saved.message
    assert "ended with RAISED (ValueError: invalid literal" in str(trace)
    # a machine that no longer raises there is a mismatch, not a pass
    from agentic_machines.errors import ReplayMismatch

    def lenient(model):
        model("What next? (pay N, or done)")
        return "fine"

    with pytest.raises(ReplayMismatch, match="ended normally"):
        replay_trace(agent_machine(lenient, name="shop"), str(path))


def thinker(model):
    """The think-forever bug: 'think' asks the same question again, for ever."""
    while True:
        if model("Think more, or answer?") == "answer":
            return "42"


def test_never_diverges_sees_a_loop_of_model_calls_only_with_a_key() -> None:
    from agentic_machines.checking import never_diverges

    m = agent_machine(thinker, name="thinker")
    blind = check_properties(
        m, m.initial, [never_diverges()], completions=["think", "answer"], max_depth=4
    )
    assert blind.results[0].verdict.holds is True
    assert "never repeat" in blind.results[0].verdict.reason  # and it says it cannot see loops
    keyed = check_properties(
        m,
        m.initial,
        [never_diverges(key=m.prompt)],
        completions=["think", "answer"],
        max_depth=4,
        max_states=300,  # the endless loop is followed 300 rounds
    )
    cx = keyed.counterexample(f"never_diverges(key={m.prompt.__name__})")
    assert cx.completions == ("think",) and cx.loop == 0


def test_hypothesis_runs_see_the_keyed_loop_too() -> None:
    from hypothesis import strategies as st

    from agentic_machines.checking import never_diverges
    from agentic_machines.checking.stateful import hypothesis_check

    m = agent_machine(thinker, name="thinker")
    r = hypothesis_check(
        m,
        m.initial,
        [never_diverges(key=m.prompt)],
        completions=st.sampled_from(["think", "answer"]),
        max_examples=50,
        seed=1,
        progress=None,
        keyed_rounds=300,
    )
    assert not r
    cx = next(iter(r.counterexamples.values()))
    assert cx.loop is not None and cx.completions[-1] == "think"


def sleeper(model):
    """A tool that blocks: 'wait' sleeps far longer than any step may take."""
    import time

    while True:
        if model("wait or done?") == "done":
            return "ok"
        time.sleep(60)


def test_a_blocking_tool_is_a_clock_dependent_step_never_a_hang() -> None:
    from agentic_machines.errors import ClockDependent
    from agentic_machines.models import ScriptedModel
    from agentic_machines.runtime.run import run

    m = agent_machine(sleeper, name="sleeper")
    m.step_timeout = 0.2
    with pytest.raises(ClockDependent, match="watchdog"):
        m.harness(m.initial, "wait")
    result = check_properties(m, m.initial, [never_raises()], completions=["wait", "done"])
    v = result.results[0].verdict
    assert v.holds is None and "watchdog" in v.reason  # undecided, with the reason
    assert result.coverage.undecided == 1
    trace = run(m, ScriptedModel(["wait"]))
    assert trace.steps[0].clock and trace.end is not None


def test_off_the_main_thread_a_blocking_tool_is_clock_dependent_too() -> None:
    # Off the main thread too, a blocking tool is undecided, never a hang. The blocked
    # call is released at the end.
    import threading

    from agentic_machines.errors import ClockDependent

    release = threading.Event()

    def blocker(model):
        while model("wait or done?") != "done":
            release.wait(120)  # a tool that blocks until the test lets it go

    m = agent_machine(blocker, name="blocker")
    m.step_timeout = 0.2
    out: dict = {}

    def check() -> None:
        try:
            m.harness(m.initial, "wait")
        except ClockDependent as exc:
            out["clock"] = str(exc)
        out["done"] = m.harness(m.initial, "done")  # the machine goes on after the timeout
        out["result"] = check_properties(
            m, m.initial, [never_raises()], completions=["wait", "done"]
        )

    worker = threading.Thread(target=check)
    worker.start()
    worker.join(100)  # a hang would keep it running (the step blocks for 120 s)
    release.set()
    assert not worker.is_alive(), "the check hung on a blocking tool off the main thread"
    assert "watchdog" in out["clock"] and out["done"] is HALT
    v = out["result"].results[0].verdict
    assert v.holds is None and "watchdog" in v.reason  # undecided, with the reason
    assert out["result"].coverage.undecided == 1


def test_off_the_main_thread_a_watched_run_gives_the_main_thread_outcomes() -> None:
    import threading

    from agentic_machines.runtime.harness import TraceState

    def counter(model):
        n = 0
        while model(f"n = {n}") == "inc":
            n += 1
        if n > 2:
            raise ValueError("too many")
        return n

    def outcomes(m):
        start = m.initial
        steps = [m.harness(start, "inc"), m.harness(TraceState(("inc",)), "stop")]
        three = TraceState(("inc",) * 3)
        return steps, m.prompt(three), m.raised(three, "stop")

    here = agent_machine(counter)
    expected = outcomes(here)
    there = agent_machine(counter)
    there.step_timeout = 30.0
    got: list = []
    t = threading.Thread(target=lambda: got.append(outcomes(there)))
    t.start()
    t.join(100)
    assert got == [expected]
    assert expected[2] is not None and expected[2].type == "ValueError"


def _payer(model):
    @effect
    def charge(order: int) -> str:
        return "ok"

    turn = 0
    while True:
        turn += 1
        if model("pay or done?") == "done":
            return turn
        charge(turn)


def test_a_replay_finds_each_recorded_effect_by_the_state_itself(monkeypatch) -> None:
    # Branching replays the run to a state; each effect call on the way looks its record
    # up by the state of its step. The replay passes the searched state's own prefixes,
    # so a lookup is found by identity: no TraceState comparison, which walks the two
    # histories node by node (O(depth) per effect call, O(depth^2) per replay).
    m = agent_machine(_payer)
    states = [m.initial]
    for _ in range(40):
        states.append(m.harness(states[-1], "pay"))
    compared = []
    real_eq = TraceState.__eq__
    monkeypatch.setattr(TraceState, "__eq__", lambda a, b: compared.append(1) or real_eq(a, b))
    s = states[-2]  # its run went on to the last state: a branch from it replays 39 steps
    assert m.harness(s, "done") == HALT and m.result(s, "done") == 40
    assert [len(st) for st, *_ in m.effect_log()] == list(range(1, 41))  # none ran again
    assert compared == []


def test_a_finished_agent_run_is_freed_without_the_cyclic_collector() -> None:
    # A search pauses the cyclic collector, and a branch replays the agent in a new run:
    # a finished or closed run must not be left in a reference cycle (run -> greenlet ->
    # its context -> run), or every replay would stay in memory until the search ended.
    def runs() -> int:
        return sum(type(o).__name__ == "_Loop" for o in gc.get_objects())

    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        before = runs()
        m = agent_machine(_payer)
        s = m.harness(m.initial, "pay")
        for _ in range(30):  # each branch from s replays the run, which then halts
            assert m.harness(s, "done") == HALT
        assert runs() - before == 0
    finally:
        if was:
            gc.enable()
