"""ReAct (HotpotQA loop) as an agentic machine.

Source: Yao et al., *ReAct* (ICLR 2023), code ``ysymyth/ReAct`` ``hotpotqa.ipynb::webthink``;
full citation in ``docs/sources.md``.

What is faithful to the paper and what is simplified: ``docs/sources.md``,
section "ReAct".

The SPE question (:func:`analysis`): every successor prompt strictly extends the
current one and its trailing step label advances by at most one
(``proofs/react_invariant.md``), so by F2 the initial state is not an SPE state.

>>> m = machine()
>>> m.prompt(initial).endswith("Question: " + TOY_QUESTION + "\\nThought 1:")
True
>>> s = m.harness(initial, " Look it up.\\nAction 1: Search[Eiffel Tower]\\nObservation 1: fake")
>>> m.prompt(s).splitlines()[-3:]
['Action 1: Search[Eiffel Tower]', 'Observation 1: The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars. It is named after the engineer Gustave Eiffel. The Eiffel Tower stands in Paris. It was the tallest structure in the world from 1889 to 1930. Locally it is nicknamed La dame de fer.', 'Thought 2:']
"""

from __future__ import annotations

import re
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .._text import before_stops
from ..runtime.harness import HarnessMachine, TraceState
from ..verdict import Verdict
from ._invariants import (
    InvariantAnalysis,
    completion_sampler,
    recorded_machine,
    scripted,
    strictly_extends,
)
from .wiki import TOY_ANSWER, TOY_PAGES, TOY_QUESTION, WikiEnv

if TYPE_CHECKING:
    from ..runtime.local_models import ScriptedModel

__all__ = [
    "machine",
    "initial",
    "react_program",
    "ReactResult",
    "scripted_model",
    "SCRIPT",
    "analysis",
    "successor_invariant",
    "INVARIANT_TEXT",
    "diagram_completions",
    "HEADER",
    "EXAMPLES",
    "TOY_QUESTION",
    "TOY_ANSWER",
]

HEADER = (
    "Answer a question by interleaving Thought, Action and Observation steps. A Thought "
    "reasons about the current situation. An Action is one of three kinds:\n"
    "(1) Search[entity]: look the entity up in the wiki and show the first paragraph of its "
    "page, or some similar titles if there is no such page.\n"
    "(2) Lookup[keyword]: show the next sentence of the current page that contains the keyword.\n"
    "(3) Finish[answer]: give the answer and end the task.\n"
    "Here is an example.\n"
)
"""The instruction header (paraphrasing the original's)."""

EXAMPLES = (
    "Question: Which city is the engineer who designed the Statue of Liberty's frame from?\n"
    "Thought 1: I need to find who designed the frame of the Statue of Liberty.\n"
    "Action 1: Search[Statue of Liberty]\n"
    "Observation 1: The Statue of Liberty is a colossal statue in New York Harbor. Its "
    "metal frame was designed by Gustave Eiffel.\n"
    "Thought 2: Gustave Eiffel designed the frame. I need to find where he was from.\n"
    "Action 2: Search[Gustave Eiffel]\n"
    "Observation 2: Gustave Eiffel was a French civil engineer born in Dijon.\n"
    "Thought 3: Gustave Eiffel was born in Dijon, so the answer is Dijon.\n"
    "Action 3: Finish[Dijon]\n"
    "\n"
)
"""One worked example, in the original's layout."""

SCRIPT: tuple[str, ...] = (
    " I need to find the city where the Eiffel Tower stands.\nAction 1: Search[Eiffel Tower]",
    " The Eiffel Tower stands in Paris. Now I need the river that flows through Paris.\n"
    "Action 2: Search[Paris]",
    " The first paragraph does not name a river. I will look up river on the page.\n"
    "Action 3: Lookup[river]",
    " The Seine flows through Paris, so the answer is the Seine.\nAction 4: Finish[Seine]",
)
"""The scripted completions that solve the default task (four model calls)."""

initial = TraceState(())
"""The initial state of :func:`machine` (no completions yet)."""

INVARIANT_TEXT = (
    "every successor prompt strictly extends the current prompt, and its trailing step "
    "label ('Thought k:' or 'Action k:') is at most one more than the current one"
)


