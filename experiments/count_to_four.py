"""REPL-Plan's count-to-four (the golden episode of docs/sources.md) with a scripted model.

The main REPL counts from 1 to 4 and hands even numbers to ``count_even``, a child REPL
spawned the first time the undefined name is called; the second call reuses it, so its
prompt shows the first invocation. Run: ``python experiments/count_to_four.py [--out PATH]``;
it prints every prompt and writes the trace of the machine run to
``docs/repl_plan_count_to_four.md``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agentic_machines.architectures import repl_plan as rp
from agentic_machines.architectures.environments import CountEnv
from agentic_machines.runtime.run import run
from agentic_machines.testing import render_trace

DOC = Path(__file__).resolve().parent.parent / "docs" / "repl_plan_count_to_four.md"

TASK = rp.TASK
POOL: dict = {}


def env() -> CountEnv:
    """The environment: say 1..4."""
    return CountEnv(4)


def model() -> rp.RoutedModel:
    """The scripted model: main's loop, the description, and count_even's block (twice)."""
    return rp.scripted_model(rp.COUNT_BLOCKS, rp.COUNT_DESCRIPTIONS)


def to_markdown() -> str:
    """The trace of ``run(machine(), model())``, every prompt and completion, as Markdown."""
    trace = run(rp.machine(TASK, env(), pool=POOL, isolation="inline"), model())
    return (
        "# REPL-Plan count-to-four: the full trace\n\n"
        "Written by `python experiments/count_to_four.py`: the machine run of the scripted model, "
        "one model call per step (a prompt that extends the previous one is shown as its new text).\n\n"
        f"```text\n{render_trace(trace)}\n```\n"
    )


def main(argv: list[str] | None = None) -> rp.Result:
    parser = argparse.ArgumentParser(description="REPL-Plan's count-to-four with a scripted model")
    parser.add_argument("--out", type=Path, default=DOC, help="Markdown file for the trace")
    args = parser.parse_args(argv)
    result = rp.solve(TASK, model(), env(), pool=POOL)
    for k, prompt in enumerate(result.prompts, 1):
        print(f"===== model call {k} =====")
        print(prompt)
    print("===== result =====")
    print(
        "actions:",
        list(result.actions),
        "| status:",
        result.status,
        "| model calls:",
        result.model_calls,
    )
    main_block = next(h for h in result.repls["main"].history if isinstance(h, rp.Block))
    print(
        "events of main's block:",
        ", ".join(f"{e.kind} {e.name} {e.detail}".strip() for e in main_block.events),
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(to_markdown(), encoding="utf-8")
    print(f"wrote {args.out}")
    return result


if __name__ == "__main__":
    main()
