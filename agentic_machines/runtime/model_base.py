"""The model interface and what every model of the package shares: :class:`Model` (the
protocol), :class:`ModelBase` (the type checks and the ``.calls`` log) and
:func:`shown_prompt`, the cut that model errors use for a prompt (the one prompt rule), and
:func:`shorten`, theirs for any other text.

Below both :mod:`~agentic_machines.runtime.local_models` (the scripted, sampled and recorded
models) and :mod:`~agentic_machines.runtime.http_model` (a chat-completions server), so
that each builds on it without importing the other; ``agentic_machines.models``
re-exports every name.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from .._text import clip_middle, clip_prompt_repr
from ..errors import InvalidArgument, ModelError, NotDefined

__all__ = ["Model", "ModelBase", "shorten"]


def _prompt_error(prompt: Any) -> InvalidArgument:
    return InvalidArgument(
        f"prompts are strings (P = str), got {type(prompt).__name__}: {prompt!r}"
    )


@runtime_checkable
class Model(Protocol):
    """The model interface: one completion string for one prompt string.

    >>> class Echo:
    ...     def complete(self, prompt): return prompt
    >>> isinstance(Echo(), Model), isinstance("not a model", Model)
    (True, False)
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
            f"{shown_prompt(self, prompt)}; completions must be strings (C = str)"
        )

    def _complete(self, prompt: str) -> str:
        raise NotDefined(f"{type(self).__name__} must define _complete(prompt)")


def shown_prompt(model: Any, prompt: str, width: int = 62) -> str:
    """``prompt`` quoted for a model's error message, cut by the one prompt rule
    (:func:`agentic_machines._text.clip_prompt`): what follows the part it shares with the
    prompt of the model's call before it, where the run's prompts differ.

    >>> m = ModelBase()
    >>> m.calls.append(("Ticket: a kettle leaks. Decide. Observation: refund", "ok"))
    >>> shown_prompt(m, "Ticket: a kettle leaks. Decide. Observation: replace", 24)
    "'… Observation: replace'"
    """
    return clip_prompt_repr(prompt, width, [p for p, _c in model.calls[-1:]])


def shorten(text: str, width: int = 60) -> str:
    """``text`` cut to ``width`` characters with an ellipsis in the middle (the package's
    one rule for it, :func:`agentic_machines._text.clip_middle`, at the width model
    errors use): for texts that are no prompt (a server's answer, a rule), whose start
    says what it is and whose end the detail.

    >>> shorten("abcdefghij", 7)
    'abc…hij'
    """
    return clip_middle(text, width)
