"""Tree of Thoughts (BFS and DFS with a value prompt) as an agentic machine.

Source: Yao et al., *Tree of Thoughts: Deliberate Problem Solving with Large Language
Models* (NeurIPS 2023), arXiv:2305.10601; full citation and the faithful / simplified /
absent table in ``docs/sources.md``.

The task is the paper's Game of 24 (combine four numbers with ``+ - * /`` to make 24). A
*thought* is one arithmetic step, ``a op b = c (left: ...)``; a state of the search is the
list of numbers left. Every model call is one transition of the machine:

- the *thought generator* is a **propose prompt**: the numbers left, and the model lists
  possible next steps, one per line;
- the *state evaluator* is a **value prompt** per proposed thought: the model judges
  whether the numbers left can still reach 24 and ends with ``sure``, ``likely`` or
  ``impossible``;
- the *search* is **BFS** (keep the ``breadth`` best states at each of the three levels)
  or **DFS** (expand the best child first, prune children judged ``impossible``,
  backtrack to the next sibling on a dead end, stop at the first solution).

What is faithful to the paper and what is simplified: ``docs/sources.md``,
section "Tree of Thoughts".

The SPE question (:func:`analysis`): every prompt ends with the numbers of the state it
is about, and a successor prompt shows at most one number fewer (a step removes one
number; BFS moves level by level; DFS backtracks to shallower states, which show more)
(``proofs/tot_invariant.md``). The value prompt of a two-number state, reached in four
calls, shows two numbers fewer than the initial prompt, so by F2 the initial state is not
an SPE state. ReAct does not embed: every prompt starts with the propose or the value
header (:func:`embeds_react`).

>>> m = machine()
>>> m.prompt(initial).splitlines()[-2:]
['Input: 4 6 8 9', 'Possible next steps:']
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from ..errors import InvalidArgument
from ..runtime.harness import HarnessMachine, TraceState
from ..verdict import Verdict
from ._invariants import (
    InvariantAnalysis,
    completion_sampler,
    recorded_machine,
    scripted,
)

if TYPE_CHECKING:
    from ..runtime.local_models import ScriptedModel

__all__ = [
    "machine",
    "initial",
    "tot_program",
    "TotResult",
    "scripted_model",
    "SCRIPT",
    "analysis",
    "embeds_react",
    "successor_invariant",
    "INVARIANT_TEXT",
    "diagram_completions",
    "parse_step",
    "numbers_shown",
    "PROPOSE_HEADER",
    "VALUE_HEADER",
    "VALUES",
    "TOY_NUMBERS",
]

PROPOSE_HEADER = (
    "Use the numbers and + - * / to make 24. List possible next steps, one per line, as "
    "'a op b = c (left: remaining numbers)'.\n"
    "Input: 2 3 5 12\nPossible next steps:\n"
    "2 + 3 = 5 (left: 5 5 12)\n12 / 2 = 6 (left: 3 5 6)\n5 - 3 = 2 (left: 2 2 12)\n\n"
)
"""The propose prompt's instruction and worked example (our wording)."""

VALUE_HEADER = (
    "Judge whether the numbers can still make 24 with + - * /. Reason briefly, then end "
    "with one word: sure, likely or impossible.\n"
    "Numbers: 4 6\nEvaluation: 4 * 6 = 24\nsure\n\n"
    "Numbers: 1 2\nEvaluation: 1 + 2 = 3, 1 * 2 = 2: far too small\nimpossible\n\n"
)
"""The value prompt's instruction and worked examples (our wording)."""

VALUES = {"sure": 20.0, "likely": 1.0, "impossible": 0.001}
"""The judgement words and their values (the order is the paper's; the numbers are ours)."""

TOY_NUMBERS = (4, 6, 8, 9)