@dataclass(frozen=True)
class ReactResult:
    """What a ReAct run returns when it halts.

    ``answer`` is the ``Finish`` argument ("" when the step limit forced ``finish[]``,
    ``None`` after a crash); ``reward`` is exact match against the gold answer;
    ``steps`` counts Thought/Action/Observation steps; ``error`` names a crash;
    ``transcript`` is the text of the finished steps as the harness wrote it (what
    Reflexion's self-reflection reads; left out of the repr and of equality).

    >>> ReactResult("Seine", 1, 4).forced
    False
    """

    answer: str | None
    reward: int
    steps: int
    forced: bool = False
    error: str = ""
    transcript: str = field(default="", repr=False, compare=False)


def react_program(
    question: str = TOY_QUESTION,
    pages: Mapping[str, str] = TOY_PAGES,
    *,
    gold: str | None = TOY_ANSWER,
    header: str = HEADER,
    examples: str = EXAMPLES,
    max_steps: int = 7,
    reset: str | None = None,
) -> Generator[str, str, ReactResult]:
    """The ReAct harness as a generator: yields prompts, receives completions.

    ``reset`` plants a bug on purpose (for the quality test of :func:`analysis`): a
    completion equal to ``reset`` throws the transcript away and starts again.

    >>> g = react_program()
    >>> next(g).endswith("Thought 1:")
    True
    """
    env = WikiEnv(pages, gold=gold)  # fresh per start: replays restart the generator
    start = header + examples + f"Question: {question}\n"
    transcript = start
    i = 1
    while i <= max_steps:
        raw = yield transcript + f"Thought {i}:"
        if reset is not None and raw.strip() == reset:
            env, transcript, i = WikiEnv(pages, gold=gold), start, 1
            continue
        reply = before_stops(raw, f"\nObservation {i}:").strip()
        parts = reply.split(f"\nAction {i}: ")
        if len(parts) == 2:
            thought, action = parts
        else:
            # The original's fallback: keep the first line, ask again for the action alone.
            thought = reply.split("\n")[0]
            raw_action = yield transcript + f"Thought {i}: {thought}\nAction {i}:"
            action = before_stops(raw_action, "\n").strip()
        if not action:
            return ReactResult(
                None,
                0,
                i,
                error="empty action (the original raises IndexError here)",
                transcript=transcript[len(start) :],
            )
        observation, done = env.step(action[0].lower() + action[1:])
        observation = observation.replace("\\n", "")
        transcript += (
            f"Thought {i}: {thought}\nAction {i}: {action}\nObservation {i}: {observation}\n"
        )
        if done:
            return ReactResult(env.answer, env.reward, i, transcript=transcript[len(start) :])
        i += 1
    env.step("finish[]")
    return ReactResult("", env.reward, max_steps, forced=True, transcript=transcript[len(start) :])


def machine(
    question: str = TOY_QUESTION,
    pages: Mapping[str, str] = TOY_PAGES,
    *,
    gold: str | None = TOY_ANSWER,
    max_steps: int = 7,
    reset: str | None = None,
) -> HarnessMachine:
    """The ReAct machine on a question and a wiki (default: the toy two-hop question).

    ``reset="RESET"`` builds the planted-bug variant used by the quality test.

    >>> machine().name
    'react'
    """
    return recorded_machine(
        "react.machine",
        react_program,
        "react" if reset is None else "react+reset",
        ["question", "pages"],
        dict(
            question=question,
            pages=pages,
            gold=gold,
            max_steps=max_steps,
            reset=reset,
        ),
    )


def scripted_model() -> ScriptedModel:
    """A :class:`~agentic_machines.runtime.local_models.ScriptedModel` that solves the default task.

    >>> scripted_model().complete(machine().prompt(initial)) == SCRIPT[0]
    True
    """
    return scripted(SCRIPT)


_LABEL = re.compile(r"(?:Thought|Action) (\d+):$")


def step_label(prompt: str) -> int | None:
    """The step number of the trailing ``Thought k:`` / ``Action k:`` label, if any.

    >>> step_label("...Observation 2: x\\nThought 3:"), step_label("no label")
    (3, None)
    """
    match = _LABEL.search(prompt)
    return int(match.group(1)) if match else None


