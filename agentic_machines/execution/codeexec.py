"""Running model-written Python inside a harness: one implementation.

A harness (REPL-Plan, RLM) is a generator; model code is synchronous Python run with
``exec`` in a persistent :class:`Namespace`. :func:`run_block` bridges the two with
REPL-Plan's *rerun with cached calls*: every call that reaches the model or the
environment goes through the block's call log, an effect runs once and is recorded, a
request interrupts the block (the harness yields a prompt) and the block reruns from a
restored namespace, the call then a cache hit, so no side effect happens twice. Model
code gets :func:`safe_builtins` and a line budget; control signals cannot be caught by
it. This is not a sandbox. docs/reference/codeexec.md says how it works and where it
stops; docs/design.md (model-written code inside a harness) why.
"""

from __future__ import annotations

import ast
import builtins as _b
import contextlib
import copy
import inspect
import re
import signal
import sys
import threading
import traceback
import types
import warnings
from _signal import signal as _set_signal  # see _real_interrupts
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from types import CodeType, FrameType
from typing import Any, NoReturn, TypedDict

from .._memo import kept_for_texts
from ..errors import BudgetExceeded, InvalidArgument, ReplayDivergence
from .budget import LineBudget, checkpoint, positive_budget, restore_tracing, uncharged

__all__ = [
    "run_block",
    "drive",
    "drive_rest",
    "iter_result",
    "BlockResult",
    "Request",
    "CallRecord",
    "Namespace",
    "ControlSignal",
    "Interrupt",
    "Finish",
    "effect_function",
    "request_function",
    "call",
    "finish",
    "safe_builtins",
    "SAFE_MODULES",
    "BLOCKED_ATTRIBUTES",
    "contained",
    "cut_output",
    "TRUNCATED",
]

Handler = Callable[["Request"], Generator[str, str, Any]]

SAFE_MODULES = frozenset(
    {
        "math",
        "re",
        "json",
        "string",
        "itertools",
        "functools",
        "collections",
        "operator",
        "statistics",
        "textwrap",
        "heapq",
        "bisect",
        "fractions",
        "decimal",
        "copy",
        "dataclasses",
        "typing",
        "enum",
        "difflib",
        "unicodedata",
    }
)
"""Modules model code may import: pure, deterministic, no access to files or processes."""

_CHECKPOINT = "__am_checkpoint__"

BLOCKED_ATTRIBUTES = frozenset(
    """__class__ __base__ __bases__ __mro__ __subclasses__ __globals__ __builtins__ __dict__
    __code__ __closure__ __func__ __self__ __module__ __getattribute__ __reduce__ __reduce_ex__
    __import__ __loader__ __spec__ __traceback__ __context__ __cause__ __init_subclass__
    __objclass__ __wrapped__ __kwdefaults__ __defaults__ mro gi_frame gi_code cr_frame cr_code ag_frame
    ag_code f_back f_globals f_locals f_builtins f_code tb_frame tb_next co_consts""".split()
)
"""Attributes model code may not name (refused at compile time and by its ``getattr``): the
paths from an ordinary object to the harness's modules, frames and real builtins."""


# --------------------------------------------------------------------------------------
# values
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Request:
    """A call the block cannot perform itself: the harness must fulfil it.

    >>> Request("llm_query", ("hi",), {})
    Request(kind='llm_query', args=('hi',), kwargs={})
    """

    kind: str
    args: tuple = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CallRecord:
    """One entry of a block's call log: what was called and what came back.

    ``error`` is set when the call raised (an effect that failed, or a request whose
    handler raised an ``Exception``): replaying the record raises it again.

    >>> CallRecord("act", ("1",), {}, "You said 1.").result
    'You said 1.'
    """

    kind: str
    args: tuple
    kwargs: Mapping[str, Any]
    result: Any = None
    error: BaseException | None = None


@dataclass(frozen=True)
class BlockResult:
    """What running one block produced.

    ``status`` is ``"ok"`` (ran to the end), ``"error"`` (an exception, shown in
    ``stderr``), ``"finished"`` (:func:`finish` was called; its argument is ``value``),
    ``"budget"`` (the line budget ran out; partial ``stdout`` kept) or ``"diverged"``
    (a rerun made a different call than the recorded one; see ``stderr``).
    ``attempts`` counts executions (1 + the number of fulfilled requests); ``calls``
    is the final call log; ``hits`` the ``(kind, index)`` cache hits of the last
    attempt.

    >>> BlockResult("x = 1", "", "", "ok").status
    'ok'
    """

    code: str
    stdout: str
    stderr: str
    status: str
    value: Any = None
    error: str = ""
    attempts: int = 1
    calls: tuple[CallRecord, ...] = ()
    hits: tuple[tuple[str, int], ...] = ()


