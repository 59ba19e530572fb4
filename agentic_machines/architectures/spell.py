"""Spell as an architecture: the Spell runtime, and the naive harness it replaces.

Source: the SPE paper's language half (Spell); the language is
:mod:`agentic_machines.spell`, whose docstring lists the differences from the paper.

The default environment has three counted tools (``read-file``, ``list-files``,
``send-email``) and the task "email the first line of todo.txt to Ada". Two machines run
on it:

- :func:`machine`: the Spell runtime (:class:`~agentic_machines.spell.SpellMachine`).
  Its initial state is the first self-call of the seed program
  ``(quine completion (eval (do "task" '(!llm-self (reopen completion)))))``.
- :func:`naive_machine`: the same tools under a harness that appends each completion
  to the program and re-runs all of it (:class:`~agentic_machines.spell.NaiveMachine`).

The SPE verdicts (:func:`analysis`, :func:`naive_analysis`):

- Spell, "is the initial state an SPE state?" (:func:`analysis`, the question every
  architecture answers): holds. Every state is loaded from the initial state by one
  completion, a quoted form that rebuilds the waiting frames and makes the same call
  (:func:`agentic_machines.spell.loader.loader`; for a top-level state simply
  ``'(!llm-self "<its prefix>")``); a child waiting inside its own computation is
  rebuilt as a child program run by ``!spell-eval``, Spell's evaluator as a builtin,
  which starts it in a fresh environment exactly as a turn boundary does. The identity
  embedding with this loader is checked on the states reached by a sample of
  completions, nested children included (method ``sampled``); ``proofs/spell_loader.md``
  proves the loader equation for every state.
- Naive: every successor prompt strictly extends the current one (the harness only
  appends), so by F2 the initial state is not an SPE state
  (``proofs/spell_naive_obstruction.md``), property-tested on seeded completions.

>>> m = machine()
>>> s = m.harness(initial, SCRIPT[0])
>>> m.harness(s, SCRIPT[1]), m.last_record.value
(1, 'sent to ada@example.com: buy milk')
"""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING

from ..embedding import identity
from ..generation import is_spe_state, prompt_obstruction
from ..spell import NaiveMachine, SpellMachine, ToolEnvironment
from ..spell.evaluator import Boundary
from ..spell.loader import loader as spell_loader
from ..verdict import Verdict
from ._invariants import scripted, states_within, strictly_extends

if TYPE_CHECKING:
    from ..runtime.local_models import ScriptedModel

__all__ = [
    "machine",
    "naive_machine",
    "initial",
    "environment",
    "TASK",
    "SCRIPT",
    "NAIVE_SCRIPT",
    "FILES",
    "scripted_model",
    "loader",
    "sample_states",
    "SAMPLE_COMPLETIONS",
    "naive_completions",
    "analysis",
    "naive_analysis",
    "diagram_completions",
    "contrast_extras",
]

TASK = "Read todo.txt and email its first line to ada@example.com."
"""The default task."""

FILES = {"todo.txt": "buy milk\ncall Bob", "notes.txt": "the meeting moved to Tuesday"}
"""The files of the default environment."""


def environment() -> ToolEnvironment:
    """A fresh default environment: three tools, every call counted.

    >>> env = environment()
    >>> env.call("list-files", ()), env.total_calls
    (<list ("notes.txt" "todo.txt")>, 1)
    """

    def read_file(path: str) -> str:
        return FILES.get(path, f"no such file: {path}")

    return ToolEnvironment(
        {
            "read-file": read_file,
            "list-files": lambda: sorted(FILES),
            "send-email": lambda to, body: f"sent to {to}: {body}",
        }
    )


SCRIPT: tuple[str, ...] = (
    ' \'(!call-now todo (read-file "todo.txt"))',
    ' \'(send-email "ada@example.com" (first (split-lines todo)))',
)
"""Two turns: read the file (the result is materialised into the program), then send."""

NAIVE_SCRIPT: tuple[str, ...] = (
    '(def todo (read-file "todo.txt"))',
    '(send-email "ada@example.com" (first (split-lines todo)))',
    "",
)
"""The same task for the naive harness (the empty completion ends the session)."""


def machine(env: ToolEnvironment | None = None) -> SpellMachine:
    """The Spell runtime on the default environment and task.

    >>> machine().name
    'spell'
    """
    return SpellMachine(env if env is not None else environment(), task=TASK)


def naive_machine(env: ToolEnvironment | None = None) -> NaiveMachine:
    """The concatenate-and-re-run harness on the default environment and task.

    >>> naive_machine().prompt(naive_machine().initial)
    ';; Read todo.txt and email its first line to ada@example.com.\\n'
    """
    return NaiveMachine(env if env is not None else environment(), task=TASK)


initial: Boundary = machine().initial
"""The initial state of :func:`machine`: the seed program's first self-call."""


def scripted_model() -> ScriptedModel:
    """A scripted model that solves the default task on :func:`machine`.

    >>> scripted_model().complete(machine().prompt(initial)) == SCRIPT[0]
    True
    """
    return scripted(SCRIPT)


def loader(state: Boundary) -> str:
    """The completion that loads ``state`` from :data:`initial` (see :mod:`agentic_machines.spell.loader`).

    >>> m = machine()
    >>> s = m.harness(initial, SCRIPT[0])
    >>> m.harness(initial, loader(s)) == s
    True
    """

    return spell_loader(state)


