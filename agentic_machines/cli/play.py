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
- ``:back`` undoes the last step, ``:state`` prints the whole state (⟨e, ρ, κ⟩ for the
  CEK and Spell machines, the completions so far for an agent), ``:trace`` the trace
  so far, ``:clear`` (or ``clear``) clears the screen, ``:save FILE`` writes it as a trace file, ``:script`` prints the
  ``ScriptedModel([...])`` that replays the session, ``:help`` this list.
- ``quit``, ``exit``, ``:quit`` or end of input (Ctrl-D) leave; the trace is saved to the
  ``--save`` file (default ``NAME-play.jsonl``), which ``run TARGET --replay FILE`` reruns
  and :meth:`~agentic_machines.runtime.run.Trace.load` reads.

Each step is taken by :func:`~agentic_machines.runtime.run.run` itself (one step, from
the current state), so a played step is exactly a run's step: ``Undecided`` keeps the
state, a clock-decided outcome is marked, an out-of-alphabet completion is refused.
It reads lines from any stream, so piped input plays too:

>>> import io
>>> from agentic_machines.architectures.catalog import resolve
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

from .._text import clip_prompt_repr, counted, escape_controls, short_text
from ..errors import InvalidArgument
from ..machine import DIVERGE, AgenticMachine, is_sentinel, show_outcome
from ..runtime.local_models import ScriptedModel
from ..runtime.run import Trace, prompt_gain, run, step_output
from ._args import (
    add_isolation_arguments,
    add_target_arguments,
    agent_options,
    file_stem,
    machine_with_isolation,
)
from .printed import shown

__all__ = ["PlaySession", "add_parser", "play_command", "end_note", "show_state_of", "HELP"]

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
  :clear        clear the screen (clear alone does too)
  :help         this list
  quit, exit, :quit or Ctrl-D   leave (the trace is saved)
A completion that is one of these words is typed in a \"\"\" block.
The end of a run says how it ended: the value returned, or the error raised."""
"""The text ``:help`` prints."""

BLOCK = '"""'


