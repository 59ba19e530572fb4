"""AdaPlanner (plans as code, refined from in-plan and out-of-plan feedback) as an
agentic machine.

Source: Sun et al., *AdaPlanner: Adaptive Planning from Feedback with Language Models*
(NeurIPS 2023), arXiv:2305.16653; full citation and the faithful / simplified / absent
table in ``docs/sources.md``.

The loop: the *planner* writes the whole plan as a Python function
``solution(start_from=1)`` whose steps are marked ``# [Step k]``, act in the environment
with ``act(action)``, and check what they observe with ``assert``. The plan runs in an
interpreter. Two kinds of feedback come back:

- **in-plan**: the plan itself calls ``ask_llm(question)`` to have the model extract
  what it needs from an observation (an object's name, say); the answer returns to the
  running plan, which goes on;
- **out-of-plan**: an assertion fails (or the plan raises, or ends with the task not
  done); the *refiner* sees the plan, the error and the observations so far, writes a
  revised plan and says from which step to resume (``# resume from step k``); the
  revised plan runs with ``solution(start_from=k)`` in the same episode (the actions
  already done are not undone or repeated).

The environment is the ALFWorld-like household of
:mod:`agentic_machines.architectures.environments`.

What is faithful to the paper and what is simplified: ``docs/sources.md``,
section "AdaPlanner".

The SPE question (:func:`analysis`): a planner or refiner prompt ends with its
refinement count, and a successor is an ``ask_llm`` prompt or a planner/refiner prompt
whose count is at most one more (``proofs/adaplanner_invariant.md``); the second
refinement's prompt is out of one step's reach from the initial state (F2). ReAct does
not embed: every prompt starts with one of AdaPlanner's headers (:func:`embeds_react`).

>>> m = machine(isolation="inline")
>>> m.prompt(initial).endswith("Plan (refinement 0):\\n")
True
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Unpack

from ..errors import BudgetExceeded
from ..execution.codeexec import Request
from ..execution.sandbox import Scaffold
from ..runtime.harness import HarnessMachine, TraceState
from ..verdict import Verdict
from ._invariants import (
    InvariantAnalysis,
    completion_sampler,
    header_kind,
    recorded_machine,
    scripted,
)
from .environments import Household, checked_environment, fresh_household
from .options import ExecKeywords, ExecOptions, with_keywords

if TYPE_CHECKING:
    from ..runtime.local_models import ScriptedModel

__all__ = [
    "machine",
    "initial",
    "adaplanner_program",
    "AdaPlannerResult",
    "scripted_model",
    "SCRIPT",
    "analysis",
    "embeds_react",
    "successor_invariant",
    "INVARIANT_TEXT",
    "diagram_completions",
    "refinement_count",
    "PLAN_HEADER",
    "REFINE_HEADER",
    "ASK_HEADER",
]

PLAN_HEADER = (
    "Write a plan for a household task as a Python function solution(start_from=1). Mark "
    "each step with a comment # [Step k] and guard it with 'if start_from <= k:'. Act with "
    "act(action), which returns the observation; check what you expect with assert, whose "
    "message starts with 'Error in [Step k]'; to pull a detail out of an observation, call "
    "ask_llm(question), which returns the answer as text.\n"
    "Here is an example.\n"
    "Task: put a mug in/on countertop 1.\n"
    "def solution(start_from=1):\n"
    "    if start_from <= 1:\n"
    "        # [Step 1] find the mug\n"
    "        obs = act('go to cabinet 1')\n"
    "        assert 'mug' in obs, 'Error in [Step 1]: no mug in cabinet 1'\n"
    "    if start_from <= 2:\n"
    "        # [Step 2] take it and put it on the countertop\n"
    "        mug = ask_llm('Which mug is in this text? ' + act('look'))\n"
    "        act('take ' + mug + ' from cabinet 1')\n"
    "        act('go to countertop 1')\n"
    "        act('put ' + mug + ' in/on countertop 1')\n\n"
)
"""The planner's instruction and worked plan (our wording)."""

REFINE_HEADER = (
    "The plan below failed: an assertion or an error stopped it, or it ended with the task "
    "not done. Write a revised plan, a whole new solution(start_from=1), and say on its first "
    "line from which step to resume, as '# resume from step k'; the actions already done "
    "stay done.\n"
)
"""The refiner's instruction (our wording)."""

ASK_HEADER = "Answer briefly, with the answer only.\n"
"""The header of an in-plan ``ask_llm`` prompt (our wording)."""

