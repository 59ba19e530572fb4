"""Reflexion (ReAct actor, HotpotQA setting) as an agentic machine.

Source: Shinn et al., *Reflexion: Language Agents with Verbal Reinforcement Learning*
(NeurIPS 2023), arXiv:2303.11366; full citation and the faithful / simplified / absent
table in ``docs/sources.md``.

The loop (the paper's Algorithm 1, with its HotpotQA instantiation): an *actor* runs a
trial; an *evaluator* scores it; when the trial failed and trials remain, a
*self-reflection* call turns the failed trajectory into a few sentences of verbal
feedback, which go into an episodic *memory* that the actor sees in its next trial.

What is faithful to the paper and what is simplified: ``docs/sources.md``,
section "Reflexion".

The SPE question (:func:`analysis`): inside a trial the prompts grow as ReAct's; a
reflection prompt follows only an actor prompt, and an actor prompt follows a reflection
prompt only with a non-empty memory (``proofs/reflexion_invariant.md``). The state two
ReAct steps deep has a memory-free prompt ending ``Thought 3:``, which no successor of the
initial state has, so by F2 the initial state is not an SPE state.

The ReAct question (:func:`embeds_react`): with one trial Reflexion *is* ReAct (the
identity embeds it, sampled); with two or more, a wrong ``Finish`` halts ReAct but makes
Reflexion reflect, at every state whose prompt ReAct could have, so no embedding exists.

>>> m = machine()
>>> m.prompt(initial) == react.machine().prompt(react.initial)
True
>>> from agentic_machines.architectures._invariants import reach
>>> s = reach(m, initial, SCRIPT[:2])
>>> m.prompt(s).startswith(REFLECT_HEADER), m.prompt(s).endswith("Reflection:")
(True, True)
"""

from __future__ import annotations

import random
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._text import one_line
from ..embedding import Embedding, check_embedding
from ..errors import InvalidArgument
from ..machine import HALT, is_sentinel
from ..runtime.harness import HarnessMachine, TraceState
from ..verdict import Obstruction, Premise, Verdict
from . import react
from ._invariants import (
    InvariantAnalysis,
    completion_sampler,
    header_kind,
    recorded_machine,
    scripted,
)
from .wiki import TOY_ANSWER, TOY_PAGES, TOY_QUESTION

if TYPE_CHECKING:
    from ..runtime.local_models import ScriptedModel

__all__ = [
    "machine",
    "initial",
    "reflexion_program",
    "ReflexionResult",
    "scripted_model",
    "SCRIPT",
    "analysis",
    "embeds_react",
    "successor_invariant",
    "INVARIANT_TEXT",
    "diagram_completions",
    "memory_block",
    "prompt_kind",
    "MEMORY_HEADER",
    "REFLECT_HEADER",
    "REFLECT_EXAMPLE",
]

MEMORY_HEADER = (
    "You have tried to answer this question before and failed. The reflections below say "
    "why and give a plan that avoids failing the same way; use them to answer correctly "
    "this time.\nReflections:\n"
)
"""The header of the memory block in the actor's prompt (our wording of the paper's)."""

REFLECT_HEADER = (
    "You are an agent that improves by reflecting on its failures. Below is a previous "
    "trial in which you answered a question with Search, Lookup and Finish actions and "
    "failed, either because you gave a wrong answer or because you ran out of steps. In a "
    "few sentences, diagnose a likely reason for the failure and write a new, concise, "
    "high-level plan that avoids it.\nHere is an example.\n"
)
"""The instruction of the self-reflection prompt (our wording of the paper's)."""

REFLECT_EXAMPLE = (
    "Previous trial:\n"
    "Question: Which city is the engineer who designed the Statue of Liberty's frame from?\n"
    "Thought 1: The frame was designed by Gustave Eiffel, who worked in Paris.\n"
    "Action 1: Finish[Paris]\n"
    "Observation 1: Episode finished, reward = 0\n"
    "\n"
    "Reflection: I answered from memory where the engineer worked, not where he was from. "
    "Next time I will search the engineer's page and read his birthplace before finishing.\n"
    "\n"
)
"""One worked reflection (written for this toolkit)."""

SCRIPT: tuple[str, ...] = (
    " I need to find the city where the Eiffel Tower stands.\nAction 1: Search[Eiffel Tower]",
    " The Eiffel Tower stands in Paris, so the answer is Paris.\nAction 2: Finish[Paris]",
    " I answered with the city, but the question asks for the river that flows through "
    "it.\nNext time I will search the city and look up its river before finishing.",
    *react.SCRIPT,
)
"""The scripted completions: a failed first trial (it answers the city), one reflection,
then a second trial that follows the plan and answers the river (seven model calls)."""

