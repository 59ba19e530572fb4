"""``agentic-machines exercise [N ANSWER_FILE]``: check an answer to a tutorial exercise.

With no arguments it lists the exercises and the names each answer file defines. With a
number and a file (``.py``, run for its top-level names, or ``.json``, an object of
names) it prints ``right: ...`` and exits 0, or ``wrong: ...`` with a counterexample and
exits 1. The formats are in ``docs/exercises.md``.

>>> from agentic_machines.cli.commands import main
>>> main(["exercise"])  # doctest: +ELLIPSIS
Exercises (agentic-machines exercise N ANSWER_FILE; see docs/exercises.md):
  1.1  the toggle machine  ->  toggle: a TableMachine
...
0
"""

from __future__ import annotations

import argparse

from ..errors import InvalidArgument

__all__ = ["add_parser"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``exercise`` subcommand on the command's subparsers."""
    p = sub.add_parser(
        "exercise",
        help="check your answer to a tutorial exercise",
        description="Check an answer to exercise N of the tutorial. ANSWER_FILE is a Python "
        "file (its top-level names are the answer) or a JSON object of names; run without "
        "arguments to list the exercises and the names each one wants.",
    )
    p.add_argument("number", nargs="?", help="the exercise, e.g. 2.1")
    p.add_argument("answer", nargs="?", help="the answer file (.py or .json)")
    p.set_defaults(func=_exercise)


def _exercise(args: argparse.Namespace) -> int:
    from ..exercises import EXERCISES, check_file  # loaded when the verb runs

    if args.number is None:
        print("Exercises (agentic-machines exercise N ANSWER_FILE; see docs/exercises.md):")
        for ex in EXERCISES.values():
            print(f"  {ex.number}  {ex.task}  ->  {', '.join(ex.names)}: {ex.wants}")
        return 0
    if args.answer is None:
        raise InvalidArgument(f"give the answer file: agentic-machines exercise {args.number} FILE")
    feedback = check_file(args.number, args.answer)
    print(f"Exercise {args.number}: {feedback}")
    return 0 if feedback.ok else 1
