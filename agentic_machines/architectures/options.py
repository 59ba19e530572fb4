"""How the architectures that run model-written code run it: one :class:`ExecOptions` value.

RLM, REPL-Plan, PAL, CodeAct and AdaPlanner run the blocks a model writes. Where a block
runs (the isolation level), how many lines it may run, how much of its output the model is
shown and its worker's limits are one value, :class:`ExecOptions`, that each harness
program (``rlm_program``, ...) and each ``machine()`` take as ``options``; the command
line builds the same value from ``--isolation``.

Each ``machine()`` (and ``repl_plan.solve``) also takes the fields as keywords, a
shorthand read by :func:`with_keywords`: ``rlm.machine(isolation="inline")`` is
``rlm.machine(options=ExecOptions(isolation="inline"))``, and a keyword given beside
``options`` replaces that field of it. A machine records its options with the level
resolved (:meth:`ExecOptions.resolved`), so the machine rebuilt from them runs its blocks
alike.

>>> from agentic_machines.architectures import rlm
>>> m = rlm.machine(options=ExecOptions(isolation="inline", max_output=500))
>>> m.kwargs["options"]
ExecOptions(isolation='inline', block_lines=20000, max_output=500, timeout_s=None, limits=None)
>>> rlm.machine(isolation="inline", max_output=500).kwargs == m.kwargs
True
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from ..errors import InvalidArgument
from ..execution.sandbox import LEVELS, BlockRunner, Limits, make_runner, resolve_isolation

__all__ = ["ExecOptions", "ExecKeywords", "with_keywords"]


@dataclass(frozen=True)
class ExecOptions:
    """Where and how an architecture runs the blocks a model writes.

    ``isolation``: the level (``"inline"``, ``"process"``, ``"namespace"`` or
    ``"strongest"``); ``None``, the default, is ``"strongest"`` for a ``machine()``, which
    does not know its model, and for ``repl_plan.solve`` is chosen by the model (inline
    for a scripted one). ``block_lines``: the line budget of one block. ``max_output``:
    the characters of a block's output the model is shown (PAL shows none). ``timeout_s``:
    wall-clock seconds per block at an isolated level (``None``: the limits' own);
    ``limits``: the isolated worker's other :class:`~agentic_machines.execution.sandbox.Limits`.
    Bad values are refused when the value is built.

    >>> ExecOptions(isolation="inline").block_lines
    20000
    >>> ExecOptions(block_lines=0)
    Traceback (most recent call last):
    ...
    agentic_machines.errors.InvalidArgument: ExecOptions.block_lines must be a whole number >= 1, got 0
    """

    isolation: str | None = None
    block_lines: int = 20_000
    max_output: int = 2_000
    timeout_s: float | None = None
    limits: Limits | None = None

    def __post_init__(self) -> None:
        known = (*LEVELS, "strongest")
        if self.isolation is not None and self.isolation not in known:
            raise InvalidArgument(
                f"ExecOptions.isolation must be one of {', '.join(map(repr, known))} or None "
                f"(the strongest for a machine), got {self.isolation!r}"
            )
        for name in ("block_lines", "max_output"):
            value = getattr(self, name)
            if type(value) is not int or value < 1:
                raise InvalidArgument(
                    f"ExecOptions.{name} must be a whole number >= 1, got {value!r}"
                )
        t = self.timeout_s
        if t is not None and (
            isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t < math.inf
        ):
            raise InvalidArgument(
                f"ExecOptions.timeout_s must be a number of seconds above 0, or None, got {t!r}"
            )
        if self.limits is not None and not isinstance(self.limits, Limits):
            raise InvalidArgument(
                f"ExecOptions.limits must be a Limits (agentic_machines.execution.sandbox) or "
                f"None, got {type(self.limits).__name__}"
            )

    def runner(self, model: Any = None) -> BlockRunner:
        """A new block runner at this level (``model`` decides a ``None`` level, as in
        :func:`~agentic_machines.execution.sandbox.resolve_isolation`).

        >>> ExecOptions(isolation="inline").runner().level
        'inline'
        """
        return make_runner(
            self.isolation, timeout_s=self.timeout_s, limits=self.limits, model=model
        )

    def resolved(self) -> ExecOptions:
        """These options at the concrete level this machine gives (``None`` and
        ``"strongest"`` become ``"namespace"`` or ``"process"``): what a machine records.

        >>> ExecOptions(isolation="inline").resolved().isolation
        'inline'
        >>> ExecOptions().resolved().isolation in ("process", "namespace")
        True
        """
        return dataclasses.replace(self, isolation=resolve_isolation(self.isolation))


class ExecKeywords(TypedDict, total=False):
    """The fields of :class:`ExecOptions` as keywords (the shorthand of every code-running
    ``machine()``), for the type checker.

    >>> sorted(ExecKeywords.__annotations__) == sorted(_FIELDS)
    True
    """

    isolation: str | None
    block_lines: int
    max_output: int
    timeout_s: float | None
    limits: Limits | None


_FIELDS = tuple(f.name for f in dataclasses.fields(ExecOptions))


def with_keywords(options: ExecOptions, keywords: Mapping[str, Any], caller: str) -> ExecOptions:
    """``options`` with the fields given in ``keywords`` replaced: how ``caller`` (say
    ``"rlm.machine"``) reads its keyword shorthand. Any other keyword is refused.

    >>> with_keywords(ExecOptions(), {"isolation": "inline"}, "demo").isolation
    'inline'
    >>> with_keywords(ExecOptions(), {"isolatoin": "inline"}, "demo")
    Traceback (most recent call last):
    ...
    agentic_machines.errors.InvalidArgument: demo() got an unexpected keyword 'isolatoin'; its execution options are isolation, block_lines, max_output, timeout_s, limits (or pass options=ExecOptions(...))
    """
    if not isinstance(options, ExecOptions):
        raise InvalidArgument(
            f"{caller}(options=...) takes an ExecOptions "
            f"(agentic_machines.architectures.ExecOptions), got {type(options).__name__}"
        )
    unknown = [k for k in keywords if k not in _FIELDS]
    if unknown:
        raise InvalidArgument(
            f"{caller}() got an unexpected keyword {', '.join(map(repr, unknown))}; its execution "
            f"options are {', '.join(_FIELDS)} (or pass options=ExecOptions(...))"
        )
    return dataclasses.replace(options, **keywords) if keywords else options
