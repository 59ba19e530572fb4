"""Cost of ``run`` against a bare loop over the same machine and model.

Run: ``python benchmarks/bench_run.py``. Every loop runs in this process; the ratios
(run time / bare time) matter, not the absolute numbers. ``run`` adds a Step record per
transition, model call logging and type checks; with ``path=`` it also writes and
flushes one JSON line per step, which is the price of a run that survives a kill.

- ``table``: a 2-state ``TableMachine`` (the harness is one dict lookup: the worst case
  for the ratio), 200 000 steps.
- ``harness``: a ``HarnessMachine`` counting loop, 50 000 steps.
"""

from __future__ import annotations

import gc
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentic_machines.models import FunctionModel, ScriptedModel  # noqa: E402

from agentic_machines import HALT, HarnessMachine, TableMachine, is_sentinel  # noqa: E402
from agentic_machines.runtime.run import run  # noqa: E402


def bare(machine, completions, start):
    state = start
    for c in completions:
        prompt = machine.prompt(state)
        assert isinstance(prompt, str)
        state = machine.harness(state, c)
        if is_sentinel(state):
            break
    return state


def bare_with_model(machine, model, start, n):
    """Not the baseline: the bare loop plus the same model calls ``run`` makes.

    ``bare`` feeds the completions from a list; ``run`` must ask the model, and a
    ``ScriptedModel`` call (type checks, call record) costs several times a table
    lookup. The ``model`` column shows that share, so the rest is ``run``'s own cost.
    """
    state = start
    for _ in range(n):
        prompt = machine.prompt(state)
        assert isinstance(prompt, str)
        state = machine.harness(state, model.complete(prompt))
        if is_sentinel(state):
            break
    return state


def timed(fn, repeats=3):
    """The best of ``repeats`` runs: the machine this runs on is shared and noisy."""
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def counting(n):
    i = 0
    while True:
        c = yield f"step {i}: continue?"
        i += 1
        if c == "stop" or i >= n:
            return i


def main() -> None:
    table = TableMachine(
        {0: "go", 1: "again"}, {(0, "x"): 1, (1, "x"): 0, (0, "s"): HALT, (1, "s"): HALT}, initial=0
    )
    cases = [
        ("table", lambda: table, 200_000),
        ("harness", lambda: HarnessMachine(counting, 10**9), 50_000),
    ]
    tmp = tempfile.mkdtemp()
    print(
        f"{'machine':8} {'steps':>8} {'bare s':>8} {'run s':>8} {'ratio':>6} {'run+file s':>11} {'ratio':>6} {'model':>6}"
    )
    for name, make, n in cases:
        script = ["x"] * n
        t_bare = timed(lambda: bare(make(), script, make().initial))
        t_run = timed(lambda: run(make(), ScriptedModel(script), max_steps=n))
        path = os.path.join(tmp, f"{name}.jsonl")
        t_file = timed(lambda: run(make(), ScriptedModel(script), max_steps=n, path=path))
        t_model = timed(lambda: bare_with_model(make(), ScriptedModel(script), make().initial, n))
        print(
            f"{name:8} {n:8d} {t_bare:8.3f} {t_run:8.3f} {t_run / t_bare:6.1f} {t_file:11.3f} {t_file / t_bare:6.1f} "
            f"{t_model / t_bare:6.1f}"
        )
    print(
        "ratio = run time / bare loop time; model = bare loop calling the same ScriptedModel / bare loop"
    )
    # The model side alone: ScriptedModel against a bare list iterator.
    script = ["x"] * 200_000
    t_iter = timed(lambda: [next(it) for it in [iter(script)] for _ in script])
    m = FunctionModel(lambda p: "x")
    t_model = timed(lambda: [m.complete("p") for _ in script])
    print(f"FunctionModel.complete vs a bare iterator, 200 000 calls: {t_model / t_iter:.1f}x")


if __name__ == "__main__":
    main()
