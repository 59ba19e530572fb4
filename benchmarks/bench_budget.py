"""Cost of line-budget tracing against the same code run untraced.

Run: ``python benchmarks/bench_budget.py``. Every loop runs in this process; the
ratios (traced time / untraced time) matter, not the absolute numbers. A
``LineBudget`` counts executed lines with ``sys.settrace``, so CPython calls a Python
function for every line, call and return of the code under it; this is the price of
a deterministic ``DIVERGE`` verdict, and the reason ``HarnessMachine`` runs (and the
architectures) are slower than the bare generator.

- ``lines``: a loop of plain statements (three line events per iteration);
- ``calls``: a loop calling a small function (a call and a return event per line);
- each under one budget and under two nested budgets (a harness step around a block
  of model code, as :mod:`agentic_machines.execution.codeexec` runs it);
- ``divergent step``: an agent function whose second step never calls the model again,
  run as ``agent_machine`` runs it by default (in a worker process, budget counted
  there), with a plain-line loop and with a call in every line: traced lines per second,
  and what a divergent step costs at the default ``line_budget`` (issue 35 asks under a
  second). A line that calls C code for long (``sorted`` of a big list) is one line
  however long it takes: ``step_timeout`` bounds those steps, not the budget.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import goal, interleaved, median_time  # noqa: E402

from agentic_machines import agent_machine  # noqa: E402
from agentic_machines.execution.budget import LineBudget  # noqa: E402
from agentic_machines.runtime.agent import DEFAULT_LINE_BUDGET  # noqa: E402

N = 100_000


def lines(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
        if total < 0:
            total = 0
    return total


def _step(x: int) -> int:
    return x + 1


def calls(n: int) -> int:
    total = 0
    for _ in range(n):
        total = _step(total)
    return total


def spin_lines(model):
    model("start?")
    total = 0
    while True:
        total += 1
        if total < 0:
            total = 0


def spin_calls(model):
    model("start?")
    total = 0
    while True:
        total = _step(total)


DIVERGE_LINES = 200_000  # the budget of the timed divergent steps


def lines_per_second(agent) -> float:
    """Traced lines per second of a divergent step in a worker, median of 5 (a fresh
    machine each: a machine keeps the outcomes it made)."""
    seconds = []
    for _ in range(5):
        machine = agent_machine(agent, line_budget=DIVERGE_LINES)
        took, _ = median_time(lambda m=machine: m.harness(m.initial, "go"), runs=1)
        seconds.append(took)
    return DIVERGE_LINES / sorted(seconds)[2]


def under(budgets: int, fn, n: int):
    def go() -> None:
        with LineBudget(10**9):
            if budgets == 2:
                with LineBudget(10**9):
                    fn(n)
            else:
                fn(n)

    return go


def main() -> None:
    print(f"{'loop':<6} {'bare s':>8} {'1 budget':>9} {'2 budgets':>10}")
    rows = []
    for fn in (lines, calls):
        (bare, _), (one, _), (two, _) = interleaved(
            [lambda: fn(N), under(1, fn, N), under(2, fn, N)], 7
        )
        print(f"{fn.__name__:<6} {bare:8.4f} {one / bare:8.1f}x {two / bare:9.1f}x")
        rows.append((fn.__name__, one / bare, two / bare))
    print("ratio = time under the budget(s) / the same loop untraced (alternating, median of 7)")
    for name, one, two in rows:
        goal(f"{name}: one LineBudget ÷ untraced", one, None)
        goal(f"{name}: two nested LineBudgets ÷ untraced", two, None)
    for agent in (spin_lines, spin_calls):
        rate = lines_per_second(agent)
        print(
            f"divergent step, {agent.__name__}, in a worker: {rate:,.0f} lines/s; at the "
            f"default budget ({DEFAULT_LINE_BUDGET:,} lines) {DEFAULT_LINE_BUDGET / rate:.2f} s"
        )
        goal(
            f"a divergent step at the default line budget, {agent.__name__}",
            DEFAULT_LINE_BUDGET / rate,
            1,
            unit=" s",
        )


if __name__ == "__main__":
    main()
