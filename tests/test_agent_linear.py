"""run()'s linear path for agent functions: untraced steps, the same outcomes as h.

``run(agent_machine(fn), model)`` calls ``fn`` once, untraced, and decides by counting
lines only the steps whose time does not prove them within the line budget. These tests
check that it makes exactly the trace the step-by-step path makes (``h`` through the
machine's greenlet, every line counted), at the budget's boundary too.
"""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
import weakref

import pytest
from agentic_machines.models import FunctionModel, ScriptedModel

from agentic_machines import DIVERGE, HALT, agent_machine, effect, run
from agentic_machines.errors import ModelError
from agentic_machines.execution import clock
from agentic_machines.runtime import agent as agent_module
from agentic_machines.runtime import linear as linear_module


def summer(model):
    """Each step runs a loop of as many iterations as the model's last answer says."""
    n = int(model("n?"))
    while True:
        total = 0
        for i in range(n):
            total += i
        if n == 0:
            return total
        n = int(model(f"total {total}; n?"))


def step_by_step(machine):
    """The same machine run through h, one step at a time (the wall-clock step watchdog,
    set far away, keeps run() off the linear path)."""
    machine.step_timeout = 3600.0
    return machine


def same_steps(a, b):
    return [tuple(s) for s in a.steps] == [tuple(s) for s in b.steps] and a.end == b.end


def test_a_linear_run_makes_the_trace_the_step_by_step_run_makes():
    script = ["3", "5", "1", "7", "0"]
    linear = run(agent_machine(summer), ScriptedModel(script))
    stepped = run(step_by_step(agent_machine(summer)), ScriptedModel(script))
    assert linear.end is HALT and len(linear) == 5
    assert same_steps(linear, stepped)


def test_at_the_line_budget_run_and_h_agree_on_every_step():
    # A budget this small gives a gate of nanoseconds, so every step is decided by
    # counting on the shadow run: the verdicts must be h's, step for step, on both sides
    # of the boundary (found here by h itself, not assumed).
    budget = 300
    flips = []
    for n in range(0, 200, 3):
        m = agent_machine(summer, line_budget=budget)
        s = m.harness(m.initial, "1")
        flips.append((n, m.harness(s, str(n)) is DIVERGE))
    assert any(d for _, d in flips) and not all(d for _, d in flips)  # the boundary is inside
    for n, diverges in flips:
        trace = run(agent_machine(summer, line_budget=budget), ScriptedModel(["1", str(n), "0"]))
        stepped = run(
            step_by_step(agent_machine(summer, line_budget=budget)),
            ScriptedModel(["1", str(n), "0"]),
        )
        assert same_steps(trace, stepped), n
        assert (trace.end is DIVERGE) == diverges, n


def test_a_step_the_watchdog_stops_is_decided_by_counting():
    def stuck(model):
        model("go?")
        while True:
            pass

    trace = run(agent_machine(stuck, line_budget=5_000), ScriptedModel(["go"]))
    assert trace.end is DIVERGE and [s.outcome for s in trace.steps] == [DIVERGE]


def test_late_steps_that_agree_let_the_untraced_run_go_on(monkeypatch):
    # A gate of zero seconds: every step is late and checked on the shadow, which catches
    # up uncounted and agrees; the run goes on untraced and ends as the stepped one does.
    monkeypatch.setattr(linear_module, "_FASTEST_LINE", 0.0)
    script = [str(n) for n in (4, 9, 2, 6)] + ["0"]
    checked = agent_machine(summer)
    trace = run(checked, ScriptedModel(script))
    assert same_steps(trace, run(step_by_step(agent_machine(summer)), ScriptedModel(script)))
    assert checked.result(trace[-1].state, trace[-1].completion) == 0


def test_a_failing_model_never_reaches_the_agent_and_ends_the_run():
    seen = []

    def careful(model):
        while True:
            try:
                model("go on?")
            except Exception as exc:  # noqa: BLE001 - the test: this must not run
                seen.append(exc)
                return "caught"

    trace = run(agent_machine(careful), ScriptedModel(["a", "b"]))
    assert trace.end == "model-error" and len(trace) == 2 and seen == []
    with pytest.raises(Exception, match="(?i)script"):
        run(agent_machine(careful), ScriptedModel(["a"]), raise_errors=True)
    assert seen == []


