"""smolagents agents as agentic machines: :func:`machine` and :func:`model`.

``machine(agent, task)`` runs smolagents' own ``agent.run(task)`` on a ``ToolCallingAgent``
or a ``CodeAgent`` built with :func:`model` (a smolagents ``Model`` of ours): its prompts,
memory, tool calls, parsing errors and ``max_steps`` are smolagents', and every
``model.generate`` call is one step of an agentic machine
(:func:`~agentic_machines.agent_machine`). Nothing goes over the network. The prompt is
``# agent: <name> | <class>`` (the class alone for an agent without a name), the tools (a ``ToolCallingAgent``'s) and the messages
(``[system]``, ``[user]``, ``[assistant]``, ``[tool-call]``, ``[tool-response]``).

**Completion.** ``ToolCallingAgent``: ``{"tool_calls": [{"name": ..., "arguments": {...}}]}``
(``final_answer`` ends the run), or text smolagents parses itself. ``CodeAgent``: the reply
with its ``<code>...</code>`` block, run by this project's block runner at
``code_isolation`` (:func:`~agentic_machines.execution.sandbox.make_runner`), never by
smolagents' local executor. Tools run as :func:`~agentic_machines.effect` calls; raised
errors are an ``AgentRaised`` outcome; the agent runs in worker processes only (it keeps
its run in the agent object). docs/reference/smolagents.md has the details.

>>> from smolagents import ToolCallingAgent, tool
>>> @tool
... def add(a: int, b: int) -> int:
...     '''Add two integers.
...
...     Args:
...         a: the first
...         b: the second
...     '''
...     return a + b
>>> m = machine(ToolCallingAgent(tools=[add], model=model(), verbosity_level=0), "2 + 3?")
>>> m.prompt(m.initial).splitlines()[:3]  # doctest: +ELLIPSIS
['# agent: ToolCallingAgent', '## tools', '- add: Add two integers. | ...']
>>> s = m.harness(m.initial, '{"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}')
>>> m.prompt(s).splitlines()[-2:]
['[tool-response] Observation:', '5']
>>> done = '{"tool_calls": [{"name": "final_answer", "arguments": {"answer": "5"}}]}'
>>> m.harness(s, done), m.result(s, done)
(1, '5')
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import Any

from ..errors import InvalidArgument
from ..execution.codeexec import drive_rest
from ..execution.runner import FAILURE_STATUSES, Scaffold
from ..execution.sandbox import make_runner
from ..runtime.agent import AgentMachine, effect
from ..runtime.agent_worker import can_fork
from . import arguments_json, need, tool_calls_of

__all__ = ["machine", "model", "render_prompt", "parse_completion"]

need("smolagents")
from smolagents import CodeAgent, MultiStepAgent  # noqa: E402
from smolagents.local_python_executor import CodeOutput, PythonExecutor  # noqa: E402
from smolagents.models import (  # noqa: E402
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
    get_tool_json_schema,
)

# The run a model() call belongs to (one per worker process; a context variable, which
# the threads smolagents runs parallel tool calls in copy).
_RUN: ContextVar[Any] = ContextVar("agentic_machines_smolagents_run", default=None)
_NS = "main"  # the one namespace of a CodeAgent's runner
_LINES = 100_000  # line budget of one code block (past it the run diverges)


class _BridgeModel(Model):
    """The smolagents ``Model`` of :func:`model`: every ``generate`` is a step."""

    def __init__(self) -> None:
        super().__init__(model_id="agentic-machines")

    def generate(
        self,
        messages: list[Any],
        stop_sequences: list[str] | None = None,
        response_format: Any = None,
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,
    ) -> ChatMessage:
        run = _RUN.get()
        if run is None:
            raise RuntimeError(
                "model() answers only inside a machine: run the agent with "
                "agentic_machines.adapters.smolagents.machine(agent, task)"
            )
        run["calls"] += 1
        prompt = render_prompt(run["title"], messages, tools_to_call_from or [])
        return parse_completion(run["ask"](prompt), run["calls"])

    def parse_tool_calls(self, message: ChatMessage) -> ChatMessage:
        # smolagents' own parsing of a tool call written as text, with an id of ours (its
        # own is a random uuid, which would make prompts differ from run to run)
        message = super().parse_tool_calls(message)
        for i, call in enumerate(message.tool_calls or []):
            call.id = f"call_text_{i}"
        return message


def model() -> Any:
    """The smolagents model to build agents with: its replies are the machine's completions."""
    return _BridgeModel()


