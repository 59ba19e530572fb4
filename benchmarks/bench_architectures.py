"""Benchmark the architecture machines and the contrast (issue 4).

Run: ``python benchmarks/bench_architectures.py``. Reports, per architecture:

- the cost of a linear run of its scripted solution through the machine (``run()`` on
  the HarnessMachine, with its line budget) as a ratio to driving the same harness
  generator by hand in the same process (the baseline: no machine, no budget);
- the time of ``analysis()`` and how many completions or states it checked;

and the time of the whole contrast table and of the demo's contrast section (goal: the
whole ``agentic-machines demo`` under a minute on two cores).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentic_machines.architectures import ARCHITECTURES  # noqa: E402
from agentic_machines.cli.contrast import contrast_rows  # noqa: E402
from agentic_machines.runtime.run import run  # noqa: E402

REPEAT = 20


def best(fn, repeat: int = REPEAT) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def scripted(module):
    # RLM and REPL-Plan run the scripted code inline, asked for by name (bench_isolation.py
    # measures the isolated levels)
    if module.__name__.endswith((".rlm", ".repl_plan")):
        return module.machine(isolation="inline")
    return module.machine()


def by_hand(module) -> None:
    machine = scripted(module)
    gen = machine.program(*machine.args, **machine.kwargs)
    try:
        next(gen)
        for c in module.SCRIPT:
            gen.send(c)
    except StopIteration:
        return


def main() -> int:
    print(
        f"{'architecture':<12} {'run (ms)':>9} {'by hand (ms)':>13} {'ratio':>6} {'analysis (s)':>13}  checked"
    )
    for name, module in ARCHITECTURES.items():
        through_machine = best(lambda: run(scripted(module), module.scripted_model()))
        hand = best(lambda: by_hand(module)) if hasattr(scripted(module), "program") else None
        t = time.perf_counter()
        v = module.analysis()
        analysis = time.perf_counter() - t
        ratio = f"{through_machine / hand:6.1f}" if hand else "     -"
        hand_text = f"{hand * 1e3:13.2f}" if hand else f"{'-':>13}"
        print(
            f"{name:<12} {through_machine * 1e3:9.2f} {hand_text} {ratio} {analysis:13.2f}  {v.checked} ({v.method})"
        )
    t = time.perf_counter()
    rows = contrast_rows()
    print(f"\ncontrast_rows(): {len(rows)} rows in {time.perf_counter() - t:.2f} s")
    from agentic_machines.cli.demo import contrast as contrast_section

    with tempfile.TemporaryDirectory() as out:
        import io

        t = time.perf_counter()
        contrast_section(Path(out), io.StringIO())
        print(
            f"demo contrast section (table + one diagram per architecture): {time.perf_counter() - t:.2f} s (goal: the whole demo < 60 s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
