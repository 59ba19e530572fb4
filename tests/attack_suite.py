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


Judge = Callable[[Outcome], tuple[str, str]]


def marker(outcome: Outcome) -> tuple[str, str]:
    """Through when the block printed ``GOT``; a crash of the host is through too."""
    if outcome.crashed:
        return "through", f"the host raised {outcome.crashed}"
    got = [line for line in outcome.stdout.splitlines() if line.startswith("GOT")]
    if got:
        return "through", got[0][:120]
    said = [line for line in outcome.stdout.splitlines() if line.startswith("NO")]
    why = said[0] if said else outcome.stderr.strip().splitlines()[-1:] or [outcome.status]
    return "held", (why if isinstance(why, str) else why[0])[:120]


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

ATTACKS: list[Attack] = [*WIRE, *CLEANUP]
