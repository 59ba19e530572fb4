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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import goal, median_time, paired  # noqa: E402

from agentic_machines.architectures import ARCHITECTURES  # noqa: E402
from agentic_machines.drawing.contrast import contrast_rows  # noqa: E402
from agentic_machines.runtime.run import run  # noqa: E402

REPEAT = 11


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
    ratios = []
    for name, module in ARCHITECTURES.items():

        def through():
            return run(scripted(module), module.scripted_model())

        if hasattr(scripted(module), "program"):
            through_machine, hand, r, _ = paired(through, lambda: by_hand(module), REPEAT)
        else:
            (through_machine, _), hand = median_time(through, REPEAT), None
        analysis, v = median_time(module.analysis, 1)
        ratio = f"{r:6.1f}" if hand else "     -"
        hand_text = f"{hand * 1e3:13.2f}" if hand else f"{'-':>13}"
        print(
            f"{name:<12} {through_machine * 1e3:9.2f} {hand_text} {ratio} {analysis:13.2f}  {v.checked} ({v.method})"
        )
        if hand:
            ratios.append((name, r))
    for name, r in ratios:
        goal(f"{name}: run(machine) ÷ the harness driven by hand", r, None)
    seconds, rows = median_time(contrast_rows, 1)
    print(f"\ncontrast_rows(): {len(rows)} rows in {seconds:.2f} s")
    from agentic_machines.cli.demo import contrast as contrast_section

    with tempfile.TemporaryDirectory() as out:
        import io

        seconds, _ = median_time(lambda: contrast_section(Path(out), io.StringIO()), 1)
        print(f"demo contrast section (table + one diagram per architecture): {seconds:.2f} s")
        goal("demo contrast section, seconds (the whole demo < 60 s)", seconds, 60, unit=" s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
