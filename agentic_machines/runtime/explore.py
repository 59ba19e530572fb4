"""Bounded breadth-first exploration of a machine into a networkx graph.

:func:`explore` follows every completion of a finite alphabet (or of a function that
picks a small alphabet per prompt) from a start state, breadth-first, and returns a
``networkx.DiGraph``: one node per state reached, plus ``HALT`` and ``DIVERGE`` as nodes
when some transition reaches them, and one edge per (state, outcome) pair labelled by
the completions that take it. Like TLC's explicit-state search, it keeps a queue of
states still to expand and prints a periodic status line when it runs for a while.

>>> from agentic_machines import TableMachine, HALT
>>> m = TableMachine({0: "*", 1: "*"},
...                  {(0, "0"): 0, (0, "1"): 1, (1, "0"): 1, (1, "1"): HALT}, initial=0)
>>> g = explore(m)
>>> [g.nodes[n]["kind"] for n in g], g.edges[0, 1]["completions"], g.edges[1, HALT]["label"]
(['state', 'state', 'halt'], ['1'], '1')
>>> g.graph["stats"]["states"], g.graph["stats"]["truncated"]
(2, False)
"""

from __future__ import annotations

import gc
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor
from typing import Any

import networkx as nx

from ..errors import ClockDependent, InvalidArgument, InvalidMachine, Undecided
from ..machine import DIVERGE, HALT, AgenticMachine

__all__ = ["explore", "ExploredGraph", "short_text", "edge_label"]

Completions = Sequence[str] | Callable[[str], Iterable[str]]
Progress = None | bool | Callable[[dict[str, Any]], None]

PROGRESS_AFTER = 2.0
"""Seconds of exploration before the first status line (short runs stay silent)."""

PROGRESS_EVERY = 2.0
"""Seconds between two status lines."""

_CHECK_CLOCK_EVERY = 512  # expansions between clock reads: keeps the loop tight


def explore(
    machine: AgenticMachine,
    start: Any = None,
    completions: Completions | None = None,
    *,
    roots: Iterable[Any] | None = None,
    max_states: int | None = 10_000,
    max_depth: int | None = None,
    progress: Progress = None,
    executor: Executor | None = None,
    batch_size: int | None = None,
) -> nx.DiGraph:
    """Explore ``machine`` breadth-first from ``start`` and return the state graph.

    ``start`` defaults to ``machine.initial``; a finite machine without an initial state
    is explored from all its states. ``roots`` explores from several states at once
    (all at depth 0; the first one is the start). ``completions`` is a finite list, or a
    function ``prompt -> completions`` that chooses a small alphabet per prompt
    (default: ``machine.completions``).

    The graph has, per node, ``kind`` (``"state"``, ``"halt"`` or ``"diverge"``),
    ``prompt`` (``None`` for the sentinels), ``depth`` (shortest distance from a root),
    ``expanded`` (False when a bound stopped the search before its successors were
    recorded) and, when the machine has a ``state_label(state)`` method, ``label`` (a
    compact name for diagrams); per edge, ``completions`` (every completion that takes
    it, in order) and ``label`` (the same, joined and shortened). A completion for
    which the harness raised :class:`~agentic_machines.errors.Undecided` gives no edge;
    it is listed in the source node's ``undecided`` attribute (and the error in
    ``undecided_reason``).
    ``graph.graph`` holds ``start``, ``roots``, ``machine`` (its name) and ``stats``:
    ``states``, ``edges``, ``transitions``, ``undecided``, ``depth``, ``seconds``,
    ``states_per_second``, ``truncated`` and ``truncated_reason``.

    At most ``max_states`` states (``None``: no bound) are recorded; states at
    ``max_depth`` are not expanded. ``progress`` prints a status line on stderr every
    couple of seconds once a run takes more than two (``None``, the default), never
    (``False``), or calls a function with the current statistics instead.

    ``executor`` (any ``concurrent.futures.Executor``: a process pool, or a Dask
    ``Client(...).get_executor()``) expands each breadth-first level in parallel: the
    harness calls of a level are cut into tasks of ``batch_size`` states (default: about
    four tasks per worker) and merged in order, so the graph is the one the serial
    search returns. It pays only when a harness call costs milliseconds (a real model,
    a sandboxed block); see ``docs/scaling_out.md``. The machine must pickle.

    The graph is built lazily: ``graph.graph`` is there at once, and the nodes and
    edges are entered into networkx on first read (see :class:`ExploredGraph`).

    >>> from agentic_machines import FunctionMachine
    >>> counter = FunctionMachine(lambda n: f"at {n}", lambda n, c: n + int(c), initial=0)
    >>> g = explore(counter, completions=["1", "2"], max_depth=2)
    >>> sorted(g.nodes), g.graph["stats"]["truncated_reason"]
    ([0, 1, 2, 3, 4], 'max_depth=2: states at depth 2 were not expanded')
    """
    if not isinstance(machine, AgenticMachine):
        raise InvalidArgument(f"explore needs an AgenticMachine, got {type(machine).__name__}")
    if max_states is not None and max_states < 1:
        raise InvalidArgument(
            f"max_states must be at least 1 (or None for no bound), got {max_states}"
        )
    if max_depth is not None and max_depth < 0:
        raise InvalidArgument(
            f"max_depth must be 0 or more (or None for no bound), got {max_depth}"
        )
    starts = _roots(machine, start, roots)
    fixed, choose = _alphabet(machine, completions)
    report = _Reporter(progress)
    # Building a large graph allocates millions of small dicts; the cyclic garbage
    # collector would rescan them again and again (about 40% of the run time) while
    # none of them can be garbage yet. Pause it for the run, restore it after.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        graph = _search(
            machine, starts, fixed, choose, (max_states, max_depth), report, executor, batch_size
        )
    finally:
        if gc_was_enabled:
            gc.enable()
    report.finish(graph.graph["stats"])
    return graph


