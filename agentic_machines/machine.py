"""Agentic machines X = (S, p, h).

Tutorial chapter 1 (``docs/tutorial/01_agentic_machines.md``) teaches the definition.

A machine has a prompt function ``p: S -> str`` and a deterministic harness
``h: S x str -> S ∪ {1, ↑}``; one model call per transition. ``HALT`` (``repr`` ``1``)
and ``DIVERGE`` (``repr`` ``↑``) are the two sentinel outcomes; text output names them
``HALT (1)`` and ``DIVERGE (↑)`` (:func:`show_outcome`), so they never read as states.

>>> m = TableMachine({"a": "say b", "b": "say a"},
...                  {("a", "b"): "b", ("a", "x"): HALT,
...                   ("b", "b"): "a", ("b", "x"): DIVERGE})
>>> m.prompt("a"), m.harness("a", "b"), m.harness("b", "x")
('say b', 'b', ↑)
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

from ._outcome import DIVERGE, HALT, Sentinel, is_sentinel, show_outcome
from ._text import counted
from .errors import InvalidMachine, NotDefined
from .verdict import short_repr

__all__ = [
    "HALT",
    "DIVERGE",
    "Outcome",
    "is_sentinel",
    "show_outcome",
    "AgenticMachine",
    "TableMachine",
    "FunctionMachine",
    "check_closed",
    "distinct_states",
    "distinct_completions",
    "state_set",
    "FiniteParts",
    "finite_parts",
]


State = Hashable
Outcome = Hashable | Sentinel
# A machine's own state type: a subclass whose states are, say, TraceState values
# declares AgenticMachine[TraceState], so its prompt(state: TraceState) is a proper override.
StateT = TypeVar("StateT", bound=Hashable)


class AgenticMachine(Generic[StateT]):
    """Base class: subclasses define :meth:`prompt` and :meth:`harness`.

    Optional attributes describe what is known about the machine: ``states`` (a finite
    collection, or ``None`` when the state space is infinite or unknown),
    ``completions`` (a finite completion alphabet, or ``None`` when every string is a
    completion), ``initial`` (a start state or ``None``) and ``name``.

    >>> class Echo(AgenticMachine):
    ...     name = "echo"
    ...     def prompt(self, state): return state
    ...     def harness(self, state, completion): return HALT if completion == "stop" else completion
    >>> Echo().harness("hi", "stop"), Echo().is_finite
    (1, False)
    """

    states: Collection[StateT] | None = None
    completions: Sequence[str] | None = None
    initial: StateT | None = None
    name: str = "machine"

    def prompt(self, state: StateT) -> str:
        """Return p(state), the prompt the model sees in ``state``."""
        raise NotDefined(f"{type(self).__name__} must define prompt(state)")

    def harness(self, state: StateT, completion: str) -> Outcome:
        """Return h(state, completion): the next state, ``HALT`` or ``DIVERGE``."""
        raise NotDefined(f"{type(self).__name__} must define harness(state, completion)")

    @property
    def is_finite(self) -> bool:
        """True when both the states and the completion alphabet are finite and known."""
        return self.states is not None and self.completions is not None

    def __repr__(self) -> str:
        size = counted(len(self.states), "state") if self.states is not None else "infinite"
        return f"<{type(self).__name__} {self.name!r}: {size}>"

    if TYPE_CHECKING:
        # The notebook display is attached by agentic_machines.drawing.display (which the
        # package's __init__ imports), so the core never imports the drawing layer; these
        # declarations only tell type checkers the methods are there.

        def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
            """Jupyter display: the state diagram (SVG) and plain text, one rich type only."""
            ...

        def tables(self) -> Any:
            """The machine's prompt and transition tables, displayed as Markdown in Jupyter."""
            ...

        def diagram(self, depth: int = 3, completions: Any = None) -> Any:
            """The machine's state diagram explored ``depth`` steps, displayed as SVG."""
            ...


def _unique(items: Iterable[Any]) -> tuple[Any, ...]:
    """Keep the first occurrence of each item, in order (sets would lose the order)."""
    return tuple(dict.fromkeys(items))


