"""Which prompts a check never reached.

"Never reached" needs a list of the prompts the machine *could* show; the checker has
one in two cases, and says which it used:

- a machine with a finite state list (``machine.states``): the prompts ``p(s)`` of
  its states that no explored state shows (a prompt shared by a reached state counts as
  reached);
- a generator harness (a machine with a ``program``, as ``HarnessMachine`` and the
  architectures are): the string constants of the program and its arguments
  (:func:`~agentic_machines.checking.sampling.harness_strings`) that read like
  prompt text (at least 8 characters with a space or a line break) and occur in no
  explored prompt. Such a string is usually the message of a branch no explored run
  took, say an error message for a malformed action: a coverage gap to close with a
  completion that reaches it.

Any other machine has no such list, and the coverage says so instead of guessing.

>>> from agentic_machines import TableMachine, HALT
>>> m = TableMachine({0: "start", 1: "middle", 2: "never"},
...                  {(0, "a"): 1, (1, "a"): HALT, (2, "a"): 0}, initial=0)
>>> unreached_prompts(m, ["start", "middle"])
(('never',), 'prompts of the finite state list')
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["unreached_prompts", "MIN_FRAGMENT"]

MIN_FRAGMENT = 8
"""Shortest harness string counted as prompt text."""


def unreached_prompts(machine: Any, reached: Iterable[str]) -> tuple[tuple[str, ...], str]:
    """``(prompts never reached, what they were drawn from)``; ``((), "")`` when the
    machine gives no list of its prompts.

    >>> from agentic_machines import HarnessMachine
    >>> def prog():
    ...     c = yield "Say a number."
    ...     while not c.isdigit():
    ...         c = yield "That is not a number, try again."
    >>> unreached_prompts(HarnessMachine(prog), ["Say a number."])
    (('That is not a number, try again.',), 'harness strings that read like prompt text')
    """
    reached = list(dict.fromkeys(reached))
    states = getattr(machine, "states", None)
    if states is not None:
        seen = set(reached)
        out: dict[str, None] = {}
        for s in states:
            try:
                p = machine.prompt(s)
            except Exception:  # noqa: BLE001 - a state whose prompt fails is not a prompt
                continue
            if p not in seen:
                out[p] = None
        return tuple(out), "prompts of the finite state list"
    if getattr(machine, "program", None) is not None:
        from .sampling import harness_strings  # lazy: imports hypothesis

        fragments = [
            t
            for t in harness_strings(machine, limit=1000)
            if len(t.strip()) >= MIN_FRAGMENT and (" " in t.strip() or "\n" in t.strip())
        ]
        missing = [t for t in fragments if not any(t in p for p in reached)]
        return tuple(missing), "harness strings that read like prompt text"
    return (), ""
