"""The attack corpus (tests/attack_corpus.py) through RLM and REPL-Plan, isolated.

Every hostile block runs as the second block of an episode of each architecture, under
``process`` and under ``namespace``, with a 1 s deadline per block (the default run: every
block once at the strongest level, see ``RUNS``); cases run in parallel
threads (the work is in the workers). What is asserted for each block:

- hangs end as ExecutionTimeout within five times the deadline; memory bombs end as
  ExecutionMemoryExceeded; ending the worker ends as WorkerDied;
- the episode goes on (its third block runs, in a new worker where the old one failed);
- the run's trace file loads;
- under ``namespace``: no file appears outside the scratch directory and no connection
  reaches the socket the test listens on at 127.0.0.1;
- afterwards the host's json, decimal and math behave as before.

Under ``process`` files and connections are *not* stopped (the worker is an ordinary process
of the user): that is documented in docs/threat_model.md, whose table
``experiments/attack_table.py`` prints, and not asserted here.
"""

from __future__ import annotations

import concurrent.futures
import decimal
import json
import math
import os
import socket
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from agentic_machines.architectures import repl_plan as rp
from agentic_machines.architectures import rlm
from agentic_machines.architectures.environments import CountEnv
from agentic_machines.execution import isolated, sandbox
from agentic_machines.execution.sandbox import Limits, namespace_tool
from agentic_machines.machine import DIVERGE
from agentic_machines.runtime.run import Trace, run

sys.path.insert(0, str(Path(__file__).parent))

from attack_corpus import CORPUS  # noqa: E402

DEADLINE = 1.0
LIMITS = Limits(timeout_s=DEADLINE, memory_mb=512, cpu_s=60, open_files=64, file_size_mb=16)
# Blocks that are not hangs get a longer deadline, so that on a busy machine their outcome
# (memory, death, containment) is never decided by a race with the clock.
OTHER_LIMITS = Limits(timeout_s=5.0, memory_mb=512, cpu_s=60, open_files=64, file_size_mb=16)
EXPECTED = {
    "hang": "ExecutionTimeout",
    "memory": "ExecutionMemoryExceeded",
    "exit": "WorkerDied",
    "channel": "WorkerDied",  # garbage on the message channel: the host refuses it
}
SECRET = "sk-canary-not-for-model-code"  # in the host's environment while the corpus runs


class TimedModel:
    """Answers with ``fn`` and notes when each call started and ended."""

    def __init__(self, fn):
        self.fn = fn
        self.spans: list[tuple[float, float, str]] = []

    def complete(self, prompt: str) -> str:
        start = time.monotonic()
        out = self.fn(prompt)
        self.spans.append((start, time.monotonic(), prompt))
        return out


def _host_modules_ok() -> list[str]:
    problems = []
    if json.dumps({"a": [1, 2.5]}) != '{"a": [1, 2.5]}' or json.loads('{"b": 1}') != {"b": 1}:
        problems.append("host json changed")
    if (
        decimal.getcontext().prec != 28
        or str(decimal.Decimal(1) / decimal.Decimal(3))[:6] != "0.3333"
    ):
        problems.append("host decimal changed")
    if math.pi != 3.141592653589793 or math.sqrt(4.0) != 2.0:
        problems.append("host math changed")
    return problems


FAILED_AT: dict[int, float] = {}  # thread -> when the host turned its last block into a failure


ENSURED: dict[int, list[tuple[float, float]]] = {}  # thread -> spans spent readying a worker


def _timed_failed(original):
    def failed(*args, **kwargs):
        FAILED_AT[threading.get_ident()] = time.monotonic()  # after the worker was killed
        return original(*args, **kwargs)

    return failed


def _timed_ensure(original):
    # Starting (or restarting and replaying) a worker happens before a block's clock starts:
    # not part of the block's time.
    def ensure(self):
        start = time.monotonic()
        try:
            return original(self)
        finally:
            ENSURED.setdefault(threading.get_ident(), []).append((start, time.monotonic()))

    return ensure


