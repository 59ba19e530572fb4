"""Every command of the README's command list runs as written from a fresh clone's root.

The clone is of this checkout's last commit (``git clone`` of the repository folder), so a
file a command needs and that was never committed fails here. Marked slow: ``demo`` and
``gallery`` take most of a minute on two cores.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    """The lines of the README's ``sh`` block under "The command line", comments cut."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## The command line", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    return [line for line in block.splitlines() if line.startswith("agentic-machines ")]


def test_the_command_list_names_every_verb():
    from agentic_machines.cli.commands import build_parser

    verbs = set(build_parser()._subparsers._group_actions[0].choices)  # noqa: SLF001
    named = {line.split()[1] for line in readme_commands()}
    assert verbs <= named, f"verbs missing from the README's list: {sorted(verbs - named)}"


def test_every_readme_command_runs_from_a_fresh_clone(tmp_path):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    # The command as `pip install -e .` installs it, but running the clone's package.
    (bindir / "agentic-machines").write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -m agentic_machines "$@"\n', encoding="utf-8"
    )
    (bindir / "agentic-machines").chmod(0o755)
    env = dict(os.environ, PYTHONPATH=str(clone), PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}")
    for command in readme_commands():
        done = subprocess.run(
            ["sh", "-c", command], cwd=clone, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
