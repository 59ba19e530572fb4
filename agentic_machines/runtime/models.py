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

import email.utils
import http.client
import json
import os
import random
import re
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from fractions import Fraction
from numbers import Rational, Real
from typing import Any, Protocol, runtime_checkable

from ..errors import (
    CassetteError,
    InvalidArgument,
    ModelError,
    NotDefined,
    ReplayMismatch,
    ScriptExhausted,
    UnmatchedPrompt,
)
from ._jsonl import MAX_JSON_LINES_BYTES, JsonLinesWriter, brief, read_json_records

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


def _prompt_error(prompt: Any) -> InvalidArgument:
    return InvalidArgument(
        f"prompts are strings (P = str), got {type(prompt).__name__}: {prompt!r}"
    )


@runtime_checkable
class Model(Protocol):
    """The model interface: one completion string for one prompt string.

    >>> isinstance(ScriptedModel(["a"]), Model)
    True
    """

    def complete(self, prompt: str) -> str:
        """Return a completion for ``prompt``."""
        ...


class ModelBase:
    """Shared behaviour of the models here: type checks and the ``.calls`` log.

    Subclasses implement ``_complete(prompt)``; :meth:`complete` checks that the
    prompt and the answer are strings (P = C = str) and records the pair. Subclass it
    for your own models to get the same log.

    >>> class Shout(ModelBase):
    ...     def _complete(self, prompt): return prompt.upper()
    >>> m = Shout(); m.complete("hi"), m.calls
    ('HI', [('hi', 'HI')])
    """

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def complete(self, prompt: str) -> str:
        """Answer ``prompt`` and record the call in ``.calls``."""
        # Flat: a run makes one call per step, so every Python call here is a good part
        # of a cheap machine's step (benchmarks/bench_agent.py); the checks inline.
        if type(prompt) is not str and not isinstance(prompt, str):
            raise _prompt_error(prompt)
        completion = self._complete(prompt)
        if type(completion) is not str and not isinstance(completion, str):
            raise self._answer_error(prompt, completion)
        self.calls.append((prompt, completion))
        return completion

    def _answer_error(self, prompt: str, completion: Any) -> ModelError:
        return ModelError(
            f"{type(self).__name__} answered {completion!r} ({type(completion).__name__}) to the prompt "
            f"{shorten(prompt)!r}; completions must be strings (C = str)"
        )

    def _complete(self, prompt: str) -> str:
        raise NotDefined(f"{type(self).__name__} must define _complete(prompt)")


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
    agentic_machines.errors.ScriptExhausted: ScriptedModel has only 1 completion(s) but call index 1 asked for another; the prompt was 'second prompt'. Add a completion to the script, or check why the run made more calls than expected.
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
            f"ScriptedModel has only {len(self.completions)} completion(s)",
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
            f"{shorten(prompt)!r}. {fix}",
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
            f"MappingModel has no rule for the prompt {shorten(prompt, 300)!r} (rules: {shown}); "
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
    agentic_machines.errors.ReplayMismatch: replay call 0: the prompt differs from the recorded one at character 16: recorded '…: add 2 and 2', got '…: add 2 and 3'. Re-record the cassette if the change is intended.
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
            f"the cassette {self.path} holds {len(self.records)} call(s)",
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


# -- HTTP -------------------------------------------------------------------------------


