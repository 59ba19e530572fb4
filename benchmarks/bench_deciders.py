"""The exact deciders against the plainest loop that computes the same answer (issue 16).

Run: ``python benchmarks/bench_deciders.py``. Every row is a ratio against a baseline
timed in the same process, alternating with it, median of 5 runs:

- ``spe_states`` on random |S| = |C| machines ÷ a plain loop that reads h(x, c) and
  stops a state once the states still missing outnumber the completions left (goal
  ≤ 1.0x at 2 000 x 2 000); the growth curve runs |S| = |C| = 250 … 2 000;
- ``is_spe_state`` on every state ÷ ``spe_states`` (goal ≤ 1.2x; in CPU time, median of
  11): each verdict's explanation (claim, witness or obstruction, details) is built
  when it is read, so a loop that reads ``.holds`` pays for the F1 scan and little more;
- ``completion_generates(X, x, X)`` on an all-SPE 1 000-state machine ÷ one read of all
  transitions (goal ≤ 2x);
- cases settled by a shortcut (|S| > |C|; F5 counting) are labelled so, beside a case
  of the same size that is not.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import goal, paired  # noqa: E402

from agentic_machines import (  # noqa: E402
    DIVERGE,
    HALT,
    TableMachine,
    completion_generates,
    is_spe_state,
    spe_states,
)


def random_machine(rng, n, k, *, sentinel_rate=0.02, name="random"):
    letters = [f"c{i}" for i in range(k)]
    table = {}
    for s in range(n):
        for c in letters:
            r = rng.random()
            table[(s, c)] = (
                HALT
                if r < sentinel_rate / 2
                else DIVERGE
                if r < sentinel_rate
                else rng.randrange(n)
            )
    return TableMachine({s: "⋆" for s in range(n)}, table, completions=letters, name=name)


def cyclic(n, *, prompts=1):
    """h(i, c_j) = i + j mod n: every state reaches every state, so every state is SPE."""
    return TableMachine(
        {i: f"p{i % prompts}" for i in range(n)},
        {(i, f"c{j}"): (i + j) % n for i in range(n) for j in range(n)},
        completions=[f"c{j}" for j in range(n)],
        name=f"cyclic{n}",
    )


def plain_spe_loop(machine):
    """The baseline of the issue: per state, read completions in order and stop once the
    states still missing outnumber the completions left."""
    states, alphabet, h = list(machine.states), list(machine.completions), machine.harness
    k = len(alphabet)
    found = []
    for x in states:
        missing = set(states)
        for i, c in enumerate(alphabet, 1):
            missing.discard(h(x, c))
            if len(missing) > k - i:
                break
        else:
            if not missing:
                found.append(x)
    return frozenset(found)


def read_all(machine):
    """One read of every transition (the unavoidable cost of looking at the input)."""
    h, alphabet = machine.harness, list(machine.completions)
    return sum(1 for s in machine.states for c in alphabet if h(s, c) is HALT)


def row(label, t, base, ratio, target=None, *, measure=""):
    """One line of the table; with a ``target``, also the goal row of ``measure``."""
    print(f"{label:<58} {t * 1000:9.1f} ms {base * 1000:9.1f} ms {ratio:7.2f}x")
    if target is not None:
        goal(f"{measure}, {label.strip()}", ratio, target)


def main() -> None:
    rng = random.Random(20261201)
    print(f"{'case':<58} {'toolkit':>12} {'baseline':>12} {'ratio':>8}")
    print("spe_states ÷ plain early-exit loop, random |S| = |C| (growth curve)")
    big = None
    for n in (250, 500, 1000, 2000):
        m = random_machine(rng, n, n)
        t, b, r, (got, want) = paired(lambda m=m: spe_states(m), lambda m=m: plain_spe_loop(m))
        assert got == want
        row(
            f"  |S| = |C| = {n} ({len(got)} SPE)",
            *(t, b, r, 1.0 if n == 2000 else None),
            measure="spe_states ÷ plain early-exit loop",
        )
        big = m
    all_spe = cyclic(250)
    t, b, r, (got, want) = paired(lambda: spe_states(all_spe), lambda: plain_spe_loop(all_spe))
    assert got == want == frozenset(all_spe.states)
    row("  all-SPE 250 x 250 (no early exit possible)", t, b, r)
    shortcut = random_machine(rng, 2000, 8)
    t, b, r, _ = paired(lambda: spe_states(shortcut), lambda: plain_spe_loop(shortcut))
    row("  2000 x 8, settled by the |S| > |C| shortcut (F1)", t, b, r)

    # CPU time, 11 rounds: the difference measured is a few microseconds a state, which
    # the scheduler's share of wall time on a loaded machine swamps (benchmarks/_timing.py).
    print("is_spe_state on every state ÷ spe_states (CPU time, median of 11)")
    t, b, r, (got, want) = paired(
        lambda: frozenset(x for x in big.states if is_spe_state(big, x).holds),
        lambda: spe_states(big),
        11,
        cpu=True,
    )
    assert got == want
    row("  random 2000 x 2000", t, b, r, 1.2, measure="is_spe_state on every state ÷ spe_states")
    t, b, r, _ = paired(
        lambda: frozenset(x for x in all_spe.states if is_spe_state(all_spe, x).holds),
        lambda: spe_states(all_spe),
        11,
        cpu=True,
    )
    row(
        "  all-SPE 250 x 250 (every row read in full)",
        *(t, b, r, 1.2),
        measure="is_spe_state on every state ÷ spe_states",
    )

    print("completion_generates ÷ one read of all transitions")
    ring = cyclic(1000)
    t, b, r, (v, _) = paired(lambda: completion_generates(ring, 0, ring), lambda: read_all(ring))
    assert v.holds is True
    row(
        f"  (X, 0, X), all-SPE 1000 x 1000 ({v.method})",
        *(t, b, r, 2.0),
        measure="completion_generates ÷ one read",
    )
    ring3 = cyclic(999, prompts=3)
    t, b, r, (v, _) = paired(lambda: completion_generates(ring3, 0, ring3), lambda: read_all(ring3))
    assert v.holds is True
    row(
        f"  (X, 0, X), all-SPE 999 x 999, 3 prompts ({v.method})",
        *(t, b, r, 2.0),
        measure="completion_generates ÷ one read",
    )
    a, other = random_machine(rng, 200, 8), random_machine(rng, 200, 8, name="other")
    t, b, r, (v, _) = paired(
        lambda: completion_generates(a, 0, other), lambda: read_all(a) + read_all(other)
    )
    row(f"  random 200 x 8 pair, settled by counting ({v.method})", t, b, r)


if __name__ == "__main__":
    main()
