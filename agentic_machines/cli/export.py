"""``agentic-machines export TARGET -o FILE``: write a finite machine as a machine file.

Any finite target (a fixture, a machine file, a finite Python machine) is written in
the format of :mod:`agentic_machines.machinefile` (JSON, or TOML for a ``.toml``
name); loading the file back gives an equal machine.

>>> import tempfile, pathlib
>>> from agentic_machines.cli.commands import main
>>> out = pathlib.Path(tempfile.mkdtemp()) / "m.json"
>>> main(["export", "f2-mul", "-o", str(out)])  # doctest: +ELLIPSIS
wrote .../m.json: f2-mul, 2 states, 2 completions
0
"""

from __future__ import annotations

import argparse
from typing import Any

from .._text import counted
from ._args import add_isolation_arguments, add_target_arguments, agent_options

__all__ = ["add_parser", "export_command"]


def add_parser(sub: Any) -> None:
    """Register ``export`` on the subcommand parsers ``sub``."""

    p = sub.add_parser(
        "export",
        help="write a finite machine as a JSON or TOML machine file",
        description="Write a finite machine (a fixture, a machine file, a finite Python "
        "machine) in the machine-file format (docs/machine-files.md); the suffix of "
        "FILE picks JSON or TOML.",
    )
    add_target_arguments(p, completions=False)
    p.add_argument(
        "-o", "--output", required=True, metavar="FILE", help="the .json or .toml file to write"
    )
    # the flags every verb that takes an agent takes: a factory's agent machine is built
    # with them (an agent function has no finite machine file, and is refused in one line)
    add_isolation_arguments(p)
    p.set_defaults(func=export_command)


def export_command(args: argparse.Namespace) -> int:
    """Handle ``export``: resolve the target, write the file, say what was written."""
    from ..machinefile import dump_machine  # loaded when the verb runs
    from .targets import resolve_target  # loaded when the verb runs

    entry = resolve_target(args.name, agent_options(args))
    machine = entry.machine()
    path = dump_machine(machine, args.output)
    print(
        f"wrote {path}: {machine.name}, {counted(len(machine.states), 'state')}, "
        f"{counted(len(machine.completions), 'completion')}"
    )
    return 0
