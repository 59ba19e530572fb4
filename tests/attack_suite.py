"""Attacks on the isolated executor itself: the suite run by tests/test_attack_suite.py.

``tests/attack_corpus.py`` holds hostile blocks that try to get out through the Python
layer (escapes to ``os``, hangs, memory bombs). This suite goes one step further: each
attack assumes the block already reached ``os`` (through :data:`OPERATOR`, one of the
corpus's escapes) and attacks what is left: the kernel (user namespaces, seccomp-filtered
system calls), the host's Unix sockets, the worker's memory bound, processes left running,
the message protocol, the host's cleanup and the journal replay.

Each :class:`Attack` is a list of blocks run in order in one namespace of a new executor,
and a *judge* that reads the outcome of the last block and says ``"held"`` (the level
stopped it) or ``"through"`` (it got what it wanted), with a detail. The blocks print
``GOT <what>`` when they got something and ``NO <why>`` otherwise; a judge never trusts
a worker's word about a protection it is meant to test when the host can check for itself
(the socket servers count connections, the host looks at its own processes and files).

Placeholders, filled by :func:`render`: ``{token}`` (a unique name), ``{ipc_key}`` (a
System V IPC key made from it), ``{memory}`` (the worker's ``memory_mb``), ``{sock}`` (a
dict of Unix socket paths the test listens on, by place), ``{max_output}``, ``{thread}``
(the name a block's thread gives itself, which the host looks for).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from attack_corpus import OPERATOR

# -- helpers that blocks share ---------------------------------------------------------------
# The block reached os (OPERATOR); these give it ctypes and a raw syscall.
LIBC = OPERATOR + (
    "imp = os_['sys'].modules['importlib'].import_module\n"
    "ctypes = imp('ctypes')\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "libc.syscall.restype = ctypes.c_long\n"
    "def sys_(nr, *args):\n"
    "    r = libc.syscall(nr, *args)\n"
    "    return r, ctypes.get_errno()\n"
    "def report(what, r, err):\n"
    "    print(('GOT ' if r >= 0 else 'NO ') + what + ' ' + str(r) + ' errno ' + str(err))\n"
)
# The worker's channel to the host: the write end of a pipe among its descriptors. A frame
# the host takes for a reply carries the id of the host's last message ("re"): the block
# reads it from the worker's memory (it shares the process), and ``tagged`` puts it in.
CHANNEL = OPERATOR + (
    "gc_ = os_['sys'].modules['gc']\n"
    "S = os_['sys'].modules['agentic_machines.execution.worker'].Server\n"
    "tag = [o for o in gc_.get_referrers(S) if type(o) is S][0].tag\n"
    "def tagged(data):\n"
    "    if data.startswith(b'{{'):\n"
    "        return b'{{\"re\":\"' + tag.encode() + b'\",' + data[1:]\n"
    "    return data\n"
    "chan = None\n"
    "for fd in range(3, 64):\n"
    "    try:\n"
    "        if os_['readlink']('/proc/self/fd/%d' % fd).startswith('pipe:') and "
    "os_['sys'].modules['fcntl'].fcntl(fd, 3) & 3 == 1:\n"
    "            chan = fd\n"
    "    except Exception:\n"
    "        pass\n"
    "def forge(data):\n"
    "    os_['write'](chan, tagged(data))\n"
    "    os_['_exit'](0)\n"
)
_RESULT = {
    "type": "result",
    "stdout": "",
    "stderr": "",
    "status": "ok",
    "value": None,
    "error": "",
    "attempts": 1,
    "calls": [],
    "hits": [],
}


def _forged(**fields) -> str:
    """A block that sends a result frame with ``fields`` changed (raw JSON text allowed)."""
    parts = []
    for key, value in {**_RESULT, **fields}.items():
        raw = value[1:] if isinstance(value, str) and value.startswith("\x00") else None
        parts.append(json.dumps(key) + ":" + (raw if raw is not None else json.dumps(value)))
    frame = "{" + ",".join(parts) + "}"
    return CHANNEL + escape(f"forge({frame.encode()!r} + b'\\n')")


def escape(code: str) -> str:
    """``code`` with its braces doubled, so that :func:`render` leaves them as they are."""
    return code.replace("{", "{{").replace("}", "}}")


def raw(text: str) -> str:
    """A field value written into the forged JSON as it is (``Infinity``, a huge number)."""
    return "\x00" + text


# -- the judges ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Outcome:
    """What the host saw of an attack's last block, and what it checked itself."""

    status: str
    stdout: str
    stderr: str
    error: str
    crashed: str = ""  # an exception the host raised instead of an outcome
    connections: int = 0  # connections the test's Unix socket servers accepted
    leftover: tuple[str, ...] = ()  # what the host found left behind (processes, files)
    stderrs: tuple[str, ...] = ()  # the stderr of every block, in order
    stdouts: tuple[str, ...] = ()  # the stdout of every block, in order


Judge = Callable[[Outcome], tuple[str, str]]


