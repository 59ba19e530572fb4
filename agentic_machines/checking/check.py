"""Exhaustive bounded checking: :func:`check_properties`.

A breadth-first search from the start state over a finite completion alphabet (or a
function that picks a finite alphabet per prompt), as TLC searches a specification:
every state reached is checked against the invariants, every step against the
transition properties, and after the search the liveness properties are decided on the
explored graph, cycles included. Because the search is breadth-first, the first
violation found of each safety property is a shortest one; the path to it, kept as a
parent pointer per state, is the counterexample.

Every verdict is exhaustive up to a bound, and names it: the whole reachable graph
(for the alphabet given), every run of at most ``max_depth`` steps, or the runs the
``max_states`` bound let the search finish. A verdict is never "holds" without that
bound, and it is "undecided" when a step within it has an unknown outcome (the harness
raised ``Undecided``). One refutation rests on more than the search: a keyed
``never_diverges`` whose loop came back to the same keys without an exact repeat, on a
graph the search did not see whole; its method says so (``"key"``, docs/checking.md).

>>> from agentic_machines import FunctionMachine, HALT
>>> from agentic_machines.checking import halts_within, never_raises, prompt_length_at_most
>>> def h(n, c):
...     if c == "stop":
...         return HALT
...     return n + 1 if n < 3 else 0           # a reset: the run can go round for ever
>>> m = FunctionMachine(lambda n: "step " + "." * n, h, initial=0, name="counter")
>>> r = check_properties(m, properties=[halts_within(10), never_raises(),
...                                     prompt_length_at_most(8)], completions=["go", "stop"])
>>> [(x.name, x.verdict.status) for x in r]
[('halts_within(10)', 'refuted'), ('never_raises()', 'holds'), ('prompt_length_at_most(8)', 'holds')]
>>> cx = r.counterexample("halts_within(10)")  # the reset's cycle, as its lasso
>>> cx.completions, cx.loop
(('go', 'go', 'go', 'go'), 0)
>>> r.bound
'the whole reachable graph (4 states)'
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import Executor
from itertools import repeat
from typing import Any

import networkx as nx

from .._text import clip_prompt_repr, counted
from ..batches import check_sendable, run_batches
from ..errors import ClockDependent, InvalidArgument
from ..machine import DIVERGE, HALT, AgenticMachine
from ..runtime.collector import collector_paused
from ..runtime.parallel import expand_steps
from ..runtime.search import (
    Bounds,
    Completions,
    Expansion,
    Found,
    Plan,
    Progress,
    Reporter,
    UndecidedStep,
    Walk,
    choices,
    expand,
    plan,
    rate,
    refuse_merged,
    search_line,
    walk,
)
from ..verdict import short_repr
from .coverage import unreached_prompts
from .explored import ExploredMachine
from .keyed import KEYED_ROUNDS, keyed_loop, loop_starts
from .properties import (
    EffectsAtMostOnce,
    HaltsWithin,
    Invariant,
    NeverDiverges,
    NeverRaises,
    Property,
    Raised,
    Transition,
    display_names,
    flatten,
    part_names,
)
from .result import CheckResult, Counterexample, Coverage
from .run_check import confirm
from .verdicts import Finding, KeyedLoop, Tally, Verdicts, cyclic_states, tally

__all__ = ["check_properties", "Completions", "BATCH"]

BATCH = 64
"""States per call of :func:`~agentic_machines.runtime.search.expand`."""


def check_properties(
    machine: AgenticMachine,
    start: Any = None,
    properties: Property | Sequence[Property] = (),
    *,
    completions: Completions | None = None,
    max_depth: int | None = None,
    max_states: int | None = 100_000,
    stop_early: bool = True,
    progress: Progress = None,
    executor: Executor | None = None,
) -> CheckResult:
    """Check ``properties`` on every run of ``machine`` from ``start`` over an alphabet.

    ``machine`` may be a graph :func:`~agentic_machines.runtime.explore.explore` returned:
    the properties are then checked on the steps it recorded, without calling the harness
    again (:class:`~agentic_machines.checking.explored.ExploredMachine`), within its
    bounds (the smaller of its ``max_states``/``max_depth`` and those given here);
    ``effects_at_most_once``, which watches tool calls as they run, needs the machine.

    ``start`` defaults to ``machine.initial``; ``completions`` to the machine's finite
    alphabet; it may be a list, or a function ``prompt -> completions``. States at
    ``max_depth`` steps are not expanded; at most ``max_states`` states are recorded
    (``None``: no bound). With ``stop_early`` the search stops once every property
    has a counterexample (the coverage then says so). ``progress`` logs a status
    line on the ``agentic_machines`` logger every two seconds once the check runs for two
    (the command line shows it on stderr; ``False``: never; a function: called with the
    statistics instead).
    ``executor`` (a process pool, Dask's ``Client.get_executor()``) runs the harness calls
    of each batch of states on its workers, merged in order: the verdicts, counterexamples
    and coverage are the serial ones (``docs/scaling_out.md``); the machine must pickle,
    and ``effects_at_most_once`` (which watches calls in this process) is refused.

    Returns a :class:`~agentic_machines.checking.result.CheckResult`: per property, a
    verdict (exhaustive, up to the named bound) and for a refuted one a shortest
    counterexample; and the coverage. Which run is returned:

    - an invariant, transition, ``never_raises`` or ``effects_at_most_once`` violation:
      a shortest run to the first violation (breadth-first);
    - ``never_diverges``: the shorter of a shortest run to ``DIVERGE`` and the lasso of
      a reachable cycle;
    - ``halts_within(k)``: the shortest of a run to ``DIVERGE``, a run left stuck (the
      completions function offered nothing) and a run of k steps that has not halted;
      but a reachable cycle's lasso when it is no longer (it says that the run never
      halts, not only that it has not yet).

    A lasso's stem is a shortest path to the cycle's state nearest the start, its loop a
    shortest cycle through that state; ``Counterexample.loop`` marks where it starts.

    >>> from agentic_machines import TableMachine, HALT
    >>> from agentic_machines.checking import never_diverges
    >>> m = TableMachine({0: "?", 1: "?"}, {(0, "a"): 1, (0, "b"): HALT,
    ...                  (1, "a"): 0, (1, "b"): HALT}, initial=0)
    >>> cx = check_properties(m, properties=never_diverges()).counterexample("never_diverges()")
    >>> cx.completions, cx.states, cx.loop
    (('a', 'a'), (0, 1, 0), 0)
    >>> from agentic_machines.runtime.explore import explore
    >>> check_properties(explore(m), properties=never_diverges()).counterexample("never_diverges()").states
    (0, 1, 0)
    """
    if isinstance(machine, nx.DiGraph):
        machine, completions, max_states, max_depth = _explored(
            machine, completions, max_states, max_depth, properties
        )
    task = plan(
        machine,
        start,
        completions,
        max_states=max_states,
        max_depth=max_depth,
        what="check_properties",
        every_state=False,  # one start: the runs of a counterexample begin there
    )
    props = flatten(properties)
    if not props:
        raise InvalidArgument(
            "check_properties needs at least one property, e.g. properties=[halts_within(8), never_raises()]"
        )
    search = _Search(task, props, progress)
    if executor is not None:
        if search.effects:
            raise InvalidArgument(
                "effects_at_most_once watches the tool calls made in this process, so it cannot "
                "be checked with executor=; check it without an executor"
            )
        check_sendable(executor, "check_properties", machine=machine, completions=task.choose)
    search.executor = executor
    with collector_paused():  # as explore: the record is no garbage until the check ends
        return search.run(stop_early)


def _explored(
    graph: nx.DiGraph,
    completions: Completions | None,
    max_states: int | None,
    max_depth: int | None,
    properties: Property | Sequence[Property],
) -> tuple[ExploredMachine, Completions | None, int | None, int | None]:
    """The machine, alphabet and bounds a check of the explored ``graph`` runs with."""
    machine = ExploredMachine(graph)
    if any(isinstance(q, EffectsAtMostOnce) for p in flatten(properties) for q in p.parts):
        raise InvalidArgument(
            "effects_at_most_once watches the tool calls as the harness runs, and a graph "
            "replays no harness; check it on the machine: check_properties(machine, ...)"
        )
    if completions is None and machine.completions is None:
        completions = machine.offered
    bounds = [(max_states, graph.graph["max_states"]), (max_depth, graph.graph["max_depth"])]
    low = [min((b for b in pair if b is not None), default=None) for pair in bounds]
    return machine, completions, low[0], low[1]


class _Search(Walk, Verdicts):
    """The state of one check: a walk of the kernel's loop (:func:`~agentic_machines.
    runtime.search.walk`) that checks every row as the loop records it in the kernel's
    record (:class:`~agentic_machines.runtime.search.Found`, with each state's parent),
    keeping only the first violation of each property part; its
    :class:`~agentic_machines.checking.verdicts.Verdicts` are read off that record after
    the search."""

    batch = BATCH
    watches = True
    executor: Executor | None = None

    def __init__(self, task: Plan, props: list[Property], progress: Progress) -> None:
        self.machine, self.start, self.props = task.machine, task.starts[0], props
        self.fixed, self.choose = task.fixed, task.choose
        max_states, max_depth = task.bounds.max_states, task.bounds.max_depth
        self.max_depth = max_depth
        self.progress = progress
        self.name = getattr(task.machine, "name", None) or type(task.machine).__name__
        parts = [q for p in props for q in p.parts]
        self.names = part_names(props)  # a part named in a reason as it is reported
        # Compile the parts by kind: the search calls only what it must.
        self.invariants = list(dict.fromkeys(q for q in parts if isinstance(q, Invariant)))
        self.transitions = list(dict.fromkeys(q for q in parts if isinstance(q, Transition)))
        self.effects = list(dict.fromkeys(q for q in parts if isinstance(q, EffectsAtMostOnce)))
        self.parts = list(dict.fromkeys(parts))
        self.halting = [q for q in self.parts if isinstance(q, HaltsWithin)]
        self.diverging = [q for q in self.parts if isinstance(q, NeverDiverges)]
        self.raising = [q for q in self.parts if isinstance(q, NeverRaises)]
        self.keyed = [q for q in self.diverging if q.key is not None]
        self.looping = [q for q in self.diverging if q.key is None]
        if max_depth is None and self.halting and len(self.halting) == len(self.parts):
            # halts_within(k) is decided by the runs of k steps: no need to go deeper
            self.max_depth = max(q.k for q in self.halting)
        self.bounds = Bounds(max_states, self.max_depth) if max_depth is None else task.bounds
        super().__init__(task._replace(bounds=self.bounds), Found(parents=True))
        self.found: dict[Property, Finding] = {}  # the first violation of each part
        # per keyed never_diverges: the loop that refutes it
        self.keyed_found: dict[NeverDiverges, KeyedLoop] = {}
        # per keyed never_diverges: the key of every state (None once refuted)
        self.keys: dict[NeverDiverges, dict[Any, Any]] = {q: {} for q in self.keyed}
        # per keyed never_diverges: why a loop it came back to could not be followed
        self.keyed_unknown: dict[NeverDiverges, str] = {}
        # per keyed never_diverges: the steps its loops were followed through (the loops
        # of a search go through the same states again and again)
        self.followed: dict[NeverDiverges, dict] = {q: {} for q in self.keyed}
        # per keyed never_diverges and loop (its completions and keys): the (state, place)
        # pairs from which repeating it stops (keyed_loop's dead)
        self.stops: dict[NeverDiverges, dict[tuple, set]] = {q: {} for q in self.keyed}
        # a keyed loop is followed as many rounds as the search records states: one capped
        # within the bound runs into its cap, whether or not the search stops early (with
        # no bound, a loop still open after KEYED_ROUNDS keeps the search going: done())
        self.rounds = max_states if max_states is not None else KEYED_ROUNDS
        # per keyed never_diverges refuted only by its key's claim: that counterexample
        self.by_key: dict[NeverDiverges, Counterexample] = {}
        # the completions offered at a state, when chosen per prompt (a keyed loop is
        # followed only through completions the machine is really asked for)
        self.offered = (
            None
            if self.fixed is not None
            else lambda x: choices(None, self.choose, self.machine.prompt(x), x)
        )
        # the prompts a batch's expansion computed, until the loop records their states
        self.computed: dict[Any, str] = {}
        self.back_edges = 0  # steps to a state seen before: only they can close a cycle
        self.cycle_checked = (0, 0)  # (back edges, states) at the last look for a cycle
        self.logs = [e.log(self.machine) for e in self.effects]

    # -- the search ------------------------------------------------------------------------
    def run(self, stop_early: bool) -> CheckResult:
        """Search breadth-first in batches on the kernel's loop, checking as it goes; then
        decide every property."""
        began = time.perf_counter()
        self._begin()
        self.stop_early = stop_early
        reporter = Reporter(self.progress, _check_line)
        reason = walk(self, reporter, began)
        self.truncated: str | None = reason if self.record.cut else None
        self.graph = tally(self.record)
        self.bound_depth = self._bound_depth()
        self._decide_keyed()
        return self._result(began, self.record.queued, reporter)

    def _begin(self) -> None:
        """The start's prompt (for the loop to record) and its checks."""
        start = self.start
        self.start_clock: str | None = None  # why the clock decided the start's prompt, if it did
        try:
            first_prompt = self.machine.prompt(start)
        except ClockDependent as exc:
            # a start state a clock-dependent step made: its prompt is shown as it came,
            # and every step from it is unknown (what follows it is no fact either)
            first_prompt, self.start_clock = exc.outcome, str(exc)
        except Exception as exc:  # noqa: BLE001 - the start state itself is broken
            raise InvalidArgument(
                f"the prompt of the start state {short_repr(start)} raised {type(exc).__name__}: {exc}"
            ) from exc
        self.computed[start] = first_prompt
        if self.logs:  # what an agent executed before its first model call
            self.record.executed[start] = tuple(_started(log) for log in self.logs)
        for q in self.keyed:
            self._key_state(q, start)
        if self.start_clock is None:  # a prompt the clock decided refutes nothing
            self._check_state(start, first_prompt)

    # -- the walk's part: expansion and watching -------------------------------------------
    def prompt(self, t: Any) -> str | None:
        """The prompt of a state the loop records: the one its expansion computed right
        after its step (or the start's)."""
        prompt = self.computed.pop(t, None)
        return prompt if prompt is not None else self.machine.prompt(t)

    def done(self) -> bool:
        """Every part has its counterexample: the search can stop (with ``stop_early``).

        A cycle (``never_diverges()``'s lasso) is looked for only when a step went back
        to a known state since the last look and the graph doubled, so the looks cost
        about one pass over the final graph in all."""
        if not self.stop_early:
            return False
        if self.bounds.max_states is None and any(k.by_key for k in self.keyed_found.values()):
            return False  # no state bound: an open keyed loop is decided when the search ends
        missing = len(self.parts) - len(self.found)
        if missing and missing == sum(q not in self.found for q in self.looping):
            back, n = self.cycle_checked
            held = len(self.record.prompts)
            if self.back_edges > back and held >= 2 * n:
                self.cycle_checked = (self.back_edges, held)
                if cyclic_states(tally(self.record).succ):
                    for q in self.looping:  # the lasso itself is built after the search
                        self.found.setdefault(
                            q, Finding(self.start, None, None, "a reachable cycle")
                        )
                    missing = 0
        return not missing

    def snapshot(self, began: float, queued: int) -> dict[str, Any]:
        return self._stats(tally(self.record), began, queued)

    def expand(self, states: list[Any]) -> list[tuple[list[str], list[Any], Expansion | None]]:
        """The rows of a batch: per state its completions, outcomes and transitions
        (the harness calls run here or spread over the executor's workers).

        A state whose alphabet is empty is stuck: an outcome of its own, checked here,
        before any row of the batch (as a shortest counterexample must be)."""
        prompts, fixed = self.record.prompts, self.fixed
        chosen: list[list[str]] = []
        batch: list[tuple[Any, list[str]]] = []
        for s in states:
            comps = choices(fixed, self.choose, prompts[s], s)
            chosen.append(comps)
            if comps:
                batch.append((s, comps))
            else:  # stuck: the run can neither go on nor has it ended
                self._stuck(s)
        if not batch:
            return [(comps, [], None) for comps in chosen]
        if self.executor is None:
            clocked = {self.start: self.start_clock} if self.start_clock is not None else None
            rows = list(
                expand(
                    self.machine, batch, clocked=clocked, known=prompts, logs=self.logs, catch=True
                )
            )
        else:
            # A worker computes every new-looking state's prompt (the known set stays
            # here): the same values, so the rows the loop records do not change.
            rows = run_batches(self.executor, expand_steps, batch, None, self.machine)
            if self.start_clock is not None and not self.record.rows:
                rows[0] = Expansion([UndecidedStep(self.start_clock)] * len(batch[0][1]), None)
        self.computed.clear()
        for row in rows:
            if row.prompts:
                for t, prompt in zip(row.outcomes, row.prompts):
                    if prompt is not None:
                        try:
                            self.computed.setdefault(t, prompt)
                        except TypeError:  # no state: the loop says so in words
                            pass
        made = iter(rows)
        out: list[tuple[list[str], list[Any], Expansion | None]] = []
        for comps in chosen:
            if comps:
                row = next(made)
                out.append((comps, row.outcomes, row))
            else:
                out.append((comps, [], None))
        return out

    def row(
        self, s: Any, comps: list[str], row: list[Any], extra: Expansion | None, cut: bool
    ) -> None:
        """Check the steps from ``s`` the loop has just recorded (``row``: their outcomes;
        ``extra``: what each executed) and the new states they reached (the loop
        recorded ``s`` and the completion as their parent)."""
        executed = extra.executed if extra is not None and extra.executed else repeat(())
        parents = self.record.parent
        transitions, logs = self.transitions, self.logs
        history = self.record.executed[s] if logs else ()
        for c, t, done in zip(comps, row, executed):
            kind = type(t)
            if kind is UndecidedStep:
                continue
            if t is DIVERGE:
                self._diverged(s, c)
            elif kind is Raised:
                for q in self.raising:  # breadth-first: a shortest run that raises
                    if q not in self.found:
                        self.found[q] = Finding(s, c, t, "")
            elif t is not HALT:
                first = parents.get(t)  # type: ignore[union-attr]
                if first is not None and first[0] is s and first[1] is c:
                    self._new_state(t, s, done)
                else:
                    self.back_edges += 1
                    # the state as recorded (the start has no parent)
                    held = first[2] if first is not None else self.start
                    refuse_merged(self.machine.name, held, t, s, c)
            if transitions:
                self._check_transition(s, c, t)
            if logs:
                self._check_effects(s, c, t, done, history)

    def _new_state(self, t: Any, s: Any, executed: tuple[Any, ...]) -> None:
        """Check the state ``t`` the step from ``s`` (which ``executed`` that) reached first."""
        record = self.record
        if self.logs:  # the parent's history, copied only when this step added to it
            past = record.executed[s]
            record.executed[t] = (
                tuple(h | frozenset(map(_hashable, e)) if e else h for h, e in zip(past, executed))
                if any(executed)
                else past
            )
        if self.invariants:
            self._check_state(t, record.prompts[t])
        if self.halting:
            self._deep(t, record.depth[t])
        for q in self.keyed:
            self._key_state(q, t)

    def _result(self, began: float, queued: int, reporter: Reporter) -> CheckResult:
        """Every property's verdict, each counterexample re-checked, and the coverage."""
        fixed, record, graph = self.fixed, self.record, self.graph
        # Every counterexample is replayed, over the alphabet checked, and its property
        # checked again on the replayed run before it is returned (run_check.confirm).
        offer = (lambda _prompt: fixed) if fixed is not None else self.choose
        results = [
            confirm(self.machine, self._verdict(p, label), offer, self.rounds, self.followed)
            for p, label in zip(self.props, display_names(self.props))
        ]
        seconds = time.perf_counter() - began
        stats = self._stats(graph, began, queued)
        reporter.finish(stats)
        unreached, basis = unreached_prompts(self.machine, list(record.prompts.values()))
        coverage = Coverage(
            states=len(record.prompts),
            transitions=graph.transitions,
            edges=graph.edges,
            depth=stats["depth"],
            alphabet_share=graph.share,
            undecided=graph.unknown,
            diverged=graph.diverged,
            stuck=graph.stuck,
            truncated=self._truncation_text(),
            unreached_prompts=unreached,
            unreached_basis=basis,
        )
        return CheckResult(
            machine=self.name,
            start=self.start,
            results=tuple(results),
            coverage=coverage,
            method="exhaustive",
            bound=self._bound_text(),
            seconds=seconds,
            details={"states_per_second": stats["states_per_second"], "alphabet": self.fixed},
        )

    # -- safety checks during the search ----------------------------------------------------
    def _check_state(self, state: Any, prompt: str) -> None:
        for inv in self.invariants:
            if inv in self.found:
                continue
            try:
                ok = inv.fn(state, prompt)
            except Exception as exc:  # noqa: BLE001 - a broken property is reported, not raised
                self.found[inv] = Finding(
                    state,
                    None,
                    None,
                    f"the invariant raised {type(exc).__name__}: {exc}",
                )
                continue
            if not ok:
                # state and prompt cut where they differ from the parent's
                up = (self.record.parent or {}).get(state)
                near = [up[0]] if up else []
                before = [self.record.prompts[up[0]]] if up else []
                self.found[inv] = Finding(
                    state,
                    None,
                    None,
                    f"{self.names[inv]} is false in state {short_repr(state, 40, near)} (prompt of "
                    f"{len(prompt):,} characters: {clip_prompt_repr(prompt, 60, before)})",
                )

    def _diverged(self, s: Any, c: str) -> None:
        """A DIVERGE: the first (a shortest one) refutes the liveness properties."""
        n = self.record.depth[s] + 1
        for q in self.diverging:
            self.found.setdefault(
                q,
                Finding(
                    s, c, DIVERGE, "the harness returned DIVERGE (↑): it never returns to the model"
                ),
            )
        for hq in self.halting:
            if n <= hq.k:
                self.found.setdefault(
                    hq,
                    Finding(
                        s,
                        c,
                        DIVERGE,
                        f"the harness returned DIVERGE (↑) after {counted(n, 'model call')}",
                    ),
                )

    def _stuck(self, s: Any) -> None:
        """A state where the completions function offers no completion: the run is stuck
        there, an outcome of its own. It has not halted, so it refutes ``halts_within(k)``
        for every k at least its depth (found breadth-first: a shortest such run)."""
        d = self.record.depth[s]
        why = (
            f"the run is stuck after {counted(d, 'model call')} in {short_repr(s)}: the "
            "completions function offered no completion for its prompt, and a stuck run has not halted"
        )
        for q in self.halting:
            if d <= q.k:
                self.found.setdefault(q, Finding(s, None, None, why))

    def _deep(self, t: Any, d: int) -> None:
        """A state ``d`` steps deep: the breadth-first path to it is a run of ``d`` steps
        that has not halted, a shortest counterexample to ``halts_within(d)``."""
        for q in self.halting:
            if q.k == d and q not in self.found:
                self.found[q] = Finding(
                    t,
                    None,
                    None,
                    f"after {d} model calls the run has not halted (it is in {short_repr(t)})",
                )

    def _key_state(self, q: NeverDiverges, t: Any) -> None:
        """Record the key of state ``t`` and look, along the breadth-first run to it, for
        an earlier state with that key from which the loop really goes on for ever
        (:func:`~agentic_machines.checking.keyed.keyed_loop`): found breadth-first, a
        shortest such run."""
        keys = self.keys[q]
        if q in self.found:
            keys[t] = None
            return
        try:
            key = _hashable(q.key(t))  # type: ignore[misc]
        except Exception as exc:  # noqa: BLE001 - a broken key is reported, not raised
            keys[t] = None
            self.found[q] = Finding(
                t,
                None,
                None,
                f"the key of {self.names[q]} raised {type(exc).__name__}: {exc}",
            )
            self.keyed_found[q] = KeyedLoop(t, None, self.found[q].why)
            return
        keys[t] = key
        path = self._path(t)
        parent, depth = self.record.parent, self.record.depth
        path_keys = [keys[k] for k in path]
        starts = [n for n in range(len(path) - 2, -1, -1) if path_keys[n] == key]
        if not starts:
            return
        comps = [parent[k][1] for k in path[1:]]  # type: ignore[index]
        for n in loop_starts(comps, path_keys, starts):  # the nearest earlier state first
            loop = tuple(comps[n:])
            loop_keys = tuple(path_keys[n + 1 :])
            follow = keyed_loop(
                self.machine,
                q,
                t,
                loop,
                loop_keys,
                self.rounds,
                self.offered,
                self.followed[q],
                self.stops[q].setdefault((loop, loop_keys), set()),
            )
            if follow is None:
                continue
            if follow.kind == "unknown":
                self.keyed_unknown.setdefault(q, follow.why)
                continue
            at = depth[path[n]]
            why = (
                f"after step {depth[t]} the run is in {short_repr(t, 40, [path[n]])}, whose key "
                f"{short_repr(key)} is the key of {short_repr(path[n], 40, [t])} (step {at}), and "
            )
            # an open loop (no exact repeat yet) counts as found, so the search may stop
            # early on it; after the search it is decided exactly when the graph is whole
            self.found[q] = Finding(t, None, None, why + follow.why)
            self.stops[q].clear()  # no loop of q is followed again in the search
            if not follow.kind == "open":
                self.followed[q].clear()
            self.keyed_found[q] = KeyedLoop(
                t, at, why + follow.why, follow.kind == "open", loop, loop_keys, why
            )
            return

    def _decide_keyed(self) -> None:
        """Decide each open keyed loop exactly when the search saw the whole reachable
        graph: a run repeating a loop of ``L`` completions through ``R`` reachable states
        repeats a (state, place in the loop) pair, or ends or leaves the keys, within
        ``R * L`` steps (pigeonhole). Elsewhere an open loop stays a refutation by the key."""
        if self.bound_depth is not None or self.record.stopped or self.graph.unknown:
            return
        size = len(self.record.prompts)
        for q, found in list(self.keyed_found.items()):
            memo = self.followed.setdefault(q, {})
            if not found.by_key:
                continue
            follow = keyed_loop(
                self.machine, q, found.at, found.loop, found.keys, size, self.offered, memo
            )
            if follow is not None and follow.kind == "forever":
                why = found.head + follow.why
                self.keyed_found[q] = found._replace(why=why, by_key=False)
                continue
            del self.keyed_found[q]  # no divergence by this loop (a reachable cycle, if any,
            if follow is not None:  # still refutes: its lasso); a step unknown: undecided
                self.keyed_unknown.setdefault(q, follow.why)

    def _check_transition(self, s: Any, c: str, t: Any) -> None:
        for tp in self.transitions:
            if tp in self.found:
                continue
            try:
                ok = tp.fn(s, c, t)
            except Exception as exc:  # noqa: BLE001
                self.found[tp] = Finding(
                    s, c, t, f"the property raised {type(exc).__name__}: {exc}"
                )
                continue
            if not ok:
                self.found[tp] = Finding(
                    s,
                    c,
                    t,
                    f"{self.names[tp]} is false of the step {short_repr(s, 40, [t])} --{short_repr(c)}--> "
                    f"{short_repr(t, 40, [s])}",
                )

    def _check_effects(self, s: Any, c: str, t: Any, executed: tuple, history: tuple) -> None:
        for prop, done, new in zip(self.effects, history, executed):
            if prop in self.found or not new:
                continue
            seen: set = set()
            for request in new:
                key = _hashable(request)
                if key in done or key in seen:
                    again = (
                        (
                            "a second time in this run (it already ran at an earlier step, "
                            "or a replay of the run re-executed it)"
                        )
                        if key in done
                        else "twice in one step"
                    )
                    self.found[prop] = Finding(
                        s,
                        c,
                        t,
                        f"{prop.tool_name} executed the request {short_repr(request)} {again}",
                    )
                    break
                seen.add(key)

    def _stats(self, graph: Tally, began: float, queued: int) -> dict[str, Any]:
        record = self.record
        n = len(record.prompts)
        return {
            "states": n,
            "edges": graph.edges,
            "transitions": graph.transitions,
            "diverged": graph.diverged,
            "depth": max(record.depth[s] for s in record.prompts),
            "queued": queued,
            "violations": len(self.found),
            **rate(n, began),
        }


def _check_line(stats: dict[str, Any], final: bool) -> str:
    return search_line(stats, final, ("checking", "checked"), "transitions")


def _hashable(value: Any) -> Any:
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


def _started(log: Any) -> frozenset[Any]:
    """The requests a log holds for the start, before any step (an agent's, made before
    its first model call): a run's history of executions begins with them."""
    at_start = getattr(log, "at_start", None)
    return frozenset(_hashable(r) for r in at_start()) if callable(at_start) else frozenset()
