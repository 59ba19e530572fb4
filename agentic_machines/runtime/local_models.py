"""Models: anything with ``complete(prompt: str) -> str``.

The theory treats a model as a map M: P -> Δ(C). For running machines we only need to
draw one completion per prompt, so a model is any object with a ``complete`` method.
Every model here keeps ``.calls``, the list of ``(prompt, completion)`` pairs it
answered, and fails loudly instead of guessing: a script that runs out raises, an
unmatched prompt raises, a replayed cassette that meets another prompt raises and
says where the two prompts first differ.

>>> m = ScriptedModel(["yes", "no"])
>>> m.complete("Continue?"), m.complete("Again?")
('yes', 'no')
>>> m.calls
[('Continue?', 'yes'), ('Again?', 'no')]

- :class:`ScriptedModel` answers from a list, in order.
- :class:`MappingModel` looks the answer up by prompt (exact, substring, regex, predicate).
- :class:`FunctionModel` wraps a function of the prompt.
- :class:`DistributionModel` and :class:`RandomModel` sample from finite
  distributions with their own seeded generator and expose ``distribution(prompt)``
  for kernels.
- :class:`RecordingModel` / :class:`ReplayModel` write and read JSON-lines cassettes.
- :class:`OpenAICompatibleModel` calls a chat-completions server over HTTP using only
  the standard library.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from numbers import Rational, Real
from typing import Any

from .._text import clip_prompt_repr, counted, shared_prefix
from ..errors import (
    CassetteError,
    InvalidArgument,
    ReplayMismatch,
    ScriptExhausted,
    UnmatchedPrompt,
)
from ._jsonl import MAX_JSON_LINES_BYTES, JsonLinesWriter, brief, read_json_records
from .http_model import OpenAICompatibleModel
from .model_base import Model, ModelBase, shorten, shown_prompt

# A weight as a type: int, float or Fraction (the checks accept any numbers.Real, which
# mypy cannot use as a static type: its ABCs declare no arithmetic).
Weight = float | Fraction

__all__ = [
    "Model",
    "ModelBase",
    "ScriptedModel",
    "MappingModel",
    "FunctionModel",
    "DistributionModel",
    "RandomModel",
    "RecordingModel",
    "ReplayModel",
    "OpenAICompatibleModel",
    "shorten",
    "describe_difference",
]


# -- scripted, mapped, functional -------------------------------------------------------


class ScriptedModel(ModelBase):
    """Answer with ``completions`` in order; raise :class:`ScriptExhausted` after the last.

    Never wraps around and never invents an empty answer: a run that asks for more
    completions than the script holds is a bug in the script or in the machine, and
    the error names the call index and the prompt.

    >>> m = ScriptedModel(["a"])
    >>> m.complete("first")
    'a'
    >>> m.complete("second prompt")
    Traceback (most recent call last):
      ...
    agentic_machines.errors.ScriptExhausted: ScriptedModel has only 1 completion but call index 1 asked for another; the prompt was 'second prompt'. Add a completion to the script, or check why the run made more calls than expected.
    """

    scripted = True  # replays completions someone wrote: sandbox.is_scripted

    def __init__(self, completions: Iterable[str]) -> None:
        super().__init__()
        if isinstance(completions, str):
            raise InvalidArgument(
                f"ScriptedModel needs a list of completions, got the single string {shorten(completions)!r}; "
                "wrap it in a list: ScriptedModel([...])"
            )
        self.completions: tuple[str, ...] = tuple(completions)
        bad = [(i, c) for i, c in enumerate(self.completions) if not isinstance(c, str)]
        if bad:
            raise InvalidArgument(
                "ScriptedModel completions must be strings (C = str); not strings: "
                + ", ".join(f"index {i}: {c!r}" for i, c in bad)
            )

    @property
    def remaining(self) -> int:
        """How many scripted completions have not been used yet."""
        return len(self.completions) - len(self.calls)

    def _complete(self, prompt: str) -> str:
        index = _next_index(
            self,
            len(self.completions),
            prompt,
            f"ScriptedModel has only {counted(len(self.completions), 'completion')}",
            "Add a completion to the script, or check why the run made more calls than expected.",
        )
        return self.completions[index]


def _next_index(model: ModelBase, total: int, prompt: str, held: str, fix: str) -> int:
    """The index of this call into a model's ``total`` prepared answers (a script, a
    cassette); past the last, :class:`ScriptExhausted` says what was ``held``, the index,
    the prompt and the ``fix``.
    """
    index = len(model.calls)
    if index >= total:
        raise ScriptExhausted(
            f"{held} but call index {index} asked for another; the prompt was "
            f"{shown_prompt(model, prompt)}. {fix}",
            prompt=prompt,
            index=index,
        )
    return index


class MappingModel(ModelBase):
    """Look the completion up by prompt.

    ``mapping`` is a dict or a sequence of ``(matcher, completion)`` pairs. A matcher is
    a string (matches a prompt equal to it or containing it), a compiled regular
    expression (``search``), or a predicate ``prompt -> bool``. A prompt equal to a
    string key gets that key's completion; otherwise the first matcher in order that
    matches wins. An unmatched prompt raises :class:`UnmatchedPrompt` showing it.

    >>> import re
    >>> m = MappingModel({"Thought": "search[owl]", re.compile(r"Obs.*owl"): "finish[owl]",
    ...                   (lambda p: p.endswith("?")): "no"})
    >>> m.complete("Thought 1:"), m.complete("Observation: an owl"), m.complete("Really?")
    ('search[owl]', 'finish[owl]', 'no')
    """

    scripted = True  # replays completions someone wrote: sandbox.is_scripted

    def __init__(self, mapping: Mapping[Any, str] | Iterable[tuple[Any, str]]) -> None:
        super().__init__()
        pairs = list(mapping.items() if isinstance(mapping, Mapping) else mapping)
        problems = []
        for i, pair in enumerate(pairs):
            if not (isinstance(pair, tuple) and len(pair) == 2):
                problems.append(f"rule {i} is {pair!r}, not a (matcher, completion) pair")
                continue
            matcher, completion = pair
            if not isinstance(matcher, (str, re.Pattern)) and not callable(matcher):
                problems.append(
                    f"rule {i}: matcher {matcher!r} is not a string, a compiled regex or a callable"
                )
            if not isinstance(completion, str):
                problems.append(f"rule {i}: completion {completion!r} is not a string")
        if problems:
            raise InvalidArgument(
                "MappingModel rules are malformed:\n" + "\n".join(f"  - {p}" for p in problems)
            )
        self.rules: tuple[tuple[Any, str], ...] = tuple(pairs)
        self._exact: dict[str, str] = {}
        for matcher, completion in self.rules:
            if isinstance(matcher, str):
                self._exact.setdefault(matcher, completion)

    def _complete(self, prompt: str) -> str:
        if prompt in self._exact:
            return self._exact[prompt]
        for matcher, completion in self.rules:
            if isinstance(matcher, str):
                hit = matcher in prompt
            elif isinstance(matcher, re.Pattern):
                hit = matcher.search(prompt) is not None
            else:
                hit = bool(matcher(prompt))
            if hit:
                return completion
        shown = ", ".join(_describe_matcher(m) for m, _ in self.rules) or "no rules"
        raise UnmatchedPrompt(
            f"MappingModel has no rule for the prompt {shown_prompt(self, prompt, 302)} (rules: {shown}); "
            "add a rule that matches it, or a catch-all rule (lambda p: True) at the end.",
            prompt=prompt,
        )


def _describe_matcher(matcher: Any) -> str:
    if isinstance(matcher, str):
        return repr(shorten(matcher, 30))
    if isinstance(matcher, re.Pattern):
        return f"re {shorten(matcher.pattern, 30)!r}"
    return getattr(matcher, "__name__", repr(matcher))


class FunctionModel(ModelBase):
    """A model from a function ``prompt -> completion``.

    >>> FunctionModel(lambda p: p[::-1]).complete("abc")
    'cba'
    """

    def __init__(self, fn: Callable[[str], str]) -> None:
        super().__init__()
        if not callable(fn):
            raise InvalidArgument(
                f"FunctionModel needs a callable prompt -> completion, got {fn!r}"
            )
        self.fn = fn
        if type(self)._complete is FunctionModel._complete:
            # complete() then calls fn itself: one Python call less per model call (a
            # run makes one per step); a subclass that defines its own _complete keeps it.
            self._complete = fn  # type: ignore[method-assign,assignment]

    def _complete(self, prompt: str) -> str:
        return self.fn(prompt)


# -- finite distributions ---------------------------------------------------------------


class DistributionModel(ModelBase):
    """A model given as a finite distribution over completions, sampled with a seed.

    ``dist`` is a mapping completion -> weight (the same for every prompt) or a
    function prompt -> such a mapping. :meth:`distribution` returns the normalised
    distribution (exact ``Fraction``\\ s when every weight is an integer or a
    fraction, floats otherwise), which is what kernels (:mod:`agentic_machines.kernel`) need;
    :meth:`complete` draws from it with the model's own ``random.Random(seed)``, so
    the same seed gives the same answers whatever else uses ``random``.

    >>> m = DistributionModel({"a": 3, "b": 1}, seed=7)
    >>> m.distribution("any prompt")
    {'a': Fraction(3, 4), 'b': Fraction(1, 4)}
    >>> again = DistributionModel({"a": 3, "b": 1}, seed=7)
    >>> [m.complete("p") for _ in range(5)] == [again.complete("p") for _ in range(5)]
    True
    """

    def __init__(
        self,
        dist: Mapping[str, Weight] | Callable[[str], Mapping[str, Weight]],
        seed: int | None = 0,
    ) -> None:
        super().__init__()
        if not (isinstance(dist, Mapping) or callable(dist)):
            raise InvalidArgument(
                f"dist must be a mapping completion -> weight or a function of the prompt, got {dist!r}"
            )
        if isinstance(dist, Mapping):
            _normalise(dist)  # reject a bad fixed distribution now, not at the first call
        self.dist = dist
        self.seed = seed
        self._rng = random.Random(seed)

    def distribution(self, prompt: str) -> dict[str, Weight]:
        """M(prompt): completion -> probability, positive weights only, summing to 1."""
        return _normalise(self.dist if isinstance(self.dist, Mapping) else self.dist(prompt))

    def _complete(self, prompt: str) -> str:
        dist = self.distribution(prompt)
        x = self._rng.random()
        acc = 0.0
        for completion, p in dist.items():
            acc += float(p)
            if x < acc:
                return completion
        return completion  # float rounding left x just above the total: the last one


def _normalise(dist: Mapping[str, Weight]) -> dict[str, Weight]:
    if not isinstance(dist, Mapping):
        raise InvalidArgument(f"a distribution is a mapping completion -> weight, got {dist!r}")
    problems = [f"{c!r} is not a string" for c in dist if not isinstance(c, str)]
    problems += [
        f"weight {w!r} of {c!r} is not a non-negative number"
        for c, w in dist.items()
        if isinstance(w, bool) or not isinstance(w, Real) or w < 0
    ]
    if problems:
        raise InvalidArgument("bad distribution: " + "; ".join(problems))
    exact = all(isinstance(w, Rational) for w in dist.values())
    total: Weight = (
        sum((Fraction(w) for w in dist.values()), Fraction(0))
        if exact
        else float(sum(dist.values()))
    )
    if total <= 0:
        raise InvalidArgument(
            f"distribution {dict(dist)!r} has no positive weight; give at least one completion a weight > 0"
        )
    return {c: (Fraction(w) / total if exact else w / total) for c, w in dist.items() if w > 0}


class RandomModel(DistributionModel):
    """Pick uniformly from ``choices`` (repeats count double), deterministically per seed.

    >>> m = RandomModel(["left", "right"], seed=1)
    >>> m.distribution("where?")
    {'left': Fraction(1, 2), 'right': Fraction(1, 2)}
    >>> again = RandomModel(["left", "right"], seed=1)
    >>> [m.complete("?") for _ in range(5)] == [again.complete("?") for _ in range(5)]
    True
    """

    def __init__(self, choices: Sequence[str], seed: int | None = 0) -> None:
        if isinstance(choices, str) or not choices:
            raise InvalidArgument(
                f"RandomModel needs a non-empty list of completion strings, got {choices!r}"
            )
        counts: dict[str, int] = {}
        for c in choices:
            counts[c] = counts.get(c, 0) + 1
        super().__init__(counts, seed)
        self.choices = tuple(choices)


# -- cassettes --------------------------------------------------------------------------


class RecordingModel(ModelBase):
    """Pass calls to ``inner`` and write each one to a JSON-lines cassette at ``path``.

    Each line is ``{"index": i, "prompt": ..., "completion": ...}`` and is flushed as
    soon as the call returns, so an interrupted run keeps every answered call. The
    file is started afresh when the model is built. A call that raises is not recorded.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "cassette.jsonl")
    >>> rec = RecordingModel(ScriptedModel(["4"]), path)
    >>> rec.complete("2+2=")
    '4'
    >>> ReplayModel(path).complete("2+2=")
    '4'
    """

    def __init__(self, inner: Model, path: str | os.PathLike) -> None:
        super().__init__()
        if not callable(getattr(inner, "complete", None)):
            raise InvalidArgument(
                f"RecordingModel wraps a model with complete(prompt), got {inner!r}"
            )
        self.inner = inner
        self.path = os.fspath(path)
        JsonLinesWriter(self.path, "w").close()  # a new cassette, even if no call is ever made

    def _complete(self, prompt: str) -> str:
        completion = self.inner.complete(prompt)
        if isinstance(completion, str):  # a non-string is rejected by complete() instead
            with JsonLinesWriter(self.path, "a") as out:
                out.write({"index": len(self.calls), "prompt": prompt, "completion": completion})
        return completion


class ReplayModel(ModelBase):
    """Answer from a cassette written by :class:`RecordingModel`, checking each prompt.

    Call i must send exactly the prompt recorded at index i; otherwise
    :class:`ReplayMismatch` says the index and where the prompts first differ. Asking
    past the end raises :class:`ScriptExhausted`.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "cassette.jsonl")
    >>> _ = RecordingModel(ScriptedModel(["x"]), path).complete("Task: add 2 and 2")
    >>> ReplayModel(path).complete("Task: add 2 and 3")
    Traceback (most recent call last):
      ...
    agentic_machines.errors.ReplayMismatch: replay call 0: the prompt differs from the recorded one at character 16: recorded 'Task: add 2 and 2', got 'Task: add 2 and 3'. Re-record the cassette if the change is intended.
    """

    def __init__(self, path: str | os.PathLike, *, max_bytes: int = MAX_JSON_LINES_BYTES) -> None:
        super().__init__()
        self.path = os.fspath(path)
        self.records: list[tuple[str, str]] = read_cassette(self.path, max_bytes=max_bytes)

    @property
    def remaining(self) -> int:
        """How many recorded calls have not been replayed yet."""
        return len(self.records) - len(self.calls)

    def _complete(self, prompt: str) -> str:
        index = _next_index(
            self,
            len(self.records),
            prompt,
            f"the cassette {self.path} holds {counted(len(self.records), 'call')}",
            "Re-record the cassette.",
        )
        expected, completion = self.records[index]
        if prompt != expected:
            raise ReplayMismatch(
                f"replay call {index}: {describe_difference(expected, prompt)}. "
                "Re-record the cassette if the change is intended.",
                index=index,
                expected=expected,
                got=prompt,
            )
        return completion


def read_cassette(
    path: str | os.PathLike, *, max_bytes: int = MAX_JSON_LINES_BYTES
) -> list[tuple[str, str]]:
    """The ``(prompt, completion)`` records of a cassette, every check in one place.

    Any file either loads or raises one :class:`~agentic_machines.errors.CassetteError`
    naming ``path:line``: a path that is not a regular file, a file larger than
    ``max_bytes`` (default 64 MiB), bytes that are not UTF-8, binary data, a line that is not JSON
    (NaN included), nesting too deep, a line that is not an object, a missing or
    non-string ``prompt``/``completion``, or an ``index`` that is not the line's position
    (a gap: recorded calls are missing). A cut-off last line (a killed recording) is
    dropped; ``index`` may be left out in hand-written cassettes.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "c.jsonl")
    >>> _ = open(path, "w", encoding="utf-8").write('{"index": 0, "prompt": "p", "completion": "c"}\\n'
    ...                                            '{"index": 2, "prompt": "q", "completion": "d"}\\n')
    >>> read_cassette(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
      ...
    agentic_machines.errors.CassetteError: ...c.jsonl:2: index 2 where 1 was expected: recorded calls are missing or repeated
    """
    name = os.fspath(path)
    records: list[tuple[str, str]] = []
    lines = read_json_records(
        name,
        CassetteError,
        limit=max_bytes,
        what="cassette",
        advice="if you trust the file, pass ReplayModel(path, max_bytes=...)",
    )
    for line, rec in lines:
        if not isinstance(rec, dict):
            raise CassetteError(
                name,
                line,
                f"{brief(rec)} is not a cassette line "
                '{"index": i, "prompt": ..., "completion": ...}; was the file written by RecordingModel?',
            )
        for key in ("prompt", "completion"):
            if key not in rec:
                raise CassetteError(
                    name, line, f"the line has no {key!r} field (not a cassette line?)"
                )
            if not isinstance(rec[key], str):
                raise CassetteError(name, line, f"{key!r} must be a string, got {brief(rec[key])}")
        if "index" in rec:
            index = rec["index"]
            if type(index) is not int:
                raise CassetteError(
                    name, line, f"'index' must be a whole number, got {brief(index)}"
                )
            if index != len(records):
                raise CassetteError(
                    name,
                    line,
                    f"index {index} where {len(records)} was expected: recorded calls are missing or "
                    "repeated",
                )
        records.append((rec["prompt"], rec["completion"]))
    return records


# -- text helpers shared with run.py ----------------------------------------------------


def describe_difference(expected: str, got: str, width: int = 40) -> str:
    """Where two prompts first differ: the character offset, and each prompt cut by the one
    prompt rule (:func:`~agentic_machines._text.clip_prompt`, the other prompt its
    context) to ``width`` characters: what follows the part they share, the cut marked.

    >>> describe_difference("Thought 1: look", "Thought 2: look")
    "the prompt differs from the recorded one at character 8: recorded 'Thought 1: look', got 'Thought 2: look'"
    >>> ask = "Ticket: a kettle leaks. Decide. Observation: "
    >>> describe_difference(ask + "refund approved", ask + "send a new kettle", 20)
    "the prompt differs from the recorded one at character 45: recorded '…: refund approved', got '…send a new kettle'"
    """
    offset = shared_prefix(expected, got)

    def snippet(text: str, other: str) -> str:
        ends = " (it ends there)" if offset >= len(text) else ""
        return clip_prompt_repr(text, width, [other]) + ends

    return (
        f"the prompt differs from the recorded one at character {offset}: "
        f"recorded {snippet(expected, got)}, got {snippet(got, expected)}"
    )
