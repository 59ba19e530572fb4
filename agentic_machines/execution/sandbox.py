"""Block runners: where model-written blocks run, at three levels of isolation, behind one interface.

RLM and REPL-Plan talk to a *block runner*, never to a namespace dict. A runner holds the
episode's namespaces (one per REPL, by key), runs blocks in them with the rerun-with-cached-calls
technique of :mod:`agentic_machines.execution.codeexec`, and answers a few questions about
them (the names bound, the text of a value). The levels:

``"inline"`` (:class:`InlineRunner`)
    The blocks run in the harness's own process with restricted builtins. Fast and exact, but
    **for trusted, scripted code only**: Python cannot be sandboxed in-process (see
    ``docs/threat_model.md`` for the attacks that get through).
``"process"`` (:class:`ProcessRunner`)
    One worker subprocess per episode, started with no inherited environment variables (no
    API keys; only ``PYTHONHASHSEED=0``, so that a replayed worker repeats itself), a private temporary working directory and OS limits
    (``resource``: address space, CPU seconds, open files, file size). The host enforces a
    wall-clock deadline per block and kills the worker when it passes. Messages are lines of
    JSON (:mod:`agentic_machines.execution.wire`); the host never unpickles anything.
``"namespace"``
    ``"process"`` inside Linux namespaces: no network, a read-only view of the filesystem,
    private size-limited tmpfs mounts for the scratch directory, ``/tmp`` and ``/dev/shm``,
    the host's socket directories hidden, its own process tree, no nested user namespace
    and the seccomp filter of :mod:`~agentic_machines.execution.seccomp`. Uses ``bwrap``
    (bubblewrap) when it works, else ``unshare`` from util-linux.

At both isolated levels the worker runs in a control group of its own when the host can
make one (:mod:`~agentic_machines.execution.cgroup`: ``memory_mb`` then bounds its
processes, tmpfs mounts and memfds together), ends every process a block started when the
block ends, and everything it sends is checked as hostile input (see
``docs/threat_model.md``).
``"strongest"``
    The best level that works on this machine; :func:`resolve_isolation` says which. When
    that is weaker than ``"namespace"`` it is never silent: the environment variable
    ``AGENTIC_MACHINES_STRONGEST`` chooses between a warning (``warn``, the default:
    :class:`~agentic_machines.errors.IsolationFallback`) and an error (``require``).
    ``agentic-machines doctor`` says what the machine lacks.

This module chooses the level and keeps every public name importable from here; the
runners live one concept a module: :mod:`~agentic_machines.execution.runner` (the
interface, :class:`Scaffold`, :class:`Limits` and the inline runner),
:mod:`~agentic_machines.execution.isolated` (:class:`ProcessRunner`, the host side of
the worker protocol) and :mod:`~agentic_machines.execution.confine` (the namespace tools,
the worker's command line and its OS limits).

Failures are outcomes. A block that passes its deadline, runs out of memory, kills its worker
or breaks the protocol ends with status ``"timeout"``, ``"memory"`` or ``"died"`` and an
error named after :class:`~agentic_machines.errors.ExecutionTimeout`,
:class:`~agentic_machines.errors.ExecutionMemoryExceeded` or
:class:`~agentic_machines.errors.WorkerDied`; the harness goes on. The next request starts a
new worker and rebuilds its state by replaying the journal of messages the host sent before
the failed block (the worker is deterministic, so the replay reaches the same state; replies
are compared).

The outcome a wall-clock deadline (or the host's load) decided is noted as clock-dependent
(:mod:`agentic_machines.execution.clock`): the machine's h raises
:class:`~agentic_machines.errors.ClockDependent`, so it is never taken as a fact.

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
from .confine import _NO_NAMESPACE_TOOL, namespace_tool, worker_paths
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
    :class:`~agentic_machines.runtime.models.ScriptedModel`,
    :class:`~agentic_machines.runtime.models.MappingModel`, REPL-Plan's ``RoutedModel`` and
    the experiments' policies do (a marker rather than a type check, because the runtime
    layer sits above this one). Anything else (an ``OpenAICompatibleModel``, a cassette
    replay of one, a plain function) is not.

    >>> from agentic_machines.runtime.models import ScriptedModel, FunctionModel
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
            f"({_NO_NAMESPACE_TOOL}); run `agentic-machines doctor` for what is missing"
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
        raise InvalidArgument(_NO_NAMESPACE_TOOL)
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