def test_max_steps_ends_a_linear_run_and_a_later_branch_replays_it():
    sent = []

    @effect
    def send(text):
        sent.append(text)
        return len(sent)

    def mailer(model):
        receipt = 0
        while True:  # the prompt depends on what the effect returned, never on `sent`
            receipt = send(model(f"last receipt {receipt}"))

    m = agent_machine(mailer)
    trace = run(m, ScriptedModel(["a", "b", "c", "d"]), max_steps=3)
    assert trace.end == "max_steps" and len(trace) == 3 and sent == ["a", "b", "c"]
    # A branch from a recorded state replays the run; the effects already made are not redone.
    assert m.harness(trace[2].state, "x") is not None and sent == ["a", "b", "c", "x"]


def test_a_step_the_clock_decided_is_marked_from_there_on_as_step_by_step():
    def noting(model):
        while True:
            if model("next?") == "slow":
                clock.note("the block ran past its 1 s wall-clock deadline")

    script = ["a", "slow", "b", "c"]
    linear = run(agent_machine(noting), ScriptedModel(script), max_steps=4)
    stepped = run(step_by_step(agent_machine(noting)), ScriptedModel(script), max_steps=4)
    assert [s.clock for s in linear.steps] == [s.clock for s in stepped.steps]
    assert [s.clock for s in linear.steps] == [False, True, True, True]


def test_the_shadow_catches_up_through_decided_steps_in_one_go(monkeypatch):
    # A clock that only moves when the agent says a step was slow: steps 2 and 5 are
    # late, so the shadow replays steps 0-1 (then 3-4) from the record before counting.
    now = [0.0]

    def clock_now():
        now[0] += 1e-9
        return now[0]

    monkeypatch.setattr(linear_module, "perf_counter", clock_now)
    # The thread's CPU time moves with it: a slow step ran on the CPU, so it cannot prove
    # itself within budget by its CPU time either.
    monkeypatch.setattr(linear_module, "thread_time", clock_now)

    def slowish(model):
        n = int(model("n?"))
        while True:
            for _ in range(n):
                pass
            if n == 7:
                now[0] += 1.0  # this step "took" a second: its time proves nothing
            n = int(model(f"ran {n}; n?"))

    script = ["1", "2", "7", "3", "4", "7", "5"]
    replays = []
    resume = agent_module._Loop.resume

    def counting_resume(self, completion, counted=True):
        replays.append((completion, counted, len(self.queue)))
        return resume(self, completion, counted)

    monkeypatch.setattr(agent_module._Loop, "resume", counting_resume)
    trace = run(agent_machine(slowish), ScriptedModel(script), max_steps=7)
    monkeypatch.setattr(agent_module._Loop, "resume", resume)
    stepped = run(step_by_step(agent_machine(slowish)), ScriptedModel(script), max_steps=7)
    assert same_steps(trace, stepped) and trace.end == "max_steps"
    # After the machine's own first step (counted, when it was built), the shadow
    # started, caught up through steps 0-1 in one resume (one queued step after the
    # first), counted step 2; later caught up through steps 3-4 and counted step 5.
    assert replays == [
        (None, True, 0),
        (None, False, 0),
        ("1", False, 1),
        ("7", True, 0),
        ("3", False, 1),
        ("7", True, 0),
    ]


def test_off_the_main_thread_the_watchdog_stops_a_stuck_step_too():
    import threading

    def stuck(model):
        model("go?")
        while True:
            pass

    ends = []

    def go():
        ends.append(run(agent_machine(stuck, line_budget=5_000), ScriptedModel(["go"])).end)

    worker = threading.Thread(target=go)
    worker.start()
    worker.join(timeout=120)
    assert ends == [DIVERGE]


def async_agent(model, steps=3):
    """``steps`` steps inside asyncio.run, each after an await (test_agent_machine.py
    uses it too)."""
    import asyncio  # only the asyncio tests need it

    async def main():
        seen = []
        for _ in range(steps):
            await asyncio.sleep(0)
            seen.append(model(f"seen {seen}"))
        return seen

    return asyncio.run(main())