def marker(outcome: Outcome) -> tuple[str, str]:
    """Through when the block printed ``GOT``; a crash of the host is through too."""
    if outcome.crashed:
        return "through", f"the host raised {outcome.crashed}"
    got = [line for line in outcome.stdout.splitlines() if line.startswith("GOT")]
    if got:
        return "through", got[0][:120]
    said = [line for line in outcome.stdout.splitlines() if line.startswith("NO")]
    if said:
        return "held", said[0][:120]
    if outcome.error == "ExecutionMemoryExceeded":  # the memory bound stopped it
        return "held", outcome.stderr.strip()[:120]
    # the block neither got nor was refused what it tried: it did not run as planned
    return "undecided", f"{outcome.status}: {outcome.stderr.strip()[:100]}"


def worker_died(reason: str) -> Judge:
    """Held when the block ended as WorkerDied and its message names ``reason``."""

    def judge(outcome: Outcome) -> tuple[str, str]:
        if outcome.crashed:
            return "through", f"the host raised {outcome.crashed}"
        if outcome.error == "WorkerDied" and reason in outcome.stderr:
            return "held", outcome.stderr.strip()[:120]
        return "through", f"{outcome.status}: {outcome.stderr.strip()[:100]}"

    return judge


def output_cut(limit: int) -> Judge:
    """Held when the host cut stdout and stderr to ``limit`` characters (and the marker)."""

    def judge(outcome: Outcome) -> tuple[str, str]:
        if outcome.crashed:
            return "through", f"the host raised {outcome.crashed}"
        longest = max(len(outcome.stdout), len(outcome.stderr))
        verdict = "held" if longest <= limit + 40 else "through"
        return verdict, f"{longest} characters reached the harness (max_output {limit})"

    return judge


def nothing_left(outcome: Outcome) -> tuple[str, str]:
    """Held when the host found nothing left behind and did not crash."""
    if outcome.crashed:
        return "through", f"the host raised {outcome.crashed}"
    if outcome.leftover:
        return "through", "left behind: " + ", ".join(outcome.leftover)[:120]
    return "held", "nothing left behind"


def nothing_left_by(outcome: Outcome) -> tuple[str, str]:
    """:func:`nothing_left`, and no later block's output from the first block's thread;
    its detail names what the first block made and was refused.

    >>> ran_on = Outcome("ok", "", "", "", stdouts=("MADE a thread", "GOT the thread ran on"))
    >>> nothing_left_by(ran_on)
    ('through', "a later block's output came from the block's thread (the block: a thread)")
    >>> nothing_left_by(Outcome("ok", "", "", "", leftover=("process 7",), stdouts=("NO thread: x",)))
    ('through', 'left behind: process 7 (the block: NO thread)')
    """
    verdict, detail = nothing_left(outcome)
    if verdict == "held" and any("GOT" in out for out in outcome.stdouts[1:]):
        verdict, detail = "through", "a later block's output came from the block's thread"
    said = [
        line.removeprefix("MADE ").split(":")[0]
        for line in (outcome.stdouts or ("",))[0].splitlines()
        if line.startswith(("NO ", "MADE "))
    ]
    return verdict, f"{detail} (the block: {'; '.join(said)})"


def no_connection(outcome: Outcome) -> tuple[str, str]:
    """Held when no connection reached the test's Unix sockets (counted by the host)."""
    if outcome.connections:
        return "through", f"{outcome.connections} connection(s) reached a host socket"
    return "held", marker(outcome)[1]


@dataclass(frozen=True)
class Attack:
    """One attack: its class, the blocks it runs in order, and how its outcome is judged."""

    name: str
    kind: str
    blocks: tuple[str, ...]
    judge: Judge
    max_output: int = 4_000
    timeout_s: float | None = None  # the deadline per block, when not the suite's


def reset_told(outcome: Outcome) -> tuple[str, str]:
    """Held when the model was told the REPL was reset and the last block ran again."""
    told = [e for e in outcome.stderrs if "the REPL was reset" in e]
    if outcome.crashed:
        return "through", f"the host raised {outcome.crashed}"
    if told and outcome.status == "ok" and outcome.stdout.startswith("NO"):
        return "held", told[0].strip()[:120]
    return "through", f"the REPL did not recover: {outcome.status}: {outcome.stderr.strip()[:90]}"


def render(code: str, **values) -> str:
    """``code`` with its placeholders filled (see the module docstring)."""
    return code.format(**values)


