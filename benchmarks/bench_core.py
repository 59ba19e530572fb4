"""Benchmark the exact checkers of the formal core (issue 2 acceptance).

Run: ``python benchmarks/bench_core.py``. Goals (2-core machine): exhaustive
``spe_states`` on a random 2 000-state, 8-completion machine under 1 s, and
``completion_generates`` between random 200-state machines under 1 s. Each timing is
also printed as a ratio to a bare loop that only reads every transition of the same
machines in the same process (the unavoidable cost of looking at the input). Cases
settled by a shortcut say so and sit beside one that is not; the issue-16 ratios (median
of 5, paired baselines) are in ``bench_deciders.py``.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import goal, median_time  # noqa: E402

from agentic_machines import DIVERGE, HALT, TableMachine, completion_generates, spe_states  # noqa: E402

GOAL = 1.0  # seconds


def random_machine(
    rng, n, k, *, prompts=("a", "b", "c"), sentinel_rate=0.02, labels=None, name="random"
):
    labels = labels or list(range(n))
    letters = [f"c{i}" for i in range(k)]
    table = {}
    for s in labels:
        for c in letters:
            r = rng.random()
            table[(s, c)] = (
                HALT
                if r < sentinel_rate / 2
                else DIVERGE
                if r < sentinel_rate
                else rng.choice(labels)
            )
    return TableMachine(
        {s: rng.choice(prompts) for s in labels}, table, completions=letters, name=name
    )


def bare_read(*machines):
    """Baseline: read every transition once."""

    def run():
        total = 0
        for m in machines:
            for s in m.states:
                for c in m.completions:
                    total += m.harness(s, c) is HALT
        return total

    return run


def report(label, seconds, baseline):
    print(f"{label:<62} {seconds * 1000:8.1f} ms   {seconds / baseline:6.2f}x bare read")
    goal(f"{label.strip()}, seconds", seconds, GOAL, unit=" s", digits=3)


def planted(rng, n, k, *, corrupt=False):
    """A target X' and a machine X with a state x whose successors contain a copy of X'."""
    target = random_machine(rng, n, k, prompts=("⋆",), name="target")
    copy = {s: ("copy", s) for s in target.states}
    noise = [("noise", i) for i in range(n)]
    states = list(copy.values()) + noise + ["x"]
    letters = list(target.completions)
    table, prompts = {}, {}
    for s in target.states:
        prompts[copy[s]] = target.prompt(s)
        for c in letters:
            o = target.harness(s, c)
            table[(copy[s], c)] = o if o in (HALT, DIVERGE) else copy[o]
    if corrupt:  # one transition of the copy goes elsewhere: no embedding any more
        s0 = next(iter(target.states))
        table[(copy[s0], letters[0])] = rng.choice(noise)
    for s in noise:
        prompts[s] = "⋆"
        for c in letters:
            table[(s, c)] = rng.choice(states[:-1])
    prompts["x"] = "⋆"
    shuffled = list(copy.values())
    rng.shuffle(shuffled)
    for i, c in enumerate(letters):
        table[("x", c)] = shuffled[i] if i < len(shuffled) else rng.choice(noise)
    return TableMachine(prompts, table, completions=letters, name="host"), target


def main() -> None:
    rng = random.Random(20261130)
    print("agentic-machines core benchmark (median of 5)")

    big = random_machine(rng, 2000, 8)
    base = median_time(bare_read(big))[0]
    t, result = median_time(lambda: spe_states(big))
    report("spe_states, random 2000 x 8 (settled by the |S| > |C| shortcut)", t, base)
    everything = set(big.states)
    t_loop, loop_result = median_time(
        lambda: {
            x for x in big.states if {big.harness(x, c) for c in big.completions} >= everything
        }
    )
    assert loop_result == result
    report("  (F1 loop over every state, without the |S| > |C| shortcut)", t_loop, base)

    dense = TableMachine(
        {i: "⋆" for i in range(300)},
        {
            (i, f"c{j}"): (i + j) % 300 if i % 7 else (i * j) % 300
            for i in range(300)
            for j in range(300)
        },
        completions=[f"c{j}" for j in range(300)],
    )
    t, found = median_time(lambda: spe_states(dense))
    report(
        f"spe_states, 300 states x 300 completions ({len(found)} SPE states)",
        t,
        median_time(bare_read(dense))[0],
    )

    a, b = random_machine(rng, 200, 8), random_machine(rng, 200, 8)
    t, v = median_time(lambda: completion_generates(a, 0, b))
    report(
        f"completion_generates, random 200 x 8 ({v.status}, {v.method}: a shortcut)",
        t,
        median_time(bare_read(a, b))[0],
    )

    host, target = planted(rng, 200, 256)
    t, v = median_time(lambda: completion_generates(host, "x", target))
    assert v.holds is True
    report(
        f"completion_generates, 200-state target planted in succ(x) ({v.status})",
        t,
        median_time(bare_read(host, target))[0],
    )

    host, target = planted(rng, 200, 256, corrupt=True)
    t, v = median_time(lambda: completion_generates(host, "x", target))
    assert v.holds is False
    report(
        f"  same with one corrupted transition ({v.status}, {v.obstruction.kind})",
        t,
        median_time(bare_read(host, target))[0],
    )


if __name__ == "__main__":
    main()
