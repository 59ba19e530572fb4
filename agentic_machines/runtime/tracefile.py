"""The trace file format: what ``run(..., path=...)`` writes and ``Trace.load`` reads.

A trace file is JSON lines: a header (``format``, ``version``, the machine's name, the
start state, ``max_steps``), one line per completed :class:`Step`, flushed as the run
goes, and an end line. A step's prompt is stored as what it adds to the previous one
(:func:`prompt_gain`); states are written with :func:`encode_state` and read back with
:func:`decode_state`. Every check of a file being read is in one place
(``read_trace_file``), and every failure is a :class:`~agentic_machines.errors.TraceError`
naming the line. :mod:`agentic_machines.runtime.run` runs machines and re-exports the
public names here.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, NoReturn

from .._text import counted, shared_prefix
from ..errors import InvalidArgument, TraceError
from ..machine import DIVERGE, HALT, is_sentinel
from ._jsonl import (
    MAX_JSON_LINES_BYTES,
    JsonLinesWriter,
    brief,
    encode_json,
    encode_json_ascii,
    read_json_records,
)
from .harness import TraceState

__all__ = [
    "Step",
    "Opaque",
    "encode_state",
    "decode_state",
    "prompt_gain",
    "END_REASONS",
    "FORMAT",
    "VERSION",
    "READ_VERSIONS",
]

FORMAT = "agentic-machines-trace"
VERSION = 2
"""The trace format written. Version 2 stores a prompt as a delta from the previous
step's prompt; version 1 files (every prompt whole) still load."""
READ_VERSIONS = (1, 2)

END_REASONS = ("max_steps", "undecided", "model-error", "harness-error", "incomplete")
"""The string ends of a trace; the other two ends are ``HALT`` and ``DIVERGE``."""


class Step(NamedTuple):
    """One transition: in ``state`` the model saw ``prompt``, said ``completion``; h gave ``outcome``.

    ``clock`` is True when the outcome (or the prompt) came from a wall-clock deadline or
    the host's load: the machine raised
    :class:`~agentic_machines.errors.ClockDependent` and the run went on with its
    outcome. Such a step is what happened, not what h is.

    >>> Step(0, "a", "say b", "b", "b").outcome, Step(0, "a", "say b", "b", "b").clock
    ('b', False)
    """

    # The public field name shadows tuple.index (a method); Step is saved and documented
    # under this name, so the clash is declared here once rather than renamed away.
    index: int  # type: ignore[assignment]
    state: Any
    prompt: str
    completion: str
    outcome: Any
    clock: bool = False


@dataclass(frozen=True)
class Opaque:
    """A state that :func:`encode_state` could only save as its ``repr``.

    >>> Opaque("Point(x=1)")
    Point(x=1)
    """

    repr: str

    def __repr__(self) -> str:
        return self.repr


def prompt_gain(previous: str | None, prompt: str) -> tuple[int, str]:
    """What ``prompt`` adds to ``previous``: the length of their common prefix and the rest.

    A transcript's prompt grows at its end, so ``(len(previous), new text)``; a prompt
    that changed earlier keeps only the common prefix. ``previous=None`` keeps nothing.
    Trace files store prompts this way, and ``run`` and ``play`` show what a prompt gained.

    >>> prompt_gain("Q: hi\\n", "Q: hi\\nA: yo\\n")
    (6, 'A: yo\\n')
    >>> prompt_gain("abc", "abd"), prompt_gain(None, "x")
    ((2, 'd'), (0, 'x'))
    """
    if previous is None:
        return 0, prompt
    common = shared_prefix(previous, prompt)
    return common, prompt[common:]


_escape = json.encoder.encode_basestring  # a str as a JSON string (C): what json.dumps uses
_escape_ascii = json.encoder.encode_basestring_ascii


