"""The module contract every architecture follows, as a ``typing.Protocol``.

An architecture is a *module* (``react``, ``rlm``, ...), so the protocol describes module
attributes: a module satisfies it structurally (PEP 544), and
``isinstance(module, Architecture)`` checks at run time that every part is present.
The contrast table, the catalog of the command line and the gallery use an architecture
only through these names; ``docs/design.md`` (the architecture protocol) says why.

>>> from agentic_machines.architectures import ARCHITECTURES
>>> all(isinstance(m, Architecture) for m in ARCHITECTURES.values())
True
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Protocol, runtime_checkable

from ..machine import AgenticMachine
from ..verdict import Verdict

__all__ = ["Architecture"]


@runtime_checkable
class Architecture(Protocol):
    """What ``agentic_machines.architectures.<name>`` provides.

    ``machine(...)`` builds the architecture as an agentic machine; called without
    arguments it has a working default toy environment and task, whose start state is
    ``initial``. ``scripted_model()`` answers that task with the completions ``SCRIPT``.
    ``analysis()`` decides "is ``initial`` an SPE state?" with a certificate.
    ``diagram_completions(prompt)`` is a small completion alphabet for diagrams.
    """

    initial: Hashable
    """The initial state of the default machine."""

    SCRIPT: tuple[str, ...]
    """The completions :meth:`scripted_model`'s model gives on the default task, in order."""

    def machine(self, *args: Any, **kwargs: Any) -> AgenticMachine:
        """The architecture as an agentic machine (no argument: the default toy task)."""
        ...

    def scripted_model(self, *args: Any, **kwargs: Any) -> Any:
        """A model (``complete(prompt) -> str``) that solves the default task."""
        ...

    def analysis(self, *args: Any, **kwargs: Any) -> Verdict:
        """The verdict on "is the initial state an SPE state?", with its certificate."""
        ...

    def diagram_completions(self, prompt: str) -> list[str]:
        """A small completion alphabet to explore from a state with this prompt."""
        ...
