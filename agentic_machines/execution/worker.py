"""The isolated worker: runs blocks for a :class:`~.sandbox.ProcessRunner`, one message at a time.

Started by the host (``confine._BOOT``), it confines itself, then reads one JSON message per
line on stdin and writes exactly one reply per line on stdout. An :class:`~.sandbox.InlineRunner`
holds the episode's namespaces, so the semantics are those of ``isolation="inline"``. A
block's effect (``act``) and request (``llm_query``, a child REPL) are messages to the host,
which checks every reply. The protocol and the start-up: docs/reference/worker.md.
"""

from __future__ import annotations

import builtins
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any, BinaryIO

from .. import errors as _errors
from . import wire
from .budget import LineBudget
from .codeexec import Request
from .confine import STAGED, masked_worker_paths
from .runner import InlineRunner, Scaffold

TEXT_LINES = 100_000  # the line budget of str() of a model value (text_of): past it, no text

__all__ = ["main", "Server"]


class _ProtocolError(Exception):
    pass


class Server:
    """The worker's message loop (see the module docstring)."""

    def __init__(self, inp: BinaryIO, out: BinaryIO) -> None:
        self.inp, self.out = inp, out
        self.tag: Any = None  # the id of the host's last message, which every reply carries
        self.handlers = _handlers()  # the signal handlers a block's end puts back
        self.refs = wire.RefTable()
        self.ex = InlineRunner()
        self.stack: list[Any] = []  # suspended block drivers, innermost last

    # -- messages --------------------------------------------------------------------
    def read(self) -> dict:
        line = self.inp.readline()
        if not line:
            raise SystemExit(0)  # the host closed the channel
        message = wire.loads(line)
        self.tag = message.get("id")
        return message

    def write(self, message: dict) -> None:
        self.out.write(wire.dumps({**message, "re": self.tag}))
        self.out.flush()

    def enc(self, value: Any) -> Any:
        return wire.encode(value, self.refs)

    def dec(self, data: Any) -> Any:
        return wire.decode(data, self.refs)

    # -- the loop --------------------------------------------------------------------
    def serve(self) -> None:
        while True:
            self.dispatch(self.read())

    def dispatch(self, msg: dict) -> None:
        op = msg.get("op")
        if op == "reply":
            if not self.stack:
                raise _ProtocolError("a reply with no suspended block")
            self._advance(self.stack[-1], msg)
            return
        key = msg.get("ns")
        if not isinstance(key, str):  # every op but a reply names its namespace
            raise _ProtocolError(f"op {op!r} came without its namespace key (ns)")
        if op == "namespace":
            scaffold = Scaffold.from_data(msg["scaffold"])
            effects = {name: self._effect(key, name) for name in scaffold.effects}
            self.ex.namespace(key, scaffold, effects)
            self.write({"type": "ok"})
        elif op == "run":
            gen = self.ex.run_block(
                key,
                msg["code"],
                handle=self._forward,
                line_budget=int(msg["line_budget"]),
                filename=str(msg["filename"]),
                max_output=int(msg["max_output"]),
            )
            self.stack.append(gen)
            self._advance(gen, None, first=True)
        elif op == "bind":
            self.ex.bind_request(key, str(msg["name"]))
            self.write({"type": "ok"})
        elif op == "restore":
            self.ex.restore_scaffold(key)
            self.write({"type": "ok"})
        elif op == "push_args":
            self.ex.push_args(key, self.dec(msg["args"]))
            self.write({"type": "ok"})
        elif op == "pop_args":
            self.ex.pop_args(key)
            self.write({"type": "ok"})
        elif op == "variables":
            pairs = [[name, simple] for name, simple in self.ex.variables(key)]
            self.write({"type": "value", "value": pairs})
        elif op == "text_of":
            try:
                with LineBudget(TEXT_LINES):
                    text = self.ex.text_of(key, str(msg["name"]))
            except _errors.BudgetExceeded:
                text = None  # as for a __str__ that raises: no text
            self.write({"type": "value", "value": text})
        else:
            raise _ProtocolError(f"unknown op {op!r}")

    def _advance(self, gen: Any, reply: dict | None, first: bool = False) -> None:
        try:
            item = next(gen) if first else gen.send(reply)
        except StopIteration as stop:
            self.stack.pop()
            if not self.stack:  # the outermost block ended: what it started ends with it
                end_descendants()
                _quiet(self.handlers)
            self.write(self._result(stop.value))
            return
        if not isinstance(item, Request):
            raise _ProtocolError("a block driver yielded something other than a request")
        self.write(
            {
                "type": "request",
                "kind": item.kind,
                "args": self.enc(tuple(item.args)),
                "kwargs": self.enc(dict(item.kwargs)),
            }
        )

    def _forward(self, request: Request) -> Any:
        # The block's handle: hand the request to the host and wait for its reply.
        reply = yield request
        return self._unpack(reply)

    def _unpack(self, reply: dict) -> Any:
        if "error" in reply:
            raise _rebuild(reply["error"])
        return self.dec(reply.get("value"))

    def _effect(self, key: str, kind: str) -> Any:
        def perform(*args: Any, **kwargs: Any) -> Any:
            self.write(
                {
                    "type": "effect",
                    "ns": key,
                    "kind": kind,
                    "args": self.enc(args),
                    "kwargs": self.enc(kwargs),
                }
            )
            reply = self.read()
            if reply.get("op") != "reply":
                raise _ProtocolError("expected the reply to an effect")
            return self._unpack(reply)

        perform.__name__ = perform.__qualname__ = kind
        return perform

    def _result(self, r: Any) -> dict:
        status = "memory" if r.error == "MemoryError" else r.status
        return {
            "type": "result",
            "stdout": r.stdout,
            "stderr": r.stderr,
            "status": status,
            "value": self.enc(r.value),
            "error": r.error,
            "attempts": r.attempts,
            "calls": [
                [c.kind, self.enc(c.args), self.enc(dict(c.kwargs)), self.enc(c.result)]
                for c in r.calls
            ],
            "hits": [[kind, index] for kind, index in r.hits],
        }


