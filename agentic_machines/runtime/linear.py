"""run()'s linear path for an agent function: the function called once, its steps untraced.

:func:`~agentic_machines.runtime.run.run` of an
:class:`~agentic_machines.runtime.agent.AgentMachine` from its initial state comes here
(:func:`runs_linearly`, :func:`run_linear`) and makes the trace the step-by-step path
(``h``, through the machine's greenlet, every line counted) would make, at a fraction of
its cost: it calls the function once, with a model function that asks the real model
and records the step, and runs each step *untraced*. Counting lines with
``sys.settrace`` costs several times the agent's own work, so it is done only where it
can change an outcome.

Why an untraced step's outcome is the counted one: no CPython runs a counted line in
less than ``_FASTEST_LINE`` (0.05 ns: each line is at least one bytecode instruction,
which takes several CPU cycles; no core runs at 20 GHz), and wall-clock time only grows
with load or blocking, so a step that returned within ``line_budget * _FASTEST_LINE``
seconds (50 µs for the default budget) certainly ran fewer lines than its budget. Every
other step is decided by counting, exactly as ``h`` decides it: a *shadow* run of the
function, in a greenlet, catches up (uncounted) through the steps already decided and
runs that step with every line counted, frames that were already running included; if
it agrees, the untraced run goes on, otherwise its outcome (``DIVERGE``) ends the run. A
step still running untraced after ``_WATCH_AFTER`` seconds (a loop that never calls the
model again) is stopped by a watchdog and decided the same way: in the main thread an
interval ``SIGALRM`` whose handler runs in the agent's own thread (so ending a step's
clock takes no lock), elsewhere, or when ``SIGALRM`` is taken, a watchdog thread. The
agent's own code may take ``SIGALRM`` during the run (a tool with a timeout): each step
boundary checks that the handler is still the run's (one C call), and the run then
leaves ``SIGALRM`` to the agent and watches from a thread for the rest of the run; a
timer the agent cancelled under the run's handler is made up for by a sentinel thread
that signals the agent's thread itself when a step is long overdue. A raise can land
where CPython swallows it (a ``__del__``, a weakref callback, a ``gc.callbacks`` entry):
the alarm raises again at every tick until the run takes it; the watchdog thread, whose
raise cannot be withdrawn once sent, raises again when ``sys.unraisablehook`` reports the
last one swallowed, and holds back while the agent's thread is inside a function that
swallowed one, for at most ``_HOLD`` looks in a row (another call of it may never end)
(``_Linear._check``, ``_note_swallowed``). The agent's ``model`` is refused to any
caller but the agent's own greenlet (another thread, a greenlet the agent made), as
``h`` refuses it, before the step's clock is touched. So the clock decides only *when* lines
are counted, never an outcome: the same machine gives the same trace on a quiet machine
and a busy one. A run with a step to count replays the function once (the shadow), so
tools with side effects need :func:`~agentic_machines.runtime.agent.effect` there too; a step the watchdog stopped (a
tool that blocks for long, say) is run again on the shadow, and the run goes on step by
step from there.

Two causes of late steps are taken out of a step's time, each only where it provably ran
none of the step's lines. The last step ends when the agent returns, and CPython frees the
agent's locals as its frame returns: a long run's history (ten thousand observations, say)
takes 60-400 µs to free, which made the last step of every long run late, and counting it
costs one more run of the whole function. So the run holds the agent's outermost frame
from its first model call on (``_Linear._hold``): a frame object with another reference
takes the locals over at the return instead of freeing them, the clock stops, and only
then are they freed, under a profile hook; when no Python frame started meanwhile (every
function, generator or finalizer starts with a ``call`` event; freeing objects in C runs
no line) the step's lines all ran within its clock, otherwise (a ``__del__``, a weakref
callback) the step is counted. And the cyclic garbage collector: an agent that keeps its
history as dicts makes over a hundred collections in a 10,000-step run, of 40 µs to a few
ms, and the step each lands in was late. A line budget charges no line run inside a
collection in its own thread (:mod:`agentic_machines.execution.budget`: the collector runs
when the process's allocations say so, so the finalizers it runs are no step's), and that
thread runs no line of the step while it is inside the collector. So the run times,
through ``gc.callbacks``, every collection that runs inside a step in the agent's own
thread (``_Linear._gc``) and takes its time off the step's before the gate, finalizers
and all; the budget's own entries run first and last in that list, so the timed window
lies inside what the budget charges to no one.

What stays late are steps the kernel stretched: a preemption (4-8 ms at the scheduler's
tick on a busy machine) or the agent's own page faults (a large list growing). Those are
tried once more on the thread's CPU time before they are counted (``_Linear._late``,
Linux only). A line runs only while its thread is on a CPU, so the thread's CPU time
bounds the lines a step ran exactly as its wall time does, and a preemption does not
stretch it. Reading it is a system call (about 1.5 µs here), too dear for every step, so
it is read at *checkpoints*: at a step's start, when more than a quarter of the gate of
wall time passed since the last checkpoint. A late step reads it once more at its end:
when the thread's CPU time since the last checkpoint is under the gate, the step ran
fewer lines than its budget and is not counted. The window holds the whole step: a
checkpoint is taken only at a step's start, before its first line, so the last one is at
or before this step's start; the window's other CPU time (earlier steps, the run's own
bookkeeping, the switches) only adds to it, which can make a step counted, never spare
it. And CPU time cannot undercount the step's lines: Linux's thread CPU clock is the
scheduler's runtime count of that thread, in nanoseconds, updated at every switch and at
every read; it leaves out only time the thread did not run (time stolen by the
hypervisor, interrupts), when none of its lines ran either. A line budget counts its own
thread's lines, and the window is that thread's. So, like the wall clock, the CPU clock
decides only when lines are counted.

The agent function sees the stack an ``h`` run gives it, wherever run() is called from.
Called on the caller's stack, it saw the caller's frames, :mod:`contextvars` context and
the exception being handled, and an agent that recursed near the recursion limit raised
RecursionError when run() was called deep in the caller's code and not at the top. So
the run calls it in a greenlet of its own (``_Linear._call``: one switch a run, none a
step). A greenlet inherits its thread's recursion count from where it starts (``h``'s
did too, from wherever a run was made or replayed), so every run's greenlet, ``h``'s and
this one, puts its first frame at the same fixed depth when it is the outermost run in
its thread, and keeps the count it inherits when it runs inside another run's agent (in
CPython 3.11 the count is the C stack's only guard: see ``agent._fresh_stack``). Under a
line budget this untraced greenlet starts one frame deeper than a counted one, since
the tracer of a counted step is called one frame below its deepest frame: every path
reaches the same depth. A greenlet keeps its thread, so the watchdogs are unchanged:
the alarm's handler runs between the agent's instructions, and a raise sent to the
thread lands in the greenlet running there.

A step records two strings, its prompt and its completion; the states and ``Step``
tuples of the trace are made when it is read (``Trace.steps``, the agent's result
through ``AgentMachine.result``), so a run costs the agent's own work plus a little
bookkeeping a step, and reading the trace costs what making it eagerly would have.
"""