SCRIPT: tuple[str, ...] = (
    "9 - 8 = 1 (left: 1 4 6)\n8 - 6 = 2 (left: 2 4 9)",
    "1 4 6: 1 * 4 * 6 = 24\nsure",
    "2 4 9: 2 + 4 + 9 = 15, 2 * 9 + 4 = 22\nlikely",
    "4 * 6 = 24 (left: 1 24)\n4 + 6 = 10 (left: 1 10)",
    "24 * 1 = 24\nsure",
    "10 and 1 give at most 11\nimpossible",
    "24 * 1 = 24 (left: 24)",
    "24\nsure",
)
"""The scripted completions of BFS with breadth 1: at each level one propose call and a
value call per valid thought (eight model calls)."""

initial = TraceState(())
"""The initial state of :func:`machine` (BFS, breadth 1)."""

INVARIANT_TEXT = (
    "every prompt ends with the numbers of its search state, and a successor prompt shows "
    "at most one number fewer"
)

_STEP = re.compile(
    r"^\s*(-?\d+(?:\.\d+)?)\s*([-+*/])\s*(-?\d+(?:\.\d+)?)\s*=\s*(-?\d+(?:\.\d+)?)\s*"
    r"\(left:\s*([-\d.\s]*)\)\s*$"
)
_NUMBERS_LINE = re.compile(
    r"\n(?:Input|Numbers): ([^\n]*)\n(?:Possible next steps:\n|Evaluation:)$"
)


@dataclass(frozen=True)
class TotResult:
    """What a search returns: the steps of the solution found (``None`` if none), and how
    many states were judged.

    >>> TotResult(None, 0).solved
    False
    """

    steps: tuple[str, ...] | None
    evaluated: int

    @property
    def solved(self) -> bool:
        """True when a chain of steps reaching 24 was found."""
        return self.steps is not None


def _fmt(numbers: tuple[Fraction, ...]) -> str:
    return " ".join(str(n) if n.denominator != 1 else str(n.numerator) for n in numbers)


def parse_step(line: str, numbers: tuple[Fraction, ...]) -> tuple[Fraction, ...] | None:
    """The numbers left after a proposed step, or ``None`` when the step is not valid: the
    operands must be two of ``numbers``, the result right, and ``left`` the rest plus it.

    >>> F = Fraction
    >>> parse_step("9 - 8 = 1 (left: 1 4 6)", (F(4), F(6), F(8), F(9)))
    (Fraction(1, 1), Fraction(4, 1), Fraction(6, 1))
    >>> parse_step("9 - 8 = 2 (left: 2 4 6)", (F(4), F(6), F(8), F(9))) is None
    True
    """
    m = _STEP.match(line)
    if m is None:
        return None
    try:
        a, b, c = (Fraction(m.group(k)) for k in (1, 3, 4))
        left = tuple(sorted(Fraction(x) for x in m.group(5).split()))
    except (ValueError, ZeroDivisionError):
        return None
    pool = list(numbers)
    for x in (a, b):
        if x not in pool:
            return None
        pool.remove(x)
    op = m.group(2)
    if op == "/" and b == 0:
        return None
    value = {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else None}[op]
    if value != c or left != tuple(sorted([*pool, c])):
        return None
    return left


def numbers_shown(prompt: str) -> int | None:
    """How many numbers the prompt's last ``Input:`` / ``Numbers:`` line shows (the search
    state the prompt is about), or ``None`` when the prompt does not end with one.

    >>> numbers_shown(machine().prompt(initial))
    4
    """
    m = _NUMBERS_LINE.search(prompt)
    return len(m.group(1).split()) if m else None


