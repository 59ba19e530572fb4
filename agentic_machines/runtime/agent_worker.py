"""Agent functions in worker processes: a zygote, states held by suspended processes.

The process side of ``agent_machine(fn, isolation="process")``. The *zygote*, a fork of
the checker, only forks; a *holder* is a run suspended in the agent's ``model(prompt)``
at a state. A step forks a holder (or the zygote), feeds the child its completions and
reads its report: the prompt or the end, the step's ``@effect`` executions, output and
clock notes. docs/determinism.md says the protocol and what each run starts from.
"""

from __future__ import annotations

import asyncio.events as asyncio_events
import faulthandler
import functools
import io
import os
import pickle
import random
import select
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
import traceback
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import BudgetExceeded, WrongType
from ..execution import clock
from ..execution.budget import LineBudget, uncharged
from .harness import RunCache

__all__ = ["Pool", "AgentRaised", "can_fork", "current"]

_HEAD = struct.Struct("!I")
_CLOCK = ("clock",)
_SEED = 0  # the module-level random generator's seed at every run's start
_OUTPUT_MAX = 100_000  # characters of one step's output kept (the rest is cut, and said)
_HOST_ENDS: weakref.WeakSet[socket.socket] = weakref.WeakSet()  # the checker's socket ends


def can_fork() -> bool:
    """Whether this platform can run agents in forked workers.

    >>> isinstance(can_fork(), bool)
    True
    """
    return hasattr(os, "fork") and hasattr(socket, "send_fds")


def _forget_host_ends() -> None:
    # A forked child (a zygote, a pool's worker) must not keep the checker's ends of other
    # machines' sockets open: their holders exit when those ends close.
    for end in list(_HOST_ENDS):
        try:
            end.close()
        except OSError:
            pass
    _HOST_ENDS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_host_ends)


# -- messages: a length, then a pickle; a fork command carries the child's socket --------
def _send(sock: socket.socket, obj: Any, fd: int | None = None) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    msg = _HEAD.pack(len(data)) + data
    if fd is None:
        sock.sendall(msg)
        return
    sent = socket.send_fds(sock, [msg], [fd])
    if sent < len(msg):
        sock.sendall(msg[sent:])


def _exactly(sock: socket.socket, n: int, got: bytes = b"") -> bytes | None:
    parts = [got]
    have = len(got)
    while have < n:
        chunk = sock.recv(n - have)
        if not chunk:
            return None
        parts.append(chunk)
        have += len(chunk)
    return b"".join(parts)


def _recv(sock: socket.socket, with_fd: bool = False) -> tuple[Any, int | None]:
    """The next message (``None`` at end of stream) and the descriptor it carried."""
    fd = None
    if with_fd:
        head, fds, _, _ = socket.recv_fds(sock, _HEAD.size, 1)
        fd = fds[0] if fds else None
    else:
        head = sock.recv(_HEAD.size)
    if not head:
        return None, fd
    whole = _exactly(sock, _HEAD.size, head)
    if whole is None:
        return None, fd
    body = _exactly(sock, _HEAD.unpack(whole)[0])
    return (None if body is None else pickle.loads(body)), fd


def _dump(value: Any) -> bytes | None:
    try:
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - an unpicklable value is shown by its repr
        return None


def _flush() -> None:
    for stream in {
        id(s): s for s in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__)
    }.values():
        try:
            stream.flush()  # type: ignore[union-attr]
        except Exception:  # noqa: BLE001 - a stream the agent broke or closed
            pass


@dataclass(frozen=True)
class AgentRaised:
    """The outcome record of an agent function that raised: exception type and message.

    ``traceback`` (the formatted traceback) is kept for reports and ignored by ``==``.

    >>> AgentRaised("ValueError", "bad tool argument")
    AgentRaised(type='ValueError', message='bad tool argument')
    >>> print(AgentRaised("ValueError", "bad tool argument"))
    ValueError: bad tool argument
    """

    type: str
    message: str
    traceback: str = field(default="", compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.type}: {self.message}" if self.message else self.type

    @classmethod
    def of(cls, exc: BaseException) -> AgentRaised:
        """The record of the exception ``exc``."""
        return cls(
            type(exc).__name__,
            str(exc),
            "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
        )


