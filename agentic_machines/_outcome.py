"""The two outcomes that are not states, ``HALT`` (``1``) and ``DIVERGE`` (``↑``).

They sit below every other module: :mod:`agentic_machines.machine` re-exports them (their
documented home), and :mod:`agentic_machines.verdict` prints outcomes with
:func:`show_outcome` without importing the machine module, which imports it.

>>> show_outcome(HALT), is_sentinel(DIVERGE)
('HALT (1)', True)
"""

from __future__ import annotations

__all__ = ["HALT", "DIVERGE", "show_outcome", "is_sentinel"]


class _Sentinel:
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

    def __copy__(self) -> _Sentinel:
        return self

    def __deepcopy__(self, memo: dict) -> _Sentinel:
        return self


HALT = _Sentinel("1", "HALT")
"""The halting outcome ``1``: the run ends normally."""

DIVERGE = _Sentinel("↑", "DIVERGE")
"""The divergence outcome ``↑``: the harness never returns to the model."""


def show_outcome(outcome: object) -> str:
    """How text output names an outcome: ``HALT (1)`` and ``DIVERGE (↑)`` for the
    sentinels, ``repr`` for a state, so the outcome ``1`` never reads as the state ``1``.

    >>> show_outcome(HALT), show_outcome(DIVERGE), show_outcome(1), show_outcome("a")
    ('HALT (1)', 'DIVERGE (↑)', '1', "'a'")
    """
    return outcome.label if isinstance(outcome, _Sentinel) else repr(outcome)


def is_sentinel(outcome: object) -> bool:
    """Return True for ``HALT`` and ``DIVERGE``, False for every state.

    >>> is_sentinel(HALT), is_sentinel(DIVERGE), is_sentinel("HALT")
    (True, True, False)
    """
    return outcome is HALT or outcome is DIVERGE
