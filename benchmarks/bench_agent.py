"""Cost of an agent function run as an agentic machine against the function run directly.

Run: ``python benchmarks/bench_agent.py``. Both loops run in this process; the ratios
matter, not the absolute numbers. The agent is a ReAct-style loop with two tools: it
builds a prompt from the last observations, parses the model's ``tool: argument``
answer, calls the tool and keeps the observation, for 10 000 steps.

- ``direct``: ``agent(model)`` with a plain model function (the baseline: what the
  user's own code costs without the toolkit).
- ``machine``: ``run(agent_machine(agent), FunctionModel(model))``: the same agent
  suspended in a greenlet at each model call, every step recorded in a ``Trace``, with
  the default ``line_budget`` (each step's Python lines counted, so a step that never
  calls the model again is ``DIVERGE``).
- ``machine, no budget``: the same with ``line_budget=None`` (no line counting).

The goal is at most 3x for the machine against the direct call. To show where the
time goes, three floors are timed beside them (issue 25):

- ``greenlet ping-pong``: the agent in a bare greenlet, switched out at each model call
  and back in with the answer (no machine at all): the floor of suspending the function;
- ``h() loop, no budget``: ``machine.harness`` called in a plain loop (no ``run``, no
  trace), without line counting: the machine's own bookkeeping;
- ``run, no budget``: the same through ``run`` (the ``Trace`` and its checks).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import goal, interleaved  # noqa: E402
from agentic_machines.models import FunctionModel  # noqa: E402
from greenlet import getcurrent, greenlet  # noqa: E402

from agentic_machines import agent_machine  # noqa: E402
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


def ping_pong() -> None:
    """The agent in a bare greenlet: the floor of suspending it at each model call."""
    main = getcurrent()
    glet = greenlet(lambda: react(main.switch, STEPS))
    prompt = glet.switch()
    for _ in range(STEPS):
        prompt = glet.switch(scripted(prompt))


def harness_loop(budget) -> None:
    """h() in a plain loop: the machine without run()'s trace."""
    m = agent_machine(react, STEPS, line_budget=budget)
    s = m.initial
    for _ in range(STEPS):
        s = m.harness(s, scripted(m.prompt(s)))


def main() -> None:
    def machine_run(budget):
        m = agent_machine(react, STEPS, line_budget=budget)
        trace = run(m, FunctionModel(scripted), max_steps=STEPS + 1)
        assert len(trace) == STEPS, (len(trace), trace.end)
        assert m.result(trace.steps[-1].state, trace.steps[-1].completion) == "out of steps"

    (direct, _), (with_budget, _), (no_budget, _), (pong, _), (loop, _) = interleaved(
        [
            lambda: react(scripted, STEPS),
            lambda: machine_run(1_000_000),
            lambda: machine_run(None),
            ping_pong,
            lambda: harness_loop(None),
        ]
    )
    print(f"agent_machine benchmark: ReAct-style agent, {STEPS:,} steps (alternating, median of 5)")
    print(f"  {'loop':<22}{'seconds':>10}{'us/step':>10}{'ratio':>8}")
    for label, t in (
        ("direct", direct),
        ("machine", with_budget),
        ("machine, no budget", no_budget),
        ("greenlet ping-pong", pong),
        ("h() loop, no budget", loop),
    ):
        print(f"  {label:<22}{t:>10.4f}{t / STEPS * 1e6:>10.2f}{t / direct:>8.2f}")
    goal(f"agent_machine ÷ direct, {STEPS:,}-step ReAct run", with_budget / direct, 3)
    goal("the same, line_budget=None", no_budget / direct, None)
    goal("floor: the agent in a bare greenlet ÷ direct", pong / direct, None)
    goal("floor: h() in a plain loop, no budget ÷ direct", loop / direct, None)


if __name__ == "__main__":
    main()
