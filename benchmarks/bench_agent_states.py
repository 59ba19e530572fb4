"""States per second when exploring an agent function, by depth, in both isolation modes.

Run: ``python benchmarks/bench_agent_states.py [rounds]``. Issue 35 asks that exploring
an agent cost the same per state at any depth (replaying every state from the start made
depth 16 cost 1.7x depth 4 per state), and measures the price of the worker processes.

- ``toy``: an agent with two completions, ``go`` (ask again) and ``stop`` (return),
  explored breadth-first to depth 4, 8, 12 and 16 (``depth + 1`` states, ``2 (depth +
  1)`` steps), on a fresh machine each time (a machine keeps every outcome it made), in
  ``process`` mode (a step forks the process that holds its state, except the last
  completion tried from a state, which the holder runs itself) and ``inline`` mode
  (greenlets in this process). States/s counts the explored states; forks/state counts
  the processes forked.
- ``heavy``: the same agent doing real work in each step (sorting 20,000 numbers),
  to depth 8: the fork's share shrinks as the step's own work grows.
- ``floor``: what process mode pays per step whatever the agent does, measured here with
  networkx and Hypothesis imported (a fork copies the page tables of all that): one bare
  ``os.fork`` (the child exits at once, the parent waits for it), and one round trip of a
  message to another process and back over a socket (two wake-ups of a process).

Goals: per-state cost at depth 16 within 1.5x of depth 4 in at least one mode, and
process mode within 3x of inline on the toy agent, or the floor measured and said.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hypothesis  # noqa: E402, F401 - the floor is a fork of a process that imported it
import networkx  # noqa: E402, F401
from _timing import goal, median_time  # noqa: E402

from agentic_machines import agent_machine  # noqa: E402
from agentic_machines.runtime.explore import explore  # noqa: E402

DEPTHS = (4, 8, 12, 16)
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 7


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


def per_state(fn, mode: str, depth: int) -> tuple[float, float]:
    """Median seconds per explored state, a fresh machine per round (built untimed), and
    the processes forked per state."""
    times, forks = [], 0.0
    for _ in range(ROUNDS):
        machine = agent_machine(fn, isolation=mode)
        seconds, graph = median_time(
            lambda m=machine: explore(
                m, completions=["go", "stop"], max_depth=depth, progress=False
            ),
            runs=1,
        )
        states = graph.graph["stats"]["states"]
        times.append(seconds / states)
        pool = machine._pool
        forks = (pool.forks / states) if pool is not None else 0.0
    times.sort()
    return times[len(times) // 2], forks


def fork_floor() -> float:
    def one() -> None:
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)

    seconds, _ = median_time(lambda: [one() for _ in range(20)], runs=5)
    return seconds / 20


def round_trip_floor() -> float:
    mine, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:  # an echo: every byte straight back
        mine.close()
        while data := theirs.recv(1):
            theirs.sendall(data)
        os._exit(0)
    theirs.close()

    def trips() -> None:
        for _ in range(200):
            mine.sendall(b"x")
            mine.recv(1)

    seconds, _ = median_time(trips, runs=5)
    mine.close()
    os.waitpid(pid, 0)
    return seconds / 200


def main() -> None:
    cost: dict[tuple[str, int], float] = {}
    forks: dict[tuple[str, int], float] = {}
    for mode in ("process", "inline"):
        for depth in DEPTHS:
            cost[mode, depth], forks[mode, depth] = per_state(toy, mode, depth)
            print(
                f"toy, {mode}, depth {depth}: {1 / cost[mode, depth]:,.0f} states/s "
                f"({cost[mode, depth] * 1e3:.2f} ms a state, "
                f"{forks[mode, depth]:.2f} forks a state)"
            )
    for mode in ("process", "inline"):
        per, n = per_state(heavy, mode, 8)
        print(
            f"heavy, {mode}, depth 8: {1 / per:,.0f} states/s ({per * 1e3:.2f} ms a state, "
            f"{n:.2f} forks a state)"
        )
    fork, trip = fork_floor(), round_trip_floor()
    floor = (
        forks["process", 16] * fork + 2 * trip
    )  # its forks, and a round trip for each of its two steps
    print(f"floor: one bare fork of this process and its wait: {fork * 1e3:.2f} ms")
    print(f"floor: one round trip to another process over a socket: {trip * 1e3:.3f} ms")
    print(
        f"floor of a toy state at depth 16: {forks['process', 16]:.2f} forks and two round "
        f"trips: {floor * 1e3:.2f} ms, against {cost['process', 16] * 1e3:.2f} ms measured"
    )
    growth = {mode: cost[mode, 16] / cost[mode, 4] for mode in ("process", "inline")}
    goal("toy agent, per-state cost depth 16 ÷ depth 4, process", growth["process"], None)
    goal("toy agent, per-state cost depth 16 ÷ depth 4, inline", growth["inline"], None)
    goal("toy agent, per-state cost depth 16 ÷ depth 4, best mode", min(growth.values()), 1.5)
    ratio = cost["process", 16] / cost["inline", 16]
    goal("toy agent, depth 16: process ÷ inline per state", ratio, 3)
    # the ratio if a state cost process mode its forks and round trips and nothing else
    goal(
        "the floor (forks + round trips) ÷ inline per state, depth 16",
        floor / cost["inline", 16],
        None,
    )
    goal("toy agent, depth 16: process ÷ its floor per state", cost["process", 16] / floor, None)


if __name__ == "__main__":
    main()
