"""Harness calls in batches on an executor, merged in order: the one mechanism behind
every ``executor=`` of the toolkit (exploration, property checks, sampled verdicts).

A harness call of a real agent can take seconds; a list of independent calls (the
successors of a state, the commutation checks of a sample) can then run on a process
pool or a Dask cluster. The calls are cut into batches, one task each, and the results
come back in the order of the calls, so that a check that scans them stops at the same
first failure as the serial loop and returns the same verdict.

>>> from concurrent.futures import ThreadPoolExecutor
>>> from agentic_machines.fixtures import fixture
>>> m = fixture("f2-mul")
>>> with ThreadPoolExecutor(2) as pool:
...     harness_all(m, [(0, "0"), (0, "1"), (1, "1")], pool, batch_size=1)
[0, 0, 1]
"""

from __future__ import annotations

import math
import os
import pickle
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any

from .errors import InvalidArgument

__all__ = ["harness_all", "harness_pairs", "run_batches", "check_sendable", "TASKS_PER_WORKER"]

TASKS_PER_WORKER = 4
"""Default batching: about this many tasks per worker (load balance against task cost)."""


def harness_all(
    machine: Any,
    pairs: Sequence[tuple[Any, str]],
    executor: Executor | None = None,
    *,
    batch_size: int | None = None,
    what: str = "a sampled check",
) -> list[Any]:
    """``[machine.harness(s, c) for s, c in pairs]``, on ``executor`` when one is given.

    >>> from agentic_machines.fixtures import fixture
    >>> harness_all(fixture("halt1"), [(0, "0")])
    [1]
    """
    if executor is None:
        h = machine.harness
        return [h(s, c) for s, c in pairs]
    check_sendable(executor, what, machine=machine)
    return run_batches(executor, _harness_batch, list(pairs), batch_size, machine)


def _harness_batch(machine: Any, pairs: Sequence[tuple[Any, str]]) -> list[Any]:
    h = machine.harness
    return [h(s, c) for s, c in pairs]


def harness_pairs(
    first: Any,
    second: Any,
    calls: Sequence[tuple[Any, Any, str]],
    executor: Executor | None = None,
    *,
    what: str = "a sampled check",
) -> Iterator[tuple[Any, Any]]:
    """``(first.harness(a, c), second.harness(b, c))`` for each ``(a, b, c)`` of ``calls``,
    in order: lazily without ``executor``, else computed in batches on it and given back
    in order, each exception raised where the serial loop meets it (first's before
    second's), so a scan that stops at a failure stops at the same one either way.

    >>> from agentic_machines.fixtures import fixture
    >>> m = fixture("f2-mul")
    >>> with ThreadPoolExecutor(2) as pool:
    ...     list(harness_pairs(m, m, [(0, 1, "1"), (1, 1, "1")], pool))
    [(0, 1), (1, 1)]
    """
    if executor is None:
        for a, b, c in calls:
            yield first.harness(a, c), second.harness(b, c)
        return
    check_sendable(executor, what, machine=first, target=second)
    for row in run_batches(executor, _pairs_batch, list(calls), None, first, second):
        if type(row) is _Raised:
            raise row.exc
        yield row


class _Raised:
    """An exception a harness call of a batch raised, kept in its place in the results."""

    __slots__ = ("exc",)

    def __init__(self, exc: Exception) -> None:
        self.exc = exc


def _pairs_batch(first: Any, second: Any, calls: Sequence[tuple[Any, Any, str]]) -> list[Any]:
    out: list[Any] = []
    for a, b, c in calls:
        try:
            out.append((first.harness(a, c), second.harness(b, c)))
        except Exception as exc:  # noqa: BLE001 - raised by the scan, where the serial loop would
            out.append(_Raised(exc))
    return out


def run_batches(
    executor: Executor,
    fn: Callable[..., list[Any]],
    items: Sequence[Any],
    batch_size: int | None,
    *args: Any,
) -> list[Any]:
    """``fn(*args, batch)`` over ``items`` cut in batches, results concatenated in order.

    >>> with ThreadPoolExecutor(2) as pool:
    ...     run_batches(pool, lambda k, xs: [k * x for x in xs], [1, 2, 3], 2, 10)
    [10, 20, 30]
    """
    if not items:
        return []
    size = batch_size or _default_batch(executor, len(items))
    futures = [executor.submit(fn, *args, items[i : i + size]) for i in range(0, len(items), size)]
    results: list[Any] = []
    for f in futures:  # in submission order: the merge is deterministic
        results.extend(f.result())
    return results


def _default_batch(executor: Executor, n: int) -> int:
    workers = getattr(executor, "_max_workers", None) or os.cpu_count() or 1
    return max(1, math.ceil(n / (TASKS_PER_WORKER * workers)))


def check_sendable(executor: Executor, what: str, **objects: Any) -> None:
    """Refuse, with a clear error, objects an executor's workers cannot receive.

    A thread pool shares this process's objects; a process pool pickles them; Dask
    pickles with cloudpickle, which also takes lambdas and closures. The error names
    what failed to pickle and what to do instead.

    >>> check_sendable(ThreadPoolExecutor(1), "explore", machine=lambda s: s)
    >>> from concurrent.futures import ProcessPoolExecutor
    >>> check_sendable(ProcessPoolExecutor(1), "explore", machine=lambda s: s)
    Traceback (most recent call last):
    ...
    agentic_machines.errors.InvalidArgument: explore(executor=ProcessPoolExecutor) sends the machine to other processes, and it does not pickle: ...
    """
    if isinstance(executor, ThreadPoolExecutor):
        return
    dumps = pickle.dumps
    if type(executor).__module__.split(".")[0] == "distributed":
        try:
            import cloudpickle  # Dask's own serializer, installed with it

            dumps = cloudpickle.dumps
        except ImportError:  # pragma: no cover - distributed always brings it
            pass
    for name, obj in objects.items():
        if obj is None:
            continue
        try:
            dumps(obj)
        except Exception as exc:  # pickle raises several types: report any of them
            raise InvalidArgument(
                f"{what}(executor={type(executor).__name__}) sends the {name} to other "
                f"processes, and it does not pickle: {type(exc).__name__}: {exc}. Define its "
                "functions at module level (lambdas and nested functions do not pickle), use "
                "a Dask executor (cloudpickle takes them), a ThreadPoolExecutor, or no executor"
            ) from None
