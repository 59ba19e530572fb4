"""Running CEK programs: ordinary runs, and the agentic evaluator X_SPE.

- :func:`evaluate` runs a program to its value, asking ``model`` at each ``llm`` call.
- :func:`run_program` runs a program with a list of scripted completions and reports
  the value, the boundary states passed and the error, without raising (for the CLI).
- :func:`first_boundary` is the first boundary state of a program (or ``HALT`` /
  ``DIVERGE``).
- :class:`AgenticEvaluator` is the agentic machine whose states are boundary states:
  p(β) is β's prompt, h(β, c) resumes β with the string ``c`` and runs to the next
  boundary, ``HALT`` (normal end *or* run-time error, kept in the run record), or
  ``DIVERGE`` (a repeated state, detected exactly); when the fuel runs out first it
  raises :class:`~agentic_machines.errors.Undecided`.

>>> ev = AgenticEvaluator()
>>> b = first_boundary('(string-append "Hello, " (llm "name?"))')
>>> ev.prompt(b), ev.harness(b, "Ada"), ev.last_record.value
('name?', 1, 'Hello, Ada')
>>> ev.harness(b, "Bob"), ev.last_record.value
(1, 'Hello, Bob')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._text import ending_line
from ..errors import (
    AgenticMachinesError,
    EvaluationError,
    MalformedProgram,
    ParseError,
    ProgramDiverged,
    ScriptExhausted,
    Undecided,
    WrongType,
)
from ..machine import DIVERGE, HALT, AgenticMachine, Outcome
from .expr import Expr, compile_program
from .fast import run
from .machine import HALT_K, Boundary, Cycle, Eval, Failed, Halted, Ret
from .printer import unparse
from .reader import parse_program

__all__ = [
    "DEFAULT_FUEL",
    "HARNESS_FUEL",
    "evaluate",
    "first_boundary",
    "run_program",
    "ProgramRun",
    "RunRecord",
    "AgenticEvaluator",
    "start_state",
]

DEFAULT_FUEL = 10_000_000
"""Steps allowed to :func:`evaluate` and :func:`run_program` (all segments together)."""

HARNESS_FUEL = 1_000_000
"""Steps allowed to one harness call h(β, c) of :class:`AgenticEvaluator`."""


def start_state(program: str | Any) -> Eval:
    """The initial CEK state of a closed program (text, datum or compiled expression).

    Raises ``ParseError`` or ``MalformedProgram`` when the program is not well formed.

    >>> start_state("(+ 1 2)")
    Eval(<App (+ 1 2)>, depth=0)
    """
    if isinstance(program, Expr):
        expr = program
        if expr.fv:
            raise MalformedProgram(f"unbound variable `{expr.fv[0]}`: a program must be closed")
    elif isinstance(program, str):  # one form, or several: (define ...) forms first
        expr = compile_program(parse_program(program))
    else:
        expr = compile_program(program)
    return Eval(expr, (), HALT_K)


def evaluate(program: str | Any, model: Any = None, *, fuel: int = DEFAULT_FUEL) -> Any:
    """Run ``program`` and return its value; ask ``model.complete(prompt)`` at each ``llm`` call.

    Raises ``ParseError``/``MalformedProgram`` for a bad program, ``EvaluationError``
    for a run-time error, ``ProgramDiverged`` when a state repeats (the program loops),
    and ``Undecided`` when ``fuel`` steps pass without an answer.

    >>> evaluate("(letrec ((f (lambda (n) (if (< n 2) n (+ (f (- n 1)) (f (- n 2))))))) (f 10))")
    55
    >>> evaluate('(car nil)')
    Traceback (most recent call last):
      ...
    agentic_machines.errors.EvaluationError: car: expected a non-empty list, got nil
    """
    state: Any = start_state(program)
    left = fuel
    while True:
        outcome, steps = run(state, fuel=left)
        left -= steps
        # ``type(outcome) is X`` written out lets the type checker narrow ``outcome``.
        if type(outcome) is Halted:
            return outcome.value
        if type(outcome) is Failed:
            raise outcome.error
        if type(outcome) is Cycle:
            raise ProgramDiverged(
                f"the program loops forever: its state repeated with period {outcome.period}; "
                "check the base case of its recursion"
            )
        assert type(outcome) is Boundary  # run's only other outcome
        if model is None:
            raise EvaluationError(
                f"the program called (llm {unparse(outcome.prompt)}) but no model was given; "
                "pass model=ScriptedModel([...]) or any object with complete(prompt) -> str"
            )
        completion = model.complete(outcome.prompt)
        if not isinstance(completion, str):
            raise EvaluationError(
                f"the model returned {type(completion).__name__}, not a string (C = str)"
            )
        state = Ret(completion, outcome.kont)


def _outcome(result: Any) -> Outcome:
    t = type(result)
    if t is Boundary:
        return result
    if t is Cycle:
        return DIVERGE
    return HALT


def first_boundary(program: str | Any, *, fuel: int = HARNESS_FUEL) -> Outcome:
    """The first boundary state of a closed program, or ``HALT`` (it ends, normally or
    with a run-time error, before any ``llm`` call) or ``DIVERGE`` (it loops first).

    Raises ``ParseError``/``MalformedProgram`` for a bad program and ``Undecided``
    when ``fuel`` runs out.

    >>> first_boundary('(begin (llm "a") (llm "b"))').prompt
    'a'
    >>> first_boundary("(+ 1 2)")
    1
    """
    result, _ = run(start_state(program), fuel=fuel)
    return _outcome(result)


@dataclass(frozen=True)
class ProgramRun:
    """What :func:`run_program` saw: ``value`` (``None`` if the run did not end normally),
    ``boundaries`` (the boundary states passed, in order), ``error`` (the exception that
    stopped the run, or ``None``), ``steps`` (CEK steps taken).

    >>> print(run_program('(llm "q")', ["a"]).describe())
    boundary 1: (llm "q")
    value: "a"
    """

    value: Any
    boundaries: tuple[Boundary, ...]
    error: AgenticMachinesError | None
    steps: int = 0

    @property
    def ok(self) -> bool:
        """True when the program ended normally with a value."""
        return self.error is None

    def describe(self) -> str:
        """Several lines for a terminal: each boundary's prompt, then the value or the error."""
        lines = [
            f"boundary {i}: (llm {unparse(b.prompt)})" for i, b in enumerate(self.boundaries, 1)
        ]
        lines.append(ending_line(self.value, self.error, unparse))
        return "\n".join(lines)


