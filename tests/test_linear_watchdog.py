"""The linear run's watchdog stops a step that never calls the model again, wherever its
raise lands (runtime/linear.py: ``_alarm``, ``_check``, ``_acknowledge``).

CPython swallows an exception raised inside a ``gc.callbacks`` entry, a ``__del__`` or a
weakref callback. A watchdog that raised once and then stood down lost its raise when it
landed there, and a step that loops forever ran forever instead of ending in DIVERGE: an
agent that makes cyclic garbage in its endless loop met the raise inside the run's own
collector callback in most runs (a review found 3 of 4 runs hung off the main thread).
The alarm (main thread) raises again at every tick until the run takes the raise and
skips the run's own frames where a raise would be lost; both watchdogs stop timing
collections once they fire. The watchdog thread cannot raise again at will (a raise sent
to a thread cannot be withdrawn, and two pending would reach the run's own code): it
raised once, so off the main thread an agent whose endless loop runs a ``__del__`` at
every turn ran forever when the raise landed in that finalizer. It now raises again once
``sys.unraisablehook`` reports the last raise swallowed, never where the agent's thread
is inside a function that swallowed one (``_note_swallowed``, ``_check``); a raise still
on its way when the step ends is replaced by one delivered in the run (``_disarm``), never
cleared. The end-to-end runs go in a subprocess with a timeout, so a regression fails
instead of hanging the suite.
"""

from __future__ import annotations

import contextvars
import signal
import subprocess
import sys
import textwrap
import threading
import types
from pathlib import Path

import pytest

from agentic_machines import agent_machine
from agentic_machines.runtime import linear
from agentic_machines.runtime.agent import _CURRENT
from agentic_machines.runtime.linear import _Linear, _Recheck
from agentic_machines.runtime.run import Trace

ROOT = Path(__file__).resolve().parent.parent

ENDLESS = """
import threading
from agentic_machines import DIVERGE, agent_machine, run
from agentic_machines.models import ScriptedModel

class Finalized:
    def __del__(self):  # most of each turn's instructions: a raise mostly lands in here
        for _ in range(1000):
            pass

def garbage(model):  # the loop mostly collects: a raise lands in the collector's callback
    model("go?")
    while True:
        a = []
        a.append(a)

def finalizers(model):  # each object's __del__ runs as the loop goes
    model("go?")
    while True:
        Finalized()

def go(agent, out):
    out.append(run(agent_machine(agent), ScriptedModel(["x"])).end is DIVERGE)

for agent in (garbage, finalizers):
    out = []
    if {off_main}:
        t = threading.Thread(target=go, args=(agent, out), daemon=True)
        t.start()
        t.join(120)  # stops a hang (the run never ended): it asserts nothing about speed
    else:
        go(agent, out)
    print(agent.__name__, out)
"""


@pytest.mark.parametrize("off_main", [False, True], ids=["alarm", "watchdog-thread"])
def test_an_endless_step_ends_in_diverge_whatever_the_collector_does(off_main):
    code = textwrap.dedent(ENDLESS).format(off_main=off_main)
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["garbage [True]", "finalizers [True]"], proc.stdout
    # A raise swallowed is reported on stderr. The agent's own __del__ may swallow one (the
    # next tick raises again), but none may be made in the run's own collector callback.
    assert "Exception ignored in: <bound method _Linear" not in proc.stderr, proc.stderr


def _armed_run(monkeypatch) -> _Linear:
    m = agent_machine(lambda model: model("?"))
    trace = Trace(machine="x", start=m.initial, max_steps=5)
    run = _Linear(m, trace, str.upper, None, None)
    run.armed, run.t0 = True, 0.0  # a step running since time 0: long overdue
    monkeypatch.setattr(linear, "perf_counter", lambda: 10.0)
    return run


class _Frame:
    def __init__(self, code, back=None):
        self.f_code, self.f_back = code, back


def test_the_alarm_raises_at_every_tick_until_the_run_takes_the_raise(monkeypatch):
    run = _armed_run(monkeypatch)
    agent_frame = _Frame((lambda: None).__code__)
    for _ in range(3):  # a raise that was swallowed does not stand the watchdog down
        with pytest.raises(_Recheck):
            run._alarm(signal.SIGALRM, agent_frame)
        assert run.armed
    run._acknowledge()
    assert not run.armed
    run._alarm(signal.SIGALRM, agent_frame)  # taken: no more raises


def test_the_alarm_does_not_raise_where_the_raise_would_be_lost(monkeypatch):
    run = _armed_run(monkeypatch)
    for quiet in (_Linear._gc, _Linear.go, _Linear._acknowledge):
        run._alarm(signal.SIGALRM, _Frame(quiet.__code__))  # the next tick comes instead
        assert run.armed


# -- the watchdog thread ----------------------------------------------------------------------------


def _thread_run(monkeypatch, where):
    """An overdue run watched from a thread, whose agent's thread is at frame ``where``;
    returns it and the list of the raises its watchdog sent."""
    run = _armed_run(monkeypatch)
    run.lock = threading.Lock()
    sent = []
    monkeypatch.setattr(linear, "_ASYNC", [lambda thread, exc: sent.append((thread, exc))])
    monkeypatch.setattr(sys, "_current_frames", lambda: {run.thread: where[0]})
    return run, sent


