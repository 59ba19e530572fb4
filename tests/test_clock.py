"""The clock is a fault, not an outcome (issue 20).

A block stopped by its wall-clock deadline gives a *clock-dependent* transition: ``run``
goes on with what the model would see (the timeout) and marks the step ``clock``;
``explore`` and the checks count it undecided, with the reason naming the deadline, and
never as a fact. Pure-Python work is stopped by the deterministic line budget counted in
the worker, so it ends the same way however busy the machine is.
"""

from __future__ import annotations

import json

import pytest

from agentic_machines.architectures import rlm
from agentic_machines.checking import (
    check_properties,
    halts_within,
    never_raises,
    prompt_length_at_most,
)
from agentic_machines.errors import ClockDependent, Undecided
from agentic_machines.execution import clock
from agentic_machines.execution.sandbox import resolve_isolation
from agentic_machines.machine import DIVERGE
from agentic_machines.runtime.explore import explore
from agentic_machines.runtime.local_models import ScriptedModel
from agentic_machines.runtime.run import Trace, run

# A C-level loop: no Python line runs, so no line budget can stop it; only the deadline.
HANG = "Thinking.\n```repl\nsum(range(10**12))\n```"
SPIN = "Thinking.\n```repl\nwhile True:\n    pass\n```"  # pure Python: the line budget
# HANG never ends, so any deadline gives the same outcome; a short one keeps the test's
# five runs of it (run, explore, check_properties) from burning a second of CPU each.
DEADLINE = 0.25


def _machine(isolation: str = "strongest", timeout_s: float = DEADLINE):
    return rlm.machine(isolation=isolation, timeout_s=timeout_s)


def test_clock_dependent_is_an_undecided_with_the_outcome():
    exc = ClockDependent("the block ran past its 1 s wall-clock deadline", "state")
    assert isinstance(exc, Undecided) and exc.outcome == "state"
    import pickle

    again = pickle.loads(pickle.dumps(exc))
    assert (again.reason, again.outcome) == (exc.reason, exc.outcome)


def test_notes_reach_only_the_watches_open_in_this_thread():
    with clock.watching() as outer:
        with clock.watching() as inner:
            pass
        clock.note("late")
    assert inner == [] and outer == ["late"]


@pytest.mark.skipif(resolve_isolation("strongest") == "inline", reason="needs POSIX")
def test_a_block_past_its_deadline_is_a_clock_step_and_undecided_in_explore(tmp_path):
    m = _machine()
    path = tmp_path / "run.jsonl"
    trace = run(m, ScriptedModel([HANG, 'FINAL("done")']), path=path)
    # run goes on with the timeout the model reads, and marks the step; the next step's
    # prompt (the timeout the model reads) came from the clock too
    assert [step.clock for step in trace.steps] == [True, True]
    assert "ExecutionTimeout" in trace.steps[1].prompt
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    steps = [line for line in lines if line.get("kind") == "step"]
    assert [step.get("clock") for step in steps] == [True, True]
    assert Trace.load(path).steps[0].clock is True
    assert "(clock)" in str(trace)

    # explore: the transition is undecided with the reason naming the deadline, no edge
    graph = explore(m, m.initial, [HANG], max_states=5)
    assert graph.graph["stats"]["undecided"] >= 1
    node = graph.nodes[m.initial]
    assert node["undecided"] == [HANG]
    assert "wall-clock deadline" in node["undecided_reason"]
    assert graph.out_degree(m.initial) == 0

    # no verdict treats it as a fact: the property is undecided, not held or refuted
    result = check_properties(
        m, properties=[never_raises(), halts_within(3)], completions=[HANG], max_depth=2
    )
    assert result.status == "undecided", result.report()
    assert all(v.holds is None for v in result.verdicts.values())
    assert "wall-clock deadline" in result.report()


@pytest.mark.skipif(resolve_isolation("strongest") == "inline", reason="needs POSIX")
def test_pure_python_work_ends_on_the_line_budget_not_the_clock():
    # A deadline far past what the line budget takes (well under a second even on a busy
    # machine): with a 1 s deadline the spin ran into the clock under load (issue 20's
    # review), which is the timing dependence this test is meant to rule out.
    m = _machine(timeout_s=60)
    with clock.watching() as seen:
        outcome = m.harness(m.initial, SPIN)
    assert outcome is DIVERGE and seen == []


# -- the same graph on a quiet and on a busy machine ----------------------------------------
HOG = (
    "import time\n"
    "end = time.monotonic() + 300\n"  # bounded, whatever happens to the test
    "while time.monotonic() < end:\n"
    "    pass\n"
)
CHOICES = [
    "```repl\nx = 6 * 7\nprint(x, len(context))\n```",  # pure Python, well in budget
    SPIN,  # pure Python past the line budget: DIVERGE, decided by lines, not seconds
    'FINAL("done")',
]


