"""HarnessMachine: a generator function becomes an agentic machine.

See ``docs/design.md`` (harnesses as machines).

Most agent harnesses are easiest to write as a loop that *yields* a prompt and
*receives* the completion. :class:`HarnessMachine` turns such a generator function
into an :class:`~agentic_machines.machine.AgenticMachine` whose states are trace
states: the tuple of completions fed so far. Because the harness is deterministic, that
tuple determines everything (the prompt, the environment, the transcript).

>>> def guess(secret):
...     tries = ()
...     while True:
...         c = yield f"Guess the word. Tried: {', '.join(tries) or 'nothing'}."
...         if c.strip() == secret:
...             return "found"
...         tries += (c.strip(),)
>>> m = HarnessMachine(guess, "owl")
>>> s1 = m.harness(m.initial, "cat")
>>> m.prompt(s1)
'Guess the word. Tried: cat.'
>>> m.harness(s1, "owl"), m.result(s1, "owl")
(1, 'found')

Linear runs cost O(1) per step: the live generator of the last state is cached and
resumed. Branching (a second completion from the same state) replays the generator
from the start. A harness step that runs more than ``line_budget`` Python lines
before yielding again is ``DIVERGE`` (counted in lines, never seconds, so the verdict
is deterministic). Programs must be deterministic and must build any mutable
environment afresh each time they start, because replays start them again.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Generator
from typing import Any

from .._text import clip, counted
from ..errors import BudgetExceeded, InvalidArgument, InvalidMachine
from ..execution import clock
from ..execution.budget import LineBudget
from ..machine import DIVERGE, HALT, AgenticMachine, Outcome

__all__ = ["HarnessMachine", "TraceState", "HarnessError"]

Program = Callable[..., Generator[str, str, Any]]


class HarnessError(InvalidMachine):
    """The harness program itself raised; the machine definition has a bug.

    >>> def broken():
    ...     c = yield "go"
    ...     raise ValueError(c)
    >>> m = HarnessMachine(broken)
    >>> try:
    ...     m.harness(m.initial, "x")
    ... except HarnessError as exc:
    ...     print(type(exc.__cause__).__name__)
    ValueError
    """


class TraceState:
    """A state of a :class:`HarnessMachine`: the completions fed so far, in order.

    Stored as a persistent linked list with a cached hash, so that extending a state
    by one completion, hashing it and looking it up are O(1): a linear run of n steps
    costs O(n), not O(n²). Immutable, hashable, and equal exactly when the completion
    tuples are equal.

    >>> TraceState().then("a").then("b") == TraceState(("a", "b"))
    True
    >>> TraceState(("a", "b")).completions
    ('a', 'b')
    """

    # One slot, the tuple (parent, last completion, length, hash), set once: making a node
    # is then one tuple and one store (a linear run makes one per step).
    __slots__ = ("_node",)
    _node: tuple[TraceState | None, str | None, int, int]

    def __init__(self, completions: tuple[str, ...] = ()) -> None:
        node: TraceState | None = None
        for c in completions:
            node = _extend(node, c)
        _set_node(self, _EMPTY if node is None else node._node)

    def then(self, completion: str) -> TraceState:
        """The state after one more completion."""
        return _extend(self, completion)

    @property
    def completions(self) -> tuple[str, ...]:
        """The completions fed so far, oldest first."""
        return tuple(c for c, _ in self.history())

    def history(self) -> list[tuple[str, TraceState]]:
        """``(completion, state after it)`` for every completion so far, oldest first: this
        state's own prefixes, not copies (a lookup keyed by one of them then finds it by
        identity, where an equal copy would be compared node by node, O(length)).

        >>> s = TraceState().then("a").then("b")
        >>> [(c, t.completions) for c, t in s.history()], s.history()[-1][1] is s
        ([('a', ('a',)), ('b', ('a', 'b'))], True)
        """
        out: list[tuple[str, TraceState]] = []
        node: TraceState | None = self
        while node is not None:
            parent, last, length, _ = node._node
            if not length:
                break
            out.append((last, node))  # type: ignore[arg-type]  # a node of length > 0 has one
            node = parent
        out.reverse()
        return out

    def __len__(self) -> int:
        return self._node[2]

    def __hash__(self) -> int:
        return self._node[3]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TraceState):
            return NotImplemented
        a: TraceState | None = self
        b: TraceState | None = other
        while a is not b:  # iterative: a long trace never recurses
            if a is None or b is None:
                return False
            na, nb = a._node, b._node
            if na is nb:  # the same node (a state rebuilt from another shares it)
                return True
            if na[3] != nb[3] or na[2] != nb[2] or na[1] != nb[1]:
                return False
            a, b = na[0], nb[0]
        return True

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("TraceState is immutable")

    def __reduce__(self) -> tuple:
        return (TraceState, (self.completions,))

    def __repr__(self) -> str:
        shown = ", ".join(repr(clip(c, 24)) for c in self.completions)
        return f"TraceState({shown})"


_set_node = TraceState.__dict__["_node"].__set__  # the slot's own setter (no __setattr__)
_new = object.__new__
_EMPTY: tuple = (None, None, 0, hash(("TraceState",)))


def _extend(parent: TraceState | None, completion: str) -> TraceState:
    node = _new(TraceState)
    if parent is None:
        _set_node(node, (None, completion, 1, hash((_EMPTY[3], completion))))
    else:
        up = parent._node
        _set_node(
            node, (parent if up[2] else None, completion, up[2] + 1, hash((up[3], completion)))
        )
    return node


class RunCache:
    """Suspended runs (or other values costly to rebuild) by state, at most ``size``.

    The one cache policy of the trace-state machines and of the agent's worker pool: when
    full, drop the least recently used state already stepped from (a breadth-first
    search never comes back to it), else the newest but the one just kept (the states
    made first are the ones such a search needs first). ``close`` ends a dropped value.

    >>> cache = RunCache(2, print)
    >>> cache.put("a", 1); cache.put("b", 2); cache.put("c", 3)
    2
    >>> cache.stepped("a"); cache.put("d", 4)
    1
    >>> list(cache.items())
    [('c', 3), ('d', 4)]
    """

    __slots__ = ("_items", "_stepped", "size", "close")

    def __init__(self, size: int, close: Callable[[Any], Any] | None = None) -> None:
        self._items: OrderedDict[Any, Any] = OrderedDict()
        self._stepped: set[Any] = set()
        self.size = max(1, size)
        self.close = close

    def get(self, key: Any) -> Any:
        """The value of ``key`` (``None`` when not kept), now the most recently used."""
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def peek(self, key: Any) -> Any:
        """The value of ``key`` (``None`` when not kept), its place left as it is."""
        return self._items.get(key)

    def pop(self, key: Any) -> Any:
        """Take ``key``'s value out (``None`` when not kept), without closing it."""
        self._stepped.discard(key)
        return self._items.pop(key, None)

    def put(self, key: Any, value: Any) -> None:
        """Keep ``value`` for ``key``, dropping others when full."""
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            victim = next((k for k in self._items if k in self._stepped and k != key), None)
            if victim is None:
                victim = next(k for k in reversed(self._items) if k != key)
            dropped = self.pop(victim)
            if self.close is not None:
                self.close(dropped)

    def stepped(self, key: Any) -> None:
        """Say that a step was made from ``key``: it is dropped first."""
        if key in self._items:
            self._stepped.add(key)

    def items(self) -> list[tuple[Any, Any]]:
        """The kept pairs, least recently used first."""
        return list(self._items.items())

    def clear(self) -> None:
        """Forget every value (none is closed)."""
        self._items.clear()
        self._stepped.clear()