@dataclass
class PlaySession:
    """A played run: the machine, where it started, and the steps taken so far.

    ``lisp`` makes a line with open parentheses continue on the next one (programs).
    ``diff``: ``True`` shows only what each prompt added to its parent's, ``False`` every
    prompt whole, ``None`` (the default) the gain where a long prompt grew at its end.

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
    diff: bool | None = None
    lisp: bool = False
    steps: list[Any] = field(default_factory=list)
    _echo: bool = field(default=False, repr=False)
    # How each ended run ended (the step's index -> the note), taken when the step ran:
    # the machine's record of it (an evaluator's last_record) is gone after the next step.
    _notes: dict[int, str] = field(default_factory=dict, repr=False)
    # The run's message when its program raised (raised_note): the trace ends raised.
    _raised: dict[int, str] = field(default_factory=dict, repr=False)
    _printed: dict[int, str] = field(default_factory=dict, repr=False)  # an agent's prints

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
            return f"the run ended with {self._outcome()}; :back undoes that step, quit leaves"
        try:
            one = run(self.machine, ScriptedModel([completion]), self.state, max_steps=1)
        except Exception as exc:  # noqa: BLE001 - the harness refused this completion: say so, ask again
            return f"h refused it: {type(exc).__name__}: {exc}"
        if not one.steps:
            return f"no step: {one.message or one.end}"
        step = one.steps[0]._replace(index=len(self.steps))
        self.steps.append(step)
        printed = step_output(self.machine, step, self.start if step.index == 0 else None)
        if printed:
            self._printed[step.index] = printed
        if self.ended:
            note = end_note(self.machine, one)
            if note is not None:
                self._notes[len(self.steps) - 1] = note
            if one.raised is not None and one.message is not None:
                self._raised[len(self.steps) - 1] = one.message
        return None

    def end_line(self) -> str:
        """How the run ended, in one line: the outcome, what the program returned or
        raised (an agent function, a CEK or Spell program), and after how many steps.

        >>> from agentic_machines import agent_machine
        >>> m = agent_machine(lambda model: {"a": 1}[model("key?")])
        >>> s = PlaySession("keys", m, m.initial)
        >>> s.take("b"), s.end_line()
        (None, "RAISED (KeyError: 'b') (after 1 step)")
        """
        raised = len(self.steps) - 1 in self._raised  # the outcome says it all
        note = None if raised else self._notes.get(len(self.steps) - 1)
        said = f": {note}" if note else ""
        return f"{self._outcome()}{said} (after {_steps(len(self.steps))})"

    def _outcome(self) -> str:
        """The outcome the run is at, as the trace shows it: a step that raised as raised."""
        if not self.steps:
            return show_outcome(self.state)
        return self.trace().shown_outcome(self.steps[-1])

    def back(self) -> bool:
        """Undo the last step; False when there is none."""
        if not self.steps:
            return False
        self._notes.pop(len(self.steps) - 1, None)
        self._raised.pop(len(self.steps) - 1, None)
        self._printed.pop(len(self.steps) - 1, None)
        self.steps.pop()
        return True

    def trace(self) -> Any:
        """The session as a :class:`~agentic_machines.runtime.run.Trace` (end ``"incomplete"``
        until the run halts or diverges)."""

        end = self.state if self.ended else "incomplete"
        said = self._raised.get(len(self.steps) - 1) if self.ended else None
        trace = Trace(self.name, self.start, list(self.steps), end, said)
        trace.outputs = dict(self._printed)
        return trace

    def script(self) -> str:
        """The ``ScriptedModel([...])`` that replays the session, as Python source."""
        return f"ScriptedModel({[s.completion for s in self.steps]!r})"

    def save(self, path: str | os.PathLike) -> None:
        """Write the trace file (each step with what an agent printed in it)."""
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
        while True:
            if shown_turn != len(self.steps):
                shown_turn = len(self.steps)
                self._show_turn(out)
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
            if stripped == "clear" and "clear" not in (self.machine.completions or ()):
                self._command(":clear", out)
                shown_turn = -1
                continue
            wrong = self._out_of_range(stripped)
            if wrong is not None:
                out.write(wrong + "\n")
                continue
            completion = self._read_completion(line, stdin, out)
            if completion is None:
                out.write("\n")
                break
            refused = self.take(completion)
            if refused is None and len(self.steps) - 1 in self._printed:
                out.write("\n".join(shown(self._printed[len(self.steps) - 1])) + "\n")
            if refused is not None:
                out.write(refused + "\n")
            elif self.ended:
                out.write(f"{self.end_line()}\n")
        if on_exit is not None:
            on_exit()

    def _readline(self, stdin: TextIO, out: TextIO) -> str:
        try:
            line = stdin.readline()
        except KeyboardInterrupt:  # Ctrl-C leaves like Ctrl-D: the trace is still saved
            return ""
        if self._echo and line:
            # piped input is echoed so a transcript reads as typed; its control characters
            # (a completion taken from a model's output) are shown, never sent to the terminal
            out.write(escape_controls(line if line.endswith("\n") else line + "\n"))
        return line

    def _show_turn(self, out: TextIO) -> None:
        width = max(40, shutil.get_terminal_size((100, 24)).columns)
        if self.ended:
            out.write(f"ended: {self.end_line()}; :back undoes the last step, quit leaves\n")
            return
        state = self.state
        out.write(f"turn {len(self.steps)}  state {short_text(repr(state), max(width - 16, 10))}\n")
        try:
            prompt = self.machine.prompt(state)
        except Exception as exc:  # noqa: BLE001 - shown; the step itself will say the same
            out.write(f"prompt: (p raised {type(exc).__name__}: {exc})\n")
            return
        # The base is the prompt of the state this one came from (after :back too), never
        # the last prompt shown; "auto" cuts only a long prompt that grew at its end.
        base = self.steps[-1].prompt if self.steps else None
        if base is not None and _show_gain(self.diff, base, prompt):
            kept, added = prompt_gain(base, prompt)
            gained = f"+ {added!r}" if added else "(nothing added)"
            out.write(f"prompt: ({kept} characters as before) {gained}\n")
        elif "\n" in prompt:
            lines = prompt.split("\n")  # model output inside: no escape code reaches the terminal
            out.write("prompt:\n" + "".join(f"  | {escape_controls(ln)}\n" for ln in lines))
        else:
            out.write(f"prompt: {prompt!r}\n")
        alphabet = self.machine.completions
        if alphabet is not None:
            shown = "   ".join(f"#{i} {c!r}" for i, c in enumerate(alphabet, 1))
            out.write(f"completions: {shown}\n")

    def _command(self, text: str, out: TextIO) -> bool:
        word, _, rest = text.partition(" ")
        if word == ":back":
            if not self.back():
                out.write("nothing to undo: this is the start state\n")
                return False
            return True
        if word == ":state":
            if self.ended:
                out.write(f"{self.end_line()}\n")
            else:
                out.write(f"{show_state_of(self.machine, self.state)}\n")
        elif word == ":trace":
            width = max(40, shutil.get_terminal_size((100, 24)).columns)
            out.write(f"{self.trace().describe(width=width)}\n")
        elif word == ":clear":
            out.write("\x1b[H\x1b[2J")
            return True
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

    def _out_of_range(self, typed: str) -> str | None:
        """Why ``#N`` picks nothing (N past the list), or None."""
        alphabet = list(self.machine.completions or ())
        if not (alphabet and typed.startswith("#") and typed[1:].isdigit()):
            return None
        if 1 <= int(typed[1:]) <= len(alphabet) or typed in alphabet:
            return None
        return (
            f"{typed}: the list has {counted(len(alphabet), 'completion')}, "
            f"#1 to #{len(alphabet)}; pick one of them"
        )

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