def test_an_asyncio_agent_runs_linearly_and_its_model_sees_no_running_loop():
    import asyncio

    loops = []

    class Probe:
        def complete(self, prompt):
            try:
                asyncio.get_running_loop()
                loops.append("running")
            except RuntimeError:
                loops.append("none")
            return str(len(loops))

    trace = run(agent_machine(async_agent), Probe())
    assert trace.end is HALT and loops == ["none"] * 3
    assert trace.message is None and len(trace) == 3


def test_a_linear_run_writes_the_trace_file_step_by_step(tmp_path):
    from agentic_machines.runtime.run import Trace

    path = tmp_path / "run.jsonl"
    trace = run(agent_machine(summer), ScriptedModel(["2", "3", "0"]), path=path)
    assert trace.end is HALT and Trace.load(path) == trace


def test_a_linear_trace_made_when_read_is_the_same_value_everywhere():
    # The linear run records strings and makes its states and steps when read: a copy,
    # a pickle and a comparison read them as they would an eager trace's.
    import copy
    import pickle

    script = ["3", "5", "0"]
    stepped = run(step_by_step(agent_machine(summer)), ScriptedModel(script))
    for again in (copy.copy, copy.deepcopy, lambda t: pickle.loads(pickle.dumps(t))):
        assert again(run(agent_machine(summer), ScriptedModel(script))) == stepped
    m = agent_machine(summer)
    trace = run(m, ScriptedModel(script))
    assert len(trace) == 3 and trace.states[-1] == trace.steps[-1].state
    assert m.result(trace[-1].state, trace[-1].completion) == 0 and trace.message is None


def test_a_linear_run_that_raises_says_so_without_reading_its_steps():
    def failing(model):
        model("n?")
        raise ValueError("no tool")

    m = agent_machine(failing)
    trace = run(m, ScriptedModel(["1"]))
    assert trace.end is HALT and trace.message == "raised ValueError: no tool"
    assert str(m.raised(trace[-1].state, trace[-1].completion)) == "ValueError: no tool"


# -- the agent's own code takes SIGALRM ---------------------------------------------------
# In the main thread the linear run's watchdog is an interval SIGALRM. A tool with a
# timeout of its own (signal.alarm, setitimer, its own handler) may cancel that timer or
# replace the handler; a later step that loops without calling the model must still be
# stopped and counted. Each test is guarded: if the watchdog were dead, faulthandler
# prints the stacks and ends the process instead of hanging CI.


@pytest.fixture
def never_hangs():
    import faulthandler
    import signal

    faulthandler.dump_traceback_later(120, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)


def _timed_tool():
    """A tool with a timeout of its own: its handler and timer, both undone when it ends
    (``alarm(0)`` cancels the run's interval timer too)."""
    import signal

    def too_slow(signum, frame):
        raise TimeoutError

    old = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(30)
    try:
        return "done"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _own_handler(signum, frame):
    pass


def _takes_alarm(how):
    import signal

    def agent(model):
        model("go?")
        if how == "alarm(0)":
            signal.alarm(0)
        elif how == "tool":
            _timed_tool()
        elif how == "keeps its handler":
            signal.signal(signal.SIGALRM, _own_handler)
        model("again?")
        if how == "alarm(0) in the stuck step":
            signal.alarm(0)
        while True:
            pass

    return agent


@pytest.mark.parametrize(
    "how", ["alarm(0)", "tool", "keeps its handler", "alarm(0) in the stuck step"]
)
def test_a_stuck_step_is_stopped_after_the_agent_took_sigalrm(never_hangs, how):
    import signal

    trace = run(agent_machine(_takes_alarm(how), line_budget=5_000), ScriptedModel(["a", "b"]))
    left, timer = signal.getsignal(signal.SIGALRM), signal.getitimer(signal.ITIMER_REAL)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    stepped = run(
        step_by_step(agent_machine(_takes_alarm(how), line_budget=5_000)),
        ScriptedModel(["a", "b"]),
    )
    assert trace.end is DIVERGE and [s.outcome for s in trace.steps][-1] is DIVERGE
    assert same_steps(trace, stepped)
    if how == "keeps its handler":  # the run does not put its old handler over the agent's
        assert left is _own_handler
    else:
        assert left == signal.SIG_DFL
    assert timer == (0.0, 0.0)  # the run's timer is gone either way