def tot_program(
    numbers: tuple[int, ...] = TOY_NUMBERS,
    *,
    search: str = "bfs",
    breadth: int = 1,
    revisit: bool = False,
) -> Generator[str, str, TotResult]:
    """The Tree-of-Thoughts harness as a generator: propose and value calls, searched by
    BFS or DFS.

    ``revisit=True`` plants a bug on purpose (DFS only): on a dead end the search starts
    again from the root instead of moving to the next sibling, so it revisits the same
    states for ever.

    >>> next(tot_program()).startswith(PROPOSE_HEADER)
    True
    """
    root = tuple(sorted(Fraction(n) for n in numbers))
    evaluated = 0

    def children(state: tuple[Fraction, ...]) -> Generator[str, str, list]:
        """Propose, keep the valid thoughts, value each: [(value, step, numbers), ...]."""
        nonlocal evaluated
        reply = yield PROPOSE_HEADER + f"Input: {_fmt(state)}\nPossible next steps:\n"
        out: list[tuple[float, str, tuple[Fraction, ...]]] = []  # (value, step, numbers left)
        for line in reply.split("\n"):
            left = parse_step(line, state)
            if left is None or any(left == c[2] for c in out):
                continue
            judgement = yield VALUE_HEADER + f"Numbers: {_fmt(left)}\nEvaluation:"
            words = judgement.strip().split()
            evaluated += 1
            out.append((VALUES.get(words[-1].lower() if words else "", 0.0), line.strip(), left))
        return sorted(out, key=lambda c: -c[0])  # stable: ties keep the proposal order

    if search == "bfs":
        frontier: list[tuple[tuple[str, ...], tuple[Fraction, ...]]] = [((), root)]
        for _ in range(len(root) - 1):
            scored = []
            for path, state in frontier:
                for value, step, left in (yield from children(state)):
                    scored.append((value, path + (step,), left))
            scored.sort(key=lambda c: -c[0])
            frontier = [(path, left) for _, path, left in scored[:breadth]]
        for path, state in frontier:
            if state == (Fraction(24),):
                return TotResult(path, evaluated)
        return TotResult(None, evaluated)

    # DFS: best child first, children judged impossible pruned, backtrack on dead ends.
    stack: list[tuple[tuple[str, ...], tuple[Fraction, ...]]] = [((), root)]
    while stack:
        path, state = stack.pop()
        if len(state) == 1:
            if state == (Fraction(24),):
                return TotResult(path, evaluated)
            if revisit:
                stack = [((), root)]  # the planted bug: back to the root, not the sibling
            continue
        kids = [
            (p, left) for v, p, left in (yield from children(state)) if v > VALUES["impossible"]
        ]
        if not kids and revisit:
            stack = [((), root)]
            continue
        stack += [(path + (step,), left) for step, left in reversed(kids)]
    return TotResult(None, evaluated)


def machine(
    numbers: tuple[int, ...] = TOY_NUMBERS,
    *,
    search: str = "bfs",
    breadth: int = 1,
    revisit: bool = False,
) -> HarnessMachine:
    """The Tree-of-Thoughts machine on a Game-of-24 puzzle (default: 4 6 8 9, BFS, breadth 1).

    ``search`` is ``"bfs"`` or ``"dfs"``; ``revisit=True`` builds the planted-bug variant.

    >>> machine(search="dfs").name
    'tot-dfs'
    >>> machine(search="beam")
    Traceback (most recent call last):
      ...
    agentic_machines.errors.InvalidArgument: search must be 'bfs' or 'dfs', got 'beam'
    """
    if search not in ("bfs", "dfs"):
        raise InvalidArgument(f"search must be 'bfs' or 'dfs', got {search!r}")
    if not isinstance(breadth, int) or isinstance(breadth, bool) or breadth < 1:
        raise InvalidArgument(f"breadth must be an integer >= 1, got {breadth!r}")
    if len(numbers) < 2 or not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
        raise InvalidArgument(f"numbers must be two or more integers, got {numbers!r}")
    return recorded_machine(
        "tot.machine",
        tot_program,
        f"tot-{search}" + ("+revisit" if revisit else ""),
        ["numbers"],
        dict(
            numbers=tuple(numbers),
            search=search,
            breadth=breadth,
            revisit=revisit,
        ),
    )


def scripted_model() -> ScriptedModel:
    """A model that solves 4 6 8 9 with BFS of breadth 1: 9 - 8 = 1, 4 * 6 = 24, 24 * 1 = 24.

    >>> scripted_model().complete("any") == SCRIPT[0]
    True
    """
    return scripted(SCRIPT)


