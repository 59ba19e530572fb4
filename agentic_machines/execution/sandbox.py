"""Block runners: where model-written blocks run, at three levels of isolation, behind one interface.

RLM and REPL-Plan talk to a *block runner*, never to a namespace dict: it holds the
episode's namespaces by key, runs blocks in them (:mod:`agentic_machines.execution.
codeexec`) and answers a few questions about them. The levels are ``"inline"``
(:class:`InlineRunner`, trusted scripted code only), ``"process"``
(:class:`ProcessRunner`, a worker subprocess with OS limits and a wall-clock deadline
per block), ``"namespace"`` (that worker inside Linux namespaces) and ``"strongest"``
(the best level that works here; :func:`resolve_isolation`). This module chooses the
level and keeps every public name importable from here; the runners live in
:mod:`~agentic_machines.execution.runner`, :mod:`~agentic_machines.execution.isolated`
and :mod:`~agentic_machines.execution.confine`. Failures (deadline, memory, a dead
worker) are outcomes, and a deadline's outcome is clock-dependent. What each level
guarantees, and how: docs/reference/sandbox.md and docs/threat_model.md.

>>> ex = make_runner("inline")
>>> ex.namespace("main", Scaffold(values={"x": 2}))
>>> result = drive_rest(ex.run_block("main", "print(x * 21)"), None)
>>> result.status, result.stdout
('ok', '42\\n')
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from typing import Any

from ..errors import InvalidArgument, IsolationFallback
from .codeexec import drive_rest

# The runners live in their own modules (one concept each); this module chooses a level
# and keeps every public name importable from here, as before.
from .confine import NO_NAMESPACE_TOOL, namespace_tool, worker_paths
from .isolated import ProcessRunner
from .runner import FAILURE_STATUSES, LEVELS, BlockRunner, InlineRunner, Limits, Scaffold

__all__ = [
    "LEVELS",
    "Scaffold",
    "Limits",
    "BlockRunner",
    "InlineRunner",
    "ProcessRunner",
    "make_runner",
    "resolve_isolation",
    "strongest_policy",
    "STRONGEST_POLICIES",
    "namespace_tool",
    "is_scripted",
    "FAILURE_STATUSES",
    "drive_rest",
    "worker_paths",
]


# --------------------------------------------------------------------------------------
# choosing a level
# --------------------------------------------------------------------------------------
def is_scripted(model: Any) -> bool:
    """True when ``model`` replays code the project (or the user) wrote, not a model's output.

    A model is scripted when it declares ``scripted = True``, as
    :class:`~agentic_machines.runtime.local_models.ScriptedModel`,
    :class:`~agentic_machines.runtime.local_models.MappingModel`, REPL-Plan's ``RoutedModel`` and
    the experiments' policies do (a marker rather than a type check, because the runtime
    layer sits above this one). Anything else (an ``OpenAICompatibleModel``, a cassette
    replay of one, a plain function) is not.

    >>> from agentic_machines.runtime.local_models import ScriptedModel, FunctionModel
    >>> is_scripted(ScriptedModel(["x"])), is_scripted(FunctionModel(str))
    (True, False)
    """
    return getattr(model, "scripted", False) is True


def resolve_isolation(isolation: str | None, model: Any = None) -> str:
    """The concrete level (``inline``, ``process`` or ``namespace``) for a requested one.

    ``None`` is the default: ``"inline"`` when ``model`` :func:`is_scripted`, otherwise
    ``"strongest"``. ``"strongest"`` is ``"namespace"`` when a namespace tool works, else
    ``"process"`` on POSIX systems. Asking for a level that cannot run here is an error.

    >>> resolve_isolation("inline"), resolve_isolation(None, model=None) in ("process", "namespace")
    ('inline', True)
    """
    if isolation is None:
        isolation = "inline" if model is not None and is_scripted(model) else "strongest"
    if isolation == "strongest":
        if os.name == "posix" and namespace_tool() is not None:
            return "namespace"
        if os.name != "posix":
            raise InvalidArgument(
                "no isolated runner works on this system (it needs POSIX); pass "
                "isolation='inline' by name to run trusted, scripted code in-process"
            )
        why = (
            "isolation='strongest' is only 'process' here: no namespace tool works "
            f"({NO_NAMESPACE_TOOL}); run `agentic-machines doctor` for what is missing"
        )
        if strongest_policy() == "require":
            raise InvalidArgument(why + "; AGENTIC_MACHINES_STRONGEST=require refuses it")
        warnings.warn(IsolationFallback(why), stacklevel=2)
        return "process"
    if isolation not in LEVELS:
        raise InvalidArgument(
            f"isolation must be one of {', '.join(LEVELS)} or 'strongest', got {isolation!r}"
        )
    if isolation == "process" and os.name != "posix":
        raise InvalidArgument("isolation='process' needs a POSIX system (resource limits)")
    if isolation == "namespace" and namespace_tool() is None:
        raise InvalidArgument(NO_NAMESPACE_TOOL)
    return isolation


STRONGEST_POLICIES = ("warn", "require")


def strongest_policy() -> str:
    """What ``"strongest"`` does when it is weaker than ``"namespace"`` here: ``"warn"``
    (the default) or ``"require"`` (an error), from ``AGENTIC_MACHINES_STRONGEST``.

    >>> strongest_policy() in STRONGEST_POLICIES
    True
    """
    policy = os.environ.get("AGENTIC_MACHINES_STRONGEST", "warn").strip().lower() or "warn"
    if policy not in STRONGEST_POLICIES:
        raise InvalidArgument(
            f"AGENTIC_MACHINES_STRONGEST must be 'warn' or 'require', got {policy!r}"
        )
    return policy


def make_runner(
    isolation: str | None = "strongest",
    *,
    timeout_s: float | None = None,
    limits: Limits | None = None,
    model: Any = None,
) -> BlockRunner:
    """A runner at the requested level (see :func:`resolve_isolation`).

    >>> make_runner("inline").level
    'inline'
    """
    level = resolve_isolation(isolation, model)
    limits = limits or Limits()
    if timeout_s is not None:
        limits = dataclasses.replace(limits, timeout_s=timeout_s)
    if level == "inline":
        return InlineRunner()
    return ProcessRunner(level, limits)
