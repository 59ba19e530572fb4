"""PAL (program-aided language model) as an agentic machine.

Source: Gao et al., *PAL: Program-aided Language Models* (ICML 2023), arXiv:2211.10435;
full citation and the faithful / simplified / absent table in ``docs/sources.md``.

The loop is one step: the prompt shows worked examples, each a question followed by a
Python program whose comments carry the reasoning and whose ``solution()`` returns the
answer, then the new question; the model writes a program; the harness runs it *once*
with an interpreter and the return value of ``solution()`` is the answer. The model
never sees the result: there is no second call.

What is faithful to the paper and what is simplified: ``docs/sources.md``,
section "PAL (program-aided language models)".

The SPE question (:func:`analysis`): the machine has one state, the initial one, and
every completion ends the run (``1``, or ``↑`` past the line budget), so the initial state
cannot even load itself (``proofs/pal_one_shot.md``; F2 with the invariant "no completion
leads to a state"). ReAct does not embed: its initial state has a state as successor,
while the only state of PAL has none (:func:`embeds_react`).

>>> m = machine(isolation="inline")
>>> m.prompt(initial).endswith("Q: " + TOY_QUESTION + "\\n\\n# solution in Python:\\n")
True
>>> m.harness(initial, SCRIPT[0])
1
>>> m.result(initial, SCRIPT[0])
PalResult(answer='23', correct=True, error='')
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Unpack

from ..errors import BudgetExceeded
from ..execution.sandbox import Scaffold
from ..runtime.harness import HarnessMachine, TraceState
from ..verdict import Verdict
from ._invariants import (
    InvariantAnalysis,
    completion_sampler,
    recorded_machine,
    scripted,
)
from .options import ExecKeywords, ExecOptions, with_keywords

if TYPE_CHECKING:
    from ..runtime.local_models import ScriptedModel

__all__ = [
    "machine",
    "initial",
    "pal_program",
    "PalResult",
    "scripted_model",
    "SCRIPT",
    "analysis",
    "embeds_react",
    "successor_invariant",
    "INVARIANT_TEXT",
    "diagram_completions",
    "score",
    "HEADER",
    "EXAMPLES",
    "TOY_QUESTION",
    "TOY_ANSWER",
]

HEADER = (
    "Solve each math word problem by writing a Python program. Put your reasoning in "
    "comments and variable names, and define solution() to return the answer.\n\n"
)
"""The instruction (our wording)."""

EXAMPLES = (
    "Q: A baker made 48 rolls. She sold 3 bags of 12 rolls each and gave away 5 rolls. "
    "How many rolls does she have left?\n\n"
    "# solution in Python:\n"
    "def solution():\n"
    "    rolls_made = 48\n"
    "    rolls_sold = 3 * 12\n"
    "    rolls_given = 5\n"
    "    # what is left after selling and giving away\n"
    "    result = rolls_made - rolls_sold - rolls_given\n"
    "    return result\n\n\n"
    "Q: A train travels 60 km each hour. How many hours does it need for 270 km?\n\n"
    "# solution in Python:\n"
    "def solution():\n"
    "    speed_km_per_hour = 60\n"
    "    distance_km = 270\n"
    "    # time = distance / speed\n"
    "    result = distance_km / speed_km_per_hour\n"
    "    return result\n\n\n"
)
"""Two worked examples (written for this toolkit), in the paper's layout."""

TOY_QUESTION = (
    "A shop sells mugs at $4 each and plates at $3 each. Ana buys 3 mugs and 5 plates and "
    "pays with a $50 note. How much change does she get?"
)
TOY_ANSWER = 23

SCRIPT: tuple[str, ...] = (
    "def solution():\n"
    "    mug_price = 4\n"
    "    plate_price = 3\n"
    "    # what Ana spends on 3 mugs and 5 plates\n"
    "    spent = 3 * mug_price + 5 * plate_price\n"
    "    note = 50\n"
    "    result = note - spent\n"
    "    return result\n",
)
"""The scripted completion: one program (one model call)."""

initial = TraceState(())
"""The initial (and only) state of :func:`machine`."""

INVARIANT_TEXT = "no completion leads to a state: every run ends once the program has run"

_NAMESPACE = "pal"  # the key of the program's namespace in its block runner
_RESULT = "pal_answer"


@dataclass(frozen=True)
class PalResult:
    """What a PAL run returns: the answer (``str`` of ``solution()``'s value, ``None`` when
    the program failed), whether it matches the gold answer, and the error shown when the
    program failed.

    >>> PalResult("23", True).error
    ''
    """

    answer: str | None
    correct: bool
    error: str = ""


def score(answer: str | None, gold: float | None) -> bool:
    """Numeric exact match: ``answer`` read as a number equals ``gold`` (within 1e-6).

    An answer that is not a number is simply wrong: the harness never raises on it.

    >>> score("23", 23), score("23.0", 23), score("twenty-three", 23), score(None, 23)
    (True, True, False, False)
    """
    if answer is None or gold is None:
        return False
    try:
        return abs(float(answer) - float(gold)) < 1e-6
    except (ValueError, OverflowError):
        return False


