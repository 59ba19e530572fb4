"""What a diagram names and marks: every renderer's node ids, labels, roles and colours.

:func:`~agentic_machines.drawing.diagrams.draw` (matplotlib) and the text exports of
:mod:`agentic_machines.drawing.textforms` (Mermaid, DOT, JSON) read them from here, so a
state has the same id, the same label and the same colour in every format.

>>> from agentic_machines.runtime.explore import explore
>>> from agentic_machines.fixtures import fixture
>>> g = explore(fixture("f2-mul"), roots=[0, 1])
>>> node_names(g)
{0: ('s0', '0'), 1: ('s1', '1')}
>>> r = find_roles(g, spe_states=[1], highlight=7)
>>> r.fill(1, "state"), r.initial, r.missing
(('spe', '#ffd966'), {0}, ['highlighted state 7'])
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from .._outcome import Raised
from .._text import counted, escape_controls, short_text
from ..errors import InvalidArgument
from ..machine import DIVERGE, HALT
from ..runtime.harness import TraceState

__all__ = ["COLORS", "node_names", "Roles", "find_roles"]

COLORS = {
    "state": "#e8eef7",
    "successor": "#c9f0c9",
    "image": "#bcd4ff",
    "spe": "#ffd966",
    "obstruction": "#ff9b9b",
    "halt": "#bdbdbd",
    "diverge": "#d5c4ec",
    "raised": "#f4a582",
    "more": "#f4f4f4",
    "initial": "#1b7f3b",
    "highlight": "#e67e00",
    "edge": "#6b6b6b",
    "successor_edge": "#2e9e45",
}
"""One colour per role, used by every renderer so the picture and the Mermaid/DOT text agree."""


def node_names(graph: nx.DiGraph) -> dict[Hashable, tuple[str, str]]:
    """For every node, its stable id and its short, unique label.

    Ids are ``s0, s1, ...`` in the graph's node order (exploration order, so the same
    exploration gives the same ids), ``HALT`` and ``DIVERGE``. Labels are the state
    itself when it is short, the completions of a short trace state as ``⟨a·b⟩``, else
    the id; a node attribute ``label`` overrides them. Sentinels read ``1 halt`` and
    ``↑ diverge``; a step that raised (a :class:`~agentic_machines._outcome.Raised` node)
    has the id ``RAISED`` (``RAISED2``, ... for other exceptions) and reads ``raised
    Type: message``.

    >>> from agentic_machines import TableMachine, HALT
    >>> from agentic_machines.runtime.explore import explore
    >>> g = explore(TableMachine({"start": "go"}, {("start", "x"): HALT}, initial="start"))
    >>> node_names(g)
    {'start': ('s0', 'start'), 1: ('HALT', '1 halt')}
    """
    names: dict[Hashable, tuple[str, str]] = {}
    used: set[str] = set()
    index = raised = 0
    for node, attrs in graph.nodes(data=True):
        if node is HALT:
            ident, label = "HALT", "1 halt"
        elif node is DIVERGE:
            ident, label = "DIVERGE", "↑ diverge"
        elif attrs.get("kind") == "more":  # a summary node (drawing.summary)
            ident = f"MORE{attrs.get('depth', '')}"
            hidden = counted(attrs.get("hidden", 0), "more state")
            label = f"… {hidden} at depth {attrs.get('depth', '')}"
        elif type(node) is Raised:
            raised += 1
            ident = "RAISED" if raised == 1 else f"RAISED{raised}"
            label = short_text(f"raised {node.type}: {' '.join(node.message.split())}", 40)
        else:
            ident = f"s{index}"
            index += 1
            label = escape_controls(attrs.get("label") or _state_text(node, ident))
        if label in used:  # e.g. the state "1" and the state 1: keep labels unique
            label = f"{label} ({ident})"
        used.add(label)
        names[node] = (ident, label)
    return names


def _state_text(state: Any, ident: str, limit: int = 18) -> str:
    if isinstance(state, TraceState):
        cs = state.completions
        text = "⟨" + "·".join(short_text(c, 8) for c in cs) + "⟩"
        return (
            text if len(text) <= limit and all(len(c) <= 8 and "\n" not in c for c in cs) else ident
        )
    text = state if isinstance(state, str) else repr(state)
    return text if 0 < len(text) <= limit and "\n" not in text else ident


@dataclass
class Roles:
    """Which nodes play which role in a picture; shared by draw, to_dot and to_mermaid.

    ``missing`` names what was asked for but is not in the graph (the picture says so in
    a note); ``marked_edges`` are edges drawn orange (``draw_embedding``'s square).
    """

    initial: set = field(default_factory=set)
    highlight: set = field(default_factory=set)
    successors: set = field(default_factory=set)
    successor_edges: set = field(default_factory=set)
    image: set = field(default_factory=set)
    spe: set = field(default_factory=set)
    obstruction: set = field(default_factory=set)
    missing: list = field(default_factory=list)
    marked_edges: set = field(default_factory=set)

    def fill(self, node: Hashable, kind: str) -> tuple[str, str]:
        """(role, colour) of the node's fill: the most specific role wins.

        >>> Roles(spe={1}, image={1}).fill(1, "state"), Roles().fill(2, "halt")
        (('spe', '#ffd966'), ('halt', '#bdbdbd'))
        """
        for role in ("obstruction", "spe", "image", "successor"):
            members = self.successors if role == "successor" else getattr(self, role)
            if node in members:
                return role, COLORS[role]
        if kind in ("halt", "diverge", "raised", "more"):
            return kind, COLORS[kind]
        return "state", COLORS["state"]


def find_roles(
    graph: nx.DiGraph,
    highlight: Any = None,
    successors_of: Any = None,
    embedding_image: Any = None,
    spe_states: Iterable[Any] | None = None,
    obstruction: Any = None,
) -> Roles:
    """The roles of ``graph``'s nodes for the marks :func:`~agentic_machines.drawing.diagrams.draw`
    takes (its keyword arguments of the same names); the graph's ``start`` is the initial state.

    ``embedding_image`` is a list of states, a dict or an embedding with a dict mapping;
    ``obstruction`` a state, an ``Obstruction`` or a refuting ``Verdict``. A state asked
    for but not in the graph is named in ``missing`` rather than dropped.

    >>> from agentic_machines.runtime.explore import explore
    >>> from agentic_machines.fixtures import fixture
    >>> r = find_roles(explore(fixture("f2-mul"), roots=[0, 1]), successors_of=1, obstruction=5)
    >>> sorted(r.successor_edges), r.missing
    ([(1, 0), (1, 1)], ['obstruction state 5'])
    """
    roles = Roles()
    start = graph.graph.get("start")
    if start is not None and start in graph:
        roles.initial.add(start)

    def keep(target: set, states: Iterable[Any], what: str) -> None:
        for s in states:
            if s in graph:
                target.add(s)
            else:
                roles.missing.append(f"{what} {short_text(repr(s), 30)}")

    if highlight is not None:
        keep(roles.highlight, [highlight], "highlighted state")
    if successors_of is not None:
        if successors_of in graph:
            for t in graph.successors(successors_of):
                roles.successors.add(t)
                roles.successor_edges.add((successors_of, t))
            if not graph.nodes[successors_of].get("expanded", True):
                roles.missing.append("successors of an unexpanded state")
        else:
            roles.missing.append(f"state {short_text(repr(successors_of), 30)} (successors)")
    if embedding_image is not None:
        keep(roles.image, _image_states(embedding_image), "image state")
    if spe_states is not None:
        keep(roles.spe, spe_states, "SPE state")
    if obstruction is not None:
        keep(roles.obstruction, [_obstruction_state(obstruction)], "obstruction state")
    return roles


def _image_states(image: Any) -> list[Any]:
    mapping = getattr(image, "mapping", image) if not isinstance(image, Mapping) else image
    if mapping is None:
        raise InvalidArgument(
            "this embedding maps states with a function, so its image cannot be listed; "
            "pass embedding_image=[e(s) for s in the states you explored]"
        )
    if isinstance(mapping, Mapping):
        return list(mapping.values())
    return list(mapping)


def _obstruction_state(obstruction: Any) -> Any:
    # Accept a Verdict, an Obstruction, or the state itself.
    inner = getattr(obstruction, "obstruction", None)
    if inner is not None:
        obstruction = inner
    return (
        getattr(obstruction, "state", obstruction)
        if hasattr(obstruction, "explanation")
        else obstruction
    )
