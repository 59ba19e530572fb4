"""Throughput of ``check_properties`` against ``explore`` on the same machine and bound.

Run: ``python benchmarks/bench_checking.py``. Both run in this process on the same
machine, alphabet and bound; the ratio (check time / explore time) is what matters.
Goal (issue 13): at most 1.5x explore's cost with three properties.

The three properties are the common ones: ``halts_within(k)`` (liveness, decided on
the explored graph; on the two machines with cycles or a depth bound, where it cannot
hold, an ``unreachable`` invariant instead), ``never_raises()`` (every step) and
``prompt_length_at_most(n)`` (every state), with bounds the machines satisfy, so the
search is never cut short by a counterexample. Machines:

- ``harness``: a generator harness (``HarnessMachine``, as the architectures and agent
  loops are written), 4 completions, halting after 7 steps: 5 461 states;
- ``function``: a 5 000-state ``FunctionMachine`` with a little arithmetic per step;
- ``react``: the ReAct architecture on a 3-completion alphabet, 6 steps deep.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import goal, paired  # noqa: E402

from agentic_machines import HALT, FunctionMachine, HarnessMachine  # noqa: E402
from agentic_machines.architectures import react  # noqa: E402
from agentic_machines.checking import (  # noqa: E402
    check_properties,
    halts_within,
    never_raises,
    prompt_length_at_most,
    unreachable,
)
from agentic_machines.runtime.explore import explore  # noqa: E402


def harness_machine(steps=7):
    def program():
        seen = []
        while len(seen) < steps:
            c = yield "history: " + " ".join(seen)
            seen.append(c)
        return len(seen)

    return HarnessMachine(program, name="harness"), ["a", "b", "c", "d"], None, 8


def function_machine(n=5_000):
    def harness(s, c):
        v = (s * 31 + int(c) * 17 + len(str(s))) % n
        return HALT if v == 0 else v

    m = FunctionMachine(lambda s: f"state {s}", harness, initial=1, name="modular")
    return m, [str(d) for d in range(1, 7)], None, None


def react_machine():
    def alphabet(prompt):
        k = react.step_label(prompt) or 1
        return [f" Look.\nAction {k}: Search[Paris]", " hmm", f" Done.\nAction {k}: Finish[Seine]"]

    return react.machine(), alphabet, 6, None


def _read(graph):
    graph.number_of_edges()
    return graph


def main() -> None:
    print(
        f"{'machine':<10} {'states':>7} {'explore s':>10} {'check s':>9} {'ratio':>6} {'check states/s':>15}"
    )
    rows = []
    for build in (harness_machine, function_machine, react_machine):
        machine, alphabet, depth, k = build()
        props = [
            halts_within(k) if k is not None else unreachable(lambda s: False, name="nothing"),
            never_raises(),
            prompt_length_at_most(10**6),
        ]
        # explore's graph may be built on first read: reading it is part of explore's time
        t_check, t_explore, ratio, (result, _) = paired(
            lambda: check_properties(
                machine,
                properties=props,
                completions=alphabet,
                max_depth=depth,
                max_states=None,
                progress=False,
            ),
            lambda: _read(
                explore(
                    machine, completions=alphabet, max_depth=depth, max_states=None, progress=False
                )
            ),
            3,
        )
        assert result.status == "holds", result.report()
        states = result.coverage.states
        print(
            f"{machine.name:<10} {states:>7} {t_explore:>10.3f} {t_check:>9.3f} "
            f"{ratio:>6.2f} {states / t_check:>15,.0f}"
        )
        rows.append((machine.name, ratio))
    print(
        "ratio = check_properties time / explore time, same machine, alphabet and bound "
        "(alternating, median of 3)"
    )
    for name, ratio in rows:
        goal(f"{name}: check_properties (3 properties) ÷ explore", ratio, 1.5)


if __name__ == "__main__":
    main()
