"""Expanding a frontier: the harness calls of a breadth-first check, as one function.

:func:`expand` takes a batch of states, each with the completions to try, and returns
what the harness does with each pair: the outcome, the prompt of an outcome that is a
new state, and the requests that observed tools executed during the call. It is the
only place where the checker calls the machine, so a parallel executor can run
batches elsewhere and hand the results back in order; the search that consumes them
(:mod:`agentic_machines.checking.check`) never calls the harness itself.

Exceptions become outcomes, never crashes of the checker: :class:`Undecided` gives an
:class:`Unknown` outcome (the step's result is not known), any other ``Exception``
from the harness a :class:`~agentic_machines.checking.properties.Raised` outcome, and
so does a halting step of a machine that records the exception instead of raising it
(its ``result(state, completion)`` is an exception).

>>> from agentic_machines import TableMachine, HALT
>>> m = TableMachine({0: "a", 1: "b"}, {(0, "x"): 1, (0, "y"): HALT, (1, "x"): 1, (1, "y"): 0})
>>> expand(m, [(0, ["x", "y"])], known={0})
[[('x', 1, 'b', ()), ('y', 1, None, ())]]
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass
from typing import Any

from .._outcome import halt_raised
from ..errors import Undecided, unhashable_state
from ..machine import DIVERGE, HALT, AgenticMachine
from .properties import Raised, _EffectLogView

__all__ = ["expand", "Unknown", "records_errors"]

Transition = tuple[str, Any, "str | None", tuple]
"""``(completion, outcome, prompt of a new state or None, executed requests)``."""


@dataclass(frozen=True)
class Unknown:
    """The outcome of a step on which the harness raised ``Undecided`` (fuel ran out).

    >>> Unknown("fuel")
    Unknown(fuel)
    """

    reason: str

    def __repr__(self) -> str:
        return f"Unknown({self.reason})"


def records_errors(machine: AgenticMachine) -> bool:
    """True when ``machine`` turns an exception of its program into a halting step and
    keeps it, in ``raised(state, completion)`` (agent loops) or in ``result(state,
    completion)`` (``HarnessMachine(on_error="halt")``), instead of raising it.

    >>> from agentic_machines import HarnessMachine
    >>> def prog():
    ...     yield "go"
    >>> records_errors(HarnessMachine(prog)), records_errors(HarnessMachine(prog, on_error="halt"))
    (False, True)
    """
    return halt_raised(machine) is not None


def _known(t: Any, known: Container[Any], state: Any, c: str) -> bool:
    """``t in known``, with an outcome that is no state said in words (states are kept in
    sets: an unhashable one cannot be a state)."""
    try:
        return t in known
    except TypeError:
        raise unhashable_state(state, c, t) from None


def expand(
    machine: AgenticMachine,
    batch: Sequence[tuple[Any, Sequence[str]]],
    *,
    known: Container[Any] = (),
    logs: Sequence[list] = (),
    errors: bool | None = None,
) -> list[list[Transition]]:
    """Apply the harness to every ``(state, completions)`` pair of ``batch``.

    Returns one list per state, one ``(completion, outcome, prompt, executed)`` tuple
    per completion, in order. ``prompt`` is ``p(outcome)`` when the outcome is a state
    not in ``known`` (computed right after the step, while a generator harness still
    has it cached), else ``None``. ``executed`` holds, per log of ``logs`` (the
    ``calls`` lists of observed tools), the entries appended during the step; it is
    ``()`` when ``logs`` is empty. ``errors`` says whether the machine records
    exceptions as results (default: :func:`records_errors`).

    >>> from agentic_machines import FunctionMachine
    >>> def h(s, c):
    ...     if c == "boom":
    ...         raise IndexError("no action")
    ...     return s + 1
    >>> m = FunctionMachine(lambda s: f"at {s}", h)
    >>> expand(m, [(0, ["go", "boom"])])
    [[('go', 1, 'at 1', ()), ('boom', Raised(IndexError: no action), None, ())]]
    """
    h, p = machine.harness, machine.prompt
    kept = halt_raised(machine) if errors is None or errors else None
    out: list[list[Transition]] = []
    for state, completions in batch:
        row: list[Transition] = []
        for c in completions:
            marks = [len(log) for log in logs] if logs else None
            try:
                t = h(state, c)
            except Undecided as exc:
                t = Unknown(str(exc))
            except Exception as exc:  # noqa: BLE001 - a crash of the harness is an outcome here
                t = Raised.of(exc)
            executed: tuple = ()
            if marks is not None:
                executed = tuple(
                    log.at(state, c) if type(log) is _EffectLogView else tuple(log[n:])
                    for log, n in zip(logs, marks)
                )
            if t is HALT:
                if kept is not None:
                    t = kept(state, c) or HALT
                row.append((c, t, None, executed))
            elif (
                t is DIVERGE
                or type(t) is Raised
                or type(t) is Unknown
                or _known(t, known, state, c)
            ):
                row.append((c, t, None, executed))
            else:
                try:
                    prompt = p(t)
                except Undecided as exc:
                    t, prompt = Unknown(f"the prompt of {t!r}: {exc}"), None
                except Exception as exc:  # noqa: BLE001 - p crashing is a harness crash too
                    t, prompt = Raised.of(exc), None
                row.append((c, t, prompt, executed))
        out.append(row)
    return out
