"""``agentic-machines play TARGET``: be the model. You type each completion.

Each turn shows the state, the prompt p(s) (whole, or with ``--diff`` only what it
gained since the last turn) and, when the machine has a finite alphabet, its completions
numbered ``#1``, ``#2``, ...; the line you type is the completion c, and the harness moves
to h(s, c). A student learns what (S, p, h) means by typing the completions.

What a line means (``:help`` prints this):

- ``#N`` picks the N-th completion of a finite alphabet; any other text is the
  completion itself. A completion that starts with ``:`` is typed with ``::``.
- A line holding only ``\"\"\"`` starts a multi-line completion, ended by another such line.
  For the Lisp machines (the CEK seed ``spe`` and ``spell``) a line whose parentheses are
  still open goes on to the next line, as in a Lisp REPL.
- ``:back`` undoes the last step, ``:state`` prints the whole state, ``:trace`` the trace
  so far, ``:save FILE`` writes it as a trace file, ``:script`` prints the
  ``ScriptedModel([...])`` that replays the session, ``:help`` this list.
- ``quit``, ``exit``, ``:quit`` or end of input (Ctrl-D) leave; the trace is saved to the
  ``--save`` file (default ``NAME-play.jsonl``), which ``run TARGET --replay FILE`` reruns
  and :meth:`~agentic_machines.runtime.run.Trace.load` reads.

Each step is taken by :func:`~agentic_machines.runtime.run.run` itself (one step, from
the current state), so a played step is exactly a run's step: ``Undecided`` keeps the
state, a clock-decided outcome is marked, an out-of-alphabet completion is refused.
It reads lines from any stream, so piped input plays too:

>>> import io
>>> from agentic_machines.catalog import resolve
>>> entry = resolve("f2-mul")
>>> session = PlaySession(entry.name, entry.machine(), entry.start(entry.machine()))
>>> out = io.StringIO()
>>> session.play(io.StringIO("#2\\n0\\n:back\\n:script\\n"), out)
>>> print(out.getvalue())  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
turn 0  state 0
prompt: '⋆'
completions: #1 '0'   #2 '1'
> ...
ScriptedModel(['1'])
...
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from .._text import short_text
from ..errors import InvalidArgument
from ..machine import AgenticMachine, is_sentinel, show_outcome
from ..runtime.models import ScriptedModel
from ..runtime.run import Trace, prompt_gain, run
from ._args import (
    add_isolation_arguments,
    add_target_arguments,
    agent_options,
    machine_with_isolation,
)

__all__ = ["PlaySession", "add_parser", "play_command", "HELP"]

HELP = """\
Type the completion and press Enter.
  #N            the N-th completion of the list (finite alphabets)
  \"\"\"           a line with only \"\"\" starts a multi-line completion; another ends it
  ::TEXT        the completion :TEXT (a leading colon is doubled)
  :back         undo the last step
  :state        the whole current state
  :trace        the trace so far
  :save FILE    write the trace file (run TARGET --replay FILE reruns it)
  :script       the ScriptedModel([...]) that replays this session
  :help         this list
  quit, exit, :quit or Ctrl-D   leave (the trace is saved)"""
"""The text ``:help`` prints."""

BLOCK = '"""'


