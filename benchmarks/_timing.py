"""Shared timing helpers for the benchmarks: the median of several runs, and a ratio row.

Every benchmark compares the toolkit with the simplest honest computation of the same
result, timed in the same process right beside it, so the ratio survives a busy machine
(the machine these run on is shared with other test runs; absolute times drift, ratios
much less).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

RUNS = 5


def median_time(fn: Callable[[], Any], runs: int = RUNS) -> tuple[float, Any]:
    """(median seconds over ``runs`` calls of ``fn``, the last result)."""
    times, result = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def paired(fn: Callable[[], Any], base: Callable[[], Any], runs: int = RUNS):
    """Time ``fn`` and ``base`` alternately ``runs`` times: (fn s, base s, ratio, results).

    Alternating the two keeps a burst of load from landing on one side only; the ratio
    is the median of the per-pair ratios.
    """
    ft, bt, ratios = [], [], []
    r_fn = r_base = None
    for _ in range(runs):
        t0 = time.perf_counter()
        r_fn = fn()
        t1 = time.perf_counter()
        r_base = base()
        t2 = time.perf_counter()
        ft.append(t1 - t0)
        bt.append(t2 - t1)
        ratios.append((t1 - t0) / max(t2 - t1, 1e-9))
    return (
        statistics.median(ft),
        statistics.median(bt),
        statistics.median(ratios),
        (r_fn, r_base),
    )


def verdict(ratio: float, goal: float, *, at_least: bool = False) -> str:
    """'met' or 'NOT met' for a ratio against its goal (≤ goal, or ≥ goal)."""
    ok = ratio >= goal if at_least else ratio <= goal
    return "met" if ok else "NOT met"