class _Tally(TypedDict):
    """The fields every :class:`BlockResult` of a run attempt shares, by name and type."""

    attempts: int
    calls: tuple[CallRecord, ...]
    hits: tuple[tuple[str, int], ...]


class ControlSignal(BaseException):
    """Base of the signals that end an attempt; model code cannot catch them.

    >>> issubclass(ControlSignal, Exception), issubclass(ControlSignal, BaseException)
    (False, True)
    """


class Interrupt(ControlSignal):
    """The block needs the harness: carries the :class:`Request` to fulfil.

    >>> Interrupt(Request("ask", ("q",))).request.kind
    'ask'
    """

    def __init__(self, request: Request) -> None:
        super().__init__(request)
        self.request = request


class Finish(ControlSignal):
    """The block ended on purpose with ``value`` (REPL-Plan's ``answer(v)``).

    >>> Finish(7).value
    7
    """

    def __init__(self, value: Any) -> None:
        super().__init__(value)
        self.value = value


TRUNCATED = "\n[output truncated]\n"
"""What ends a block's stdout that was cut at ``max_output`` characters."""


def cut_output(text: str, max_output: int) -> str:
    """``text`` as a block's output of at most ``max_output`` characters (plus the marker).

    A block's stdout is cut as it is written; the host of an isolated worker cuts what the
    worker reports again with this, since a worker may lie about the size.

    >>> cut_output("x" * 30, 3), cut_output("abc", 3)
    ('xxx\\n[output truncated]\\n', 'abc')
    """
    if len(text) <= max_output + len(TRUNCATED):
        return text
    return text[:max_output] + TRUNCATED


# --------------------------------------------------------------------------------------
# the running attempt (one ``exec`` of a block)
# --------------------------------------------------------------------------------------
class _Attempt:
    __slots__ = ("log", "cursor", "pending", "budget", "stdout", "max_output", "hits")

    def __init__(self, log: list[CallRecord], max_output: int) -> None:
        self.log = log
        self.cursor = 0
        self.pending: BaseException | None = None
        self.budget: LineBudget | None = None
        self.stdout: list[str] = []
        self.max_output = max_output
        self.hits: list[tuple[str, int]] = []

    def write(self, text: str) -> None:
        used = sum(map(len, self.stdout))
        if used < self.max_output:
            room = self.max_output - used
            self.stdout.append(text if len(text) <= room else text[:room] + TRUNCATED)

    def signal(self, exc: BaseException) -> NoReturn:
        # Remember the first signal: later checkpoints and primitive calls re-raise it.
        if self.pending is None:
            self.pending = exc
        raise self.pending


_ACTIVE: list[_Attempt] = []


# The call log's own bookkeeping (finding the attempt, matching a call against its
# record, copying a result) is charged to no line budget: a block's budget counts the
# block's lines, and a replayed cached call is one line of it, not the ~80 lines of
# plumbing behind it (issue 25). Model-defined methods these reach (__eq__, __repr__,
# __deepcopy__) open frames of their own, which are still traced and charged.
@uncharged
def _attempt() -> _Attempt:
    if not _ACTIVE:
        raise InvalidArgument(
            "a code-execution primitive was called outside a running block; call it from "
            "code run by agentic_machines.execution.codeexec.run_block"
        )
    return _ACTIVE[-1]


# --------------------------------------------------------------------------------------
# primitives
# --------------------------------------------------------------------------------------
@uncharged
def call(
    kind: str,
    args: tuple = (),
    kwargs: Mapping[str, Any] | None = None,
    perform: Callable[[], Any] | None = None,
) -> Any:
    """Route one call of the running block through its call log.

    A call at a logged position returns the logged result (or re-raises the logged
    error) once its kind and arguments match; otherwise ``ReplayDivergence``. A new
    call runs ``perform()`` once and logs it, or, when ``perform`` is None, interrupts
    the block with a :class:`Request` for the harness. Used by :func:`effect_function`
    and :func:`request_function`; call it directly for a primitive with custom logic.

    >>> gen = run_block("print(call('double', (2,), perform=lambda: 4))", Namespace({"call": call}))
    >>> drive_rest(gen, None).stdout
    '4\\n'
    """
    att = _attempt()
    if att.pending is not None:
        raise att.pending  # a swallowed signal: do nothing more in this attempt
    kwargs = dict(kwargs or {})
    index = att.cursor
    att.cursor += 1
    if index < len(att.log):
        rec = att.log[index]
        if rec.kind != kind or not _same(rec.args, args) or not _same(rec.kwargs, kwargs):
            att.signal(
                ReplayDivergence(
                    f"call #{index} of this block was {_show_call(rec.kind, rec.args, rec.kwargs)} when it first "
                    f"ran, but the rerun made {_show_call(kind, args, kwargs)}; make the code before it "
                    "deterministic (no randomness, time, or hidden state) so reruns repeat the same calls"
                )
            )
        att.hits.append((kind, index))
        if rec.error is not None:
            raise rec.error
        return _private(rec.result)  # a copy: the block may mutate it before the next rerun
    if perform is None:
        att.signal(Interrupt(Request(kind, tuple(args), kwargs)))
    try:
        result = perform()
    except Exception as exc:  # the effect happened (or failed) once: replay the failure too
        att.log.append(CallRecord(kind, _private(tuple(args)), _private(kwargs), None, exc))
        raise
    # The log keeps private copies: later in-place mutations by the block must not change
    # what a rerun compares against or replays.
    att.log.append(CallRecord(kind, _private(tuple(args)), _private(kwargs), _private(result)))
    return result


