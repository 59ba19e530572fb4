"""Early stop for every property kind, and keyed divergence that means what it says
(issue 36, items 2 and 3).

With ``stop_early`` the search stops once every property has its shortest counterexample,
``never_raises`` and a keyed ``never_diverges`` included: the state counts are pinned. A
keyed ``never_diverges`` refutes only a loop the machine really goes round for ever: a
loop capped by a counter the key leaves out is no divergence."""

from __future__ import annotations

from agentic_machines import FunctionMachine, agent_machine, effect
from agentic_machines.checking import (
    check_properties,
    effects_at_most_once,
    never_diverges,
    never_raises,
)
from agentic_machines.cli.commands import main

ALPHABET = ["pay", "ping", "crash", "think", "done"]


def desk(model):
    """Three tools; each bug shows in one step: a double charge, a double ping, a crash,
    and a loop that asks the same question for ever."""

    @effect
    def charge(n: int) -> str:
        return "ok"

    @effect
    def ping(n: int) -> str:
        return "pong"

    @effect
    def note(text: str) -> str:
        return "noted"

    while True:
        reply = model("What next?").strip()
        if reply == "pay":
            charge(1)
            charge(1)
        elif reply == "ping":
            ping(1)
            ping(1)
        elif reply == "crash":
            raise RuntimeError("crashed")
        elif reply == "done":
            note("bye")
            return "bye"


def four(m):
    return [
        never_raises(),
        never_diverges(key=m.prompt),
        effects_at_most_once("charge"),
        effects_at_most_once("ping"),
    ]


def test_four_properties_with_one_step_counterexamples_stop_after_the_first_level() -> None:
    m = agent_machine(desk, name="desk")
    early = check_properties(m, m.initial, four(m), completions=ALPHABET, max_states=200)
    assert early.status == "refuted" and len(early.failed) == 4
    assert all(len(cx) == 1 for cx in early.counterexamples.values())
    # the start and its three successors that are states (done halts, crash raises)
    assert early.coverage.states == 4
    assert "stopped early" in early.bound
    full = check_properties(
        m, m.initial, four(m), completions=ALPHABET, max_states=200, stop_early=False
    )
    assert full.coverage.states == 200
    assert [r.verdict.holds for r in full] == [r.verdict.holds for r in early]
    assert [len(cx) for cx in full.counterexamples.values()] == [1, 1, 1, 1]


def test_the_cli_stops_as_early(capsys) -> None:
    argv = ["test", "tests.test_stop_early:desk", "--max-states", "200"]
    for c in ALPHABET:
        argv += ["-c", c]
    for p in (
        "never_raises",
        "never_diverges:prompt",
        "effects_at_most_once:charge",
        "effects_at_most_once:ping",
    ):
        argv += ["-p", p]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "FAIL never_diverges(key=prompt)" in out
    assert "coverage: 4 states" in out


def test_never_raises_alone_stops_at_its_shortest_run() -> None:
    def h(n, c):
        if c == "boom":
            raise KeyError(n)
        return n + 1

    m = FunctionMachine(lambda n: f"at {n}", h, initial=0, name="grower")
    r = check_properties(m, properties=[never_raises()], completions=["go", "boom"], max_states=500)
    assert r.counterexample("never_raises()").completions == ("boom",)
    assert r.coverage.states == 2  # the start, and the one state 'go' reached


def test_never_diverges_alone_stops_once_a_cycle_is_seen() -> None:
    # a ring of 3 states beside an endless chain: the ring's lasso is found without
    # exploring the chain to the state bound
    def h(n, c):
        return (n + 1) % 3 if c == "ring" and n < 3 else n + 3

    m = FunctionMachine(lambda n: f"at {n}", h, initial=0, name="ring")
    r = check_properties(
        m, properties=[never_diverges()], completions=["ring", "grow"], max_states=5000
    )
    assert r.counterexample("never_diverges()").loop is not None
    assert r.coverage.states < 100


def turns(cap: int | None):
    def agent(model):
        n = 0
        while cap is None or n < cap:
            if model("Go on, or stop?") == "stop":
                return "stopped"
            n += 1  # a counter the prompt does not show
        return "out of turns"

    return agent


def test_a_loop_capped_by_a_counter_the_key_leaves_out_is_no_divergence() -> None:
    m = agent_machine(turns(3), name="capped")
    r = check_properties(m, m.initial, [never_diverges(key=m.prompt)], completions=["go", "stop"])
    assert r.results[0].verdict.holds is True, r.report()


def test_an_uncapped_loop_is_a_divergence_by_the_key() -> None:
    m = agent_machine(turns(None), name="endless")
    r = check_properties(
        m, m.initial, [never_diverges(key=m.prompt)], completions=["go", "stop"], max_states=500
    )
    cx = r.counterexample("never_diverges(key=prompt)")
    assert cx.completions == ("go",) and cx.loop == 0
    assert "came back to the same keys 500 more rounds without an exact repeat" in cx.explanation
    # its histories never repeat and the graph is never whole: it rests on the key, and says so
    verdict = r.results[0].verdict
    assert verdict.method == "key" and "by the key, not exhaustive" in str(verdict)
    assert "exhaustive, every state" not in str(verdict)


def test_a_finite_machine_loop_is_decided_exactly_by_the_key() -> None:
    # states 0..5, keys n % 2: from 2 the run really goes 2, 3, 2, ... for ever
    def h(n, c):
        return 2 if n == 3 else n + 1

    m = FunctionMachine(lambda n: "p", h, initial=0, name="two-cycle")
    r = check_properties(m, properties=[never_diverges(key=lambda n: n % 2)], completions=["a"])
    cx = r.counterexample(r.results[0].name)
    assert "it never ends" in cx.explanation


def test_the_claim_names_the_key() -> None:
    m = agent_machine(turns(3), name="capped")
    assert "keys by prompt" in never_diverges(key=m.prompt).claim()
    assert "rompt)" not in never_diverges(key=m.prompt).claim().replace("prompt)", "")


def test_the_cli_takes_a_key_from_a_module(capsys) -> None:
    argv = ["test", "tests.test_stop_early:endless_agent", "-c", "go", "-c", "stop"]
    argv += ["--max-states", "300"]  # the endless loop is followed 300 rounds
    assert main(argv + ["-p", "never_diverges:tests.test_stop_early:same_prompt"]) == 1
    assert "FAIL never_diverges(key=same_prompt)" in capsys.readouterr().out
    assert (
        main(
            [
                "test",
                "tests.test_stop_early:capped_agent",
                "-c",
                "go",
                "-c",
                "stop",
                "-p",
                "never_diverges:prompt",
            ]
        )
        == 0
    )


endless_agent = turns(None)
capped_agent = turns(3)


def same_prompt(state) -> str:
    """Every state of these agents is the same situation but for its last completion."""
    return state.completions[-1:] and "asked again" or "start"
