"""Rich display of machines in Jupyter: SVG state diagrams and Markdown tables.

A machine left as the last expression of a notebook cell shows its state diagram
(``AgenticMachine._repr_mimebundle_`` calls :func:`machine_bundle`); ``m.tables()``
shows its prompt and transition tables and ``m.diagram(depth)`` a diagram explored
deeper. One rich MIME type per output, on purpose: JupyterLab ranks ``text/markdown``
above ``image/svg+xml``, so an output offering both would show only the tables.
:data:`JUPYTERLAB_ORDER` records that ranking and :func:`shown_by_jupyterlab` applies
it (the tests use it). Everything works without Jupyter too: the functions return
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
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .. import runtime
from .._text import clip_prompt_repr, counted
from ..machine import AgenticMachine

__all__ = [
    "machine_markdown",
    "machine_svg",
    "machine_bundle",
    "Markdown",
    "SVG",
    "JUPYTERLAB_ORDER",
    "shown_by_jupyterlab",
    "MAX_ROWS",
]

MAX_ROWS = 40
"""Tables and diagrams stop after this many states, so a notebook never floods."""

JUPYTERLAB_ORDER = (
    "application/javascript",
    "text/html",
    "text/markdown",
    "text/latex",
    "image/svg+xml",
    "image/png",
    "image/jpeg",
    "image/gif",
    "text/plain",
)
"""The MIME types JupyterLab renders, most preferred first (its renderers' ranks): of a
bundle it shows the first type it has, and only that one."""


def shown_by_jupyterlab(bundle: Mapping[str, object]) -> str | None:
    """The one MIME type of ``bundle`` that JupyterLab displays.

    >>> shown_by_jupyterlab({"text/plain": "x", "image/svg+xml": "<svg/>", "text/markdown": "*x*"})
    'text/markdown'
    >>> shown_by_jupyterlab({"text/plain": "x", "image/svg+xml": "<svg/>"})
    'image/svg+xml'
    """
    return next((mime for mime in JUPYTERLAB_ORDER if mime in bundle), None)


class Markdown(str):
    """Markdown text that Jupyter renders (``print`` shows the text itself).

    >>> Markdown("**hi**")._repr_markdown_()
    '**hi**'
    """

    def _repr_markdown_(self) -> str:
        return str(self)


class SVG:
    """An SVG picture that Jupyter renders; ``data`` is the SVG text.

    >>> SVG("<svg/>")._repr_svg_()
    '<svg/>'
    """

    def __init__(self, data: str) -> None:
        self.data = data

    def _repr_svg_(self) -> str:
        return self.data

    def __repr__(self) -> str:
        return f"<SVG diagram, {len(self.data)} characters>"


def machine_bundle(machine: AgenticMachine) -> dict[str, str]:
    """What Jupyter displays for ``machine``: its SVG state diagram and plain text, or,
    with nothing to draw from, its Markdown summary and plain text.

    >>> from agentic_machines import FunctionMachine
    >>> m = FunctionMachine(lambda s: "*", lambda s, c: (s + 1) % 3, initial=0, completions=["t"])
    >>> shown_by_jupyterlab(machine_bundle(m))
    'image/svg+xml'
    """
    bundle = {"text/plain": repr(machine)}
    if machine.initial is None and not machine.states:
        bundle["text/markdown"] = machine_markdown(machine)
    else:
        bundle["image/svg+xml"] = machine_svg(machine)
    return bundle


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
    n_states = (
        "infinite states" if machine.states is None else counted(len(machine.states), "state")
    )
    n_comp = (
        "every string is a completion"
        if machine.completions is None
        else counted(len(machine.completions), "completion")
    )
    head = f"**{kind} `{machine.name}`**: {n_states}, {n_comp}"
    lines = [head, ""]
    if machine.states is not None and machine.completions is not None:
        comps = list(machine.completions)
        lines.append("| state | prompt | " + " | ".join(_code(c) for c in comps) + " |")
        lines.append("|---" * (len(comps) + 2) + "|")
        # prompts cut by the one rule: where each differs from the others in the table
        prompts = [machine.prompt(s) for s in list(machine.states)[:max_rows]]
        for i, s in enumerate(machine.states):
            if i == max_rows:
                lines.append(
                    f"| … {len(machine.states) - max_rows} more states | | " + "| " * len(comps)
                )
                break
            row = [_code(s), _quoted(clip_prompt_repr(prompts[i], 40, prompts))] + [
                _code(machine.harness(s, c)) for c in comps
            ]
            lines.append("| " + " | ".join(row) + " |")
    elif machine.initial is not None:
        lines.append(
            f"- initial state {_code(machine.initial)} with prompt "
            f"{_quoted(clip_prompt_repr(machine.prompt(machine.initial), 40))}"
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
    from ..runtime.explore import explore  # lazy: networkx; the package imports display
    from .diagrams import draw  # lazy: networkx; the package imports display

    if completions is None and machine.completions is None:
        completions = []  # nothing to follow: draw the start state alone
    graph = explore(
        machine, completions=completions, max_depth=depth, max_states=max_states, progress=False
    )
    from matplotlib import rc_context  # lazy: matplotlib is slow to import

    fig = draw(graph, None, title=machine.name)
    buf = io.StringIO()
    # Fixed ids and no date: the same machine gives the same SVG (committed notebooks).
    with rc_context({"svg.hashsalt": "agentic-machines"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    fig.clear()
    return buf.getvalue()


def _code(value: object, limit: int = 40) -> str:
    text = repr(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return _quoted(text)


def _quoted(text: str) -> str:
    return "`" + text.replace("`", "ˋ").replace("|", "\\|").replace("\n", "\\n") + "`"


# -- the methods AgenticMachine shows itself with ------------------------------------------
# They live here, beside what they draw, and are attached to the class when this module is
# imported (agentic_machines/__init__ imports it): the core module machine.py declares them
# for type checkers only and never imports the drawing layer.


def _repr_mimebundle_(
    self: AgenticMachine, include: object = None, exclude: object = None
) -> dict[str, str]:
    """Jupyter display: the state diagram (SVG) and plain text, one rich type only.

    A bundle offering Markdown and SVG together shows only the Markdown in
    JupyterLab (it ranks Markdown above images), so the diagram would never be seen.
    A machine therefore offers its diagram; :meth:`tables` displays the Markdown
    tables where they are wanted. A machine with nothing to draw from (no initial
    state, no finite state list) offers its Markdown summary instead.

    >>> from agentic_machines import FunctionMachine
    >>> m = FunctionMachine(lambda s: "*", lambda s, c: s + 1)
    >>> sorted(m._repr_mimebundle_())
    ['text/markdown', 'text/plain']
    """
    return machine_bundle(self)


def tables(self: AgenticMachine) -> Markdown:
    """The machine's prompt and transition tables, displayed as Markdown in Jupyter
    (``print`` shows the Markdown text).

    >>> from agentic_machines import HALT, TableMachine
    >>> print(TableMachine({"a": "go"}, {("a", "x"): HALT}).tables())
    **TableMachine `table`**: 1 state, 1 completion
    <BLANKLINE>
    | state | prompt | `'x'` |
    |---|---|---|
    | `'a'` | `'go'` | `1` |
    """
    return Markdown(machine_markdown(self))


def diagram(
    self: AgenticMachine,
    depth: int = 3,
    completions: Iterable[str] | Callable[[str], Iterable[str]] | None = None,
) -> SVG:
    """The machine's state diagram explored ``depth`` steps, displayed as SVG in
    Jupyter (``.data`` is the SVG text); ``completions`` as for ``explore``.

    >>> from agentic_machines import HALT, TableMachine
    >>> d = TableMachine({"a": "go"}, {("a", "x"): HALT}).diagram()
    >>> d.data.count("<svg")
    1
    """
    return SVG(machine_svg(self, depth=depth, completions=completions))


def view(
    self: AgenticMachine,
    depth: int = 3,
    completions: Sequence[str] | Callable[[str], Iterable[str]] | None = None,
    max_states: int = 10_000,
) -> object:
    """The interactive view of the machine's graph explored ``depth`` steps, displayed
    in the notebook cell (an ``iframe``; ``.html`` is the page, see docs/viewing.md).

    >>> from agentic_machines import HALT, TableMachine
    >>> TableMachine({"a": "go"}, {("a", "x"): HALT}).view().html[:15]
    '<!DOCTYPE html>'
    """
    from ..runtime.explore import explore  # lazy: networkx; the package imports display
    from .interactive import view as page  # lazy: networkx; the package imports display

    if completions is None and self.completions is None:
        completions = []  # nothing to follow: the start state alone
    graph = explore(
        self, completions=completions, max_depth=depth, max_states=max_states, progress=False
    )
    return page(graph, title=self.name)


def graph_view(graph: Any, **options: Any) -> object:
    """The interactive view of an explored graph (``graph.view()``), displayed in the
    notebook cell (an ``iframe``; ``.html`` is the page); ``options`` as for
    :func:`~agentic_machines.drawing.interactive.view_data`.

    >>> from agentic_machines import HALT, TableMachine
    >>> from agentic_machines.runtime.explore import explore
    >>> g = explore(TableMachine({"a": "go"}, {("a", "x"): HALT}))
    >>> v = g.view(title="one step")
    >>> v.html[:15], "one step" in v.html, v._repr_html_()[:7]
    ('<!DOCTYPE html>', True, '<iframe')
    """
    from .interactive import view as page  # lazy: networkx; the package imports display

    return page(graph, **options)


for _method in (_repr_mimebundle_, tables, diagram, view):
    _method.__qualname__ = f"AgenticMachine.{_method.__name__}"
    setattr(AgenticMachine, _method.__name__, _method)
runtime.graph_viewer = graph_view  # StateGraph.view: the runtime never imports drawing