def prompt_error(prompt: Any) -> WrongType:
    """The error of an agent that called its model with ``prompt``, which is no string.

    >>> type(prompt_error(3)).__name__
    'WrongType'
    """
    return WrongType(
        f"the agent called model({prompt!r}); a prompt is a string (P = str): pass str(...) "
        "of what the model should read"
    )


def thread_error() -> RuntimeError:
    """The error of an agent that called its model from another thread or coroutine.

    >>> "own flow of control" in str(thread_error())
    True
    """
    return RuntimeError(
        "the agent called its model from another thread or coroutine than its own; "
        "call model(prompt) from the agent function's own flow of control"
    )


def tool_name(fn: Any) -> str:
    """The name an effect's tool is logged under (a ``partial`` is its function's tool).

    >>> tool_name(functools.partial(print, "x"))
    'print'
    """
    while isinstance(fn, functools.partial):  # a partial is its function's tool
        fn = fn.func
    return getattr(fn, "__qualname__", None) or getattr(fn, "name", None) or type(fn).__name__


def shown_args(args: tuple, kwargs: dict) -> str:
    """A call's arguments as the text that keys its record (``?`` without a repr).

    >>> shown_args((1,), {"to": "a"})
    "((1,), [('to', 'a')])"
    """
    try:
        return repr((args, sorted(kwargs.items())))
    except Exception:  # noqa: BLE001 - an argument without a repr: key on the tool only
        return "?"


@uncharged  # the budget counts the agent's lines, never this bookkeeping
def budget_on(limit: int) -> LineBudget:
    """Start counting the running agent's lines against ``limit`` (its step begins).

    >>> budget_off(budget_on(1_000))
    """
    return LineBudget(limit).__enter__()  # the last line: nothing after it is counted


@uncharged
def budget_off(budget: LineBudget) -> None:
    """Stop counting: the step reached its model call."""
    budget.__exit__(None, None, None)


# -- inside a worker ----------------------------------------------------------------------
_WORKER: list[_Worker] = []  # the run this process is (set in a forked child only)


def current() -> _Worker | None:
    """The run of this process when it is an agent's worker, else ``None``."""
    return _WORKER[0] if _WORKER else None


