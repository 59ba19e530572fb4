"""LangGraph graphs as agentic machines: :func:`machine` and :func:`chat_model`.

``machine(graph, input)`` runs a compiled LangGraph graph (a ``StateGraph`` compiled, or
``create_react_agent``'s) with ``graph.invoke(input)``: nodes, conditional edges, the tool
node and the recursion limit are LangGraph's own. Only the chat model is ours: pass
:func:`chat_model` where the graph wants one, and every model call is one step of an
agentic machine (:func:`~agentic_machines.agent_machine`). Nothing goes over the network.
A completion is a reply (plain text) or ``{"tool_calls": [{"name": ..., "arguments":
{...}}]}``; the tools of every ``ToolNode`` run as effects. :func:`structure` is the
graph's nodes and edges, :func:`checkpoint_key` a state's key for
``never_diverges(key=...)``. The prompt's format and the outcomes are on the reference
page (``docs/reference/langgraph.md``).

>>> from langgraph.prebuilt import create_react_agent
>>> from langchain_core.tools import tool
>>> @tool
... def add(a: int, b: int) -> int:
...     '''Add two integers.'''
...     return a + b
>>> m = machine(create_react_agent(chat_model(), [add]), "What is 2 + 3?")
>>> print(m.prompt(m.initial))  # doctest: +ELLIPSIS
# graph: LangGraph | node: agent
## tools
- add: Add two integers. | parameters {...}
## messages
[user] What is 2 + 3?
>>> s = m.harness(m.initial, '{"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}')
>>> print(m.prompt(s).split("## messages")[1].strip())
[user] What is 2 + 3?
[tool call call_1_0] add {"a": 2, "b": 3}
[tool result call_1_0] 5
>>> m.harness(s, "5"), m.result(s, "5")["messages"][-1].content
(1, '5')
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

import networkx as nx

from ..errors import InvalidArgument
from ..runtime.agent import AgentMachine, effect, state_note
from ..runtime.harness import TraceState
from . import arguments_json, need, tool_calls_of

__all__ = ["machine", "chat_model", "render_prompt", "structure", "checkpoint_key"]

need("langgraph")
from langchain_core.language_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402
from langgraph.config import get_config  # noqa: E402
from langgraph.pregel import Pregel  # noqa: E402

# The run a chat_model() call belongs to: a context variable, which LangGraph copies into
# the threads it runs nodes in.
_THREAD = "agentic-machines"  # the one thread of each run's own checkpointer
_RUN: ContextVar[_Bridge | None] = ContextVar("agentic_machines_langgraph_run", default=None)


class _Bridge:
    """One run of the graph: asks the agent machine's model, records graph states."""

    def __init__(self, ask: Callable[[str], str], name: str, graph: Any) -> None:
        self.ask, self.name, self.graph = ask, name, graph
        self.history: list[str] = []

    def call(self, messages: list[BaseMessage], tools: list[Any]) -> AIMessage:
        config = get_config()
        node = str(config.get("metadata", {}).get("langgraph_node", "?"))
        # the graph state this model call starts from: the state's note (checkpoint_key),
        # read back from wherever the graph runs
        thread = {"configurable": {"thread_id": _THREAD}}
        state_note(_plain(self.graph.get_state(thread).values))
        completion = self.ask(render_prompt(self.name, node, messages, tools))
        self.history.append(completion)
        return parse_completion(completion, len(self.history))


class _ChatModel(BaseChatModel):
    """The chat model of :func:`chat_model`: every call is a step of the running machine."""

    @property
    def _llm_type(self) -> str:
        return "agentic-machines"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        bridge = _RUN.get()
        if bridge is None:
            raise RuntimeError(
                "chat_model() answers only inside a machine: run the graph with "
                "agentic_machines.adapters.langgraph.machine(graph, input)"
            )
        message = bridge.call(messages, kwargs.get("tools") or [])
        return ChatResult(generations=[ChatGeneration(message=message)])


def chat_model() -> Any:
    """The chat model to build graphs with: its replies are the machine's completions."""
    return _ChatModel()


def render_prompt(graph: str, node: str, messages: list[Any], tools: list[Any]) -> str:
    """The prompt text of one model call (the format is in the module docstring).

    >>> from langchain_core.messages import HumanMessage
    >>> print(render_prompt("g", "agent", [HumanMessage("hi")], []))
    # graph: g | node: agent
    ## tools
    (none)
    ## messages
    [user] hi
    """
    lines = [f"# graph: {graph} | node: {node}", "## tools"]
    lines += [_tool_line(t) for t in tools] or ["(none)"]
    lines.append("## messages")
    lines += [line for m in messages for line in _message_lines(m)] or ["(none)"]
    return "\n".join(lines)