SCRIPT: tuple[str, ...] = (
    "def solution(start_from=1):\n"
    "    if start_from <= 1:\n"
    "        # [Step 1] put the apple of the countertop on the side table\n"
    "        obs = act('go to countertop 1')\n"
    "        apple = ask_llm('Which apple is in this text? ' + obs)\n"
    "        act('take ' + apple + ' from countertop 1')\n"
    "        act('go to sidetable 1')\n"
    "        act('put ' + apple + ' in/on sidetable 1')\n"
    "    if start_from <= 2:\n"
    "        # [Step 2] the second apple is in cabinet 2\n"
    "        obs = act('go to cabinet 2')\n"
    "        assert 'apple' in obs, 'Error in [Step 2]: no apple seen at cabinet 2: ' + obs\n"
    "        act('take apple 2 from cabinet 2')\n"
    "        act('go to sidetable 1')\n"
    "        act('put apple 2 in/on sidetable 1')\n",
    "apple 1",
    "# resume from step 2\n"
    "def solution(start_from=1):\n"
    "    if start_from <= 2:\n"
    "        # [Step 2] the cabinet is closed: open it first\n"
    "        act('open cabinet 2')\n"
    "        act('take apple 2 from cabinet 2')\n"
    "        act('go to sidetable 1')\n"
    "        act('put apple 2 in/on sidetable 1')\n",
)
"""The scripted completions: the plan, the in-plan answer (which apple), and after the
assertion of step 2 fails (the cabinet is closed) the revised plan, resumed at step 2."""

initial = TraceState(())
"""The initial state of :func:`machine`."""

INVARIANT_TEXT = (
    "a successor of a planner or refiner prompt is an ask_llm prompt or a planner or "
    "refiner prompt whose refinement count is at most one more"
)

