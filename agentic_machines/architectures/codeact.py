"""CodeAct (executable code as the action) as an agentic machine.

Source: Wang et al., *Executable Code Actions Elicit Better LLM Agents* (ICML 2024),
arXiv:2402.01030; full citation and the faithful / simplified / absent table in
``docs/sources.md``.

The loop: a multi-turn chat in which the agent's action is Python code. The system
message says that code between ``<execute>`` and ``</execute>`` runs in a persistent
interpreter, whose tools are plain Python functions; each turn the harness runs the
code and returns what it printed (or its error) as the next user message, an
*observation*; the agent revises its code after an error (self-debugging) and ends by
proposing a ``<solution>``. The environment's tools here are the ALFWorld-like household
of :mod:`agentic_machines.architectures.environments`: ``act(action)`` performs a text
action and returns the observation.

What is faithful to the paper and what is simplified: ``docs/sources.md``,
section "CodeAct".

The SPE question (:func:`analysis`): every successor prompt strictly extends the current
one and ends with a steps-left line at most one lower (``proofs/codeact_invariant.md``),
so by F2 the state two turns deep (two steps fewer) cannot be reached in one step from
the initial state. ReAct does not embed: every CodeAct prompt starts with CodeAct's
system message (:func:`embeds_react`).

>>> m = machine(isolation="inline")
>>> m.prompt(initial).splitlines()[-1]
'You have 8 steps left.'
>>> s = m.harness(initial, SCRIPT[0])
>>> m.prompt(s).splitlines()[-4:]
['Observation:', 'You are in the kitchen. Looking quickly around you, you see a countertop 1, a cabinet 1, a cabinet 2, a fridge 1, a microwave 1, and a sinkbasin 1.', '', 'You have 7 steps left.']
"""

from __future__ import annotations

import re
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Unpack

from ..errors import BudgetExceeded
from ..execution.sandbox import Scaffold
from ..runtime.harness import HarnessMachine, TraceState
from ..verdict import Verdict
from ._invariants import (
    InvariantAnalysis,
    completion_sampler,
    recorded_machine,
    scripted,
    strictly_extends,
)
from .environments import Household, checked_environment, fresh_household
from .options import ExecKeywords, ExecOptions, with_keywords
from .rlm import render_messages, truncate

if TYPE_CHECKING:
    from ..runtime.local_models import ScriptedModel

__all__ = [
    "machine",
    "initial",
    "codeact_program",
    "CodeActResult",
    "scripted_model",
    "SCRIPT",
    "analysis",
    "embeds_react",
    "successor_invariant",
    "INVARIANT_TEXT",
    "diagram_completions",
    "steps_left",
    "SYSTEM",
    "REMINDER",
]

SYSTEM = (
    "You are a helpful assistant that acts by writing Python code. To run code, put it "
    "between <execute> and </execute>: it runs in a persistent Python interpreter, and "
    "what it prints, or its error, comes back to you as an observation. The function "
    "act(action) sends a text action to the household (go to X, take X from Y, put X "
    "in/on Y, open X, close X, look, ...) and returns what you observe. When the task is "
    "done, or you know the answer, reply with it between <solution> and </solution>."
)
"""The system message (our wording of the paper's instruction)."""

REMINDER = (
    "I don't understand your reply. To run code, put it between <execute> and </execute>; "
    "to give your answer, put it between <solution> and </solution>."
)
"""The observation after a reply with neither tag (our wording)."""

SCRIPT: tuple[str, ...] = (
    "Let me look around first.\n<execute>\nprint(act('look'))\n</execute>",
    "The apple 1 is on the countertop. I will bring it to the side table, then fetch "
    "the second apple from the cabinet.\n<execute>\n"
    "for a in ['go to countertop 1', 'take apple 1 from countertop 1',\n"
    "          'go to sidetable 1', 'put apple 1 in/on sidetable 1']:\n"
    "    print(act(a))\n"
    "plan = ['go to cabinet 2', 'open cabinet 2', 'take apple 2 from cabinet 2',\n"
    "        'go to sidetable 1', 'put apple 2 in/on sidetable 1']\n"
    "for a in plan:\n"
    "    print(acts(a))\n"
    "</execute>",
    "I misspelled act. The plan is still defined, so I run it again.\n<execute>\n"
    "for a in plan:\n    print(act(a))\n</execute>",
)
"""The scripted replies: look, a block with a typo (the error comes back), the fix."""