def effect_function(kind: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """A namespace function that performs ``fn(*args, **kwargs)`` once per logged call.

    Reruns of the block get the recorded result instead of calling ``fn`` again.

    >>> log = []
    >>> act = effect_function("act", lambda a: log.append(a) or f"did {a}")
    >>> drive_rest(run_block("print(act('x'))", Namespace({"act": act})), None).stdout, log
    ('did x\\n', ['x'])
    """

    @uncharged
    def primitive(*args: Any, **kwargs: Any) -> Any:
        return call(kind, args, kwargs, perform=lambda: fn(*args, **kwargs))

    primitive.__name__ = primitive.__qualname__ = kind
    return primitive


def request_function(kind: str) -> Callable[..., Any]:
    """A namespace function whose calls are fulfilled by the harness's ``handle``.

    >>> ask = request_function("ask")
    >>> gen = run_block("x = ask(1) + ask(2)", Namespace({"ask": ask}),
    ...                 handle=lambda r: iter_result(r.args[0] * 10))
    >>> drive_rest(gen, None).attempts
    3
    """

    @uncharged
    def primitive(*args: Any, **kwargs: Any) -> Any:
        return call(kind, args, kwargs)

    primitive.__name__ = primitive.__qualname__ = kind
    return primitive


def finish(value: Any = None) -> NoReturn:
    """End the running block at once with ``value`` (status ``"finished"``).

    >>> r = drive_rest(run_block("finish(7)\\nprint('never')", Namespace({"finish": finish})), None)
    >>> r.status, r.value, r.stdout
    ('finished', 7, '')
    """
    _attempt().signal(Finish(value))


# --------------------------------------------------------------------------------------
# namespaces and builtins
# --------------------------------------------------------------------------------------
class Namespace(dict):
    """The one dict used as globals and locals of every block of a REPL.

    It resolves builtins from :func:`safe_builtins` and treats unknown names by how
    they are used: an undefined name used as the callee of a call (``helper(x)``) is
    resolved by ``on_undefined_call(name)`` when given (REPL-Plan spawns a child REPL
    there); any other use raises ``name_error`` (default ``NameError``). The check is
    exact: it looks up the position of the failing load in the block's syntax tree.

    >>> ns = Namespace(on_undefined_call=lambda name: (lambda *a: f"{name}{a}"))
    >>> r = drive_rest(run_block("print(helper(1))\\nprint(missing)", ns), None)
    >>> r.stdout, r.stderr.splitlines()[-1]
    ('helper(1,)\\n', "NameError: name 'missing' is not defined")
    """

    def __init__(
        self,
        values: Mapping[str, Any] | None = None,
        *,
        on_undefined_call: Callable[[str], Callable[..., Any]] | None = None,
        name_error: type[NameError] = NameError,
    ) -> None:
        super().__init__(values or {})
        self.setdefault("__builtins__", safe_builtins())
        self.setdefault("__name__", "__repl__")
        self.on_undefined_call = on_undefined_call
        self.name_error = name_error
        # Code objects of every block run here (and of the functions they define) -> their
        # source facts, so that a function from an earlier block is judged by its own source.
        self._code_info: dict[CodeType, _CodeInfo] = {}

    def __missing__(self, name: str) -> Any:
        builtins = dict.get(self, "__builtins__", {})
        if isinstance(builtins, dict) and name in builtins:
            return builtins[name]
        if (
            self.on_undefined_call is not None
            and _ACTIVE
            and _is_callee(self._code_info, sys._getframe(1))
        ):
            return self.on_undefined_call(name)
        raise self.name_error(f"name {name!r} is not defined", name=name)

    # Namespaces are values of the REPL, not of the harness: copying one copies its data.
    def __reduce__(self) -> Any:  # pragma: no cover - pickling is not used
        return (dict, (dict(self),))


class _CodeInfo:
    """What a block's code object needs at run time: its source lines and callee positions."""

    __slots__ = ("lines", "callees", "positions")

    def __init__(self, lines: list[str], callees: frozenset) -> None:
        self.lines = lines
        self.callees = callees
        self.positions: list | None = None


def _is_callee(code_info: dict[CodeType, _CodeInfo], frame: FrameType) -> bool:
    info = code_info.get(frame.f_code)
    if info is None:
        return False  # not model code of this namespace
    if info.positions is None:
        info.positions = list(frame.f_code.co_positions())
    index = frame.f_lasti // 2
    return 0 <= index < len(info.positions) and info.positions[index] in info.callees


def _code_objects(code: CodeType) -> list[CodeType]:
    out, todo = [], [code]
    while todo:  # iterative: nesting depth is the model's choice
        c = todo.pop()
        out.append(c)
        todo.extend(k for k in c.co_consts if isinstance(k, CodeType))
    return out


def safe_builtins() -> dict[str, Any]:
    """The builtins model code sees: pure functions, types and exceptions.

    ``print`` writes to the block's captured stdout; ``__import__`` admits only
    :data:`SAFE_MODULES`.

    >>> b = safe_builtins()
    >>> "len" in b, "open" in b, "eval" in b, "exec" in b
    (True, False, False, False)
    >>> safe_builtins() is not b and safe_builtins() == b
    True
    """
    # A new dict each time (a namespace's own), copied from one made once: a namespace
    # is made for every replayed start of a harness, under the step's traced budget.
    if not _SAFE_BUILTINS:
        _SAFE_BUILTINS.update(_make_safe_builtins())
    return dict(_SAFE_BUILTINS)


_SAFE_BUILTINS: dict[str, Any] = {}


def _make_safe_builtins() -> dict[str, Any]:
    names = (
        "abs all any ascii bin bool bytearray bytes callable chr classmethod complex dict "
        "divmod enumerate filter float format frozenset getattr hasattr hash hex id int "
        "isinstance issubclass iter len list map max min next object oct ord pow property "
        "range repr reversed round set setattr slice sorted staticmethod str sum super tuple "
        "type zip __build_class__ "
        "BaseException Exception ArithmeticError AssertionError AttributeError IndexError KeyError LookupError "
        "NameError NotImplementedError OverflowError RecursionError RuntimeError StopIteration "
        "TypeError ValueError ZeroDivisionError UnicodeError "
        "True False None NotImplemented Ellipsis"
    ).split()
    out = {name: getattr(_b, name) for name in names}
    out["getattr"], out["hasattr"], out["setattr"] = _getattr, _hasattr, _setattr
    out["print"] = _print
    out["__import__"] = _import
    out[_CHECKPOINT] = _checkpoint
    return out


def _attribute_name(name: Any) -> Any:
    if isinstance(name, str) and name in BLOCKED_ATTRIBUTES:
        raise AttributeError(
            f"{name} is not available to model code (introspection of the harness is blocked)"
        )
    return name


def _getattr(obj: Any, name: str, *default: Any) -> Any:
    return getattr(obj, _attribute_name(name), *default)


def _hasattr(obj: Any, name: str) -> bool:
    return hasattr(obj, _attribute_name(name))


def _setattr(obj: Any, name: str, value: Any) -> None:
    setattr(obj, _attribute_name(name), value)


def _print(
    *values: Any,
    sep: str | None = " ",
    end: str | None = "\n",
    file: Any = None,
    flush: bool = False,
) -> None:
    text = (" " if sep is None else sep).join(map(str, values)) + ("\n" if end is None else end)
    if file is not None and hasattr(file, "write"):
        file.write(text)
    elif _ACTIVE:
        _ACTIVE[-1].write(text)
    else:  # a function defined in a block, called outside any block
        sys.stdout.write(text)


def _import(
    name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
) -> Any:
    if level != 0 or name.split(".")[0] not in SAFE_MODULES:
        raise ImportError(
            f"import of {name!r} is not allowed in model code; allowed modules: {', '.join(sorted(SAFE_MODULES))}"
        )
    return _public_view(__import__(name, None, None, fromlist, 0))


_VIEWS: dict[str, types.ModuleType] = {}


def _public_view(module: types.ModuleType) -> types.ModuleType:
    """A copy of a safe module with only its public, non-module attributes.

    Stdlib modules hold other modules as attributes (``dataclasses.sys``,
    ``typing.sys``); a view leaves those out, keeping submodules of the same safe
    package (``collections.abc``) as views in their turn.
    """
    view = _VIEWS.get(module.__name__)
    if view is not None:
        return view
    view = types.ModuleType(module.__name__, module.__doc__)
    _VIEWS[module.__name__] = view
    top = module.__name__.split(".")[0]
    for attr, value in vars(module).items():
        if attr.startswith("_"):
            continue
        if isinstance(value, types.ModuleType):
            if value.__name__.split(".")[0] == top and value.__name__.startswith(
                module.__name__ + "."
            ):
                setattr(view, attr, _public_view(value))
            continue
        setattr(view, attr, value)
    return view


def _checkpoint() -> None:
    # Inserted at the top of every handler that could swallow a control signal. Any
    # exhausted budget counts, the block's or an enclosing one (the harness step's).
    if _ACTIVE:
        att = _ACTIVE[-1]
        if att.pending is not None:
            raise att.pending
    checkpoint()


# --------------------------------------------------------------------------------------
# the driver
# --------------------------------------------------------------------------------------
def run_block(
    code: str,
    namespace: dict,
    *,
    handle: Handler | None = None,
    line_budget: int = 20_000,
    filename: str = "<block>",
    max_output: int = 20_000,
) -> Generator[str, str, BlockResult]:
    """Run one model-written block; yields the prompts its requests need.

    ``handle(request)`` is a generator: it yields prompts, receives completions and
    returns the value the interrupted call should return (or raises an ``Exception``,
    which the call then raises inside the block, e.g. a depth limit). Before ``handle``
    runs, ``namespace`` is restored to what it was before the block; names ``handle``
    binds in it survive, and the block reruns from the top with the call log. A
    ``BaseException`` from ``handle`` (not an ``Exception``) propagates to the caller:
    use it to abort the whole harness. ``line_budget`` is per attempt.

    >>> ns = Namespace()
    >>> r = drive_rest(run_block("while True:\\n    print('tick')", ns, line_budget=1000), None)
    >>> r.status, r.stdout.count("tick") > 10
    ('budget', True)
    """
    positive_budget(line_budget, "line_budget")
    lines = code.splitlines()
    try:
        compiled, callees = _compile(code, filename)
    except (SyntaxError, ValueError) as exc:  # ValueError: source with NUL bytes
        return BlockResult(
            code, "", _format_syntax_error(exc), "error", error=type(exc).__name__, attempts=0
        )
    except (RecursionError, MemoryError) as exc:  # `1+1+...+1` nested too deeply for the parser
        stderr = f"{type(exc).__name__}: the block is nested too deeply to compile; split the expression\n"
        return BlockResult(code, "", stderr, "error", error=type(exc).__name__, attempts=0)
    code_info = namespace._code_info if isinstance(namespace, Namespace) else {}
    info = _CodeInfo(lines, callees)
    for c in _code_objects(compiled):
        code_info[c] = info
    log: list[CallRecord] = []
    snapshot = _snapshot(namespace)
    attempts = 0
    while True:
        attempts += 1
        att = _Attempt(log, max_output)
        raised = _execute(att, compiled, namespace, line_budget)
        signal = att.pending
        stdout = "".join(att.stdout)
        common: _Tally = {"attempts": attempts, "calls": tuple(log), "hits": tuple(att.hits)}
        if isinstance(signal, Interrupt):
            if handle is None:
                raise InvalidArgument(
                    f"the block requested {signal.request.kind!r} but run_block got no handle; pass "
                    "handle=<generator function> to fulfil requests"
                )
            _restore(namespace, snapshot)
            request = signal.request
            try:
                value = yield from handle(request)
            except Exception as exc:  # the call raises it inside the block on the rerun
                log.append(CallRecord(request.kind, request.args, request.kwargs, None, exc))
            else:
                log.append(CallRecord(request.kind, request.args, request.kwargs, _private(value)))
            snapshot = _snapshot(namespace)
            continue
        if isinstance(signal, Finish):
            return BlockResult(code, stdout, "", "finished", signal.value, **common)
        if isinstance(signal, ReplayDivergence):
            return BlockResult(
                code,
                stdout,
                _format_exception(signal, filename, code_info),
                "diverged",
                error="ReplayDivergence",
                **common,
            )
        # issubclass(type(x)), not isinstance(x): isinstance may read a model-defined __class__
        if (
            issubclass(type(raised), BudgetExceeded)
            and att.budget is not None
            and att.budget.exhausted
        ):
            stderr = (
                f"BudgetExceeded: the block ran more than {line_budget} lines and was stopped\n"
            )
            return BlockResult(code, stdout, stderr, "budget", error="BudgetExceeded", **common)
        if raised is not None:
            return BlockResult(
                code,
                stdout,
                _format_exception(raised, filename, code_info),
                "error",
                error=_type_name(raised),
                **common,
            )
        return BlockResult(code, stdout, "", "ok", **common)


# A replayed harness runs the same blocks again at every step; compiling one (the parse and
# three walks of its tree, all traced under the step's line budget) cost more than running
# it. A code object is immutable and a block's facts are looked up per namespace (its
# _code_info), so one compiled block serves every run of that text. A block that does not
# compile is compiled again (its error is not kept).
@kept_for_texts(maxsize=256, max_chars=20_000)
def _compile(code: str, filename: str) -> tuple[CodeType, frozenset]:
    # Compiler warnings (`x is 1`) are silenced: under `-W error` they would turn a
    # block that runs into a SyntaxError, so the outcome would depend on warning filters.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ast.parse(code, filename, "exec")
        _refuse_introspection(tree, filename)
        callees = frozenset(_callee_positions(tree))
        _instrument(tree)
        # dont_inherit: this module's `from __future__ import annotations` must not change
        # how model code is compiled (string annotations broke @dataclass in blocks)
        return compile(tree, filename, "exec", dont_inherit=True), callees


@contextlib.contextmanager
def _real_interrupts() -> Iterator[list[bool]]:
    """Tell a real Ctrl-C apart from a KeyboardInterrupt that model code raises itself.

    Model code can reach ``KeyboardInterrupt`` (e.g. through ``BaseException.__subclasses__()``);
    letting it escape would break the totality of the harness. While a block runs, SIGINT
    sets a flag before raising, so only a real interrupt propagates. Off the main
    thread signals cannot be hooked; there every KeyboardInterrupt counts as real.
    """
    flag: list[bool] = []
    if threading.current_thread() is not threading.main_thread():
        flag.append(True)
        yield flag
        return

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        flag.append(True)
        raise KeyboardInterrupt

    # _signal.signal, the C function behind signal.signal: this runs inside the block's
    # line budget, and signal.signal converts the handler it replaces through an enum, in
    # Python lines that repr() it on the way (an asyncio runner's handler reprs its task:
    # hundreds of lines), so the block's count depended on whoever set SIGINT before.
    previous = _set_signal(signal.SIGINT, on_sigint)
    try:
        yield flag
    finally:
        _set_signal(signal.SIGINT, previous)


def _execute(
    att: _Attempt, compiled: CodeType, namespace: dict, line_budget: int
) -> BaseException | None:
    _ACTIVE.append(att)
    interrupted = [True]  # until the hook is installed, any interrupt is the user's
    try:
        try:
            with LineBudget(line_budget) as budget, _real_interrupts() as interrupted:
                att.budget = budget
                exec(compiled, namespace)
        finally:
            _ACTIVE.pop()
            # a spent block budget switched the tracer off; an enclosing budget (the
            # harness step's) must keep counting
            restore_tracing()
            _keep_names(namespace)
    except BudgetExceeded as exc:
        if att.budget is None or not att.budget.exhausted:
            try:
                checkpoint()
            except BudgetExceeded:
                raise exc from None  # an enclosing budget (the harness step's) ran out: not ours to report
            # no budget is spent: model code raised BudgetExceeded itself (it can reach the
            # class through BaseException.__subclasses__()): an ordinary error of the block
        return exc
    except KeyboardInterrupt as exc:
        if interrupted:
            raise  # the user pressed Ctrl-C: stop everything
        return exc  # model code raised it itself: an ordinary error of the block
    except BaseException as exc:  # noqa: BLE001 - model code may raise anything; it is reported
        return exc
    return None


def contained(fn: Callable[[], Any], fallback: Callable[[BaseException], Any]) -> Any:
    """``fn()``, where whatever a model-defined method it reaches (``__str__``,
    ``__deepcopy__``) raises, ``SystemExit`` included, becomes ``fallback(exc)``; a spent
    line budget and a real Ctrl-C still propagate.

    >>> class Loud:
    ...     def __str__(self):
    ...         raise SystemExit("no")
    >>> contained(lambda: str(Loud()), lambda exc: f"<{type(exc).__name__}>")
    '<SystemExit>'
    """
    interrupted = [True]  # until the hook is installed, any interrupt is the user's
    try:
        with _real_interrupts() as interrupted:
            return fn()
    except BudgetExceeded:
        raise
    except KeyboardInterrupt as exc:
        if interrupted:
            raise
        return fallback(exc)
    except BaseException as exc:  # noqa: BLE001 - model-defined methods may raise anything
        return fallback(exc)


def _type_name(value: Any) -> str:
    # Read the name through type's own descriptor: a model-defined metaclass may turn
    # `__name__` into a property that raises.
    return type.__dict__["__name__"].__get__(type(value), type)


def drive(gen: Generator[str, str, Any], respond: Callable[[str], str]) -> Any:
    """Run a prompt-yielding generator to its end, answering each prompt with ``respond``.

    >>> def g():
    ...     a = yield "first?"
    ...     b = yield "second?"
    ...     return a + b
    >>> drive(g(), lambda p: p[0])
    'fs'
    """
    try:
        prompt = next(gen)
        while True:
            prompt = gen.send(respond(prompt))
    except StopIteration as stop:
        return stop.value


def drive_rest(gen: Generator[str, str, Any], completion: Any) -> Any:
    """Send ``completion`` to a started generator (or start it, if it is fresh) and
    finish it, failing if it asks for more prompts. Handy in tests and doctests.

    >>> drive_rest(iter_result(5), None)
    5
    """
    try:
        if inspect.getgeneratorstate(gen) == inspect.GEN_CREATED:
            next(gen)
        else:
            gen.send(completion)
    except StopIteration as stop:
        return stop.value
    raise InvalidArgument("the generator asked for another prompt; use drive() to answer several")


def iter_result(value: Any) -> Generator[str, str, Any]:
    """A generator that yields nothing and returns ``value`` (a trivial handler).

    >>> drive(iter_result(3), str)
    3
    """
    return value
    yield  # pragma: no cover


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------
def _callee_positions(tree: ast.AST) -> set[tuple]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            f = node.func
            out.add((f.lineno, f.end_lineno, f.col_offset, f.end_col_offset))
    return out


def _refuse_introspection(tree: ast.AST, filename: str) -> None:
    # A SyntaxError is reported to the model like any other error in its block.
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in BLOCKED_ATTRIBUTES:
            name = "." + node.attr
        elif isinstance(node, ast.Name) and node.id in ("__builtins__", _CHECKPOINT):
            name = node.id
        else:
            continue
        err = SyntaxError(
            f"{name} is not available to model code (introspection of the harness is blocked)"
        )
        err.filename, err.lineno, err.offset = filename, node.lineno, node.col_offset + 1
        raise err


def _instrument(tree: ast.AST) -> None:
    """Put a checkpoint first in every place that could swallow a control signal.

    Iterative (``ast.walk``), not a recursive ``NodeTransformer``: a long expression such
    as ``1+1+...+1`` is a deep tree, and the model chooses its depth.
    """
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler):
            node.body = _guard(node.body)
        elif isinstance(node, (ast.Try, ast.TryStar)):
            node.finalbody = _guard(node.finalbody)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in (
            "__exit__",
            "__aexit__",
        ):
            node.body = _guard(node.body)


