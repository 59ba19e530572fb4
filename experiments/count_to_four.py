"""REPL-Plan's count-to-four (reference/repl_plan.md §5.3) with a scripted model.

The main REPL counts from 1 to 4 and hands even numbers to ``count_even``, a child REPL
spawned the first time the undefined name is called; the second call reuses it, so its
prompt shows the first invocation. Run: ``python experiments/count_to_four.py``.
"""
from __future__ import annotations

from agentic_machines.architectures import repl_plan as rp
from agentic_machines.architectures.environments import CountEnv

TASK = rp.TASK
POOL: dict = {}


def env() -> CountEnv:
    """The environment: say 1..4."""
    return CountEnv(4)


def model() -> rp.RoutedModel:
    """The scripted model: main's loop, the description, and count_even's block (twice)."""
    return rp.scripted_model(rp.COUNT_BLOCKS, rp.COUNT_DESCRIPTIONS)


def main() -> rp.Result:
    result = rp.solve(TASK, model(), env(), pool=POOL)
    for k, prompt in enumerate(result.prompts, 1):
        print(f"===== model call {k} =====")
        print(prompt)
    print("===== result =====")
    print("actions:", list(result.actions), "| status:", result.status, "| model calls:", result.model_calls)
    main_block = next(h for h in result.repls["main"].history if isinstance(h, rp.Block))
    print("events of main's block:", ", ".join(f"{e.kind} {e.name} {e.detail}".strip() for e in main_block.events))
    return result


if __name__ == "__main__":
    main()
