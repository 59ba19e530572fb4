"""Hypothesis strategies and profiles for testing agentic machines.

Public so that users can property-test their own machines and harnesses with the
same generators we use. ``examples(ci, thorough)`` picks an example count by the active
profile: the default ``ci`` profile keeps a suite fast; ``HYPOTHESIS_PROFILE=thorough``
runs the larger number.

>>> examples(100, 5000) in (100, 5000)
True

The machine strategies draw small finite :class:`~agentic_machines.machine.TableMachine`
objects (states ``0..n-1``, completions ``"0".."k-1"``, prompts from a small pool so
that prompts collide and embeddings exist), sub-machines with an embedding into a given
machine, states, completions and finite distributions. For the CEK evaluator,
``programs()`` draws closed, terminating programs that reach boundary states in every
kind of context, ``program_completions()`` draws completions (random strings, valid
program texts, invalid ones) and ``data()`` draws quoted data; they live in
:mod:`agentic_machines.cek.strategies` and are re-exported here. A property test of
your own:

>>> from hypothesis import given
>>> from agentic_machines import check_embedding
>>> @given(embeddings_into_any())
... def test_restrictions_embed(pair):
...     sub, e = pair
...     assert check_embedding(e).holds
>>> test_restrictions_embed()
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, TypeVar

from hypothesis import find, settings
from hypothesis import strategies as st

from .cek.strategies import completions as program_completions
from .cek.strategies import data, programs
from .embedding import Embedding, rank
from .errors import InvalidArgument
from .machine import DIVERGE, HALT, AgenticMachine, TableMachine, is_sentinel

__all__ = [
    "examples",
    "thorough",
    "table_machines",
    "embeddings_into",
    "embeddings_into_any",
    "states_of",
    "completions_of",
    "distributions",
    "programs",
    "program_completions",
    "data",
    "first_and_shrunk",
]


def thorough() -> bool:
    """True when the ``thorough`` Hypothesis profile is selected (``HYPOTHESIS_PROFILE``).

    >>> thorough() in (True, False)
    True
    """
    return os.environ.get("HYPOTHESIS_PROFILE") == "thorough"


def examples(ci: int, thorough_count: int) -> int:
    """The number of examples for a property test under the active profile.

    >>> examples(10, 10)
    10
    """
    return thorough_count if thorough() else ci


def alphabet(size: int) -> tuple[str, ...]:
    """The completion alphabet ``("0", "1", ..., str(size - 1))`` used by :func:`table_machines`.

    >>> alphabet(3)
    ('0', '1', '2')
    """
    return tuple(str(i) for i in range(size))


def table_machines(
    max_states: int = 4,
    max_completions: int = 3,
    allow_sentinels: bool = True,
    *,
    min_states: int = 1,
    prompts: Sequence[str] = ("a", "b"),
    completions: Sequence[str] | None = None,
) -> st.SearchStrategy[TableMachine]:
    """Random finite machines: states ``0..n-1``, prompts from ``prompts``, total tables.

    ``completions`` fixes the alphabet (use it to draw several machines over one C);
    otherwise it is :func:`alphabet` of a drawn size between 1 and ``max_completions``.
    With ``allow_sentinels`` some transitions halt or diverge.

    >>> from hypothesis import find
    >>> m = find(table_machines(max_states=3, completions=("x", "y")), lambda m: len(m.states) == 3)
    >>> sorted(m.states), m.completions
    ([0, 1, 2], ('x', 'y'))
    """
    if min_states < 0 or max_states < min_states:
        raise InvalidArgument(
            f"need 0 <= min_states <= max_states, got {min_states} and {max_states}"
        )
    if not prompts:
        raise InvalidArgument("prompts must name at least one prompt string")

    @st.composite
    def build(draw: Any) -> TableMachine:
        n = draw(st.integers(min_states, max_states))
        letters = (
            tuple(completions)
            if completions is not None
            else alphabet(draw(st.integers(1, max_completions)))
        )
        ps = {s: draw(st.sampled_from(tuple(prompts))) for s in range(n)}
        extra = (HALT, DIVERGE) if allow_sentinels else ()
        choices = tuple(range(n)) + extra
        table = {}
        for s in range(n):
            for c in letters:
                table[(s, c)] = draw(st.sampled_from(choices)) if choices else HALT
        return TableMachine(ps, table, completions=letters, name=f"random{n}x{len(letters)}")

    return build()


def embeddings_into(machine: AgenticMachine) -> st.SearchStrategy[tuple[TableMachine, Embedding]]:
    """A sub-machine of the finite ``machine`` and an embedding of it into ``machine``.

    The sub-machine is the part of ``machine`` reachable from a few drawn states (a
    subset closed under h), relabelled ``"s0", "s1", ...`` in a drawn order so that the
    embedding is not the identity on labels.

    >>> from hypothesis import find
    >>> from agentic_machines.fixtures import fixture
    >>> mul = fixture("f2-mul")
    >>> sub, e = find(embeddings_into(mul), lambda pair: len(pair[0].states) == 1)
    >>> sub.states, e.mapping["s0"] in mul.states
    (('s0',), True)
    """
    if not machine.is_finite:
        raise InvalidArgument(
            f"embeddings_into needs a finite machine; {machine.name!r} is not finite."
        )
    states = sorted(machine.states, key=rank)
    letters = tuple(machine.completions)

    @st.composite
    def build(draw: Any) -> tuple[TableMachine, Embedding]:
        if not states:
            sub = TableMachine({}, {}, completions=letters, name="empty")
            return sub, Embedding(sub, machine, {})
        seeds = draw(st.lists(st.sampled_from(states), min_size=1, max_size=3))
        closed: dict = {}
        todo = list(seeds)
        while todo:  # forward closure, iteratively
            s = todo.pop()
            if s in closed:
                continue
            closed[s] = None
            todo.extend(
                o
                for o in (machine.harness(s, c) for c in letters)
                if not is_sentinel(o) and o not in closed
            )
        order = draw(st.permutations(sorted(closed, key=rank)))
        label = {s: f"s{i}" for i, s in enumerate(order)}
        sub = TableMachine(
            {label[s]: machine.prompt(s) for s in order},
            {
                (label[s], c): (o if is_sentinel(o) else label[o])
                for s in order
                for c in letters
                for o in (machine.harness(s, c),)
            },
            completions=letters,
            name=f"sub({machine.name})",
        )
        return sub, Embedding(sub, machine, {label[s]: s for s in order})

    return build()


def embeddings_into_any(
    max_states: int = 4, max_completions: int = 3
) -> st.SearchStrategy[tuple[TableMachine, Embedding]]:
    """A random machine X (from :func:`table_machines`) and a sub-machine embedded in it.

    ``embedding.target`` is X.

    >>> from hypothesis import given, settings
    >>> @settings(max_examples=5, database=None)
    ... @given(embeddings_into_any())
    ... def embedded(pair):
    ...     sub, e = pair
    ...     assert e.source is sub
    >>> embedded()
    """
    return table_machines(max_states, max_completions).flatmap(embeddings_into)


def states_of(machine: AgenticMachine) -> st.SearchStrategy[Any]:
    """A state of the finite ``machine`` (shrinks towards the smallest in :func:`rank` order).

    >>> from agentic_machines.fixtures import fixture
    >>> add = fixture("f2-add")
    >>> first, shrunk = first_and_shrunk(states_of(add), lambda s: s != min(add.states, key=rank))
    >>> shrunk in add.states, rank(shrunk) <= rank(first)  # no later in rank order
    (True, True)
    """
    if not machine.states:
        raise InvalidArgument(
            f"{machine.name!r} has no finite, non-empty list of states to draw from."
        )
    return st.sampled_from(sorted(machine.states, key=rank))


def completions_of(machine: AgenticMachine) -> st.SearchStrategy[str]:
    """A completion of the machine's finite alphabet.

    >>> from hypothesis import find
    >>> from agentic_machines.fixtures import fixture
    >>> c = find(completions_of(fixture("f2-add")), lambda c: c != "0")
    >>> c in fixture("f2-add").completions, c != "0"
    (True, True)
    """
    if not machine.completions:
        raise InvalidArgument(
            f"{machine.name!r} has no finite, non-empty completion alphabet; pass completions yourself."
        )
    return st.sampled_from(tuple(machine.completions))


def distributions(
    completions: Sequence[str], *, exact: bool = True, max_weight: int = 5
) -> st.SearchStrategy[dict[str, Any]]:
    """A finite probability distribution over some of ``completions`` (at least one).

    Probabilities are ``Fraction`` (``exact=True``, so kernel equalities are exact) or
    ``float``; they are positive and sum to 1.

    >>> from hypothesis import find
    >>> d = find(distributions(["0", "1"]), lambda d: len(d) == 2)
    >>> sum(d.values())
    Fraction(1, 1)
    """
    letters = tuple(dict.fromkeys(completions))
    if not letters:
        raise InvalidArgument("distributions needs at least one completion")

    @st.composite
    def build(draw: Any) -> dict[str, Any]:
        support = draw(
            st.lists(st.sampled_from(letters), min_size=1, max_size=len(letters), unique=True)
        )
        weights = [draw(st.integers(1, max_weight)) for _ in support]
        total = sum(weights)
        if exact:
            return {c: Fraction(w, total) for c, w in zip(support, weights)}
        return {c: w / total for c, w in zip(support, weights)}

    return build()


T = TypeVar("T")


def first_and_shrunk(strategy: st.SearchStrategy[T], fails: Any) -> tuple[T, T]:
    """The first drawn value of ``strategy`` for which ``fails(value)`` is true, and the
    value Hypothesis shrinks it to.

    Which value a shrinker settles on changes from one Hypothesis release to the next, so
    a test of a strategy's shrinking asserts a property of the pair (the shrunk value
    still fails and is no larger than the first failure) and never the value itself. The
    search is derandomized and uses no example database, so one Hypothesis release always
    gives the same pair. Raises ``hypothesis.errors.NoSuchExample`` when no drawn value
    fails.

    >>> from hypothesis import strategies as st
    >>> first, shrunk = first_and_shrunk(st.text(), lambda t: len(t) > 3)
    >>> len(shrunk) > 3, len(shrunk) <= len(first)
    (True, True)
    """
    failures: list[T] = []

    def condition(value: T) -> bool:
        failed = bool(fails(value))
        if failed:
            failures.append(value)
        return failed

    # derandomize: the pair depends on the Hypothesis release, never on the run.
    shrunk = find(strategy, condition, settings=settings(derandomize=True, database=None))
    return failures[0], shrunk
