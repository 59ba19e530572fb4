"""ADaPT (as-needed decomposition and planning) as an agentic machine.

Source: Prasad et al., *ADaPT: As-Needed Decomposition and Planning with Language
Models* (Findings of NAACL 2024), arXiv:2311.05772; full citation and the faithful /
simplified / absent table in ``docs/sources.md``.

The loop is the paper's recursive algorithm: ``ADaPT(task, depth)`` first asks the
*executor* (an LLM agent acting in the environment, step by step) to do the task; the
executor ends by saying whether it succeeded. Only when it fails, and the depth limit
allows, the *planner* decomposes the task into sub-tasks joined by a logical operator
(``AND``: all must succeed, in order; ``OR``: one must); each sub-task is handed to
``ADaPT(sub-task, depth + 1)``, so decomposition happens *as needed*, only where the
executor could not cope. The environment is the ALFWorld-like household of
:mod:`agentic_machines.architectures.environments`, shared by every sub-task.

What is faithful to the paper and what is simplified: ``docs/sources.md``,
section "ADaPT".

The SPE question (:func:`analysis`): an executor step extends its prompt by one action;
every other successor is a planner prompt or a fresh executor prompt with no action yet
(``proofs/adapt_invariant.md``). The executor state two actions into the root task has
neither form relative to the initial state, so by F2 the initial state is not an SPE
state. ReAct does not embed: every ADaPT prompt starts with the executor's or the
planner's header (:func:`embeds_react`).

>>> m = machine()
>>> m.prompt(initial).endswith("Your task is to: put 2 apple in/on sidetable 1.\\n> ")
True
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..runtime.harness import HarnessMachine, TraceState
from ..verdict import Verdict
from ._invariants import (
    InvariantAnalysis,
    completion_sampler,
    header_kind,
    recorded_machine,
    scripted,
    strictly_extends,
)
from .environments import Household, checked_environment, fresh_household

if TYPE_CHECKING:
    from ..runtime.local_models import ScriptedModel

__all__ = [
    "machine",
    "initial",
    "adapt_program",
    "AdaptResult",
    "scripted_model",
    "SCRIPT",
    "analysis",
    "embeds_react",
    "successor_invariant",
    "INVARIANT_TEXT",
    "diagram_completions",
    "parse_plan",
    "prompt_kind",
    "actions_in",
    "EXECUTOR_HEADER",
    "PLANNER_HEADER",
]

EXECUTOR_HEADER = (
    "You are an agent in a household. Do the task one action per line (go to X, take X "
    "from Y, put X in/on Y, open X, close X, look). When the task is done, write "
    "'task completed'; if you cannot do it, write 'task failed'.\n"
    "Here is an example.\n"
    "Your task is to: put a mug in/on countertop 1.\n"
    "> go to cabinet 1\nThe cabinet 1 is closed.\n"
    "> open cabinet 1\nYou open the cabinet 1. The cabinet 1 is open. In it, you see a mug 1.\n"
    "> take mug 1 from cabinet 1\nYou pick up the mug 1 from the cabinet 1.\n"
    "> go to countertop 1\nYou arrive at countertop 1. On the countertop 1, you see nothing.\n"
    "> put mug 1 in/on countertop 1\nYou put the mug 1 in/on the countertop 1.\n"
    "> task completed\n\n"
)
"""The executor's instruction and worked example (our wording)."""

PLANNER_HEADER = (
    "You are a planner. Break a household task that an agent failed to do into simpler "
    "steps, one per line, then give the execution order: the steps joined by AND (each "
    "must succeed, in order) or by OR (one must succeed).\n"
    "Here is an example.\n"
    "Task: put a clean mug in/on countertop 1.\n"
    "Step 1: find a mug and take it\n"
    "Step 2: clean the mug with sinkbasin 1\n"
    "Step 3: put the mug in/on countertop 1\n"
    "Execution order: Step 1 AND Step 2 AND Step 3\n\n"
)
"""The planner's instruction and worked example (our wording)."""

SCRIPT: tuple[str, ...] = (
    " go to cabinet 2",
    " take apple 2 from cabinet 2",
    " task failed",
    "Step 1: put apple 1 in/on sidetable 1\n"
    "Step 2: open cabinet 2 and put apple 2 in/on sidetable 1\n"
    "Execution order: Step 1 AND Step 2",
    " go to countertop 1",
    " take apple 1 from countertop 1",
    " go to sidetable 1",
    " put apple 1 in/on sidetable 1",
    " task completed",
    " go to cabinet 2",
    " open cabinet 2",
    " take apple 2 from cabinet 2",
    " go to sidetable 1",
    " put apple 2 in/on sidetable 1",
)
"""The scripted completions: the executor fails at the whole task (the cabinet is
closed), the planner splits it into two steps joined by AND, the executor does each."""

