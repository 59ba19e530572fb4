"""The F2 refutation shared by ReAct, RLM and THREAD.

Each of those architectures proves a successor-prompt invariant in ``proofs/`` and
refutes "the initial state is an SPE state" with
:func:`agentic_machines.generation.prompt_obstruction` at a concrete state reached by
a short script. This module adds the bookkeeping they share: reach the state, run the
check at that deep state and at the initial state itself, and keep both.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Iterable, Sequence

from ..errors import InvalidArgument
from ..generation import prompt_obstruction
from ..machine import AgenticMachine, is_sentinel
from ..verdict import Verdict

__all__ = ["refute_by_invariant", "reach"]


def reach(machine: AgenticMachine, start: Hashable, script: Sequence[str]) -> Hashable:
    """The state reached from ``start`` by feeding ``script`` (each step must stay a state).

    >>> from agentic_machines.architectures import react
    >>> len(reach(react.machine(), react.initial, react.SCRIPT[:2]))
    2
    """
    state = start
    for i, c in enumerate(script):
        nxt = machine.harness(state, c)
        if is_sentinel(nxt):
            raise InvalidArgument(
                f"script step {i + 1} ({c!r}) ends the run with {nxt!r}; give a script that keeps "
                f"{machine.name!r} running to reach the obstruction state"
            )
        state = nxt
    return state


def refute_by_invariant(
    machine: AgenticMachine,
    start: Hashable,
    *,
    deep_script: Sequence[str],
    invariant: Callable[[str, str], bool],
    invariant_text: str,
    proof: str,
    completions: Iterable[str],
) -> Verdict:
    """F2 at the state reached by ``deep_script``; the same check at ``start`` in details.

    The returned verdict is the deep state's (refuted, or undecided when the invariant
    fails on a tested completion). ``details`` adds ``"initial_state"`` (the verdict
    with ``start`` itself as the obstruction state), ``"path"`` (the script) and
    ``"completions_tested"``.

    >>> from agentic_machines.architectures import react
    >>> m = react.machine()
    >>> v = refute_by_invariant(m, m.initial, deep_script=react.SCRIPT[:2],
    ...     invariant=react.successor_invariant, invariant_text=react.INVARIANT_TEXT,
    ...     proof="proofs/react_invariant.md", completions=["x", " a\\nAction 1: Search[Paris]"])
    >>> v.status, v.checked, v.details["initial_state"].status
    ('refuted', 2, 'refuted')
    """
    completions = list(completions)
    deep = reach(machine, start, deep_script)
    machine = _Memo(machine)  # both checks below step the same (start, c) pairs
    main = prompt_obstruction(
        machine,
        start,
        machine,
        deep,
        invariant=invariant,
        invariant_text=invariant_text,
        proof=proof,
        completions=completions,
    )
    at_start = prompt_obstruction(
        machine,
        start,
        machine,
        start,
        invariant=invariant,
        invariant_text=invariant_text,
        proof=proof,
        completions=completions,
    )
    details = {
        **dict(main.details),
        "initial_state": at_start,
        "path": tuple(deep_script),
        "completions_tested": len(completions),
        "invariant": invariant_text,
        "proof": proof,
    }
    return dataclasses.replace(main, details=details)


class _Memo(AgenticMachine):
    """The same machine, remembering h(s, c) so that a second pass costs nothing."""

    def __init__(self, inner: AgenticMachine) -> None:
        self.inner = inner
        self.name = inner.name
        self.initial = inner.initial
        self.states = inner.states
        self.completions = inner.completions
        self._steps: dict[tuple[Hashable, str], object] = {}

    def prompt(self, state: Hashable) -> str:
        return self.inner.prompt(state)

    def harness(self, state: Hashable, completion: str) -> object:
        key = (state, completion)
        if key not in self._steps:
            self._steps[key] = self.inner.harness(state, completion)
        return self._steps[key]
