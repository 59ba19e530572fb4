"""Deterministic line budgets for harness code and model-written code.

A divergence verdict must not depend on how fast the machine is, so budgets count
executed Python lines (``sys.settrace`` line events; instructions inside a loop that
fits on one line, where CPython reports no line events), never seconds. Budgets nest: a
block of model code run by a harness counts against both the block's budget and the
harness step's budget.

Exhaustion is recorded, but CPython switches a trace function off for good once it
raises, so the tracer alone cannot stop code that catches ``BaseException`` and loops
on. Two public hooks close that gap: :func:`checkpoint` raises again for any spent
budget, and :func:`restore_tracing` switches counting back on after a raise.
:mod:`agentic_machines.execution.codeexec` puts a checkpoint at the top of every ``except``,
``finally`` and ``__exit__`` in model-written code, so such code cannot keep running.

Lines run inside a cyclic garbage collection are charged to no budget. The collector
runs when the process's allocation counts say so (how much garbage earlier code left,
what other threads allocated), and then runs the finalizers of what it frees
(``__del__``, weakref callbacks, suspended greenlets unwound, other ``gc.callbacks``
entries) in whichever line the collection lands on. Charged to the budget around that
line, their lines would make a step's outcome depend on the process, not on the
computation. So while a budget is active, a ``gc.callbacks`` entry that runs first notes
the line count when a collection starts, and one that runs last puts the count back when
it stops. A finalizer that never ends cannot hang a run either: during a collection the
deadline is the count at its start plus the smallest active limit, past which the
finalizer gets ``BudgetExceeded``; CPython reports that as unraisable and goes on with
the collection, and the count it ran up is given back at the end. Only collections in
the thread that entered the newest budget are exempted (the one whose lines are
counted); lines a finalizer runs outside a collection, when reference counting frees an
object, are charged as any other line.

>>> def spin():
...     while True:
...         pass
>>> try:
...     with LineBudget(1000):
...         spin()
... except BudgetExceeded as exc:
...     print("cut after", exc.args[0], "lines")
cut after 1000 lines
"""

from __future__ import annotations

import dis
import gc
import sys
from _thread import get_ident as _get_ident
from types import CodeType, FrameType, TracebackType
from typing import Any

from ..errors import BudgetExceeded, InvalidArgument

__all__ = [
    "LineBudget",
    "BudgetExceeded",
    "checkpoint",
    "restore_tracing",
    "uncharged",
    "count_running",
    "positive_budget",
]

_active: list[LineBudget] = []
_previous_trace: Any = None
_one_line_loops: dict[CodeType, bool] = {}
_uncharged: set[CodeType] = set()  # bookkeeping functions of other modules (see uncharged)
_ONE_LINE_LOOPS_MAX = 20_000  # model-written blocks are new code objects: keep the cache bounded

# One counter of traced lines serves every budget: a budget remembers the count when
# it was entered, so the tracer does one increment and one comparison per line however
# many budgets are nested (charging each budget in a loop cost more than the line).
_lines = 0
_deadline: float = float("inf")  # the count past which the first active budget is spent
_step_deadline: float = float("inf")  # the same outside a collection (see _set_deadline)
_gc_bound: float = float("inf")  # the lines a collection may run: the smallest active limit
_epoch = 0  # moves at every budget entered or left (a collection notes it: see _gc_first)


