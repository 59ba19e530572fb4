"""A diagram as text: Mermaid, Graphviz DOT and node-link JSON.

:func:`to_mermaid`, :func:`to_dot` and :func:`to_json` write the graph that
:func:`~agentic_machines.runtime.explore.explore` returns, with the ids, labels and roles
of :mod:`agentic_machines.drawing.roles`, the ones
:func:`~agentic_machines.drawing.diagrams.draw` shows (which is why
``agentic_machines.drawing.diagrams`` also exports the three).

>>> from agentic_machines.runtime.explore import explore
>>> from agentic_machines.fixtures import fixture
>>> g = explore(fixture("f2-mul"), roots=[0, 1])
>>> print(to_mermaid(g))  # doctest: +ELLIPSIS
flowchart TD
  s0(["0<br/>⋆"])
  s1(["1<br/>⋆"])
  s0 -->|"0, 1"| s0
  s1 -->|"0"| s0
  s1 -->|"1"| s1
  classDef initial stroke:#1b7f3b,stroke-width:4px
  class s0 initial
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

import networkx as nx

from .._text import clip_prompt, escape_controls, graph_context, short_text
from ..errors import InvalidArgument
from .roles import COLORS, Roles, find_roles, node_names

__all__ = ["to_mermaid", "to_dot", "to_json", "mermaid_text"]


def to_mermaid(graph: nx.DiGraph, *, direction: str = "TD", **highlights: Any) -> str:
    """The graph as a Mermaid ``flowchart``, with the same roles as
    :func:`~agentic_machines.drawing.diagrams.draw`.

    Labels are quoted and escaped with Mermaid entity codes, so any prompt or
    completion text is safe. ``highlights`` takes the keyword arguments of
    :func:`~agentic_machines.drawing.diagrams.draw`
    (``highlight``, ``successors_of``, ``embedding_image``, ``spe_states``,
    ``obstruction``).

    >>> from agentic_machines import TableMachine
    >>> from agentic_machines.runtime.explore import explore
    >>> g = explore(TableMachine({"a": 'say "hi" | <b>'}, {("a", "x#1"): "a"}, initial="a"))
    >>> print(to_mermaid(g).splitlines()[1:3])
    ['  s0(["a<br/>say #quot;hi#quot; #124; #lt;b#gt;"])', '  s0 -->|"x#35;1"| s0']
    """
    if direction not in ("TD", "TB", "LR", "RL", "BT"):
        raise InvalidArgument(f"direction must be TD, TB, LR, RL or BT, not {direction!r}")
    names = node_names(graph)
    roles = find_roles(graph, **highlights)
    lines = [f"flowchart {direction}"]
    for n, a in graph.nodes(data=True):
        ident, label = names[n]
        prompt = _prompt_text(a.get("prompt"), 40, graph_context(graph, n))
        text = mermaid_text(label) + (f"<br/>{mermaid_text(prompt)}" if prompt else "")
        kind = a.get("kind", "state")
        shape = {"halt": '["{}"]', "diverge": '{{{{"{}"}}}}', "raised": '>"{}"]'}.get(
            kind, '(["{}"])'
        )
        lines.append(f"  {ident}{shape.format(text)}")
    for u, v, a in graph.edges(data=True):
        lines.append(f'  {names[u][0]} -->|"{mermaid_text(a.get("label", ""))}"| {names[v][0]}')
    styles = _role_styles(graph, roles)
    for role, (members, css) in styles.items():
        lines.append(f"  classDef {role} {css}")
        lines.append(f"  class {','.join(names[n][0] for n in members)} {role}")
    return "\n".join(lines)


def _role_styles(graph: nx.DiGraph, roles: Roles) -> dict[str, tuple[list[Any], str]]:
    """Mermaid/DOT classes: role -> (nodes, Mermaid CSS). Sentinels and roles only."""
    out: dict[str, tuple[list[Any], str]] = {}
    fills: dict[str, list[Any]] = {}
    for n, a in graph.nodes(data=True):
        role, _ = roles.fill(n, a.get("kind", "state"))
        if role != "state":
            fills.setdefault(role, []).append(n)
    for role, members in fills.items():
        out[role] = (members, f"fill:{COLORS[role]},stroke:#333")
    if roles.highlight:
        out["chosen"] = (
            sorted(roles.highlight, key=list(graph).index),
            f"stroke:{COLORS['highlight']},stroke-width:4px",
        )
    if roles.initial:
        out["initial"] = (list(roles.initial), f"stroke:{COLORS['initial']},stroke-width:4px")
    return out


def mermaid_text(text: str) -> str:
    """``text`` safe inside a quoted Mermaid label: entity codes, newlines as ``<br/>``.

    >>> mermaid_text('say "hi" | #1\\nnext')
    'say #quot;hi#quot; #124; #35;1<br/>next'
    """
    text = escape_controls(text)  # a label printed to a terminal cannot drive it
    # '#' first: it starts every entity code that the other replacements insert.
    for raw, code in (
        ("#", "#35;"),
        ('"', "#quot;"),
        ("<", "#lt;"),
        (">", "#gt;"),
        ("|", "#124;"),
        ("`", "#96;"),
        ("[", "#91;"),
        ("]", "#93;"),
        ("{", "#123;"),
        ("}", "#125;"),
    ):
        text = text.replace(raw, code)
    return text.replace("\n", "<br/>")


def to_dot(graph: nx.DiGraph, **highlights: Any) -> str:
    """The graph in Graphviz DOT, with the same ids, labels and roles as
    :func:`~agentic_machines.drawing.diagrams.draw`.

    >>> from agentic_machines.runtime.explore import explore
    >>> from agentic_machines.fixtures import fixture
    >>> print(to_dot(explore(fixture("halt1"))))
    digraph "halt1" {
      rankdir=TB;
      node [shape=ellipse, style=filled, fillcolor="#e8eef7", fontname="Helvetica"];
      "s0" [label="0\\n⋆", penwidth=3, color="#1b7f3b"];
      "HALT" [label="1 halt", shape=box, fillcolor="#bdbdbd"];
      "s0" -> "HALT" [label="0, 1"];
    }
    """
    names = node_names(graph)
    roles = find_roles(graph, **highlights)
    lines = [
        f"digraph {_dot_text(str(graph.graph.get('name', 'machine')))} {{",
        "  rankdir=TB;",
        '  node [shape=ellipse, style=filled, fillcolor="#e8eef7", fontname="Helvetica"];',
    ]
    for n, a in graph.nodes(data=True):
        ident, label = names[n]
        prompt = _prompt_text(a.get("prompt"), 40, graph_context(graph, n))
        attrs = [f"label={_dot_text(label + (chr(10) + prompt if prompt else ''))}"]
        kind = a.get("kind", "state")
        if kind == "halt":
            attrs.append("shape=box")
        elif kind == "diverge":
            attrs.append("shape=diamond")
        elif kind == "raised":
            attrs.append("shape=octagon")
        role, color = roles.fill(n, kind)
        if role != "state":
            attrs.append(f'fillcolor="{color}"')
        if n in roles.highlight:
            attrs.append(f'penwidth=3, color="{COLORS["highlight"]}"')
        elif n in roles.initial:
            attrs.append(f'penwidth=3, color="{COLORS["initial"]}"')
        if not a.get("expanded", True):
            attrs.append('style="filled,dashed"')
        lines.append(f"  {_dot_text(ident)} [{', '.join(attrs)}];")
    for u, v, a in graph.edges(data=True):
        extra = (
            f', color="{COLORS["successor_edge"]}", penwidth=2'
            if (u, v) in roles.successor_edges
            else ""
        )
        lines.append(
            f"  {_dot_text(names[u][0])} -> {_dot_text(names[v][0])} [label={_dot_text(a.get('label', ''))}{extra}];"
        )
    lines.append("}")
    return "\n".join(lines)


def _dot_text(text: str) -> str:
    text = escape_controls(text)  # a label printed to a terminal cannot drive it
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_json(graph: nx.DiGraph, *, indent: int | None = None) -> str:
    """The graph as networkx node-link JSON, with string ids and JSON-safe attributes.

    Each node keeps ``id``, ``label``, ``state`` (the state's ``repr``), ``kind``,
    ``prompt``, ``depth`` and ``expanded``; each edge ``source``, ``target``,
    ``completions`` and ``label``; the graph keeps its name, ``start``/``roots`` (as ids)
    and ``stats``. ``networkx.node_link_graph(json.loads(text), edges="edges")`` reads it
    back.

    >>> from agentic_machines.runtime.explore import explore
    >>> from agentic_machines.fixtures import fixture
    >>> data = json.loads(to_json(explore(fixture("diverge1"))))
    >>> [n["id"] for n in data["nodes"]], data["edges"][0]["completions"]
    (['s0', 'DIVERGE'], ['0', '1'])
    """
    names = node_names(graph)
    nodes = []
    for n, a in graph.nodes(data=True):
        ident, label = names[n]
        entry = {"id": ident, "label": label, "state": repr(n)}
        entry.update({k: _jsonable(v) for k, v in a.items() if k != "label"})
        nodes.append(entry)
    edges = [
        {"source": names[u][0], "target": names[v][0], **{k: _jsonable(x) for k, x in a.items()}}
        for u, v, a in graph.edges(data=True)
    ]
    meta = {}
    for k, v in graph.graph.items():
        if k == "start":
            meta[k] = names[v][0] if v in names else _jsonable(v)
        elif k == "roots":
            meta[k] = [names[r][0] if r in names else _jsonable(r) for r in v]
        else:
            meta[k] = _jsonable(v)
    data = {"directed": True, "multigraph": False, "graph": meta, "nodes": nodes, "edges": edges}
    text = json.dumps(data, ensure_ascii=False, indent=indent)
    # JSON leaves DEL and the C1 controls (\x9b is a one-byte CSI) as they are; as \u
    # escapes they read back the same and cannot drive a terminal the JSON is printed to
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_C1 = re.compile("[\x7f-\x9f]")


def _jsonable(value: Any) -> Any:
    """``value`` as plain JSON data; anything else becomes its ``repr``."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return repr(value)


def _prompt_text(prompt: str | None, limit: int = 22, context: list[str] | None = None) -> str:
    """A prompt on one line, cut by the one rule (:func:`~agentic_machines._text.clip_prompt`)
    where it differs from the prompts of ``context`` (its parent's, its siblings').

    Trailing blank lines are dropped and runs of newlines shown as one ``⏎``.

    >>> _prompt_text("Question: where?\\n\\nThought 1:\\n\\n", 16, ["Question: when?"])
    '…ere?⏎Thought 1:'
    """
    if not prompt:
        return ""
    flat = [_flat(p) for p in context or ()]
    return clip_prompt(_flat(prompt), limit, flat)


def _flat(prompt: str) -> str:
    one_line = short_text(prompt.rstrip() or prompt, 10**9)
    while "⏎⏎" in one_line:
        one_line = one_line.replace("⏎⏎", "⏎")
    return one_line
