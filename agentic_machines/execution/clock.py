"""Clock-dependent events: outcomes the wall clock or the host's load decided, not h.

An agentic machine's h must be a function, so nothing the clock decides may become a
state or a verdict as if it were a fact. Deterministic limits (the line budgets of
:mod:`~agentic_machines.execution.budget`, the address-space limit) decide the same way
on any machine; a wall-clock deadline, a CPU-seconds limit or a worker killed by the
host under memory pressure do not. The executor that meets such an outcome *notes* it
here with the reason; whoever computes a transition *watches* while it does, and raises
:class:`~agentic_machines.errors.ClockDependent` with the outcome when anything was noted
(``HarnessMachine`` does so for every harness program).

Notes go to every watch open in the current thread (watches nest: a child REPL's block
inside a parent's step taints both); with no watch open a note is dropped.

>>> with watching() as seen:
...     note("the block ran past its 1 s wall-clock deadline")
>>> seen
['the block ran past its 1 s wall-clock deadline']
>>> with watching() as quiet:
...     pass
>>> quiet
[]
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["note", "watching"]

_local = threading.local()


def _watches() -> list[list[str]]:
    watches = getattr(_local, "watches", None)
    if watches is None:
        watches = _local.watches = []
    return watches


def note(reason: str) -> None:
    """Record that an outcome just computed in this thread depends on the clock or load.

    >>> note("nobody watches: dropped")
    """
    for seen in _watches():
        if reason not in seen:
            seen.append(reason)


@contextmanager
def watching() -> Iterator[list[str]]:
    """Collect the reasons noted in this thread while the block runs (in order, no repeats).

    >>> with watching() as outer:
    ...     with watching() as inner:
    ...         note("a deadline")
    >>> outer, inner
    (['a deadline'], ['a deadline'])
    """
    seen: list[str] = []
    watches = _watches()
    watches.append(seen)
    try:
        yield seen
    finally:
        # by identity: two watches that saw the same reasons are equal lists
        for i in range(len(watches) - 1, -1, -1):
            if watches[i] is seen:
                del watches[i]
                break