def test_the_agents_handler_stays_after_a_run_that_ends(never_hangs):
    import signal

    def agent(model):
        model("go?")
        signal.signal(signal.SIGALRM, _own_handler)
        return model("done?")

    trace = run(agent_machine(agent), ScriptedModel(["a", "b"]))
    assert trace.end is HALT and len(trace) == 2
    assert signal.getsignal(signal.SIGALRM) is _own_handler
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # the run's timer is gone


def test_the_runs_alarm_handler_charges_no_line_to_a_step_being_counted():
    # The SIGALRM watchdog fires every _POLL s, also while a step is counted on the shadow
    # run: were its lines charged, the clock could move a step across its line budget.
    import signal

    from agentic_machines.execution.budget import LineBudget

    run_ = object.__new__(linear_module._Linear)
    run_.armed = False  # between steps, as while a step is counted
    with LineBudget(1000) as without:
        pass
    with LineBudget(1000) as with_alarm:
        run_._alarm(signal.SIGALRM, None)
    assert with_alarm.used == without.used


def test_a_late_step_that_raises_says_so_in_the_message_as_a_prompt_one(monkeypatch):
    # A step whose time proves nothing is decided by counting; the trace must say that the
    # program raised there as it does when the step is proved by its time (and step by step):
    # the clock decides when to count, never what the trace says.
    def agent(model):
        return int(model("n?"))

    prompt = run(agent_machine(agent), ScriptedModel(["x"]))
    monkeypatch.setattr(linear_module, "_FASTEST_LINE", 0.0)  # every step is late
    late = run(agent_machine(agent), ScriptedModel(["x"]))
    assert prompt.end is HALT and late.end is HALT
    assert late.message == prompt.message
    assert prompt.message.startswith("raised ValueError: invalid literal")


class _Marker:
    """A local of the agent that a test watches through a weak reference."""


class _Heavy:
    """A local whose finalizer runs Python lines when the agent's frame is freed."""

    def __del__(self):
        total = 0
        for i in range(50):
            total += i


def _spy_counting(monkeypatch):
    """Record every counted resume of a shadow run (a step decided by counting)."""
    steps: list[str] = []
    resume = agent_module._Loop.resume

    def spy(self, completion, counted=True):
        if counted and completion is not None:
            steps.append(completion)
        return resume(self, completion, counted)

    monkeypatch.setattr(agent_module._Loop, "resume", spy)
    return steps


def test_the_last_steps_clock_stops_before_the_agents_locals_are_freed(monkeypatch):
    # The run holds the agent's outermost frame, so the locals it built (a long run's
    # history) are freed after the last step's clock stopped: freeing them is no line.
    alive_at_each_read = []
    watched = []

    def clock_now():
        # watched[-1]: the linear run's local (building the machine ran the agent once too)
        alive_at_each_read.append(bool(watched) and watched[-1]() is not None)
        return 0.0  # every step proved within budget by its time

    monkeypatch.setattr(linear_module, "perf_counter", clock_now)
    counted = _spy_counting(monkeypatch)

    def agent(model):
        history = [_Marker()]
        watched.append(weakref.ref(history[0]))
        model("a?")
        return model("b?")

    trace = run(agent_machine(agent), ScriptedModel(["x", "y"]))
    assert trace.end is HALT and counted == []
    assert alive_at_each_read[-1] is True  # the last read: the local still alive
    assert len(watched) == 2 and watched[-1]() is None  # and freed once the run was done


def test_a_finalizer_run_while_the_agents_locals_are_freed_has_its_step_counted(monkeypatch):
    # Python code that runs while the held frame's locals are freed (here a __del__) is
    # lines of the last step that its clock did not see: the step is counted, as h does.
    monkeypatch.setattr(linear_module, "perf_counter", lambda: 0.0)
    counted = _spy_counting(monkeypatch)

    def agent(model):
        keep = _Heavy()  # noqa: F841 - freed when the agent returns
        model("a?")
        return model("b?")

    trace = run(agent_machine(agent), ScriptedModel(["x", "y"]))
    monkeypatch.undo()
    stepped = run(step_by_step(agent_machine(agent)), ScriptedModel(["x", "y"]))
    assert same_steps(trace, stepped) and trace.end is HALT
    assert counted == ["y"]  # the last step only