class TableMachine(AgenticMachine):
    """A finite machine given by a prompt table and a transition table.

    ``prompts`` maps each state to its prompt (a string). ``transitions`` maps
    ``(state, completion)`` to an outcome. The completion alphabet is ``completions``
    when given, else every completion the table mentions. The table is checked when
    the machine is built: h must be total on S × C and may only return states of S or
    a sentinel; every problem is listed in one :class:`InvalidMachine` error.

    >>> TableMachine({0: "*"}, {(0, "a"): 1})
    Traceback (most recent call last):
      ...
    agentic_machines.errors.InvalidMachine: TableMachine table has 1 problem:
      - transition (0, 'a') -> 1 goes to an unknown state 1
    Fix: give every state a prompt, add a transition for every (state, completion) pair, use only completions of the alphabet, and send transitions only to states in `prompts` or to HALT/DIVERGE.
    """

    # A table is finite by construction: both are always known, never None.
    states: tuple[State, ...]
    completions: tuple[str, ...]

    def __init__(
        self,
        prompts: Mapping[State, str],
        transitions: Mapping[tuple[State, str], Outcome],
        *,
        completions: Iterable[str] | None = None,
        initial: State | None = None,
        name: str | None = None,
    ) -> None:
        if not isinstance(prompts, Mapping):
            raise InvalidMachine(
                f"prompts must be a mapping state -> prompt string, got {type(prompts).__name__}; "
                "pass a dict such as {'s0': 'prompt text'}."
            )
        if not isinstance(transitions, Mapping):
            raise InvalidMachine(
                f"transitions must be a mapping (state, completion) -> outcome, got "
                f"{type(transitions).__name__}; pass a dict such as {{('s0', 'yes'): HALT}}."
            )
        self._prompts = dict(prompts)
        self._table = dict(transitions)
        self.states = _unique(self._prompts)
        if isinstance(completions, str):
            raise InvalidMachine(
                f"completions must be a list of completion strings, got the single string {completions!r}; "
                f"pass e.g. [{completions!r}] (a string would be split into its characters)."
            )
        if completions is None:
            completions = (
                key[1] for key in self._table if isinstance(key, tuple) and len(key) == 2
            )
        self.completions = _unique(completions)
        self.initial = initial
        self.name = name or "table"
        self._validate()

    def _validate(self) -> None:
        problems: list[str] = []
        known = set(self.states)
        alphabet = set(self.completions)
        for state, text in self._prompts.items():
            if not isinstance(text, str):
                problems.append(
                    f"state {state!r} has prompt {text!r}, which is not a string (P = str)"
                )
        for c in self.completions:
            if not isinstance(c, str):
                problems.append(f"completion {c!r} is not a string (C = str)")
        for key, outcome in self._table.items():
            if not (isinstance(key, tuple) and len(key) == 2):
                problems.append(f"transition key {key!r} is not a (state, completion) pair")
                continue
            state, c = key
            if state not in known:
                problems.append(
                    f"transition {key!r} starts from state {state!r}, which has no prompt"
                )
            if c not in alphabet:
                problems.append(
                    f"transition {key!r} uses completion {c!r}, which is not in completions={list(self.completions)!r}"
                )
            if not is_sentinel(outcome) and outcome not in known:
                problems.append(
                    f"transition {key!r} -> {outcome!r} goes to an unknown state {outcome!r}"
                )
        for state in self.states:
            for c in self.completions:
                if (state, c) not in self._table:
                    problems.append(f"missing transition for ({state!r}, {c!r})")
        if self.initial is not None and self.initial not in known:
            problems.append(f"initial state {self.initial!r} is not one of the states")
        if problems:
            raise InvalidMachine(
                f"TableMachine table has {counted(len(problems), 'problem')}:\n"
                + "\n".join(f"  - {p}" for p in problems)
                + "\nFix: give every state a prompt, add a transition for every (state, completion) "
                "pair, use only completions of the alphabet, and send transitions only to states in `prompts` "
                "or to HALT/DIVERGE.",
                problems,
            )

    def prompt(self, state: State) -> str:
        """p(state), looked up in the prompt table."""
        try:
            return self._prompts[state]
        except (KeyError, TypeError):  # TypeError: an unhashable value (a list read from a file)
            raise InvalidMachine(
                f"{short_repr(state)} is not a state of {self.name!r}; its states are "
                f"{short_repr(list(self.states))}"
            ) from None

    def harness(self, state: State, completion: str) -> Outcome:
        """h(state, completion), looked up in the transition table."""
        try:
            return self._table[(state, completion)]
        except (KeyError, TypeError):  # TypeError: an unhashable state or completion
            try:
                known = state in self._prompts
            except TypeError:
                known = False
            if not known:
                raise InvalidMachine(
                    f"{short_repr(state)} is not a state of {self.name!r}"
                ) from None
            raise InvalidMachine(
                f"{short_repr(completion)} is not in the completion alphabet "
                f"{short_repr(list(self.completions))} of {self.name!r}"
            ) from None

    @property
    def prompts(self) -> dict[State, str]:
        """A copy of the prompt table."""
        return dict(self._prompts)

    @property
    def transitions(self) -> dict[tuple[State, str], Outcome]:
        """A copy of the transition table."""
        return dict(self._table)


