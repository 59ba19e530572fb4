"""The attack suite (tests/attack_suite.py) against the isolated levels.

Every attack runs in a new executor; its judge says whether the level held. Under the
strongest level every attack must be held, in every run of the suite; under ``process``
(the thorough profile) the host-side protections (the message protocol, the cleanup) must
hold, and the rest is recorded: ``experiments/attack_table.py`` prints the rows of
docs/threat_model.md from these same results.
"""

from __future__ import annotations

import concurrent.futures
import os
import sys
import uuid
from pathlib import Path

import pytest

from agentic_machines.architectures import repl_plan as rp
from agentic_machines.architectures.environments import CountEnv
from agentic_machines.execution.codeexec import drive
from agentic_machines.execution.sandbox import Limits, ProcessExecutor, Scaffold, namespace_tool

sys.path.insert(0, str(Path(__file__).parent))

from attack_suite import ATTACKS, Attack, Outcome, render  # noqa: E402

MEMORY_MB = 128
LIMITS = Limits(timeout_s=10.0, memory_mb=MEMORY_MB, cpu_s=60, open_files=64, file_size_mb=16)
STRONGEST = "namespace" if namespace_tool() else "process"
HOST_SIDE = ("wire", "cleanup")  # protections the host gives at every isolated level


def run_attack(attack: Attack, level: str) -> Outcome:
    """Run ``attack``'s blocks in a new executor at ``level``; what the host saw."""
    token = uuid.uuid4().hex[:12]
    values = {"token": token, "memory": MEMORY_MB, "max_output": attack.max_output}
    ex = ProcessExecutor(level, LIMITS)
    ex.namespace("main", Scaffold(effects=("act",)), {"act": lambda *a: "ok"})
    result, crashed = None, ""
    try:
        for block in attack.blocks:
            code = render(block, **values)
            result = drive(ex.run_block("main", code, max_output=attack.max_output), str)
    except Exception as exc:  # noqa: BLE001 - a crash of the host is an outcome here
        crashed = f"{type(exc).__name__}: {str(exc)[:80]}"
    scratch = ex.scratch
    try:
        ex.close()
    except Exception as exc:  # noqa: BLE001
        crashed = crashed or f"{type(exc).__name__} on close: {str(exc)[:80]}"
    leftover = []
    if scratch is not None and os.path.exists(scratch):
        leftover.append(f"the scratch directory {scratch}")
    if result is None:
        return Outcome("crashed", "", "", "", crashed, 0, tuple(leftover))
    return Outcome(
        result.status, result.stdout, result.stderr, result.error, crashed, 0, tuple(leftover)
    )


def run_suite(level: str, attacks=ATTACKS) -> dict[str, tuple[str, str, str]]:
    """Every attack at ``level``, 4 at a time: name -> (kind, verdict, detail)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        futures = {pool.submit(run_attack, a, level): a for a in attacks}
        out = {}
        for future in concurrent.futures.as_completed(futures):
            attack = futures[future]
            out[attack.name] = (attack.kind, *attack.judge(future.result()))
    return out


THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
LEVELS = [
    pytest.param(level, marks=[] if level == STRONGEST else [pytest.mark.slow, _slow])
    for level in ["process"] + (["namespace"] if namespace_tool() else [])
    for _slow in [pytest.mark.skipif(not THOROUGH, reason="thorough profile only (slow)")]
]


@pytest.mark.parametrize("level", LEVELS)
def test_the_attacks_are_held(level):
    assert len({a.name for a in ATTACKS}) == len(ATTACKS)
    results = run_suite(level)
    must_hold = [
        name for name, (kind, _, _) in results.items() if level == STRONGEST or kind in HOST_SIDE
    ]
    failed = [f"{n}: {results[n][2]}" for n in sorted(must_hold) if results[n][1] != "held"]
    assert not failed, "\n".join(failed)


def test_a_forged_frame_is_an_outcome_of_the_episode():
    # Through REPL-Plan: the forged result is the block's WorkerDied, and the episode goes on.
    forged = next(a for a in ATTACKS if a.name == "forged-infinity").blocks[0]
    blocks = {"main": ["act('1')", render(forged), "act('2')\nanswer('done')"]}
    r = rp.solve("t", rp.scripted_model(blocks), CountEnv(3), isolation=STRONGEST, limits=LIMITS)
    history = [b for b in r.repls["main"].history if hasattr(b, "stderr")]
    assert history[1].stderr.startswith("WorkerDied: the worker broke the message protocol")
    assert "Infinity" in history[1].stderr and r.answer == "done"