@pytest.mark.parametrize("budget", [1_000_000, None])
def test_a_stock_model_called_inline_logs_and_fails_as_its_complete_does(budget):
    # A ModelBase model whose complete() is the stock one is called inline by the linear
    # run: the same .calls log, and the same error (ModelError) for an answer that is no
    # string, as the step-by-step run, which calls complete().
    def answers(prompt):
        return 7 if prompt == "third?" else prompt.upper()

    def agent(model):
        model("first?")
        model("second?")
        return model("third?")

    inline, called = FunctionModel(answers), FunctionModel(answers)
    trace = run(agent_machine(agent, line_budget=budget), inline)
    stepped = run(step_by_step(agent_machine(agent, line_budget=budget)), called)
    assert inline.calls == called.calls == [("first?", "FIRST?"), ("second?", "SECOND?")]
    assert same_steps(trace, stepped) and trace.end == "model-error"
    assert type(trace.error) is type(stepped.error) is ModelError
    assert str(trace.error) == str(stepped.error) and trace.message == stepped.message
    with pytest.raises(ModelError, match="completions must be strings"):
        run(agent_machine(agent, line_budget=budget), FunctionModel(answers), raise_errors=True)


class _Cycle:
    """Garbage in a reference cycle whose finalizer runs Python lines when collected."""

    def __init__(self):
        self.me = self

    def __del__(self):
        total = 0
        for i in range(50):
            total += i


@pytest.fixture
def slow_collections(monkeypatch):
    """A clock that moves only while the collector runs: 1 s per collection that the run
    watches (read when the run's gc callback sees it end), no time anywhere else. The gc
    callbacks of anyone else are set aside meanwhile (so that only the run's and the line
    budget's own run)."""
    now = [0.0]

    def clock_now():
        caller = sys._getframe(1)
        if (
            caller.f_code is linear_module._Linear._gc.__code__
            and caller.f_locals.get("phase") == "stop"
        ):
            now[0] += 1.0
        return now[0]

    monkeypatch.setattr(linear_module, "perf_counter", clock_now)
    monkeypatch.setattr(linear_module, "thread_time", clock_now)  # the collector's CPU time
    others = gc.callbacks[:]
    gc.callbacks.clear()
    gc.collect()  # the test process's own garbage (with its finalizers) goes first
    yield
    gc.callbacks[:] = others


def collecting(model, garbage):
    model("a?")
    if garbage:
        _Cycle()
    gc.collect()  # a collection inside step 1 (and of a finalizer's garbage, with garbage)
    return model("b?")


def test_a_collection_that_runs_no_python_code_is_taken_off_its_steps_time(
    slow_collections, monkeypatch
):
    counted = _spy_counting(monkeypatch)
    trace = run(agent_machine(collecting, False), ScriptedModel(["x", "y"]))
    assert trace.end is HALT and len(trace) == 2
    assert counted == []  # the step took 1 s, all of it in the collector: within budget


def test_a_collection_that_runs_a_finalizer_is_taken_off_its_steps_time_too(
    slow_collections, monkeypatch
):
    # A line budget charges no line run inside a collection (execution/budget.py), so the
    # finalizer's lines are no step's: the collection's second is taken off the step too,
    # and the outcome is the stepped run's.
    counted = _spy_counting(monkeypatch)
    trace = run(agent_machine(collecting, True), ScriptedModel(["x", "y"]))
    assert counted == []
    monkeypatch.undo()
    stepped = run(step_by_step(agent_machine(collecting, True)), ScriptedModel(["x", "y"]))
    assert same_steps(trace, stepped) and trace.end is HALT


# -- the CPU-time proof of a late step -------------------------------------------------------
def _clocks(monkeypatch, cpu):
    """Every step late by its wall time (each read moves the clock 1 ms: over any gate here,
    far under the watchdog's _WATCH_AFTER), with the thread's CPU time ``cpu``: "under"
    (it never moves), "over" (each read moves it 1 s) or "real" (time.thread_time)."""
    wall = [0.0]

    def wall_now():
        wall[0] += 1e-3
        return wall[0]

    monkeypatch.setattr(linear_module, "perf_counter", wall_now)
    if cpu != "real":
        spent = [0.0]

        def cpu_now():
            spent[0] += 0.0 if cpu == "under" else 1.0
            return spent[0]

        monkeypatch.setattr(linear_module, "thread_time", cpu_now)
    monkeypatch.setattr(linear_module, "_CPU_PROOF", True)  # what Linux does, anywhere


