"""agent_machine and effect: any synchronous agent loop as an agentic machine."""

from __future__ import annotations

import functools
import sys

import pytest

from agentic_machines import DIVERGE, HALT, AgentRaised, agent_machine, effect, run
from agentic_machines.errors import ClockDependent, InvalidArgument, InvalidMachine
from agentic_machines.models import ScriptedModel
from agentic_machines.runtime.agent import AgentDied
from agentic_machines.runtime.explore import explore
from agentic_machines.runtime.harness import TraceState

ALPHABET = ["search", "calc", "answer"]


def make_react(counts):
    """A ReAct-style loop with two tools; ``search`` is an effect, ``calc`` is not."""

    @effect
    def search():
        counts["search"] += 1
        return "Paris"

    def calc():
        counts["calc"] += 1
        return "4"

    def react(model, task="capital of France"):
        notes = []
        while True:
            action = model(f"Task: {task}. Notes: {', '.join(notes) or 'none'}. Act.")
            if action == "answer":
                return notes[-1] if notes else "no idea"
            if action == "search":
                notes.append(search())
            elif action == "calc":
                notes.append(calc())
            else:
                notes.append(f"unknown action {action!r}")

    return react


def hand_graph(depth):
    """The graph of the ReAct loop to ``depth``, computed by hand from its definition."""
    note = {"search": "Paris", "calc": "4"}
    nodes, edges = {}, set()
    frontier = [()]
    for d in range(depth + 1):
        nxt = []
        for h in frontier:
            notes = [note[a] for a in h]
            nodes[TraceState(h)] = (
                f"Task: capital of France. Notes: {', '.join(notes) or 'none'}. Act."
            )
            if d == depth:
                continue
            edges.add((TraceState(h), HALT, "answer"))
            for a in ("search", "calc"):
                edges.add((TraceState(h), TraceState(h + (a,)), a))
                nxt.append(h + (a,))
        frontier = nxt
    return nodes, edges


@pytest.mark.parametrize("isolation", ["process", "inline"])
def test_react_loop_explored_equals_the_hand_computed_graph(isolation):
    counts = {"search": 0, "calc": 0}
    m = agent_machine(make_react(counts), completions=ALPHABET, isolation=isolation)
    g = explore(m, max_depth=3)
    nodes, edges = hand_graph(3)
    assert {n: g.nodes[n]["prompt"] for n in g if n is not HALT} == nodes
    got = {(s, t, c) for s, t, e in g.edges(data=True) for c in e["completions"]}
    assert got == edges
    # The effect tool ran exactly once per real step that calls it (one per edge).
    search_edges = sum(1 for _, _, c in edges if c == "search")
    assert search_edges == 7
    assert sum(1 for e in m.effect_log() if e[1].endswith("search")) == search_edges
    if isolation == "inline":  # inline, the plain tool ran again in every replay of a branch
        assert counts["search"] == search_edges
        assert counts["calc"] > sum(1 for _, _, c in edges if c == "calc")
    else:  # in workers, nothing the agent does reaches this process
        assert counts == {"search": 0, "calc": 0}


def test_effect_results_are_replayed_not_recomputed():
    from mailer_agent import send, sent

    sent.clear()  # inline, the tool's executions are this process's

    def mailer(model):
        receipts = []
        while True:
            receipts.append(send(model(f"receipts so far: {receipts}")))

    m = agent_machine(mailer, completions=["a", "b"], isolation="inline")
    s1 = m.harness(m.initial, "a")
    s2 = m.harness(s1, "b")
    assert m.prompt(s2) == "receipts so far: [1, 2]"
    # Branching from s1 replays the first step: its send is not called again, and the
    # replayed call returns the recorded receipt.
    s3 = m.harness(s1, "a")
    assert sent == ["a", "b", "a"]
    assert m.prompt(s3) == "receipts so far: [1, 3]"
    # A machine built afresh forgets nothing it should not: a new run really sends.
    assert send("outside") == 4


