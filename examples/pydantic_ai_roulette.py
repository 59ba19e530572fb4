"""Pydantic AI's roulette wheel: an agent with a tool and dependencies, as a machine.

From the Pydantic AI docs ("Agents" introduction): ``roulette_agent`` with
``deps_type=int`` (the winning square), ``output_type=bool`` and the tool
``roulette_wheel(ctx, square)``, run on "Put my money on square eighteen" with deps 18.
Changed: the model ``openai:gpt-4o`` is the adapter's model. ``build_buggy`` plants a
harness bug: the tool looks the square up on a wheel of 37 squares with ``[]``, so a
square past 36 raises ``IndexError``, which Pydantic AI does not catch.

    agentic-machines explore 'examples/pydantic_ai_roulette.py:build()' --depth 3
    agentic-machines test 'examples/pydantic_ai_roulette.py:build_buggy()' -p never_raises --depth 2
"""

import json

from pydantic_ai import Agent, RunContext

from agentic_machines.adapters.pydantic_ai import machine


def roulette_agent(buggy: bool = False) -> Agent:
    agent = Agent(
        deps_type=int,
        output_type=bool,
        system_prompt=(
            "Use the `roulette_wheel` function to see if the customer has won based on the "
            "number they provide."
        ),
        name="roulette",
    )
    wheel = list(range(37))

    @agent.tool
    async def roulette_wheel(ctx: RunContext[int], square: int) -> str:
        """check if the square is a winner"""
        if buggy:
            square = wheel[square]  # the planted bug: 40 raises IndexError
        return "winner" if square == ctx.deps else "loser"

    return agent


def _call(name: str, **arguments) -> str:
    return json.dumps({"tool_calls": [{"name": name, "arguments": arguments}]})


COMPLETIONS = [
    _call("roulette_wheel", square=18),
    _call("roulette_wheel", square=40),
    _call("final_result", response=True),
]


def build():
    return machine(
        roulette_agent(), "Put my money on square eighteen", deps=18, completions=COMPLETIONS
    )


def build_buggy():
    return machine(
        roulette_agent(buggy=True),
        "Put my money on square eighteen",
        deps=18,
        completions=COMPLETIONS,
    )
