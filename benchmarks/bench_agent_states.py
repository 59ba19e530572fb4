"""States per second when exploring an agent function, by depth, in both isolation modes.

Run: ``python benchmarks/bench_agent_states.py``. Issue 35 asks that exploring an agent
cost the same per state at any depth (replaying every state from the start made depth
16 cost 1.7x depth 4 per state), and measures the price of the worker processes.

- ``toy``: an agent with two completions, ``go`` (ask again) and ``stop`` (return),
  explored breadth-first to depth 4, 8, 12 and 16 (``depth + 1`` states, ``2 (depth +
  1)`` steps), on a fresh machine each time (a machine keeps every outcome it made), in
  ``process`` mode (each step one fork of the process that holds the state) and
  ``inline`` mode (greenlets in this process). States/s counts the explored states.
- ``heavy``: the same agent doing real work in each step (sorting 20,000 numbers),
  to depth 8: the fork's share shrinks as the step's own work grows.
- ``floor``: one bare ``os.fork`` of this process (the child exits at once, the parent
  waits): what process mode pays per step at least, whatever the agent does.

Goals: per-state cost at depth 16 within 1.5x of depth 4 in at least one mode, and
process mode within 3x of inline on the toy agent, or the floor measured and said.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import goal, median_time  # noqa: E402

from agentic_machines import agent_machine  # noqa: E402
from agentic_machines.runtime.explore import explore  # noqa: E402

DEPTHS = (4, 8, 12, 16)
ROUNDS = 7


def toy(model):
    n = 0
    while model(f"step {n}: go or stop?") == "go":
        n += 1
    return n


def heavy(model):
    n = 0
    while model(f"step {n}: go or stop?") == "go":
        sorted(range(20_000, 0, -1))  # the step's own work
        n += 1
    return n


def seconds_per_state(fn, mode: str, depth: int) -> float:
    """Median seconds per explored state, a fresh machine per round (built untimed)."""
    times = []
    for _ in range(ROUNDS):
        machine = agent_machine(fn, isolation=mode)
        seconds, graph = median_time(
            lambda m=machine: explore(
                m, completions=["go", "stop"], max_depth=depth, progress=False
            ),
            runs=1,
        )
        times.append(seconds / graph.graph["stats"]["states"])
    times.sort()
    return times[len(times) // 2]


def fork_floor() -> float:
    def one() -> None:
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)

    seconds, _ = median_time(lambda: [one() for _ in range(20)], runs=5)
    return seconds / 20


def main() -> None:
    cost: dict[tuple[str, int], float] = {}
    for mode in ("process", "inline"):
        for depth in DEPTHS:
            cost[mode, depth] = seconds_per_state(toy, mode, depth)
            print(
                f"toy, {mode}, depth {depth}: {1 / cost[mode, depth]:,.0f} states/s "
                f"({cost[mode, depth] * 1e3:.2f} ms a state)"
            )
    for mode in ("process", "inline"):
        per = seconds_per_state(heavy, mode, 8)
        print(f"heavy, {mode}, depth 8: {1 / per:,.0f} states/s ({per * 1e3:.2f} ms a state)")
    floor = fork_floor()
    print(f"floor: one bare fork of this process and its wait: {floor * 1e3:.2f} ms")
    print(
        "process mode pays a fork per step (each step forks the process holding its state), "
        "so its per-state cost is about two forks whatever the depth, and process ÷ inline "
        "is that floor ÷ inline's per-state cost: a fork costs more than an inline step."
    )
    growth = {mode: cost[mode, 16] / cost[mode, 4] for mode in ("process", "inline")}
    goal("toy agent, per-state cost depth 16 ÷ depth 4, process", growth["process"], None)
    goal("toy agent, per-state cost depth 16 ÷ depth 4, inline", growth["inline"], None)
    goal("toy agent, per-state cost depth 16 ÷ depth 4, best mode", min(growth.values()), 1.5)
    ratio = cost["process", 16] / cost["inline", 16]
    goal("toy agent, depth 16: process ÷ inline per state", ratio, 3)
    # what the ratio would be if a state cost process mode its forks and nothing else
    goal(
        "the fork floor (2 forks a state) ÷ inline per state, depth 16",
        2 * floor / cost["inline", 16],
        None,
    )


if __name__ == "__main__":
    main()