def _rebuild(data: Any) -> BaseException:
    """The exception the host reported (its type by name: our errors, builtins, or a stand-in)."""
    name = str(data.get("type", "Exception")) if isinstance(data, dict) else "Exception"
    message = str(data.get("message", "")) if isinstance(data, dict) else ""
    found = getattr(_errors, name, None)
    if not (isinstance(found, type) and issubclass(found, Exception)):
        found = getattr(builtins, name, None)
    cls: type[Exception]
    if isinstance(found, type) and issubclass(found, Exception):
        cls = found
    else:
        cls = type(name if name.isidentifier() else "Exception", (Exception,), {})
    if issubclass(cls, NameError):
        return cls(message, name=data.get("name"))
    try:
        return cls(message)
    except Exception:  # noqa: BLE001 - a class with another constructor
        return Exception(f"{name}: {message}")


# --------------------------------------------------------------------------------------
# processes a block started
# --------------------------------------------------------------------------------------
def end_descendants(rounds: int = 1000) -> None:
    """SIGKILL every process descended from this one (found from ``/proc`` by parent chain:
    the worker is a child subreaper, so detached ones come back to it), and reap them."""
    me = os.getpid()
    for _ in range(rounds):
        try:
            if os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                _reap()
        except ChildProcessError:
            return  # no child left
        parents = _parents()
        victims = [pid for pid in parents if _descends(pid, me, parents)]
        if not victims:
            return  # what waitid still sees is not a descendant (a process being ptraced)
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _reap()


def _handlers() -> dict[int, Any]:
    """The handler of every signal that has one to put back (see :func:`_quiet`)."""
    out = {}
    for sig in signal.valid_signals():
        try:
            out[sig] = signal.getsignal(sig)
        except (ValueError, OSError):
            continue
    return {k: v for k, v in out.items() if v is not None}


