"""The one timing helper of the benchmarks: medians, alternating pairs, and goal rows.

Every benchmark compares the toolkit with the simplest honest computation of the same
result, timed in the same process right beside it, so the ratio survives a busy machine
(the machine these run on is shared with other developers' test runs; absolute times
drift, ratios much less). Rules every benchmark follows through this module:

- a time is the **median** of ``runs`` calls (never the minimum: the minimum rewards the
  one lucky run, the median is what a user sees);
- when two or more things are compared they run **alternately**, and the order of each
  round rotates, so a burst of load or a warm cache never lands on one side only; the
  ratio is the median of the per-round ratios;
- the cyclic garbage collector runs before each timed call, outside the timing, so one
  side does not pay for the other's garbage;
- the clock is wall time (``time.perf_counter``) unless a benchmark asks for ``cpu=True``:
  the CPU time of this process, user and system (``time.process_time``). A single-threaded
  measure of a few milliseconds on a machine with more runnable processes than cores is
  mostly the scheduler's doing in wall time (a longer call is preempted more often, so the
  slower side looks slower still); its CPU time is what the code cost. System time counts
  the kernel's share of a ``write``; a parallel speed-up needs wall time.
- each benchmark prints its goals with :func:`goal`, one ``goal | ...`` row each, which
  ``benchmarks/run_all.py`` collects into the table of ``docs/scaling.md``.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

RUNS = 5
# The marker and separator of a goal row; run_all.py parses rows by them.
GOAL_MARK = "goal"
SEP = " | "


def _timed(
    fn: Callable[[], Any], clock: Callable[[], float] = time.perf_counter
) -> tuple[float, Any]:
    gc.collect()
    t0 = clock()
    result = fn()
    return clock() - t0, result


def _clock(cpu: bool) -> Callable[[], float]:
    return time.process_time if cpu else time.perf_counter


def median_time(fn: Callable[[], Any], runs: int = RUNS, *, cpu: bool = False) -> tuple[float, Any]:
    """(median seconds over ``runs`` calls of ``fn``, the last result).

    >>> seconds, value = median_time(lambda: sum(range(10)), runs=3)
    >>> value, seconds >= 0
    (45, True)
    """
    (times,), (result,) = rounds([fn], runs, cpu=cpu)
    return statistics.median(times), result


def rounds(
    fns: Sequence[Callable[[], Any]], runs: int = RUNS, *, cpu: bool = False
) -> tuple[list[list[float]], list[Any]]:
    """Time several functions alternately: (each one's seconds per round, last results).

    Round r runs them starting at function r mod len(fns), so each goes first as often
    as the others. A benchmark that combines several times per round (a difference, then
    a ratio) takes the median of the per-round values; :func:`interleaved` gives medians.

    >>> times, results = rounds([lambda: 1, lambda: 2], runs=3, cpu=True)
    >>> results, [len(t) for t in times]
    ([1, 2], [3, 3])
    """
    if not fns:
        raise ValueError("rounds needs at least one function to time")
    clock = _clock(cpu)
    times: list[list[float]] = [[] for _ in fns]
    results: list[Any] = [None] * len(fns)
    for r in range(runs):
        for k in range(len(fns)):
            i = (r + k) % len(fns)
            t, results[i] = _timed(fns[i], clock)
            times[i].append(t)
    return times, results


def interleaved(
    fns: Sequence[Callable[[], Any]], runs: int = RUNS, *, cpu: bool = False
) -> list[tuple[float, Any]]:
    """Time several functions alternately: [(median seconds, last result)] in their order
    (:func:`rounds`, then the median of each one's times).

    >>> [value for _, value in interleaved([lambda: 1, lambda: 2], runs=3)]
    [1, 2]
    """
    times, results = rounds(fns, runs, cpu=cpu)
    return [(statistics.median(t), res) for t, res in zip(times, results)]


def paired(
    fn: Callable[[], Any], base: Callable[[], Any], runs: int = RUNS, *, cpu: bool = False
) -> tuple[float, float, float, tuple[Any, Any]]:
    """Time ``fn`` against ``base``, alternately: (fn s, base s, ratio, (fn's, base's result)).

    Even rounds run ``fn`` first, odd rounds ``base`` first (:func:`rounds`); the ratio is
    the median of the per-round ratios fn / base (steadier than a ratio of medians under load).

    >>> fn_s, base_s, ratio, results = paired(lambda: 2, lambda: 1, runs=3)
    >>> results, ratio > 0
    ((2, 1), True)
    """
    (ft, bt), (r_fn, r_base) = rounds([fn, base], runs, cpu=cpu)
    ratios = [f / max(b, 1e-9) for f, b in zip(ft, bt)]
    return statistics.median(ft), statistics.median(bt), statistics.median(ratios), (r_fn, r_base)


def verdict(value: float, target: float, *, at_least: bool = False) -> str:
    """'met' or 'NOT met' for a measured value against its goal (≤ target, or ≥ target).

    >>> verdict(2.5, 3), verdict(3.5, 3), verdict(1.8, 1.6, at_least=True)
    ('met', 'NOT met', 'met')
    """
    ok = value >= target if at_least else value <= target
    return "met" if ok else "NOT met"


def goal(
    measure: str,
    value: float | None,
    target: float | None,
    *,
    at_least: bool = False,
    unit: str = "x",
    digits: int = 2,
) -> str:
    """Print and return one goal row: ``goal | measure | value | goal | verdict``.

    ``target=None`` marks a row measured for information, with no goal (its verdict is
    ``-``); ``value=None`` a row that could not be measured here (its verdict says so).

    >>> _ = goal("fib 20: CEK ÷ plain Python", 338.0, 120, digits=0)
    goal | fib 20: CEK ÷ plain Python | 338x | ≤ 120x | NOT met
    >>> _ = goal("speed-up, 2 processes", 1.84, 1.6, at_least=True)
    goal | speed-up, 2 processes | 1.84x | ≥ 1.6x | met
    >>> _ = goal("run ÷ bare loop", 8.4, None)
    goal | run ÷ bare loop | 8.40x | none (information) | -
    >>> _ = goal("spe_states, |S| = |C| = 2000", 0.4, 1)
    goal | spe_states, |S| = |C| = 2000 | 0.40x | ≤ 1x | met
    """
    # Only the separator itself (a pipe between spaces, or at either end) would split the
    # row wrongly; a pipe inside a word, as in |S| = |C|, parses and is escaped in the table.
    if SEP in f" {measure} ":
        raise ValueError(
            f"a goal's measure may not contain {SEP!r} or start or end with a pipe: {measure!r}"
        )
    shown = "not measured" if value is None else f"{value:.{digits}f}{unit}"
    if target is None:
        wanted, met = "none (information)", "-"
    else:
        wanted = f"{'≥' if at_least else '≤'} {target:g}{unit}"
        met = "not measured" if value is None else verdict(value, target, at_least=at_least)
    row = SEP.join((GOAL_MARK, measure, shown, wanted, met))
    print(row, flush=True)
    return row


def parse_goal(line: str) -> tuple[str, str, str, str] | None:
    """(measure, value, goal, verdict) of a goal row printed by :func:`goal`, else None.

    >>> parse_goal("goal | explore ÷ bare BFS | 2.10x | ≤ 2x | NOT met")
    ('explore ÷ bare BFS', '2.10x', '≤ 2x', 'NOT met')
    >>> parse_goal("goal | spe_states, |S| = |C| | 0.42x | ≤ 1x | met")[0]
    'spe_states, |S| = |C|'
    >>> parse_goal("fib 20 = 6765") is None
    True
    """
    parts = line.rstrip("\n").split(SEP)
    if len(parts) != 5 or parts[0] != GOAL_MARK:
        return None
    return parts[1], parts[2], parts[3], parts[4]


def fitted_exponent(xs: Sequence[float], ys: Sequence[float]) -> float:
    """The slope of log y against log x (least squares): y grows as x to this power.

    >>> round(fitted_exponent([1, 2, 4], [3, 12, 48]), 3)
    2.0
    """
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)