class OpenAICompatibleModel(ModelBase):
    """A chat-completions server (OpenAI, vLLM, llama.cpp server, Ollama) over HTTP.

    Each call POSTs ``{"model", "messages", "temperature", ...}`` to
    ``{base_url}/chat/completions`` with the standard library and returns
    ``choices[0].message.content``. The prompt is sent as one user message, after
    ``system`` when given. Rate limits (429), server errors (5xx), refused connections
    and timeouts are retried ``retries`` times with exponential backoff
    (``backoff * 2**attempt`` seconds), or after the server's ``Retry-After`` delay
    capped at ``max_retry_after``; any other status, or a body that is not the expected
    JSON, raises :class:`ModelError` with the status and the server's message.
    ``extra`` is merged into the request body (e.g. ``{"seed": 1}``). ``proxies=None``
    uses the environment's proxy settings; ``{}`` connects directly.

    Hardened against a server that misbehaves (every failure is a :class:`ModelError`):

    - ``timeout`` bounds each attempt *in total* (connecting, sending, waiting, reading
      the whole answer), so a server that drips one byte a second cannot hold a call;
      ``deadline`` bounds the whole call, retries and waits included (default: each
      attempt its ``timeout`` plus the backoff sleeps); a ``Retry-After`` longer than what is left of it
      ends the call at once instead of sleeping;
    - an answer larger than ``max_response_bytes`` is refused (no unbounded memory);
    - redirects are never followed: the ``Authorization`` header would travel with
      them; the error names the target, to use as ``base_url`` if it is trusted.

    >>> m = OpenAICompatibleModel("http://127.0.0.1:8000/v1", "llama-3", api_key="sk-secret")
    >>> m
    OpenAICompatibleModel('http://127.0.0.1:8000/v1', 'llama-3', api_key=***)
    >>> m.request_body("Hi")["messages"]
    [{'role': 'user', 'content': 'Hi'}]
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        system: str | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        stop: str | Sequence[str] | None = None,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_retry_after: float = 60.0,
        deadline: float | None = None,
        max_response_bytes: int = 16 * 1024 * 1024,
        extra: Mapping[str, Any] | None = None,
        proxies: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__()
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise InvalidArgument(
                f"base_url must start with http:// or https://, got {base_url!r}; e.g. 'http://127.0.0.1:8000/v1'"
            )
        if not isinstance(model, str) or not model:
            raise InvalidArgument(f"model must be the model's name on the server, got {model!r}")
        if not isinstance(retries, int) or retries < 0:
            raise InvalidArgument(f"retries must be an integer >= 0, got {retries!r}")
        if timeout <= 0 or backoff < 0 or max_retry_after < 0:
            raise InvalidArgument("timeout must be > 0 and backoff, max_retry_after >= 0 (seconds)")
        if deadline is not None and deadline <= 0:
            raise InvalidArgument(f"deadline must be > 0 seconds (or None), got {deadline!r}")
        if not isinstance(max_response_bytes, int) or max_response_bytes < 1:
            raise InvalidArgument(
                f"max_response_bytes must be a positive integer, got {max_response_bytes!r}"
            )
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.system = system
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.stop = stop
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_retry_after = max_retry_after
        # default: every attempt its whole timeout, plus the backoff sleeps between them,
        # plus a little for the work around the attempts
        self.deadline = (
            deadline
            if deadline is not None
            else (retries + 1) * timeout + backoff * (2**retries - 1) + min(timeout, 1.0)
        )
        self.max_response_bytes = max_response_bytes
        self.extra = dict(extra or {})
        self.proxies = None if proxies is None else dict(proxies)
        self.sleep: Callable[[float], None] = time.sleep  # replaceable, so tests need not wait

    def __repr__(self) -> str:
        key = ", api_key=***" if self.api_key else ""
        return f"{type(self).__name__}({self.base_url!r}, {self.model!r}{key})"

    def request_body(self, prompt: str) -> dict[str, Any]:
        """The JSON body sent for ``prompt``."""
        messages = [{"role": "system", "content": self.system}] if self.system is not None else []
        messages.append({"role": "user", "content": prompt})
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
        }
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.stop is not None:
            body["stop"] = self.stop if isinstance(self.stop, str) else list(self.stop)
        body.update(self.extra)
        return body

    def _complete(self, prompt: str) -> str:
        try:
            return self._complete_within_deadline(prompt)
        except ModelError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure of the call is a ModelError
            raise ModelError(
                f"{self.url} failed: {type(exc).__name__}: {shorten(str(exc), 200)}"
            ) from None

    def _complete_within_deadline(self, prompt: str) -> str:
        data = json.dumps(self.request_body(prompt)).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        end = time.monotonic() + self.deadline
        last_problem = ""
        for attempt in range(self.retries + 1):
            left = end - time.monotonic()
            if left <= 0:
                last_problem = f"the call's deadline of {self.deadline:g} s passed"
                break
            retry_after: float | None = None
            try:
                code, response_headers, raw = self._post(data, headers, min(self.timeout, left))
            except TimeoutError as exc:
                detail = str(exc)
                last_problem = (
                    f"timed out {detail}"
                    if detail.startswith("after")
                    else f"timed out after {self.timeout} s ({detail})"
                )
            except (OSError, http.client.HTTPException) as exc:
                last_problem = f"connection failed: {type(exc).__name__}: {exc}"
            else:
                if 200 <= code < 300:
                    return self._parse(raw)
                text = raw.decode("utf-8", "replace")
                if 300 <= code < 400:
                    target = response_headers.get("Location", "(no Location)")
                    raise ModelError(
                        f"{self.url} answered HTTP {code}, a redirect to {shorten(target, 200)}; "
                        "redirects are not followed (the API key would be sent with it): set "
                        "base_url to the final address if you trust it"
                    )
                if code != 429 and code < 500:
                    raise ModelError(
                        f"{self.url} answered HTTP {code}: {_server_message(text)}; "
                        "check the model name, the API key and the request options"
                    )
                last_problem = f"HTTP {code}: {_server_message(text)}"
                retry_after = _retry_after(response_headers.get("Retry-After"))
            if attempt < self.retries:
                delay = (
                    self.backoff * 2**attempt
                    if retry_after is None
                    else min(retry_after, self.max_retry_after)
                )
                if delay >= end - time.monotonic():
                    raise ModelError(
                        f"{self.url} failed ({last_problem}) and the next try would start after "
                        f"{delay:g} s, past this call's deadline of {self.deadline:g} s; raise "
                        "deadline= or try again later"
                    )
                self.sleep(delay)
        raise ModelError(
            f"{self.url} failed after {attempt + 1} attempt(s); last error: {last_problem}. "
            "Check that the server is running and reachable, or raise timeout=/retries=/deadline=."
        )

    def _post(
        self, data: bytes, headers: Mapping[str, str], limit: float
    ) -> tuple[int, Any, bytes]:
        """One POST that ends within ``limit`` seconds: status, headers, body (capped)."""
        conn, target = self._connection(limit)
        expired = threading.Event()

        def stop() -> None:
            # A blocked read returns at once when the socket is shut down from here.
            expired.set()
            sock = conn.sock
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        timer = threading.Timer(limit, stop)
        timer.daemon = True
        timer.start()
        try:
            conn.request("POST", target, body=data, headers=dict(headers))
            response = conn.getresponse()
            body = self._read_capped(response, expired)
            if expired.is_set():
                raise TimeoutError(f"after {limit:.3g} s without a complete answer")
            return response.status, response.headers, body
        except (OSError, http.client.HTTPException):
            if expired.is_set():
                raise TimeoutError(f"after {limit:.3g} s without a complete answer") from None
            raise
        finally:
            timer.cancel()
            conn.close()

    def _read_capped(self, response: http.client.HTTPResponse, expired: threading.Event) -> bytes:
        length = response.getheader("Content-Length")
        if length is not None and length.isdigit() and int(length) > self.max_response_bytes:
            raise ModelError(
                f"{self.url} announced an answer of {length} bytes, more than "
                f"max_response_bytes={self.max_response_bytes}; raise it if that is expected"
            )
        chunks, size = [], 0
        while not expired.is_set():
            chunk = response.read1(65536)
            if not chunk:
                break
            size += len(chunk)
            if size > self.max_response_bytes:
                raise ModelError(
                    f"{self.url} sent more than max_response_bytes={self.max_response_bytes} "
                    "bytes; the answer was cut off and refused (raise the limit if expected)"
                )
            chunks.append(chunk)
        return b"".join(chunks)

    def _connection(self, limit: float) -> tuple[http.client.HTTPConnection, str]:
        parts = urllib.parse.urlsplit(self.url)
        host, https = parts.hostname or "", parts.scheme == "https"
        port = parts.port or (443 if https else 80)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        proxies = urllib.request.getproxies() if self.proxies is None else self.proxies
        proxy = proxies.get(parts.scheme)
        if proxy and self.proxies is None and urllib.request.proxy_bypass(host):
            proxy = None
        context = ssl.create_default_context() if https else None
        if not proxy:
            if https:
                return http.client.HTTPSConnection(host, port, timeout=limit, context=context), path
            return http.client.HTTPConnection(host, port, timeout=limit), path
        p = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        if https:  # a CONNECT tunnel through the proxy, TLS to the server inside it
            conn = http.client.HTTPSConnection(
                p.hostname or "", p.port or 80, timeout=limit, context=context
            )
            conn.set_tunnel(host, port)
            return conn, path
        return http.client.HTTPConnection(p.hostname or "", p.port or 80, timeout=limit), self.url

    def _parse(self, raw: bytes) -> str:
        try:
            payload = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise ModelError(
                f"{self.url} returned malformed JSON ({type(exc).__name__}: {shorten(str(exc), 100)}): "
                f"{shorten(raw.decode('utf-8', 'replace'), 200)!r}; "
                "is base_url the API root of an OpenAI-compatible server (usually ending in /v1)?"
            ) from None
        try:
            content = payload["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise ModelError(
                f"{self.url} returned JSON without choices[0].message.content: {shorten(json.dumps(payload), 200)}; "
                "is the server OpenAI-compatible?"
            ) from None
        if not isinstance(content, str):
            raise ModelError(
                f"{self.url} returned content {content!r} instead of text (a tool call or a refusal?); "
                "this adapter needs plain text completions"
            )
        return content


def _server_message(body: str) -> str:
    """The ``error.message`` of an OpenAI-style error body, else the body itself."""
    try:
        payload = json.loads(body)
    except json.JSONDecodeError:
        return shorten(body.strip(), 300) or "(empty body)"
    if isinstance(payload, dict):
        err = payload.get("error", payload)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return shorten(err["message"], 300)
        if isinstance(err, str):
            return shorten(err, 300)
    return shorten(body.strip(), 300)


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date), else None."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


# -- text helpers shared with run.py ----------------------------------------------------


def shorten(text: str, width: int = 60) -> str:
    """``text`` cut to ``width`` characters with an ellipsis in the middle.

    >>> shorten("abcdefghij", 7)
    'abc…hij'
    """
    if len(text) <= width:
        return text
    head = (width - 1) // 2 + (width - 1) % 2
    tail = width - 1 - head
    return text[:head] + "…" + (text[-tail:] if tail else "")


def describe_difference(expected: str, got: str, context: int = 12) -> str:
    """Where two strings first differ: the character offset and both snippets there.

    >>> describe_difference("Thought 1: look", "Thought 2: look")
    "the prompt differs from the recorded one at character 8: recorded 'Thought 1: look', got 'Thought 2: look'"
    """
    offset = next(
        (i for i, (a, b) in enumerate(zip(expected, got)) if a != b), min(len(expected), len(got))
    )
    start = max(0, offset - context)

    def snippet(text: str) -> str:
        prefix = "…" if start else ""
        suffix = "…" if offset + context < len(text) else ""
        ends = " (it ends there)" if offset >= len(text) else ""
        return repr(prefix + text[start : offset + context] + suffix) + ends

    return f"the prompt differs from the recorded one at character {offset}: recorded {snippet(expected)}, got {snippet(got)}"
