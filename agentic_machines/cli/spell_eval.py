"""``agentic-machines eval --spell PROGRAM --script FILE``: run a Spell program.

Each model call (a self-call's open prefix, or a ``leaf-llm`` prompt) is answered by
the next completion of the script; the session's value, or its error, is printed.

>>> eval_spell("(quine completion (eval (do '(!llm-self \\"Pick.\\"))))", ["7"], None, print)
turn 1 (self): (quine completion (eval (do "Pick."
  model: 7
7
0
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import InvalidArgument

__all__ = ["eval_spell", "load_tools"]


def load_tools(target: str) -> dict[str, Callable[..., Any]]:
    """The tools ``--tools MODULE:ATTR`` names: a dict of Spell names to Python functions.

    >>> sorted(load_tools("agentic_machines.spell.spell_machine:EXAMPLE_TOOLS"))
    ['shout']
    >>> load_tools("agentic_machines.spell.spell_machine:RETRY_BUDGET")
    Traceback (most recent call last):
      ...
    agentic_machines.errors.InvalidArgument: --tools agentic_machines.spell.spell_machine:RETRY_BUDGET is a int, not a dict of Spell names to Python functions such as {"read-file": read_file}
    """
    from .targets import load_object  # loaded when the verb runs

    tools, where = load_object(target)
    if not isinstance(tools, Mapping):
        raise InvalidArgument(
            f"--tools {where} is a {type(tools).__name__}, not a dict of Spell names to Python "
            'functions such as {"read-file": read_file}'
        )
    bad = [name for name, fn in tools.items() if type(name) is not str or not callable(fn)]
    if bad:
        raise InvalidArgument(
            f"--tools {where}: {bad[0]!r} must be a string naming a Python function; "
            "give a dict of Spell names to functions"
        )
    return dict(tools)


def eval_spell(
    program: str,
    completions: Sequence[str],
    fuel: int | None,
    fail: Callable[[BaseException], object],
    *,
    tools: Mapping[str, Callable[..., Any]] | None = None,
    say: Callable[[str], object] = print,
) -> int:
    """Run ``program`` as Spell; print each turn, then the value (exit 0) or the error (exit 2).

    ``tools`` are the environment's tools (:class:`~agentic_machines.spell.ToolEnvironment`);
    ``say`` prints a line (the command line's escapes terminal control characters).
    """
    from ..spell import ToolEnvironment, pr_str, run_spell  # loaded when the verb runs

    environment = ToolEnvironment(tools) if tools is not None else None
    result = (
        run_spell(program, completions, environment)
        if fuel is None
        else run_spell(program, completions, environment, fuel=fuel)
    )
    lines = result.describe().splitlines()
    for line in lines[:-1]:
        say(line)
    if result.error is not None:
        fail(result.error)
        return 2
    say(pr_str(result.value))
    return 0
