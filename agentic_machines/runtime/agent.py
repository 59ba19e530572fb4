"""Any agent loop as an agentic machine: :func:`agent_machine` and :func:`effect`.

An agent function ``fn(model, *args, **kwargs)`` calls ``model(prompt) -> str`` once
per step; :func:`agent_machine` makes it a machine whose state is the history of
completions so far (a :class:`~agentic_machines.runtime.harness.TraceState`), ``h``
resumes it to its next model call, its return or raise (``HALT``, the record in
:meth:`AgentMachine.result` and :meth:`AgentMachine.raised`), or ``line_budget`` lines
without a model call (``DIVERGE``). docs/reference/agent.md says the rules.

>>> def guess(model, secret):
...     tries = []
...     while True:
...         word = model(f"Guess the word. Tried: {', '.join(tries) or 'nothing'}.")
...         if word == secret:
...             return f"found after {len(tries)} misses"
...         if word == "give up":
...             raise RuntimeError("the model gave up")
...         tries.append(word)
>>> m = agent_machine(guess, "owl")
>>> s = m.harness(m.initial, "cat")
>>> s, m.prompt(s)
(TraceState('cat'), 'Guess the word. Tried: cat.')
>>> m.harness(s, "owl"), m.result(s, "owl")
(1, 'found after 1 misses')
>>> m.harness(s, "give up"), m.raised(s, "give up")
(1, AgentRaised(type='RuntimeError', message='the model gave up'))

It runs in worker processes by default (:mod:`agentic_machines.runtime.agent_worker`),
or in a greenlet here (``isolation="inline"``): docs/determinism.md says what an outcome
depends on in each mode.
"""

from __future__ import annotations

import asyncio.events as _events
import contextlib
import contextvars
import functools
import os
import pickle
import queue
import sys
import threading
import warnings
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from greenlet import GreenletExit, getcurrent, greenlet

from ..errors import BudgetExceeded, ClockDependent, InvalidArgument, InvalidMachine
from ..execution import clock
from ..execution.budget import LineBudget, uncharged
from ..machine import DIVERGE, HALT, AgenticMachine, Outcome
from .agent_worker import (
    AgentRaised,
    Pool,
    budget_off,
    budget_on,
    can_fork,
    prompt_error,
    shown_args,
    thread_error,
    tool_name,
)
from .agent_worker import current as current_worker
from .harness import TraceMachine, TraceState

__all__ = [
    "agent_machine",
    "effect",
    "state_note",
    "AgentMachine",
    "AgentRaised",
    "AgentDied",
    "ending",
]

ISOLATIONS = ("process", "inline")
DEFAULT_STEP_TIMEOUT = 10.0
DEFAULT_LINE_BUDGET = 100_000  # a divergent step costs well under a second (bench_budget.py)
_DEFAULT: Any = type("_Default", (), {"__repr__": lambda self: "default"})()


# The run an effect() call belongs to. A context variable, not a greenlet attribute:
# asyncio tasks and asyncio.to_thread (the OpenAI Agents SDK runs synchronous tools in
# a worker thread) copy the context, so a tool finds its run wherever it executes.
_CURRENT: contextvars.ContextVar[_Loop | None] = contextvars.ContextVar(
    "agentic_machines_agent_loop", default=None
)


@dataclass(frozen=True)
class AgentDied:
    """The outcome record of an agent whose worker process died in the step (a signal,
    ``os._exit``, the kernel's out-of-memory killer): the reason, from its exit status.

    >>> print(AgentDied("killed by signal SIGSEGV"))
    AgentDied: the worker process killed by signal SIGSEGV
    """

    reason: str

    @property
    def type(self) -> str:
        return "AgentDied"

    @property
    def message(self) -> str:
        return f"the worker process {self.reason}"

    def __str__(self) -> str:
        return f"{self.type}: {self.message}"


