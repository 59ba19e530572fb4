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

The SPE verdicts (:func:`analysis`, :func:`loader_analysis`, :func:`naive_analysis`):

- Spell, "is the initial state an SPE state?" (:func:`analysis`, the question every
  architecture answers): undecided. The loader below covers part of the machine, and
  no embedding is known for the rest.
- Spell, restricted (:func:`loader_analysis`): every state whose waiting frames belong to one program (a top-level model
  call, or a child session whose caller waits for it) is loaded from the initial state
  by one completion, a quoted form that rebuilds the frames and makes the same call
  (:func:`agentic_machines.spell.loader.loader`; for a top-level state simply
  ``'(!llm-self "<its prefix>")``): the identity embedding with this loader, checked on
  a sample of states (``proofs/spell_loader.md`` proves it for all of them). A child
  that itself waits inside its own computation is not claimed: its fresh environment
  cannot be rebuilt inside its caller's (turn-boundary isolation).
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

from ..spell import NaiveMachine, SpellMachine, ToolEnvironment
from ..spell.evaluator import Boundary
from ..verdict import Verdict

if TYPE_CHECKING:
    from ..runtime.models import ScriptedModel

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
    "loader_analysis",
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
    from ..runtime.models import ScriptedModel

    return ScriptedModel(SCRIPT)


def loader(state: Boundary) -> str:
    """The completion that loads ``state`` from :data:`initial` (see :mod:`agentic_machines.spell.loader`).

    >>> m = machine()
    >>> s = m.harness(initial, SCRIPT[0])
    >>> m.harness(initial, loader(s)) == s
    True
    """
    from ..spell.loader import loader as spell_loader

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
    "",
)
"""Completions used to reach sample states and to check commutation."""


def sample_states(depth: int = 2) -> list[Boundary]:
    """Loadable states (top-level, or a child whose caller is one waiting program)
    reached from :data:`initial` by up to ``depth`` sample completions.

    >>> len(sample_states(depth=1)) > 5
    True
    """
    from ..spell.loader import is_loadable

    m = machine()
    seen: dict[Boundary, None] = {initial: None}
    frontier = [initial]
    for _ in range(depth):
        nxt = []
        for s in frontier:
            for c in SAMPLE_COMPLETIONS:
                y = m.harness(s, c)
                if type(y) is Boundary and is_loadable(y) and y not in seen:
                    seen[y] = None
                    nxt.append(y)
        frontier = nxt
    return list(seen)


def analysis(depth: int = 2) -> Verdict:
    """Is the initial state an SPE state? Undecided: the loader covers only part of it.

    The frame-rebuilding loader (:func:`loader_analysis`, ``proofs/spell_loader.md``)
    loads every state of one waiting program from the initial state, but the set of
    those states is not closed under the harness: a child session whose own trailing
    form waits on a grandchild (``'(list 1 (!llm-self "child"))`` then ``'(list 2
    (!llm-self "grandchild"))``) is reachable and is not loaded by it, and no other
    embedding of the machine into the initial state's successors is known. So the
    answer to the architecture question is undecided, with the partial certificate in
    ``details["loader"]`` and the naive re-run harness's refutation in
    ``details["naive_machine"]``.

    >>> v = analysis(depth=1)
    >>> v.status, v.details["loader"].status, v.details["naive_machine"].status
    ('undecided', 'holds', 'refuted')
    """
    part = loader_analysis(depth)
    return Verdict(
        holds=None,
        claim="the initial Spell state is an SPE state",
        method=part.method,
        checked=part.checked,
        reason=(
            "the loader of proofs/spell_loader.md loads every state of one waiting program "
            f"(sampled on {part.details['states_checked']} states); a child waiting inside "
            "its own computation is reachable but not loaded, and no other embedding is known"
        ),
        details={
            "loader": part,
            "naive_machine": part.details["naive_machine"],
            "proof": "proofs/spell_loader.md",
        },
    )


@functools.lru_cache(maxsize=4)  # the contrast table asks twice (its row and the extras)
def loader_analysis(depth: int = 2) -> Verdict:
    """Does the initial state load every loadable Spell state? Holds, sampled.

    Loadable: a top-level model call, or a child session whose waiting frames all
    belong to its caller's program (``proofs/spell_loader.md``). The verdict of the
    naive re-run harness (:func:`naive_analysis`) is kept in ``details["naive_machine"]``,
    so that one call gives both sides of the contrast.

    >>> v = loader_analysis(depth=1)
    >>> v.status, v.method, v.details["naive_machine"].status
    ('holds', 'sampled', 'refuted')
    """
    from ..embedding import identity
    from ..generation import is_spe_state

    m = machine()
    states = sample_states(depth)
    v = is_spe_state(
        m,
        initial,
        embedding=identity(m),
        loader=loader,
        states=states,
        completions=list(SAMPLE_COMPLETIONS),
    )
    claim = (
        "the initial Spell state loads, with one completion, every state whose waiting "
        "frames belong to one program (top-level calls, and children of one waiting caller)"
    )
    details = {
        **dict(v.details),
        "states_checked": len(states),
        "proof": "proofs/spell_loader.md",
        "naive_machine": naive_analysis(),
    }
    if v.witness is None:
        return dataclasses.replace(v, claim=claim, details=details)
    witness = dataclasses.replace(
        v.witness,
        description=(
            "identity embedding with the frame-rebuilding loader of proofs/spell_loader.md: "
            f"h(x0, loader(s)) = s checked on {len(states)} states "
            f"({sum(1 for s in states if s.kont)} of them waited on by a caller)"
        ),
    )
    return dataclasses.replace(v, claim=claim, witness=witness, details=details)


def naive_completions(n: int = 60, seed: int = 0) -> list[str]:
    """Seeded completions for the naive machine's invariant test (at least 50).

    >>> len(naive_completions())
    60
    """
    from .sampling import completion_sample

    valid = list(NAIVE_SCRIPT) + [
        "(list-files)",
        '(def n (read-file "notes.txt"))',
        "(car nil)",
        "((",
        "(def x 1) (def y 2)",
        "; only a comment",
    ]
    return completion_sample(valid, seed=seed, n=n, huge=1, huge_size=2000)


def _strictly_extends(p: str, q: str) -> bool:
    return len(q) > len(p) and q.startswith(p)


def naive_analysis(n: int = 60) -> Verdict:
    """Is the naive harness's initial state an SPE state? Refuted by F2.

    >>> v = naive_analysis()
    >>> v.status, v.method, v.checked >= 50
    ('refuted', 'fact:F2', True)
    """
    from ..generation import prompt_obstruction

    m = naive_machine()
    return prompt_obstruction(
        m,
        m.initial,
        m,
        m.initial,
        invariant=_strictly_extends,
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
    """Rows for the contrast table beside Spell's own (undecided) SPE row: the loader
    verdict on the states of one waiting program, and the naive harness's obstruction.

    >>> [(name, v.status) for name, _, v, _ in contrast_extras()]
    [('spell', 'holds'), ('spell-naive', 'refuted')]
    """
    return [
        (
            "spell",
            "initial state loads every state of one waiting program?",
            loader_analysis(),
            "identity + frame-rebuilding loader (proofs/spell_loader.md)",
        ),
        (
            "spell-naive",
            "naive re-run harness: initial state SPE?",
            naive_analysis(),
            "F2: prompts only grow (proofs/spell_naive_obstruction.md)",
        ),
    ]