SAMPLE_COMPLETIONS: tuple[str, ...] = (
    *SCRIPT,
    " '(!extend)",
    ' (def x 1) (think "plan" 2) \'(!extend)',
    " '(!peek files (list-files))",
    " (prune) '(!extend)",
    ' \'(leaf-llm "Say a word.")',
    ' \'(list (!llm-self "a") (!llm-self "b"))',
    ' \'(!llm-self (wrap-cat "fresh context"))',
    " '(car nil)",
    ' "unterminated',
    " '(+ 1 2)",
    ' (defn f (x) (str x "!")) \'(f (!llm-self "inner"))',
    ' \'(if (= 1 1) (list 1 (!llm-self "deep")) 2)',
    ' \'(let ((a (leaf-llm "word?"))) (str a a))',
    ' \'(!call-now a 1 b (!llm-self "child") c 3)',
    ' \'(list 0 (!spell-eval "(quine completion (eval (do (def k 1) \'(list k (!llm-self \\"nested\\")))))"))',
    "",
)
"""Completions used to reach sample states and to check commutation."""


def sample_states(depth: int = 2) -> list[Boundary]:
    """States reached from :data:`initial` by up to ``depth`` sample completions:
    top-level calls, children waited on by a caller, and children waiting inside their
    own computation (nested sessions).

    >>> len(sample_states(depth=1)) > 5
    True
    """
    return states_within(machine(), [initial], SAMPLE_COMPLETIONS, depth)


@functools.lru_cache(maxsize=4)  # the contrast table and the CLI may ask more than once
def analysis(depth: int = 2) -> Verdict:
    """Is the initial state an SPE state? Holds, sampled: the identity embedding with the
    frame-rebuilding loader, checked on every state reached by up to ``depth`` sample
    completions, nested children included; ``proofs/spell_loader.md`` proves the loader
    equation for every state.

    The loader (:func:`loader`) rebuilds a state's waiting frames as source, and a child
    session waiting inside its own computation as a child program started by
    ``!spell-eval`` (a fresh environment, as at a turn boundary). The naive re-run
    harness's refutation is kept in ``details["naive_machine"]``, so one call gives both
    sides of the contrast.

    >>> v = analysis(depth=1)
    >>> v.status, v.method, v.details["naive_machine"].status
    ('holds', 'sampled', 'refuted')
    """

    m = machine()
    states = sample_states(depth)
    waited_on = sum(1 for s in states if s.depth == 1)
    nested = sum(1 for s in states if s.depth >= 2)
    v = is_spe_state(
        m,
        initial,
        embedding=identity(m),
        loader=loader,
        states=states,
        completions=list(SAMPLE_COMPLETIONS),
    )
    coverage = (
        f"{len(states)} states reached by up to {depth} sample completions: "
        f"{len(states) - waited_on - nested} top-level, {waited_on} children waited on by "
        f"a caller, {nested} children waiting inside their own computation (nested sessions)"
    )
    details = {
        **dict(v.details),
        "states_checked": len(states),
        "nested_states": nested,
        "coverage": coverage,
        "proof": "proofs/spell_loader.md",
        "naive_machine": naive_analysis(),
    }
    claim = "the initial Spell state is an SPE state"
    if v.witness is None:
        return dataclasses.replace(v, claim=claim, details=details)
    witness = dataclasses.replace(
        v.witness,
        description=(
            "identity embedding with the frame-rebuilding loader of proofs/spell_loader.md "
            f"(nested sessions rebuilt with !spell-eval): h(x0, loader(s)) = s checked on {coverage}"
        ),
    )
    return dataclasses.replace(v, claim=claim, witness=witness, details=details)


def naive_completions(n: int = 60, seed: int = 0) -> list[str]:
    """Seeded completions for the naive machine's invariant test (at least 50).

    >>> len(naive_completions())
    60
    """
    from ..checking.sampling import completion_sample  # lazy: imports hypothesis

    valid = list(NAIVE_SCRIPT) + [
        "(list-files)",
        '(def n (read-file "notes.txt"))',
        "(car nil)",
        "((",
        "(def x 1) (def y 2)",
        "; only a comment",
    ]
    return completion_sample(valid, seed=seed, n=n, huge=1, huge_size=2000)


def naive_analysis(n: int = 60) -> Verdict:
    """Is the naive harness's initial state an SPE state? Refuted by F2.

    >>> v = naive_analysis()
    >>> v.status, v.method, v.checked >= 50
    ('refuted', 'fact:F2', True)
    """

    m = naive_machine()
    return prompt_obstruction(
        m,
        m.initial,
        m,
        m.initial,
        invariant=strictly_extends,
        invariant_text="the successor's prompt strictly extends the current prompt",
        proof="proofs/spell_naive_obstruction.md",
        completions=naive_completions(n),
    )


def diagram_completions(prompt: str) -> list[str]:
    """A small completion alphabet for diagrams: the scripted steps and a halting answer.

    >>> diagram_completions("")[-1]
    " '(+ 1 2)"
    """
    return [*SCRIPT, " '(+ 1 2)"]


def contrast_extras() -> list[tuple[str, str, Verdict, str]]:
    """Rows for the contrast table beside Spell's own SPE row: the naive harness's obstruction.

    >>> [(name, v.status) for name, _, v, _ in contrast_extras()]
    [('spell-naive', 'refuted')]
    """
    return [
        (
            "spell-naive",
            "naive re-run harness: initial state SPE?",
            naive_analysis(),
            "F2: prompts only grow (proofs/spell_naive_obstruction.md)",
        ),
    ]
