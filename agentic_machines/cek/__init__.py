"""The CEK agentic evaluator (``docs/design.md``): a small Lisp whose ``llm`` calls are the
boundary states of an agentic machine, and the executable SPE theorem.

>>> from agentic_machines.cek import evaluate, seed_state, loader, first_boundary, AgenticEvaluator
>>> evaluate("(let ((x 20)) (+ x 22))")
42
>>> beta = first_boundary('(string-append "Dear " (llm "name?"))')
>>> AgenticEvaluator().harness(seed_state(), loader(beta)) == beta
True
"""

from ..errors import EvaluationError, MalformedProgram, ParseError, ProgramDiverged, Undecided
from .evaluator import (
    AgenticEvaluator,
    ProgramRun,
    RunRecord,
    evaluate,
    first_boundary,
    run_program,
)
from .machine import Boundary, step
from .printer import reify, unparse
from .reader import parse
from .realize import Realization, react_toy, realize, realize_react_toy, realize_with
from .stepper import show_state, start_state
from .theorem import loader, seed_program, seed_state

__all__ = [
    "parse",
    "unparse",
    "evaluate",
    "run_program",
    "ProgramRun",
    "RunRecord",
    "AgenticEvaluator",
    "Boundary",
    "first_boundary",
    "start_state",
    "step",
    "show_state",
    "seed_program",
    "seed_state",
    "loader",
    "reify",
    "realize",
    "realize_with",
    "realize_react_toy",
    "react_toy",
    "Realization",
    "ParseError",
    "MalformedProgram",
    "EvaluationError",
    "ProgramDiverged",
    "Undecided",
]