def _roots(machine: AgenticMachine, start: Any, roots: Iterable[Any] | None) -> list[Any]:
    if roots is not None:
        starts = list(dict.fromkeys(roots))
        if start is not None:
            starts = [start] + [s for s in starts if s != start]
    elif start is not None:
        starts = [start]
    elif machine.initial is not None:
        starts = [machine.initial]
    elif machine.states is not None:
        starts = list(dict.fromkeys(machine.states))  # a state listed twice is one root
    else:
        starts = []
    if not starts:
        raise InvalidArgument(
            f"machine {machine.name!r} has no initial state and no finite state list; "
            "pass start=<a state> to explore(...)"
        )
    for s in starts:
        if s is None:
            raise InvalidArgument(
                f"machine {machine.name!r} lists None as a state; None means 'no state' here (a graph "
                "has no None node), so use another value for that state"
            )
        if s is HALT or s is DIVERGE:
            raise InvalidArgument(
                f"cannot explore from the sentinel {s!r}; start from a state of the machine"
            )
    return starts


def _alphabet(
    machine: AgenticMachine, completions: Completions | None
) -> tuple[list[str] | None, Callable[[str], Iterable[str]] | None]:
    if completions is None:
        completions = machine.completions
    if completions is None:
        raise InvalidArgument(
            f"machine {machine.name!r} has no finite completion alphabet, so explore does not know "
            "which completions to follow; pass completions=[...] or a function prompt -> list of completions"
        )
    if callable(completions):
        return None, completions
    if isinstance(completions, str):
        raise InvalidArgument(
            f"completions must be a list of strings, not the single string {completions!r}; wrap it: [{completions!r}]"
        )
    fixed = list(dict.fromkeys(completions))
    bad = [c for c in fixed if not isinstance(c, str)]
    if bad:
        raise InvalidArgument(f"completions are strings (C = str); got {bad!r}")
    return fixed, None