_NAMESPACE = "adaplanner"  # the key of the episode's one namespace in its block runner
_COUNT = re.compile(r"\n(?:Plan|Revised plan) \(refinement (\d+)\):\n$")
_RESUME = re.compile(r"^\s*#\s*resume from step (\d+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class AdaPlannerResult:
    """What a run returns: whether the environment reports the task done, how many
    out-of-plan refinements were made and how many in-plan questions were asked.

    >>> AdaPlannerResult(True, 1, 1).success
    True
    """

    success: bool
    refinements: int
    questions: int


def refinement_count(prompt: str) -> int | None:
    """The refinement count on the last line of a planner or refiner prompt.

    >>> refinement_count("...\\nRevised plan (refinement 2):\\n"), refinement_count("x")
    (2, None)
    """
    m = _COUNT.search(prompt)
    return int(m.group(1)) if m else None


def adaplanner_program(
    env: Household | None = None,
    *,
    max_refinements: int | None = 3,
    options: ExecOptions = ExecOptions(),
) -> Generator[str, str, AdaPlannerResult]:
    """The AdaPlanner harness as a generator: plan, run with in-plan questions, refine.

    ``max_refinements=None`` plants a bug on purpose: no bound on refinements, so a plan
    that keeps failing is refined for ever. Plans run as ``options`` say
    (:class:`ExecOptions`).

    >>> g = adaplanner_program(options=ExecOptions(isolation="inline"))
    >>> next(g).startswith(PLAN_HEADER)
    True
    """
    env = fresh_household(env)  # fresh per start: replays restart here
    block_lines, max_output = options.block_lines, options.max_output
    runner = options.runner()
    questions = 0

    def ask(request: Request) -> Generator[str, str, str]:
        nonlocal questions
        args = request.args
        if request.kind != "ask_llm" or len(args) != 1 or type(args[0]) is not str:
            raise TypeError("ask_llm(question) takes one string")
        questions += 1
        answer = yield ASK_HEADER + args[0]
        return answer.strip()

    try:
        runner.namespace(
            _NAMESPACE, Scaffold(effects=("act",), requests=("ask_llm",)), {"act": env.step}
        )
        task = env.instruction.removeprefix("Your task is to: ")
        plan = yield PLAN_HEADER + f"Task: {task}\nPlan (refinement 0):\n"
        start, refinement = 1, 0
        while True:
            code = f"{plan}\n\nsolution(start_from={start})\n"
            result = yield from runner.run_block(
                _NAMESPACE, code, handle=ask, line_budget=block_lines, max_output=max_output
            )
            if result.status == "budget":
                raise BudgetExceeded(block_lines)  # a plan that never ends: divergence
            runner.restore_scaffold(_NAMESPACE)
            if env.done:
                return AdaPlannerResult(True, refinement, questions)
            if max_refinements is not None and refinement >= max_refinements:
                return AdaPlannerResult(False, refinement, questions)
            refinement += 1
            lines = result.stderr.strip().splitlines()
            error = lines[-1] if lines else "the plan ended, but the task is not done"
            log = "".join(f"> {a}\n" for a in env.action_log) or "(no action yet)\n"
            plan = yield (
                REFINE_HEADER
                + f"Task: {task}\nPlan:\n{plan.rstrip()}\nActions so far:\n{log}"
                + f"Feedback: {error}\nRevised plan (refinement {refinement}):\n"
            )
            m = _RESUME.search(plan)
            start = 1 if m is None else max(1, int(m.group(1)))
    finally:
        runner.close()


def machine(
    env: Household | None = None,
    *,
    max_refinements: int | None = 3,
    options: ExecOptions = ExecOptions(),
    **keywords: Unpack[ExecKeywords],
) -> HarnessMachine:
    """The AdaPlanner machine on a household task (default: two apples on the side table).

    ``options`` (or its fields as keywords: :mod:`.options`) say where and how plans run
    (default level ``"strongest"``; ``isolation="inline"`` by name for trusted, scripted
    code); ``max_refinements=None`` builds the planted bug.

    >>> machine(isolation="inline").name
    'adaplanner'
    """
    return recorded_machine(
        "adaplanner.machine",
        adaplanner_program,
        "adaplanner" if max_refinements is not None else "adaplanner+unbounded",
        ["env"],
        dict(
            env=None if env is None else checked_environment(env, Household),  # rejected when built
            max_refinements=max_refinements,
            options=with_keywords(options, keywords, "adaplanner.machine").resolved(),
        ),
    )


def scripted_model() -> ScriptedModel:
    """A model that plans, answers the in-plan question, and revises the failed step.

    >>> scripted_model().complete("any") == SCRIPT[0]
    True
    """
    return scripted(SCRIPT)


def prompt_kind(prompt: str) -> str:
    """``"plan"``, ``"refine"``, ``"ask"`` or ``"other"``, read off the fixed header.

    >>> prompt_kind(ASK_HEADER + "Which apple?")
    'ask'
    """
    return header_kind(
        prompt, (("plan", PLAN_HEADER), ("refine", REFINE_HEADER), ("ask", ASK_HEADER))
    )


def successor_invariant(prompt: str, successor_prompt: str) -> bool:
    """The proved successor-prompt invariant of AdaPlanner (``proofs/adaplanner_invariant.md``).

    >>> p = machine(isolation="inline").prompt(initial)
    >>> successor_invariant(p, ASK_HEADER + "q"), successor_invariant(p, REFINE_HEADER + "x\\nRevised plan (refinement 2):\\n")
    (True, False)
    """
    kind, next_kind = prompt_kind(prompt), prompt_kind(successor_prompt)
    if kind == "ask":
        return next_kind != "other"
    if next_kind == "ask":
        return True
    k, k2 = refinement_count(prompt), refinement_count(successor_prompt)
    return next_kind in ("plan", "refine") and k is not None and k2 is not None and k2 <= k + 1


def valid_completions() -> list[str]:
    """Plans and answers of every kind.

    >>> len(valid_completions())
    6
    """
    return [
        "def solution(start_from=1):\n    assert False, 'Error in [Step 1]: nothing'\n",
        "def solution(start_from=1):\n    print(ask_llm('Which apple?'))\n",
        "def solution(start_from=1):\n    act('look')\n",
        "apple 1",
        "# resume from step 2\ndef solution(start_from=1):\n    act('look')\n",
        "not code at all (",
    ]


def diagram_completions(prompt: str) -> list[str]:
    """A small alphabet for diagrams: the scripted completion for the prompt's kind and a
    plan whose first assertion fails.

    >>> diagram_completions(ASK_HEADER + "q")
    ['apple 1']
    """
    kind = prompt_kind(prompt)
    if kind == "ask":
        return [SCRIPT[1]]
    fail = valid_completions()[0]
    return [SCRIPT[0] if kind == "plan" else SCRIPT[2], fail]


ANALYSIS = InvariantAnalysis(
    name="adaplanner",
    build=machine,
    program=adaplanner_program,
    proof="proofs/adaplanner_invariant.md",
    covers=(
        "machines built by adaplanner.machine() with a refinement bound (any household, "
        "max_refinements, line budget, output limit, isolation, timeout and limits), whose "
        "harness is the stock adaplanner_program"
    ),
    uncovered=lambda o: (
        None
        if o["max_refinements"] is not None
        else "max_refinements=None plants an unbounded refinement loop"
    ),
    deep_script=(valid_completions()[0], valid_completions()[0]),
    invariant=successor_invariant,
    invariant_text=INVARIANT_TEXT,
    sample=completion_sampler(valid_completions, SCRIPT, huge=1, huge_size=20_000),
    default_options={"isolation": "inline"},
)
"""What ``proofs/adaplanner_invariant.md`` is about: :func:`analysis` refutes only inside it."""


def analysis(m: HarnessMachine | None = None, *, seed: int = 0, n: int = 80) -> Verdict:
    """Is the initial state of AdaPlanner an SPE state? Refuted by F2 at the prompt of the
    second refinement (conditional on ``proofs/adaplanner_invariant.md``).

    >>> v = analysis(n=60)
    >>> v.status, v.method, v.conditional
    ('refuted', 'fact:F2', True)
    """
    return ANALYSIS.analysis(m, seed=seed, n=n)


def embeds_react(m: HarnessMachine | None = None, *, seed: int = 0, n: int = 60) -> Verdict:
    """Does ReAct's machine embed into AdaPlanner? Refuted by prompts: every prompt starts
    with the planner's, the refiner's or the ``ask_llm`` header
    (``proofs/adaplanner_invariant.md``).

    >>> embeds_react().status
    'refuted'
    """
    from . import react  # lazy: importing this architecture must not load react

    return ANALYSIS.refute_embedding(
        react.machine(),
        react.initial,
        m,
        allowed=lambda _, p: prompt_kind(p) != "other",
        allowed_text="every prompt of AdaPlanner starts with its planner, refiner or ask_llm header",
        seed=seed,
        n=n,
    )