def _guard(body: list[ast.stmt]) -> list[ast.stmt]:
    if not body:
        return body
    first = body[0]
    checkpoint_call = ast.Call(ast.Name(_CHECKPOINT, ast.Load()), [], [])
    call_ = ast.Expr(checkpoint_call)
    # Same line as the statement it guards: adds no line events to the budget. Every new
    # node gets its location here, so no (recursive) fix_missing_locations pass is needed.
    for node in (call_, checkpoint_call, checkpoint_call.func):
        ast.copy_location(node, first)
    return [call_, *body]


_PLAIN = (list, dict, set, tuple, frozenset, bytearray)


def _snapshot(namespace: dict) -> dict:
    # Containers and model-defined instances are deep-copied (an interrupt undoes their
    # in-place changes); functions, classes, modules and harness objects stay shared.
    # Only exact-str keys are kept: a smuggled key could run model __hash__/__eq__ here.
    # Atoms and dicts of atoms skip copy.deepcopy: no model code runs there, and the
    # step's line budget would trace every line of that trip.
    memo: dict = {}
    model_module = dict.get(namespace, "__name__", "__repl__")
    out = {}
    for key, value in list(dict.items(namespace)):
        if type(key) is not str:
            continue
        kind = id(type(value))
        if kind in _ATOMIC_IDS:
            out[key] = value
        elif kind == _DICT_ID and _atomic_dict(value):
            out[key] = _copy_atomic_dict(value, memo)
        else:
            out[key] = contained(
                partial(_copy_value, value, memo, model_module), partial(_kept, value)
            )
    return out