def _graph(m):
    graph = explore(m, m.initial, CHOICES, max_depth=2)
    undecided = {n for n, d in graph.nodes(data=True) if d.get("undecided")}
    edges = {(u, v, tuple(d["completions"])) for u, v, d in graph.edges(data=True)}
    prompts = {n: d.get("prompt") for n, d in graph.nodes(data=True)}
    return edges, prompts, undecided


@pytest.mark.skipif(resolve_isolation("strongest") == "inline", reason="needs POSIX")
def test_exploring_under_a_cpu_hog_gives_the_same_graph_where_nothing_is_clock_dependent():
    import os
    import subprocess
    import sys

    m = rlm.machine(isolation="strongest")  # the default 10 s deadline: a safety net only
    quiet = _graph(m)
    hogs = [
        subprocess.Popen([sys.executable, "-c", HOG], stdout=subprocess.DEVNULL)
        for _ in range(max(2, os.cpu_count() or 2))
    ]
    try:
        busy = _graph(m)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    (q_edges, q_prompts, q_undecided), (b_edges, b_prompts, b_undecided) = quiet, busy
    clocked = q_undecided | b_undecided  # where the deadline spoke, nothing is compared
    assert {e for e in q_edges if e[0] not in clocked} == {
        e for e in b_edges if e[0] not in clocked
    }
    same = set(q_prompts) & set(b_prompts) - clocked
    assert all(q_prompts[n] == b_prompts[n] for n in same)
    # and the graph is not empty of what it is meant to show: a divergence by line budget
    assert any(v is DIVERGE for _, v, _ in q_edges)
    assert len(q_edges) >= 4


@pytest.mark.skipif(resolve_isolation("strongest") == "inline", reason="needs POSIX")
def test_replaying_a_journal_has_its_own_budget_reported_apart_from_the_block():
    import sys

    from agentic_machines.execution.codeexec import drive_rest
    from agentic_machines.execution.sandbox import Limits, ProcessRunner, Scaffold

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from attack_corpus import OPERATOR

    # rebuilding starts a Python worker (tens of ms at least): far past a 1 ms replay budget
    ex = ProcessRunner("process", Limits(timeout_s=60, replay_timeout_s=0.001))
    try:
        ex.namespace("m", Scaffold(values={"x": 1}))
        assert drive_rest(ex.run_block("m", "y = sum(range(10**7))"), None).status == "ok"
        died = drive_rest(ex.run_block("m", OPERATOR + "os_['_exit'](3)"), None)
        assert died.status == "died" and ex.replays == 0
        with clock.watching() as seen:
            result = drive_rest(ex.run_block("m", "print(x)"), None)
        assert result.status == "died" and "replay's own" in result.stderr
        assert "this block did not run" in result.stderr
        assert seen and "replay_timeout_s" in seen[0]
        assert ex.replays == 1 and ex.replay_seconds > 0
    finally:
        ex.close()


def _noting(c0: str = ""):
    """A harness whose step after 'slow' meets a (simulated) deadline, as an executor notes it."""

    def program():
        c = yield "start"
        if c == "slow":
            clock.note("the block ran past its 1 s wall-clock deadline")
        c = yield f"after {c}"
        return c

    from agentic_machines.runtime.harness import HarnessMachine

    return HarnessMachine(program, name="noting")


def test_run_goes_on_and_explore_counts_undecided_where_the_clock_spoke():
    from agentic_machines.runtime.harness import TraceState

    m = _noting()
    trace = run(m, ScriptedModel(["fast", "done"]))
    assert [s.clock for s in trace.steps] == [False, False] and trace.end is not None
    trace = run(m, ScriptedModel(["slow", "done"]))
    # the second prompt is what the clock-dependent step left: the clock decided it too
    assert [s.clock for s in trace.steps] == [True, True] and trace.end is not None
    graph = explore(m, m.initial, ["slow", "fast"])
    assert graph.graph["stats"]["undecided"] == 1
    assert graph.nodes[m.initial]["undecided"] == ["slow"]
    # a state whose prompt the clock decided: shown as it came, every transition undecided
    fresh = _noting()  # no cached prompt: p replays the program, and meets the deadline
    graph = explore(fresh, TraceState(("slow",)), ["x", "y"])
    node = graph.nodes[TraceState(("slow",))]
    assert node["prompt"] == "after slow" and node["undecided"] == ["x", "y"]
    assert "wall-clock deadline" in node["undecided_reason"]


