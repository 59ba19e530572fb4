"""Executors: where model-written blocks run, at three levels of isolation, behind one interface.

RLM and REPL-Plan talk to an *executor*, never to a namespace dict. An executor holds the
episode's namespaces (one per REPL, by key), runs blocks in them with the rerun-with-cached-calls
technique of :mod:`agentic_machines.execution.codeexec`, and answers a few questions about
them (the names bound, the text of a value). The levels:

``"inline"`` (:class:`InlineExecutor`)
    The blocks run in the harness's own process with restricted builtins. Fast and exact, but
    **for trusted, scripted code only**: Python cannot be sandboxed in-process (see
    ``docs/threat_model.md`` for the attacks that get through).
``"process"`` (:class:`ProcessExecutor`)
    One worker subprocess per episode, started with no inherited environment variables (no
    API keys; only ``PYTHONHASHSEED=0``, so that a replayed worker repeats itself), a private temporary working directory and OS limits
    (``resource``: address space, CPU seconds, open files, file size). The host enforces a
    wall-clock deadline per block and kills the worker when it passes. Messages are lines of
    JSON (:mod:`agentic_machines.execution.wire`); the host never unpickles anything.
``"namespace"``
    ``"process"`` inside Linux namespaces: no network, a read-only view of the filesystem,
    private size-limited tmpfs mounts for the scratch directory, ``/tmp`` and ``/dev/shm``,
    the host's socket directories hidden, its own process tree, no nested user namespace
    and the seccomp filter of :mod:`~agentic_machines.execution.seccomp`. Uses ``bwrap``
    (bubblewrap) when it works, else ``unshare`` from util-linux.

At both isolated levels the worker runs in a control group of its own when the host can
make one (:mod:`~agentic_machines.execution.cgroup`: ``memory_mb`` then bounds its
processes, tmpfs mounts and memfds together), ends every process a block started when the
block ends, and everything it sends is checked as hostile input (see
``docs/threat_model.md``).
``"strongest"``
    The best level that works on this machine; :func:`resolve_isolation` says which.

Failures are outcomes. A block that passes its deadline, runs out of memory, kills its worker
or breaks the protocol ends with status ``"timeout"``, ``"memory"`` or ``"died"`` and an
error named after :class:`~agentic_machines.errors.ExecutionTimeout`,
:class:`~agentic_machines.errors.ExecutionMemoryExceeded` or
:class:`~agentic_machines.errors.WorkerDied`; the harness goes on. The next request starts a
new worker and rebuilds its state by replaying the journal of messages the host sent before
the failed block (the worker is deterministic, so the replay reaches the same state; replies
are compared).

The outcome a wall-clock deadline (or the host's load) decided is noted as clock-dependent
(:mod:`agentic_machines.execution.clock`): the machine's h raises
:class:`~agentic_machines.errors.ClockDependent`, so it is never taken as a fact.

>>> ex = make_executor("inline")
>>> ex.namespace("main", Scaffold(values={"x": 2}))
>>> result = drive_rest(ex.run_block("main", "print(x * 21)"), None)
>>> result.status, result.stdout
('ok', '42\\n')
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import os
import select
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._text import clip
from ..errors import InvalidArgument, IsolationFallback, REPLNameError
from . import seccomp, wire
from .budget import positive_budget
from .cgroup import WorkerGroup
from .clock import note as note_clock
from .codeexec import (
    BlockResult,
    CallRecord,
    Handler,
    Namespace,
    Request,
    contained,
    cut_output,
    drive_rest,
    effect_function,
    finish,
    request_function,
    run_block,
)

__all__ = [
    "LEVELS",
    "Scaffold",
    "Limits",
    "Executor",
    "InlineExecutor",
    "ProcessExecutor",
    "make_executor",
    "resolve_isolation",
    "namespace_tool",
    "is_scripted",
    "FAILURE_STATUSES",
    "drive_rest",
    "worker_paths",
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
    :meth:`Executor.restore_scaffold`. ``effects``: functions the harness performs once
    per logged call (``act``); give the callables to :meth:`Executor.namespace`.
    ``requests``: functions whose calls interrupt the block for the harness's ``handle``
    (``llm_query``). ``finish``: the name of the function that ends a block with a value
    (``answer``). ``arguments``: the name of the function returning the current
    invocation's arguments (``get_args``). ``spawn_on_undefined_call``: calling an
    undefined name is a request of that name (REPL-Plan's child REPLs), and other uses of
    an undefined name raise ``REPLNameError``. ``builtins``: the primitives are builtins
    too (a shadowed or deleted primitive is found again).

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

    def names(self) -> frozenset[str]:
        """Every name the scaffold binds (with ``__builtins__`` and ``__name__``)."""
        extra = {n for n in (self.finish, self.arguments) if n}
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
        for name in (
            "timeout_s",
            "memory_mb",
            "cpu_s",
            "open_files",
            "file_size_mb",
            "replay_timeout_s",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise InvalidArgument(f"Limits.{name} must be a positive number, got {value!r}")


# --------------------------------------------------------------------------------------
# choosing a level
# --------------------------------------------------------------------------------------
def is_scripted(model: Any) -> bool:
    """True when ``model`` replays code the project (or the user) wrote, not a model's output.

    A model is scripted when it declares ``scripted = True``, as
    :class:`~agentic_machines.runtime.models.ScriptedModel`,
    :class:`~agentic_machines.runtime.models.MappingModel`, REPL-Plan's ``RoutedModel`` and
    the experiments' policies do (a marker rather than a type check, because the runtime
    layer sits above this one). Anything else (an ``OpenAICompatibleModel``, a cassette
    replay of one, a plain function) is not.

    >>> from agentic_machines.runtime.models import ScriptedModel, FunctionModel
    >>> is_scripted(ScriptedModel(["x"])), is_scripted(FunctionModel(str))
    (True, False)
    """
    return getattr(model, "scripted", False) is True


_TOOLS: dict[str, str | None] = {}  # tool -> None when it works, else why not
_NO_NAMESPACE_TOOL = (
    "isolation='namespace' needs bwrap (bubblewrap) or unshare (util-linux) with user "
    "namespaces; install bubblewrap (apt-get install bubblewrap) or use 'process'"
)


def namespace_tool() -> str | None:
    """``"bwrap"`` or ``"unshare"``: the first tool that can start a namespaced worker here.

    Each tool is tried once per process (the worker's own start-up inside it), so a tool
    that is installed but not permitted (no user namespaces), or that cannot reach the
    package or the interpreter, is not chosen. Falling back from ``bwrap`` to ``unshare``
    is never silent: it warns once, with :class:`~agentic_machines.errors.IsolationFallback`
    naming the reason.
    """
    for tool in ("bwrap", "unshare"):
        if tool not in _TOOLS:
            _TOOLS[tool] = _probe(tool)
            if tool == "unshare" and _TOOLS[tool] is None:
                warnings.warn(
                    IsolationFallback(
                        f"the namespace level uses unshare, not bubblewrap: {_TOOLS['bwrap']}. "
                        "unshare gives the worker its own namespaces but no seccomp filter; "
                        "install bubblewrap (apt-get install bubblewrap) for the stronger sandbox"
                    ),
                    stacklevel=2,
                )
        if _TOOLS[tool] is None:
            return tool
    return None


def _probe(tool: str) -> str | None:
    """None when ``tool`` starts a worker here, else the reason it does not."""
    if sys.platform != "linux":
        return f"{tool} needs Linux namespaces (this is {sys.platform})"
    if shutil.which(tool) is None:
        return f"{tool} is not installed"
    scratch = tempfile.mkdtemp(prefix="am-probe-")
    fd = _seccomp_fd() if tool == "bwrap" else None
    try:
        argv = _wrap(
            tool, scratch, [sys.executable, "-S", "-c", _PROBE, _PACKAGE_ROOT], seccomp_fd=fd
        )
        done = subprocess.run(
            argv,
            env={},
            cwd=scratch,
            capture_output=True,
            timeout=60,  # a start-up, even on a busy machine
            pass_fds=() if fd is None else (fd,),
        )
        if done.returncode == 0:
            return None
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"{tool} could not start a worker (exit code {done.returncode}{': ' + said[-1][:200] if said else ''})"
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{tool} could not start a worker ({type(exc).__name__}: {exc})"
    finally:
        if fd is not None:
            os.close(fd)
        shutil.rmtree(scratch, ignore_errors=True)


def _seccomp_fd() -> int | None:
    """A pipe's read end holding the seccomp program (None where there is none for this machine)."""
    prog = seccomp.program()
    if prog is None:
        return None
    read, write = os.pipe()
    try:
        os.write(write, prog)  # a few hundred bytes: within a pipe's buffer
    finally:
        os.close(write)
    return read


def resolve_isolation(isolation: str | None, model: Any = None) -> str:
    """The concrete level (``inline``, ``process`` or ``namespace``) for a requested one.

    ``None`` is the default: ``"inline"`` when ``model`` :func:`is_scripted`, otherwise
    ``"strongest"``. ``"strongest"`` is ``"namespace"`` when a namespace tool works, else
    ``"process"`` on POSIX systems. Asking for a level that cannot run here is an error.

    >>> resolve_isolation("inline"), resolve_isolation(None, model=None) in ("process", "namespace")
    ('inline', True)
    """
    if isolation is None:
        isolation = "inline" if model is not None and is_scripted(model) else "strongest"
    if isolation == "strongest":
        if os.name == "posix" and namespace_tool() is not None:
            return "namespace"
        if os.name == "posix":
            return "process"
        raise InvalidArgument(
            "no isolated executor works on this system (it needs POSIX); pass "
            "isolation='inline' by name to run trusted, scripted code in-process"
        )
    if isolation not in LEVELS:
        raise InvalidArgument(
            f"isolation must be one of {', '.join(LEVELS)} or 'strongest', got {isolation!r}"
        )
    if isolation == "process" and os.name != "posix":
        raise InvalidArgument("isolation='process' needs a POSIX system (resource limits)")
    if isolation == "namespace" and namespace_tool() is None:
        raise InvalidArgument(_NO_NAMESPACE_TOOL)
    return isolation


def make_executor(
    isolation: str | None = "strongest",
    *,
    timeout_s: float | None = None,
    limits: Limits | None = None,
    model: Any = None,
) -> Executor:
    """An executor at the requested level (see :func:`resolve_isolation`).

    >>> make_executor("inline").level
    'inline'
    """
    level = resolve_isolation(isolation, model)
    limits = limits or Limits()
    if timeout_s is not None:
        limits = dataclasses.replace(limits, timeout_s=timeout_s)
    if level == "inline":
        return InlineExecutor()
    return ProcessExecutor(level, limits)


# --------------------------------------------------------------------------------------
# the interface, and the in-process executor
# --------------------------------------------------------------------------------------
class Executor:
    """The one interface RLM and REPL-Plan use to run blocks (see the module docstring).

    ``level`` names the isolation; ``tool`` the namespace tool (``bwrap``/``unshare``) or
    None.
    """

    level = "inline"
    tool: str | None = None

    def namespace(
        self, key: str, scaffold: Scaffold, effects: Mapping[str, Callable[..., Any]] | None = None
    ) -> None:
        """Create the namespace ``key``; ``effects`` maps the scaffold's effect names to callables."""
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
        """Release the executor (stop its worker). Idempotent."""

    def describe(self) -> str:
        """The level, and the tool for ``namespace``.

        >>> InlineExecutor().describe()
        'inline'
        """
        return self.level if self.tool is None else f"{self.level} ({self.tool})"


class _Space:
    __slots__ = ("ns", "scaffold", "args")

    def __init__(self, ns: Namespace, scaffold: Scaffold, args: list) -> None:
        self.ns, self.scaffold, self.args = ns, scaffold, args


class InlineExecutor(Executor):
    """Runs blocks in this process: for trusted, scripted code only (no isolation).

    The isolated worker runs its blocks with an InlineExecutor too, so the semantics of the
    levels are one implementation.

    >>> ex = InlineExecutor()
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
        self, key: str, scaffold: Scaffold, effects: Mapping[str, Callable[..., Any]] | None = None
    ) -> None:
        effects = dict(effects or {})
        missing = [n for n in scaffold.effects if n not in effects]
        if missing:
            raise InvalidArgument(f"no callable given for the effect(s) {missing} of {key!r}")
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


# --------------------------------------------------------------------------------------
# the isolated executor (host side)
# --------------------------------------------------------------------------------------
class _Failure(Exception):
    """A worker failure; ``clock`` names the deadline or load that decided it, if any."""

    def __init__(self, status: str, detail: str, clock: str | None = None) -> None:
        super().__init__(detail)
        self.status, self.detail, self.clock = status, detail, clock


_OK = b'{"type":"ok"}\n'
_ALIVE = {"op": "run", "code": "pass", "line_budget": 100, "filename": "<alive>", "max_output": 100}


def _op_of(line: bytes) -> tuple[Any, Any]:
    """The ``op`` and ``ns`` of a message the host sent (its own, so well-formed)."""
    message = wire.loads(line)
    return message.get("op"), message.get("ns")


_MAX_MESSAGE = 64 * 1024 * 1024  # bytes of one message from the worker
_MAX_LIVE = 8  # workers alive at once in this process; idle ones beyond it are stopped
_LIVE: collections.OrderedDict[int, weakref.ref] = collections.OrderedDict()
_LIVE_LOCK = threading.Lock()  # executors of different threads share the cap
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The worker imports only the execution layer and the errors (not the package's __init__,
# which pulls in the whole toolkit): a stub package keeps its start fast.
_BOOT = (
    "import sys, types\n"
    "root = sys.argv[1]\n"
    "pkg = types.ModuleType('agentic_machines'); pkg.__path__ = [root + '/agentic_machines']\n"
    "sys.modules['agentic_machines'] = pkg\n"
    "sys.path[:] = [root] + [p for p in sys.path if p]\n"  # not the scratch dir: '' is cwd
    "from agentic_machines.execution.worker import main\n"
    "main(sys.argv[2:])\n"
)
# What a namespace tool is probed with: the worker's own start-up, without serving, so a
# tool that cannot reach the package or the interpreter (a checkout under a masked /tmp)
# fails the probe instead of every block.
_PROBE = _BOOT.replace("main(sys.argv[2:])\n", "")


def worker_paths() -> list[str]:
    """The paths a worker reads to start and to import: the package's code, the interpreter
    and its virtual environment, the standard library. Absolute, without repeats.

    The namespace level makes ``/tmp`` and a few other directories private to the worker;
    whichever of these paths lie there are mounted back, read-only, at the same places, so a
    checkout and a virtual environment under ``/tmp`` work like any other.

    >>> paths = worker_paths()
    >>> os.path.join(_PACKAGE_ROOT, "agentic_machines") in paths, sys.prefix in paths
    (True, True)
    """
    found = [os.path.join(_PACKAGE_ROOT, "agentic_machines")]
    for exe in (sys.executable, os.path.realpath(sys.executable)):
        found += [exe, os.path.dirname(exe)]
    # a virtual environment's pyvenv.cfg sits in its prefix; the base interpreter in its own
    found += [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix]
    found += [sysconfig.get_path(key) for key in ("stdlib", "platstdlib")]
    return list(dict.fromkeys(os.path.abspath(p) for p in found if p))


def masked_worker_paths(masked: list[str]) -> list[str]:
    """The :func:`worker_paths` that lie under the directories ``masked`` (made private to
    the worker) and exist, parents first, none inside another: what to mount back.

    >>> masked_worker_paths(["/nonexistent-mask"])
    []
    """
    chosen: list[str] = []
    for path in sorted(worker_paths(), key=len):  # parents first: a child is then covered
        under = any(path == m or path.startswith(m.rstrip("/") + "/") for m in masked)
        if not under or not os.path.exists(path):
            continue
        if any(path == c or path.startswith(c + "/") for c in chosen):
            continue
        chosen.append(path)
    return chosen


def _rebinds(masked: list[str]) -> list[str]:
    """bwrap arguments that mount the :func:`worker_paths` lying under ``masked`` back, read-only."""
    return [a for path in masked_worker_paths(masked) for a in ("--ro-bind", path, path)]


_HIDDEN = ("/run", "/var/run", "/var/tmp", "/var/lib/docker", "/var/lib/libvirt")
"""Directories hidden (an empty tmpfs on top) in a namespaced worker: where a host's Unix
sockets live. A seccomp rule refuses Unix sockets anyway; hiding them is a second wall."""

_MAX_PROCESSES = 256  # processes in a worker's control group (pids.max), when it has one


def _tmpfs_bytes(limits: Limits) -> int:
    # Each of the worker's three tmpfs mounts (/tmp, /dev/shm, scratch) holds at most a
    # quarter of its memory; under a control group their pages count against memory_mb too.
    return max(1, int(limits.memory_mb) // 4) * 1024 * 1024


def _wrap(
    tool: str | None,
    scratch: str,
    argv: list[str],
    limits: Limits | None = None,
    seccomp_fd: int | None = None,
) -> list[str]:
    """The command line that runs ``argv`` inside the namespace tool.

    Under ``bwrap``: a user namespace in which no further one can be made
    (``--disable-userns``), no capabilities, the filesystem read-only, ``/tmp``,
    ``/dev/shm`` and the scratch directory size-limited private tmpfs mounts, the
    directories of :data:`_HIDDEN` empty, and the seccomp filter of
    :mod:`~agentic_machines.execution.seccomp` read from ``seccomp_fd``.
    """
    size = str(_tmpfs_bytes(limits or Limits()))
    if tool == "bwrap":
        hiding = [d for d in _HIDDEN if os.path.isdir(d) and not os.path.islink(d)]
        hidden = [a for d in hiding for a in ("--tmpfs", d)]
        # after the private mounts: what the worker imports, where it lives
        back = _rebinds(["/tmp", "/dev", *hiding])
        return [
            "bwrap",
            "--unshare-all",  # network, pid, ipc, uts, cgroup
            "--unshare-user",
            "--disable-userns",  # no user namespace inside: no capabilities over new ones
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--size",
            size,
            "--tmpfs",
            "/dev/shm",
            "--proc",
            "/proc",
            "--size",
            size,
            "--tmpfs",
            "/tmp",
            *hidden,
            *back,
            "--size",
            size,
            "--tmpfs",
            scratch,
            "--chdir",
            scratch,
            *(["--seccomp", str(seccomp_fd)] if seccomp_fd is not None else []),
            "--clearenv",
            "--setenv",
            "PYTHONHASHSEED",
            "0",
            "--",
            *argv,
        ]
    if tool == "unshare":
        # unshare gives the namespaces; the worker itself remounts the filesystem read-only
        # (except the scratch directory) before it reads its first message. Its own PID
        # namespace with its own /proc: it sees only its processes, and it is not PID 1
        # there (worker._init_then_worker), so signals it sends itself take effect.
        return [
            "unshare",
            "--user",
            "--map-root-user",
            "--mount",
            "--net",
            "--ipc",  # System V shared memory is memory no tmpfs size bounds
            "--uts",
            "--pid",
            "--fork",
            "--mount-proc",
            "--kill-child",
            "--",
            *argv,
            # the worker mounts private tmpfs mounts of this size, hides _HIDDEN and loads
            # the seccomp filter itself (worker._readonly_except)
            *(["--readonly-except", scratch, size, *_HIDDEN] if argv[-1] != "pass" else []),
        ]
    return argv


def _user_processes() -> int:
    """How many processes this user runs (RLIMIT_NPROC counts them all)."""
    uid, count = os.getuid(), 0
    try:
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    count += os.stat(f"/proc/{name}").st_uid == uid
                except OSError:
                    pass
    except OSError:
        return 0
    return count


def _limit(limits: Limits, join: list[int] = (), nproc: int | None = None) -> Callable[[], None]:
    import resource  # here, not in apply: the child of a threaded host must not import

    def apply() -> None:  # runs in the child between fork and exec: C calls only
        for fd in join:  # into the worker's control group: all it starts is inside too
            os.write(fd, b"0")
        memory = int(limits.memory_mb) * 1024 * 1024
        cpu = int(limits.cpu_s)
        for which, value in (
            (resource.RLIMIT_AS, memory),
            (resource.RLIMIT_CPU, cpu),
            (resource.RLIMIT_NOFILE, int(limits.open_files)),
            (resource.RLIMIT_FSIZE, int(limits.file_size_mb) * 1024 * 1024),
            (resource.RLIMIT_CORE, 0),
        ):
            resource.setrlimit(which, (value, value))
        if nproc is not None:
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))

    return apply


class ProcessExecutor(Executor):
    """Runs blocks in a worker subprocess (``level`` ``"process"`` or ``"namespace"``).

    The worker starts at the first request that needs it and lives for the episode; the
    host keeps the journal of every message it sent, so a failed or stopped worker is
    replaced by one that replays the journal. Effects (``act``) run on the host: the worker
    asks for them by message. Values cross as :mod:`~agentic_machines.execution.wire` data.
    """

    def __init__(
        self, level: str = "process", limits: Limits | None = None, *, tool: str | None = None
    ) -> None:
        if level not in ("process", "namespace"):
            raise InvalidArgument(
                f"ProcessExecutor level is 'process' or 'namespace', got {level!r}"
            )
        if tool not in (None, "bwrap", "unshare"):
            raise InvalidArgument(f"tool must be 'bwrap', 'unshare' or None, got {tool!r}")
        self.level = level
        # tool: which namespace tool to use (default: the first that works, see namespace_tool)
        self.tool = (tool or namespace_tool()) if level == "namespace" else None
        if level == "namespace" and self.tool is None:
            raise InvalidArgument(_NO_NAMESPACE_TOOL)
        self.limits = limits or Limits()
        self._effects: dict[str, dict[str, Callable[..., Any]]] = {}
        self._journal: list[tuple[bytes, bytes]] = []  # (message sent, reply received)
        self._unsent = 0  # journal entries at its end that the live worker has not seen
        self._proc: subprocess.Popen | None = None
        self._buffer = b""
        self._scratch: str | None = None
        self._group: WorkerGroup | None = None  # the worker's control group, when it has one
        self._notice: _Failure | None = None  # a REPL reset the next block must report
        self._closed = False
        self._busy = False
        self._oom_mark = 0  # the host's OOM-kill count when the current block started
        # Rebuilding workers, reported apart from the blocks (see Limits.replay_timeout_s):
        self.replays = 0  # how many times a journal was replayed into a worker
        self.replay_seconds = 0.0  # wall-clock seconds spent replaying, in total
        self.workers_started = 0
        self._finalizer = weakref.finalize(self, _stop_process, [None], None)

    # -- worker lifetime -------------------------------------------------------------
    @property
    def scratch(self) -> str | None:
        """The worker's private working directory (None before the first worker starts)."""
        return self._scratch

    def _start(self) -> None:
        if self._closed:
            raise InvalidArgument("this executor is closed; make a new one")
        if self._scratch is None:
            self._scratch = tempfile.mkdtemp(prefix="am-scratch-")
        # -S: no site-packages (the worker needs the standard library only, and starts faster)
        argv = [sys.executable, "-S", "-c", _BOOT, _PACKAGE_ROOT]
        fd = _seccomp_fd() if self.tool == "bwrap" else None
        argv = _wrap(self.tool, self._scratch, argv, self.limits, fd)
        self._group = WorkerGroup.create(self.limits.memory_mb * 1024 * 1024, _MAX_PROCESSES)
        join = self._group.join_fds() if self._group is not None else []
        # no control group: RLIMIT_NPROC counts all of the user's processes, so the worker
        # may start _MAX_PROCESSES more than the user runs now (the kernel exempts root)
        nproc = None if self._group is not None else _user_processes() + _MAX_PROCESSES
        try:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=self._scratch,
                # no inherited variables; a fixed hash seed keeps a replayed worker deterministic
                env={"PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"},
                preexec_fn=_limit(self.limits, join, nproc),
                start_new_session=True,
                close_fds=True,
                pass_fds=() if fd is None else (fd,),
            )
        finally:
            for f in [*join, *([] if fd is None else [fd])]:
                os.close(f)
        self._buffer = b""
        self.workers_started += 1
        self._finalizer.detach()
        self._finalizer = weakref.finalize(
            self, _stop_process, [self._proc, self._group], self._scratch
        )
        with _LIVE_LOCK:
            _LIVE[id(self)] = weakref.ref(self)
            for other in self._evict_others():
                other._kill(locked=True)

    def _evict_others(self) -> list[ProcessExecutor]:
        # Idle workers of other executors are stopped past _MAX_LIVE (least recently used
        # first): each is rebuilt from its journal when needed again. A worker in the middle
        # of an exchange (another thread's) is never stopped.
        victims = []
        excess = len(_LIVE) - _MAX_LIVE
        for key, ref in list(_LIVE.items()):
            if excess <= 0:
                break
            other = ref()
            if other is None:
                del _LIVE[key]
                excess -= 1
            elif other is not self and not other._busy:
                del _LIVE[key]
                victims.append(other)
                excess -= 1
        return victims

    def _kill(self, locked: bool = False) -> None:
        proc, self._proc = self._proc, None
        group, self._group = self._group, None
        if locked:
            _LIVE.pop(id(self), None)
        else:
            with _LIVE_LOCK:
                _LIVE.pop(id(self), None)
        if proc is not None:
            _stop_process([proc, group], None)

    def _ensure(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            with _LIVE_LOCK:
                if id(self) in _LIVE:
                    _LIVE.move_to_end(id(self))
            pending = self._journal[len(self._journal) - self._unsent :]
            self._unsent = 0
            self._replay(pending, rebuilding=False)
            return
        self._kill()
        self._start()
        self._unsent = 0
        # the first worker only receives the setup deferred so far: not a rebuild
        self._replay(self._journal, rebuilding=self.workers_started > 1, starting=True)

    def _replay(
        self, entries: list[tuple[bytes, bytes]], rebuilding: bool, starting: bool = False
    ) -> None:
        # The replay has its own wall-clock budget (replay_timeout_s), spent here and
        # reported in replay_seconds, never charged to the block that needs the worker.
        # A worker just started answers its first message only once it has booted, so
        # the first worker's setup has that budget too (at least the block's deadline):
        # on a busy machine a boot slower than timeout_s is no timeout of any block.
        if not entries:
            return
        began = time.monotonic()
        budget = self.limits.replay_timeout_s if rebuilding else self.limits.timeout_s
        if starting and not rebuilding:
            budget = max(budget, self.limits.replay_timeout_s)
        deadline = began + budget
        running: list[Any] = []  # namespaces of the replayed blocks not yet ended
        block = index = 0  # where the outermost replayed block began; the entry being replayed
        try:
            for index, (sent, reply) in enumerate(entries):
                op, key = _op_of(sent)
                if op == "run":
                    block = block if running else index
                    running.append(key)
                self._send(sent)
                left = deadline - time.monotonic()
                got = self._receive(left, replaying=len(entries) if rebuilding or starting else 0)
                if wire.dumps(got) != reply:
                    self._kill()
                    raise _Failure(
                        "died",
                        "the new worker did not replay it the same way (the code is not "
                        "deterministic)",
                    )
                if got.get("type") == "result" and running:
                    key = running.pop()
                    if rebuilding and not running:
                        self._check_alive(key, deadline)
        except _Failure as failure:
            if not rebuilding:
                raise
            # A journal entry whose replay breaks the worker would break every new worker:
            # it is dropped (with what came after it) and the model is told the REPL was reset.
            in_block = running or _op_of(entries[index][0])[0] == "run"
            raise self._reset(block if in_block else index, failure) from None
        finally:
            if rebuilding:
                self.replays += 1
                self.replay_seconds += time.monotonic() - began

    def _check_alive(self, key: Any, deadline: float) -> None:
        # After each replayed block, an empty block in its namespace: a block that left the
        # worker unable to run the next one (a patched decoder, a value whose __deepcopy__
        # hangs) is found here, while it is the last one replayed.
        self._send(wire.dumps({**_ALIVE, "ns": key}))
        wait = min(deadline - time.monotonic(), float(self.limits.timeout_s))
        got = self._receive(wait, replaying=1)
        if got.get("type") != "result" or got.get("status") != "ok":
            self._kill()
            raise _Failure("died", "the worker could not run an empty block after it")

    def _reset(self, start: int, failure: _Failure) -> _Failure:
        """Drop the journal from the replayed entry ``start`` on; the failure the block sees."""
        self._kill()
        op, _ = _op_of(self._journal[start][0])
        line = ""
        if op == "run":
            code = wire.loads(self._journal[start][0]).get("code")
            line = code.strip().splitlines()[0][:80] if type(code) is str and code.strip() else ""
        blocks = sum(_op_of(e[0])[0] == "run" for e in self._journal[start:])
        self._forget_since(start)
        what = f"an earlier block (its first line: {line!r})" if line else "an earlier message"
        detail = failure.detail if failure.status != "timeout" else "it ran past the deadline"
        self._notice = _Failure(
            "died",
            f"the REPL was reset: replaying {what} into a new worker broke it ({detail}), so "
            f"that block and what came after it ({blocks} block(s) in all) were dropped and "
            "their variables are gone; this block did not run, so run it again",
            failure.clock,
        )
        return self._notice

    def _defer(self, message: dict) -> None:
        # Commands that only change the worker's state are journalled and sent before the
        # next exchange (one round trip fewer each; a harness that never runs a block never
        # starts a worker). A refusal surfaces as a failure of that exchange.
        self._journal.append((wire.dumps(message), _OK))
        if self._proc is not None:
            self._unsent += 1

    def _send(self, line: bytes) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write(line)
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise self._death() from None

    def _receive(self, timeout: float, replaying: int = 0) -> dict:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        fd = proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                self._kill()
                if replaying:
                    budget = self.limits.replay_timeout_s
                    raise _Failure(
                        "died",
                        f"replaying the {replaying} earlier message(s) into a new worker took "
                        f"longer than the replay's own {budget:g} s deadline (replay_timeout_s), "
                        "so the REPL's variables are lost; this block did not run",
                        f"the replay of the worker's journal ran past its own {budget:g} s "
                        "wall-clock deadline (replay_timeout_s)",
                    )
                raise _Failure(
                    "timeout",
                    f"{self.limits.timeout_s:g}",
                    f"the block ran past its {self.limits.timeout_s:g} s wall-clock deadline "
                    "(timeout_s) and its worker was stopped",
                )
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise self._death()
            self._buffer += chunk
            if len(self._buffer) > _MAX_MESSAGE:
                self._kill()
                raise _Failure("died", f"the worker sent a message over {_MAX_MESSAGE} bytes")
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            message = wire.loads(line)
        except ValueError as exc:
            self._kill()
            raise _Failure("died", f"the worker broke the message protocol: {exc}") from None
        if message.get("type") == "fatal":
            self._kill()
            status = "memory" if message.get("error") == "MemoryError" else "died"
            raise _Failure(status, "the worker ran out of memory outside the block")
        return message

    def _unasked(self) -> None:
        # The worker answers each message with exactly one line: anything on the channel
        # before the host has asked is a frame nobody requested (or the worker's death).
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        if not self._buffer and not select.select([proc.stdout.fileno()], [], [], 0)[0]:
            return
        chunk = self._buffer or os.read(proc.stdout.fileno(), 1 << 16)
        if not chunk:
            raise self._death()
        self._kill()
        raise _Failure("died", "the worker sent a message the host had not asked for")

    def _death(self) -> _Failure:
        proc = self._proc
        code = None
        if proc is not None:
            try:
                code = proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        out_of_memory = self._group is not None and self._group.out_of_memory()
        self._kill()
        if out_of_memory:  # the control group's bound, on the worker and all it holds
            return _Failure("memory", "the worker's control group ran out of memory")
        if code is not None and code > 128 and self.tool is not None:
            # PID 1 of the namespace (bwrap's, or worker._init_then_worker under unshare)
            # reports the worker's death by signal n as exit code 128 + n
            code = 128 - code
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            load = None
            if name == "SIGXCPU":
                why = "it used up its CPU-seconds limit"
                load = (
                    f"the worker used up its {self.limits.cpu_s} CPU-seconds limit (cpu_s): how "
                    "far it got depends on the machine's speed"
                )
            else:
                why = name
                if name == "SIGKILL" and _oom_kills() > self._oom_mark:
                    load = (
                        "the worker was killed while the host's out-of-memory killer was stopping "
                        "processes: the host's memory pressure, not the block, may have decided it"
                    )
            return _Failure("died", f"the worker was killed ({why})", load)
        return _Failure("died", f"the worker exited (exit code {code})")

    def _exchange(self, message: dict, clock: list[float] | None = None) -> dict:
        """Send one message and return the worker's one reply; journal both.

        ``clock`` holds the seconds left of the running block's deadline; the time spent
        waiting for the worker is charged to it.
        """
        with _LIVE_LOCK:  # an eviction (another thread's) never stops a busy worker
            self._busy = True
        try:
            self._ensure()
            line = wire.dumps(message)
            self._unasked()
            self._send(line)
            timeout = self.limits.timeout_s if clock is None else clock[0]
            start = time.monotonic()
            try:
                reply = self._receive(timeout)
            finally:
                if clock is not None:
                    clock[0] -= time.monotonic() - start
        finally:
            self._busy = False
        self._journal.append((line, wire.dumps(reply)))
        return reply

    def _query(self, message: dict) -> Any:
        try:
            reply = self._exchange(message)
        except _Failure as failure:
            if failure.clock is not None:
                note_clock(failure.clock)  # the prompt shows no value because of the clock
            return None
        if reply.get("type") != "value":
            self._kill()
            return None
        try:
            return wire.decode(reply.get("value"))
        except (ValueError, KeyError, TypeError, RecursionError):
            return None

    def close(self) -> None:
        self._closed = True
        self._kill()
        self._finalizer()
        if self._scratch is not None:
            remove_tree(self._scratch)

    # -- the interface -----------------------------------------------------------------
    def namespace(
        self, key: str, scaffold: Scaffold, effects: Mapping[str, Callable[..., Any]] | None = None
    ) -> None:
        effects = dict(effects or {})
        missing = [n for n in scaffold.effects if n not in effects]
        if missing:
            raise InvalidArgument(f"no callable given for the effect(s) {missing} of {key!r}")
        self._effects[key] = effects
        self._defer({"op": "namespace", "ns": key, "scaffold": scaffold.to_data()})

    def bind_request(self, key: str, name: str) -> None:
        self._defer({"op": "bind", "ns": key, "name": name})

    def restore_scaffold(self, key: str) -> None:
        self._defer({"op": "restore", "ns": key})

    def push_args(self, key: str, args: tuple) -> None:
        self._defer({"op": "push_args", "ns": key, "args": wire.encode(tuple(args))})

    def pop_args(self, key: str) -> None:
        self._defer({"op": "pop_args", "ns": key})

    def variables(self, key: str) -> list[tuple[str, bool]]:
        if self._closed:
            return []
        value = self._query({"op": "variables", "ns": key})
        if type(value) is not list:
            return []
        return [
            (p[0], bool(p[1]))
            for p in value
            if type(p) is list and len(p) == 2 and type(p[0]) is str
        ]

    def text_of(self, key: str, name: str) -> str | None:
        if self._closed:
            return None
        value = self._query({"op": "text_of", "ns": key, "name": name})
        return value if type(value) is str else None

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
        positive_budget(line_budget, "line_budget")
        if key not in self._effects:
            raise InvalidArgument(f"no namespace {key!r}; create it with namespace({key!r}, ...)")
        if self._notice is not None:  # a query's replay reset the REPL: the model learns it now
            notice, self._notice = self._notice, None
            return _failed(code, notice, self.limits)
        start = len(self._journal)
        self._oom_mark = _oom_kills()
        clock = [float(self.limits.timeout_s)]
        done = [0, 0]  # requests fulfilled, effects performed: what the result may claim
        message: dict = {
            "op": "run",
            "ns": key,
            "code": code,
            "line_budget": line_budget,
            "filename": filename,
            "max_output": max_output,
        }
        try:
            while True:
                reply = self._exchange(message, clock)
                kind = reply.get("type")
                if kind == "result":
                    return self._result(code, reply, max_output, done)
                if kind == "effect":
                    done[1] += 1
                    message = self._perform(key, reply)
                elif kind == "request":
                    request = self._request(reply)
                    if handle is None:
                        raise InvalidArgument(
                            f"the block requested {request.kind!r} but run_block got no "
                            "handle; pass handle=<generator function> to fulfil requests"
                        )
                    done[0] += 1
                    try:
                        value = yield from handle(request)
                    except Exception as exc:  # the call raises it inside the block on the rerun
                        message = {"op": "reply", "error": _error_data(exc)}
                    else:
                        message = {"op": "reply", "value": wire.encode(value)}
                else:
                    self._kill()
                    raise _Failure("died", f"the worker sent an unexpected {_shown(kind)} message")
        except _Failure as failure:
            self._forget_since(start)
            self._notice = None  # a reset is told by this failure itself
            if failure.clock is not None:
                note_clock(failure.clock)  # h raises ClockDependent (see execution.clock)
            return _failed(code, failure, self.limits)

    def _forget_since(self, start: int) -> None:
        # The failed block leaves no trace in the rebuilt worker (namespaces created
        # meanwhile are kept: REPLs the host knows about must exist in the next worker).
        dropped = self._journal[start:]
        del self._journal[start:]
        self._journal.extend(e for e in dropped if e[0].startswith(b'{"op":"namespace"'))
        self._unsent = 0
        self._kill()

    def _perform(self, key: str, reply: dict) -> dict:
        kind = reply.get("kind")
        fn = self._effects.get(key, {}).get(kind) if type(kind) is str else None
        if fn is None:
            self._kill()
            raise _Failure("died", f"the worker asked for an unknown effect {_shown(kind)}")
        try:
            args = wire.decode(reply.get("args", {"$tuple": []}))
            kwargs = wire.decode(reply.get("kwargs", {}))
            if type(args) is not tuple or type(kwargs) is not dict:
                raise ValueError("effect arguments must be a tuple and a dict")
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            self._kill()
            raise _Failure("died", f"the worker sent malformed effect arguments: {exc}") from None
        try:
            value = fn(*args, **kwargs)
        except Exception as exc:  # the effect failed once: the block sees the error
            return {"op": "reply", "error": _error_data(exc)}
        return {"op": "reply", "value": wire.encode(value)}

    def _request(self, reply: dict) -> Request:
        try:
            kind = reply["kind"]
            args = wire.decode(reply.get("args", {"$tuple": []}))
            kwargs = wire.decode(reply.get("kwargs", {}))
            if type(kind) is not str or type(args) is not tuple or type(kwargs) is not dict:
                raise ValueError("a request has a string kind, a tuple and a dict")
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            self._kill()
            raise _Failure("died", f"the worker sent a malformed request: {exc}") from None
        return Request(kind, args, kwargs)

    def _result(self, code: str, reply: dict, max_output: int, done: list[int]) -> BlockResult:
        # The worker runs model code, so its result is hostile input: every field is checked
        # against its type and against what the host itself saw happen (``done``: requests
        # fulfilled, effects performed), and the texts are cut to ``max_output`` here.
        try:
            status = _text(reply.get("status"))
            if status not in _STATUSES:
                raise ValueError(f"unknown status {_shown(status)}")
            attempts = reply.get("attempts", 1)
            if type(attempts) is not int or not 0 <= attempts <= done[0] + 1:
                raise ValueError(f"{_shown(attempts)} attempts after {done[0]} request(s)")
            calls = _list_of(reply.get("calls", []), 4, done[0] + done[1], "calls")
            calls = tuple(
                CallRecord(_text(c[0]), wire.decode(c[1]), wire.decode(c[2]), wire.decode(c[3]))
                for c in calls
            )
            hits = tuple(
                (_text(h[0]), h[1]) for h in _list_of(reply.get("hits", []), 2, len(calls), "hits")
            )
            if any(type(i) is not int or not 0 <= i < len(calls) for _, i in hits):
                raise ValueError("a cache hit names no logged call")
            result = BlockResult(
                code,
                cut_output(_text(reply.get("stdout")), max_output),
                cut_output(_text(reply.get("stderr")), max_output),
                status,
                wire.decode(reply.get("value")),
                _text(reply.get("error"))[:_MAX_NAME],
                attempts,
                calls,
                hits,
            )
        except (ValueError, KeyError, TypeError, IndexError, RecursionError) as exc:
            self._kill()
            raise _Failure("died", f"the worker sent a malformed result: {exc}") from None
        if result.status == "memory":
            self._kill()  # a worker that ran out of memory is not trusted to go on
            raise _Failure("memory", result.stderr)
        return result


_STATUSES = frozenset({"ok", "error", "finished", "budget", "diverged", "memory"})
_MAX_NAME = 200  # characters of an error's type name kept


def _list_of(value: Any, width: int, most: int, what: str) -> list:
    """``value`` as a list of at most ``most`` lists of ``width`` items, else ValueError."""
    if type(value) is not list or len(value) > most:
        raise ValueError(f"{what}: a list of at most {most} entries expected")
    if any(type(v) is not list or len(v) != width for v in value):
        raise ValueError(f"{what}: every entry is a list of {width} items")
    return value


def _shown(value: Any) -> str:
    """A short repr of a value the worker sent (for messages: it may be huge)."""
    if type(value) is str:
        value = value[:60]
    text = (
        repr(value) if type(value) in (str, int, float, bool, type(None)) else type(value).__name__
    )
    return clip(text, 60, "...")


def _text(value: Any) -> str:
    if value is None:
        return ""
    if type(value) is not str:
        raise TypeError("expected a string")
    return value


def _error_data(exc: BaseException) -> dict:
    name = type.__dict__["__name__"].__get__(type(exc), type)
    message = contained(lambda: str(exc), lambda err: "<unprintable>")
    data = {"type": name, "message": message}
    if isinstance(exc, NameError) and isinstance(getattr(exc, "name", None), str):
        data["name"] = exc.name
    return data


def _failed(code: str, failure: _Failure, limits: Limits) -> BlockResult:
    error = FAILURE_STATUSES[failure.status]
    if failure.status == "timeout":
        what = (
            f"the block ran longer than its {limits.timeout_s:g} s deadline and its worker was "
            "stopped"
        )
    elif failure.status == "memory":
        what = f"the block needed more than {limits.memory_mb} MB of memory and was stopped"
    else:
        what = failure.detail
    stderr = (
        f"{error}: {what}\n"
        if what.startswith("the REPL was reset")
        else f"{error}: {what}; the REPL's variables are as they were before this block "
        "(a new worker replays the earlier blocks)\n"
    )
    return BlockResult(code, "", stderr, failure.status, error=error)


def _oom_kills() -> int:
    """How many processes the kernel's out-of-memory killer has stopped since boot (0 if unknown)."""
    try:
        with open("/proc/vmstat", "rb") as f:
            for line in f:
                if line.startswith(b"oom_kill "):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _stop_process(holder: list, scratch: str | None) -> None:
    proc = holder[0] if holder else None
    group = holder[1] if len(holder) > 1 else None
    if proc is not None and proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the worker and anything it forked
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.kill()
        except OSError:
            pass
    if proc is not None:
        for stream in (proc.stdin, proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        # Not waited for: a killed worker is reaped when the subprocess module next polls
        # (a busy machine can take a while to tear down a large address space, and the
        # harness should not wait for it).
        proc.poll()
    if group is not None:
        group.remove()  # what the worker started, wherever it went (setsid included)
    if scratch is not None:
        remove_tree(scratch)


_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


def remove_tree(path: str) -> None:
    """Remove the directory ``path`` and everything in it; best effort, never raises.

    Iterative and by file descriptor, so that a tree the worker built cannot stop it: a chain
    of 1,500 nested directories is neither a ``RecursionError`` (``shutil.rmtree`` recurses
    in Python 3.11) nor ``ENAMETOOLONG`` (its path is longer than ``PATH_MAX``), and at most
    two descriptors are open at a time. Symbolic links are removed, never followed; a
    directory model code made unreadable is made readable first. Going back up with ``..``,
    each parent is checked to be the directory it came from (same device and inode), so a
    directory moved meanwhile stops the removal rather than leading it elsewhere.

    >>> root = tempfile.mkdtemp()
    >>> deep = os.path.join(root, *["d"] * 50)
    >>> os.makedirs(deep)
    >>> remove_tree(root), os.path.exists(root)
    (None, False)
    """
    try:
        fd = os.open(path, _DIR_FLAGS)
    except OSError:
        return
    stack: list[tuple[str, int, int]] = []  # (name in the parent, parent's device and inode)
    try:
        while True:
            sub = _empty_but_directories(fd)
            if sub is not None:
                try:
                    child = os.open(sub, _DIR_FLAGS, dir_fd=fd)
                except PermissionError:
                    os.chmod(sub, 0o700, dir_fd=fd)
                    child = os.open(sub, _DIR_FLAGS, dir_fd=fd)
                info = os.fstat(fd)
                stack.append((sub, info.st_dev, info.st_ino))
                os.close(fd)
                fd = child
                continue
            if not stack:
                break
            name, dev, ino = stack.pop()
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            info = os.fstat(fd)
            if (info.st_dev, info.st_ino) != (dev, ino):
                return  # moved while being removed: stop rather than remove elsewhere
            os.rmdir(name, dir_fd=fd)
    except OSError:
        return
    finally:
        os.close(fd)
    try:
        os.rmdir(path)
    except OSError:
        pass


def _empty_but_directories(fd: int) -> str | None:
    """Remove every non-directory in ``fd``; return the name of a subdirectory, if any."""
    for entry in list(os.scandir(fd)):
        if entry.is_dir(follow_symlinks=False):
            return entry.name
        os.unlink(entry.name, dir_fd=fd)
    return None