def _quiet(handlers: dict[int, Any]) -> None:
    """Stop the block's interval timers and alarm; put back the signal handlers it changed."""
    for which in (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL, signal.ITIMER_PROF):
        signal.setitimer(which, 0)
    signal.alarm(0)
    for sig, handler in handlers.items():
        try:
            if signal.getsignal(sig) is not handler:
                signal.signal(sig, handler)
        except (ValueError, OSError, TypeError):
            pass


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _parents() -> dict[int, int]:
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    stat = f.read()
                out[int(name)] = int(stat[stat.rindex(b")") + 2 :].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    return out


def _descends(pid: int, ancestor: int, parents: dict[int, int]) -> bool:
    seen = 0
    while pid in parents and seen < 10_000:
        pid = parents[pid]
        if pid == ancestor:
            return True
        seen += 1
    return False


# --------------------------------------------------------------------------------------
# start-up
# --------------------------------------------------------------------------------------
class _Libc:
    """The few libc calls the worker's confinement makes (``mount``, ``prctl``, ``capset``)."""

    MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
    MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18

    def __init__(self) -> None:
        import ctypes  # only code that calls libc needs ctypes

        self.ctypes = ctypes
        self.libc = ctypes.CDLL(None, use_errno=True)

    def fail(self, what: str) -> OSError:
        return OSError(self.ctypes.get_errno(), what)

    def mount(
        self,
        src: str | None,
        target: str,
        flags: int,
        fs: str | None = None,
        options: str | None = None,
    ) -> int:
        enc = lambda s: None if s is None else s.encode()  # noqa: E731
        return self.libc.mount(enc(src), enc(target), enc(fs), flags, enc(options))

    def tmpfs(self, target: str, size: int, mode: str = "1777", owner: int | None = None) -> None:
        # nr_inodes: empty files take no page, so without it a tmpfs of any size holds
        # millions of inodes (kernel memory no memory_mb bounds without a control group)
        inodes = max(64, size // 4096)
        options = f"size={size},nr_inodes={inodes},mode={mode}"
        if owner is not None:
            options += f",uid={owner},gid={owner if os.geteuid() == 0 else os.getgid()}"
        if self.mount("tmpfs", target, self.MS_NOSUID | self.MS_NODEV, "tmpfs", options):
            raise self.fail(f"mounting a private tmpfs on {target} failed")

    def bind_back(self, held: list[tuple[str, int]]) -> None:
        """Mount each held path back, read-only, at its own place (it lay under a mount
        made since): the worker's code, interpreter or a device node."""
        ro = self.MS_REMOUNT | self.MS_BIND | self.MS_RDONLY | self.MS_NOSUID
        for path, fd in held:
            if os.path.isdir(f"/proc/self/fd/{fd}"):
                os.makedirs(path, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                open(path, "ab").close()  # noqa: SIM115 - a mount point
            if self.mount(f"/proc/self/fd/{fd}", path, self.MS_BIND | self.MS_REC) != 0:
                raise self.fail(f"mounting {path} back failed")
            device = path.startswith("/dev/")
            # a bind keeps the read-only flag of the mount it comes from (made so above);
            # remounting says it again, and whatever happens it is checked. A device node
            # keeps its device flag (it is one of the few a worker may use).
            self.mount(None, path, ro | (0 if device else self.MS_NODEV))
            if not device and not os.statvfs(path).f_flag & os.ST_RDONLY:
                raise OSError(0, f"{path} was mounted back writable")
            os.close(fd)


_DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
"""The device nodes a namespaced worker's ``/dev`` has (as bubblewrap's ``--dev``): never
the host's loop, KVM, kernel-log or disk devices, whoever the worker is."""


def _readonly_except(
    scratch: str,
    size: str | None = None,
    hidden: Sequence[str] = (),
    expose: Sequence[str] = (),
) -> None:
    """Remount every filesystem read-only except ``scratch`` (inside ``unshare --mount``);
    with ``size``, build what ``bwrap`` gives (docs/reference/worker.md): a minimal
    ``/dev``, bounded tmpfs mounts, ``hidden`` and ``expose`` covered."""
    c = _Libc()
    keep = {"nosuid": c.MS_NOSUID, "nodev": c.MS_NODEV, "noexec": c.MS_NOEXEC}
    keep.update({"noatime": 1024, "nodiratime": 2048, "relatime": 1 << 21})
    if c.mount(None, "/", c.MS_REC | c.MS_PRIVATE) != 0:
        raise c.fail("making mounts private failed")
    if c.mount(scratch, scratch, c.MS_BIND | c.MS_REC) != 0:
        raise c.fail("binding the scratch directory failed")
    with open("/proc/self/mountinfo", encoding="utf-8") as f:
        entries = [line.split() for line in f]
    for fields in entries:
        target = fields[4].encode().decode("unicode_escape")
        if target == scratch or target.startswith(scratch + "/"):
            continue
        flags = c.MS_REMOUNT | c.MS_BIND | c.MS_RDONLY
        for option in fields[5].split(","):
            flags |= keep.get(option, 0)
        if c.mount(None, target, flags) != 0 and target == "/":
            raise c.fail("remounting / read-only failed")
    if size is None:
        return
    # scratch last: it may lie under /tmp, and is made again in the new /tmp
    hide = [d for d in hidden if os.path.isdir(d) and not os.path.islink(d)]
    # What the worker imports and lies under a private mount (a checkout or a venv under
    # /tmp, an interpreter under /root) is held by descriptor now and mounted back below;
    # so are the few device nodes of the new /dev.
    masked = ["/tmp", "/dev", *hide, *expose]
    held = [(p, os.open(p, os.O_PATH)) for p in masked_worker_paths(masked)]
    devices = [
        (f"/dev/{d}", os.open(f"/dev/{d}", os.O_PATH))
        for d in _DEVICES
        if os.path.exists(f"/dev/{d}")
    ]
    c.tmpfs("/dev", 1 << 16, "755")
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        os.symlink(target, f"/dev/{name}")
    for target in ["/dev/shm", "/tmp", *hide, *expose, scratch]:
        os.makedirs(target, exist_ok=True)
        bytes_ = 4096 if target in hide or target in expose else int(size)
        c.tmpfs(target, bytes_, "755" if target in expose else "1777")
    c.bind_back(devices + held)


SHARED_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
"""The directories every uid may create files in (mode 1777) on a usual Linux host."""


def _private_mounts(
    expose: Sequence[str], bounded: tuple[str, int] | None = None, uid: int | None = None
) -> None:
    """At the process level on a root host: a private mount namespace in which the
    directories ``expose`` (that the worker's uid cannot enter) are covered by empty ones,
    with the worker's code and interpreter mounted back. With ``bounded`` (the scratch
    directory and a size in bytes), :data:`SHARED_WRITABLE` and the scratch directory become
    private tmpfs mounts of that size and one inode per 4 kB: the worker's uid owns no file
    of the host, so these are the only places it may create one. Where this host refuses a
    mount namespace (a container without ``CAP_SYS_ADMIN``) and nothing is exposed, nothing."""
    c = _Libc()
    clone_newns = 0x00020000
    if c.libc.unshare(clone_newns) != 0:
        if expose:
            raise c.fail("a private mount namespace failed")
        return
    if c.mount(None, "/", c.MS_REC | c.MS_PRIVATE) != 0:
        raise c.fail("making mounts private failed")
    shared = [d for d in SHARED_WRITABLE if bounded and os.path.isdir(d)]
    shared = [d for d in shared if not os.path.islink(d)]
    held = [(p, os.open(p, os.O_PATH)) for p in masked_worker_paths([*shared, *expose])]
    if bounded is not None:
        scratch, size = bounded
        for target in shared:
            c.tmpfs(target, size)
        os.makedirs(scratch, exist_ok=True)  # it may lie under /tmp: made again there
        c.tmpfs(scratch, size, "755", uid)
        os.chdir(scratch)  # the working directory was the one now covered
    for target in expose:
        c.tmpfs(target, 4096, "755")
    c.bind_back(held)


def _stage(scratch: str, size: int, uid: int | None) -> None:
    """In bubblewrap's launcher: the worker's three tmpfs mounts (:data:`STAGED` under
    ``scratch``), bounded in size and inodes, which bwrap's ``--tmpfs`` cannot do; an ordinary
    user first makes a user namespace in which it is itself (docs/reference/worker.md)."""
    c = _Libc()
    clone_newns, clone_newuser = 0x00020000, 0x10000000
    root = os.geteuid() == 0
    ids = os.getuid(), os.getgid()
    if c.libc.unshare(clone_newns if root else clone_newns | clone_newuser) != 0:
        raise c.fail("a mount namespace for the worker's tmpfs mounts failed")
    if not root:
        for name, text in (
            ("setgroups", "deny"),
            ("uid_map", f"{ids[0]} {ids[0]} 1"),
            ("gid_map", f"{ids[1]} {ids[1]} 1"),
        ):
            with open(f"/proc/self/{name}", "w", encoding="ascii") as f:
                f.write(text)
    if c.mount(None, "/", c.MS_REC | c.MS_PRIVATE) != 0:
        raise c.fail("making mounts private failed")
    c.tmpfs(scratch, 1 << 16, "755")  # holds the three mount points, nothing else
    owner = ids[0] if uid is None else uid
    for name in STAGED:
        os.mkdir(os.path.join(scratch, name))
        c.tmpfs(os.path.join(scratch, name), size, "755" if name == "work" else "1777", owner)


def _become(uid: int | None) -> None:
    """Give up every capability, for this process and anything it runs (the bounding set,
    ``no_new_privs``); with ``uid`` (a root host), become that uid first. Why: a worker
    that made its mounts read-only could otherwise remount them (docs/reference/worker.md)."""
    c = _Libc()
    pr_capbset_drop, pr_set_no_new_privs = 24, 38
    for cap in range(64):  # past the last capability the kernel knows, prctl says EINVAL
        c.libc.prctl(pr_capbset_drop, cap, 0, 0, 0)
    if c.libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0) != 0:
        raise c.fail("setting no_new_privs failed")
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)  # from uid 0: the permitted and effective sets empty
        if os.getresuid() != (uid, uid, uid):
            raise OSError(0, f"the worker is still uid {os.getuid()}, not {uid}")
    ctypes = c.ctypes
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable (two words each): none
    if c.libc.capset(header, data) != 0:
        raise c.fail("dropping capabilities failed")


def _load_filter(required: bool) -> None:
    from .seccomp import install, program  # only the isolated levels need it

    prog = program()
    if prog is None:
        return
    try:
        install(prog)
    except OSError:
        if required:
            raise


def _become_subreaper() -> None:
    # Orphans of a block come back to the worker (not to init), so end_descendants finds them.
    if sys.platform.startswith("linux"):
        import ctypes  # only code that calls libc needs ctypes

        pr_set_child_subreaper = 36
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_child_subreaper, 1, 0, 0, 0)