def test_a_parallel_explore_counts_the_clock_dependent_prompt_undecided_too():
    from concurrent.futures import ThreadPoolExecutor

    from agentic_machines.runtime.harness import TraceState

    with ThreadPoolExecutor(2) as pool:
        graph = explore(_noting(), TraceState(("slow",)), ["x", "y"], executor=pool)
    node = graph.nodes[TraceState(("slow",))]
    assert node["undecided"] == ["x", "y"] and "wall-clock deadline" in node["undecided_reason"]


@pytest.mark.skipif(resolve_isolation("strongest") == "inline", reason="needs POSIX")
def test_a_looping_str_in_the_worker_ends_on_lines_not_on_the_clock():
    from agentic_machines.execution.codeexec import drive_rest
    from agentic_machines.execution.sandbox import Limits, ProcessRunner, Scaffold

    ex = ProcessRunner("process", Limits(timeout_s=120))
    try:
        ex.namespace("m", Scaffold())
        block = (
            "class Loop:\n    def __str__(self):\n        while True:\n            pass\nv = Loop()"
        )
        assert drive_rest(ex.run_block("m", block), None).status == "ok"
        with clock.watching() as seen:
            text = ex.text_of("m", "v")
        assert text is None and seen == []  # no text, by the line budget: not a timeout
        assert ex.text_of("m", "v") is None and ex.workers_started == 1  # and again, alike
    finally:
        ex.close()


def test_a_state_a_clock_step_left_in_the_cache_is_no_fact_either():
    # Regression: the prompt and the live run that a clock-dependent step leaves in the
    # machine's caches were served as facts, so exploring or checking from that state on
    # the machine that had just run gave edges the clock decided.
    from agentic_machines.runtime.harness import TraceState

    m = _noting()
    run(m, ScriptedModel(["slow", "done"]))  # leaves TraceState(("slow",)) live and cached
    slow = TraceState(("slow",))
    graph = explore(m, slow, ["x", "y"])
    node = graph.nodes[slow]
    assert node["prompt"] == "after slow" and node["undecided"] == ["x", "y"]
    assert "wall-clock deadline" in node["undecided_reason"] and graph.out_degree(slow) == 0
    result = check_properties(m, properties=[never_raises()], completions=["x"], start=slow)
    assert result.status == "undecided" and "wall-clock deadline" in result.report()
    # nor does the prompt the clock decided refute an invariant ("after slow" is 10 long)
    result = check_properties(
        m, properties=[prompt_length_at_most(5)], completions=["x"], start=slow
    )
    assert result.status == "undecided", result.report()
    # a state the clock never touched is a fact, cached or not
    fast = m.harness(m.initial, "fast")
    assert (
        m.prompt(fast) == "after fast" and explore(m, fast, ["x"]).graph["stats"]["undecided"] == 0
    )


def test_an_agent_function_that_meets_a_deadline_is_clock_dependent():
    # Regression: agent_machine did not watch the clock, so a deadline met by model code
    # an agent function ran was a fact of its h.
    from agentic_machines.runtime.agent import agent_machine

    def agent(model):
        c = model("start")
        if c == "slow":
            clock.note("the block ran past its 1 s wall-clock deadline")
        return model(f"after {c}")

    m = agent_machine(agent)
    trace = run(m, ScriptedModel(["slow", "done"]))
    assert [s.clock for s in trace.steps] == [True, True]
    graph = explore(m, m.initial, ["slow", "fast"], max_depth=2)
    assert graph.nodes[m.initial]["undecided"] == ["slow"]
    assert "wall-clock deadline" in graph.nodes[m.initial]["undecided_reason"]
    fast = m.harness(m.initial, "fast")
    assert explore(m, fast, ["x"]).graph["stats"]["undecided"] == 0
    # from the live run the clock-dependent step left, nothing is a fact either
    with pytest.raises(ClockDependent) as step:
        m.harness(m.initial, "slow")
    graph = explore(m, step.value.outcome, ["x"])
    assert graph.graph["stats"]["undecided"] == 1


def test_hypothesis_check_says_which_runs_ended_at_a_clock_step():
    # Regression: a sampled "holds" said "no counterexample in N runs" even when runs had
    # ended at a step the clock decided; it now names them and the deadline.
    from hypothesis import strategies as st

    from agentic_machines.checking.stateful import hypothesis_check

    result = hypothesis_check(
        _noting(), properties=[never_raises()], completions=st.just("slow"), max_examples=5
    )
    verdict = result["never_raises()"].verdict
    assert result.coverage.undecided >= 1 and verdict.holds is not False
    assert "undecided step" in verdict.reason and "wall-clock deadline" in verdict.reason


