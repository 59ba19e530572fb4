"""Property-test and model-check a harness: invariants, termination, shortest
counterexamples, and Hypothesis state-machine tests.

- :mod:`~agentic_machines.checking.properties`: properties as values (``Invariant``,
  ``Transition``, ``halts_within``, ``never_diverges``, ``never_raises``,
  ``prompt_length_at_most``, ``unreachable``, ``unreachable_prompt``, ``effects_at_most_once``, ``p & q``);
- :mod:`~agentic_machines.checking.check`: ``check_properties``, the exhaustive bounded
  breadth-first check over a finite alphabet (on the search kernel's one expansion,
  :func:`~agentic_machines.runtime.search.expand`);
- :mod:`~agentic_machines.checking.keyed`: ``keyed_loop``, whether a run that came back
  to a key of ``never_diverges(key=...)`` goes round for ever;
- :mod:`~agentic_machines.checking.result`: ``CheckResult``, ``Counterexample``,
  ``Coverage``;
- :mod:`~agentic_machines.checking.coverage`: which prompts were never reached;
- :mod:`~agentic_machines.checking.adversarial`: Hypothesis strategies of adversarial
  completions;
- :mod:`~agentic_machines.checking.stateful`: ``hypothesis_test``, the same properties
  on runs driven by generated completions, shrunk to a minimal sequence.

>>> from agentic_machines.fixtures import fixture
>>> from agentic_machines.checking import check_properties, never_diverges
>>> print(check_properties(fixture("halt1"), properties=[never_diverges()]).status)
holds
"""

from .check import check_properties
from .properties import (
    Conjunction,
    EffectsAtMostOnce,
    HaltsWithin,
    Invariant,
    NeverDiverges,
    NeverRaises,
    Property,
    Raised,
    Transition,
    all_of,
    effects_at_most_once,
    halts_within,
    never_diverges,
    never_raises,
    parse_property,
    prompt_length_at_most,
    unreachable,
    unreachable_prompt,
)
from .result import CheckResult, Counterexample, Coverage, PropertyResult

__all__ = [
    "check_properties",
    "Property",
    "Invariant",
    "Transition",
    "HaltsWithin",
    "NeverDiverges",
    "NeverRaises",
    "EffectsAtMostOnce",
    "Conjunction",
    "Raised",
    "halts_within",
    "never_diverges",
    "never_raises",
    "prompt_length_at_most",
    "unreachable",
    "unreachable_prompt",
    "effects_at_most_once",
    "all_of",
    "parse_property",
    "CheckResult",
    "Counterexample",
    "Coverage",
    "PropertyResult",
]