# -- the attacks -----------------------------------------------------------------------------
WIRE = [
    Attack(
        "forged-infinity", "wire", (_forged(attempts=raw("Infinity")),), worker_died("Infinity")
    ),
    Attack("forged-nan", "wire", (_forged(attempts=raw("NaN")),), worker_died("NaN")),
    Attack("forged-1e999", "wire", (_forged(attempts=raw("1e999")),), worker_died("not finite")),
    Attack("forged-huge-int", "wire", (_forged(attempts=raw("9" * 5000)),), worker_died("digits")),
    Attack(
        "forged-many-attempts",
        "wire",
        (_forged(attempts=10**9),),
        worker_died("attempts after 0 request"),
    ),
    Attack("forged-attempts-type", "wire", (_forged(attempts="1"),), worker_died("attempts")),
    Attack("forged-status", "wire", (_forged(status="pwned"),), worker_died("unknown status")),
    Attack("forged-stdout-type", "wire", (_forged(stdout=[1]),), worker_died("expected a string")),
    Attack(
        "forged-calls",
        "wire",
        (_forged(calls=[["act", [], {}, None]] * 1000),),
        worker_died("calls"),
    ),
    Attack("forged-hits", "wire", (_forged(hits=[["act", 5]]),), worker_died("hits")),
    Attack(
        "forged-big-stdout",
        "wire",
        (_forged(stdout="x" * 3_000_000, stderr="y" * 3_000_000),),
        output_cut(4_000),
    ),
    Attack(
        "forged-unknown-frame",
        "wire",
        (CHANNEL + escape('forge(b\'{"type": "surprise"}\\n\')'),),
        worker_died("unexpected 'surprise'"),
    ),
    Attack(
        "forged-effect-kind",
        "wire",
        (CHANNEL + escape('forge(b\'{"type": "effect", "kind": [1], "args": []}\\n\')'),),
        worker_died("unknown effect"),
    ),
    Attack(
        "forged-not-object",
        "wire",
        (CHANNEL + "forge(b'[1, 2, 3]\\n')",),
        worker_died("JSON object"),
    ),
    Attack(
        "forged-bad-utf8",
        "wire",
        (CHANNEL + escape('forge(b\'{"type": "\\xff\\xfe"}\\n\')'),),
        worker_died("not a JSON message"),
    ),
    Attack(
        "forged-deep-nesting",
        "wire",
        (CHANNEL + "forge(b'[' * 100000 + b']' * 100000 + b'\\n')",),
        worker_died("not a JSON message"),
    ),
    Attack(
        "forged-two-frames",
        "wire",
        (
            # a valid result, then a frame nobody asked for; then wait to be killed
            CHANNEL
            + escape(
                f"os_['write'](chan, tagged({json.dumps(_RESULT).encode()!r}) + b'\\n{{\"type\": \"ok\"}}\\n')\n"
                "os_['sys'].modules['importlib'].import_module('time').sleep(60)"
            ),
            "x = 1",
        ),
        worker_died("had not asked for"),
    ),
    Attack(
        "forged-untagged-result",
        "wire",
        # a well-formed result without the id of the message it answers (as a frame
        # written ahead of time would be)
        (CHANNEL + escape(f"os_['write'](chan, {json.dumps(_RESULT).encode()!r} + b'\\n')"),),
        worker_died("not the reply to the host's last message"),
    ),
    Attack(
        "huge-exception-message",
        "wire",
        ("raise ValueError('z' * 3_000_000)",),
        output_cut(4_000),
    ),
]

CLEANUP = [
    Attack(
        "deep-directory-chain",
        "cleanup",
        (
            OPERATOR + "for _ in range(1500):\n"
            "    os_['mkdir']('dddddddddddddddd')\n"
            "    os_['chdir']('dddddddddddddddd')\n",
        ),
        nothing_left,
    ),
]


def _syscall(name: str, call: str) -> Attack:
    """A kernel attack surface the seccomp filter closes: the call succeeds = through."""
    return _syscall_as(name, "seccomp", call)


def _syscall_as(name: str, kind: str, call: str) -> Attack:
    """A raw system call of class ``kind``: the call succeeds = through."""
    return Attack(name, kind, (LIBC + call,), marker)


SECCOMP = [
    _syscall(
        "io-uring-setup",
        "params = (ctypes.c_char * 120)()\nr, e = sys_(425, 8, ctypes.byref(params))\n"
        "report('io_uring_setup', r, e)",
    ),
    _syscall(
        "bpf-map-create",
        # union bpf_attr for BPF_MAP_CREATE: type ARRAY (2), key 4 bytes, value 4, 1 entry
        "attr = (ctypes.c_uint32 * 30)(2, 4, 4, 1)\nr, e = sys_(321, 0, ctypes.byref(attr), 120)\n"
        "report('bpf', r, e)",
    ),
    _syscall(
        "perf-event-open",
        # struct perf_event_attr: type SOFTWARE (1), size 128, config CPU_CLOCK (0)
        "attr = (ctypes.c_uint32 * 32)(1, 128)\n"
        "r, e = sys_(298, ctypes.byref(attr), 0, -1, -1, 0)\nreport('perf_event_open', r, e)",
    ),
    _syscall("userfaultfd", "r, e = sys_(323, 0)\nreport('userfaultfd', r, e)"),
    _syscall(
        "keyctl-session",
        "r, e = sys_(250, 0, -3, 0)\nreport('keyctl(KEYCTL_GET_KEYRING_ID)', r, e)",
    ),
    _syscall("ptrace-traceme", "r, e = sys_(101, 0, 0, 0, 0)\nreport('ptrace(TRACEME)', r, e)"),
]