def successor_invariant(prompt: str, successor_prompt: str) -> bool:
    """The proved successor-prompt invariant of Tree of Thoughts (``proofs/tot_invariant.md``).

    >>> p = machine().prompt(initial)
    >>> successor_invariant(p, VALUE_HEADER + "Numbers: 1 4 6\\nEvaluation:")
    True
    >>> successor_invariant(p, VALUE_HEADER + "Numbers: 1 24\\nEvaluation:")
    False
    """
    k, k2 = numbers_shown(prompt), numbers_shown(successor_prompt)
    return k is not None and k2 is not None and k2 >= k - 1


def valid_completions() -> list[str]:
    """Replies of every kind: valid, invalid and duplicate steps, judgements, nonsense.

    >>> len(valid_completions())
    8
    """
    return [
        "9 - 8 = 1 (left: 1 4 6)",
        "9 - 8 = 2 (left: 2 4 6)",
        "4 * 6 = 24 (left: 8 9 24)\n4 * 6 = 24 (left: 8 9 24)",
        "6 / 4 = 1.5 (left: 1.5 8 9)",
        "sure",
        "impossible",
        "likely\nimpossible",
        "24 (left: 24)",
    ]


def diagram_completions(prompt: str) -> list[str]:
    """A small alphabet for diagrams: at a propose prompt the scripted proposals of that
    level; at a value prompt ``sure`` and ``impossible``.

    >>> diagram_completions(VALUE_HEADER + "Numbers: 1 4 6\\nEvaluation:")
    ['sure', 'impossible']
    """
    if prompt.startswith(VALUE_HEADER):
        return ["sure", "impossible"]
    level = {4: 0, 3: 3, 2: 6}.get(numbers_shown(prompt) or 0)
    return [SCRIPT[level]] if level is not None else []


ANALYSIS = InvariantAnalysis(
    name="tot",
    build=machine,
    program=tot_program,
    proof="proofs/tot_invariant.md",
    covers=(
        "machines built by tot.machine() with revisit=False (any numbers, search bfs or dfs, "
        "any breadth), whose harness is the stock tot_program"
    ),
    uncovered=lambda o: None if not o["revisit"] else "revisit=True plants a search that restarts",
    # the scripted proposals with short judgements: a path the diagrams draw too
    deep_script=(SCRIPT[0], "sure", "impossible", SCRIPT[3]),
    invariant=successor_invariant,
    invariant_text=INVARIANT_TEXT,
    sample=completion_sampler(valid_completions, SCRIPT),
)
"""What ``proofs/tot_invariant.md`` is about: :func:`analysis` refutes only inside it."""


def analysis(m: HarnessMachine | None = None, *, seed: int = 0, n: int = 150) -> Verdict:
    """Is the initial state of Tree of Thoughts an SPE state? Refuted by F2 at the value
    prompt of a two-number state (conditional on ``proofs/tot_invariant.md``).

    >>> v = analysis(n=60)
    >>> v.status, v.method, v.conditional
    ('refuted', 'fact:F2', True)
    >>> analysis(machine(search="dfs"), n=60).status
    'refuted'
    """
    return ANALYSIS.analysis(m, seed=seed, n=n)


def embeds_react(m: HarnessMachine | None = None, *, seed: int = 0, n: int = 60) -> Verdict:
    """Does ReAct's machine embed into Tree of Thoughts? Refuted by prompts: every prompt
    starts with the propose or the value header (``proofs/tot_invariant.md``).

    >>> embeds_react().status
    'refuted'
    """
    from . import react  # lazy: importing this architecture must not load react

    return ANALYSIS.refute_embedding(
        react.machine(),
        react.initial,
        m,
        allowed=lambda _, p: p.startswith((PROPOSE_HEADER, VALUE_HEADER)),
        allowed_text="every prompt of Tree of Thoughts starts with the propose or the value header",
        seed=seed,
        n=n,
        scripts=[(), SCRIPT[:1]],
    )
