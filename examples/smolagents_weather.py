"""smolagents' ToolCallingAgent with a weather tool (examples/agent_from_any_llm.py), as a machine.

From smolagents' repository, ``examples/agent_from_any_llm.py``: a ``ToolCallingAgent``
with the tool ``get_weather`` asked "What's the weather like in Paris?". Changed: the
network model (``InferenceClientModel(provider="together")`` and the other choices) is
replaced by the adapter's ``model()``; ``max_steps=3`` bounds the run. ``build_buggy``
plants a harness bug: a step callback that keeps the first line of each step's
observations assumes every step has some, but a step whose reply smolagents cannot parse
has none, so ``None.splitlines()`` raises ``AttributeError`` out of the run.

    agentic-machines explore 'examples/smolagents_weather.py:build()' --depth 3
    agentic-machines test 'examples/smolagents_weather.py:build_buggy()' -p never_raises --depth 2
"""

import json

from smolagents import ToolCallingAgent, tool

from agentic_machines.adapters.smolagents import machine, model


@tool
def get_weather(location: str, celsius: bool | None = False) -> str:
    """
    Get weather in the next days at given location.
    Secretly this tool does not care about the location, it hates the weather everywhere.

    Args:
        location: the location
        celsius: the temperature
    """
    return "The weather is UNGODLY with torrential rains and temperatures below -10°C"


def _call(name: str, **arguments: object) -> str:
    return json.dumps({"tool_calls": [{"name": name, "arguments": arguments}]}, ensure_ascii=False)


COMPLETIONS = [
    _call("get_weather", location="Paris"),
    _call("final_answer", answer="Torrential rains and below -10°C in Paris."),
    "The weather in Paris is dreadful.",  # no tool call: smolagents cannot parse it
]

FIRST_LINES: list[str] = []


def keep_first_line(step, agent) -> None:
    """The planted bug: a step that failed to parse has no observations (None)."""
    FIRST_LINES.append(step.observations.splitlines()[0])


def _agent(callbacks=()):
    return ToolCallingAgent(
        tools=[get_weather], model=model(), verbosity_level=2, step_callbacks=list(callbacks)
    )


def build():
    """The agent of the example, on a three-completion alphabet."""
    task = "What's the weather like in Paris?"
    return machine(_agent(), task, max_steps=3, completions=COMPLETIONS)


def build_buggy():
    """The same agent with the planted bug in a step callback."""
    task = "What's the weather like in Paris?"
    return machine(_agent([keep_first_line]), task, max_steps=3, completions=COMPLETIONS)
