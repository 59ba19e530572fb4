"""What confines a worker process: the namespace tools, the command line, the limits.

:func:`namespace_tool` finds the first tool (``bwrap``, else ``unshare``) that starts a
worker here; :func:`confined_argv` builds the command line that runs a worker inside it;
:func:`child_limits` sets the OS limits in the child; :func:`remove_tree` removes a
worker's scratch directory without following a link the worker planted. A root host's
workers run as uids of their own (:func:`worker_uid`; :func:`remove_ipc` removes what one
left). How each level is built: docs/reference/worker.md and docs/threat_model.md.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import warnings
from collections.abc import Callable, Sequence

from ..errors import IsolationFallback
from . import seccomp
from .runner import Limits

_TOOLS: dict[str, str | None] = {}  # tool -> None when it works, else why not
WORKER_UIDS = range(1_000_000_000, 1_500_000_000)
"""The uids (and gids) a root host's workers run as, one drawn at random per worker: no
file of the host belongs to one, no capability comes with it, no two workers share one
(so one cannot signal or trace another), and what a worker left (IPC objects) is found by
its owner."""
NO_NAMESPACE_TOOL = (
    "isolation='namespace' needs bwrap (bubblewrap) or unshare (util-linux) with user "
    "namespaces; install bubblewrap (apt-get install bubblewrap) or use 'process'"
)


def namespace_tool() -> str | None:
    """``"bwrap"`` or ``"unshare"``: the first tool that starts a worker here (tried once per
    process with the worker's own start-up, :func:`probe`); falling back to ``unshare``
    warns once with :class:`~agentic_machines.errors.IsolationFallback`."""
    for tool in ("bwrap", "unshare"):
        if tool not in _TOOLS:
            _TOOLS[tool] = probe(tool)
            if tool == "unshare" and _TOOLS[tool] is None:
                warnings.warn(
                    IsolationFallback(
                        f"the namespace level uses unshare, not bubblewrap: {_TOOLS['bwrap']}. "
                        "Under unshare the worker builds its own confinement (mounts, /dev, the "
                        "seccomp filter) before model code runs, so it rests on more of our code; "
                        "install bubblewrap (apt-get install bubblewrap) for the tool made for it"
                    ),
                    stacklevel=2,
                )
        if _TOOLS[tool] is None:
            return tool
    return None


_UNSTAGED: list[str] = []  # why bwrap's launcher could not mount the bounded tmpfs here


def probe(tool: str) -> str | None:
    """None when ``tool`` starts a worker here, else the reason it does not. bubblewrap
    without its launcher's bounded tmpfs mounts (``worker._stage``; e.g. an AppArmor policy
    refuses the launcher a user namespace) is said once, with an ``IsolationFallback``.

    >>> probe("no-such-tool-am")
    'no-such-tool-am is not installed (not found on PATH)'
    """
    reason = _probe_once(tool, stage=True)
    if reason is None or tool != "bwrap":
        return reason
    if _probe_once(tool, stage=False) is not None:
        return reason
    _UNSTAGED[:] = [reason]
    warnings.warn(
        IsolationFallback(
            f"bubblewrap runs the worker, but its launcher could not mount the worker's tmpfs "
            f"with a bound on their inodes ({reason}); empty files there are bounded only by "
            "a control group (run as root, or allow user namespaces to this Python)"
        ),
        stacklevel=3,
    )
    return None


def _probe_once(tool: str, stage: bool) -> str | None:
    if sys.platform != "linux":
        return f"{tool} needs Linux namespaces (this is {sys.platform})"
    if tool_path(tool) is None:
        return f"{tool} is not installed (not found on PATH)"
    scratch = tempfile.mkdtemp(prefix="am-probe-")
    fd = seccomp_pipe() if tool == "bwrap" else None
    uid = worker_uid()
    try:
        if uid is not None:
            os.chown(scratch, uid, uid)
        argv = confined_argv(
            tool, scratch, [*boot_argv(), "--probe"], seccomp_fd=fd, uid=uid, stage=stage
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


def tool_path(tool: str) -> str | None:
    """The absolute path of ``tool`` on this process's ``PATH`` (None when it is not there).

    The worker starts with an empty environment, so the tool is named by its full path:
    a ``bwrap`` in ``/usr/local/bin`` or a user's ``~/bin`` is found as the shell finds it.

    >>> tool_path("no-such-tool-am") is None
    True
    """
    found = shutil.which(tool)
    return os.path.abspath(found) if found else None


def worker_uid() -> int | None:
    """The uid a new worker runs as when it must not be this process's: a fresh one of
    :data:`WORKER_UIDS` when this process is root, else None (the worker keeps this
    user's uid).

    >>> uid = worker_uid()
    >>> uid is None or uid in WORKER_UIDS
    True
    """
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    return WORKER_UIDS[int.from_bytes(os.urandom(4), "little") % len(WORKER_UIDS)]


def remove_ipc(uid: int) -> None:
    """Remove the System V IPC objects (shared memory, queues, semaphores) that ``uid``
    created, and the POSIX shared memory and message queues it owns; best effort.

    For the process level on a root host, where the worker shares the host's IPC
    namespace: its uid is its own (:func:`worker_uid`), so what it created is told apart
    from the host's by its creator. (Namespaced workers have an IPC namespace and a
    ``/dev/shm`` of their own, which end with them.)
    """
    import ctypes  # only code that calls libc needs ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    remove = {  # IPC_RMID = 0 for each
        "shm": lambda i: libc.shmctl(i, 0, None),
        "msg": lambda i: libc.msgctl(i, 0, None),
        "sem": lambda i: libc.semctl(i, 0, 0),
    }
    for kind, rmid in remove.items():
        try:
            with open(f"/proc/sysvipc/{kind}", encoding="ascii") as f:
                header, *rows = [line.split() for line in f]
        except OSError:
            continue
        at = header.index("cuid")  # the creator: an owner may give an object away, not this
        for row in rows:
            if len(row) > at and row[at] == str(uid):
                rmid(int(row[1]))
    for where in ("/dev/shm", "/dev/mqueue"):
        try:
            entries = list(os.scandir(where))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid == uid:
                    os.unlink(entry.path)
            except OSError:
                pass


def closed_ancestors(uid: int | None = None) -> list[str]:
    """The directories on the way to the :func:`worker_paths` that ``uid`` cannot enter
    (no search permission for others: ``/root`` is ``0700``), topmost first, none inside
    another. Empty when ``uid`` is None (the worker is this user, who can).

    >>> closed_ancestors(None)
    []
    """
    if uid is None:
        return []
    closed: list[str] = []
    for path in worker_paths():
        parts = path.strip("/").split("/")
        for depth in range(1, len(parts)):
            here = "/" + "/".join(parts[:depth])
            try:
                info = os.stat(here)
            except OSError:
                break
            if info.st_uid != uid and not info.st_mode & 0o001:
                if not any(here == c or here.startswith(c + "/") for c in closed):
                    closed.append(here)
                break
    return sorted(closed, key=len)


def boot_argv() -> list[str]:
    """The command line that starts a worker (before any confinement wraps it)."""
    # -S: no site-packages (the worker needs the standard library only, and starts faster)
    return [sys.executable, "-S", "-c", _BOOT, _PACKAGE_ROOT]


def seccomp_pipe() -> int | None:
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
# A namespace tool is probed with the worker's own start-up and confinement ("--probe":
# set up, then exit without serving), so a tool that cannot reach the package or the
# interpreter (a checkout under a masked /tmp) fails the probe instead of every block.


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

STAGED = ("tmp", "shm", "work")
"""The bounded tmpfs mounts bubblewrap's launcher makes under the scratch directory
(``worker._stage``), which bwrap binds at ``/tmp``, ``/dev/shm`` and the scratch directory."""

MAX_PROCESSES = 256  # processes in a worker's control group (pids.max), when it has one


def _tmpfs_bytes(limits: Limits) -> int:
    # Each of the worker's three tmpfs mounts (/tmp, /dev/shm, scratch) holds at most a
    # quarter of its memory; under a control group their pages count against memory_mb too.
    return max(1, int(limits.memory_mb) // 4) * 1024 * 1024


def confined_argv(
    tool: str | None,
    scratch: str,
    argv: list[str],
    limits: Limits | None = None,
    seccomp_fd: int | None = None,
    uid: int | None = None,
    stage: bool | None = None,
) -> list[str]:
    """The command line that runs ``argv`` (:func:`boot_argv`) under ``tool`` (None: the
    ``process`` level), as ``uid`` (:func:`worker_uid`; None: this user's), with the seccomp
    filter read from ``seccomp_fd``. ``stage`` False (None: as :func:`probe` found this
    host) leaves bwrap's tmpfs mounts to its ``--tmpfs``. What each tool gives, and what the
    worker's start-up adds: docs/reference/worker.md."""
    size = str(_tmpfs_bytes(limits or Limits()))
    closed = closed_ancestors(uid)
    drop = ["--uid", str(uid)] if uid is not None else []
    drop += [a for d in closed for a in ("--expose", d)]
    if tool == "bwrap":
        hiding = [d for d in _HIDDEN if os.path.isdir(d) and not os.path.islink(d)]
        hidden = [a for d in hiding for a in ("--tmpfs", d)]
        # after the private mounts: what the worker imports, where it lives
        back = _rebinds(["/tmp", "/dev", *hiding])
        places = ("/tmp", "/dev/shm", scratch)
        staging = not _UNSTAGED if stage is None else stage
        if staging:
            # the launcher mounts the three tmpfs (bwrap's own --tmpfs bounds no inodes)
            launcher = [*boot_argv(), *drop, "--stage", scratch, size, "--exec"]
            mounts = {p: ["--bind", f"{scratch}/{n}", p] for p, n in zip(places, STAGED)}
        else:
            launcher = [*boot_argv(), *drop, "--exec"] if uid is not None else []
            mounts = {p: ["--size", size, "--tmpfs", p] for p in places}
        return [
            *launcher,
            tool_path("bwrap") or "bwrap",
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
            "--dev",  # null, zero, full, random, urandom, tty: never the host's devices
            "/dev",
            *mounts["/dev/shm"],
            "--proc",
            "/proc",
            "--remount-ro",  # no kernel setting (/proc/sys, /proc/sysrq-trigger) is written
            "/proc",
            *mounts["/tmp"],
            *hidden,
            *back,
            *mounts[scratch],
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
        # (except the scratch directory), makes a minimal /dev and private tmpfs mounts,
        # becomes an unprivileged uid and loads the seccomp filter before it reads its first
        # message. A root host makes the namespaces itself: a user namespace would map the
        # worker to the host's uid 0, which owns every device node and kernel setting.
        # Its own PID namespace with its own /proc: it sees only its processes, and it is
        # not PID 1 there (worker._init_then_worker), so signals it sends itself take effect.
        user = ["--user", "--map-root-user"] if uid is None else []
        return [
            tool_path("unshare") or "unshare",
            *user,
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
            *drop,
            "--readonly-except",
            scratch,
            size,
            *_HIDDEN,
        ]
    # a root host's worker owns no file: bounded tmpfs mounts where every uid may write
    bound = ["--bound", scratch, size] if uid is not None else []
    return [*argv, *drop, *bound, "--seccomp"]


def user_processes(uid: int | None = None) -> int:
    """How many processes ``uid`` (default: this user) runs (RLIMIT_NPROC counts them all)."""
    uid, count = os.getuid() if uid is None else uid, 0
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


def child_limits(
    limits: Limits, join: Sequence[int] = (), nproc: int | None = None
) -> Callable[[], None]:
    """What the child runs between ``fork`` and ``exec``: join the control group, set the
    OS limits."""
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


_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


def remove_tree(path: str) -> None:
    """Remove the directory ``path`` and everything in it; best effort, never raises.

    Iterative and by file descriptor (a 1,500-level chain is neither a ``RecursionError``
    nor ``ENAMETOOLONG``); links are removed, never followed; going back up, each parent
    must be the directory it came from (device and inode), else the removal stops.

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
