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
model again) is stopped by a watchdog and decided the same way. So the clock decides
only *when* lines are counted, never an outcome: the same machine gives the same trace
on a quiet machine and a busy one. A run with a step to count replays the function once
(the shadow), so tools with side effects need
:func:`~agentic_machines.runtime.agent.effect` there too; a step the watchdog stopped (a
tool that blocks for long, say) is run again on the shadow, and the run goes on step by
step from there.
"""

from __future__ import annotations

import asyncio.events as _events
import threading
from collections.abc import Callable
from time import perf_counter
from typing import Any

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
    _Loop,
    _prompt_error,
    _Run,
    _thread_error,
)
from .harness import TraceState, _extend
from .tracefile import Step

__all__ = ["runs_linearly", "run_linear"]

_get_ident = threading.get_ident
_get_running_loop = _events._get_running_loop
_new_step = tuple.__new__  # a step (a NamedTuple) without its generated __new__

# No CPython runs a counted line (one line event, or one instruction of a one-line loop)
# in less than this many seconds: each is at least one bytecode instruction, whose
# dispatch alone takes a few CPU cycles, and no core runs at 20 GHz. So an untraced step
# that took less than line_budget * _FASTEST_LINE seconds of wall-clock time (which only
# load and blocking can stretch, never shrink) certainly ran fewer lines than its budget:
# counting them would have given the same outcome. The margin over the fastest machines
# of 2026 (about 0.3 ns for the cheapest instruction at 5-6 GHz) is more than 5x.
_FASTEST_LINE = 5e-11
# A step still running untraced after this long is stopped and decided by counting: the
# watchdog that keeps a loop that never calls the model from running forever.
_WATCH_AFTER = 0.5
_POLL = 0.05


class _Recheck(BaseException):
    """Stops a linear run whose step must be decided by counting its lines (the watchdog
    raises it in the agent's thread); a BaseException, like ``_StepTimeout``."""


class _Stop(BaseException):
    """Unwinds a linear run's agent function when the run has ended (its last step is
    recorded, ``max_steps`` was reached, or the model failed)."""


def _async_raisers() -> tuple[Any, Any] | None:
    """CPython's PyThreadState_SetAsyncExc, to raise in (and to clear for) a thread, or
    None where it is missing (then run() takes the step-by-step path)."""
    try:
        import ctypes  # only code that calls libc needs ctypes

        api = ctypes.pythonapi
        raise_in = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.py_object)(
            ("PyThreadState_SetAsyncExc", api)
        )
        clear = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p)(
            ("PyThreadState_SetAsyncExc", api)
        )
    except (ImportError, AttributeError, OSError):
        return None
    return raise_in, clear


_ASYNC: list[tuple[Any, Any] | None] = []  # looked up once, on the first linear run


