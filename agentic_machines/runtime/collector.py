"""The garbage collector's full collections paused while a search holds its record.

A search's heap is mostly its record, which cannot be garbage before the search ends;
:func:`collector_paused` keeps the collector's full collections from rescanning it again
and again, so a search costs the same per state however large it grows. Every search of
the toolkit (:mod:`~agentic_machines.runtime.search`'s rule) runs inside it.

>>> with collector_paused():
...     pass
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector's *full* collections inside the block, as every
    search does; its young collections go on.

    A young collection (generations 0 and 1) looks only at the objects made since the
    last one: its cost follows what was allocated lately, a constant per state. A full
    collection (generation 2) walks every object alive, and a search's heap is mostly its
    record (a dict entry, a row, a prompt per state), which cannot be garbage before the
    search ends: full collections would rescan it again and again and make a search cost
    more per state the larger it is. So the block sets the third threshold out of reach.

    Young collections keep freeing the cyclic garbage a harness or an agent function
    drops (an object that refers to itself, an exception kept with its traceback), so a
    search's memory follows its record. Garbage cycles that survive two young collections
    (held by a suspended agent run, say) wait for the first full collection after the
    block. A disabled collector stays so. What the first pause found is put back when the
    last one running ends (pauses may overlap in threads); a child forked inside gets it.

    >>> import gc
    >>> before = gc.get_threshold()
    >>> with collector_paused():
    ...     inside = gc.get_threshold()
    >>> inside[:2] == before[:2], inside[2] > 10**9, gc.get_threshold() == before
    (True, True, True)
    """
    with _PAUSES.lock:
        if not _PAUSES.running:  # the first pause to start finds the caller's setting
            _PAUSES.found = (gc.isenabled(), gc.get_threshold())
        _PAUSES.running += 1
        _PAUSES.apply()
    pid = os.getpid()
    try:
        yield
    finally:
        if os.getpid() == pid:  # a child forked inside had its pauses ended at the fork
            with _PAUSES.lock:
                _PAUSES.running -= 1
                if _PAUSES.running:  # another pause still runs: paused as it began
                    _PAUSES.apply()
                else:  # the last one out: as the first found, whatever ran inside
                    _restore(_PAUSES.found)


_Setting = tuple[bool, tuple[int, int, int]]  # gc.isenabled(), gc.get_threshold()
_NEVER = 2**31 - 1  # the largest threshold gc takes: full collections never come due


class _Pauses:
    """The pauses running in this process, counted, and what the first one found.

    One count, not a stack per block: the collector's setting is the process's, and
    pauses in several threads overlap in any order (the first may end while the second
    runs). A process forked inside a pause (a process pool's worker on Linux) never
    leaves it, so it is given what the first found, with no pause running. The lock is
    reentrant: a finalizer run by a collection inside it may start a search.
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.running = 0
        self.found: _Setting = (True, (700, 10, 10))

    def apply(self) -> None:
        """The paused setting: as found, but full collections out of reach."""
        enabled, (young, middle, _full) = self.found
        _restore((enabled, (young, middle, _NEVER)))

    def after_fork_in_child(self) -> None:
        self.lock = threading.RLock()  # another thread of the parent may have held it
        if self.running:
            _restore(self.found)
            self.running = 0


_PAUSES = _Pauses()


def _restore(found: _Setting) -> None:
    enabled, thresholds = found
    gc.set_threshold(*thresholds)
    (gc.enable if enabled else gc.disable)()


if hasattr(os, "register_at_fork"):  # POSIX only; elsewhere no process is forked
    os.register_at_fork(after_in_child=_PAUSES.after_fork_in_child)