def test_an_agent_that_raises_is_a_recorded_outcome():
    def fragile(model):
        while True:
            c = model("number?")
            int(c)

    m = agent_machine(fragile, completions=["1", "x"])
    assert m.harness(m.initial, "x") is HALT
    raised = m.raised(m.initial, "x")
    assert raised == AgentRaised("ValueError", "invalid literal for int() with base 10: 'x'")
    assert "int(c)" in raised.traceback
    assert m.raised(m.initial, "1") is None
    trace = run(m, ScriptedModel(["1", "1", "x"]))
    assert trace.end is HALT and len(trace) == 3
    assert isinstance(m.result(trace[-1].state, trace[-1].completion), AgentRaised)


def test_an_agent_that_calls_sys_exit_is_a_recorded_outcome_not_the_end_of_the_process():
    # Found by review: SystemExit went through the harness and ended the CLI with its status.
    def quitter(model):
        if model("quit?") == "yes":
            sys.exit(4)
        return "stayed"

    m = agent_machine(quitter)
    assert m.harness(m.initial, "yes") is HALT
    assert m.raised(m.initial, "yes") == AgentRaised("SystemExit", "4")
    assert m.result(m.initial, "no") == "stayed"


def test_an_agent_that_loops_without_calling_the_model_diverges():
    def stuck(model):
        if model("go?") == "go":
            while True:
                pass
        return "stopped"

    m = agent_machine(stuck, line_budget=20_000)
    assert m.harness(m.initial, "go") is DIVERGE
    assert m.result(m.initial, "go") is DIVERGE
    assert m.harness(m.initial, "stop") is HALT
    assert m.result(m.initial, "stop") == "stopped"
    trace = run(m, ScriptedModel(["go"]))
    assert trace.end is DIVERGE


def test_a_long_linear_run_and_replays_agree():
    def counter(model, limit):
        total = 0
        for i in range(limit):
            total += int(model(f"step {i}, total {total}"))
        return total

    m = agent_machine(counter, 500)
    trace = run(m, ScriptedModel(["1", "2"] * 250), max_steps=600)
    assert trace.end is HALT and len(trace) == 500
    assert m.result(trace[-1].state, trace[-1].completion) == 750
    # A state far down the run, asked of a fresh machine, is replayed to the same prompt.
    state = trace[300].state
    assert agent_machine(counter, 500).prompt(state) == trace[300].prompt


def test_bad_inputs_are_clear_errors():
    with pytest.raises(InvalidMachine, match="before its first model call"):
        agent_machine(lambda model: 42)
    with pytest.raises(InvalidMachine, match="before its first model call"):
        agent_machine(lambda model: 1 / 0)
    m = agent_machine(lambda model: model("once"))
    with pytest.raises(InvalidArgument, match="not a state"):
        m.prompt(TraceState(("a", "b")))
    with pytest.raises(InvalidArgument, match="C = str"):
        m.harness(m.initial, 3)
    # A prompt that is not a string is the agent's bug: an outcome, not a crash.
    bad = agent_machine(lambda model: model("first") and model(["not", "a", "string"]))
    assert bad.harness(bad.initial, "x") is HALT
    assert bad.raised(bad.initial, "x").type == "WrongType"  # a TypeError, named for what is wrong


def async_agent(model, steps=3):
    """``steps`` steps inside asyncio.run, each after an await."""
    import asyncio  # only the asyncio tests need it

    async def main():
        seen = []
        for _ in range(steps):
            await asyncio.sleep(0)
            seen.append(model(f"seen {seen}"))
        return seen

    return asyncio.run(main())


@pytest.mark.parametrize("isolation", ["process", "inline"])
def test_asyncio_agents_suspend_and_branch(isolation):
    m = agent_machine(async_agent, 2, completions=["a", "b"], isolation=isolation)
    g = explore(m)
    assert g.graph["stats"]["states"] == 3 and HALT in g
    assert m.result(TraceState(("b",)), "a") == ["b", "a"]


def counter_agent(model, limit):
    total = 0
    for i in range(limit):
        total += int(model(f"step {i}, total {total}"))
    return total


def test_a_machine_pickles_as_the_agent_started_afresh():
    import pickle

    m = agent_machine(counter_agent, 3, name="counter", completions=["1", "2"])
    s = m.harness(m.harness(m.initial, "1"), "2")
    copy = pickle.loads(pickle.dumps(m))
    assert (copy.name, copy.completions, copy.line_budget) == ("counter", ("1", "2"), 100_000)
    assert copy.prompt(s) == m.prompt(s) == "step 2, total 3"
    assert copy.harness(s, "2") is HALT and copy.result(s, "2") == 5


