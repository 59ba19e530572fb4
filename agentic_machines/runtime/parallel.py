"""Breadth-first search with the harness calls of each level run on an executor.

A breadth-first search expands its states level by level, and the harness calls of one
level are independent of each other: this module cuts a level into batches of states,
runs each batch as one task on any ``concurrent.futures.Executor`` (a process pool, or
Dask's ``Client(...).get_executor()``), and merges the results in the level's order, so
that the states are discovered in exactly the order of the serial search and the graph,
the verdicts and the counterexamples built from it are the same. A task carries many
harness calls, because sending a task costs far more than a cheap harness call: this
pays for harnesses that take milliseconds (a real model, a sandboxed code block, an SDK
agent), not for table lookups. ``docs/scaling_out.md`` says when to use it.

>>> from concurrent.futures import ThreadPoolExecutor
>>> from agentic_machines import TableMachine, HALT
>>> from agentic_machines.runtime.explore import explore
>>> m = TableMachine({0: "p", 1: "q"}, {(0, "a"): 1, (0, "b"): HALT, (1, "a"): 0, (1, "b"): 1})
>>> with ThreadPoolExecutor(2) as pool:
...     g = explore(m, 0, executor=pool)
>>> list(g.edges(data=True)) == list(explore(m, 0).edges(data=True))
True
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Executor
from typing import Any

from ..batches import TASKS_PER_WORKER, check_sendable, run_batches
from ..machine import DIVERGE, HALT, AgenticMachine
from .search import (
    Choose,
    Found,
    Plan,
    Reporter,
    UndecidedStep,
    cut_row,
    none_state,
    offered,
    outcomes,
    prompt_of,
    stats,
)

__all__ = ["expand_batch", "parallel_search", "run_batches", "check_sendable", "TASKS_PER_WORKER"]


def expand_batch(
    machine: AgenticMachine,
    fixed: Sequence[str] | None,
    choose: Choose | None,
    expand: bool,
    states: Sequence[Any],
) -> list[tuple[str, list[str] | None, list[Any] | None]]:
    """One task: the prompt of each state and, when ``expand``, its outcomes.

    Per state ``(prompt, completions, outcomes)``: ``completions`` is ``None`` when the
    alphabet is the fixed one (nothing to send back), and the outcomes are aligned with
    the completions, with a marker where the harness raised ``Undecided``.

    >>> from agentic_machines import TableMachine, HALT
    >>> m = TableMachine({0: "p"}, {(0, "a"): 0, (0, "b"): HALT})
    >>> expand_batch(m, ["a", "b"], None, True, [0])
    [('p', None, [0, 1])]
    """
    h, p = machine.harness, machine.prompt
    out: list[tuple[str, list[str] | None, list[Any] | None]] = []
    for s in states:
        prompt, why = prompt_of(p, s)
        if not expand:
            out.append((prompt, None, None))
            continue
        comps = list(fixed) if fixed is not None else offered(choose, prompt, s)  # type: ignore[arg-type]
        row = outcomes(h, s, comps) if why is None else [UndecidedStep(why)] * len(comps)
        out.append((prompt, None if fixed is not None else comps, row))
    return out


def parallel_search(
    task: Plan,
    report: Reporter,
    found: Found,
    began: float,
    executor: Executor,
    batch_size: int | None,
) -> str | None:
    """The level-by-level search of :func:`~agentic_machines.runtime.explore.explore`.

    Fills ``found`` exactly as the serial loop does (same discovery order, same cut
    where the state bound stops it) and returns why it stopped early, if it did.
    """
    machine, starts, fixed, choose, bounds = task
    check_sendable(executor, "explore", machine=machine, completions=choose)
    max_depth = bounds.max_depth
    depth, prompts, rows = found.depth, found.prompts, found.rows
    limit = bounds.limit
    every: list[str] = fixed if fixed is not None else []  # the rows share the fixed alphabet
    for s in starts:
        depth[s] = 0
    n_states = len(starts)
    level = list(starts)
    d = 0
    while level:
        expand = max_depth is None or d < max_depth
        results = run_batches(
            executor, expand_batch, level, batch_size, machine, fixed, choose, expand
        )
        for s, (prompt, _c, _r) in zip(level, results):
            prompts[s] = prompt
        if not expand:
            return bounds.depth_cut()
        nxt: list[Any] = []
        for i, (s, (_p, chosen, row)) in enumerate(zip(level, results)):
            comps: list[str] = chosen if chosen is not None else every
            for t in row:
                if t in depth:
                    continue
                if t is HALT or t is DIVERGE:
                    depth[t] = d + 1
                elif type(t) is UndecidedStep:
                    continue
                elif n_states >= limit:
                    rows.append((s, comps, cut_row(row, depth)))
                    found.cut = True
                    found.queued = len(level) - i - 1 + len(nxt)
                    _prompts_of(executor, nxt, batch_size, machine, prompts)
                    return bounds.full(n_states)
                else:
                    if t is None:
                        raise none_state(machine, s)
                    n_states += 1
                    depth[t] = d + 1
                    nxt.append(t)
            rows.append((s, comps, row))
        report.tick(lambda: stats(found, began, None, queued=len(nxt)))  # noqa: B023 - called at once
        level, d = nxt, d + 1
    return None


def _prompts_of(
    executor: Executor,
    states: list[Any],
    batch_size: int | None,
    machine: AgenticMachine,
    prompts: dict[Any, str],
) -> None:
    results = run_batches(executor, expand_batch, states, batch_size, machine, None, None, False)
    for s, (prompt, _c, _r) in zip(states, results):
        prompts[s] = prompt
