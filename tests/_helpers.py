"""Helpers several test modules share (the fixtures are in ``conftest.py``; these are
imported, as a Hypothesis strategy must be where ``@given`` names it).

``cli(folder, *argv)`` runs ``python -m agentic_machines`` in a subprocess (in ``folder``,
with this checkout first on the path as the suite's environment has it);
``error_line(capsys)`` is the one line a refused command prints; ``reachable(machine,
replies, steps)`` draws a state an architecture's machine reaches; ``experiment(name)``
imports a script of ``experiments/``; ``tool_works(tool)`` probes a namespace tool once per
test process.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from hypothesis import strategies as st

from agentic_machines import AgenticMachine, is_sentinel


def cli(
    folder: Path, *argv: str, stdin: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """``agentic-machines ARGV`` run in ``folder``, as a user runs it; ``timeout`` is a
    guard against a hang, never the thing a test measures."""
    return subprocess.run(
        [sys.executable, "-m", "agentic_machines", *argv],
        cwd=folder,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=os.environ.copy(),
    )


ROOT = Path(__file__).resolve().parent.parent


def experiment(name: str) -> ModuleType:
    """``experiments/NAME.py`` imported once, as the module ``NAME`` (registered in
    ``sys.modules`` first: the dataclasses of a script look their module up)."""
    path = ROOT / "experiments" / f"{name}.py"
    known = sys.modules.get(name)
    if known is not None and Path(getattr(known, "__file__", "") or "") == path:
        return known
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, f"experiments/{name}.py not found"
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def error_line(capsys: Any) -> str:
    """The one line on stderr of a command that refused its input (no traceback)."""
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("agentic-machines") and "error:" in lines[0]
    assert "Traceback" not in captured.err + captured.out
    return lines[0]


@st.composite
def reachable(
    draw: Any, machine: AgenticMachine, replies: st.SearchStrategy[str], steps: int
) -> Any:
    """A state ``machine`` reaches from its initial state in at most ``steps`` steps, each
    by a completion drawn from ``replies`` (the walk stops before a sentinel)."""
    state = machine.initial
    for _ in range(draw(st.integers(0, steps))):
        nxt = machine.harness(state, draw(replies))
        if is_sentinel(nxt):
            break
        state = nxt
    return state


@functools.cache  # a probe starts a confined interpreter; several files ask at collection
def tool_works(tool: str) -> bool:
    """Whether the namespace tool ``tool`` (``"bwrap"``, ``"unshare"``) starts a worker here
    (``confine.probe``), asked once per test process.

    >>> tool_works("no-such-tool-am")
    False
    """
    from agentic_machines.execution.confine import probe  # the execution layer, asked lazily

    return probe(tool) is None