def _init_then_worker(inp: BinaryIO, out: BinaryIO) -> None:
    """Under ``unshare --pid`` this is PID 1, which ignores signals it sends itself: fork
    and go on as the child; PID 1 reaps, and exits as the worker did (``128 + n`` for a
    death by signal ``n``), which stops every process left in the namespace."""
    pid = os.fork()
    if pid == 0:
        return  # the worker
    # PID 1: holds no end of the channel, so the host sees EOF as soon as the worker dies
    inp.close()
    out.close()
    while True:
        try:
            done, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(1)
        except InterruptedError:
            continue
        if done == pid:
            if os.WIFSIGNALED(status):
                os._exit(128 + os.WTERMSIG(status))
            os._exit(os.waitstatus_to_exitcode(status))


def _options(argv: list[str]) -> dict[str, Any]:
    """The worker's options (confine.confined_argv writes them): ``--uid N``, ``--expose DIR``
    (repeated), ``--stage SCRATCH SIZE`` (a launcher's, :func:`_stage`), ``--bound SCRATCH
    SIZE`` (:func:`_private_mounts`), ``--seccomp``,
    ``--probe``, and last either ``--readonly-except SCRATCH SIZE HIDDEN...`` or ``--exec
    COMMAND...`` (a launcher), which takes the rest."""
    opts: dict[str, Any] = {"uid": None, "expose": [], "seccomp": False, "probe": False}
    opts["stage"] = opts["bound"] = None
    i = 0
    while i < len(argv):
        if argv[i] == "--uid":
            opts["uid"], i = int(argv[i + 1]), i + 2
        elif argv[i] in ("--stage", "--bound"):
            opts[argv[i][2:]], i = (argv[i + 1], int(argv[i + 2])), i + 3
        elif argv[i] == "--expose":
            opts["expose"].append(argv[i + 1])
            i += 2
        elif argv[i] in ("--seccomp", "--probe"):
            opts[argv[i][2:]], i = True, i + 1
        elif argv[i] in ("--readonly-except", "--exec"):
            opts[argv[i][2:].replace("-", "_")] = argv[i + 1 :]
            break
        else:
            raise SystemExit(f"unknown worker option {argv[i]!r}")
    return opts


