"""Machines by name, for the command line: the fixtures and the architectures.

``resolve(name)`` finds a fixture of :mod:`agentic_machines.fixtures` (``f2-add``,
``f2-mul``, ``f2-const``, ``halt1``, ``diverge1``) or an architecture of
:mod:`agentic_machines.architectures` (``react``, ``rlm``, ...) and returns an
:class:`Entry` that builds the machine and knows how to explore it. Both registries are
imported only when a name is resolved, so ``agentic-machines --help`` stays fast and an
architecture that fails to import does not break the fixtures.

>>> entry = resolve("f2-mul")
>>> entry.kind, entry.name, sorted(entry.machine().states)
('fixture', 'f2-mul', [0, 1])
>>> resolve("f2-mull")
Traceback (most recent call last):
  ...
agentic_machines.errors.UnknownMachine: unknown machine 'f2-mull' (did you mean f2-mul?); known machines: ...
"""
from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from .errors import UnknownMachine
from .machine import AgenticMachine

__all__ = ["Entry", "resolve", "names", "fixture_names", "architecture_names", "UnknownMachine"]


@dataclass(frozen=True)
class Entry:
    """A named machine: how to build it, where to start, which completions to explore.

    ``kind`` is ``"fixture"`` or ``"architecture"``; ``module`` is the architecture's
    module (with ``analysis()`` and ``scripted_model()``), ``None`` for fixtures.
    """

    name: str
    kind: str
    factory: Callable[[], AgenticMachine]
    module: ModuleType | None = None

    def machine(self) -> AgenticMachine:
        """Build a fresh machine."""
        return self.factory()

    def start(self, machine: AgenticMachine) -> Any:
        """The state to start runs and explorations from."""
        if self.module is not None and getattr(self.module, "initial", None) is not None:
            return self.module.initial
        return machine.initial

    def roots(self, machine: AgenticMachine) -> list[Any]:
        """Where exploration starts: every state of a finite machine (start first), else the start."""
        start = self.start(machine)
        if machine.states is not None:
            first = [start] if start is not None else []
            return first + [s for s in machine.states if s != start]
        return [start]

    def completions(self, machine: AgenticMachine) -> Iterable[str] | Callable[[str], Iterable[str]] | None:
        """The alphabet for diagrams: the architecture's ``diagram_completions``, else the machine's."""
        chooser = getattr(self.module, "diagram_completions", None) if self.module is not None else None
        return chooser if chooser is not None else machine.completions


def fixture_names() -> list[str]:
    """Names of the fixture machines.

    >>> "f2-add" in fixture_names()
    True
    """
    from .fixtures import FIXTURES

    return list(FIXTURES)


def architecture_names() -> list[str]:
    """Names of the architectures that are registered (none when the registry is absent)."""
    try:
        from . import architectures
    except ImportError:  # pragma: no cover - the package is part of the distribution
        return []
    registered = getattr(architectures, "ARCHITECTURE_NAMES", None)
    if registered is not None:
        return list(registered)
    return list(getattr(architectures, "ARCHITECTURES", None) or {})


def names() -> list[str]:
    """Every name :func:`resolve` accepts: fixtures first, then architectures."""
    return fixture_names() + [n for n in architecture_names() if n not in fixture_names()]


def resolve(name: str) -> Entry:
    """The :class:`Entry` called ``name``; :class:`UnknownMachine` lists every known name."""
    from .fixtures import FIXTURES

    if name in FIXTURES:
        return Entry(name, "fixture", FIXTURES[name])
    if name in architecture_names():
        # Import this one architecture only: a broken sibling must not hide it.
        module = importlib.import_module(f"{__package__}.architectures.{name}")
        return Entry(name, "architecture", module.machine, module)
    known = names()
    close = difflib.get_close_matches(name, known, n=2, cutoff=0.6)
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    raise UnknownMachine(f"unknown machine {name!r}{hint}; known machines: {', '.join(known)}")
