"""The breadth-first search kernel that every exhaustive decider of the toolkit builds on.

:func:`~agentic_machines.runtime.explore.explore`, its executor path
(:mod:`~agentic_machines.runtime.parallel`) and
:func:`~agentic_machines.checking.check_properties` all walk the graph a machine reaches
from its start over a completion alphabet, with one alphabet rule (:func:`alphabet`,
:func:`offered`), one bound rule (:class:`Bounds`) and one start rule (:func:`roots`),
applied at once by :func:`plan`; one expansion (:func:`expand`); one loop (:func:`walk`,
which fills a :class:`Found` record, each search with its own :class:`Walk`: how a batch
of states is expanded and what is watched as it goes); and one way of showing progress
(:class:`Reporter`). Every search runs with the garbage collector's full collections
paused (:mod:`~agentic_machines.runtime.collector`).

>>> from agentic_machines import TableMachine, HALT
>>> m = TableMachine({0: "p", 1: "q"}, {(0, "a"): 1, (0, "b"): HALT, (1, "a"): 1, (1, "b"): 0})
>>> found = Found()
>>> walk(Walk(plan(m, 0, ["a", "b"]), found), Reporter(False), 0.0)
>>> [s for s, _comps, _row in found.rows], found.depth == {0: 0, 1: 1, HALT: 1}
([0, 1], True)
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, NamedTuple

from .._outcome import Raised, halt_raised
from .._text import counted
from ..errors import (
    ClockDependent,
    InvalidArgument,
    Undecided,
    equal_states,
    none_state,
    unhashable_state,
)
from ..machine import DIVERGE, HALT, AgenticMachine
from ..verdict import short_repr

__all__ = [
    "Completions",
    "Progress",
    "Choose",
    "alphabet",
    "offered",
    "Bounds",
    "roots",
    "Plan",
    "plan",
    "Reporter",
    "UndecidedStep",
    "prompt_of",
    "Expansion",
    "expand",
    "none_state",
    "Found",
    "Walk",
    "walk",
    "cut_row",
    "same_state",
    "refuse_merged",
    "check_merged",
    "stats",
    "rate",
    "choices",
    "PROGRESS_AFTER",
    "PROGRESS_EVERY",
]

Completions = Sequence[str] | Callable[[str], Iterable[str]]
"""An alphabet as callers give it: a finite list, or a function ``prompt -> completions``."""

Choose = Callable[[str], Iterable[str]]
"""A function that picks the completions to try at a prompt."""

Progress = None | bool | Callable[[dict[str, Any]], None]
"""``None``: status lines on the ``agentic_machines`` logger for long runs (the command
line shows them on stderr); ``False``: silent; a function: called."""

PROGRESS_AFTER = 2.0
"""Seconds of search before the first status line (short runs stay silent)."""

PROGRESS_EVERY = 2.0
"""Seconds between two status lines."""

CHECK_CLOCK_EVERY = 512  # expansions between clock reads: keeps the loop tight


# -- the alphabet rule -------------------------------------------------------------------------
def alphabet(
    machine: AgenticMachine, completions: Completions | None, what: str = "the search"
) -> tuple[list[str] | None, Choose | None]:
    """``(fixed, choose)``: the finite alphabet to try at every state, or the function
    that picks one per prompt (exactly one of the two is ``None``).

    ``completions`` defaults to the machine's own finite alphabet. A list loses its
    duplicates (the first occurrence keeps its place); an empty one is allowed and makes
    every state stuck, as a function that offers nothing would. ``what`` names the caller
    in the error for a machine with no finite alphabet.

    >>> from agentic_machines import TableMachine, HALT
    >>> m = TableMachine({0: "p"}, {(0, "a"): HALT, (0, "b"): 0})
    >>> alphabet(m, None), alphabet(m, ["b", "a", "b"]), alphabet(m, [])
    ((['a', 'b'], None), (['b', 'a'], None), ([], None))
    >>> alphabet(m, "ab")
    Traceback (most recent call last):
    ...
    agentic_machines.errors.InvalidArgument: completions must be a list of strings, not the single string 'ab'; wrap it: ['ab']
    """
    if completions is None:
        completions = machine.completions
    if completions is None:
        raise InvalidArgument(
            f"machine {machine.name!r} has no finite completion alphabet, so {what} does not know "
            "which completions to follow; pass completions=[...] or a function prompt -> list of completions"
        )
    if callable(completions):
        return None, completions
    if isinstance(completions, str):
        raise InvalidArgument(
            f"completions must be a list of strings, not the single string {completions!r}; wrap it: [{completions!r}]"
        )
    if not isinstance(completions, Iterable):
        raise InvalidArgument(
            f"completions must be a list of strings or a function prompt -> list of completions, "
            f"not a {type(completions).__name__}"
        )
    return _strings(completions, "completions are strings (C = str); got ", ""), None


def offered(choose: Choose, prompt: str, state: Any) -> list[str]:
    """The completions ``choose`` offers at ``prompt`` (the prompt of ``state``), checked
    and without duplicates: a repeated completion would be counted twice.

    >>> offered(lambda p: ["x", "y", "x"], "p", 0)
    ['x', 'y']
    >>> offered(lambda p: [1], "p", 0)
    Traceback (most recent call last):
    ...
    agentic_machines.errors.InvalidArgument: the completions function returned non-strings [1] for the prompt of 0; it must return a list of completion strings
    """
    comps = choose(prompt)
    if isinstance(comps, str):
        raise InvalidArgument(
            f"the completions function returned the single string {comps!r} for the prompt of "
            f"{short_repr(state, 60)}; it must return a list of completion strings"
        )
    return _strings(
        comps,
        "the completions function returned non-strings ",
        f" for the prompt of {short_repr(state, 60)}; it must return a list of completion strings",
    )


def choices(fixed: list[str] | None, choose: Choose | None, prompt: str, state: Any) -> list[str]:
    """The completions to try at ``state`` (whose prompt is ``prompt``): the fixed
    alphabet, or what ``choose`` offers there (exactly one of the two is ``None``, as
    :func:`alphabet` returns them).

    >>> choices(["a"], None, "p", 0), choices(None, lambda p: [p, p], "q", 0)
    (['a'], ['q'])
    """
    return fixed if fixed is not None else offered(choose, prompt, state)  # type: ignore[arg-type]


def _strings(values: Iterable[Any], before: str, after: str) -> list[str]:
    """``values`` without duplicates (first places kept), refused unless all are strings."""
    distinct = list(dict.fromkeys(values))
    bad = [c for c in distinct if not isinstance(c, str)]
    if bad:
        raise InvalidArgument(f"{before}{bad!r}{after}")
    return distinct


# -- the bound rule ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Bounds:
    """How far a search goes: at most ``max_states`` states recorded (``None``: no
    bound; the search stops at the first new state beyond it), and states at depth
    ``max_depth`` (``None``: none) are recorded but not expanded.

    >>> b = Bounds(10, 2)
    >>> b.limit, b.depth_cut(), b.full(10)
    (10, 'max_depth=2: states at depth 2 were not expanded', 'max_states=10: the search stopped when the graph held 10 states')
    >>> Bounds(0, None)
    Traceback (most recent call last):
    ...
    agentic_machines.errors.InvalidArgument: max_states must be a whole number, at least 1 (or None for no bound), got 0
    """

    max_states: int | None
    max_depth: int | None

    def __post_init__(self) -> None:
        if self.max_states is not None and not _at_least(self.max_states, 1):
            raise InvalidArgument(
                "max_states must be a whole number, at least 1 (or None for no bound), "
                f"got {self.max_states!r}"
            )
        if self.max_depth is not None and not _at_least(self.max_depth, 0):
            raise InvalidArgument(
                f"max_depth must be a whole number, 0 or more (or None for no bound), got {self.max_depth!r}"
            )

    @property
    def limit(self) -> float:
        """``max_states``, or infinity: compared with the number of states held."""
        return self.max_states if self.max_states is not None else float("inf")

    def full(self, held: int) -> str:
        """Why the search stopped at the state bound, holding ``held`` states."""
        return f"max_states={self.max_states}: the search stopped when the graph held {counted(held, 'state')}"

    def depth_cut(self) -> str:
        """Why the states at the depth bound have no successors."""
        return f"max_depth={self.max_depth}: states at depth {self.max_depth} were not expanded"


def _at_least(value: Any, low: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


# -- the start rule ----------------------------------------------------------------------------
def roots(
    machine: AgenticMachine,
    start: Any,
    more: Iterable[Any] | None = None,
    *,
    what: str = "explore",
    every_state: bool = True,
) -> list[Any]:
    """The states a search starts from: ``start``, then ``more`` (duplicates dropped).

    Without either, the machine's initial state, or (when ``every_state``) every state
    of a finite machine that has none. ``None`` and the sentinels are refused.

    >>> from agentic_machines import TableMachine, HALT
    >>> m = TableMachine({0: "p", 1: "q"}, {(0, "a"): 1, (1, "a"): HALT})
    >>> roots(m, None), roots(m, 1), roots(m, None, [1, 0, 1])
    ([0, 1], [1], [1, 0])
    """
    if more is not None:
        starts = list(dict.fromkeys(more))
        if start is not None:
            starts = [start] + [s for s in starts if s != start]
    elif start is not None:
        starts = [start]
    elif machine.initial is not None:
        starts = [machine.initial]
    elif every_state and machine.states is not None:
        starts = list(dict.fromkeys(machine.states))  # a state listed twice is one root
    else:
        starts = []
    if not starts:
        finite = " and no finite state list" if every_state else ""
        raise InvalidArgument(
            f"machine {machine.name!r} has no initial state{finite}; "
            f"pass {what}(machine, <a start state>, ...)"
        )
    for s in starts:
        if s is None:
            raise InvalidArgument(
                f"machine {machine.name!r} lists None as a state; None means 'no state' here (a graph "
                "has no None node), so use another value for that state"
            )
        if s is HALT or s is DIVERGE:
            raise InvalidArgument(
                f"cannot {what} from the sentinel {s!r}; start from a state of the machine"
            )
    return starts


# -- the inputs of a search, normalised once ------------------------------------------------------
class Plan(NamedTuple):
    """What one search runs on, normalised by the rules above: the machine, its start
    states, the alphabet (``fixed`` or ``choose``, exactly one of them ``None``) and the
    bounds. Build it with :func:`plan`.

    >>> from agentic_machines import TableMachine, HALT
    >>> p = plan(TableMachine({0: "p"}, {(0, "a"): HALT}), None, ["a", "a"], max_depth=3)
    >>> p.starts, p.fixed, p.bounds
    ([0], ['a'], Bounds(max_states=None, max_depth=3))
    """

    machine: AgenticMachine
    starts: list[Any]
    fixed: list[str] | None
    choose: Choose | None
    bounds: Bounds


def plan(
    machine: AgenticMachine,
    start: Any,
    completions: Completions | None,
    *,
    more: Iterable[Any] | None = None,
    max_states: int | None = None,
    max_depth: int | None = None,
    what: str = "explore",
    every_state: bool = True,
) -> Plan:
    """The :class:`Plan` of a search, every argument checked by the kernel's rules
    (:func:`roots`, :func:`alphabet`, :class:`Bounds`); ``what`` names the caller in
    the errors.

    >>> plan("not a machine", None, None)
    Traceback (most recent call last):
    ...
    agentic_machines.errors.InvalidArgument: explore needs an AgenticMachine, got str
    """
    if not isinstance(machine, AgenticMachine):
        raise InvalidArgument(f"{what} needs an AgenticMachine, got {type(machine).__name__}")
    bounds = Bounds(max_states, max_depth)
    starts = roots(machine, start, more, what=what, every_state=every_state)
    fixed, choose = alphabet(machine, completions, what)
    return Plan(machine, starts, fixed, choose, bounds)


# -- progress ----------------------------------------------------------------------------------
class Reporter:
    """Periodic status lines for long searches (TLC-style: states, edges, depth, queue).

    ``progress`` is ``None`` (log ``line(stats, final)`` on the ``agentic_machines`` logger;
    the command line shows it on stderr), ``False`` (never) or a function called with the
    statistics and ``final``. Nothing is shown before
    :data:`PROGRESS_AFTER` seconds of ``clock``, then at most every
    :data:`PROGRESS_EVERY`; a run that showed a line ends with the totals. Once
    :meth:`watch` named the machine, the values also say how many of its steps ran out of
    their line budget in the search and how long they took (``divergent_steps``,
    ``divergent_seconds``, ``line_budget``): timing decides only what a line says.

    >>> seen = []
    >>> r = Reporter(seen.append)
    >>> r.began -= 10  # as if the search had run for ten seconds
    >>> r.tick(lambda: {"states": 5}); r.finish({"states": 7}); seen
    [{'states': 5, 'final': False}, {'states': 7, 'final': True}]
    """

    def __init__(
        self,
        progress: Progress,
        line: Callable[[dict[str, Any], bool], str] | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        if progress is not None and not isinstance(progress, bool) and not callable(progress):
            raise InvalidArgument(
                f"progress is None (status lines), False (silent) or a function, not {progress!r}"
            )
        self.progress = progress
        self.line = line or search_line
        self.clock = clock
        self.began = clock()
        self.last: float | None = None
        self.machine: Any = None
        self.divergent_before: tuple[int, float] = (0, 0.0)

    def watch(self, machine: Any) -> None:
        """Say, in each line, how much of the time ``machine``'s divergent steps took (a
        trace-state machine counts them in ``divergent``; others have none)."""
        self.machine = machine
        self.divergent_before = getattr(machine, "divergent", (0, 0.0))

    def tick(self, snapshot: Callable[[], dict[str, Any]]) -> None:
        """Show ``snapshot()`` if it is time to (the snapshot is taken only then)."""
        if self.progress is False:
            return
        now = self.clock()
        if now - self.began < PROGRESS_AFTER or (
            self.last is not None and now - self.last < PROGRESS_EVERY
        ):
            return
        self.last = now
        self._emit(snapshot(), final=False)

    def finish(self, totals: dict[str, Any]) -> None:
        """Close the series of status lines with the totals (nothing if none was shown)."""
        if self.last is not None:
            self._emit(totals, final=True)

    def _emit(self, values: dict[str, Any], final: bool) -> None:
        steps, seconds = getattr(self.machine, "divergent", (0, 0.0))
        if steps > self.divergent_before[0]:
            values = dict(
                values,
                divergent_steps=steps - self.divergent_before[0],
                divergent_seconds=seconds - self.divergent_before[1],
                line_budget=getattr(self.machine, "line_budget", None),
            )
        if callable(self.progress):
            self.progress(dict(values, final=final))
            return
        logging.getLogger("agentic_machines").info(self.line(values, final))


def search_line(
    values: dict[str, Any],
    final: bool,
    verbs: tuple[str, str] = ("exploring", "explored"),
    counts: str = "edges",
) -> str:
    """The status line of a graph search: ``verbs`` (running, done) and what it counts.

    When divergent steps took most of the time, the line says so and how to lower the
    line budget they each run to its end:

    >>> values = {"states": 1200, "edges": 3000, "depth": 4, "queued": 10,
    ...           "states_per_second": 600.0, "seconds": 2.0}
    >>> search_line(values, False)
    'agentic-machines: exploring: 1,200 states, 3,000 edges, depth 4, 10 queued, 600 states/s, 2.0 s'
    >>> search_line(dict(values, divergent_steps=12, divergent_seconds=1.46,
    ...                  line_budget=100_000), True).partition("2.0 s, ")[2]
    '73% of the time in 12 divergent steps (line budget 100,000; lower it with --line-budget)'
    """
    line = (
        f"agentic-machines: {verbs[final]}: {counted(values['states'], 'state')}, "
        f"{counted(values[counts], counts[:-1])}, depth {values['depth']}, {values['queued']:,} queued, "
        f"{values['states_per_second']:,.0f} states/s, {values['seconds']:.1f} s"
        + (f", {counted(values['diverged'], 'step')} to DIVERGE" if values.get("diverged") else "")
    )
    spent, budget = values.get("divergent_seconds", 0.0), values.get("line_budget")
    if budget is not None and values["seconds"] > 0 and spent > values["seconds"] / 2:
        line += (
            f", {min(spent / values['seconds'], 1):.0%} of the time in "
            f"{counted(values['divergent_steps'], 'divergent step')} "
            f"(line budget {budget:,}; lower it with --line-budget)"
        )
    return line


# -- the transitions of one state --------------------------------------------------------------
class UndecidedStep:
    """A step whose outcome is not known (the harness raised ``Undecided``, or the clock
    decided its state's prompt): no edge, and a verdict that needs it is undecided.

    >>> UndecidedStep("fuel")
    UndecidedStep('fuel')
    """

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"UndecidedStep({self.reason!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (UndecidedStep, (self.reason,))


def prompt_of(p: Callable[[Any], str], s: Any) -> tuple[str, str | None]:
    """``p(s)``, and the reason when the clock decided it (``None`` when it did not).

    A prompt the clock decided (a harness that rebuilt ``s`` met a deadline) is shown as it
    came out, and every transition from ``s`` is undecided with that reason: what follows a
    clock-dependent prompt is no fact either.

    >>> prompt_of(lambda s: f"at {s}", 3)
    ('at 3', None)
    """
    try:
        return p(s), None
    except ClockDependent as exc:
        return exc.outcome, str(exc)


class Expansion(NamedTuple):
    """What the completions tried at one state did, aligned with them: ``outcomes``, and
    when :func:`expand` was asked, the ``prompts`` of new states (else ``None``) and what
    each step ``executed`` (per effect log, the entries it added)."""

    outcomes: list[Any]
    prompts: list[str | None] | None = None
    executed: list[tuple[Any, ...]] | None = None


def _is_end(t: Any) -> bool:
    return t is HALT or t is DIVERGE or type(t) is Raised or type(t) is UndecidedStep


def expand(
    machine: AgenticMachine,
    batch: Iterable[tuple[Any, Sequence[str]]],
    *,
    clocked: Mapping[Any, str] | None = None,
    known: Container[Any] | None = None,
    logs: Sequence[Any] = (),
    catch: bool = False,
) -> Iterator[Expansion]:
    """The one expansion: ``h(s, c)`` for every ``(s, completions)`` of ``batch``, lazily
    (a search stopped by a bound calls the harness on no state past it), for ``explore``,
    its executor path, ``check_properties`` and the checker's replays.

    ``Undecided`` from the harness gives an :class:`UndecidedStep`; so does every step
    from a state whose prompt the clock decided (``clocked``: state -> why; ``h`` is not
    called). A halting step the machine ended because its program raised is the
    ``Raised`` it kept (an agent function's). With ``catch`` any other exception is a
    ``Raised`` outcome too (else it propagates). With ``known``, the prompt of each
    outcome that is a state not in ``known``, computed right after its step (while a
    generator harness has it cached). With ``logs`` (observed tools' ``calls`` lists, or
    views with ``at(state, completion)``), what each step added to each.

    >>> from agentic_machines import FunctionMachine, HALT
    >>> def h(s, c):
    ...     if c == "boom":
    ...         raise IndexError("no action")
    ...     return HALT if c == "stop" else s + 1
    >>> m = FunctionMachine(lambda s: f"at {s}", h)
    >>> list(expand(m, [(0, ["go", "stop"])])) == [Expansion([1, HALT])]
    True
    >>> [e.outcomes for e in expand(m, [(0, ["go", "boom"])], known={0}, catch=True)]
    [[1, Raised(IndexError: no action)]]
    >>> [e.outcomes for e in expand(m, [(0, ["go"])], clocked={0: "a deadline"})]
    [[UndecidedStep('a deadline')]]
    """
    h, p = machine.harness, machine.prompt
    kept = halt_raised(machine)
    plain = known is None and not logs and not catch
    for s, comps in batch:
        why = clocked.get(s) if clocked else None
        if why is not None:  # what follows a clock-dependent prompt is no fact either
            n = len(comps)
            yield Expansion(
                [UndecidedStep(why)] * n,
                None if known is None else [None] * n,
                [tuple(() for _ in logs)] * n if logs else None,
            )
            continue
        if plain:  # explore's hot path: one loop per state
            row = []
            try:
                for c in comps:
                    row.append(h(s, c))
            except Undecided as exc:  # rare: the others count; none runs twice (it waited)
                row += [
                    UndecidedStep(str(exc)),
                    *(_step(h, s, c, False) for c in comps[len(row) + 1 :]),
                ]
            if kept is not None and HALT in row:
                row = [(kept(s, c) or HALT) if t is HALT else t for c, t in zip(comps, row)]
            yield Expansion(row)
            continue
        row, prompts, executed = [], [], []
        for c in comps:
            marks = [len(log) for log in logs] if logs else None
            t = _step(h, s, c, catch)
            if marks is not None:
                executed.append(
                    tuple(
                        log.at(s, c) if hasattr(log, "at") else tuple(log[n:])
                        for log, n in zip(logs, marks)
                    )
                )
            prompt = None
            if t is HALT:
                if kept is not None:
                    t = kept(s, c) or HALT
            elif known is not None and not _is_end(t) and not _known(t, known, s, c):
                try:
                    prompt = p(t)
                except Undecided as exc:
                    t = UndecidedStep(f"the prompt of {t!r}: {exc}")
                except Exception as exc:
                    if not catch:
                        raise
                    t = Raised.of(exc)
            row.append(t)
            prompts.append(prompt)
        yield Expansion(row, prompts if known is not None else None, executed or None)


def _step(h: Callable[[Any, str], Any], s: Any, c: str, catch: bool) -> Any:
    """``h(s, c)``; ``Undecided`` (and with ``catch`` any exception) as an outcome."""
    try:
        return h(s, c)
    except Undecided as exc:
        return UndecidedStep(str(exc))
    except Exception as exc:
        if not catch:
            raise
        return Raised.of(exc)  # a crash of the harness is an outcome of the check


def _known(t: Any, known: Container[Any], state: Any, c: str) -> bool:
    """``t in known``; an unhashable outcome (no state: states are dict keys) said in words."""
    try:
        return t in known
    except TypeError:
        raise unhashable_state(state, c, t) from None


# -- the search and its record -----------------------------------------------------------------
class Found:
    """What a search found, in the compact form it is recorded in.

    ``rows`` holds, per expanded state in expansion order, ``(state, completions,
    outcomes)``: the outcomes aligned with the completions (an :class:`UndecidedStep`
    where the harness raised), cut where the state bound stopped the search. ``depth``
    maps every node (states and the sentinels reached) to its depth, in discovery order,
    and ``prompts`` every state to its prompt; with ``parents``, ``parent`` every state but
    the starts to the state and completion that first reached it and the state as recorded
    (an equal state reached later may be another object), and a check fills
    ``executed``: per state, what each effect log it watches executed on that path. Graphs,
    verdicts and statistics are read from it after the search, so the search itself costs
    little more than a bare loop.

    >>> f = Found(); (f.rows, f.cut, f.queued, f.parent)
    ([], False, 0, None)
    """

    __slots__ = tuple(
        "rows depth prompts parent executed cut depth_cut stopped queued labeller".split()
    )

    def __init__(self, parents: bool = False) -> None:
        self.rows: list[tuple[Any, list[str], list[Any]]] = []
        self.depth: dict[Any, int] = {}
        self.prompts: dict[Any, str] = {}
        self.parent: dict[Any, tuple[Any, str, Any]] | None = {} if parents else None
        self.executed: dict[Any, tuple[frozenset[Any], ...]] = {}
        self.cut: bool = False  # the last row was cut by the state bound: not expanded
        self.depth_cut = False  # some state at the depth bound was left unexpanded
        self.stopped = False  # a watching walk was done before the queue was
        self.queued = 0
        self.labeller: Callable[[Any], Any] | None = None


class Walk:
    """How one breadth-first search expands its states, and what it watches as it goes.

    :func:`walk` owns the loop: the queue, the bounds, the record (:class:`Found`) and
    progress. A walk says how a batch of states taken from the queue is expanded (here,
    by this base class, or on an executor, :class:`~agentic_machines.runtime.parallel.
    ExecutorWalk`) and, when it ``watches``, is shown every expanded row (the checker
    checks its properties there) and may stop the search early.

    ``batch`` states are taken from the queue per expansion (``None``:
    :data:`CHECK_CLOCK_EVERY`, read when the search starts; it is also how often the
    clock is read for progress). :meth:`expand` yields ``(completions, outcomes,
    extra)`` per state, lazily here, so a search stopped by the state bound calls the
    harness on no state past it. This base class is :func:`~agentic_machines.runtime.explore.
    explore`'s serial walk: a state whose prompt the clock decided gets an
    :class:`UndecidedStep` for every completion.

    >>> from agentic_machines import FunctionMachine
    >>> m = FunctionMachine(lambda n: f"at {n}", lambda n, c: n + len(c), initial=0)
    >>> found = Found(); way = Walk(plan(m, 0, ["a", "bb"]), found)
    >>> found.prompts[0] = way.prompt(0)  # as the loop records a start
    >>> found.prompts, list(way.expand([0]))
    ({0: 'at 0'}, [(['a', 'bb'], [1, 2], None)])
    """

    batch: int | None = None
    watches = False

    def __init__(self, task: Plan, found: Found) -> None:
        self.task = task
        self.record = found
        self.clocked: dict[Any, str] = {}  # states whose prompt the clock decided, and why
        self._p = task.machine.prompt  # bound once: prompt() runs once per state

    def prompt(self, t: Any) -> str | None:
        """The prompt of ``t``, a start or a state found new (``None``: filled later)."""
        prompt, why = prompt_of(self._p, t)
        if why is not None:
            self.clocked[t] = why
        return prompt

    def expand(self, states: list[Any]) -> Iterable[tuple[list[str], list[Any], Any]]:
        """Per state of ``states``, in order: its completions, their outcomes, and
        anything the walk hands to :meth:`row` (here ``None``)."""
        machine, _starts, fixed, choose, _bounds = self.task
        prompts, clocked = self.record.prompts, self.clocked
        asked: list[list[str]] = []

        def pairs() -> Iterator[tuple[Any, list[str]]]:
            for s in states:
                asked.append(fixed if fixed is not None else choices(None, choose, prompts[s], s))
                yield s, asked[-1]

        for k, (row, _prompts, _executed) in enumerate(expand(machine, pairs(), clocked=clocked)):
            yield asked[k], row, None

    def row(self, s: Any, comps: list[str], row: list[Any], extra: Any, cut: bool) -> None:
        """A watching walk sees each row recorded (``cut``: the row the state bound cut)."""

    def done(self) -> bool:
        """True when a watching walk has seen enough: the search stops before the next batch."""
        return False

    def snapshot(self, began: float, queued: int) -> dict[str, Any]:
        """The statistics a status line shows mid-search."""
        return stats(self.record, began, None, queued=queued)

    def finish(self) -> None:
        """Called once the search stopped, however it stopped."""


def walk(way: Walk, report: Reporter, began: float) -> str | None:
    """The breadth-first loop every search of the toolkit runs: the bare loop plus what
    the graph needs, over ``way.task``, with the expansion and the watching left to ``way``.

    Fills ``way.record`` and returns why the search stopped before the whole graph
    (a bound), or ``None``; a watching walk that is done sets ``record.stopped``.
    """
    report.watch(way.task.machine)
    reason = _loop(way, report, began)
    way.finish()
    return reason


def _loop(way: Walk, report: Reporter, began: float) -> str | None:
    found = way.record
    machine, starts, _fixed, _choose, bounds = way.task
    max_depth, limit = bounds.max_depth, bounds.limit
    depth, prompts, rows, parents = found.depth, found.prompts, found.rows, found.parent
    new_prompt = way.prompt
    watch = way.row if way.watches else None
    roots_cut = None  # more start states than the state bound holds: the first ones
    if len(starts) > limit:
        held = int(limit)
        roots_cut = (
            f"{bounds.full(held)} ({len(starts) - held} of {len(starts)} start states left out)"
        )
        starts = starts[:held]
    for s in starts:
        depth[s] = 0
        prompts[s] = new_prompt(s)  # type: ignore[assignment]
    queue = deque(starts)
    size = way.batch or CHECK_CLOCK_EVERY
    while queue:
        if watch is not None and way.done():
            found.stopped = True
            found.queued = len(queue)
            return None
        if max_depth is None:
            batch = [queue.popleft() for _ in range(min(size, len(queue)))]
            popped = None
        else:  # states at the depth bound are recorded, not expanded
            batch, popped, taken = [], [], 0
            while queue and len(batch) < size:
                s = queue.popleft()
                taken += 1
                if depth[s] >= max_depth:
                    found.depth_cut = True
                    continue
                batch.append(s)
                popped.append(taken)
        for k, (s, (comps, row, extra)) in enumerate(zip(batch, way.expand(batch))):
            nd = depth[s] + 1
            for c, t in zip(comps, row):
                try:
                    if t in depth:
                        continue
                except TypeError:  # a list, a dict: no state (states are kept in dicts)
                    raise unhashable_state(s, c, t) from None
                if t is HALT or t is DIVERGE or type(t) is Raised:
                    depth[t] = nd  # an end: a node, never expanded
                elif type(t) is UndecidedStep:
                    continue
                elif len(prompts) >= limit:
                    row = cut_row(row, depth)
                    rows.append((s, comps, row))
                    found.cut = True
                    # what was taken from the queue after s still waits, as what is in it
                    found.queued = len(queue) + (
                        len(batch) - k - 1 if popped is None else taken - popped[k]
                    )
                    if watch is not None:
                        watch(s, comps, row, extra, True)
                    return bounds.full(len(prompts))
                else:
                    if t is None:
                        raise none_state(machine, s)
                    depth[t] = nd
                    if parents is not None:
                        parents[t] = (s, c, t)
                    prompts[t] = new_prompt(t)  # type: ignore[assignment]
                    queue.append(t)
            rows.append((s, comps, row))
            if watch is not None:
                watch(s, comps, row, extra, False)
        report.tick(lambda: way.snapshot(began, len(queue)))  # noqa: B023 - called at once
    return roots_cut or (bounds.depth_cut() if found.depth_cut else None)


def same_state(a: Any, b: Any) -> bool:
    """``a == b``, with the types of ``a``'s and ``b``'s parts equal too (in tuples,
    frozensets and dataclasses): ``1`` and ``True``, ``('f', 1)`` and ``('f', True)`` are
    not the same state, though ``==`` (and so any set or dict) takes them for one.

    >>> same_state(("f", 1), ("f", 1)), same_state(("f", 1), ("f", True)), same_state(1, 1.0)
    (True, False, False)
    """
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind in _ATOMS:  # no parts: equal values of one type
        return bool(a == b)
    return a == b and _alike(a, b)


_ATOMS = frozenset({int, str, float, bytes, bool, complex, type(None)})


# What a row of outcomes may hold to be checked as a whole: besides plain values, the
# sentinels (one object each) and undecided steps (hashed by identity: never merged).
_PLAIN = _ATOMS | {type(HALT), UndecidedStep}


def _alike(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b``, known equal, have parts of the same types: walked without
    copies, as every back edge of a search asks it (a tuple state is a new object each
    time the harness builds it)."""
    kind = type(a)
    if kind is not type(b):
        return False
    if kind in _ATOMS:
        return True
    if isinstance(a, tuple):  # equal tuples: equal lengths, each pair equal
        kinds = tuple(map(type, a))
        if kinds != tuple(map(type, b)):
            return False
        return _ATOMS.issuperset(kinds) or all(map(_alike, a, b))
    return bool(_typed(a) == _typed(b))  # frozensets, dataclasses: rarer


def _typed(x: Any) -> Any:
    """``x`` as a value whose ``==`` also compares the types of ``x`` and its parts."""
    kind = type(x)
    if kind in _ATOMS:
        return kind, x
    if isinstance(x, tuple):
        return kind, tuple(map(_typed, x))
    if isinstance(x, frozenset):
        return kind, frozenset(map(_typed, x))
    if is_dataclass(x) and not isinstance(x, type):
        return kind, tuple(_typed(getattr(x, f.name)) for f in fields(x) if f.compare)
    return kind, x


def refuse_merged(machine: str, held: Any, now: Any, state: Any, completion: str) -> None:
    """Raise :func:`~agentic_machines.errors.equal_states` when the step ``completion``
    from ``state`` reaches ``now``, which a search took for the state ``held`` it had
    recorded (equal by ``==``) but which is not the same state (``1`` and ``True``): the
    search keeps states in dicts, which merge the two, so no verdict or graph of it is
    sound. The one guard of every search: explore's and check_properties' back edges.

    >>> refuse_merged("m", 1, 1, 0, "a")
    >>> refuse_merged("m", 1, True, 0, "a")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
      ...
    agentic_machines.errors.InvalidMachine: m reaches 1 (int) and, at the step 'a' from 0, True (bool): ...
    """
    if held is not now and not same_state(held, now):
        where = f"the step {short_repr(completion)} from {short_repr(state)}"
        raise equal_states(machine, held, now, where)


def check_merged(found: Found, machine: str) -> None:
    """:func:`refuse_merged` at every step of a finished search whose outcome is another
    object than the state recorded for it (explore's search, which watches nothing as it
    goes, is guarded once it ends: every outcome is in ``found.rows``).

    >>> from agentic_machines import FunctionMachine
    >>> m = FunctionMachine(lambda s: "go", lambda s, c: True if s == 0 else 1, initial=0)
    >>> found = Found()
    >>> walk(Walk(plan(m, 0, ["a"]), found), Reporter(False), 0.0)
    >>> check_merged(found, "flag")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
      ...
    agentic_machines.errors.InvalidMachine: flag reaches True (bool) and, at the step 'a' from True, 1 (int): ...
    """
    held = {n: n for n in found.depth}
    get = held.get  # an UndecidedStep (hashed by identity) and a cut row's tail: themselves
    atoms = _PLAIN.issuperset
    for s, comps, row in found.rows:
        firsts = list(map(get, row, row))
        kinds = list(map(type, row))
        # a row of plain values (ints, strings) of the types recorded is fine as a whole
        if atoms(kinds) and kinds == list(map(type, firsts)):
            continue
        for c, t, first in zip(comps, row, firsts):
            if first is not t and not same_state(first, t):
                refuse_merged(machine, first, t, s, c)


def cut_row(row: list[Any], depth: dict[Any, int]) -> list[Any]:
    """``row`` up to the outcome the state bound refused: the first unrecorded state.

    >>> cut_row([1, 2, 3], {1: 0})
    [1]
    """
    for k, t in enumerate(row):
        if t not in depth and not _is_end(t):
            return row[:k]
    return row


def stats(
    found: Found, began: float, reason: str | None, *, final: bool = False, queued: int = 0
) -> dict[str, Any]:
    """The statistics of a search (edge counts only once it ended; a status line
    mid-search counts transitions, which costs nothing).

    >>> f = Found(); f.prompts[0] = "p"; f.depth[0] = 0; f.rows.append((0, ["a"], [0]))
    >>> s = stats(f, 0.0, None, final=True)
    >>> s["states"], s["edges"], s["transitions"], s["truncated"]
    (1, 1, 1, False)
    """
    n_states = len(found.prompts)
    edges = transitions = undecided = 0
    if final:
        for _s, _comps, row in found.rows:
            targets = set(row)
            stuck = sum(type(t) is UndecidedStep for t in targets)
            edges += len(targets) - stuck
            undecided += stuck
            transitions += len(row) - stuck
    else:  # a status line mid-search: counting edges would cost as much as the search
        edges = sum(len(row) for _s, _c, row in found.rows)
        transitions = edges
    return {
        "states": n_states,
        "edges": edges,
        "transitions": transitions,
        "undecided": undecided,
        "depth": max(found.depth.values(), default=0),
        "queued": found.queued if final else queued,
        **rate(n_states, began),
        "truncated": reason is not None,
        "truncated_reason": reason,
    }


def rate(n_states: int, began: float) -> dict[str, float]:
    """The time a search has taken since ``began`` (``time.perf_counter()``) and its
    states per second, as every search's statistics show them.

    >>> sorted(rate(10, time.perf_counter()))
    ['seconds', 'states_per_second']
    """
    seconds = time.perf_counter() - began
    return {
        "seconds": round(seconds, 6),
        "states_per_second": round(n_states / seconds, 1) if seconds > 0 else float(n_states),
    }
