"""THREAD (recursive spawning) as an agentic machine.

Source: Schroeder et al., *THREAD: Thinking Deeper with Recursive Spawning* (NAACL
2025), official code ``philipmit/thread`` (``run_*.py``: ``Y = Y + psi(thread(phi(Y), ''))``);
full citation in ``docs/sources.md``.

What is faithful to the paper and what is simplified: ``docs/sources.md``,
section "THREAD".

The SPE question (:func:`analysis`): from a state of the root thread, every successor
prompt (without a trailing don't-loop line) is the current one again (a ``#START#``
retry), strictly extends it, or is the fresh prompt of a child thread
(``proofs/thread_invariant.md``), so by F2 the initial state is not an SPE state.

>>> m = machine()
>>> s = m.harness(initial, "Find the city where the Eiffel Tower stands=>")
>>> m.prompt(s).endswith("Prompt:\\nFind the city where the Eiffel Tower stands=>\\n\\n\\nResponse:\\n#START#\\n")
True
"""

from __future__ import annotations

import ast
import re
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._text import before_stops
from ..errors import InvalidArgument
from ..runtime.harness import HarnessMachine, TraceState
from ..verdict import Verdict
from ._invariants import (
    InvariantAnalysis,
    completion_sampler,
    recorded_machine,
    scripted,
    strictly_extends,
)
from .start_fix import START_TOKEN, base_prompt, requery
from .wiki import TOY_ANSWER, TOY_PAGES, TOY_QUESTION, WikiEnv

if TYPE_CHECKING:
    from ..runtime.local_models import ScriptedModel

__all__ = [
    "machine",
    "initial",
    "thread_program",
    "thread_prompt",
    "ThreadResult",
    "scripted_model",
    "SCRIPT",
    "analysis",
    "successor_invariant",
    "is_fresh_child_prompt",
    "INVARIANT_TEXT",
    "diagram_completions",
    "EXAMPLES",
    "START",
    "DONT_LOOP",
    "assign",
    "fill",
    "printed",
]

START = START_TOKEN
"""The marker that opens the model's part of a thread prompt."""

DONT_LOOP = (
    "# Do not loop: continue this response from where it stops; never write #START# again.\n"
)
"""The "don't loop" line added to a prompt whose generations keep containing ``#START#``
(:mod:`.start_fix`); a ``#`` line, as THREAD's responses write comments."""

STOPS = ("=>", "#EN")
"""Generation stops (the harness cuts a completion at the first of them)."""

EXAMPLES = (
    "Answer the task. Each line of the response is an action '> search[entity]' or "
    "'> lookup[keyword]' (its result comes back as =>result<=), a sub-task written as a "
    "sentence (a helper solves it and its result comes back as =>result<=), or the final "
    "line print(answer).\n"
    "\n\n\n\n\n\nPrompt:\n"
    "Which country is the designer of the Statue of Liberty from?\n"
    "\n\nResponse:\n"
    "#START#\n"
    "Find who designed the Statue of Liberty=>Frédéric Auguste Bartholdi<=\n\n"
    "> search[Frédéric Auguste Bartholdi]=>Frédéric Auguste Bartholdi was a French sculptor.<=\n\n"
    'print("France")\n'
    "#END#"
    "\n\n\n\n\n\nPrompt:\n"
    "Find who designed the Statue of Liberty=>\n"
    "\n\nResponse:\n"
    "#START#\n"
    "> search[Statue of Liberty]=>The Statue of Liberty was designed by Frédéric Auguste Bartholdi.<=\n\n"
    'print("Frédéric Auguste Bartholdi")\n'
    "#END#"
)
"""The few-shot examples (a parent thread and the child thread it spawned)."""

SCRIPT: tuple[str, ...] = (
    "Find the city where the Eiffel Tower stands=>",
    "> search[Eiffel Tower]=>",
    'print("Paris")\n#END#',
    "> search[Paris]=>",
    "> lookup[river]=>",
    'print("Seine")\n#END#',
)
"""Scripted completions solving the default task: the root spawns one child thread."""