class _Worker:
    """One process's side of the protocol: a server (zygote or holder) and, once forked,
    the run of the agent it feeds."""

    def __init__(self, spec: tuple, sock: socket.socket) -> None:
        self.fn, self.args, self.kwargs, self.line_budget, self.zygote_pid = spec
        self.sock = sock
        self.feed: list[str] = []  # completions still to feed, the next one last
        self.recorded: dict[int, dict[tuple, bytes]] = {}
        self.index = 0  # completions consumed so far: the step the run is in
        self.events: list[tuple] = []  # effect executions: (index, tool, args, n, ok, blob)
        self.counts: dict[tuple, int] = {}
        self.lock = threading.Lock()
        self.kids: set[int] = set()
        self.statuses: dict[int, int] = {}
        self.budget: LineBudget | None = None
        self.seen: list[str] = []
        self.note: bytes | None = None  # state_note's value for the next prompt (pickled)
        self.out = -1
        self.thread = 0

    # -- serving -----------------------------------------------------------------------
    def serve(self) -> None:
        """Answer commands until asked to fork; returns in the forked child only."""
        zygote = os.getpid() == self.zygote_pid
        while True:
            self._reap(zygote)
            if zygote:  # wake now and then to reap orphans (the zygote is their subreaper)
                if not select.select([self.sock], [], [], 1.0)[0]:
                    continue
            try:
                msg, fd = _recv(self.sock, with_fd=True)
            except OSError:
                msg, fd = None, None
            if msg is None:
                os._exit(0)  # the checker dropped this state (or is gone)
            if msg[0] == "status":
                _send(self.sock, ("status", self._status(msg[1])))
                continue
            command, completions, recorded = msg
            _flush()
            take = command == "take"  # the state's last step: run it here, without a fork
            drawn = random.getstate()  # a fork reseeds random (its at-fork hook): undo it
            pid = os.getpid() if take else os.fork()
            if take:
                _send(self.sock, ("forked", pid))
            if take or pid == 0:
                self.sock.close()
                self.sock = socket.socket(fileno=fd)  # type: ignore[arg-type]
                self.feed = list(reversed(completions))
                self.recorded = recorded
                if not take:
                    random.setstate(drawn)
                    self.kids, self.statuses = set(), {}
                    self._capture()
                return
            os.close(fd)  # type: ignore[arg-type]
            self.kids.add(pid)
            _send(self.sock, ("forked", pid))

    def _reap(self, everyone: bool) -> None:
        while everyone:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if not pid:
                return
            self._keep(pid, status)
        for pid in list(self.kids):
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                self.kids.discard(pid)
                continue
            if done:
                self._keep(pid, status)

    def _keep(self, pid: int, status: int) -> None:
        self.kids.discard(pid)
        self.statuses[pid] = status
        while len(self.statuses) > 1000:
            del self.statuses[next(iter(self.statuses))]

    def _status(self, pid: int) -> int | None:
        for _ in range(200):  # the child closed its socket: it is dead or about to be
            self._reap(os.getpid() == self.zygote_pid)
            if pid in self.statuses:
                return self.statuses.pop(pid)
            if pid not in self.kids and os.getpid() != self.zygote_pid:
                return None
            time.sleep(0.005)
        return None

    def _capture(self) -> None:
        """Send fds 1 and 2 to a file of this process's own: its steps' printed output."""
        if hasattr(os, "memfd_create"):
            fd = os.memfd_create("agent-output")
        else:  # pragma: no cover - platforms without memfd
            fd = os.dup(tempfile.TemporaryFile().fileno())
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        self.out = fd

    def _output(self) -> str:
        _flush()
        size = os.fstat(self.out).st_size
        data = os.pread(self.out, min(size, 4 * _OUTPUT_MAX), 0) if size else b""
        if size:
            os.ftruncate(self.out, 0)
            os.lseek(1, 0, os.SEEK_SET)
        text = data.decode("utf-8", "replace")
        if len(text) > _OUTPUT_MAX or size > len(data):
            text = text[:_OUTPUT_MAX] + f"\n[output cut: {size} bytes in all]"
        return text

    # -- running ------------------------------------------------------------------------
    def run(self) -> None:
        """Run the agent function from its start (in a fork of the zygote); never returns."""
        _WORKER[:] = [self]
        self.thread = threading.get_ident()
        watch = clock.watching()
        self.seen = watch.__enter__()
        try:
            try:
                self._enter()
                value = self.fn(self.model, *self.args, **self.kwargs)
            finally:
                self._leave()
        except BudgetExceeded:
            end: tuple = ("diverge",)
        except BaseException as exc:  # noqa: BLE001 - SystemExit too: the agent's outcome
            end = ("raise", AgentRaised.of(exc))
        else:
            blob = _dump(value)
            end = ("return", blob, None if blob is not None else _safe_repr(value))
        self._report(end)
        _flush()
        os._exit(0)

    @uncharged  # the line budget counts the agent's lines, not this bookkeeping
    def model(self, prompt: str) -> str:
        """The ``model(prompt) -> str`` the agent calls: the end of a step."""
        if type(prompt) is not str and not isinstance(prompt, str):
            raise prompt_error(prompt)
        if threading.get_ident() != self.thread:
            raise thread_error()
        self._leave()
        note, self.note = self.note, None
        if self.feed:  # a replayed step: its output was shown when it first ran
            self._output()
            self.seen.clear()
        else:
            self._report(("prompt", prompt, note))
            # asyncio forgets a running loop in a forked child (it checks the pid): an
            # agent that calls its model inside asyncio.run goes on with its loop
            running = asyncio_events._get_running_loop()
            self.serve()
            if running is not None:
                asyncio_events._set_running_loop(running)
        self.index += 1
        self.counts = {}
        completion = self.feed.pop()
        self._enter()
        return completion

    @uncharged
    def _enter(self) -> None:
        if self.line_budget is not None:
            self.budget = budget_on(self.line_budget)

    @uncharged
    def _leave(self) -> None:
        if self.budget is not None:
            budget, self.budget = self.budget, None
            budget_off(budget)

    def _report(self, what: tuple) -> None:
        try:
            threads = threading.active_count()
            _send(
                self.sock,
                (what, self.index, self.events, self._output(), list(self.seen), threads),
            )
        except OSError:
            os._exit(0)  # the checker is gone
        self.events = []
        self.seen.clear()

    def set_note(self, value: Any) -> None:
        """Keep ``value`` (pickled; dropped when it cannot be) for the next prompt's report."""
        self.note = _dump(value)

    def effect(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        name, shown = tool_name(fn), shown_args(args, kwargs)
        with self.lock:  # an SDK may run tools in threads
            n = self.counts.get((name, shown), 0)
            self.counts[(name, shown)] = n + 1
            index = self.index
        blob = self.recorded.get(index, {}).get((name, shown, n))
        if blob is not None:
            ok, value = pickle.loads(blob)  # a fresh copy for every run that replays it
            if ok:
                return value
            raise value
        try:
            value = fn(*args, **kwargs)
        except Exception as exc:
            self.events.append((index, name, shown, n, False, _dump((False, exc))))
            raise
        self.events.append((index, name, shown, n, True, _dump((True, value))))
        return value


def _safe_repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception as exc:  # noqa: BLE001 - a repr that fails is shown by its failure
        return f"<unrepresentable {type(value).__name__}: {exc}>"


def _zygote(spec: tuple, sock: socket.socket) -> None:
    """The zygote's life: serve forks; each child runs the agent from its start."""
    try:
        os.setpgid(0, 0)  # the terminal's Ctrl-C goes to the checker, which ends the workers
    except OSError:
        pass
    _subreaper()
    random.seed(_SEED)  # every run, in any worker of any checker, draws the same numbers
    # The agent prints to fds 1 and 2, which each run sends to a file of its own: streams
    # that write through, so that nothing waits in a buffer across a fork.
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)
    if faulthandler.is_enabled():  # a crash report goes to the run's output, not the caller's
        faulthandler.enable(sys.stderr)
    worker = _Worker((*spec[:4], os.getpid()), sock)
    try:
        worker.serve()
        worker.run()
    finally:
        os._exit(0)