class TraceMachine(AgenticMachine[TraceState]):
    """A machine whose states are trace states, run by resuming a suspended run.

    The base of :class:`HarnessMachine` and of the agent functions' ``AgentMachine``: one
    cache of suspended runs (:class:`RunCache`), one replay (a state not cached is reached
    by feeding its completions to a new run), one record of the halting steps' results
    and one use of :class:`~agentic_machines.execution.clock.Marks`. A subclass says how
    a run starts (``_begin``), goes on to its next model call or end (``_resume``, which
    returns ``(kind, payload)``, kind ``"prompt"``, ``"return"``, ``"raise"``,
    ``"diverge"`` or ``"clock"``) and what a halting step records (``_record``).
    ``divergent`` is ``(steps, seconds)`` spent in steps that ran out of ``line_budget``.
    """

    # Every run starts from the empty trace, so the start state is always known.
    initial: TraceState
    name: str
    line_budget: int | None

    def _setup(self, cache_size: int, close: Callable[[Any], Any] | None = None) -> None:
        self.initial = TraceState(())
        self._cache_size = max(1, cache_size)
        self._live = RunCache(self._cache_size, close)
        self._prompts = RunCache(4 * self._cache_size)
        self._results: dict[tuple[TraceState, str], Any] = {}
        # cached prompts and live runs that a clock-dependent step left: no facts either
        self._clock = clock.Marks(4 * self._cache_size)
        self.divergent: tuple[int, float] = (0, 0.0)

    def _start(self) -> None:
        run = self._begin()
        kind, payload = self._resume(run, None, self.initial)
        if kind != "prompt":
            self._no_start(kind, payload)
        self._keep(self.initial, run, payload)

    # -- what a subclass says ------------------------------------------------------------
    def _begin(self) -> Any:
        raise NotImplementedError

    def _resume(self, run: Any, completion: str | None, state: TraceState) -> tuple[str, Any]:
        raise NotImplementedError

    def _record(self, kind: str, payload: Any, state: TraceState) -> Any:
        raise NotImplementedError

    def _no_start(self, kind: str, payload: Any) -> None:
        raise NotImplementedError

    def _usable(self, run: Any) -> bool:
        return True

    def _timed_out(self) -> Exception:
        raise NotImplementedError

    # -- the machine -----------------------------------------------------------------------
    def prompt(self, state: TraceState) -> str:
        """p(state): the prompt of the model call after ``state``'s completions.

        Raises :class:`~agentic_machines.errors.ClockDependent` (with the prompt as its
        ``outcome``) when reaching the state met a wall-clock deadline or the host's load.
        """
        return self._clock.prompt(
            state, self._prompts.get(state), lambda: self._rebuilt_prompt(state)
        )

    def _rebuilt_prompt(self, state: TraceState) -> str:
        return self._replay(state)[1]

    def harness(self, state: TraceState, completion: str) -> Outcome:
        """h(state, completion): resume the run with ``completion`` as the model's answer.

        When the step met a wall-clock deadline or the host's load (see
        :mod:`agentic_machines.execution.clock`), it raises
        :class:`~agentic_machines.errors.ClockDependent` carrying the outcome: a run goes
        on with it, a check counts the step undecided.
        """
        if type(completion) is not str and not isinstance(completion, str):
            raise InvalidArgument(f"completions are strings (C = str), got {completion!r}")
        began = time.perf_counter()
        self._prompts.stepped(state)  # a search asks a state's prompt before its steps
        # Resuming the live run of a state a clock-dependent step made goes on from what
        # the clock decided; a run rebuilt from the start meets any deadline again.
        outcome = self._clock.step(
            state,
            self._resumable(state),
            lambda: self._step(state, completion),
            lambda outcome: isinstance(outcome, TraceState),
        )
        if outcome is DIVERGE:  # timed for progress lines only, never for an outcome
            steps, seconds = self.divergent
            self.divergent = (steps + 1, seconds + time.perf_counter() - began)
        return outcome

    def _resumable(self, state: TraceState) -> bool:
        run = self._live.peek(state)
        return run is not None and self._usable(run)

    def _step(self, state: TraceState, completion: str) -> Outcome:
        run = self._live.pop(state)
        if run is None or not self._usable(run):
            if run is not None and self._live.close is not None:
                self._live.close(run)
            run = self._replay(state)[0]
            self._live.pop(state)
        nxt = state.then(completion)
        kind, payload = self._resume(run, completion, nxt)
        if kind == "prompt":
            self._keep(nxt, run, payload)
            return nxt
        return self._ended(state, completion, kind, payload)

    def _ended(self, state: TraceState, completion: str, kind: str, payload: Any) -> Outcome:
        """Record how h(state, completion) ended, and its outcome."""
        if kind == "clock":  # not recorded: the clock decided it, it is no fact about h
            raise self._timed_out()
        if kind == "diverge":
            self._results[(state, completion)] = DIVERGE
            return DIVERGE
        self._results[(state, completion)] = self._record(kind, payload, state.then(completion))
        return HALT

    def _keep(self, state: TraceState, run: Any, prompt: str) -> None:
        self._prompts.put(state, prompt)
        if run is not None:
            self._live.put(state, run)

    def result(self, state: TraceState, completion: str) -> Any:
        """What ended the run at h(state, completion): what it returned (a subclass's
        record of a raise), or ``DIVERGE``. Not defined for a step that reaches a state."""
        key = (state, completion)
        if key not in self._results and self.harness(state, completion) not in (HALT, DIVERGE):
            raise InvalidArgument(
                f"h({state!r}, {completion!r}) reaches a state, so the run has no result there"
            )
        return self._results[key]

    def _check(self, state: Any) -> None:
        if not isinstance(state, TraceState):
            raise InvalidArgument(
                f"{state!r} is not a state of {self.name!r}; its states are TraceState(...) values"
            )

    def _replay(self, state: TraceState) -> tuple[Any, str]:
        """A run fed ``state``'s completions (kept as its live run) and its prompt."""
        self._check(state)
        run = self._begin()
        kind, payload = self._resume(run, None, self.initial)
        fed = 0
        # state's own prefixes: what is keyed by a step's state (an agent's effect
        # records) is then found by identity, where an equal copy costs O(depth) a lookup
        for c, prefix in state.history():
            if kind != "prompt":
                break
            fed += 1
            kind, payload = self._resume(run, c, prefix)
        if kind == "clock":
            raise self._timed_out()
        if kind != "prompt":
            raise InvalidArgument(
                f"{state!r} is not a state of {self.name!r}: the run ends before the model "
                f"call after completion {fed}"
            )
        self._keep(state, run, payload)
        return run, payload


