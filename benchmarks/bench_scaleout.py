"""Speed-up of ``explore(executor=...)`` over the serial search, and its overhead.

Run: ``python benchmarks/bench_scaleout.py``. All runs happen in this process (the
workers are child processes); ratios are what matter.

- ``expensive``: a 2 047-state binary tree whose harness costs about 5 ms of pure-Python
  computation per call (a stand-in for a model call, a sandboxed block or an SDK agent
  step; computation rather than sleep, so that the two workers really compete for the
  two cores). Explored serially, with a ``ProcessPoolExecutor(2)`` and with a Dask
  ``LocalCluster(n_workers=2, processes=True)``. Goal: speed-up >= 1.6x for both.
  Each configuration runs 3 times (a run takes seconds; the median is reported).
- ``cheap``: the 20 000-state, 8-completion random table machine of bench_explore
  (a harness call is one dict lookup). Here sending tasks costs far more than the
  calls: the ratio shows why ``--workers`` is never the default, and is the overhead a
  user pays for choosing it on such a machine.
"""

from __future__ import annotations

import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import goal, interleaved, median_time  # noqa: E402
from bench_explore import table_machine  # noqa: E402

from agentic_machines import HALT, FunctionMachine  # noqa: E402
from agentic_machines.runtime.explore import explore  # noqa: E402

N_STATES = 2_047
CALL_SECONDS = 0.005


def _calibrate() -> int:
    """Loop iterations of :func:`_work` that take about ``CALL_SECONDS`` here."""
    n = 10_000
    while True:
        took, _ = median_time(lambda: _work(0, n), runs=3)
        if took > 0.02:
            return max(1, int(n * CALL_SECONDS / took))
        n *= 2


def _work(seed: int, n: int) -> int:
    acc = seed
    for i in range(n):
        acc = (acc * 1_103_515_245 + i) % 2_147_483_648
    return acc


class Tree:
    """A picklable machine (module-level functions): a binary tree of N_STATES states."""

    def __init__(self, iterations: int) -> None:
        self.iterations = iterations

    def prompt(self, s: int) -> str:
        return f"node {s}"

    def harness(self, s: int, c: str) -> object:
        _work(s, self.iterations)  # the expensive part: what a real harness call costs
        t = 2 * s + (1 if c == "a" else 2)
        return t if t < N_STATES else HALT


def expensive_machine(iterations: int) -> FunctionMachine:
    tree = Tree(iterations)
    return FunctionMachine(
        tree.prompt, tree.harness, initial=0, completions=["a", "b"], name="tree"
    )


def main() -> None:
    import distributed

    iterations = _calibrate()
    machine = expensive_machine(iterations)
    cheap, comps = table_machine()
    with (
        ProcessPoolExecutor(2) as pool,
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        dask = client.get_executor()
        serial_graph = explore(machine, progress=False)
        for ex in (pool, dask):  # warm the workers up, and check the result once
            g = explore(machine, progress=False, executor=ex)
            assert list(g.edges(data=True)) == list(serial_graph.edges(data=True))
        calls = serial_graph.graph["stats"]["transitions"]
        (serial, _), (procs, _), (dasks, _) = interleaved(
            [
                lambda: explore(machine, progress=False),
                lambda: explore(machine, progress=False, executor=pool),
                lambda: explore(machine, progress=False, executor=dask),
            ],
            3,
        )
        print(
            f"expensive: {N_STATES} states, {calls} harness calls of ~{CALL_SECONDS * 1000:.0f} ms "
            f"(calibrated: {iterations} iterations)"
        )
        print(f"{'executor':<26} {'seconds':>8} {'speed-up':>9}")
        print(f"{'serial':<26} {serial:>8.2f} {1.0:>9.2f}")
        print(f"{'ProcessPoolExecutor(2)':<26} {procs:>8.2f} {serial / procs:>9.2f}")
        print(f"{'Dask LocalCluster(2)':<26} {dasks:>8.2f} {serial / dasks:>9.2f}")
        goal(
            "expensive harness: speed-up, ProcessPoolExecutor(2)",
            serial / procs,
            1.6,
            at_least=True,
        )
        goal(
            "expensive harness: speed-up, Dask LocalCluster(2)", serial / dasks, 1.6, at_least=True
        )
        kw = dict(completions=comps, max_states=None, progress=False)
        (c_serial, _), (c_procs, _), (c_dask, _) = interleaved(
            [
                lambda: explore(cheap, **kw),
                lambda: explore(cheap, executor=pool, **kw),
                lambda: explore(cheap, executor=dask, **kw),
            ],
            3,
        )
        print()
        print(f"cheap: {cheap.name}, 20 000 states x 8 completions, a dict lookup per call")
        print(f"{'executor':<26} {'seconds':>8} {'slow-down':>9}")
        print(f"{'serial':<26} {c_serial:>8.2f} {1.0:>9.2f}")
        print(f"{'ProcessPoolExecutor(2)':<26} {c_procs:>8.2f} {c_procs / c_serial:>9.2f}")
        print(f"{'Dask LocalCluster(2)':<26} {c_dask:>8.2f} {c_dask / c_serial:>9.2f}")
        print("a cheap harness: tasks cost more than the calls they carry; keep executor=None")
        goal("cheap harness: ProcessPoolExecutor(2) ÷ serial", c_procs / c_serial, None)


if __name__ == "__main__":
    main()