def _swallow(run, monkeypatch):
    """Report to the hook, in ``run``'s context, a _Recheck that a finalizer swallowed, as
    CPython does; returns the finalizer's code."""

    def finalizer():
        raise _Recheck

    try:
        finalizer()
    except _Recheck as exc:
        swallowed = exc
    tb = swallowed.__traceback__.tb_next  # CPython's report starts at the finalizer's frame
    unraisable = types.SimpleNamespace(exc_type=_Recheck, exc_value=swallowed, exc_traceback=tb)
    reported = []
    monkeypatch.setattr(linear, "_chained", [reported.append])

    def in_context():
        _CURRENT.set(run)
        linear._note_swallowed(unraisable)

    contextvars.copy_context().run(in_context)
    assert reported == [unraisable]  # passed on to the hook before, as it would have been
    return finalizer.__code__


def test_the_watchdog_thread_raises_again_only_once_the_last_raise_was_swallowed(monkeypatch):
    agent = _Frame((lambda: None).__code__)
    where = [agent]
    run, sent = _thread_run(monkeypatch, where)
    assert run._check() is False and sent == [(run.thread, _Recheck)]
    for _ in range(3):  # pending, or on its way to go(): never a second one
        run._check()
    assert len(sent) == 1
    lost = _swallow(run, monkeypatch)  # CPython swallowed it in a finalizer
    assert run.swallowed and lost in run.lost
    where[0] = _Frame((lambda: None).__code__, _Frame(lost, agent))  # inside the finalizer
    assert run._check() is True and len(sent) == 1  # held back: look again soon
    where[0] = agent  # the agent's own loop: the raise lands where the run takes it
    assert run._check() is False and len(sent) == 2 and not run.swallowed
    run._acknowledge()
    _swallow(run, monkeypatch)
    assert run._check() is False and len(sent) == 2  # taken: no more raises


def test_a_hook_chain_that_leads_back_to_the_runs_hook_reports_once(monkeypatch):
    # The line budget's hook chains to whatever hook it found; when that was the run's,
    # installed over the budget's, the chain leads back: reported once, by CPython's hook.
    printed = []
    monkeypatch.setattr(sys, "__unraisablehook__", printed.append)
    monkeypatch.setattr(linear, "_chained", [lambda u: linear._note_swallowed(u)])
    report = types.SimpleNamespace(exc_type=ValueError, exc_value=ValueError(), exc_traceback=None)
    linear._note_swallowed(report)
    assert printed == [report]


def test_a_step_that_ends_after_a_raise_was_sent_takes_a_raise_in_the_run(monkeypatch):
    # The raise sent may still be pending: it is never withdrawn, but replaced by one sent
    # to this thread and delivered inside _disarm (where the run's handler takes it).
    run, sent = _thread_run(monkeypatch, [_Frame((lambda: None).__code__)])
    run._check()
    assert sent and run.fired
    run.thread = threading.get_ident()
    monkeypatch.setattr(linear, "_ASYNC", [linear._async_raiser()])
    with pytest.raises(_Recheck):
        run._disarm()
    assert run.stopped and not run.armed and not run.fired


# -- the line budget and finalizers (execution/budget.py) ----------------------------------------


def test_a_budget_spent_inside_a_finalizer_still_stops_the_loop_after_it():
    code = textwrap.dedent(
        """
        from agentic_machines.execution.budget import BudgetExceeded, LineBudget

        class Heavy:
            def __del__(self):
                total = 0
                for i in range(5000):
                    total += i

        try:
            with LineBudget(2000):
                h = Heavy()
                del h  # the budget runs out inside __del__, where CPython swallows it
                while True:
                    pass
        except BudgetExceeded:
            print("stopped")
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.stdout.strip() == "stopped", (proc.stdout, proc.stderr)
    assert "Exception ignored" not in proc.stderr, proc.stderr


ENDLESS_TWICE = """
import sys, threading
from concurrent.futures import ThreadPoolExecutor
from agentic_machines import DIVERGE, agent_machine, run
from agentic_machines.models import ScriptedModel

class Endless:
    def __del__(self):
        while True:
            pass

def twice(model):  # two finalizers that never end: the first swallows the watchdog's raise
    model("go?")
    Endless()
    Endless()
    return "done"

def from_a_worker(model):  # a tool's thread calls the model once the step is overdue
    model("go?")
    with ThreadPoolExecutor(1) as pool:
        try:
            return pool.submit(lambda: (time.sleep(0.7), model("again?"))[1]).result()
        except RuntimeError:
            return "refused"

import time

def go(agent, stepped, out):
    m = agent_machine(agent, line_budget=100_000)
    if stepped:
        m.step_timeout = 3600.0
    t = run(m, ScriptedModel(["x", "y"]))
    s = t.steps[-1]
    out.append("DIVERGE" if t.end is DIVERGE else m.result(s.state, s.completion))

for agent in (twice, from_a_worker):
    for stepped in (True, False):
        out = []
        t = threading.Thread(target=go, args=(agent, stepped, out), daemon=True)
        t.start()
        t.join(100)  # stops a hang (the run never ended): it asserts nothing about speed
        print(agent.__name__, "stepped" if stepped else "linear", out)
out = []
go(twice, False, out)  # in the main thread (the alarm), after runs watched from a thread
print("twice main", out)
"""


def test_off_the_main_thread_a_step_ends_whatever_its_finalizers_and_workers_do():
    # The watchdog thread held back for ever inside the second of two endless __del__s (the
    # first had swallowed its raise, and the function was marked lost); and a tool's thread
    # that called model() once the watchdog had fired spun for ever in it (the process
    # never exited: the pool joins its thread). The runs after them in the main thread
    # held back too (the alarm took the marks of the thread-watched run).
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(ENDLESS_TWICE)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines() == [
        "twice stepped ['DIVERGE']",
        "twice linear ['DIVERGE']",
        "from_a_worker stepped ['refused']",
        "from_a_worker linear ['refused']",
        "twice main ['DIVERGE']",
    ], proc.stdout