# The exact types copy.deepcopy returns as they are (its atomic ones), by id: comparing
# ids never runs code, where hashing or comparing a model-defined class could (its
# metaclass's __hash__ or __eq__).
_ATOMIC_IDS = frozenset(
    map(
        id,
        (
            type(None),
            int,
            float,
            bool,
            complex,
            bytes,
            str,
            CodeType,
            type,
            range,
            types.BuiltinFunctionType,
            types.FunctionType,
            types.EllipsisType,
            types.NotImplementedType,
        ),
    )
)
_DICT_ID = id(dict)


def _atomic_dict(d: dict) -> bool:
    # One C-level pass each (type, id, set): no line of it is traced, no model code runs.
    return _ATOMIC_IDS.issuperset(map(id, map(type, dict.keys(d)))) and _ATOMIC_IDS.issuperset(
        map(id, map(type, dict.values(d)))
    )


def _copy_atomic_dict(d: dict, memo: dict) -> dict:
    # What copy.deepcopy(d, memo) gives for a dict of atoms: a new dict with the same
    # items, the same one for every reference to d in this snapshot (the memo).
    copied = memo.get(id(d))
    if copied is None:
        copied = memo[id(d)] = dict.copy(d)
        memo.setdefault(id(memo), []).append(d)  # kept alive, as deepcopy does
    return copied


