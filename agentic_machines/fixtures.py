"""Small named machines (the F2 fixtures of ``docs/design.md``), used by tests, proofs, docs and the CLI.

The F2 fixtures (an example of the SPE paper's formal appendix, ``docs/sources.md``) have one prompt ``"⋆"``, states
S = {0, 1} and completions C = {"0", "1"}:

- ``"f2-add"``: h(a, b) = a + b mod 2 (every state is an SPE state);
- ``"f2-mul"``: h(a, b) = a·b (1 is an SPE state, 0 is not);
- ``"f2-const"``: h(a, b) = a (no SPE state, although the identity is an embedding).

``"halt1"`` and ``"diverge1"`` are one-state machines (state 0, prompt ``"⋆"``,
completions {"0", "1"}) that halt, respectively diverge, on every completion.
:func:`menu_and_loop` builds the pair of machines of tutorial chapter 2 (the gallery
draws them, the exercises check answers against them).

>>> m = fixture("f2-mul")
>>> [m.harness(a, b) for a in (0, 1) for b in ("0", "1")]
[0, 0, 0, 1]
>>> sorted(FIXTURES)
['diverge1', 'f2-add', 'f2-const', 'f2-mul', 'halt1']
"""

from __future__ import annotations

from collections.abc import Callable

from .errors import InvalidArgument
from .machine import DIVERGE, HALT, AgenticMachine, TableMachine

__all__ = ["FIXTURES", "fixture", "STAR", "menu_and_loop"]

STAR = "⋆"
"""The one prompt of every fixture."""

_BITS = ("0", "1")


def _f2(name: str, op: Callable[[int, int], int]) -> TableMachine:
    return TableMachine(
        {0: STAR, 1: STAR},
        {(a, b): op(a, int(b)) for a in (0, 1) for b in _BITS},
        completions=_BITS,
        initial=0,
        name=name,
    )


def f2_add() -> TableMachine:
    """h(a, b) = a + b mod 2: every state is an SPE state."""
    return _f2("f2-add", lambda a, b: (a + b) % 2)


def f2_mul() -> TableMachine:
    """h(a, b) = a·b: state 1 is an SPE state, state 0 is not."""
    return _f2("f2-mul", lambda a, b: a * b)


def f2_const() -> TableMachine:
    """h(a, b) = a: no state is an SPE state."""
    return _f2("f2-const", lambda a, b: a)


def halt1() -> TableMachine:
    """One state that halts on every completion."""
    return TableMachine(
        {0: STAR}, {(0, b): HALT for b in _BITS}, completions=_BITS, initial=0, name="halt1"
    )


def diverge1() -> TableMachine:
    """One state that diverges on every completion."""
    return TableMachine(
        {0: STAR}, {(0, b): DIVERGE for b in _BITS}, completions=_BITS, initial=0, name="diverge1"
    )


FIXTURES: dict[str, Callable[[], AgenticMachine]] = {
    "f2-add": f2_add,
    "f2-mul": f2_mul,
    "f2-const": f2_const,
    "halt1": halt1,
    "diverge1": diverge1,
}
"""Fixture name -> a function building a fresh machine."""


def fixture(name: str) -> AgenticMachine:
    """Build the fixture machine called ``name``.

    >>> fixture("halt1").harness(0, "1")
    1
    >>> fixture("f2-sub")
    Traceback (most recent call last):
      ...
    agentic_machines.errors.InvalidArgument: unknown fixture 'f2-sub'; known fixtures: diverge1, f2-add, f2-const, f2-mul, halt1
    """
    try:
        build = FIXTURES[name]
    except KeyError:
        raise InvalidArgument(
            f"unknown fixture {name!r}; known fixtures: {', '.join(sorted(FIXTURES))}"
        ) from None
    return build()


def menu_and_loop() -> tuple[TableMachine, TableMachine]:
    """The two machines of tutorial chapter 2: ``loop`` embeds into ``menu`` twice.

    >>> menu, loop = menu_and_loop()
    >>> menu.prompt("a") == loop.prompt("q")
    True
    """
    menu = TableMachine(
        {"s0": "menu", "a": "continue?", "b": "continue?"},
        {
            ("s0", "yes"): "a",
            ("s0", "no"): "b",
            ("a", "yes"): "a",
            ("a", "no"): HALT,
            ("b", "yes"): "b",
            ("b", "no"): HALT,
        },
        initial="s0",
        name="menu",
    )
    loop = TableMachine(
        {"q": "continue?"}, {("q", "yes"): "q", ("q", "no"): HALT}, initial="q", name="loop"
    )
    return menu, loop