class _Undecided:
    """A transition the harness could not settle (it raised Undecided): no edge."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __reduce__(self) -> tuple[Any, ...]:
        return (_Undecided, (self.reason,))


class _Found:
    """What a search found, in the compact form it is recorded in.

    ``rows`` holds, per expanded state in expansion order, ``(state, completions,
    outcomes)``: the outcomes aligned with the completions (an :class:`_Undecided` where
    the harness raised), cut where the state bound stopped the search. ``depth`` maps
    every node (states and the sentinels reached) to its depth, in discovery order, and
    ``prompts`` every state to its prompt. The networkx graph is built from this only
    when it is first read (:class:`ExploredGraph`): a search costs little more than the
    bare loop, and entering every edge into networkx is paid by those who read it.
    """

    __slots__ = ("rows", "depth", "prompts", "cut", "queued", "labeller")

    def __init__(self) -> None:
        self.rows: list[tuple[Any, list[str], list[Any]]] = []
        self.depth: dict[Any, int] = {}
        self.prompts: dict[Any, str] = {}
        self.cut: bool = False  # the last row was cut by the state bound: not expanded
        self.queued = 0
        self.labeller: Callable[[Any], Any] | None = None


def _prompt(p: Callable[[Any], str], s: Any) -> tuple[str, str | None]:
    """``p(s)``, and the reason when the clock decided it (``None`` when it did not).

    A prompt the clock decided (a harness that rebuilt ``s`` met a deadline) is shown as it
    came out, and every transition from ``s`` is undecided with that reason: what follows a
    clock-dependent prompt is no fact either.
    """
    try:
        return p(s), None
    except ClockDependent as exc:
        return exc.outcome, str(exc)


def _outcomes(h: Callable[[Any, str], Any], s: Any, comps: list[str]) -> list[Any]:
    """``h(s, c)`` for every completion, an :class:`_Undecided` where ``h`` raised it."""
    try:
        return [h(s, c) for c in comps]
    except Undecided:  # rare: redo one by one so that the others still count
        row: list[Any] = []
        for c in comps:
            try:
                row.append(h(s, c))
            except Undecided as exc:
                row.append(_Undecided(str(exc)))
        return row


def _search(
    machine: AgenticMachine,
    starts: list[Any],
    fixed: list[str] | None,
    choose: Callable[[str], Iterable[str]] | None,
    bounds: tuple[int | None, int | None],
    report: _Reporter,
    executor: Any = None,
    batch_size: int | None = None,
) -> ExploredGraph:
    began = time.perf_counter()
    found = _Found()
    if executor is None:
        reason = _serial(machine, starts, fixed, choose, bounds, report, found, began)
    else:
        from .parallel import parallel_search  # the executor path and its imports

        reason = parallel_search(
            machine, starts, fixed, choose, bounds, report, found, began, executor, batch_size
        )
    labeller = getattr(machine, "state_label", None)
    found.labeller = labeller if callable(labeller) else None
    graph = ExploredGraph()
    graph.graph.update(
        name=getattr(machine, "name", "machine"),
        machine=getattr(machine, "name", "machine"),
        start=starts[0],
        roots=starts,
        stats=_stats(found, began, reason, final=True),
    )
    graph.__dict__["_pending"] = found  # built into networkx's dicts on first read
    return graph


def _serial(machine, starts, fixed, choose, bounds, report, found, began) -> str | None:
    """The breadth-first loop in this process: the bare loop plus what the graph needs.

    Returns why the search stopped early (``None`` when it did not).
    """
    h, p = machine.harness, machine.prompt
    max_states, max_depth = bounds
    depth, prompts, rows = found.depth, found.prompts, found.rows
    clocked: dict[Any, str] = {}  # states whose prompt the clock decided, and why
    for s in starts:
        depth[s] = 0
        prompts[s], why = _prompt(p, s)
        if why is not None:
            clocked[s] = why
    limit = max_states if max_states is not None else float("inf")
    queue = deque(starts)
    depth_cut = False
    while queue:
        s = queue.popleft()
        d = depth[s]
        if max_depth is not None and d >= max_depth:
            depth_cut = True
            continue
        comps = fixed if fixed is not None else _chosen(choose, prompts[s], s)
        if s in clocked:
            row = [_Undecided(clocked[s])] * len(comps)
        else:
            row = _outcomes(h, s, comps)
        nd = d + 1
        for t in row:
            if t in depth:
                continue
            if t is HALT or t is DIVERGE:
                depth[t] = nd
            elif type(t) is _Undecided:
                continue
            elif len(prompts) >= limit:
                rows.append((s, comps, _cut(row, depth)))
                found.cut = True
                found.queued = len(queue)
                return _full(max_states, len(prompts))
            else:
                if t is None:
                    raise none_state(machine, s)
                depth[t] = nd
                prompts[t], why = _prompt(p, t)
                if why is not None:
                    clocked[t] = why
                queue.append(t)
        rows.append((s, comps, row))
        if len(rows) % _CHECK_CLOCK_EVERY == 0:
            report.tick(lambda: _stats(found, began, None, queued=len(queue)))  # noqa: B023 - called at once
    return _depth_reason(max_depth) if depth_cut else None


def none_state(machine: AgenticMachine, s: Any) -> InvalidMachine:
    """The error for a harness that returned ``None``: not a state (a graph has no None
    node, and ``None`` means "no state" across the toolkit), most often a missing ``return``.

    >>> from agentic_machines import TableMachine, HALT
    >>> print(none_state(TableMachine({0: "p"}, {(0, "a"): HALT}), 0))
    h(0, ·) of 'table' returned None, which is not a state; return a state, HALT or DIVERGE (a missing return?)
    """
    return InvalidMachine(
        f"h({s!r}, ·) of {machine.name!r} returned None, which is not a state; return a state, HALT or "
        "DIVERGE (a missing return?)"
    )


def _full(max_states: int | None, held: int) -> str:
    return f"max_states={max_states}: the search stopped when the graph held {held} states"


def _depth_reason(max_depth: int | None) -> str:
    return f"max_depth={max_depth}: states at depth {max_depth} were not expanded"


def _cut(row: list[Any], depth: dict[Any, int]) -> list[Any]:
    """``row`` up to the outcome the state bound refused: the first unrecorded state."""
    for k, t in enumerate(row):
        if t not in depth and t is not HALT and t is not DIVERGE and type(t) is not _Undecided:
            return row[:k]
    return row


def _stats(
    found: _Found, began: float, reason: str | None, *, final: bool = False, queued: int = 0
) -> dict[str, Any]:
    """The statistics of ``graph.graph["stats"]`` (edge counts only once the search ended)."""
    seconds = time.perf_counter() - began
    n_states = len(found.prompts)
    edges = transitions = undecided = 0
    if final:
        for _s, _comps, row in found.rows:
            targets = set(row)
            stuck = sum(type(t) is _Undecided for t in targets)
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
        "seconds": round(seconds, 6),
        "states_per_second": round(n_states / seconds, 1) if seconds > 0 else float(n_states),
        "truncated": reason is not None,
        "truncated_reason": reason,
    }


def _graph_dicts(found: _Found) -> tuple[dict, dict, dict]:
    """networkx's node, successor and predecessor dicts of a search, in its order.

    Nodes in discovery order; per state, one edge per distinct outcome in the order of
    its first completion, with every completion that takes it and a label; the
    predecessor map shares each edge's attribute dict, as ``DiGraph.add_edge`` would.
    """
    labels: dict[str, str] = {}
    prompts = found.prompts
    expanded = {s for s, _c, _r in (found.rows[:-1] if found.cut else found.rows)}
    nodes: dict[Any, dict[str, Any]] = {}
    for n, d in found.depth.items():
        if n is HALT:
            nodes[n] = {"kind": "halt", "prompt": None, "depth": d, "expanded": True}
        elif n is DIVERGE:
            nodes[n] = {"kind": "diverge", "prompt": None, "depth": d, "expanded": True}
        else:
            nodes[n] = {
                "kind": "state",
                "prompt": prompts[n],
                "depth": d,
                "expanded": n in expanded,
            }
    succ: dict[Any, dict[Any, dict[str, Any]]] = {n: {} for n in nodes}
    for s, comps, row in found.rows:
        out = succ[s]
        for c, t in zip(comps, row):
            if type(t) is _Undecided:
                attrs = nodes[s]
                attrs.setdefault("undecided", []).append(c)
                attrs.setdefault("undecided_reason", t.reason)
                continue
            edge = out.get(t)
            if edge is None:
                label = labels.get(c)
                if label is None:
                    label = labels[c] = short_text(c, 16)
                out[t] = {"completions": [c], "label": label}
            else:
                edge["completions"].append(c)
    pred: dict[Any, dict[Any, dict[str, Any]]] = {n: {} for n in nodes}
    for s, out in succ.items():
        for t, edge in out.items():
            if len(edge["completions"]) > 1:
                edge["label"] = edge_label(edge["completions"])
            pred[t][s] = edge
    if found.labeller is not None:  # a machine may name its states compactly for diagrams
        for n, a in nodes.items():
            if a["kind"] == "state":
                a["label"] = str(found.labeller(n))
    return nodes, succ, pred


class _LazyDict:
    """One of networkx's graph dicts, built from the pending search on first read.

    Writes go through networkx's own descriptor for the name (which also resets the
    cached views), so ``DiGraph.__init__`` and every mutating method work unchanged.
    """

    def __init__(self, base: Any) -> None:
        self.base = base

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        if "_pending" in obj.__dict__:
            obj._materialize()
        return obj.__dict__[self.name]

    def __set__(self, obj: Any, value: Any) -> None:
        self.base.__set__(obj, value)


class ExploredGraph(nx.DiGraph):
    """The ``networkx.DiGraph`` that :func:`explore` returns, filled on first read.

    It is a real DiGraph. ``g.graph`` (name, start, roots, stats) is there at once; the
    first read of its nodes or edges builds networkx's dicts from the compact record of
    the search, after which the object is a plain ``nx.DiGraph`` (its class is
    switched, so that later reads cost what they cost on any DiGraph). Pickling and
    copying build it first.

    >>> from agentic_machines import TableMachine, HALT
    >>> g = explore(TableMachine({0: "p"}, {(0, "a"): 0, (0, "b"): HALT}))
    >>> type(g).__name__, g.graph["stats"]["edges"]
    ('ExploredGraph', 2)
    >>> list(g.edges), type(g).__name__
    ([(0, 0), (0, 1)], 'DiGraph')
    """

    _node = _LazyDict(nx.Graph.__dict__["_node"])
    _adj = _LazyDict(nx.DiGraph.__dict__["_adj"])
    _succ = _LazyDict(nx.DiGraph.__dict__["_succ"])
    _pred = _LazyDict(nx.DiGraph.__dict__["_pred"])

    def _materialize(self) -> None:
        # As in the search: none of the many small dicts made here can be garbage yet,
        # so the cyclic collector would only rescan them again and again.
        paused = gc.isenabled()
        gc.disable()
        try:
            nodes, succ, pred = _graph_dicts(self.__dict__.pop("_pending"))
        finally:
            if paused:
                gc.enable()
        # Fill the empty dicts DiGraph.__init__ made, so that views already handed out
        # see the contents; then become a plain DiGraph: no lazy lookups from now on.
        od = self.__dict__
        od["_node"].update(nodes)
        od["_adj"].update(succ)
        od["_pred"].update(pred)
        self.__class__ = nx.DiGraph

    def __reduce_ex__(self, protocol: Any) -> Any:
        if "_pending" in self.__dict__:
            self._materialize()
        return self.__reduce_ex__(protocol)


def _chosen(choose: Callable[[str], Iterable[str]], prompt: str, state: Any) -> list[str]:
    comps = choose(prompt)
    if isinstance(comps, str):
        raise InvalidArgument(
            f"the completions function returned the single string {comps!r} for the prompt of {state!r}; "
            "it must return a list of completion strings"
        )
    return list(dict.fromkeys(comps))  # a repeated completion would be counted twice


class _Reporter:
    """Periodic status lines for long explorations (TLC-style: states, edges, depth, queue)."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.began = time.perf_counter()
        self.last: float | None = None

    def tick(self, snapshot: Callable[[], dict[str, Any]]) -> None:
        if self.progress is False:
            return
        now = time.perf_counter()
        if now - self.began < PROGRESS_AFTER or (
            self.last is not None and now - self.last < PROGRESS_EVERY
        ):
            return
        self.last = now
        self._emit(snapshot(), final=False)

    def finish(self, stats: dict[str, Any]) -> None:
        if self.last is not None:  # close the series of status lines with the totals
            self._emit(stats, final=True)

    def _emit(self, stats: dict[str, Any], final: bool) -> None:
        if callable(self.progress):
            self.progress(dict(stats, final=final))
            return
        word = "explored" if final else "exploring"
        print(
            f"agentic-machines: {word}: {stats['states']:,} states, {stats['edges']:,} edges, "
            f"depth {stats['depth']}, {stats['queued']:,} queued, "
            f"{stats['states_per_second']:,.0f} states/s, {stats['seconds']:.1f} s",
            file=sys.stderr,
            flush=True,
        )


def short_text(text: str, limit: int = 24) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis.

    Newlines are shown as ``⏎`` and the empty string as ``""`` so that a label is
    never blank.

    >>> short_text("Thought 1: search\\nAction 1: Search[owl]", 20)
    'Thought 1: search⏎A…'
    >>> short_text("")
    '""'
    """
    if not isinstance(text, str):
        text = repr(text)
    if text == "":
        return '""'
    one_line = text.replace("\r\n", "⏎").replace("\n", "⏎").replace("\t", " ")
    return one_line if len(one_line) <= limit else one_line[: max(1, limit - 1)] + "…"


def edge_label(completions: Sequence[str], limit: int = 16, most: int = 3) -> str:
    """The label of an edge taken by ``completions``: the first ``most``, then a count.

    >>> edge_label(["0"]), edge_label(["a", "b"]), edge_label(list("abcde"))
    ('0', 'a, b', 'a, b, c +2')
    """
    shown = ", ".join(short_text(c, limit) for c in completions[:most])
    extra = len(completions) - most
    return shown if extra <= 0 else f"{shown} +{extra}"
