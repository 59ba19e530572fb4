"""Cost of an agent function run inline as an agentic machine against the function run directly.

Run: ``python benchmarks/bench_agent.py``. Both loops run in this process; the ratios
matter, not the absolute numbers. The agent is a ReAct-style loop with two tools, for
10 000 steps. ``machine``: ``run(agent_machine(agent, isolation="inline"), model)``,
which steps the machine through its greenlet; ``machine, no budget``: the same without
line counting; ``h() loop``: ``machine.harness`` in a plain loop. The goal of at most 3x
against the direct call is retired (issue 35): ``run`` no longer has a linear path, and
the default isolation runs the agent in worker processes, whose cost per state is
measured by the exploration benchmark instead. These rows are information.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import goal, interleaved  # noqa: E402

from agentic_machines import HALT, agent_machine  # noqa: E402
from agentic_machines.models import FunctionModel  # noqa: E402
from agentic_machines.runtime.run import run  # noqa: E402

STEPS = 10_000

FACTS = {"owl": "a bird", "oak": "a tree", "eel": "a fish"}


def lookup(word: str) -> str:
    return FACTS.get(word, "unknown")


def count(word: str) -> str:
    return str(len(word))


TOOLS = {"lookup": lookup, "count": count}


def react(model, steps: int) -> str:
    """A ReAct-style loop: prompt from recent observations, act, observe."""
    seen: list[str] = []
    for i in range(steps):
        recent = "; ".join(seen[-3:])
        answer = model(f"Step {i}. Recent: {recent}. Act as tool: argument, or finish.")
        name, _, argument = answer.partition(": ")
        if name == "finish":
            return argument
        tool = TOOLS.get(name)
        seen.append(tool(argument) if tool is not None else f"no tool {name!r}")
    return "out of steps"


def scripted(prompt: str) -> str:
    # A cheap deterministic model: alternate the two tools on a few words.
    return ("lookup: owl", "count: oak", "lookup: eel")[len(prompt) % 3]


def harness_loop(budget) -> None:
    """h() in a plain loop: the machine without run()'s trace."""
    m = agent_machine(react, STEPS, line_budget=budget, isolation="inline")
    s = m.initial
    for _ in range(STEPS):
        s = m.harness(s, scripted(m.prompt(s)))


def machine_run(budget):
    """``run`` of the agent machine; what it returns is checked after the timing."""
    m = agent_machine(react, STEPS, line_budget=budget, isolation="inline")
    trace = run(m, FunctionModel(scripted), max_steps=STEPS + 1)
    return m, trace


def machine_run_read(budget):
    """The same, then every step of the trace read."""
    m, trace = machine_run(budget)
    for step in trace.steps:
        step.state, step.outcome  # noqa: B018 - read
    return m, trace


def check(result) -> None:
    """The run made every step and its agent returned (checked outside the timing)."""
    m, trace = result
    assert len(trace) == STEPS and trace.end is HALT, (len(trace), trace.end)
    last = trace.steps[-1]
    assert m.result(last.state, last.completion) == "out of steps"


def main() -> None:
    timed = interleaved(
        [
            lambda: react(scripted, STEPS),
            lambda: machine_run(1_000_000),
            lambda: machine_run(None),
            lambda: machine_run_read(1_000_000),
            lambda: react(FunctionModel(scripted).complete, STEPS),
            lambda: harness_loop(None),
        ]
    )
    (direct, _), (with_budget, r1), (no_budget, r2), (read, r3), (same_model, _), (loop, _) = timed
    for result in (r1, r2, r3):
        check(result)
    print(f"agent_machine benchmark: ReAct-style agent, {STEPS:,} steps (alternating, median of 5)")
    print(f"  {'loop':<28}{'seconds':>10}{'us/step':>10}{'ratio':>8}")
    for label, t in (
        ("direct", direct),
        ("machine", with_budget),
        ("machine, no budget", no_budget),
        ("machine, every step read", read),
        ("same model object", same_model),
        ("h() loop, no budget", loop),
    ):
        print(f"  {label:<28}{t:>10.4f}{t / STEPS * 1e6:>10.2f}{t / direct:>8.2f}")
    # The 3x goal is retired (issue 35): run() steps the machine, the linear path is gone.
    goal(f"agent_machine ÷ direct, {STEPS:,}-step ReAct run", with_budget / direct, None)
    goal("the same, line_budget=None", no_budget / direct, None)
    goal("the same, then every step of the trace read", read / direct, None)
    goal(
        "floor: the direct loop with the FunctionModel run needs ÷ direct",
        same_model / direct,
        None,
    )
    goal("the greenlet path: h() in a plain loop, no budget ÷ direct", loop / direct, None)


if __name__ == "__main__":
    main()