@dataclass
class PlaySession:
    """A played run: the machine, where it started, and the steps taken so far.

    ``lisp`` makes a line with open parentheses continue on the next one (programs).

    >>> from agentic_machines.fixtures import fixture
    >>> s = PlaySession("f2-mul", fixture("f2-mul"), 1)
    >>> s.take("1"), s.take("0"), s.state
    (None, None, 0)
    >>> s.back(), s.state, s.script()
    (True, 1, "ScriptedModel(['1'])")
    """

    name: str
    machine: AgenticMachine
    start: Any
    diff: bool = False
    lisp: bool = False
    steps: list[Any] = field(default_factory=list)
    _echo: bool = field(default=False, repr=False)

    @property
    def state(self) -> Any:
        """The current state, or the sentinel the run ended with."""
        return self.steps[-1].outcome if self.steps else self.start

    @property
    def ended(self) -> bool:
        """True once a step gave ``HALT`` or ``DIVERGE``."""
        return is_sentinel(self.state)

    def take(self, completion: str) -> str | None:
        """Answer the current prompt with ``completion``; ``None``, or why the step was refused.

        The step is :func:`~agentic_machines.runtime.run.run` for one step from the
        current state, so it behaves exactly as in a run.
        """

        if self.ended:
            return f"the run ended with {show_outcome(self.state)}; :back undoes that step, quit leaves"
        try:
            one = run(self.machine, ScriptedModel([completion]), self.state, max_steps=1)
        except Exception as exc:  # noqa: BLE001 - the harness refused this completion: say so, ask again
            return f"h refused it: {type(exc).__name__}: {exc}"
        if not one.steps:
            return f"no step: {one.message or one.end}"
        self.steps.append(one.steps[0]._replace(index=len(self.steps)))
        return None

    def back(self) -> bool:
        """Undo the last step; False when there is none."""
        if not self.steps:
            return False
        self.steps.pop()
        return True

    def trace(self) -> Any:
        """The session as a :class:`~agentic_machines.runtime.run.Trace` (end ``"incomplete"``
        until the run halts or diverges)."""

        end = self.state if self.ended else "incomplete"
        return Trace(machine=self.name, start=self.start, steps=list(self.steps), end=end)

    def script(self) -> str:
        """The ``ScriptedModel([...])`` that replays the session, as Python source."""
        return f"ScriptedModel({[s.completion for s in self.steps]!r})"

    def save(self, path: str | os.PathLike) -> None:
        """Write the trace file."""
        self.trace().save(path)

    # -- the loop ------------------------------------------------------------------------
    def play(
        self,
        stdin: TextIO,
        out: TextIO,
        on_exit: Callable[[], None] | None = None,
        echo: bool = False,
    ) -> None:
        """Play turns reading lines from ``stdin`` and writing to ``out`` until quit or EOF;
        then call ``on_exit`` (which saves the trace). ``echo`` writes each line read
        after its ``>`` (for piped input, which a terminal does not echo)."""
        self._echo = echo
        shown_turn = -1
        previous_prompt: str | None = None
        while True:
            if shown_turn != len(self.steps):
                shown_turn = len(self.steps)
                previous_prompt = self._show_turn(out, previous_prompt)
            out.write("> ")
            out.flush()
            line = self._readline(stdin, out)
            if not line:  # end of input: Ctrl-D, or the end of a pipe
                out.write("\n")
                break
            line = line.rstrip("\r\n")
            stripped = line.strip()
            if stripped in ("quit", "exit", ":quit", ":exit"):
                break
            if not stripped:
                continue
            if stripped.startswith(":") and not stripped.startswith("::"):
                if self._command(stripped, out):
                    shown_turn = -1 if stripped == ":back" else shown_turn
                continue
            completion = self._read_completion(line, stdin, out)
            if completion is None:
                out.write("\n")
                break
            refused = self.take(completion)
            if refused is not None:
                out.write(refused + "\n")
            elif self.ended:
                out.write(
                    f"{show_outcome(self.state)}: the run ended after {_steps(len(self.steps))}\n"
                )
        if on_exit is not None:
            on_exit()

    def _readline(self, stdin: TextIO, out: TextIO) -> str:
        try:
            line = stdin.readline()
        except KeyboardInterrupt:  # Ctrl-C leaves like Ctrl-D: the trace is still saved
            return ""
        if self._echo and line:
            out.write(line if line.endswith("\n") else line + "\n")
        return line

    def _show_turn(self, out: TextIO, previous_prompt: str | None) -> str | None:
        width = max(40, shutil.get_terminal_size((100, 24)).columns)
        if self.ended:
            out.write(
                f"ended: {show_outcome(self.state)} (:back undoes the last step, quit leaves)\n"
            )
            return previous_prompt
        state = self.state
        out.write(f"turn {len(self.steps)}  state {short_text(repr(state), max(width - 16, 10))}\n")
        try:
            prompt = self.machine.prompt(state)
        except Exception as exc:  # noqa: BLE001 - shown; the step itself will say the same
            out.write(f"prompt: (p raised {type(exc).__name__}: {exc})\n")
            return previous_prompt
        if self.diff and previous_prompt is not None:
            kept, added = prompt_gain(previous_prompt, prompt)
            out.write(f"prompt: ({kept} characters as before) + {added!r}\n")
        elif "\n" in prompt:
            out.write("prompt:\n" + "".join(f"  | {ln}\n" for ln in prompt.split("\n")))
        else:
            out.write(f"prompt: {prompt!r}\n")
        alphabet = self.machine.completions
        if alphabet is not None:
            shown = "   ".join(f"#{i} {c!r}" for i, c in enumerate(alphabet, 1))
            out.write(f"completions: {shown}\n")
        return prompt

    def _command(self, text: str, out: TextIO) -> bool:
        word, _, rest = text.partition(" ")
        if word == ":back":
            if not self.back():
                out.write("nothing to undo: this is the start state\n")
                return False
            return True
        if word == ":state":
            out.write(f"{show_outcome(self.state)}\n")
        elif word == ":trace":
            out.write(f"{self.trace()}\n")
        elif word == ":script":
            out.write(self.script() + "\n")
        elif word == ":help":
            out.write(HELP + "\n")
        elif word == ":save":
            path = rest.strip()
            if not path:
                out.write(":save needs a file name, e.g. :save run.jsonl\n")
                return False
            try:
                self.save(path)
            except OSError as exc:
                out.write(f"cannot write {path}: {exc.strerror or exc}\n")
                return False
            out.write(f"saved {_steps(len(self.steps))} to {path}\n")
        else:
            out.write(f"unknown command {word}; :help lists the commands\n")
            return False
        return True

    def _read_completion(self, line: str, stdin: TextIO, out: TextIO) -> str | None:
        stripped = line.strip()
        if stripped == BLOCK:
            lines = []
            while True:
                out.write("... ")
                out.flush()
                more = self._readline(stdin, out)
                if not more:
                    return None
                more = more.rstrip("\r\n")
                if more.strip() == BLOCK:
                    return "\n".join(lines)
                lines.append(more)
        if stripped.startswith("#") and stripped[1:].isdigit() and self.machine.completions:
            alphabet = list(self.machine.completions)
            n = int(stripped[1:])
            if 1 <= n <= len(alphabet):
                return alphabet[n - 1]
        if line.startswith("::"):
            line = line[1:]
        if self.lisp:
            lines = [line]
            while _open_parens("\n".join(lines)) > 0:
                out.write("... ")
                out.flush()
                more = self._readline(stdin, out)
                if not more:
                    return None
                lines.append(more.rstrip("\r\n"))
            return "\n".join(lines)
        return line