def _value(value: Any, esc: Callable[[str], str]) -> str:
    r"""The JSON text of :func:`encode_state` of ``value``, as ``json.dumps`` writes it
    (``esc`` is :data:`_escape` or :data:`_escape_ascii`).

    Ints, strings, ``None`` and the sentinels directly: a run's first and last lines hold
    them, and the generic encoder (its Python half, and the C encoder it builds on every
    call) costs tens of µs when it is cold, as it is at a run's start and end.

    >>> _value(HALT, _escape), _value(DIVERGE, _escape_ascii), _value(("a", None), _escape)
    ('{"sentinel": "1"}', '{"sentinel": "\\u2191"}', '{"tuple": ["a", null]}')
    """
    kind = type(value)
    if kind is int:
        return str(value)
    if kind is str:
        return esc(value)
    if value is None:
        return "null"
    if value is HALT:
        return '{"sentinel": "1"}'
    if value is DIVERGE:
        return f'{{"sentinel": {esc("↑")}}}'
    encoded = encode_state(value)
    return (encode_json if esc is _escape else encode_json_ascii)(encoded)


def _utf8_line(text_of: Callable[[Callable[[str], str]], str]) -> bytes:
    """``text_of(esc)`` encoded as UTF-8, or, when a lone surrogate has no UTF-8 form,
    ``text_of`` again with every string in ASCII escapes (which read back the same)."""
    try:
        return text_of(_escape).encode()
    except UnicodeEncodeError:
        return text_of(_escape_ascii).encode("ascii")


def _step_writer(out: JsonLinesWriter, start: Any) -> Callable[[Step], None]:
    """``write(step)`` for a file whose header says ``start``: one step's line, built in
    one f-string, encoded once and written with one ``os.write``.

    The line is the JSON ``json.dumps`` gives for the step's dict (a property test checks
    it), assembled directly: the writer's budget is one write's cost again
    (benchmarks/bench_trace.py), and building a dict and walking it costs more. A closure,
    not a method: what it keeps between steps (the previous prompt, the previous outcome
    and its JSON text, the descriptor) are cell reads, not attribute lookups.
    """
    fd, write_fd, finish = out.fileno(), os.write, out.write_bytes
    previous_prompt: str | None = None
    previous_outcome = start
    # The previous line's outcome as JSON text, when it was an int or a str escaped for a
    # UTF-8 line (else None). A run's next state is that outcome, the same object, so
    # such a value is encoded once: as an outcome, then as the next line's state.
    previous_text: str | None = None

    def write(step: Step, esc: Callable[[str], str] = _escape, output: str = "") -> None:
        nonlocal previous_prompt, previous_outcome, previous_text
        index, state, prompt, completion, outcome, clock = step
        # A transcript's prompt is the previous one plus new text: writing it whole on
        # every line would make the file quadratic in the run's length. The line keeps
        # the length of the common prefix and the new text; Trace.load rebuilds it.
        previous = previous_prompt
        if previous and prompt.startswith(previous):  # the common case, at C speed
            kept = len(previous)
            added = prompt[kept:]
        else:
            kept, added = prompt_gain(previous, prompt)
        # A TraceState holds every completion so far; writing it in full on every line
        # would make the file quadratic in the run's length. When it is the previous
        # outcome (or the start), and when the outcome is the state plus this
        # completion, the line says so instead (None below); Trace.load rebuilds both.
        if state is previous_outcome and previous_text is not None:
            shown_state: str | None = previous_text
        elif type(state) is TraceState and state == previous_outcome:
            shown_state = None
        else:
            shown_state = _value(state, esc)
        # Only an int's or a str's text is kept for the next line: a state of another
        # type could be mutable, and a machine that changed it in place would find the
        # old text written.
        kind = type(outcome)
        if kind is int:
            shown: str | None = f"{outcome}"  # the same text as str(), without the call
            reuse = shown
        elif kind is str:
            shown = reuse = esc(outcome)
        else:
            reuse = None
            if (
                kind is TraceState
                and type(state) is TraceState
                and outcome == state.then(completion)
            ):
                shown = None
            else:
                shown = _value(outcome, esc)
        if kept and shown_state is not None and shown is not None and not clock and not output:
            text = (  # the common line: one f-string, its fixed parts merged by the compiler
                f'{{"kind": "step", "index": {index}, "state": {shown_state}, '
                f'"prompt_keep": {kept}, "prompt_add": {esc(added)}, '
                f'"completion": {esc(completion)}, "outcome": {shown}}}\n'
            )
        else:
            said = '"same_state": true' if shown_state is None else f'"state": {shown_state}'
            gave = '"outcome_then": true' if shown is None else f'"outcome": {shown}'
            grew = (
                f'"prompt_keep": {kept}, "prompt_add": {esc(added)}'
                if kept
                else f'"prompt": {esc(prompt)}'
            )
            # what an agent function printed in the step (its worker captured it)
            end = (', "clock": true' if clock else "") + (
                f', "output": {esc(output)}}}\n' if output else "}\n"
            )
            text = (
                f'{{"kind": "step", "index": {index}, {said}, {grew}, '
                f'"completion": {esc(completion)}, {gave}{end}'
            )
        try:
            data = text.encode()
        except UnicodeEncodeError:  # a lone surrogate: JSON's \\u escapes read back the same
            previous_text = None  # the retry escapes every value again, in ASCII,
            write(step, _escape_ascii, output)
            previous_text = None  # and its ASCII text is not what the next UTF-8 line writes
            return
        try:
            written = write_fd(fd, data)  # the one write, inline
        except OSError:  # nothing was written: write_bytes tries again and names the file
            written = 0
        if written != len(data):  # a short write (a full pipe, a signal) finishes there too
            finish(data[written:])
        previous_outcome, previous_text, previous_prompt = outcome, reuse, prompt

    return write


