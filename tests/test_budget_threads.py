"""A line budget counts the lines of its own thread only
(agentic_machines/execution/budget.py), so the same machine gives the same outcome
whether or not another thread runs budgeted code at the same time.

``sys.settrace`` is per thread, but the budget's count, deadline and active budgets were
once the process's: two agent runs in two threads charged each other's lines, and an agent
that halts after a few steps alone diverged early when a copy of it ran beside it. Here two
threads run the same budgeted computation at once (both inside their budgets together, the
interpreter switching between them every 10 µs) and each must count exactly what it counts
alone: a bare budget, and ``run()`` of an inline agent, stepped and watched. A spent or
abandoned budget of one thread (a thread that ended inside it, a step thread left blocked)
must not stop or slow another thread either, and the process-wide hooks (the unraisable
hook, the collector's callbacks) stay in while any thread has a budget, and only then.
"""

from __future__ import annotations

import gc
import queue
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from agentic_machines import DIVERGE, HALT, agent_machine, run
from agentic_machines.errors import BudgetExceeded
from agentic_machines.execution.budget import LineBudget, checkpoint
from agentic_machines.models import ScriptedModel

ROOT = Path(__file__).resolve().parent.parent
TURNS = 9_900  # two lines a turn: a step uses 19_800 and a few lines of its 20_000
LIMIT = 20_000
STEPS = 8


@pytest.fixture
def interleaved():
    """Switch threads every 10 µs (a step of thousands of lines is cut many times)."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def _together(fn, *args) -> list:
    """``fn(mine, theirs, *args)`` in two threads at once, their results in thread order;
    ``mine``/``theirs`` are C queues (no Python line) the two use to meet."""
    a, b = queue.SimpleQueue(), queue.SimpleQueue()
    results: list = [None, None]
    errors: list[BaseException] = []

    def one(i: int, mine, theirs) -> None:
        try:
            results[i] = fn(mine, theirs, *args)
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            errors.append(exc)

    threads = [
        threading.Thread(target=one, args=(0, a, b)),
        threading.Thread(target=one, args=(1, b, a)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert not any(t.is_alive() for t in threads)
    return results


def _alone(fn, *args):
    """``fn`` as :func:`_together` calls it, with no one to meet (its queue meets itself)."""
    q = queue.SimpleQueue()
    return fn(q, q, *args)


def _counted(mine, theirs, turns: int) -> int:
    with LineBudget(10 * turns) as b:
        mine.put(None)
        theirs.get(timeout=60)  # from here both threads are inside their budgets
        total = 0
        for i in range(turns):
            total += i
    return b.used


def test_two_threads_each_count_only_their_own_lines(interleaved):
    alone = _alone(_counted, 20_000)
    assert alone >= 40_000
    assert _together(_counted, 20_000) == [alone, alone]


def _agent(model):
    n = 0
    while True:
        answer = model(f"step {n}?")
        total = 0
        for i in range(TURNS if n < STEPS else 2 * TURNS):  # the last step runs over
            total += i
        n += 1
        if answer == "stop":
            return n


class _Meeting(ScriptedModel):
    """A scripted model that, before its first answer, meets the other thread's model."""

    def __init__(self, script, mine, theirs):
        super().__init__(script)
        self.mine, self.theirs, self.met = mine, theirs, False

    def complete(self, prompt: str) -> str:
        if not self.met:
            self.met = True
            self.mine.put(None)
            self.theirs.get(timeout=60)
        return super().complete(prompt)


def _outcome(mine, theirs, path: str):
    timeout = 3600.0 if path == "watched" else None  # "watched": steps in a thread of their own
    m = agent_machine(_agent, line_budget=LIMIT, isolation="inline", step_timeout=timeout)
    t = run(m, _Meeting(["go"] * STEPS + ["stop"], mine, theirs), max_steps=STEPS + 5)
    return ("HALT" if t.end is HALT else "DIVERGE" if t.end is DIVERGE else t.end, len(t))


@pytest.mark.parametrize("path", ["stepped", "watched"])
def test_two_agent_runs_at_once_end_as_each_does_alone(interleaved, path):
    # Each step but the last uses nearly all of its budget: a line of the other run
    # charged to it would make it diverge early, and a run whose lines went uncounted
    # would not diverge at its last step (the first run to enter a budget once switched
    # tracing on for its own thread only, and the other ran uncounted).
    alone = _alone(_outcome, path)
    assert alone == ("DIVERGE", STEPS + 1)
    assert _together(_outcome, path) == [alone, alone]