def _spy_late(monkeypatch):
    """Count the steps a linear run decides by counting (what bench_agent.py counts)."""
    late: list[int] = []
    counted = linear_module._Linear._counted

    def spy(self):
        late.append(len(self.completions) - 1)
        return counted(self)

    monkeypatch.setattr(linear_module._Linear, "_counted", spy)
    return late


SCRIPT = ["3", "5", "1", "7", "0"]


def test_a_late_step_whose_cpu_time_is_under_the_gate_is_not_counted(monkeypatch):
    _clocks(monkeypatch, "under")
    late = _spy_late(monkeypatch)
    trace = run(agent_machine(summer), ScriptedModel(SCRIPT))
    assert late == []  # no shadow ran: every step proved within budget by its CPU time
    monkeypatch.undo()
    assert same_steps(trace, run(step_by_step(agent_machine(summer)), ScriptedModel(SCRIPT)))


def test_a_late_step_whose_cpu_time_is_over_the_gate_is_counted(monkeypatch):
    _clocks(monkeypatch, "over")
    late = _spy_late(monkeypatch)
    trace = run(agent_machine(summer), ScriptedModel(SCRIPT))
    assert late == [0, 1, 2, 3, 4]  # every step, decided on the shadow
    monkeypatch.undo()
    assert same_steps(trace, run(step_by_step(agent_machine(summer)), ScriptedModel(SCRIPT)))


@pytest.mark.parametrize("cpu", ["under", "over", "real", None])
def test_the_clocks_decide_only_when_a_step_is_counted_never_the_trace(monkeypatch, cpu):
    # None: the real clocks. Within budget, the trace is the stepped run's whatever the
    # clocks say; a step that loops past a small budget ends the run with DIVERGE whenever
    # the thread's CPU clock is honest (a CPU clock that says a 4,000-line step took no
    # time is what the proof must trust, as the gate trusts the wall clock).
    if cpu is not None:
        _clocks(monkeypatch, cpu)
    within = run(agent_machine(summer), ScriptedModel(SCRIPT))
    diverging = ["1", "2000", "0"]
    past = (
        None
        if cpu == "under"
        else run(agent_machine(summer, line_budget=300), ScriptedModel(diverging))
    )
    monkeypatch.undo()
    assert same_steps(within, run(step_by_step(agent_machine(summer)), ScriptedModel(SCRIPT)))
    if past is not None:
        stepped = run(
            step_by_step(agent_machine(summer, line_budget=300)), ScriptedModel(diverging)
        )
        assert past.end is DIVERGE and same_steps(past, stepped)
        assert [s.outcome for s in past.steps][-1] is DIVERGE


def test_a_late_step_of_an_asyncio_agent_is_counted_outside_the_agents_loop(monkeypatch):
    # The shadow run that counts a late step starts the agent again, asyncio.run included,
    # from inside the agent's model call: the agent's running loop must be hidden there too
    # (it was not: the shadow's asyncio.run refused, and the run called the agent
    # not deterministic).
    _clocks(monkeypatch, "over")
    late = _spy_late(monkeypatch)
    trace = run(agent_machine(async_agent), ScriptedModel(["a", "b", "c"]))
    assert late == [0, 1, 2]
    monkeypatch.undo()
    stepped = run(step_by_step(agent_machine(async_agent)), ScriptedModel(["a", "b", "c"]))
    assert same_steps(trace, stepped) and trace.end is HALT and trace.message is None


# -- the stack an agent sees: the same in every path, from any caller ----------------------------


def deep_then_stack(model):
    """Recurses as deep as the model says, then reports whether that raised RecursionError
    and how many frames its own stack holds (the agent function's caller included)."""
    k = int(model("how deep?"))

    def down(n):
        return 0 if n == 0 else 1 + down(n - 1)

    try:
        down(k)
        outcome = "ok"
    except RecursionError:
        outcome = "recursion"
    frames, f = 0, sys._getframe()
    while f is not None:
        frames, f = frames + 1, f.f_back
    return outcome, frames


