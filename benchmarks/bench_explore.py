"""Throughput of ``explore`` against a bare breadth-first loop over the same harness.

Run: ``python benchmarks/bench_explore.py``. Both loops run in this process on the same
machine; the ratio (explore time / bare time) is what matters, not the absolute
numbers. Goal (issue 2): at most 2x slower.

Three machines, from the cheapest harness to a realistic one:

- ``table``: a random 20 000-state, 8-completion ``TableMachine``. Its harness is one
  dict lookup (about 0.3 µs), so this measures the cost of building the networkx graph
  itself (one attribute dict per edge, entered in both the successor and the
  predecessor maps); it is the worst case for the ratio. Storing a graph costs about
  4-5x a bare seen-set whatever the implementation (measured the same on a
  trivial successor function with networkx alone), so the 2x goal is out of reach here:
  the ``floor`` column times ``networkx_floor``, the least a search returning a
  ``DiGraph`` with an attribute dict per edge can do, and it alone is 3.5-4.5x here
  (building the predecessor map and freeing edge dicts scattered in memory dominate).
  The gap between ``ratio`` and ``floor`` is explore's own cost: prompts, node
  records, bounds and statistics.
- ``function``: a 20 000-state ``FunctionMachine`` whose harness does a little
  arithmetic and string work, as a hand-written machine would.
- ``harness``: a ``HarnessMachine`` (a generator harness, as the architectures are
  written) with 4 completions, halting after 7 steps: 5 461 trace states.
"""

from __future__ import annotations

import gc
import random
import sys
from collections import deque
from pathlib import Path

import networkx as nx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import goal, interleaved  # noqa: E402

from agentic_machines import DIVERGE, HALT, FunctionMachine, HarnessMachine, TableMachine  # noqa: E402
from agentic_machines.runtime.explore import explore  # noqa: E402


def bare_bfs(machine, start, completions):
    """The baseline: a seen-set and a queue, nothing recorded but the states."""
    h = machine.harness
    seen = {start}
    queue = deque([start])
    while queue:
        s = queue.popleft()
        for c in completions:
            t = h(s, c)
            if t is HALT or t is DIVERGE or t in seen:
                continue
            seen.add(t)
            queue.append(t)
    return len(seen)


def networkx_floor(machine, start, completions):
    """Not a baseline: the least any search that returns a ``DiGraph`` must do.

    The bare loop plus one attribute dict and completion list per edge, entered in the
    successor map during the search and in the predecessor map after it (the cheapest
    order we measured), with no prompts, node attributes, bounds or statistics. The
    gap between this line and the bare loop is the price of the networkx data
    structure itself; the gap between ``explore`` and this line is explore's own cost.
    """
    h = machine.harness
    succ = {start: {}}
    queue = deque([start])
    while queue:
        s = queue.popleft()
        out = succ[s]
        for c in completions:
            t = h(s, c)
            if t in out:
                out[t]["completions"].append(c)
                continue
            out[t] = {"completions": [c], "label": c}
            if t not in succ:
                succ[t] = {}
                if t is not HALT and t is not DIVERGE:
                    queue.append(t)
    pred = {t: {} for t in succ}
    for s, out in succ.items():
        for t, e in out.items():
            pred[t][s] = e
    graph = nx.DiGraph()
    graph._adj.update(succ)  # noqa: SLF001 - as explore does: _adj is _succ on a DiGraph
    graph._pred.update(pred)  # noqa: SLF001
    return graph


def table_machine(n=20_000, k=8, seed=1):
    rng = random.Random(seed)
    comps = [f"c{i}" for i in range(k)]
    prompts = {i: f"p{i % 7}" for i in range(n)}
    table = {}
    for i in range(n):
        for c in comps:
            r = rng.random()
            table[(i, c)] = HALT if r < 0.01 else DIVERGE if r < 0.02 else rng.randrange(n)
    return TableMachine(prompts, table, initial=0, name="random-table"), comps


def function_machine(n=20_000):
    comps = [str(d) for d in range(1, 7)]

    def harness(s, c):
        v = (s * 31 + int(c) * 17 + len(str(s))) % n
        return HALT if v == 0 else v

    return FunctionMachine(lambda s: f"state {s}", harness, initial=1, name="modular"), comps


def harness_machine(steps=7):
    def program():
        seen = []
        while len(seen) < steps:
            c = yield "history: " + " ".join(seen)
            seen.append(c.strip()[:1] or "_")
        return "".join(seen)

    return HarnessMachine(program, name="tree"), ["a", "b", "c", "d"]


def main() -> None:
    cases = [
        ("table", *table_machine(), 7),
        ("function", *function_machine(), 7),
        ("harness", *harness_machine(), 5),
    ]
    print(
        f"{'machine':<10} {'states':>7} {'edges':>7} {'bare s':>8} {'explore s':>10} {'ratio':>6}  {'states/s':>9}  {'floor':>5}"
    )
    rows = []
    for name, machine, comps, repeats in cases:
        n_bare = bare_bfs(machine, machine.initial, comps)
        graph = explore(machine, completions=comps, max_states=None, progress=False)
        assert graph.graph["stats"]["states"] == n_bare, (name, n_bare, graph.graph["stats"])
        (bare, _), (full, _), (floor, _) = interleaved(
            [
                lambda: bare_bfs(machine, machine.initial, comps),
                lambda: explore(machine, completions=comps, max_states=None, progress=False),
                lambda: _gc_paused(networkx_floor, machine, machine.initial, comps),
            ],
            repeats,
        )
        print(
            f"{name:<10} {n_bare:>7} {graph.number_of_edges():>7} {bare:>8.3f} {full:>10.3f} "
            f"{full / bare:>6.2f}  {n_bare / full:>9,.0f}  {floor / bare:>5.2f}"
        )
        rows.append((name, full / bare, floor / bare))
    print("ratio = explore time / bare BFS time over the same harness (goal: <= 2.0)")
    print(
        "floor = networkx_floor time / bare BFS time: the cost of returning any DiGraph with edge attributes"
    )
    for name, ratio, floor in rows:
        goal(f"{name}: explore ÷ bare BFS (its floor {floor:.2f}x)", ratio, 2.0)


def _gc_paused(fn, *args):
    """Run ``fn`` with the cyclic collector paused, as explore does (a fair floor)."""
    gc.disable()
    try:
        return fn(*args)
    finally:
        gc.enable()


if __name__ == "__main__":
    main()