def _open_parens(text: str) -> int:
    """How many parentheses of ``text`` are still open, outside strings and ; comments.

    >>> _open_parens('(let ((x "(")) '), _open_parens("(+ 1 2) ; (")
    (1, 0)
    """
    depth, in_string, escape, comment = 0, False, False, False
    for ch in text:
        if comment:
            comment = ch != "\n"
        elif in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == ";":
            comment = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
    return depth


def _steps(n: int) -> str:
    return f"{n} step{'s' * (n != 1)}"


# -- the subcommand ------------------------------------------------------------------------


def add_parser(sub: Any) -> None:
    """Register ``play`` on the subcommand parsers ``sub``."""

    p = sub.add_parser(
        "play",
        help="be the model: type each completion, watch (S, p, h) move",
        description="Run a machine with you as the model. Each turn shows the state, "
        "the prompt and (for a finite alphabet) the numbered completions; type the "
        "completion. Commands: :back :state :trace :save FILE :script :help; quit, exit "
        "or Ctrl-D leave with the trace saved. Reads piped input too.",
    )
    add_target_arguments(p, completions=False)
    p.add_argument(
        "--diff", action="store_true", help="show only what each prompt added to the last one"
    )
    p.add_argument(
        "--save",
        metavar="FILE",
        help="the trace file written on leaving (default: NAME-play.jsonl)",
    )
    add_isolation_arguments(p, "the code you type")
    p.set_defaults(func=play_command)


def play_command(args: argparse.Namespace) -> int:
    """Handle ``play``: play on stdin/stdout, save the trace on leaving."""

    from ..cek.evaluator import AgenticEvaluator  # loaded when the verb runs
    from ..spell.machine import SpellMachine  # loaded when the verb runs
    from .targets import resolve_target  # loaded when the verb runs

    entry = resolve_target(args.name, agent_options(args))
    machine = machine_with_isolation(entry, args.isolation)
    start = entry.start(machine)
    if start is None:
        raise InvalidArgument(
            f"{entry.name!r} has no start state; give a machine with initial=... to play it"
        )
    path = args.save or f"{_file_name(entry.name)}-play.jsonl"
    session = PlaySession(
        entry.name,
        machine,
        start,
        diff=args.diff,
        lisp=isinstance(machine, (AgenticEvaluator, SpellMachine)),
    )
    print(f"playing {entry.name}: you are the model (:help for commands, Ctrl-D to leave)")

    def leave() -> None:
        session.save(path)
        print(
            f"trace saved to {path} ({_steps(len(session.steps))}); replay: "
            f"agentic-machines run {args.name} --replay {path}"
        )

    session.play(sys.stdin, sys.stdout, on_exit=leave, echo=not sys.stdin.isatty())
    return 0


def _file_name(name: str) -> str:
    """A file-name stem for a target (``pkg.mod:attr`` -> ``pkg.mod-attr``)."""
    keep = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in os.path.basename(name))
    return keep.strip("-.") or "machine"
