"""The outcomes that are not states: ``HALT`` (``1``), ``DIVERGE`` (``↑``), and a step that
raised (:class:`Raised`, the exception's type and message).

They sit below every other module: :mod:`agentic_machines.machine` re-exports the two
sentinels (their documented home), :mod:`agentic_machines.checking` re-exports
:class:`Raised`, and :mod:`agentic_machines.verdict` prints outcomes with
:func:`show_outcome` without importing the machine module, which imports it. Graphs and
diagrams show a raised step as a node of its own, never as ``HALT``.

>>> show_outcome(HALT), is_sentinel(DIVERGE), show_outcome(Raised("KeyError", "'x'"))
('HALT (1)', True, "RAISED (KeyError: 'x')")
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["HALT", "DIVERGE", "Raised", "show_outcome", "is_sentinel", "is_end", "halt_raised"]


class Sentinel:
    """A singleton outcome that is not a state. Survives copy and pickle as itself."""

    __slots__ = ("_symbol", "_name")

    def __init__(self, symbol: str, name: str) -> None:
        self._symbol = symbol
        self._name = name

    def __repr__(self) -> str:
        return self._symbol

    __str__ = __repr__

    @property
    def label(self) -> str:
        """The outcome as text output shows it: its name, then its symbol (``HALT (1)``)."""
        return f"{self._name} ({self._symbol})"

    def __reduce__(self) -> str:
        return self._name

    def __copy__(self) -> Sentinel:
        return self

    def __deepcopy__(self, memo: dict) -> Sentinel:
        return self


HALT = Sentinel("1", "HALT")
"""The halting outcome ``1``: the run ends normally."""

DIVERGE = Sentinel("↑", "DIVERGE")
"""The divergence outcome ``↑``: the harness never returns to the model."""


@dataclass(frozen=True)
class Raised:
    """The outcome of a step on which the harness raised an exception (not a state).

    The checkers catch the exception and record it as this outcome, so a crash is a
    counterexample like any other instead of a crash of the checker. It ends the run.
    ``recorded`` is True when the harness did not raise but ended the run with ``HALT``
    and kept the exception (an agent function's ``raised(state, completion)``): a replay
    then sees ``HALT`` and asks the machine what it recorded.

    >>> Raised("IndexError", "list index out of range")
    Raised(IndexError: list index out of range)
    """

    type: str
    message: str
    recorded: bool = field(default=False, compare=False)

    @classmethod
    def of(cls, exc: BaseException) -> Raised:
        """The outcome for the exception ``exc``.

        >>> Raised.of(KeyError("x")).type
        'KeyError'
        """
        return cls(type(exc).__name__, str(exc))

    @property
    def label(self) -> str:
        """The outcome as text output shows it.

        >>> Raised("ValueError", "bad x").label
        'RAISED (ValueError: bad x)'
        """
        return f"RAISED ({self.type}: {' '.join(self.message.split())})"

    def __repr__(self) -> str:
        return f"Raised({self.type}: {self.message})"


def is_end(outcome: Any) -> bool:
    """True for the outcomes that end a run: ``HALT``, ``DIVERGE`` and :class:`Raised`
    (in a graph: every node that is not a state).

    >>> is_end(HALT), is_end(Raised("E", "")), is_end("state")
    (True, True, False)
    """
    return outcome is HALT or outcome is DIVERGE or type(outcome) is Raised


def halt_raised(machine: Any) -> Callable[[Any, str], Raised | None] | None:
    """How to ask ``machine`` whether a halting step ``h(state, completion) = HALT`` ended
    because its program raised: a function ``(state, completion) -> Raised | None``, or
    ``None`` when the machine does not keep exceptions (it raises them). Agent functions
    keep them in ``raised(state, completion)``, a ``HarnessMachine(on_error="halt")`` in
    ``result(state, completion)``.

    >>> class Agent:
    ...     def raised(self, state, completion):
    ...         return Raised("ValueError", "bad") if completion == "x" else None
    >>> ask = halt_raised(Agent())
    >>> ask(0, "x"), ask(0, "y"), halt_raised(object())
    (Raised(ValueError: bad), None, None)
    """
    raised = getattr(machine, "raised", None)
    if callable(raised):

        def from_record(state: Any, completion: str) -> Raised | None:
            record = raised(state, completion)
            if record is None:
                return None
            return Raised(str(record.type), str(record.message), recorded=True)

        return from_record
    result = getattr(machine, "result", None)
    if callable(result) and getattr(machine, "on_error", None) in ("halt", "record", "outcome"):

        def from_result(state: Any, completion: str) -> Raised | None:
            value = result(state, completion)
            if isinstance(value, BaseException):
                return Raised(type(value).__name__, str(value), recorded=True)
            return None

        return from_result
    return None


def show_outcome(outcome: object) -> str:
    """How text output names an outcome: ``HALT (1)`` and ``DIVERGE (↑)`` for the
    sentinels, ``RAISED (Type: message)`` for a step that raised, ``repr`` for a state, so
    the outcome ``1`` never reads as the state ``1``.

    >>> show_outcome(HALT), show_outcome(DIVERGE), show_outcome(1), show_outcome("a")
    ('HALT (1)', 'DIVERGE (↑)', '1', "'a'")
    """
    if isinstance(outcome, (Sentinel, Raised)):
        return outcome.label
    return repr(outcome)


def is_sentinel(outcome: object) -> bool:
    """Return True for ``HALT`` and ``DIVERGE``, False for every state.

    >>> is_sentinel(HALT), is_sentinel(DIVERGE), is_sentinel("HALT")
    (True, True, False)
    """
    return outcome is HALT or outcome is DIVERGE