def run_program(
    text: str, completions: Sequence[str] = (), *, fuel: int = DEFAULT_FUEL
) -> ProgramRun:
    """Run program ``text``, answering its ``llm`` calls with ``completions`` in order.

    Never raises for a bad program, a run-time error, a loop, a short script or
    exhausted fuel: the problem is in ``.error``.

    >>> r = run_program('(string-append (llm "a?") (llm "b?"))', ["x", "y"])
    >>> r.value, [b.prompt for b in r.boundaries], r.error
    ('xy', ['a?', 'b?'], None)
    >>> print(run_program("(+ 1", []).error)
    unclosed '(' opened here: add ')' to close it (line 1, column 1)
    """
    boundaries: list[Boundary] = []
    total = 0
    script = list(completions)
    try:
        state: Any = start_state(text)
        while True:
            outcome, steps = run(state, fuel=fuel - total)
            total += steps
            if type(outcome) is Halted:
                return ProgramRun(outcome.value, tuple(boundaries), None, total)
            if type(outcome) is Failed:
                # run catches only EvaluationError, MalformedProgram and ParseError into Failed.
                assert isinstance(outcome.error, AgenticMachinesError)
                return ProgramRun(None, tuple(boundaries), outcome.error, total)
            if type(outcome) is Cycle:
                diverged = ProgramDiverged(
                    f"the program loops forever: its state repeated with period {outcome.period}"
                )
                return ProgramRun(None, tuple(boundaries), diverged, total)
            assert type(outcome) is Boundary  # run's only other outcome
            boundaries.append(outcome)
            if len(boundaries) > len(script):
                exhausted = ScriptExhausted.for_program(
                    f"llm call {len(boundaries)} (prompt {unparse(outcome.prompt)})",
                    len(script),
                    outcome.prompt,
                    len(boundaries) - 1,
                )
                return ProgramRun(None, tuple(boundaries), exhausted, total)
            state = Ret(script[len(boundaries) - 1], outcome.kont)
    except (ParseError, MalformedProgram, EvaluationError, Undecided) as err:
        return ProgramRun(None, tuple(boundaries), err, total)


@dataclass(frozen=True)
class RunRecord:
    """The record of one harness call h(β, c): the formal ``outcome`` plus what the run
    returned (``value``) or the run-time error that ended it (``error``), and ``steps``.

    >>> from agentic_machines.cek.theorem import seed_state
    >>> ev = AgenticEvaluator()
    >>> ev.harness(seed_state(), "(+ 1 2)"), ev.last_record.value, ev.last_record.steps
    (1, 3, 6)
    """

    state: Boundary
    completion: str
    outcome: Any
    value: Any = None
    error: Exception | None = None
    steps: int = 0


class AgenticEvaluator(AgenticMachine):
    """The SPE machine X_SPE = (B, p, h) over the CEK evaluator.

    States are :class:`~agentic_machines.cek.machine.Boundary` states; ``fuel`` bounds
    the CEK steps of one harness call. ``last_record`` is the :class:`RunRecord` of the
    latest call (the value or error behind a ``HALT``).

    >>> from agentic_machines.cek.theorem import seed_state
    >>> ev, x = AgenticEvaluator(fuel=10_000), seed_state("go")
    >>> ev.harness(x, '(llm "next")').prompt
    'next'
    >>> ev.harness(x, "(car nil)"), ev.last_record.error
    (1, EvaluationError('car: expected a non-empty list, got nil'))
    >>> ev.harness(x, "(letrec ((f (lambda () (f)))) (f))")
    ↑
    """

    name = "spe"

    def __init__(self, fuel: int = HARNESS_FUEL, *, initial: Any = None) -> None:
        self.fuel = fuel
        self.initial = initial
        self.last_record: RunRecord | None = None

    def prompt(self, state: Boundary) -> str:
        """p(β): the evaluated prompt string of the boundary state."""
        if type(state) is not Boundary:
            raise WrongType(
                f"{state!r} is not a boundary state; states of the agentic evaluator come from first_boundary/seed_state"
            )
        return state.prompt

    def harness(self, state: Boundary, completion: str) -> Outcome:
        """h(β, c): resume β with the string ``c``; the next boundary, ``HALT`` or ``DIVERGE``.

        Raises :class:`Undecided` (and nothing else) when the fuel runs out first.
        """
        if type(state) is not Boundary:
            raise WrongType(
                f"{state!r} is not a boundary state; states of the agentic evaluator come from first_boundary/seed_state"
            )
        if type(completion) is not str:
            raise WrongType(
                f"completions are strings (C = str); got {type(completion).__name__}: pass str(completion)"
            )
        result, steps = run(Ret(completion, state.kont), fuel=self.fuel)
        self.last_record = RunRecord(
            state,
            completion,
            _outcome(result),
            value=result.value if type(result) is Halted else None,
            error=result.error if type(result) is Failed else None,
            steps=steps,
        )
        return self.last_record.outcome