def _tool_line(tool: dict) -> str:
    fn = tool.get("function", tool)
    schema = json.dumps(fn.get("parameters", {}), sort_keys=True, ensure_ascii=False)
    return f"- {fn.get('name')}: {fn.get('description', '')} | parameters {schema}"


_ROLES = {"human": "user", "ai": "assistant", "system": "system"}


def _message_lines(message: Any) -> list[str]:
    kind = getattr(message, "type", "?")
    content = _text(getattr(message, "content", ""))
    if kind == "tool":
        return [f"[tool result {message.tool_call_id}] {content}"]
    lines = [f"[{_ROLES.get(kind, kind)}] {content}"] if content or kind != "ai" else []
    for call in getattr(message, "tool_calls", None) or []:
        arguments = json.dumps(call.get("args", {}), ensure_ascii=False)
        lines.append(f"[tool call {call.get('id')}] {call.get('name')} {arguments}")
    return lines


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return json.dumps(content, sort_keys=True, default=str)


def parse_completion(completion: str, call_index: int) -> AIMessage:
    """The ``AIMessage`` of a completion: a reply, or tool calls.

    >>> parse_completion("Done.", 1).content
    'Done.'
    >>> parse_completion('{"tool_calls": [{"name": "add", "arguments": {"a": 1}}]}', 2).tool_calls
    [{'name': 'add', 'args': {'a': 1}, 'id': 'call_2_0', 'type': 'tool_call'}]
    """
    calls = tool_calls_of(completion)
    if calls is None:
        return AIMessage(content=completion, id=f"msg_{call_index}")
    tool_calls, invalid = [], []
    for i, call in enumerate(calls):
        name, arguments = arguments_json(call)
        try:
            args = json.loads(arguments)
        except json.JSONDecodeError:
            args = None
        ident = f"call_{call_index}_{i}"
        if isinstance(args, dict):
            tool_calls.append({"name": name, "args": args, "id": ident, "type": "tool_call"})
        else:  # LangGraph's own form for arguments that are no JSON object
            invalid.append(
                {
                    "name": name,
                    "args": arguments,
                    "id": ident,
                    "error": "not an object",
                    "type": "invalid_tool_call",
                }
            )
    return AIMessage(
        content="", tool_calls=tool_calls, invalid_tool_calls=invalid, id=f"msg_{call_index}"
    )