class _Loop:
    """One inline run of the agent function, suspended in its greenlet at a model call."""

    __slots__ = (
        "machine",
        "state",
        "effects",
        "glet",
        "prompt",
        "thread",
        "budget",
        "dead",
        "worker",
        "note",
    )

    def __init__(self, machine: AgentMachine) -> None:
        self.machine = machine
        self.state = machine.initial
        self.effects: dict[tuple, int] = {}  # per effect key, the calls made so far in the step
        self.prompt = ""
        self.thread = threading.get_ident()  # a greenlet can only be resumed in its thread
        # A watched run's greenlet lives in a thread of its own, and the caller waits for
        # each step at most the timeout.
        self.worker: _StepThread | None = None
        if machine.step_timeout is not None:
            self.worker = _StepThread(self)
        else:
            self.glet = greenlet(self._main)
        self.budget: LineBudget | None = None
        self.dead = False
        self.note: Any = None  # state_note's value for the next model call

    def effect(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        # The key names the call by its step, its tool and its arguments (and how many
        # such calls the step made before), not by its position: tools that the SDK runs
        # concurrently may finish in any order, and the key must not depend on it.
        shown = shown_args(args, kwargs)
        # The tool by its code, not its identity: a tool defined inside the agent function
        # is a new function object on every replay, and must still be recognised.
        call = (getattr(fn, "__code__", fn), shown)
        with self.machine._effects_lock:  # the SDK may run tools in parallel threads
            n = self.effects.get(call, 0)
            self.effects[call] = n + 1
        key = (self.state, call[0], shown, n)
        log = self.machine._effects
        recorded = log.get(key)
        if recorded is not None:
            ok, value = recorded
            if ok:
                return value
            raise value
        executed = self.machine._effect_list  # append-only: readers take only what is new
        try:
            value = fn(*args, **kwargs)
        except Exception as exc:
            log[key] = (False, exc)
            executed.append((self.state, tool_name(fn), shown, False))
            raise
        log[key] = (True, value)
        executed.append((self.state, tool_name(fn), shown, True))
        return value

    # -- inside the greenlet ---------------------------------------------------------------
    def _main(self) -> tuple[str, Any]:
        m = self.machine
        _CURRENT.set(self)  # in this greenlet's own context (each greenlet has one)
        try:
            if m.line_budget is not None:
                self.budget = budget_on(m.line_budget)
            try:
                value = m.fn(self.model, *m.args, **m.kwargs)
            finally:
                self._exit_budget()
                # the run is over: drop the cycle loop -> greenlet -> its context -> loop,
                # so that reference counting frees a finished run
                _CURRENT.set(None)
        except BudgetExceeded:
            return "diverge", None
        except GreenletExit as exc:
            if self.dead:  # close() ending a suspended run: the greenlet dies
                raise
            return "raise", exc  # the agent's own: an outcome (it was taken for a message)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the agent's exception is an outcome
            # SystemExit too: an agent that calls sys.exit() has ended its run, an outcome;
            # it must not end the toolkit's process. KeyboardInterrupt (the user's Ctrl-C)
            # and GreenletExit (close() ending a suspended run) still propagate.
            return "raise", exc
        return "return", value

    @uncharged  # the line budget charges the agent's own lines, not this bookkeeping
    def model(self, prompt: str) -> str:
        """The ``model(prompt) -> str`` the agent function calls (once per step)."""
        # A bad call is the agent's error inside its step, which goes on (and keeps
        # counting): the agent may catch it.
        if type(prompt) is not str and not isinstance(prompt, str):
            raise prompt_error(prompt)
        if getcurrent() is not self.glet:
            raise thread_error()
        # Stop counting lines first (uncharged spares this frame the tracer, but the
        # functions it calls would still be traced while the budget is active).
        budget = self.budget
        if budget is not None:
            self.budget = None
            budget_off(budget)
        if self.note is not None:  # the state this model call is the prompt of
            self.machine._notes[self.state] = self.note
            self.note = None
        running = _events._get_running_loop()
        if running is not None:  # an asyncio loop inside the agent: hide it while suspended
            _events._set_running_loop(None)
        try:
            completion = self.glet.parent.switch(("prompt", prompt))
        finally:
            if running is not None:
                _events._set_running_loop(running)
        if self.machine.line_budget is not None:
            self.budget = budget_on(self.machine.line_budget)
        return completion

    @uncharged
    def _exit_budget(self) -> None:
        if self.budget is not None:
            budget, self.budget = self.budget, None
            budget_off(budget)

    # -- on the machine's side ---------------------------------------------------------------
    def close(self) -> None:
        """End a suspended run (its ``finally`` blocks run); a no-op for a finished one."""
        if self.worker is not None:  # its greenlet ends in its own thread
            if not self.dead:
                self.dead = True
                self.worker.close()
            return
        if self.dead or self.thread != threading.get_ident() or not self.glet:
            return
        self.dead = True
        self._end_greenlet()

    def _end_greenlet(self) -> None:
        if not self.glet:  # finished (or never started): nothing to unwind
            return
        here = getcurrent()
        if self.glet.parent is not here:
            self.glet.parent = here
        try:
            self.glet.throw()  # GreenletExit: the greenlet unwinds and dies
        except Exception:  # noqa: BLE001 - a run that fails while shutting down is gone anyway
            pass

    def resume(self, completion: str | None) -> tuple[str, Any]:
        """Run the next step (the first one when ``completion`` is None) to its end."""
        if self.worker is not None:
            message = self.worker.step(completion, self.machine.step_timeout)
        else:
            glet = self.glet
            here = getcurrent()
            if glet.parent is not here:
                glet.parent = here
            message = glet.switch(completion) if completion is not None else glet.switch()
        if message[0] == "prompt":
            self.prompt = message[1]
        else:
            self.dead = True
        return message

    def watchable(self) -> bool:
        """Whether this run's next step can be watched as the machine now asks (a run made
        before ``step_timeout`` was set has no thread of its own)."""
        return self.worker is not None or self.machine.step_timeout is None


_CLOSE = object()  # the task that ends a step thread's run


class _StepThread:
    """The thread that runs one watched inline run's greenlet.

    The run's greenlet is made and resumed in a thread of its own, and the caller waits
    for each step at most ``step_timeout`` seconds: a step still running then (a tool
    that blocks) is the clock's outcome, and the caller goes on at once. The blocked step
    is abandoned: its thread (a daemon) ends the run when the call returns, and never
    reports to anyone. In a worker process the blocked worker is killed instead.
    """

    __slots__ = ("tasks", "results", "abandoned", "thread")

    def __init__(self, loop: _Loop) -> None:
        self.tasks: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.results: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.abandoned = False
        self.thread = threading.Thread(
            target=contextvars.copy_context().run,  # the caller's clock watches see its notes
            args=(self._serve, loop),
            name="agent-step",
            daemon=True,
        )
        self.thread.start()

    def _serve(self, loop: _Loop) -> None:
        loop.glet = greenlet(loop._main)  # made here: a greenlet is resumed in its own thread
        while True:
            task = self.tasks.get()
            if task is _CLOSE:
                loop._end_greenlet()
                return
            try:
                glet = loop.glet
                message = glet.switch(task) if task is not None else glet.switch()
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
                message = (None, exc)
            if self.abandoned:  # the caller gave up on this step: end the run here
                loop._end_greenlet()
                return
            self.results.put(message)
            if message[0] != "prompt":
                return

    def step(self, completion: str | None, timeout: float | None) -> tuple[str, Any]:
        """The next step's message, or the clock's outcome past ``timeout`` seconds."""
        streams, folder = (sys.stdout, sys.stderr), os.getcwd()
        self.tasks.put(completion)
        try:
            message = self.results.get(timeout=timeout)
        except queue.Empty:
            self.abandoned = True
            self.tasks.put(_CLOSE)  # in case the step ends between the wait and the flag
            # the step runs on: what it made of the streams and folder is not the caller's
            sys.stdout, sys.stderr = streams
            if os.getcwd() != folder:
                os.chdir(folder)
            return "clock", None
        if message[0] is None:
            raise message[1]
        return message

    def close(self) -> None:
        self.tasks.put(_CLOSE)


class AgentMachine(TraceMachine):
    """The agentic machine of an agent function; build it with :func:`agent_machine`.

    ``isolation`` is where the agent runs: ``"process"`` (the default) in worker
    processes forked from a zygote of this one, one per explored path, so nothing the
    agent does (its prints, globals, ``chdir``, ``sys.exit``, a crash) reaches the
    caller, and every run starts from the same process state; ``"inline"`` in a greenlet
    of the caller's own process (faster to branch, for agents that keep no process-wide
    state and have no side effects beyond :func:`effect`). See docs/determinism.md.

    ``step_timeout`` (seconds; default 10 in a worker, ``None`` inline) is a wall-clock
    watchdog on each step, for tools that block: a step past it ends (the worker is
    killed) and raises :class:`~agentic_machines.errors.ClockDependent` (its outcome,
    ``DIVERGE``, came from the clock), which every checker counts as undecided. Inline,
    a watched run's steps go to a thread of their own, and the blocked call is left to
    finish there unseen.

    >>> def echo(model):
    ...     return model("say something")
    >>> m = agent_machine(echo)
    >>> m.prompt(m.initial), m.harness(m.initial, "hi"), m.result(m.initial, "hi")
    ('say something', 1, 'hi')
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        args: tuple = (),
        kwargs: dict[str, Any] | None = None,
        *,
        name: str | None = None,
        completions: Any = None,
        line_budget: int | None = DEFAULT_LINE_BUDGET,
        cache_size: int | None = None,
        isolation: str = "process",
        step_timeout: Any = _DEFAULT,
    ) -> None:
        if not callable(fn):
            raise InvalidMachine(
                f"agent_machine needs an agent function fn(model, ...), got {fn!r}"
            )
        if line_budget is not None and (not isinstance(line_budget, int) or line_budget < 1):
            raise InvalidArgument(
                f"line_budget must be a positive integer or None, got {line_budget!r}"
            )
        if isinstance(completions, str):
            raise InvalidArgument(
                f"completions must be a list of strings, not the string {completions!r}"
            )
        if isolation not in ISOLATIONS:
            raise InvalidArgument(
                f"an agent function runs at isolation 'process' (a worker process, the "
                f"default) or 'inline' (in this process, by name only), not {isolation!r}"
            )
        if isolation == "process" and not can_fork():
            warnings.warn(
                "this platform cannot fork, so the agent runs inline, in this process: its "
                "prints, globals and side effects are the caller's (see docs/determinism.md)",
                RuntimeWarning,
                stacklevel=3,
            )
            isolation = "inline"
        if step_timeout is _DEFAULT:
            step_timeout = DEFAULT_STEP_TIMEOUT if isolation == "process" else None
        if step_timeout is not None and (
            isinstance(step_timeout, bool)
            or not isinstance(step_timeout, (int, float))
            or not step_timeout > 0
        ):
            raise InvalidArgument(
                f"step_timeout must be a positive number of seconds or None, got {step_timeout!r}"
            )
        self.fn = fn
        self.args = tuple(args)
        self.kwargs = dict(kwargs or {})
        self.name = name or str(getattr(fn, "__name__", "agent"))
        self.completions = None if completions is None else tuple(dict.fromkeys(completions))
        self.line_budget = line_budget
        self.isolation = isolation
        self.step_timeout: float | None = step_timeout
        if cache_size is None:
            cache_size = 64 if isolation == "process" else 256
        self._setup(cache_size, _Loop.close)
        self._effects: dict[tuple, tuple[bool, Any]] = {}
        self._effect_list: list[tuple[TraceState, str, str, bool]] = []
        self._effects_lock = threading.Lock()
        # The process mode's records: each step's outcome and printed output, and each
        # step's effect results (pickled), which a rebuilt run is answered from.
        self._pool: Pool | None = None
        self._outcomes: dict[tuple[TraceState, str], Outcome] = {}
        self._outputs: dict[tuple[TraceState | None, str | None], str] = {}
        self._recorded: dict[TraceState, dict[tuple, bytes]] = {}
        self._notes: dict[TraceState, Any] = {}  # state_note's values (pickled in a worker)
        self._alphabet: set[str] = set(self.completions or ())
        self._tried: dict[TraceState, set[str]] = {}  # completions stepped from a held state
        self._along = False  # steps go on in the step's own process (see along)
        if isolation == "process":
            self._start_process()
        else:
            self._start()

    def _no_start(self, kind: str, payload: Any) -> None:
        if kind == "return":
            what = f"returned {payload!r}"
        elif kind == "raise":
            what = f"raised {self._record(kind, payload)}"
        elif kind == "died":
            what = f"died ({payload})"
        elif kind == "clock":
            what = f"ran past its {self.step_timeout} s step watchdog"
        else:
            what = f"ran past its line budget ({self.line_budget} lines)"
        raise InvalidMachine(
            f"agent function {self.name!r} {what} before its first model call, so the machine "
            "has no initial state; make it call model(prompt) first"
        )

    def __reduce__(self) -> tuple:
        # Suspended runs (greenlets, worker processes) cannot be pickled: a copy (for a
        # process pool, say) is the same agent started afresh, with a zygote of its own.
        # Its effect log starts empty: effects are recorded per process.
        return (
            functools.partial(
                AgentMachine,
                self.fn,
                self.args,
                self.kwargs,
                name=self.name,
                completions=self.completions,
                line_budget=self.line_budget,
                isolation=self.isolation,
                step_timeout=self.step_timeout,
            ),
            (),
        )

    # -- the machine (TraceMachine's, with the process mode's steps) ----------------------------
    def _rebuilt_prompt(self, state: TraceState) -> str:
        try:
            if self.isolation == "process":
                self._rebuild(self._workers(), state)
                return self._prompts.get(state)
            return super()._rebuilt_prompt(state)
        except ClockDependent as exc:
            # The watchdog cut the replay before the agent asked anything: there is no
            # prompt. The one shown (and that a run's model reads) says why, as a REPL
            # shows a timeout; its outcome was DIVERGE, which is no prompt.
            raise ClockDependent(exc.reason, f"(no prompt: {exc.reason})") from None

    def harness(self, state: TraceState, completion: str) -> Outcome:
        done = self._outcomes.get((state, completion))
        if done is not None:  # a worker's step is a fact: its effects ran once
            return done
        return super().harness(state, completion)

    def _resumable(self, state: TraceState) -> bool:
        if self.isolation == "process":
            return self._workers().holder(state) is not None
        return super()._resumable(state)

    def _step(self, state: TraceState, completion: str) -> Outcome:
        if self.isolation == "process":
            return self._forked_step(self._workers(), state, completion)
        return super()._step(state, completion)

    def _begin(self) -> _Loop:
        return _Loop(self)

    def _resume(self, loop: _Loop, completion: str | None, state: TraceState) -> tuple[str, Any]:
        if completion is not None:  # the step's effects are keyed by the state it reaches
            loop.state = state
            if loop.effects:
                loop.effects = {}
        return loop.resume(completion)

    def _usable(self, loop: _Loop) -> bool:
        return loop.thread == threading.get_ident() and loop.watchable()

    def _record(self, kind: str, payload: Any, state: TraceState | None = None) -> Any:
        if kind == "died":
            return AgentDied(payload)
        if kind == "raise" and not isinstance(payload, AgentRaised):
            return AgentRaised.of(payload)
        return payload

    def _timed_out(self) -> ClockDependent:
        return ClockDependent(
            f"the step ran past the {self.step_timeout} s wall-clock watchdog (step_timeout), "
            "e.g. a tool that blocks; its outcome came from the clock, not the agent",
            DIVERGE,
        )

    def output(self, state: TraceState, completion: str | None = None) -> str:
        """What the agent printed (stdout and stderr, in order) in the step h(state,
        completion), or, with no completion, before its first model call. A worker's
        output is captured per step; inline, the agent prints to the caller's streams
        and this is ``""``.

        >>> def chatty(model):
        ...     print("starting")
        ...     print("got", model("go?"))
        >>> m = agent_machine(chatty)
        >>> m.output(m.initial), m.output(m.initial, "yes")
        ('starting\\n', 'got yes\\n')
        """
        if completion is not None and (state, completion) not in self._outputs:
            self.harness(state, completion)
        return self._outputs.get((state, completion), "")

    @contextlib.contextmanager
    def along(self) -> Iterator[None]:
        """Steps taken inside go on in the process of the state they start from, which
        then holds the state reached instead (a search forks it, to keep the state for
        its other completions): for a run followed far that does not come back, a keyed
        loop repeated, at a step's cost and not a fork's. A state left behind that is
        asked again is rebuilt from the nearest held one. Outcomes are the same.

        >>> m = agent_machine(lambda model: [model("go?") for _ in range(3)])
        >>> with m.along():
        ...     s = m.harness(m.harness(m.initial, "a"), "b")
        >>> s, m.harness(m.initial, "a")
        (TraceState('a', 'b'), TraceState('a'))
        """
        before, self._along = self._along, True
        try:
            yield
        finally:
            self._along = before

    # -- the process mode ---------------------------------------------------------------------
    def _workers(self) -> Pool:
        pool = self._pool
        if pool is None or not pool.valid():  # made in another process (a fork of this one)
            pool = self._pool = Pool(
                (self.fn, self.args, self.kwargs, self.line_budget), self._cache_size
            )
            weakref.finalize(self, pool.close)
        return pool

    def _start_process(self) -> None:
        report = self._fed(self._workers(), self.initial, [], self.initial)
        self._outputs[(self.initial, None)] = report.output
        self._file_effects(self.initial, None, report.events)
        if report.kind != "prompt":
            self._no_start(report.kind, _value(report))
        self._prompted(self.initial, report.payload)

    def _rebuild(self, pool: Pool, state: TraceState) -> Any:
        """A holder of ``state`` (``None`` when its process cannot be forked), made by
        feeding its completions to a fork of the nearest live server."""
        self._check(state)
        server, k = pool.nearest(state)
        if k == len(state) and server is not pool.zygote:
            if self._prompts.peek(state) is None:  # dropped from the cache: the holder has it
                self._prompted(state, server.payload)
            return server
        report = self._retried(lambda: self._fed(pool, state, [], state))
        self._file_effects(state, None, report.events)
        for reason in report.seen:
            clock.note(reason)
        if report.kind == "clock":
            raise self._timed_out()
        if report.kind == "prompt" and report.index == len(state):
            self._prompted(state, report.payload)
            return report.server
        if report.kind == "died":
            raise InvalidMachine(
                f"the worker of {self.name!r} died while replaying to {state!r} "
                f"({report.payload[0]}): the agent must be a function of its completions"
            )
        raise InvalidArgument(
            f"{state!r} is not a state of {self.name!r}: the run ends before the model "
            f"call after completion {report.index}"
        )

    def _last(self, state: TraceState, completion: str) -> bool:
        """Whether ``completion`` is the last one of the alphabet (``completions``, else
        every completion seen so far) tried from ``state``: then its holder takes the step
        itself, a fork saved (a state asked again later is rebuilt, at a fork's cost)."""
        alphabet = self._alphabet
        if self.completions is None:
            alphabet.add(completion)
        elif completion not in alphabet:
            return False
        tried = self._tried.setdefault(state, set())
        tried.add(completion)
        if len(tried) < len(alphabet):
            return False
        del self._tried[state]
        return True

    def _retried(self, fork: Callable[[], Any]) -> Any:
        """The report of ``fork()``, tried again (up to three times) while the worker it
        asked vanished."""
        for _ in range(3):
            report = fork()
            if report.kind != "lost":
                return report
        raise InvalidMachine(f"the worker processes of {self.name!r} keep vanishing")

    def _step_report(self, pool: Pool, state: TraceState, completion: str, nxt: TraceState) -> Any:
        server = pool.holder(state)
        if server is None and state not in pool.unforkable:
            server = self._rebuild(pool, state)
        if server is None:  # threads in the state's process: feed a fork before it
            return self._fed(pool, state, [completion], nxt)
        take = self._along or self._last(state, completion)
        return pool.fork(server, [completion], {}, self.step_timeout, nxt, take)

    def _fed(self, pool: Pool, state: TraceState, more: list[str], keep: TraceState) -> Any:
        """Feed ``state``'s completions (and ``more``) to a fork of its nearest live server,
        every effect of the replayed steps answered from the record."""
        server, k = pool.nearest(state)
        start = 0 if server is pool.zygote else k + 1
        recorded = self._recorded_for(state, start, len(state))
        return pool.fork(server, [*state.completions[k:], *more], recorded, self.step_timeout, keep)

    def _recorded_for(self, state: TraceState, start: int, stop: int) -> dict[int, dict]:
        prefixes = [self.initial] + [s for _, s in state.history()]
        out = {}
        for i in range(start, min(stop, len(state)) + 1):
            got = self._recorded.get(prefixes[i])
            if got:
                out[i] = got
        return out

    def _forked_step(self, pool: Pool, state: TraceState, completion: str) -> Outcome:
        nxt = state.then(completion)
        report = self._retried(lambda: self._step_report(pool, state, completion, nxt))
        self._file_effects(state, nxt, report.events)
        for reason in report.seen:
            clock.note(reason)
        self._outputs[(state, completion)] = report.output
        if report.kind == "prompt":
            self._prompted(nxt, report.payload)
            outcome: Outcome = nxt
        else:
            outcome = self._ended(state, completion, report.kind, _value(report))
        if report.index != len(nxt) and report.kind != "died":
            raise InvalidMachine(
                f"the replay of {self.name!r} to {state!r} ended after completion "
                f"{report.index}: the agent must be a function of its completions"
            )
        if not report.seen:
            self._outcomes[(state, completion)] = outcome
        return outcome

    def _prompted(self, state: TraceState, payload: tuple) -> None:
        """Keep the prompt (and the state_note) a worker reported for ``state``."""
        self._keep(state, None, payload[0])
        if len(payload) > 1 and payload[1] is not None:
            self._notes[state] = payload[1]

    def note(self, state: TraceState) -> Any:
        """What the agent gave :func:`state_note` before the model call of ``state``
        (``None`` when nothing): data about the state that its prompt does not show, such
        as a framework's own state, from wherever the agent runs.

        >>> def counter(model):
        ...     n = 0
        ...     while True:
        ...         state_note({"n": n})
        ...         n += len(model("more?"))
        >>> m = agent_machine(counter)
        >>> m.note(m.harness(m.harness(m.initial, "ab"), "c"))
        {'n': 3}
        """
        if state not in self._notes:
            self.prompt(state)  # reaching the state's model call records its note
        value = self._notes.get(state)
        return pickle.loads(value) if isinstance(value, bytes) else value

    def _file_effects(self, state: TraceState, nxt: TraceState | None, events: list) -> None:
        """Log the effect executions a worker reported, each under the state of its step
        (``nxt``: the state the step reached, the very object later lookups use)."""
        if not events:
            return
        prefixes = [self.initial] + [s for _, s in state.history()]
        if nxt is not None:
            prefixes.append(nxt)
        with self._effects_lock:
            for index, tool, shown, n, ok, blob in events:
                at = prefixes[min(index, len(prefixes) - 1)]
                self._effect_list.append((at, tool, shown, ok))
                if blob is not None:
                    self._recorded.setdefault(at, {})[(tool, shown, n)] = blob

    def raised(self, state: TraceState, completion: str) -> AgentRaised | AgentDied | None:
        """The :class:`AgentRaised` record when h(state, completion) ended in an exception
        (:class:`AgentDied` when its worker process died), else ``None`` (a state, a
        return, or ``DIVERGE``).

        >>> def strict(model):
        ...     if model("number?") != "1":
        ...         raise ValueError("not 1")
        >>> m = agent_machine(strict)
        >>> m.raised(m.initial, "1"), m.raised(m.initial, "2")
        (None, AgentRaised(type='ValueError', message='not 1'))
        """
        key = (state, completion)
        # The step's end is recorded when it ran: asking again must not replay the run (a
        # checker asks this after every halting step, right after making it).
        if key not in self._results and self.harness(state, completion) is not HALT:
            return None
        outcome = self._results[key]
        return outcome if isinstance(outcome, (AgentRaised, AgentDied)) else None

    def effect_log(self, start: int = 0) -> list[tuple[TraceState, str, str, bool]]:
        """Every effect call that really ran, in order: ``(state, tool, arguments, ok)``;
        from the ``start``-th one on (a reader that keeps its place reads each entry once).

        ``state`` is the history at the step that made the call, ``tool`` the tool's
        qualified name, ``arguments`` the ``repr`` of its arguments, ``ok`` False when it
        raised. Replayed calls are not listed: each entry is one real execution.

        >>> @effect
        ... def ping(n):
        ...     return n
        >>> def pinger(model):
        ...     while True:
        ...         ping(len(model("ping?")))
        >>> m = agent_machine(pinger)
        >>> _ = m.harness(m.harness(m.initial, "a"), "bb")
        >>> [(len(s), tool, args, ok) for s, tool, args, ok in m.effect_log()]
        [(1, 'ping', '((1,), [])', True), (2, 'ping', '((2,), [])', True)]
        """
        return self._effect_list[start:]


def _value(report: Any) -> Any:
    """The value a worker's report of a run's end carries: what it returned (unpickled, or
    an ``Opaque`` of its repr), the ``AgentRaised`` or the reason it died."""
    if report.kind != "return":
        return report.payload[0] if report.payload else None
    blob, shown = report.payload
    if blob is None:
        from .tracefile import Opaque  # tracefile imports run, which imports this module

        return Opaque(shown)
    return pickle.loads(blob)


def agent_machine(
    fn: Callable[..., Any],
    *args: Any,
    name: str | None = None,
    completions: Any = None,
    line_budget: int | None = DEFAULT_LINE_BUDGET,
    isolation: str = "process",
    step_timeout: Any = _DEFAULT,
    **kwargs: Any,
) -> AgentMachine:
    """The agentic machine of the agent function ``fn(model, *args, **kwargs)``.

    ``name`` names the machine (default: the function's name). ``completions``, when
    given, is a finite completion alphabet (for ``explore`` and the exact checks);
    ``line_budget`` is how many Python lines one step may run without calling the model
    before it is ``DIVERGE`` (``None``: no bound, and no line counting). ``isolation``
    is where the agent runs: ``"process"`` (default: worker processes, see
    :class:`AgentMachine`) or ``"inline"``; ``step_timeout`` the seconds a step may
    take (default 10 in a worker, none inline). These five names are reserved; every
    other keyword argument goes to ``fn``.

    >>> def spin(model):
    ...     model("start")
    ...     while True:
    ...         pass
    >>> m = agent_machine(spin, line_budget=10_000)
    >>> m.harness(m.initial, "go")
    ↑
    """
    return AgentMachine(
        fn,
        args,
        kwargs,
        name=name,
        completions=completions,
        line_budget=line_budget,
        isolation=isolation,
        step_timeout=step_timeout,
    )


def effect(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a tool with side effects so that it runs once per real step of an agent machine.

    Inside an agent function run by :func:`agent_machine`, the first call made at a
    given point of a run (the same history of completions, the same tool, arguments
    with the same ``repr``, the same count of such calls earlier in the step) runs
    ``fn``, is reported as an event of its step (:meth:`AgentMachine.effect_log`) and
    its result or exception recorded; every later call at that point, which only a
    replay makes, returns (or raises) a fresh copy of the recorded one. Outside an agent
    machine the wrapper just calls ``fn``. Give tools arguments whose ``repr`` is their
    value (strings, numbers, lists, dicts), so that a replay recognises the call.

    >>> @effect
    ... def send(text):
    ...     return f"sent {text}"
    >>> def mailer(model):
    ...     while True:
    ...         send(model("what to send?"))
    >>> m = agent_machine(mailer)
    >>> s = m.harness(m.initial, "a")
    >>> _ = m.harness(s, "b"), m.harness(s, "c")  # two branches from s: "a" was sent once
    >>> [(tool, args) for _, tool, args, _ in m.effect_log()]
    [('send', "(('a',), [])"), ('send', "(('b',), [])"), ('send', "(('c',), [])")]
    """
    if not callable(fn):
        raise InvalidArgument(f"effect wraps a callable tool, got {fn!r}")

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        worker = current_worker()
        if worker is not None:  # in a worker process: the run of this process
            return worker.effect(fn, args, kwargs)
        loop = _CURRENT.get()
        if loop is None:
            return fn(*args, **kwargs)
        return loop.effect(fn, args, kwargs)

    return wrapper


def state_note(value: Any) -> None:
    """Attach ``value`` to the state the running agent is in, read back with
    :meth:`AgentMachine.note`: the agent calls it before its next model call, and the value
    belongs to the state whose prompt that call is. It crosses from a worker process
    pickled (an unpicklable value is dropped); outside an agent machine it does nothing.

    >>> def agent(model):
    ...     state_note("start")
    ...     model("go?")
    >>> m = agent_machine(agent, isolation="inline")
    >>> m.note(m.initial)
    'start'
    """
    worker = current_worker()
    if worker is not None:
        worker.set_note(value)
        return
    loop = _CURRENT.get()
    if loop is not None:
        loop.note = value


def ending(machine: AgenticMachine, trace: Any) -> str | None:
    """One line saying how an agent function's run ended (``None`` for other machines or
    runs that did not halt or diverge): what it returned, or what it raised.

    >>> from agentic_machines import run
    >>> from agentic_machines.models import ScriptedModel
    >>> m = agent_machine(lambda model: int(model("n?")))
    >>> ending(m, run(m, ScriptedModel(["7"]))), ending(m, run(m, ScriptedModel(["x"])))
    ('agent returned 7', "agent raised ValueError: invalid literal for int() with base 10: 'x'")
    """
    if not isinstance(machine, AgentMachine) or not trace.steps:
        return None
    last = trace.steps[-1]
    if last.outcome is not HALT and last.outcome is not DIVERGE:
        return None
    outcome = machine.result(last.state, last.completion)
    if outcome is DIVERGE:
        return f"agent ran {machine.line_budget} lines without calling the model (diverged)"
    if isinstance(outcome, AgentDied):
        return f"agent died: {outcome.message}"
    if isinstance(outcome, AgentRaised):
        return f"agent raised {outcome}"
    return f"agent returned {outcome!r}"
