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
    """Pause the cyclic garbage collector's *full* collections inside the block (their
    threshold out of reach), as every search does; its young collections go on freeing
    what a harness drops. A disabled collector stays so. What the first pause found is put
    back when the last one running ends (pauses may overlap in threads); a child forked
    inside gets it. docs/scaling.md (the collector) says why and what it costs.

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
    """The pauses running in this process, counted (the setting is the process's, and
    pauses in threads overlap in any order), and what the first one found. The lock is
    reentrant: a finalizer run by a collection inside it may start a search."""

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