def render_prompt(title: str, messages: list[Any], tools: list[Any]) -> str:
    """The prompt text of one ``generate`` call (the format is in the module docstring).

    >>> print(render_prompt("a | CodeAgent", [ChatMessage(role=MessageRole.USER, content="hi")], []))
    # agent: a | CodeAgent
    ## messages
    [user] hi
    """
    lines = [f"# agent: {title}"]
    if tools:
        lines.append("## tools")
        lines += [_tool_line(get_tool_json_schema(t)["function"]) for t in tools]
    lines.append("## messages")
    for message in messages:  # ChatMessage objects (smolagents also accepts plain dicts)
        if isinstance(message, dict):
            role, content = message.get("role", "?"), message.get("content")
        else:
            role, content = message.role, message.content
        lines.append(f"[{getattr(role, 'value', role)}] {_text(content)}")
    return "\n".join(lines)


def _tool_line(fn: dict) -> str:
    schema = json.dumps(fn.get("parameters", {}), sort_keys=True, ensure_ascii=False)
    description = " ".join(str(fn.get("description", "")).split())
    return f"- {fn.get('name')}: {description} | parameters {schema}"


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            p.get("text", f"[{p.get('type')}]") if isinstance(p, dict) else str(p) for p in content
        )
    return json.dumps(content, sort_keys=True, default=str)


def parse_completion(completion: str, call_index: int) -> ChatMessage:
    """The smolagents ``ChatMessage`` of a completion: tool calls, or the reply's text.

    >>> parse_completion("Thought: sum.", 1).content
    'Thought: sum.'
    >>> call, = parse_completion('{"tool_calls": [{"name": "add", "arguments": {"a": 1}}]}', 2).tool_calls
    >>> call.function.name, call.function.arguments, call.id
    ('add', {'a': 1}, 'call_2_0')
    """
    calls = tool_calls_of(completion)
    if calls is None:
        return ChatMessage(role=MessageRole.ASSISTANT, content=completion)
    tool_calls = []
    for i, call in enumerate(calls):
        name, arguments = arguments_json(call)
        try:
            args: Any = json.loads(arguments)
        except json.JSONDecodeError:
            args = arguments  # smolagents reports arguments it cannot use
        function = ChatMessageToolCallFunction(name=name, arguments=args)
        tool_calls.append(
            ChatMessageToolCall(function=function, id=f"call_{call_index}_{i}", type="function")
        )
    return ChatMessage(role=MessageRole.ASSISTANT, content=None, tool_calls=tool_calls)


class _RunnerExecutor(PythonExecutor):
    """The CodeAgent's executor: each code action is a block of this project's runner."""

    def __init__(self, isolation: str) -> None:
        self.isolation = isolation
        self.runner: Any = None
        self.tools: dict[str, Any] = {}
        self.values: dict[str, Any] = {}
        self.state: dict[str, Any] = {}  # smolagents reads the printed output of a failure here

    def send_tools(self, tools: dict[str, Any]) -> None:
        self.tools = dict(tools)

    def send_variables(self, variables: dict[str, Any]) -> None:
        self.values.update(variables)

    def _start(self) -> Any:
        runner = make_runner(self.isolation)
        names = tuple(n for n in self.tools if n != "final_answer")
        scaffold = Scaffold(values=self.values, effects=names, finish="final_answer")
        runner.namespace(_NS, scaffold, {n: self.tools[n] for n in names})
        return runner

    def __call__(self, code_action: str) -> CodeOutput:
        if self.runner is None:
            self.runner = self._start()
        self.state["_print_outputs"] = ""
        result = drive_rest(self.runner.run_block(_NS, code_action, line_budget=_LINES), None)
        self.state["_print_outputs"] = result.stdout
        if result.status == "finished":
            return CodeOutput(output=result.value, logs=result.stdout, is_final_answer=True)
        if result.status == "ok":
            return CodeOutput(output=None, logs=result.stdout, is_final_answer=False)
        if result.status == "budget":
            from ..errors import BudgetExceeded  # the run diverges, as a harness's would

            raise BudgetExceeded(_LINES)
        # an error in the code (or a worker that failed): smolagents shows it to the model
        raise RuntimeError(result.stderr.strip() or FAILURE_STATUSES.get(result.status, "error"))


