"""The linear run's watchdog stops a step that never calls the model again, wherever its
raise lands (runtime/linear.py: ``_alarm``, ``_check``, ``_acknowledge``).

CPython swallows an exception raised inside a ``gc.callbacks`` entry, a ``__del__`` or a
weakref callback. A watchdog that raised once and then stood down lost its raise when it
landed there, and a step that loops forever ran forever instead of ending in DIVERGE: an
agent that makes cyclic garbage in its endless loop met the raise inside the run's own
collector callback in most runs (a review found 3 of 4 runs hung off the main thread).
The alarm (main thread) now raises again at every tick until the run takes the raise and
skips the run's own frames where a raise would be lost; the watchdog thread raises once,
only when the agent's thread is not in those frames; both stop timing collections once
they fire. The end-to-end runs go in a subprocess with a timeout, so a regression fails
instead of hanging the suite.

Not covered, because it does not hold yet: off the main thread, an agent whose endless
loop runs a ``__del__`` at every turn can still run forever (the watchdog thread's one
raise lands in a finalizer and is swallowed, and the loop never calls the model again).
A step whose raise was swallowed but which then calls the model is counted on the shadow
run (tests/test_budget_collections.py); that counted run used to hang at its first traced
call, because the pending raise was withdrawn with ``PyThreadState_SetAsyncExc(NULL)``.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentic_machines import agent_machine
from agentic_machines.runtime import linear
from agentic_machines.runtime.linear import _Linear, _Recheck
from agentic_machines.runtime.run import Trace

ROOT = Path(__file__).resolve().parent.parent

ENDLESS = """
import threading
from agentic_machines import DIVERGE, agent_machine, run
from agentic_machines.models import ScriptedModel

class Finalized:
    def __del__(self):
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

for agent in (garbage, finalizers) if not {off_main} else (garbage,):
    out = []
    if {off_main}:
        t = threading.Thread(target=go, args=(agent, out), daemon=True)
        t.start()
        t.join(60)
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
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr
    expected = ["garbage [True]"] if off_main else ["garbage [True]", "finalizers [True]"]
    assert proc.stdout.splitlines() == expected, proc.stdout
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
    def __init__(self, code):
        self.f_code = code


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