def from_depth(n, f):
    """``f()`` called ``n`` frames deeper than here."""
    return f() if n == 0 else from_depth(n - 1, f)


def ran(machine, depth, script):
    """What ``machine``'s run with ``script`` returned, run() called ``depth`` frames deeper."""
    trace = from_depth(depth, lambda: run(machine, ScriptedModel(script)))
    assert trace.end is HALT
    return machine.result(trace.steps[-1].state, trace.steps[-1].completion)


def h_result(machine, completion):
    """h(initial, completion) and what the agent returned there."""
    assert machine.harness(machine.initial, completion) is HALT
    return machine.result(machine.initial, completion)


@pytest.mark.parametrize("budget", [1_000_000, None], ids=["budget", "no-budget"])
def test_an_agent_sees_the_same_stack_in_every_path_whatever_the_callers_depth(budget):
    # The outermost run's greenlet calls the agent at depth _RUN_DEPTH + 1 (its own first
    # frame at _RUN_DEPTH), down(k)'s frames start one deeper: 40 short of the limit from
    # there succeeds, and failed on the linear path, which called the agent on the
    # caller's stack behind pytest's and from_depth's frames.
    k = str(sys.getrecursionlimit() - agent_module._RUN_DEPTH - 40)
    seen = {}
    for depth in (0, 100, 300):
        linear = ran(agent_machine(deep_then_stack, line_budget=budget), depth, [k])
        stepped = ran(step_by_step(agent_machine(deep_then_stack, line_budget=budget)), depth, [k])
        m = agent_machine(deep_then_stack, line_budget=budget)  # its first run starts here
        cached = from_depth(depth, lambda m=m: h_result(m, k))
        m._live.clear()  # h now replays from the start, in a greenlet started from `depth`
        m._results.clear()
        replayed = from_depth(depth, lambda m=m: h_result(m, k))
        seen[depth] = {"linear": linear, "stepped": stepped, "cached": cached, "replayed": replayed}
    expected = {
        "linear": ("ok", 2),
        "stepped": ("ok", 2),
        "cached": ("ok", 2),
        "replayed": ("ok", 2),
    }
    assert seen == {0: expected, 100: expected, 300: expected}


def deepest(model, slow):
    """How many frames deep the agent can go from here (each frame catches RecursionError),
    after one step; ``slow``: a loop after it, so that a linear run's step is late."""
    model("go?")

    def probe(n):
        try:
            return probe(n + 1)
        except RecursionError:
            return n

    reached = probe(1)
    for _ in range(slow):
        pass
    return reached


@pytest.mark.parametrize("budget", [100_000_000, None], ids=["budget", "no-budget"])
def test_an_agent_reaches_the_same_depth_counted_or_not(budget, monkeypatch):
    # A counted step's tracer is called one frame below the deepest frame, so it reached one
    # frame less than the linear run's untraced step: the depth differed with the clock.
    fast = ran(agent_machine(deepest, 0, line_budget=budget), 0, ["x"])
    stepped = ran(step_by_step(agent_machine(deepest, 0, line_budget=budget)), 0, ["x"])
    m = agent_machine(deepest, 0, line_budget=budget)
    h = h_result(m, "x")
    monkeypatch.setattr(linear_module, "_FASTEST_LINE", 0.0)  # every step is late: counted
    late = ran(agent_machine(deepest, 0, line_budget=budget), 0, ["x"])
    assert fast == late == stepped == h
    assert fast > sys.getrecursionlimit() - agent_module._RUN_DEPTH - 10


def _python(code, timeout=240):
    """Run ``code`` in a fresh interpreter (its first run makes the first probe of the
    process; a crash is a signal, not a failed assertion here); returns its output."""
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    return proc.stdout.split()


def test_the_first_stack_probe_leaves_an_enclosing_line_budget_counting():
    # The probe recursed to RecursionError under the budget's tracer, which CPython then
    # switched off: the budget stopped counting, and the failed probe was kept for good.
    out = _python(
        """
        from agentic_machines import agent_machine, run
        from agentic_machines.errors import BudgetExceeded
        from agentic_machines.execution.budget import LineBudget
        from agentic_machines.models import ScriptedModel
        from agentic_machines.runtime import agent
        try:
            with LineBudget(100_000):
                run(agent_machine(lambda model: model("?")), ScriptedModel(["x"]))
                for i in range(1_000_000):
                    pass
            print("not-stopped")
        except BudgetExceeded:
            print("stopped")
        print(agent._STACK[0] is not None and agent._STACK[0] is not agent._NOT_NOW)
        """
    )
    assert out == ["stopped", "True"]


