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

Placeholders, filled by :func:`render`: ``{token}`` (a unique name), ``{memory}`` (the
worker's ``memory_mb``), ``{sock}`` (a dict of Unix socket paths the test listens on, by
place), ``{max_output}``.
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
# The worker's channel to the host: the write end of a pipe among its descriptors.
CHANNEL = OPERATOR + (
    "chan = None\n"
    "for fd in range(3, 64):\n"
    "    try:\n"
    "        if os_['readlink']('/proc/self/fd/%d' % fd).startswith('pipe:') and "
    "os_['sys'].modules['fcntl'].fcntl(fd, 3) & 3 == 1:\n"
    "            chan = fd\n"
    "    except Exception:\n"
    "        pass\n"
    "def forge(data):\n"
    "    os_['write'](chan, data)\n"
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
                f"os_['write'](chan, {json.dumps(_RESULT).encode()!r} + b'\\n{{\"type\": \"ok\"}}\\n')\n"
                "os_['sys'].modules['importlib'].import_module('time').sleep(60)"
            ),
            "x = 1",
        ),
        worker_died("had not asked for"),
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
    return Attack(name, "seccomp", (LIBC + call,), marker)


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
    "view": "see the host's processes and its /tmp",
    "host": "change or read a process of the host's user (memory, ptrace, limits, SIGSTOP)",
    "userns": "a new user (or other) namespace: capabilities over it",
    "seccomp": "kernel attack surface: io_uring, bpf, perf_event_open, userfaultfd, keyctl, ptrace",
    "socket": "connect to a Unix socket of the host (/var/tmp, /run, any directory, abstract)",
    "memory": "memory outside the address-space limit: tmpfs, scratch, memfds, forked children",
    "children": "leave processes running after the block (background, setsid, double fork)",
    "wire": "forged or oversized messages to the host",
    "cleanup": "break the host's cleanup (a 1,500-level directory chain)",
    "replay": "a block whose replay breaks every new worker (the REPL is reset instead)",
}
"""The attack classes, in the order of the threat model's table, with what they try."""


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