def positive_budget(limit: int, what: str = "a line budget") -> int:
    """``limit`` when it is a positive whole number of lines, else :class:`InvalidArgument`
    saying what to pass: the one check of every line budget (a budget, a block, a replay).

    >>> positive_budget(100)
    100
    >>> positive_budget(0, "line_budget")
    Traceback (most recent call last):
      ...
    agentic_machines.errors.InvalidArgument: line_budget must be a positive number of lines, got 0; pass e.g. 10_000
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise InvalidArgument(
            f"{what} must be a positive number of lines, got {limit!r}; pass e.g. 10_000"
        )
    return limit


class LineBudget:
    """A context manager that allows at most ``limit`` executed lines inside it.

    ``used`` counts the lines charged so far (it keeps counting on a re-entry).

    >>> with LineBudget(100) as b:
    ...     x = sum(range(3))
    >>> 0 < b.used < 100, b.exhausted
    (True, False)
    """

    def __init__(self, limit: int) -> None:
        self.limit = positive_budget(limit)
        self._used = 0
        self._base: int | None = None  # the line count when entered minus the lines used before

    @property
    def used(self) -> int:
        """Lines charged to this budget (a live count while it is active)."""
        return self._used if self._base is None else _lines - self._base

    @property
    def exhausted(self) -> bool:
        """True once more lines were attempted than the budget allows."""
        return self.used >= self.limit

    def __enter__(self) -> LineBudget:
        global _previous_trace, _owner
        first = not _active
        self._base = _lines - self._used
        _active.append(self)
        _owner = _get_ident()  # the thread whose collections are charged to no one
        _set_deadline()
        # settrace does not apply to the frame that is already running; trace the
        # caller's frame too so that a loop written right inside the `with` is counted.
        sys._getframe(1).f_trace = _local_trace
        if first:
            _watch_finalizers()
            # Tracing goes on last: every Python call made while it is on costs a call
            # to the tracer, and the bookkeeping above is charged to no one anyway.
            _previous_trace = sys.gettrace()
            sys.settrace(_global_trace)
        return self

    def __exit__(
        self, exc_type: type | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        global _previous_trace
        if len(_active) == 1 and _active[0] is self:
            # The last budget: tracing goes off first (see __enter__); no line is
            # counted after this, so the count below is the same.
            sys.settrace(_previous_trace)
            _previous_trace = None
            sys._getframe(1).f_trace = None
            _unwatch_finalizers()
        self._used = _lines - self._base if self._base is not None else self._used
        self._base = None
        _active.remove(self)
        _set_deadline()


# -- a budget spent inside a finalizer ---------------------------------------------------------
# CPython swallows an exception raised inside a finalizer (``__del__``, a weakref callback,
# reported to ``sys.unraisablehook``) and switches off a trace function that raised. A budget
# spent inside a ``__del__`` would then stop counting, and a loop after it would run forever.
# While any budget is active this hook switches counting back on, so the next counted line
# raises again where it can propagate.
_previous_unraisable: Any = None


def _unraisable(unraisable: Any) -> None:
    if isinstance(unraisable.exc_value, BudgetExceeded):
        restore_tracing()  # the budget is still spent: the next counted line raises again
        return
    _previous_unraisable(unraisable)


def _watch_finalizers() -> None:
    global _previous_unraisable, _gc_saved
    _previous_unraisable = sys.unraisablehook
    sys.unraisablehook = _unraisable
    _gc_saved = None  # a collection left unfinished by a callback list changed mid-walk
    callbacks = gc.callbacks
    callbacks.insert(0, _gc_first)
    callbacks.append(_gc_last)


def _unwatch_finalizers() -> None:
    global _gc_saved
    if sys.unraisablehook is _unraisable:  # unless someone installed their own meanwhile
        sys.unraisablehook = _previous_unraisable
    callbacks = gc.callbacks
    for callback in (_gc_first, _gc_last):
        while callback in callbacks:  # none left if someone else's code took it out
            callbacks.remove(callback)
    _gc_saved = None


# -- lines run inside a cyclic collection (see the module's docstring) ------------------------
# Two gc.callbacks entries, the first of the list and the last, so that the lines of every
# other entry (a linear run's timing of collections among them) run inside the interval
# charged to no one. Each acts in the thread that entered the newest budget only: another
# thread's collection runs that thread's finalizers, which no budget counts (tracing is per
# thread), and it must not move this thread's count.
#
# Both make their stores with no call and no loop between their first test and them: a signal
# handler or a raise sent from another thread lands only where the eval loop checks for one
# (a function's entry, a call, a backward jump), so nothing can stop them half-way through;
# an exception at their entry (reported as unraisable) leaves the state as it was. An entry
# someone appends while a budget is active is put before _gc_last at the next collection's
# start (the walk is at index 0 then, so moving a later entry skips none). A start
# with no end (someone changed gc.callbacks during the collector's walk of it, which can skip
# an entry) is overwritten by the next start; an end with no start does nothing.
_owner: int | None = None  # the thread that entered the newest budget
_gc_saved: int | None = None  # the count when the running collection started
_gc_epoch = 0  # _epoch then: a budget entered or left during the collection keeps its lines


def _gc_first(phase: str, info: dict) -> None:
    global _gc_saved, _gc_epoch, _deadline
    if phase == "start" and _active and _get_ident() == _owner:
        _gc_epoch = _epoch
        _gc_saved = _lines
        _deadline = _lines + _gc_bound  # the collection's own bound (see the docstring)
        callbacks = gc.callbacks
        if not callbacks or callbacks[-1] is not _gc_last:
            # An entry appended since (the agent's own): _gc_last goes last again, now,
            # before this collection's stop phase. Added first, the older one removed
            # after: a raise between the two leaves a second _gc_last, which does nothing.
            callbacks.append(_gc_last)
            callbacks.remove(_gc_last)


def _gc_last(phase: str, info: dict) -> None:
    global _lines, _gc_saved, _deadline
    if phase == "stop" and _gc_saved is not None and _get_ident() == _owner:
        if _gc_epoch == _epoch:
            _lines = _gc_saved  # the collection's lines are charged to no one
        _gc_saved = None
        _deadline = _step_deadline


def _set_deadline() -> None:
    global _deadline, _step_deadline, _gc_bound, _epoch
    # A plain loop, not min() over a generator: when a budget is nested inside another,
    # this runs while tracing is on, and every Python frame it opens costs a tracer call.
    deadline = bound = float("inf")
    for b in _active:
        if b._base is not None and b._base + b.limit < deadline:
            deadline = b._base + b.limit
        if b.limit < bound:
            bound = b.limit
    _deadline = _step_deadline = deadline
    _gc_bound = bound
    _epoch += 1


def checkpoint() -> None:
    """Raise ``BudgetExceeded`` if any active budget is spent; do nothing otherwise.

    >>> checkpoint()  # no budget is active
    >>> try:
    ...     with LineBudget(5) as b:
    ...         try:
    ...             while True:
    ...                 pass
    ...         except BaseException:
    ...             checkpoint()  # the handler cannot swallow the spent budget
    ... except BudgetExceeded:
    ...     print("still stopped")
    still stopped
    """
    for budget in _active:
        if budget.exhausted:
            raise BudgetExceeded(budget.limit)


def restore_tracing() -> None:
    """Switch line counting back on if budgets are active but CPython turned tracing off.

    CPython unsets a trace function that raises, which the tracer does when a budget
    runs out; an enclosing budget (a harness step around a block of model code) must
    keep counting after an inner one was spent.

    >>> restore_tracing()  # no budget is active: nothing to do
    """
    if _active and sys.gettrace() is None:
        sys.settrace(_global_trace)


def uncharged(fn: Any) -> Any:
    """Mark the function ``fn`` as bookkeeping: its lines are charged to no budget.

    For a caller's own plumbing that runs inside a budget (``agent_machine``'s model
    function, which the budgeted agent calls once per step); it also saves a tracer call
    per line. Returns ``fn`` (use it as a decorator).

    >>> def work():
    ...     return sum(range(3))
    >>> @uncharged
    ... def plumbing():
    ...     return sum(range(3))
    >>> with LineBudget(100) as charged:
    ...     _ = work()
    >>> with LineBudget(100) as spared:
    ...     _ = plumbing()
    >>> charged.used - spared.used  # the one line of its body
    1
    """
    _uncharged.add(fn.__code__)
    return fn


def count_running(frame: FrameType | None, stop: CodeType) -> None:
    """Count, from now on, the lines of ``frame`` and its callers down to a frame of ``stop``.

    The tracer decides whether to count a frame's lines when the frame is called, so a
    frame that was already running when the first budget was entered is not counted
    (only the caller of ``__enter__`` is). Call this, before entering the budget, to
    give ``frame`` and the frames below it (up to, not including, the first frame
    running ``stop``) the decision they would have had if a budget had been active when
    they were called: a computation run part of the way uncounted is then counted from
    here exactly as if it had been counted all along.

    >>> import sys
    >>> def outer():
    ...     inner()
    ...     total = 0
    ...     for i in range(3):
    ...         total += i
    ...     return b.used
    >>> def inner():
    ...     global b
    ...     count_running(sys._getframe(1), stop=sys._getframe(2).f_code)
    ...     b = LineBudget(100).__enter__()
    >>> outer() >= 6  # the loop in outer, which was running before the budget, counted
    True
    >>> b.__exit__(None, None, None)
    """
    while frame is not None and frame.f_code is not stop:
        frame.f_trace = _global_trace(frame, "call", None)
        frame = frame.f_back


def _global_trace(frame: FrameType, event: str, arg: Any) -> Any:
    code = frame.f_code
    if code.co_filename == __file__ or code in _uncharged:
        return None  # our own bookkeeping is not charged to anyone
    one_line_loop = _one_line_loops.get(code)
    if one_line_loop is None:
        one_line_loop = _has_one_line_loop(code)
    if one_line_loop:
        # CPython fires no line event when a loop jumps back to its own line
        # (`while True: pass`), so such frames are charged per instruction instead.
        frame.f_trace_opcodes = True
    return _local_trace


def _has_one_line_loop(code: CodeType) -> bool:
    known = _one_line_loops.get(code)
    if known is None:
        known = False
        line = None
        offsets: dict[int, int | None] = {}
        for ins in dis.get_instructions(code):
            if ins.positions is not None and ins.positions.lineno is not None:
                line = ins.positions.lineno
            offsets[ins.offset] = line
            if ins.opname.startswith("JUMP_BACKWARD") and offsets.get(ins.argval) == line:
                known = True
                break
        if len(_one_line_loops) >= _ONE_LINE_LOOPS_MAX:
            _one_line_loops.clear()  # a cache: dropping it costs only re-reading bytecode
        _one_line_loops[code] = known
    return known


def _local_trace(frame: FrameType, event: str, arg: Any) -> Any:
    global _lines
    if event == "line" or event == "opcode":
        _lines += 1
        if _lines > _deadline:  # never true while no budget is active (the deadline is infinite)
            _spent()
    return _local_trace


def _spent() -> None:
    """Raise for the outermost spent budget (the one whose limit the error names)."""
    for budget in _active:
        if budget.used > budget.limit:
            raise BudgetExceeded(budget.limit)
    if _gc_saved is not None:  # past a collection's own bound (a budget entered inside it)
        raise BudgetExceeded(_gc_bound)
