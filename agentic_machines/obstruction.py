"""Refuting completion-generation on infinite machines: F2 and F5 with a proved premise.

When a machine's completion alphabet is every string, its successors cannot be listed,
so completion-generation is not decided exhaustively. It can still be refuted:
:func:`prompt_obstruction` (F2: a target state whose prompt no successor of x can have)
and :func:`cardinality_obstruction` (F5: two target states that need two successors
where the harness has one) each rest on a premise that is proved in ``proofs/`` and
property-tested on the given completions (at least :data:`MIN_PREMISE_TESTS` distinct
ones); the refutation is conditional on it, and says so. The deciders for finite
machines are in :mod:`agentic_machines.generation`, which re-exports these names.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ._text import counted
from .embedding import rank
from .errors import InvalidArgument
from .machine import (
    AgenticMachine,
    is_sentinel,
    state_set,
)
from .verdict import Obstruction, Premise, Verdict, undecided_as_verdict
from .verdict import short_repr as _short

__all__ = [
    "prompt_obstruction",
    "cardinality_obstruction",
    "MIN_PREMISE_TESTS",
    "proof_exists",
]


def claim_text(machine: AgenticMachine, state: Hashable, target: AgenticMachine) -> str:
    """The claim a verdict on (``machine``, ``state``) and ``target`` is about.

    >>> from agentic_machines.fixtures import FIXTURES
    >>> m = FIXTURES["halt1"]()
    >>> claim_text(m, 0, m)
    '0 is an SPE state of halt1'
    """
    if target is machine:
        return f"{_short(state)} is an SPE state of {machine.name}"
    return f"({machine.name}, {_short(state)}) completion-generates {target.name}"


def check_state_of(machine: AgenticMachine, state: Hashable, role: str = "") -> None:
    """Raise unless ``state`` is a state: never a sentinel, and one of the declared states
    when the machine lists them (a question about a non-state has no answer)."""
    known = state_set(machine)
    if is_sentinel(state) or (known is not None and state not in known):
        what = f"the {role} " if role else ""
        raise InvalidArgument(
            f"{_short(state)} is not a state of {what}{machine.name!r}; pick one of its states."
        )


# ---------------------------------------------------------------------------------------
# Obstructions for infinite machines, with a premise property-tested on given completions

MIN_PREMISE_TESTS = 50
"""The fewest distinct completions a premise must be tested on before a conditional refutation
(a completion given twice counts once).

