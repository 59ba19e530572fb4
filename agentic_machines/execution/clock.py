"""Clock-dependent events: outcomes the wall clock or the host's load decided, not h.

An agentic machine's h must be a function, so nothing the clock decides (a wall-clock
deadline, a CPU-seconds limit, a worker killed under memory pressure) may become a state
or a verdict as if it were a fact. The runner that meets such an outcome *notes* it
here; whoever computes a transition *watches* while it does, and raises
:class:`~agentic_machines.errors.ClockDependent` when anything was noted. Watches nest,
and a note reaches every watch open in its thread or in its :mod:`contextvars` context
(a greenlet has a context of its own; ``asyncio.to_thread`` shares the context, not the
thread). docs/determinism.md has the whole argument.

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

import contextvars
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import ClockDependent

__all__ = ["note", "watching", "Marks", "reason_of"]

_local = threading.local()
# A tuple, replaced rather than changed: a context copied into another thread shares
# the caller's open watches (the lists) but cannot close them for the caller.
_WATCHES: contextvars.ContextVar[tuple[list[str], ...]] = contextvars.ContextVar(
    "agentic_machines_clock_watches", default=()
)


def _thread_watches() -> list[list[str]]:
    watches = getattr(_local, "watches", None)
    if watches is None:
        watches = _local.watches = []
    return watches


def note(reason: str) -> None:
    """Record that an outcome just computed in this context depends on the clock or load.

    >>> note("nobody watches: dropped")
    """
    shared = _WATCHES.get()
    for seen in (*shared, *(w for w in _thread_watches() if not any(w is s for s in shared))):
        if reason not in seen:
            seen.append(reason)


@contextmanager
def watching() -> Iterator[list[str]]:
    """Collect the reasons noted in this context while the block runs (in order, no repeats).

    >>> with watching() as outer:
    ...     with watching() as inner:
    ...         note("a deadline")
    >>> outer, inner
    (['a deadline'], ['a deadline'])
    """
    seen: list[str] = []
    token = _WATCHES.set((*_WATCHES.get(), seen))
    watches = _thread_watches()
    watches.append(seen)
    try:
        yield seen
    finally:
        _WATCHES.reset(token)
        # by identity: two watches that saw the same reasons are equal lists
        for i in range(len(watches) - 1, -1, -1):
            if watches[i] is seen:
                del watches[i]
                break


def reason_of(seen: list[str] | tuple[str, ...]) -> str:
    """The message of a clock-dependent step, naming what decided it.

    >>> reason_of(["a 1 s deadline"])
    "the outcome depends on the clock or the machine's load, not on the completion alone: a 1 s deadline"
    """
    return (
        "the outcome depends on the clock or the machine's load, not on the completion "
        f"alone: {'; '.join(seen)}"
    )


class Marks:
    """Which cached states of a machine came out of a clock-dependent step, and why.

    A machine that keeps a state's prompt or its suspended run in a cache must not serve
    them as facts when the step that made them was decided by the clock: whatever is
    read from that cache (the prompt, the next step of the suspended run) is as
    clock-dependent as that step. A state rebuilt from the start under a watch is marked
    by what the rebuild met, only. Bounded like the caches it follows (oldest dropped).

    >>> marks = Marks(2)
    >>> marks.set("s", ["a deadline"]); marks.of("s")
    ('a deadline',)
    >>> marks.set("s", []); marks.of("s")
    ()
    """

    __slots__ = ("_marks", "_size")

    def __init__(self, size: int) -> None:
        self._marks: OrderedDict[Hashable, tuple[str, ...]] = OrderedDict()
        self._size = size

    def of(self, state: Hashable) -> tuple[str, ...]:
        """The reasons ``state``'s cached prompt and run depend on the clock (``()``: none)."""
        return self._marks.get(state, ())

    def set(self, state: Hashable, seen: list[str] | tuple[str, ...]) -> None:
        """Mark ``state`` with ``seen`` (an empty ``seen`` clears its mark)."""
        if not seen:
            self._marks.pop(state, None)
            return
        self._marks[state] = tuple(seen)
        self._marks.move_to_end(state)
        while len(self._marks) > self._size:
            self._marks.popitem(last=False)

    def step(
        self,
        state: Hashable,
        live: bool,
        compute: Callable[[], Any],
        is_state: Callable[[Any], bool],
    ) -> Any:
        """Compute h(state, c) with ``compute`` under a watch; raise ClockDependent if needed.

        ``live`` says whether ``compute`` resumes ``state``'s cached run (which carries
        ``state``'s mark) rather than rebuilding it from the start. The outcome (when
        ``is_state`` of it) is marked with what decided this step.

        >>> marks = Marks(4)
        >>> marks.step("s", False, lambda: "t", lambda x: True)
        't'
        >>> marks.set("s", ["a deadline"])
        >>> try:
        ...     marks.step("s", True, lambda: "t", lambda x: True)
        ... except ClockDependent as exc:
        ...     exc.outcome, marks.of("t")
        ('t', ('a deadline',))
        """
        with watching() as seen:
            seen.extend(self.of(state) if live else ())
            outcome = compute()
        if not seen:
            self.set(state, ())  # rebuilt or resumed without the clock speaking
        if is_state(outcome):
            self.set(outcome, seen)
        if seen:
            raise ClockDependent(reason_of(seen), outcome)
        return outcome

    def prompt(self, state: Hashable, cached: str | None, rebuild: Callable[[], str]) -> str:
        """p(state): ``cached`` (if not ``None``) or ``rebuild()`` under a watch.

        Raises ClockDependent with the prompt when the clock decided it, now or in the
        step that left it in the cache.

        >>> marks = Marks(4)
        >>> marks.prompt("s", None, lambda: "p")
        'p'
        >>> marks.set("s", ["a deadline"])
        >>> try:
        ...     marks.prompt("s", "p", lambda: "p")
        ... except ClockDependent as exc:
        ...     exc.outcome
        'p'
        """
        if cached is not None:
            inherited = self.of(state)
            if inherited:
                raise ClockDependent(reason_of(inherited), cached)
            return cached
        with watching() as seen:
            prompt = rebuild()
        self.set(state, seen)
        if seen:
            raise ClockDependent(reason_of(seen), prompt)
        return prompt
