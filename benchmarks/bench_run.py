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

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import goal, interleaved  # noqa: E402

from agentic_machines import HALT, HarnessMachine, TableMachine, is_sentinel  # noqa: E402
from agentic_machines.models import FunctionModel, ScriptedModel  # noqa: E402
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
    rows = []
    print(
        f"{'machine':8} {'steps':>8} {'bare s':>8} {'run s':>8} {'ratio':>6} {'run+file s':>11} {'ratio':>6} {'model':>6}"
    )
    for name, make, n in cases:
        script = ["x"] * n
        path = os.path.join(tmp, f"{name}.jsonl")
        (t_bare, _), (t_run, _), (t_file, _), (t_model, _) = interleaved(
            [
                lambda: bare(make(), script, make().initial),
                lambda: run(make(), ScriptedModel(script), max_steps=n),
                lambda: run(make(), ScriptedModel(script), max_steps=n, path=path),
                lambda: bare_with_model(make(), ScriptedModel(script), make().initial, n),
            ],
            3,
        )
        print(
            f"{name:8} {n:8d} {t_bare:8.3f} {t_run:8.3f} {t_run / t_bare:6.1f} {t_file:11.3f} {t_file / t_bare:6.1f} "
            f"{t_model / t_bare:6.1f}"
        )
        rows.append((name, t_run / t_bare, t_file / t_bare))
    print(
        "ratio = run time / bare loop time; model = bare loop calling the same ScriptedModel / bare loop"
    )
    # The model side alone: ScriptedModel against a bare list iterator.
    script = ["x"] * 200_000
    m = FunctionModel(lambda p: "x")
    (t_iter, _), (t_model, _) = interleaved(
        [
            lambda: [next(it) for it in [iter(script)] for _ in script],
            lambda: [m.complete("p") for _ in script],
        ],
        3,
    )
    print(f"FunctionModel.complete vs a bare iterator, 200 000 calls: {t_model / t_iter:.1f}x")
    for name, r_run, r_file in rows:
        goal(f"{name}: run ÷ bare loop", r_run, None)
        goal(f"{name}: run with a trace file ÷ bare loop", r_file, None)


if __name__ == "__main__":
    main()