DEFAULT_MAX_CALLS = 30
"""The default global call budget (the original uses ``t_max = 200``)."""

initial = TraceState(())
"""The initial state of :func:`machine`: the root thread, before its first generation."""

INVARIANT_TEXT = (
    "from a state of the root thread, every successor prompt (both without a trailing "
    "don't-loop line) either equals the current prompt (a #START# retry), strictly extends "
    "it, or is the fresh prompt of a child thread (empty response, a one-line context "
    "ending in '=>')"
)


@dataclass(frozen=True)
class ThreadResult:
    """What a THREAD run returns: the answer (the root's printed text, or ``finish[x]``),
    why it stopped (``"end"``, ``"done"`` or ``"budget"``) and the model calls used.

    >>> ThreadResult("Seine", "end", 6).reason
    'end'
    """

    answer: str | None
    reason: str
    calls: int


class _Stop(Exception):
    """Unwinds every thread at once (budget spent, or the environment is done)."""


def thread_prompt(context: str, response: str = "", *, examples: str = EXAMPLES) -> str:
    """The prompt of a thread with context ``context`` and response so far ``response``.

    >>> thread_prompt("Do x=>", examples="").splitlines()
    ['', '', '', '', '', '', 'Prompt:', 'Do x=>', '', '', 'Response:', '#START#']
    """
    return (
        examples + "\n\n\n\n\n\nPrompt:\n" + context + "\n\n\nResponse:\n" + START + "\n" + response
    )


def thread_program(
    task: str = TOY_QUESTION,
    pages: Mapping[str, str] = TOY_PAGES,
    *,
    gold: str | None = TOY_ANSWER,
    examples: str = EXAMPLES,
    max_calls: int = DEFAULT_MAX_CALLS,
    start_fix: bool = True,
) -> Generator[str, str, ThreadResult]:
    """The THREAD harness as a generator: the root thread on ``task``, children inside it.

    ``start_fix`` turns on the appendix fix of the REPL-Plan paper (:mod:`.start_fix`): a
    generation containing ``#START#`` is asked again, with the :data:`DONT_LOOP` line
    from the second retry on; each retry is a model call of the global budget.

    >>> g = thread_program()
    >>> next(g).endswith("Prompt:\\n" + TOY_QUESTION + "\\n\\n\\nResponse:\\n#START#\\n")
    True
    """
    env = WikiEnv(pages, gold=gold)  # fresh per start: replays restart the generator
    calls = [0]
    variables: dict[str, object] = {}  # one namespace shared by every thread, as in the original
    stop_type = (
        _Stop  # a local: module globals may be gone when a cached generator is closed at exit
    )

    def ask(prompt: str) -> Generator[str, str, str]:
        if calls[0] >= max_calls:
            raise stop_type("budget")
        calls[0] += 1
        return before_stops(
            (yield prompt), *STOPS
        )  # the stops are the API's: nothing after them is generated

    def run_thread(context: str) -> Generator[str, str, str]:
        response = ""
        while True:
            prompt = thread_prompt(context, response, examples=examples)
            generation = yield from requery(ask, prompt, note=DONT_LOOP, enabled=start_fix)
            response += generation
            for line in generation.split("\n")[:-1]:  # the complete lines: assignments among them
                assign(line, variables)
            if response.endswith("\n"):
                return response  # stopped at the end marker, after the final print line
            last = response.rsplit("\n", 1)[-1]
            if (last.startswith(">") or last.startswith("# >")) and not last.endswith("<="):
                observation, done = env.step(fill(last.split(">", 1)[1].strip(), variables))
                response += "=>" + observation + "<=\n\n"
                if done:
                    raise stop_type("done")
            else:
                # Join: the child runs to completion inside this step of the parent.
                child = yield from run_thread(fill(last, variables) + "=>")  # φ
                response += "=>" + printed(child, variables) + "<=\n\n"  # ψ

    try:
        root = yield from run_thread(task)
    except stop_type as stop:
        reason = str(stop)
        return ThreadResult(env.answer if reason == "done" else None, reason, calls[0])
    return ThreadResult(printed(root, variables), "end", calls[0])


