"""``agentic-machines eval --step PROGRAM``: the CEK machine, one printed step at a time.

Each step prints as ``⟨e, ρ, κ⟩`` (:func:`~agentic_machines.cek.stepper.show_state`):
the continuation is the program with a hole ``[]``; after ``;`` comes the name of the
rule that takes the machine on (:func:`~agentic_machines.cek.stepper.rule_of`). The program
may be several forms, ``(define ...)`` forms first. At each ``llm`` boundary the
completion comes from ``--script`` or, without one, is read from the input (one line;
a line with only ``\"\"\"`` starts a multi-line completion ended by another). The run ends
with ``HALT (1)`` and the value, ``DIVERGE (↑)`` when a state repeats (exactly, as
``eval`` decides it), or undecided when ``--fuel`` steps pass first.

>>> import io
>>> code = step_program('(+ 1 (string-length (llm "word?")))', ["four"], None, io.StringIO(), print)
   0  eval ⟨(+ 1 (string-length (llm "word?"))), {}, []⟩   ; application: next part
   1  eval ⟨(string-length (llm "word?")), {}, (+ 1 [])⟩   ; application: next part
   2  eval ⟨(llm "word?"), {}, (+ 1 (string-length []))⟩   ; llm
   3  eval ⟨"word?", {}, (+ 1 (string-length (llm [])))⟩   ; const
   4  ret  ⟨"word?", (+ 1 (string-length (llm [])))⟩   ; llm: boundary
   5  llm  ⟨(llm "word?"), (+ 1 (string-length []))⟩
      completion 1: "four"
   6  ret  ⟨"four", (+ 1 (string-length []))⟩   ; primitive application
   7  ret  ⟨4, (+ 1 [])⟩   ; primitive application
   8  ret  ⟨5, []⟩   ; halt
   9  halt ⟨5⟩
HALT (1): the value is 5 after 9 steps
>>> code
0
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TextIO

from .._text import counted, ending_line
from ..errors import EvaluationError, InvalidArgument, MalformedProgram, ParseError, Undecided
from ..machine import DIVERGE, HALT

__all__ = ["step_program", "STEP_FUEL"]

STEP_FUEL = 100_000
"""The most steps ``eval --step`` prints before it reports the run undecided."""


def step_program(
    program: str,
    completions: Sequence[str] | None,
    fuel: int | None,
    stdin: TextIO,
    say: Callable[[str], object],
    ask: Callable[[str], object] | None = None,
) -> int:
    """Step ``program`` (text), printing each state with ``say``; return the exit status.

    ``completions`` answer the boundaries in order; ``None`` reads each from ``stdin``
    (after ``ask(prompt text)``). A run-time error of the program ends the run: it prints
    as ``HALT (1): error: ...`` and the status is 1 (a program that does not read raises).
    """
    from ..cek.machine import Boundary, Halted, Ret, step  # loaded when the verb runs
    from ..cek.printer import escape_string, unparse  # loaded when the verb runs
    from ..cek.reader import parse_program  # loaded when the verb runs
    from ..cek.stepper import rule_of, show_state, start_state  # loaded when the verb runs

    limit = STEP_FUEL if fuel is None else fuel
    state = start_state(parse_program(program))
    seen: dict = {state: 0}  # exact repeat detection, as eval's: a state seen before diverges
    answered = 0
    n = 0
    while True:
        rule = rule_of(state)
        say(f"{n:>4}  {show_state(state)}" + (f"   ; {rule}" if rule else ""))
        t = type(state)
        if t is Halted:
            say(f"{HALT.label}: the value is {unparse(state.value)} after {n} steps")
            return 0
        if t is Boundary:
            completion = _completion(state.prompt, completions, answered, stdin, ask)
            answered += 1
            say(f"      completion {answered}: {escape_string(completion)}")
            state = Ret(completion, state.kont)
        else:
            try:
                state = step(state)
            except (EvaluationError, MalformedProgram, ParseError) as exc:
                # The program's own run-time error (or its completion's, read by eval)
                # is how the run ended: h gives HALT with the error, once, exit 1.
                say(f"{HALT.label}: {ending_line(None, exc, unparse)} at step {n + 1}")
                return 1
        n += 1
        if state in seen:
            say(f"{n:>4}  {show_state(state)}")
            say(
                f"{DIVERGE.label}: step {n} is the state of step {seen[state]}: "
                "the program loops forever"
            )
            return 0
        seen[state] = n
        if n >= limit:
            raise Undecided(
                f"undecided: {limit} steps passed without an end or a repeated state; "
                "pass a larger --fuel to go on"
            )


def _completion(
    prompt: str,
    completions: Sequence[str] | None,
    index: int,
    stdin: TextIO,
    ask: Callable[[str], object] | None,
) -> str:
    if completions is not None:
        if index < len(completions):
            return completions[index]
        raise InvalidArgument(
            f"the program made llm call {index + 1} (prompt {prompt!r}) but the script has "
            f"only {counted(len(completions), 'completion')}; add more to the script"
        )
    if ask is not None:
        ask(f"      llm {prompt!r}> ")
    line = stdin.readline()
    if not line:
        raise InvalidArgument(
            f"no completion for llm call {index + 1} (prompt {prompt!r}): the input ended; "
            "type one, or give them with --script FILE"
        )
    if line.strip() == '"""':
        lines = []
        while (more := stdin.readline()) and more.strip() != '"""':
            lines.append(more.rstrip("\r\n"))
        return "\n".join(lines)
    return line.rstrip("\r\n")