def _subreaper() -> None:
    # Holders whose parent exited are re-parented to the zygote, which reaps them.
    try:
        import ctypes  # only a zygote needs it (prctl), and only on Linux

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except Exception:  # noqa: BLE001 - elsewhere orphans go to init, as usual
        pass


# -- in the checker ---------------------------------------------------------------------
class _Server:
    """The checker's end of a zygote or a holder."""

    __slots__ = ("sock", "pid", "state", "parent", "payload", "__weakref__")

    def __init__(
        self,
        sock: socket.socket,
        pid: int,
        state: Any = None,
        parent: _Server | None = None,
        payload: Any = None,
    ) -> None:
        self.sock, self.pid, self.state = sock, pid, state  # state: the one it holds
        self.parent = parent  # the server that forked it: it knows how the process ended
        self.payload = payload  # what it reported at its state's model call (prompt, note)
        _HOST_ENDS.add(sock)

    def close(self) -> None:
        _HOST_ENDS.discard(self.sock)
        try:
            self.sock.close()
        except OSError:
            pass

    def alive(self) -> bool:
        return self.sock.fileno() >= 0


class Report:
    """What a child reported: ``kind`` ("prompt", "return", "raise", "diverge", "died",
    "clock", "short"), its payload, the effect executions, output, clock notes."""

    __slots__ = ("kind", "payload", "index", "events", "output", "seen", "server")

    def __init__(self, kind: str, payload: Any = None, index: int = 0) -> None:
        self.kind, self.payload, self.index = kind, payload, index
        self.events: list[tuple] = []
        self.output = ""
        self.seen: list[str] = []
        self.server: _Server | None = None