def _kept(value: Any, exc: BaseException) -> Any:
    # contained's fallback for a value that could not be copied: keep it by reference.
    return value


def _copy_value(value: Any, memo: dict, model_module: Any) -> Any:
    kind = type(value)
    if issubclass(kind, _PLAIN) or type.__dict__["__module__"].__get__(kind, type) == model_module:
        return copy.deepcopy(value, memo)  # an uncopyable value is kept as it is (contained)
    return value


@uncharged
def _keep_names(namespace: dict) -> None:
    # Names are exact str keys. Model code can smuggle other keys in (through a
    # function's __globals__); their __hash__/__eq__ would run whenever the harness
    # touches the namespace, so they are dropped after every attempt. (A loop, not
    # any(<genexpr>): the generator's frame would be charged a line per name.)
    for k in dict.keys(namespace):
        if type(k) is not str:
            names = [(k, v) for k, v in dict.items(namespace) if type(k) is str]
            dict.clear(namespace)
            dict.update(namespace, names)
            return


def _restore(namespace: dict, snapshot: dict) -> None:
    dict.clear(namespace)
    dict.update(namespace, snapshot)  # in place: functions of the block hold this dict


_ATOMS = frozenset({int, float, complex, str, bytes, bool, type(None)})


@uncharged
def _private(value: Any) -> Any:
    # A deep copy when one can be made (an uncopyable value is kept as it is); an
    # immutable atom is its own copy, without a trip through copy.deepcopy.
    if type(value) in _ATOMS:
        return value
    try:
        return copy.deepcopy(value)
    except Exception:  # noqa: BLE001
        return value


