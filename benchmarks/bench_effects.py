"""``check_properties`` with ``effects_at_most_once`` on an agent function ÷ ``explore`` of it.

Run: ``python benchmarks/bench_effects.py``. Both search the same agent function (an
``agent_machine``) over the same alphabet to the same depth, in this process; the ratio
matters, not the absolute times. The agent is a shop loop whose payment tool is an
``effect`` defined *inside* the function (a new function object on every replay), as in
``tests/test_checking_agents.py``: every "pay" executes it once, with the turn number as
the request, so no request repeats and the check visits every state.

- ``explore``: the bounded breadth-first search of the states (the baseline);
- ``check``: ``check_properties`` with ``effects_at_most_once("charge")`` and
  ``never_diverges()`` (the tool's log is read before and after every harness call).

Goals (issue 25, item 3): at most 2x on about 3,000 states, and linear: the ratio on
3,000 states is at most 1.25x the ratio on about 1,000 (the check grows as explore does).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import goal, paired  # noqa: E402

from agentic_machines import agent_machine, effect  # noqa: E402
from agentic_machines.checking import effects_at_most_once, never_diverges  # noqa: E402
from agentic_machines.checking.check import check_properties  # noqa: E402
from agentic_machines.runtime.explore import explore  # noqa: E402

ALPHABET = ["pay", "look", "wait", "done"]  # three go on, one ends: 3^d states at depth d


def shop(model):
    paid = []

    @effect
    def charge(order: int) -> str:
        paid.append(order)
        return "ok"

    turn = 0
    while True:
        reply = model(f"Turn {turn}. Paid {len(paid)} order(s). pay, look, wait or done?")
        turn += 1
        if reply == "done":
            return paid
        if reply == "pay":
            charge(turn)


def measure(depth: int) -> tuple[int, float, float, float]:
    def check():
        m = agent_machine(shop, name="shop")
        return check_properties(
            m,
            properties=[effects_at_most_once("charge"), never_diverges()],
            completions=ALPHABET,
            max_depth=depth,
            max_states=None,
            progress=False,
        )

    def walk():
        m = agent_machine(shop, name="shop")
        return explore(m, completions=ALPHABET, max_depth=depth, max_states=None, progress=False)

    t, b, ratio, (result, graph) = paired(check, walk, runs=3)
    assert result, result.report("shop")
    states = result.coverage.states
    assert states == graph.graph["stats"]["states"], (states, graph.graph["stats"])
    return states, t, b, ratio


def main() -> None:
    rows = []
    for depth in (6, 7):
        states, t, b, ratio = measure(depth)
        rows.append((states, ratio))
        print(
            f"depth {depth}: {states:,} states, check {t:.2f} s, explore {b:.2f} s, ratio {ratio:.2f}"
        )
    (small, r_small), (big, r_big) = rows
    goal(
        f"effects_at_most_once + never_diverges ÷ explore, agent function, {big:,} states",
        r_big,
        2.0,
    )
    goal(f"the same on {small:,} states", r_small, None)
    # Linear: explore itself replays a state at depth d in O(d), so the check is linear in
    # the states when its ratio to explore does not grow with them. A superlinear check (as
    # before issue 25: 3,000 states took 21x as long as 1,500) makes this ratio grow with n.
    goal(
        f"linear: the ratio on {big:,} states ÷ the ratio on {small:,}",
        r_big / r_small,
        1.25,
    )


if __name__ == "__main__":
    main()