def listening_socket() -> socket.socket:
    """A socket listening on 127.0.0.1 (port 0), for blocks that try to connect out."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    server.setblocking(False)
    return server


def accepted(server: socket.socket) -> int:
    """How many connections reached ``server`` (it is closed afterwards)."""
    count = 0
    try:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return count
            conn.close()
            count += 1
    finally:
        server.close()


def run_case(arch: str, level: str, name: str, kind: str, code: str, where: Path):
    """Run one hostile block; return (outcome, seconds, problems, leaked files, connections)."""
    FAILED_AT.pop(threading.get_ident(), None)
    ENSURED.pop(threading.get_ident(), None)
    canary = where / "canary"
    canary.mkdir(parents=True)
    token = uuid.uuid4().hex
    server = listening_socket()
    limits = LIMITS if kind == "hang" else OTHER_LIMITS
    block = code.format(canary=canary, port=server.getsockname()[1], token=token)
    if arch == "rlm":
        replies = iter(["```repl\npass\n```", f"```repl\n{block}\n```", "FINAL(done)"])
        model = TimedModel(lambda prompt: next(replies))
        m = rlm.machine(isolation=level, limits=limits)
    else:
        routed = rp.scripted_model({"main": ["act('1')", block, "act('2')\nanswer('done')"]})
        model = TimedModel(routed.complete)
        m = rp.machine("t", CountEnv(3), isolation=level, limits=limits)
    path = where / "trace.jsonl"
    try:
        trace = run(m, model, path=path)
    finally:
        time.sleep(0.05)  # a connection the block made is in the backlog by now
        connections = accepted(server)
    problems = []
    try:
        Trace.load(path)
    except Exception as exc:  # noqa: BLE001 - reported with the case's name
        problems.append(f"trace does not load: {exc}")
    outcome, seconds = "diverged (line budget)", None
    if len(model.spans) >= 3:
        after = model.spans[2][2]
        failures = ("ExecutionTimeout", "ExecutionMemoryExceeded", "WorkerDied")
        outcome = next((e for e in failures if f"{e}:" in after), "completed")
        failed_at = FAILED_AT.get(threading.get_ident())
        if outcome != "completed" and failed_at is not None:
            # from the end of the model call that wrote the block to the failure (the
            # new worker for the next block is not counted)
            begin = model.spans[1][1]
            readying = sum(
                min(e, failed_at) - max(b, begin)
                for b, e in ENSURED.get(threading.get_ident(), [])
                if e > begin and b < failed_at
            )
            seconds = failed_at - begin - readying
    elif trace.end != DIVERGE:  # DIVERGE: RLM's line budget ran out (a defined outcome)
        problems.append(f"the episode stopped after the hostile block ({trace.end})")
    expected = EXPECTED.get(kind)
    if expected is not None and outcome != expected:
        problems.append(f"expected {expected}, got {outcome}")
    # A deadline test: 5x slack, so a busy machine does not fail it (no other test times)
    if kind == "hang" and seconds is not None and seconds > 5 * DEADLINE:
        problems.append(f"the hang ended after {seconds:.2f} s (> {5 * DEADLINE} s)")
    leaked = sorted(p.name for p in canary.iterdir())
    if any(SECRET in prompt for _, _, prompt in model.spans):
        problems.append("the host's environment reached the model's prompt")
    for tmp_file in (Path(f"/tmp/am-corpus-{token}"), Path(f"/dev/shm/am-corpus-{token}")):
        if tmp_file.exists():
            leaked.append(str(tmp_file))
            tmp_file.unlink()
    return outcome, seconds, problems, leaked, connections


def corpus_cases(archs=("rlm", "repl_plan"), every_arch: bool = True) -> list[tuple]:
    """The cases (architecture, name, kind, code) of a corpus run: every block through each
    of ``archs``, or (``every_arch`` False) every block once, the blocks of each kind
    dealt to the architectures in turn, so that each architecture's path to the executor
    still meets every kind of attack that has as many blocks as there are architectures.

    >>> cases = corpus_cases(every_arch=False)
    >>> len(cases) == len(CORPUS), sorted({a for a, _, kind, _ in cases if kind == "hang"})
    (True, ['repl_plan', 'rlm'])
    """
    if every_arch:
        return [(arch, name, kind, code) for name, kind, code in CORPUS for arch in archs]
    dealt: dict[str, int] = {}
    cases = []
    for name, kind, code in CORPUS:
        turn = dealt[kind] = dealt.get(kind, -1) + 1
        cases.append((archs[turn % len(archs)], name, kind, code))
    return cases


def run_corpus(level: str, workdir: Path, cases: list[tuple] | None = None) -> dict:
    """The corpus ``cases`` (default: every block through each architecture) at ``level``,
    4 cases at a time."""
    original, original_ensure = isolated._failed, sandbox.ProcessRunner._ensure
    isolated._failed = _timed_failed(original)
    sandbox.ProcessRunner._ensure = _timed_ensure(original_ensure)
    if cases is None:
        cases = corpus_cases()
    results = {}
    saved = os.environ.get("AM_CANARY_API_KEY")
    os.environ["AM_CANARY_API_KEY"] = SECRET
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            futures = {
                pool.submit(run_case, arch, level, name, kind, code, workdir / f"{arch}-{name}"): (
                    arch,
                    name,
                    kind,
                )
                for arch, name, kind, code in cases
            }
            for future in concurrent.futures.as_completed(futures):
                results[futures[future]] = future.result()
    finally:
        isolated._failed = original
        sandbox.ProcessRunner._ensure = original_ensure
        if saved is None:
            del os.environ["AM_CANARY_API_KEY"]
        else:
            os.environ["AM_CANARY_API_KEY"] = saved
    return {"results": results, "connections": sum(r[4] for r in results.values())}


# The strongest level runs in every suite run, each block once (the blocks of each kind dealt
# to the two architectures in turn: about 20 s on two quiet cores); every block through both
# architectures runs in CI and the thorough profile (slow), the process level in the
# thorough profile only, to keep the suite under its five minutes.
STRONGEST = "namespace" if namespace_tool() else "process"
THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
_THOROUGH_ONLY = pytest.mark.skipif(not THOROUGH, reason="thorough profile only (slow)")
RUNS = [
    pytest.param(STRONGEST, False, id=f"{STRONGEST}-each-block-once"),
    pytest.param(STRONGEST, True, id=f"{STRONGEST}-every-architecture", marks=pytest.mark.slow),
] + [
    pytest.param(
        level, True, id=f"{level}-every-architecture", marks=[pytest.mark.slow, _THOROUGH_ONLY]
    )
    for level in ["process", "namespace"]
    if level != STRONGEST and (level == "process" or namespace_tool())
]


@pytest.mark.parametrize("level, every_arch", RUNS)
def test_the_corpus_is_contained(level, every_arch, tmp_path):
    assert len(CORPUS) >= 40
    out = run_corpus(level, tmp_path, corpus_cases(every_arch=every_arch))
    problems = []
    for (arch, name, _), (_, _, case_problems, leaked, _) in sorted(out["results"].items()):
        problems += [f"{arch}/{name}: {p}" for p in case_problems]
        if level == "namespace" and leaked:
            problems.append(f"{arch}/{name}: files appeared outside the scratch dir: {leaked}")
    if level == "namespace" and out["connections"]:
        problems.append(f"{out['connections']} connection(s) reached the test's socket")
    problems += _host_modules_ok()
    hangs = sorted(v[1] for (_, _, kind), v in out["results"].items() if kind == "hang" and v[1])
    print(f"{level}: hangs ended after {hangs[0]:.2f} to {hangs[-1]:.2f} s")
    assert not problems, "\n".join(problems)
    # the process level stops neither files nor connections: the corpus shows it does get them
    if level == "process":
        leaks = [k for k, v in out["results"].items() if v[3]]
        assert leaks and out["connections"] > 0


def test_the_environment_of_this_test_process_is_left_alone():
    # The corpus runs in worker processes with an empty environment; the host's stays.
    assert "PATH" in os.environ


def test_the_threat_model_table_has_a_row_per_block_of_the_corpus():
    # No run: docs/threat_model.md's corpus table (experiments/attack_table.py --write
    # writes it) has every block of tests/attack_corpus.py, in order, with its kind, and a
    # cell per level; so a block added or renamed without a new table fails here.
    text = (Path(__file__).resolve().parent.parent / "docs" / "threat_model.md").read_text()
    body = text.split("<!-- attack-corpus table -->")[1].split("<!-- end attack-corpus table -->")[
        0
    ]
    rows = [[c.strip() for c in r.strip().strip("|").split("|")] for r in body.strip().splitlines()]
    assert rows[0] == ["block", "kind", "inline", "process", "namespace"]
    assert [tuple(r[:2]) for r in rows[2:]] == [(name, kind) for name, kind, _ in CORPUS], (
        "rerun python experiments/attack_table.py --write"
    )
    assert all(len(r) == 5 and all(r) for r in rows[2:])