class HarnessMachine(TraceMachine):
    """The agentic machine of a generator-function harness ``program(*args, **kwargs)``.

    p(s) is the prompt the generator yields after being sent s's completions;
    h(s, c) is ``s.then(c)``, or ``HALT`` when the generator returns (its return
    value is kept, see :meth:`result`), or ``DIVERGE`` when one step runs more than
    ``line_budget`` lines. An exception raised by the program is a bug in the harness:
    it is re-raised as :class:`HarnessError` (``on_error="raise"``) or, with
    ``on_error="halt"``, recorded in :meth:`result` and treated as ``HALT``.

    >>> def count(limit):
    ...     n = 0
    ...     while n < limit:
    ...         c = yield f"n = {n}; say 'up'"
    ...         n += c == "up"
    ...     return n
    >>> m = HarnessMachine(count, 2)
    >>> s = m.harness(m.initial, "up")
    >>> s, m.prompt(s), m.harness(s, "up"), m.result(s, "up")
    (TraceState('up'), "n = 1; say 'up'", 1, 2)
    """

    def __init__(
        self,
        program: Program,
        *args: Any,
        line_budget: int | None = 1_000_000,
        on_error: str = "raise",
        name: str | None = None,
        cache_size: int = 256,
        **kwargs: Any,
    ) -> None:
        if not callable(program):
            raise InvalidMachine(f"HarnessMachine needs a generator function, got {program!r}")
        if on_error not in ("raise", "halt"):
            raise InvalidArgument(f"on_error must be 'raise' or 'halt', got {on_error!r}")
        self.program = program
        self.args = args
        self.kwargs = kwargs
        self.line_budget = line_budget
        self.on_error = on_error
        self.name = name or str(getattr(program, "__name__", "harness"))
        self._setup(cache_size)
        self._start()  # fail at build time if the program cannot even produce a first prompt

    def __getstate__(self) -> dict[str, Any]:
        # Live generators do not pickle, and the caches are only a speed-up: a copy sent
        # to another process (explore with an executor) starts with empty ones.
        state = self.__dict__.copy()
        state["_live"] = RunCache(self._cache_size)
        state["_prompts"] = RunCache(4 * self._cache_size)
        state["_results"] = {}
        state["_clock"] = clock.Marks(4 * self._cache_size)
        return state

    def _begin(self) -> Generator[str, str, Any]:
        return self.program(*self.args, **self.kwargs)

    def _resume(
        self, gen: Generator[str, str, Any], completion: str | None, state: TraceState
    ) -> tuple[str, Any]:
        try:
            if self.line_budget is None:
                prompt = next(gen) if completion is None else gen.send(completion)
            else:
                with LineBudget(self.line_budget):
                    prompt = next(gen) if completion is None else gen.send(completion)
        except StopIteration as stop:
            return "return", stop.value
        except BudgetExceeded:
            gen.close()
            return "diverge", None
        except Exception as exc:  # noqa: BLE001 - a harness bug is reported, not hidden
            return "raise", exc
        if not isinstance(prompt, str):
            raise HarnessError(
                f"harness program {self.name!r} yielded {prompt!r}; it must yield prompt strings (P = str)"
            )
        return "prompt", prompt

    def _record(self, kind: str, payload: Any, state: TraceState) -> Any:
        if kind == "raise" and self.on_error != "halt":
            raise HarnessError(
                f"harness program {self.name!r} raised {type(payload).__name__}: {payload} "
                f"after {counted(len(state), 'completion')}; make the harness handle every completion "
                "string, or build the machine with on_error='halt'."
            ) from payload
        return payload

    def _no_start(self, kind: str, payload: Any) -> None:
        if kind == "raise":
            raise payload
        if kind == "return":
            raise InvalidMachine(
                f"harness program {self.name!r} returned before yielding its first prompt"
            )
        raise InvalidMachine(
            f"harness program {self.name!r} ran past its line budget ({self.line_budget}) "
            "before its first prompt; raise line_budget or fix the loop"
        )