def end_note(machine: AgenticMachine, one: Trace) -> str | None:
    """How the run ``one`` (a trace whose last step ended it) ended, in words: what an
    agent function returned or raised, a CEK or Spell program's value or error, or
    ``None`` when the machine keeps no such record.

    >>> from agentic_machines.cek.evaluator import AgenticEvaluator
    >>> from agentic_machines.cek.theorem import seed_state
    >>> ev = AgenticEvaluator()
    >>> end_note(ev, run(ev, ScriptedModel(["(car 1)"]), seed_state(), max_steps=1))
    'error: EvaluationError: car: expected a non-empty list, got 1'
    """
    from ..runtime.agent import ending  # the agent runtime only when asked

    if one.steps and one.steps[-1].clock:  # no record: asking would run the step again
        return "the step ran past its --step-timeout: its outcome came from the clock"
    said = ending(machine, one)
    if said is not None:
        return said
    record = getattr(machine, "last_record", None)
    if record is None or not one.steps or record.outcome is not one.steps[-1].outcome:
        return None
    if one.steps[-1].outcome is DIVERGE:
        return "the program's state repeated: it loops forever"
    from .._text import ending_line  # loaded when asked

    return ending_line(record.value, record.error, _printer(machine))


def _printer(machine: AgenticMachine) -> Callable[[Any], str]:
    from ..spell.spell_machine import SpellMachine  # only the machine in use is asked for

    if isinstance(machine, SpellMachine):
        from ..spell.text import pr_str  # loaded when asked

        return pr_str
    from ..cek.printer import unparse  # loaded when asked

    return unparse


def show_state_of(machine: AgenticMachine, state: Any) -> str:
    """The whole state as ``:state`` prints it: ⟨e, ρ, κ⟩ for a CEK or Spell boundary
    state, the completions so far for an agent function's trace state, else its repr.

    >>> from agentic_machines.cek.theorem import seed_state
    >>> print(show_state_of(None, seed_state()))
    ⟨(llm "Write a program."), {}, ((lambda (y) (eval y)) [])⟩
    """
    from ..cek.machine import Boundary  # loaded when asked
    from ..runtime.harness import TraceState  # loaded when asked
    from ..spell.evaluator import Boundary as SpellBoundary  # loaded when asked

    t = type(state)
    if t is Boundary:
        from ..cek.stepper import show_boundary  # loaded when asked

        return show_boundary(state)
    if t is SpellBoundary:
        return _show_spell(state)
    if t is TraceState:
        done = state.completions
        return f"trace state: {counted(len(done), 'completion')} so far {done!r}"
    return repr(state)