class TraceWriter:
    """Writes the header at once, then one flushed line per ``step(step)``, then the end line."""

    def __init__(
        self, path: str | os.PathLike, machine: str, start: Any, max_steps: int | None
    ) -> None:
        self._out = JsonLinesWriter(path, "w")
        # The header and end lines are f-strings too, the text json.dumps gives for their
        # dicts (a property test checks it): a run pays for them once, but cold (the
        # generic encoder's first call in a while cost as much as a hundred step lines).
        self._out.write_bytes(
            _utf8_line(
                lambda esc: (
                    f'{{"format": "{FORMAT}", "version": {VERSION}, "kind": "header", '
                    f'"machine": {_value(machine, esc)}, "start": {_value(start, esc)}, '
                    f'"max_steps": {_value(max_steps, esc)}}}\n'
                )
            )
        )
        self.step: Callable[..., None] = _step_writer(self._out, start)
        """Write one step line (``step(step, output=TEXT)``: with what an agent printed in
        it): encoded once, written with one ``os.write``."""

    def end(self, trace: Any) -> None:  # a run.Trace (run imports this module, not back)
        pending = trace.pending
        if pending:
            pending = list(pending)
            if not (len(pending) == 2 and type(pending[0]) is str and type(pending[1]) is str):
                self._out.write(self._end_record(trace, pending))  # not a run's: the long way
                return
        message = trace.message
        if message is not None and type(message) is not str:
            self._out.write(self._end_record(trace, pending))
            return
        self._out.write_bytes(
            _utf8_line(
                lambda esc: (
                    f'{{"kind": "end", "end": {_value(trace.end, esc)}, '
                    f'"steps": {len(trace.steps)}, '
                    f'"message": {"null" if message is None else esc(message)}, '
                    f'"pending": {f"[{esc(pending[0])}, {esc(pending[1])}]" if pending else "null"}}}\n'
                )
            )
        )

    @staticmethod
    def _end_record(trace: Any, pending: list | None) -> dict[str, Any]:
        return {
            "kind": "end",
            "end": encode_state(trace.end),
            "steps": len(trace.steps),
            "message": trace.message,
            "pending": pending or None,
        }

    def close(self) -> None:
        self._out.close()

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- reading a trace file: every check in one place ---------------------------------------


