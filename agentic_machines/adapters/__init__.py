"""Adapters: agents built on frameworks, as agentic machines.

One module per framework, each with ``machine(...)`` and an optional extra:

- :mod:`agentic_machines.adapters.openai_agents`: an OpenAI Agents SDK ``Agent``
  (``pip install -e ".[agents]"``);
- :mod:`agentic_machines.adapters.langgraph`: a compiled LangGraph ``StateGraph``, or
  ``create_react_agent``'s graph (``".[langgraph]"``);
- :mod:`agentic_machines.adapters.pydantic_ai`: a Pydantic AI ``Agent``
  (``".[pydantic-ai]"``);
- :mod:`agentic_machines.adapters.smolagents`: a smolagents ``ToolCallingAgent`` or
  ``CodeAgent`` (``".[smolagents]"``).

Adapters sit above the runtime layer: each turns a framework's agent loop into an agent
function and hands it to :func:`agentic_machines.agent_machine`, so tool calls wrapped
with :func:`~agentic_machines.effect` run once per real step and a raised error is the
step's outcome. Importing an adapter without its framework raises ``ImportError`` with one
line naming the extra; :func:`missing_extra` says the same of any framework module.

>>> missing_extra("langchain_core.messages")
'needs LangGraph: install it with pip install -e ".[langgraph]" (or pip install langgraph)'
>>> missing_extra("numpy") is None
True
"""

from __future__ import annotations

import importlib
import json
from typing import Any

__all__ = ["EXTRAS", "missing_extra", "machine_for", "tool_calls_of", "arguments_json"]

EXTRAS = {
    # top-level module -> (framework, extra, its pip package, adapter module)
    "agents": ("the OpenAI Agents SDK", "agents", "openai-agents", "openai_agents"),
    "langgraph": ("LangGraph", "langgraph", "langgraph", "langgraph"),
    "langchain_core": ("LangGraph", "langgraph", "langgraph", "langgraph"),
    "pydantic_ai": ("Pydantic AI", "pydantic-ai", "pydantic-ai-slim", "pydantic_ai"),
    "smolagents": ("smolagents", "smolagents", "smolagents", "smolagents"),
}
"""The frameworks the adapters drive, by the top-level module a program imports."""


def missing_extra(module: str | None) -> str | None:
    """The one line that says which extra provides ``module`` (None: no adapter's)."""
    top = (module or "").split(".")[0]
    if top not in EXTRAS:
        return None
    framework, extra, package, _ = EXTRAS[top]
    return (
        f'needs {framework}: install it with pip install -e ".[{extra}]" (or pip install {package})'
    )


def need(module: str) -> Any:
    """Import the framework module ``module``, or raise ImportError naming the extra."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        line = missing_extra(module)
        raise ImportError(f"agentic_machines.adapters {line}") from exc


def machine_for(agent: Any, input: Any, **options: Any) -> Any:
    """The machine of a framework's agent object run on ``input``, by the adapter of the
    framework that defines its class (``options`` go to that adapter's ``machine``)."""
    top = type(agent).__module__.split(".")[0]
    if top not in EXTRAS:
        from ..errors import InvalidArgument  # only on the error path

        raise InvalidArgument(
            f"no adapter takes a {type(agent).__name__} (from {type(agent).__module__}); "
            "give an agent function fn(model), an AgenticMachine, or an agent of LangGraph, "
            "Pydantic AI, smolagents or the OpenAI Agents SDK"
        )
    adapter = importlib.import_module(f"{__name__}.{EXTRAS[top][3]}")
    return adapter.machine(agent, input, **options)


def tool_calls_of(completion: str) -> list[Any] | None:
    """The tool calls a completion asks for, or None (then it is a final message).

    The completion convention every adapter shares: a JSON object with a non-empty
    ``tool_calls`` list, each ``{"name": ..., "arguments": {...}}``.

    >>> tool_calls_of('{"tool_calls": [{"name": "add", "arguments": {"a": 1}}]}')
    [{'name': 'add', 'arguments': {'a': 1}}]
    >>> tool_calls_of("The answer is 3."), tool_calls_of('{"tool_calls": []}')
    (None, None)
    """
    text = completion.strip()
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or "tool_calls" not in data:
        return None
    calls = data["tool_calls"]
    return calls if isinstance(calls, list) and calls else None


def arguments_json(call: Any) -> tuple[str, str]:
    """``(name, arguments as JSON text)`` of one entry of :func:`tool_calls_of`: a name that
    is not a string is kept as its JSON (the framework then reports the unknown tool).

    >>> arguments_json({"name": "add", "arguments": {"a": 1}}), arguments_json(7)
    (('add', '{"a": 1}'), ('null', '{}'))
    """
    name = call.get("name") if isinstance(call, dict) else None
    arguments = call.get("arguments", {}) if isinstance(call, dict) else {}
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return (name if isinstance(name, str) else json.dumps(name)), arguments
