"""The isolated runner, host side: :class:`ProcessRunner`.

One worker subprocess per episode (``"process"``, or ``"namespace"`` inside the
confinement of :mod:`~agentic_machines.execution.confine`) talks to the host in lines of
JSON (:mod:`~agentic_machines.execution.wire`). The host keeps the journal of what it
sent, enforces a wall-clock deadline per block, reads every reply as hostile input, and
after a failure starts a new worker that replays the journal (the worker is
deterministic, so the replay reaches the same state; replies are compared). Each namespace
has a worker of its own unless it shares an earlier one's (``share_with``), so a block that
patches its worker's code reaches only later blocks of its own interpreter
(docs/threat_model.md, the protocol).
"""

from __future__ import annotations

import collections
import os
import select
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Generator, Mapping
from typing import Any

from .._text import clip, counted, plural
from ..errors import InvalidArgument
from . import wire
from .budget import positive_budget
from .cgroup import WorkerGroup
from .clock import note as note_clock
from .codeexec import (
    BlockResult,
    CallRecord,
    Handler,
    Request,
    contained,
    cut_output,
)
from .confine import (
    MAX_PROCESSES,
    NO_NAMESPACE_TOOL,
    boot_argv,
    child_limits,
    confined_argv,
    namespace_tool,
    remove_ipc,
    remove_tree,
    seccomp_pipe,
    user_processes,
    worker_uid,
)
from .runner import FAILURE_STATUSES, BlockRunner, Limits, Scaffold, shared


# --------------------------------------------------------------------------------------
# the isolated runner (host side)
# --------------------------------------------------------------------------------------
class _Failure(Exception):
    """A worker failure; ``clock`` names the deadline or load that decided it, if any."""

    def __init__(self, status: str, detail: str, clock: str | None = None) -> None:
        super().__init__(detail)
        self.status, self.detail, self.clock = status, detail, clock


_ALIVE = {"op": "run", "code": "pass", "line_budget": 100, "filename": "<alive>", "max_output": 100}


def _tagged(message: dict) -> tuple[bytes, str]:
    """``message`` as a line with a new random id, and the id: the worker's reply must carry
    it (``re``), so a frame written before the host asked (a block's timer, a thread) is
    not taken for the reply."""
    tag = os.urandom(8).hex()
    return wire.dumps({**message, "id": tag}), tag


def _tag_of(line: bytes) -> Any:
    """The id of a message the host sent (its own, so well-formed)."""
    return wire.loads(line).get("id")


def _op_of(line: bytes) -> tuple[Any, Any]:
    """The ``op`` and ``ns`` of a message the host sent (its own, so well-formed)."""
    message = wire.loads(line)
    return message.get("op"), message.get("ns")


_MAX_MESSAGE = 64 * 1024 * 1024  # bytes of one message from the worker
_MAX_LIVE = 8  # workers alive at once in this process; idle ones beyond it are stopped
_LIVE: collections.OrderedDict[int, weakref.ref] = collections.OrderedDict()
_LIVE_LOCK = threading.Lock()  # runners of different threads share the cap
_INHERITED: list[Any] = []  # a fork's copies of its parent's workers: kept, never closed


