"""Rich display of machines in Jupyter: Markdown tables and SVG state diagrams.

``AgenticMachine._repr_markdown_`` and ``_repr_svg_`` call these functions, so a
machine left as the last expression of a notebook cell shows its prompt and
transition tables and its state diagram. They work without Jupyter too: both return
plain strings.

>>> from agentic_machines import TableMachine, HALT
>>> m = TableMachine({"a": "pick", "b": "pick"},
...                  {("a", "x"): "b", ("a", "y"): HALT, ("b", "x"): "a", ("b", "y"): "b"},
...                  name="flip")
>>> print(machine_markdown(m))
**TableMachine `flip`**: 2 states, 2 completions
<BLANKLINE>
| state | prompt | `'x'` | `'y'` |
|---|---|---|---|
| `'a'` | `'pick'` | `'b'` | `1` |
| `'b'` | `'pick'` | `'a'` | `'b'` |
>>> machine_svg(m).startswith("<?xml")
True
"""
from __future__ import annotations

import io
from collections import deque
from collections.abc import Hashable, Iterable

from .machine import AgenticMachine, is_sentinel

__all__ = ["machine_markdown", "machine_svg", "MAX_ROWS"]

MAX_ROWS = 40
"""Tables and diagrams stop after this many states, so a notebook never floods."""


def machine_markdown(machine: AgenticMachine, *, max_rows: int = MAX_ROWS) -> str:
    """A Markdown description of ``machine``: its size and, when finite, its tables.

    Finite machines get one row per state with the prompt and the outcome of every
    completion; infinite machines get a one-line summary with the initial prompt.

    >>> from agentic_machines import FunctionMachine
    >>> m = FunctionMachine(lambda s: f"step {s}", lambda s, c: s + 1, initial=0, name="counter")
    >>> print(machine_markdown(m))
    **FunctionMachine `counter`**: infinite states, every string is a completion
    <BLANKLINE>
    - initial state `0` with prompt `'step 0'`
    """
    kind = type(machine).__name__
    n_states = "infinite" if machine.states is None else str(len(machine.states))
    n_comp = (
        "every string is a completion"
        if machine.completions is None
        else f"{len(machine.completions)} completions"
    )
    head = f"**{kind} `{machine.name}`**: {n_states} states, {n_comp}"
    lines = [head, ""]
    if machine.states is not None and machine.completions is not None:
        comps = list(machine.completions)
        lines.append("| state | prompt | " + " | ".join(_code(c) for c in comps) + " |")
        lines.append("|---" * (len(comps) + 2) + "|")
        for i, s in enumerate(machine.states):
            if i == max_rows:
                lines.append(f"| … {len(machine.states) - max_rows} more states | | " + "| " * len(comps))
                break
            row = [_code(s), _code(machine.prompt(s))] + [_code(machine.harness(s, c)) for c in comps]
            lines.append("| " + " | ".join(row) + " |")
    elif machine.initial is not None:
        lines.append(f"- initial state {_code(machine.initial)} with prompt {_code(machine.prompt(machine.initial))}")
    else:
        lines.append("- no initial state given; explore it from a state of your choice")
    return "\n".join(lines)


def machine_svg(
    machine: AgenticMachine,
    *,
    depth: int = 3,
    completions: Iterable[str] | None = None,
    max_states: int = MAX_ROWS,
) -> str:
    """An SVG state diagram of ``machine``, explored breadth-first to ``depth`` steps.

    Starts from ``machine.initial`` (or every state of a finite machine when there is
    no initial state) and follows ``completions`` (default: the machine's alphabet;
    an infinite-alphabet machine needs them, else only the start states are drawn).
    Edges are labelled with the completions that take them; ``1`` and ``↑`` are drawn
    as square nodes.

    >>> from agentic_machines import FunctionMachine
    >>> m = FunctionMachine(lambda s: "*", lambda s, c: (s + 1) % 3, initial=0, name="cycle")
    >>> "<svg" in machine_svg(m, completions=["tick"])
    True
    """
    import matplotlib

    matplotlib.use("Agg")  # display never opens a window, also outside notebooks
    import matplotlib.pyplot as plt
    import networkx as nx

    comps = list(completions) if completions is not None else list(machine.completions or ())
    graph = _explore(machine, comps, depth, max_states)
    fig, ax = plt.subplots(figsize=(max(3.0, 1.2 * graph.number_of_nodes() ** 0.5 * 2), 3.5))
    pos = nx.spring_layout(graph, seed=0) if graph.number_of_nodes() > 1 else {n: (0, 0) for n in graph}
    states = [n for n in graph if not is_sentinel(n)]
    ends = [n for n in graph if is_sentinel(n)]
    nx.draw_networkx_nodes(graph, pos, nodelist=states, node_color="#cfe2f3", node_size=900, ax=ax)
    nx.draw_networkx_nodes(graph, pos, nodelist=ends, node_color="#f4cccc", node_shape="s", node_size=700, ax=ax)
    nx.draw_networkx_labels(graph, pos, labels={n: _short(n) for n in graph}, font_size=8, ax=ax)
    nx.draw_networkx_edges(graph, pos, ax=ax, arrows=True, connectionstyle="arc3,rad=0.15", node_size=900)
    labels = {(u, v): ",".join(d["completions"]) for u, v, d in graph.edges(data=True)}
    nx.draw_networkx_edge_labels(graph, pos, edge_labels=labels, font_size=7, ax=ax, connectionstyle="arc3,rad=0.15")
    ax.set_title(machine.name, fontsize=9)
    ax.axis("off")
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _explore(machine: AgenticMachine, comps: list[str], depth: int, max_states: int):
    import networkx as nx

    graph = nx.DiGraph()
    if machine.initial is not None:
        starts: list[Hashable] = [machine.initial]
    else:
        starts = list(machine.states or ())[:max_states]
    queue = deque((s, 0) for s in starts)
    for s in starts:
        graph.add_node(s)
    seen = set(starts)
    while queue:
        s, d = queue.popleft()
        if d >= depth:
            continue
        for c in comps:
            t = machine.harness(s, c)
            if t not in graph and graph.number_of_nodes() >= max_states:
                continue
            if graph.has_edge(s, t):
                graph[s][t]["completions"].append(_short(c, 12))
            else:
                graph.add_edge(s, t, completions=[_short(c, 12)])
            if not is_sentinel(t) and t not in seen:
                seen.add(t)
                queue.append((t, d + 1))
    return graph


def _short(value: object, limit: int = 18) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _code(value: object, limit: int = 40) -> str:
    text = repr(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return "`" + text.replace("`", "ˋ").replace("|", "\\|").replace("\n", "\\n") + "`"