def _effect_tools(agent: Any) -> None:
    """Make every tool of the agent (but ``final_answer``) an effect (once: marked)."""
    for name, tool in agent.tools.items():
        forward = getattr(tool, "forward", None)
        if name == "final_answer" or forward is None or getattr(forward, "_agentic_effect", 0):
            continue
        wrapped = effect(forward)
        wrapped._agentic_effect = True  # type: ignore[attr-defined]
        tool.forward = wrapped


def _run_agent(ask: Any, agent: Any, task: str, max_steps: Any, code: str, title: str) -> Any:
    """The agent function: one ``agent.run``, its model calls answered by ``ask``."""
    if isinstance(agent, CodeAgent):
        agent.python_executor = _RunnerExecutor(code)
    token = _RUN.set({"ask": ask, "calls": 0, "title": title})
    try:
        return agent.run(task, max_steps=max_steps)
    finally:
        _RUN.reset(token)
        executor = getattr(agent, "python_executor", None)
        if isinstance(executor, _RunnerExecutor) and executor.runner is not None:
            executor.runner.close()


def machine(
    agent: Any,
    task: str,
    *,
    max_steps: int | None = None,
    code_isolation: str = "strongest",
    completions: list[str] | None = None,
    name: str | None = None,
    isolation: str = "process",
) -> AgentMachine:
    """The agentic machine of running the smolagents ``agent`` (built with :func:`model`)
    on ``task``.

    ``max_steps`` bounds the agent's action steps (default: the agent's own); past it
    smolagents asks the model once more for a final answer. ``code_isolation`` is where a
    ``CodeAgent``'s code runs (``"inline"``, ``"process"``, ``"namespace"`` or
    ``"strongest"``; see :func:`~agentic_machines.execution.sandbox.make_runner`).
    ``completions`` gives a finite alphabet; ``name`` defaults to the agent's name.
    """
    if not isinstance(agent, MultiStepAgent):
        raise InvalidArgument(
            f"machine() needs a smolagents agent, got {type(agent).__name__}; build one with "
            "ToolCallingAgent(tools=[...], model=model()) or CodeAgent(tools=[...], model=model())"
        )
    if not isinstance(agent.model, _BridgeModel):
        raise InvalidArgument(
            f"the agent's model is a {type(agent.model).__name__}; build the agent with "
            "model=agentic_machines.adapters.smolagents.model()"
        )
    if not isinstance(task, str):
        raise InvalidArgument(f"task is the agent's task, a string; got {type(task).__name__}")
    if isolation != "process" or not can_fork():
        raise InvalidArgument(
            "a smolagents agent keeps its run (memory, steps) in the agent object, so its runs "
            'need processes of their own: use isolation="process" (the default) on a system '
            "that can fork"
        )
    if max_steps is not None and (not isinstance(max_steps, int) or max_steps < 1):
        raise InvalidArgument(f"max_steps must be a positive integer, got {max_steps!r}")
    make_runner(code_isolation).close()  # a level that does not work is refused now
    _effect_tools(agent)
    kind = type(agent).__name__
    title = kind if agent.name in (None, kind) else f"{agent.name} | {kind}"
    return AgentMachine(
        _run_agent,
        (agent, task, max_steps, code_isolation, title),
        name=name or agent.name or type(agent).__name__,
        completions=completions,
        line_budget=None,  # max_steps bounds the run (see openai_agents)
        cache_size=16,
        isolation=isolation,
    )
