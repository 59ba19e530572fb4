"""Following a keyed loop of an agent: its process takes the steps, against the agent run here.

Run: ``python benchmarks/bench_keyed.py``. ``never_diverges(key=...)`` follows a loop that
came back to a key as many rounds as the search records states (``max_states``: 10,000
for the ``test`` verb), so an endless agent costs one follow of that many steps before
its refutation by the key. The agent runs in a worker process; a followed step goes on
in the process of the state it starts from (``AgentMachine.along``), one round trip, no
fork. Two ratios, wall time (the worker is another process):

- ``check ÷ direct``: the whole check of an endless agent at ``max_states=N`` against the
  simplest honest computation of the same prompts, the agent function called here with a
  model that answers ``"go"`` N times (the cost of running the agent out of process, per
  step, with the check's own work);
- ``fork per step ÷ along``: following the same loop with ``along`` turned off (each step
  a fork of the state's process, as a breadth-first search steps) against with it, on
  fewer rounds (a fork costs milliseconds).

Measured (2026-12-06, load about 2 on 2 cores): check ÷ direct about 1,400x at N = 2,000
(0.27 s: some 130 µs a step, a round trip to the worker, against 0.1 µs for the agent
called here); fork per step ÷ along about 38x (11 ms a fork, against 0.26 ms).
"""

from __future__ import annotations

import sys
from contextlib import nullcontext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import goal, paired  # noqa: E402

from agentic_machines import agent_machine  # noqa: E402
from agentic_machines.checking import check_properties, keyed, never_diverges  # noqa: E402

RUNS = 5
ROUNDS = 2_000
FORKED_ROUNDS = 200


def endless(model):
    """Asks the same question until told to stop."""
    while model("Go on, or stop?") != "stop":
        pass


class Enough(Exception):
    """Ends the direct run after its model calls."""


def direct(n: int) -> list[str]:
    """The agent called here: the prompts of its first ``n`` + 1 model calls."""
    prompts: list[str] = []

    def model(prompt: str) -> str:
        prompts.append(prompt)
        if len(prompts) > n:
            raise Enough
        return "go"

    try:
        endless(model)
    except Enough:
        pass
    return prompts


def checked(n: int) -> str:
    """The check of the endless agent at ``max_states=n``: refuted by the key."""
    m = agent_machine(endless, name="endless")
    r = check_properties(
        m, properties=[never_diverges(key=m.prompt)], completions=["go", "stop"], max_states=n
    )
    verdict = r.results[0].verdict
    assert verdict.method == "key" and f"{n:,} more rounds" in verdict.reason, r.report()
    return verdict.status


def forked(n: int) -> str:
    """The same check with each followed step a fork (``along`` turned off)."""
    along = keyed.along
    keyed.along = lambda machine: nullcontext()  # type: ignore[assignment]
    try:
        return checked(n)
    finally:
        keyed.along = along


def main() -> None:
    full, base, ratio, _ = paired(lambda: checked(ROUNDS), lambda: direct(ROUNDS), RUNS)
    print(f"check of {ROUNDS:,} rounds {full:.3f} s, the agent called here {base:.4f} s")
    slow, fast, gain, _ = paired(
        lambda: forked(FORKED_ROUNDS), lambda: checked(FORKED_ROUNDS), RUNS
    )
    print(f"{FORKED_ROUNDS} rounds: a fork per step {slow:.3f} s, along {fast:.3f} s")
    goal(f"endless agent, max_states={ROUNDS:,}: check ÷ the agent called here", ratio, None)
    goal(f"following {FORKED_ROUNDS} rounds: a fork per step ÷ along", gain, None)


if __name__ == "__main__":
    main()