@uncharged
def _same(a: Any, b: Any, seen: set | None = None) -> bool:
    # Reruns recreate functions and objects defined in the block, so equality falls back
    # to "same code" for functions, "same fields" for instances of model-defined classes
    # and equal reprs (memory addresses left out) for anything else, e.g. generators.
    # A pair already under comparison counts as equal, so cyclic values terminate.
    if a is b:
        return True
    seen = set() if seen is None else seen
    if (id(a), id(b)) in seen:
        return True
    seen.add((id(a), id(b)))
    # plain loops, not all(<genexpr>): a generator's frame is not uncharged, and it ran
    # a traced line per element of every cached call's arguments
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        if type(a) is not type(b) or len(a) != len(b):
            return False
        for x, y in zip(a, b):
            if not _same(x, y, seen):
                return False
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return False
        for k in a:
            if not _same(a[k], b[k], seen):
                return False
        return True
    if callable(a) and callable(b) and hasattr(a, "__code__") and hasattr(b, "__code__"):
        return a.__code__ == b.__code__
    try:
        if a == b:
            return True
    except Exception:  # noqa: BLE001
        pass
    if type(a).__name__ != type(b).__name__:
        return False
    if (
        not isinstance(a, type)
        and isinstance(getattr(a, "__dict__", None), dict)
        and isinstance(getattr(b, "__dict__", None), dict)
    ):
        return _same(a.__dict__, b.__dict__, seen)
    return _safe_repr(a) == _safe_repr(b)


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