initial = TraceState(())
"""The initial state of :func:`machine`."""

INVARIANT_TEXT = (
    "every successor prompt strictly extends the current prompt and ends with a steps-left "
    "line at most one lower"
)

DEFAULT_MAX_TURNS = 8
_NAMESPACE = "codeact"  # the key of the episode's one namespace in its block runner
_EXECUTE = re.compile(r"<execute>(.*?)</execute>", re.DOTALL)
_SOLUTION = re.compile(r"<solution>(.*?)</solution>", re.DOTALL)
_STEPS = re.compile(r"\nYou have (\d+) steps? left\.\n$")


@dataclass(frozen=True)
class CodeActResult:
    """What a CodeAct run returns: the proposed solution (``None`` when none was given),
    whether the environment reports the task done, and how many agent turns ran.

    >>> CodeActResult(None, True, 3).success
    True
    """

    solution: str | None
    success: bool
    turns: int


def steps_left(prompt: str) -> int | None:
    """The number on the harness-written last line ``You have N steps left.``, if any.

    >>> steps_left("...\\nYou have 3 steps left.\\n"), steps_left("no line")
    (3, None)
    """
    match = _STEPS.search(prompt)
    return int(match.group(1)) if match else None


def _left(n: int) -> str:
    return f"You have {n} step{'s' * (n != 1)} left."


def codeact_program(
    env: Household | None = None,
    *,
    max_turns: int = DEFAULT_MAX_TURNS,
    options: ExecOptions = ExecOptions(),
    count_chat: bool = True,
) -> Generator[str, str, CodeActResult]:
    """The CodeAct harness as a generator: yields chat prompts, receives replies.

    ``count_chat=False`` plants a bug on purpose: a reply without code or solution does not
    use up a step, so a model that only chats is never stopped. The code runs as
    ``options`` say (:class:`ExecOptions`).

    >>> g = codeact_program(options=ExecOptions(isolation="inline"))
    >>> next(g).startswith("<|system|>\\n" + SYSTEM)
    True
    """
    env = fresh_household(env)  # fresh per start: replays restart here
    block_lines, max_output = options.block_lines, options.max_output
    runner = options.runner()
    try:
        runner.namespace(_NAMESPACE, Scaffold(effects=("act",)), {"act": env.step})
        history = [("system", SYSTEM), ("user", f"Task: {env.instruction}\n\n{_left(max_turns)}")]
        turn = 0
        while turn < max_turns:
            reply = yield render_messages(history)
            solution = _SOLUTION.search(reply)
            code = _EXECUTE.search(reply)
            if solution is not None and code is None:
                return CodeActResult(solution.group(1).strip(), env.success, turn + 1)
            if code is not None:
                turn += 1
                result = yield from runner.run_block(
                    _NAMESPACE, code.group(1), line_budget=block_lines, max_output=max_output
                )
                if result.status == "budget":
                    raise BudgetExceeded(block_lines)  # code that never ends: divergence
                runner.restore_scaffold(_NAMESPACE)
                parts = [p.rstrip("\n") for p in (result.stdout, result.stderr) if p.strip()]
                observation = truncate("\n".join(parts) if parts else "[no output]", max_output)
            else:
                turn += 1 if count_chat else 0
                observation = REMINDER
            if env.done:
                return CodeActResult(None, env.success, turn)
            history += [
                ("assistant", reply),
                ("user", f"Observation:\n{observation}\n\n{_left(max_turns - turn)}"),
            ]
        return CodeActResult(None, env.success, turn)
    finally:
        runner.close()


def machine(
    env: Household | None = None,
    *,
    max_turns: int = DEFAULT_MAX_TURNS,
    options: ExecOptions = ExecOptions(),
    count_chat: bool = True,
    **keywords: Unpack[ExecKeywords],
) -> HarnessMachine:
    """The CodeAct machine on a household task (default: put two apples on the side table).

    ``options`` (or its fields as keywords: :mod:`.options`) say where and how the agent's
    code runs; the default level is ``"strongest"``; pass ``isolation="inline"`` by name
    for trusted, scripted code. ``count_chat=False`` builds the planted-bug variant.

    >>> machine(isolation="inline").name
    'codeact'
    """
    return recorded_machine(
        "codeact.machine",
        codeact_program,
        "codeact" if count_chat else "codeact+free-chat",
        ["env"],
        dict(
            env=None if env is None else checked_environment(env, Household),  # rejected when built
            max_turns=max_turns,
            options=with_keywords(options, keywords, "codeact.machine").resolved(),
            count_chat=count_chat,
        ),
    )