class FunctionMachine(AgenticMachine):
    """A machine from two functions, ``prompt(state)`` and ``harness(state, completion)``.

    Give ``states`` and ``completions`` when they are finite, so the exact checkers can
    enumerate them; leave them ``None`` for infinite machines.

    >>> parity = FunctionMachine(lambda s: "*", lambda s, c: (s + int(c)) % 2,
    ...                          states=[0, 1], completions=["0", "1"], name="parity")
    >>> parity.harness(1, "1"), parity.is_finite
    (0, True)
    """

    def __init__(
        self,
        prompt: Callable[[State], str],
        harness: Callable[[State, str], Outcome],
        *,
        states: Iterable[State] | None = None,
        completions: Iterable[str] | None = None,
        initial: State | None = None,
        name: str | None = None,
    ) -> None:
        if not callable(prompt) or not callable(harness):
            raise InvalidMachine(
                "FunctionMachine needs two callables, prompt(state) -> str and "
                "harness(state, completion) -> outcome; for tables use TableMachine."
            )
        self._prompt = prompt
        self._harness = harness
        self.states = None if states is None else _unique(states)
        self.completions = None if completions is None else _unique(completions)
        if self.completions is not None:
            bad = [c for c in self.completions if not isinstance(c, str)]
            if bad:
                raise InvalidMachine(f"completions must be strings (C = str); got {bad!r}")
        if initial is not None and self.states is not None and initial not in self.states:
            raise InvalidMachine(f"initial state {initial!r} is not one of the given states")
        self.initial = initial
        self.name = name or str(getattr(harness, "__name__", "function"))

    def prompt(self, state: State) -> str:
        """p(state), computed by the prompt function."""
        return self._prompt(state)

    def harness(self, state: State, completion: str) -> Outcome:
        """h(state, completion), computed by the harness function."""
        return self._harness(state, completion)


# ---------------------------------------------------------------------------------------
# One input normalisation for every decider: S and C are sets, so a state or a completion
# listed twice is the same state or completion, counted and checked once.


def _normalised(machine: AgenticMachine, attr: str, key: str, build: Callable[[Any], Any]) -> Any:
    """``build(getattr(machine, attr))``, kept on the machine (under ``key``) while that
    attribute is the same *immutable* object (a tuple or a frozenset: what TableMachine
    and FunctionMachine store). A list or a set may change in place, so it is normalised
    afresh on every call: a cache keyed on a mutable collection would go stale."""
    raw = getattr(machine, attr)
    cached = machine.__dict__.get(key)
    if cached is not None and cached[0] is raw:
        return cached[1]
    if raw is None:
        return None
    value = build(raw)
    if isinstance(raw, (tuple, frozenset)):
        machine.__dict__[key] = (raw, value)
    return value


def distinct_states(machine: AgenticMachine) -> tuple[State, ...] | None:
    """The declared states, each once, in their first order (``None`` when S is not finite).

    Every exact decider reads S through this, so a machine whose ``states`` lists a state
    twice is decided as the set it means (counts such as |S| <= |C| are over distinct states).

    >>> class Twice(AgenticMachine):
    ...     states, completions = [0, 0, 1], ["a"]
    >>> distinct_states(Twice()), distinct_states(FunctionMachine(lambda s: "", lambda s, c: s))
    ((0, 1), None)
    """
    return _normalised(machine, "states", "_am_distinct_states", _unique)


def distinct_completions(machine: AgenticMachine) -> tuple[str, ...] | None:
    """The declared completion alphabet, each completion once (``None`` when it is every string).

    >>> class Twice(AgenticMachine):
    ...     states, completions = [0], ["a", "a", "b"]
    >>> distinct_completions(Twice())
    ('a', 'b')
    """
    return _normalised(machine, "completions", "_am_distinct_completions", _unique)


def state_set(machine: AgenticMachine) -> frozenset[State] | None:
    """The declared states as a frozenset, for membership tests (``None`` when S is not finite).

    >>> state_set(TableMachine({"a": "go"}, {("a", "x"): HALT}))
    frozenset({'a'})
    """
    return _normalised(machine, "states", "_am_state_set", frozenset)


