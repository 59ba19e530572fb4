"""The attack suite (tests/attack_suite.py) against the isolated levels.

Every attack runs in a new executor; its judge says whether the level held. Under the
strongest level every attack must be held (in CI: the whole corpus is marked slow; every
run tries one attack per class in every column); under ``process`` (the thorough profile)
the host-side protections (the message protocol, the cleanup) must hold, and the rest is
recorded: ``experiments/attack_table.py`` prints the rows of
docs/threat_model.md from these same results.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import dataclasses
import json
import os
import socket
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from unittest import mock

import pytest

from agentic_machines.architectures import repl_plan as rp
from agentic_machines.architectures import rlm
from agentic_machines.architectures.environments import CountEnv
from agentic_machines.execution import seccomp
from agentic_machines.execution.cgroup import WorkerGroup
from agentic_machines.execution.codeexec import drive
from agentic_machines.execution.confine import boot_argv, closed_ancestors, probe, worker_uid
from agentic_machines.execution.sandbox import (
    Limits,
    ProcessRunner,
    Scaffold,
    namespace_tool,
)
from agentic_machines.runtime.local_models import FunctionModel
from agentic_machines.runtime.run import Trace, run

sys.path.insert(0, str(Path(__file__).parent))

from attack_suite import (  # noqa: E402
    ATTACKS,
    CHANNEL,
    EVERYTHING_AT_ONCE,
    KINDS,
    QUICK,
    Attack,
    Outcome,
    cell,
    render,
)
from test_attack_corpus import accepted  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

MEMORY_MB = 128
LIMITS = Limits(timeout_s=10.0, memory_mb=MEMORY_MB, cpu_s=60, open_files=64, file_size_mb=16)
STRONGEST = "namespace" if namespace_tool() else "process"
HOST_SIDE = ("wire", "cleanup", "replay")  # protections the host gives at every isolated level


def _unix_servers(token: str) -> dict[str, socket.socket]:
    """Unix sockets listening where a host's services put theirs (those this user may create)."""
    places = {
        "var_tmp": f"/var/tmp/am-{token}.sock",
        "run": f"/run/am-{token}.sock",
        "visible": str(ROOT / f".am-{token}.sock"),  # a directory no level hides
        "abstract": f"\0am-{token}",
    }
    servers = {}
    for place, path in places.items():
        server = socket.socket(socket.AF_UNIX)
        try:
            server.bind(path)
        except OSError:  # not writable for this user: nothing to reach there
            server.close()
            continue
        server.listen(8)
        server.setblocking(False)
        servers[place] = server
    return servers


def _close_servers(servers: dict[str, socket.socket]) -> int:
    count = 0
    for server in servers.values():
        path = server.getsockname()
        count += accepted(server)
        if isinstance(path, str) and path and not path.startswith("\0"):
            Path(path).unlink(missing_ok=True)
    return count