def scripted_model() -> ScriptedModel:
    """A model that solves the default household task in three code actions.

    >>> scripted_model().complete("any") == SCRIPT[0]
    True
    """
    return scripted(SCRIPT)


def successor_invariant(prompt: str, successor_prompt: str) -> bool:
    """The proved successor-prompt invariant of CodeAct (``proofs/codeact_invariant.md``).

    >>> p = machine(isolation="inline").prompt(initial)
    >>> successor_invariant(p, p + "x\\nYou have 7 steps left.\\n"), successor_invariant(p, p)
    (True, False)
    """
    if not strictly_extends(prompt, successor_prompt):
        return False
    k, k2 = steps_left(prompt), steps_left(successor_prompt)
    return k is not None and k2 is not None and k2 >= k - 1


def valid_completions() -> list[str]:
    """Replies of every kind: code, code that raises, code that prints a lot, a solution,
    chat, both tags, and code that acts.

    >>> len(valid_completions())
    7
    """
    return [
        "<execute>\nprint(1 + 1)\n</execute>",
        "<execute>\nprint(undefined_name)\n</execute>",
        "<execute>\nprint('x' * 5000)\n</execute>",
        "<solution>done</solution>",
        "I am thinking about it.",
        "<execute>\nprint(2)\n</execute>\n<solution>2</solution>",
        "<execute>\nprint(act('go to countertop 1'))\n</execute>",
    ]


def diagram_completions(prompt: str) -> list[str]:
    """A small alphabet for diagrams: the scripted reply of the turn (by steps left) and a
    reply without code (the reminder).

    >>> diagram_completions("...\\nYou have 8 steps left.\\n")[0] == SCRIPT[0]
    True
    """
    left = steps_left(prompt)
    k = DEFAULT_MAX_TURNS - left if left is not None else 0
    return ([SCRIPT[k]] if 0 <= k < len(SCRIPT) else []) + ["I am thinking about it."]


def _uncovered(options: Mapping[str, Any]) -> str | None:
    return None if options["count_chat"] else "count_chat=False plants a step that is never used"


ANALYSIS = InvariantAnalysis(
    name="codeact",
    build=machine,
    program=codeact_program,
    proof="proofs/codeact_invariant.md",
    covers=(
        "machines built by codeact.machine() with count_chat=True (any household, max_turns, "
        "max_output, line budget, isolation, timeout and limits), whose harness is the stock "
        "codeact_program"
    ),
    uncovered=_uncovered,
    deep_script=SCRIPT[:2],
    invariant=successor_invariant,
    invariant_text=INVARIANT_TEXT,
    sample=completion_sampler(valid_completions, SCRIPT, huge=1, huge_size=20_000),
    default_options={"isolation": "inline"},
)
"""What ``proofs/codeact_invariant.md`` is about: :func:`analysis` refutes only inside it."""


def analysis(m: HarnessMachine | None = None, *, seed: int = 0, n: int = 80) -> Verdict:
    """Is the initial state of CodeAct an SPE state? Refuted by F2 at the state two code
    turns deep (conditional on ``proofs/codeact_invariant.md``, tested on ``n`` replies).

    >>> v = analysis(n=60)
    >>> v.status, v.method, v.conditional
    ('refuted', 'fact:F2', True)
    """
    return ANALYSIS.analysis(m, seed=seed, n=n)


def _is_codeact_prompt(prompt: str) -> bool:
    return prompt.startswith(render_messages([("system", SYSTEM)]))


def embeds_react(m: HarnessMachine | None = None, *, seed: int = 0, n: int = 60) -> Verdict:
    """Does ReAct's machine embed into CodeAct? Refuted by prompts: every CodeAct prompt
    starts with CodeAct's system message (``proofs/codeact_invariant.md``), ReAct's initial
    prompt does not, so ReAct's initial state has no image.

    >>> embeds_react(n=60).status
    'refuted'
    """
    from . import react  # lazy: importing this architecture must not load react

    return ANALYSIS.refute_embedding(
        react.machine(),
        react.initial,
        m,
        allowed=lambda _, p: _is_codeact_prompt(p),
        allowed_text="every prompt of CodeAct starts with its system message",
        seed=seed,
        n=n,
        scripts=[(), SCRIPT[:1]],
    )