@uncharged
def _safe_repr(value: Any) -> str:
    # Memory addresses ("<object at 0x7f...>") differ between runs: left out, so that
    # messages and comparisons are deterministic.
    try:
        return _ADDRESS.sub("", repr(value))
    except Exception:  # noqa: BLE001
        return f"<{type(value).__name__}>"


@uncharged
def _show_call(kind: str, args: tuple, kwargs: Mapping[str, Any]) -> str:
    parts = [_safe_repr(a) for a in args] + [f"{k}={_safe_repr(v)}" for k, v in kwargs.items()]
    text = f"{kind}({', '.join(parts)})"
    return text if len(text) <= 200 else text[:199] + "…"


def _format_exception(
    exc: BaseException, filename: str, code_info: dict[CodeType, _CodeInfo]
) -> str:
    # The exception is a model value: its __str__, even its __traceback__, may be model code.
    return contained(
        lambda: _format_exception_unsafe(exc, filename, code_info),
        lambda err: (
            f"{_type_name(exc)}: <could not be shown: showing it raised {_type_name(err)}>\n"
        ),
    )


def _format_exception_unsafe(
    exc: BaseException, filename: str, code_info: dict[CodeType, _CodeInfo]
) -> str:
    out = ["Traceback (most recent call last):"]
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        info = code_info.get(frame.f_code)
        if info is None:
            continue  # harness frames are not the model's business
        out.append(f'  File "{frame.f_code.co_filename}", line {lineno}, in {frame.f_code.co_name}')
        if lineno and 0 < lineno <= len(info.lines):
            out.append("    " + info.lines[lineno - 1].strip())
    message = contained(lambda: str(exc), lambda err: "<unprintable>")
    out.append(f"{_type_name(exc)}: {message}" if message else _type_name(exc))
    return "\n".join(out) + "\n"


def _format_syntax_error(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc))
