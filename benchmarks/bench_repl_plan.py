"""Benchmark REPL-Plan and the shared code-execution machinery (issue 6, issue 4 item 2).

Run: ``python benchmarks/bench_repl_plan.py``. Reports ratios against baselines run in
the same process:

- ``run_block`` on a pure loop block vs a bare ``exec`` of the same code (the cost of the
  line budget, the AST rewrite and the capture);
- a block with k interrupts (k child calls, so k + 1 attempts) vs the same block with
  none (the cost of rerunning with cached calls grows with k);
- ``solve`` of each example vs the same episode driven through ``run(machine(...))``;
- ``analysis()`` time and the number of completions it checked.
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
from _timing import goal, median_time, paired  # noqa: E402

from agentic_machines.architectures import repl_plan as rp  # noqa: E402
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


if __name__ == "__main__":
    main()
