"""OpenAI Agents SDK agents as agentic machines: :func:`machine`.

``machine(agent, input, max_turns=10)`` runs the SDK's own ``Runner`` on ``agent`` with a
model of ours plugged in through the SDK's ``Model`` interface: instructions, function
tools, handoffs and error handling are the SDK's, and every model request is one step of
an agentic machine (:func:`agentic_machines.agent_machine`). Nothing goes over the
network, no API key is read, and tracing is disabled for the run. A completion is plain
text (a final message) or ``{"tool_calls": [{"name": ..., "arguments": {...}}]}``
(handoffs are tools too). The prompt's format (:func:`render_prompt`), what a malformed
completion does and the model name the SDK sees are on the reference page
(``docs/reference/openai_agents.md``).

>>> from agents import Agent, function_tool
>>> @function_tool
... def add(a: int, b: int) -> int:
...     '''Add two integers.'''
...     return a + b
>>> bot = Agent(name="calc", instructions="Use add for sums.", tools=[add])
>>> m = machine(bot, "What is 2 + 3?")
>>> print(m.prompt(m.initial))
# agent: calc
## instructions
Use add for sums.
## tools
- add: Add two integers. | parameters {"additionalProperties": false, "properties": {"a": {"title": "A", "type": "integer"}, "b": {"title": "B", "type": "integer"}}, "required": ["a", "b"], "title": "add_args", "type": "object"}
## input
[user] What is 2 + 3?
>>> s = m.harness(m.initial, '{"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}')
>>> print(m.prompt(s).split("## input")[1].strip())
[user] What is 2 + 3?
[tool call call_1_0] add {"a": 2, "b": 3}
[tool result call_1_0] 5
>>> m.harness(s, "5"), m.result(s, "5")
(1, '5')
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Callable
from typing import Any

from ..errors import InvalidArgument
from ..runtime.agent import AgentMachine
from . import arguments_json, tool_calls_of

__all__ = ["machine", "render_prompt", "parse_completion", "BridgeModel"]

try:  # the SDK is an optional extra
    from agents import Agent, RunConfig, RunHooks, Runner
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "agentic_machines.adapters.openai_agents needs the OpenAI Agents SDK; install it with "
        'pip install -e ".[agents]" (or pip install openai-agents)'
    ) from exc


def render_prompt(
    agent_name: str,
    system_instructions: str | None,
    input: str | list[Any],
    tools: list[Any],
    handoffs: list[Any],
) -> str:
    """The prompt text of one SDK model request (the format is in the module docstring).

    >>> print(render_prompt("a", None, "hi", [], []))
    # agent: a
    ## instructions
    (none)
    ## tools
    (none)
    ## input
    [user] hi
    """
    lines = [f"# agent: {agent_name}", "## instructions", system_instructions or "(none)"]
    lines.append("## tools")
    rows = [_tool_line(t) for t in tools] + [_handoff_line(h) for h in handoffs]
    lines += rows or ["(none)"]
    lines.append("## input")
    items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
    lines += [_item_line(item) for item in items] or ["(none)"]
    return "\n".join(lines)


def _schema(schema: Any) -> str:
    return json.dumps(schema, sort_keys=True, ensure_ascii=False)


def _tool_line(tool: Any) -> str:
    schema = getattr(tool, "params_json_schema", None)
    text = f"- {tool.name}: {getattr(tool, 'description', '') or ''}".rstrip()
    return text + (f" | parameters {_schema(schema)}" if schema is not None else "")


def _handoff_line(handoff: Any) -> str:
    return (
        f"- {handoff.tool_name}: {handoff.tool_description.strip()} | handoff | "
        f"parameters {_schema(handoff.input_json_schema)}"
    )


def _plain(item: Any) -> Any:
    if hasattr(item, "model_dump"):
        return item.model_dump(exclude_none=True)
    return item


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") if isinstance(part, dict) else str(part)
            for part in map(_plain, content)
        )
    return json.dumps(content, sort_keys=True, default=str)


def _item_line(item: Any) -> str:
    item = _plain(item)
    if not isinstance(item, dict):
        return f"[item] {item!r}"
    kind = item.get("type")
    if kind in (None, "message") and "role" in item:
        return f"[{item['role']}] {_text(item.get('content', ''))}"
    if kind == "function_call":
        return f"[tool call {item.get('call_id')}] {item.get('name')} {item.get('arguments')}"
    if kind == "function_call_output":
        output = item.get("output")
        return f"[tool result {item.get('call_id')}] {_text(output)}"
    rest = {k: v for k, v in item.items() if k not in ("type", "id")}
    return f"[{kind}] {json.dumps(rest, sort_keys=True, default=str, ensure_ascii=False)}"


def parse_completion(completion: str, call_index: int) -> list[Any]:
    """The SDK output items of a completion: tool calls, or one final text message.

    >>> [type(i).__name__ for i in parse_completion("Done.", 1)]
    ['ResponseOutputMessage']
    >>> call, = parse_completion('{"tool_calls": [{"name": "add", "arguments": {"a": 1}}]}', 2)
    >>> call.name, call.arguments, call.call_id
    ('add', '{"a": 1}', 'call_2_0')
    """
    calls = tool_calls_of(completion)
    if calls is None:
        return [
            ResponseOutputMessage(
                id=f"msg_{call_index}",
                content=[ResponseOutputText(text=completion, type="output_text", annotations=[])],
                role="assistant",
                status="completed",
                type="message",
            )
        ]
    items = []
    for i, call in enumerate(calls):
        name, arguments = arguments_json(call)
        items.append(
            ResponseFunctionToolCall(
                arguments=arguments,
                call_id=f"call_{call_index}_{i}",
                name=name,
                type="function_call",
                id=f"fc_{call_index}_{i}",
                status="completed",
            )
        )
    return items


class BridgeModel(Model):
    """The SDK ``Model`` that asks an agent machine's ``model(prompt)`` for each response."""

    def __init__(self, ask: Any, agent_name: str) -> None:
        self._ask = ask
        self._agent_name = agent_name
        self.calls = 0

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[Any],
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        *,
        previous_response_id: str | None = None,
        conversation_id: str | None = None,
        prompt: Any = None,
        **_: Any,
    ) -> ModelResponse:
        self.calls += 1
        text = render_prompt(self._agent_name, system_instructions, input, tools, handoffs)
        completion = self._ask(text)
        return ModelResponse(
            output=parse_completion(completion, self.calls), usage=Usage(), response_id=None
        )

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError(
            "agentic machines drive the SDK with Runner.run, not streaming; use machine(...)"
        )