initial = TraceState(())
"""The initial state of :func:`machine`."""

INVARIANT_TEXT = (
    "either the successor prompt strictly extends the current one with at most one more "
    "action line, or it is a planner prompt, or an executor prompt with no action yet"
)

_PLAN_STEP = re.compile(r"^Step (\d+): (.+)$")
_ORDER = re.compile(r"^Execution order: (.+)$")


@dataclass(frozen=True)
class AdaptResult:
    """What an ADaPT run returns: whether the root task succeeded (by the reports and
    plans), whether the environment says it is done, and the deepest level reached.

    >>> AdaptResult(True, True, 1).depth
    1
    """

    completed: bool
    env_done: bool
    depth: int


def parse_plan(text: str) -> tuple[list[str], str] | None:
    """The sub-tasks and operator (``"AND"``/``"OR"``) of a plan, or ``None`` when it does
    not parse: steps numbered 1, 2, ... and an order that names each step once, joined by
    one operator.

    >>> parse_plan("Step 1: a\\nStep 2: b\\nExecution order: Step 1 OR Step 2")
    (['a', 'b'], 'OR')
    >>> parse_plan("Step 1: a\\nExecution order: Step 2") is None
    True
    """
    steps: list[str] = []
    order = None
    for line in text.strip().splitlines():
        line = line.strip()
        if m := _PLAN_STEP.match(line):
            if int(m.group(1)) != len(steps) + 1:
                return None
            steps.append(m.group(2).strip())
        elif m := _ORDER.match(line):
            order = m.group(1).strip()
    if not steps or order is None:
        return None
    for op in ("AND", "OR"):
        names = [part.strip() for part in order.split(f" {op} ")]
        if names == [f"Step {i}" for i in range(1, len(steps) + 1)]:
            return steps, op if len(steps) > 1 else "AND"
    return None


def adapt_program(
    env: Household | None = None,
    *,
    max_depth: int | None = 3,
    executor_steps: int = 6,
) -> Generator[str, str, AdaptResult]:
    """The ADaPT harness as a generator: executor and planner calls, recursively.

    ``max_depth=None`` plants a bug on purpose: no depth limit, so a planner that keeps
    restating a failed task decomposes for ever.

    >>> g = adapt_program()
    >>> next(g).startswith(EXECUTOR_HEADER)
    True
    """
    env = fresh_household(env)  # fresh per start: replays restart here
    deepest = [0]

    class Done(Exception):
        """The environment reports the whole task done: every level stops."""

    def execute(task: str) -> Generator[str, str, bool]:
        transcript = f"Your task is to: {task}\n"
        for _ in range(executor_steps):
            raw = yield EXECUTOR_HEADER + transcript + "> "
            action = " ".join(raw.split("\n", 1)[0].split())  # one line, as the cue asks
            if action in ("task completed", "task failed"):
                return action == "task completed"
            observation = env.step(action)
            if env.done:
                raise Done
            transcript += f"> {action}\n{observation}\n"
        return False  # out of actions: a failure

    def adapt(task: str, depth: int) -> Generator[str, str, bool]:
        deepest[0] = max(deepest[0], depth)
        if (yield from execute(task)):
            return True
        if max_depth is not None and depth >= max_depth:
            return False
        plan = parse_plan((yield PLANNER_HEADER + f"Task: {task}\n"))
        if plan is None:
            return False
        steps, op = plan
        for step in steps:
            ok = yield from adapt(step, depth + 1)
            if ok and op == "OR":
                return True
            if not ok and op == "AND":
                return False
        return op == "AND"

    try:
        completed = yield from adapt(env.instruction.removeprefix("Your task is to: "), 0)
    except Done:
        return AdaptResult(True, True, deepest[0])
    return AdaptResult(completed, env.done, deepest[0])


def machine(
    env: Household | None = None,
    *,
    max_depth: int | None = 3,
    executor_steps: int = 6,
) -> HarnessMachine:
    """The ADaPT machine on a household task (default: put two apples on the side table).

    ``max_depth=None`` builds the planted-bug variant (no depth limit).

    >>> machine().name, machine(max_depth=None).name
    ('adapt', 'adapt+no-depth-limit')
    """
    return recorded_machine(
        "adapt.machine",
        adapt_program,
        "adapt" if max_depth is not None else "adapt+no-depth-limit",
        ["env"],
        dict(
            env=None if env is None else checked_environment(env, Household),  # rejected when built
            max_depth=max_depth,
            executor_steps=executor_steps,
        ),
    )


