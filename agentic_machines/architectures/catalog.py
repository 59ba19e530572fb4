"""Machines by name, for the command line: the fixtures and the architectures.

``resolve(name)`` finds a fixture of :mod:`agentic_machines.fixtures` (``f2-add``,
``f2-mul``, ``f2-const``, ``halt1``, ``diverge1``) or an architecture of
:mod:`agentic_machines.architectures` (``react``, ``rlm``, ...) and returns an
:class:`Entry` that builds the machine and knows how to explore it. The architectures'
registry imports an architecture's module only when its name is resolved, so
``agentic-machines --help`` stays fast and an architecture that fails to import does not
break the fixtures; exploring (networkx) is imported only when a machine is explored.

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
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .. import architectures
from ..errors import InvalidArgument, UnknownMachine
from ..fixtures import FIXTURES
from ..generation import spe_states
from ..machine import AgenticMachine
from ..verdict import Verdict

if TYPE_CHECKING:  # for the annotations only: the search loads when a machine is explored
    from ..runtime.search import Completions

__all__ = [
    "Entry",
    "resolve",
    "names",
    "fixture_names",
    "architecture_names",
    "UnknownMachine",
    "DEFAULT_DEPTH",
    "scripted_machine",
]

DEFAULT_DEPTH = 2
"""Exploration depth for diagrams of machines with infinitely many states."""


@dataclass(frozen=True)
class Entry:
    """A named machine: how to build it, where to start, which completions to explore.

    ``kind`` is ``"fixture"`` or ``"architecture"`` (or, for the targets of
    :mod:`agentic_machines.cli.targets`, ``"file"`` and ``"python"``); ``module`` is the
    architecture's module (with ``analysis()`` and ``scripted_model()``), ``None``
    otherwise; ``source`` is the target text a file or Python machine came from.

    >>> e = resolve("halt1")
    >>> m = e.machine()
    >>> e.start(m), e.roots(m), e.completions(m)
    (0, [0], ('0', '1'))
    """

    name: str
    kind: str
    factory: Callable[[], AgenticMachine]
    module: ModuleType | None = None
    source: str | None = None

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

    def completions(self, machine: AgenticMachine) -> Completions | None:
        """The alphabet for diagrams: the architecture's ``diagram_completions``, else the machine's."""
        chooser = (
            getattr(self.module, "diagram_completions", None) if self.module is not None else None
        )
        return chooser if chooser is not None else machine.completions

    def explore(
        self,
        machine: AgenticMachine | None = None,
        *,
        depth: int | None = None,
        max_states: int = 200,
        completions: Completions | None = None,
        executor: Any = None,
    ) -> Any:
        """The state graph to draw: a whole finite machine, or an architecture to ``depth``.

        ``completions`` replaces the alphabet to follow (needed for a machine that has
        none, such as an agent function's); ``executor`` runs the harness calls elsewhere
        (``explore(executor=...)``).

        >>> g = resolve("f2-mul").explore()
        >>> sorted(n for n in g if g.nodes[n]["kind"] == "state")
        [0, 1]
        """
        from ..runtime.explore import explore  # lazy: networkx, and --help loads the catalog

        machine = machine if machine is not None else self.machine()
        if depth is None and machine.states is None:
            depth = DEFAULT_DEPTH
        if completions is None:
            completions = self.completions(machine)
        if completions is None:
            raise InvalidArgument(
                f"{self.name!r} has no finite completion alphabet"
                + (
                    " and its module gives no diagram_completions(prompt); add one to draw it"
                    if self.module is not None
                    else "; pass the completions to follow (--completion TEXT, repeated, or "
                    "--completions FILE)"
                )
            )
        return explore(
            machine,
            self.start(machine),
            completions,
            roots=self.roots(machine),
            max_depth=depth,
            max_states=max_states,
            executor=executor,
        )

    def highlights(
        self, machine: AgenticMachine, graph: Any, *, analysis: Verdict | None = None
    ) -> dict[str, Any]:
        """The roles to mark in a diagram (keyword arguments of ``diagrams.draw``).

        Finite machines: their SPE states, decided exactly. Architectures: the initial
        state's successors and the obstruction state of ``analysis()``, when drawn;
        ``analysis`` is that verdict when the caller already has it (the contrast table
        computed it), so it is not computed twice. It is ignored for a finite machine.

        >>> e = resolve("f2-mul")
        >>> e.highlights(e.machine(), e.explore())
        {'spe_states': frozenset({1})}
        """
        if self.module is None:
            if machine.states is None or machine.completions is None:
                return {}

            return {"spe_states": spe_states(machine)}
        marks: dict[str, Any] = {"successors_of": self.start(machine)}
        verdict = self.module.analysis() if analysis is None else analysis
        obstruction = getattr(verdict, "obstruction", None)
        if obstruction is not None and obstruction.state in graph:
            marks["obstruction"] = obstruction.state
        return marks


def fixture_names() -> list[str]:
    """Names of the fixture machines.

    >>> "f2-add" in fixture_names()
    True
    """
    return list(FIXTURES)


def architecture_names() -> list[str]:
    """Names of the architectures that are registered, in table order.

    >>> "react" in architecture_names()
    True
    """
    registered = getattr(architectures, "ARCHITECTURE_NAMES", None)
    if registered is not None:
        return list(registered)
    return list(getattr(architectures, "ARCHITECTURES", None) or {})


def names() -> list[str]:
    """Every name :func:`resolve` accepts: fixtures first, then architectures.

    >>> names()[:2]
    ['f2-add', 'f2-mul']
    """
    return fixture_names() + [n for n in architecture_names() if n not in fixture_names()]


def scripted_machine(module: ModuleType, **kwargs: Any) -> AgenticMachine:
    """An architecture's machine for the module's own fixed completions (diagrams, analyses).

    Those completions are the project's code, so an architecture that runs model code
    (RLM, REPL-Plan) runs them ``isolation="inline"``, asked for by name; a machine driven
    by a model's output (the ``run`` command) is built with ``isolation="strongest"``.

    >>> from agentic_machines.architectures import rlm
    >>> scripted_machine(rlm).kwargs["options"].isolation
    'inline'
    """
    if runs_model_code(module) and "options" not in kwargs:
        kwargs.setdefault("isolation", "inline")
    return module.machine(**kwargs)


RUNS_MODEL_CODE = frozenset({"adaplanner", "codeact", "pal", "repl_plan", "rlm"})
"""The architectures (module names) that run model-written code, whose ``machine()``
takes ``options=`` (an :class:`~agentic_machines.architectures.options.ExecOptions`).
Declared here, never read from a signature (a test keeps it equal to the architectures
whose ``machine`` has that parameter)."""


def runs_model_code(module: ModuleType) -> bool:
    """Whether the architecture ``module`` runs model-written code (takes ``options=``).

    >>> from agentic_machines.architectures import react, rlm
    >>> runs_model_code(rlm), runs_model_code(react)
    (True, False)
    """
    return module.__name__.rsplit(".", 1)[-1] in RUNS_MODEL_CODE


def resolve(name: str) -> Entry:
    """The :class:`Entry` called ``name``; :class:`UnknownMachine` lists every known name.

    >>> resolve("react").kind
    'architecture'
    """
    if name in FIXTURES:
        return Entry(name, "fixture", FIXTURES[name])
    if name in architecture_names():
        # Import this one architecture only: a broken sibling must not hide it.
        module = importlib.import_module(f"agentic_machines.architectures.{name}")
        return Entry(name, "architecture", lambda: scripted_machine(module), module)
    known = names()
    close = difflib.get_close_matches(name, known, n=2, cutoff=0.6)
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    raise UnknownMachine(f"unknown machine {name!r}{hint}; known machines: {', '.join(known)}")
