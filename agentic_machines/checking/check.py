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
raised ``Undecided``).

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
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor
from itertools import repeat
from typing import Any

import networkx as nx

from .._text import one_line
from ..batches import check_sendable, run_batches
from ..errors import ClockDependent, InvalidArgument
from ..machine import DIVERGE, HALT, AgenticMachine
from ..runtime.collector import collector_paused
from ..runtime.harness import TraceState
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
    search_line,
    walk,
)
from ..verdict import Verdict, short_repr
from .coverage import unreached_prompts
from .explored import ExploredMachine
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
)
from .result import CheckResult, Counterexample, Coverage, PropertyResult
from .run_check import confirm, keyed_loop

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
    has a counterexample (the coverage then says so). ``progress`` prints a status
    line on stderr every two seconds once the check runs for two (``False``: never;
    a function: called with the statistics instead).
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


def _alphabet_name(fixed: list[str] | None) -> str:
    if fixed is None:
        return "the completions the alphabet function chose per prompt"
    return f"the {len(fixed)}-completion alphabet"


class _Search(Walk):
    """The state of one check: a walk of the kernel's loop (:func:`~agentic_machines.
    runtime.search.walk`) that checks every row as it is recorded, and keeps the
    explored graph as flat lists indexed by state id for the verdicts."""

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
        super().__init__(task._replace(bounds=self.bounds), Found())
        # first violation per part: (state id, completion or None, outcome, explanation)
        self.found: dict[Property, tuple] = {}
        # per keyed never_diverges: (state id, step where the loop starts, explanation)
        self.keyed_found: dict[NeverDiverges, tuple[int, int, str]] = {}
        self.back_edges = 0  # steps to a state seen before: only they can close a cycle
        self.cycle_checked = (0, 0)  # (back edges, states) at the last look for a cycle

    # -- the search ------------------------------------------------------------------------
    def run(self, stop_early: bool) -> CheckResult:
        """Search breadth-first in batches on the kernel's loop, checking as it goes; then
        decide every property."""
        began = time.perf_counter()
        self._begin()
        self.stop_early = stop_early
        reporter = Reporter(self.progress, _check_line)
        reason = walk(self, reporter, began)
        record = self.record
        self.depth_cut = record.depth_cut
        self.truncated: str | None = reason if record.cut else None
        self.stopped_early = record.stopped
        self.bound_depth = self._bound_depth()
        return self._result(began, record.queued, reporter)

    def _begin(self) -> None:
        """The record of the search, holding the start state (id 0) and its prompt."""
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
        # The explored graph as flat lists indexed by state id.
        self.ids: dict[Any, int] = {start: 0}
        self.states: list[Any] = [start]
        self.prompts: list[str] = [first_prompt]
        self.depth: list[int] = [0]
        self.parent: list[int] = [-1]
        self.via: list[str] = [""]  # the completion that first reached each state (none: the start)
        self.succ: list[dict[Any, str]] = [{}]
        self.complete: list[bool] = [False]  # expanded: every successor recorded
        self.first_diverge: tuple[int, str] | None = None
        self.first_raised: tuple[int, str, Raised] | None = None
        self.unknown = 0
        self.unknown_reason = ""
        self.stuck = 0  # states where the completions function offered nothing
        self.transitions_made = 0
        self.diverged = 0  # steps that ended in DIVERGE (an agent's: its line budget ran out)
        self.share: dict[Any, float] = {}
        self.cut_depth: int | None = None  # the depth being expanded when max_states stopped it
        self.logs = [e.log(self.machine) for e in self.effects]
        # per state, per effect log: the requests executed on the run to it
        # the start's own: what an agent executed before its first model call
        self.history: list[tuple[frozenset[Any], ...]] = (
            [tuple(_started(log) for log in self.logs)] if self.logs else []
        )
        # per keyed never_diverges: the key of every state, by id (None once refuted)
        self.keys: dict[NeverDiverges, list[Any]] = {q: [] for q in self.keyed}
        for q in self.keyed:
            self._key_state(q, 0)
        if self.start_clock is None:  # a prompt the clock decided refutes nothing
            self._check_state(0)

    # -- the walk's part: expansion and watching -------------------------------------------
    def prompt(self, t: Any) -> None:
        return None  # the check keeps its prompts by state id (expand computes them)

    def done(self) -> bool:
        """Every part has its counterexample: the search can stop (with ``stop_early``).

        A cycle (``never_diverges()``'s lasso) is looked for only when a step went back
        to a known state since the last look and the graph doubled, so the looks cost
        about one pass over the final graph in all."""
        if not self.stop_early:
            return False
        missing = len(self.parts) - len(self.found)
        if missing and missing == sum(q not in self.found for q in self.looping):
            back, n = self.cycle_checked
            if self.back_edges > back and len(self.states) >= 2 * n:
                self.cycle_checked = (self.back_edges, len(self.states))
                if _cyclic_states(len(self.states), self._state_succ):
                    for q in self.looping:  # the lasso itself is built after the search
                        self.found.setdefault(q, (0, None, None, "a reachable cycle"))
                    missing = 0
        return not missing

    def snapshot(self, began: float, queued: int) -> dict[str, Any]:
        return self._stats(began, queued)

    def expand(self, states: list[Any]) -> list[tuple[list[str], list[Any], Expansion | None]]:
        """The rows of a batch: per state its completions, outcomes and transitions
        (the harness calls run here or spread over the executor's workers).

        A state whose alphabet is empty is stuck: an outcome of its own, recorded here,
        before any row of the batch (as a shortest counterexample must be)."""
        ids, fixed, prompts = self.ids, self.fixed, self.prompts
        chosen: list[list[str]] = []
        batch: list[tuple[Any, list[str]]] = []
        for s in states:
            i = ids[s]
            comps = choices(fixed, self.choose, prompts[i], s)
            chosen.append(comps)
            if comps:
                batch.append((s, comps))
            else:  # stuck: the run can neither go on nor has it ended
                self.complete[i] = True
                self.stuck += 1
                self._stuck(i)
        if not batch:
            return [(comps, [], None) for comps in chosen]
        if self.executor is None:
            clocked = {self.start: self.start_clock} if self.start_clock is not None else None
            rows = list(
                expand(self.machine, batch, clocked=clocked, known=ids, logs=self.logs, catch=True)
            )
        else:
            # A worker computes every new-looking state's prompt (the known set stays
            # here): the same values, so the rows the loop records do not change.
            rows = run_batches(self.executor, expand_steps, batch, None, self.machine)
            if self.start_clock is not None and not self.record.rows:
                rows[0] = Expansion([UndecidedStep(self.start_clock)] * len(batch[0][1]), None)
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
        """Record the steps from ``s`` (``row``: their outcomes; ``extra``: the prompts
        and executions of its expansion), checking each. A row the state bound ``cut``
        ends before the first new state refused: ``s`` is then left incomplete."""
        i = self.ids[s]
        prompts = extra.prompts if extra is not None and extra.prompts else repeat(None)
        executed = extra.executed if extra is not None and extra.executed else repeat(())
        if cut:
            self.transitions_made += 1  # the step to the refused state was taken
            self.cut_depth = self.depth[i]
        ids, transitions, logs = self.ids, self.transitions, self.logs
        out = self.succ[i]
        nd = self.depth[i] + 1
        for c, t, prompt, done in zip(comps, row, prompts, executed):
            self.transitions_made += 1
            kind = type(t)
            if kind is UndecidedStep:
                self.unknown += 1
                self.unknown_reason = self.unknown_reason or t.reason
                continue
            if t is DIVERGE:
                self.diverged += 1
                if self.first_diverge is None:
                    self.first_diverge = (i, c)
                    self._diverged(i, c)
            elif kind is Raised:
                if self.first_raised is None:
                    self.first_raised = (i, c, t)
                    for q in self.raising:  # breadth-first: a shortest run that raises
                        self.found[q] = (i, c, t, "")
            elif t is not HALT:
                j = ids.get(t)
                if j is None:
                    j = self._add_state(t, prompt, i, c, nd, done)
                else:
                    self.back_edges += 1
                t = j
            if t not in out:
                out[t] = c
            if transitions:
                self._check_transition(i, c, t)
            if logs:
                self._check_effects(i, c, t, done, self.history[i])
        if cut:
            return
        self.complete[i] = True
        decided = len(row) if not self.unknown else sum(type(t) is not UndecidedStep for t in row)
        if decided:
            self.share[s] = len(out) / decided

    def _add_state(
        self, t: Any, prompt: str | None, i: int, c: str, d: int, executed: tuple[Any, ...]
    ) -> int:
        """Record the new state ``t``, reached from state ``i`` by ``c`` at depth ``d``,
        check the invariants on it, and return its id."""
        j = len(self.states)
        self.ids[t] = j
        self.states.append(t)
        self.prompts.append(prompt if prompt is not None else self.machine.prompt(t))
        self.depth.append(d)
        self.parent.append(i)
        self.via.append(c)
        self.succ.append({})
        self.complete.append(False)
        if self.logs:  # the parent's history, copied only when this step added to it
            past = self.history[i]
            self.history.append(
                tuple(h | frozenset(map(_hashable, e)) if e else h for h, e in zip(past, executed))
                if any(executed)
                else past
            )
        if self.invariants:
            self._check_state(j)
        if self.halting:
            self._deep(j, d)
        for q in self.keyed:
            self._key_state(q, j)
        return j

    def _result(self, began: float, queued: int, reporter: Reporter) -> CheckResult:
        """Every property's verdict, each counterexample re-checked, and the coverage."""
        fixed = self.fixed
        # Every counterexample is replayed, over the alphabet checked, and its property
        # checked again on the replayed run before it is returned (run_check.confirm).
        offer = (lambda _prompt: fixed) if fixed is not None else self.choose
        results = [
            confirm(self.machine, self._verdict(p, label), offer)
            for p, label in zip(self.props, display_names(self.props))
        ]
        seconds = time.perf_counter() - began
        stats = self._stats(began, queued)
        reporter.finish(stats)
        unreached, basis = unreached_prompts(self.machine, self.prompts)
        coverage = Coverage(
            states=len(self.states),
            transitions=self.transitions_made,
            edges=sum(map(len, self.succ)),
            depth=max(self.depth),
            alphabet_share=self.share,
            undecided=self.unknown,
            diverged=self.diverged,
            stuck=self.stuck,
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
    def _check_state(self, j: int) -> None:
        state, prompt = self.states[j], self.prompts[j]
        for inv in self.invariants:
            if inv in self.found:
                continue
            try:
                ok = inv.fn(state, prompt)
            except Exception as exc:  # noqa: BLE001 - a broken property is reported, not raised
                self.found[inv] = (
                    j,
                    None,
                    None,
                    f"the invariant raised {type(exc).__name__}: {exc}",
                )
                continue
            if not ok:
                self.found[inv] = (
                    j,
                    None,
                    None,
                    f"{inv.name} is false in state {short_repr(state)} (prompt of "
                    f"{len(prompt):,} characters: {short_repr(prompt, 60)})",
                )

    def _diverged(self, i: int, c: str) -> None:
        """The first DIVERGE (a shortest one): it refutes the liveness properties."""
        n = self.depth[i] + 1
        for q in self.diverging:
            self.found.setdefault(
                q,
                (i, c, DIVERGE, "the harness returned DIVERGE (↑): it never returns to the model"),
            )
        for hq in self.halting:
            if n <= hq.k:
                self.found.setdefault(
                    hq, (i, c, DIVERGE, f"the harness returned DIVERGE (↑) after {n} model call(s)")
                )

    def _stuck(self, i: int) -> None:
        """A state where the completions function offers no completion: the run is stuck
        there, an outcome of its own. It has not halted, so it refutes ``halts_within(k)``
        for every k at least its depth (found breadth-first: a shortest such run)."""
        d = self.depth[i]
        why = (
            f"the run is stuck after {d} model call(s) in {short_repr(self.states[i])}: the "
            "completions function offered no completion for its prompt, and a stuck run has not halted"
        )
        for q in self.halting:
            if d <= q.k:
                self.found.setdefault(q, (i, None, None, why))

    def _deep(self, j: int, d: int) -> None:
        """A state ``d`` steps deep: the breadth-first path to it is a run of ``d`` steps
        that has not halted, a shortest counterexample to ``halts_within(d)``."""
        for q in self.halting:
            if q.k == d and q not in self.found:
                self.found[q] = (
                    j,
                    None,
                    None,
                    f"after {d} model calls the run has not halted (it is in "
                    f"{short_repr(self.states[j])})",
                )

    def _key_state(self, q: NeverDiverges, j: int) -> None:
        """Record the key of state ``j`` and look, along the breadth-first run to it, for
        an earlier state with that key from which the loop really goes on for ever
        (:func:`~agentic_machines.checking.run_check.keyed_loop`): found breadth-first, a
        shortest such run."""
        keys = self.keys[q]
        if q in self.found:
            keys.append(None)
            return
        try:
            key = _hashable(q.key(self.states[j]))  # type: ignore[misc]
        except Exception as exc:  # noqa: BLE001 - a broken key is reported, not raised
            keys.append(None)
            self.found[q] = (
                j,
                None,
                None,
                f"the key of {q.name} raised {type(exc).__name__}: {exc}",
            )
            self.keyed_found[q] = (j, -1, self.found[q][3])
            return
        keys.append(key)
        path = self._path(j)
        for n in range(len(path) - 2, -1, -1):  # the nearest earlier state first
            if keys[path[n]] != key:
                continue
            loop = [self.via[k] for k in path[n + 1 :]]
            forever = keyed_loop(
                self.machine, q, self.states[j], loop, [keys[k] for k in path[n + 1 :]]
            )
            if forever is None:
                continue
            state, at = self.states[j], self.depth[path[n]]
            why = (
                f"after step {self.depth[j]} the run is in {short_repr(state)}, whose key "
                f"{short_repr(key)} is the key of {short_repr(self.states[path[n]])} (step {at}), "
                f"and {forever}"
            )
            self.found[q] = (j, None, None, why)
            self.keyed_found[q] = (j, at, why)
            return

    def _check_transition(self, i: int, c: str, t: Any) -> None:
        state = self.states[i]
        outcome = self.states[t] if type(t) is int else t
        for tp in self.transitions:
            if tp in self.found:
                continue
            try:
                ok = tp.fn(state, c, outcome)
            except Exception as exc:  # noqa: BLE001
                self.found[tp] = (i, c, t, f"the property raised {type(exc).__name__}: {exc}")
                continue
            if not ok:
                self.found[tp] = (
                    i,
                    c,
                    t,
                    f"{tp.name} is false of the step {short_repr(state)} --{short_repr(c)}--> "
                    f"{short_repr(outcome)}",
                )

    def _check_effects(self, i: int, c: str, t: Any, executed: tuple, history: tuple) -> None:
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
                    self.found[prop] = (
                        i,
                        c,
                        t,
                        f"{prop.name[21:-1]} executed the request {short_repr(request)} {again}",
                    )
                    break
                seen.add(key)

    # -- verdicts ----------------------------------------------------------------------------
    def _verdict(self, prop: Property, label: str) -> PropertyResult:
        parts = prop.parts
        found = [self._part(q) for q in parts]
        refuted = [(cx, v) for cx, v in found if cx is not None]
        claim = f"{prop.claim()}, for {_alphabet_name(self.fixed)}"
        checked = self.transitions_made
        if refuted:
            cx = min((cx for cx, _ in refuted), key=len)
            cx = Counterexample(
                label,
                cx.completions,
                cx.states,
                cx.prompts,
                cx.explanation,
                cx.loop,
                self.name,
                getattr(self.machine, "initial", None),
            )
            verdict = Verdict(
                False,
                claim,
                "exhaustive",
                checked,
                reason=f"counterexample of {len(cx)} step{'s' * (len(cx) != 1)}: {cx.explanation}",
                details={"counterexample": cx},
            )
            return PropertyResult(prop, verdict, cx, label)
        undecided = [why for _, why in found if why]
        if undecided:
            return PropertyResult(
                prop,
                Verdict(None, claim, "exhaustive", checked, reason="; ".join(undecided)),
                None,
                label,
            )
        reason = f"bound: {self._bound_text()}"
        if (
            self.bound_depth is not None
            and any(isinstance(q, NeverDiverges) and q.key is None for q in parts)
            and isinstance(self.start, TraceState)
        ):
            reason += (
                f"; {self.name}'s states are histories of completions, which never repeat, so a loop of "
                "model calls cannot be seen as a cycle here; pass never_diverges(key=...) to say which "
                "states are the same situation (e.g. key=machine.prompt)"
            )
        return PropertyResult(
            prop, Verdict(True, claim, "exhaustive", checked, reason=reason), None, label
        )

    def _part(self, q: Property) -> tuple[Counterexample | None, str]:
        """The counterexample of one part, or why it is undecided ("" when it holds)."""
        if isinstance(q, HaltsWithin):
            return self._halts_within(q)
        if isinstance(q, NeverDiverges):
            return self._never_diverges(q)
        if isinstance(q, NeverRaises):
            if self.first_raised is not None:
                i, c, t = self.first_raised
                return self._path_cx(
                    q, i, c, t, f"the harness raised {t.type}: {one_line(t.message)[:200]}"
                ), ""
            return None, self._unknown_text()
        if q in self.found:
            i, c, t, why = self.found[q]
            if c is None:
                return self._path_cx(q, i, None, None, why), ""
            return self._path_cx(q, i, c, t, why), ""
        if isinstance(q, EffectsAtMostOnce) and q.never_ran(self.machine):
            return None, q.never_ran(self.machine)
        if self.stopped_early:  # pragma: no cover - stop_early only stops when all are found
            return None, "the search stopped early"
        return None, self._unknown_text()

    def _unknown_text(self) -> str:
        if not self.unknown:
            return ""
        return (
            f"the outcome of {self.unknown} step{'s' * (self.unknown != 1)} is unknown "
            f"(the harness raised Undecided: {self.unknown_reason})"
        )

    def _path(self, j: int) -> list[int]:
        path = [j]
        while self.parent[path[-1]] >= 0:
            path.append(self.parent[path[-1]])
        path.reverse()
        return path

    def _path_cx(
        self, q: Property, i: int, c: str | None, t: Any, why: str, loop: int | None = None
    ) -> Counterexample:
        """The run along the breadth-first path to state ``i``, then ``c`` (if any) to ``t``."""
        ids = self._path(i)
        comps = [self.via[k] for k in ids[1:]]
        states = [self.states[k] for k in ids]
        prompts = [self.prompts[k] for k in ids]
        if c is not None:
            comps.append(c)
            if type(t) is int:
                states.append(self.states[t])
                prompts.append(self.prompts[t])
            else:
                states.append(t)
        return Counterexample(q.name, tuple(comps), tuple(states), tuple(prompts), why, loop)

    def _walk_cx(
        self,
        q: Property,
        walk: list[int],
        comps: list[str],
        why: str,
        loop: int | None = None,
    ) -> Counterexample:
        """The run through the state ids ``walk`` (one more than ``comps``)."""
        states = tuple(self.states[k] for k in walk)
        prompts = tuple(self.prompts[k] for k in walk)
        return Counterexample(q.name, tuple(comps), states, prompts, why, loop)

    # -- liveness on the explored graph -----------------------------------------------------
    def _state_succ(self, i: int) -> Iterable[tuple[int, str]]:
        return ((t, c) for t, c in self.succ[i].items() if type(t) is int)

    def _never_diverges(self, q: NeverDiverges) -> tuple[Counterexample | None, str]:
        candidates: list[Counterexample] = []
        if self.first_diverge is not None:
            i, c = self.first_diverge
            candidates.append(
                self._path_cx(
                    q,
                    i,
                    c,
                    DIVERGE,
                    "the harness returned DIVERGE (↑): it never returns to the model",
                )
            )
        lasso = self._lasso(q)
        if lasso is not None:
            candidates.append(lasso)
        if q in self.keyed_found:
            j, at, why = self.keyed_found[q]
            candidates.append(self._path_cx(q, j, None, None, why, loop=None if at < 0 else at))
        if candidates:
            return min(candidates, key=len), ""
        reasons = [self._unknown_text()] if self.unknown else []
        return None, "; ".join(reasons)

    def _lasso(self, q: Property) -> Counterexample | None:
        cyclic = _cyclic_states(len(self.states), self._state_succ)
        if not cyclic:
            return None
        entry = min(cyclic, key=lambda k: (self.depth[k], k))
        component = cyclic[entry]
        # the shortest cycle through `entry`, inside its strongly connected component
        back: dict[int, tuple[int, str]] = {}
        queue = deque([entry])
        closing: tuple[int, str] | None = None
        while queue and closing is None:
            u = queue.popleft()
            for v, c in self._state_succ(u):
                if v == entry:
                    closing = (u, c)
                    break
                if v in component and v not in back:
                    back[v] = (u, c)
                    queue.append(v)
        assert closing is not None  # entry is on a cycle inside its component
        loop_states = [closing[0]]
        loop_comps = [closing[1]]
        while loop_states[-1] != entry:
            u, c = back[loop_states[-1]]
            loop_states.append(u)
            loop_comps.append(c)
        loop_states.reverse()
        loop_comps.reverse()
        stem = self._path(entry)
        walk = stem + loop_states[1:]
        comps = [self.via[k] for k in stem[1:]] + loop_comps
        loop_at = len(stem) - 1
        why = (
            f"a reachable cycle of {len(loop_comps)} step{'s' * (len(loop_comps) != 1)} that never "
            f"halts: after step {len(comps) - 1} the run is back in {short_repr(self.states[entry])}"
        )
        return self._walk_cx(q, walk + [entry], comps, why, loop_at)

    def _halts_within(self, q: HaltsWithin) -> tuple[Counterexample | None, str]:
        """The shortest run that shows ``halts_within(k)`` false, with a reachable cycle's
        lasso among the candidates: a run that goes round a loop for ever says more than
        its first k steps, so when it is no longer than them the lasso is returned."""
        cx, why = self._halts_within_run(q)
        if cx is None:
            return None, why
        lasso = self._lasso(q)  # only when refuted: a reachable cycle refutes every k
        if lasso is not None and len(lasso) <= len(cx):
            return lasso, ""
        return cx, ""

    def _halts_within_run(self, q: HaltsWithin) -> tuple[Counterexample | None, str]:
        if q in self.found:
            i, c, t, why = self.found[q]
            return self._path_cx(q, i, c, t, why), ""
        k = q.k
        if k == 0:  # the start is a state: the run of 0 steps has not halted
            return self._path_cx(q, 0, None, None, "the start is a state, not HALT"), ""
        candidates: list[Counterexample] = []
        if self.first_diverge is not None:
            i, c = self.first_diverge
            if self.depth[i] + 1 <= k:
                candidates.append(
                    self._path_cx(
                        q,
                        i,
                        c,
                        DIVERGE,
                        f"the harness returned DIVERGE (↑) after {self.depth[i] + 1} model call(s)",
                    )
                )
        if k >= len(self.states):
            # A run of k >= n steps through n states repeats one: it exists exactly when a
            # cycle is reachable, and the cycle's lasso shows it (without a cycle the
            # layers below empty within n steps).
            lasso = self._lasso(q)
            if lasso is not None:
                candidates.append(lasso)
                return min(candidates, key=len), ""
        # Layers of the runs: layer j holds every state some run is in after j steps.
        # state id -> (previous id, completion) of one run reaching it
        layer: dict[int, tuple[int, str] | None] = {0: None}
        layers: list[dict[int, tuple[int, str] | None]] = [layer]
        open_end = ""
        for j in range(k):
            nxt: dict[int, tuple[int, str] | None] = {}
            for u in layer:
                if not self.complete[u]:
                    open_end = open_end or (
                        f"a run is in {short_repr(self.states[u])} after {j} step(s) and the "
                        f"search did not expand it ({self._truncation_text() or 'bounded'})"
                    )
                for v, c in self._state_succ(u):
                    if v not in nxt:
                        nxt[v] = (u, c)
            layer = nxt
            layers.append(layer)
            if not layer:
                break
        if len(layers) == k + 1 and layers[k]:
            end = next(iter(layers[k]))
            walk = [end]
            comps: list[str] = []
            for j in range(k, 0, -1):
                u, c = layers[j][walk[-1]]  # type: ignore[misc]
                walk.append(u)
                comps.append(c)
            walk.reverse()
            comps.reverse()
            candidates.append(
                self._walk_cx(
                    q,
                    walk,
                    comps,
                    f"after {k} model calls the run has not halted (it is in {short_repr(self.states[walk[-1]])})",
                )
            )
        if candidates:
            return min(candidates, key=len), ""
        reasons = [r for r in (open_end, self._unknown_text()) if r]
        return None, "; ".join(reasons)

    # -- bounds and statistics ---------------------------------------------------------------
    def _bound_depth(self) -> int | None:
        """The depth up to which every run was searched, when not the whole graph."""
        bounds = []
        if self.depth_cut and self.max_depth is not None:
            bounds.append(self.max_depth)
        if self.cut_depth is not None:
            bounds.append(self.cut_depth)
        return min(bounds) if bounds else None

    def _truncation_text(self) -> str | None:
        parts = []
        if self.depth_cut:
            parts.append(self.bounds.depth_cut())
        if self.truncated:
            parts.append(self.truncated)
        if self.stopped_early:
            parts.append("every property was refuted, so the search stopped early")
        return "; ".join(parts) or None

    def _bound_text(self) -> str:
        if self.bound_depth is None and not self.stopped_early:
            n = len(self.states)
            return f"the whole reachable graph ({n:,} state{'s' * (n != 1)})"
        if self.bound_depth is None:
            return f"stopped early at {len(self.states):,} states"
        d = self.bound_depth
        return f"every run of at most {d} step{'s' * (d != 1)}"

    def _stats(self, began: float, queued: int) -> dict[str, Any]:
        n = len(self.states)
        return {
            "states": n,
            "edges": sum(map(len, self.succ)),
            "transitions": self.transitions_made,
            "diverged": self.diverged,
            "depth": max(self.depth),
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


def _cyclic_states(
    n: int, succ: Callable[[int], Iterable[tuple[int, str]]]
) -> dict[int, frozenset[int]]:
    """The states on a cycle (states 0..n-1), each mapped to its strongly connected
    component. Tarjan's algorithm, iterative (a long chain must not hit the recursion
    limit)."""
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    counter = 0
    out: dict[int, frozenset[int]] = {}
    for root in range(n):
        if index[root] != -1:
            continue
        work = [(root, iter(list(succ(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            v, it = work[-1]
            advanced = False
            for w, _ in it:
                if index[w] == -1:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, iter(list(succ(w)))))
                    advanced = True
                    break
                if on_stack[w]:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or any(t == v for t, _ in succ(v)):
                    members = frozenset(comp)
                    for w in comp:
                        out[w] = members
    return out


def _started(log: Any) -> frozenset[Any]:
    """The requests a log holds for the start, before any step (an agent's, made before
    its first model call): a run's history of executions begins with them."""
    at_start = getattr(log, "at_start", None)
    return frozenset(_hashable(r) for r in at_start()) if callable(at_start) else frozenset()
