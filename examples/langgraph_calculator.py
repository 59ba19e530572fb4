"""LangGraph's calculator agent (the LangGraph quickstart, Graph API): a loop through a
conditional edge, as a machine.

From the LangGraph docs' quickstart: a ``StateGraph`` over ``MessagesState`` plus an
``llm_calls`` counter, the nodes ``llm_call`` (the model with the tools add, multiply and
divide bound) and ``tool_node``, the conditional edge ``should_continue`` from
``llm_call`` to ``tool_node`` or ``END``, and the edge ``tool_node -> llm_call``, which
closes the loop. Changed: the network model is the adapter's ``chat_model()``.
``build_buggy`` plants a harness bug: the edge out of ``tool_node`` is a router that
looks at the wrong message (the assistant's, which still asks for tools), so the tool
node runs a second time without the model, on the tool's own result, and raises
``AttributeError``: ``never_raises`` finds it after one tool call.

    agentic-machines explore 'examples/langgraph_calculator.py:build()' --depth 3
    agentic-machines test 'examples/langgraph_calculator.py:build_buggy()' -p never_raises --depth 2
"""

import json
import operator
from typing import Annotated

from langchain_core.messages import SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph

from agentic_machines.adapters.langgraph import chat_model, machine


@tool
def multiply(a: int, b: int) -> int:
    """Multiply a and b."""
    return a * b


@tool
def add(a: int, b: int) -> int:
    """Adds a and b."""
    return a + b


@tool
def divide(a: int, b: int) -> float:
    """Divide a and b."""
    return a / b


tools = [add, multiply, divide]
tools_by_name = {t.name: t for t in tools}
model_with_tools = chat_model().bind_tools(tools)


class State(MessagesState):
    llm_calls: Annotated[int, operator.add]


def llm_call(state: State) -> dict:
    """The model decides whether to call a tool."""
    system = SystemMessage(
        "You are a helpful assistant tasked with performing arithmetic on a set of inputs."
    )
    return {"messages": [model_with_tools.invoke([system] + state["messages"])], "llm_calls": 1}


def tool_node(state: State) -> dict:
    """Performs the tool calls."""
    result = []
    for call in state["messages"][-1].tool_calls:
        observation = tools_by_name[call["name"]].invoke(call["args"])
        result.append(ToolMessage(content=str(observation), tool_call_id=call["id"]))
    return {"messages": result}


def should_continue(state: State) -> str:
    """To the tool node when the model asked for a tool, else the end."""
    if state["messages"][-1].tool_calls:
        return "tool_node"
    return END


def after_tools_buggy(state: State) -> str:
    """The planted bug: reads the assistant's message (-2), not the tool results (-1)."""
    if state["messages"][-2].tool_calls:
        return "tool_node"
    return "llm_call"


def graph(buggy: bool = False):
    builder = StateGraph(State)
    builder.add_node("llm_call", llm_call)
    builder.add_node("tool_node", tool_node)
    builder.add_edge(START, "llm_call")
    builder.add_conditional_edges("llm_call", should_continue, ["tool_node", END])
    if buggy:
        builder.add_conditional_edges("tool_node", after_tools_buggy, ["tool_node", "llm_call"])
    else:
        builder.add_edge("tool_node", "llm_call")
    return builder.compile(name="calculator")


def _call(name: str, a: int, b: int) -> str:
    return json.dumps({"tool_calls": [{"name": name, "arguments": {"a": a, "b": b}}]})


COMPLETIONS = [_call("multiply", 3, 4), _call("add", 12, 1), "3 times 4, plus 1, is 13."]
QUESTION = "Multiply 3 and 4, then add 1."


def build():
    return machine(graph(), QUESTION, completions=COMPLETIONS, recursion_limit=12)


def build_buggy():
    return machine(graph(buggy=True), QUESTION, completions=COMPLETIONS, recursion_limit=12)