class ProcessRunner(BlockRunner):
    """Runs blocks in a worker subprocess (``level`` ``"process"`` or ``"namespace"``).

    The worker starts at the first request that needs it and lives for the episode; the
    host keeps the journal of every message it sent, so a failed or stopped worker is
    replaced by one that replays the journal. Effects (``act``) run on the host: the worker
    asks for them by message. Values cross as :mod:`~agentic_machines.execution.wire` data.
    The runner serves its first namespace itself and hands every other one to a runner of
    its own (a worker, a journal and a scratch directory each), unless ``share_with`` names
    the namespace whose worker it joins: namespaces of different workers meet only through
    the host, as data, so what a block does to its worker never reaches them.
    """

    def __init__(
        self, level: str = "process", limits: Limits | None = None, *, tool: str | None = None
    ) -> None:
        if level not in ("process", "namespace"):
            raise InvalidArgument(f"ProcessRunner level is 'process' or 'namespace', got {level!r}")
        if tool not in (None, "bwrap", "unshare"):
            raise InvalidArgument(f"tool must be 'bwrap', 'unshare' or None, got {tool!r}")
        self.level = level
        # tool: which namespace tool to use (default: the first that works, see namespace_tool)
        self.tool = (tool or namespace_tool()) if level == "namespace" else None
        if level == "namespace" and self.tool is None:
            raise InvalidArgument(NO_NAMESPACE_TOOL)
        self.limits = limits or Limits()
        self._effects: dict[str, dict[str, Callable[..., Any]]] = {}
        self._journal: list[tuple[bytes, bytes]] = []  # (message sent, reply received)
        self._unsent = 0  # journal entries at its end that the live worker has not seen
        self._proc: subprocess.Popen | None = None
        self._buffer = b""
        self._tag: Any = None  # the id of the last message sent (see _tagged)
        self._uid: int | None = None  # the workers' uid on a root host (confine.worker_uid)
        self._scratch: str | None = None
        self._scratch_owner = 0  # the process that made the scratch (only it removes it)
        self._group: WorkerGroup | None = None  # the worker's control group, when it has one
        self._notice: _Failure | None = None  # a REPL reset the next block must report
        self._closed = False
        self._busy = False
        self._oom_mark = 0  # the host's OOM-kill count when the current block started
        # Rebuilding workers, reported apart from the blocks (see Limits.replay_timeout_s):
        self._replays = 0  # how many times a journal was replayed into a worker
        self._replay_seconds = 0.0  # wall-clock seconds spent replaying, in total
        self._started = 0  # workers started for the first namespace
        self._first: str | None = None  # the namespace this runner serves itself
        self._others: dict[str, ProcessRunner] = {}  # every other one, by key
        self._finalizer = weakref.finalize(self, _stop_process, [None], None)
        # The process whose worker and scratch these are: a fork of it (an agent's next
        # step in its worker process) leaves them to it and starts a worker of its own.
        self._owner = os.getpid()

    # -- worker lifetime -------------------------------------------------------------
    @property
    def scratch(self) -> str | None:
        """The first namespace's worker's private working directory (None before it starts)."""
        return self._scratch

    def _all(self) -> list[ProcessRunner]:
        return [self, *{id(r): r for r in self._others.values()}.values()]

    @property
    def replays(self) -> int:
        """How many times a journal was replayed into a new worker (every namespace's)."""
        return sum(r._replays for r in self._all())

    @property
    def replay_seconds(self) -> float:
        """Wall-clock seconds spent replaying journals, in total."""
        return sum(r._replay_seconds for r in self._all())

    @property
    def workers_started(self) -> int:
        """How many workers were started, for every namespace."""
        return sum(r._started for r in self._all())

    def _start(self) -> None:
        if self._closed:
            raise InvalidArgument("this runner is closed; make a new one")
        if self._scratch is None:
            # a root host's workers run as an unprivileged uid of this runner's own
            self._uid = worker_uid()
            self._scratch = tempfile.mkdtemp(prefix="am-scratch-")
            self._scratch_owner = os.getpid()
            if self._uid is not None:
                os.chown(self._scratch, self._uid, self._uid)
        uid = self._uid
        self._owner = os.getpid()  # the scratch stays its creator's (see _forget_inherited)
        fd = seccomp_pipe() if self.tool == "bwrap" else None
        argv = confined_argv(self.tool, self._scratch, boot_argv(), self.limits, fd, uid)
        self._group = WorkerGroup.create(self.limits.memory_mb * 1024 * 1024, MAX_PROCESSES)
        join = self._group.join_fds() if self._group is not None else []
        # no control group: RLIMIT_NPROC counts all of the uid's processes, so the worker
        # may start MAX_PROCESSES more than that uid runs now (the kernel exempts root)
        nproc = None if self._group is not None else user_processes(uid) + MAX_PROCESSES
        fds = [] if fd is None else [fd]
        try:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=self._scratch,
                # no inherited variables; a fixed hash seed keeps a replayed worker deterministic
                env={"PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"},
                preexec_fn=child_limits(self.limits, join, nproc),
                start_new_session=True,
                close_fds=True,
                pass_fds=fds,
            )
        finally:
            for f in [*join, *fds]:
                os.close(f)
        self._buffer = b""
        self._started += 1
        self._finalizer.detach()
        self._finalizer = weakref.finalize(
            self,
            _stop_process,
            [self._proc, self._group, self._ipc_owner(), os.getpid()],
            self._scratch if self._scratch_owner == os.getpid() else None,
        )
        with _LIVE_LOCK:
            _LIVE[id(self)] = weakref.ref(self)
            for other in self._evict_others():
                other._kill(locked=True)

    def _evict_others(self) -> list[ProcessRunner]:
        # Idle workers of other runners are stopped past _MAX_LIVE (least recently used
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

    def _forget_inherited(self) -> None:
        """In a fork of the runner's process: the live worker is the parent's. Forget it
        without stopping it (nor closing its pipes, which the parent still uses); the next
        block starts a worker of this process that replays the journal, so two branches of
        a run never share a REPL."""
        if self._owner == os.getpid():
            return
        self._finalizer.detach()
        _INHERITED.append((self._proc, self._group))  # never closed here: the parent's
        self._proc, self._group, self._buffer = None, None, b""
        self._owner = os.getpid()

    def _kill(self, locked: bool = False) -> None:
        self._forget_inherited()
        proc, self._proc = self._proc, None
        group, self._group = self._group, None
        if locked:
            _LIVE.pop(id(self), None)
        else:
            with _LIVE_LOCK:
                _LIVE.pop(id(self), None)
        if proc is not None:
            _stop_process([proc, group, self._ipc_owner()], None)

    def _ipc_owner(self) -> int | None:
        # At the process level the worker shares the host's IPC namespace: what its uid
        # created is removed when it stops (a namespaced worker's IPC ends with it).
        return self._uid if self.tool is None else None

    def _ensure(self) -> None:
        self._forget_inherited()
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
        self._replay(self._journal, rebuilding=self._started > 1, starting=True)

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
                self._send(sent, _tag_of(sent))
                left = deadline - time.monotonic()
                got = self._receive(left, replaying=len(entries) if rebuilding or starting else 0)
                if wire.dumps(got) != reply:
                    raise self._died(
                        "the new worker did not replay it the same way (the code is not "
                        "deterministic)"
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
                self._replays += 1
                self._replay_seconds += time.monotonic() - began

    def _check_alive(self, key: Any, deadline: float) -> None:
        # After each replayed block, an empty block in its namespace: a block that left the
        # worker unable to run the next one (a patched decoder, a value whose __deepcopy__
        # hangs) is found here, while it is the last one replayed.
        self._send(*_tagged({**_ALIVE, "ns": key}))
        wait = min(deadline - time.monotonic(), float(self.limits.timeout_s))
        got = self._receive(wait, replaying=1)
        if got.get("type") != "result" or got.get("status") != "ok":
            raise self._died("the worker could not run an empty block after it")

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
            f"that block and what came after it ({counted(blocks, 'block')} in all) were dropped and "
            "their variables are gone; this block did not run, so run it again",
            failure.clock,
        )
        return self._notice

    def _defer(self, message: dict) -> None:
        # Commands that only change the worker's state are journalled and sent before the
        # next exchange (one round trip fewer each; a harness that never runs a block never
        # starts a worker). A refusal surfaces as a failure of that exchange.
        line, tag = _tagged(message)
        self._journal.append((line, wire.dumps({"type": "ok", "re": tag})))
        if self._proc is not None:
            self._unsent += 1

    def _send(self, line: bytes, tag: Any) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        self._tag = tag  # the id the next frame from the worker must carry
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
                        f"replaying the {counted(replaying, 'earlier message')} into a new worker took "
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
                raise self._died(f"the worker sent a message over {_MAX_MESSAGE} bytes")
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            message = wire.loads(line)
        except ValueError as exc:
            raise self._died(f"the worker broke the message protocol: {exc}") from None
        if message.get("re") != self._tag:
            raise self._died(
                "the worker sent a frame that is not the reply to the host's last message "
                "(its id does not match: written before the host asked, by a timer or a "
                "thread of an earlier block)"
            )
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
        raise self._died("the worker sent a message the host had not asked for")

    def _died(self, detail: str) -> _Failure:
        """Stop the worker, which broke the protocol and is no longer trusted; the failure
        (status ``died``) the block sees."""
        self._kill()
        return _Failure("died", detail)

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
            line, tag = _tagged(message)
            self._unasked()
            self._send(line, tag)
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
        for other in self._all()[1:]:
            other.close()
        self._closed = True
        self._kill()
        self._finalizer()
        if self._scratch is not None and self._scratch_owner == os.getpid():
            remove_tree(self._scratch)

    # -- the interface -----------------------------------------------------------------
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
        shared(share_with, [*self._effects, *self._others])
        owner = key if share_with is None else share_with
        self._first = owner if self._first is None else self._first
        if owner != self._first:  # a worker of its own, or the one it shares (class docstring)
            if self._closed:
                raise InvalidArgument("this runner is closed; make a new one")
            runner = self._others.get(owner) or ProcessRunner(
                self.level, self.limits, tool=self.tool
            )
            self._others[owner] = self._others[key] = runner
            runner.namespace(key, scaffold, effects, share_with=None if key == owner else owner)
            return
        self._effects[key] = effects
        self._defer({"op": "namespace", "ns": key, "scaffold": scaffold.to_data()})

    def bind_request(self, key: str, name: str) -> None:
        if key in self._others:
            return self._others[key].bind_request(key, name)
        self._defer({"op": "bind", "ns": key, "name": name})

    def restore_scaffold(self, key: str) -> None:
        if key in self._others:
            return self._others[key].restore_scaffold(key)
        self._defer({"op": "restore", "ns": key})

    def push_args(self, key: str, args: tuple) -> None:
        if key in self._others:
            return self._others[key].push_args(key, args)
        self._defer({"op": "push_args", "ns": key, "args": wire.encode(tuple(args))})

    def pop_args(self, key: str) -> None:
        if key in self._others:
            return self._others[key].pop_args(key)
        self._defer({"op": "pop_args", "ns": key})

    def variables(self, key: str) -> list[tuple[str, bool]]:
        if key in self._others:
            return self._others[key].variables(key)
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
        if key in self._others:
            return self._others[key].text_of(key, name)
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
        if key in self._others:
            return (
                yield from self._others[key].run_block(
                    key,
                    code,
                    handle=handle,
                    line_budget=line_budget,
                    filename=filename,
                    max_output=max_output,
                )
            )
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
                    raise self._died(f"the worker sent an unexpected {_shown(kind)} message")
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
            raise self._died(f"the worker asked for an unknown effect {_shown(kind)}")
        try:
            args, kwargs = _arguments(reply)
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            raise self._died(f"the worker sent malformed effect arguments: {exc}") from None
        try:
            value = fn(*args, **kwargs)
        except Exception as exc:  # the effect failed once: the block sees the error
            return {"op": "reply", "error": _error_data(exc)}
        return {"op": "reply", "value": wire.encode(value)}

    def _request(self, reply: dict) -> Request:
        try:
            kind = reply["kind"]
            if type(kind) is not str:
                raise ValueError(f"a request's kind is a string, not {_shown(kind)}")
            args, kwargs = _arguments(reply)
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            raise self._died(f"the worker sent a malformed request: {exc}") from None
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
                raise ValueError(f"{_shown(attempts)} attempts after {counted(done[0], 'request')}")
            rows = _list_of(reply.get("calls", []), 4, done[0] + done[1], "calls")
            calls = tuple(
                CallRecord(_text(c[0]), wire.decode(c[1]), wire.decode(c[2]), wire.decode(c[3]))
                for c in rows
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
            raise self._died(f"the worker sent a malformed result: {exc}") from None
        if result.status == "memory":
            self._kill()  # a worker that ran out of memory is not trusted to go on
            raise _Failure("memory", result.stderr)
        return result


_STATUSES = frozenset({"ok", "error", "finished", "budget", "diverged", "memory"})
_MAX_NAME = 200  # characters of an error's type name kept


def _arguments(reply: dict) -> tuple[tuple, dict]:
    """The decoded ``args`` and ``kwargs`` of an effect or request message from the worker;
    ValueError (or the decoder's error) unless they are a tuple and a dict."""
    args = wire.decode(reply.get("args", {"$tuple": []}))
    kwargs = wire.decode(reply.get("kwargs", {}))
    if type(args) is not tuple or type(kwargs) is not dict:
        raise ValueError("the arguments must be a tuple and a dict")
    return args, kwargs


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
    if len(holder) > 3 and holder[3] != os.getpid():
        return  # a fork's copy of the runner: the worker is its parent's to stop
    proc = holder[0] if holder else None
    group = holder[1] if len(holder) > 1 else None
    ipc_owner = holder[2] if len(holder) > 2 else None
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
    if ipc_owner is not None and proc is not None:
        remove_ipc(ipc_owner)
    if scratch is not None:
        remove_tree(scratch)