class FiniteParts(NamedTuple):
    """What an exact decider reads of a finite machine: S in order, S as a set, and C."""

    states: tuple[State, ...]
    state_set: frozenset[State]
    completions: tuple[str, ...]


def finite_parts(machine: AgenticMachine) -> FiniteParts | None:
    """S (each state once, in order), S as a frozenset and C (each completion once) of a
    machine whose states and alphabet are both declared; ``None`` when either is not.

    One test of the result stands for ``is_finite`` and the three look-ups after it, so a
    decider that reasons about S x C cannot reach them on a machine that lacks one.

    >>> finite_parts(TableMachine({"a": "go"}, {("a", "x"): HALT}))
    FiniteParts(states=('a',), state_set=frozenset({'a'}), completions=('x',))
    >>> finite_parts(FunctionMachine(lambda s: "", lambda s, c: s, completions=["x"])) is None
    True
    """
    # Kept on the machine while S and C are the same immutable objects, as each part is
    # (_normalised): a decider asked once per state (is_spe_state) reads them each call.
    raw_states, raw_completions = machine.states, machine.completions
    cached = machine.__dict__.get("_am_finite_parts")
    if cached is not None and cached[0] is raw_states and cached[1] is raw_completions:
        return cached[2]
    states, known = distinct_states(machine), state_set(machine)
    alphabet = distinct_completions(machine)
    if states is None or known is None or alphabet is None:
        return None
    parts = FiniteParts(states, known, alphabet)
    if isinstance(raw_states, (tuple, frozenset)) and isinstance(
        raw_completions, (tuple, frozenset)
    ):
        machine.__dict__["_am_finite_parts"] = (raw_states, raw_completions, parts)
    return parts


# ---------------------------------------------------------------------------------------
# Finite means checked: the premise of every exact decision, in one pass over S x C.


def check_closed(machine: AgenticMachine) -> None:
    """Check that a finite machine stays inside its declared states; raise if it leaves them.

    Every exact decision on a finite machine (F1, the embedding search) reasons about
    the declared ``states``: it is sound only if h(s, c) is one of them (or ``HALT`` /
    ``DIVERGE``) for every state s and completion c, and every prompt is a string. This
    is one pass over S x C (a :class:`TableMachine` was checked when it was built, so it
    is not walked again). A machine that leaves its states gets one
    :class:`~agentic_machines.errors.InvalidMachine` naming the state and the completion.
    A machine whose states or alphabet are not both known is not checked here (no exact
    decision is made on it).

    >>> g = FunctionMachine(lambda s: "p", lambda s, c: 5 if s == 1 else 0,
    ...                     states=[0, 1], completions=["a"], name="g")
    >>> check_closed(g)
    Traceback (most recent call last):
      ...
    agentic_machines.errors.InvalidMachine: g leaves its declared states: h(1, 'a') = 5, which is not one of its declared states [0, 1] (nor HALT/DIVERGE). Fix: add 5 to `states`, or fix the harness so that it stays inside them.
    """
    parts = None if isinstance(machine, TableMachine) else finite_parts(machine)
    if parts is None:
        return
    # h is a function, so a pass that found the machine closed holds while S and C are
    # the same immutable objects: is_spe_state on every state walks S x C once, not |S| times.
    key = (machine.states, machine.completions)
    done = machine.__dict__.get("_am_closed")
    if done is not None and done[0] is key[0] and done[1] is key[1]:
        return
    states, known, alphabet = parts
    for s in states:
        prompt = machine.prompt(s)
        if not isinstance(prompt, str):
            raise InvalidMachine(
                f"{machine.name} has a prompt that is not a string: p({short_repr(s, 60)}) = {short_repr(prompt, 60)}. "
                "Fix: make prompt(state) return a string (P = str)."
            )
        for c in alphabet:
            out = machine.harness(s, c)
            if not is_sentinel(out) and out not in known:
                shown = (
                    short_repr(list(states), 60) if len(states) <= 8 else f"({len(states)} states)"
                )
                raise InvalidMachine(
                    f"{machine.name} leaves its declared states: h({short_repr(s, 60)}, {short_repr(c, 60)}) = {short_repr(out, 60)}, "
                    f"which is not one of its declared states {shown} (nor HALT/DIVERGE). Fix: add "
                    f"{short_repr(out, 60)} to `states`, or fix the harness so that it stays inside them.",
                    [f"h({s!r}, {c!r}) = {out!r} is not a declared state"],
                )
    if all(isinstance(part, (tuple, frozenset)) for part in key):
        machine.__dict__["_am_closed"] = key
