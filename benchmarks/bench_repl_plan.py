"""Benchmark REPL-Plan and the shared code-execution machinery (issue 6, issue 4 item 2).

Run: ``python benchmarks/bench_repl_plan.py``. Reports ratios against baselines run in
the same process:

- ``run_block`` on a pure loop block vs a bare ``exec`` of the same code (the cost of the
  line budget, the AST rewrite and the capture);
- a block with k interrupts (k child calls, so k + 1 attempts) vs the same block with
  none (the cost of rerunning with cached calls grows with k);
- ``solve`` of each example vs the same episode driven through ``run(machine(...))``;
- ``analysis()`` time and the number of completions it checked;
- issue 25: the traced lines a replayed cached call costs (goal ≤ 10: the block's
  own line; the call log's bookkeeping is uncharged), and the count-to-N curve: the
  count-to-four episode with N = 4 … 256 (main hands each even number to the child
  REPL, so main's block is rerun N/2 times with its earlier calls cached), with the
  growth exponent fitted to time and to the number of cached calls replayed.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import count_to_four  # noqa: E402
import household  # noqa: E402
import shop  # noqa: E402
from _timing import fitted_exponent, goal, median_time, paired  # noqa: E402

from agentic_machines.architectures import repl_plan as rp  # noqa: E402
from agentic_machines.architectures.environments import CountEnv  # noqa: E402
from agentic_machines.execution.budget import LineBudget  # noqa: E402
from agentic_machines.execution.codeexec import (  # noqa: E402
    Namespace,
    drive,
    iter_result,
    request_function,
    run_block,
)
from agentic_machines.runtime.run import run  # noqa: E402

LOOP = "s = 0\nfor i in range(2000):\n    s += i * i\n"


def bare_exec() -> None:
    exec(compile(LOOP, "<b>", "exec"), {})


def managed_exec() -> None:
    drive(run_block(LOOP, Namespace(), line_budget=100_000), str)


def interrupts(k: int):
    code = LOOP + "".join(f"v{j} = ask({j})\n" for j in range(k))

    def go() -> None:
        drive(
            run_block(
                code,
                Namespace({"ask": request_function("ask")}),
                line_budget=1_000_000,
                handle=lambda r: iter_result(r.args[0]),
            ),
            str,
        )

    return go


def block_lines(k: int) -> int:
    """Lines the harness-side budget counts for a block of ``k`` requests (k + 1 attempts)."""
    code = "".join(f"v{j} = ask({j})\n" for j in range(k))
    with LineBudget(10**9) as outer:
        drive(
            run_block(
                code,
                Namespace({"ask": request_function("ask")}),
                line_budget=10**8,
                handle=lambda r: iter_result(r.args[0]),
            ),
            str,
        )
    return outer.used


def cached_call_lines() -> float:
    """Traced lines per replayed cached call: the second difference of block_lines.

    Attempt i of a k-request block replays i cached calls, so the lines of the whole
    block grow by (per-attempt cost) + i × (per cached call); the second difference in
    k is the cost of one cached call (the block's own line included).
    """
    lines = [block_lines(k) for k in range(10)]
    seconds = [lines[i + 1] - 2 * lines[i] + lines[i - 1] for i in range(2, 9)]
    return sorted(seconds)[len(seconds) // 2]


def count_to(n: int):
    """REPL-Plan's count-to-four with N = n: (task, scripted model, environment)."""
    main_block = (
        f"for i in range(1, {n + 1}):\n    if i % 2:\n        act(str(i))\n    else:\n"
        "        count_even(i)"
    )
    child = rp.COUNT_BLOCKS["count_even"][0]
    model = rp.scripted_model(
        {rp.MAIN: [main_block], "count_even": [child] * (n // 2)}, rp.COUNT_DESCRIPTIONS
    )
    task = f"Count from 1 to {n}: say each number with act(str(n)), in order. Hand even numbers to a helper."
    return task, model, CountEnv(n)


def count_to_n_curve() -> None:
    print("count-to-N (REPL-Plan solve, inline; median of 3):")
    print(f"  {'N':>4} {'seconds':>9} {'ms per N':>9} {'model calls':>12} {'cached calls':>13}")
    ns, times, cached = [], [], []
    for n in (4, 8, 16, 32, 64, 128, 256):

        def episode(n=n):
            task, model, env = count_to(n)
            return rp.solve(task, model, env, pool={}, max_model_calls=n + 8)

        seconds, result = median_time(episode, 3)
        assert result.success, (n, result.status)
        # main's calls alternate act(odd), count_even(even); attempt j (j = 1 … N/2 + 1)
        # replays the 2(j - 1) calls logged before the child call that interrupted it
        replays = (n // 2) * (n // 2 + 1)
        ns.append(n)
        times.append(seconds)
        cached.append(replays)
        print(
            f"  {n:>4} {seconds:>9.3f} {seconds / n * 1e3:>9.2f} {result.model_calls:>12} {replays:>13}"
        )
    t_exp, c_exp = fitted_exponent(ns, times), fitted_exponent(ns, cached)
    print(f"  fitted growth: time ~ N^{t_exp:.2f}; cached calls replayed ~ N^{c_exp:.2f}")
    goal("REPL-Plan count-to-N (N = 4…256): time grows as N to the power", t_exp, None, unit="")


def main() -> None:
    managed, base, r, _ = paired(managed_exec, bare_exec, 11)
    print(
        f"run_block / bare exec, pure 2000-iteration loop: {r:6.1f}x  (baseline {base * 1e3:.2f} ms)"
    )
    goal("run_block ÷ bare exec, pure 2000-iteration loop", r, None)
    for k in (1, 4, 16):
        _, _, r, _ = paired(interrupts(k), interrupts(0), 11)
        print(f"block with {k:2d} interrupt(s) / with none:           {r:6.1f}x")
        goal(f"block with {k} interrupt(s) ÷ with none", r, None)
    for ex in (count_to_four, household, shop):
        mach, solo, r, _ = paired(
            lambda: run(
                rp.machine(ex.TASK, ex.env(), pool=ex.POOL, isolation="inline"), ex.model()
            ),
            lambda: rp.solve(ex.TASK, ex.model(), ex.env(), pool=ex.POOL),
            11,
        )
        name = ex.__name__
        print(f"{name:14s} run(machine) / solve: {r:6.1f}x  (solve {solo * 1e3:.1f} ms)")
        goal(f"{name}: run(machine) ÷ solve", r, None)
    seconds, v = median_time(rp.analysis, 1)
    print(f"analysis(): {seconds:.2f} s, {v.checked} completions, {v.status}")
    per_call = cached_call_lines()
    print(f"traced lines per replayed cached call: {per_call}")
    goal("REPL-Plan: traced lines per replayed cached call", per_call, 10, unit=" lines", digits=0)
    count_to_n_curve()


if __name__ == "__main__":
    main()
