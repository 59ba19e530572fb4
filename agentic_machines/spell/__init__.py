"""Spell: the self-programming language of the SPE paper, as a dialect of our Lisp.

In Spell the model's completion *is* the program. A turn shows the model an open
program prefix; the model writes the rest; the runtime closes the parentheses, parses,
and evaluates the whole text in a fresh environment. The program decides what happens
next: its trailing form may call the model again (``!llm-self``), call tools, or stop.

>>> from agentic_machines.spell import SpellMachine, ToolEnvironment, run_text
>>> run_text("(quine self (pr-str self))")
'(quine self (pr-str self))'
>>> env = ToolEnvironment({"add": lambda a, b: a + b})
>>> m = SpellMachine(env, task="Add 2 and 3 with the tool.")
>>> m.harness(m.initial, "'(add 2 3)"), m.last_record.value, env.calls["add"]
(1, 5, 1)

The differences from the paper's Spell (syntax, effect boundary, turns, error recovery,
fuel, what is not modelled) are listed in ``docs/reference/spell.md``.
"""

from ..errors import UnboundEffect
from .edits import MARKERS, apply_edits
from .evaluator import (
    EMPTY_ENV,
    Boundary,
    Builtin,
    Env,
    SpellFn,
    World,
    run_text,
)
from .spell_machine import (
    RETRY_BUDGET,
    NaiveMachine,
    SpellMachine,
    SpellRecord,
    SpellRun,
    ToolEnvironment,
    recovery_for_error,
    recovery_for_parse,
    run_spell,
    seed_program,
)
from .text import balance, pr_str, reopen, wrap_cat
from .turns import turn_kind

__all__ = [
    "SpellMachine",
    "NaiveMachine",
    "ToolEnvironment",
    "World",
    "Boundary",
    "SpellFn",
    "Builtin",
    "Env",
    "EMPTY_ENV",
    "SpellRecord",
    "SpellRun",
    "run_spell",
    "run_text",
    "seed_program",
    "recovery_for_error",
    "recovery_for_parse",
    "RETRY_BUDGET",
    "apply_edits",
    "MARKERS",
    "balance",
    "pr_str",
    "reopen",
    "wrap_cat",
    "turn_kind",
    "UnboundEffect",
]