def read_trace_file(
    path: str | os.PathLike, max_bytes: int = MAX_JSON_LINES_BYTES
) -> tuple[str, Any, int | None, list[Step], Any, dict[int, str]]:
    """Read and check a trace file: ``(machine, start, max_steps, steps, end, outputs)``,
    where ``end`` is ``(end, message, pending)`` or ``None`` (no end line: an interrupted
    run) and ``outputs`` is what an agent printed in each step, by step index.

    Every way a file can be wrong raises :class:`TraceError` naming ``path:line``: bytes
    that are not UTF-8, binary data, a line that is not JSON (NaN included), nesting too
    deep, a missing header, an unknown format or version, a missing field or one of the
    wrong type, an unknown state encoding, step indices out of order, a step after the
    run ended, an end line whose step count disagrees, or a line after the end line.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.jsonl")
    >>> with TraceWriter(path, "m", 0, None) as out:
    ...     out.step(Step(0, 0, "p", "c", HALT))
    >>> read_trace_file(path)[:4]
    ('m', 0, None, [Step(index=0, state=0, prompt='p', completion='c', outcome=1, clock=False)])
    """
    name = os.fspath(path)

    def fail(line: int | None, problem: str) -> NoReturn:
        raise TraceError(name, line, problem)

    def field_of(rec: dict, line: int, key: str, types: tuple, what: str) -> Any:
        if key not in rec:
            fail(line, f"the {rec.get('kind', 'line')} line has no {key!r} field")
        value = rec[key]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            fail(line, f"{key!r} must be {what}, got {brief(value)}")
        return value

    def state_of(rec: dict, line: int, key: str) -> Any:
        if key not in rec:
            fail(line, f"the {rec.get('kind', 'line')} line has no {key!r} field")
        try:
            return decode_state(rec[key])
        except InvalidArgument as exc:
            fail(line, f"{key!r}: {exc}")

    records = read_json_records(
        name,
        TraceError,
        limit=max_bytes,
        what="trace",
        advice="if you trust the file, load it in Python with Trace.load(path, max_bytes=...)",
    )
    if not records:
        fail(None, "the file is empty (or its only line is cut off): no trace header line")
    line, header = records[0]
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        fail(line, "not a trace file written by agentic_machines (no trace header line)")
    version = header.get("version")
    if type(version) is not int or version not in READ_VERSIONS:
        fail(
            line,
            f"unknown trace format version {brief(version)}; this toolkit reads versions "
            f"{', '.join(map(str, READ_VERSIONS))}",
        )
    machine = field_of(header, line, "machine", (str,), "a string")
    start = state_of(header, line, "start")
    max_steps = header.get("max_steps")
    if max_steps is not None and (type(max_steps) is not int or max_steps < 0):
        fail(line, f"'max_steps' must be a whole number >= 0 or null, got {brief(max_steps)}")
    steps: list[Step] = []
    outputs: dict[int, str] = {}
    previous_prompt = ""
    final = start
    end = None
    for line, rec in records[1:]:
        if not isinstance(rec, dict) or rec.get("kind") not in ("step", "end"):
            fail(line, f"unexpected line {brief(rec)}; expected a step or end line")
        if end is not None:
            fail(line, "a line after the end line; the end line must be the last")
        if rec["kind"] == "end":
            value = state_of(rec, line, "end")
            if not (is_sentinel(value) or (type(value) is str and value in END_REASONS)):
                fail(
                    line,
                    f"unknown end {brief(value)}; expected 1, ↑ or one of {', '.join(END_REASONS)}",
                )
            if "steps" in rec:
                count = field_of(rec, line, "steps", (int,), "a whole number")
                if count != len(steps):
                    fail(
                        line,
                        f"the end line says {counted(count, 'step')} but the file has {len(steps)}",
                    )
            message = rec.get("message")
            if message is not None and not isinstance(message, str):
                fail(line, f"'message' must be a string or null, got {brief(message)}")
            pending = rec.get("pending")
            if pending is not None and not (
                isinstance(pending, list)
                and len(pending) == 2
                and all(isinstance(x, str) for x in pending)
            ):
                fail(
                    line,
                    f"'pending' must be null or [prompt, completion], got {brief(pending)}",
                )
            end = (value, message, tuple(pending) if pending is not None else None)
            continue
        index = field_of(rec, line, "index", (int,), "a whole number")
        if index != len(steps):
            fail(
                line,
                f"step index {index} where {len(steps)} was expected (a step is missing or repeated)",
            )
        if is_sentinel(final) and steps:
            fail(line, f"a step after the run ended with {brief(final)}")
        if rec.get("same_state") is True:
            state = final
        else:
            state = state_of(rec, line, "state")
        if "prompt_keep" in rec:
            if version < 2 or "prompt" in rec:
                fail(line, "'prompt_keep' needs a version 2 file and no 'prompt' field")
            kept = field_of(rec, line, "prompt_keep", (int,), "a whole number")
            if not 0 < kept <= len(previous_prompt):
                fail(
                    line,
                    f"'prompt_keep' is {kept} but the previous prompt has "
                    f"{len(previous_prompt)} characters",
                )
            prompt = previous_prompt[:kept] + field_of(rec, line, "prompt_add", (str,), "a string")
        else:
            prompt = field_of(rec, line, "prompt", (str,), "a string")
        previous_prompt = prompt
        completion = field_of(rec, line, "completion", (str,), "a string")
        if rec.get("outcome_then") is True:
            if not isinstance(state, TraceState):
                fail(line, "'outcome_then' is only allowed when the state is a trace state")
            outcome = state.then(completion)
        else:
            outcome = state_of(rec, line, "outcome")
        output = rec.get("output", "")
        if type(output) is not str:
            fail(line, f"'output' must be a string, got {brief(output)}")
        if output:
            outputs[index] = output
        timed = rec.get("clock", False)
        if type(timed) is not bool:
            fail(line, f"'clock' must be true or false, got {brief(timed)}")
        steps.append(Step(index, state, prompt, completion, outcome, timed))
        final = outcome
    return machine, start, max_steps, steps, end, outputs