USERNS = [
    Attack(
        "unshare-user",
        "userns",
        (LIBC + "r, e = sys_(272, 0x10000000)\nreport('unshare(CLONE_NEWUSER)', r, e)",),
        marker,
    ),
    Attack(
        "unshare-mount-net",
        "userns",
        (LIBC + "r, e = sys_(272, 0x40020000)\nreport('unshare(CLONE_NEWNS|CLONE_NEWNET)', r, e)",),
        marker,
    ),
    Attack(
        "shell-unshare-root",
        "userns",
        (
            OPERATOR + "code = os_['system']('unshare -Urm sh -c \"mount -t tmpfs none /mnt\" "
            ">/dev/null 2>&1')\nprint(('GOT ' if code == 0 else 'NO ') + 'root in a new user "
            "namespace, status ' + str(code))",
        ),
        marker,
    ),
    Attack(
        "setns",
        "userns",
        (
            LIBC + "fd = os_['open']('/proc/self/ns/net', os_['O_RDONLY'])\n"
            "r, e = sys_(308, fd, 0)\nreport('setns', r, e)",
        ),
        marker,
    ),
]


def _socket(name: str, place: str) -> Attack:
    """Connect to the test's Unix socket at ``place``; the host counts what reached it."""
    return Attack(
        name,
        "socket",
        (
            OPERATOR + "sk = os_['sys'].modules['importlib'].import_module('socket')\n"
            f"path = {{sock}}[{place!r}]\n"
            "try:\n"
            "    s = sk.socket(sk.AF_UNIX)\n"
            "    s.settimeout(1)\n"
            "    s.connect(path)\n"
            "    print('GOT a connection to', path)\n"
            "except Exception as exc:\n"
            "    print('NO', type(exc).__name__, exc)",
        ),
        no_connection,
    )


SOCKETS = [
    Attack(
        "unix-socketpair",
        "socket",
        (
            LIBC + "pair = (ctypes.c_int * 2)()\nr, e = sys_(53, 1, 1, 0, ctypes.byref(pair))\n"
            "report('socketpair(AF_UNIX)', r, e)",
        ),
        marker,
    ),
    _socket("unix-socket-var-tmp", "var_tmp"),
    _socket("unix-socket-run", "run"),
    _socket("unix-socket-visible-dir", "visible"),
    _socket("unix-socket-abstract", "abstract"),
]

# Filling memory that is not the worker's address space: written in 8 MB pieces (files are
# at most file_size_mb) until twice memory_mb is held or the kernel refuses.
_FILL = OPERATOR + (
    "held = 0\n"
    "try:\n"
    "    for n in range(2 * {memory} // 8):\n"
    "        fd = os_['open']('%s/am-fill-{token}-%d' % (WHERE, n), os_['O_WRONLY'] | os_['O_CREAT'])\n"
    "        held += os_['write'](fd, b'x' * (8 * 1024 * 1024)) // (1024 * 1024)\n"
    "        os_['close'](fd)\n"
    "except Exception as exc:\n"
    "    print('NO', held, 'MB, then', type(exc).__name__)\n"
    "if held >= 2 * {memory}:\n"
    "    print('GOT', held, 'MB outside the address space with memory_mb={memory}')\n"
)
MEMORY = [
    Attack("fill-tmp", "memory", (_FILL.replace("WHERE", "'/tmp'"),), marker),
    Attack("fill-dev-shm", "memory", (_FILL.replace("WHERE", "'/dev/shm'"),), marker),
    Attack("fill-scratch", "memory", (_FILL.replace("WHERE", "'.'"),), marker),
    Attack(
        "many-inodes",
        "memory",
        (
            # empty files take no page of a tmpfs: only its inode count (or a control
            # group) bounds them; about 1 kB of kernel memory each
            OPERATOR + "made = 0\n"
            "try:\n"
            "    while made < {memory} * 1024:\n"
            "        name = '/tmp/am-fill-{token}-%d' % made\n"
            "        os_['close'](os_['open'](name, os_['O_CREAT'] | os_['O_WRONLY']))\n"
            "        made += 1\n"
            "except Exception as exc:\n"
            "    print('NO', made, 'files, then', type(exc).__name__)\n"
            "if made >= {memory} * 1024:\n"
            "    print('GOT', made, 'inodes with memory_mb={memory}')\n",
        ),
        marker,
    ),
    Attack(
        "memfds",
        "memory",
        (
            OPERATOR + "held, fds = 0, []\n"
            "try:\n"
            "    for n in range(40):\n"
            "        fd = os_['memfd_create']('x')\n"
            "        held += os_['write'](fd, b'x' * (8 * 1024 * 1024)) // (1024 * 1024)\n"
            "        fds.append(fd)\n"
            "except Exception as exc:\n"
            "    print('NO', held, 'MB, then', type(exc).__name__)\n"
            "if held > {memory}:\n"
            "    print('GOT', held, 'MB of memfds with memory_mb={memory}')\n",
        ),
        marker,
    ),
    Attack(
        "forked-children-memory",
        "memory",
        (
            OPERATOR + "pids = []\n"
            "for i in range(4):\n"
            "    pid = os_['fork']()\n"
            "    if pid == 0:\n"
            "        b = b'x' * ({memory} * 3 // 4 * 1024 * 1024)\n"
            "        os_['system']('sleep 1')\n"
            "        os_['_exit'](0)\n"
            "    pids.append(pid)\n"
            "alive = sum(os_['waitpid'](p, 0)[1] == 0 for p in pids)\n"
            "held = alive * ({memory} * 3 // 4)\n"
            "print(('GOT ' if held > {memory} else 'NO ') + str(alive) + ' children held ' + "
            "str(held) + ' MB at once, memory_mb={memory}')",
        ),
        marker,
    ),
]