NESTED = """
import sys
from agentic_machines import agent_machine, run
from agentic_machines.models import ScriptedModel

def agent(model):  # runs the machine again in its step, without end
    model("go?")
    m = agent_machine(agent, line_budget=None)
    if KIND == "stepped":
        m.step_timeout = 3600.0
    if KIND == "harness":
        return m.harness(m.initial, "x"), m.result(m.initial, "x")
    return run(m, ScriptedModel(["x"])).end

def down(n, k):  # n frames deeper, each through C (map), then a run nested k deep
    return inner(k) if n == 0 else list(map(lambda x: down(x, k), [n - 1]))[0]

def inner(k):
    if k == 0:
        return "bottom"
    m = agent_machine(through_c, k - 1, line_budget=None)
    trace = run(m, ScriptedModel(["x"]))
    return m.result(trace.steps[-1].state, trace.steps[-1].completion)

def through_c(model, k):
    model("go?")
    try:
        return down(300, k)
    except RecursionError:
        return "recursion"

for KIND in ("linear", "stepped", "harness"):
    m = agent_machine(agent, line_budget=None)
    if KIND == "stepped":
        m.step_timeout = 3600.0
    try:
        if KIND == "harness":
            print(KIND, m.harness(m.initial, "x"))
        else:
            print(KIND, run(m, ScriptedModel(["x"])).end)
    except RecursionError:
        print(KIND, "RecursionError")
m = agent_machine(through_c, 60, line_budget=None)
print(m.harness(m.initial, "x"), m.result(m.initial, "x"))
"""


def test_runs_nested_to_exhaustion_end_in_an_outcome_not_a_crash():
    # Every nested run reset the recursion count, CPython 3.11's only C-stack guard: an
    # agent that runs a machine in its step without end, or sixty nested runs that each
    # recursed 300 frames through C, overflowed the C stack (SIGSEGV).
    out = _python(NESTED)
    assert out == ["linear", "1", "stepped", "1", "harness", "1", "1", "recursion"], out


def test_a_model_call_from_a_greenlet_of_the_agents_own_is_refused_on_every_path():
    # The linear run's model() checked only the thread: a call from a greenlet the agent
    # made went through (4 steps), where h refuses it (RuntimeError, an outcome).
    from greenlet import greenlet  # only this test makes a greenlet of the agent's own

    def in_a_greenlet(model):
        first = model("first?")
        return greenlet(lambda: first + model("next?")).switch()

    linear = run(agent_machine(in_a_greenlet), ScriptedModel(["a", "b"]))
    stepped = run(step_by_step(agent_machine(in_a_greenlet)), ScriptedModel(["a", "b"]))
    assert same_steps(linear, stepped) and len(linear.steps) == 1 and linear.end is HALT
    assert linear.message == stepped.message
    assert linear.message.startswith("raised RuntimeError: the agent called its model from")
    m = agent_machine(in_a_greenlet)
    assert m.harness(m.initial, "a") is HALT
    assert m.raised(m.initial, "a").type == "RuntimeError"


def test_an_agent_that_raises_greenlet_exit_raised_on_every_path():
    # A greenlet takes a GreenletExit raised out of it for a return: the linear run returned
    # it as the agent's value, and h failed on it (TypeError). It is the agent's exception.
    from greenlet import GreenletExit  # only this test raises it

    def exits(model):
        model("?")
        raise GreenletExit("mine")

    expected = agent_module.AgentRaised("GreenletExit", "mine")
    for machine in (agent_machine(exits), step_by_step(agent_machine(exits))):
        trace = run(machine, ScriptedModel(["x"]))
        last = trace.steps[-1]
        assert trace.end is HALT and machine.result(last.state, last.completion) == expected
    m = agent_machine(exits)
    assert m.harness(m.initial, "x") is HALT and m.raised(m.initial, "x") == expected