# -- state encoding ---------------------------------------------------------------------

_MARKERS = ("sentinel", "tuple", "frozenset", "trace", "dict", "repr")


def encode_state(state: Any) -> Any:
    """A JSON value for ``state`` that :func:`decode_state` turns back into an equal value.

    ``str``, ``int``, ``float``, ``bool`` and ``None`` stay as they are; lists stay lists
    (their items encoded); a tuple becomes ``{"tuple": [...]}``, a frozenset
    ``{"frozenset": [...]}``, a :class:`~agentic_machines.TraceState` ``{"trace":
    [completions]}``, ``HALT``/``DIVERGE`` ``{"sentinel": "1"}``/``{"sentinel": "↑"}``;
    a dict stays a dict when its keys are strings (else ``{"dict": [[k, v], ...]}``);
    anything else becomes ``{"repr": repr(state)}`` and loads as an :class:`Opaque`.
    Iterative, so deeply nested states do not hit the recursion limit.

    >>> encode_state(("s", 1, HALT))
    {'tuple': ['s', 1, {'sentinel': '1'}]}
    >>> decode_state(encode_state(("s", [1, (2,)], frozenset({3})))) == ("s", [1, (2,)], frozenset({3}))
    True
    """
    kind = type(state)
    if kind in _PLAIN and not (kind is float and not math.isfinite(state)):
        return state  # the common states need no walk
    if kind is TraceState:
        return {"trace": list(state.completions)}
    return _convert(state, _encode_one)


_PLAIN = frozenset({str, int, float, bool, type(None)})
"""Exact types that :func:`encode_state` returns as they are (subclasses take the long way)."""


def decode_state(value: Any) -> Any:
    """The inverse of :func:`encode_state` (``{"repr": r}`` gives ``Opaque(r)``).

    A value that :func:`encode_state` cannot have written (an unknown sentinel, a trace
    state that is not a list of strings, NaN, ...) raises
    :class:`~agentic_machines.errors.InvalidArgument` saying which encoding is unknown.

    >>> decode_state({"sentinel": "↑"}), decode_state({"trace": ["a"]})
    (↑, TraceState('a'))
    """
    return _convert(value, _decode_one)


