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
from typing import Any

import networkx as nx

from ..errors import InvalidArgument, Undecided
from ..machine import DIVERGE, HALT, AgenticMachine

__all__ = ["explore", "short_text", "edge_label"]

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
        graph = _search(machine, starts, fixed, choose, max_states, max_depth, report)
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
        starts = list(machine.states)
    else:
        starts = []
    if not starts:
        raise InvalidArgument(
            f"machine {machine.name!r} has no initial state and no finite state list; "
            "pass start=<a state> to explore(...)"
        )
    for s in starts:
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


def _search(
    machine: AgenticMachine,
    starts: list[Any],
    fixed: list[str] | None,
    choose: Callable[[str], Iterable[str]] | None,
    max_states: int | None,
    max_depth: int | None,
    report: _Reporter,
) -> nx.DiGraph:
    began = time.perf_counter()
    h, p = machine.harness, machine.prompt
    graph = nx.DiGraph()
    nodes: dict[Any, dict[str, Any]] = {}  # node -> attribute dict: also the seen-set
    succ: dict[Any, dict[Any, dict[str, Any]]] = {}  # node -> {outcome: edge attribute dict}
    for s in starts:
        nodes[s] = {"kind": "state", "prompt": p(s), "depth": 0, "expanded": False}
        succ[s] = {}
    n_states = len(starts)
    limit = max_states if max_states is not None else float("inf")
    labels: dict[str, str] = {}  # completion -> its edge label: computed once per completion
    pairs = None if fixed is None else _labelled(fixed, labels)
    merged: list[dict[str, Any]] = []  # edges taken by several completions: relabelled at the end
    queue = deque(starts)
    undecided = expansions = repeats = 0
    truncated_reason: str | None = None
    depth_cut = False
    while queue:
        s = queue.popleft()
        attrs = nodes[s]
        depth = attrs["depth"]
        if max_depth is not None and depth >= max_depth:
            depth_cut = True
            continue
        comps = (
            pairs if pairs is not None else _labelled(_chosen(choose, attrs["prompt"], s), labels)
        )
        out = succ[s]
        nd = depth + 1
        full = False
        # The edge attribute dict is made here, once, when the edge is first seen: a
        # second pass over every edge to build it would cost as much as the search.
        for c, label in comps:
            try:
                t = h(s, c)
            except Undecided as exc:
                undecided += 1
                attrs.setdefault("undecided", []).append(c)
                attrs.setdefault("undecided_reason", str(exc))
                continue
            if t in out:  # another completion with the same outcome: one edge
                taken = out[t]["completions"]
                if len(taken) == 1:
                    merged.append(out[t])
                taken.append(c)
                repeats += 1
                continue
            if t not in nodes:
                if t is HALT:
                    nodes[t] = {"kind": "halt", "prompt": None, "depth": nd, "expanded": True}
                elif t is DIVERGE:
                    nodes[t] = {"kind": "diverge", "prompt": None, "depth": nd, "expanded": True}
                else:
                    if n_states >= limit:
                        full = True
                        break
                    n_states += 1
                    nodes[t] = {"kind": "state", "prompt": p(t), "depth": nd, "expanded": False}
                    queue.append(t)
                succ[t] = {}
            out[t] = {"completions": [c], "label": label}
        if full:
            truncated_reason = (
                f"max_states={max_states}: the search stopped when the graph held {n_states} states"
            )
            break
        attrs["expanded"] = True
        expansions += 1
        if expansions % _CHECK_CLOCK_EVERY == 0:
            # The lambda runs inside tick(), before the loop moves on: the current counts.
            report.tick(
                lambda: _stats(nodes, succ, n_states, -1, undecided, began, None, len(queue))  # noqa: B023
            )
    if truncated_reason is None and depth_cut:
        truncated_reason = f"max_depth={max_depth}: states at depth {max_depth} were not expanded"
    for edge in merged:
        edge["label"] = edge_label(edge["completions"])
    labeller = getattr(machine, "state_label", None)
    if callable(labeller):  # a machine may name its states compactly for diagrams
        for n, a in nodes.items():
            if a["kind"] == "state":
                a["label"] = str(labeller(n))
    _build(graph, nodes, succ)
    n_edges = sum(map(len, succ.values()))
    graph.graph.update(
        name=getattr(machine, "name", "machine"),
        machine=getattr(machine, "name", "machine"),
        start=starts[0],
        roots=starts,
        stats=_stats(
            nodes, succ, n_states, n_edges + repeats, undecided, began, truncated_reason, len(queue)
        ),
    )
    return graph


def _build(graph: nx.DiGraph, nodes: dict, succ: dict) -> None:
    """Enter the search's dicts into ``graph`` as its nodes and edges.

    The search already holds networkx's successor map (``{node: {outcome: edge
    attributes}}``); here the predecessor map is derived from it, sharing each edge's
    attribute dict exactly as ``DiGraph.add_edge`` would. Filling networkx's adjacency
    dicts directly costs a fraction of ``add_edges_from``, which re-checks both nodes
    and copies the attributes of every edge; building the predecessor map in a pass of
    its own, in successor order, is faster than growing it during the search.
    """
    pred: dict[Any, dict[Any, dict[str, Any]]] = {n: {} for n in nodes}
    for s, out in succ.items():
        for t, edge in out.items():
            pred[t][s] = edge
    if type(graph) is nx.DiGraph and not graph._node and not graph._adj:  # noqa: SLF001
        graph._node.update(nodes)  # noqa: SLF001
        graph._adj.update(succ)  # noqa: SLF001 - _adj is _succ on a DiGraph
        graph._pred.update(pred)  # noqa: SLF001
    else:  # pragma: no cover - a future networkx without these dicts: the public way
        graph.add_nodes_from(nodes.items())
        graph.add_edges_from((s, t, e) for s, out in succ.items() for t, e in out.items())


def _labelled(comps: list[str], labels: dict[str, str]) -> list[tuple[str, str]]:
    """Pair each completion with its edge label (``short_text``), cached in ``labels``."""
    pairs = []
    for c in comps:
        label = labels.get(c)
        if label is None:
            label = labels[c] = short_text(c, 16)
        pairs.append((c, label))
    return pairs


def _chosen(choose: Callable[[str], Iterable[str]], prompt: str, state: Any) -> list[str]:
    comps = choose(prompt)
    if isinstance(comps, str):
        raise InvalidArgument(
            f"the completions function returned the single string {comps!r} for the prompt of {state!r}; "
            "it must return a list of completion strings"
        )
    return list(dict.fromkeys(comps))  # a repeated completion would be counted twice


def _stats(
    nodes: dict,
    succ: dict,
    n_states: int,
    transitions: int,
    undecided: int,
    began: float,
    truncated_reason: str | None,
    queued: int,
) -> dict[str, Any]:
    seconds = time.perf_counter() - began
    return {
        "states": n_states,
        "edges": sum(len(out) for out in succ.values()),
        "transitions": transitions,
        "undecided": undecided,
        "depth": max((a["depth"] for a in nodes.values()), default=0),
        "queued": queued,
        "seconds": round(seconds, 6),
        "states_per_second": round(n_states / seconds, 1) if seconds > 0 else float(n_states),
        "truncated": truncated_reason is not None,
        "truncated_reason": truncated_reason,
    }


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
