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
from collections.abc import Callable, Iterable

from ..machine import AgenticMachine

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
    n_states = "infinite states" if machine.states is None else _count(len(machine.states), "state")
    n_comp = (
        "every string is a completion"
        if machine.completions is None
        else _count(len(machine.completions), "completion")
    )
    head = f"**{kind} `{machine.name}`**: {n_states}, {n_comp}"
    lines = [head, ""]
    if machine.states is not None and machine.completions is not None:
        comps = list(machine.completions)
        lines.append("| state | prompt | " + " | ".join(_code(c) for c in comps) + " |")
        lines.append("|---" * (len(comps) + 2) + "|")
        for i, s in enumerate(machine.states):
            if i == max_rows:
                lines.append(
                    f"| … {len(machine.states) - max_rows} more states | | " + "| " * len(comps)
                )
                break
            row = [_code(s), _code(machine.prompt(s))] + [
                _code(machine.harness(s, c)) for c in comps
            ]
            lines.append("| " + " | ".join(row) + " |")
    elif machine.initial is not None:
        lines.append(
            f"- initial state {_code(machine.initial)} with prompt {_code(machine.prompt(machine.initial))}"
        )
    else:
        lines.append("- no initial state given; explore it from a state of your choice")
    return "\n".join(lines)


def machine_svg(
    machine: AgenticMachine,
    *,
    depth: int = 3,
    completions: Iterable[str] | Callable[[str], Iterable[str]] | None = None,
    max_states: int = MAX_ROWS,
) -> str:
    """An SVG state diagram of ``machine``, explored breadth-first to ``depth`` steps.

    Explores from ``machine.initial`` (or every state of a finite machine without an
    initial state) with :func:`agentic_machines.runtime.explore.explore`, following
    ``completions`` (default: the machine's alphabet; a machine whose alphabet is every
    string needs a list, or a function prompt -> completions), and draws the graph with
    :func:`agentic_machines.drawing.diagrams.draw`: the picture is the one the gallery and the
    command line draw.

    >>> from agentic_machines import FunctionMachine
    >>> m = FunctionMachine(lambda s: "*", lambda s, c: (s + 1) % 3, initial=0, name="cycle")
    >>> "<svg" in machine_svg(m, completions=["tick"])
    True
    """
    from ..runtime.explore import explore
    from .diagrams import draw

    if completions is None and machine.completions is None:
        completions = []  # nothing to follow: draw the start state alone
    graph = explore(
        machine, completions=completions, max_depth=depth, max_states=max_states, progress=False
    )
    fig = draw(graph, None, title=machine.name)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    fig.clear()
    return buf.getvalue()


def _code(value: object, limit: int = 40) -> str:
    text = repr(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return "`" + text.replace("`", "ˋ").replace("|", "\\|").replace("\n", "\\n") + "`"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