def test_a_state_whose_replay_the_agent_watchdog_cuts_has_a_prompt_that_says_so():
    # Regression: the watchdog's ClockDependent carried DIVERGE, which p passed on as the
    # prompt: explore showed the prompt as ↑ and run handed DIVERGE to the model.
    import time

    from agentic_machines.runtime.agent import agent_machine
    from agentic_machines.runtime.harness import TraceState

    def agent(model):
        if model("first?") == "slow":
            time.sleep(30)  # a blocking tool; the watchdog interrupts it
        return model("second?")

    m = agent_machine(agent)
    m.step_timeout = 0.2
    slow = TraceState(("slow",))
    with pytest.raises(ClockDependent) as exc:
        m.prompt(slow)
    assert isinstance(exc.value.outcome, str) and "step_timeout" in exc.value.outcome
    node = explore(m, slow, ["x"]).nodes[slow]
    assert isinstance(node["prompt"], str) and node["undecided"] == ["x"]
    trace = run(m, ScriptedModel(["x"]), slow)
    assert trace.end is DIVERGE and [s.clock for s in trace.steps] == [True]


def test_replaying_a_trace_does_not_compare_the_prompts_the_clock_decided():
    # Regression: a recorded clock step's prompt (the timeout the model read) was compared
    # on replay, so a replay on a quiet machine raised ReplayMismatch, "the machine no
    # longer behaves as it did", though only the clock had changed.
    from agentic_machines.runtime.harness import HarnessMachine

    slow = [True]

    def program():
        c = yield "start"
        if c == "slow" and slow[0]:
            clock.note("the block ran past its 1 s wall-clock deadline")
            c = yield "timed out"
        else:
            c = yield f"after {c}"
        return c

    trace = run(HarnessMachine(program), ScriptedModel(["slow", "done"]))
    assert [s.clock for s in trace.steps] == [True, True]
    slow[0] = False  # the same machine, on a machine where the deadline is not met
    again = trace.replay(HarnessMachine(program))
    assert again.steps[1].prompt == "after slow" and again.end == trace.end


@pytest.mark.skipif(resolve_isolation("strongest") == "inline", reason="needs POSIX")
def test_a_worker_that_boots_slower_than_the_block_deadline_is_no_timeout(monkeypatch):
    # Regression: the first worker's setup was bounded by the block's timeout_s, so on a
    # busy machine a worker that booted slower than that (0.5-1 s here under load) ended
    # the first block as a timeout before it ran. The boot is simulated as slow by
    # stopping the worker for 3x the block's deadline.
    import os
    import signal
    import threading

    from agentic_machines.execution.codeexec import drive_rest
    from agentic_machines.execution.sandbox import Limits, ProcessRunner, Scaffold

    original = ProcessRunner._start

    def slow_start(self):
        original(self)
        pid = self._proc.pid
        os.kill(pid, signal.SIGSTOP)
        threading.Timer(1.5, os.kill, (pid, signal.SIGCONT)).start()

    monkeypatch.setattr(ProcessRunner, "_start", slow_start)
    ex = ProcessRunner("process", Limits(timeout_s=0.5))
    try:
        ex.namespace("m", Scaffold(values={"x": 2}))
        with clock.watching() as seen:
            result = drive_rest(ex.run_block("m", "print(x * 21)"), None)
        assert (result.status, result.stdout, seen) == ("ok", "42\n", []), result.stderr
    finally:
        ex.close()


def test_a_deadline_met_in_another_thread_with_the_callers_context_is_seen():
    # A tool that hands its work to a thread (asyncio.to_thread copies the context) must
    # not turn a deadline met there into a fact: the caller's watch sees the note.
    import asyncio
    import contextvars
    import threading

    from agentic_machines.execution import clock

    with clock.watching() as seen:
        asyncio.run(asyncio.to_thread(clock.note, "a deadline met in a thread"))
    assert seen == ["a deadline met in a thread"]

    with clock.watching() as seen:
        context = contextvars.copy_context()
        worker = threading.Thread(target=context.run, args=(clock.note, "via copy_context"))
        worker.start()
        worker.join()
    assert seen == ["via copy_context"]


def test_a_thread_started_without_the_context_cannot_close_or_reach_the_callers_watch():
    import threading

    from agentic_machines.execution import clock

    with clock.watching() as seen:
        worker = threading.Thread(target=clock.note, args=("a bare thread",))
        worker.start()
        worker.join()
        clock.note("the caller's own note")
    assert seen == ["the caller's own note"]