initial = TraceState(())
"""The initial state of :func:`machine` (no completions yet)."""

INVARIANT_TEXT = (
    "either the successor prompt strictly extends the current one with a trailing step "
    "label at most one more (a step inside a trial), or it is a reflection prompt following "
    "an actor prompt, or it is an actor prompt with a non-empty memory following a "
    "reflection prompt"
)


@dataclass(frozen=True)
class ReflexionResult:
    """What a Reflexion run returns: the last trial's answer and reward, how many trials
    ran, and the memory (the reflections, oldest first) when it ended.

    >>> ReflexionResult("Seine", 1, 2, ("r",)).solved
    True
    """

    answer: str | None
    reward: int
    trials: int
    reflections: tuple[str, ...]

    @property
    def solved(self) -> bool:
        """True when the last trial scored a reward of 1."""
        return self.reward == 1


def memory_block(reflections: tuple[str, ...]) -> str:
    """The memory as the actor sees it: nothing when empty, else the header and one line per
    reflection.

    >>> memory_block(())
    ''
    >>> memory_block(("a", "b")).splitlines()[-3:-1]
    ['- a', '- b']
    """
    if not reflections:
        return ""
    return MEMORY_HEADER + "".join(f"- {r}\n" for r in reflections) + "\n"


def reflexion_program(
    question: str = TOY_QUESTION,
    pages: Mapping[str, str] = TOY_PAGES,
    *,
    gold: str | None = TOY_ANSWER,
    max_steps: int = 7,
    max_trials: int = 3,
    memory_size: int = 3,
    reflect: bool = True,
    trials_by_memory: bool = False,
) -> Generator[str, str, ReflexionResult]:
    """The Reflexion harness as a generator: yields prompts, receives completions.

    Each trial runs ReAct's harness with the memory block after its worked example. Two
    keywords plant bugs on purpose: ``reflect=False`` (the trigger never fires: a failed
    trial is retried with the memory it had, so nothing is learned) and
    ``trials_by_memory=True`` (the trial limit is checked against the memory's length,
    which the window caps at ``memory_size``: with ``memory_size < max_trials - 1`` the
    retries never end).

    >>> g = reflexion_program()
    >>> next(g).endswith("Thought 1:")
    True
    """
    memory: tuple[str, ...] = ()
    trial = 0
    while True:
        trial += 1
        actor = react.react_program(
            question,
            pages,
            gold=gold,
            examples=react.EXAMPLES + memory_block(memory),
            max_steps=max_steps,
        )
        result = yield from actor  # the actor's prompts and completions pass through
        if result.reward == 1:
            return ReflexionResult(result.answer, result.reward, trial, memory)
        # The planted bug counts trials by the memory's length, which the window caps.
        tried = len(memory) + 1 if trials_by_memory else trial
        if tried >= max_trials:
            return ReflexionResult(result.answer, result.reward, trial, memory)
        if reflect:
            trajectory = f"Previous trial:\nQuestion: {question}\n{result.transcript.rstrip()}\n\n"
            reflection = yield REFLECT_HEADER + REFLECT_EXAMPLE + trajectory + "Reflection:"
            # one bullet per memory entry: a reflection's newlines would break the list
            memory = (*memory, one_line(reflection))[-memory_size:]


