"""LangGraph's ReAct agent with a tool (the LangGraph "Agents" quickstart), as a machine.

From the LangGraph docs' agent quickstart: ``create_react_agent`` with one tool,
``get_weather``, and the prompt "You are a helpful assistant". Changed: the network
model ("anthropic:claude-3-7-sonnet-latest") is replaced by the adapter's ``chat_model()``;
the weather comes from a small table. ``build_buggy`` plants a harness bug: its tool
looks the city up with ``[]``, so a city missing from the table raises ``KeyError``,
which LangGraph's tool node does not catch (it catches only bad arguments).

    agentic-machines explore 'examples/langgraph_react.py:build()' --depth 3
    agentic-machines test 'examples/langgraph_react.py:build_buggy()' -p never_raises --depth 3
"""

import json

from langgraph.prebuilt import create_react_agent

from agentic_machines.adapters.langgraph import chat_model, machine

WEATHER = {"sf": "It's always sunny in sf!", "nyc": "Rainy in nyc."}


def get_weather(city: str) -> str:
    """Get weather for a given city."""
    return WEATHER.get(city.lower(), f"No forecast for {city}.")


def get_weather_buggy(city: str) -> str:
    """Get weather for a given city."""
    return WEATHER[city]  # the planted bug: "Paris" (or "SF") raises KeyError


def _call(city: str) -> str:
    return json.dumps({"tool_calls": [{"name": "get_weather", "arguments": {"city": city}}]})


COMPLETIONS = [_call("sf"), _call("Paris"), "It's sunny in San Francisco."]


def _agent(tool):
    tool.__name__ = "get_weather"  # the buggy one goes by the tool's own name
    return create_react_agent(chat_model(), tools=[tool], prompt="You are a helpful assistant")


def build():
    """The agent asked "what is the weather in sf", on a three-completion alphabet."""
    return machine(_agent(get_weather), "what is the weather in sf", completions=COMPLETIONS)


def build_buggy():
    """The same agent with the planted bug in its tool."""
    return machine(_agent(get_weather_buggy), "what is the weather in sf", completions=COMPLETIONS)