_ASSIGNMENT = re.compile(r"\s*([A-Za-z_]\w*)\s*=(?!=)\s*(.*?)\s*")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_]\w*)\}")


def _literal(text: str, variables: Mapping[str, object]) -> tuple[bool, object]:
    # A Python literal, or the name of a variable: the values THREAD's lines compute
    # without running model code (model-written code runs only through execution/).
    try:
        return True, ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        if text in variables:
            return True, variables[text]
        return False, None


def assign(line: str, variables: dict[str, object]) -> None:
    """Record the assignment ``name = value`` of one response line in ``variables``.

    ``value`` is a Python literal or the name of a variable already assigned; any other
    line (an action, a result line, a comment, an expression we do not evaluate) leaves
    ``variables`` as it is.

    >>> v = {}
    >>> assign("city = 'Paris'", v); assign("same = city", v); assign("x == 1", v)
    >>> assign("> search[x]=>y<=", v); assign("n = len(city)", v)
    >>> v
    {'city': 'Paris', 'same': 'Paris'}
    """
    if line.lstrip().startswith((">", "#")) or "=>" in line:
        return
    match = _ASSIGNMENT.fullmatch(line)
    if match is None:
        return
    known, value = _literal(match.group(2), variables)
    if known:
        variables[match.group(1)] = value


def fill(text: str, variables: Mapping[str, object]) -> str:
    """``text`` with every ``{name}`` of an assigned variable replaced by its value
    (kept on one line: newlines in a value are escaped); other braces stay as they are.

    >>> fill("> search[{city}] near {river}", {"city": "Paris"})
    '> search[Paris] near {river}'
    >>> print(fill("{x}", {"x": "a\\nb"}))
    a\\nb
    """

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in variables:
            return match.group(0)
        return str(variables[name]).replace("\r", "\\r").replace("\n", "\\n")

    return _PLACEHOLDER.sub(value, text)


def printed(response: str, variables: Mapping[str, object] | None = None) -> str:
    """ψ's text: what the final line of a thread's response prints (``print(literal)``
    or ``print(name)`` of an assigned variable; any other final line is the text itself).

    >>> printed('> a=>b<=\\n\\nprint("Paris")\\n'), printed("just text\\n"), printed("")
    ('Paris', 'just text', '')
    >>> printed("city = 'Paris'\\nprint(city)\\n", {"city": "Paris"})
    'Paris'
    """
    lines = [line for line in response.split("\n") if line.strip()]
    if not lines:
        return ""
    last = lines[-1].strip()
    if last.startswith("print(") and last.endswith(")"):
        argument = last[len("print(") : -1]
        known, value = _literal(argument.strip(), variables or {})
        return str(value) if known else argument
    return last


def machine(
    task: str = TOY_QUESTION,
    pages: Mapping[str, str] = TOY_PAGES,
    *,
    gold: str | None = TOY_ANSWER,
    max_calls: int = DEFAULT_MAX_CALLS,
    start_fix: bool = True,
) -> HarnessMachine:
    """The THREAD machine on a task and a wiki (default: the toy two-hop question);
    ``start_fix=False`` drops the ``#START#`` fix (the original code's behaviour).

    >>> machine().name
    'thread'
    """
    if not isinstance(start_fix, bool):
        raise InvalidArgument(f"start_fix must be True or False, got {start_fix!r}")
    return recorded_machine(
        "thread.machine",
        thread_program,
        "thread",
        ["task", "pages"],
        dict(
            task=task,
            pages=pages,
            gold=gold,
            max_calls=max_calls,
            start_fix=start_fix,
        ),
    )


def scripted_model() -> ScriptedModel:
    """A :class:`~agentic_machines.runtime.local_models.ScriptedModel` that solves the default task.

    >>> scripted_model().complete("any prompt") == SCRIPT[0]
    True
    """
    return scripted(SCRIPT)