_START = "os_['system'](\"{how} sh -c 'sleep 300; : am-probe-{{token}}' >/dev/null 2>&1 &\")"
CHILDREN = [
    Attack(
        "child-in-background", "children", (OPERATOR + _START.format(how=""), "x = 1"), nothing_left
    ),
    Attack(
        "child-setsid", "children", (OPERATOR + _START.format(how="setsid"), "x = 1"), nothing_left
    ),
    Attack(
        "child-double-fork",
        "children",
        (
            OPERATOR + "if os_['fork']() == 0:\n"
            "    os_['setsid']()\n"
            "    if os_['fork']() == 0:\n"
            "        os_['execv']('/bin/sh', ['sh', '-c', 'sleep 300; : am-probe-{token}'])\n"
            "    os_['_exit'](0)\n",
            "x = 1",
        ),
        nothing_left,
    ),
]


def _host(name: str, call: str) -> Attack:
    """What a worker can do to a process of the host's user.

    ``{host}`` is the host's pid (only harmless probes touch it: signal 0, reading its
    environment); ``{victim}`` a ``sleep`` the test started as the same user, which the
    probes that change a process (its memory, ptrace, its limits, SIGSTOP) target instead.
    """
    return Attack(name, "host", (LIBC + call,), marker)


HOST = [
    _host(
        "write-process-memory",
        "try:\n"
        "    fd = os_['open']('/proc/{victim}/maps', os_['O_RDONLY'])\n"
        "    maps = os_['read'](fd, 1 << 20).decode().splitlines()\n"
        "    end = int([m for m in maps if '[stack]' in m][0].split()[0].split('-')[1], 16)\n"
        "    mem = os_['open']('/proc/{victim}/mem', os_['O_RDWR'])\n"
        "    n = os_['pwrite'](mem, b'\\0' * 8, end - 8)\n"
        "    print('GOT wrote', n, 'bytes into the memory of process {victim}')\n"
        "except Exception as exc:\n"
        "    print('NO', type(exc).__name__, exc)",
    ),
    _host(
        "ptrace-process",
        "r, e = sys_(101, 16, {victim}, 0, 0)\n"  # PTRACE_ATTACH
        "report('ptrace(PTRACE_ATTACH, process {victim})', r, e)",
    ),
    _host(
        "set-process-rlimits",
        "new = (ctypes.c_uint64 * 2)(0, 0)\n"
        "r, e = sys_(302, {victim}, 4, ctypes.byref(new), None)\n"  # prlimit64 RLIMIT_CORE
        "report('prlimit64(process {victim}, RLIMIT_CORE, 0)', r, e)",
    ),
    _host(
        "freeze-process",
        "r = -1\ntry:\n    os_['kill']({victim}, 19)\n    r = 0\nexcept Exception:\n    pass\n"
        "report('kill(process {victim}, SIGSTOP)', r, 0)",
    ),
    _host(
        "signal-host",
        "r = -1\ntry:\n    os_['kill']({host}, 0)\n    r = 0\nexcept Exception:\n    pass\n"
        "report('kill(host, 0)', r, 0)",
    ),
    _host(
        "read-host-environment",
        "try:\n    fd = os_['open']('/proc/{host}/environ', os_['O_RDONLY'])\n"
        "    data = os_['read'](fd, 1 << 16)\n"
        "    print(('GOT ' if b'=' in data else 'NO ') + 'the host environment: '"
        " + str(data.count(b'=')) + ' variables')\n"
        "except Exception as exc:\n    print('NO', type(exc).__name__)",
    ),
]

VIEW = [
    Attack(
        "see-host-processes",
        "view",
        (
            OPERATOR + "seen = os_['path'].exists('/proc/{host}/cmdline')\n"
            "print(('GOT ' if seen else 'NO ') + 'the host process in /proc')",
        ),
        marker,
    ),
    Attack(
        "read-host-tmp",
        "view",
        (
            # the test wrote this file in the host's /tmp (where its sockets often are)
            OPERATOR + "seen = os_['path'].exists('/tmp/am-visible-{token}')\n"
            "print(('GOT ' if seen else 'NO ') + \"the host's /tmp\")",
        ),
        marker,
    ),
]