class Pool:
    """The zygote and the held states of one machine in this process."""

    def __init__(self, spec: tuple, holders: int) -> None:
        self.spec = spec  # (fn, args, kwargs, line_budget)
        self.size = max(1, holders)
        self.pid = os.getpid()
        self.zygote: _Server | None = None
        self.held = RunCache(self.size, _Server.close)
        self.unforkable: set[Any] = set()  # states whose process runs threads (fork loses them)
        self.forks = 0  # processes forked for this machine (the zygote's start aside)

    def valid(self) -> bool:
        return self.pid == os.getpid()

    def close(self) -> None:
        for _, server in self.held.items():
            server.close()
        if self.zygote is not None:
            self.zygote.close()
        self.held.clear()
        if self.zygote is not None and self.valid():
            _CLOSED.append(self.zygote.pid)  # it exits at the end of its socket
        self.zygote = None
        _reap_zygotes()

    def _start(self) -> _Server:
        _reap_zygotes()
        mine, theirs = socket.socketpair()
        _flush()
        pid = os.fork()
        if pid == 0:
            mine.close()
            _zygote(self.spec, theirs)
        theirs.close()
        self.zygote = _Server(mine, pid)
        return self.zygote

    def holder(self, state: Any) -> _Server | None:
        return self.held.get(state)  # type: ignore[no-any-return]

    def nearest(self, state: Any) -> tuple[_Server, int]:
        """The deepest live server on the way to ``state`` and how many completions it has
        consumed (the zygote: none, and it has not run the agent's start either)."""
        history = state.history()
        for k in range(len(history), 0, -1):
            server = self.held.peek(history[k - 1][1])
            if server is not None:
                return server, k
        zygote = self.zygote if self.zygote is not None else self._start()
        return zygote, 0

    def fork(
        self,
        server: _Server,
        completions: list[str],
        recorded: dict[int, dict[tuple, bytes]],
        timeout: float | None,
        keep: Any,
        take: bool = False,
    ) -> Report:
        """Fork ``server`` and feed the child ``completions``; the child's report. A child
        that reached a model call is kept as the holder of ``keep`` (when not ``None``).
        With ``take`` a holder runs them itself, without a fork, and holds no more."""
        take = take and server is not self.zygote
        if take:
            self._forget(server)  # its socket stays open for the one reply it owes
        elif server.state is not None:
            self.held.stepped(server.state)
        self.forks += not take
        mine, theirs = socket.socketpair()
        try:
            command = "take" if take else "fork"
            _send(server.sock, (command, completions, recorded), fd=theirs.fileno())
        except OSError:
            return self._lost(server, mine, theirs)
        theirs.close()
        if timeout is not None:
            mine.settimeout(timeout * max(1, len(completions)))
        # The child's report first, the server's reply (the child's pid) after: the reply
        # waits in the socket, and the checker wakes once per step, not twice.
        try:
            message, _ = _recv(mine)
        except TimeoutError:
            message = _CLOCK
        except OSError:
            message = None
        try:
            reply, _ = _recv(server.sock)
        except OSError:
            reply = None
        if take:
            server.close()
        if reply is None:  # the server itself is gone
            return self._lost(server, mine, None)
        pid = reply[1]
        parent = server.parent if take else server
        if message is _CLOCK:
            _kill(pid)
            mine.close()
            return Report("clock")
        if message is None:
            mine.close()
            return Report("died", (self._death(parent, pid),))
        what, index, events, output, seen, threads = message
        report = Report(what[0], what[1:], index)
        report.events, report.output, report.seen = events, output, seen
        if what[0] != "prompt":
            mine.close()
            return report
        child = _Server(mine, pid, keep, parent, report.payload)
        if threads > 1 or keep is None:
            if threads > 1 and keep is not None:
                self.unforkable.add(keep)
            child.close()
            return report
        report.server = child
        replaced = self.held.pop(keep)  # a holder forked to report its prompt again
        if replaced is not None:
            replaced.close()
        self.held.put(keep, child)
        return report

    def _lost(self, server: _Server, mine: socket.socket, theirs: socket.socket | None) -> Report:
        for end in (mine, theirs):
            if end is not None:
                end.close()
        self._drop(server)
        return Report("lost")

    def _drop(self, server: _Server) -> None:
        self._forget(server)
        server.close()

    def _forget(self, server: _Server) -> None:
        if server.state is not None and self.held.peek(server.state) is server:
            self.held.pop(server.state)
        if server is self.zygote:
            self.zygote = None

    def _death(self, server: _Server | None, pid: int) -> str:
        status = None
        for asked in (server, self.zygote):
            if asked is None or not asked.alive():
                continue
            try:
                _send(asked.sock, ("status", pid))
                reply, _ = _recv(asked.sock)
            except OSError:
                continue
            if reply is not None and reply[1] is not None:
                status = reply[1]
                break
        return describe_status(status)


_CLOSED: list[int] = []  # zygotes of closed pools, this process's children, not reaped yet


def _reap_zygotes() -> None:
    for pid in list(_CLOSED):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _CLOSED.remove(pid)


def describe_status(status: int | None) -> str:
    """How a worker process ended, from its wait status.

    >>> describe_status(11), describe_status(3 << 8), describe_status(None)
    ('killed by signal SIGSEGV', 'exited with status 3 without reporting', 'ended without reporting (its exit status was not seen)')
    """
    if status is None:
        return "ended without reporting (its exit status was not seen)"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        extra = " (out of memory?)" if sig == signal.SIGKILL else ""
        return f"killed by signal {name}{extra}"
    return f"exited with status {os.WEXITSTATUS(status)} without reporting"


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
