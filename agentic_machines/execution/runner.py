"""The block runner interface (what runs a model-written block), its options, and the in-process runner.

A runner holds an episode's namespaces and runs model-written blocks in them
(:mod:`agentic_machines.execution.sandbox` says which runner runs where). This module
has what every level shares: :class:`Scaffold` (what a namespace starts with),
:class:`Limits` (what a worker may use), the :class:`BlockRunner` interface, and
:class:`InlineRunner`, which runs blocks in the harness's own process with restricted
builtins: **for trusted, scripted code only**.

>>> ex = InlineRunner()
>>> ex.namespace("main", Scaffold(values={"x": 2}))
>>> drive_rest(ex.run_block("main", "print(x * 21)"), None).stdout
'42\\n'
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from .._text import plural
from ..errors import InvalidArgument, REPLNameError
from . import wire
from .codeexec import (
    BlockResult,
    Handler,
    Namespace,
    contained,
    drive_rest,
    effect_function,
    finish,
    request_function,
    run_block,
)

__all__ = [
    "LEVELS",
    "FAILURE_STATUSES",
    "Scaffold",
    "Limits",
    "BlockRunner",
    "InlineRunner",
    "drive_rest",  # what runs a block to its end, for the examples here and for users
]

LEVELS = ("inline", "process", "namespace")
"""The isolation levels, weakest first (``"strongest"`` names the best that works)."""

FAILURE_STATUSES = {
    "timeout": "ExecutionTimeout",
    "memory": "ExecutionMemoryExceeded",
    "died": "WorkerDied",
}
"""Block statuses that mean the worker failed, and the error each one is named by."""

_SIMPLE = (str, int, float, bool, list, dict, tuple)


@dataclass(frozen=True)
class Scaffold:
    """What a namespace starts with: data values and the harness's primitives, by name.

    ``values``: data (strings, numbers, containers) bound at the start and by
    :meth:`BlockRunner.restore_scaffold`. ``effects``: functions the harness performs once
    per logged call (``act``); give the callables to :meth:`BlockRunner.namespace`.
    ``requests``: functions whose calls interrupt the block for the harness's ``handle``
    (``llm_query``). ``finish``: the name of the function that ends a block with a value
    (``answer``). ``arguments``: the name of the function returning the current
    invocation's arguments (``get_args``). ``spawn_on_undefined_call``: calling an
    undefined name is a request of that name (REPL-Plan's child REPLs), and other uses of
    an undefined name raise ``REPLNameError``. ``builtins``: the primitives are builtins
    too (a shadowed or deleted primitive is found again). ``show_vars``: the name of the
    function that lists the namespace's own variables with their types (RLM's ``SHOW_VARS``).

    >>> sorted(Scaffold(values={"context": "abc"}, requests=("llm_query",)).names())
    ['__builtins__', '__name__', 'context', 'llm_query']
    """

    values: Mapping[str, Any] = field(default_factory=dict)
    effects: tuple[str, ...] = ()
    requests: tuple[str, ...] = ()
    finish: str | None = None
    arguments: str | None = None
    spawn_on_undefined_call: bool = False
    builtins: bool = False
    show_vars: str | None = None

    def names(self) -> frozenset[str]:
        """Every name the scaffold binds (with ``__builtins__`` and ``__name__``)."""
        extra = {n for n in (self.finish, self.arguments, self.show_vars) if n}
        return frozenset(
            {*self.values, *self.effects, *self.requests, *extra, "__builtins__", "__name__"}
        )

    def to_data(self) -> dict:
        """A JSON-ready description (the worker builds the same namespace from it)."""
        return {
            "values": wire.encode(dict(self.values)),
            "effects": list(self.effects),
            "requests": list(self.requests),
            "finish": self.finish,
            "arguments": self.arguments,
            "spawn": self.spawn_on_undefined_call,
            "builtins": self.builtins,
            "show_vars": self.show_vars,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Scaffold:
        """The scaffold :meth:`to_data` described.

        >>> s = Scaffold(values={"n": 1}, effects=("act",), finish="answer")
        >>> Scaffold.from_data(s.to_data()) == s
        True
        """
        return cls(
            values=wire.decode(data["values"]),
            effects=tuple(map(str, data["effects"])),
            requests=tuple(map(str, data["requests"])),
            finish=data["finish"],
            arguments=data["arguments"],
            spawn_on_undefined_call=bool(data["spawn"]),
            builtins=bool(data["builtins"]),
            show_vars=data.get("show_vars"),
        )


@dataclass(frozen=True)
class Limits:
    """The limits of an isolated worker.

    ``timeout_s``: wall-clock seconds per block (the host kills the worker past it).
    ``memory_mb``: address space per process, and the whole worker's memory where it has a
    control group; ``cpu_s``: CPU seconds for the worker's whole life;
    ``open_files``: file descriptors; ``file_size_mb``: the largest file it may write.
    ``replay_timeout_s``: wall-clock seconds for rebuilding a new worker by replaying the
    journal of the earlier blocks, a budget of its own, never charged to the block that
    needs the worker (the replayed blocks are each bounded by their line budgets already;
    this is the safety net).

    >>> Limits().timeout_s, Limits().replay_timeout_s
    (10.0, 120.0)
    """

    timeout_s: float = 10.0
    memory_mb: int = 1024
    cpu_s: int = 600
    open_files: int = 64
    file_size_mb: int = 16
    replay_timeout_s: float = 120.0

    def __post_init__(self) -> None:
        for name in (f.name for f in fields(self)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise InvalidArgument(f"Limits.{name} must be a positive number, got {value!r}")


# --------------------------------------------------------------------------------------
# the interface, and the in-process runner
# --------------------------------------------------------------------------------------
class BlockRunner:
    """The one interface RLM and REPL-Plan use to run blocks (see the module docstring).

    ``level`` names the isolation; ``tool`` the namespace tool (``bwrap``/``unshare``) or
    None.
    """

    level = "inline"
    tool: str | None = None

    def namespace(
        self,
        key: str,
        scaffold: Scaffold,
        effects: Mapping[str, Callable[..., Any]] | None = None,
        *,
        share_with: str | None = None,
    ) -> None:
        """Create the namespace ``key``; ``effects`` maps the scaffold's effect names to callables.

        ``share_with`` names an earlier namespace whose interpreter ``key`` shares: values
        cross between them by reference (REPL-Plan's REPLs pass any object), and what a block
        does to the interpreter reaches both. Otherwise an isolated runner gives ``key`` a
        worker of its own (inline, every namespace is in the caller's interpreter).
        """
        raise NotImplementedError

    def run_block(
        self,
        key: str,
        code: str,
        *,
        handle: Handler | None = None,
        line_budget: int = 20_000,
        filename: str = "<block>",
        max_output: int = 20_000,
    ) -> Generator[str, str, BlockResult]:
        """Run one block in namespace ``key``, as :func:`~.codeexec.run_block` does."""
        raise NotImplementedError

    def bind_request(self, key: str, name: str) -> None:
        """Bind ``name`` in ``key`` to a request function of that name (a child REPL)."""
        raise NotImplementedError

    def restore_scaffold(self, key: str) -> None:
        """Bind the scaffold's values and request functions again (model code may rebind them)."""
        raise NotImplementedError

    def push_args(self, key: str, args: tuple) -> None:
        """Start an invocation: the ``arguments`` primitive returns (a copy of) ``args``."""
        raise NotImplementedError

    def pop_args(self, key: str) -> None:
        """End the innermost invocation of ``key``."""
        raise NotImplementedError

    def variables(self, key: str) -> list[tuple[str, bool]]:
        """The names bound in ``key``, in order, each with whether its value is simple data."""
        raise NotImplementedError

    def text_of(self, key: str, name: str) -> str | None:
        """``str`` of the value bound to ``name``; None when unbound or when ``str`` fails."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the runner (stop its worker). Idempotent."""

    def describe(self) -> str:
        """The level, and the tool for ``namespace``.

        >>> InlineRunner().describe()
        'inline'
        """
        return self.level if self.tool is None else f"{self.level} ({self.tool})"


class _Space:
    __slots__ = ("ns", "scaffold", "args")

    def __init__(self, ns: Namespace, scaffold: Scaffold, args: list) -> None:
        self.ns, self.scaffold, self.args = ns, scaffold, args


class InlineRunner(BlockRunner):
    """Runs blocks in this process: for trusted, scripted code only (no isolation).

    The isolated worker runs its blocks with an InlineRunner too, so the semantics of the
    levels are one implementation.

    >>> ex = InlineRunner()
    >>> ex.namespace("r", Scaffold(requests=("ask",)))
    >>> def handle(request):
    ...     reply = yield f"Q: {request.args[0]}"
    ...     return reply
    >>> gen = ex.run_block("r", "y = ask('name?')\\nprint('hi', y)", handle=handle)
    >>> next(gen)
    'Q: name?'
    >>> drive_rest(gen, "Ada").stdout, ex.variables("r")[-1], ex.text_of("r", "y")
    ('hi Ada\\n', ('y', True), 'Ada')
    """

    level = "inline"

    def __init__(self) -> None:
        self._spaces: dict[str, _Space] = {}

    def _space(self, key: str) -> _Space:
        space = self._spaces.get(key)
        if space is None:
            raise InvalidArgument(f"no namespace {key!r}; create it with namespace({key!r}, ...)")
        return space

    def namespace(
        self,
        key: str,
        scaffold: Scaffold,
        effects: Mapping[str, Callable[..., Any]] | None = None,
        *,
        share_with: str | None = None,
    ) -> None:
        effects = dict(effects or {})
        missing = [n for n in scaffold.effects if n not in effects]
        if missing:
            raise InvalidArgument(
                f"no callable given for the {plural(len(missing), 'effect')} {missing} of {key!r}"
            )
        shared(share_with, self._spaces)
        args: list = []
        primitives: dict[str, Any] = {n: effect_function(n, effects[n]) for n in scaffold.effects}
        if scaffold.arguments:
            primitives[scaffold.arguments] = _arguments(args, scaffold.arguments)
        if scaffold.finish:
            primitives[scaffold.finish] = finish
        primitives.update({n: request_function(n) for n in scaffold.requests})
        values = copy.deepcopy(dict(scaffold.values))
        if scaffold.spawn_on_undefined_call:
            ns = Namespace(
                {**values, **primitives},
                on_undefined_call=request_function,
                name_error=REPLNameError,
            )
        else:
            ns = Namespace({**values, **primitives})
        if scaffold.show_vars:
            dict.__setitem__(ns, scaffold.show_vars, _show_vars(ns, scaffold))
        if scaffold.builtins:
            ns["__builtins__"].update(primitives)
        self._spaces[key] = _Space(ns, scaffold, args)

    def run_block(
        self,
        key: str,
        code: str,
        *,
        handle: Handler | None = None,
        line_budget: int = 20_000,
        filename: str = "<block>",
        max_output: int = 20_000,
    ) -> Generator[str, str, BlockResult]:
        space = self._space(key)
        return (
            yield from run_block(
                code,
                space.ns,
                handle=handle,
                line_budget=line_budget,
                filename=filename,
                max_output=max_output,
            )
        )

    def bind_request(self, key: str, name: str) -> None:
        dict.__setitem__(self._space(key).ns, name, request_function(name))

    def restore_scaffold(self, key: str) -> None:
        space = self._space(key)
        for name, value in copy.deepcopy(dict(space.scaffold.values)).items():
            dict.__setitem__(space.ns, name, value)
        for name in space.scaffold.requests:
            dict.__setitem__(space.ns, name, request_function(name))
        if space.scaffold.show_vars:
            dict.__setitem__(
                space.ns, space.scaffold.show_vars, _show_vars(space.ns, space.scaffold)
            )

    def push_args(self, key: str, args: tuple) -> None:
        self._space(key).args.append(args)

    def pop_args(self, key: str) -> None:
        self._space(key).args.pop()

    def variables(self, key: str) -> list[tuple[str, bool]]:
        # type checks that run no model code (isinstance may read a model-defined __class__)
        return [
            (k, issubclass(type(v), _SIMPLE))
            for k, v in dict.items(self._space(key).ns)
            if type(k) is str
        ]

    def text_of(self, key: str, name: str) -> str | None:
        ns = self._space(key).ns
        if not dict.__contains__(ns, name):
            return None
        value = dict.__getitem__(ns, name)
        # str() of a model value runs model code: whatever it raises means "no text"
        text = contained(lambda: str(value), lambda exc: None)
        return text if type(text) is str else None


def shared(share_with: str | None, keys: Any) -> None:
    """Refuse a ``share_with`` that names no namespace among ``keys``.

    >>> shared(None, []), shared("main", ["main"])
    (None, None)
    """
    if share_with is not None and share_with not in keys:
        raise InvalidArgument(
            f"share_with={share_with!r} names no namespace of this runner; create "
            f"{share_with!r} first, or leave share_with out for a namespace of its own"
        )


def _show_vars(ns: dict, scaffold: Scaffold) -> Callable[[], str]:
    # The model's variables (the scaffold's values, e.g. `context`, count as the model's, as
    # in the reference, whose `context` is a local), with their types' names; type() runs no
    # model code, but a model-defined metaclass may make __name__ anything: only a str counts.
    hidden = scaffold.names() - set(scaffold.values)

    def show_vars() -> str:
        available = {}
        for k, v in list(dict.items(ns)):
            if type(k) is str and not k.startswith("_") and k not in hidden:
                name = type.__dict__["__name__"].__get__(type(v))
                available[k] = name if type(name) is str else "?"
        if not available:
            return "No variables created yet. Use ```repl``` blocks to create variables."
        return f"Available variables: {available}"

    show_vars.__name__ = show_vars.__qualname__ = scaffold.show_vars or "show_vars"
    return show_vars


def _arguments(stack: list, name: str) -> Callable[[], tuple]:
    def arguments() -> tuple:
        if not stack:
            return ()
        try:
            return copy.deepcopy(stack[-1])
        except Exception:  # noqa: BLE001 - an uncopyable argument (a generator) is passed as it is
            return stack[-1]

    arguments.__name__ = arguments.__qualname__ = name
    return arguments
