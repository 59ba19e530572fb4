"""Benchmark the cost of isolation (issue 11): process and namespace against inline.

Run: ``python benchmarks/bench_isolation.py``. In one process, for the count-to-four and
shop examples of REPL-Plan:

- per episode: ``solve`` under each level, worker start included (the worker starts at the
  first block and stops at the end of the episode), as a ratio to ``inline``;
- per block: one block run again and again in a live executor (the worker already
  started), as a ratio to the same block ``inline``: the cost of the messages (the block,
  each ``act`` as an effect round trip, the result);
- the worker start alone (a new executor's first, empty block);
- the strongest level against ``process`` (issue 23): the walls of ``namespace`` (a user
  namespace without nested ones, the seccomp filter, tmpfs mounts, the control group, the
  end of a block's processes) cost at worker start and per block, timed alternately with
  ``process`` in the same executor set-up, for each namespace tool that works here. A
  block that starts a child process is timed too: the worker then looks for descendants
  in ``/proc`` and ends them when the block ends.

Each time is the median of several runs (``benchmarks/_timing.py``; the machine is shared).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import count_to_four  # noqa: E402
import shop  # noqa: E402
from _timing import goal, median_time, paired  # noqa: E402

from agentic_machines.architectures import repl_plan as rp  # noqa: E402
from agentic_machines.architectures.environments import CountEnv  # noqa: E402
from agentic_machines.execution.codeexec import drive  # noqa: E402
from agentic_machines.execution.doctor import examine  # noqa: E402
from agentic_machines.execution.sandbox import (  # noqa: E402
    Limits,
    ProcessRunner,
    Scaffold,
    make_runner,
    namespace_tool,
)

LEVELS = ["inline", "process"] + (["namespace"] if namespace_tool() else [])

# a count-to-four child block, and a shop-like block (a loop over text with two effects)
BLOCKS = {
    "count_to_four": "n = 2\nact(str(n))",
    "shop": (
        "import re\nobs = get_obs()\nwords = re.findall(r'[a-z]+', obs.lower() * 20)\n"
        "best = max(set(words), key=words.count)\nact('search[' + best + ']')"
    ),
}


def per_block(level: str, code: str, n: int = 50) -> float:
    env = CountEnv(10**6)
    ex = make_runner(level, timeout_s=30)
    ex.namespace(
        "m", Scaffold(effects=("act", "get_obs")), {"act": env.step, "get_obs": env.observation}
    )
    drive(ex.run_block("m", "pass"), str)  # start the worker outside the measurement

    def blocks():
        for _ in range(n):
            drive(ex.run_block("m", code), str)

    seconds = median_time(blocks, 3)[0] / n
    ex.close()
    return seconds


def worker_start(level: str) -> float:
    def start():
        ex = make_runner(level, timeout_s=30)
        ex.namespace("m", Scaffold())
        drive(ex.run_block("m", "pass"), str)
        ex.close()

    return median_time(start)[0]


def per_episode(example, level: str) -> float:
    return median_time(
        lambda: rp.solve(
            example.TASK, example.model(), example.env(), pool=example.POOL, isolation=level
        )
    )[0]


CHILD = (
    "import operator\nw = [c for c in operator.methodcaller('__subclasses__')(object) "
    "if c.__name__ == '_wrap_close'][0]\nos_ = operator.attrgetter('__init__.__globals__')(w)\n"
    "os_['system']('sleep 5 &')"
)


def _executor(level: str, tool: str | None) -> ProcessRunner:
    ex = ProcessRunner(level, Limits(timeout_s=30), tool=tool)
    ex.namespace("m", Scaffold(effects=("act",)), {"act": CountEnv(10**6).step})
    return ex


def strongest_against_process() -> None:
    """Worker start and per-block cost of each namespace tool ÷ ``process``, alternately."""
    working = {row.check for row in examine().rows if row.ok}
    tools = [t for t in ("bwrap", "unshare") if f"{t} found and working" in working]
    print(f"\nstrongest against process (namespace tools that work here: {tools})")

    def start(tool: str | None) -> None:
        ex = _executor("namespace" if tool else "process", tool)
        drive(ex.run_block("m", "pass"), str)
        ex.close()

    for tool in tools:
        ns_s, pr_s, ratio, _ = paired(lambda t=tool: start(t), lambda: start(None), runs=7)
        print(
            f"  worker start: namespace ({tool}) {ns_s * 1e3:6.1f} ms | process "
            f"{pr_s * 1e3:6.1f} ms ({ratio:.1f}x)"
        )
        goal(f"worker start: namespace ({tool}) ÷ process", ratio, None)
    for name, code, n in (
        ("count_to_four block", BLOCKS["count_to_four"], 50),
        ("block starting a child", CHILD, 10),
    ):
        for tool in tools:
            ns, pr = _executor("namespace", tool), _executor("process", None)
            for ex in (ns, pr):
                drive(ex.run_block("m", "pass"), str)  # started outside the measurement

            def blocks(ex: ProcessRunner) -> None:
                for _ in range(n):
                    drive(ex.run_block("m", code), str)

            ns_s, pr_s, ratio, _ = paired(lambda: blocks(ns), lambda: blocks(pr), runs=5)
            ns.close()
            pr.close()
            print(
                f"  {name}: namespace ({tool}) {ns_s / n * 1e6:8.0f} us | process "
                f"{pr_s / n * 1e6:8.0f} us ({ratio:.2f}x)"
            )
            goal(f"{name}: namespace ({tool}) ÷ process, per block", ratio, None)


def main() -> None:
    print(f"levels: {', '.join(LEVELS)} (namespace tool: {namespace_tool()})")
    strongest_against_process()
    for level in LEVELS[1:]:
        print(f"worker start ({level}): {worker_start(level) * 1000:.1f} ms")
    for name, example in (("count_to_four", count_to_four), ("shop", shop)):
        blocks = {level: per_block(level, BLOCKS[name]) for level in LEVELS}
        episodes = {level: per_episode(example, level) for level in LEVELS}
        print(f"\n{name}")
        print(f"  per block:   inline {blocks['inline'] * 1e6:8.0f} us", end="")
        for level in LEVELS[1:]:
            ratio = blocks[level] / blocks["inline"]
            print(f" | {level} {blocks[level] * 1e6:8.0f} us ({ratio:.1f}x)", end="")
        print()
        print(f"  per episode: inline {episodes['inline'] * 1e3:8.1f} ms", end="")
        for level in LEVELS[1:]:
            ratio = episodes[level] / episodes["inline"]
            print(f" | {level} {episodes[level] * 1e3:8.1f} ms ({ratio:.1f}x)", end="")
        print()
        for level in LEVELS[1:]:
            goal(f"{name}: {level} ÷ inline, per block", blocks[level] / blocks["inline"], None)
            goal(
                f"{name}: {level} ÷ inline, per episode", episodes[level] / episodes["inline"], None
            )


if __name__ == "__main__":
    main()
