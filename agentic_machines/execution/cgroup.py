"""One memory bound for a worker and everything it holds: a control group, where one can be had.

An address-space limit (``RLIMIT_AS``) bounds one process. A worker's model code can also
fork children (each with its own address space), fill tmpfs mounts (``/tmp``, ``/dev/shm``,
its scratch directory: RAM) and hold memfds: none of these count against the worker's own
address space. A memory control group counts them all together (pages of a tmpfs or a memfd
are charged to the group of the process that wrote them), and its process limit bounds the
number of processes, whoever runs the host.

:meth:`WorkerGroup.create` makes a child group of the host's own group, when the host may:

- cgroup v1 (``memory`` and ``pids`` hierarchies): a child of the host's group in each,
  with ``memory.limit_in_bytes`` (and ``memory.memsw.limit_in_bytes``, so that swap does
  not extend it) and ``pids.max``;
- cgroup v2: a child of the host's group, when that group already passes the ``memory``
  and ``pids`` controllers to its children (``cgroup.subtree_control``), with
  ``memory.max``, ``memory.swap.max`` and ``pids.max``.

Otherwise it returns None, and the worker's memory is bounded only by its parts (see
docs/threat_model.md for the honest sum). The worker joins the group between ``fork`` and
``exec`` (:meth:`WorkerGroup.join_fds`), so everything it starts is inside from the start.
"""

from __future__ import annotations

import atexit
import itertools
import os
import threading
import time

__all__ = ["WorkerGroup", "sweep"]

_ROOT = "/sys/fs/cgroup"
_COUNTER = itertools.count()


def own_groups() -> dict[str, str]:
    """Controller (``memory``, ``pids``, or ``""`` for v2) -> this process's group path."""
    out = {}
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                for c in controllers.split(",") if controllers else [""]:
                    out[c] = path
    except (OSError, ValueError):
        pass
    return out


def _write(path: str, value: str) -> None:
    with open(path, "w", encoding="ascii") as f:
        f.write(value)


class WorkerGroup:
    """A control group bounding one worker's memory and processes (see the module docstring).

    ``dirs`` are its directories (one per hierarchy); ``v2`` says which interface.
    """

    def __init__(self, dirs: list[str], v2: bool) -> None:
        self.dirs, self.v2 = dirs, v2

    @classmethod
    def create(cls, memory_bytes: int, pids: int) -> WorkerGroup | None:
        """A new group limited to ``memory_bytes`` and ``pids`` processes; None when none can be made.

        >>> group = WorkerGroup.create(64 * 1024 * 1024, 32)
        >>> group is None or group.remove() is None
        True
        """
        sweep()
        own = own_groups()
        name = f"am-worker-{os.getpid()}-{next(_COUNTER)}"
        made: list[str] = []
        try:
            if "memory" in own and "pids" in own:
                memory = os.path.join(_ROOT, "memory", own["memory"].lstrip("/"), name)
                procs = os.path.join(_ROOT, "pids", own["pids"].lstrip("/"), name)
                _remove_orphans(os.path.dirname(memory))
                _remove_orphans(os.path.dirname(procs))
                for d in (memory, procs):
                    os.mkdir(d)
                    made.append(d)
                _write(os.path.join(memory, "memory.limit_in_bytes"), str(memory_bytes))
                swap = os.path.join(memory, "memory.memsw.limit_in_bytes")
                if os.path.exists(swap):
                    _write(swap, str(memory_bytes))
                _write(os.path.join(procs, "pids.max"), str(pids))
                return cls(made, v2=False)
            if "" in own:
                parent = os.path.join(_ROOT, own[""].lstrip("/"))
                with open(os.path.join(parent, "cgroup.subtree_control"), encoding="ascii") as f:
                    enabled = f.read().split()
                if not {"memory", "pids"} <= set(enabled):
                    return None
                d = os.path.join(parent, name)
                _remove_orphans(parent)
                os.mkdir(d)
                made.append(d)
                _write(os.path.join(d, "memory.max"), str(memory_bytes))
                if os.path.exists(os.path.join(d, "memory.swap.max")):
                    _write(os.path.join(d, "memory.swap.max"), "0")
                _write(os.path.join(d, "pids.max"), str(pids))
                return cls(made, v2=True)
        except OSError:
            cls(made, v2=False).remove()
        return None

    def join_fds(self) -> list[int]:
        """Descriptors of the groups' ``cgroup.procs``; writing ``0`` to each moves the writer in.

        Opened by the host before ``fork``: the child writes to them between ``fork`` and
        ``exec`` (no path lookup, no allocation there). The caller closes them after.
        """
        return [os.open(os.path.join(d, "cgroup.procs"), os.O_WRONLY) for d in self.dirs]

    def out_of_memory(self) -> bool:
        """Whether the kernel killed a process of the group for memory (or refused a charge)."""
        try:
            if self.v2:
                with open(os.path.join(self.dirs[0], "memory.events"), encoding="ascii") as f:
                    events = dict(line.split() for line in f if line.strip())
                return int(events.get("oom_kill", 0)) > 0 or int(events.get("oom", 0)) > 0
            # memory.failcnt also counts page cache reclaimed at the limit: not a failure
            with open(os.path.join(self.dirs[0], "memory.oom_control"), encoding="ascii") as f:
                events = dict(line.split() for line in f if line.strip())
            return int(events.get("oom_kill", 0)) > 0 or int(events.get("under_oom", 0)) > 0
        except (OSError, ValueError):
            return False

    def kill(self) -> None:
        """SIGKILL every process still in the group (a worker's leftovers)."""
        for _ in range(100):
            pids = self._pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass

    def _pids(self) -> list[int]:
        out: list[int] = []
        for d in self.dirs:
            try:
                with open(os.path.join(d, "cgroup.procs"), encoding="ascii") as f:
                    out += [int(p) for p in f.read().split()]
            except (OSError, ValueError):
                pass
        return out

    def remove(self) -> None:
        """Kill what is left in the group and remove it; a group whose last processes are
        still exiting is removed by a later :func:`sweep` (at the next worker start, or at exit).
        """
        self.kill()
        with _PENDING_LOCK:
            _PENDING.extend(self.dirs)
        self.dirs = []
        sweep()


_PENDING: list[str] = []
_PENDING_LOCK = threading.Lock()  # runners of several threads share the list


def sweep() -> None:
    """Remove the groups left to remove whose processes have exited (never waits)."""
    with _PENDING_LOCK:
        for d in list(_PENDING):
            try:
                os.rmdir(d)
            except FileNotFoundError:
                pass
            except OSError:
                continue
            _PENDING.remove(d)


def _remove_orphans(parent: str) -> None:
    # Groups of hosts that ended before their workers' groups were empty (a killed test
    # process, os._exit): removed by the next host, once empty. rmdir never removes a
    # group that still holds a process.
    try:
        names = [n for n in os.listdir(parent) if n.startswith("am-worker-")]
    except OSError:
        return
    for n in names:
        owner = n.split("-")[2]
        if owner.isdigit() and int(owner) != os.getpid() and not os.path.exists(f"/proc/{owner}"):
            try:
                os.rmdir(os.path.join(parent, n))
            except OSError:
                pass


@atexit.register
def _at_exit() -> None:
    for _ in range(20):  # the last workers' processes may still be exiting
        sweep()
        if not _PENDING:
            return
        time.sleep(0.05)
