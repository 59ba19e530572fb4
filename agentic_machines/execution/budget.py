"""Deterministic line budgets for harness code and model-written code.

A divergence verdict must not depend on how fast the machine is, so budgets count
executed Python lines (``sys.settrace`` line events; instructions inside a loop that
fits on one line, where CPython reports no line events), never seconds. Budgets nest,
and counting is per thread: a budget is charged with the lines of the thread that
entered it and no other. Lines run inside a cyclic garbage collection are charged to no
budget, and a finalizer run there is bounded by the smallest active limit. Code that
catches ``BaseException`` is stopped again by :func:`checkpoint` (which
:mod:`agentic_machines.execution.codeexec` puts in every handler of model code) and
:func:`restore_tracing`. docs/determinism.md says why each rule is needed.

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
import threading
import weakref
from collections.abc import Callable
from types import CellType, CodeType, FrameType, TracebackType
from typing import Any, TypeVar

from ..errors import BudgetExceeded, InvalidArgument

__all__ = [
    "LineBudget",
    "BudgetExceeded",
    "checkpoint",
    "restore_tracing",
    "uncharged",
    "positive_budget",
]

_INF = float("inf")
_one_line_loops: dict[CodeType, bool] = {}
_uncharged: set[CodeType] = set()  # bookkeeping functions of other modules (see uncharged)
_ONE_LINE_LOOPS_MAX = 20_000  # model-written blocks are new code objects: keep the cache bounded
# From 3.12 on (PEP 669) a jump back to the start of a line fires a line event, so one-line
# loops are counted by line. Opcode tracing must then stay off: 3.13 turns it on for a code
# object only from that code's next frame, so a count would depend on what ran before, and
# 3.12.1 crashes (SIGSEGV) when a generator frame given opcode tracing under one budget is
# resumed in another thread after it (tests/test_budget.py, docs/determinism.md).
_OPCODES_FOR_ONE_LINE_LOOPS = sys.version_info < (3, 12)


class _Thread:
    """One thread's budget state: ``sys.settrace`` is per thread, so each thread counts
    its own lines, and its budgets are charged with no other thread's.

    One counter of traced lines serves every budget of the thread: a budget remembers the
    count when it was entered, so the tracer does one increment and one comparison per
    line however many budgets are nested (charging each budget in a loop cost more than
    the line). The count and the deadline live in the cells of this thread's tracer
    closure (the cheapest variables a Python function can read and write); the rest of
    the module reads and writes them through ``lines`` and ``deadline``.
    """

    __slots__ = (
        "lines",  # the cell of the count of traced lines
        "deadline",  # the cell of the count past which the first active budget is spent
        "global_trace",  # the tracer handed to sys.settrace in this thread
        "local_trace",  # the per-frame tracer it hands out (the hot path)
        "active",  # this thread's active budgets, outermost first
        "previous_trace",  # the trace function found on entering the first budget
        "step_deadline",  # the deadline outside a collection (see _set_deadline)
        "gc_bound",  # the lines a collection may run: the smallest active limit
        "stack",  # the active budgets as a tuple, renewed at every budget entered or left
        "gc_saved",  # the count when the running collection started
        "gc_stack",  # stack then: the collection's lines are given back if it is so at the end
        "gc_deadline",  # the collection's own bound: the count at its start + gc_bound
    )

    def __init__(self) -> None:
        self.active: list[LineBudget] = []
        self.previous_trace: Any = None
        self.step_deadline: float = _INF
        self.gc_bound: float = _INF
        self.stack: tuple[LineBudget, ...] = ()
        self.gc_saved: int | None = None
        self.gc_stack: tuple[LineBudget, ...] = ()
        self.gc_deadline: float = _INF
        self.global_trace, self.local_trace, self.lines, self.deadline = _tracers(self)


class _PerThread(threading.local):
    # Class attributes are the defaults every thread sees before it sets its own, so a
    # thread that never enters a budget (a collection's callbacks run in any thread) makes
    # nothing. CPython drops a thread's values when the thread ends: its token at once (see
    # _Watch), its state when the collector next runs (a tracer that returns itself is a
    # reference cycle, and the state and its tracers refer to each other).
    state: _Thread | None = None
    watch: tuple[_Watch, weakref.ref[_Watch]] | None = None  # the thread's token (see _Watch)


_here = _PerThread()


def _mine() -> _Thread:
    """The calling thread's budget state, made on its first use."""
    state = _here.state
    if state is None:
        state = _here.state = _Thread()
    return state