A premise that the toolkit cannot check exhaustively (a successor-prompt invariant for
F2, a constant harness for F5, on a machine whose completion alphabet is every string)
is property-tested on the given completions; below this many, the verdict is undecided.
"""

_REPO_ROOT = Path(__file__).resolve().parent.parent


def proof_exists(proof: str) -> bool:
    """Does the proof file ``proof`` exist: as given (absolute, or relative to the working
    directory), or relative to the repository that holds this package (``proofs/...``)?

    >>> proof_exists("proofs/F2_prompt_obstruction.md"), proof_exists("proofs/NO_SUCH_FILE.md")
    (True, False)
    """
    if not isinstance(proof, str) or not proof.strip():
        return False
    path = Path(proof)
    return path.is_file() or (not path.is_absolute() and (_REPO_ROOT / path).is_file())


def premise_verdict(
    machine: AgenticMachine,
    claim: str,
    method: str,
    tested: int,
    covered: bool,
    premise_text: str,
    proof: str | None,
    obstruction: Obstruction,
    details: Mapping[str, Any],
    premise_tests: int | None = None,
) -> Verdict:
    """The refutation once the premise passed every test: plain when the tests covered the
    whole finite alphabet (the premise is then checked exhaustively), else conditional on
    the premise, and undecided when the proof file is missing or too few were tested.

    ``tested`` is the verdict's count of checks; ``premise_tests`` the distinct completions
    the premise was tested on, when that differs (default: ``tested``)."""
    if premise_tests is None:
        premise_tests = tested
    if covered:
        return Verdict(
            False,
            claim,
            method,
            tested,
            obstruction=obstruction,
            reason=f"the premise ({premise_text}) was checked on the whole completion alphabet of "
            f"{machine.name}",
            details=details,
        )
    if proof is None or not proof_exists(proof):
        missing = (
            "no proof file was given"
            if proof is None
            else f"the proof file {proof!r} does not exist"
        )
        return Verdict(
            None,
            claim,
            method,
            tested,
            reason=f"the premise ({premise_text}) cannot be checked exhaustively here and {missing}; pass "
            "proof= the path of an existing file (a Markdown file under proofs/) that proves it",
            details=details,
        )
    if premise_tests < MIN_PREMISE_TESTS:
        return Verdict(
            None,
            claim,
            method,
            tested,
            reason=f"the premise ({premise_text}) was tested on only {counted(premise_tests, 'distinct completion')}; pass at least "
            f"{MIN_PREMISE_TESTS} different completions=[...] (MIN_PREMISE_TESTS) for a conditional refutation",
            details=details,
        )
    return Verdict(
        False,
        claim,
        method,
        tested,
        obstruction=obstruction,
        details=details,
        premise=Premise(premise_text, proof, premise_tests),
    )


def _covers_alphabet(machine: AgenticMachine, tested: Iterable[str]) -> bool:
    """Did the tests try every completion of a finite alphabet (an exhaustive premise check)?"""
    return machine.completions is not None and set(machine.completions) <= set(tested)


@undecided_as_verdict(
    lambda machine, state, target, *_, **__: claim_text(machine, state, target), "fact:F2"
)
def prompt_obstruction(
    machine: AgenticMachine,
    state: Hashable,
    target: AgenticMachine,
    target_state: Hashable,
    *,
    invariant: Callable[[str, str], bool],
    invariant_text: str,
    proof: str,
    completions: Iterable[str],
) -> Verdict:
    """Refute completion-generation by F2 using a successor-prompt invariant.

    The caller claims (and proves in the file ``proof``) that every successor state y
    of ``state`` satisfies ``invariant(p(state), p(y))``. If ``target_state``'s prompt
    violates it, no successor can be its image: refuted, method ``"fact:F2"``. The
    invariant is property-tested on ``completions`` first; a counterexample makes the
    verdict undecided (premise refuted), as does an invariant that does not exclude
    ``target_state``.

    When ``completions`` cover the machine's finite alphabet the premise is checked
    exhaustively and the refutation is plain. Otherwise it is *conditional*: the verdict
    carries the :class:`~agentic_machines.verdict.Premise` (``str(v)`` reads "Refuted,
    given ..."), and it is undecided instead when ``proof`` does not exist or fewer than
    :data:`MIN_PREMISE_TESTS` completions were tested.

    >>> from agentic_machines import FunctionMachine
    >>> grow = FunctionMachine(lambda s: s, lambda s, c: s + c, name="grow")
    >>> words = ["a", "b", "xyz"] + [f"w{i}" for i in range(60)]
    >>> v = prompt_obstruction(grow, "ab", grow, "ab",
    ...     invariant=lambda p, q: q.startswith(p) and len(q) > len(p),
    ...     invariant_text="p(x) is a proper prefix of p(y)", proof="proofs/F3_prompt_monotone.md",
    ...     completions=words)
    >>> v.holds, v.method, v.checked, v.conditional, v.obstruction.state
    (False, 'fact:F2', 63, True, 'ab')
    >>> prompt_obstruction(grow, "ab", grow, "ab", invariant=lambda p, q: q != p, invariant_text="t",
    ...     proof="proofs/F3_prompt_monotone.md", completions=["a"]).status
    'undecided'
    """
    claim = claim_text(machine, state, target)
    check_state_of(machine, state)
    # target_state must be a state of the target: F2 says nothing about a non-state, and a
    # "refutation" pinned to one would refute a relation that may hold.
    check_state_of(target, target_state, "target")
    p_x = machine.prompt(state)
    p_t = target.prompt(target_state)
    if invariant(p_x, p_t):
        return Verdict(
            None,
            claim,
            "fact:F2",
            0,
            reason=(
                f"the invariant ({invariant_text}) does not exclude state {_short(target_state)}: its prompt "
                f"{_short(p_t)} satisfies it, so this obstruction says nothing about that state"
            ),
        )
    tested = sentinels = 0
    seen: list[str] = []
    # A repeated completion tests nothing new: the premise counts distinct completions.
    for c in dict.fromkeys(completions):
        tested += 1
        seen.append(c)
        y = machine.harness(state, c)
        if is_sentinel(y):
            sentinels += 1
            continue
        p_y = machine.prompt(y)
        if not invariant(p_x, p_y):
            return Verdict(
                None,
                claim,
                "fact:F2",
                tested,
                reason=(
                    f"premise refuted: completion {_short(c)} leads to {_short(y)} with prompt {_short(p_y)}, "
                    f"which violates the claimed invariant ({invariant_text}); the obstruction does not apply"
                ),
                details={"completion": c, "successor": y, "tested": tested},
            )
    counts = {
        "completions_tested": tested,
        "sentinel_outcomes": sentinels,
        "successor_states": tested - sentinels,
    }
    covered = _covers_alphabet(machine, seen)
    where = (
        "checked on the whole completion alphabet"
        if covered
        else f"proved in {proof}; property-tested on {counted(tested, 'completion')}"
    )
    obstruction = Obstruction(
        "prompt",
        target_state,
        f"State {_short(target_state)} of {target.name} has prompt {_short(p_t)}, but every successor y of "
        f"{_short(state)} satisfies: {invariant_text} ({where}), which this prompt violates; so no successor "
        f"can be the image of {_short(target_state)} (F2).",
        details={"prompt": p_t, "proof": proof, **counts},
    )
    return premise_verdict(
        machine, claim, "fact:F2", tested, covered, invariant_text, proof, obstruction, counts
    )


@undecided_as_verdict(
    lambda machine, state, target, *_, **__: claim_text(machine, state, target), "fact:F5"
)
def cardinality_obstruction(
    machine: AgenticMachine,
    state: Hashable,
    target: AgenticMachine,
    *,
    reason: str,
    completions: Iterable[str],
    target_states: Iterable[Hashable],
    proof: str | None = None,
) -> Verdict:
    """Refute completion-generation by F5 when h(state, ·) is constant.

    The caller claims h(state, ·) is constant (``reason`` says why); this is checked on
    ``completions``. An injective embedding cannot put two target states on the one
    successor, so two distinct ``target_states`` refute: method ``"fact:F5"``. Two
    different outcomes make the verdict undecided (premise refuted).

    As for :func:`prompt_obstruction`: plain when ``completions`` cover the machine's
    finite alphabet, otherwise conditional on the premise, which needs ``proof`` (an
    existing file that proves it) and at least :data:`MIN_PREMISE_TESTS` completions.

    >>> from agentic_machines.fixtures import fixture
    >>> const = fixture("f2-const")
    >>> v = cardinality_obstruction(const, 0, const, reason="h(a, b) = a ignores b",
    ...                             completions=["0", "1"], target_states=[0, 1])
    >>> v.holds, v.method, v.obstruction.kind, v.obstruction.state, v.conditional
    (False, 'fact:F5', 'cardinality', 1, False)
    """
    claim = claim_text(machine, state, target)
    outcomes: dict[Hashable, str] = {}
    tested = 0
    seen: list[str] = []
    for c in dict.fromkeys(completions):  # distinct completions, as in prompt_obstruction
        tested += 1
        seen.append(c)
        y = machine.harness(state, c)
        outcomes.setdefault(y, c)
        if len(outcomes) > 1:
            (y0, c0), (y1, c1) = list(outcomes.items())[:2]
            return Verdict(
                None,
                claim,
                "fact:F5",
                tested,
                reason=(
                    f"premise refuted: h({_short(state)}, ·) is not constant ({reason} was claimed): completion "
                    f"{_short(c0)} gives {_short(y0)} but {_short(c1)} gives {_short(y1)}"
                ),
                details={"outcomes": {c0: y0, c1: y1}},
            )
    if not outcomes:
        return Verdict(
            None,
            claim,
            "fact:F5",
            0,
            reason="no completions were given, so the premise was not tested",
        )
    distinct = sorted(dict.fromkeys(target_states), key=rank)
    known = state_set(target)
    if known is not None:
        distinct = [s for s in distinct if s in known]
    if len(distinct) < 2:
        return Verdict(
            None,
            claim,
            "fact:F5",
            tested,
            reason=f"need two distinct states of {target.name} to refute; got {len(distinct)}",
        )
    y = next(iter(outcomes))
    # If y is itself a target state (the SPE case), the natural preimage of y is y: name another one.
    s = next(
        (t for t in distinct[1:] + distinct[:1] if not (t == y and target is machine)), distinct[1]
    )
    other = distinct[0] if s != distinct[0] else distinct[1]
    covered = _covers_alphabet(machine, seen)
    premise = f"h({_short(state)}, ·) is constant ({reason})"
    obstruction = Obstruction(
        "cardinality",
        s,
        f"h({_short(state)}, ·) is constant ({reason}; checked on {counted(tested, 'completion')}): every completion gives "
        f"{_short(y)}, so succ({_short(state)}) has at most one state. An embedding is injective, so {_short(other)} "
        f"and {_short(s)} cannot both map into it: state {_short(s)} of {target.name} has no loader (F5).",
        details={"successor": y, "completions_tested": tested},
    )
    return premise_verdict(
        machine,
        claim,
        "fact:F5",
        tested,
        covered,
        premise,
        proof,
        obstruction,
        {"completions_tested": tested, "target_states": len(distinct)},
    )
