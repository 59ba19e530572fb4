"""Pydantic AI agents as agentic machines: :func:`machine`.

``machine(agent, input)`` runs Pydantic AI's own ``agent.run(input)`` with a
``FunctionModel`` of ours (Pydantic AI's own test seam): system prompts, instructions,
tools, structured output, output validators and ``ModelRetry`` are Pydantic AI's, and
every model request is one step of an agentic machine
(:func:`~agentic_machines.agent_machine`). Nothing goes over the network. A completion is
a text reply or ``{"tool_calls": [{"name": ..., "arguments": {...}}]}`` (the output tool,
``final_result`` by default, gives a structured output); each retry is a step. Wrap a
tool with side effects with :func:`~agentic_machines.effect` (under the tool decorator)
so that it runs once per real step. The prompt's format and the outcomes are on the
reference page (``docs/reference/pydantic_ai.md``).

>>> from pydantic_ai import Agent
>>> bot = Agent(name="calc", system_prompt="Use add for sums.")
>>> @bot.tool_plain
... def add(a: int, b: int) -> int:
...     '''Add two integers.'''
...     return a + b
>>> m = machine(bot, "What is 2 + 3?")
>>> print(m.prompt(m.initial))  # doctest: +ELLIPSIS
# agent: calc
## tools
- add: Add two integers. | parameters {...}
## output
text
## messages
[system] Use add for sums.
[user] What is 2 + 3?
>>> s = m.harness(m.initial, '{"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}')
>>> print(m.prompt(s).split("## messages")[1].strip())
[system] Use add for sums.
[user] What is 2 + 3?
[tool call call_1_0] add {"a": 2, "b": 3}
[tool result call_1_0] 5
>>> m.harness(s, "5"), m.result(s, "5")
(1, '5')
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from ..errors import InvalidArgument
from ..runtime.agent import AgentMachine
from . import arguments_json, need, tool_calls_of

__all__ = ["machine", "render_prompt", "parse_completion"]

need("pydantic_ai")
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402


def render_prompt(name: str, messages: list[Any], info: AgentInfo) -> str:
    """The prompt text of one model request (the format is in the module docstring)."""
    lines = [f"# agent: {name}", "## tools"]
    lines += [_tool_line(t) for t in info.function_tools] or ["(none)"]
    lines.append("## output")
    outputs = ["text"] if info.allow_text_output else []
    lines += outputs + [_tool_line(t) for t in info.output_tools]
    lines.append("## messages")
    lines += [line for message in messages for line in _message_lines(message)] or ["(none)"]
    return "\n".join(lines)


def _tool_line(tool: Any) -> str:
    schema = json.dumps(tool.parameters_json_schema, sort_keys=True, ensure_ascii=False)
    return f"- {tool.name}: {tool.description or ''} | parameters {schema}"


def _message_lines(message: Any) -> list[str]:
    lines = []
    for part in message.parts:
        kind = getattr(part, "part_kind", "?")
        if kind == "system-prompt":
            lines.append(f"[system] {part.content}")
        elif kind == "user-prompt":
            lines.append(f"[user] {_text(part.content)}")
        elif kind == "text":
            lines.append(f"[assistant] {part.content}")
        elif kind == "tool-call":
            arguments = json.dumps(part.args_as_dict(), ensure_ascii=False)
            lines.append(f"[tool call {part.tool_call_id}] {part.tool_name} {arguments}")
        elif kind == "tool-return":
            lines.append(f"[tool result {part.tool_call_id}] {part.model_response_str()}")
        elif kind == "retry-prompt":
            what = " ".join(part.model_response().split())
            lines.append(f"[retry {part.tool_call_id}] {what}")
        else:  # thinking, files, capabilities: kinds this adapter never makes
            lines.append(f"[{kind}]")
    return lines


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return json.dumps(content, sort_keys=True, default=str)


def parse_completion(completion: str, call_index: int) -> ModelResponse:
    """The Pydantic AI ``ModelResponse`` of a completion: a text reply, or tool calls.

    >>> parse_completion("Done.", 1).parts
    [TextPart(content='Done.')]
    >>> call, = parse_completion('{"tool_calls": [{"name": "add", "arguments": {"a": 1}}]}', 2).parts
    >>> call.tool_name, call.args, call.tool_call_id
    ('add', '{"a": 1}', 'call_2_0')
    """
    calls = tool_calls_of(completion)
    if calls is None:
        return ModelResponse(parts=[TextPart(content=completion)])
    parts = []
    for i, call in enumerate(calls):
        name, arguments = arguments_json(call)
        parts.append(
            ToolCallPart(tool_name=name, args=arguments, tool_call_id=f"call_{call_index}_{i}")
        )
    return ModelResponse(parts=parts)


def _run_agent(model: Any, agent: Agent, input: str, name: str, deps: Any) -> Any:
    """The agent function: one ``agent.run``, its model requests answered by ``model``."""
    calls = [0]

    # async: Pydantic AI runs a plain function model in a worker thread, and the machine's
    # model must be called from the agent function's own flow of control
    async def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
        calls[0] += 1
        return parse_completion(model(render_prompt(name, messages, info)), calls[0])

    bridge = FunctionModel(respond, model_name="agentic-machines")
    # asyncio.run, not run_sync: every suspended run needs an event loop of its own
    return asyncio.run(agent.run(input, model=bridge, deps=deps)).output


def machine(
    agent: Agent,
    input: str,
    *,
    deps: Any = None,
    completions: list[str] | None = None,
    name: str | None = None,
    isolation: str = "process",
) -> AgentMachine:
    """The agentic machine of running the Pydantic AI ``agent`` on the user prompt ``input``
    (with ``deps``, the agent's dependencies, passed to every run).

    ``completions`` gives a finite alphabet for ``explore`` and the checks; ``name``
    defaults to the agent's name. The agent's retry counts (``retries=``,
    ``output_retries=``) bound the retries; a run that ends returns ``result.output``.
    """
    if not isinstance(agent, Agent):
        raise InvalidArgument(
            f"machine() needs a pydantic_ai.Agent, got {type(agent).__name__}; build one with "
            "Agent(system_prompt=..., output_type=...)"
        )
    if not isinstance(input, str):
        raise InvalidArgument(f"input is the user prompt, a string; got {type(input).__name__}")
    title = name or agent.name or "agent"
    # No line budget: the agent's retry counts bound its loop between model requests (as
    # the Agents SDK's max_turns does), and counting the framework's lines is slow.
    return AgentMachine(
        _run_agent,
        (agent, input, title, deps),
        name=title,
        completions=completions,
        line_budget=None,
        cache_size=16,
        isolation=isolation,  # where the agent runs: agent_machine's
    )
