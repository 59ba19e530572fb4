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

from collections import OrderedDict
from collections.abc import Callable, Generator
from typing import Any

from .._text import clip
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
        out: list[str] = []
        node: TraceState | None = self
        while node is not None:
            parent, last, length, _ = node._node
            if not length:
                break
            out.append(last)  # type: ignore[arg-type]  # a node of length > 0 has one
            node = parent
        return tuple(reversed(out))

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


class HarnessMachine(AgenticMachine[TraceState]):
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

    # Every run starts from the empty trace, so the start state is always known.
    initial: TraceState

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
        self.initial = TraceState(())
        self._cache_size = cache_size
        self._live: OrderedDict[TraceState, Generator[str, str, Any]] = OrderedDict()
        self._prompts: OrderedDict[TraceState, str] = OrderedDict()
        self._results: OrderedDict[tuple[TraceState, str], Any] = OrderedDict()
        # cached prompts and live runs that a clock-dependent step left: no facts either
        self._clock = clock.Marks(cache_size)
        self._start()  # fail at build time if the program cannot even produce a first prompt

    def __getstate__(self) -> dict[str, Any]:
        # Live generators do not pickle, and the caches are only a speed-up: a copy sent
        # to another process (explore with an executor) starts with empty ones.
        state = self.__dict__.copy()
        for cache in ("_live", "_prompts", "_results"):
            state[cache] = OrderedDict()
        state["_clock"] = clock.Marks(self._cache_size)
        return state

    # -- the machine -----------------------------------------------------------------
    def prompt(self, state: TraceState) -> str:
        """p(state): the prompt the program yields after ``state.completions``.

        Raises :class:`~agentic_machines.errors.ClockDependent` (with the prompt as its
        ``outcome``) when rebuilding the state met a wall-clock deadline or the host's load.
        """
        cached = self._prompts.get(state)
        if cached is not None:
            self._prompts.move_to_end(state)
        return self._clock.prompt(state, cached, lambda: self._replay(state)[1])

    def harness(self, state: TraceState, completion: str) -> Outcome:
        """h(state, completion): resume the program with ``completion``.

        When the step met a wall-clock deadline or the host's load (an isolated block
        stopped by its ``timeout_s``, see :mod:`agentic_machines.execution.clock`), it raises
        :class:`~agentic_machines.errors.ClockDependent` carrying the outcome instead of
        returning it: a run goes on with it, a check counts the step undecided.
        """
        if not isinstance(completion, str):
            raise InvalidArgument(f"completions are strings (C = str), got {completion!r}")
        # Resuming the live run of a state a clock-dependent step made goes on from what
        # the clock decided; a run rebuilt from the start meets any deadline again.
        return self._clock.step(
            state,
            state in self._live,
            lambda: self._step(state, completion),
            lambda outcome: isinstance(outcome, TraceState),
        )

    def _step(self, state: TraceState, completion: str) -> Outcome:
        gen = self._live.pop(state, None)
        if gen is None:
            gen = self._replay(state)[0]
            self._live.pop(state, None)
        nxt = state.then(completion)
        try:
            prompt = self._advance(gen, completion)
        except StopIteration as stop:
            self._remember(self._results, (state, completion), stop.value)
            return HALT
        except BudgetExceeded:
            gen.close()
            self._remember(self._results, (state, completion), DIVERGE)
            return DIVERGE
        except Exception as exc:  # noqa: BLE001 - a harness bug is reported, not hidden
            if self.on_error == "halt":
                self._remember(self._results, (state, completion), exc)
                return HALT
            raise HarnessError(
                f"harness program {self.name!r} raised {type(exc).__name__}: {exc} after "
                f"{len(nxt)} completion(s); make the harness handle every completion string, "
                "or build the machine with on_error='halt'."
            ) from exc
        self._remember(self._live, nxt, gen)
        self._remember(self._prompts, nxt, prompt)
        return nxt

    def result(self, state: TraceState, completion: str) -> Any:
        """The value the program returned when h(state, completion) halted.

        For ``DIVERGE`` it is ``DIVERGE``; with ``on_error='halt'`` it is the exception.
        """
        key = (state, completion)
        if key not in self._results:
            if self.harness(state, completion) not in (HALT, DIVERGE):
                raise InvalidArgument(
                    f"h({state!r}, {completion!r}) does not halt; there is no result"
                )
        return self._results[key]

    # -- replay machinery --------------------------------------------------------------
    def _start(self) -> tuple[Generator[str, str, Any], str]:
        gen = self.program(*self.args, **self.kwargs)
        try:
            prompt = self._advance(gen, None)
        except StopIteration:
            raise InvalidMachine(
                f"harness program {self.name!r} returned before yielding its first prompt"
            ) from None
        except BudgetExceeded:
            raise InvalidMachine(
                f"harness program {self.name!r} ran past its line budget ({self.line_budget}) "
                "before its first prompt; raise line_budget or fix the loop"
            ) from None
        return gen, prompt

    def _replay(self, state: TraceState) -> tuple[Generator[str, str, Any], str]:
        if not isinstance(state, TraceState):
            raise InvalidArgument(
                f"{state!r} is not a state of {self.name!r}; its states are TraceState(...) values"
            )
        gen, prompt = self._start()
        for i, c in enumerate(state.completions):
            try:
                prompt = self._advance(gen, c)
            except (StopIteration, BudgetExceeded):
                raise InvalidArgument(
                    f"{state!r} is not a state of {self.name!r}: the run ends after completion {i + 1}"
                ) from None
        self._remember(self._live, state, gen)
        self._remember(self._prompts, state, prompt)
        return gen, prompt

    def _advance(self, gen: Generator[str, str, Any], completion: str | None) -> str:
        if self.line_budget is None:
            prompt = next(gen) if completion is None else gen.send(completion)
        else:
            with LineBudget(self.line_budget):
                prompt = next(gen) if completion is None else gen.send(completion)
        if not isinstance(prompt, str):
            raise HarnessError(
                f"harness program {self.name!r} yielded {prompt!r}; it must yield prompt strings (P = str)"
            )
        return prompt

    def _remember(self, cache: OrderedDict, key: Any, value: Any) -> None:
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > self._cache_size:
            cache.popitem(last=False)
