"""``check`` on a machine with infinitely many (or unlisted) states.

A finite machine is decided exactly (F1, in :mod:`agentic_machines.cli.commands`); an
architecture prints its certified ``analysis()``. Any other machine, such as an agent
function's, gets what can honestly be said: the start state is tested against states
explored to a depth, which can *refute* (F2/F5, when the machine's completion alphabet
is finite so every successor can be listed) but never prove; otherwise the verdict is
undecided and says what to pass for more. Completions given (``-c``, ``--completions``) to
a machine without an alphabet become its alphabet (:func:`with_alphabet`), so an agent
function is decided as a factory that declares the same alphabet is.

>>> from agentic_machines import FunctionMachine
>>> from agentic_machines.architectures.catalog import Entry
>>> grow = FunctionMachine(lambda s: "say " + s, lambda s, c: s + c, completions=["a", "b"],
...                        initial="", name="grow")
>>> check_infinite(Entry("grow", "python", lambda: grow), grow, None, 2)  # doctest: +ELLIPSIS
explored 7 states to depth 2 on completions 'a', 'b' (sample states for the check)
start state '': Refuted: ...
0
"""

from __future__ import annotations

import sys
from typing import IO, Any

from .._text import clip, counted, escape_controls
from ..architectures.catalog import Entry
from ..errors import InvalidArgument, Undecided
from ..generation import is_spe_state
from ..machine import AgenticMachine, Outcome, is_sentinel
from ._args import graph_budget_note

__all__ = ["check_infinite", "with_alphabet", "MORE"]

MORE = (
    "For more: a witness decides it (Python: is_spe_state(machine, state, embedding=..., "
    "loader=..., states=[...]) checks an embedding and a loader on sample states), an "
    "invariant with its proof refutes it (prompt_obstruction(..., invariant=..., proof=...)); "
    "on the command line, --depth N samples more states and -c TEXT / --completions FILE "
    "gives the machine a finite alphabet to explore and decide on."
)
"""What the report tells a user to pass for a stronger verdict."""


def check_infinite(
    entry: Entry,
    machine: AgenticMachine,
    completions: list[str] | None,
    depth: int,
    stream: IO[str] | None = None,
) -> int:
    """Print the sampled (or undecided) SPE verdict of the start state; return 0.

    ``machine`` is the one to decide: give it the ``completions`` as its alphabet first
    (:func:`with_alphabet`) when it has none, as ``check`` does."""
    out = stream or sys.stdout
    start = entry.start(machine)
    if start is None:
        raise InvalidArgument(
            f"{entry.name!r} has no initial state and infinitely many states, so there is no "
            "state to check; give the machine an initial state"
        )
    alphabet = completions if completions is not None else machine.completions
    sample: list[Any] = []
    if alphabet is None:
        print(
            f"no completions to explore: {entry.name!r} has no finite completion alphabet; "
            "pass -c TEXT (repeated) or --completions FILE to sample states",
            file=out,
        )
    else:
        graph = entry.explore(machine, depth=depth, max_states=500, completions=alphabet)
        sample = [n for n in graph if not is_sentinel(n)]
        stats = graph.graph["stats"]
        shown = ", ".join(repr(c) for c in alphabet[:6]) + (" ..." if len(alphabet) > 6 else "")
        print(
            f"explored {counted(stats['states'], 'state')} to depth {stats['depth']} on completions {shown} "
            "(sample states for the check)",
            file=out,
        )
        note = graph_budget_note(machine, graph)
        if note is not None:
            print(note, file=sys.stderr)
        clocked = {
            (n, c): a["undecided_reason"]
            for n, a in graph.nodes(data=True)
            for c in a.get("undecided", ())
        }
        if clocked:  # asked again, each would cost its whole step_timeout once more
            machine = _WithAlphabet(machine, list(alphabet), clocked)
    verdict = is_spe_state(machine, start, states=sample or None)
    # the verdict names the machine, whose name is the user's text: escaped as the state is
    print(escape_controls(f"start state {clip(repr(start), 60)}: {verdict}"), file=out)
    if verdict.holds is None:
        print(MORE, file=out)
    return 0


class _WithAlphabet(AgenticMachine):
    """``machine`` with a finite completion alphabet: the same states, prompts and steps."""

    def __init__(
        self,
        machine: AgenticMachine,
        completions: list[str],
        clocked: dict[tuple[Any, str], str] | None = None,
    ) -> None:
        self.machine = machine
        self.completions = tuple(dict.fromkeys(completions))
        self.initial, self.name = machine.initial, machine.name
        self.clocked = clocked or {}  # (state, completion) -> why the clock ended that step

    def prompt(self, state: Any) -> str:
        return self.machine.prompt(state)

    def harness(self, state: Any, completion: str) -> Outcome:
        why = self.clocked.get((state, completion)) if self.clocked else None
        if why is not None:  # undecided as the exploration found it, without waiting again
            raise Undecided(why)
        return self.machine.harness(state, completion)


def with_alphabet(machine: AgenticMachine, completions: list[str] | None) -> AgenticMachine:
    """``machine`` with ``completions`` as its finite alphabet when it has none (an agent
    function's machine: every string is a completion), so that completions given on the
    command line are decided on exactly as a factory that declares them is; ``machine``
    itself when it has an alphabet (the completions then only choose what to explore) or
    when none are given.

    >>> from agentic_machines import FunctionMachine
    >>> words = FunctionMachine(lambda s: "say", lambda s, c: s + c, initial="", name="words")
    >>> m = with_alphabet(words, ["a", "b", "a"])
    >>> m.completions, m.name, m.harness("x", "a"), with_alphabet(words, None) is words
    (('a', 'b'), 'words', 'xa', True)
    """
    if completions is None or machine.completions is not None:
        return machine
    return _WithAlphabet(machine, completions)
