"""An explored graph read back as a machine, so that a check runs on it without the harness.

:func:`~agentic_machines.runtime.explore.explore` records every step it took: per state
its prompt and, per completion, the outcome (an edge), or why the outcome is unknown (the
node's ``undecided``). :class:`ExploredMachine` answers ``p`` and ``h`` from that record
alone, so :func:`~agentic_machines.checking.check_properties` given a graph decides its
properties on the steps already taken and never calls the user's harness again. Its
bounds are the exploration's: a state the exploration did not expand is not expanded by
the check either, and the verdicts name that bound.

>>> from agentic_machines import TableMachine, HALT
>>> from agentic_machines.runtime.explore import explore
>>> m = TableMachine({0: "p", 1: "q"}, {(0, "a"): 1, (0, "b"): HALT, (1, "a"): 1, (1, "b"): 0})
>>> g = explore(m)
>>> em = ExploredMachine(g)
>>> em.prompt(1), em.harness(0, "a"), em.harness(1, "b"), em.completions
('q', 1, 0, ['a', 'b'])
"""

from __future__ import annotations

from typing import Any, NamedTuple

import networkx as nx

from .._outcome import Raised
from ..errors import InvalidArgument, Undecided
from ..machine import HALT, AgenticMachine
from ..verdict import short_repr

__all__ = ["ExploredMachine", "Unexplored", "is_explored", "NOT_TRIED"]


class Unexplored(NamedTuple):
    """The outcome of a step the exploration did not take, from ``state`` by
    ``completion``: a state beyond its bounds, whose prompt is undecided.

    >>> Unexplored(3, "go")
    Unexplored(state=3, completion='go')
    """

    state: Any
    completion: str


def is_explored(target: Any) -> bool:
    """True when ``target`` is a graph :func:`~agentic_machines.runtime.explore.explore`
    returned (it names its start and the alphabet it followed).

    >>> import networkx as nx
    >>> is_explored(nx.DiGraph()), is_explored("machine")
    (False, False)
    """
    return isinstance(target, nx.DiGraph) and "start" in target.graph and "alphabet" in target.graph


class ExploredMachine(AgenticMachine):
    """The machine whose steps are the edges of an explored graph ``graph``.

    ``initial`` is the graph's start, ``completions`` the alphabet the exploration
    followed (``None`` when a function chose it per prompt: then :meth:`offered` gives
    a prompt's completions, those of its first expanded state's edges, then its
    undecided ones; a function of the prompt gave every state of that prompt the same).
    A step the exploration found undecided raises ``Undecided``, saying why; a step it
    did not take (a bound stopped it first) goes to an :class:`Unexplored` state, whose
    steps are undecided: a check within the exploration's bounds stops before recording
    it, as it stops before that state on the machine (so a graph explored from several
    roots and cut by a bound, whose order is not the check's, is refused). A step that raised is ``HALT`` with
    the exception kept in :meth:`raised`, as an agent function's is.
    """

    def __init__(self, graph: nx.DiGraph) -> None:
        if not is_explored(graph):
            raise InvalidArgument(
                "check_properties takes a machine or a graph that explore() returned (it records "
                "the start and the alphabet it followed); explore the machine first: "
                "check_properties(explore(machine), properties=[...])"
            )
        self.graph = graph
        self.name = str(graph.graph.get("machine", "machine"))
        self.initial = graph.graph["start"]
        alphabet = graph.graph["alphabet"]
        self.completions = list(alphabet) if alphabet is not None else None
        stats = graph.graph.get("stats", {})
        self.cut = stats.get("truncated_reason") or "a bound of the exploration"
        if stats.get("truncated") and len(graph.graph.get("roots", ())) > 1:
            raise InvalidArgument(
                f"this graph was explored from {len(graph.graph['roots'])} roots and cut by a bound "
                f"({self.cut}), so it holds no whole search from its start; explore from the "
                "start alone (explore(machine, start, ...)) or without a bound"
            )
        self._steps: dict[Any, dict[str, Any]] = {}
        self._offers: dict[str, list[str]] | None = None

    def prompt(self, state: Any) -> str:
        """The prompt the exploration recorded for ``state``."""
        if type(state) is Unexplored:
            return NOT_TRIED
        return self.graph.nodes[state]["prompt"]

    def _out(self, state: Any) -> dict[str, Any]:
        steps = self._steps.get(state)
        if steps is None:
            steps = {}
            for target, edge in self.graph.succ[state].items():
                for c in edge["completions"]:
                    steps[c] = target
            self._steps[state] = steps
        return steps

    def offered(self, prompt: str) -> list[str]:
        """The completions the exploration tried at ``prompt`` (a function alphabet's).
        A prompt no expanded state has gets one placeholder, whose step is undecided (a
        state with no completion would read as stuck)."""
        if self._offers is None:
            self._offers = {}
            for n, a in self.graph.nodes(data=True):
                if a["kind"] == "state" and a["expanded"] and a["prompt"] not in self._offers:
                    self._offers[a["prompt"]] = list(self._out(n)) + list(a.get("undecided", ()))
        return self._offers.get(prompt, [NOT_TRIED])

    def harness(self, state: Any, completion: str) -> Any:
        """The outcome the exploration recorded for ``completion`` at ``state``."""
        if type(state) is Unexplored:
            raise Undecided(
                f"the exploration stopped before the step {short_repr(state.completion)} from "
                f"{short_repr(state.state)} ({self.cut})"
            )
        node = self.graph.nodes[state]
        target = self._out(state).get(completion, _MISSING)
        if target is not _MISSING:
            return HALT if type(target) is Raised else target
        if completion in node.get("undecided", ()):
            raise Undecided(node.get("undecided_reason", "the exploration found it undecided"))
        if not node["expanded"]:
            return Unexplored(state, completion)
        raise Undecided(
            f"the exploration did not try {short_repr(completion)} at {short_repr(state)}"
        )

    def raised(self, state: Any, completion: str) -> Raised | None:
        """The exception a step ended with, when the exploration recorded it as raised."""
        target = self._out(state).get(completion)
        return target if type(target) is Raised else None


_MISSING = object()
NOT_TRIED = "<not explored>"
"""The completion offered at a prompt no expanded state of the graph has, and the prompt
of an :class:`Unexplored` state."""
