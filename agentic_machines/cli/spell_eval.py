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

from collections.abc import Callable, Sequence

__all__ = ["eval_spell"]


def eval_spell(
    program: str,
    completions: Sequence[str],
    fuel: int | None,
    fail: Callable[[BaseException], object],
) -> int:
    """Run ``program`` as Spell; print each turn, then the value (exit 0) or the error (exit 2)."""
    from ..spell import pr_str, run_spell

    result = (
        run_spell(program, completions)
        if fuel is None
        else run_spell(program, completions, fuel=fuel)
    )
    lines = result.describe().splitlines()
    for line in lines[:-1]:
        print(line)
    if result.error is not None:
        fail(result.error)
        return 2
    print(pr_str(result.value))
    return 0