def main(argv: list[str] | None = None) -> None:
    """Run the worker on this process's stdin and stdout (called by the host's bootstrap)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    opts = _options(argv)
    if opts.get("exec"):  # the launcher of bubblewrap (see confine.confined_argv)
        # opened before the uid changes: a tool under a directory only root may enter
        # (a pytest tmp_path, /root/bin) is still run
        program = os.open(opts["exec"][0], os.O_RDONLY)
        if opts["expose"]:
            _private_mounts(opts["expose"])
        if opts["stage"] is not None:
            scratch, size = opts["stage"]
            _stage(scratch, size, opts["uid"])
        if opts["uid"] is not None:
            uid = opts["uid"]
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
        os.execve(program, opts["exec"], dict(os.environ))
    inp = os.fdopen(os.dup(0), "rb")
    out = os.fdopen(os.dup(1), "wb")
    # Model code that prints through a path to the real sys.stdout must not write on the
    # channel: fds 0 and 1 now point at /dev/null.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-large file is an OSError, not death
    readonly = opts.get("readonly_except")
    if readonly:  # under unshare: the namespace level's confinement, built here
        _readonly_except(
            readonly[0], readonly[1] if len(readonly) > 1 else None, readonly[2:], opts["expose"]
        )
        os.chdir(readonly[0])
    elif opts["expose"] or opts["bound"]:
        _private_mounts(opts["expose"], opts["bound"], opts["uid"])
    if readonly or opts["seccomp"] or opts["uid"] is not None:
        _become(opts["uid"])
        # required under unshare (the namespace level promises it); at the process level
        # the filter is a second wall where the kernel has seccomp
        _load_filter(required=bool(readonly))
    if opts["probe"]:
        os._exit(0)
    if readonly:
        _init_then_worker(inp, out)
    _become_subreaper()  # after the fork: a child does not inherit it
    server = Server(inp, out)
    try:
        server.serve()
    except MemoryError:
        try:
            server.write({"type": "fatal", "error": "MemoryError"})
        finally:
            os._exit(3)
    except (_ProtocolError, ValueError, KeyError, TypeError):
        os._exit(2)
