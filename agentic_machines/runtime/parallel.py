"""Breadth-first search with the harness calls of each level run on an executor.

A level's harness calls are independent: they are cut into batches of states, each run
as one task on any ``concurrent.futures.Executor`` (a process pool, Dask's
``Client(...).get_executor()``), and merged in the level's order, so the graph, verdicts
and counterexamples are the serial search's. ``docs/scaling_out.md`` says when it pays.

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

import sys
from collections.abc import Iterable, Sequence
from concurrent.futures import Executor
from typing import Any

from ..batches import TASKS_PER_WORKER, check_sendable, run_batches
from ..machine import AgenticMachine
from .search import Choose, Expansion, Found, Plan, Walk, choices, expand, prompt_of

__all__ = [
    "expand_batch",
    "expand_steps",
    "ExecutorWalk",
    "run_batches",
    "check_sendable",
    "TASKS_PER_WORKER",
]


def expand_batch(
    machine: AgenticMachine,
    fixed: Sequence[str] | None,
    choose: Choose | None,
    expanding: bool,
    states: Sequence[Any],
) -> list[tuple[str, list[str] | None, list[Any] | None]]:
    """One task: the prompt of each state and, when ``expanding``, its outcomes.

    Per state ``(prompt, completions, outcomes)``: ``completions`` is ``None`` when the
    alphabet is the fixed one (nothing to send back), and the outcomes are aligned with
    the completions (:func:`~agentic_machines.runtime.search.expand`'s).

    >>> from agentic_machines import TableMachine, HALT
    >>> m = TableMachine({0: "p"}, {(0, "a"): 0, (0, "b"): HALT})
    >>> expand_batch(m, ["a", "b"], None, True, [0])
    [('p', None, [0, 1])]
    """
    p = machine.prompt
    out: list[tuple[str, list[str] | None, list[Any] | None]] = []
    for s in states:
        prompt, why = prompt_of(p, s)
        if not expanding:
            out.append((prompt, None, None))
            continue
        comps = list(choices(fixed, choose, prompt, s))  # type: ignore[arg-type]
        ((row, _prompts, _executed),) = expand(
            machine, [(s, comps)], clocked={s: why} if why else None
        )
        out.append((prompt, None if fixed is not None else comps, row))
    return out


def expand_steps(
    machine: AgenticMachine, batch: Sequence[tuple[Any, list[str]]]
) -> list[Expansion]:
    """The checker's task on an executor: :func:`~agentic_machines.runtime.search.expand`
    of ``batch`` as the checker asks for it (exceptions as outcomes, the prompt of every
    outcome that is a state), as a list that can be sent back.

    >>> from agentic_machines import TableMachine, HALT
    >>> m = TableMachine({0: "p"}, {(0, "a"): 0, (0, "b"): HALT})
    >>> [e.prompts for e in expand_steps(m, [(0, ["a", "b"])])]
    [['p', None]]
    """
    return list(expand(machine, batch, known=(), catch=True))


class ExecutorWalk(Walk):
    """The walk of :func:`~agentic_machines.runtime.explore.explore` on an executor.

    Each batch is the whole queue, which in a breadth-first search is one level; its
    states are cut into tasks of ``batch_size`` (:func:`expand_batch`), and a task
    computes the prompt of each of its states there as well (a prompt may cost a
    replay), so the prompt of a new state is filled when its level is expanded, and
    those of states left unexpanded by a bound when the search ends.
    """

    batch = sys.maxsize  # the whole queue: one level

    def __init__(
        self, task: Plan, found: Found, executor: Executor, batch_size: int | None
    ) -> None:
        super().__init__(task, found)
        check_sendable(executor, "explore", machine=task.machine, completions=task.choose)
        self.executor, self.batch_size = executor, batch_size

    def prompt(self, t: Any) -> str | None:
        return None  # computed on a worker with the state's expansion (or by finish)

    def expand(self, states: list[Any]) -> Iterable[tuple[list[str], list[Any], Any]]:
        machine, _starts, fixed, choose, _bounds = self.task
        every: list[str] = fixed if fixed is not None else []  # the rows share the fixed alphabet
        results = run_batches(
            self.executor, expand_batch, states, self.batch_size, machine, fixed, choose, True
        )
        prompts = self.record.prompts
        out = []
        for s, (prompt, chosen, row) in zip(states, results):
            prompts[s] = prompt
            out.append((chosen if chosen is not None else every, row, None))
        return out

    def finish(self) -> None:
        """The prompts of the states no level expanded (a bound stopped short of them)."""
        prompts = self.record.prompts
        waiting = [s for s, prompt in prompts.items() if prompt is None]
        results = run_batches(
            self.executor,
            expand_batch,
            waiting,
            self.batch_size,
            self.task.machine,
            None,
            None,
            False,
        )
        for s, (prompt, _c, _r) in zip(waiting, results):
            prompts[s] = prompt