def _open(name: str, kind: str, path: str, flags: str, then: str = "") -> Attack:
    """Open ``path`` with ``flags`` (never writing a device or a setting that would change
    anything: ``then`` runs on the opened descriptor ``fd``); opened = through."""
    return Attack(
        name,
        kind,
        (
            OPERATOR + "try:\n"
            f"    fd = os_['open']({path!r}, {flags})\n"
            f"    {then or 'pass'}\n"
            f"    print('GOT', {path!r}, 'opened for writing')\n"
            "except Exception as exc:\n"
            "    print('NO', type(exc).__name__, exc)",
        ),
        marker,
    )


_RW = "os_['O_RDWR']"
_WR = "os_['O_WRONLY']"
DEVICE = [
    # a host device node reachable from the worker: a loop device writes into a host file,
    # /dev/kvm makes a virtual machine, /dev/kmsg writes the kernel's log
    _open("open-loop-device", "device", "/dev/loop0", _RW),
    _open("open-loop-control", "device", "/dev/loop-control", _RW),
    _open("open-kvm", "device", "/dev/kvm", _RW),
    _open("open-kmsg-for-writing", "device", "/dev/kmsg", _WR),
    _open("open-userfaultfd-device", "device", "/dev/userfaultfd", _RW),
]
_LAYER = (
    "null = os_['open']('/dev/null', os_['O_RDONLY'])\n"
    "r1, e1 = sys_(16, null, 0x4C82, 0)\n"
    "r2, e2 = sys_(165, b'none', b'/am-no-such-dir', b'tmpfs', 0, None)\n"
    "layer = 'seccomp filter: %s' % ('yes' if (e1, e2) == (1, 1) else 'NO (ioctl %s, mount %s)'"
    " % (os_['strerror'](e1), os_['strerror'](e2)))\n"
)
"""Which layer answers: ``layer`` says whether the seccomp filter refused two probes that
the kernel itself answers with another errno (ENOTTY, ENOENT) before any permission check."""
# LOOP_CTL_GET_FREE on the host's loop-control device, as a block would (a free loop
# device's number is through). Then which layer stopped it: the same request on /dev/null
# gets ENOTTY from the kernel without the seccomp filter and EPERM with it; a mount on a
# missing directory gets ENOENT from the kernel (before any capability check), EPERM from
# the filter. With the filter both say EPERM before the kernel sees them.
_LOOP_CONTROL = (
    "try:\n"
    "    fd = os_['open']('/dev/loop-control', os_['O_RDWR'])\n"
    "except Exception as exc:\n"
    "    fd, opened = -1, 'open ' + os_['strerror'](exc.errno)\n"
    "if fd >= 0:\n"
    "    r, e = sys_(16, fd, 0x4C82, 0)\n"
    "    opened = 'opened, ioctl ' + (str(r) if r >= 0 else os_['strerror'](e))\n"
    "    if r >= 0:\n"
    "        print('GOT a free loop device, number', r)\n"
    + _LAYER
    + "print('NO /dev/loop-control:', opened + ';', layer)\n"
)
KERNEL = [
    # a setting opened for writing is through; the one written gets its own value back
    _open(
        "write-printk-ratelimit",
        "kernel",
        "/proc/sys/kernel/printk_ratelimit",
        _RW,
        "os_['write'](fd, os_['read'](fd, 64))",
    ),
    _open("open-core-pattern", "kernel", "/proc/sys/kernel/core_pattern", _WR),
    _open("open-sysrq-trigger", "kernel", "/proc/sysrq-trigger", _WR),
    _open("open-sys-setting", "kernel", "/sys/kernel/mm/ksm/run", _WR),
    _syscall_as(
        "mount-tmpfs",
        "kernel",
        "os_['mkdir']('m')\nr, e = sys_(165, b'none', b'm', b'tmpfs', 0, None)\n"
        "report('mount(tmpfs)', r, e)",
    ),
    _syscall_as(
        "open-by-handle-at",
        "kernel",
        "handle = (ctypes.c_char * 136)()\nr, e = sys_(304, -100, ctypes.byref(handle), 0)\n"
        "report('open_by_handle_at', r, e)",
    ),
    _syscall_as(
        "kexec-load", "kernel", "r, e = sys_(246, 0, 0, None, 0)\nreport('kexec_load', r, e)"
    ),
    _syscall_as(
        "init-module", "kernel", "r, e = sys_(175, None, 0, b'')\nreport('init_module', r, e)"
    ),
    Attack("ioctl-loop-control", "kernel", (LIBC + _LOOP_CONTROL,), marker),
    Attack(
        "leave-control-group",
        "kernel",
        (
            OPERATOR + "done = []\n"
            "for d in ('/sys/fs/cgroup/memory', '/sys/fs/cgroup/pids', '/sys/fs/cgroup/unified', "
            "'/sys/fs/cgroup'):\n"
            "    try:\n"
            "        fd = os_['open'](d + '/cgroup.procs', os_['O_WRONLY'])\n"
            "        os_['write'](fd, b'0')\n"
            "        done.append(d)\n"
            "    except Exception:\n"
            "        pass\n"
            "print(('GOT moved to the root of ' + str(done)) if done else 'NO control group left')",
        ),
        marker,
    ),
]
_ALIVE_THREADS = (
    "n = len(os_['listdir']('/proc/self/task'))\n"
    "print(('GOT ' if n > 1 else 'NO ') + str(n) + ' thread(s) in the worker')"
)
# Issue 37's block: a thread, a detached process, a System V shared-memory segment, a POSIX
# message queue (and POSIX shared memory) in one block, then a later block. The host looks
# for each itself: the thread by the name it gives itself (/proc/*/task/*/comm), the process
# by its command line, the IPC objects by key and name (run_attack).
EVERYTHING_AT_ONCE = LIBC + (
    "imp = os_['sys'].modules['importlib'].import_module\n"
    "got = []\n"
    "def named():\n"
    "    libc.prctl(15, b'{thread}', 0, 0, 0)\n"
    "    for _ in range(300):\n"
    "        imp('time').sleep(0.2)\n"
    "        print('GOT the thread ran on')\n"
    "try:\n"
    "    imp('threading').Thread(target=named, daemon=True).start()\n"
    "    got.append('a thread')\n"
    "except Exception as exc:\n"
    "    print('NO thread:', type(exc).__name__, exc)\n"
    "if os_['fork']() == 0:\n"
    "    os_['setsid']()\n"
    "    if os_['fork']() == 0:\n"
    "        os_['execv']('/bin/sh', ['sh', '-c', 'sleep 300; : am-probe-{token}'])\n"
    "    os_['_exit'](0)\n"
    "got.append('a detached process')\n"
    "r, e = sys_(29, {ipc_key}, 1 << 20, 0o1666)\n"
    "got.append('a System V segment') if r >= 0 else print('NO shmget:', os_['strerror'](e))\n"
    "libc.mq_open.restype = ctypes.c_int\n"
    "r = libc.mq_open(b'/am-mq-{token}', 0o102, 0o666, None)\n"
    "e = ctypes.get_errno()\n"
    "got.append('a POSIX queue') if r >= 0 else print('NO mq_open:', os_['strerror'](e))\n"
    "try:\n"
    "    os_['close'](os_['open']('/dev/shm/am-shm-{token}', os_['O_CREAT'] | os_['O_RDWR']))\n"
    "    got.append('POSIX shared memory')\n"
    "except Exception as exc:\n"
    "    print('NO shm_open:', exc)\n"
    "print('MADE', ', '.join(got))"
)
LINGERING = [
    Attack("everything-at-once", "lingering", (EVERYTHING_AT_ONCE, "x = 1"), nothing_left_by),
    Attack(
        "thread-outlives-block",
        "lingering",
        (
            OPERATOR + "imp = os_['sys'].modules['importlib'].import_module\n"
            "th, time_ = imp('threading'), imp('time')\n"
            "try:\n"
            "    th.Thread(target=time_.sleep, args=(60,), daemon=True).start()\n"
            "except Exception as exc:\n"
            "    print('NO', type(exc).__name__, exc)",
            OPERATOR + _ALIVE_THREADS,
        ),
        marker,
    ),
    Attack(
        "timer-forges-next-result",
        "lingering",
        (
            # an interval timer whose handler, in the next block, sends that block's result
            # with the id of the message it answers (read then from the worker's memory)
            CHANNEL + "imp = os_['sys'].modules['importlib'].import_module\n"
            "sig = imp('signal')\n"
            "def fire(*a):\n"
            "    now = [o for o in gc_.get_referrers(S) if type(o) is S][0].tag\n"
            '    frame = b\'{{"re":"\' + now.encode() + b\'","type":"result","stdout":'
            '"GOT a result forged by a timer","stderr":"","status":"ok",'
            '"value":null,"error":"","attempts":1,"calls":[],"hits":[]}}\\n\'\n'
            "    os_['write'](chan, frame)\n"
            "sig.signal(sig.SIGALRM, fire)\n"
            "sig.setitimer(sig.ITIMER_REAL, 1.0)",
            OPERATOR + "os_['sys'].modules['importlib'].import_module('time').sleep(2.5)\n"
            "print('NO the real result')",
        ),
        marker,
    ),
    _syscall_as(
        "posix-timer",
        "lingering",
        "tid = ctypes.c_int(0)\nr, e = sys_(222, 1, None, ctypes.byref(tid))\n"
        "report('timer_create', r, e)",
    ),
    Attack(
        "sysv-shared-memory",
        "lingering",
        (LIBC + "r, e = sys_(29, {ipc_key}, 64 << 20, 0o1666)\nreport('shmget 64 MB', r, e)",),
        nothing_left,
    ),
    Attack(
        "sysv-message-queue",
        "lingering",
        (LIBC + "r, e = sys_(68, {ipc_key}, 0o1666)\nreport('msgget', r, e)",),
        nothing_left,
    ),
    Attack(
        "posix-message-queue",
        "lingering",
        (
            LIBC + "libc.mq_open.restype = ctypes.c_int\n"
            "r = libc.mq_open(b'/am-mq-{token}', 0o102, 0o666, None)\n"
            "report('mq_open', r, ctypes.get_errno())",
        ),
        nothing_left,
    ),
    Attack(
        "posix-shared-memory",
        "lingering",
        (
            OPERATOR
            + "fd = os_['open']('/dev/shm/am-shm-{token}', os_['O_CREAT'] | os_['O_RDWR'])\n"
            "os_['write'](fd, b'x' * 4096)",
        ),
        nothing_left,
    ),
]