def pal_program(
    question: str = TOY_QUESTION,
    *,
    gold: float | None = TOY_ANSWER,
    options: ExecOptions = ExecOptions(),
    strict_answer: bool = False,
) -> Generator[str, str, PalResult]:
    """The PAL harness as a generator: one prompt, one program, one run.

    ``strict_answer=True`` plants a bug on purpose: the answer is converted with
    ``float()`` without a guard, so a program that returns text makes the harness raise.
    The program runs as ``options`` say (:class:`ExecOptions`; the model is shown no
    output, so ``max_output`` is unused).

    >>> g = pal_program(options=ExecOptions(isolation="inline"))
    >>> next(g).startswith(HEADER)
    True
    """
    block_lines = options.block_lines
    runner = options.runner()
    try:
        runner.namespace(_NAMESPACE, Scaffold())
        program = yield HEADER + EXAMPLES + f"Q: {question}\n\n# solution in Python:\n"
        code = f"{program}\n\n{_RESULT} = solution()\n"
        result = yield from runner.run_block(_NAMESPACE, code, line_budget=block_lines)
        if result.status == "budget":
            raise BudgetExceeded(block_lines)  # a program that never ends: divergence
        if result.status != "ok":  # the program raised, or never defined solution()
            lines = result.stderr.strip().splitlines()
            return PalResult(None, False, lines[-1] if lines else result.status)
        answer = runner.text_of(_NAMESPACE, _RESULT)
        if strict_answer:
            return PalResult(answer, abs(float(answer) - float(gold)) < 1e-6)
        return PalResult(answer, score(answer, gold))
    finally:
        runner.close()


def machine(
    question: str = TOY_QUESTION,
    *,
    gold: float | None = TOY_ANSWER,
    options: ExecOptions = ExecOptions(),
    strict_answer: bool = False,
    **keywords: Unpack[ExecKeywords],
) -> HarnessMachine:
    """The PAL machine on a word problem (default: the toy change question).

    ``options`` (or its fields as keywords: :mod:`.options`) say where and how the
    program runs; the default level is ``"strongest"``; pass ``isolation="inline"`` by
    name for trusted, scripted code. ``strict_answer=True`` builds the planted-bug variant.

    >>> machine(isolation="inline").kwargs["options"].isolation
    'inline'
    """
    return recorded_machine(
        "pal.machine",
        pal_program,
        "pal" if not strict_answer else "pal+strict-answer",
        ["question"],
        dict(
            question=question,
            gold=gold,
            options=with_keywords(options, keywords, "pal.machine").resolved(),
            strict_answer=strict_answer,
        ),
    )


def scripted_model() -> ScriptedModel:
    """A model that writes the program solving the default question.

    >>> scripted_model().complete("any") == SCRIPT[0]
    True
    """
    return scripted(SCRIPT)


def successor_invariant(prompt: str, successor_prompt: str) -> bool:
    """The proved invariant of ``proofs/pal_one_shot.md``: there is no successor state, so
    any pair of prompts (a prompt and a successor's) violates it.

    >>> successor_invariant("a", "b")
    False
    """
    return False


def valid_completions() -> list[str]:
    """Programs of every outcome: right, wrong, raising, text-returning, no ``solution``,
    printing, a syntax error and an endless loop.

    >>> len(valid_completions())
    8
    """
    return [
        SCRIPT[0],
        "def solution():\n    return 50 - 3 * 4\n",
        "def solution():\n    return 1 / 0\n",
        "def solution():\n    return 'twenty-three'\n",
        "result = 23\n",
        "def solution():\n    print('thinking')\n    return 23\n",
        "def solution(:\n",
        "def solution():\n    while True:\n        pass\n",
    ]


def diagram_completions(prompt: str) -> list[str]:
    """A small alphabet for diagrams: the scripted program and one that raises.

    >>> len(diagram_completions("any"))
    2
    """
    return [SCRIPT[0], "def solution():\n    return 1 / 0\n"]


def _valid_but_endless() -> list[str]:
    # the endless loop is left out: it costs a whole line budget per replay
    return [c for c in valid_completions() if "while True" not in c]


ANALYSIS = InvariantAnalysis(
    name="pal",
    build=machine,
    program=pal_program,
    proof="proofs/pal_one_shot.md",
    covers=(
        "machines built by pal.machine() with strict_answer=False (any question, gold, line "
        "budget, isolation, timeout and limits), whose harness is the stock pal_program"
    ),
    uncovered=lambda o: None if not o["strict_answer"] else "strict_answer=True plants a crash",
    deep_script=(),
    invariant=successor_invariant,
    invariant_text=INVARIANT_TEXT,
    sample=completion_sampler(_valid_but_endless, huge=1, huge_size=20_000),
    default_options={"isolation": "inline"},
)
"""What ``proofs/pal_one_shot.md`` is about: :func:`analysis` refutes only inside it."""


def analysis(m: HarnessMachine | None = None, *, seed: int = 0, n: int = 120) -> Verdict:
    """Is the initial state of PAL an SPE state? Refuted: no completion leads to a state,
    so the initial state (the only state) cannot be loaded from itself (F2 with the
    invariant of ``proofs/pal_one_shot.md``, tested on ``n`` programs and strings).

    >>> v = analysis(n=60)
    >>> v.status, v.method, v.conditional
    ('refuted', 'fact:F2', True)
    """
    return ANALYSIS.analysis(m, seed=seed, n=n)


def embeds_react(m: HarnessMachine | None = None, *, seed: int = 0, n: int = 120) -> Verdict:
    """Does ReAct's machine embed into PAL? Refuted: an embedding maps ReAct's initial
    state to a state of PAL with the same prompt, and PAL's only state has another
    prompt (``proofs/pal_one_shot.md``: PAL has no state but the initial one).

    >>> v = embeds_react(n=60)
    >>> v.status, v.obstruction.kind
    ('refuted', 'prompt')
    """
    from . import react  # lazy: importing this architecture must not load react

    return ANALYSIS.refute_embedding(
        react.machine(),
        react.initial,
        m,
        allowed=lambda pal, prompt: prompt == pal.prompt(pal.initial),
        allowed_text="the only state of PAL is its initial state, with PAL's few-shot prompt",
        seed=seed,
        n=n,
    )