# -- agents that touch process state: all of it stays in the workers ----------------------

CALLS = []  # a global the agent below counts its runs in (in its worker)


def hostile(model):
    """Prints, redirects stdout around its model call, changes folder and environment,
    keeps a global counter, and ends in every way a process can."""
    import contextlib
    import io
    import os
    import signal
    import tempfile

    CALLS.append(1)
    print("starting run", len(CALLS))
    folder = tempfile.mkdtemp(prefix="hostile-")
    os.chdir(folder)
    os.environ["HOSTILE"] = "yes"
    sys.setrecursionlimit(123)
    signal.signal(signal.SIGTERM, lambda *_: None)
    sys.path.insert(0, "/nowhere")
    with contextlib.redirect_stdout(io.StringIO()):
        first = model(f"run {len(CALLS)}: first?")
    print("first was", first)
    second = model(f"after {first}")
    if second == "exit":
        sys.exit(3)
    if second == "_exit":
        os._exit(5)
    if second == "crash":
        import ctypes

        ctypes.string_at(0)
    if second == "block":
        import time

        time.sleep(60)
    return f"{first}-{second}-{len(CALLS)}"


def test_an_agent_that_touches_process_state_leaves_the_caller_as_it_was(capfd):
    import os
    import signal

    def process_state():
        return (
            os.getcwd(),
            os.environ.get("HOSTILE"),
            sys.getrecursionlimit(),
            signal.getsignal(signal.SIGTERM),
            list(sys.path),
            sys.stdout,
        )

    before = process_state()
    m = agent_machine(hostile, completions=["a", "b"], step_timeout=2)
    s = m.harness(m.initial, "a")
    assert m.prompt(s) == "after a"
    assert m.output(m.initial) == "starting run 1\n"
    assert m.output(m.initial, "a") == "first was a\n"  # its own print, once, with its step
    assert m.result(s, "b") == "a-b-1"  # the counter counted this run only
    assert m.raised(s, "exit") == AgentRaised("SystemExit", "3")
    died = m.raised(s, "_exit")
    assert isinstance(died, AgentDied) and "status 5" in died.message
    assert "SIGSEGV" in m.raised(s, "crash").message
    with pytest.raises(ClockDependent, match="step_timeout"):
        m.harness(s, "block")
    after = process_state()
    assert after == before and CALLS == []
    out, err = capfd.readouterr()
    assert "starting run" not in out + err and "first was" not in out + err


def test_a_completion_sequence_ends_the_same_in_any_order_and_after_many_runs():
    sequences = [("a", "b"), ("b", "a"), ("a", "a"), ("b", "b")]

    def ends(order):
        m = agent_machine(hostile, completions=["a", "b"])
        got = {}
        for first, second in order:
            s = m.harness(m.initial, first)
            got[(first, second)] = (m.prompt(s), m.result(s, second))
        return got

    alone = {seq: ends([seq])[seq] for seq in sequences}
    assert ends(sequences) == alone == ends(list(reversed(sequences)))
    assert alone[("a", "b")] == ("after a", "a-b-1")
    m = agent_machine(hostile, completions=["a", "b"])
    for _ in range(50):  # runs before: they leave nothing behind for the next ones
        m.harness(m.harness(m.initial, "b"), "b")
    fresh = agent_machine(hostile, completions=["a", "b"])
    assert [m.result(fresh.harness(fresh.initial, c), d) for c, d in sequences] == [
        alone[seq][1] for seq in sequences
    ]


def test_an_effect_result_is_a_fresh_copy_in_every_rebuilt_run():
    from agentic_machines.runtime.agent import AgentMachine

    @effect
    def fetch():
        return ["fetched"]

    def mutator(model):
        got = fetch()  # before the first model call: an event of the start
        while True:
            got.append(model(f"have {got}"))

    m = AgentMachine(mutator, cache_size=1)  # one holder: most states are rebuilt
    s = m.initial
    for c in "abcd":
        s = m.harness(s, c)
    again = [m.prompt(m.harness(m.initial, "x")) for _ in range(3)]
    assert m.prompt(s) == "have ['fetched', 'a', 'b', 'c', 'd']"
    assert again == ["have ['fetched', 'x']"] * 3
    assert [(state, tool) for state, tool, _, _ in m.effect_log()] == [
        (m.initial, "test_an_effect_result_is_a_fresh_copy_in_every_rebuilt_run.<locals>.fetch")
    ]