def _plain(value: Any) -> Any:
    """A graph state as hashable data: messages without their random ids."""
    if isinstance(value, BaseMessage):
        calls = [
            (c.get("name"), json.dumps(c.get("args"), sort_keys=True))
            for c in getattr(value, "tool_calls", None) or []
        ]
        return (value.type, _text(value.content), tuple(calls))
    if isinstance(value, dict):
        return tuple(sorted((str(k), _plain(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _effect_tools(graph: Any) -> None:
    """Make every tool of the graph's tool nodes an effect (once: marked as done)."""
    for node in getattr(graph, "builder", None) and graph.builder.nodes.values() or []:
        tools = getattr(getattr(node, "runnable", None), "tools_by_name", None) or {}
        for tool in tools.values():
            func = getattr(tool, "func", None)
            if func is not None and not getattr(func, "_agentic_effect", False):
                wrapped = effect(func)
                wrapped._agentic_effect = True  # type: ignore[attr-defined]
                tool.func = wrapped


def _run_graph(model: Any, graph: Any, input: Any, limit: int, name: str) -> Any:
    """The agent function: one ``graph.invoke``, its model calls answered by ``model``."""
    from langgraph.checkpoint.memory import InMemorySaver  # a checkpoint per run, for keys

    watched = graph.copy(update={"checkpointer": InMemorySaver()})
    bridge = _Bridge(model, name, watched)
    token = _RUN.set(bridge)
    try:
        config = {"recursion_limit": limit, "configurable": {"thread_id": _THREAD}}
        # durability="sync": the checkpoint of a superstep is written before the next one
        # runs, so the state a model call reads is the one its node started from
        return watched.invoke(_input(input), config=config, durability="sync")
    finally:
        _RUN.reset(token)


def _input(input: Any) -> Any:
    if isinstance(input, str):
        return {"messages": [{"role": "user", "content": input}]}
    return input


def machine(
    graph: Any,
    input: Any,
    *,
    recursion_limit: int = 25,
    completions: list[str] | None = None,
    name: str | None = None,
    isolation: str = "process",
) -> AgentMachine:
    """The agentic machine of running the compiled ``graph`` on ``input`` (a string is one
    user message, ``{"messages": [...]}``; any other value is passed as it is).

    ``recursion_limit`` is LangGraph's bound on supersteps (past it LangGraph raises
    ``GraphRecursionError``: an ``AgentRaised`` outcome). ``completions`` gives a finite
    alphabet for ``explore`` and the checks; ``name`` defaults to the graph's name.
    ``isolation`` is where the graph runs (:func:`~agentic_machines.agent_machine`'s).
    """
    if not isinstance(graph, Pregel):
        raise InvalidArgument(
            f"machine() needs a compiled LangGraph graph, got {type(graph).__name__}; "
            "call .compile() on the StateGraph, or use langgraph.prebuilt.create_react_agent"
        )
    if not isinstance(recursion_limit, int) or recursion_limit < 1:
        raise InvalidArgument(
            f"recursion_limit must be a positive integer, got {recursion_limit!r}"
        )
    _effect_tools(graph)
    title = name or graph.name or "langgraph"
    m = AgentMachine(
        _run_graph,
        (graph, input, recursion_limit, title),
        name=title,
        completions=completions,
        line_budget=None,  # LangGraph's recursion limit bounds the run (see openai_agents)
        cache_size=16,
        isolation=isolation,
    )
    m.graph = graph  # type: ignore[attr-defined]
    # what `agentic-machines diagram --structure` draws beside the explored states
    m.framework_structure = lambda explored=None: structure(graph, explored)  # type: ignore[attr-defined]
    return m


def checkpoint_key(m: AgentMachine) -> Callable[[TraceState], Any]:
    """The key of a state of ``m``: the graph's state values when its model call is made
    (in whichever process the graph runs: each model call notes them, see
    :func:`~agentic_machines.runtime.agent.state_note`).

    >>> from langgraph.prebuilt import create_react_agent
    >>> m = machine(create_react_agent(chat_model(), []), "hi")
    >>> checkpoint_key(m)(m.initial)
    (('messages', (('human', 'hi', ()),)),)
    """
    if not isinstance(m, AgentMachine) or not hasattr(m, "graph"):
        raise InvalidArgument(
            f"checkpoint_key keys the states of a LangGraph machine, got {type(m).__name__}; "
            "build one with agentic_machines.adapters.langgraph.machine(graph, input)"
        )

    def key(state: TraceState) -> Any:
        noted = m.note(state)
        return state if noted is None else noted  # an unpicklable graph state: the history

    return key


def structure(graph: Any, explored: nx.DiGraph | None = None) -> nx.DiGraph:
    """The graph's own nodes and edges; ``conditional`` marks an edge a router chooses.
    With ``explored`` (the machine's explored graph), each node's ``states`` counts the
    explored states whose model call that node made (from their prompts' first line):
    ``draw(explored, beside=structure(m, explored))`` draws the two side by side.

    >>> from langgraph.prebuilt import create_react_agent
    >>> from langchain_core.tools import tool
    >>> g = structure(create_react_agent(chat_model(), [tool(lambda x: x, description="echo")]))
    >>> sorted(g.nodes), sorted((a, b) for a, b, c in g.edges(data="conditional") if c)
    (['__end__', '__start__', 'agent', 'tools'], [('agent', '__end__'), ('agent', 'tools')])
    """
    drawn = (graph.graph if isinstance(graph, AgentMachine) else graph).get_graph()  # type: ignore[attr-defined]
    g = nx.DiGraph(name=getattr(graph, "name", "langgraph"))
    for node in drawn.nodes.values():
        g.add_node(node.id)
    for edge in drawn.edges:
        g.add_edge(edge.source, edge.target, conditional=bool(edge.conditional))
    for _, prompt in explored.nodes(data="prompt") if explored is not None else ():
        head = (prompt or "").split("\n", 1)[0]
        node = head.rpartition(" | node: ")[2] if " | node: " in head else None
        if node in g:
            g.nodes[node]["states"] = g.nodes[node].get("states", 0) + 1
    return g