def successor_invariant(prompt: str, successor_prompt: str) -> bool:
    """The proved successor-prompt invariant of ReAct (``proofs/react_invariant.md``).

    True iff ``successor_prompt`` strictly extends ``prompt`` and its trailing step
    label is at most one more than that of ``prompt``.

    >>> p = machine().prompt(initial)
    >>> successor_invariant(p, p + " x\\nAction 1:"), successor_invariant(p, p)
    (True, False)
    """
    if not strictly_extends(prompt, successor_prompt):
        return False
    k, k2 = step_label(prompt), step_label(successor_prompt)
    return k is not None and k2 is not None and k2 <= k + 1


def valid_completions(step: int = 1) -> list[str]:
    """Well-formed completions at step ``step``: one per action kind, plus fallbacks.

    >>> valid_completions()[0]
    ' I should search.\\nAction 1: Search[Eiffel Tower]'
    """
    actions = [
        "Search[Eiffel Tower]",
        "Search[Paris]",
        "Search[Atlantis]",
        "Lookup[river]",
        "Finish[Seine]",
        "Finish[]",
        "Think[hmm]",
        "Dance[now]",
    ]
    out = [f" I should {a.split('[')[0].lower()}.\nAction {step}: {a}" for a in actions]
    out += [
        " I am not sure what to do.",
        f" Two actions.\nAction {step}: Search[a]\nAction {step}: Search[b]",
        " Search[Paris]",
        f"\nAction {step}: ",
    ]
    return out


def diagram_completions(prompt: str) -> list[str]:
    """A small completion alphabet for diagrams: the scripted step (so the solving path
    and the obstruction state are drawn) and an unparseable reply (the fallback).

    >>> diagram_completions("... Thought 1: hm\\nAction 1:")
    [' Finish[Seine]']
    >>> diagram_completions("... Thought 2:") == [SCRIPT[1], " hmm"]
    True
    """
    k = step_label(prompt) or 1
    if prompt.endswith(f"Action {k}:"):
        return [" Finish[Seine]"]
    return ([SCRIPT[k - 1]] if k <= len(SCRIPT) else []) + [" hmm"]


def analysis(m: HarnessMachine | None = None, *, seed: int = 0, n: int = 300) -> Verdict:
    """Is the initial state of ReAct an SPE state? Refuted by F2 with a concrete state.

    The obstruction state is reached from the initial state by two scripted steps
    (``Search[Eiffel Tower]``, then ``Search[Paris]``): its prompt ends with
    ``Thought 3:``, which no successor prompt of the initial state (ending with
    ``Thought 2:`` or ``Action 1:``) can. The refutation is *conditional* on the
    invariant proved in ``proofs/react_invariant.md``, property-tested on ``n`` seeded
    completions; if it fails on one, the verdict is undecided.
    ``details["initial_state"]`` holds the same check for the initial state itself
    (its prompt is not a strict extension of itself).

    Only a machine built by :func:`machine` with ``reset=None`` is refuted (the proof's
    scope, checked by the harness code's fingerprint and the recorded options); any other
    machine is undecided, and the reason says why.

    >>> v = analysis(n=60)
    >>> v.status, v.method, v.conditional
    ('refuted', 'fact:F2', True)
    >>> analysis(machine(reset="RESET"), n=60).status
    'undecided'
    """
    return ANALYSIS.analysis(m, seed=seed, n=n)


def react_completion_sample(
    *, seed: int = 0, n: int = 300, m: HarnessMachine | None = None
) -> list[str]:
    """The seeded completions on which :func:`analysis` tests the invariant: well-formed
    and malformed ones, control words, and the string constants of the harness of ``m``
    (:func:`~agentic_machines.checking.sampling.harness_strings`).

    >>> len(react_completion_sample(n=100))
    100
    >>> "xyzzy" in react_completion_sample(n=100, m=machine(reset="xyzzy"))
    True
    """
    return ANALYSIS.sample(m if m is not None else machine(), seed, n)


ANALYSIS = InvariantAnalysis(
    name="react",
    build=machine,
    program=react_program,
    proof="proofs/react_invariant.md",
    covers=(
        "machines built by react.machine() with reset=None (any question, pages, gold and "
        "max_steps), whose harness is the stock react_program"
    ),
    uncovered=lambda o: None if o["reset"] is None else f"reset={o['reset']!r} plants a reset",
    deep_script=SCRIPT[:2],
    invariant=successor_invariant,
    invariant_text=INVARIANT_TEXT,
    sample=completion_sampler(lambda: valid_completions(1), SCRIPT),
)
"""What ``proofs/react_invariant.md`` is about: :func:`analysis` refutes only inside it."""
