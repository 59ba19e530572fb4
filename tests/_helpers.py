"""Helpers several test modules share: the command line as a user runs it.

``cli(folder, *argv)`` runs ``python -m agentic_machines`` in a subprocess (in ``folder``,
with this checkout first on the path as the suite's environment has it);
``error_line(capsys)`` is the one line a refused command prints.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any


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


def error_line(capsys: Any) -> str:
    """The one line on stderr of a command that refused its input (no traceback)."""
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("agentic-machines") and "error:" in lines[0]
    assert "Traceback" not in captured.err + captured.out
    return lines[0]