def test_effects_of_methods_and_partials_are_reported_with_their_step():
    import functools

    class Mailer:
        @effect
        def send(self, to):
            return f"sent to {to}"

    def post(box, text):
        return f"{box}: {text}"

    post_it = effect(functools.partial(post, "inbox"))

    def agent(model):
        mailer = Mailer()
        while True:
            c = model("next?")
            mailer.send(c)
            post_it(c)

    m = agent_machine(agent, completions=["x"])
    s = m.harness(m.initial, "x")
    m.harness(s, "x")
    tools = [(len(state), tool.rsplit(".", 1)[-1]) for state, tool, _, _ in m.effect_log()]
    assert tools == [(1, "send"), (1, "post"), (2, "send"), (2, "post")]


def test_a_machine_unpickled_elsewhere_forks_its_own_workers():
    import pickle

    m = agent_machine(hostile, completions=["a", "b"])
    copy = pickle.loads(pickle.dumps(m))
    assert (copy.isolation, copy.step_timeout) == ("process", 10.0)
    assert copy.result(copy.harness(copy.initial, "a"), "b") == "a-b-1"


def test_isolation_is_checked_and_inline_is_asked_for_by_name():
    with pytest.raises(InvalidArgument, match="'process'.*'inline'"):
        agent_machine(counter_agent, 3, isolation="sandbox")
    inline = agent_machine(counter_agent, 3, isolation="inline")
    assert (inline.isolation, inline.step_timeout) == ("inline", None)
    assert agent_machine(counter_agent, 3).isolation == "process"


class Outbox:
    @effect
    def send(self, to):
        return f"sent to {to}"


def double_sender(model):
    box = Outbox()
    box.send("boss")  # before the first model call
    while True:
        if model("send again?") == "yes":
            box.send("boss")


def test_effects_at_most_once_counts_real_executions_and_refuses_an_unseen_tool():
    from agentic_machines.checking import check_properties, effects_at_most_once

    def verdict(tool):
        m = agent_machine(double_sender, completions=["yes", "no"])
        return check_properties(m, properties=[effects_at_most_once(tool)], max_depth=1)

    sent, misspelled = (verdict(tool).results[0].verdict for tool in ("send", "send_emial"))
    assert sent.holds is False  # the send before the first model call, then once more
    assert misspelled.holds is None
    assert "send_emial" in misspelled.reason and "Outbox.send" in misspelled.reason


def _notify(channel, text):
    return f"{channel}: {text}"


notify = effect(functools.partial(_notify, "ops"))


def partial_double_sender(model):
    while True:
        notify(model("what to send?"))  # the same text twice in a run is a second send


def test_effects_at_most_once_refutes_a_double_send_through_a_partial():
    from agentic_machines.checking import check_properties, effects_at_most_once

    m = agent_machine(partial_double_sender, completions=["hi"])
    verdict = check_properties(m, properties=[effects_at_most_once("_notify")], max_depth=2)
    assert verdict.results[0].verdict.holds is False
    assert [tool for _, tool, _, _ in m.effect_log()] == ["_notify", "_notify"]


def test_where_fork_is_missing_process_mode_warns_and_runs_inline(monkeypatch, tmp_path, capsys):
    from agentic_machines.cli import main
    from agentic_machines.runtime import agent as agent_module

    monkeypatch.setattr(agent_module, "can_fork", lambda: False)  # as on Windows
    said = "this platform cannot fork, so the agent runs inline, in this process"
    with pytest.warns(RuntimeWarning, match=said):
        m = agent_machine(counter_agent, 2)
    assert m.isolation == "inline"  # stated on the machine, and the run is the same
    assert run(m, ScriptedModel(["1", "2"])).end is HALT
    script = tmp_path / "s.txt"
    script.write_text("1\n2\n")
    with pytest.warns(RuntimeWarning, match=said):  # the command line says it too
        assert main(["run", f"{__file__}:echo_agent", "--script", str(script)]) == 0
    assert "agent returned '1'" in capsys.readouterr().out


def echo_agent(model):
    return model("say?")