def _convert(root: Any, one: Any) -> Any:
    """Apply ``one`` bottom-up without recursion.

    ``one(value)`` returns either ``("leaf", result)`` or ``("node", children, build)``,
    where ``build(converted_children)`` makes the result.
    """
    result: list[Any] = []
    stack: list[tuple[Any, ...]] = [("visit", root)]
    while stack:
        item = stack.pop()
        if item[0] == "visit":
            kind, *rest = one(item[1])
            if kind == "leaf":
                result.append(rest[0])
            else:
                children, build = rest
                stack.append(("build", len(children), build))
                stack.extend(("visit", child) for child in reversed(children))
        else:
            _, n, build = item
            args = result[len(result) - n :] if n else []
            del result[len(result) - n :]
            result.append(build(args))
    return result[0]


def _encode_one(value: Any) -> tuple:
    if value is HALT:
        return ("leaf", {"sentinel": "1"})
    if value is DIVERGE:
        return ("leaf", {"sentinel": "↑"})
    if isinstance(value, float) and not math.isfinite(value):
        return ("leaf", {"repr": repr(value)})  # JSON has no NaN or infinity
    if value is None or isinstance(value, (str, bool, int, float)):
        return ("leaf", value)
    if isinstance(value, TraceState):
        return ("leaf", {"trace": list(value.completions)})
    if isinstance(value, Opaque):
        return ("leaf", {"repr": value.repr})
    if type(value) is list:
        return ("node", value, list)
    if type(value) is tuple:
        return ("node", list(value), lambda items: {"tuple": items})
    if type(value) is frozenset:
        return ("node", list(value), lambda items: {"frozenset": items})
    if type(value) is dict:
        keys = list(value)
        if all(isinstance(k, str) for k in keys) and not (len(keys) == 1 and keys[0] in _MARKERS):
            return ("node", list(value.values()), lambda items: dict(zip(keys, items)))
        flat = [x for kv in value.items() for x in kv]
        return (
            "node",
            flat,
            lambda items: {"dict": [items[i : i + 2] for i in range(0, len(items), 2)]},
        )
    return ("leaf", {"repr": repr(value)})


def _decode_one(value: Any) -> tuple:
    if isinstance(value, list):
        return ("node", value, list)
    if not isinstance(value, dict):
        if isinstance(value, float) and not math.isfinite(value):
            raise InvalidArgument(f"the number {value!r} is not a state value (NaN or infinite)")
        return ("leaf", value)
    if len(value) == 1:
        ((key, inner),) = value.items()
        if key == "sentinel":
            if inner not in ("1", "↑"):
                raise InvalidArgument(
                    f"unknown state encoding {brief(value)}: a sentinel is '1' or '↑'"
                )
            return ("leaf", HALT if inner == "1" else DIVERGE)
        if key == "trace":
            if not (isinstance(inner, list) and all(isinstance(c, str) for c in inner)):
                raise InvalidArgument(
                    f"unknown state encoding {brief(value)}: a trace state is a list of strings"
                )
            return ("leaf", TraceState(tuple(inner)))
        if key == "repr":
            if not isinstance(inner, str):
                raise InvalidArgument(f"unknown state encoding {brief(value)}: a repr is a string")
            return ("leaf", Opaque(inner))
        if key in ("tuple", "frozenset", "dict") and not isinstance(inner, list):
            raise InvalidArgument(f"unknown state encoding {brief(value)}: {key} holds a list")
        if key == "tuple":
            return ("node", inner, tuple)
        if key == "frozenset":
            return ("node", inner, _hashable(frozenset))
        if key == "dict":
            if not all(isinstance(kv, list) and len(kv) == 2 for kv in inner):
                raise InvalidArgument(
                    f"unknown state encoding {brief(value)}: a dict is a list of [key, value] pairs"
                )
            flat = [x for kv in inner for x in kv]
            return (
                "node",
                flat,
                _hashable(lambda items: {items[i]: items[i + 1] for i in range(0, len(items), 2)}),
            )
    keys = list(value)
    return ("node", list(value.values()), lambda items: dict(zip(keys, items)))


def _hashable(build: Any) -> Any:
    """``build``, with an unhashable member (a list inside a frozenset) reported as bad input."""

    def checked(items: list) -> Any:
        try:
            return build(items)
        except TypeError:
            raise InvalidArgument(
                "unknown state encoding: a frozenset member or dict key is not hashable"
            ) from None

    return checked