from __future__ import annotations

import asyncio.events as _events
import functools
import gc
import signal
import sys
import threading

# _signal.getsignal (the C function behind signal.getsignal) returns the handler object in
# a tenth of a microsecond; signal.getsignal converts it through an enum, which costs
# microseconds, and a linear run asks at every step boundary.
from _signal import getsignal as _getsignal
from collections.abc import Callable
from sys import _getframe
from sys import getprofile as _getprofile
from sys import setprofile as _setprofile
from time import perf_counter, thread_time
from types import FrameType
from typing import Any

from greenlet import GreenletExit, getcurrent, greenlet

from ..errors import BudgetExceeded, ClockDependent, InvalidMachine
from ..execution import clock
from ..execution.budget import uncharged
from ..machine import DIVERGE, HALT, Outcome
from .agent import (
    _CURRENT,
    _DIVERGE,
    _PROMPT,
    _RAISE,
    _RETURN,
    AgentMachine,
    AgentRaised,
    _fresh_stack,
    _into,
    _Loop,
    _prompt_error,
    _Run,
    _thread_error,
)
from .harness import TraceState, _extend
from .model_base import ModelBase
from .tracefile import Step

__all__ = ["runs_linearly", "run_linear"]

_get_ident = threading.get_ident
_get_running_loop = _events._get_running_loop
_new_step = tuple.__new__  # a step (a NamedTuple) without its generated __new__

# No CPython runs a counted line (one line event, or one instruction of a one-line loop)
# in less than this many seconds: each is at least one bytecode instruction, whose
# dispatch alone takes a few CPU cycles, and no core runs at 20 GHz. So an untraced step
# that took less than line_budget * _FASTEST_LINE seconds of wall-clock time (which only
# load and blocking can stretch, never shrink) or of its thread's CPU time (see _late)
# certainly ran fewer lines than its budget: counting them would have given the same
# outcome.
#
# Measured (2026-12-01, CPython 3.11.7, 2.45 GHz AMD EPYC VM, min of 9-15 runs of 10^6
# iterations, the count taken from LineBudget itself): one line event a loop iteration
# (`for _ in repeat(None, n):` + `pass`, two counted lines) 4.7 ns a counted line; but a
# line budget counts every *instruction* of a loop that fits on one line, and there the
# cheapest counted unit is far cheaper: `x; x; ...` 1.9 ns, `a = 1; a = 2; ...` 1.8 ns,
# `a, b = c, d; ...` 1.19 ns (3.11's superinstructions LOAD_FAST__LOAD_FAST and
# STORE_FAST__STORE_FAST run two counted instructions in one dispatch): 2.9 cycles at
# 2.45 GHz. The fastest desktop cores of 2026 run such code 2-2.5x faster (5.7-6 GHz,
# wider cores), and 3.12's immortal objects drop the refcount writes that bound that
# loop here: 0.3-0.5 ns is to be expected, and at about 1.5 cycles a dispatch (one taken
# indirect jump and ~20 instructions) for two counted instructions, 0.13 ns at 6 GHz is
# not excluded. So 2e-10 (a 200 µs gate, which would let the CPU-time proof spare nearly
# every preempted step here) keeps a margin of only 1.5-2.5x over the expected and none
# over that bound: not a proof. 5e-11 keeps 6-10x and 2.6x. (A tier-2 optimizer, the
# experimental JIT of CPython 3.13+, can delete instructions outright, `x` then `POP_TOP`
# among them: no constant is sound there; it is off in standard builds.)
_FASTEST_LINE = 5e-11
# Where a late step's CPU time may prove it within its budget (see _Linear._late): Linux,
# whose thread CPU clock (CLOCK_THREAD_CPUTIME_ID) is the scheduler's own runtime count,
# kept in nanoseconds at every switch and brought up to date at every read. Elsewhere a
# late step is counted, as before (a thread CPU clock sampled at the tick could miss a
# whole step's lines).
_CPU_PROOF = sys.platform.startswith("linux")
# A step still running untraced after this long is stopped and decided by counting: the
# watchdog that keeps a loop that never calls the model from running forever.
_WATCH_AFTER = 0.5
_POLL = 0.05  # the interval of the run's SIGALRM timer (getitimer shows it: how it is told)
# How soon a watchdog thread that held its raise back looks again: long enough for the
# agent's thread to take the interpreter lock back and run on elsewhere.
_AIM = 0.002
# How many looks in a row a watchdog thread holds back while the agent's thread is inside a
# function that swallowed one of its raises (half a second of _AIM): then it raises there
# anyway. Another call of that function may never end (a second endless __del__), and
# holding back for ever hung the run; a raise it swallows again is raised again later.
_HOLD = 250
_SIGALRM = signal.SIGALRM


class _Recheck(BaseException):
    """Stops a linear run whose step must be decided by counting its lines (the watchdog
    raises it in the agent's thread); a BaseException, like ``_StepTimeout``."""


