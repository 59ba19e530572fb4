"""``agentic-machines doctor``: what this machine gives each isolation level.

One table (:mod:`agentic_machines.execution.doctor`): the user the host runs as, whether
bubblewrap and ``unshare`` are found and start a worker, user namespaces, the seccomp
filter, the control group, and the levels that work; then the level ``strongest`` gives
here and what is missing for the strongest sandbox, with how to get it. Exit status 0
when ``strongest`` is the namespace level, 1 when it is weaker.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_parser", "doctor_command"]


def add_parser(sub: Any) -> None:
    """Register ``doctor`` on the subcommand parsers ``sub``."""
    p = sub.add_parser(
        "doctor",
        help="what this machine gives each isolation level, and what is missing",
        description="Try what each isolation level needs on this machine (bubblewrap, "
        "unshare, user namespaces, seccomp, a control group, root or not) and print one "
        "table, the level 'strongest' gives here and what is missing for the strongest "
        "sandbox. Exit status 0 when strongest is the namespace level, else 1.",
    )
    p.set_defaults(func=doctor_command)


def doctor_command(args: argparse.Namespace) -> int:
    """Handle ``doctor``: examine the machine, print the table.

    >>> import argparse
    >>> doctor_command(argparse.Namespace()) in (0, 1)  # doctest: +ELLIPSIS
    check ...
    True
    """
    from ..execution.doctor import examine, render  # loaded when the verb runs

    report = examine()
    print(render(report))
    return 0 if report.strongest == "namespace" else 1