_RECOVERED = "print('NO the REPL works again')"
REPLAY = [
    Attack(
        "replay-hanging-deepcopy",
        "replay",
        (
            # every later block's snapshot deep-copies h: a C-level hang, in every new worker
            "class H:\n    def __deepcopy__(self, memo):\n        return sum(range(10**13))\nh = H()",
            "x = 1",
            "y = 2",
            _RECOVERED,
        ),
        reset_told,
        timeout_s=2.0,
    ),
    Attack(
        "replay-patched-decoder",
        "replay",
        (
            OPERATOR + "os_['sys'].modules['json'].loads = lambda *a, **k: 1 / 0",
            "x = 1",
            "y = 2",
            _RECOVERED,
        ),
        reset_told,
        timeout_s=5.0,
    ),
    Attack(
        "replay-not-deterministic",
        "replay",
        ("print(id(object()))", OPERATOR + "os_['_exit'](3)", "y = 2", _RECOVERED),
        reset_told,
        timeout_s=5.0,
    ),
]

ATTACKS: list[Attack] = [
    *DEVICE,
    *KERNEL,
    *LINGERING,
    *VIEW,
    *REPLAY,
    *WIRE,
    *CLEANUP,
    *SECCOMP,
    *USERNS,
    *SOCKETS,
    *MEMORY,
    *CHILDREN,
    *HOST,
]


