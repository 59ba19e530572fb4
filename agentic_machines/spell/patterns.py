"""The worked patterns of Spell, runnable with scripted models, and the replay curve.

Each :class:`Pattern` is a root program, the completions a scripted model gives, the
tools it may call, and the outcome it must end in. :func:`run_pattern` runs one on a
fresh counted environment. :func:`replay_curve` counts tool calls of the same session
under Spell and under the naive re-run harness, turn by turn.

>>> r, env = run_pattern(PATTERNS["react-step"])
>>> r.value, dict(env.calls)
('The answer: Paris is on the Seine.', {'search': 1})
>>> replay_curve(4)
[(1, 1, 1), (2, 2, 3), (3, 3, 6), (4, 4, 10)]
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .spell_machine import (
    NaiveMachine,
    SpellMachine,
    SpellRun,
    ToolEnvironment,
    run_spell,
    seed_program,
)

__all__ = ["Pattern", "PATTERNS", "TOOLS", "run_pattern", "replay_curve", "random_session_calls"]

FILES = {"notes.txt": "the meeting moved to Tuesday", "todo.txt": "buy milk\ncall Bob"}

TOOLS: dict[str, Callable[..., Any]] = {
    "search": lambda q: f"{q} is on the Seine.",
    "read-file": lambda path: FILES.get(path, f"no such file: {path}"),
    "list-files": lambda: sorted(FILES),
}
"""The tools every pattern may call (each call is counted)."""


@dataclass(frozen=True)
class Pattern:
    """A worked pattern: ``program`` answered by ``completions`` must end in ``value``
    (or, when ``value`` is None, in any value) after ``recoveries`` recoveries."""

    title: str
    program: str
    completions: tuple[str, ...]
    value: Any
    recoveries: int = 0
    tools: Mapping[str, Callable[..., Any]] = field(default_factory=lambda: dict(TOOLS))


_GUESS = """(quine completion (eval (do
  (def secret 42)
  (defn play (guess history)
    (if (= guess secret)
        (str "won with " guess " after " (count history) " hints")
        (let ((hint (str guess (if (< guess secret) " is too low" " is too high"))))
          (play (!llm-self (str "Guess a number 1-100. " (join "; " (conj history hint))))
                (conj history hint)))))
  '(play (!llm-self "Guess a number between 1 and 100") nil))))"""

PATTERNS: dict[str, Pattern] = {
    "react-step": Pattern(
        "A ReAct step: act with a tool, see the result in the next prefix, answer",
        seed_program("Which river flows through Paris?"),
        (' \'(!call-now hit (search "Paris"))', ' \'(str "The answer: " hit)'),
        "The answer: Paris is on the Seine.",
    ),
    "guess-number": Pattern(
        "Worker and checker: the program checks each guess and asks again with hints",
        _GUESS,
        ("50", "25", "42"),
        "won with 42 after 2 hints",
    ),
    "plan-execute": Pattern(
        "Plan, then execute in a clean context built with wrap-cat",
        seed_program("Plan, then report how long notes.txt is."),
        (
            ' (def plan "1. read notes.txt 2. report its length")'
            ' \'(!llm-self (wrap-cat "Execute the plan." plan))',
            ' \'(!call-now text (read-file "notes.txt"))',
            ' \'(str (string-length text) " characters")',
        ),
        "28 characters",
    ),
    "fork": Pattern(
        "A synchronous fork: two child sessions, their results materialised",
        seed_program("Summarise both files."),
        (
            ' \'(!call-now parts (list (!llm-self "Summarise notes.txt in 3 words.")'
            ' (!llm-self "Summarise todo.txt in 2 words.")))',
            ' "meeting on Tuesday"',
            ' "milk, Bob"',
            ' \'(join " / " parts)',
        ),
        "meeting on Tuesday / milk, Bob",
    ),
    "peek-persist-extend": Pattern(
        "!peek a large result, persist a slice, !extend: the result itself is pruned",
        seed_program("How many files are there?"),
        (
            " '(!peek files (list-files))",
            " (persist n (count files)) '(!extend)",
            ' \'(str n " files")',
        ),
        "2 files",
    ),
    "recover-parse": Pattern(
        "Recovery from a parse error: the raw text becomes an inert string",
        seed_program("Add 1 and 2."),
        (' "unterminated', " '(+ 1 2)"),
        3,
        recoveries=1,
    ),
    "recover-eval": Pattern(
        "Recovery from an evaluation error: the failed form stays, inert",
        seed_program("Add 1 and 2."),
        (" '(car nil)", " '(+ 1 2)"),
        3,
        recoveries=1,
    ),
}
"""The worked patterns by name."""


def run_pattern(pattern: Pattern) -> tuple[SpellRun, ToolEnvironment]:
    """Run ``pattern`` on a fresh counted environment; return the run and the environment.

    >>> r, _ = run_pattern(PATTERNS["recover-eval"])
    >>> r.value, len(r.recoveries)
    (3, 1)
    """
    env = ToolEnvironment(pattern.tools)
    return run_spell(pattern.program, pattern.completions, env), env


def replay_curve(max_turns: int) -> list[tuple[int, int, int]]:
    """``(turns, spell calls, naive calls)`` for sessions of 1..max_turns turns, each
    turn making one tool call: Spell with ``'(!call-now ...)``, the naive harness
    with ``(def ... (tool))``.
    """
    rows = []
    for n in range(1, max_turns + 1):
        env, env2 = ToolEnvironment(TOOLS), ToolEnvironment(TOOLS)
        m, naive = SpellMachine(env), NaiveMachine(env2)
        s, t = m.initial, naive.initial
        for i in range(n):
            s = m.harness(s, f' \'(!call-now r{i} (search "q{i}"))')
            t = naive.harness(t, f'(def r{i} (search "q{i}"))')
        rows.append((n, env.total_calls, env2.total_calls))
    return rows


def random_session_calls(turns: int, *, seed: int = 0) -> tuple[int, int, int]:
    """A seeded random session (tool calls, pure definitions, thoughts, pruning) of
    ``turns`` turns: ``(tool requests, spell calls, naive calls)``.

    >>> random_session_calls(6, seed=1)[0] == random_session_calls(6, seed=1)[1]
    True
    """
    rng = random.Random(seed)
    env, env2 = ToolEnvironment(TOOLS), ToolEnvironment(TOOLS)
    m, naive = SpellMachine(env), NaiveMachine(env2)
    s, t = m.initial, naive.initial
    requests = 0
    for i in range(turns):
        kind = rng.choice(["tool", "peek", "def", "think", "prune"])
        if kind in ("tool", "peek"):
            requests += 1
            op = "!call-now" if kind == "tool" else "!peek"
            s = m.harness(s, f' \'({op} v{i} (search "q{i}"))')
            t = naive.harness(t, f'(def v{i} (search "q{i}"))')
        elif kind == "think":
            s = m.harness(s, f' (think "step {i}" {i}) \'(!extend)')
            t = naive.harness(t, f'(think "step {i}" {i})')
        else:
            extra = " (prune)" if kind == "prune" else ""
            s = m.harness(s, f" (def d{i} {i}){extra} '(!extend)")
            t = naive.harness(t, f"(def d{i} {i})")
    return requests, env.total_calls, env2.total_calls