def _tracers(state: _Thread) -> tuple[Any, Any, CellType, CellType]:
    """One thread's two tracers and the cells of its count and deadline."""
    lines = 0
    deadline = _INF

    def local_trace(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal lines
        if event == "line" or event == "opcode":
            lines += 1
            if lines > deadline:  # never true while no budget is active (the deadline is infinite)
                _spent(state)
        return local_trace

    def global_trace(frame: FrameType, event: str, arg: Any) -> Any:
        code = frame.f_code
        if code.co_filename == __file__ or code in _uncharged:
            return None  # our own bookkeeping is not charged to anyone
        if _OPCODES_FOR_ONE_LINE_LOOPS:
            one_line_loop = _one_line_loops.get(code)
            if one_line_loop is None:
                one_line_loop = _has_one_line_loop(code)
            if one_line_loop:
                # CPython 3.11 fires no line event when a loop jumps back to its own line
                # (`while True: pass`), so such frames are charged per instruction instead.
                frame.f_trace_opcodes = True
        return local_trace

    cells = dict(zip(local_trace.__code__.co_freevars, local_trace.__closure__ or ()))
    return global_trace, local_trace, cells["lines"], cells["deadline"]


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

    ``used`` counts the lines charged so far (it keeps counting on a re-entry). A budget
    counts the lines of the thread that entered it, and only those: enter and leave it in
    the same thread (the greenlets of one thread share that thread's count).

    >>> with LineBudget(100) as b:
    ...     x = sum(range(3))
    >>> 0 < b.used < 100, b.exhausted
    (True, False)
    """

    def __init__(self, limit: int) -> None:
        self.limit = positive_budget(limit)
        self._used = 0
        self._base = 0  # while active: the line count when entered minus the lines used before
        self._thread: _Thread | None = None  # while active: the state of the thread counted

    @property
    def used(self) -> int:
        """Lines charged to this budget (a live count while it is active)."""
        thread = self._thread
        return self._used if thread is None else thread.lines.cell_contents - self._base

    @property
    def exhausted(self) -> bool:
        """True once more lines were attempted than the budget allows."""
        return self.used >= self.limit

    def __enter__(self) -> LineBudget:
        state = _here.state
        if state is None:
            state = _mine()
        first = not state.active
        self._base = state.lines.cell_contents - self._used
        self._thread = state
        state.active.append(self)
        _set_deadline(state)
        # settrace does not apply to the frame that is already running; trace the
        # caller's frame too so that a loop written right inside the `with` is counted.
        sys._getframe(1).f_trace = state.local_trace
        if first:
            state.gc_saved = (
                None  # a collection left unfinished by a callback list changed mid-walk
            )
            _watch_finalizers()
            # Tracing goes on last: every Python call made while it is on costs a call
            # to the tracer, and the bookkeeping above is charged to no one anyway.
            state.previous_trace = sys.gettrace()
            sys.settrace(state.global_trace)
        return self

    def __exit__(
        self, exc_type: type | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        state = self._thread or _mine()  # never entered: the remove below says so
        active = state.active
        if len(active) == 1 and active[0] is self:
            # The last budget: tracing goes off first (see __enter__); no line is
            # counted after this, so the count below is the same.
            sys.settrace(state.previous_trace)
            state.previous_trace = None
            sys._getframe(1).f_trace = None
            _unwatch_finalizers()
            state.gc_saved = None
        if self._thread is not None:
            self._used = state.lines.cell_contents - self._base
        self._thread = None
        active.remove(self)
        _set_deadline(state)


# -- process-wide hooks, installed while any thread has an active budget ------------------------
# sys.unraisablehook and gc.callbacks go in when the first thread enters a budget and out when
# the last leaves its last one. A thread is counted by a weak reference to its token (held in
# its thread-local values), so one that ends inside a budget is counted out with them. The
# lock orders installing and removing; no callback runs under it.
_watch_lock = threading.Lock()
_watchers: set[weakref.ref[_Watch]] = set()


class _Watch:
    """A thread's token (see above)."""

    __slots__ = ("__weakref__",)


def _watch_finalizers() -> None:
    held = _here.watch
    if held is None:
        token = _Watch()
        held = _here.watch = (token, weakref.ref(token, _watch_gone))
    with _watch_lock:
        _watchers.add(held[1])
        if len(_watchers) == 1:
            _hook()


def _unwatch_finalizers() -> None:
    held = _here.watch
    if held is not None:
        _watch_gone(held[1])


def _watch_gone(ref: weakref.ref[_Watch]) -> None:
    with _watch_lock:
        if ref in _watchers:  # a thread with an active budget until now
            _watchers.discard(ref)
            if not _watchers:
                _unhook()


# -- a budget spent inside a finalizer ---------------------------------------------------------
# CPython swallows an exception raised inside a finalizer (``__del__``, a weakref callback,
# reported to ``sys.unraisablehook``) and switches off a trace function that raised. A budget
# spent inside a ``__del__`` would then stop counting, and a loop after it would run forever.
# While any budget is active this hook switches counting back on in the thread that swallowed
# the raise (the one the hook runs in), so its next counted line raises again where it can
# propagate.
_previous_unraisable: Any = None


def _unraisable(unraisable: Any) -> None:
    if isinstance(unraisable.exc_value, BudgetExceeded):
        restore_tracing()  # the budget is still spent: the next counted line raises again
        return
    _previous_unraisable(unraisable)


def _hook() -> None:
    global _previous_unraisable
    _previous_unraisable = sys.unraisablehook
    sys.unraisablehook = _unraisable
    callbacks = gc.callbacks
    callbacks.insert(0, _gc_first)
    callbacks.append(_gc_last)


def _unhook() -> None:
    if sys.unraisablehook is _unraisable:  # unless someone installed their own meanwhile
        sys.unraisablehook = _previous_unraisable
    callbacks = gc.callbacks
    for callback in (_gc_first, _gc_last):
        while callback in callbacks:  # none left if someone else's code took it out
            callbacks.remove(callback)


# -- lines run inside a cyclic collection (docs/determinism.md) --------------------------------
# Two gc.callbacks entries, the first and the last of the list, so that every other entry
# runs inside the interval charged to no one; each acts on the thread the collection runs
# in. Both store with no call or loop before their stores, so no signal or asynchronous
# raise (which land only at calls and backward jumps) stops them half-way; a start with no
# end is overwritten by the next start, an end with no start does nothing.


def _gc_first(phase: str, info: dict) -> None:
    state = _here.state
    if phase == "start" and state is not None and state.active:
        state.gc_stack = state.stack
        saved = state.gc_saved = state.lines.cell_contents
        state.deadline.cell_contents = state.gc_deadline = saved + state.gc_bound
        callbacks = gc.callbacks
        if not callbacks or callbacks[-1] is not _gc_last:
            # An entry appended since (the agent's own): _gc_last goes last again, now,
            # before this collection's stop phase. Added first, the older one removed
            # after: a raise between the two leaves a second _gc_last, which does nothing.
            callbacks.append(_gc_last)
            callbacks.remove(_gc_last)


def _gc_last(phase: str, info: dict) -> None:
    state = _here.state
    if phase == "stop" and state is not None and state.gc_saved is not None:
        # The collection's lines are no one's, unless a budget that was active when it
        # started has ended inside it, or one entered inside it is still active (a
        # finalizer that switched to a suspended run): their counts began or ended inside
        # it. A budget entered and left inside it (a finalizer's own) has its count.
        if state.gc_stack == state.stack:
            state.lines.cell_contents = state.gc_saved
        state.gc_saved = None
        state.deadline.cell_contents = state.step_deadline


def _set_deadline(state: _Thread) -> None:
    # A plain loop, not min() over a generator: when a budget is nested inside another,
    # this runs while tracing is on, and every Python frame it opens costs a tracer call.
    deadline = bound = _INF
    for b in state.active:
        if b._thread is not None and b._base + b.limit < deadline:
            deadline = b._base + b.limit
        if b.limit < bound:
            bound = b.limit
    state.step_deadline = deadline
    state.gc_bound = bound
    state.stack = stack = tuple(state.active)
    if state.gc_saved is not None:
        # Inside a collection (a finalizer entered or left a budget of its own): the
        # collection's bound stays, and so does a budget entered inside it; the budgets
        # it started in are not charged for its lines, so their deadlines wait until it ends.
        deadline = state.gc_deadline
        for b in stack:
            if b not in state.gc_stack and b._base + b.limit < deadline:
                deadline = b._base + b.limit
    state.deadline.cell_contents = deadline


def checkpoint() -> None:
    """Raise ``BudgetExceeded`` if any active budget of the calling thread is spent; do
    nothing otherwise (another thread's budgets are that thread's business).

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
    state = _here.state
    if state is not None:
        for budget in state.active:
            if budget.exhausted:
                raise BudgetExceeded(budget.limit)


def restore_tracing() -> None:
    """Switch the calling thread's line counting back on if it has active budgets but
    CPython turned its tracing off.

    CPython unsets a trace function that raises, which the tracer does when a budget
    runs out; an enclosing budget (a harness step around a block of model code) must
    keep counting after an inner one was spent.

    >>> restore_tracing()  # no budget is active: nothing to do
    """
    state = _here.state
    if state is not None and state.active and sys.gettrace() is None:
        sys.settrace(state.global_trace)


_Fn = TypeVar("_Fn", bound=Callable[..., Any])


def uncharged(fn: _Fn) -> _Fn:
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


def _spent(state: _Thread) -> None:
    """Raise for the outermost spent budget of ``state`` (the one whose limit the error names)."""
    for budget in state.active:
        if budget.used > budget.limit:
            raise BudgetExceeded(budget.limit)
    if state.gc_saved is not None:  # past a collection's own bound (a budget entered inside it)
        raise BudgetExceeded(state.gc_bound)