def scripted_model() -> ScriptedModel:
    """A model whose executor fails at the whole task and succeeds at the planner's steps.

    >>> scripted_model().complete("any") == SCRIPT[0]
    True
    """
    return scripted(SCRIPT)


def prompt_kind(prompt: str) -> str:
    """``"executor"``, ``"planner"`` or ``"other"``, read off the fixed header.

    >>> prompt_kind(machine().prompt(initial))
    'executor'
    """
    return header_kind(prompt, (("executor", EXECUTOR_HEADER), ("planner", PLANNER_HEADER)))


def actions_in(prompt: str) -> int:
    """The number of actions in an executor prompt's transcript (lines that start with
    ``> `` after the header, the final cue not counted).

    >>> actions_in(EXECUTOR_HEADER + "Your task is to: t\\n> look\\nYou see.\\n> ")
    1
    """
    lines = prompt[len(EXECUTOR_HEADER) :].split("\n")[:-1]  # the last line is the cue
    return sum(1 for line in lines if line.startswith("> "))


def successor_invariant(prompt: str, successor_prompt: str) -> bool:
    """The proved successor-prompt invariant of ADaPT (``proofs/adapt_invariant.md``).

    >>> p = machine().prompt(initial)
    >>> successor_invariant(p, p + "look\\nYou see.\\n> "), successor_invariant(p, p + "a\\nb\\n> c\\nd\\n> ")
    (True, False)
    """
    kind, next_kind = prompt_kind(prompt), prompt_kind(successor_prompt)
    if next_kind == "planner":
        return True
    if next_kind != "executor":
        return False
    if actions_in(successor_prompt) == 0:
        return True
    return (
        kind == "executor"
        and strictly_extends(prompt, successor_prompt)
        and actions_in(successor_prompt) <= actions_in(prompt) + 1
    )


def valid_completions() -> list[str]:
    """Replies of every kind: actions, the two reports, plans (AND, OR, unparseable).

    >>> len(valid_completions())
    9
    """
    return [
        " look",
        " go to countertop 1",
        " take apple 1 from countertop 1",
        " task completed",
        " task failed",
        "Step 1: look around\nExecution order: Step 1",
        "Step 1: a\nStep 2: b\nExecution order: Step 1 OR Step 2",
        "no plan at all",
        " go to cabinet 2\n> open cabinet 2",
    ]


def diagram_completions(prompt: str) -> list[str]:
    """A small alphabet for diagrams: at the root executor the scripted actions and a
    failure report, at a planner the scripted plan.

    >>> diagram_completions(PLANNER_HEADER) == [SCRIPT[3]]
    True
    """
    if prompt_kind(prompt) == "planner":
        return [SCRIPT[3]]
    k = actions_in(prompt)
    return ([SCRIPT[k]] if k < 2 else []) + [" task failed"]


ANALYSIS = InvariantAnalysis(
    name="adapt",
    build=machine,
    program=adapt_program,
    proof="proofs/adapt_invariant.md",
    covers=(
        "machines built by adapt.machine() with a depth limit (any household, max_depth and "
        "executor_steps), whose harness is the stock adapt_program"
    ),
    uncovered=lambda o: (
        None if o["max_depth"] is not None else "max_depth=None plants no depth limit"
    ),
    deep_script=SCRIPT[:2],
    invariant=successor_invariant,
    invariant_text=INVARIANT_TEXT,
    sample=completion_sampler(valid_completions, SCRIPT),
)
"""What ``proofs/adapt_invariant.md`` is about: :func:`analysis` refutes only inside it."""


def analysis(m: HarnessMachine | None = None, *, seed: int = 0, n: int = 120) -> Verdict:
    """Is the initial state of ADaPT an SPE state? Refuted by F2 at the executor state two
    actions into the root task (conditional on ``proofs/adapt_invariant.md``).

    >>> v = analysis(n=60)
    >>> v.status, v.method, v.conditional
    ('refuted', 'fact:F2', True)
    """
    return ANALYSIS.analysis(m, seed=seed, n=n)


def embeds_react(m: HarnessMachine | None = None, *, seed: int = 0, n: int = 60) -> Verdict:
    """Does ReAct's machine embed into ADaPT? Refuted by prompts: every ADaPT prompt
    starts with the executor's or the planner's header (``proofs/adapt_invariant.md``).

    >>> embeds_react(n=60).status
    'refuted'
    """
    from . import react  # lazy: importing this architecture must not load react

    return ANALYSIS.refute_embedding(
        react.machine(),
        react.initial,
        m,
        allowed=lambda _, p: prompt_kind(p) != "other",
        allowed_text="every prompt of ADaPT starts with the executor's or the planner's header",
        seed=seed,
        n=n,
        scripts=[SCRIPT[:k] for k in (0, 1, 3)],
    )
