"""Bounded breadth-first exploration of a machine into a networkx graph.

:func:`explore` follows every completion of a finite alphabet (or of a function that
picks a small alphabet per prompt) from a start state, breadth-first, and returns a
``networkx.DiGraph``: one node per state reached, plus ``HALT`` and ``DIVERGE`` as nodes
when some transition reaches them (and a :class:`~agentic_machines._outcome.Raised` node
per exception a machine kept instead of raising it: an agent function's step that raised
is drawn as raised, never as ``HALT``), and one edge per (state, outcome) pair labelled by
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

import time
from collections.abc import Iterable, Sequence
from concurrent.futures import Executor
from typing import Any

import networkx as nx

from .._outcome import Raised
from .._text import short_text
from ..machine import DIVERGE, HALT, AgenticMachine
from .collector import collector_paused
from .parallel import ExecutorWalk
from .search import (
    Completions,
    Found,
    Plan,
    Progress,
    Reporter,
    UndecidedStep,
    Walk,
    check_merged,
    plan,
    stats,
    walk,
)

__all__ = ["explore", "ExploredGraph", "StateGraph", "short_text", "edge_label"]


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
) -> StateGraph:
    """Explore ``machine`` breadth-first from ``start`` and return the state graph.

    ``start`` defaults to ``machine.initial``; a finite machine without an initial state
    is explored from all its states. ``roots`` explores from several states at once
    (all at depth 0; the first one is the start). ``completions`` is a finite list, or a
    function ``prompt -> completions`` that chooses a small alphabet per prompt
    (default: ``machine.completions``).

    The graph has, per node, ``kind`` (``"state"``, ``"halt"``, ``"diverge"`` or
    ``"raised"``, with the exception's ``type`` and ``message``: a step the machine ended
    because its program raised, e.g. an agent function's),
    ``prompt`` (``None`` for the sentinels), ``depth`` (shortest distance from a root),
    ``expanded`` (False when a bound stopped the search before its successors were
    recorded) and, when the machine has a ``state_label(state)`` method, ``label`` (a
    compact name for diagrams); per edge, ``completions`` (every completion that takes
    it, in order) and ``label`` (the same, joined and shortened). A completion for
    which the harness raised :class:`~agentic_machines.errors.Undecided` gives no edge;
    it is listed in the source node's ``undecided`` attribute (and the error in
    ``undecided_reason``).
    ``graph.graph`` holds ``start``, ``roots``, ``machine`` (its name), the search's
    ``alphabet`` (the list followed; ``None`` for a function), ``max_states`` and
    ``max_depth`` (what ``check_properties(graph)`` needs to check it) and ``stats``:
    ``states``, ``edges``, ``transitions``, ``undecided``, ``depth``, ``seconds``,
    ``states_per_second``, ``truncated`` and ``truncated_reason``.

    At most ``max_states`` states (``None``: no bound) are recorded; states at
    ``max_depth`` are not expanded. ``progress`` logs a status line on the ``agentic_machines``
    logger every couple of seconds once a run takes more than two (``None``, the default;
    the command line shows it on stderr), never (``False``), or calls a function with the
    current statistics instead.

    ``executor`` (any ``concurrent.futures.Executor``: a process pool, or a Dask
    ``Client(...).get_executor()``) expands each breadth-first level in parallel: the
    harness calls of a level are cut into tasks of ``batch_size`` states (default: about
    four tasks per worker) and merged in order, so the graph is the one the serial
    search returns. It pays only when a harness call costs milliseconds (a real model,
    a sandboxed block); see ``docs/scaling_out.md``. The machine must pickle.

    The graph is built lazily: ``graph.graph`` is there at once, and the nodes and
    edges are entered into networkx on first read (see :class:`ExploredGraph`).

    A machine that reaches states equal by ``==`` but not the same (``1`` and ``True``:
    one node to networkx, two to a harness that tells them apart) is refused with the
    :class:`~agentic_machines.errors.InvalidMachine` that ``check_properties`` raises
    (:func:`~agentic_machines.runtime.search.refuse_merged`), never drawn as one state.

    >>> from agentic_machines import FunctionMachine
    >>> counter = FunctionMachine(lambda n: f"at {n}", lambda n, c: n + int(c), initial=0)
    >>> g = explore(counter, completions=["1", "2"], max_depth=2)
    >>> sorted(g.nodes), g.graph["stats"]["truncated_reason"]
    ([0, 1, 2, 3, 4], 'max_depth=2: states at depth 2 were not expanded')
    """
    task = plan(machine, start, completions, more=roots, max_states=max_states, max_depth=max_depth)
    report = Reporter(progress)
    # Building a large graph allocates millions of small dicts; the cyclic garbage
    # collector's full collections would rescan them again and again (about 40% of the
    # run time) while none of them can be garbage yet. Pause those for the run (the
    # young ones go on freeing what the harness drops), restore them after.
    with collector_paused():
        graph = _search(task, report, executor, batch_size)
    report.finish(graph.graph["stats"])
    return graph


def _search(
    task: Plan, report: Reporter, executor: Executor | None, batch_size: int | None
) -> ExploredGraph:
    began = time.perf_counter()
    found = Found()
    way = Walk(task, found) if executor is None else ExecutorWalk(task, found, executor, batch_size)
    reason = walk(way, report, began)
    machine, starts = task.machine, task.starts
    check_merged(found, getattr(machine, "name", "machine"))  # 1 and True: one node would be wrong
    labeller = getattr(machine, "state_label", None)
    found.labeller = labeller if callable(labeller) else None
    graph = ExploredGraph()
    graph.graph.update(
        name=getattr(machine, "name", "machine"),
        machine=getattr(machine, "name", "machine"),
        start=starts[0],
        roots=starts,
        alphabet=task.fixed,
        max_states=task.bounds.max_states,
        max_depth=task.bounds.max_depth,
        stats=stats(found, began, reason, final=True),
    )
    graph.__dict__["_pending"] = found  # built into networkx's dicts on first read
    return graph


def _graph_dicts(found: Found) -> tuple[dict, dict, dict]:
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
        if n is HALT or n is DIVERGE:
            kind = "halt" if n is HALT else "diverge"
            nodes[n] = {"kind": kind, "prompt": None, "depth": d, "expanded": True}
        elif type(n) is Raised:
            nodes[n] = {
                "kind": "raised",
                "prompt": None,
                "depth": d,
                "expanded": True,
                "type": n.type,
                "message": n.message,
            }
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
            if type(t) is UndecidedStep:
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


class StateGraph(nx.DiGraph):
    """An explored state graph: a ``networkx.DiGraph`` with a notebook view.

    ``g.view()`` shows the interactive view of
    :mod:`agentic_machines.drawing.interactive` in a notebook cell (``.html`` is the
    page), as ``machine.view()`` does for a machine. Nothing else differs from a DiGraph.

    >>> from agentic_machines import TableMachine, HALT
    >>> g = explore(TableMachine({0: "p"}, {(0, "a"): 0, (0, "b"): HALT}))
    >>> g.view().html[:15], isinstance(g, nx.DiGraph)
    ('<!DOCTYPE html>', True)
    """

    def view(self, **options: Any) -> Any:
        """The interactive view of this graph, displayed in a notebook cell (an
        ``iframe``; ``.html`` is the page); ``options`` as for
        :func:`agentic_machines.drawing.interactive.view_data` (``title=``, ``path=``,
        ``spe_states=``, ``highlight=`` ...)."""
        # The drawing layer registers the view when the package is imported (always,
        # before this module): the runtime never imports drawing.
        from . import graph_viewer  # set after this module loads: read it when called

        assert graph_viewer is not None, "import agentic_machines registers the view"
        return graph_viewer(self, **options)


class ExploredGraph(StateGraph):
    """The :class:`StateGraph` that :func:`explore` returns, filled on first read.

    It is a real DiGraph. ``g.graph`` (name, start, roots, stats) is there at once; the
    first read of its nodes or edges builds networkx's dicts from the compact record of
    the search, after which the object is a plain :class:`StateGraph` (its class is
    switched, so that later reads cost what they cost on any DiGraph). Pickling and
    copying build it first.

    >>> from agentic_machines import TableMachine, HALT
    >>> g = explore(TableMachine({0: "p"}, {(0, "a"): 0, (0, "b"): HALT}))
    >>> type(g).__name__, g.graph["stats"]["edges"]
    ('ExploredGraph', 2)
    >>> list(g.edges), type(g).__name__
    ([(0, 0), (0, 1)], 'StateGraph')
    """

    _node = _LazyDict(nx.Graph.__dict__["_node"])
    _adj = _LazyDict(nx.DiGraph.__dict__["_adj"])
    _succ = _LazyDict(nx.DiGraph.__dict__["_succ"])
    _pred = _LazyDict(nx.DiGraph.__dict__["_pred"])

    def _materialize(self) -> None:
        # As in the search: none of the many small dicts made here can be garbage yet,
        # so the collector's full collections would only rescan them again and again.
        with collector_paused():
            nodes, succ, pred = _graph_dicts(self.__dict__.pop("_pending"))
        # Fill the empty dicts DiGraph.__init__ made, so that views already handed out
        # see the contents; then become a plain DiGraph: no lazy lookups from now on.
        od = self.__dict__
        od["_node"].update(nodes)
        od["_adj"].update(succ)
        od["_pred"].update(pred)
        self.__class__ = StateGraph

    def __reduce_ex__(self, protocol: Any) -> Any:
        if "_pending" in self.__dict__:
            self._materialize()
        return self.__reduce_ex__(protocol)


def edge_label(completions: Sequence[str], limit: int = 16, most: int = 3) -> str:
    """The label of an edge taken by ``completions``: the first ``most``, then a count.

    >>> edge_label(["0"]), edge_label(["a", "b"]), edge_label(list("abcde"))
    ('0', 'a, b', 'a, b, c +2')
    """
    shown = ", ".join(short_text(c, limit) for c in completions[:most])
    extra = len(completions) - most
    return shown if extra <= 0 else f"{shown} +{extra}"
