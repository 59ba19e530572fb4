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

Differences from the paper's Spell (which is embedded in Clojure):

- **Syntax.** Our reader's: lists only (no ``[...]`` vectors or ``{...}`` maps, so
  ``let`` is ``(let ((x 1)) ...)``, parameter lists are ``(x y)``, an empty history is
  ``nil``), ``#t``/``#f`` (also ``true``/``false``), no keywords, no namespaces
  (``str``, ``join``, ``split-lines`` ... are plain builtins). ``conj`` appends at the end.
  ``nil`` and ``#f`` are false in ``if``, as in Clojure.
- **Effect boundary.** Effects (names beginning with ``!``, ``leaf-llm``, and the
  environment's tools) are bound only while the outer ``eval`` of a top-level
  ``(quine name ... (eval X))`` evaluates its trailing form, and in the functions that
  form calls (scope is dynamic). An ``eval`` nested anywhere else binds nothing new.
- **Turn semantics are emergent.** One ``!`` call in the trailing form is one new turn;
  none ends the program; two or more run one after the other, each a child session
  (the synchronous fork). :func:`turn_kind` classifies a trailing form statically.
- **``!spell-eval``**: the runtime's core evaluator ``spell-eval`` as an effect builtin:
  ``(!spell-eval "<program>")`` runs a program text as a child session in a fresh, empty
  environment (the second half of a self-call, with the text given instead of asked of
  the model). The original's explicit environment argument is left out: the runtime
  always passes the empty one. The loader of :mod:`.loader` uses it for nested children.
- **``!llm-self`` on a plain prompt** (text that does not begin with ``(``) first wraps
  it with ``wrap-cat``, so every self-call prompt is an open program.
- **``(!call-now name expression limit)``** cuts the injected value to ``limit``
  characters (a string, or the printed value), with ``... + [N chars...]`` after it: the
  limit form of the paper's ``!call-now``, whose exact cut the sources do not give.
- **``!peek``** appends ``(prune k)`` with k = the number of bindings + 1 (the newer
  documentation's ``(prune 2)`` for one binding), so the next ``!extend`` removes the
  request and the injected bindings unless ``persist`` kept a slice.
- **Error recovery.** Evaluation errors always use the three-form recovery (no separate
  in-``do`` ``_error`` variant); the fresh wrapper carries the failed program's leading
  strings (its task text), so ``(prune 2)`` does not take the task away with the failed
  form. The retry budget (2) is counted in the visible program:
  the recovery form carries its attempt number, and pruning it resets the count. Past
  the budget the session halts with the error.
- **Fuel.** A harness call has a step budget; running out raises
  :class:`~agentic_machines.errors.Undecided`. There is no cycle detection (states are
  not canonical), so the machine never reports divergence (``DIVERGE``) itself.
- **Not modelled** (docs/sources.md says why): transports, namespaces and gating tiers, agents/inboxes/futures,
  ``!compact``, ``!print``, ``!describe``, ``stored`` values, ``expand``, macros, and
  deterministic namespace fix-up.
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