def test_a_budget_spent_in_one_thread_does_not_stop_another():
    spent, checked = queue.SimpleQueue(), queue.SimpleQueue()
    outcome: list = []

    def spend() -> None:
        with LineBudget(50) as b:
            try:
                while True:
                    pass
            except BudgetExceeded:
                spent.put(None)
                checked.get(timeout=60)  # still inside the spent budget meanwhile
        outcome.append(b.exhausted)

    other = threading.Thread(target=spend)
    other.start()
    spent.get(timeout=60)
    try:
        checkpoint()  # no budget of this thread
        with LineBudget(10_000) as mine:
            checkpoint()
            total = 0
            for i in range(100):
                total += i
            checkpoint()
    finally:
        checked.put(None)
        other.join(60)
    assert outcome == [True]
    assert not mine.exhausted and mine.used >= 200


def _loop_count() -> int:
    with LineBudget(10_000) as b:
        total = 0
        for i in range(1_000):
            total += i
    return b.used


def test_a_thread_that_ends_inside_a_budget_leaves_other_threads_alone():
    # An abandoned step thread (a blocked tool) may end with its budget still entered; its
    # deadline, count and active budget must not reach any other thread.
    hooks = gc.callbacks[:], sys.unraisablehook
    alone = _loop_count()
    assert alone >= 2_000  # the loop's lines, counted

    def abandon() -> None:
        LineBudget(100).__enter__()  # never left
        total = 0
        for i in range(20):
            total += i

    gone = threading.Thread(target=abandon)
    gone.start()
    gone.join(60)
    assert not gone.is_alive()
    assert _loop_count() == alone
    checkpoint()
    # Its thread-local state went with it: the process-wide hooks are out again.
    assert (gc.callbacks[:], sys.unraisablehook) == hooks


def test_an_abandoned_step_threads_budget_leaves_other_threads_alone():
    # Off the main thread a run's steps run in a step thread; a step that blocks past
    # step_timeout is the clock's outcome and its thread is abandoned, still inside the
    # step's budget. The main thread's budgets must count as if it did not exist.
    inside, release = threading.Event(), threading.Event()
    ended: list = []

    def blocks(model):
        model("first?")
        inside.set()
        release.wait(60)  # a tool that blocks
        model("second?")

    def run_elsewhere() -> None:
        m = agent_machine(blocks, line_budget=10**6, isolation="inline", step_timeout=0.5)
        try:
            ended.append(run(m, ScriptedModel(["go", "go"])).end)
        except Exception as exc:  # noqa: BLE001 - the clock's outcome, however reported
            ended.append(type(exc).__name__)

    alone = _loop_count()
    assert alone >= 2_000  # the loop's lines, counted
    caller = threading.Thread(target=run_elsewhere)
    caller.start()
    try:
        assert inside.wait(60)
        caller.join(60)  # the run has given up on the blocked step
        assert ended and not caller.is_alive()
        assert _loop_count() == alone
        checkpoint()
    finally:
        release.set()


HOOKS = """
import gc, queue, sys, threading
from agentic_machines.errors import BudgetExceeded
from agentic_machines.execution import budget
from agentic_machines.execution.budget import LineBudget

entered, leave = queue.SimpleQueue(), queue.SimpleQueue()

def first():
    with LineBudget(10**6):  # the budget that put the hooks in
        entered.put(None)
        leave.get(timeout=60)

class Spends:
    def __del__(self):
        while True:
            pass

before = gc.callbacks[:], sys.unraisablehook
other = threading.Thread(target=first)
other.start()
entered.get(timeout=60)
out = []
try:
    with LineBudget(5_000):
        leave.put(None)
        other.join(60)  # the thread that put the hooks in has left its budget and ended
        out.append(gc.callbacks[:1] == [budget._gc_first] and sys.unraisablehook is budget._unraisable)
        Spends()  # freed at once: the budget is spent in __del__, and CPython swallows that
        while True:  # the hook switched this thread's counting back on: the loop is stopped
            x = 1
except BudgetExceeded:
    out.append("stopped")
out.append((gc.callbacks[:], sys.unraisablehook) == before)
print(out)
"""


def test_the_process_hooks_stay_while_any_thread_has_a_budget():
    # The thread that entered the first budget leaves first: the unraisable hook must stay
    # for the other, whose budget is then spent inside a __del__ (CPython swallows the
    # raise and switches the tracer off; the hook switches it back on, in the thread that
    # swallowed it). Without the hook the loop after it would never end: a subprocess.
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(HOOKS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str([True, "stopped", True]), (proc.stdout, proc.stderr)