KINDS = {
    "device": "open a host device for writing (loop, loop-control, KVM, kernel log, userfaultfd)",
    "kernel": "change a kernel setting or the kernel (/proc/sys, sysrq, /sys, mount, "
    "open_by_handle_at, kexec, modules, loop ioctl, leaving the control group)",
    "lingering": "leave something running or held after the block (a thread, a timer that "
    "forges the next result, a POSIX timer, SysV and POSIX IPC; a thread, a detached process "
    "and IPC objects from one block)",
    "view": "see the host's processes and its /tmp",
    "host": "change or read a process of the host's user (memory, ptrace, limits, SIGSTOP)",
    "userns": "a new user (or other) namespace: capabilities over it",
    "seccomp": "kernel attack surface: io_uring, bpf, perf_event_open, userfaultfd, keyctl, ptrace",
    "socket": "a Unix socket: connect to one of the host's (/var/tmp, /run, any directory, "
    "abstract) or make a pair",
    "memory": "memory outside the address-space limit: tmpfs, scratch, memfds, forked "
    "children, inodes",
    "children": "leave processes running after the block (background, setsid, double fork)",
    "wire": "forged or oversized messages to the host",
    "cleanup": "break the host's cleanup (a 1,500-level directory chain)",
    "replay": "a block whose replay breaks every new worker (the REPL is reset instead)",
}
"""The attack classes, in the order of the threat model's table, with what they try."""

QUICK = {
    "device": "open-kmsg-for-writing",
    "kernel": "write-printk-ratelimit",
    "lingering": "everything-at-once",
    "view": "see-host-processes",
    "host": "signal-host",
    "userns": "unshare-user",
    "seccomp": "io-uring-setup",
    "socket": "unix-socketpair",
    "memory": "fill-scratch",
    "children": "child-setsid",
    "wire": "forged-untagged-result",
    "cleanup": "deep-directory-chain",
    "replay": "replay-not-deterministic",
}
"""One cheap attack per class: what every test run tries in every column of the table
(the whole suite runs there under the thorough profile)."""


def cell(verdicts: dict[str, tuple[str, str, str]], kind: str) -> str:
    """One cell of the table: ``held (n)`` or ``**through**: names (k of n)``.

    >>> cell({"a": ("wire", "held", ""), "b": ("wire", "through", "")}, "wire")
    '**through**: b (1 of 2)'
    """
    names = sorted(n for n, v in verdicts.items() if v[0] == kind)
    bad = [n for n in names if verdicts[n][1] != "held"]
    if not bad:
        return f"held ({len(names)})"
    return f"**through**: {', '.join(bad)} ({len(bad)} of {len(names)})"


def table(results: dict[str, dict[str, tuple[str, str, str]]]) -> str:
    """The Markdown table of docs/threat_model.md: a row per attack class, a column per level."""
    levels = list(results)
    lines = [
        "| attack class | " + " | ".join(f"`{lv}`" for lv in levels) + " |",
        "|---|" + "---|" * len(levels),
    ]
    for kind, what in KINDS.items():
        cells = " | ".join(cell(results[lv], kind) for lv in levels)
        lines.append(f"| {kind}: {what} | {cells} |")
    return "\n".join(lines)