def _show_spell(state: Any) -> str:
    """A Spell boundary as ⟨e, ρ, κ⟩: the model call, the environment its value returns
    to (the innermost frame that keeps one) and the frames waiting, innermost first."""
    from ..spell.text import pr_str  # loaded when asked

    call = "!llm-self" if state.kind == "self" else "leaf-llm"
    env = "{}"
    for frame in reversed(state.kont):
        if frame[0] in ("return", "restore"):
            bound = frame[1].bindings
            env = (
                "{"
                + ", ".join(f"{k} ↦ {short_text(pr_str(v), 40)}" for k, v in bound.items())
                + "}"
            )
            break
    frames = " ".join(f[0] for f in reversed(state.kont)) or "[]"
    return f"⟨({call} {clip_prompt_repr(state.prompt, 62)}), {env}, {frames}⟩"


GAIN_FROM = 80
"""With ``diff=None``, a prompt is shown as its gain once its parent's is this long."""


def _show_gain(diff: bool | None, base: str, prompt: str) -> bool:
    """Whether to show ``prompt`` as what it added to ``base`` (see ``PlaySession.diff``).

    >>> _show_gain(None, "x" * 80, "x" * 80 + "y"), _show_gain(None, "ab", "abc")
    (True, False)
    """
    if diff is not None:
        return diff
    return len(base) >= GAIN_FROM and len(prompt) > len(base) and prompt.startswith(base)


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
    return counted(n, "step")


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
        "--diff",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show only what each prompt added to its parent's (--no-diff: every prompt "
        f"whole; default: the gain where a prompt of {GAIN_FROM}+ characters grew at its end)",
    )
    p.add_argument(
        "--from",
        dest="start",
        metavar="STATE",
        help="start from this state instead of the initial one: a state as its repr or "
        "text (a machine that lists its states), or for an agent function a JSON list "
        "of the completions that lead there",
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
    from ..spell.spell_machine import SpellMachine  # loaded when the verb runs
    from .targets import resolve_target  # loaded when the verb runs

    entry = resolve_target(args.name, agent_options(args))
    machine = machine_with_isolation(entry, args.isolation)
    start = entry.start(machine) if args.start is None else state_from(machine, args.start)
    if start is None:
        raise InvalidArgument(
            f"{entry.name!r} has no start state; give a machine with initial=... to play it"
        )
    path = args.save or f"{file_stem(entry.name)}-play.jsonl"
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


def state_from(machine: AgenticMachine, text: str) -> Any:
    """The state ``--from`` names: one of the machine's listed states, written as its
    repr or its text, or for an agent function's machine the state its JSON list of
    completions leads to.

    >>> from agentic_machines.fixtures import fixture
    >>> state_from(fixture("f2-mul"), "1")
    1
    >>> from agentic_machines import agent_machine
    >>> state_from(agent_machine(lambda model: model(model("a?"))), '["x"]')
    TraceState('x')
    """
    import json  # loaded when asked

    from ..runtime.harness import TraceState  # loaded when asked

    states = getattr(machine, "states", None)
    if states is not None:
        listed = list(states)
        for state in listed:
            if repr(state) == text or str(state) == text:
                return state
        shown = ", ".join(repr(s) for s in listed[:8]) + (", ..." if len(listed) > 8 else "")
        raise InvalidArgument(
            f"--from {text!r} is none of the machine's states ({shown}); give one of them"
        )
    if isinstance(getattr(machine, "initial", None), TraceState):
        try:
            done = json.loads(text)
        except json.JSONDecodeError:
            done = None
        if not isinstance(done, list) or not all(isinstance(c, str) for c in done):
            raise InvalidArgument(
                f'--from {text!r}: an agent\'s state is the completions so far, as a JSON list such as \'["a", "b"]\''
            )
        state = TraceState(tuple(done))
        reached = machine.harness(TraceState(tuple(done[:-1])), done[-1]) if done else state
        if reached != state:
            raise InvalidArgument(
                f"--from {text!r}: the agent's run ends before these completions are used "
                f"({show_outcome(reached)}); give fewer"
            )
        return state
    raise InvalidArgument(
        f"--from needs a machine that lists its states or an agent function; {machine!r} "
        "is neither: play it from its start"
    )