def is_fresh_child_prompt(prompt: str, *, examples: str = EXAMPLES) -> bool:
    """True iff ``prompt`` is a child thread's first prompt: empty response, and a
    one-line context ending in ``=>`` (φ of the parent's response).

    >>> is_fresh_child_prompt(thread_prompt("Find x=>")), is_fresh_child_prompt(thread_prompt("Find x=>", "y"))
    (True, False)
    """
    head = examples + "\n\n\n\n\n\nPrompt:\n"
    tail = "\n\n\nResponse:\n" + START + "\n"
    if not (prompt.startswith(head) and prompt.endswith(tail)) or len(prompt) < len(head) + len(
        tail
    ):
        return False
    context = prompt[len(head) : len(prompt) - len(tail)]
    return "\n" not in context and context.endswith("=>")


def successor_invariant(prompt: str, successor_prompt: str) -> bool:
    """The proved successor-prompt invariant of root-thread states (``proofs/thread_invariant.md``).

    Both prompts are compared without a trailing :data:`DONT_LOOP` line: a ``#START#``
    retry asks the same prompt again (or it plus that line).

    >>> p = machine().prompt(initial)
    >>> successor_invariant(p, p + "> search[x]=>y<=\\n\\n"), successor_invariant(p, p[:-1])
    (True, False)
    >>> successor_invariant(p, p), successor_invariant(p + DONT_LOOP, p + "> a=>b<=\\n\\n")
    (True, True)
    """
    p, q = base_prompt(prompt, DONT_LOOP), base_prompt(successor_prompt, DONT_LOOP)
    return q == p or strictly_extends(p, q) or is_fresh_child_prompt(q)


def valid_completions() -> list[str]:
    """Well-formed completions: actions, sub-tasks, final prints, and edge cases.

    >>> valid_completions()[0]
    '> search[Eiffel Tower]=>'
    """
    return [
        "> search[Eiffel Tower]=>",
        "> lookup[river]=>",
        "> finish[Seine]=>",
        "> dance=>",
        "# > search[Paris]=>",
        "> search[x]<=",
        "Find the city where the Eiffel Tower stands=>",
        "Find the river=>ignored",
        'print("Seine")\n#END#',
        "print(x)\n",
        "=>",
        "#END#",
        "line one\nline two=>",
        "> search[Paris]",
        "no stop at all",
    ]


def diagram_completions(prompt: str) -> list[str]:
    """A small completion alphabet for diagrams: spawn a sub-task, act, or finish (the
    first two steps of the script, so the obstruction state is drawn).

    >>> diagram_completions("...") == [SCRIPT[0], SCRIPT[1], 'print("Paris")\\n#END#']
    True
    """
    return [SCRIPT[0], SCRIPT[1], 'print("Paris")\n#END#']


def analysis(m: HarnessMachine | None = None, *, seed: int = 0, n: int = 300) -> Verdict:
    """Is the initial state of THREAD an SPE state? Refuted by F2 with a concrete state.

    The obstruction state is a child thread after one action (two scripted steps: the
    root spawns ``Find the city where the Eiffel Tower stands``, the child searches):
    its prompt neither extends the root's prompt nor is a fresh child prompt. The
    refutation is conditional on ``proofs/thread_invariant.md`` (tested on ``n``
    completions) and is given only for a machine built by :func:`machine` (checked by the
    harness code's fingerprint and the recorded options); other machines are undecided.

    >>> v = analysis(n=60)
    >>> v.status, v.method, v.conditional
    ('refuted', 'fact:F2', True)
    """
    return ANALYSIS.analysis(m, seed=seed, n=n)


ANALYSIS = InvariantAnalysis(
    name="thread",
    build=machine,
    program=thread_program,
    proof="proofs/thread_invariant.md",
    covers=(
        "machines built by thread.machine() with any task, pages, gold and max_calls, whose "
        "harness is the stock thread_program"
    ),
    uncovered=lambda o: None,
    deep_script=SCRIPT[:2],
    invariant=successor_invariant,
    invariant_text=INVARIANT_TEXT,
    sample=completion_sampler(valid_completions, SCRIPT),
)
"""What ``proofs/thread_invariant.md`` is about: :func:`analysis` refutes only inside it."""