class _Exited(Exception):
    """Carries a ``GreenletExit`` the agent function raised out of the run's greenlet,
    which would take it for a return (``args[0]``, an outcome like any exception)."""


class _Stop(BaseException):
    """Unwinds a linear run's agent function when the run has ended (its last step is
    recorded, ``max_steps`` was reached, or the model failed)."""


def _async_raiser() -> Any:
    """CPython's PyThreadState_SetAsyncExc, to raise in a thread, or None where it is
    missing (then run() takes the step-by-step path)."""
    try:
        import ctypes  # only code that calls libc needs ctypes

        return ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.py_object)(
            ("PyThreadState_SetAsyncExc", ctypes.pythonapi)
        )
    except (ImportError, AttributeError, OSError):
        return None


_ASYNC: list[Any] = []  # looked up once, on the first linear run


class _Linear(_Run):
    """A linear run of the agent function, as :func:`run` makes it: the function is called
    once, in a greenlet of its own (:meth:`_call`), with a model function that asks the
    real model and records each step, so no step switches a greenlet. Steps run untraced: a step that took less than
    ``line_budget * _FASTEST_LINE`` seconds, of wall time or of its thread's CPU time
    since the last checkpoint (:meth:`_late`), is within its line budget (see
    ``_FASTEST_LINE``), so its outcome is the counted one. Any other step (it took
    longer, or the watchdog stopped it after ``_WATCH_AFTER`` seconds) is decided by the
    machine's own counted step: a *shadow* run of the function in a greenlet catches up,
    uncounted, through the steps already decided (each is replayed at most once in the
    whole run, so the catching up costs one extra run of the function at most), and runs
    that step with its lines counted, exactly as ``h`` does. The run goes on untraced when
    the counted step agrees, and step by step from the shadow otherwise. The clock
    decides only when to count, never an outcome.

    What a step records is two strings: its prompt and its completion (``prompts``,
    ``completions``). Every step the untraced run decides has the same shape: step j
    goes from state j (the first j completions) to state j+1, and is marked ``clock``
    from ``taint_from`` on (a mark, once set, stays); only the run's last step may end
    in a sentinel (``final``). So the states and ``Step`` tuples are made when someone
    reads them (:meth:`steps`, states shared through ``states``), not while the agent
    runs; a trace file being written gets each ``Step`` as it completes.

    Step j-1 (fed completion j-1 in state j-1) ends when the agent asks its j-th prompt
    (state j's), returns or raises; until then it is the *pending* step.
    """

    __slots__ = (
        "trace",
        "complete",
        "owner",
        "failed",
        "write",
        "max_steps",
        "thread",
        "glet",
        "depth",
        "prompts",
        "completions",
        "states",
        "count",
        "final",
        "taint_from",
        "gate",
        "lock",
        "armed",
        "fired",
        "swallowed",
        "lost",
        "held",
        "t0",
        "cp_wall",
        "cp_cpu",
        "cp_every",
        "ended",
        "shadow",
        "seen",
        "stopped",
        "handed",
        "error",
        "handler",
        "unwatch",
        "top",
        "frame",
        "gc_step",
        "gc_spent",
        "gc_start",
        "gc_callback",
    )

    def __init__(
        self,
        machine: AgentMachine,
        trace: Any,
        complete: Callable[[str], Any],
        failed: Callable[..., Exception],
        write: Any,
    ) -> None:
        super().__init__(machine)
        self.trace, self.complete, self.failed = trace, complete, failed
        # A model whose complete() is the stock ModelBase.complete (FunctionModel, the
        # scripted models): model() does what it does inline, on the model object (its
        # _complete, the answer's check and error, the .calls log, all looked up per call
        # as complete() does), which saves a Python call a step. The prompt's check is
        # model()'s own, made first. Any other complete() is called as it is.
        owner = getattr(complete, "__self__", None)
        stock = getattr(complete, "__func__", None) is ModelBase.complete
        self.owner: ModelBase | None = owner if stock and isinstance(owner, ModelBase) else None
        self.write = write
        self.max_steps: int = trace.max_steps
        self.thread = _get_ident()
        self.glet: Any = None  # the agent's greenlet (go()); its model() is called only there
        self.depth: int | None = None  # its first frame's, less the untraced offset (_call)
        self.prompts: list[str] = []
        self.completions: list[str] = []
        self.states: list[TraceState] = [self.state]  # state k, made when first needed
        self.count = 0  # steps recorded (each from state j to state j+1)
        self.final: Any = None  # the last step's sentinel outcome, once recorded
        self.taint_from: int | None = None
        limit = machine.line_budget
        self.gate = None if limit is None else limit * _FASTEST_LINE
        self.lock: threading.Lock | None = None  # only for a watchdog thread
        self.armed = self.fired = self.ended = self.stopped = False
        # A watchdog thread's raise: whether CPython swallowed the last one, and the code of
        # every function that swallowed one (see _note_swallowed).
        self.swallowed = False
        self.lost: set[Any] = set()
        self.held = 0  # looks in a row held back for `lost` (see _HOLD)
        self.t0 = 0.0
        # The last CPU-time checkpoint (see _late): taken at a step's start when more than
        # cp_every seconds of wall time passed since the previous one; never, off Linux.
        self.cp_wall = float("-inf")
        self.cp_cpu = 0.0
        self.cp_every = float("inf") if self.gate is None or not _CPU_PROOF else self.gate / 4
        self.shadow: _Loop | None = None
        self.seen: list[str] = []
        self.handed: TraceState | None = None
        self.error: BaseException | None = None
        self.handler: Any = None  # the SIGALRM handler the run installed, if it did
        self.unwatch: Callable[[], None] | None = None  # stops the running watchdog
        self.top: Any = None  # _call()'s frame (the greenlet's first), which calls the agent
        self.frame: Any = None  # the agent's outermost frame, held (see _hold)
        # Collections in this thread during step gc_step (counted by len(completions)):
        # gc_spent seconds of them, which _late takes off (see _gc).
        self.gc_step = -1
        self.gc_spent = 0.0
        self.gc_start: float | None = None  # a collection being watched started then
        self.gc_callback = self._gc

    # -- the agent's side ----------------------------------------------------------------
    @uncharged
    def model(self, prompt: str) -> str:
        # The hot path of a linear run: everything a step costs beyond the agent's own
        # work is here, so it is written flat (each Python call is a good part of a step)
        # and records two strings: no state, no Step (made when read, see steps()).
        # Called from elsewhere than the agent's own greenlet (another thread, or a greenlet
        # of the agent's own), the call is refused as h refuses it (_Loop.model), before
        # the step's clock is touched: the step goes on, watched (a greenlet is in one
        # thread, so this is the thread's check too).
        if getcurrent() is not self.glet:
            raise _thread_error()
        # A bad prompt is the agent's error inside its step, which goes on, watched.
        if type(prompt) is not str and not isinstance(prompt, str):
            raise _prompt_error(prompt)
        gate = self.gate
        if gate is not None:
            # The pending step's clock stops first. With the alarm watchdog (the main
            # thread) nothing can raise in this thread once armed is False; a watchdog
            # thread needs the lock (_disarm).
            if self.lock is None:
                self.armed = False
                late = perf_counter() - self.t0 > gate and self._late()
                if _getsignal(_SIGALRM) is not self.handler:  # the agent took SIGALRM
                    self._alarm_taken()
            else:
                late = self._disarm()
        if self.ended:  # an agent that caught _Stop and called again
            raise _Stop
        completions = self.completions
        j = len(completions)
        if j:  # step j-1 reached state j, which asks `prompt`
            if (gate is not None and late) or self.seen or self.write is not None:
                # A step counted on the shadow starts the agent again (asyncio.run and all):
                # it runs outside the agent's event loop, as the model does.
                running = _get_running_loop()
                if running is not None:
                    _events._set_running_loop(None)
                try:
                    self._reached(prompt, gate is not None and late)
                except _Stop:
                    raise
                except BaseException as exc:  # the toolkit's failure, not the agent's:
                    self.error = exc  # it must not reach the agent's handlers
                    self._end(None)
                finally:
                    if running is not None:
                        _events._set_running_loop(running)
            else:
                self.count = j
            if j >= self.max_steps:
                self._end("max_steps")
        elif gate is not None:
            self._hold()
        self.prompts.append(prompt)
        running = _get_running_loop()
        if running is not None:  # as in a greenlet: the model runs outside the agent's loop
            _events._set_running_loop(None)
        try:
            owner = self.owner
            if owner is not None:  # ModelBase.complete, inline (see __init__): its checks and log
                completion = owner._complete(prompt)
                if type(completion) is not str and not isinstance(completion, str):
                    raise owner._answer_error(prompt, completion)
                owner.calls.append((prompt, completion))
            else:
                completion = self.complete(prompt)
                if type(completion) is not str and not isinstance(completion, str):
                    self.failed(answer=completion)
                    self._end(None)
        except Exception as exc:  # noqa: BLE001 - the model failed: the trace says how
            self.failed(exc)
            self._end(None)
        finally:
            if running is not None:
                _events._set_running_loop(running)
        completions.append(completion)
        if self.effects:
            self.effects = {}
        if gate is not None:
            t0 = self.t0 = perf_counter()
            if t0 - self.cp_wall > self.cp_every:  # a checkpoint (see _late)
                self.cp_wall = t0
                self.cp_cpu = thread_time()
            self.armed = True
        return completion

    def effect(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        # An effect's key names the state of the step that made it: made here, on demand.
        self.state = self._state(len(self.completions))
        return super().effect(fn, args, kwargs)

    def _disarm(self) -> bool:
        """End the running step's clock (a watchdog thread's run): whether it ran too long
        to prove it within its line budget. Disarmed under the lock, so the watchdog
        cannot raise once this returns; raises _Recheck if it did (the raise it sent, if
        still pending, is replaced by one delivered here)."""
        t = perf_counter()
        with self.lock:  # type: ignore[union-attr]
            self.armed = False
            fired = self.fired
        if fired or self.stopped:
            self.fired = False
            self.stopped = True
            # Not withdrawn (PyThreadState_SetAsyncExc(NULL)): that leaves CPython 3.11's
            # flag of a pending raise set for good, and with it every traced function
            # entry spins for ever at its first instruction (the eval breaker is checked
            # again and again there), so the shadow counting this step would hang. A raise
            # sent again replaces the pending one (never two pending) and is delivered at
            # the loop's first backward jump, which clears the flag.
            _ASYNC[0](self.thread, _Recheck)
            while True:
                pass
        return t - self.t0 > self.gate and self._late(t)  # type: ignore[operator]

    # -- collections inside a step -------------------------------------------------------
    def _late(self, now: float | None = None) -> bool:
        """The pending step took longer than the gate (read at ``now``, or read again): is
        it still, less the time this thread spent in collections that ran no Python code,
        and does the thread's CPU time since the last checkpoint not prove it either (see
        the module's docstring)? Called only for a step that looks late, so the fast path
        pays nothing for it but the checkpoints."""
        if now is None:
            now = perf_counter()
        elapsed = now - self.t0
        if self.gc_step == len(self.completions):
            elapsed -= self.gc_spent
        if elapsed <= self.gate:  # type: ignore[operator]
            return False
        # The window from the last checkpoint holds the whole step: its CPU time bounds
        # the step's lines as its wall time does, and no preemption stretches it.
        return not _CPU_PROOF or thread_time() - self.cp_cpu > self.gate  # type: ignore[operator]

    # Charged to no budget: a collection during a step counted on the shadow calls it too,
    # and its lines must not let the collector's timing move a step across its budget.
    @uncharged
    def _gc(self, phase: str, info: dict) -> None:
        """The run's ``gc.callbacks`` entry: time the collections that run inside a step
        in the agent's own thread, which :meth:`_late` takes off the step's time.

        A collection of a long run's objects takes from tens of microseconds to
        milliseconds, and the step it lands in would be late. None of its lines are the
        step's: a line budget charges no line run inside a collection in its thread (the
        finalizers, weakref callbacks, greenlets unwound and other ``gc.callbacks``
        entries it runs; see :mod:`agentic_machines.execution.budget`), and that thread,
        inside the collector, runs no line of the step meanwhile. The budget's entries run
        first and last in ``gc.callbacks``, so this one's window lies inside what it
        charges to no one. Other threads' lines are not the step's either: a line budget
        counts the lines of its own thread."""
        if phase == "start":
            if self.armed and _get_ident() == self.thread:
                self.gc_start = perf_counter()
            return
        start = self.gc_start
        if start is None:
            return
        now = perf_counter()
        self.gc_start = None
        step = len(self.completions)
        if self.gc_step != step:
            self.gc_step, self.gc_spent = step, 0.0
        self.gc_spent += now - start

    def _unwatch_gc(self) -> None:
        try:
            gc.callbacks.remove(self.gc_callback)
        except ValueError:  # the agent's code removed it: nothing to undo
            pass
        self.gc_start = None

    def _hold(self) -> None:
        """At the first model call: hold the agent's outermost frame (the one go() called),
        so that its locals outlive its return. When a frame object has another reference,
        CPython's return moves the locals into it instead of freeing them, so the agent's
        last step ends (and its clock stops) before the locals it built over the whole run
        are freed: that teardown (tens to hundreds of microseconds for a long run's history)
        would otherwise make the last step of every long run late. It is not uncounted:
        :meth:`_release` frees them under a profile hook and the step is counted when any
        Python code ran meanwhile."""
        f: FrameType | None = _getframe(2)  # the agent's frame that called model()
        top = self.top
        while f is not None and f.f_back is not top:
            f = f.f_back
        self.frame = f

    def _release(self) -> bool:
        """Free the held frame (and the locals it took over at the agent's return): True
        when no Python code ran meanwhile, so the last step's lines all ran before its
        clock stopped; False (count the step) when a finalizer or a weakref callback ran
        lines, or when a profiler is installed (it cannot be watched then)."""
        frame, self.frame = self.frame, None
        if frame is None:
            return True
        if _getprofile() is not None:
            del frame
            return False
        ran: list[bool] = []

        def hook(_frame: Any, event: str, _arg: Any) -> None:
            # Every Python frame starts with a "call" event (a function, a generator resumed,
            # a finalizer): the C calls around us ("c_call") run no line of the agent.
            if event == "call":
                ran.append(True)

        _setprofile(hook)
        try:
            del frame
        finally:
            _setprofile(None)
        return not ran

    # Charged to no budget: the timer fires every _POLL s, also while a step is counted
    # on the shadow run, and lines of this handler counted there would let the clock
    # move a step across its line budget.
    @uncharged
    def _alarm(self, signum: int, frame: Any) -> None:
        """The watchdog in the main thread (SIGALRM, every ``_POLL`` s): it runs in the
        agent's own thread, between two of its instructions, so it stops a step that ran
        too long without a lock (``armed`` is False outside a step). Once the run
        watches from a thread (``lock`` set) it does nothing: the agent may have
        reinstalled it.

        It raises again at every tick until the run has taken the raise
        (:meth:`_acknowledge`): a raise that lands where CPython swallows exceptions (a
        ``gc.callbacks`` entry, a ``__del__``, a weakref callback) is lost, and a step
        that never calls the model again would then run forever. In the run's own frames
        where a raise would be swallowed or would land outside ``go()``'s handler it does
        nothing (:meth:`_may_stop`): the next tick comes."""
        if (
            self.armed  # first: nothing else runs while a step is counted on the shadow
            and self.lock is None
            and perf_counter() - self.t0 > _WATCH_AFTER
            and self._may_stop(frame)
        ):
            raise _Recheck

    def _may_stop(self, frame: Any) -> bool:
        """Both watchdogs' decision for a step overdue: stop timing collections (the step
        is counted anyway; first, so that the agent's thread leaves the collector's
        callback, where a raise is lost), then whether a raise may land at ``frame``, where
        the agent's thread is: not in the run's own quiet frames (``_QUIET``), nor inside a
        function that swallowed a raise of this run before (``lost``)."""
        self._untime_gc()
        return frame is None or (frame.f_code not in _QUIET and not self._in_lost(frame))

    def _untime_gc(self) -> None:
        """The watchdog is stopping the step: collections are no longer timed (the step is
        counted anyway), so no Python frame runs inside them from now on. A loop that
        mostly collects garbage would otherwise meet every raise inside :meth:`_gc`, where
        CPython swallows it (a thread watchdog's raise is delivered where the thread gave
        up the interpreter lock: at the first Python frame after a long collection, that
        callback). Left for the next tick while a collection is being timed."""
        if self.gc_start is None:
            try:
                gc.callbacks.remove(self.gc_callback)
            except ValueError:  # removed already (an earlier tick, or the agent's code)
                pass

    def _acknowledge(self) -> None:
        """The run has taken the watchdog's ``_Recheck``: it stops raising (it raised again
        at every tick, or after every swallowed raise, until now)."""
        self.armed = False

    # -- states and steps, made when read ----------------------------------------------
    def _state(self, k: int) -> TraceState:
        """State k: the first k completions (made once, shared by every reader)."""
        states = self.states
        if k >= len(states):
            completions = self.completions
            last = states[-1]
            for i in range(len(states) - 1, k):
                last = _extend(last, completions[i])
                states.append(last)
        return states[k]

    def _step(self, i: int, outcome: Any = None) -> Step:
        """Step ``i``: from state i with prompt and completion i to ``outcome`` (default
        state i+1), marked ``clock`` from ``taint_from`` on."""
        clock_ = self.taint_from is not None and i >= self.taint_from
        if outcome is None:
            outcome = self._state(i + 1)
        return _new_step(
            Step, (i, self._state(i), self.prompts[i], self.completions[i], outcome, clock_)
        )

    def steps(self) -> list[Step]:
        """Every step recorded, as ``Step`` tuples (what ``trace.steps`` shows)."""
        out = [self._step(i) for i in range(self.count)]
        if self.final is not None:
            out.append(self._step(self.count, self.final))
        return out

    # -- the slow paths ------------------------------------------------------------------
    def _taint(self) -> None:
        """Model code inside the agent met a deadline (``seen``): the clock spoke, and this
        step and every later one are marked."""
        if self.taint_from is None:
            self.taint_from = len(self.completions) - 1

    def _reached(self, prompt: str, late: bool) -> None:
        """The pending step reached its state, which asks ``prompt``: record it, after
        counting its lines when its time proves nothing."""
        if self.seen:
            self._taint()
        if not late:
            self._record(None)
            return
        outcome = self._counted()
        live = self.machine._live
        reached = self._state(len(self.completions))
        if outcome == reached and reached in live and live[reached].prompt == prompt:
            self.shadow = live.pop(reached)  # the same step: the untraced run goes on
            self._record(None)
            return
        self._record(outcome)
        self._end(outcome)

    def _returned(self, kind: int, value: Any, late: bool) -> None:
        """The agent ended the pending step: it returned ``value`` or raised it."""
        if not self.completions:
            raise InvalidMachine(
                f"agent function {self.machine.name!r} ended before its first model call "
                "in a run, though it made one when the machine was built; it must be "
                "deterministic"
            )
        if self.seen:
            self._taint()
        if not late:
            outcome: Outcome = DIVERGE if kind is _DIVERGE else HALT
            result: Any
            if kind is _DIVERGE:
                result = DIVERGE
            else:
                result = AgentRaised.of(value) if kind is _RAISE else value
                if kind is _RAISE:  # what run() would read back from machine.raised()
                    self.trace.message = f"raised {result}"
            self.machine._later_result(self._before, self.completions[-1], result)
            self._record(outcome)
            self.trace.end = outcome
            return
        outcome = self._counted()
        self._record(outcome)
        self._end(outcome, unwind=False)

    def _before(self) -> TraceState:
        """The pending step's state (for a result filed when someone asks)."""
        return self._state(len(self.completions) - 1)

    def _stopped(self) -> None:
        """The watchdog stopped the pending step while it ran: decide it by counting."""
        if not self.completions:  # before the first model call: the machine's own run knows it
            self.handed = self.machine.initial
            return
        if self.seen:
            self._taint()
        outcome = self._counted()
        self._record(outcome)
        self._end(outcome, unwind=False)

    def _record(self, outcome: Any) -> None:
        """Record the pending step, reaching its state (``outcome`` None) or ``outcome``."""
        i = len(self.completions) - 1  # steps are recorded in order: the pending one is next
        if outcome is None or outcome == self._state(i + 1):
            self.count = i + 1
        else:  # a sentinel or a state the clock gave: the run's last step
            self.count, self.final = i, outcome
        if self.write is not None:
            self.write(self._step(i, None if self.final is None else outcome))

    def _end(self, end: Any, unwind: bool = True) -> None:
        """End the linear run: with HALT, DIVERGE or "max_steps" (the trace's end), with
        None (the model failed; the trace's end is set), or with a state, from which the
        run goes on step by step (the counted step's shadow is live there)."""
        self.ended = True
        if isinstance(end, TraceState):
            self.handed = end
        elif end is not None:
            self.trace.end = end
            if end is HALT:  # a counted step ended the program: say so if it raised, as run()
                raised = self.machine.raised(self._before(), self.completions[-1])
                if raised is not None:  # does on the untraced path (_returned) and step by step
                    self.trace.message = f"raised {raised}"
        if unwind:
            raise _Stop

    # -- deciding a step by counting -------------------------------------------------------
    def _counted(self) -> Outcome:
        """h(pending state, pending completion) as the machine computes it, lines counted,
        on the shadow run caught up (uncounted) to the pending state; the shadow is left
        live at the outcome (the machine's cache)."""
        m = self.machine
        decided = len(self.completions) - 1  # the steps before the pending one
        prompts, completions = self.prompts, self.completions
        loop = self.shadow
        self.shadow = None
        if loop is None:
            loop = _Loop(m)
            # at the depth an h run made where this run was made gets (resumed from inside
            # the agent, it would inherit the agent's count there)
            loop.depth = self.depth
            kind, _ = loop.resume(None, counted=False)
            if kind is not _PROMPT or loop.prompt != prompts[0]:
                self._not_deterministic(0)
        at = len(loop.state)
        state = self._state(decided)  # every state up to the pending one, in one loop
        if at < decided:  # steps already decided: replayed uncounted, in one switch
            states = self.states
            loop.queue = [
                (prompts[k], completions[k], states[k + 1]) for k in range(decided - 1, at, -1)
            ]
            loop.state = states[at + 1]
            loop.effects = {}
            kind, _ = loop.resume(completions[at], counted=False)
            if kind is not _PROMPT or loop.queue or loop.prompt != prompts[decided]:
                self._not_deterministic(decided - len(loop.queue))
        if len(m._live) >= m._cache_size:
            m._drop_live()
        m._live[state] = loop
        try:
            return m.harness(state, completions[decided])
        except ClockDependent as exc:
            self._taint()
            return exc.outcome

    def _not_deterministic(self, k: int) -> None:
        raise InvalidMachine(
            f"agent function {self.machine.name!r} did not repeat itself: replayed with the "
            f"same completions, it asked another prompt or ended differently at step {k}. "
            "An agent function must be deterministic; wrap tools whose results change "
            "with effect()"
        )

    # -- the run ---------------------------------------------------------------------------
    def go(self) -> TraceState | None:
        """Run to the end. Returns None when the trace has ended, else the state from which
        the run goes on step by step."""
        # The agent runs in a greenlet of its own, as h runs it (see _call): one switch a run.
        agent = self.glet = greenlet(self._call)
        try:
            with clock.watching() as seen:
                self.seen = seen
                if self.gate is not None:
                    self._watch()
                    gc.callbacks.append(self.gc_callback)
                    self.t0 = perf_counter()
                    if _CPU_PROOF:  # the first checkpoint (see _late)
                        self.cp_wall, self.cp_cpu = self.t0, thread_time()
                    self.armed = True
                late = False
                try:
                    try:
                        value: Any = _into(agent.switch)
                        kind = _RETURN
                    except (_Stop, _Recheck):
                        raise
                    except BudgetExceeded:  # a budget of the agent's own ran out: count the step
                        kind, value, late = _DIVERGE, None, self.gate is not None
                    except (Exception, SystemExit) as exc:  # noqa: BLE001 - an outcome
                        kind, value = _RAISE, exc.args[0] if type(exc) is _Exited else exc
                    if self.gate is not None and not self.ended:
                        if self.lock is None:
                            self.armed = False
                            late = (perf_counter() - self.t0 > self.gate and self._late()) or late
                        else:
                            late = self._disarm() or late
                        late = not self._release() or late
                except _Stop:
                    pass
                except _Recheck:
                    self._acknowledge()
                    if not self.ended:
                        self._stopped()
                else:
                    if not self.ended:
                        self._returned(kind, value, late)
        finally:
            self.armed = False
            self.frame = self.top = None
            if self.unwatch is not None:
                self.unwatch()
            if self.gate is not None:
                self._unwatch_gc()
        if self.error is not None:
            raise self.error
        return self.handed

    def _call(self) -> Any:
        """The agent function, called as the first frame of the run's greenlet (go()).
        An agent sees the stack an ``h`` run gives it, wherever the caller is: no caller's
        frames behind its own, its recursion count from the same fixed depth when it is
        the outermost run in the thread (agent's ``_fresh_stack``), an empty :mod:`contextvars` context and no exception being
        handled. Called on the caller's stack, an agent that recursed near the limit
        raised RecursionError here and not step by step."""
        # Under a line budget another path may count this run's steps, its tracer called one
        # frame below the deepest frame: untraced, the agent starts that frame deeper.
        deeper = 0 if self.gate is None else 1
        depth = _fresh_stack(deeper)
        self.depth = None if depth is None else depth - deeper  # the shadow's (see _counted)
        _CURRENT.set(self)  # in the greenlet's own context, as _Loop._main sets it
        self.top = _getframe()
        m = self.machine
        try:
            return m.fn(self.model, *m.args, **m.kwargs)
        except GreenletExit as exc:
            raise _Exited(exc) from None
        finally:
            _CURRENT.set(None)  # no cycle run -> greenlet -> its context -> run

    def _watch(self) -> None:
        """Start the watchdog (``unwatch`` stops it). In the main thread, when SIGALRM is
        free (its default action, no timer set), an interval timer whose handler
        (:meth:`_alarm`) runs in this thread, with a sentinel thread in case the agent's
        code cancels the timer (:meth:`_sentinel`); elsewhere a :class:`_Watchdog`
        thread, which raises through the C API and needs the lock."""
        if (
            threading.current_thread() is threading.main_thread()
            and signal.getsignal(_SIGALRM) == signal.SIG_DFL
            and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        ):
            self.handler = handler = self._alarm  # one bound method: getsignal returns it
            previous = signal.signal(_SIGALRM, handler)
            signal.setitimer(signal.ITIMER_REAL, _POLL, _POLL)
            sentinel = _Watchdog(_WATCH_AFTER, self._sentinel)

            def stop() -> None:
                sentinel.stop()
                # The agent may own SIGALRM now: only what is still the run's is undone.
                if signal.getitimer(signal.ITIMER_REAL)[1] == _POLL:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                if _getsignal(_SIGALRM) is handler:
                    signal.signal(_SIGALRM, previous)

            self.unwatch = stop
            return
        self._thread_watch()

    def _thread_watch(self) -> None:
        _watch_swallowed()
        self.lock = threading.Lock()
        self.unwatch = _Watchdog(_POLL, self._check).stop

    def _alarm_taken(self) -> None:
        """At a step boundary, SIGALRM's handler is no longer the run's: the agent's code
        installed its own. The run leaves SIGALRM to it (and stops its own timer, which
        would call the agent's handler) and watches from a thread from here on."""
        if self.unwatch is not None:
            self.unwatch()
        self._thread_watch()

    def _sentinel(self) -> None:
        """The alarm's backup, every ``_WATCH_AFTER`` s in its own thread: a step overdue
        twice over means the timer no longer fires (the agent's code cancelled it, say
        with ``signal.alarm(0)``), so it sends SIGALRM to the agent's thread itself, when
        the run's handler is still installed (otherwise the next step boundary hands
        over to a watchdog thread)."""
        if (
            self.armed
            and perf_counter() - self.t0 > 2 * _WATCH_AFTER
            and _getsignal(_SIGALRM) is self.handler
        ):
            signal.pthread_kill(self.thread, _SIGALRM)

    def _check(self) -> bool:
        """The watchdog thread's check, every ``_POLL`` s: under the lock, which the run
        takes to end a step's clock, so it never raises outside a step. Like the alarm it
        raises again until the run takes the raise, but never while one is pending: a
        raise cannot be withdrawn (see :meth:`_disarm`), and a second would reach the run's
        own code. So it raises again only when the last one was swallowed: CPython
        reported it through ``sys.unraisablehook`` (:func:`_note_swallowed`), having met
        it in a ``__del__``, a weakref callback or a ``gc.callbacks`` entry; one that was
        not is on its way to ``go()``, or was caught by the agent (which the alarm's way
        would stop and this one does not).

        It aims: a raise sent to a thread lands where that thread waits for the interpreter
        lock (which this check holds), so it is sent only where :meth:`_may_stop` lets it
        land. Returns True to be called again soon (it held back)."""
        with self.lock:  # type: ignore[union-attr]
            if (
                not self.armed
                or perf_counter() - self.t0 <= _WATCH_AFTER
                or (self.fired and not self.swallowed)  # the raise sent is on its way
            ):
                return False
            if not self._may_stop(sys._current_frames().get(self.thread)):
                return True
            self.fired, self.swallowed, self.held = True, False, 0
            _ASYNC[0](self.thread, _Recheck)
            return False

    def _in_lost(self, frame: FrameType | None) -> bool:
        """Whether ``frame`` runs inside a function that swallowed a raise of this run,
        and the watchdog has held back there fewer than ``_HOLD`` looks in a row."""
        lost = self.lost
        if lost and self.held < _HOLD:
            while frame is not None:
                if frame.f_code in lost:
                    self.held += 1
                    return True
                frame = frame.f_back
        return False


# -- raises that CPython swallowed ---------------------------------------------------------------
_chained: list[Any] = []  # the hook _note_swallowed passes every report on to
_in_hook = threading.local()  # set while _note_swallowed passes a report on


def _note_swallowed(unraisable: Any) -> None:
    """``sys.unraisablehook`` once a linear run has watched from a thread: CPython reports
    here an exception it swallowed (one raised in a ``__del__``, a weakref callback or a
    ``gc.callbacks`` entry). Every report goes on to the hook installed before, as it
    would have; then a ``_Recheck`` swallowed so is noted on its run (the run of the
    thread and context it was raised in) with the function that swallowed it, and the
    run's watchdog may raise again from then on, elsewhere (:meth:`_Linear._check`):
    noted last, in a frame where the watchdog does not raise (``_QUIET``), so a raise
    never lands in a hook, which CPython would swallow unnoted. It stays installed, so
    another hook that chains to it (the line budget's, installed and removed around each
    counted step) never finds it gone; a chain that leads back to it reports through
    CPython's own hook."""
    if getattr(_in_hook, "active", False):
        sys.__unraisablehook__(unraisable)
        return
    _in_hook.active = True
    try:
        _chained[0](unraisable)
    finally:
        _in_hook.active = False
        if isinstance(unraisable.exc_value, _Recheck):
            run = _CURRENT.get()
            # only a run watched from a thread: the alarm raises again at every tick (and
            # the hook stays installed for later runs, which may watch by the alarm)
            if isinstance(run, _Linear) and run.lock is not None:
                tb = unraisable.exc_traceback  # its first entry: the function that swallowed it
                if tb is not None:
                    run.lost.add(tb.tb_frame.f_code)
                run.swallowed = True


# The hook installed is a partial of _note_swallowed, not the function: the line budget
# keeps the hook it replaces in a module global, and a code fingerprint
# (architectures/_invariants.py) hashes the package functions it finds in the globals of
# the code it reaches, so the function there would change the fingerprint of every
# program run under a budget (and its analysis would no longer be covered by its proof).
_HOOK = functools.partial(_note_swallowed)


def _watch_swallowed() -> None:
    """Put :func:`_note_swallowed` in front of ``sys.unraisablehook`` (for a run that is to
    watch from a thread), unless it is there; it chains to the hook it replaces."""
    if sys.unraisablehook is not _HOOK:
        _chained[:] = [sys.unraisablehook]
        sys.unraisablehook = _HOOK


# The run's own frames where a watchdog does not raise (it raises at the next tick): the
# collector's callback and the unraisable hook swallow exceptions, and a raise in go() or
# in _acknowledge would land outside the handler that takes it (or raise again once taken).
_QUIET = frozenset(
    f.__code__ for f in (_Linear._gc, _Linear.go, _Linear._acknowledge, _note_swallowed)
)


class _Watchdog:
    """A thread that calls ``check`` every ``every`` seconds until stopped (every
    ``_AIM`` s while it returns True): a linear run's watchdog (:meth:`_Linear._check`,
    which stops a step that runs untraced for more than ``_WATCH_AFTER`` s; the step is
    then decided by counting) or the alarm's sentinel (:meth:`_Linear._sentinel`)."""

    def __init__(self, every: float, check: Callable[[], bool | None]) -> None:
        self.every, self.check = every, check
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="agent-step-watchdog", daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        check, every, done = self.check, self.every, self.done
        wait = every
        while not done.wait(wait):
            # held back (the agent's thread was where a raise would be lost): look again
            # soon, when the thread has run on to another place
            wait = _AIM if check() else every

    def stop(self) -> None:
        self.done.set()
        self.thread.join()


def runs_linearly(machine: AgentMachine, start: Any, max_steps: int) -> bool:
    """Whether :func:`~agentic_machines.runtime.run.run` of ``machine`` from ``start`` takes
    the linear path (:func:`run_linear`): from the initial state, without a wall-clock step
    watchdog, and where the interpreter lets the line-budget watchdog stop a step.

    >>> from agentic_machines import agent_machine
    >>> m = agent_machine(lambda model: model("?"))
    >>> runs_linearly(m, m.initial, 10), runs_linearly(m, m.initial.then("x"), 10)
    (True, False)
    """
    if machine.step_timeout is not None or max_steps < 1 or not machine.initial == start:
        return False
    if machine.line_budget is not None:
        if not _ASYNC:
            _ASYNC.append(_async_raiser())
        if _ASYNC[0] is None:
            return False
    return True


def run_linear(
    machine: AgentMachine,
    trace: Any,
    complete: Callable[[str], Any],
    failed: Callable[..., Exception],
    write: Any,
) -> TraceState | None:
    """Run the agent function of ``machine`` once for ``trace`` (see :class:`_Linear`):
    ``complete`` is the model's; ``failed(exc)`` or ``failed(answer=...)`` ends the trace
    when the model raised or answered no string; each step, a ``Step``, is
    given to ``write`` (unless None) as it completes and listed in ``trace.steps``, which
    are made when first read (``trace._defer_steps``). Returns None when
    the trace has ended, else the state from which it goes on step by step.

    >>> from agentic_machines import agent_machine
    >>> from agentic_machines.runtime.run import Trace
    >>> m = agent_machine(lambda model: model("name?") + "!")
    >>> t = Trace(machine="echo", start=m.initial, max_steps=5)
    >>> run_linear(m, t, str.upper, None, None), t.end, t.steps[0].completion
    (None, 1, 'NAME?')
    """
    linear = _Linear(machine, trace, complete, failed, write)
    try:
        return linear.go()
    finally:
        trace._defer_steps(linear.steps)  # made when read
