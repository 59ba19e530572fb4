"""Agent architectures as agentic machines.

Where each encoding comes from, and what in it is faithful, is in ``docs/sources.md``.

Each architecture is a module with the same small interface, written down as the
``typing.Protocol`` :class:`Architecture`: ``machine(...)`` (an
:class:`~agentic_machines.machine.AgenticMachine` on a default toy environment and task),
``initial`` (the initial state of the default machine), ``scripted_model()`` (a model
that solves the default task), ``analysis()`` (a :class:`~agentic_machines.verdict.Verdict`
on "is the initial state an SPE state?", with a certificate) and
``diagram_completions(prompt)`` (a small completion alphabet for diagrams), and ``SCRIPT``
(the completions of the scripted model).

The architectures that run model-written code take one
:class:`~agentic_machines.architectures.options.ExecOptions` (``ExecOptions`` here too) for
where and how their blocks run.

``ARCHITECTURES`` maps each name to its module. It is built on first use, so importing
one architecture does not import the others (the SPE row pulls in the CEK evaluator). To
add an architecture, write a module that satisfies :class:`Architecture` and add its
name to ``ARCHITECTURE_NAMES`` (``tests/test_layout.py`` checks every registered module).

>>> from agentic_machines.architectures import ARCHITECTURES
>>> "react" in ARCHITECTURES and ARCHITECTURES["react"].__name__
'agentic_machines.architectures.react'
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .protocol import Architecture

if TYPE_CHECKING:
    from .options import ExecOptions

__all__ = ["ARCHITECTURES", "ARCHITECTURE_NAMES", "Architecture", "ExecOptions"]

ARCHITECTURE_NAMES: tuple[str, ...] = (
    "react",
    "rlm",
    "repl_plan",
    "thread",
    "spe",
    "spell",
    "reflexion",
    "pal",
    "codeact",
    "adapt",
    "tot",
    "adaplanner",
)
"""Module names (inside this package) of the architectures, in table order."""

_registry: dict[str, ModuleType] | None = None


def __getattr__(name: str) -> Any:
    # PEP 562: ARCHITECTURES and ExecOptions are imported lazily; any other unknown name is
    # a real AttributeError so that `from . import react` still falls back to the submodule.
    global _registry
    if name == "ExecOptions":
        from .options import ExecOptions  # on first use: it loads the block runners

        return ExecOptions
    if name == "ARCHITECTURES":
        if _registry is None:
            _registry = {n: importlib.import_module(f"{__name__}.{n}") for n in ARCHITECTURE_NAMES}
        return _registry
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
