"""What confines a worker process: the namespace tools, the command line, the limits.

:func:`namespace_tool` finds the first tool (``bwrap``, else ``unshare``) that can start
a worker here, probed once per process with the worker's own start-up. :func:`_wrap`
builds the command line that runs a worker inside it (no network, a read-only view of the
filesystem, private size-limited tmpfs mounts, the host's socket directories hidden, the
seccomp filter); :func:`_limit` sets the OS limits in the child; :func:`remove_tree`
removes a worker's scratch directory without following a link the worker planted.
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


def _limit(
    limits: Limits, join: Sequence[int] = (), nproc: int | None = None
) -> Callable[[], None]:
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