class _Linear(_Run):
    """A linear run of the agent function, as :func:`run` makes it: the function is called
    once, with a model function that asks the real model and records each step, so no
    step switches a greenlet. Steps run untraced: a step that took less than
    ``line_budget * _FASTEST_LINE`` seconds is within its line budget (see
    ``_FASTEST_LINE``), so its outcome is the counted one. Any other step (it took
    longer, or the watchdog stopped it after ``_WATCH_AFTER`` seconds) is decided by the
    machine's own counted step: a *shadow* run of the function in a greenlet catches up,
    uncounted, through the steps already decided (each is replayed at most once in the
    whole run, so the catching up costs one extra run of the function at most), and runs
    that step with its lines counted, exactly as ``h`` does. The run goes on untraced when
    the counted step agrees, and step by step from the shadow otherwise. The clock
    decides only when to count, never an outcome.

    Step j-1 (fed completion j-1 in state j-1) ends when the agent asks its j-th prompt
    (state j's), returns or raises; until it is recorded, ``before``, ``prompt`` and
    ``completion`` hold state j-1, its prompt and completion j-1, and ``state`` state j.
    """

    __slots__ = (
        "trace",
        "complete",
        "failed",
        "steps",
        "write",
        "max_steps",
        "thread",
        "asked",
        "before",
        "prompt",
        "completion",
        "gate",
        "lock",
        "armed",
        "fired",
        "t0",
        "ended",
        "shadow",
        "taint",
        "seen",
        "stopped",
        "handed",
        "error",
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
        self.write = write
        self.steps: list[tuple] = trace.steps
        self.max_steps: int = trace.max_steps
        self.thread = _get_ident()
        self.asked = 0  # prompts asked so far
        self.before = self.state
        self.prompt = self.completion = ""
        limit = machine.line_budget
        self.gate = None if limit is None else limit * _FASTEST_LINE
        self.lock = threading.Lock()
        self.armed = self.fired = self.ended = self.taint = self.stopped = False
        self.t0 = 0.0
        self.shadow: _Loop | None = None
        self.seen: list[str] = []
        self.handed: TraceState | None = None
        self.error: BaseException | None = None

    # -- the agent's side ----------------------------------------------------------------
    @uncharged
    def model(self, prompt: str) -> str:
        # The hot path of a linear run: everything a step costs beyond the agent's own
        # work is here, so it is written flat (each Python call is a good part of a step).
        if type(prompt) is not str and not isinstance(prompt, str):
            raise _prompt_error(prompt)
        if _get_ident() != self.thread:
            raise _thread_error()
        if self.ended:  # an agent that caught _Stop and called again
            raise _Stop
        gate = self.gate
        late = False if gate is None else self._disarm()
        j = self.asked
        self.asked = j + 1
        if j:  # step j-1 reached state j, which asks `prompt`
            if late or self.seen:
                try:
                    self._reached(prompt, late)
                except _Stop:
                    raise
                except BaseException as exc:  # the toolkit's failure, not the agent's:
                    self.error = exc  # it must not reach the agent's handlers
                    self._end(None)
            else:
                step: tuple = _new_step(
                    Step,
                    (j - 1, self.before, self.prompt, self.completion, self.state, self.taint),
                )
                self.steps.append(step)
                if self.write is not None:
                    self.write(step)
            if j >= self.max_steps:
                self._end("max_steps")
        self.prompt = prompt
        running = _get_running_loop()
        if running is not None:  # as in a greenlet: the model runs outside the agent's loop
            _events._set_running_loop(None)
        try:
            completion = self.complete(prompt)
        except Exception as exc:  # noqa: BLE001 - the model failed: the trace says how
            self.failed(exc)
            self._end(None)
        finally:
            if running is not None:
                _events._set_running_loop(running)
        if type(completion) is not str and not isinstance(completion, str):
            self.failed(answer=completion)
            self._end(None)
        self.completion = completion
        self.before = state = self.state
        self.state = _extend(state, completion)
        if self.effects:
            self.effects = {}
        if gate is not None:
            self.t0 = perf_counter()
            self.armed = True
        return completion

    def _disarm(self) -> bool:
        """End the running step's clock: whether it ran too long to prove it within its
        line budget. Disarmed under the lock, so the watchdog cannot raise once this
        returns; raises _Recheck if it did (dropping it if it is still pending)."""
        t = perf_counter()
        with self.lock:
            self.armed = False
            fired = self.fired
        if fired or self.stopped:
            self.fired = False
            self.stopped = True
            _ASYNC[0][1](self.thread, None)  # type: ignore[index]
            raise _Recheck
        return t - self.t0 > self.gate  # type: ignore[operator]

    def _reached(self, prompt: str, late: bool) -> None:
        """The pending step reached ``self.state``, which asks ``prompt``: record it,
        after counting its lines when its time proves nothing."""
        if self.seen:  # model code inside the agent met a deadline: the clock spoke
            self.taint = True
        if not late:
            self._record(self.state)
            return
        outcome = self._counted()
        live = self.machine._live
        reached = self.state
        if outcome == reached and reached in live and live[reached].prompt == prompt:
            self.shadow = live.pop(reached)  # the same step: the untraced run goes on
            self._record(outcome)
            return
        self._record(outcome)
        self._end(outcome)

    def _returned(self, kind: int, value: Any, late: bool) -> None:
        """The agent ended the pending step: it returned ``value`` or raised it."""
        if self.asked == 0:
            raise InvalidMachine(
                f"agent function {self.machine.name!r} ended before its first model call "
                "in a run, though it made one when the machine was built; it must be "
                "deterministic"
            )
        if self.seen:
            self.taint = True
        if not late:
            outcome: Outcome = DIVERGE if kind is _DIVERGE else HALT
            result: Any
            if kind is _DIVERGE:
                result = DIVERGE
            else:
                result = AgentRaised.of(value) if kind is _RAISE else value
            self.machine._results[(self.before, self.completion)] = result
            self._record(outcome)
            self.trace.end = outcome
            return
        outcome = self._counted()
        self._record(outcome)
        self._end(outcome, unwind=False)

    def _stopped(self) -> None:
        """The watchdog stopped the pending step while it ran: decide it by counting."""
        if self.asked == 0:  # before the first model call: the machine's own run knows it
            self.handed = self.machine.initial
            return
        if self.seen:
            self.taint = True
        outcome = self._counted()
        self._record(outcome)
        self._end(outcome, unwind=False)

    def _record(self, outcome: Any) -> None:
        """Record the pending step with ``outcome``."""
        i = len(self.steps)  # steps are recorded in order: the pending one is next
        step: tuple = _new_step(
            Step, (i, self.before, self.prompt, self.completion, outcome, self.taint)
        )
        self.steps.append(step)
        if self.write is not None:
            self.write(step)

    def _end(self, end: Any, unwind: bool = True) -> None:
        """End the linear run: with HALT, DIVERGE or "max_steps" (the trace's end), with
        None (the model failed; the trace's end is set), or with a state, from which the
        run goes on step by step (the counted step's shadow is live there)."""
        self.ended = True
        if isinstance(end, TraceState):
            self.handed = end
        elif end is not None:
            self.trace.end = end
        if unwind:
            raise _Stop

    # -- deciding a step by counting -------------------------------------------------------
    def _counted(self) -> Outcome:
        """h(pending state, pending completion) as the machine computes it, lines counted,
        on the shadow run caught up (uncounted) to the pending state; the shadow is left
        live at the outcome (the machine's cache)."""
        m = self.machine
        steps = self.steps
        loop = self.shadow
        self.shadow = None
        if loop is None:
            loop = _Loop(m)
            kind, _ = loop.resume(None, counted=False)
            first = steps[0].prompt if steps else self.prompt  # type: ignore[attr-defined]
            if kind is not _PROMPT or loop.prompt != first:
                self._not_deterministic(0)
        at = len(loop.state)
        if at < len(steps):  # steps already decided: replayed uncounted, in one switch
            loop.queue = [
                (steps[k].prompt, steps[k].completion, steps[k].outcome)  # type: ignore[attr-defined]
                for k in range(len(steps) - 1, at, -1)
            ]
            loop.state = steps[at].outcome  # type: ignore[attr-defined]
            loop.effects = {}
            kind, _ = loop.resume(steps[at].completion, counted=False)  # type: ignore[attr-defined]
            if kind is not _PROMPT or loop.queue or loop.prompt != self.prompt:
                self._not_deterministic(len(steps) - len(loop.queue))
        state = self.before
        if len(m._live) >= m._cache_size:
            m._drop_live()
        m._live[state] = loop
        try:
            return m.harness(state, self.completion)
        except ClockDependent as exc:
            self.taint = True
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
        m = self.machine
        token = _CURRENT.set(self)
        watchdog = None
        try:
            with clock.watching() as seen:
                self.seen = seen
                if self.gate is not None:
                    watchdog = _Watchdog(self)
                    self.t0 = perf_counter()
                    self.armed = True
                late = False
                try:
                    try:
                        value: Any = m.fn(self.model, *m.args, **m.kwargs)
                        kind = _RETURN
                    except (_Stop, _Recheck):
                        raise
                    except BudgetExceeded:  # a budget of the agent's own ran out: count the step
                        kind, value, late = _DIVERGE, None, self.gate is not None
                    except (Exception, SystemExit) as exc:  # noqa: BLE001 - an outcome
                        kind, value = _RAISE, exc
                    if self.gate is not None and not self.ended:
                        late = self._disarm() or late
                except _Stop:
                    pass
                except _Recheck:
                    if not self.ended:
                        self._stopped()
                else:
                    if not self.ended:
                        self._returned(kind, value, late)
        finally:
            if watchdog is not None:
                watchdog.stop()
            _CURRENT.reset(token)
        if self.error is not None:
            raise self.error
        return self.handed


class _Watchdog:
    """Stops a linear run's step that runs untraced for more than ``_WATCH_AFTER`` s, by
    raising _Recheck in its thread; the step is then decided by counting. It checks and
    raises under the run's lock, which the run takes to end a step's clock, so it never
    raises outside a step."""

    def __init__(self, run: _Linear) -> None:
        self.run = run
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="agent-step-watchdog", daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        run, raise_in = self.run, _ASYNC[0][0]  # type: ignore[index]
        while not self.done.wait(_POLL):
            with run.lock:
                if run.armed and perf_counter() - run.t0 > _WATCH_AFTER:
                    run.armed = False
                    run.fired = True
                    raise_in(run.thread, _Recheck)

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
            _ASYNC.append(_async_raisers())
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
    appended to ``trace.steps`` and given to ``write`` (unless None). Returns None when
    the trace has ended, else the state from which it goes on step by step.

    >>> from agentic_machines import agent_machine
    >>> from agentic_machines.runtime.run import Trace
    >>> m = agent_machine(lambda model: model("name?") + "!")
    >>> t = Trace(machine="echo", start=m.initial, max_steps=5)
    >>> run_linear(m, t, str.upper, None, None), t.end, t.steps[0].completion
    (None, 1, 'NAME?')
    """
    return _Linear(machine, trace, complete, failed, write).go()