def _probes_alive(token: str) -> list[str]:
    """Processes of this machine whose command line names the attack's token, and threads
    that gave themselves its thread name (:func:`thread_name`)."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            tasks = list((entry / "task").iterdir())
        except OSError:
            continue
        if f"am-probe-{token}".encode() in cmdline:
            alive.append(f"process {entry.name}")
        for task in tasks:
            try:
                if (task / "comm").read_text().strip() == thread_name(token):
                    alive.append(f"a thread {task.name} of process {entry.name}")
            except OSError:
                continue
    return alive


def thread_name(token: str) -> str:
    """The name (at most 15 bytes, the kernel's ``comm``) a block's thread gives itself."""
    return f"amt-{token[:11]}"


def _ipc_left(token: str, key: int) -> list[str]:
    """The IPC objects an attack made that the host still sees (and removes)."""
    left = []
    for kind, flag in (("shm", "-M"), ("msg", "-Q")):
        try:
            rows = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        except OSError:
            continue
        if any(r.split() and int(r.split()[0]) == key for r in rows):
            left.append(f"a System V {kind} object")
            subprocess.run(["ipcrm", flag, str(key)], capture_output=True)
    shm = Path(f"/dev/shm/am-shm-{token}")
    if shm.exists():
        left.append("a POSIX shared memory object")
        shm.unlink()
    libc = ctypes.CDLL(None, use_errno=True)
    name = f"/am-mq-{token}".encode()
    fd = libc.mq_open(name, os.O_RDONLY)
    if fd >= 0:
        left.append("a POSIX message queue")
        libc.mq_close(fd)
        libc.mq_unlink(name)
    return left


def run_attack(attack: Attack, level: str, tool: str | None = None) -> Outcome:
    """Run ``attack``'s blocks in a new executor at ``level``; what the host saw."""
    token = uuid.uuid4().hex[:12]
    servers = _unix_servers(token) if attack.kind == "socket" else {}
    socks = {place: s.getsockname() for place, s in servers.items()}
    socks = {k: v.decode() if isinstance(v, bytes) else v for k, v in socks.items()}
    values = {
        "token": token,
        "memory": MEMORY_MB,
        "max_output": attack.max_output,
        "sock": {
            p: socks.get(p, "/nonexistent") for p in ("var_tmp", "run", "visible", "abstract")
        },
        "host": os.getpid(),
        "victim": 0,
        "ipc_key": int(token[:7], 16) + 1,
        "thread": thread_name(token),
    }
    visible = Path(f"/tmp/am-visible-{token}")
    if attack.kind == "view":
        visible.write_text("the host's /tmp")
    victim = None
    if attack.kind == "host":  # a process of this user that the attack may harm
        victim = subprocess.Popen(["sleep", "60"], start_new_session=True)
        values["victim"] = victim.pid
    limits = LIMITS
    if attack.timeout_s is not None:
        limits = dataclasses.replace(LIMITS, timeout_s=attack.timeout_s)
    ex = ProcessRunner(level, limits, tool=tool)
    ex.namespace("main", Scaffold(effects=("act",)), {"act": lambda *a: "ok"})
    result, crashed, stderrs, stdouts = None, "", [], []
    try:
        for block in attack.blocks:
            code = render(block, **values)
            gen = ex.run_block("main", code, max_output=attack.max_output, line_budget=10**6)
            result = drive(gen, str)
            stderrs.append(result.stderr)
            stdouts.append(result.stdout)
    except Exception as exc:  # noqa: BLE001 - a crash of the host is an outcome here
        crashed = f"{type(exc).__name__}: {str(exc)[:80]}"
    leftover = _probes_alive(token)
    scratch = ex.scratch
    try:
        ex.close()
    except Exception as exc:  # noqa: BLE001
        crashed = crashed or f"{type(exc).__name__} on close: {str(exc)[:80]}"
    leftover += [p for p in _probes_alive(token) if p not in leftover]  # after the episode
    if scratch is not None and os.path.exists(scratch):
        leftover.append(f"the scratch directory {scratch}")
    leftover += _ipc_left(token, values["ipc_key"])
    for where in ("/tmp", "/dev/shm"):  # what fill attacks wrote on the host (process level)
        for path in Path(where).glob(f"am-fill-{token}-*"):
            path.unlink()
    connections = _close_servers(servers)
    visible.unlink(missing_ok=True)
    if victim is not None:
        victim.kill()
        victim.wait()
    for pid in leftover:  # never leave a probe running
        if pid.startswith("process "):
            try:
                os.kill(int(pid.split()[1]), 9)
            except OSError:
                pass
    if result is None:
        return Outcome("crashed", "", "", "", crashed, connections, tuple(leftover))
    return Outcome(
        result.status,
        result.stdout,
        result.stderr,
        result.error,
        crashed,
        connections,
        tuple(leftover),
        tuple(stderrs),
        tuple(stdouts),
    )


def run_suite(
    level: str, attacks=ATTACKS, tool: str | None = None
) -> dict[str, tuple[str, str, str]]:
    """Every attack at ``level``, 4 at a time: name -> (kind, verdict, detail)."""
    saved = os.environ.get("AM_CANARY_API_KEY")
    os.environ["AM_CANARY_API_KEY"] = "sk-canary-not-for-model-code"  # for host-environment
    try:
        return _run_suite(level, attacks, tool)
    finally:
        if saved is None:
            del os.environ["AM_CANARY_API_KEY"]
        else:
            os.environ["AM_CANARY_API_KEY"] = saved


def _run_suite(level: str, attacks, tool: str | None) -> dict[str, tuple[str, str, str]]:
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        futures = {pool.submit(run_attack, a, level, tool): a for a in attacks}
        out = {}
        for future in concurrent.futures.as_completed(futures):
            attack = futures[future]
            out[attack.name] = (attack.kind, *attack.judge(future.result()))
    return out


THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
COLUMNS = {
    # the threat model's columns: level, namespace tool, with a control group or not, and
    # whether the host runs as root (as containers and CI usually do) or as an ordinary user
    "process": ("process", None, True, True),
    "namespace (bwrap)": ("namespace", "bwrap", True, True),
    "namespace (unshare)": ("namespace", "unshare", True, True),
    # what the memory bound is on a host where no control group can be made
    "namespace (bwrap), no control group": ("namespace", "bwrap", False, True),
    # an ordinary user makes no control group (the groups belong to root)
    "process, not root": ("process", None, False, False),
    "namespace (bwrap), not root": ("namespace", "bwrap", False, False),
    "namespace (unshare), not root": ("namespace", "unshare", False, False),
}
AS_ROOT = os.geteuid() == 0
DOC = ROOT / "docs" / "threat_model.md"


def has_cgroup() -> bool:
    """Whether this host can make a worker's control group."""
    group = WorkerGroup.create(1 << 26, 8)
    if group is not None:
        group.remove()
    return group is not None


# The column of the level "strongest" gives on this host: its whole corpus runs in CI.
STRONGEST_COLUMN = next(
    (
        c
        for c, (level, tool, cgroup, root) in COLUMNS.items()
        if level == STRONGEST
        and tool in (None, namespace_tool())
        and cgroup == has_cgroup()
        and root == AS_ROOT
    ),
    "process" if AS_ROOT else "process, not root",
)


def available(column: str) -> bool:
    """Whether ``column`` can run here (a column not as root is probed by its own run)."""
    level, tool, cgroup, root = COLUMNS[column]
    if root != AS_ROOT:
        return not root  # as root, the suite drops to an unprivileged uid for these
    return (tool is None or probe(tool) is None) and (not cgroup or has_cgroup())


def doc_cells(column: str) -> dict[str, str]:
    """The threat model's cells for ``column``: attack class -> cell text."""
    text = DOC.read_text(encoding="utf-8")
    body = text.split("<!-- attack-suite table -->")[1].split("<!-- end attack-suite table -->")[0]
    rows = [
        [c.strip() for c in r.strip().strip("|").split(" | ")] for r in body.strip().splitlines()
    ]
    header = [h.strip("`") for h in rows[0]]
    return {r[0].split(":")[0]: r[header.index(column)] for r in rows[2:]}


# Run as an unprivileged uid by a root test run: the worker's own launcher (confine.confined_argv)
# covers the directories that uid cannot enter (/root, where an interpreter may live),
# becomes the uid, and runs this.
_UNPRIVILEGED = """
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/tests"]
import test_attack_suite as t
out = {}
for column, names in json.loads(sys.argv[2]):
    out[column] = t.column_results(column, names) if t.available(column) else None
print(json.dumps(out))
"""


def _as_unprivileged(
    runs: list[tuple[str, list[str] | None]],
) -> dict[str, dict[str, tuple[str, str, str]] | None]:
    """The verdicts of each ``(column, attack names or None for all)`` of ``runs``, run in
    one child as an unprivileged uid: column -> verdicts (None: it does not work there)."""
    uid = worker_uid()
    launcher = [*boot_argv(), "--uid", str(uid)]
    launcher += [a for d in closed_ancestors(uid) for a in ("--expose", d)]
    argv = [*launcher, "--exec", sys.executable, "-c", _UNPRIVILEGED, str(ROOT), json.dumps(runs)]
    env = {k: v for k, v in os.environ.items() if k != "HOME"}
    with tempfile.TemporaryDirectory() as home:  # a directory the uid may write in
        os.chown(home, uid, uid)
        done = subprocess.run(
            argv, cwd=home, env={**env, "HOME": home}, capture_output=True, timeout=900
        )
    if done.returncode != 0:
        raise AssertionError(done.stderr.decode()[-2000:])
    results = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return {
        column: None if r is None else {name: tuple(v) for name, v in r.items()}
        for column, r in results.items()
    }


def column_results(
    column: str, names: list[str] | None = None
) -> dict[str, tuple[str, str, str]] | None:
    """Every attack's verdict in ``column`` (None: it does not work here); only the
    attacks ``names`` when given."""
    level, tool, cgroup, root = COLUMNS[column]
    if root != AS_ROOT:
        return _as_unprivileged([(column, names)])[column]
    attacks = ATTACKS if names is None else [a for a in ATTACKS if a.name in names]
    if cgroup:
        return run_suite(level, attacks, tool=tool)
    with mock.patch.object(WorkerGroup, "create", classmethod(lambda cls, *args: None)):
        return run_suite(level, attacks, tool=tool)


# Slow by measurement (issue 39: the README's command under three minutes on two quiet
# cores): the whole corpus in the strongest column took 12.6 s, the longest call of that
# command; CI runs it, the other columns run whole under the thorough profile only.
PARAMS = [
    pytest.param(
        column,
        marks=[pytest.mark.slow] if column == STRONGEST_COLUMN else [pytest.mark.slow, _slow],
    )
    for column in COLUMNS
    for _slow in [pytest.mark.skipif(not THOROUGH, reason="thorough profile only (slow)")]
]


TMPFS_BOUNDED = ("fill-tmp", "fill-dev-shm", "fill-scratch", "many-inodes")
"""Memory attacks the namespace level's tmpfs mounts bound by size and inode count, with
or without a control group."""


def must_hold(column: str, name: str, kind: str) -> bool:
    """Whether the attack ``name`` of class ``kind`` must be held in ``column``: every one
    under ``namespace`` (without a control group, memory only where a tmpfs bounds it),
    and the host's own protections at every level."""
    level, _, cgroup, _ = COLUMNS[column]
    if kind in HOST_SIDE:
        return True
    return level == "namespace" and (cgroup or kind != "memory" or name in TMPFS_BOUNDED)


def through_names(text: str) -> set[str]:
    """The attacks a cell of the table names as through (none for ``held (n)``).

    >>> sorted(through_names("**through**: a, b (2 of 5)")), through_names("held (3)")
    (['a', 'b'], set())
    """
    if not text.startswith("**through**: "):
        return set()
    return set(text.removeprefix("**through**: ").rsplit(" (", 1)[0].split(", "))


@pytest.mark.parametrize("column", PARAMS)
def test_the_attacks_are_held_as_the_threat_model_says(column):
    if not available(column):
        pytest.skip(f"{column} does not work here")
    assert len({a.name for a in ATTACKS}) == len(ATTACKS) >= 30
    results = column_results(column)
    if results is None:
        pytest.skip(f"{column} does not work here")
    failed = [
        f"{n}: {detail}"
        for n, (kind, verdict, detail) in sorted(results.items())
        if must_hold(column, n, kind) and verdict != "held"
    ]
    assert not failed, "\n".join(failed)
    # docs/threat_model.md's column is what the suite shows (experiments/attack_table.py
    # prints it)
    documented = doc_cells(column)
    for kind in KINDS:
        assert documented[kind] == cell(results, kind), (kind, "rerun experiments/attack_table.py")


QUICK_COLUMNS = list(COLUMNS)
"""Every column's whole run is slow: one attack per class of each runs every time."""
_QUICK: dict[str, dict[str, tuple[str, str, str]] | None] = {}


def quick_names(column: str) -> list[str]:
    """:data:`attack_suite.QUICK`, ``ioctl-loop-control`` (which says which layer stopped
    it), and ``many-inodes`` where only the tmpfs mounts' inode
    count bounds it (bubblewrap without a control group, where bwrap's own ``--tmpfs``
    would take none)."""
    _, tool, cgroup, _ = COLUMNS[column]
    inodes = ["many-inodes"] if tool == "bwrap" and not cgroup else []
    return [*QUICK.values(), "ioctl-loop-control", *inodes]


def quick_results(column: str) -> dict[str, tuple[str, str, str]] | None:
    """The verdicts of :func:`quick_names` in ``column``; the columns not as root all run
    in one unprivileged child, the first time one of them is asked for."""
    if column not in _QUICK:
        if COLUMNS[column][3] == AS_ROOT:
            _QUICK[column] = (
                column_results(column, quick_names(column)) if available(column) else None
            )
        else:
            others = [c for c in QUICK_COLUMNS if COLUMNS[c][3] != AS_ROOT]
            _QUICK.update(_as_unprivileged([(c, quick_names(c)) for c in others]))
    return _QUICK[column]


@pytest.mark.parametrize("column", QUICK_COLUMNS)
def test_one_attack_per_class_is_held_as_the_threat_model_says(column):
    # Every test run, every column (CI or the thorough profile runs each whole): one cheap
    # attack per class (attack_suite.QUICK), its verdict the one the table gives it there.
    # The columns not as root run as an unprivileged uid this test drops to (as root).
    results = quick_results(column)
    if results is None:
        pytest.skip(f"{column} does not work here")
    assert sorted(results) == sorted(quick_names(column))
    documented = doc_cells(column)
    problems = []
    for name, (kind, verdict, detail) in sorted(results.items()):
        expected = "through" if name in through_names(documented[kind]) else "held"
        if must_hold(column, name, kind) and verdict != "held":
            problems.append(f"{name}: must be held, is {verdict}: {detail}")
        elif verdict != expected:
            problems.append(
                f"{name}: {verdict} ({detail}), but docs/threat_model.md says {expected}: "
                "rerun experiments/attack_table.py --suite --write"
            )
    assert not problems, "\n".join(problems)
    if "many-inodes" in results:  # bounded by the launcher's tmpfs mounts (worker._stage)
        assert "files, then OSError" in results["many-inodes"][2], results["many-inodes"]


def verdicts_of(column: str, names: list[str]) -> dict[str, tuple[str, str, str]] | None:
    """The verdicts of the attacks ``names`` (all in :func:`quick_names`) in ``column``,
    those of :func:`quick_results`."""
    results = quick_results(column)
    return None if results is None else {n: results[n] for n in names}


def verdict_of(column: str, name: str) -> tuple[str, str, str]:
    """The verdict of the attack ``name`` in ``column`` (:func:`verdicts_of`); the test
    is skipped where the column does not work."""
    results = verdicts_of(column, [name])
    if results is None:
        pytest.skip(f"{column} does not work here")
    return results[name]


FILTER = seccomp.program() is not None
LEFT_AT = {"process, not root": "left behind: a POSIX shared memory object"}
"""What the threat model says a block leaves after its episode, by column ("the thing
stays": POSIX shared memory in the host's /dev/shm at the process level, as the user)."""


@pytest.mark.parametrize("column", list(COLUMNS))
def test_one_block_leaves_no_thread_process_or_ipc_object_after_the_episode(column):
    # Issue 37's acceptance: ONE block starts a thread, a detached process, a System V
    # segment and a POSIX queue (and POSIX shared memory), then a later block runs and the
    # episode ends. The host looks for each itself (run_attack): the thread by its name in
    # /proc/*/task/*/comm after the later block, the process by its command line after the
    # block and after the episode, the IPC objects by key and name after the episode.
    kind, verdict, detail = verdict_of(column, "everything-at-once")
    if not FILTER:  # the threat model: without the filter nothing refuses the thread
        assert verdict == "through" and "a thread" in detail, detail
        return
    left = LEFT_AT.get(column, "nothing left behind")
    assert detail.startswith(left + " (the block: "), detail
    assert verdict == ("through" if column in LEFT_AT else "held"), detail
    made = detail.split("(the block: ")[1]
    assert "a detached process" in made, detail  # the block ran: the fork is never refused
    # the seccomp filter refused the thread, the segment and the queue
    assert made.startswith("NO thread; NO shmget; NO mq_open; "), detail


def test_the_host_sees_what_that_block_leaves_when_nothing_refuses_it(tmp_path):
    # The checks of the test above can fail: the same block, run by a plain Python process
    # (no sandbox, no filter), leaves all five, and the host's checks find each; its thread
    # prints on after the block (what a later block's output would show).
    token = uuid.uuid4().hex[:12]
    key = int(token[:7], 16) + 1
    code = (
        render(EVERYTHING_AT_ONCE, token=token, ipc_key=key, thread=thread_name(token))
        + "\nimport sys, time\nsys.stdout.flush()\ntime.sleep(60)"
    )
    child = subprocess.Popen(
        [sys.executable, "-u", "-c", code], stdout=subprocess.PIPE, cwd=tmp_path, text=True
    )
    try:
        assert child.stdout is not None
        said = [child.stdout.readline() for _ in range(2)]  # MADE, then the thread's
        assert said[0].startswith("MADE a thread, a detached process"), said
        assert said[1].startswith("GOT the thread ran on"), said
        alive = _probes_alive(token)
    finally:
        child.kill()
        child.wait()
        for pid in [int(p.split()[1]) for p in _probes_alive(token) if p.startswith("process")]:
            os.kill(pid, 9)
        left = _ipc_left(token, key)  # and removes them
    assert any(a.startswith("a thread ") for a in alive), alive
    assert any(a.startswith("process ") for a in alive), alive
    assert left == [
        "a System V shm object",
        "a POSIX shared memory object",
        "a POSIX message queue",
    ], left


@pytest.mark.parametrize("column", list(COLUMNS))
def test_loop_control_is_stopped_where_the_threat_model_says(column):
    # LOOP_CTL_GET_FREE on /dev/loop-control, as a block would on the host: under namespace
    # there is no such node (a minimal /dev); at the process level the worker's uid may not
    # open it (or, a user of the disk group, the filter refuses the request). A free loop
    # device's number would be through. The block also shows the seccomp filter in place:
    # EPERM for two requests the kernel itself answers with ENOTTY and ENOENT.
    kind, verdict, detail = verdict_of(column, "ioctl-loop-control")
    assert verdict == "held", detail
    stopped = detail.removeprefix("NO /dev/loop-control: ").split(";")[0]
    if COLUMNS[column][0] == "namespace":
        assert stopped == "open No such file or directory", detail
    else:
        assert stopped in ("open Permission denied", "opened, ioctl Operation not permitted")
    assert detail.endswith(
        "seccomp filter: yes"
        if FILTER
        else "ioctl Inappropriate ioctl for device, mount No such file or directory)"
    ), detail


def test_the_threat_model_table_counts_the_attacks_of_this_suite():
    # No run: every column of the table names every class, with as many attacks as the
    # suite has of it, and only attacks of that class as through.
    for column in COLUMNS:
        documented = doc_cells(column)
        assert list(documented) == list(KINDS), column
        for kind, text in documented.items():
            names = {a.name for a in ATTACKS if a.kind == kind}
            count = int(text.rsplit(" ", 1)[-1].strip("()"))
            assert count == len(names), (column, kind, "rerun experiments/attack_table.py")
            assert through_names(text) <= names, (column, kind, through_names(text) - names)
    assert {a.kind for a in ATTACKS} == set(KINDS) == set(QUICK)
    assert all(next(a.kind for a in ATTACKS if a.name == n) == k for k, n in QUICK.items())


def test_a_forged_frame_is_an_outcome_of_the_episode():
    # Through REPL-Plan: the forged result is the block's WorkerDied, and the episode goes on.
    forged = next(a for a in ATTACKS if a.name == "forged-infinity").blocks[0]
    blocks = {"main": ["act('1')", render(forged), "act('2')\nanswer('done')"]}
    r = rp.solve("t", rp.scripted_model(blocks), CountEnv(3), isolation=STRONGEST, limits=LIMITS)
    history = [b for b in r.repls["main"].history if hasattr(b, "stderr")]
    assert history[1].stderr.startswith("WorkerDied: the worker broke the message protocol")
    assert "Infinity" in history[1].stderr and r.answer == "done"


def test_forged_frames_and_a_huge_output_are_outcomes_of_an_rlm_episode(tmp_path):
    # Through RLM and run(): no HarnessError, the prompt after the block is cut to
    # max_output, the trace loads, and the episode reaches its final answer.
    # built at run time, so that the model's own message (the block) stays short
    forged = render(CHANNEL) + (
        "import json\nframe = dict(type='result', stdout='x' * 3_000_000, stderr='', "
        "status='ok', value=None, error='', attempts=1, calls=[], hits=[])\n"
        "forge(json.dumps(frame).encode() + b'\\n')"
    )
    nan = next(a for a in ATTACKS if a.name == "forged-nan").blocks[0]
    replies = iter([f"```repl\n{forged}\n```", f"```repl\n{render(nan)}\n```", "FINAL(done)"])
    prompts: list[str] = []

    def model(prompt: str) -> str:
        prompts.append(prompt)
        return next(replies)

    m = rlm.machine(isolation=STRONGEST, limits=LIMITS, max_output=4_000)
    trace = run(m, FunctionModel(model), path=tmp_path / "trace.jsonl")
    Trace.load(tmp_path / "trace.jsonl")
    assert len(prompts) == 3 and len(prompts[1]) - len(prompts[0]) < 20_000
    assert "WorkerDied" in prompts[2] and "NaN" in prompts[2]
    assert m.result(trace.steps[-1].state, trace.steps[-1].completion).answer == "done"