class _CurrentAgent(RunHooks):
    """Tells the bridge which agent is about to call the model (it changes on a handoff)."""

    def __init__(self, bridge: BridgeModel) -> None:
        self._bridge = bridge

    async def on_llm_start(self, context: Any, agent: Any, *args: Any, **kwargs: Any) -> None:
        self._bridge._agent_name = agent.name


_DEFAULT_MODEL = "OPENAI_DEFAULT_MODEL"  # the variable the SDK reads its default model from


def _set_default_model(value: str | None) -> str | None:
    """Set the SDK's default model name (``None``: unset); the value it had before."""
    before = os.environ.get(_DEFAULT_MODEL)
    if value is None:
        os.environ.pop(_DEFAULT_MODEL, None)
    else:
        os.environ[_DEFAULT_MODEL] = value
    return before


def _named(model: Callable[[str], str], name: str) -> tuple[Callable[[str], str], str | None]:
    """Set the default model name to ``name`` (and the name it had before): ``model``, with
    the name it had before while the run is suspended in a model call.

    The name is set only while this run's code runs: an inline run is suspended inside
    ``model`` while other runs of the same process go on, and they see their own name.

    >>> def peek(prompt):
    ...     return os.environ.get(_DEFAULT_MODEL, "unset")
    >>> before = _set_default_model(None)
    >>> ask, outside = _named(peek, "mine")
    >>> os.environ[_DEFAULT_MODEL], ask("?"), os.environ[_DEFAULT_MODEL], outside
    ('mine', 'unset', 'mine', None)
    >>> _ = _set_default_model(before)
    """
    outside = _set_default_model(name)

    def ask(prompt: str) -> str:
        mine = _set_default_model(outside)
        try:
            return model(prompt)
        finally:
            _set_default_model(mine)

    return ask, outside


def _run_agent(model: Any, agent: Any, input: Any, max_turns: int, model_name: str) -> Any:
    """The agent function: one SDK run, its model requests answered by ``model``."""
    ask, outside = _named(model, model_name)
    try:
        bridge = BridgeModel(ask, agent.name)
        config = RunConfig(model=bridge, tracing_disabled=True)
        hooks = _CurrentAgent(bridge)
        # asyncio.run, not Runner.run_sync: every suspended run needs an event loop of its own.
        result = asyncio.run(
            Runner.run(agent, input, max_turns=max_turns, run_config=config, hooks=hooks)
        )
        return result.final_output
    finally:
        _set_default_model(outside)


def machine(
    agent: Agent,
    input: str | list[Any],
    *,
    max_turns: int = 10,
    completions: list[str] | None = None,
    name: str | None = None,
    model_name: str = "agentic-machines",
    isolation: str = "process",
) -> AgentMachine:
    """The agentic machine of running the SDK ``agent`` on ``input``.

    ``max_turns`` is the SDK's own bound on model requests (the SDK raises
    ``MaxTurnsExceeded`` after it: an ``AgentRaised`` outcome). ``completions`` gives a
    finite alphabet for ``explore`` and the checks; ``name`` defaults to the agent's name.
    ``model_name`` is the SDK's default model name during the run (the environment's
    ``OPENAI_DEFAULT_MODEL`` is not read); ``isolation`` is where the agent runs
    (:func:`~agentic_machines.agent_machine`'s). A run that ends returns the SDK's
    ``final_output`` (see ``machine.result``).
    """
    if not isinstance(agent, Agent):
        raise InvalidArgument(
            f"machine() needs an agents.Agent, got {type(agent).__name__}; build one with "
            "Agent(name=..., instructions=..., tools=[...])"
        )
    if not isinstance(max_turns, int) or max_turns < 1:
        raise InvalidArgument(f"max_turns must be a positive integer, got {max_turns!r}")
    if not isinstance(model_name, str) or not model_name:
        raise InvalidArgument(
            f"model_name is the SDK's default model name under the adapter, a non-empty "
            f"string; got {model_name!r}"
        )
    # No line budget: the SDK's own max_turns bounds the run, and counting the lines of
    # the SDK's machinery would slow every step down many times. Each suspended run holds
    # an event loop (and its worker thread), hence the small cache of suspended runs.
    return AgentMachine(
        _run_agent,
        (agent, input, max_turns, model_name),
        name=name or agent.name,
        completions=completions,
        line_budget=None,
        cache_size=16,
        isolation=isolation,
    )
