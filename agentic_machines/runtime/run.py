"""Running a machine with a model: ``run`` and the ``Trace`` it returns.

One model call per transition: in state s the model sees ``machine.prompt(s)``, answers
c, and the harness moves to ``machine.harness(s, c)``. A :class:`Trace` lists the steps
``(index, state, prompt, completion, outcome)`` and how the run ended.

>>> from agentic_machines import TableMachine, HALT
>>> from agentic_machines.runtime.local_models import ScriptedModel
>>> m = TableMachine({"a": "say b", "b": "say stop"},
...                  {("a", "b"): "b", ("a", "stop"): HALT, ("b", "b"): "b", ("b", "stop"): HALT},
...                  initial="a", name="demo")
>>> trace = run(m, ScriptedModel(["b", "stop"]))
>>> trace.completions, trace.end
(['b', 'stop'], 1)
>>> print(trace)
Trace of 'demo' from 'a': 2 steps, ended with HALT (1).
  #  state  prompt      completion  outcome
  0  'a'    'say b'     'b'         'b'
  1  'b'    'say stop'  'stop'      HALT (1)

How a run ends, the trace file's format and what ``Trace.load`` gives back:
docs/reference/run.md.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .._files import excerpt
from .._outcome import Raised, halt_raised
from .._text import clip, clip_prompt_repr, counted, echoes, escape_controls
from ..errors import ClockDependent, InvalidArgument, ReplayMismatch, Undecided
from ..machine import DIVERGE, HALT, AgenticMachine, is_sentinel, show_outcome
from ..verdict import short_repr
from ._jsonl import (
    MAX_JSON_LINES_BYTES,
    brief,
)
from .local_models import Model, ScriptedModel, describe_difference, shorten

# The file format lives in tracefile (one concept a module); its public names stay
# importable from here, as before.
from .tracefile import (
    END_REASONS,
    Opaque,
    Step,
    TraceWriter,
    decode_state,
    encode_state,
    prompt_gain,
    read_trace_file,
)

__all__ = [
    "run",
    "Trace",
    "Step",
    "Opaque",
    "encode_state",
    "decode_state",
    "prompt_gain",
    "END_REASONS",
    "step_output",
]


@dataclass(eq=True)
class Trace:
    """The record of one run. Build it with :func:`run` or :meth:`Trace.load`.

    ``steps`` is a list of :class:`Step`; ``end`` is ``HALT``, ``DIVERGE`` or one of
    :data:`END_REASONS`; ``message`` explains an ``"undecided"`` or ``"model-error"``
    end; ``pending`` is the ``(prompt, completion)`` of a model call whose transition
    did not complete (the harness raised ``Undecided``), kept so that
    :meth:`to_model` reproduces the run exactly; ``error`` is the model's exception
    (not saved, and ignored by ``==``).

    >>> from agentic_machines import TableMachine, HALT
    >>> m = TableMachine({0: "go?"}, {(0, "go"): 0, (0, "stop"): HALT}, initial=0)
    >>> t = run(m, ScriptedModel(["go", "go", "stop"]))
    >>> len(t), t.final, t.completions
    (3, 1, ['go', 'go', 'stop'])
    >>> run(m, t.to_model()) == t
    True
    """

    machine: str
    start: Any
    steps: list[Step] = field(default_factory=list)
    end: Any = "incomplete"
    message: str | None = None
    pending: tuple[str, str] | None = None
    max_steps: int | None = None
    error: BaseException | None = field(default=None, compare=False, repr=False)
    outputs: dict[int, str] = field(default_factory=dict, compare=False, repr=False)

    # -- views ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self) -> Iterator[Step]:
        return iter(self.steps)

    def __getitem__(self, index: int) -> Step:
        return self.steps[index]

    @property
    def completions(self) -> list[str]:
        """The completions of the completed steps, in order."""
        return [step.completion for step in self.steps]

    @property
    def prompts(self) -> list[str]:
        """The prompts of the completed steps, in order."""
        return [step.prompt for step in self.steps]

    @property
    def states(self) -> list[Any]:
        """The states visited (the start, then every outcome that is not a sentinel)."""
        return [self.start] + [s.outcome for s in self.steps if not is_sentinel(s.outcome)]

    @property
    def raised(self) -> Raised | None:
        """The exception that ended the run, when its last step's program raised and the
        machine kept it (an agent function; the step's outcome is ``HALT``, and
        :func:`raised_note` wrote it in ``message``); ``None`` for every other end. The
        trace shows that step's outcome as raised, as explore and the diagrams do.

        >>> from agentic_machines import agent_machine
        >>> m = agent_machine(lambda model: int(model("n?")))
        >>> run(m, ScriptedModel(["x"])).raised, run(m, ScriptedModel(["7"])).raised
        (Raised(ValueError: invalid literal for int() with base 10: 'x'), None)
        """
        said = self.message or ""
        if self.end is not HALT or not self.steps or not said.startswith(_RAISED):
            return None
        kind, _, message = said[len(_RAISED) :].partition(": ")
        return Raised(kind, message, recorded=True)

    def shown_outcome(self, step: Step) -> str:
        """``step``'s outcome as text output shows it (:func:`show_outcome`), a step that
        raised as raised (:attr:`raised`).

        >>> from agentic_machines import agent_machine
        >>> m = agent_machine(lambda model: int(model("n?")))
        >>> t = run(m, ScriptedModel(["x"]))
        >>> t.shown_outcome(t.steps[-1])
        "RAISED (ValueError: invalid literal for int() with base 10: 'x')"
        """
        raised = self.raised if step is self.steps[-1] else None
        return show_outcome(step.outcome if raised is None else raised)

    @property
    def final(self) -> Any:
        """The last outcome: ``HALT``/``DIVERGE`` or the state the run stopped in."""
        return self.steps[-1].outcome if self.steps else self.start

    # -- reproduction --------------------------------------------------------------------
    def to_model(self) -> ScriptedModel:
        """A :class:`ScriptedModel` that makes ``run`` repeat this trace exactly.

        It answers the completions of every step, plus the pending completion of an
        ``"undecided"`` end. A ``"model-error"`` end repeats because the script runs
        out at the same call.
        """
        extra = [self.pending[1]] if self.pending is not None else []
        return ScriptedModel(self.completions + extra)

    def replay(self, machine: AgenticMachine, start: Any = None) -> Trace:
        """Run ``machine`` again with :meth:`to_model` and check every step is the same.

        Returns the new trace. Raises :class:`ReplayMismatch` at the first step whose
        prompt, state or outcome differs (for prompts, with the character offset where
        they diverge), so a changed machine is caught at the step it changed.

        >>> from agentic_machines import TableMachine, HALT
        >>> m = TableMachine({0: "go?"}, {(0, "go"): 0, (0, "stop"): HALT}, initial=0)
        >>> t = run(m, ScriptedModel(["go", "stop"]))
        >>> t.replay(m) == t
        True
        >>> changed = TableMachine({0: "go on?"}, {(0, "go"): 0, (0, "stop"): HALT}, initial=0)
        >>> t.replay(changed)
        Traceback (most recent call last):
          ...
        agentic_machines.errors.ReplayMismatch: step 0: the prompt differs from the recorded one at character 2: recorded 'go?', got 'go on?'. The machine no longer behaves as it did when the trace was recorded.
        """
        if start is None:
            start = self.start
            if not _may_be_state(machine, start):
                raise ReplayMismatch(
                    f"step 0: the recorded start state {brief(start)} is not a state of "
                    f"{_machine_name(machine)!r}: the trace was recorded on another machine; "
                    "replay it on that one",
                    index=0,
                )
            if isinstance(start, Opaque):
                if machine.initial is not None and encode_state(machine.initial) == encode_state(
                    start
                ):
                    start = machine.initial
                else:
                    raise InvalidArgument(
                        f"the trace's start state {brief(start)} was saved as its repr only; pass the real "
                        "start state: trace.replay(machine, start=...)"
                    )
        # The checker compares every state, prompt and outcome as the rerun makes them,
        # so a changed machine is reported at the step where it changed.
        checker = _ReplayCheck(machine, self)
        again = run(
            checker,
            self.to_model(),
            start,
            max_steps=self.max_steps if self.max_steps is not None else 1000,
        )
        if self.end != "incomplete" and (
            len(again.steps) != len(self.steps) or encode_state(again.end) != encode_state(self.end)
        ):
            raise ReplayMismatch(
                f"the replay ended after {counted(len(again.steps), 'step')} with {_describe_end(again, 120)}; "
                f"the recording ended after {counted(len(self.steps), 'step')} with "
                f"{_describe_end(self, 120)}.",
                index=min(len(again.steps), len(self.steps)),
            )
        if self.end == "incomplete" and self.pending is None and again.end == "model-error":
            # The recording stopped there (a played session left mid-run): the script's
            # end is the recording's end, not a model error of the replay.
            again.end, again.message, again.error = "incomplete", None, None
        return again

    # -- files ---------------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> None:
        """Write the trace as JSON lines (the format :func:`run` writes while running),
        each step's line with what the agent printed in it (``outputs``).

        >>> import os, tempfile
        >>> def chatty(model):
        ...     print("asking")
        ...     return model("go?")
        >>> from agentic_machines import agent_machine
        >>> t = run(agent_machine(chatty), ScriptedModel(["yes"]))
        >>> path = os.path.join(tempfile.mkdtemp(), "run.jsonl")
        >>> t.save(path)
        >>> t.outputs, Trace.load(path).outputs
        ({0: 'asking\\n'}, {0: 'asking\\n'})
        """
        with TraceWriter(path, self.machine, self.start, self.max_steps) as out:
            outputs = self.outputs
            for step in self.steps:
                out.step(step, output=outputs.get(step.index, ""))
            # A run cut in the middle of a call (a harness that raised) keeps that call.
            if self.end != "incomplete" or self.pending is not None:
                out.end(self)

    @classmethod
    def load(cls, path: str | os.PathLike, *, max_bytes: int = MAX_JSON_LINES_BYTES) -> Trace:
        """Read a trace file; a file without an end line (a killed run) loads with ``end="incomplete"``.

        Only a regular file of at most ``max_bytes`` (default 64 MiB) is read: a FIFO, a
        device or a directory, or a larger file, is refused with the limit in the message.

        Any other file either loads or raises one :class:`~agentic_machines.errors.TraceError`
        whose message starts with ``path:line:`` and says what is wrong (see
        :func:`read_trace_file`).

        >>> import os, tempfile
        >>> from agentic_machines import TableMachine, HALT
        >>> m = TableMachine({(0, "x"): "go?"}, {((0, "x"), "stop"): HALT}, initial=(0, "x"))
        >>> path = os.path.join(tempfile.mkdtemp(), "run.jsonl")
        >>> t = run(m, ScriptedModel(["stop"]), path=path)
        >>> Trace.load(path) == t
        True
        """
        machine, start, max_steps, steps, end, outputs = read_trace_file(path, max_bytes)
        trace = cls(machine=machine, start=start, max_steps=max_steps, steps=steps)
        trace.outputs = outputs
        if end is not None:
            trace.end, trace.message, trace.pending = end
        return trace

    # -- display -------------------------------------------------------------------------
    def __str__(self) -> str:
        head = self._head()
        rows = [["#", "state", "prompt", "completion", "outcome"]] + [r for r in self._rows()]
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        lines = [head] + [
            "  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows
        ]
        return "\n".join(lines)

    def describe(self, width: int = 100, full: bool = False) -> str:
        """Every step, readable: the state, what the prompt gained since the previous step
        (or, with ``full``, the whole prompt), the whole completion, and the outcome.

        Lines other than the completion are cut to ``width`` characters (the terminal's);
        the completion is always whole: it is what the model said. ``prompt +`` shows the
        text added after the first ``kept`` characters of the previous step's prompt.

        >>> from agentic_machines import TableMachine, HALT
        >>> m = TableMachine({0: "Q?", 1: "Q? A."}, {(0, "A."): 1, (0, "ok"): 0, (1, "A."): 1,
        ...                  (1, "ok"): HALT}, initial=0)
        >>> print(run(m, ScriptedModel(["A.", "ok"])).describe())
        Trace of 'table' from 0: 2 steps, ended with HALT (1).
        step 0  state 0
          prompt      'Q?'
          completion  'A.'
          outcome     1
        step 1  state 1
          prompt +    (after 2 kept) ' A.'
          completion  'ok'
          outcome     HALT (1)
        """
        width = max(width, 40)
        lines = [self._head()]
        previous: str | None = None
        answer: str | None = None
        for k, step in enumerate(self.steps):
            head = f"step {step.index}  state "  # the state cut where it leaves the one before
            near = [s.state for s in self.steps[k - 1 : k]]
            lines.append(head + short_repr(step.state, width - len(head), near))
            kept, added = prompt_gain(previous, step.prompt)
            if full or not kept:
                if full and "\n" in step.prompt:
                    lines.append("  prompt")
                    # model output inside the prompt: no escape code reaches the terminal
                    lines.extend(f"    | {escape_controls(ln)}" for ln in step.prompt.split("\n"))
                elif full:  # whole, however long: --full promises every prompt in full
                    lines.append(f"  prompt      {step.prompt!r}")
                else:
                    lines.append(f"  prompt      {clip_prompt_repr(step.prompt, width - 14)}")
            else:
                head = f"  prompt +    (after {kept} kept) "
                # past the model's answer repeated: what the harness added (an Observation)
                gain = clip_prompt_repr(added, max(width - len(head), 10), echoes(answer or ""))
                lines.append(head + gain)
            lines.append(f"  completion  {step.completion!r}")
            clock = " (clock)" if step.clock else ""
            lines.append(clip(f"  outcome     {self.shown_outcome(step)}{clock}", width))
            previous, answer = step.prompt, step.completion
        return "\n".join(lines)

    def _head(self) -> str:
        n = len(self.steps)
        head = f"Trace of {self.machine!r} from {self.start!r}: {counted(n, 'step')}, {_describe_end(self)}."
        timed = sum(step.clock for step in self.steps)
        if timed:
            head += f" {counted(timed, 'step')} marked (clock): their outcome came from a wall-clock deadline or the machine's load."
        return head

    def _repr_markdown_(self) -> str:
        head = f"**Trace** of `{self.machine}` from `{self.start!r}`: {counted(len(self.steps), 'step')}, {_describe_end(self)}.\n\n"
        table = ["| # | state | prompt | completion | outcome |", "|---|---|---|---|---|"]
        for r in self._rows():
            table.append("| " + " | ".join(cell.replace("|", "\\|") for cell in r) + " |")
        return head + "\n".join(table)

    def _rows(self, first: int = 20, last: int = 5) -> Iterator[list[str]]:
        """Table rows; a long trace shows its first and last steps around a gap."""
        shown: list[Step | None] = (
            list(self.steps)
            if len(self.steps) <= first + last + 1
            else [*self.steps[:first], None, *self.steps[-last:]]
        )
        before = {id(s): p for p, s in zip(self.steps, self.steps[1:])}
        for step in shown:
            if step is None:
                yield ["…", f"({len(self.steps) - first - last} more steps)", "", "", ""]
                continue
            yield [
                str(step.index),
                short_repr(step.state, 24, [p.state for p in (before.get(id(step)),) if p]),
                clip_prompt_repr(step.prompt, 42, [p.prompt for p in (before.get(id(step)),) if p]),
                repr(shorten(step.completion, 24)),
                _outcome_cell(self.shown_outcome(step)) + (" (clock)" if step.clock else ""),
            ]


def _outcome_cell(shown: str) -> str:
    # a raised step keeps its type and the start of its message; a state both its ends
    return clip(shown, 40) if shown.startswith("RAISED (") else shorten(shown, 24)


class _ReplayCheck(AgenticMachine):
    """``machine`` seen through a recorded trace: any difference raises ReplayMismatch."""

    def __init__(self, machine: AgenticMachine, trace: Trace) -> None:
        self.machine, self.trace, self.index = machine, trace, 0
        self.name = _machine_name(machine)

    def prompt(self, state: Any) -> str:
        prompt = self.machine.prompt(state)
        steps, i = self.trace.steps, self.index
        if i < len(steps) and steps[i].clock:
            # The clock decided this step's prompt or outcome when it was recorded: a
            # different prompt now is no change of the machine, so it is not compared.
            return prompt
        if i < len(steps):
            if encode_state(state) != encode_state(steps[i].state):
                self._mismatch(
                    f"the state is {brief(state)}, recorded {brief(steps[i].state)}",
                    steps[i].prompt,
                    prompt,
                )
            expected = steps[i].prompt
        elif i == len(steps) and self.trace.pending is not None:
            expected = self.trace.pending[0]
        else:
            return prompt
        if prompt != expected:
            self._mismatch(describe_difference(expected, prompt), expected, prompt)
        return prompt

    def harness(self, state: Any, completion: str) -> Any:
        try:
            outcome = self.machine.harness(state, completion)
        except ClockDependent:
            # The clock decided this step, now or when recorded: a different outcome is
            # no change of the machine, so it is not compared.
            self.index += 1
            raise
        steps, i = self.trace.steps, self.index
        if i < len(steps) and steps[i].clock:
            self.index += 1
            return outcome
        if i < len(steps) and encode_state(outcome) != encode_state(steps[i].outcome):
            self._mismatch(
                f"after {brief(completion)} the outcome is {brief(outcome)}, "
                f"recorded {brief(steps[i].outcome)}",
                steps[i].prompt,
                steps[i].prompt,
            )
        self.index += 1
        return outcome

    def raised(self, state: Any, completion: str) -> Raised | None:
        """What the machine's program raised in this step, when it keeps it: the replay's
        trace ends raised as the recording did."""
        ask = halt_raised(self.machine)
        return None if ask is None else ask(state, completion)

    def _mismatch(self, problem: str, expected: str, got: str) -> None:
        raise ReplayMismatch(
            f"step {self.index}: {problem}. The machine no longer behaves as it did when the trace was recorded.",
            index=self.index,
            expected=expected,
            got=got,
        )


def _may_be_state(machine: AgenticMachine, value: Any) -> bool:
    """False when ``machine`` lists its states and ``value`` is not one of them (an
    unhashable value, a list read from a file, is none of them); True when it does not list
    them, as nothing can be said without running it."""
    states = getattr(machine, "states", None)
    if states is None or isinstance(value, Opaque):
        return True
    try:
        return value in states
    except TypeError:
        return False


def _machine_name(machine: AgenticMachine) -> str:
    return getattr(machine, "name", None) or type(machine).__name__


_RAISED = "raised "  # how a trace's message starts when its program raised (Trace.raised)


def raised_note(machine: AgenticMachine, step: Step) -> str | None:
    """``"raised <Type>: <message>"`` when ``machine`` ended at ``step`` because its program
    raised and it recorded the exception instead of raising it (an agent function: its
    ``raised(state, completion)``; a ``HarnessMachine(on_error="halt")``: its ``result``),
    as explore finds it (:func:`~agentic_machines._outcome.halt_raised`); ``None``
    otherwise. A halting step looks the same as a normal return, so the trace says it in
    its message.

    >>> from agentic_machines import agent_machine
    >>> m = agent_machine(lambda model: int(model("n?")))
    >>> raised_note(m, Step(0, m.initial, "n?", "x", HALT))
    "raised ValueError: invalid literal for int() with base 10: 'x'"
    """
    ask = halt_raised(machine)
    record = None if ask is None else ask(step.state, step.completion)
    if record is None:
        return None
    return f"{_RAISED}{record.type}: {record.message}" if record.message else _RAISED + record.type


def _describe_end(trace: Trace, width: int | None = None) -> str:
    """How the run ended, in words; with ``width``, the message (which a trace file may
    hold at any length) is cut to that many characters and its control characters escaped."""
    end = trace.end
    message = trace.message if width is None or not trace.message else excerpt(trace.message, width)
    raised = trace.raised
    if raised is not None:  # an end of its own, as explore and the diagrams show it
        if width is not None:
            raised = Raised(raised.type, excerpt(raised.message, width))
        return f"ended with {show_outcome(raised)}"
    if is_sentinel(end):
        said = f" ({message})" if message else ""
        return f"ended with {show_outcome(end)}{said}"
    if end == "max_steps":
        return f"stopped at max_steps ({trace.max_steps})"
    if end == "incomplete":
        return "incomplete (no end yet: the run was stopped, or is still being played)"
    return f"{end}: {message}".rstrip(".")  # callers end the sentence themselves


def run(
    machine: AgenticMachine,
    model: Model,
    start: Any = None,
    *,
    max_steps: int = 1000,
    path: str | os.PathLike | None = None,
    raise_errors: bool = False,
) -> Trace:
    """Run ``machine`` from ``start`` (default ``machine.initial``), one model call per step.

    Stops at ``HALT``/``DIVERGE``, after ``max_steps`` steps, when the machine raises
    ``Undecided``, or when the model raises (end ``"model-error"``; re-raised instead
    with ``raise_errors=True``). With ``path``, every completed step is on disk as soon
    as it is done. See the module docstring for the ends and the file format.

    >>> from agentic_machines import TableMachine, HALT
    >>> loop = TableMachine({0: "again?"}, {(0, "yes"): 0, (0, "no"): HALT}, initial=0)
    >>> run(loop, ScriptedModel(["yes"] * 10), max_steps=3).end
    'max_steps'
    >>> t = run(loop, ScriptedModel(["yes"]))
    >>> t.end, len(t), type(t.error).__name__
    ('model-error', 1, 'ScriptExhausted')
    """
    if start is None:
        start = getattr(machine, "initial", None)
        if start is None:
            raise InvalidArgument(
                f"no start state: pass run(machine, model, start) or build {getattr(machine, 'name', 'the machine')!r} with initial=..."
            )
    if not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 0:
        raise InvalidArgument(f"max_steps must be an integer >= 0, got {max_steps!r}")
    if not callable(getattr(model, "complete", None)):
        raise InvalidArgument(
            f"{model!r} is not a model: it needs a complete(prompt) -> str method"
        )
    name = _machine_name(machine)
    trace = Trace(machine=name, start=start, max_steps=max_steps)
    writer = TraceWriter(path, name, start, max_steps) if path is not None else None
    try:
        try:
            trace = _steps(machine, model, trace, writer, raise_errors)
        except Exception as exc:
            # A bug in the machine (a harness that raises on some completion) propagates,
            # but the file says why the run stopped: never a header-only trace.
            if writer is not None:
                if trace.end != "model-error":  # a model error re-raised (raise_errors=True)
                    trace.end = "harness-error"
                trace.message = f"{type(exc).__name__}: {exc}"
                writer.end(trace)
            raise
        if writer is not None:
            writer.end(trace)
    finally:
        if writer is not None:
            writer.close()  # without an end line if the run was interrupted: Trace.load says "incomplete"
    return trace


def _steps(
    machine: AgenticMachine,
    model: Model,
    trace: Trace,
    writer: TraceWriter | None,
    raise_errors: bool,
) -> Trace:
    state = trace.start
    # Bound once: on a cheap machine the attribute lookups and Step's Python-level
    # __new__ cost more than the machine itself (benchmarks/bench_run.py).
    prompt_of, complete, harness = machine.prompt, model.complete, machine.harness
    write = writer.step if writer is not None else None
    make_step = tuple.__new__  # what Step(...) does, without the generated wrapper

    def failed(exc: Exception | None = None, answer: Any = None) -> Exception:
        return _model_failed(trace, raise_errors, exc, answer)

    record = trace.steps.append
    printed = _printer(machine)  # None unless an agent function prints in its workers
    for index in range(trace.max_steps or 0):
        timed = False  # this step's prompt or outcome came from the clock
        try:
            prompt = prompt_of(state)
        except ClockDependent as exc:
            prompt, timed = exc.outcome, True
        except Undecided as exc:
            trace.end, trace.message = "undecided", str(exc)
            return trace
        try:
            completion = complete(prompt)
        except Exception as exc:  # noqa: BLE001 - a model failure ends the run; the trace keeps it
            failed(exc)
            if raise_errors:
                raise
            return trace
        if type(completion) is not str and not isinstance(completion, str):
            failure = failed(answer=completion)
            if raise_errors:
                raise failure
            return trace
        try:
            outcome = harness(state, completion)
        except ClockDependent as exc:
            outcome, timed = exc.outcome, True  # the model sees the timeout, as it would live
        except Undecided as exc:
            trace.end, trace.message, trace.pending = "undecided", str(exc), (prompt, completion)
            return trace
        step = make_step(Step, (index, state, prompt, completion, outcome, timed))
        record(step)
        if printed is not None:
            text = printed(step, trace.start if index == 0 else None)
            if text:
                trace.outputs[index] = text
            if write is not None:
                write(step, output=text)
        elif write is not None:
            write(step)  # flushed before the next model call: a kill loses no completed step
        if outcome is HALT or outcome is DIVERGE:
            trace.end = outcome
            if outcome is HALT:  # a program that raised halts too: the message says so
                trace.message = raised_note(machine, step)
            return trace
        state = outcome
    trace.end = "max_steps"
    return trace


def step_output(machine: Any, step: Step, start: Any = None) -> str:
    """What an agent function printed (stdout and stderr, captured by its worker) in
    ``step``, with what it printed before its first model call when ``start`` is given
    and is the machine's initial state; ``""`` for other machines, inline agents (they
    print to the caller's streams as they run), and steps the clock decided (asking
    for those would run them again).

    >>> from agentic_machines import agent_machine
    >>> def chatty(model):
    ...     print("asking")
    ...     print("got", model("go?"))
    >>> m = agent_machine(chatty)
    >>> step_output(m, Step(0, m.initial, "go?", "yes", HALT), m.initial)
    'asking\\ngot yes\\n'
    """
    printed = _printer(machine)
    return "" if printed is None else printed(step, start)


def _printer(machine: Any) -> Any:
    """``printed(step, start)`` (:func:`step_output`) for an agent machine run in worker
    processes, else ``None`` (inline, ``output`` would run a step again to ask)."""
    from .agent import AgentMachine  # the agent runtime imports run's neighbours, not run

    if not isinstance(machine, AgentMachine) or machine.isolation != "process":
        return None
    output = machine.output

    def printed(step: Step, start: Any = None) -> str:
        if step.clock:
            return ""
        before = output(start) if start is not None and start == machine.initial else ""
        return str(before + output(step.state, step.completion))

    return printed


def _model_failed(
    trace: Trace, raise_errors: bool, exc: Exception | None = None, answer: Any = None
) -> Exception:
    """End ``trace`` with ``"model-error"``: the model raised ``exc``, or answered ``answer``,
    which is no string. Returns the exception, which the trace keeps (and which the
    caller re-raises with ``raise_errors``, once out of any agent function that could
    catch it)."""
    if exc is None:
        exc = InvalidArgument(
            f"the model answered {answer!r} ({type(answer).__name__}); completions must be strings (C = str)"
        )
    trace.end, trace.error = "model-error", exc
    if not raise_errors:
        trace.message = f"{type(exc).__name__}: {exc}"
    return exc
