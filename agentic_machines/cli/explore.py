"""``agentic-machines explore TARGET``: the state graph of a machine, as text or JSON.

Explores breadth-first from the start state (the whole machine when it is finite, to
``--depth`` otherwise) on the machine's completion alphabet or on the completions
given with ``-c TEXT`` / ``--completions FILE``, and prints one line per state: its
depth, its prompt and where each completion takes it. ``--json`` prints the graph in
the JSON form of ``diagram --format json``.

>>> from agentic_machines.cli.commands import main
>>> main(["explore", "f2-mul"])
f2-mul: 2 states, 4 transitions, depth 0 (complete)
  0  depth 0  prompt '⋆'
       '0' -> 0
       '1' -> 0
  1  depth 0  prompt '⋆'
       '0' -> 0
       '1' -> 1
0
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .._outcome import is_end
from .._text import clip_prompt_repr, counted, escape_controls, graph_context, short_text
from ..machine import show_outcome
from ._args import (
    add_bound_arguments,
    add_isolation_arguments,
    add_target_arguments,
    agent_options,
    completions_for,
    graph_budget_note,
    machine_with_isolation,
)

__all__ = ["add_parser", "explore_command", "describe_graph"]


def add_parser(sub: Any) -> None:
    """Register ``explore`` on the subcommand parsers ``sub``."""
    from .executors import add_executor_arguments  # loaded when the verb runs

    p = sub.add_parser(
        "explore",
        help="explore a machine's states breadth-first and list them",
        description="Explore a machine breadth-first from its start state and print every "
        "state reached with its prompt and the outcome of each completion.",
    )
    add_target_arguments(p)
    add_bound_arguments(p)
    p.add_argument("--json", action="store_true", help="print the graph as JSON instead")
    add_executor_arguments(p)
    add_isolation_arguments(p, "the completions' code")
    p.set_defaults(func=explore_command)


def explore_command(args: argparse.Namespace) -> int:
    """Handle ``explore``."""
    from .executors import executor_from  # loaded when the verb runs
    from .targets import resolve_target  # loaded when the verb runs

    entry = resolve_target(args.name, agent_options(args))
    machine = machine_with_isolation(entry, args.isolation)
    with executor_from(args) as executor:
        graph = entry.explore(
            machine,
            depth=args.depth,
            max_states=args.max_states,
            completions=completions_for(args, machine, entry.name),
            executor=executor,
        )
    note = graph_budget_note(machine, graph)
    if note is not None:  # on stderr: --json's stdout stays one JSON document
        print(note, file=sys.stderr)
    if args.json:
        from ..drawing.diagrams import to_json  # loaded when the verb runs

        print(to_json(graph, indent=2))
        return 0
    print(describe_graph(graph))
    return 0


def describe_graph(graph: Any, limit: int = 72) -> str:
    """The text listing ``explore`` prints: a summary line, then each state and its edges.

    >>> from agentic_machines.runtime.explore import explore
    >>> from agentic_machines.fixtures import fixture
    >>> print(describe_graph(explore(fixture("halt1"))))
    halt1: 1 state, 2 transitions, depth 1 (complete)
      0  depth 0  prompt '⋆'
           '0' -> HALT (1)
           '1' -> HALT (1)
    """

    stats = graph.graph["stats"]
    states = stats["states"]
    ending = f"truncated: {stats['truncated_reason']}" if stats["truncated"] else "complete"
    lines = [
        f"{graph.graph.get('machine', 'machine')}: {counted(states, 'state')}, "
        f"{counted(stats['transitions'], 'transition')}, depth {stats['depth']} ({ending})"
    ]
    for node, attrs in graph.nodes(data=True):
        if is_end(node):  # HALT, DIVERGE, a step that raised: shown on their edges
            continue
        prompt = attrs["prompt"]  # cut where it differs from its parent's and siblings'
        shown = (
            clip_prompt_repr(prompt, limit, graph_context(graph, node))
            if isinstance(prompt, str)
            else short_text(repr(prompt), limit)
        )
        # a state's repr holds its prompt or history too: cut where it differs
        near = [repr(n) for n in graph_context(graph, node, nodes=True)]
        lines.append(
            f"  {short_text(repr(node), limit, near)}  depth {attrs['depth']}  prompt {shown}"
        )
        if not attrs.get("expanded"):
            lines.append("       (not expanded)")
            continue
        targets = [show_outcome(t) for t in graph.succ[node]]
        for target, edge in graph.succ[node].items():
            to = short_text(show_outcome(target), limit, [repr(node), *targets])
            for c in edge["completions"]:
                lines.append(f"       {short_text(repr(c), limit)} -> {to}")
        for c in attrs.get("undecided", []):
            lines.append(f"       {short_text(repr(c), limit)} -> undecided")
    return escape_controls("\n".join(lines))  # the machine's name is its file's text