def machine(
    question: str = TOY_QUESTION,
    pages: Mapping[str, str] = TOY_PAGES,
    *,
    gold: str | None = TOY_ANSWER,
    max_steps: int = 7,
    max_trials: int = 3,
    memory_size: int = 3,
    reflect: bool = True,
    trials_by_memory: bool = False,
) -> HarnessMachine:
    """The Reflexion machine on a question and a wiki (default: ReAct's toy question).

    ``max_trials`` and ``memory_size`` (Ω) must be at least 1; ``reflect=False`` and
    ``trials_by_memory=True`` build the planted-bug variants of :func:`reflexion_program`.

    >>> machine().name, machine(reflect=False).name
    ('reflexion', 'reflexion-no-reflect')
    >>> machine(memory_size=0)
    Traceback (most recent call last):
      ...
    agentic_machines.errors.InvalidArgument: memory_size must be an integer >= 1, got 0; pass memory_size=1 or more (the paper uses 1 to 3)
    """
    for label, value in (("max_trials", max_trials), ("memory_size", memory_size)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise InvalidArgument(
                f"{label} must be an integer >= 1, got {value!r}; pass {label}=1 or more"
                + (" (the paper uses 1 to 3)" if label == "memory_size" else "")
            )
    return recorded_machine(
        "reflexion.machine",
        reflexion_program,
        "reflexion"
        + ("" if reflect else "-no-reflect")
        + ("+trials-by-memory" if trials_by_memory else ""),
        ["question", "pages"],
        dict(
            question=question,
            pages=pages,
            gold=gold,
            max_steps=max_steps,
            max_trials=max_trials,
            memory_size=memory_size,
            reflect=reflect,
            trials_by_memory=trials_by_memory,
        ),
    )


def scripted_model() -> ScriptedModel:
    """A model that fails the first trial, reflects, and solves the second.

    >>> scripted_model().complete(machine().prompt(initial)) == SCRIPT[0]
    True
    """
    return scripted(SCRIPT)


_ACTOR_WITH_MEMORY = react.HEADER + react.EXAMPLES + MEMORY_HEADER
# the memory header comes after the actor's: the longer start is tried first
_KINDS = (
    ("reflect", REFLECT_HEADER),
    ("actor+memory", _ACTOR_WITH_MEMORY),
    ("actor", react.HEADER + react.EXAMPLES),
)


def prompt_kind(prompt: str) -> str:
    """``"reflect"``, ``"actor+memory"``, ``"actor"`` (no memory) or ``"other"``, read off the
    fixed text each prompt starts with (model text only ever comes after it).

    >>> prompt_kind(machine().prompt(initial))
    'actor'
    """
    return header_kind(prompt, _KINDS)


def successor_invariant(prompt: str, successor_prompt: str) -> bool:
    """The proved successor-prompt invariant of Reflexion (``proofs/reflexion_invariant.md``).

    >>> p = machine().prompt(initial)
    >>> successor_invariant(p, p + " x\\nAction 1:"), successor_invariant(p, p)
    (True, False)
    """
    if react.successor_invariant(prompt, successor_prompt):
        return True
    kind, next_kind = prompt_kind(prompt), prompt_kind(successor_prompt)
    if next_kind == "reflect":
        return kind in ("actor", "actor+memory")
    return kind == "reflect" and next_kind == "actor+memory"


def diagram_completions(prompt: str) -> list[str]:
    """A small alphabet for diagrams: at an actor prompt ReAct's scripted step of that label
    (so the obstruction state, two steps deep, is drawn) and a wrong finish (which leads to
    the reflection prompt); at a reflection prompt the scripted reflection.

    >>> diagram_completions(machine().prompt(initial))[0] == react.SCRIPT[0]
    True
    """
    if prompt_kind(prompt) == "reflect":
        return [SCRIPT[2]]
    k = react.step_label(prompt) or 1
    if prompt.endswith(f"Action {k}:"):
        return [" Finish[Seine]"]
    step = [react.SCRIPT[k - 1]] if k <= len(react.SCRIPT) else []
    return step + [f" A guess.\nAction {k}: Finish[Thames]"]


def reflexion_completion_sample(
    *, seed: int = 0, n: int = 300, m: HarnessMachine | None = None
) -> list[str]:
    """The seeded completions on which :func:`analysis` tests the invariant (ReAct's kinds,
    reflections, and the harness's own string constants).

    >>> len(reflexion_completion_sample(n=100))
    100
    """
    return ANALYSIS.sample(m if m is not None else machine(), seed, n)


def _uncovered(options: Mapping[str, object]) -> str | None:
    if not options["reflect"]:
        return "reflect=False plants a reflection that never fires"
    if options["trials_by_memory"]:
        return "trials_by_memory=True plants a trial count that the memory window caps"
    return None


ANALYSIS = InvariantAnalysis(
    name="reflexion",
    build=machine,
    program=reflexion_program,
    proof="proofs/reflexion_invariant.md",
    covers=(
        "machines built by reflexion.machine() with reflect=True and trials_by_memory=False "
        "(any question, pages, gold, max_steps, max_trials and memory_size), whose harness is "
        "the stock reflexion_program"
    ),
    uncovered=_uncovered,
    deep_script=react.SCRIPT[:2],
    invariant=successor_invariant,
    invariant_text=INVARIANT_TEXT,
    sample=completion_sampler(
        lambda: [*react.valid_completions(1), *SCRIPT, " Finish[Thames]", "I should search."]
    ),
)
"""What ``proofs/reflexion_invariant.md`` is about: :func:`analysis` refutes only inside it."""


def analysis(m: HarnessMachine | None = None, *, seed: int = 0, n: int = 300) -> Verdict:
    """Is the initial state of Reflexion an SPE state? Refuted by F2 (conditional on the
    invariant of ``proofs/reflexion_invariant.md``, tested on ``n`` seeded completions).

    >>> v = analysis(n=60)
    >>> v.status, v.method, v.conditional
    ('refuted', 'fact:F2', True)
    >>> analysis(machine(reflect=False), n=60).status
    'undecided'
    """
    return ANALYSIS.analysis(m, seed=seed, n=n)


WRONG_FINISH = " A guess.\nAction 1: Finish[Thames]"
"""The completion at which ReAct halts and Reflexion (two or more trials) reflects."""


def _reachable(m: HarnessMachine, rng: random.Random, walks: int, depth: int) -> list[TraceState]:
    """States reached by seeded random walks over the diagram alphabet (plus a fallback
    reply), the initial state first; the sample on which the ReAct premise is tested."""
    out: dict[TraceState, None] = {m.initial: None}
    for _ in range(walks):
        state = m.initial
        for _ in range(rng.randrange(depth + 1)):
            choices = diagram_completions(m.prompt(state)) + [" hmm", SCRIPT[2]]
            nxt = m.harness(state, rng.choice(choices))
            if not isinstance(nxt, TraceState):  # HALT or DIVERGE: the walk ends
                break
            state = nxt
            out[state] = None
    return list(out)


def embeds_react(m: HarnessMachine | None = None, *, seed: int = 0, walks: int = 150) -> Verdict:
    """Does ReAct's machine (same question, wiki, gold and step limit) embed into this one?

    With ``max_trials=1`` the identity map on trace states is checked (sampled on ReAct
    states reached by seeded walks and on ReAct's completion sample): it holds, Reflexion
    with one trial is ReAct. With more trials it is refuted: ReAct halts on a wrong
    ``Finish`` at its initial state; any image of that state has ReAct's memory-free
    prompt, so it lies in the first trial, where the same completion leads to a reflection
    prompt, not to 1 (``proofs/reflexion_invariant.md``, part 2; the premise is tested on
    every sampled memory-free actor state).

    >>> v = embeds_react()
    >>> v.status, v.method, v.obstruction.kind
    ('refuted', 'fact:reflexion-react', 'commutation')
    >>> embeds_react(machine(max_trials=1)).status
    'holds'
    """

    m = machine() if m is None else m
    why, fresh = ANALYSIS.not_covered(m)
    claim = f"react embeds into {m.name}"
    if why is not None:
        return Verdict(
            None,
            claim,
            "fact:reflexion-react",
            0,
            reason=f"proofs/reflexion_invariant.md covers {ANALYSIS.covers}; this machine is not "
            f"covered: {why}",
        )
    options = fresh.built_by[1]
    source = react.machine(
        options["question"], options["pages"], gold=options["gold"], max_steps=options["max_steps"]
    )
    rng = random.Random(seed)
    if options["max_trials"] == 1:
        states = _reachable(source, rng, walks, 6)
        return check_embedding(
            Embedding(source, fresh, lambda s: s),
            states=states,
            completions=react.react_completion_sample(seed=seed, n=80),
        )
    states = _reachable(fresh, rng, walks, 9)
    tested = 0
    for state in states:
        if prompt_kind(fresh.prompt(state)) != "actor":
            continue
        k = react.step_label(fresh.prompt(state)) or 1
        wrong = WRONG_FINISH.replace("Action 1", f"Action {k}")
        if fresh.prompt(state).endswith(f"Action {k}:"):
            wrong = " Finish[Thames]"
        tested += 1
        nxt = fresh.harness(state, wrong)
        if is_sentinel(nxt) or prompt_kind(fresh.prompt(nxt)) != "reflect":
            return Verdict(
                None,
                claim,
                "fact:reflexion-react",
                tested,
                reason=f"premise refuted: at memory-free state {state!r} a wrong Finish gave "
                f"{nxt!r}, not a reflection prompt",
            )
    if source.harness(react.initial, WRONG_FINISH) is not HALT:
        return Verdict(
            None,
            claim,
            "fact:reflexion-react",
            tested,
            reason="ReAct did not halt on the wrong finish",
        )
    obstruction = Obstruction(
        "commutation",
        react.initial,
        "ReAct's initial state halts on the wrong finish (h(x, c) = 1), so its image e(x) must "
        "halt too; but e(x) has ReAct's prompt, which has no memory block, so e(x) is in "
        "Reflexion's first trial, and there the wrong finish leads to a reflection prompt",
        completion=WRONG_FINISH,
        details={"states_tested": tested},
    )
    return Verdict(
        False,
        claim,
        "fact:reflexion-react",
        tested,
        obstruction=obstruction,
        premise=Premise(
            "at every Reflexion state whose prompt has no memory block, a wrong Finish leads to "
            "a reflection prompt (max_trials >= 2)",
            "proofs/reflexion_invariant.md",
            tested,
        ),
        details={"states_tested": tested},
    )
